/* bench_attention.c - times samples/flash_attention.pk (the forward pass,
 * kernel flash_attention) on [b, SEQ, h, HEAD_DIM] f16/bf16 arrays, with pk
 * events, in the peers' units: TFLOP/s = 4·b·h·SEQ²·HEAD_DIM (halved when
 * causal) / time, as /work/shared/anchors/peers_attention.py counts.
 *
 * Built once per variant by bench/gpu/attention.sh, with the same values as
 * C macros as pkc got with -D (SEQ, HEAD_DIM, CAUSAL, BF16), like
 * samples/flash_attention.c.  First checks 96 random rows of the output
 * against a double-precision reference (output poisoned with NaN bytes
 * before), then `--warmup` untimed launches, then `--reps` launches, each
 * timed with a pair of events; prints the median as one JSON line
 *   {"name": "pkc d64 full", "ms": ..., "rate": ..., "unit": "TFLOP/s", "max_abs_err": ...}
 *
 *   bench_attention [--b N] [--h N] [--reps N] [--warmup N] [--name S] [--device cuda|host]
 * Exit status 0 when the kernel ran and the checked rows matched. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pk_runtime.h>

#include "bench_attention.h"
#include "flash_attention.h"
#include "sample_util.h"

/* The variant, as bench/gpu/attention.sh compiled the kernel (-D). */
#if !defined(SEQ) || !defined(HEAD_DIM) || !defined(CAUSAL)
#error "build with -DSEQ=.. -DHEAD_DIM=.. -DCAUSAL=0|1 [-DBF16=1] (bench/gpu/attention.sh)"
#endif

/* Row i of head (bi, hi) in double; returns the largest |out - ref| of the row. */
static double check_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *o, int64_t h,
                        int64_t bi, int64_t hi, int i, double *s)
{
	int64_t row = ((bi * SEQ + i) * h + hi) * HEAD_DIM, kv = (bi * SEQ * h + hi) * HEAD_DIM;
	return bench_row_err(q + row, k + kv, v + kv, o + row, h * HEAD_DIM, CAUSAL ? i + 1 : SEQ, s);
}

/* The launch bench_time times. */
typedef struct Launch {
	pk_stream *st;
	void *q, *k, *v, *o;
	long long b, h;
} Launch;

static pk_status launch(void *ctx)
{
	Launch *l = ctx;
	return flash_attention(l->st, l->q, l->k, l->v, l->o, l->b, l->h);
}

/* bench_fail with this program's options. */
#define fail(st, what) bench_fail(&opt, (st), (what))

int main(int argc, char **argv)
{
	BenchOpts opt = {.prog = "bench_attention", .b = 4, .h = 16, .reps = 30, .warmup = 5, .name = "pkc",
	                 .device = "cuda"};
	Bench x;
	if (bench_parse(argc, argv, &opt))
		return 2;
	if (bench_open(&opt, &x))
		return 1;
	long long b = opt.b, h = opt.h;
	const char *name = opt.name;
	pk_device *dev = x.dev;
	pk_stream *st = x.st;

	size_t count = (size_t)b * SEQ * h * HEAD_DIM, bytes = count * sizeof(uint16_t);
	uint16_t *hq = su_xmalloc(bytes), *hk = su_xmalloc(bytes), *hv = su_xmalloc(bytes), *ho = su_xmalloc(bytes);
	su_rng r = su_rng_new(1);
	for (size_t i = 0; i < count; i++) {
		hq[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
		hk[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
		hv[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
	}
	void *dq, *dk, *dv, *dout;
	memset(ho, 0xFF, bytes);
	if (bench_buffer(&opt, &x, &dq, hq, bytes) || bench_buffer(&opt, &x, &dk, hk, bytes) ||
	    bench_buffer(&opt, &x, &dv, hv, bytes) || bench_buffer(&opt, &x, &dout, ho, bytes) ||
	    fail(flash_attention(st, dq, dk, dv, dout, b, h), "flash_attention") ||
	    fail(pk_memcpy(st, ho, dout, bytes, PK_MEMCPY_DEVICE_TO_HOST), "pk_memcpy") ||
	    fail(pk_stream_synchronize(st), "flash_attention"))
		return 1;

	/* 96 rows: the first and last of the sequence, and random ones. */
	double *s = su_xmalloc(SEQ * sizeof *s), worst = 0;
	for (int t = 0; t < 96; t++) {
		int64_t bi = su_int(&r, 0, b - 1), hi = su_int(&r, 0, h - 1);
		int i = t == 0 ? 0 : t == 1 ? SEQ - 1 : (int)su_int(&r, 0, SEQ - 1);
		double e = check_row(hq, hk, hv, ho, h, bi, hi, i, s);
		worst = e > worst || e != e ? e : worst;
	}
	int ok = worst <= (strcmp(DT_NAME, "bf16") ? 4e-3 : 2e-2);

	Launch l = {st, dq, dk, dv, dout, b, h};
	double ms = 0, min_ms = 0;
	if (bench_time(&opt, &x, launch, &l, &ms, &min_ms))
		return 1;
	double flops = 4.0 * (double)b * (double)h * SEQ * (double)SEQ * HEAD_DIM * (CAUSAL ? 0.5 : 1.0);
	printf("{\"name\": \"%s d%d %s\", \"ms\": %.4f, \"min_ms\": %.4f, \"rate\": %.2f, \"unit\": \"TFLOP/s\", "
	       "\"max_abs_err\": %.3g, \"check\": \"%s\", \"b\": %lld, \"h\": %lld, \"seq\": %d, \"dtype\": \"%s\"}\n",
	       name, HEAD_DIM, CAUSAL ? "causal" : "full", ms, min_ms, flops / (ms * 1e-3) / 1e12, worst,
	       ok ? "OK" : "FAILED", b, h, SEQ, DT_NAME);
	pk_free(dev, dq);
	pk_free(dev, dk);
	pk_free(dev, dv);
	pk_free(dev, dout);
	bench_close(&x);
	free(hq);
	free(hk);
	free(hv);
	free(ho);
	free(s);
	return ok ? 0 : 1;
}
