/* Driver of constants.pk: see there. */
#include <float.h>

#include "exec_util.h"
#include "constants.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "constants");
	float f[8];
	uint16_t h[2], b[2];
	double d[2];
	int32_t i[2], k[2];
	int64_t l[2];
	uint32_t u[2];
	uint64_t w[1];
	EX_OK(limits(ex_stream(), EX_DEV(f, 8), EX_DEV(h, 2), EX_DEV(b, 2), EX_DEV(d, 2), EX_DEV(i, 2), EX_DEV(l, 2),
	             EX_DEV(u, 2), EX_DEV(w, 1), EX_DEV(k, 2)));
	EX_SAME(f[0], FLT_MAX, "finfo(f32).max");
	EX_SAME(f[1], -FLT_MAX, "finfo(f32).min");
	EX_SAME(f[2], FLT_EPSILON, "finfo(f32).eps");
	EX_SAME(f[3], FLT_MIN, "finfo(f32).tiny");
	EX_SAME(f[4], (float)3.14159265358979323846, "pi");
	EX_SAME(f[5], (float)2.71828182845904523536, "exp(1.0)");
	EX_NEAR(f[6], 0.5f, 1e-7, "cos(pi / 4) ** 2");
	EX_NEAR(f[7], 7.0f, 1e-6, "log2(BC)");
	EX_EQU(h[0], 0x7bffu, "finfo(f16).max (65504)");
	EX_EQU(h[1], 0x1400u, "finfo(f16).eps (2^-10)");
	EX_EQU(b[0], 0x7f7fu, "finfo(bf16).max");
	EX_EQU(b[1], 0x0080u, "finfo(bf16).tiny (2^-126)");
	EX_SAME(d[0], DBL_EPSILON, "finfo(f64).eps");
	EX_SAME(d[1], -DBL_MAX, "finfo(f64).min");
	EX_EQ(i[0], INT32_MAX, "iinfo(i32).max");
	EX_EQ(i[1], INT32_MIN, "iinfo(i32).min");
	EX_EQ(l[0], INT64_MAX, "iinfo(i64).max");
	EX_EQ(l[1], INT64_MIN, "iinfo(i64).min");
	EX_EQU(u[0], UINT32_MAX, "iinfo(u32).max");
	EX_EQU(u[1], 0, "iinfo(u32).min");
	EX_EQU(w[0], UINT64_MAX, "iinfo(u64).max");
	EX_EQ(k[0], 128, "next_power_of_2(100)");
	EX_EQ(k[1], 256, "next_power_of_2(129)");

	su_rng r = su_rng_new(7);
	for (int64_t n = 1; n <= 128; n += 37) {
		int64_t rows = 5;
		float x[5 * 128], o[5 * 128];
		for (int64_t j = 0; j < rows * n; j++)
			x[j] = su_uniform(&r, -4, 4);
		ex_poison(o, sizeof o);
		EX_OK(masked_softmax(ex_stream(), EX_DEV(x, rows * n), EX_DEV(o, rows * n), rows, n));
		for (int64_t row = 0; row < rows; row++) {
			double m = -INFINITY, s = 0;
			for (int64_t j = 0; j < n; j++)
				m = fmax(m, x[row * n + j]);
			for (int64_t j = 0; j < n; j++)
				s += exp(x[row * n + j] - m);
			for (int64_t j = 0; j < n; j++)
				EX_NEAR(o[row * n + j], exp(x[row * n + j] - m) / s, 1e-5, "masked_softmax n=%lld (%lld, %lld)",
				        (long long)n, (long long)row, (long long)j);
		}
	}
	return ex_done("constants");
}
