/* Driver of floordiv.pk: see there. */
#include "exec_util.h"
#include "floordiv.h"

enum { N = 64 };

static int32_t py_div(int32_t a, int32_t b)
{
	int64_t d = (int64_t)a / b, m = (int64_t)a % b;
	if (m != 0 && ((m < 0) != (b < 0)))
		d--;
	return (int32_t)d; /* INT32_MIN // -1 wraps to INT32_MIN */
}

/* CPython's float floor division (float_divmod): from the exact
 * remainder, so 1 // 0.1f is 9 where floorf(1 / 0.1f) is 10. */
static float py_fdiv(float a, float b)
{
	float m = fmodf(a, b), d = (a - m) / b;
	if (m != 0 && ((b < 0) != (m < 0)))
		d -= 1;
	if (d == 0)
		return copysignf(0, a / b);
	float f = floorf(d);
	return d - f > 0.5f ? f + 1 : f;
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "floordiv");
	su_rng r = su_rng_new(41);
	int32_t a[N], b[N], q[N], q2[N], rr[N], c[2];
	uint32_t ua[N], ub[N], uq[N];
	float f[N], g[N], fq[N];
	for (int i = 0; i < N; i++) {
		a[i] = (int32_t)su_int(&r, -1000, 1000);
		do
			b[i] = (int32_t)su_int(&r, -40, 40);
		while (b[i] == 0);
		ua[i] = (uint32_t)su_next(&r);
		ub[i] = (uint32_t)su_int(&r, 1, 100000);
		f[i] = su_nonzero(&r, -100, 100);
		g[i] = su_nonzero(&r, -10, 10);
	}
	a[0] = -7, b[0] = 2;
	a[1] = 7, b[1] = -2;
	a[2] = -7, b[2] = -2;
	a[3] = INT32_MIN, b[3] = -1; /* wraps to itself, remainder 0 */
	a[4] = INT32_MIN, b[4] = 7;
	ua[0] = UINT32_MAX, ub[0] = 2; /* unsigned: no sign */
	f[0] = -7.5f, g[0] = 2.0f;
	f[1] = 1.0f, g[1] = -3.0f;
	f[2] = 1.0f, g[2] = 0.1f; /* 9, not floor(1.0 / 0.1) = 10 (§7.2) */
	EX_OK(fd(ex_stream(), EX_DEV(a, N), EX_DEV(b, N), EX_DEV(q, N), EX_DEV(q2, N), EX_DEV(rr, N), EX_DEV(ua, N),
	         EX_DEV(ub, N), EX_DEV(uq, N), EX_DEV(f, N), EX_DEV(g, N), EX_DEV(fq, N), EX_DEV(c, 2)));
	for (int i = 0; i < N; i++) {
		int32_t want = py_div(a[i], b[i]);
		EX_EQ(q[i], want, "floordiv(%d, %d)", a[i], b[i]);
		EX_EQ(q2[i], want, "%d // %d", a[i], b[i]);
		EX_EQ((int32_t)((uint32_t)q[i] * (uint32_t)b[i] + (uint32_t)rr[i]), a[i], "%d == (%d // %d) * b + %d %% %d",
		      a[i], a[i], b[i], a[i], b[i]);
		EX_EQU(uq[i], ua[i] / ub[i], "floordiv(u32 %u, %u)", ua[i], ub[i]);
		EX_SAME(fq[i], py_fdiv(f[i], g[i]), "%g // %g", f[i], g[i]);
	}
	EX_EQ(c[0], -4, "const floordiv(-7, 2)");
	EX_EQ(c[1], -4, "const -7 // 2");
	EX_SAME(fq[2], 9.0f, "1.0 // 0.1");

	int64_t m = 20; /* 3 column blocks, the last partial */
	float x[8 * 20], o[8 * 20];
	for (int i = 0; i < 8 * m; i++)
		x[i] = su_nonzero(&r, -1, 1);
	ex_poison(o, sizeof o);
	EX_OK(walk(ex_stream(), EX_DEV(x, 8 * m), EX_DEV(o, 8 * m), m));
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < m; j++)
			EX_SAME(o[i * m + j], x[i * m + j] + (float)((j / 8) * 2 + i / 4), "walk (%d, %d)", i, j);
	return ex_done("floordiv");
}
