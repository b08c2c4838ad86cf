/* Driver of shapes.pk: see there. */
#include "exec_util.h"
#include "shapes.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "shapes");
	su_rng r = su_rng_new(29);
	{
		int32_t a[24], b[24];
		float c[12], e[6];
		int64_t d[5];
		uint8_t f[7];
		pk_f16 g[3];
		EX_OK(makers(ex_stream(), EX_DEV(a, 24), EX_DEV(b, 24), EX_DEV(c, 12), EX_DEV(d, 5), EX_DEV(e, 6),
		             EX_DEV(f, 7), EX_DEV(g, 3)));
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 6; j++) {
				EX_EQ(a[i * 6 + j], i * 10 + j, "iota 2-D (%d, %d)", i, j);
				EX_EQ(b[i * 6 + j], i - j, "iota default dim 0 (%d, %d)", i, j);
			}
		for (int i = 0; i < 12; i++)
			EX_SAME(c[i], i * 0.5f, "f32(iota) %d", i);
		for (int i = 0; i < 5; i++)
			EX_EQ(d[i], i * 3000000000LL, "iota i64 %d", i);
		for (int i = 0; i < 6; i++)
			EX_SAME(e[i], 2.25f, "zeros + ones + full %d", i);
		for (int i = 0; i < 7; i++)
			EX_EQ(f[i], 201, "full u8 %d", i);
		for (int i = 0; i < 3; i++)
			EX_EQ(g[i], su_f32_to_f16(4.5f), "full f16 %d", i);
	}
	{
		float x[24], r1[24], r2[24], r3[24], t1[24], t2[24], t3[24];
		for (int i = 0; i < 24; i++)
			x[i] = su_nonzero(&r, -1, 1);
		EX_OK(reshapes(ex_stream(), EX_DEV(x, 24), EX_DEV(r1, 24), EX_DEV(r2, 24), EX_DEV(r3, 24),
		               EX_DEV(t1, 24), EX_DEV(t2, 24), EX_DEV(t3, 24)));
		for (int i = 0; i < 24; i++) {
			EX_SAME(r1[i], x[i], "reshape (4, 6) %d", i);
			EX_SAME(r2[i], x[i], "reshape (2, -1, 4) %d", i);
			EX_SAME(r3[i], x[i], "reshape twice %d", i);
		}
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 4; j++)
				EX_SAME(t1[i * 4 + j], x[j * 6 + i], ".T (%d, %d)", i, j);
		/* t2[k, a, b] = v[a, b, k]; t3[b, a, k] = v[a, b, k] for v: [2, 3, 4] */
		for (int a = 0; a < 2; a++)
			for (int b = 0; b < 3; b++)
				for (int k = 0; k < 4; k++) {
					EX_SAME(t2[(k * 2 + a) * 3 + b], x[(a * 3 + b) * 4 + k], "transpose (2, 0, 1)");
					EX_SAME(t3[(b * 2 + a) * 4 + k], x[(a * 3 + b) * 4 + k], "transpose (1, 0, 2)");
				}
	}
	{
		float col[5], row[7], o1[35], o2[35], o3[35], o4[7], o5[105];
		for (int i = 0; i < 5; i++)
			col[i] = su_nonzero(&r, -1, 1);
		for (int j = 0; j < 7; j++)
			row[j] = su_nonzero(&r, -1, 1);
		EX_OK(broadcasts(ex_stream(), EX_DEV(col, 5), EX_DEV(row, 7), EX_DEV(o1, 35), EX_DEV(o2, 35),
		                 EX_DEV(o3, 35), EX_DEV(o4, 7), EX_DEV(o5, 105)));
		for (int i = 0; i < 5; i++)
			for (int j = 0; j < 7; j++) {
				EX_SAME(o1[i * 7 + j], col[i] * row[j], "outer product (%d, %d)", i, j);
				EX_SAME(o2[i * 7 + j], col[i] + row[j], "[5, 1] + [7] (%d, %d)", i, j);
				EX_SAME(o3[i * 7 + j], row[j] - col[i], "broadcast_to (%d, %d)", i, j);
				/* c * r + k may be one FMA (§4.1; the GPU's is): an ulp of 2. */
				for (int k = 0; k < 3; k++)
					EX_NEAR(o5[(k * 5 + i) * 7 + j], col[i] * row[j] + (float)k, 3e-7, "3-D broadcast (%d, %d, %d)",
					        k, i, j);
			}
		for (int j = 0; j < 7; j++)
			EX_SAME(o4[j], row[j], "r[None] %d", j);
	}
	{
		float x[6 * 8], h[6 * 8], p[6 * 8];
		for (int i = 0; i < 6 * 8; i++)
			x[i] = (float)(i * 3 % 17) - 8.0f;
		EX_OK(splits(ex_stream(), EX_DEV(x, 6 * 8), EX_DEV(h, 6 * 8), EX_DEV(p, 6 * 8)));
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 8; j++) {
				EX_SAME(h[i * 8 + j], j < 4 ? x[i * 8 + j + 4] : x[i * 8 + j - 4] * 2.0f, "splits h (%d, %d)", i, j);
				int src = i < 2 ? i + 4 : i < 5 ? i - 1 : 0; /* rows of c (4, 5), b (1..3), a (0) */
				EX_SAME(p[i * 8 + j], x[src * 8 + j] + 68.0f, "splits p (%d, %d)", i, j);
			}
	}
	for (int32_t i = -8; i <= 7; i += 3) { /* -8: out of range (no row), -5 .. 7 */
		float x[6 * 8], y[6 * 8], o[6 * 8], g[8];
		for (int k = 0; k < 6 * 8; k++) {
			x[k] = su_nonzero(&r, -1, 1);
			y[k] = su_nonzero(&r, -1, 1);
		}
		EX_OK(updates(ex_stream(), EX_DEV(x, 6 * 8), EX_DEV(y, 6 * 8), i, EX_DEV(o, 6 * 8), EX_DEV(g, 8)));
		int row = i < 0 ? i + 6 : i;
		for (int a = 0; a < 6; a++)
			for (int b = 0; b < 8; b++) {
				float w = x[a * 8 + b];
				if (b == 2)
					w = y[a * 8];
				if (a >= 1 && a < 3 && b >= 4 && b < 7)
					w *= y[a * 8 + b];
				if (x[a * 8 + b] > 0.75f)
					w = 9.0f;
				if (a == row)
					w += 100.0f;
				if (a == 0)
					w = w > 0.5f ? w : 0.5f;
				if (a == 5 && b == 7)
					w = w < -2.0f ? w : -2.0f;
				if (a == 4 && b == 0)
					w /= 4.0f;
				EX_SAME(o[a * 8 + b], w, "updates i %d (%d, %d)", i, a, b);
			}
		for (int b = 0; b < 8; b++)
			EX_SAME(g[b], x[4 * 8 + b], "updates get %d", b);
	}
	return ex_done("shapes");
}
