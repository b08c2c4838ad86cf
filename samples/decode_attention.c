/* decode_attention: runs samples/decode_attention.pk (one decode step of
 * grouped-query attention: decode_attention over the cache's splits, then
 * decode_combine) and checks the output against C (double).
 *   build/samples/decode_attention [--b N] [--hkv N] [--seed S] [--dump DIR] [-v]
 * Each sequence's kv_len is random in [0, SEQ] (the first sequence's is 0,
 * the second's SEQ): splits past it do no iteration, the one it ends in is
 * masked, and a sequence with none gives 0 (the op's ε keeps 0 / 0 away).
 * The kernel's variant is fixed when it is compiled; build this file with
 * the same values as C macros as pkc got with -D:
 *   pkc -DSEQ=512 -DG=4 -DHEAD_DIM=64 -DDT=bf16 -DSPLITS=4 -DBK=64 -DSM_SCALE=0.125 ...
 *   cc  -DSEQ=512 -DG=4 -DHEAD_DIM=64 -DBF16=1  -DSPLITS=4 -DBK=64 -DSM_SCALE=0.125 ...
 * (BK changes no result beyond rounding; it goes into the dump for the Pallas run.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decode_attention.h"
#include "sample_util.h"

#ifndef SEQ
#define SEQ 1024
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef G
#define G 8
#endif
#ifndef SPLITS
#define SPLITS 8
#endif
#ifndef BK
#define BK 128
#endif
#ifndef BF16
#define BF16 0
#endif
#ifndef SM_SCALE
#define SM_SCALE 1.0
#endif

static uint16_t to_dt(float f) { return BF16 ? su_f32_to_bf16(f) : su_f32_to_f16(f); }
static double from_dt(uint16_t h) { return BF16 ? su_bf16_to_f32(h) : su_f16_to_f32(h); }

/* o[HEAD_DIM] of query head qh of sequence bi over its first n cache rows
 * (all zeros when n is 0); s: scratch of SEQ. */
static void ref_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, int64_t hkv, int64_t bi,
                    int64_t qh, int n, double *o, double *s)
{
	int64_t kv = (bi * SEQ * hkv + qh / G) * HEAD_DIM;
	su_attention_row(q + (bi * hkv * G + qh) * HEAD_DIM, k + kv, v + kv, hkv * HEAD_DIM, n, HEAD_DIM, SM_SCALE, BF16,
	                 o, s);
}

int main(int argc, char **argv)
{
	int64_t b = 3, hkv = 2;
	su_size sizes[] = {{"b", &b}, {"hkv", &hkv}};
	su_opts o;
	int rc = su_parse(argc, argv, "decode_attention", sizes, 2, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	int64_t hq = hkv * G;

	su_rng r = su_rng_new(o.seed);
	size_t nq = (size_t)(b * hq * HEAD_DIM), nkv = (size_t)(b * SEQ * hkv * HEAD_DIM);
	size_t npart = (size_t)(b * hkv * SPLITS * G);
	uint16_t *q = su_xmalloc(nq * 2 + 1), *k = su_xmalloc(nkv * 2 + 1), *v = su_xmalloc(nkv * 2 + 1);
	uint16_t *out = su_xmalloc(nq * 2 + 1), *opart = su_xmalloc(npart * HEAD_DIM * 2 + 1);
	float *lpart = su_xmalloc(npart * 4 + 1), *mpart = su_xmalloc(npart * 4 + 1);
	int32_t *kv_len = su_xmalloc((size_t)b * 4 + 1);
	for (size_t i = 0; i < nq; i++)
		q[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
	for (size_t i = 0; i < nkv; i++) {
		k[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
		v[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
	}
	for (int64_t i = 0; i < b; i++)
		kv_len[i] = i == 0 ? 0 : i == 1 ? SEQ : (int32_t)su_int(&r, 1, SEQ);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	int32_t *dlen = su_to_device(&c, kv_len, (size_t)b * 4);
	uint16_t *dq = su_to_device(&c, q, nq * 2), *dk = su_to_device(&c, k, nkv * 2), *dv = su_to_device(&c, v, nkv * 2);
	uint16_t *dop = su_alloc_poisoned(&c, npart * HEAD_DIM * 2), *dout = su_alloc_poisoned(&c, nq * 2);
	float *dl = su_alloc_poisoned(&c, npart * 4), *dm = su_alloc_poisoned(&c, npart * 4);
	if (!dlen || !dq || !dk || !dv || !dop || !dout || !dl || !dm)
		return 1;
	su_launch_begin(&c);
	pk_status st = decode_attention(c.stream, dlen, dq, dk, dv, dop, dl, dm, b, hq, hkv);
	if (st == PK_SUCCESS)
		st = decode_combine(c.stream, dop, dl, dm, dout, b, hkv, hq);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "decode_attention") || su_from_device(&c, out, dout, nq * 2) ||
	    su_from_device(&c, opart, dop, npart * HEAD_DIM * 2) || su_from_device(&c, lpart, dl, npart * 4) ||
	    su_from_device(&c, mpart, dm, npart * 4))
		return 1;

	/* The inputs are exact in DT, so the reference sees the same numbers. */
	su_err e = {0};
	double *orow = su_xmalloc(HEAD_DIM * sizeof *orow), *srow = su_xmalloc(SEQ * sizeof *srow);
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t qh = 0; qh < hq; qh++) {
			ref_row(q, k, v, hkv, bi, qh, kv_len[bi], orow, srow);
			for (int d = 0; d < HEAD_DIM; d++)
				su_err_add(&e, from_dt(out[(bi * hq + qh) * HEAD_DIM + d]), orow[d]);
		}

	su_dump *d = su_dump_begin(&o);
	su_dtype dt = BF16 ? SU_BF16 : SU_F16;
	SU_DUMP(d, "kv_len", SU_I32, kv_len, b);
	SU_DUMP(d, "q", dt, q, b, hq, HEAD_DIM);
	SU_DUMP(d, "k", dt, k, b, SEQ, hkv, HEAD_DIM);
	SU_DUMP(d, "v", dt, v, b, SEQ, hkv, HEAD_DIM);
	SU_DUMP(d, "o_part", dt, opart, b, hkv, SPLITS, G, HEAD_DIM);
	SU_DUMP(d, "l_part", SU_F32, lpart, b, hkv, SPLITS, G);
	SU_DUMP(d, "m_part", SU_F32, mpart, b, hkv, SPLITS, G);
	SU_DUMP(d, "o", dt, out, b, hq, HEAD_DIM);
	su_dump_const(d, "DT", BF16 ? "bf16" : "f16");
	su_dump_const(d, "SEQ", SU_STR(SEQ));
	su_dump_const(d, "HEAD_DIM", SU_STR(HEAD_DIM));
	su_dump_const(d, "G", SU_STR(G));
	su_dump_const(d, "SPLITS", SU_STR(SPLITS));
	su_dump_const(d, "BK", SU_STR(BK));
	su_dump_const(d, "SM_SCALE", SU_STR(SM_SCALE));
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F16, "b=%lld hkv=%lld G=%d SEQ=%d HEAD_DIM=%d SPLITS=%d %s", (long long)b,
	                (long long)hkv, G, SEQ, HEAD_DIM, SPLITS, BF16 ? "bf16" : "f16");
	su_free(&c, dlen);
	su_free(&c, dq);
	su_free(&c, dk);
	su_free(&c, dv);
	su_free(&c, dop);
	su_free(&c, dout);
	su_free(&c, dl);
	su_free(&c, dm);
	su_ctx_free(&c);
	free(q);
	free(k);
	free(v);
	free(out);
	free(opart);
	free(lpart);
	free(mpart);
	free(kv_len);
	free(orow);
	free(srow);
	return rc;
}
