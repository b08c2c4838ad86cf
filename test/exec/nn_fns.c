/* Driver of nn_fns.pk: see there. */
#include <float.h>

#include "exec_util.h"
#include "nn_fns.h"

enum { N = 128 };

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
static double logaddexp_ref(double a, double b)
{
	double m = a > b ? a : b;
	return isnan(a - b) ? a + b : m + log1p(exp(-fabs(a - b)));
}

/* The next f16 after x toward 0 (x finite). */
static float f16_toward_zero(float x)
{
	pk_f16 b = su_f32_to_f16(x);
	if ((b & 0x7fff) != 0)
		b--;
	return su_f16_to_f32(b);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "nn_fns");
	su_rng r = su_rng_new(71);
	static float x[N], y[N], o[17 * N];
	static bool sb[N];
	for (int i = 0; i < N; i++) {
		x[i] = su_uniform(&r, -7, 7);
		y[i] = su_uniform(&r, -7, 7);
	}
	/* nextafter's special cases (x, y) */
	const float sp[][2] = {{0.0f, 1.0f},      {0.0f, -1.0f},     {-0.0f, 0.0f},    {0.0f, -0.0f},
	                       {1.0f, 1.0f},      {1.0f, 2.0f},      {1.0f, -2.0f},    {-1.0f, -2.0f},
	                       {-1.0f, 2.0f},     {FLT_MAX, INFINITY}, {INFINITY, 0.0f}, {-INFINITY, 0.0f},
	                       {NAN, 1.0f},       {1.0f, NAN},       {FLT_MIN, 0.0f},  {-FLT_TRUE_MIN, 1.0f},
	                       {3.5f, -0.0f},     {-2.0f, -0.0f}};
	int nsp = (int)(sizeof sp / sizeof sp[0]);
	for (int i = 0; i < nsp; i++)
		x[i] = sp[i][0], y[i] = sp[i][1];
	x[nsp] = 0.0f, y[nsp + 1] = -0.0f; /* relu of 0; signbit of -0 */
	EX_OK(nn_f32(ex_stream(), EX_DEV(x, N), EX_DEV(y, N), EX_DEV(o, 17 * N), EX_DEV(sb, N)));
	const double c = sqrt(2.0 / acos(-1.0));
	for (int i = 0; i < N; i++) {
		double v = x[i], w = y[i];
		EX_SAME(o[0 * N + i], nextafterf(x[i], y[i]), "nextafter(%g, %g)", v, w);
		EX_EQ(sb[i], signbit(y[i]) != 0, "signbit(%g)", w);
		if (i < nsp)
			continue; /* the rest only on finite random values */
		double want[17] = {
			0, copysign(v, w), logaddexp_ref(v, w), v > 0 ? v : 0, fmin(fmax(v, 0), 6),
			logaddexp_ref(v, 0), -logaddexp_ref(-v, 0), v * sigm(v), w * sigm(w),
			v * 0.5 * (1 + tanh(c * (v + 0.044715 * v * v * v))), v * (erf(v / sqrt(2.0)) + 1) / 2,
			v >= 0 ? v : 0.01 * v, v >= 0 ? v : 0.25 * v, v > 0 ? v : expm1(v), v > 0 ? v : 0.5 * expm1(v),
			v > 1 ? 1 : v < -1 ? -1 : v, logaddexp_ref(2, 0) + logaddexp_ref(v, 1)};
		for (int f = 1; f < 17; f++)
			EX_NEAR(o[f * N + i], want[f], 2e-6, "nn_f32 function %d at (%g, %g)", f, v, w);
	}
	EX_SAME(o[3 * N + nsp], 0.0f, "relu(0)");
	{
		static pk_f16 h[N], oh[4 * N];
		for (int i = 0; i < N; i++)
			h[i] = su_f32_to_f16(su_uniform(&r, -5, 5));
		EX_OK(nn_f16(ex_stream(), EX_DEV(h, N), EX_DEV(oh, 4 * N)));
		for (int i = 0; i < N; i++) {
			double v = su_f16_to_f32(h[i]);
			double want[3] = {v * 0.5 * (1 + tanh(c * (v + 0.044715 * v * v * v))), v * sigm(v),
			                  logaddexp_ref(v, 0)};
			for (int f = 0; f < 3; f++) /* a few f16 roundings of the exact result */
				EX_NEAR(su_f16_to_f32(oh[f * N + i]), want[f], 4e-3, "nn_f16 function %d at %g", f, v);
			EX_SAME(su_f16_to_f32(oh[3 * N + i]), f16_toward_zero((float)v), "nextafter(%g, 0) in f16", v);
		}
	}
	return ex_done("nn_fns");
}
