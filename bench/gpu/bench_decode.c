/* bench_decode.c - times samples/decode_attention.pk (one decode step of
 * grouped-query attention: the split kernel decode_attention, then
 * decode_combine) on q [b, hkv·G, HEAD_DIM] and a full key/value cache
 * k, v [b, SEQ, hkv, HEAD_DIM] (kv_len = SEQ for every sequence), with pk
 * events.  The rate is the cache's bytes read per second (2·b·SEQ·hkv·
 * HEAD_DIM elements: what bounds a decode step), as peers_decode.py counts.
 *
 * Built per variant by bench/gpu/decode.sh with the values pkc got with -D
 * (SEQ, HEAD_DIM, G, SPLITS; BF16).  First checks 64 random query rows
 * against a double-precision reference (output poisoned with NaN bytes
 * before), then `--warmup` untimed steps, then `--reps` steps (both kernels)
 * each timed with a pair of events; prints the median as one JSON line
 *   {"name": "pkc decode g8 d128", "ms": ..., "rate": ..., "unit": "GB/s", ...}
 *
 *   bench_decode [--b N] [--h HKV] [--reps N] [--warmup N] [--name S] [--device cuda|host]
 * Exit status 0 when the kernels ran and the checked rows matched. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pk_runtime.h>

#include "bench_attention.h"
#include "decode_attention.h"
#include "sample_util.h"

#if !defined(SEQ) || !defined(HEAD_DIM) || !defined(G) || !defined(SPLITS)
#error "build with -DSEQ=.. -DHEAD_DIM=.. -DG=.. -DSPLITS=.. [-DBF16=1] (bench/gpu/decode.sh)"
#endif

/* Query row (bi, head qh) in double (scale 1, as the sample's default);
 * returns the largest |out - ref| of the row. */
static double check_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *o, int64_t hkv,
                        int64_t bi, int64_t qh, double *s)
{
	int64_t row = (bi * hkv * G + qh) * HEAD_DIM, kv = (bi * SEQ * hkv + qh / G) * HEAD_DIM;
	return bench_row_err(q + row, k + kv, v + kv, o + row, hkv * HEAD_DIM, SEQ, s);
}

#define fail(st, what) bench_fail(&opt, (st), (what))

/* The device buffers of one decode step. */
typedef struct Bufs {
	void *len, *q, *k, *v, *o_part, *l_part, *m_part, *o;
} Bufs;

/* One decode step: both kernels (ctx: a Step). */
typedef struct Step {
	pk_stream *st;
	const Bufs *d;
	long long b, hq, hkv;
} Step;

static pk_status step(void *ctx)
{
	const Step *x = ctx;
	const Bufs *d = x->d;
	pk_status e = decode_attention(x->st, d->len, d->q, d->k, d->v, d->o_part, d->l_part, d->m_part, x->b, x->hq,
	                               x->hkv);
	return e != PK_SUCCESS ? e : decode_combine(x->st, d->o_part, d->l_part, d->m_part, d->o, x->b, x->hkv, x->hq);
}

int main(int argc, char **argv)
{
	BenchOpts opt = {.prog = "bench_decode", .b = 32, .h = 8, .reps = 50, .warmup = 5, .name = "pkc",
	                 .device = "cuda"};
	Bench x;
	if (bench_parse(argc, argv, &opt))
		return 2;
	if (bench_open(&opt, &x))
		return 1;
	long long b = opt.b, hkv = opt.h, hq = hkv * G;
	pk_device *dev = x.dev;
	pk_stream *st = x.st;

	size_t nq = (size_t)b * hq * HEAD_DIM, nkv = (size_t)b * SEQ * hkv * HEAD_DIM;
	size_t npart = (size_t)b * hkv * SPLITS * G;
	uint16_t *hqv = su_xmalloc(nq * 2), *hk = su_xmalloc(nkv * 2), *hv = su_xmalloc(nkv * 2), *ho = su_xmalloc(nq * 2);
	int32_t *hlen = su_xmalloc((size_t)b * sizeof *hlen);
	su_rng r = su_rng_new(1);
	for (size_t i = 0; i < nq; i++)
		hqv[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
	for (size_t i = 0; i < nkv; i++) {
		hk[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
		hv[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
	}
	for (long long i = 0; i < b; i++)
		hlen[i] = SEQ;
	Bufs d;
	Step one = {st, &d, b, hq, hkv};
	memset(ho, 0xFF, nq * 2);
	if (bench_buffer(&opt, &x, &d.len, hlen, (size_t)b * 4) || bench_buffer(&opt, &x, &d.q, hqv, nq * 2) ||
	    bench_buffer(&opt, &x, &d.k, hk, nkv * 2) || bench_buffer(&opt, &x, &d.v, hv, nkv * 2) ||
	    bench_buffer(&opt, &x, &d.o_part, NULL, npart * HEAD_DIM * 2) ||
	    bench_buffer(&opt, &x, &d.l_part, NULL, npart * 4) || bench_buffer(&opt, &x, &d.m_part, NULL, npart * 4) ||
	    bench_buffer(&opt, &x, &d.o, ho, nq * 2) || fail(step(&one), "decode") ||
	    fail(pk_memcpy(st, ho, d.o, nq * 2, PK_MEMCPY_DEVICE_TO_HOST), "pk_memcpy") ||
	    fail(pk_stream_synchronize(st), "decode"))
		return 1;

	double *s = su_xmalloc(SEQ * sizeof *s), worst = 0;
	for (int t = 0; t < 64; t++) {
		int64_t bi = su_int(&r, 0, b - 1), qh = su_int(&r, 0, hq - 1);
		double e = check_row(hqv, hk, hv, ho, hkv, bi, qh, s);
		worst = e > worst || e != e ? e : worst;
	}
	int ok = worst <= (strcmp(DT_NAME, "bf16") ? 4e-3 : 2e-2);

	double ms = 0, min_ms = 0;
	if (bench_time(&opt, &x, step, &one, &ms, &min_ms))
		return 1;
	double bytes = 2.0 * (double)nkv * 2.0;
	printf("{\"name\": \"%s decode g%d d%d\", \"ms\": %.4f, \"min_ms\": %.4f, \"rate\": %.1f, \"unit\": \"GB/s\", "
	       "\"max_abs_err\": %.3g, \"check\": \"%s\", \"b\": %lld, \"hkv\": %lld, \"g\": %d, \"seq\": %d, "
	       "\"splits\": %d, \"dtype\": \"%s\"}\n",
	       opt.name, G, HEAD_DIM, ms, min_ms, bytes / (ms * 1e-3) / 1e9, worst, ok ? "OK" : "FAILED", b, hkv, G, SEQ,
	       SPLITS, DT_NAME);
	void *dev_bufs[] = {d.len, d.q, d.k, d.v, d.o_part, d.l_part, d.m_part, d.o};
	for (size_t i = 0; i < sizeof dev_bufs / sizeof *dev_bufs; i++)
		pk_free(dev, dev_bufs[i]);
	bench_close(&x);
	free(hqv);
	free(hk);
	free(hv);
	free(ho);
	free(hlen);
	free(s);
	return ok ? 0 : 1;
}
