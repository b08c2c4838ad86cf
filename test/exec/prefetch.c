/* Driver of prefetch.pk: see there. */
#include "exec_util.h"
#include "prefetch.h"

enum { B = 4, P = 3, NPAGES = 8, PS = 8, D = 16, N = 40, M = 50 };

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "prefetch");
	su_rng r = su_rng_new(7);

	static int32_t table[B][P];
	static float pages[NPAGES][PS][D], o[B][P][PS][D];
	for (int b = 0; b < B; b++)
		for (int p = 0; p < P; p++)
			table[b][p] = (int32_t)su_int(&r, 0, NPAGES - 1);
	for (int i = 0; i < NPAGES * PS * D; i++)
		(&pages[0][0][0])[i] = su_uniform(&r, -1, 1);
	EX_OK(gather_pages(ex_stream(), EX_DEV(&table[0][0], B * P), EX_DEV(&pages[0][0][0], NPAGES * PS * D),
	                   EX_DEV(&o[0][0][0][0], B * P * PS * D)));
	for (int b = 0; b < B; b++)
		for (int p = 0; p < P; p++)
			for (int i = 0; i < PS * D; i++) {
				float want = (&pages[table[b][p]][0][0])[i] + (float)table[b][p] * 1000.0f;
				EX_EQ((&o[b][p][0][0])[i], want, "gather_pages o[%d][%d] elem %d", b, p, i);
			}

	/* dst[perm[i]]: a permutation of the rows 0..N-1 of o, except that the
	 * rows i with perm[i] == 0 go to dst[0] = M + 5, past o: dropped. */
	static int64_t dst[N];
	static uint8_t perm[N];
	static int32_t x[N][4], o2[M + 2][4];
	for (int i = 0; i < N; i++) {
		perm[i] = (uint8_t)((i * 7) % N); /* 7 is prime to N: a permutation */
		dst[i] = i == 0 ? M + 5 : N - 1 - i;
		for (int j = 0; j < 4; j++)
			x[i][j] = (int32_t)su_int(&r, -1000, 1000);
	}
	for (int i = 0; i < M + 2; i++)
		for (int j = 0; j < 4; j++)
			o2[i][j] = -7;
	EX_OK(scatter_rows(ex_stream(), EX_DEV(dst, N), EX_DEV(perm, N), EX_DEV(&x[0][0], N * 4),
	                   EX_GUARDED(&o2[0][0], M * 4, 0), N, M));
	int32_t want[M + 2][4];
	for (int i = 0; i < M + 2; i++)
		for (int j = 0; j < 4; j++)
			want[i][j] = -7;
	for (int i = 0; i < N; i++) {
		int64_t row = dst[perm[i]];
		if (row < M)
			for (int j = 0; j < 4; j++)
				want[row][j] = x[i][j] + 1;
	}
	for (int i = 0; i < M + 2; i++)
		for (int j = 0; j < 4; j++)
			EX_EQ(o2[i][j], want[i][j], "scatter_rows o[%d][%d]", i, j);
	return ex_done("prefetch");
}
