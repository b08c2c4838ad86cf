/* reduce_more: runs Inputs/samples/reduce_more.pk on the host and dumps its
 * inputs and outputs for compare.py (test/pallas/reduce_more.test), which
 * checks them against the Pallas mirror.
 *   reduce_more [--seed S] --dump DIR */
#include "reduce_more.h"
#include "sample_util.h"

enum { M = 8, K = 4096, P = 64 };

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "reduce_more", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static pk_bf16 xb[M * K], mb[M];
	static pk_f16 xh[M * K], ph[M * P], mh[M], qh[M];
	static int32_t xi[M * K], ab[M];
	static float pf[M * P], mi[M], qf[M], lg[M * P], sd[M], si[M], md[M];
	for (int i = 0; i < M * K; i++) {
		/* large values, a different range per row: a 16-bit running sum
		 * would lose the fractions */
		float row = (float)(i / K);
		xb[i] = su_f32_to_bf16(su_uniform(&r, 100.0f, 101.0f) + 8 * row);
		xh[i] = su_f32_to_f16(su_uniform(&r, 500.0f, 501.0f) + 4 * row);
		xi[i] = (int32_t)su_int(&r, -1000, 1000);
	}
	for (int i = 0; i < M * P; i++) {
		pf[i] = su_uniform(&r, 0.8f, 1.25f);
		ph[i] = su_f32_to_f16(su_uniform(&r, 0.9f, 1.1f));
	}
	if (su_check(reduce_more(NULL, xb, xh, xi, pf, ph, mb, mh, mi, qf, qh, lg, ab, sd, si, md), "reduce_more"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "xb", SU_BF16, xb, M, K);
	SU_DUMP(d, "xh", SU_F16, xh, M, K);
	SU_DUMP(d, "xi", SU_I32, xi, M, K);
	SU_DUMP(d, "pf", SU_F32, pf, M, P);
	SU_DUMP(d, "ph", SU_F16, ph, M, P);
	SU_DUMP(d, "mb", SU_BF16, mb, M);
	SU_DUMP(d, "mh", SU_F16, mh, M);
	SU_DUMP(d, "mi", SU_F32, mi, M);
	SU_DUMP(d, "qf", SU_F32, qf, M);
	SU_DUMP(d, "qh", SU_F16, qh, M);
	SU_DUMP(d, "lg", SU_F32, lg, M, P);
	SU_DUMP(d, "ab", SU_I32, ab, M);
	SU_DUMP(d, "sd", SU_F32, sd, M);
	SU_DUMP(d, "si", SU_F32, si, M);
	SU_DUMP(d, "md", SU_F32, md, M);
	return su_dump_finish(d);
}
