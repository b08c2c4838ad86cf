/* Driver of mean_prod.pk: see there. */
#include "exec_util.h"
#include "mean_prod.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "mean_prod");
	su_rng r = su_rng_new(29);
	float x[8 * 64], mx[8], mi[8], mall[1], mbool[8];
	uint16_t h[8 * 64], b[8 * 64], mh[8], mb[64];
	int32_t iv[8 * 64];
	for (int k = 0; k < 8 * 64; k++) {
		x[k] = su_uniform(&r, -1, 1);
		/* values near 1000 in f16: a sum rounded to f16 on the way would lose them */
		h[k] = su_f32_to_f16(1000.0f + su_uniform(&r, 0, 1));
		b[k] = su_f32_to_bf16(su_uniform(&r, 0.5f, 1.5f));
		iv[k] = (int32_t)su_int(&r, -1000, 1000);
	}
	EX_OK(means(ex_stream(), EX_DEV(x, 512), EX_DEV(h, 512), EX_DEV(b, 512), EX_DEV(iv, 512), EX_DEV(mx, 8),
	            EX_DEV(mh, 8), EX_DEV(mb, 64), EX_DEV(mi, 8), EX_DEV(mall, 1), EX_DEV(mbool, 8)));
	double all = 0;
	for (int row = 0; row < 8; row++) {
		double sx = 0, sh = 0, si = 0, sp = 0;
		for (int j = 0; j < 64; j++) {
			sx += x[row * 64 + j];
			sh += su_f16_to_f32(h[row * 64 + j]);
			si += iv[row * 64 + j];
			sp += x[row * 64 + j] > 0;
		}
		all += sx;
		EX_NEAR(mx[row], sx / 64, 1e-6, "mean row %d", row);
		EX_EQU(mh[row], su_f32_to_f16((float)(sh / 64)), "mean f16 row %d (f32 sum, one rounding)", row);
		EX_NEAR(mi[row], si / 64, 1e-4, "mean i32 row %d", row);
		EX_NEAR(mbool[row], sp / 64, 1e-7, "mean bool row %d", row);
	}
	for (int j = 0; j < 64; j++) {
		double sb = 0;
		for (int row = 0; row < 8; row++)
			sb += su_bf16_to_f32(b[row * 64 + j]);
		EX_EQU(mb[j], su_f32_to_bf16((float)(sb / 8)), "mean bf16 column %d", j);
	}
	EX_NEAR(mall[0], all / 512, 1e-6, "mean of all");

	float px[8], y[8 * 16], pall[1];
	uint16_t hh[8 * 16], ph[8];
	int8_t i8[8 * 16];
	int32_t pi8[8];
	for (int k = 0; k < 8 * 16; k++) {
		y[k] = su_uniform(&r, 0.5f, 1.5f) * (su_int(&r, 0, 1) ? 1.0f : -1.0f);
		hh[k] = su_f32_to_f16(su_uniform(&r, 0.8f, 1.25f));
		i8[k] = (int8_t)su_int(&r, -3, 3);
	}
	EX_OK(prods(ex_stream(), EX_DEV(y, 128), EX_DEV(hh, 128), EX_DEV(i8, 128), EX_DEV(px, 8), EX_DEV(ph, 8),
	            EX_DEV(pi8, 8), EX_DEV(pall, 1)));
	for (int row = 0; row < 8; row++) {
		double p = 1, q = 1;
		int32_t pi = 1;
		for (int j = 0; j < 16; j++) {
			p *= y[row * 16 + j];
			q *= su_f16_to_f32(hh[row * 16 + j]);
			pi = (int32_t)((uint32_t)pi * (uint32_t)(int32_t)i8[row * 16 + j]);
		}
		EX_NEAR(px[row], p, 1e-6 * fabs(p) + 1e-30, "prod row %d", row);
		EX_NEAR(su_f16_to_f32(ph[row]), q, 1e-3 * fabs(q), "prod f16 row %d", row);
		EX_EQ(pi8[row], pi, "prod i8 row %d (in i32)", row);
	}
	double p4 = 1;
	for (int row = 0; row < 2; row++)
		for (int j = 0; j < 4; j++)
			p4 *= y[row * 16 + j];
	EX_NEAR(pall[0], p4, 1e-6 * fabs(p4), "prod of a slice");

	/* dtype=: h's rows of values near 1000 summed in f32 (an f16 result
	 * would round to 64000 or so), i8 sums in i32 and in f16, a product of
	 * 16 f16 values in f32, a mean in bf16. */
	float sf[8], pf[8];
	int32_t si[8];
	uint16_t sh[8], mf[8];
	EX_OK(dtypes(ex_stream(), EX_DEV(h, 512), EX_DEV(hh, 128), EX_DEV(i8, 128), EX_DEV(sf, 8), EX_DEV(si, 8), EX_DEV(sh, 8),
	             EX_DEV(pf, 8), EX_DEV(mf, 8)));
	for (int row = 0; row < 8; row++) {
		double s = 0, p = 1, sb = 0;
		int32_t n = 0;
		for (int j = 0; j < 64; j++) {
			s += su_f16_to_f32(h[row * 64 + j]);
			sb += su_bf16_to_f32(su_f32_to_bf16(su_f16_to_f32(h[row * 64 + j])));
		}
		for (int j = 0; j < 16; j++) {
			n += i8[row * 16 + j];
			p *= su_f16_to_f32(hh[row * 16 + j]);
		}
		EX_NEAR(sf[row], s, 1e-6 * s, "sum(dtype = f32) row %d", row);
		EX_EQ(si[row], n, "sum(dtype = i32) of i8 row %d", row);
		EX_EQU(sh[row], su_f32_to_f16((float)n), "sum(dtype = f16) of i8 row %d", row);
		EX_NEAR(pf[row], p, 1e-5 * fabs(p), "prod(dtype = f32) row %d", row);
		/* as jnp.mean(dtype=bf16): elements to bf16, their sum rounded to
		 * bf16, divided by 64 (exactly) in bf16 */
		EX_EQU(mf[row], su_f32_to_bf16(su_bf16_to_f32(su_f32_to_bf16((float)sb)) / 64), "mean(dtype = bf16) row %d",
		       row);
	}
	return ex_done("mean_prod");
}
