/* Driver of bdot.pk: see there.  References in double. */
#include "exec_util.h"
#include "bdot.h"

enum { B = 3, M = 32, BM = 16, K = 24, N = 8 };

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "bdot");
	su_rng r = su_rng_new(7);
	static float q[B][M][K], k[B][N][K], v[B][K][N], s[B][M][N], o[B][M][N], t[B][K][N];
	static double rs[B][M][N];
	for (int b = 0; b < B; b++)
		for (int i = 0; i < K; i++) {
			for (int m = 0; m < M; m++)
				q[b][m][i] = su_uniform(&r, -1.0f, 1.0f);
			for (int n = 0; n < N; n++) {
				k[b][n][i] = su_uniform(&r, -1.0f, 1.0f);
				v[b][i][n] = su_uniform(&r, -1.0f, 1.0f);
			}
		}
	EX_OK(bdot(ex_stream(), EX_DEV(&q[0][0][0], B * M * K), EX_DEV(&k[0][0][0], B * N * K),
	           EX_DEV(&v[0][0][0], B * K * N), EX_DEV(&s[0][0][0], B * M * N), EX_DEV(&o[0][0][0], B * M * N),
	           EX_DEV(&t[0][0][0], B * K * N)));
	for (int b = 0; b < B; b++)
		for (int m = 0; m < M; m++)
			for (int n = 0; n < N; n++) {
				double sc = 0, qv = 0;
				for (int i = 0; i < K; i++) {
					sc += (double)q[b][m][i] * k[b][n][i];
					qv += (double)q[b][m][i] * v[b][i][n];
				}
				rs[b][m][n] = sc;
				EX_NEAR(s[b][m][n], sc, 1e-5, "s[%d][%d][%d]", b, m, n);
				EX_NEAR(o[b][m][n], sc + qv, 1e-5, "o[%d][%d][%d]", b, m, n);
			}
	for (int b = 0; b < B; b++)
		for (int i = 0; i < K; i++)
			for (int n = 0; n < N; n++) {
				double tv = 0;
				for (int m = 0; m < BM; m++)
					tv += (double)q[b][m][i] * rs[b][m][n];
				EX_NEAR(t[b][i][n], tv, 1e-5, "t[%d][%d][%d]", b, i, n);
			}
	return ex_done("bdot");
}
