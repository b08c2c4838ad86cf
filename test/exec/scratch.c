/* Driver of scratch.pk: see there. */
#include "exec_util.h"
#include "scratch.h"

enum { B = 16, NB = 8 };

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "scratch");
	su_rng r = su_rng_new(9);
	{
		int64_t n = 48;
		float x[48 * B], o[48 * B];
		for (int i = 0; i < n * B; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(stage_transpose(ex_stream(), EX_DEV(x, n * B), EX_DEV(o, n * B), n));
		for (int b = 0; b < n / B; b++)
			for (int i = 0; i < B; i++)
				for (int j = 0; j < B; j++)
					EX_SAME(o[(b * B + i) * B + j], x[(b * B + j) * B + i], "stage_transpose %d (%d, %d)", b, i, j);
	}
	{
		int64_t n = 12;
		int32_t x[12 * 8], o[12 * 8];
		for (int i = 0; i < n * 8; i++)
			x[i] = (int32_t)su_int(&r, -100, 100);
		ex_poison(o, sizeof o);
		EX_OK(scratch_prefix(ex_stream(), EX_DEV(x, n * 8), EX_DEV(o, n * 8), n));
		for (int b = 0; b < n / 4; b++)
			for (int c = 0; c < 8; c++) {
				int32_t s = 0;
				for (int rr = 0; rr < 4; rr++) {
					s += x[(b * 4 + rr) * 8 + c];
					EX_EQ(o[(b * 4 + rr) * 8 + c], s, "scratch_prefix %d (%d, %d)", b, rr, c);
				}
			}
	}
	{
		int64_t n = 300, p = 5; /* the last program sees 44 lanes */
		uint8_t x[300];
		int32_t h[5 * NB];
		for (int i = 0; i < n; i++)
			x[i] = (uint8_t)su_int(&r, 0, 255);
		ex_poison(h, sizeof h);
		EX_OK(local_hist(ex_stream(), EX_DEV(x, n), EX_DEV(h, p * NB), n, p));
		for (int i = 0; i < p; i++) {
			int cnt[NB] = {0};
			for (int k = i * 64; k < i * 64 + 64 && k < n; k++)
				cnt[x[k] % NB]++;
			for (int b = 0; b < NB; b++)
				EX_EQ(h[i * NB + b], cnt[b] * 10 + (cnt[b] > 0), "local_hist program %d bin %d", i, b);
		}
	}
	return ex_done("scratch");
}
