/* Driver of flip_pad.pk: see there. */
#include "exec_util.h"
#include "flip_pad.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "flip_pad");
	su_rng r = su_rng_new(11);
	static float x[60], f0[60], f1[60], fa[60], ft[60], p0[9 * 13], p2[6 * 14], d0[6], d1[6], d2[5];
	static int32_t y[7], fy[7], p1[11], b[40], db[8], dt[10];
	static pk_bf16 h[15], fh[15], ph[35];
	for (int i = 0; i < 60; i++)
		x[i] = su_uniform(&r, -10, 10);
	for (int i = 0; i < 7; i++)
		y[i] = (int32_t)su_int(&r, -100, 100);
	for (int i = 0; i < 15; i++)
		h[i] = su_f32_to_bf16(su_uniform(&r, -10, 10));
	for (int i = 0; i < 40; i++)
		b[i] = (int32_t)su_int(&r, -1000, 1000);
	x[7] = -0.0f; /* kept through flip and diagonal */
	EX_OK(flips(ex_stream(), EX_DEV(x, 60), EX_DEV(y, 7), EX_DEV(h, 15), EX_DEV(f0, 60), EX_DEV(f1, 60),
	            EX_DEV(fa, 60), EX_DEV(fy, 7), EX_DEV(fh, 15), EX_DEV(ft, 60)));
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 10; j++) {
			EX_SAME(f0[i * 10 + j], x[(5 - i) * 10 + j], "flip(x, 0)[%d, %d]", i, j);
			EX_SAME(f1[i * 10 + j], x[i * 10 + 9 - j], "flip(x, -1)[%d, %d]", i, j);
			EX_SAME(fa[i * 10 + j], x[(5 - i) * 10 + 9 - j], "flip(x)[%d, %d]", i, j);
			EX_SAME(ft[j * 6 + i], x[(5 - i) * 10 + j] * 2.0f, "flip(x.T, 1)[%d, %d]", j, i);
		}
	for (int i = 0; i < 7; i++)
		EX_EQ(fy[i], y[6 - i], "flip(y)[%d]", i);
	for (int i = 0; i < 15; i++)
		EX_EQU(fh[i], h[14 - i], "flip(h, (0, 1)) element %d", i);

	EX_OK(pads(ex_stream(), EX_DEV(x, 60), EX_DEV(y, 7), EX_DEV(h, 15), EX_DEV(p0, 9 * 13), EX_DEV(p1, 11),
	           EX_DEV(p2, 6 * 14), EX_DEV(ph, 35), 0.25f));
	for (int i = 0; i < 9; i++)
		for (int j = 0; j < 13; j++) {
			int si = i - 1, sj = j - 3;
			float want = si >= 0 && si < 6 && sj >= 0 ? x[si * 10 + sj] : -1.5f;
			EX_SAME(p0[i * 13 + j], want, "pad(x, ((1, 2), (3, 0)))[%d, %d]", i, j);
		}
	for (int i = 0; i < 11; i++)
		EX_EQ(p1[i], i >= 2 && i < 9 ? y[i - 2] : 9, "pad(y, 2)[%d]", i);
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 14; j++)
			EX_SAME(p2[i * 14 + j], j >= 2 && j < 12 ? x[i * 10 + j - 2] : 0.25f, "pad(x, s)[%d, %d]", i, j);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 7; j++)
			EX_EQU(ph[i * 7 + j], i >= 1 && i < 4 && j >= 1 && j < 6 ? h[(i - 1) * 5 + j - 1] : 0,
			       "pad(h, 1)[%d, %d]", i, j);

	EX_OK(diags(ex_stream(), EX_DEV(x, 60), EX_DEV(b, 40), EX_DEV(d0, 6), EX_DEV(d1, 6), EX_DEV(d2, 5),
	            EX_DEV(db, 8), EX_DEV(dt, 10)));
	for (int i = 0; i < 6; i++) {
		EX_SAME(d0[i], x[i * 10 + i], "diagonal(x)[%d]", i);
		EX_SAME(d1[i], x[i * 10 + i + 3], "diagonal(x, 3)[%d]", i);
	}
	for (int i = 0; i < 5; i++)
		EX_SAME(d2[i], x[(i + 1) * 10 + i], "diagonal(x, -1)[%d]", i);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 4; i++) {
			EX_EQ(db[k * 4 + i], b[k * 20 + i * 4 + i], "diagonal(b, axis1 = 1, axis2 = 2)[%d, %d]", k, i);
		}
	/* axes 0 and 2 with offset 1: b[i, j, i + 1] for i < 2 (axis 0 has 2), the diagonal last */
	for (int j = 0; j < 5; j++)
		for (int i = 0; i < 2; i++)
			EX_EQ(dt[j * 2 + i], b[i * 20 + j * 4 + i + 1], "diagonal(b, 1, axis1 = 0, axis2 = 2)[%d, %d]", j, i);
	for (int32_t k = -13; k <= 13; k += 5) {
		float x[6 * 10], r0[6 * 10], r1[6 * 10];
		for (int i = 0; i < 6 * 10; i++)
			x[i] = (float)i;
		EX_OK(rolls(ex_stream(), EX_DEV(x, 60), k, EX_DEV(r0, 60), EX_DEV(r1, 60)));
		int k0 = ((k % 6) + 6) % 6, k1 = (((k * 3 + 1) % 10) + 10) % 10;
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 10; j++) {
				EX_SAME(r0[i * 10 + j], x[((i - k0 + 6) % 6) * 10 + j], "rolls r0 k %d (%d, %d)", k, i, j);
				EX_SAME(r1[i * 10 + j], x[i * 10 + (j - k1 + 10) % 10], "rolls r1 k %d (%d, %d)", k, i, j);
			}
	}
	return ex_done("flip_pad");
}
