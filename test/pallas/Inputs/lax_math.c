/* lax_math: runs Inputs/samples/lax_math.pk on the host and dumps its
 * inputs and outputs for compare.py (test/pallas/lax_math.test), which
 * checks them against the Pallas mirror.
 *   lax_math [--seed S] --dump DIR */
#include "lax_math.h"
#include "sample_util.h"

enum { E = 8 * 16 };

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "lax_math", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[E], y[E], t[E], at[E], as[E], hy[E], ex[E], rd[E], ei[E], bf[E], sn[E];
	static pk_f16 h[E], oh[E];
	static int32_t i[E], k[E], pc[E], bc[E];
	for (int e = 0; e < E; e++) {
		x[e] = su_uniform(&r, -0.99f, 0.99f);
		y[e] = su_uniform(&r, -2.0f, 2.0f);
		h[e] = su_f32_to_f16(su_uniform(&r, -1.5f, 1.5f));
		i[e] = (int32_t)su_next(&r);
		k[e] = (int32_t)su_int(&r, 0, 2);
	}
	x[0] = 0.125f, x[1] = -0.375f, x[2] = 0.625f; /* x * 4 exactly halfway: round and rint to even */
	i[0] = 0, i[1] = -1, i[2] = INT32_MIN;
	if (su_check(lax_math(NULL, x, y, h, i, k, t, at, as, hy, ex, rd, ei, oh, pc, bc, bf, sn), "lax_math"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, 8, 16);
	SU_DUMP(d, "y", SU_F32, y, 8, 16);
	SU_DUMP(d, "h", SU_F16, h, 8, 16);
	SU_DUMP(d, "i", SU_I32, i, 8, 16);
	SU_DUMP(d, "k", SU_I32, k, 8, 16);
	SU_DUMP(d, "t", SU_F32, t, 8, 16);
	SU_DUMP(d, "at", SU_F32, at, 8, 16);
	SU_DUMP(d, "as", SU_F32, as, 8, 16);
	SU_DUMP(d, "hy", SU_F32, hy, 8, 16);
	SU_DUMP(d, "ex", SU_F32, ex, 8, 16);
	SU_DUMP(d, "rd", SU_F32, rd, 8, 16);
	SU_DUMP(d, "ei", SU_F32, ei, 8, 16);
	SU_DUMP(d, "oh", SU_F16, oh, 8, 16);
	SU_DUMP(d, "pc", SU_I32, pc, 8, 16);
	SU_DUMP(d, "bc", SU_I32, bc, 8, 16);
	SU_DUMP(d, "bf", SU_F32, bf, 8, 16);
	SU_DUMP(d, "sn", SU_F32, sn, 8, 16);
	return su_dump_finish(d);
}
