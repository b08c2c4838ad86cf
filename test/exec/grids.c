/* Driver of grids.pk: see there. */
#include "exec_util.h"
#include "grids.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "grids");
	int32_t o0[4] = {-1, -1, -1, -1}, o0b[1] = {-1};
	EX_OK(grid0(ex_stream(), EX_DEV(o0, 4)));
	EX_EQ(o0[0], 42, "grid0");
	EX_EQ(o0[1], 7, "grid0");
	EX_EQ(o0[2], -1, "grid0: o[2] not written");
	EX_OK(grid0b(ex_stream(), EX_DEV(o0b, 1)));
	EX_EQ(o0b[0], 43, "grid0b");

	{
		int64_t n = 1001;
		int32_t *o = malloc(sizeof(int32_t) * 2 * (size_t)n);
		ex_poison(o, sizeof(int32_t) * 2 * (size_t)n);
		EX_OK(grid1(ex_stream(), EX_DEV(o, 2 * n), n));
		for (int64_t i = 0; i < n; i++) {
			EX_EQ(o[2 * i], i * 3 + 1, "grid1 i=%lld", (long long)i);
			EX_EQ(o[2 * i + 1], n, "grid1 nprog i=%lld", (long long)i);
		}
		free(o);
	}
	{
		int64_t a = 37, b = 53;
		int32_t *o = malloc(sizeof(int32_t) * (size_t)(a * b)), *cnt = calloc((size_t)(a * b), sizeof(int32_t));
		ex_poison(o, sizeof(int32_t) * (size_t)(a * b));
		EX_OK(grid2(ex_stream(), EX_DEV(o, a * b), EX_DEV(cnt, a * b), a, b));
		for (int64_t i = 0; i < a; i++)
			for (int64_t j = 0; j < b; j++) {
				EX_EQ(o[i * b + j], i * 1000 + j + a * 100000 + b * 10000000, "grid2 (%lld, %lld)",
				      (long long)i, (long long)j);
				EX_EQ(cnt[i * b + j], 1, "grid2 visits of (%lld, %lld)", (long long)i, (long long)j);
			}
		free(o);
		free(cnt);
	}
	{
		int64_t a = 5, b = 7;
		int32_t c = 9; /* more programs along axis 1 than b: the extra ones do nothing */
		int32_t *o = malloc(sizeof(int32_t) * (size_t)(a * b * 3));
		ex_poison(o, sizeof(int32_t) * (size_t)(a * b * 3));
		EX_OK(grid3(ex_stream(), EX_DEV(o, a * b * 3), c, a, b));
		for (int64_t i = 0; i < a; i++)
			for (int64_t j = 0; j < b; j++)
				for (int k = 0; k < 3; k++)
					EX_EQ(o[(i * b + j) * 3 + k], (i * 100 + j * 10 + k) * 3, "grid3 (%lld, %lld, %d)",
					      (long long)i, (long long)j, k);
		free(o);
	}
	{
		int64_t o[64];
		ex_poison(o, sizeof o);
		EX_OK(grid4(ex_stream(), EX_DEV(o, 64)));
		for (int f = 0; f < 64; f++)
			EX_EQ(o[f], f + 1000, "grid4 flat %d", f);
	}
	{
		int64_t n = 11;
		int32_t m = 13;
		int64_t o[11];
		ex_poison(o, sizeof o);
		EX_OK(ordered(ex_stream(), EX_DEV(o, n), m, n));
		int64_t want = 0;
		for (int j = 0; j < m; j++)
			want = want * 3 + j;
		for (int i = 0; i < n; i++)
			EX_EQ(o[i], want, "ordered i=%d", i);
	}
	{
		int64_t n = 6, p = 3, q = 4;
		int64_t o[6];
		ex_poison(o, sizeof o);
		EX_OK(ordered2(ex_stream(), EX_DEV(o, n), p, q, n));
		int64_t want = 0;
		for (int a = 0; a < p; a++)
			for (int c = 0; c < q; c++)
				want = want * 5 + (a * q + c) % 5;
		for (int i = 0; i < n; i++)
			EX_EQ(o[i], want, "ordered2 i=%d", i);
	}
	return ex_done("grids");
}
