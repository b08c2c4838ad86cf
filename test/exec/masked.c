/* Driver of masked.pk: see there. */
#include "exec_util.h"
#include "masked.h"

enum { B = 64 };

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "masked");
	su_rng r = su_rng_new(15);
	{
		int64_t n = 300;
		float x[300], o[300];
		for (int i = 0; i < n; i++) {
			x[i] = su_nonzero(&r, -1, 1);
			o[i] = 100.0f + (float)i;
		}
		EX_OK(copy_pos(ex_stream(), EX_DEV(x, n), EX_DEV(o, n), n));
		for (int i = 0; i < n; i++)
			EX_SAME(o[i], x[i] > 0 ? x[i] * 2.0f : 100.0f + (float)i, "copy_pos %d", i);
	}
	{
		int64_t n = 200;
		int32_t x[200], o[200];
		bool m[200];
		for (int i = 0; i < n; i++) {
			x[i] = (int32_t)su_int(&r, 1, 1000);
			m[i] = su_next(&r) & 1;
		}
		ex_poison(o, sizeof o);
		EX_OK(select_load(ex_stream(), EX_DEV(x, n), EX_DEV(m, n), EX_DEV(o, n), n));
		for (int i = 0; i < n; i++)
			EX_EQ(o[i], m[i] ? x[i] : -i, "select_load %d", i);
	}
	for (int32_t lo = 0; lo <= 10; lo += 5) {
		int32_t hi = lo + 7;
		float x[8 * 16], o[8 * 16];
		for (int i = 0; i < 8 * 16; i++) {
			x[i] = su_nonzero(&r, -1, 1);
			o[i] = 55.0f;
		}
		EX_OK(grid_mask(ex_stream(), EX_DEV(x, 8 * 16), EX_DEV(o, 8 * 16), lo, hi));
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 16; j++) {
				float v = (j >= lo && j < hi) ? x[i * 16 + j] : 1.5f;
				float want = i % 2 == 0 ? v + (float)i : (j != 0 ? (j < 8 ? -v : v) : 55.0f);
				EX_SAME(o[i * 16 + j], want, "grid_mask lo=%d (%d, %d)", lo, i, j);
			}
	}
	for (int32_t k = 0; k <= 32; k += 13) {
		pk_f16 h[32], ho[32];
		pk_bf16 g[32], go[32];
		for (int i = 0; i < 32; i++) {
			h[i] = su_f32_to_f16(su_nonzero(&r, -1, 1));
			g[i] = su_f32_to_bf16(su_nonzero(&r, -1, 1));
		}
		ex_poison(ho, sizeof ho);
		ex_poison(go, sizeof go);
		EX_OK(half_other(ex_stream(), EX_DEV(h, 32), EX_DEV(g, 32), EX_DEV(ho, 32), EX_DEV(go, 32), k));
		for (int i = 0; i < 32; i++) {
			EX_EQ(ho[i], i < k ? h[i] : su_f32_to_f16(3.0f), "half_other f16 k=%d %d", k, i);
			EX_EQ(go[i], i >= k ? g[i] : su_f32_to_bf16(-0.5f), "half_other bf16 k=%d %d", k, i);
		}
	}
	return ex_done("masked");
}
