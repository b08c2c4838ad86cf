/* Driver of bit_ops.pk: see there. */
#include "exec_util.h"
#include "bit_ops.h"

#include <string.h>

enum { N = 64 };

static int popc(uint64_t u) { return __builtin_popcountll(u); }
static int clzw(uint64_t u, int bits) { return u ? __builtin_clzll(u) - (64 - bits) : bits; }

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "bit_ops");
	su_rng r = su_rng_new(7);
	{
		static int32_t a[N], s[N], o[3 * N], k[6];
		static int8_t b[N], ob[2 * N];
		static uint16_t c[N], oc[2 * N];
		static int64_t d[N], od[3 * N];
		for (int i = 0; i < N; i++) {
			a[i] = (int32_t)su_next(&r);
			s[i] = (int32_t)su_int(&r, 0, 31);
			b[i] = (int8_t)su_next(&r);
			c[i] = (uint16_t)su_next(&r);
			d[i] = (int64_t)(((uint64_t)su_next(&r) << 32) | su_next(&r));
		}
		a[0] = 0, a[1] = -1, a[2] = INT32_MIN, a[3] = 1;
		s[1] = 40, s[2] = -1; /* out of range: 0 */
		b[0] = 0, b[1] = -128, c[0] = 0, d[0] = 0, d[1] = -1;
		EX_OK(counts(ex_stream(), EX_DEV(a, N), EX_DEV(b, N), EX_DEV(c, N), EX_DEV(d, N), EX_DEV(s, N),
		             EX_DEV(o, 3 * N), EX_DEV(ob, 2 * N), EX_DEV(oc, 2 * N), EX_DEV(od, 3 * N), EX_DEV(k, 6)));
		for (int i = 0; i < N; i++) {
			uint32_t u = (uint32_t)a[i];
			EX_EQ(o[0 * N + i], popc(u), "population_count(%d)", a[i]);
			EX_EQ(o[1 * N + i], clzw(u, 32), "clz(%d)", a[i]);
			EX_EQ(o[2 * N + i], (int32_t)(s[i] >= 0 && s[i] < 32 ? u >> s[i] : 0), "shift_right_logical(%d, %d)",
			      a[i], s[i]);
			EX_EQ(ob[0 * N + i], popc((uint8_t)b[i]), "population_count(i8 %d)", b[i]);
			EX_EQ(ob[1 * N + i], clzw((uint8_t)b[i], 8), "clz(i8 %d)", b[i]);
			EX_EQ(oc[0 * N + i], popc(c[i]), "population_count(u16 %u)", c[i]);
			EX_EQ(oc[1 * N + i], clzw(c[i], 16), "clz(u16 %u)", c[i]);
			EX_EQ(od[0 * N + i], popc((uint64_t)d[i]), "population_count(i64 %lld)", (long long)d[i]);
			EX_EQ(od[1 * N + i], clzw((uint64_t)d[i], 64), "clz(i64 %lld)", (long long)d[i]);
			EX_EQ(od[2 * N + i], (int64_t)((uint64_t)d[i] >> 60), "shift_right_logical(i64 %lld, 60)", (long long)d[i]);
		}
		int32_t want[6] = {32, 32, 31, (int32_t)(0xfffffff8u >> 1), 0, 8};
		for (int j = 0; j < 6; j++)
			EX_EQ(k[j], want[j], "constant %d", j);
	}
	{
		static float x[N], back[N];
		static pk_f16 h[N], hb[N];
		static pk_bf16 b[N], bb[N];
		static double g[N];
		static int32_t i32[N], xi[N];
		static int16_t hi[N];
		static uint16_t bu[N];
		static int64_t gi[N];
		static uint32_t iu[N];
		for (int i = 0; i < N; i++) {
			x[i] = su_uniform(&r, -100, 100);
			h[i] = su_f32_to_f16(su_uniform(&r, -100, 100));
			b[i] = su_f32_to_bf16(su_uniform(&r, -100, 100));
			g[i] = su_uniform_d(&r, -1e10, 1e10);
			i32[i] = (int32_t)su_next(&r) & 0x7f7fffff; /* finite floats (no NaN: payloads may be quietened) */
		}
		x[0] = -0.0f, x[1] = INFINITY, h[0] = 0x8001, b[0] = 0x0001; /* -0, inf, subnormals */
		EX_OK(casts(ex_stream(), EX_DEV(x, N), EX_DEV(h, N), EX_DEV(b, N), EX_DEV(g, N), EX_DEV(i32, N),
		            EX_DEV(xi, N), EX_DEV(hi, N), EX_DEV(bu, N), EX_DEV(gi, N), EX_DEV(iu, N), EX_DEV(back, N),
		            EX_DEV(hb, N), EX_DEV(bb, N)));
		for (int i = 0; i < N; i++) {
			int32_t wx;
			int64_t wg;
			float wb;
			memcpy(&wx, &x[i], 4);
			memcpy(&wg, &g[i], 8);
			memcpy(&wb, &i32[i], 4);
			EX_EQ(xi[i], wx, "bitcast f32 %g", x[i]);
			EX_EQ(hi[i], (int16_t)h[i], "bitcast f16 0x%04x", h[i]);
			EX_EQU(bu[i], b[i], "bitcast bf16 0x%04x", b[i]);
			EX_EQ(gi[i], wg, "bitcast f64 %g", g[i]);
			EX_EQU(iu[i], (uint32_t)i32[i], "bitcast i32 %d", i32[i]);
			EX_SAME(back[i], wb, "bitcast i32 0x%08x to f32", (unsigned)i32[i]);
			EX_EQU(hb[i], (uint16_t)(h[i] ^ 0x8000), "f16 sign flip of 0x%04x", h[i]);
			EX_EQU(bb[i], (uint16_t)(b[i] & 0x7fff), "bf16 abs of 0x%04x", b[i]);
		}
	}
	{
		static int32_t w[N];
		static bool p[N];
		static float x[N], o[N], q[N];
		for (int i = 0; i < N; i++) {
			w[i] = (int32_t)su_int(&r, 0, 3);
			p[i] = su_int(&r, 0, 1);
			x[i] = su_uniform(&r, -10, 10);
		}
		EX_OK(selects(ex_stream(), EX_DEV(w, N), EX_DEV(p, N), EX_DEV(x, N), EX_DEV(o, N), EX_DEV(q, N)));
		for (int i = 0; i < N; i++) {
			float cases[4] = {x[i], x[i] * 2.0f, -x[i], 7.0f};
			EX_SAME(o[i], cases[w[i]], "select_n(%d, ...)", w[i]);
			EX_SAME(q[i], p[i] ? 0.5f : x[i], "select_n(%d, x, 0.5)", p[i]);
		}
	}
	return ex_done("bit_ops");
}
