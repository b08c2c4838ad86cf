/* Driver of static_partial.pk: see there. */
#include "exec_util.h"
#include "static_partial.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "static_partial");
	su_rng r = su_rng_new(27);
	{
		int32_t a[8], b[3];
		ex_poison(a, sizeof a);
		ex_poison(b, sizeof b);
		EX_OK(pad_a(ex_stream(), EX_DEV(a, 8)));
		EX_OK(pad_b(ex_stream(), EX_DEV(b, 3)));
		for (int i = 0; i < 8; i++)
			EX_EQ(a[i], i / 3, "pad_a[%d]", i);
		for (int i = 0; i < 3; i++)
			EX_EQ(b[i], 7, "pad_b[%d]", i);
	}
	{
		enum { M = 100, N = 48 };
		float x[M * N], o[M * N], s[M];
		for (int i = 0; i < M * N; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		ex_poison(s, sizeof s);
		EX_OK(scale2d(ex_stream(), EX_DEV(x, M * N), EX_DEV(o, M * N)));
		EX_OK(rowsum(ex_stream(), EX_DEV(x, M * N), EX_DEV(s, M)));
		for (int i = 0; i < M; i++) {
			double t = 0;
			for (int j = 0; j < N; j++) {
				EX_SAME(o[i * N + j], x[i * N + j] * 2.0f + (float)(i / 32 * 10 + j / 20), "scale2d (%d, %d)", i, j);
				t += x[i * N + j];
			}
			EX_NEAR(s[i], t, 1e-5, "rowsum %d", i);
		}
	}
	{
		enum { M = 300, K = 256, N = 200 };
		uint16_t *x = malloc(M * K * sizeof *x), *y = malloc(K * N * sizeof *y);
		float *o = malloc(M * N * sizeof *o);
		for (int i = 0; i < M * K; i++)
			x[i] = su_f32_to_f16(su_nonzero(&r, -1, 1));
		for (int i = 0; i < K * N; i++)
			y[i] = su_f32_to_f16(su_nonzero(&r, -1, 1));
		ex_poison(o, M * N * sizeof *o);
		EX_OK(mm(ex_stream(), EX_DEV(x, M * K), EX_DEV(y, K * N), EX_DEV(o, M * N)));
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double t = 0;
				for (int k = 0; k < K; k++)
					t += (double)su_f16_to_f32(x[i * K + k]) * su_f16_to_f32(y[k * N + j]);
				EX_NEAR(o[i * N + j], t, 1e-4 * (1 + fabs(t)), "mm (%d, %d)", i, j);
			}
		free(x);
		free(y);
		free(o);
	}
	return ex_done("static_partial");
}
