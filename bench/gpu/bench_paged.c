/* bench_paged.c - times samples/paged_attention.pk (one decode step of
 * grouped-query attention over a paged key/value cache: the split kernel
 * paged_attention, then paged_combine) on q [b, hkv·G, HEAD_DIM] and a pool
 * of b·PAGES_PER_SEQ pages of PAGE rows per key/value head, every sequence
 * full (length PAGES_PER_SEQ·PAGE) and its block table a random choice of
 * the pool (shuffled: a sequence's pages lie anywhere), with pk events.  The
 * rate is the cache's bytes read per second (2·b·hkv·PAGES_PER_SEQ·PAGE·
 * HEAD_DIM elements), as peers_paged.py counts.
 *
 * Built per variant by bench/gpu/decode.sh (KIND=paged) with the values pkc
 * got with -D (HEAD_DIM, G, PAGE, PAGES_PER_SEQ, SPLITS; BF16).  First
 * checks 64 random query rows against a double-precision reference (output
 * poisoned with NaN bytes before), then `--warmup` untimed steps, then
 * `--reps` steps (both kernels) each timed with a pair of events; prints the
 * median as one JSON line
 *   {"name": "pkc paged g8 d128", "ms": ..., "rate": ..., "unit": "GB/s", ...}
 *
 *   bench_paged [--b N] [--h HKV] [--reps N] [--warmup N] [--name S] [--device cuda|host]
 * Exit status 0 when the kernels ran and the checked rows matched. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pk_runtime.h>

#include "bench_attention.h"
#include "paged_attention.h"
#include "sample_util.h"

#if !defined(HEAD_DIM) || !defined(G) || !defined(PAGE) || !defined(PAGES_PER_SEQ) || !defined(SPLITS)
#error "build with -DHEAD_DIM=.. -DG=.. -DPAGE=.. -DPAGES_PER_SEQ=.. -DSPLITS=.. [-DBF16=1] (bench/gpu/decode.sh)"
#endif
#define SEQ (PAGES_PER_SEQ * PAGE)

/* Query row (bi, head qh) in double: its sequence's rows gathered through
 * the block table into kr, vr [SEQ, HEAD_DIM]; returns the largest
 * |out - ref| of the row. */
static double check_row(const uint16_t *q, const uint16_t *kp, const uint16_t *vp, const int32_t *tables,
                        const uint16_t *o, int64_t hkv, int64_t pages, int64_t bi, int64_t qh, uint16_t *kr,
                        uint16_t *vr, double *s)
{
	int64_t kh = qh / G, row = (bi * hkv * G + qh) * HEAD_DIM;
	for (int p = 0; p < PAGES_PER_SEQ; p++) {
		size_t from = (size_t)((kh * pages + tables[bi * PAGES_PER_SEQ + p]) * PAGE * HEAD_DIM);
		memcpy(kr + (size_t)p * PAGE * HEAD_DIM, kp + from, PAGE * HEAD_DIM * 2);
		memcpy(vr + (size_t)p * PAGE * HEAD_DIM, vp + from, PAGE * HEAD_DIM * 2);
	}
	return bench_row_err(q + row, kr, vr, o + row, HEAD_DIM, SEQ, s);
}

#define fail(st, what) bench_fail(&opt, (st), (what))

/* The device buffers of one decode step. */
typedef struct Bufs {
	void *len, *q, *k, *v, *tables, *o_part, *l_part, *m_part, *o;
} Bufs;

/* One decode step: both kernels (ctx: a Step). */
typedef struct Step {
	pk_stream *st;
	const Bufs *d;
	long long b, hq, hkv, pages;
} Step;

static pk_status step(void *ctx)
{
	const Step *x = ctx;
	const Bufs *d = x->d;
	pk_status e = paged_attention(x->st, d->len, d->q, d->k, d->v, d->tables, d->o_part, d->l_part, d->m_part, x->b,
	                              x->hq, x->hkv, x->pages);
	return e != PK_SUCCESS ? e : paged_combine(x->st, d->o_part, d->l_part, d->m_part, d->o, x->b, x->hq);
}

int main(int argc, char **argv)
{
	BenchOpts opt = {.prog = "bench_paged", .b = 32, .h = 8, .reps = 50, .warmup = 5, .name = "pkc",
	                 .device = "cuda"};
	Bench x;
	if (bench_parse(argc, argv, &opt))
		return 2;
	if (bench_open(&opt, &x))
		return 1;
	long long b = opt.b, hkv = opt.h, hq = hkv * G, pages = b * PAGES_PER_SEQ;
	pk_device *dev = x.dev;
	pk_stream *st = x.st;

	size_t nq = (size_t)b * hq * HEAD_DIM, nkv = (size_t)hkv * pages * PAGE * HEAD_DIM;
	size_t ntab = (size_t)pages, npart = (size_t)b * SPLITS * hq;
	uint16_t *hqv = su_xmalloc(nq * 2), *hk = su_xmalloc(nkv * 2), *hv = su_xmalloc(nkv * 2), *ho = su_xmalloc(nq * 2);
	int32_t *hlen = su_xmalloc((size_t)b * sizeof *hlen), *htab = su_xmalloc(ntab * sizeof *htab);
	su_rng r = su_rng_new(1);
	for (size_t i = 0; i < nq; i++)
		hqv[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
	for (size_t i = 0; i < nkv; i++) {
		hk[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
		hv[i] = TO_DT(su_uniform(&r, -1.0f, 1.0f));
	}
	for (size_t i = 0; i < ntab; i++)
		htab[i] = (int32_t)i;
	for (size_t i = ntab - 1; i > 0; i--) {
		size_t j = (size_t)su_int(&r, 0, (int64_t)i);
		int32_t t = htab[i];
		htab[i] = htab[j];
		htab[j] = t;
	}
	for (long long i = 0; i < b; i++)
		hlen[i] = SEQ;
	Bufs d;
	Step one = {st, &d, b, hq, hkv, pages};
	memset(ho, 0xFF, nq * 2);
	if (bench_buffer(&opt, &x, &d.len, hlen, (size_t)b * 4) || bench_buffer(&opt, &x, &d.q, hqv, nq * 2) ||
	    bench_buffer(&opt, &x, &d.k, hk, nkv * 2) || bench_buffer(&opt, &x, &d.v, hv, nkv * 2) ||
	    bench_buffer(&opt, &x, &d.tables, htab, ntab * 4) ||
	    bench_buffer(&opt, &x, &d.o_part, NULL, npart * HEAD_DIM * 2) ||
	    bench_buffer(&opt, &x, &d.l_part, NULL, npart * 4) || bench_buffer(&opt, &x, &d.m_part, NULL, npart * 4) ||
	    bench_buffer(&opt, &x, &d.o, ho, nq * 2) || fail(step(&one), "paged") ||
	    fail(pk_memcpy(st, ho, d.o, nq * 2, PK_MEMCPY_DEVICE_TO_HOST), "pk_memcpy") ||
	    fail(pk_stream_synchronize(st), "paged"))
		return 1;

	double *s = su_xmalloc(SEQ * sizeof *s), worst = 0;
	uint16_t *kr = su_xmalloc((size_t)SEQ * HEAD_DIM * 2), *vr = su_xmalloc((size_t)SEQ * HEAD_DIM * 2);
	for (int t = 0; t < 64; t++) {
		int64_t bi = su_int(&r, 0, b - 1), qh = su_int(&r, 0, hq - 1);
		double e = check_row(hqv, hk, hv, htab, ho, hkv, pages, bi, qh, kr, vr, s);
		worst = e > worst || e != e ? e : worst;
	}
	int ok = worst <= (strcmp(DT_NAME, "bf16") ? 4e-3 : 2e-2);

	double ms = 0, min_ms = 0;
	if (bench_time(&opt, &x, step, &one, &ms, &min_ms))
		return 1;
	double bytes = 2.0 * (double)b * hkv * SEQ * HEAD_DIM * 2.0;
	printf("{\"name\": \"%s paged g%d d%d\", \"ms\": %.4f, \"min_ms\": %.4f, \"rate\": %.1f, \"unit\": \"GB/s\", "
	       "\"max_abs_err\": %.3g, \"check\": \"%s\", \"b\": %lld, \"hkv\": %lld, \"g\": %d, \"seq\": %d, "
	       "\"page\": %d, \"splits\": %d, \"dtype\": \"%s\"}\n",
	       opt.name, G, HEAD_DIM, ms, min_ms, bytes / (ms * 1e-3) / 1e9, worst, ok ? "OK" : "FAILED", b, hkv, G, SEQ,
	       PAGE, SPLITS, DT_NAME);
	void *dev_bufs[] = {d.len, d.q, d.k, d.v, d.tables, d.o_part, d.l_part, d.m_part, d.o};
	for (size_t i = 0; i < sizeof dev_bufs / sizeof *dev_bufs; i++)
		pk_free(dev, dev_bufs[i]);
	bench_close(&x);
	free(hqv);
	free(hk);
	free(hv);
	free(ho);
	free(hlen);
	free(htab);
	free(s);
	free(kr);
	free(vr);
	return ok ? 0 : 1;
}
