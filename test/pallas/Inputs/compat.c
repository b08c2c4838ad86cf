/* compat: runs Inputs/samples/compat.pk on the host and dumps its inputs
 * and outputs for compare.py (test/pallas/compat.test), which checks them
 * against the Pallas mirror.
 *   compat [--seed S] --dump DIR */
#include "compat.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "compat", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[8 * 16], y[8 * 16], v[16], s[8 * 16], c[8 * 16], q[8 * 16], t[16 * 8], rv[8 * 16], b[8 * 16],
		m[4 * 16], dp[8 * 8], h[8 * 8], u[8 * 16], w[8 * 16];
	static int32_t f[8 * 16];
	for (int i = 0; i < 8 * 16; i++) {
		x[i] = su_uniform(&r, -1.0f, 1.0f);
		y[i] = su_uniform(&r, 0.5f, 2.0f) * (su_uniform(&r, -1.0f, 1.0f) < 0 ? -1.0f : 1.0f);
	}
	for (int i = 0; i < 8 * 16; i += 7)
		y[i] = 0.1f; /* |y| < 0.2: z is ±inf, or NaN where x is 0 */
	x[14] = 0.0f;
	y[14] = 0.1f;
	for (int i = 0; i < 16; i++)
		v[i] = su_uniform(&r, -1.0f, 1.0f);
	if (su_check(compat(NULL, x, y, v, s, c, q, f, t, rv, b, m, dp, h, u, w), "compat"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, 8, 16);
	SU_DUMP(d, "y", SU_F32, y, 8, 16);
	SU_DUMP(d, "v", SU_F32, v, 16);
	SU_DUMP(d, "s", SU_F32, s, 8, 16);
	SU_DUMP(d, "c", SU_F32, c, 8, 16);
	SU_DUMP(d, "q", SU_F32, q, 8, 16);
	SU_DUMP(d, "f", SU_I32, f, 8, 16);
	SU_DUMP(d, "t", SU_F32, t, 16, 8);
	SU_DUMP(d, "r", SU_F32, rv, 8, 16);
	SU_DUMP(d, "b", SU_F32, b, 8, 16);
	SU_DUMP(d, "m", SU_F32, m, 4, 16);
	SU_DUMP(d, "d", SU_F32, dp, 8, 8);
	SU_DUMP(d, "h", SU_F32, h, 8, 8);
	SU_DUMP(d, "u", SU_F32, u, 8, 16);
	SU_DUMP(d, "w", SU_F32, w, 8, 16);
	return su_dump_finish(d);
}
