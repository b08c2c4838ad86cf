/* paged_attention: runs samples/paged_attention.pk (one decode step of
 * grouped-query attention over a paged key/value cache: paged_attention
 * over the splits of each sequence's pages, then paged_combine) and checks
 * the output against C (double).
 *   build/samples/paged_attention [--b N] [--hkv N] [--seed S] [--dump DIR] [-v]
 * The pool holds b·PAGES_PER_SEQ + 3 pages; each sequence's block table is
 * a random choice of distinct pages (the pool shuffled), so neighbouring
 * rows of a sequence live in unrelated pages.  Each length is random in
 * [0, PAGES_PER_SEQ·PAGE] (the first sequence's 0, the second's the most):
 * splits past it do no iteration, the page it ends in is masked, and a
 * sequence with none gives 0 (the op's ε keeps 0 / 0 away).
 * The kernel's variant is fixed when it is compiled; build this file with
 * the same values as C macros as pkc got with -D:
 *   pkc -DG=4 -DHEAD_DIM=64 -DDT=bf16 -DPAGE=32 -DPAGES_PER_SEQ=32 -DSPLITS=4 -DPAGES_PER_BLOCK=4 ...
 *   cc  -DG=4 -DHEAD_DIM=64 -DBF16=1  -DPAGE=32 -DPAGES_PER_SEQ=32 -DSPLITS=4 -DPAGES_PER_BLOCK=4 ...
 * (PAGES_PER_BLOCK and BLOCK_H change no result beyond rounding; they go into
 * the dump for the Pallas run.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paged_attention.h"
#include "sample_util.h"

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef G
#define G 8
#endif
#ifndef BLOCK_H
#define BLOCK_H G
#endif
#ifndef PAGE
#define PAGE 16
#endif
#ifndef PAGES_PER_SEQ
#define PAGES_PER_SEQ 64
#endif
#ifndef SPLITS
#define SPLITS 8
#endif
#ifndef PAGES_PER_BLOCK
#define PAGES_PER_BLOCK 8
#endif
#ifndef BF16
#define BF16 0
#endif
#define MAX_LEN (PAGES_PER_SEQ * PAGE)

static uint16_t to_dt(float f) { return BF16 ? su_f32_to_bf16(f) : su_f32_to_f16(f); }
static double from_dt(uint16_t h) { return BF16 ? su_bf16_to_f32(h) : su_f16_to_f32(h); }

/* o[HEAD_DIM] of query head qh of sequence bi over its first n tokens, read
 * through its block table (all zeros when n is 0): its pages copied in order
 * into kr, vr [MAX_LEN, HEAD_DIM]; s: scratch of MAX_LEN. */
static void ref_row(const uint16_t *q, const uint16_t *kp, const uint16_t *vp, const int32_t *tables, int64_t hkv,
                    int64_t pages, int64_t bi, int64_t qh, int n, uint16_t *kr, uint16_t *vr, double *o, double *s)
{
	for (int p = 0; p < PAGES_PER_SEQ; p++) {
		size_t from = (size_t)(((qh / G) * pages + tables[bi * PAGES_PER_SEQ + p]) * PAGE * HEAD_DIM);
		memcpy(kr + (size_t)p * PAGE * HEAD_DIM, kp + from, PAGE * HEAD_DIM * 2);
		memcpy(vr + (size_t)p * PAGE * HEAD_DIM, vp + from, PAGE * HEAD_DIM * 2);
	}
	su_attention_row(q + (bi * hkv * G + qh) * HEAD_DIM, kr, vr, HEAD_DIM, n, HEAD_DIM, 1.0, BF16, o, s);
}

int main(int argc, char **argv)
{
	int64_t b = 3, hkv = 2;
	su_size sizes[] = {{"b", &b}, {"hkv", &hkv}};
	su_opts o;
	int rc = su_parse(argc, argv, "paged_attention", sizes, 2, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	int64_t hq = hkv * G, pages = b * PAGES_PER_SEQ + 3;

	su_rng r = su_rng_new(o.seed);
	size_t nq = (size_t)(b * hq * HEAD_DIM), nkv = (size_t)(hkv * pages * PAGE * HEAD_DIM);
	size_t ntab = (size_t)(b * PAGES_PER_SEQ), npart = (size_t)(b * SPLITS * hq);
	uint16_t *q = su_xmalloc(nq * 2 + 1), *kp = su_xmalloc(nkv * 2 + 1), *vp = su_xmalloc(nkv * 2 + 1);
	uint16_t *out = su_xmalloc(nq * 2 + 1), *opart = su_xmalloc(npart * HEAD_DIM * 2 + 1);
	float *lpart = su_xmalloc(npart * 4 + 1), *mpart = su_xmalloc(npart * 4 + 1);
	int32_t *lengths = su_xmalloc((size_t)b * 4 + 1), *tables = su_xmalloc(ntab * 4 + 1);
	int32_t *pool = su_xmalloc((size_t)pages * 4 + 1);
	for (size_t i = 0; i < nq; i++)
		q[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
	for (size_t i = 0; i < nkv; i++) {
		kp[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
		vp[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
	}
	/* Fisher-Yates over the pool: the tables take its first b·PAGES_PER_SEQ pages. */
	for (int64_t i = 0; i < pages; i++)
		pool[i] = (int32_t)i;
	for (int64_t i = pages - 1; i > 0; i--) {
		int64_t j = su_int(&r, 0, i);
		int32_t t = pool[i];
		pool[i] = pool[j];
		pool[j] = t;
	}
	for (size_t i = 0; i < ntab; i++)
		tables[i] = pool[i];
	for (int64_t i = 0; i < b; i++)
		lengths[i] = i == 0 ? 0 : i == 1 ? MAX_LEN : (int32_t)su_int(&r, 1, MAX_LEN);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	int32_t *dlen = su_to_device(&c, lengths, (size_t)b * 4), *dtab = su_to_device(&c, tables, ntab * 4);
	uint16_t *dq = su_to_device(&c, q, nq * 2), *dk = su_to_device(&c, kp, nkv * 2), *dv = su_to_device(&c, vp, nkv * 2);
	uint16_t *dop = su_alloc_poisoned(&c, npart * HEAD_DIM * 2), *dout = su_alloc_poisoned(&c, nq * 2);
	float *dl = su_alloc_poisoned(&c, npart * 4), *dm = su_alloc_poisoned(&c, npart * 4);
	if (!dlen || !dtab || !dq || !dk || !dv || !dop || !dout || !dl || !dm)
		return 1;
	su_launch_begin(&c);
	pk_status st = paged_attention(c.stream, dlen, dq, dk, dv, dtab, dop, dl, dm, b, hq, hkv, pages);
	if (st == PK_SUCCESS)
		st = paged_combine(c.stream, dop, dl, dm, dout, b, hq);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "paged_attention") || su_from_device(&c, out, dout, nq * 2) ||
	    su_from_device(&c, opart, dop, npart * HEAD_DIM * 2) || su_from_device(&c, lpart, dl, npart * 4) ||
	    su_from_device(&c, mpart, dm, npart * 4))
		return 1;

	/* The inputs are exact in DT, so the reference sees the same numbers. */
	su_err e = {0};
	double *orow = su_xmalloc(HEAD_DIM * sizeof *orow), *srow = su_xmalloc(MAX_LEN * sizeof *srow);
	uint16_t *kr = su_xmalloc((size_t)MAX_LEN * HEAD_DIM * 2), *vr = su_xmalloc((size_t)MAX_LEN * HEAD_DIM * 2);
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t qh = 0; qh < hq; qh++) {
			ref_row(q, kp, vp, tables, hkv, pages, bi, qh, lengths[bi], kr, vr, orow, srow);
			for (int d = 0; d < HEAD_DIM; d++)
				su_err_add(&e, from_dt(out[(bi * hq + qh) * HEAD_DIM + d]), orow[d]);
		}

	su_dump *d = su_dump_begin(&o);
	su_dtype dt = BF16 ? SU_BF16 : SU_F16;
	SU_DUMP(d, "lengths", SU_I32, lengths, b);
	SU_DUMP(d, "q", dt, q, b, hq, HEAD_DIM);
	SU_DUMP(d, "k_pages", dt, kp, hkv, pages, PAGE, HEAD_DIM);
	SU_DUMP(d, "v_pages", dt, vp, hkv, pages, PAGE, HEAD_DIM);
	SU_DUMP(d, "block_tables", SU_I32, tables, b, PAGES_PER_SEQ);
	SU_DUMP(d, "o_part", dt, opart, b, SPLITS, hq, HEAD_DIM);
	SU_DUMP(d, "l_part", SU_F32, lpart, b, SPLITS, hq);
	SU_DUMP(d, "m_part", SU_F32, mpart, b, SPLITS, hq);
	SU_DUMP(d, "o", dt, out, b, hq, HEAD_DIM);
	su_dump_const(d, "DT", BF16 ? "bf16" : "f16");
	su_dump_const(d, "HEAD_DIM", SU_STR(HEAD_DIM));
	su_dump_const(d, "G", SU_STR(G));
	su_dump_const(d, "BLOCK_H", SU_STR(BLOCK_H));
	su_dump_const(d, "PAGE", SU_STR(PAGE));
	su_dump_const(d, "PAGES_PER_SEQ", SU_STR(PAGES_PER_SEQ));
	su_dump_const(d, "SPLITS", SU_STR(SPLITS));
	su_dump_const(d, "PAGES_PER_BLOCK", SU_STR(PAGES_PER_BLOCK));
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F16, "b=%lld hkv=%lld G=%d PAGE=%d PAGES_PER_SEQ=%d HEAD_DIM=%d SPLITS=%d %s",
	                (long long)b, (long long)hkv, G, PAGE, PAGES_PER_SEQ, HEAD_DIM, SPLITS, BF16 ? "bf16" : "f16");
	su_free(&c, dlen);
	su_free(&c, dtab);
	su_free(&c, dq);
	su_free(&c, dk);
	su_free(&c, dv);
	su_free(&c, dop);
	su_free(&c, dout);
	su_free(&c, dl);
	su_free(&c, dm);
	su_ctx_free(&c);
	free(q);
	free(kp);
	free(vp);
	free(out);
	free(opart);
	free(lpart);
	free(mpart);
	free(lengths);
	free(tables);
	free(pool);
	free(orow);
	free(srow);
	free(kr);
	free(vr);
	return rc;
}
