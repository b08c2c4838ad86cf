/* Driver of lax_math.pk: see there. */
#include "exec_util.h"
#include "lax_math.h"

enum { N = 128 };

/* JAX's erf_inv agrees with the exact inverse to about 1e-7 relative:
 * checked through erf, where the slope of erf_inv is moderate. */
static void check_erf_inv(float got, double u, double tol, const char *what)
{
	EX_NEAR(erf(got), u, tol, "%s: erf(erf_inv(%g)) = erf(%g)", what, u, got);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "lax_math");
	su_rng r = su_rng_new(31);
	{
		static float x[N], y[N], o[17 * N];
		for (int i = 0; i < N; i++) {
			x[i] = su_nonzero(&r, -6, 6);
			y[i] = su_nonzero(&r, -3, 3);
		}
		x[0] = 2.5f, x[1] = -2.5f, x[2] = 0.25f, x[3] = -0.75f, x[4] = 1.5f; /* halves: round to even */
		EX_OK(fn_f32(ex_stream(), EX_DEV(x, N), EX_DEV(y, N), EX_DEV(o, 17 * N)));
		for (int i = 0; i < N; i++) {
			float v = x[i], u = v / 6.5f;
			double want[15] = {tan(v), atan(v), asin(u), acos(u), sinh(v), cosh(v), asinh(v), acosh(fabsf(v) + 1.0f),
			                   atanh(u), expm1(v), cbrt(v), atan2(v, y[i]), nearbyint(v * 2.0f), nearbyint(v),
			                   trunc(v)};
			for (int f = 0; f < 15; f++)
				EX_NEAR(o[f * N + i], want[f], 4e-6, "fn_f32 function %d at %g", f, v);
			check_erf_inv(o[15 * N + i], u, 2e-6, "fn_f32");
			EX_NEAR(o[16 * N + i], expm1((double)(v * 1e-5f)), 4e-6, "expm1(%g) keeps small values", v * 1e-5f);
		}
		EX_SAME(o[12 * N + 0], 5.0f, "round(5.0)");
		EX_SAME(o[13 * N + 0], 2.0f, "rint(2.5) is even");
		EX_SAME(o[13 * N + 1], -2.0f, "rint(-2.5) is even");
		EX_SAME(o[13 * N + 4], 2.0f, "rint(1.5) is even");
		EX_SAME(o[14 * N + 3], -0.0f, "trunc(-0.75)");
	}
	{
		static double x[N], y[N], o[8 * N];
		for (int i = 0; i < N; i++) {
			x[i] = su_uniform_d(&r, -6, 6);
			y[i] = su_uniform_d(&r, -3, 3);
		}
		x[0] = 1.25;
		EX_OK(fn_f64(ex_stream(), EX_DEV(x, N), EX_DEV(y, N), EX_DEV(o, 8 * N)));
		for (int i = 0; i < N; i++) {
			double v = x[i];
			double want[8] = {tan(v), atan2(v, y[i]), sinh(v), expm1(v), cbrt(v), nearbyint(v * 2.0), trunc(v),
			                  asin(v / 6.5)};
			for (int f = 0; f < 8; f++)
				EX_NEAR(o[f * N + i], want[f], 1e-13, "fn_f64 function %d at %g", f, v);
		}
		EX_SAME(o[5 * N + 0], 2.0, "round(2.5) in f64 is even");
	}
	{
		static pk_f16 h[N], oh[4 * N];
		static pk_bf16 b[N], ob[3 * N];
		for (int i = 0; i < N; i++) {
			h[i] = su_f32_to_f16(su_nonzero(&r, -1.4f, 1.4f));
			b[i] = su_f32_to_bf16(su_nonzero(&r, -4, 4));
		}
		h[0] = su_f32_to_f16(1.25f); /* round(2.5) == 2 */
		EX_OK(fn_16(ex_stream(), EX_DEV(h, N), EX_DEV(b, N), EX_DEV(oh, 4 * N), EX_DEV(ob, 3 * N)));
		for (int i = 0; i < N; i++) {
			float v = su_f16_to_f32(h[i]), w = su_bf16_to_f32(b[i]);
			/* one rounding of the f32 result: within half an ulp of f16 (bf16) */
			EX_SAME(su_f16_to_f32(oh[0 * N + i]), su_round_f16(tanf(v)), "tan(f16 %g)", v);
			EX_SAME(su_f16_to_f32(oh[1 * N + i]), nearbyintf(su_round_f16(v * 2.0f)), "round(f16 %g * 2)", v);
			check_erf_inv(su_f16_to_f32(oh[2 * N + i]), su_round_f16(v / 8.0f), 2e-3, "fn_16");
			EX_SAME(su_f16_to_f32(oh[3 * N + i]), su_round_f16(atan2f(v, 2.0f)), "atan2(f16 %g, 2)", v);
			EX_NEAR(su_bf16_to_f32(ob[0 * N + i]), sinh(w), 8e-3, "sinh(bf16 %g)", w);
			EX_SAME(su_bf16_to_f32(ob[1 * N + i]), truncf(w), "trunc(bf16 %g)", w);
			EX_NEAR(su_bf16_to_f32(ob[2 * N + i]), cbrt(w), 8e-3, "cbrt(bf16 %g)", w);
		}
	}
	{
		float x[8] = {NAN, INFINITY, -INFINITY, 0.5f, -0.5f, 1.0f, -1.0f, 3.5f}, o[6 * 8], c[8];
		int32_t a[8] = {0, 1, -1, 7, -8, 100, INT32_MIN, INT32_MAX}, ia[2 * 8];
		EX_OK(specials(ex_stream(), EX_DEV(x, 8), EX_DEV(a, 8), EX_DEV(o, 6 * 8), EX_DEV(ia, 2 * 8), EX_DEV(c, 8)));
		for (int i = 0; i < 8; i++) {
			double v = x[i];
			EX_SAME(o[0 * 8 + i], nearbyintf(x[i]), "round(%g)", v);
			EX_SAME(o[1 * 8 + i], truncf(x[i]), "trunc(%g)", v);
			EX_SAME(o[3 * 8 + i], atan2f(x[i], -1.0f), "atan2(%g, -1)", v);
			/* CUDA's expm1f (libdevice) is within 1 ulp: 2 ulp of slack, specials exact */
			EX_NEAR(o[4 * 8 + i], expm1f(x[i]), 2.4e-7, "expm1(%g)", v);
			EX_NEAR(o[5 * 8 + i], tan((double)(float)a[i]), 1e-5, "tan(i32 %d)", a[i]);
			EX_EQ(ia[0 * 8 + i], a[i], "round(i32 %d)", a[i]);
			EX_EQ(ia[1 * 8 + i], a[i], "trunc(i32 %d)", a[i]);
		}
		/* erf_inv: NaN, NaN beyond [-1, 1], +-inf at +-1 */
		EX_SAME(o[2 * 8 + 0], NAN, "erf_inv(nan)");
		EX_SAME(o[2 * 8 + 1], NAN, "erf_inv(inf)");
		EX_SAME(o[2 * 8 + 5], INFINITY, "erf_inv(1)");
		EX_SAME(o[2 * 8 + 6], -INFINITY, "erf_inv(-1)");
		EX_SAME(o[2 * 8 + 7], NAN, "erf_inv(3.5)");
		check_erf_inv(o[2 * 8 + 3], 0.5, 1e-7, "specials");
		float want[8] = {2.0f, -4.0f, -2.0f, (float)atan(1.0), 0, 3.0f, 0.0f, 1e-10f};
		for (int k = 0; k < 8; k++)
			if (k != 4)
				EX_NEAR(c[k], want[k], 1e-7, "constant %d", k);
		check_erf_inv(c[4], 0.5, 1e-7, "constant erf_inv(0.5)");
	}
	{
		float o[1];
		EX_OK(consts(ex_stream(), EX_DEV(o, 1)));
		EX_SAME(o[0], 4.0f, "const round(2.5) + cbrt(8.0)");
	}
	return ex_done("lax_math");
}
