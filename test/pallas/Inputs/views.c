/* views: runs Inputs/samples/views.pk on the host and dumps its inputs and
 * outputs for compare.py (test/pallas/views.test), which checks them against
 * the Pallas mirror.
 *   views [--seed S] --dump DIR */
#include "views.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "views", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[4 * 8 * 16], ov[8], p[2 * 4], q[4 * 16], rv[2 * 4], t[2 * 16];
	for (int i = 0; i < 4 * 8 * 16; i++)
		x[i] = su_uniform(&r, -1.0f, 1.0f);
	if (su_check(views(NULL, x, ov, p, q, rv, t), "views"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, 4, 8, 16);
	SU_DUMP(d, "o", SU_F32, ov, 8);
	SU_DUMP(d, "p", SU_F32, p, 2, 4);
	SU_DUMP(d, "q", SU_F32, q, 4, 16);
	SU_DUMP(d, "r", SU_F32, rv, 2, 4);
	SU_DUMP(d, "t", SU_F32, t, 2, 16);
	return su_dump_finish(d);
}
