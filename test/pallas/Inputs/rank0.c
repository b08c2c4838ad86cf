/* rank0: runs Inputs/samples/rank0.pk on the host and dumps its inputs and
 * outputs for compare.py (test/pallas/rank0.test), which checks them against
 * the Pallas mirror.
 *   rank0 [--seed S] --dump DIR */
#include "rank0.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "rank0", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[16 * 8], out[16 * 8];
	float s = su_uniform(&r, 0.5f, 2.0f), total = 0, m = 0;
	int32_t e = -1;
	for (int i = 0; i < 16 * 8; i++)
		x[i] = su_uniform(&r, -1.0f, 1.0f);
	if (su_check(rank0(NULL, &s, x, out, &total, &m, &e), "rank0"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	su_dump_array(d, "s", SU_F32, &s, 0, NULL);
	SU_DUMP(d, "x", SU_F32, x, 16, 8);
	SU_DUMP(d, "o", SU_F32, out, 16, 8);
	su_dump_array(d, "total", SU_F32, &total, 0, NULL);
	su_dump_array(d, "m", SU_F32, &m, 0, NULL);
	su_dump_array(d, "e", SU_I32, &e, 0, NULL);
	return su_dump_finish(d);
}
