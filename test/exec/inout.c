/* Driver of inout.pk: see there. */
#include "exec_util.h"
#include "inout.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "inout");
	su_rng r = su_rng_new(31);
	for (int64_t n = 64; n <= 1000; n += 936) { /* 64 divides; 1000 does not */
		float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)(n + 8)),
		      *y0 = malloc(sizeof(float) * (size_t)(n + 8));
		float a = 1.75f;
		for (int64_t i = 0; i < n + 8; i++) {
			if (i < n)
				x[i] = su_nonzero(&r, -1, 1);
			y0[i] = y[i] = su_nonzero(&r, -1, 1);
		}
		EX_OK(axpy(ex_stream(), EX_DEV(x, n), EX_DEV(y, n + 8), a, n));
		for (int64_t i = 0; i < n + 8; i++)
			if (i < n)
				EX_NEAR(y[i], a * y0[i] + x[i], 1e-6, "axpy n=%lld i=%lld", (long long)n, (long long)i);
			else
				EX_SAME(y[i], y0[i], "axpy n=%lld: element %lld past the end untouched", (long long)n, (long long)i);
		free(x);
		free(y);
		free(y0);
	}
	{
		int64_t rows = 9;
		int32_t h[9 * 8], h0[9 * 8], d[8];
		for (int i = 0; i < rows * 8; i++)
			h0[i] = h[i] = (int32_t)su_int(&r, -100, 100);
		for (int j = 0; j < 8; j++)
			d[j] = (int32_t)su_int(&r, -100, 100);
		EX_OK(half_update(ex_stream(), EX_DEV(h, rows * 8), EX_DEV(d, 8), rows));
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < 8; j++) {
				int32_t want = h0[i * 8 + j];
				if (i < (rows + 1) / 2)
					want += d[j] - (j < 4);
				EX_EQ(h[i * 8 + j], want, "half_update (%d, %d)", i, j);
			}
	}
	{
		int64_t rows = 6;
		int64_t v[6 * 16], v0[6 * 16];
		for (int i = 0; i < rows * 16; i++)
			v0[i] = v[i] = (int64_t)su_next(&r);
		EX_OK(swap_halves(ex_stream(), EX_DEV(v, rows * 16), rows));
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < 16; j++)
				EX_EQ(v[i * 16 + j], v0[i * 16 + (j + 8) % 16], "swap_halves (%d, %d)", i, j);
	}
	{
		int64_t n = 500;
		double s[500], s0[500];
		for (int i = 0; i < n; i++)
			s0[i] = s[i] = (double)su_int(&r, -1000, 1000);
		EX_OK(running(ex_stream(), EX_DEV(s, n), n));
		double acc = 0;
		for (int i = 0; i < n; i++) {
			acc += s0[i];
			EX_SAME(s[i], acc, "running prefix %d", i);
		}
	}
	{
		int64_t rows = 5;
		float v[5 * 16], v0[5 * 16], w[5 * 8], w0[5 * 8], old[5 * 8];
		for (int i = 0; i < rows * 16; i++)
			v0[i] = v[i] = su_nonzero(&r, -1, 1);
		for (int i = 0; i < rows * 8; i++)
			w0[i] = w[i] = su_nonzero(&r, -1, 1);
		int32_t k = 3;
		EX_OK(swaps(ex_stream(), EX_DEV(v, rows * 16), EX_DEV(w, rows * 8), EX_DEV(old, rows * 8), k, rows));
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < 16; j++)
				EX_SAME(v[i * 16 + j], v0[i * 16 + (j + 8) % 16], "swaps v (%d, %d)", i, j);
		for (int i = 0; i < rows; i++)
			for (int j = 0; j < 8; j++) {
				EX_SAME(w[i * 8 + j], j < k ? v0[i * 16 + j] : w0[i * 8 + j], "swaps w (%d, %d)", i, j);
				EX_SAME(old[i * 8 + j], j < k ? w0[i * 8 + j] : -1.0f, "swaps old (%d, %d)", i, j);
			}
	}
	return ex_done("inout");
}
