/* Driver of reductions.pk: see there. */
#include "exec_util.h"
#include "reductions.h"

enum { R = 8, C = 12 };
#define X(b, i, j) x[((b) * R + (i)) * C + (j)]

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "reductions");
	su_rng r = su_rng_new(21);
	{
		enum { N = 3 };
		int64_t n = N;
		static float x[N * R * C], s0[N * C], s1[N * R], sall[N], mx0[N * C], mx1[N * R], mn0[N * C],
			mn1[N * R], cs0[N * R * C], cs1[N * R * C], keep[N * R * C];
		static int32_t am0[N * C], am1[N * R], an0[N * C], an1[N * R], amall[N];
		for (int i = 0; i < N * R * C; i++)
			x[i] = su_nonzero(&r, -10, 10);
		X(1, 2, 3) = X(1, 5, 3); /* a tie along axis 0 */
		X(2, 4, 1) = X(2, 4, 7); /* a tie along axis 1 */
		EX_OK(red_f32(ex_stream(), EX_DEV(x, N * R * C), EX_DEV(s0, N * C), EX_DEV(s1, N * R), EX_DEV(sall, N),
		              EX_DEV(mx0, N * C), EX_DEV(mx1, N * R), EX_DEV(mn0, N * C), EX_DEV(mn1, N * R),
		              EX_DEV(am0, N * C), EX_DEV(am1, N * R), EX_DEV(an0, N * C), EX_DEV(an1, N * R),
		              EX_DEV(amall, N), EX_DEV(cs0, N * R * C), EX_DEV(cs1, N * R * C), EX_DEV(keep, N * R * C),
		              n));
		for (int b = 0; b < N; b++) {
			double all = 0;
			int best = 0;
			for (int e = 0; e < R * C; e++) {
				all += x[b * R * C + e];
				if (x[b * R * C + e] > x[b * R * C + best])
					best = e;
			}
			EX_NEAR(sall[b], all, 1e-5, "sum all b=%d", b);
			EX_EQ(amall[b], best, "argmax all b=%d", b);
			for (int j = 0; j < C; j++) {
				double s = 0, cs = 0, sa = 0;
				int amx = 0, amn = 0;
				for (int i = 0; i < R; i++) {
					s += X(b, i, j);
					sa += fabs(X(b, i, j));
					if (X(b, i, j) > X(b, amx, j))
						amx = i;
					if (X(b, i, j) < X(b, amn, j))
						amn = i;
				}
				EX_NEAR(s0[b * C + j], s, 1e-5, "sum axis 0 (%d, %d)", b, j);
				EX_SAME(mx0[b * C + j], X(b, amx, j), "max axis 0 (%d, %d)", b, j);
				EX_SAME(mn0[b * C + j], X(b, amn, j), "min axis 0 (%d, %d)", b, j);
				EX_EQ(am0[b * C + j], amx, "argmax axis 0 (%d, %d)", b, j);
				EX_EQ(an0[b * C + j], amn, "argmin axis 0 (%d, %d)", b, j);
				for (int i = 0; i < R; i++) {
					cs += X(b, i, j);
					EX_NEAR(cs0[(b * R + i) * C + j], cs, 1e-5, "cumsum axis 0 (%d, %d, %d)", b, i, j);
					float rmax = -INFINITY;
					for (int jj = 0; jj < C; jj++)
						rmax = fmaxf(rmax, X(b, i, jj));
					EX_NEAR(keep[(b * R + i) * C + j], (X(b, i, j) - rmax) / sa, 1e-5, "keepdims (%d, %d, %d)",
					        b, i, j);
				}
			}
			for (int i = 0; i < R; i++) {
				double s = 0, cs = 0;
				int amx = 0, amn = 0;
				for (int j = 0; j < C; j++) {
					s += X(b, i, j);
					if (X(b, i, j) > X(b, i, amx))
						amx = j;
					if (X(b, i, j) < X(b, i, amn))
						amn = j;
					cs += X(b, i, j);
					EX_NEAR(cs1[(b * R + i) * C + j], cs, 1e-5, "cumsum axis 1 (%d, %d, %d)", b, i, j);
				}
				EX_NEAR(s1[b * R + i], s, 1e-5, "sum axis 1 (%d, %d)", b, i);
				EX_SAME(mx1[b * R + i], X(b, i, amx), "max axis 1 (%d, %d)", b, i);
				EX_SAME(mn1[b * R + i], X(b, i, amn), "min axis 1 (%d, %d)", b, i);
				EX_EQ(am1[b * R + i], amx, "argmax axis 1 (%d, %d)", b, i);
				EX_EQ(an1[b * R + i], amn, "argmin axis 1 (%d, %d)", b, i);
			}
		}
	}
	{
		static int32_t x[2 * R * C], smid[2 * C], s02[R], mxmid[2 * C], si8[C], csb[R * C], cs2[2 * R * C],
			amid[2 * C];
		static int8_t b8[R * C];
		static uint8_t u8x[R * C];
		static uint32_t su8[R];
		static bool any0[C], all0[C];
		for (int i = 0; i < 2 * R * C; i++)
			x[i] = (int32_t)su_int(&r, -1000000, 1000000);
		for (int i = 0; i < R * C; i++) {
			b8[i] = (int8_t)su_int(&r, -128, 127);
			u8x[i] = (uint8_t)su_int(&r, 200, 255); /* the u8 sums overflow u8 */
		}
		for (int i = 0; i < R; i++)
			b8[i * C + 0] = 100; /* column 0 all positive, column 1 none */
		for (int i = 0; i < R; i++)
			b8[i * C + 1] = (int8_t)-i;
		EX_OK(red_int(ex_stream(), EX_DEV(x, 2 * R * C), EX_DEV(b8, R * C), EX_DEV(u8x, R * C),
		              EX_DEV(smid, 2 * C), EX_DEV(s02, R), EX_DEV(mxmid, 2 * C), EX_DEV(si8, C), EX_DEV(su8, R),
		              EX_DEV(any0, C), EX_DEV(all0, C), EX_DEV(csb, R * C), EX_DEV(cs2, 2 * R * C),
		              EX_DEV(amid, 2 * C)));
		for (int b = 0; b < 2; b++)
			for (int j = 0; j < C; j++) {
				int32_t s = 0, m = INT32_MIN;
				int an = 0;
				for (int i = 0; i < R; i++) {
					s += X(b, i, j);
					m = X(b, i, j) > m ? X(b, i, j) : m;
					if (X(b, i, j) < X(b, an, j))
						an = i;
				}
				EX_EQ(smid[b * C + j], s, "int sum axis 1 (%d, %d)", b, j);
				EX_EQ(mxmid[b * C + j], m, "int max axis 1 (%d, %d)", b, j);
				EX_EQ(amid[b * C + j], an, "int argmin axis 1 (%d, %d)", b, j);
			}
		for (int i = 0; i < R; i++) {
			int32_t s = 0;
			uint32_t u = 0;
			for (int b = 0; b < 2; b++)
				for (int j = 0; j < C; j++)
					s += X(b, i, j);
			for (int j = 0; j < C; j++)
				u += u8x[i * C + j];
			EX_EQ(s02[i], s, "int sum axes (0, 2) %d", i);
			EX_EQU(su8[i], u, "u8 sum -> u32 row %d", i);
		}
		for (int j = 0; j < C; j++) {
			int32_t s = 0;
			int any = 0, all = 1;
			for (int i = 0; i < R; i++) {
				s += b8[i * C + j];
				any |= b8[i * C + j] > 0;
				all &= b8[i * C + j] > 0;
			}
			EX_EQ(si8[j], s, "i8 sum -> i32 col %d", j);
			EX_EQ(any0[j], any, "bool max (any) col %d", j);
			EX_EQ(all0[j], all, "bool min (all) col %d", j);
		}
		for (int i = 0; i < R; i++) {
			int32_t c = 0;
			for (int j = 0; j < C; j++) {
				c += b8[i * C + j] > 0;
				EX_EQ(csb[i * C + j], c, "bool cumsum (%d, %d)", i, j);
			}
		}
		for (int b = 0; b < 2; b++)
			for (int i = 0; i < R; i++) {
				int32_t c = 0;
				for (int j = 0; j < C; j++) {
					c += X(b, i, j);
					EX_EQ(cs2[(b * R + i) * C + j], c, "int cumsum axis 2 (%d, %d, %d)", b, i, j);
				}
			}
	}
	{
		float x[16] = {1, 5, 3, 5, -2, -2, 0, 4, /* ties: max 5 at 1, min -2 at 4 */
		               1, 2, NAN, 9, -7, NAN, 3, 0};
		float mx[2], mn[2];
		int32_t am[2], an[2];
		EX_OK(red_special(ex_stream(), EX_DEV(x, 16), EX_DEV(mx, 2), EX_DEV(am, 2), EX_DEV(an, 2),
		                  EX_DEV(mn, 2)));
		EX_SAME(mx[0], 5, "max with ties");
		EX_SAME(mn[0], -2, "min with ties");
		EX_EQ(am[0], 1, "argmax ties: the first");
		EX_EQ(an[0], 4, "argmin ties: the first");
		EX_SAME(mx[1], NAN, "max with NaN");
		EX_SAME(mn[1], NAN, "min with NaN");
		EX_EQ(am[1], 2, "argmax: the first NaN");
		EX_EQ(an[1], 2, "argmin: the first NaN");
	}
	return ex_done("reductions");
}
