/* Driver of math.pk: see there. */
#include "exec_util.h"
#include "mathfns.h"

enum { N = 128 };

static double sigm(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static int32_t ipow32(int32_t b, int32_t e)
{
	uint32_t r = 1, bb = (uint32_t)b;
	while (e > 0) {
		if (e & 1)
			r *= bb;
		bb *= bb;
		e >>= 1;
	}
	return (int32_t)r;
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "mathfns");
	su_rng r = su_rng_new(23);
	{
		static float x[N], p[N], y[N], o[18 * N];
		for (int i = 0; i < N; i++) {
			x[i] = su_nonzero(&r, -6, 6);
			p[i] = su_uniform(&r, 0.01f, 50);
			y[i] = su_nonzero(&r, -3, 3);
		}
		x[0] = 2.0f, x[1] = -2.0f, x[2] = 0.5f, x[3] = -0.5f; /* floor/ceil on exact values */
		EX_OK(fn_f32(ex_stream(), EX_DEV(x, N), EX_DEV(p, N), EX_DEV(y, N), EX_DEV(o, 18 * N)));
		for (int i = 0; i < N; i++) {
			double v = x[i], w = p[i], yy = y[i];
			double want[18] = {exp(v), exp2(v), log(w), log1p(w), sqrt(w), 1 / sqrt(w), tanh(v), sigm(v),
			                   erf(v), sin(v), cos(v), fabs(v), floor(v), ceil(v), pow(w, yy), v * v,
			                   fmin(v, yy) + fmax(v, 0.25), v > yy ? v : (double)(float)(yy * 2)};
			for (int f = 0; f < 18; f++)
				EX_NEAR(o[f * N + i], want[f], 2e-6, "fn_f32 function %d at %g", f, x[i]);
		}
	}
	{
		static double x[N], o[6 * N];
		for (int i = 0; i < N; i++)
			x[i] = su_uniform_d(&r, -5, 5);
		EX_OK(fn_f64(ex_stream(), EX_DEV(x, N), EX_DEV(o, 6 * N)));
		for (int i = 0; i < N; i++) {
			double v = x[i];
			double want[6] = {exp(v), sqrt(fabs(v)), tanh(v), sin(v), log(fabs(v) + 1.0), erf(v)};
			for (int f = 0; f < 6; f++)
				EX_NEAR(o[f * N + i], want[f], 1e-13, "fn_f64 function %d at %g", f, v);
		}
	}
	{
		static pk_f16 x[N], o[4 * N];
		for (int i = 0; i < N; i++)
			x[i] = su_f32_to_f16(su_nonzero(&r, -4, 4));
		EX_OK(fn_f16(ex_stream(), EX_DEV(x, N), EX_DEV(o, 4 * N)));
		for (int i = 0; i < N; i++) {
			double v = su_f16_to_f32(x[i]);
			/* within one f16 rounding of the exact result */
			double want[4] = {exp(v), sqrt(fabs(v)), sigm(v), floor(su_round_f16((float)(v * 3.0)))};
			for (int f = 0; f < 4; f++)
				EX_NEAR(su_f16_to_f32(o[f * N + i]), want[f], 1e-3, "fn_f16 function %d at %g", f, v);
		}
	}
	{
		float x[8] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -1.0f, 1e30f, -1e30f}, o[64];
		EX_OK(specials(ex_stream(), EX_DEV(x, 8), EX_DEV(o, 64)));
		for (int i = 0; i < 8; i++) {
			double v = x[i];
			EX_SAME(o[0 * 8 + i], isnan(v) ? NAN : fmax(v, 1.0), "max(%g, 1)", v);
			EX_SAME(o[1 * 8 + i], isnan(v) ? NAN : fmin(v, 1.0), "min(%g, 1)", v);
			EX_SAME(o[2 * 8 + i], (float)log(v), "log(%g)", v);
			EX_SAME(o[3 * 8 + i], (float)sqrt(v), "sqrt(%g)", v);
			/* -1 is no special value: a few ulp (§4.1; the GPU's exp is within 3). */
			double tol = v == -1.0 ? 5e-7 : 0.0;
			EX_NEAR(o[4 * 8 + i], (float)exp(v), tol, "exp(%g)", v);
			EX_NEAR(o[5 * 8 + i], (float)tanh(v), tol, "tanh(%g)", v);
			EX_NEAR(o[6 * 8 + i], (float)sigm(v), tol, "sigmoid(%g)", v);
			EX_SAME(o[7 * 8 + i], fabs(v), "abs(%g)", v);
		}
	}
	{
		static int32_t a[N], e[N], ia[N], ip[N], fl[N];
		static float ex[N];
		static int64_t lp[N];
		for (int i = 0; i < N; i++) {
			a[i] = (int32_t)su_int(&r, -100000, 100000);
			e[i] = (int32_t)su_int(&r, 0, 40);
		}
		a[0] = INT32_MIN;
		a[1] = 0, e[1] = 0; /* 0 ** 0 == 1 */
		a[2] = -3, e[2] = 5;
		EX_OK(fn_int(ex_stream(), EX_DEV(a, N), EX_DEV(e, N), EX_DEV(ia, N), EX_DEV(ip, N), EX_DEV(fl, N),
		             EX_DEV(ex, N), EX_DEV(lp, N)));
		for (int i = 0; i < N; i++) {
			EX_EQ(ia[i], (int32_t)(a[i] < 0 ? 0u - (uint32_t)a[i] : (uint32_t)a[i]), "abs(%d)", a[i]);
			EX_EQ(ip[i], ipow32(a[i], e[i]), "%d ** %d", a[i], e[i]);
			EX_EQ(fl[i], a[i], "floor + ceil - identity on %d", a[i]);
			EX_NEAR(ex[i], sqrt(fabs((double)(float)a[i])) + 1.0, 2e-6, "sqrt(abs(f32(%d))) + 1", a[i]);
			EX_EQ(lp[i], (int64_t)((uint64_t)(int64_t)a[i] * (uint64_t)(int64_t)a[i] * (uint64_t)(int64_t)a[i]),
			      "i64(%d) ** 3 (wraps)", a[i]);
		}
	}
	return ex_done("mathfns");
}
