/* nn_fns: runs Inputs/samples/nn_fns.pk on the host and dumps its inputs
 * and outputs for compare.py (test/pallas/nn_fns.test), which checks them
 * against the Pallas mirror.
 *   nn_fns [--seed S] --dump DIR */
#include <float.h>
#include <math.h>

#include "nn_fns.h"
#include "sample_util.h"

enum { E = 8 * 16 };

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "nn_fns", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[E], y[E], s[E], cs[E], la[E], sp[E], rl[E], sw[E], ge[E], lr[E];
	static pk_f16 h[E], gh[E];
	static int32_t k[E], na[E];
	for (int e = 0; e < E; e++) {
		x[e] = su_uniform(&r, -6.0f, 6.0f);
		y[e] = su_uniform(&r, -6.0f, 6.0f);
		s[e] = su_uniform(&r, -6.0f, 6.0f);
		h[e] = su_f32_to_f16(su_uniform(&r, -4.0f, 4.0f));
	}
	/* nextafter from ±0, the largest finite floats, FLT_MIN, onto y itself,
	 * and (k: 1, 2, 3) from inf, -inf and NaN */
	const float sv[] = {0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN, 1.0f};
	for (int e = 0; e < (int)(sizeof sv / sizeof sv[0]); e++)
		s[e] = sv[e];
	s[9] = y[9];
	k[11] = 1, k[12] = 2, k[13] = 3;
	y[10] = -0.0f; /* copysign and signbit of -0 */
	if (su_check(nn_fns(NULL, x, y, s, k, h, na, cs, la, sp, rl, sw, ge, lr, gh), "nn_fns"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, 8, 16);
	SU_DUMP(d, "y", SU_F32, y, 8, 16);
	SU_DUMP(d, "s", SU_F32, s, 8, 16);
	SU_DUMP(d, "k", SU_I32, k, 8, 16);
	SU_DUMP(d, "h", SU_F16, h, 8, 16);
	SU_DUMP(d, "na", SU_I32, na, 8, 16);
	SU_DUMP(d, "cs", SU_F32, cs, 8, 16);
	SU_DUMP(d, "la", SU_F32, la, 8, 16);
	SU_DUMP(d, "sp", SU_F32, sp, 8, 16);
	SU_DUMP(d, "rl", SU_F32, rl, 8, 16);
	SU_DUMP(d, "sw", SU_F32, sw, 8, 16);
	SU_DUMP(d, "ge", SU_F32, ge, 8, 16);
	SU_DUMP(d, "lr", SU_F32, lr, 8, 16);
	SU_DUMP(d, "gh", SU_F16, gh, 8, 16);
	return su_dump_finish(d);
}
