/* Driver of dot.pk: see there.  argv[1]: the seed. */
#include "exec_util.h"
#include "dot.h"

enum { M = 24, K = 40, N = 16 };

/* c (M x N) against a @ b computed in double; relative Frobenius error. */
static void check_mm(const char *what, const float *c, const double *a, const double *b, int m, int k, int n,
                     double add)
{
	su_err e = {0};
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int kk = 0; kk < k; kk++)
				s += a[i * k + kk] * b[kk * n + j];
			su_err_add(&e, c[i * n + j], s + add);
		}
	double rel = su_err_rel(&e);
	ex_checks++;
	if (!(rel < 1e-6) && ex_note_failure())
		fprintf(stderr, "%s: relative error %g (max abs %g)\n", what, rel, e.max_abs);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "dot");
	su_rng r = su_rng_new(argc > 1 ? strtoull(argv[1], NULL, 0) : 1);
	static float a[M * K], b[K * N], at[K * M], bt[N * K], c[M * N], d[M * N], c2[M * N], c3[M * N];
	static double ad[M * K], bd[K * N];
	for (int i = 0; i < M * K; i++)
		ad[i] = a[i] = su_nonzero(&r, -1, 1);
	for (int i = 0; i < K * N; i++)
		bd[i] = b[i] = su_nonzero(&r, -1, 1);
	for (int i = 0; i < M; i++)
		for (int k = 0; k < K; k++)
			at[k * M + i] = a[i * K + k];
	for (int k = 0; k < K; k++)
		for (int j = 0; j < N; j++)
			bt[j * K + k] = b[k * N + j];

	ex_poison(c, sizeof c);
	ex_poison(d, sizeof d);
	EX_OK(dot_f32(ex_stream(), EX_DEV(a, M * K), EX_DEV(b, K * N), EX_DEV(c, M * N), EX_DEV(d, M * N)));
	check_mm("dot_f32", c, ad, bd, M, K, N, 0.0);
	check_mm("dot_f32 @ + 1", d, ad, bd, M, K, N, 1.0);

	ex_poison(c, sizeof c);
	ex_poison(c2, sizeof c2);
	ex_poison(c3, sizeof c3);
	EX_OK(dot_trans(ex_stream(), EX_DEV(a, M * K), EX_DEV(at, K * M), EX_DEV(b, K * N), EX_DEV(bt, N * K),
	                EX_DEV(c, M * N), EX_DEV(c2, M * N), EX_DEV(c3, M * N)));
	check_mm("dot trans_b", c, ad, bd, M, K, N, 0.0);
	check_mm("dot trans_a", c2, ad, bd, M, K, N, 0.0);
	check_mm("dot trans_a trans_b", c3, ad, bd, M, K, N, 0.0);

	{
		static pk_f16 ah[M * K], bh[K * N];
		static pk_bf16 ab[M * K], bb[K * N];
		static double ahd[M * K], bhd[K * N], abd[M * K], bbd[K * N];
		for (int i = 0; i < M * K; i++) {
			ah[i] = su_f32_to_f16(a[i]);
			ahd[i] = su_f16_to_f32(ah[i]);
			ab[i] = su_f32_to_bf16(a[i]);
			abd[i] = su_bf16_to_f32(ab[i]);
		}
		for (int i = 0; i < K * N; i++) {
			bh[i] = su_f32_to_f16(b[i]);
			bhd[i] = su_f16_to_f32(bh[i]);
			bb[i] = su_f32_to_bf16(b[i]);
			bbd[i] = su_bf16_to_f32(bb[i]);
		}
		ex_poison(c, sizeof c);
		EX_OK(dot_f16(ex_stream(), EX_DEV(ah, M * K), EX_DEV(bh, K * N), EX_DEV(c, M * N)));
		check_mm("dot_f16", c, ahd, bhd, M, K, N, 0.0);
		ex_poison(c, sizeof c);
		EX_OK(dot_bf16(ex_stream(), EX_DEV(ab, M * K), EX_DEV(bb, K * N), EX_DEV(c, M * N)));
		check_mm("dot_bf16", c, abd, bbd, M, K, N, 0.0);

		/* blocked: m = 37, n = 21 (both partial); a rows reuse ab cyclically */
		int64_t m = 37, n = 21;
		static pk_bf16 a2[37 * K];
		static pk_f16 b2[K * 21];
		static double a2d[37 * K], b2d[K * 21];
		static float c4[37 * 21];
		for (int i = 0; i < m * K; i++) {
			a2[i] = su_f32_to_bf16(su_nonzero(&r, -2, 2));
			a2d[i] = su_bf16_to_f32(a2[i]);
		}
		for (int i = 0; i < K * n; i++) {
			b2[i] = su_f32_to_f16(su_nonzero(&r, -2, 2));
			b2d[i] = su_f16_to_f32(b2[i]);
		}
		ex_poison(c4, sizeof c4);
		EX_OK(dot_blocked(ex_stream(), EX_DEV(a2, m * K), EX_DEV(b2, K * n), EX_DEV(c4, m * n), m, n));
		check_mm("dot_blocked", c4, a2d, b2d, (int)m, K, (int)n, 0.0);
	}
	{
		static int8_t ai[M * K], bi[K * N];
		static int32_t ci[M * N];
		for (int i = 0; i < M * K; i++)
			ai[i] = (int8_t)su_int(&r, -128, 127);
		for (int i = 0; i < K * N; i++)
			bi[i] = (int8_t)su_int(&r, -128, 127);
		ex_poison(ci, sizeof ci);
		EX_OK(dot_i8(ex_stream(), EX_DEV(ai, M * K), EX_DEV(bi, K * N), EX_DEV(ci, M * N)));
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				int32_t s = 0;
				for (int k = 0; k < K; k++)
					s += ai[i * K + k] * bi[k * N + j];
				EX_EQ(ci[i * N + j], s, "dot_i8 (%d, %d)", i, j);
			}
	}
	{
		static float v[K], x[2 * M * K], mv[M], vm[N], vv[1], xb[2 * M * N], xa[2 * M * N];
		static double vd[K], xd[2 * M * K];
		for (int i = 0; i < K; i++)
			vd[i] = v[i] = su_nonzero(&r, -1, 1);
		for (int i = 0; i < 2 * M * K; i++)
			xd[i] = x[i] = su_nonzero(&r, -1, 1);
		EX_OK(dot_forms(ex_stream(), EX_DEV(a, M * K), EX_DEV(b, K * N), EX_DEV(v, K), EX_DEV(x, 2 * M * K),
		                EX_DEV(mv, M), EX_DEV(vm, N), EX_DEV(vv, 1), EX_DEV(xb, 2 * M * N), EX_DEV(xa, 2 * M * N)));
		check_mm("dot(matrix, vector)", mv, ad, vd, M, K, 1, 0.0);
		check_mm("vector @ matrix", vm, vd, bd, 1, K, N, 0.0);
		check_mm("dot(vector, vector)", vv, vd, vd, 1, K, 1, 0.0);
		check_mm("[2, M, K] @ [K, N]", xb, xd, bd, 2 * M, K, N, 0.0);
		for (int i = 0; i < 2 * M * N; i++)
			xa[i] -= xb[i]; /* the acc value: the product added once more */
		check_mm("dot(x, b, acc = x @ b)", xa, xd, bd, 2 * M, K, N, 0.0);
	}
	return ex_done("dot");
}
