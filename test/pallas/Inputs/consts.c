/* consts: runs Inputs/samples/consts.pk on the host and dumps its inputs and
 * outputs for compare.py (test/pallas/consts.test), which checks them against
 * the Pallas mirror.
 *   consts [--seed S] --dump DIR */
#include "consts.h"
#include "sample_util.h"

enum { M = 8, B = 128 };

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "consts", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[M * B], out[M * B], mx[M];
	static int32_t t[M * B], c[M * B], e[M];
	for (int i = 0; i < M * B; i++) {
		x[i] = su_uniform(&r, -1.0f, 1.0f);
		t[i] = (int32_t)su_int(&r, -1000, 1000); /* negative: div/rem truncate */
	}
	if (su_check(consts(NULL, x, t, out, mx, c, e), "consts"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, M, B);
	SU_DUMP(d, "t", SU_I32, t, M, B);
	SU_DUMP(d, "o", SU_F32, out, M, B);
	SU_DUMP(d, "m", SU_F32, mx, M);
	SU_DUMP(d, "c", SU_I32, c, M, B);
	SU_DUMP(d, "e", SU_I32, e, M);
	return su_dump_finish(d);
}
