/* Driver of strided.pk: see there. */
#include "exec_util.h"
#include "strided.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "strided");
	su_rng r = su_rng_new(31);
	{
		float x[64 * 16], g[16 * 16], c[8 * 5], one[16];
		for (int i = 0; i < 64 * 16; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(g, sizeof g);
		ex_poison(c, sizeof c);
		EX_OK(gather_rows(ex_stream(), EX_DEV(x, 64 * 16), EX_DEV(g, 16 * 16), EX_DEV(c, 8 * 5), EX_DEV(one, 16)));
		for (int j = 0; j < 16; j++)
			EX_SAME(one[j], x[63 * 16 + j], "gather_rows one %d", j);
		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 16; j++)
				EX_SAME(g[i * 16 + j], x[(1 + 4 * i) * 16 + j], "gather_rows r (%d, %d)", i, j);
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 5; j++)
				EX_SAME(c[i * 5 + j], x[(8 + i) * 16 + 3 * j], "gather_rows c (%d, %d)", i, j);
	}
	for (int off = 0; off < 4; off += 3) {
		enum { N = 60 };
		float x[32 * 8], o[N * 8], keep[N * 8];
		for (int i = 0; i < 32 * 8; i++)
			x[i] = su_nonzero(&r, -1, 1);
		for (int i = 0; i < N * 8; i++)
			keep[i] = o[i] = su_nonzero(&r, -1, 1);
		EX_OK(scatter_rows(ex_stream(), EX_DEV(x, 32 * 8), off, EX_DEV(o, N * 8), N));
		for (int i = 0; i < N; i++)
			for (int j = 0; j < 8; j++) {
				int k = (i - off) / 2;
				bool hit = i >= off && (i - off) % 2 == 0 && k < 32;
				EX_SAME(o[i * 8 + j], hit ? x[k * 8 + j] + 1.0f : keep[i * 8 + j], "scatter_rows off %d (%d, %d)",
				        off, i, j);
			}
	}
	{
		float x[64 * 16], ev[32 * 16], od[32 * 16], c[64 * 4], one[16], o[48 * 16], keep[48 * 16];
		for (int i = 0; i < 64 * 16; i++)
			x[i] = su_nonzero(&r, -1, 1);
		for (int i = 0; i < 48 * 16; i++)
			keep[i] = o[i] = su_nonzero(&r, -1, 1);
		EX_OK(slice_steps(ex_stream(), EX_DEV(x, 64 * 16), EX_DEV(ev, 32 * 16), EX_DEV(od, 32 * 16), EX_DEV(c, 64 * 4),
		                  EX_DEV(one, 16), EX_DEV(o, 48 * 16)));
		for (int i = 0; i < 32; i++)
			for (int j = 0; j < 16; j++) {
				EX_SAME(ev[i * 16 + j], x[2 * i * 16 + j], "slice_steps ev (%d, %d)", i, j);
				EX_SAME(od[i * 16 + j], x[(2 * i + 1) * 16 + j], "slice_steps od (%d, %d)", i, j);
			}
		for (int i = 0; i < 64; i++)
			for (int j = 0; j < 4; j++)
				EX_SAME(c[i * 4 + j], x[i * 16 + 3 + 4 * j], "slice_steps c (%d, %d)", i, j);
		for (int j = 0; j < 16; j++)
			EX_SAME(one[j], x[10 * 16 + j], "slice_steps one %d", j);
		for (int i = 0; i < 48; i++)
			for (int j = 0; j < 16; j++) {
				bool hit = i % 3 == 1;
				EX_SAME(o[i * 16 + j], hit ? x[(i / 3) * 16 + j] * 2.0f : keep[i * 16 + j], "slice_steps o (%d, %d)", i,
				        j);
			}
	}
	{
		float x[16 * 12], y[4 * 6 * 10], a[8 * 4], b[6], c[2 * 6 * 5], d[4 * 4], o[16 * 12], keep[16 * 12];
		for (int i = 0; i < 16 * 12; i++) {
			x[i] = su_nonzero(&r, -1, 1);
			keep[i] = o[i] = su_nonzero(&r, -1, 1);
		}
		for (int i = 0; i < 4 * 6 * 10; i++)
			y[i] = su_nonzero(&r, -1, 1);
		EX_OK(strided_2d(ex_stream(), EX_DEV(x, 16 * 12), EX_DEV(y, 4 * 6 * 10), EX_DEV(a, 8 * 4), EX_DEV(b, 6),
		                 EX_DEV(c, 2 * 6 * 5), EX_DEV(d, 4 * 4), EX_DEV(o, 16 * 12)));
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 4; j++)
				EX_SAME(a[i * 4 + j], x[2 * i * 12 + 1 + 3 * j], "strided_2d a (%d, %d)", i, j);
		for (int j = 0; j < 6; j++)
			EX_SAME(b[j], x[5 * 12 + 2 * j], "strided_2d b %d", j);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 6; j++)
				for (int k = 0; k < 5; k++)
					EX_SAME(c[(i * 6 + j) * 5 + k], y[((1 + 2 * i) * 6 + j) * 10 + 2 * k], "strided_2d c (%d, %d, %d)", i,
					        j, k);
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 4; k++)
				EX_SAME(d[j * 4 + k], y[(2 * 6 + 1 + j) * 10 + 3 * k], "strided_2d d (%d, %d)", j, k);
		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 12; j++) {
				float want = keep[i * 12 + j];
				if (i % 2 == 0 && j % 2 == 1)
					want = x[(2 * (i / 2) + 1) * 12 + 2 * (j / 2)];
				else if (i % 2 == 1 && j % 4 == 0)
					want = x[2 * (i / 2) * 12 + j / 4] * 2.0f;
				EX_SAME(o[i * 12 + j], want, "strided_2d o (%d, %d)", i, j);
			}
	}
	{
		float x[8 * 16], y[2 * 6 * 10], a[8 * 8], b[8 * 8], c[3 * 16], d[8 * 16], e[2 * 5], f[2 * 2 * 10], g[8];
		for (int i = 0; i < 8 * 16; i++)
			x[i] = su_nonzero(&r, -1, 1);
		for (int i = 0; i < 2 * 6 * 10; i++)
			y[i] = su_nonzero(&r, -1, 1);
		EX_OK(value_steps(ex_stream(), EX_DEV(x, 8 * 16), EX_DEV(y, 2 * 6 * 10), EX_DEV(a, 8 * 8), EX_DEV(b, 8 * 8),
		                  EX_DEV(c, 3 * 16), EX_DEV(d, 8 * 16), EX_DEV(e, 2 * 5), EX_DEV(f, 2 * 2 * 10), EX_DEV(g, 8)));
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 8; j++) {
				EX_SAME(a[i * 8 + j], x[i * 16 + 2 * j], "value_steps a (%d, %d)", i, j);
				EX_SAME(b[i * 8 + j], x[i * 16 + 2 * j + 1], "value_steps b (%d, %d)", i, j);
			}
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 16; j++)
				EX_SAME(c[i * 16 + j], x[(1 + 3 * i) * 16 + j], "value_steps c (%d, %d)", i, j);
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 16; j++)
				EX_SAME(d[i * 16 + j], x[(7 - i) * 16 + j], "value_steps d (%d, %d)", i, j);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 5; j++)
				EX_SAME(e[i * 5 + j], x[(6 - 4 * i) * 16 + 14 - 3 * j], "value_steps e (%d, %d)", i, j);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				for (int k = 0; k < 10; k++)
					EX_SAME(f[(i * 2 + j) * 10 + k], y[(i * 6 + 1 + 3 * j) * 10 + k], "value_steps f (%d, %d, %d)", i, j,
					        k);
		for (int i = 0; i < 8; i++)
			EX_SAME(g[i], x[i * 16 + 5], "value_steps g %d", i);
	}
	return ex_done("strided");
}
