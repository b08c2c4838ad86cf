/* Driver of fns.pk: see there. */
#include "exec_util.h"
#include "fns.h"

static double gelu(double x)
{
	float c = (float)sqrt(2.0 / 3.14159265358979323846);
	return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
}

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "fns");
	su_rng r = su_rng_new(37);
	int64_t n = 300;
	float x[300], b[128], o[300], q[300];
	for (int i = 0; i < n; i++)
		x[i] = su_uniform(&r, -3, 3);
	for (int i = 0; i < 128; i++)
		b[i] = su_uniform(&r, -1, 1);
	ex_poison(o, sizeof o);
	EX_OK(act(ex_stream(), EX_DEV(x, n), EX_DEV(b, 128), EX_DEV(o, n), EX_DEV(q, n), n));
	for (int i = 0; i < n; i++) {
		EX_NEAR(o[i], gelu((double)x[i] + b[i % 128]), 1e-5, "bias_gelu %d", i);
		EX_SAME(q[i], (float)clampd(x[i], -0.25, 0.5), "clamp %d", i);
	}
	float y[128], p[128];
	for (int i = 0; i < 128; i++)
		y[i] = su_uniform(&r, -1.5f, 1.5f);
	EX_OK(again(ex_stream(), EX_DEV(y, 128), EX_DEV(p, 128)));
	for (int i = 0; i < 128; i++)
		EX_NEAR(p[i], clampd(gelu(y[i]) * 2.0, -1, 1) + (double)y[i] * y[i] * y[i], 1e-5, "again %d", i);
	return ex_done("fns");
}
