/* Driver of casts.pk: see there. */
#include "exec_util.h"
#include "casts.h"

enum { N = 64 };

static float f_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Python's float modulo (CPython float_rem) in double, then rounded. */
static float py_fmod(float a, float b)
{
	double m = fmod(a, b);
	if (m != 0) {
		if ((b < 0) != (m < 0))
			m += b;
	} else {
		m = copysign(0.0, b);
	}
	return (float)m;
}

static int32_t py_mod(int32_t a, int32_t b)
{
	int32_t m = a % b;
	if (m != 0 && ((m < 0) != (b < 0)))
		m += b;
	return m;
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "casts");
	su_rng r = su_rng_new(77);

	/* ---- to_float ---- */
	{
		int32_t i[N];
		int64_t l[N];
		uint32_t u[N];
		uint8_t b[N];
		float fi[N], fl[N], fu[N], fb[N];
		pk_f16 hi[N];
		double di[N];
		for (int k = 0; k < N; k++) {
			i[k] = (int32_t)su_next(&r);
			l[k] = (int64_t)su_next(&r) >> (k % 40);
			u[k] = (uint32_t)su_next(&r);
			b[k] = (uint8_t)su_next(&r);
		}
		i[0] = 16777217;  /* a tie: rounds to 16777216 */
		i[1] = 16777219;  /* a tie: rounds up to 16777220 */
		i[2] = 70000;     /* overflows f16: inf */
		i[3] = -65519;    /* rounds to -65504 in f16 */
		i[4] = 2049;      /* an f16 tie: 2048 */
		i[5] = 2051;      /* an f16 tie: 2052 */
		i[6] = INT32_MIN;
		u[0] = UINT32_MAX;
		l[0] = INT64_MIN;
		l[1] = 9007199254740993LL; /* 2^53 + 1: f64 tie */
		EX_OK(to_float(ex_stream(), EX_DEV(i, N), EX_DEV(l, N), EX_DEV(u, N), EX_DEV(b, N), EX_DEV(fi, N),
		               EX_DEV(fl, N), EX_DEV(fu, N), EX_DEV(fb, N), EX_DEV(hi, N), EX_DEV(di, N)));
		for (int k = 0; k < N; k++) {
			EX_SAME(fi[k], (float)i[k], "f32(i32 %d)", i[k]);
			EX_SAME(fl[k], (float)l[k], "f32(i64 %lld)", (long long)l[k]);
			EX_SAME(fu[k], (float)u[k], "f32(u32 %u)", u[k]);
			EX_SAME(fb[k], (float)b[k], "f32(u8 %u)", b[k]);
			/* i32 -> f16: round to nearest even, directly from the integer */
			EX_EQ(hi[k], su_f32_to_f16((float)i[k]) , "f16(i32 %d)", i[k]);
			EX_SAME(di[k], (double)l[k], "f64(i64 %lld)", (long long)l[k]);
		}
	}

	/* ---- narrow: f32 -> f16 / bf16 ---- */
	{
		float x[N], back[N], df[N];
		double d[N];
		pk_f16 h[N];
		pk_bf16 bf[N];
		static const uint32_t special[] = {
			0x3f801000u, /* 1 + 2^-11: an f16 tie, to even (1.0) */
			0x3f803000u, /* 1 + 3*2^-11: an f16 tie, up */
			0x3f808000u, /* 1 + 2^-8: a bf16 tie, to even */
			0x3f818000u, /* 1 + 3*2^-8: a bf16 tie, up */
			0x33800000u, /* 2^-24: the smallest f16 subnormal */
			0x33000000u, /* 2^-25: a tie with 0, to even (0) */
			0x33400000u, /* 1.5 * 2^-25: rounds up to 2^-24 */
			0x387fc000u, /* just below the smallest f16 normal */
			0x477fe000u, /* 65504: the largest f16 */
			0x477ff000u, /* 65520: rounds to inf */
			0x477fefffu, /* just below 65520: 65504 */
			0x7f800000u, /* inf */
			0xff800000u, /* -inf */
			0x7fc00000u, /* NaN */
			0x80000000u, /* -0 */
			0x7f7fffffu, /* FLT_MAX: f16 inf, bf16 inf (rounds up) */
			0x00000001u, /* the smallest f32 subnormal */
		};
		int ns = (int)(sizeof special / sizeof special[0]);
		for (int k = 0; k < N; k++) {
			x[k] = k < ns ? f_of(special[k]) : su_nonzero(&r, -3, 3) * ldexpf(1.0f, (int)su_int(&r, -30, 18));
			d[k] = su_uniform_d(&r, -1e6, 1e6);
		}
		d[0] = 1.0 + ldexp(1.0, -24); /* an f32 tie: to even */
		d[1] = 1e300;                 /* overflows f32: inf */
		EX_OK(narrow(ex_stream(), EX_DEV(x, N), EX_DEV(h, N), EX_DEV(bf, N), EX_DEV(back, N), EX_DEV(d, N),
		             EX_DEV(df, N)));
		for (int k = 0; k < N; k++) {
			uint16_t wh = su_f32_to_f16(x[k]), wb = su_f32_to_bf16(x[k]);
			if (isnan(x[k])) {
				EX_EQ((h[k] & 0x7c00) == 0x7c00 && (h[k] & 0x3ff) != 0, 1, "f16(NaN) is a NaN");
				EX_EQ((bf[k] & 0x7f80) == 0x7f80 && (bf[k] & 0x7f) != 0, 1, "bf16(NaN) is a NaN");
				EX_SAME(back[k], NAN, "f32(f16(NaN))");
			} else {
				EX_EQ(h[k], wh, "f16(%a)", x[k]);
				EX_EQ(bf[k], wb, "bf16(%a)", x[k]);
				EX_SAME(back[k], su_f16_to_f32(wh), "f32(f16(%a))", x[k]);
			}
			EX_SAME(df[k], (float)d[k], "f32(f64 %a)", d[k]);
		}
	}

	/* ---- to_int ---- */
	{
		float x[N], fb[N];
		int32_t i[N];
		int64_t l[N];
		uint8_t u8o[N];
		bool bo[N];
		for (int k = 0; k < N; k++)
			x[k] = su_uniform(&r, -200, 200);
		x[0] = -2.7f;
		x[1] = 2.7f;
		x[2] = 0.0f;
		x[3] = -0.0f;
		x[4] = 0.5f;
		x[5] = -0.999f;
		x[6] = NAN; /* bool(NaN) is true; the integer casts are unspecified (not checked) */
		x[7] = 255.9f;
		EX_OK(to_int(ex_stream(), EX_DEV(x, N), EX_DEV(i, N), EX_DEV(l, N), EX_DEV(u8o, N), EX_DEV(bo, N),
		             EX_DEV(fb, N)));
		for (int k = 0; k < N; k++) {
			EX_EQ(bo[k], x[k] != 0.0f, "bool(%g)", x[k]);
			EX_SAME(fb[k], (float)(x[k] != 0.0f) + (float)(x[k] > 0.0f), "f32(bool) for %g", x[k]);
			if (isnan(x[k]))
				continue;
			EX_EQ(i[k], (int32_t)x[k], "i32(%g)", x[k]);
			EX_EQ(l[k], (int64_t)(x[k] * 1000.0f), "i64(%g * 1000)", x[k]);
			EX_EQ(u8o[k], (uint8_t)fabsf(x[k]), "u8(abs(%g))", x[k]);
		}
	}

	/* ---- int_casts ---- */
	{
		int32_t x[N], uz[N];
		uint8_t u8o[N], ub[N];
		int8_t i8o[N], b[N];
		uint32_t u32o[N];
		int64_t i64o[N], bz[N];
		uint64_t u64o[N];
		int16_t i16o[N];
		for (int k = 0; k < N; k++) {
			x[k] = (int32_t)su_next(&r);
			b[k] = (int8_t)su_next(&r);
			ub[k] = (uint8_t)su_next(&r);
		}
		x[0] = 300;
		x[1] = -1;
		x[2] = 200;
		x[3] = INT32_MIN;
		x[4] = 40000;
		b[0] = -128;
		ub[0] = 255;
		EX_OK(int_casts(ex_stream(), EX_DEV(x, N), EX_DEV(u8o, N), EX_DEV(i8o, N), EX_DEV(u32o, N),
		                EX_DEV(i64o, N), EX_DEV(u64o, N), EX_DEV(i16o, N), EX_DEV(b, N), EX_DEV(bz, N),
		                EX_DEV(ub, N), EX_DEV(uz, N)));
		for (int k = 0; k < N; k++) {
			EX_EQ(u8o[k], (uint8_t)x[k], "u8(%d)", x[k]);
			EX_EQ(i8o[k], (int8_t)x[k], "i8(%d)", x[k]);
			EX_EQU(u32o[k], (uint32_t)x[k], "u32(%d)", x[k]);
			EX_EQ(i64o[k], (int64_t)x[k], "i64(%d)", x[k]);
			EX_EQU(u64o[k], (uint64_t)(int64_t)x[k], "u64(%d)", x[k]);
			EX_EQ(i16o[k], (int16_t)x[k], "i16(%d)", x[k]);
			EX_EQ(bz[k], b[k], "i64(i8 %d)", b[k]);
			EX_EQ(uz[k], ub[k], "i32(u8 %u)", ub[k]);
		}
	}

	/* ---- joins ---- */
	{
		uint8_t a[N], ta[N];
		int8_t b[N];
		uint32_t c[N];
		int32_t d[N], wb[N];
		pk_f16 h[N], dh[N];
		pk_bf16 g[N];
		uint16_t w[N];
		bool t[N];
		int16_t ab[N];
		int64_t cd[N];
		float hg[N];
		for (int k = 0; k < N; k++) {
			a[k] = (uint8_t)su_next(&r);
			b[k] = (int8_t)su_next(&r);
			c[k] = (uint32_t)su_next(&r);
			d[k] = (int32_t)su_int(&r, -3000, 3000);
			h[k] = su_f32_to_f16(su_nonzero(&r, -100, 100));
			g[k] = su_f32_to_bf16(su_nonzero(&r, -100, 100));
			w[k] = (uint16_t)su_next(&r);
			t[k] = su_next(&r) & 1;
		}
		a[0] = 255;
		b[0] = 127;
		a[1] = 250;
		t[1] = true; /* bool + u8 wraps in u8 when a is 255 */
		a[2] = 255;
		t[2] = true;
		EX_OK(joins(ex_stream(), EX_DEV(a, N), EX_DEV(b, N), EX_DEV(c, N), EX_DEV(d, N), EX_DEV(h, N),
		            EX_DEV(g, N), EX_DEV(w, N), EX_DEV(t, N), EX_DEV(ab, N), EX_DEV(cd, N), EX_DEV(dh, N),
		            EX_DEV(hg, N), EX_DEV(wb, N), EX_DEV(ta, N)));
		for (int k = 0; k < N; k++) {
			EX_EQ(ab[k], a[k] + b[k], "u8 %u + i8 %d (i16)", a[k], b[k]);
			EX_EQ(cd[k], (int64_t)c[k] + d[k], "u32 %u + i32 %d (i64)", c[k], d[k]);
			/* both operands convert to the join f16 first (d rounds), then add */
			EX_EQ(dh[k], su_f32_to_f16(su_round_f16((float)d[k]) + su_f16_to_f32(h[k])), "i32 %d + f16 (f16)", d[k]);
			EX_SAME(hg[k], su_f16_to_f32(h[k]) + su_bf16_to_f32(g[k]), "f16 + bf16 (f32)");
			EX_EQ(wb[k], (int32_t)w[k] * b[k], "u16 %u * i8 %d (i32)", w[k], b[k]);
			EX_EQ(ta[k], (uint8_t)(t[k] + a[k]), "bool + u8 (u8)");
		}
	}

	/* ---- weak ---- */
	{
		uint8_t a[N], a1[N];
		pk_f16 h[N], h2[N], dh[N];
		int64_t l[N], l1[N];
		int32_t d[N];
		int16_t lit[N];
		float wf[N];
		for (int k = 0; k < N; k++) {
			a[k] = (uint8_t)su_next(&r);
			h[k] = su_f32_to_f16(su_nonzero(&r, -40000, 40000));
			l[k] = (int64_t)su_next(&r);
			d[k] = (int32_t)su_int(&r, -100, 100);
		}
		a[0] = 255;
		l[0] = INT64_MAX;
		h[0] = su_f32_to_f16(40000.0f); /* * 2.0 overflows f16: inf */
		EX_OK(weak(ex_stream(), EX_DEV(a, N), EX_DEV(h, N), EX_DEV(l, N), EX_DEV(d, N), EX_DEV(a1, N),
		           EX_DEV(h2, N), EX_DEV(l1, N), EX_DEV(dh, N), EX_DEV(lit, N), EX_DEV(wf, N)));
		for (int k = 0; k < N; k++) {
			EX_EQ(a1[k], (uint8_t)(a[k] + 1), "u8 %u + 1 stays u8", a[k]);
			EX_EQ(h2[k], su_f32_to_f16(su_f16_to_f32(h[k]) * 2.0f), "f16 * 2.0 stays f16");
			EX_EQ(l1[k], (int64_t)((uint64_t)l[k] + 1), "i64 + 1 stays i64");
			/* d + 1.5 is a weak float, rounded to f16 when it meets h */
			float s = su_round_f16((float)d[k] + 1.5f);
			EX_EQ(dh[k], su_f32_to_f16(s * su_f16_to_f32(h[k])), "(i32 + 1.5) * f16 is f16");
			EX_EQ(lit[k], 7, "a literal stores into i16");
			EX_SAME(wf[k], (float)d[k] + 0.25f, "i32 + 0.25 is f32");
		}
	}

	/* ---- divmod ---- */
	{
		int32_t a[N], b[N], rr[N], wrap[N], neg[N];
		float fa[N], fb[N], q[N], fr[N];
		for (int k = 0; k < N; k++) {
			a[k] = (int32_t)su_int(&r, -1000, 1000);
			do
				b[k] = (int32_t)su_int(&r, -50, 50);
			while (b[k] == 0);
			fa[k] = su_nonzero(&r, -100, 100);
			fb[k] = su_nonzero(&r, -10, 10);
		}
		a[0] = -7, b[0] = 2;
		a[1] = 7, b[1] = -2;
		a[2] = 7, b[2] = 2;
		a[3] = INT32_MIN, b[3] = 3;
		fa[0] = -7.5f, fb[0] = 2.0f;
		fa[1] = 7.5f, fb[1] = -2.0f;
		fa[2] = 6.0f, fb[2] = -3.0f; /* a zero remainder takes the divisor's sign */
		EX_OK(divmod(ex_stream(), EX_DEV(a, N), EX_DEV(b, N), EX_DEV(fa, N), EX_DEV(fb, N), EX_DEV(q, N),
		             EX_DEV(rr, N), EX_DEV(fr, N), EX_DEV(wrap, N), EX_DEV(neg, N)));
		for (int k = 0; k < N; k++) {
			EX_SAME(q[k], (float)a[k] / (float)b[k], "%d / %d", a[k], b[k]);
			EX_EQ(rr[k], py_mod(a[k], b[k]), "%d %% %d", a[k], b[k]);
			float want = py_fmod(fa[k], fb[k]);
			EX_SAME(fr[k], want, "%g %% %g", fa[k], fb[k]);
			EX_EQ(signbit(fr[k]) != 0, signbit(want) != 0, "sign of %g %% %g", fa[k], fb[k]);
			EX_EQ(wrap[k], INT32_MAX, "a * 2^32 wraps to 0 (a = %d)", a[k]);
			EX_EQ(neg[k], (int32_t)(0u - (uint32_t)a[k]), "-(%d)", a[k]);
		}
	}

	/* ---- shifts ---- */
	{
		int32_t x[N], s[N], l[N], rr[N], bits[N];
		uint32_t u[N], us[N], ul[N], ur[N];
		for (int k = 0; k < N; k++) {
			x[k] = (int32_t)su_next(&r);
			s[k] = (int32_t)su_int(&r, -3, 40);
			u[k] = (uint32_t)su_next(&r);
			us[k] = (uint32_t)su_int(&r, 0, 40);
		}
		x[0] = -8, s[0] = 1;
		x[1] = -8, s[1] = 40;
		x[2] = 8, s[2] = 40;
		x[3] = 1, s[3] = -1;
		u[0] = 0x80000000u, us[0] = 31;
		EX_OK(shifts(ex_stream(), EX_DEV(x, N), EX_DEV(s, N), EX_DEV(u, N), EX_DEV(us, N), EX_DEV(l, N),
		             EX_DEV(rr, N), EX_DEV(ul, N), EX_DEV(ur, N), EX_DEV(bits, N)));
		for (int k = 0; k < N; k++) {
			int32_t sk = s[k];
			int inrange = sk >= 0 && sk < 32;
			EX_EQ(l[k], inrange ? (int32_t)((uint32_t)x[k] << sk) : 0, "%d << %d", x[k], sk);
			EX_EQ(rr[k], inrange ? x[k] >> sk : (x[k] < 0 ? -1 : 0), "%d >> %d", x[k], sk);
			EX_EQU(ul[k], us[k] < 32 ? u[k] << us[k] : 0, "%u << %u", u[k], us[k]);
			EX_EQU(ur[k], us[k] < 32 ? u[k] >> us[k] : 0, "%u >> %u", u[k], us[k]);
			EX_EQ(bits[k], (int32_t)((uint32_t)(x[k] & 0xFF) | ((uint32_t)(x[k] ^ s[k]) + (uint32_t)~s[k])),
			      "bit ops on %d, %d", x[k], s[k]);
		}
	}

	/* ---- half_math ---- */
	{
		pk_f16 a[N], b[N], s[N], p[N], e[N];
		pk_bf16 c[N], d[N], cs[N], cp[N];
		for (int k = 0; k < N; k++) {
			a[k] = su_f32_to_f16(su_nonzero(&r, -300, 300));
			b[k] = su_f32_to_f16(su_nonzero(&r, -300, 300));
			c[k] = su_f32_to_bf16(su_nonzero(&r, -300, 300));
			d[k] = su_f32_to_bf16(su_nonzero(&r, -300, 300));
		}
		EX_OK(half_math(ex_stream(), EX_DEV(a, N), EX_DEV(b, N), EX_DEV(c, N), EX_DEV(d, N), EX_DEV(s, N),
		                EX_DEV(p, N), EX_DEV(e, N), EX_DEV(cs, N), EX_DEV(cp, N)));
		for (int k = 0; k < N; k++) {
			float fa = su_f16_to_f32(a[k]), fb = su_f16_to_f32(b[k]);
			float fc = su_bf16_to_f32(c[k]), fd = su_bf16_to_f32(d[k]);
			EX_EQ(s[k], su_f32_to_f16(fa + fb), "f16 %g + %g", fa, fb);
			EX_EQ(p[k], su_f32_to_f16(fa * fb), "f16 %g * %g", fa, fb);
			EX_EQ(e[k], su_f32_to_f16(su_round_f16(fa + fb) * fa), "f16 (%g + %g) * %g", fa, fb, fa);
			EX_EQ(cs[k], su_f32_to_bf16(fc + fd), "bf16 %g + %g", fc, fd);
			EX_EQ(cp[k], su_f32_to_bf16(su_round_bf16(fc * fd) - fc), "bf16 %g * %g - %g", fc, fd, fc);
		}
	}
	return ex_done("casts");
}
