/* Driver of slices.pk: see there. */
#include "exec_util.h"
#include "slices.h"

enum { W = 8, S = 3 };

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "slices");
	su_rng r = su_rng_new(3);
	{
		int64_t n = 50, m = 18; /* the last windows run past n */
		float x[50], o[18 * W];
		for (int i = 0; i < n; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(windows(ex_stream(), EX_DEV(x, n), EX_DEV(o, m * W), n, m));
		for (int i = 0; i < m; i++)
			for (int k = 0; k < W; k++)
				EX_SAME(o[i * W + k], i * S + k < n ? x[i * S + k] : -1.0f, "windows (%d, %d)", i, k);
	}
	{
		int64_t n = 20, k = 29;
		int64_t x[20], o[29];
		for (int i = 0; i < n; i++)
			x[i] = su_int(&r, -1000, 1000);
		ex_poison(o, sizeof o);
		EX_OK(windows64(ex_stream(), EX_DEV(x, n), EX_DEV(o, k), n, k));
		for (int i = 0; i < k; i++)
			EX_EQ(o[i], (i < n ? x[i] : 0) + i, "windows64 %d", i);
	}
	{
		int64_t rows = 5;
		int32_t x[5 * 16], o[5 * 16];
		for (int i = 0; i < rows * 16; i++)
			x[i] = (int32_t)su_int(&r, -1000, 1000);
		for (int32_t j = 0; j <= 8; j += 5) {
			ex_poison(o, sizeof o);
			EX_OK(inner(ex_stream(), EX_DEV(x, rows * 16), EX_DEV(o, rows * 16), j, rows));
			for (int i = 0; i < rows; i++)
				for (int e = 0; e < 16; e++)
					EX_EQ(o[i * 16 + e], e < 8 ? x[i * 16 + 2 + e] * 10 : x[i * 16 + j + e - 8],
					      "inner j=%d (%d, %d)", j, i, e);
		}
	}
	{
		int64_t rows = 10;
		float x[10 * 32], o[10 * 32];
		for (int i = 0; i < rows * 32; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(column_slices(ex_stream(), EX_DEV(x, rows * 32), EX_DEV(o, rows * 32), rows));
		for (int i = 0; i < rows; i++)
			for (int e = 0; e < 32; e++)
				EX_SAME(o[i * 32 + e], x[i * 32 + e] * (float)(e / 8 + 1), "column_slices (%d, %d)", i, e);
	}
	{
		int64_t n = 7;
		float x[7 * 8], o[7 * 4];
		for (int i = 0; i < n * 8; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(points(ex_stream(), EX_DEV(x, n * 8), EX_DEV(o, n * 4), n));
		for (int i = 0; i < n; i++)
			for (int e = 0; e < 4; e++)
				EX_SAME(o[i * 4 + e], x[i * 8 + 1 + e] * x[(n - 1 - i) * 8], "points (%d, %d)", i, e);
	}
	return ex_done("slices");
}
