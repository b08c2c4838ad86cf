/* flip_pad: runs Inputs/samples/flip_pad.pk on the host and dumps its
 * inputs and outputs for compare.py (test/pallas/flip_pad.test), which
 * checks them against the Pallas mirror.
 *   flip_pad [--seed S] --dump DIR */
#include "flip_pad.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "flip_pad", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[8 * 16], b[4 * 8 * 8], f[8 * 16], fa[8 * 16], p[11 * 20], d[8], db[4 * 7];
	for (int i = 0; i < 8 * 16; i++)
		x[i] = su_uniform(&r, -1.0f, 1.0f);
	for (int i = 0; i < 4 * 8 * 8; i++)
		b[i] = su_uniform(&r, -1.0f, 1.0f);
	if (su_check(flip_pad(NULL, x, b, f, fa, p, d, db), "flip_pad"))
		return 1;
	su_dump *dd = su_dump_begin(&o);
	SU_DUMP(dd, "x", SU_F32, x, 8, 16);
	SU_DUMP(dd, "b", SU_F32, b, 4, 8, 8);
	SU_DUMP(dd, "f", SU_F32, f, 8, 16);
	SU_DUMP(dd, "fa", SU_F32, fa, 8, 16);
	SU_DUMP(dd, "p", SU_F32, p, 11, 20);
	SU_DUMP(dd, "d", SU_F32, d, 8);
	SU_DUMP(dd, "db", SU_F32, db, 4, 7);
	return su_dump_finish(dd);
}
