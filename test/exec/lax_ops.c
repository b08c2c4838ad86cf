/* Driver of lax_ops.pk: see there. */
#include "exec_util.h"
#include "lax_ops.h"

enum { N = 64 };

static int32_t py_div(int32_t a, int32_t b)
{
	int64_t d = (int64_t)a / b, m = (int64_t)a % b;
	return (int32_t)(m != 0 && ((m < 0) != (b < 0)) ? d - 1 : d);
}

static void check_divs(su_rng *r)
{
	int32_t a[N], b[N], q[N], rr[N], fq[N], fr[N], c[4];
	uint32_t ua[N], ub[N], uq[N], ur[N];
	float x[N], y[N], xq[N], xr[N];
	for (int i = 0; i < N; i++) {
		a[i] = (int32_t)su_int(r, -1000, 1000);
		do
			b[i] = (int32_t)su_int(r, -40, 40);
		while (b[i] == 0);
		ua[i] = (uint32_t)su_next(r);
		ub[i] = (uint32_t)su_int(r, 1, 100000);
		x[i] = su_nonzero(r, -100, 100);
		y[i] = su_nonzero(r, -10, 10);
	}
	a[0] = -7, b[0] = 2;
	a[1] = 7, b[1] = -2;
	a[2] = INT32_MIN, b[2] = -1; /* wraps to itself, remainder 0 */
	a[3] = 5, b[3] = 0;          /* XLA's values: -1 and 5 */
	ub[0] = 0;                   /* all ones and ua */
	x[0] = -7.5f, y[0] = 2.0f;
	x[1] = 1.0f, y[1] = 0.1f;
	EX_OK(divs(ex_stream(), EX_DEV(a, N), EX_DEV(b, N), EX_DEV(q, N), EX_DEV(rr, N), EX_DEV(fq, N), EX_DEV(fr, N),
	           EX_DEV(ua, N), EX_DEV(ub, N), EX_DEV(uq, N), EX_DEV(ur, N), EX_DEV(x, N), EX_DEV(y, N), EX_DEV(xq, N),
	           EX_DEV(xr, N), EX_DEV(c, 4)));
	for (int i = 0; i < N; i++) {
		int32_t wq, wr;
		if (b[i] == 0)
			wq = -1, wr = a[i];
		else if (b[i] == -1)
			wq = (int32_t)(0u - (uint32_t)a[i]), wr = 0;
		else
			wq = a[i] / b[i], wr = a[i] % b[i];
		EX_EQ(q[i], wq, "div(%d, %d)", a[i], b[i]);
		EX_EQ(rr[i], wr, "rem(%d, %d)", a[i], b[i]);
		if (b[i] != 0 && b[i] != -1) {
			EX_EQ(fq[i], py_div(a[i], b[i]), "%d // %d", a[i], b[i]);
			EX_EQ(fr[i], a[i] - py_div(a[i], b[i]) * b[i], "%d %% %d", a[i], b[i]);
		}
		EX_EQU(uq[i], ub[i] ? ua[i] / ub[i] : UINT32_MAX, "div(u32 %u, %u)", ua[i], ub[i]);
		EX_EQU(ur[i], ub[i] ? ua[i] % ub[i] : ua[i], "rem(u32 %u, %u)", ua[i], ub[i]);
		EX_SAME(xq[i], x[i] / y[i], "div(%g, %g)", x[i], y[i]);
		EX_SAME(xr[i], fmodf(x[i], y[i]), "rem(%g, %g)", x[i], y[i]);
	}
	EX_EQ(c[0], -3, "div(-7, 2)");
	EX_EQ(c[1], -1, "rem(-7, 2)");
	EX_EQ(c[2], -3, "div(7, -2)");
	EX_EQ(c[3], 1, "rem(7, -2)");
}

static void check_logs(su_rng *r)
{
	float x[N], o[N], c[2];
	uint16_t h[N], oh[N];
	for (int i = 0; i < N; i++) {
		x[i] = su_uniform(r, 1e-3f, 1000.0f);
		h[i] = su_f32_to_f16(su_uniform(r, 0.01f, 100.0f));
	}
	x[0] = 8.0f, x[1] = 0.0f, x[2] = 1.0f;
	EX_OK(logs(ex_stream(), EX_DEV(x, N), EX_DEV(h, N), EX_DEV(o, N), EX_DEV(oh, N), EX_DEV(c, 2)));
	for (int i = 0; i < N; i++) {
		EX_NEAR(o[i], log2(x[i]), 2e-7 * (1 + fabs(log2(x[i]))), "log2(%g)", x[i]);
		double hx = su_f16_to_f32(h[i]);
		EX_NEAR(su_f16_to_f32(oh[i]), log2(hx), 2e-3 * (1 + fabs(log2(hx))), "log2(f16 %g)", hx);
	}
	EX_SAME(o[0], 3.0f, "log2(8.0)");
	EX_SAME(o[2], 0.0f, "log2(1.0)");
	EX_EQ(isinf(o[1]) && o[1] < 0, 1, "log2(0.0) is -inf");
	EX_SAME(c[0], 3.0f, "const log2(8.0)");
	EX_SAME(c[1], 10.0f, "const log2(1024)");
}

static void check_bools(su_rng *r)
{
	float x[8 * 32];
	bool al[8], an[8], nz[8], ak[8], tot[2];
	for (int i = 0; i < 8 * 32; i++)
		x[i] = su_uniform(r, 0.01f, 1.0f) * (su_int(r, 0, 50) == 0 ? -1.0f : 1.0f);
	for (int j = 0; j < 32; j++) {
		x[3 * 32 + j] = -1.0f; /* row 3: all negative */
		x[5 * 32 + j] = 0.0f;  /* row 5: all zero */
		x[6 * 32 + j] = 0.5f;  /* row 6: all positive */
	}
	x[5 * 32 + 7] = -0.0f;
	EX_OK(bools(ex_stream(), EX_DEV(x, 8 * 32), EX_DEV(al, 8), EX_DEV(an, 8), EX_DEV(nz, 8), EX_DEV(ak, 8),
	            EX_DEV(tot, 2)));
	for (int i = 0; i < 8; i++) {
		bool wal = true, wan = false, wnz = false;
		for (int j = 0; j < 32; j++) {
			wal &= x[i * 32 + j] > 0;
			wan |= x[i * 32 + j] > 0;
			wnz |= x[i * 32 + j] != 0;
		}
		EX_EQ(al[i], wal, "all row %d", i);
		EX_EQ(an[i], wan, "any row %d", i);
		EX_EQ(nz[i], wnz, "any(x) row %d", i);
		EX_EQ(ak[i], x[i * 32] > -1 && x[i * 32 + 1] > -1, "all keepdims row %d", i);
	}
	EX_EQ(tot[0], true, "all(x > -100)");
	EX_EQ(tot[1], false, "any(x > 100)");
}

static void check_tri(su_rng *r)
{
	float x[2 * 8 * 16], up[2 * 8 * 16], lo[2 * 8 * 16], up2[2 * 8 * 16], lom[2 * 8 * 16];
	int32_t m[8 * 8];
	for (int i = 0; i < 2 * 8 * 16; i++)
		x[i] = su_nonzero(r, -1, 1);
	EX_OK(tri(ex_stream(), EX_DEV(x, 256), EX_DEV(up, 256), EX_DEV(lo, 256), EX_DEV(up2, 256), EX_DEV(lom, 256),
	          EX_DEV(m, 64)));
	for (int b = 0; b < 2; b++)
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 16; j++) {
				int k = (b * 8 + i) * 16 + j;
				EX_SAME(up[k], j >= i ? x[k] : 0.0f, "triu (%d, %d, %d)", b, i, j);
				EX_SAME(lo[k], j <= i ? x[k] : 0.0f, "tril (%d, %d, %d)", b, i, j);
				EX_SAME(up2[k], j - i >= 2 ? x[k] : 0.0f, "triu k=2 (%d, %d, %d)", b, i, j);
				EX_SAME(lom[k], j - i <= -3 ? x[k] : 0.0f, "tril k=-3 (%d, %d, %d)", b, i, j);
			}
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			EX_EQ(m[i * 8 + j], j <= i, "tril(ones) (%d, %d)", i, j);
}

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* jnp.sign: -1, 0 or 1, but a float that is neither above nor below zero
 * (either zero, NaN) is itself, bit for bit. */
static float sign_ref(float x)
{
	return x > 0 ? 1.0f : x < 0 ? -1.0f : x;
}

static void check_signs(su_rng *r)
{
	float x[N], o[N], c[3], rc[N];
	uint16_t h[N], oh[N];
	int32_t i32[N], oi[N];
	const float special[] = {-0.0f, 0.0f, NAN, -NAN, INFINITY, -INFINITY, 1e-45f, -1e-45f, 3.0f, -0.5f};
	for (int i = 0; i < N; i++) {
		x[i] = i < (int)(sizeof special / sizeof special[0]) ? special[i] : su_uniform(r, -4, 4);
		h[i] = su_f32_to_f16(x[i]);
		i32[i] = i < 3 ? i - 1 : (int32_t)su_uniform(r, -1000, 1000);
	}
	EX_OK(signs(ex_stream(), EX_DEV(x, N), EX_DEV(o, N), EX_DEV(h, N), EX_DEV(oh, N), EX_DEV(i32, N),
	            EX_DEV(oi, N), EX_DEV(c, 3), EX_DEV(rc, N)));
	for (int i = 0; i < N; i++) {
		float w = sign_ref(x[i]);
		if (isnan(x[i]))
			EX_EQ(isnan(o[i]) != 0, 1, "sign(NaN) is NaN");
		else
			EX_EQU(f32_bits(o[i]), f32_bits(w), "sign(%g)", x[i]);
		float hx = su_f16_to_f32(h[i]);
		if (!isnan(hx))
			EX_EQU(oh[i], su_f32_to_f16(sign_ref(hx)), "sign(f16 %g)", hx);
		EX_EQ(oi[i], (i32[i] > 0) - (i32[i] < 0), "sign(%d)", i32[i]);
		if (!isnan(x[i]))
			EX_EQU(f32_bits(rc[i]), f32_bits(1.0f / x[i]), "reciprocal(%g, approx = true)", x[i]);
	}
	EX_EQU(f32_bits(c[0]), 0x80000000u, "const sign(-0.0) is -0.0");
	EX_SAME(c[1], -1.0f, "const sign(-2.5)");
	EX_EQU(f32_bits(c[2]), 0u, "const sign(0.0) is +0.0");
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "lax_ops");
	su_rng r = su_rng_new(15);
	check_divs(&r);
	check_logs(&r);
	check_bools(&r);
	check_tri(&r);
	check_signs(&r);
	return ex_done("lax_ops");
}
