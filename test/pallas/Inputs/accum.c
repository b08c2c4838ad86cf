/* accum: runs Inputs/samples/accum.pk on the host with uniform [0.5, 1)
 * inputs and dumps them with its outputs for compare.py
 * (test/pallas/accum.test), which checks them against the Pallas mirror.
 *   accum [--seed S] --dump DIR */
#include "accum.h"
#include "sample_util.h"

enum { M = 8, K = 4096, N = 16 };

static void fill(su_rng *r, uint16_t *h, int n, int bf)
{
	for (int i = 0; i < n; i++) {
		float v = su_uniform(r, 0.5f, 1.0f);
		h[i] = bf ? su_f32_to_bf16(v) : su_f32_to_f16(v);
	}
}

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "accum", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static pk_bf16 xb[M * K], yb[K * N], zb[M * N], za[M * N], sb[M], cb[M * K];
	static pk_f16 xh[M * K], yh[K * N], zh[M * N], sh[M], ch[M * K];
	fill(&r, xb, M * K, 1);
	fill(&r, yb, K * N, 1);
	fill(&r, xh, M * K, 0);
	fill(&r, yh, K * N, 0);
	if (su_check(accum(NULL, xb, yb, xh, yh, zb, zh, za, sb, sh, cb, ch), "accum"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "xb", SU_BF16, xb, M, K);
	SU_DUMP(d, "yb", SU_BF16, yb, K, N);
	SU_DUMP(d, "xh", SU_F16, xh, M, K);
	SU_DUMP(d, "yh", SU_F16, yh, K, N);
	SU_DUMP(d, "zb", SU_BF16, zb, M, N);
	SU_DUMP(d, "zh", SU_F16, zh, M, N);
	SU_DUMP(d, "za", SU_BF16, za, M, N);
	SU_DUMP(d, "sb", SU_BF16, sb, M);
	SU_DUMP(d, "sh", SU_F16, sh, M);
	SU_DUMP(d, "cb", SU_BF16, cb, M, K);
	SU_DUMP(d, "ch", SU_F16, ch, M, K);
	return su_dump_finish(d);
}
