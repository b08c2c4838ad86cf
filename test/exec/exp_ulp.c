/* Driver of exp_ulp.pk: see there. */
#include <float.h>

#include "exec_util.h"
#include "exp_ulp.h"

enum { N = 1 << 21 };

/* |got - want| in ulps of want (the spacing of floats at |want|; below
 * FLT_MIN results may be flushed to zero; inf where want rounds to inf). */
static double ulps(float got, double want)
{
	if (isnan(want) || isinf((float)want)) /* NaN, or beyond FLT_MAX's rounding */
		return (isnan(want) ? isnan(got) : got == (float)want) ? 0.0 : INFINITY;
	if (isnan(got) || isinf(got))
		return INFINITY;
	double a = fabs(want);
	if (a < FLT_MIN)
		return fabs(got - want) <= FLT_MIN ? 0.0 : INFINITY;
	int e;
	frexp(a, &e);
	return fabs((double)got - want) / ldexp(1.0, e - 24);
}

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "exp_ulp");
	static float x[N], e[N], s[N], t[N];
	su_rng r = su_rng_new(61);
	/* Every 2048th float from -104 to 89 (both signs' bit patterns), then
	 * random ones, then the special values. */
	int n = 0;
	for (uint32_t u = 0x42d00000u; u >= 0x80000000u && n < N / 2; u -= 2048) {
		float f;
		memcpy(&f, &u, 4);
		x[n++] = f;
	}
	for (uint32_t u = 0; u <= 0x42b20000u && n < N - 16; u += 2048) {
		float f;
		memcpy(&f, &u, 4);
		x[n++] = f;
	}
	const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, 88.72283172607421875f, 88.72283935546875f,
	                         -87.33654f, -103.972f, -104.0f, 89.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f};
	for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
		x[n++] = special[i];
	while (n < N)
		x[n++] = su_uniform(&r, -104.0f, 89.0f);
	EX_OK(exp_ulp(ex_stream(), EX_DEV(x, N), EX_DEV(e, N), EX_DEV(s, N), EX_DEV(t, N), N));
	double worst[3] = {0, 0, 0};
	float at[3] = {0, 0, 0};
	for (int i = 0; i < N; i++) {
		double v = x[i];
		double want[3] = {exp(v), sigm(v), tanh(v)};
		float got[3] = {e[i], s[i], t[i]};
		for (int f = 0; f < 3; f++) {
			double u = ulps(got[f], want[f]);
			if (u > worst[f] || isnan(u))
				worst[f] = u, at[f] = x[i];
		}
	}
	/* §4.1: exp within 3 ulp; sigmoid and tanh (exp, an add and a
	 * division) within a few. */
	const char *name[3] = {"exp", "sigmoid", "tanh"};
	const double bound[3] = {3.0, 5.0, 5.0};
	for (int f = 0; f < 3; f++) {
		printf("exp_ulp: %s within %.2f ulp (worst at %.9g)\n", name[f], worst[f], at[f]);
		EX_NEAR(worst[f] <= bound[f], 1, 0.0, "%s: %.2f ulp at %.9g, more than %g", name[f], worst[f], at[f],
		        bound[f]);
	}
	return ex_done("exp_ulp");
}
