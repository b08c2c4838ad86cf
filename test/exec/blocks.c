/* Driver of blocks.pk: see there. */
#include "exec_util.h"
#include "blocks.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "blocks");
	su_rng r = su_rng_new(11);
	{
		int64_t n = 77;
		float x[8 * 77], o[77];
		for (int i = 0; i < 8 * n; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(colsum(ex_stream(), EX_DEV(x, 8 * n), EX_DEV(o, n), n));
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int i = 0; i < 8; i++)
				s += x[i * n + j];
			EX_NEAR(o[j], s, 1e-6, "colsum j=%d", j);
		}
	}
	{
		int64_t a = 9, b = 13;
		int32_t x[9 * 13], o[13 * 9];
		for (int i = 0; i < a * b; i++)
			x[i] = (int32_t)su_int(&r, -1000, 1000);
		ex_poison(o, sizeof o);
		EX_OK(scalar_blocks(ex_stream(), EX_DEV(x, a * b), EX_DEV(o, a * b), a, b));
		for (int i = 0; i < a; i++)
			for (int j = 0; j < b; j++)
				EX_EQ(o[j * a + i], x[i * b + j] * 2 + 1, "scalar_blocks (%d, %d)", i, j);
	}
	{
		int64_t m = 5;
		size_t cnt = 12 * 5 * 32;
		float *x = malloc(cnt * sizeof *x), *o = malloc(cnt * sizeof *o);
		for (size_t i = 0; i < cnt; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, cnt * sizeof *o);
		EX_OK(mid_squeeze(ex_stream(), EX_DEV(x, cnt), EX_DEV(o, cnt), m));
		for (int i = 0; i < 12; i++)
			for (int j = 0; j < m; j++)
				for (int k = 0; k < 32; k++) {
					int k0 = k / 16 * 16;
					float mx = -INFINITY;
					for (int kk = k0; kk < k0 + 16; kk++)
						mx = fmaxf(mx, x[(i * m + j) * 32 + kk]);
					EX_SAME(o[(i * m + j) * 32 + k], x[(i * m + j) * 32 + k] - mx, "mid_squeeze (%d, %d, %d)",
					        i, j, k);
				}
		free(x);
		free(o);
	}
	{
		int64_t n = 6;
		float t[32], o[6 * 32];
		for (int i = 0; i < 32; i++)
			t[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(full_static(ex_stream(), EX_DEV(t, 32), EX_DEV(o, n * 32), n));
		for (int i = 0; i < n; i++)
			for (int e = 0; e < 32; e++)
				EX_SAME(o[i * 32 + e], t[e] * (float)(i + 1), "full_static (%d, %d)", i, e);
	}
	{
		int64_t n = 300; /* 3 programs, the last one partial */
		float *x = malloc(sizeof(float) * (size_t)n * 512), *o = malloc(sizeof(float) * (size_t)n * 512);
		for (int64_t i = 0; i < n * 512; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof(float) * (size_t)n * 512);
		EX_OK(big(ex_stream(), EX_DEV(x, n * 512), EX_DEV(o, n * 512), n));
		float *w = malloc(sizeof(float) * 128 * 512);
		for (int64_t b = 0; b * 128 < n; b++) {
			int64_t rows = n - b * 128 < 128 ? n - b * 128 : 128;
			for (int64_t i = 0; i < rows; i++) {
				double s = 0;
				for (int j = 0; j < 512; j++)
					s += x[(b * 128 + i) * 512 + j];
				for (int j = 0; j < 512; j++)
					w[i * 512 + j] = x[(b * 128 + i) * 512 + j] * 2.0f + (float)s;
			}
			/* the column max over the rows in bounds (the out-of-bounds rows
			 * of the partial block are unspecified: only full blocks are
			 * compared exactly) */
			if (rows < 128)
				continue;
			for (int j = 0; j < 512; j++) {
				float m = -INFINITY;
				for (int64_t i = 0; i < rows; i++)
					m = fmaxf(m, w[i * 512 + j]);
				for (int64_t i = 0; i < rows; i++)
					EX_NEAR(o[(b * 128 + i) * 512 + j], w[i * 512 + j] - m, 1e-4, "big (%lld, %d)",
					        (long long)(b * 128 + i), j);
			}
		}
		free(w);
		free(x);
		free(o);
	}
	return ex_done("blocks");
}
