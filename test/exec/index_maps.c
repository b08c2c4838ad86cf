/* Driver of index_maps.pk: see there.  argv[1]: the seed. */
#include "exec_util.h"
#include "index_maps.h"

enum { B = 16, NB = 6 };

static uint32_t bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "index_maps");
	su_rng r = su_rng_new(argc > 1 ? strtoull(argv[1], NULL, 0) : 1);

	/* shift, for n a multiple of B and not */
	for (int t = 0; t < 2; t++) {
		int64_t n = t ? 16 * 9 + 5 : 16 * 9;
		float *x = malloc(sizeof(float) * (size_t)n), *o = malloc(sizeof(float) * (size_t)n);
		for (int64_t i = 0; i < n; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof(float) * (size_t)n);
		EX_OK(shift(ex_stream(), EX_DEV(x, n), EX_DEV(o, n), n));
		int64_t nprog = (n + B - 1) / B - 1;
		for (int64_t e = 0; e < n; e++) {
			if (e < nprog * B)
				EX_SAME(o[e], e + B < n ? x[e + B] : -1.0f, "shift n=%lld e=%lld", (long long)n, (long long)e);
			else
				EX_EQU(bits(o[e]), 0xFFFFFFFFu, "shift n=%lld: e=%lld not written", (long long)n, (long long)e);
		}
		free(x);
		free(o);
	}

	/* transpose_blocks */
	for (int t = 0; t < 2; t++) {
		int64_t rr = t ? 37 : 32, c = t ? 21 : 48;
		float *x = malloc(sizeof(float) * (size_t)(rr * c)), *o = malloc(sizeof(float) * (size_t)(rr * c));
		for (int64_t i = 0; i < rr * c; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof(float) * (size_t)(rr * c));
		EX_OK(transpose_blocks(ex_stream(), EX_DEV(x, rr * c), EX_DEV(o, rr * c), rr, c));
		for (int64_t i = 0; i < c; i++)
			for (int64_t j = 0; j < rr; j++)
				EX_SAME(o[i * rr + j], x[j * c + i], "transpose r=%lld c=%lld (%lld, %lld)", (long long)rr,
				        (long long)c, (long long)i, (long long)j);
		free(x);
		free(o);
	}

	/* reverse_blocks */
	{
		int32_t x[NB * B], o[NB * B];
		for (int i = 0; i < NB * B; i++)
			x[i] = (int32_t)su_int(&r, -100, 100);
		ex_poison(o, sizeof o);
		EX_OK(reverse_blocks(ex_stream(), EX_DEV(x, NB * B), EX_DEV(o, NB * B)));
		for (int i = 0; i < NB; i++)
			for (int k = 0; k < B; k++)
				EX_EQ(o[i * B + k], x[(NB - 1 - i) * B + k] + i * 1000, "reverse block %d lane %d", i, k);
	}

	/* scale_rows */
	{
		int64_t rows = 7, n = 50;
		float *x = malloc(sizeof(float) * (size_t)(rows * n)), *o = malloc(sizeof(float) * (size_t)(rows * n));
		float w[50];
		for (int64_t i = 0; i < rows * n; i++)
			x[i] = su_nonzero(&r, -1, 1);
		for (int j = 0; j < n; j++)
			w[j] = su_nonzero(&r, -2, 2);
		ex_poison(o, sizeof(float) * (size_t)(rows * n));
		EX_OK(scale_rows(ex_stream(), EX_DEV(x, rows * n), EX_DEV(w, n), EX_DEV(o, rows * n), rows, n));
		for (int64_t i = 0; i < rows; i++)
			for (int64_t j = 0; j < n; j++)
				EX_SAME(o[i * n + j], x[i * n + j] * w[j], "scale_rows (%lld, %lld)", (long long)i, (long long)j);
		free(x);
		free(o);
	}

	/* zigzag */
	{
		int64_t n = 40; /* 3 column blocks, the last partial */
		float x[8 * 40], o[8 * 40];
		for (int i = 0; i < 8 * n; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(zigzag(ex_stream(), EX_DEV(x, 8 * n), EX_DEV(o, 8 * n), n));
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < n; j++) {
				int pid = (j / B) * 2 + i / 4;
				EX_SAME(o[i * n + j], x[i * n + j] * 2.0f + (float)pid, "zigzag (%d, %d)", i, j);
			}
	}

	/* clamp_blocks */
	{
		float x[4 * B], o[8 * B];
		for (int i = 0; i < 4 * B; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(clamp_blocks(ex_stream(), EX_DEV(x, 4 * B), EX_DEV(o, 8 * B)));
		for (int i = 0; i < 8; i++)
			for (int k = 0; k < B; k++)
				EX_SAME(o[i * B + k], x[(i < 3 ? i : 3) * B + k], "clamp_blocks (%d, %d)", i, k);
	}
	return ex_done("index_maps");
}
