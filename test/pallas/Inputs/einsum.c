/* einsum: runs Inputs/samples/einsum.pk on the host and dumps its inputs
 * and outputs for compare.py (test/pallas/einsum.test), which checks them
 * against the Pallas mirror.
 *   einsum [--seed S] --dump DIR */
#include "einsum.h"
#include "sample_util.h"

enum { M = 8, K = 16, N = 8, B = 2, H = 2, Q = 8, S = 8, D = 16 };

static void fill(su_rng *r, float *x, int n)
{
	for (int i = 0; i < n; i++)
		x[i] = su_uniform(r, -1.0f, 1.0f);
}

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "einsum", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float a[M * K], b[K * N], bt[N * K], at[K * M], v[K], q[B * H * Q * D], k[B * H * S * D],
		qt[B * Q * H * D], kt[B * S * H * D], vv[B * S * D];
	static uint16_t qb[B * Q * D], kb[B * S * D];
	static float o1[M * N], o2[M * N], o3[M * N], o4[N * M], o5[M], o6[B * H * Q * S], o7[B * H * Q * S],
		o8[B * H * Q * S], o9[B * Q * S], o10[B * Q * D], p1[M], p2[B * H * Q], p3[Q * H * D], p4[B * H * D],
		p5[K * K], p6[M * M];
	fill(&r, a, M * K);
	fill(&r, b, K * N);
	fill(&r, bt, N * K);
	fill(&r, at, K * M);
	fill(&r, v, K);
	fill(&r, q, B * H * Q * D);
	fill(&r, k, B * H * S * D);
	fill(&r, qt, B * Q * H * D);
	fill(&r, kt, B * S * H * D);
	fill(&r, vv, B * S * D);
	for (int i = 0; i < B * Q * D; i++)
		qb[i] = su_f32_to_bf16(su_uniform(&r, -1.0f, 1.0f));
	for (int i = 0; i < B * S * D; i++)
		kb[i] = su_f32_to_bf16(su_uniform(&r, -1.0f, 1.0f));
	if (su_check(einsum_forms(NULL, a, b, bt, at, v, q, k, qt, kt, qb, kb, vv, o1, o2, o3, o4, o5, o6, o7, o8, o9,
	                          o10, p1, p2, p3, p4, p5, p6),
	             "einsum_forms"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "a", SU_F32, a, M, K);
	SU_DUMP(d, "b", SU_F32, b, K, N);
	SU_DUMP(d, "bt", SU_F32, bt, N, K);
	SU_DUMP(d, "at", SU_F32, at, K, M);
	SU_DUMP(d, "v", SU_F32, v, K);
	SU_DUMP(d, "q", SU_F32, q, B, H, Q, D);
	SU_DUMP(d, "k", SU_F32, k, B, H, S, D);
	SU_DUMP(d, "qt", SU_F32, qt, B, Q, H, D);
	SU_DUMP(d, "kt", SU_F32, kt, B, S, H, D);
	SU_DUMP(d, "qb", SU_BF16, qb, B, Q, D);
	SU_DUMP(d, "kb", SU_BF16, kb, B, S, D);
	SU_DUMP(d, "vv", SU_F32, vv, B, S, D);
	SU_DUMP(d, "o1", SU_F32, o1, M, N);
	SU_DUMP(d, "o2", SU_F32, o2, M, N);
	SU_DUMP(d, "o3", SU_F32, o3, M, N);
	SU_DUMP(d, "o4", SU_F32, o4, N, M);
	SU_DUMP(d, "o5", SU_F32, o5, M);
	SU_DUMP(d, "o6", SU_F32, o6, B, H, Q, S);
	SU_DUMP(d, "o7", SU_F32, o7, B, H, Q, S);
	SU_DUMP(d, "o8", SU_F32, o8, B, H, Q, S);
	SU_DUMP(d, "o9", SU_F32, o9, B, Q, S);
	SU_DUMP(d, "o10", SU_F32, o10, B, Q, D);
	SU_DUMP(d, "p1", SU_F32, p1, M);
	SU_DUMP(d, "p2", SU_F32, p2, B, H, Q);
	SU_DUMP(d, "p3", SU_F32, p3, Q, H, D);
	SU_DUMP(d, "p4", SU_F32, p4, B, H, D);
	SU_DUMP(d, "p5", SU_F32, p5, K, K);
	SU_DUMP(d, "p6", SU_F32, p6, M, M);
	return su_dump_finish(d);
}
