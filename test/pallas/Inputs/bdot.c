/* bdot: runs Inputs/samples/bdot.pk on the host and dumps its inputs and
 * outputs for compare.py (test/pallas/bdot.test), which checks them against
 * the Pallas mirror.
 *   bdot [--seed S] --dump DIR */
#include "bdot.h"
#include "sample_util.h"

enum { B = 4, M = 16, K = 32, N = 8 };

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "bdot", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float q[B * M * K], k[B * N * K], v[B * K * N], s[B * M * N], out[B * M * N], sb[B * M * N];
	static uint16_t qb[B * M * K], kb[B * N * K];
	for (int i = 0; i < B * M * K; i++) {
		q[i] = su_uniform(&r, -1.0f, 1.0f);
		qb[i] = su_f32_to_bf16(su_uniform(&r, -1.0f, 1.0f));
	}
	for (int i = 0; i < B * N * K; i++) {
		k[i] = su_uniform(&r, -1.0f, 1.0f);
		v[i] = su_uniform(&r, -1.0f, 1.0f);
		kb[i] = su_f32_to_bf16(su_uniform(&r, -1.0f, 1.0f));
	}
	if (su_check(bdot(NULL, q, k, v, qb, kb, s, out, sb), "bdot"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "q", SU_F32, q, B, M, K);
	SU_DUMP(d, "k", SU_F32, k, B, N, K);
	SU_DUMP(d, "v", SU_F32, v, B, K, N);
	SU_DUMP(d, "qb", SU_BF16, qb, B, M, K);
	SU_DUMP(d, "kb", SU_BF16, kb, B, N, K);
	SU_DUMP(d, "s", SU_F32, s, B, M, N);
	SU_DUMP(d, "o", SU_F32, out, B, M, N);
	SU_DUMP(d, "sb", SU_F32, sb, B, M, N);
	return su_dump_finish(d);
}
