/* bench_attention.h - what the attention benchmark programs share
 * (bench_attention.c, the forward; bench_attention_bwd.c, the backward;
 * bench_decode.c, a decode step): the kernels' 16-bit dtype, their
 * options, the device with a stream, failure reports, the timed launches
 * (bench_time.h) and their median, and a query row of attention in double.  Header-only (static functions), so
 * each program still builds from its one .c file. */
#ifndef BENCH_ATTENTION_H
#define BENCH_ATTENTION_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pk_runtime.h>

#include "bench_time.h"
#include "sample_util.h"

/* The kernel's 16-bit dtype, as pkc compiled it (-DDT=bf16 there, -DBF16=1
 * here): conversions from and to f32 (sample_util.h) and its name. */
#if defined(BF16) && BF16
#define TO_DT su_f32_to_bf16
#define FROM_DT su_bf16_to_f32
#define DT_NAME "bf16"
#define DT_BF16 1
#else
#define TO_DT su_f32_to_f16
#define FROM_DT su_f16_to_f32
#define DT_NAME "f16"
#define DT_BF16 0
#endif

/* The command line: [--b N] [--h N] [--reps N] [--warmup N] [--name S] [--device cuda|host]. */
typedef struct BenchOpts {
	const char *prog;          /* for messages */
	long long b, h;            /* batch and heads */
	long long reps, warmup;    /* timed and untimed launches */
	const char *name;          /* the JSON row's name prefix */
	const char *device;        /* "cuda" or "host" */
} BenchOpts;

/* The device and its stream. */
typedef struct Bench {
	pk_device *dev;
	pk_stream *st;
} Bench;

/* 0 if st is PK_SUCCESS, else prints what failed and returns 1. */
static int bench_fail(const BenchOpts *o, pk_status st, const char *what)
{
	if (st == PK_SUCCESS)
		return 0;
	fprintf(stderr, "%s: %s: %s: %s\n", o->prog, what, pk_status_name(st), pk_last_error());
	return 1;
}

/* Parses argv into o (whose fields hold the defaults); 0, or 2 after a usage message. */
static int bench_parse(int argc, char **argv, BenchOpts *o)
{
	for (int a = 1; a < argc; a++) {
		const char *opt = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;
		long long *p = !strcmp(opt, "--b") ? &o->b : !strcmp(opt, "--h") ? &o->h
		             : !strcmp(opt, "--reps") ? &o->reps : !strcmp(opt, "--warmup") ? &o->warmup : NULL;
		if (p && val)
			*p = atoll(val), a++;
		else if (!strcmp(opt, "--name") && val)
			o->name = val, a++;
		else if (!strcmp(opt, "--device") && val)
			o->device = val, a++;
		else {
			fprintf(stderr, "usage: %s [--b N] [--h N] [--reps N] [--warmup N] [--name S] [--device cuda|host]\n",
			        o->prog);
			return 2;
		}
	}
	return o->b < 1 || o->h < 1 || o->reps < 1 || o->warmup < 0 ? 2 : 0;
}

/* Opens o's device and a stream; 0 on success. */
static int bench_open(const BenchOpts *o, Bench *x)
{
	pk_device_kind kind = strcmp(o->device, "host") ? PK_DEVICE_CUDA : PK_DEVICE_HOST;
	return bench_fail(o, pk_device_get(kind, 0, &x->dev), "pk_device_get") ||
	       bench_fail(o, pk_stream_create(x->dev, &x->st), "pk_stream_create");
}

static void bench_close(Bench *x)
{
	pk_stream_destroy(x->st);
}

/* *p: a device buffer of `bytes`, holding a copy of host (with host NULL:
 * uninitialised).  0, or 1 after bench_fail's report. */
static inline int bench_buffer(const BenchOpts *o, Bench *x, void **p, const void *host, size_t bytes)
{
	return bench_fail(o, pk_malloc(x->dev, bytes, p), "pk_malloc") ||
	       (host && bench_fail(o, pk_memcpy(x->st, *p, host, bytes, PK_MEMCPY_HOST_TO_DEVICE), "pk_memcpy"));
}

/* A launch of the kernels a program times; ctx is the program's. */
typedef pk_status (*BenchLaunch)(void *ctx);

/* The program's launch as bench_time_launches calls it (ctx: a BenchCall). */
typedef struct BenchCall {
	BenchLaunch launch;
	void *ctx;
} BenchCall;

static pk_status bench_call(void *ctx, long long rep)
{
	(void)rep;
	const BenchCall *c = ctx;
	return c->launch(c->ctx);
}

/* `warmup` untimed launches, then `reps` timed (bench_time.h): their median
 * and least milliseconds.  0, or 1 after bench_fail's report. */
static inline int bench_time(const BenchOpts *o, Bench *x, BenchLaunch launch, void *ctx, double *ms, double *min_ms)
{
	double *t = malloc((size_t)o->reps * sizeof *t);
	if (!t)
		return bench_fail(o, PK_ERR_OUT_OF_MEMORY, "malloc");
	BenchCall call = {launch, ctx};
	const char *what;
	pk_status st = bench_time_launches(x->dev, x->st, o->warmup, o->reps, bench_call, &call, t, &what);
	if (st == PK_SUCCESS) {
		*ms = bench_time_median(t, o->reps);
		*min_ms = t[0];
	}
	free(t);
	return bench_fail(o, st, what);
}

/* One query row of attention in double, softmax(q kᵀ) v over the first n
 * rows of k and v (16-bit, their rows `stride` elements apart; q and o of
 * HEAD_DIM; su_attention_row), against the kernel's o: the largest
 * |o - reference|.  s: scratch of n. */
static inline double bench_row_err(const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *o,
                                   int64_t stride, int n, double *s)
{
	double ref[HEAD_DIM], worst = 0;
	su_attention_row(q, k, v, stride, n, HEAD_DIM, 1.0, DT_BF16, ref, s);
	for (int d = 0; d < HEAD_DIM; d++) {
		double err = fabs(FROM_DT(o[d]) - ref[d]);
		worst = err > worst || err != err ? err : worst;
	}
	return worst;
}

#endif
