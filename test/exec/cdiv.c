/* Driver of cdiv.pk: see there. */
#include "exec_util.h"
#include "cdiv.h"

enum { N = 64 };

/* The exact ceiling of a / b (C division truncates: add 1 when the
 * quotient is positive and inexact). */
static int64_t ceil_div(int64_t a, int64_t b)
{
	int64_t q = a / b, r = a % b;
	return q + (r != 0 && (r > 0) == (b > 0));
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "cdiv");
	su_rng r = su_rng_new(43);
	int32_t a[N], b[N], q[N], c32[2];
	int64_t a64[N], b64[N], q64[N], k64[N], m64[N], c64[7];
	uint32_t ua[N], ub[N], uq[N], cu[1];
	for (int i = 0; i < N; i++) {
		a[i] = (int32_t)su_int(&r, -1000, 1000);
		do
			b[i] = (int32_t)su_int(&r, -40, 40);
		while (b[i] == 0);
		a64[i] = (int64_t)su_next(&r); /* the whole range */
		do
			b64[i] = (int64_t)su_int(&r, -100000, 100000);
		while (b64[i] == 0);
		ua[i] = (uint32_t)su_next(&r);
		ub[i] = (uint32_t)su_int(&r, 1, 100000);
	}
	/* The ends of the range, every sign (not INT_MIN / -1: it wraps). */
	const int32_t e32[][2] = {{INT32_MAX, 2}, {INT32_MAX, -2}, {INT32_MIN, 2}, {INT32_MIN, -2}, {INT32_MAX, INT32_MAX},
	                          {INT32_MIN, INT32_MAX}, {INT32_MAX, INT32_MIN}, {INT32_MIN + 1, -1}, {INT32_MAX, 1024},
	                          {-7, 2}, {7, -2}, {-7, -2}, {7, 2}, {0, -3}};
	const int64_t e64[][2] = {{INT64_MAX, 1024}, {INT64_MAX, -1024}, {INT64_MIN, 1024}, {INT64_MIN, -1024},
	                          {INT64_MAX, INT64_MAX}, {INT64_MIN, INT64_MAX}, {INT64_MIN + 1, -1}, {INT64_MAX, 3},
	                          {-7, 2}, {7, -2}, {-7, -2}, {7, 2}, {0, -3}};
	for (size_t i = 0; i < sizeof e32 / sizeof *e32; i++)
		a[i] = e32[i][0], b[i] = e32[i][1];
	for (size_t i = 0; i < sizeof e64 / sizeof *e64; i++)
		a64[i] = e64[i][0], b64[i] = e64[i][1];
	a64[20] = INT64_MIN + 1;
	ua[0] = UINT32_MAX, ub[0] = 2;
	ua[1] = UINT32_MAX, ub[1] = UINT32_MAX;
	ua[2] = UINT32_MAX - 1, ub[2] = UINT32_MAX;
	EX_OK(cd(ex_stream(), EX_DEV(a, N), EX_DEV(b, N), EX_DEV(q, N), EX_DEV(a64, N), EX_DEV(b64, N), EX_DEV(q64, N),
	         EX_DEV(k64, N), EX_DEV(m64, N), EX_DEV(ua, N), EX_DEV(ub, N), EX_DEV(uq, N), EX_DEV(c64, 7),
	         EX_DEV(c32, 2), EX_DEV(cu, 1)));
	for (int i = 0; i < N; i++) {
		EX_EQ(q[i], ceil_div(a[i], b[i]), "cdiv(i32 %d, %d)", a[i], b[i]);
		EX_EQ(q64[i], ceil_div(a64[i], b64[i]), "cdiv(i64 %lld, %lld)", (long long)a64[i], (long long)b64[i]);
		EX_EQ(k64[i], ceil_div(a64[i], 1024), "cdiv(i64 %lld, 1024)", (long long)a64[i]);
		EX_EQ(m64[i], ceil_div(a64[i], -1024), "cdiv(i64 %lld, -1024)", (long long)a64[i]);
		EX_EQU(uq[i], ua[i] / ub[i] + (ua[i] % ub[i] != 0), "cdiv(u32 %u, %u)", ua[i], ub[i]);
	}
	/* The constants equal the run-time results. */
	EX_EQ(c64[0], ceil_div(INT64_MAX, 1024), "const cdiv(i64 max, 1024)");
	EX_EQ(c64[0], k64[0], "const and run-time cdiv(i64 max, 1024)");
	EX_EQ(c64[1], ceil_div(INT64_MIN, 1024), "const cdiv(i64 min, 1024)");
	EX_EQ(c64[2], ceil_div(INT64_MAX, 1024), "const cdiv(9223372036854775807, 1024)");
	EX_EQ(c64[3], -3, "const cdiv(-7, 2)");
	EX_EQ(c64[4], -3, "const cdiv(7, -2)");
	EX_EQ(c64[5], 4, "const cdiv(-7, -2)");
	EX_EQ(c64[6], 3, "const cdiv(7, 3)");
	EX_EQ(c32[0], ceil_div(INT32_MAX, 2), "const cdiv(i32 max, 2)");
	EX_EQ(c32[1], ceil_div(INT32_MIN, 2), "const cdiv(i32 min, 2)");
	EX_EQU(cu[0], UINT32_MAX / 2 + 1, "const cdiv(u32 max, 2)");
	return ex_done("cdiv");
}
