/* bench_attention_bwd.c - times samples/flash_attention_bwd.pk (the
 * backward pass: kernels mha_preprocess_backward and mha_backward, one
 * launch each, timed together as Pallas' _mha_backward runs them) on
 * [b, SEQ, h, HEAD_DIM] f16 arrays, with pk events, in the units torch and
 * FlashAttention count: TFLOP/s = 2.5 · 4·b·h·SEQ²·HEAD_DIM (five matrix
 * products of the forward's size; halved when causal) / time.
 *
 * Built once per variant by bench/gpu/attention_bwd.sh, with the same values
 * as C macros as pkc got with -D (SEQ, HEAD_DIM, CAUSAL).  o and lse come
 * from samples/flash_attention.pk's flash_attention_lse (linked in), dout
 * is random.  First checks 16 random rows of each of dq, dk and dv
 * (outputs poisoned with NaN bytes before) against double precision
 * computed from the kernels' own o and lse, then `--warmup` untimed
 * backward passes, then `--reps` passes, each timed with a pair of events;
 * prints the median as one JSON line
 *   {"name": "pkc-b64 d64 full bwd", "ms": ..., "rate": ..., "unit": "TFLOP/s", "max_rel_err": ...}
 *
 *   bench_attention_bwd [--b N] [--h N] [--reps N] [--warmup N] [--name S] [--device cuda|host]
 * Exit status 0 when the kernels ran and the checked rows matched. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pk_runtime.h>

#include "bench_attention.h"
#include "flash_attention.h"
#include "flash_attention_bwd.h"
#include "sample_util.h"

#if !defined(SEQ) || !defined(HEAD_DIM) || !defined(CAUSAL)
#error "build with -DSEQ=.. -DHEAD_DIM=.. -DCAUSAL=0|1 (bench/gpu/attention_bwd.sh)"
#endif

/* The host copies of one run's arrays ([b, SEQ, h, HEAD_DIM]; lse [b, h, SEQ]). */
typedef struct Arrays {
	uint16_t *q, *k, *v, *o, *dout, *dq, *dk, *dv;
	float *lse;
	int64_t h;
} Arrays;

static double el(const Arrays *x, const uint16_t *a, int64_t bi, int64_t hi, int t, int d)
{
	return su_f16_to_f32(a[((bi * SEQ + t) * x->h + hi) * HEAD_DIM + d]);
}

/* p[i][j] = e^(q_i·k_j − lse_i·ln 2) of head (bi, hi), 0 above the diagonal when causal. */
static double prob(const Arrays *x, int64_t bi, int64_t hi, int i, int j)
{
	if (CAUSAL && j > i)
		return 0;
	double s = 0;
	for (int d = 0; d < HEAD_DIM; d++)
		s += el(x, x->q, bi, hi, i, d) * el(x, x->k, bi, hi, j, d);
	return exp(s - x->lse[(bi * x->h + hi) * SEQ + i] * log(2.0));
}

/* ds[i][j] = p (dout_i·v_j − o_i·dout_i). */
static double dscore(const Arrays *x, int64_t bi, int64_t hi, int i, int j, double p)
{
	double dp = 0, delta = 0;
	for (int d = 0; d < HEAD_DIM; d++) {
		dp += el(x, x->dout, bi, hi, i, d) * el(x, x->v, bi, hi, j, d);
		delta += el(x, x->o, bi, hi, i, d) * el(x, x->dout, bi, hi, i, d);
	}
	return p * (dp - delta);
}

/* Row r of dq, dk and dv of head (bi, hi) in double, added to the error norms. */
static void check_row(const Arrays *x, int64_t bi, int64_t hi, int r, su_err e[3])
{
	double dq[HEAD_DIM] = {0}, dk[HEAD_DIM] = {0}, dv[HEAD_DIM] = {0};
	for (int t = 0; t < SEQ; t++) {
		double p = prob(x, bi, hi, r, t), ds = p ? dscore(x, bi, hi, r, t, p) : 0; /* dq: query r, key t */
		double pt = prob(x, bi, hi, t, r), dst = pt ? dscore(x, bi, hi, t, r, pt) : 0; /* dk, dv: key r */
		for (int d = 0; d < HEAD_DIM; d++) {
			dq[d] += ds * el(x, x->k, bi, hi, t, d);
			dk[d] += dst * el(x, x->q, bi, hi, t, d);
			dv[d] += pt * el(x, x->dout, bi, hi, t, d);
		}
	}
	for (int d = 0; d < HEAD_DIM; d++) {
		su_err_add(&e[0], el(x, x->dq, bi, hi, r, d), dq[d]);
		su_err_add(&e[1], el(x, x->dk, bi, hi, r, d), dk[d]);
		su_err_add(&e[2], el(x, x->dv, bi, hi, r, d), dv[d]);
	}
}

/* The backward pass bench_time times: delta, then dq, dk, dv (ctx: a Backward). */
typedef struct Backward {
	pk_stream *st;
	void *q, *k, *v, *o, *dout, *dlse, *ddelta, *dq, *dk, *dv;
	long long b, h;
} Backward;

static pk_status backward(void *ctx)
{
	const Backward *x = ctx;
	pk_status e = mha_preprocess_backward(x->st, x->o, x->dout, x->ddelta, x->b, x->h);
	return e != PK_SUCCESS ? e
	                       : mha_backward(x->st, x->q, x->k, x->v, x->dout, x->dlse, x->ddelta, x->dq, x->dk, x->dv,
	                                      x->b, x->h);
}

/* bench_fail with this program's options. */
#define fail(st, what) bench_fail(&opt, (st), (what))

int main(int argc, char **argv)
{
	BenchOpts opt = {.prog = "bench_attention_bwd", .b = 4, .h = 16, .reps = 20, .warmup = 3, .name = "pkc",
	                 .device = "cuda"};
	Bench bx;
	if (bench_parse(argc, argv, &opt))
		return 2;
	if (bench_open(&opt, &bx))
		return 1;
	long long b = opt.b, h = opt.h;
	const char *name = opt.name;
	pk_device *dev = bx.dev;
	pk_stream *st = bx.st;

	size_t count = (size_t)b * SEQ * h * HEAD_DIM, bytes = count * sizeof(uint16_t);
	size_t lbytes = (size_t)b * h * SEQ * sizeof(float);
	Arrays x = {.h = h};
	uint16_t **host[] = {&x.q, &x.k, &x.v, &x.o, &x.dout, &x.dq, &x.dk, &x.dv};
	enum { NA = sizeof host / sizeof *host };
	void *dbuf[NA], *dlse, *ddelta;
	for (int i = 0; i < NA; i++) {
		*host[i] = su_xmalloc(bytes);
		memset(*host[i], 0xFF, bytes); /* NaN: what a kernel does not write shows */
		if (fail(pk_malloc(dev, bytes, &dbuf[i]), "pk_malloc"))
			return 1;
	}
	x.lse = su_xmalloc(lbytes);
	if (fail(pk_malloc(dev, lbytes, &dlse), "pk_malloc") || fail(pk_malloc(dev, lbytes, &ddelta), "pk_malloc"))
		return 1;
	su_rng r = su_rng_new(1);
	for (size_t i = 0; i < count; i++) {
		x.q[i] = su_f32_to_f16(su_uniform(&r, -1.0f, 1.0f));
		x.k[i] = su_f32_to_f16(su_uniform(&r, -1.0f, 1.0f));
		x.v[i] = su_f32_to_f16(su_uniform(&r, -1.0f, 1.0f));
		x.dout[i] = su_f32_to_f16(su_uniform(&r, -1.0f, 1.0f));
	}
	for (int i = 0; i < NA; i++)
		if (fail(pk_memcpy(st, dbuf[i], *host[i], bytes, PK_MEMCPY_HOST_TO_DEVICE), "pk_memcpy"))
			return 1;
	void *q = dbuf[0], *k = dbuf[1], *v = dbuf[2], *o = dbuf[3], *dout = dbuf[4], *dq = dbuf[5], *dk = dbuf[6],
	     *dv = dbuf[7];
	Backward bw = {st, q, k, v, o, dout, dlse, ddelta, dq, dk, dv, b, h};
	if (fail(flash_attention_lse(st, q, k, v, o, dlse, b, h), "flash_attention_lse") || fail(backward(&bw), "backward") ||
	    fail(pk_stream_synchronize(st), "backward"))
		return 1;
	for (int i = 3; i < NA; i++)
		if (fail(pk_memcpy(st, *host[i], dbuf[i], bytes, PK_MEMCPY_DEVICE_TO_HOST), "pk_memcpy"))
			return 1;
	if (fail(pk_memcpy(st, x.lse, dlse, lbytes, PK_MEMCPY_DEVICE_TO_HOST), "pk_memcpy") ||
	    fail(pk_stream_synchronize(st), "pk_memcpy"))
		return 1;

	/* 16 rows: the first and last of the sequence, and random ones. */
	su_err e[3] = {0};
	for (int t = 0; t < 16; t++) {
		int64_t bi = su_int(&r, 0, b - 1), hi = su_int(&r, 0, h - 1);
		int i = t == 0 ? 0 : t == 1 ? SEQ - 1 : (int)su_int(&r, 0, SEQ - 1);
		check_row(&x, bi, hi, i, e);
	}
	double worst = 0;
	for (int i = 0; i < 3; i++) {
		double rel = su_err_rel(&e[i]);
		worst = rel > worst || rel != rel ? rel : worst;
	}
	int ok = worst <= SU_TOL_F16;

	double ms = 0, min_ms = 0;
	if (bench_time(&opt, &bx, backward, &bw, &ms, &min_ms))
		return 1;
	double flops = 2.5 * 4.0 * (double)b * (double)h * SEQ * (double)SEQ * HEAD_DIM * (CAUSAL ? 0.5 : 1.0);
	printf("{\"name\": \"%s d%d %s bwd\", \"ms\": %.4f, \"min_ms\": %.4f, \"rate\": %.2f, \"unit\": \"TFLOP/s\", "
	       "\"max_rel_err\": %.3g, \"check\": \"%s\", \"b\": %lld, \"h\": %lld, \"seq\": %d, \"dtype\": \"f16\"}\n",
	       name, HEAD_DIM, CAUSAL ? "causal" : "full", ms, min_ms, flops / (ms * 1e-3) / 1e12, worst,
	       ok ? "OK" : "FAILED", b, h, SEQ);
	for (int i = 0; i < NA; i++) {
		pk_free(dev, dbuf[i]);
		free(*host[i]);
	}
	pk_free(dev, dlse);
	pk_free(dev, ddelta);
	bench_close(&bx);
	free(x.lse);
	return ok ? 0 : 1;
}
