/* shape_ops: runs Inputs/samples/shape_ops.pk on the host and dumps its
 * inputs and outputs for compare.py (test/pallas/shape_ops.test), which
 * checks them against the Pallas mirror.
 *   shape_ops [--seed S] --dump DIR */
#include "shape_ops.h"
#include "sample_util.h"

enum { M = 8, N = 256, H = 128 };

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "shape_ops", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	static float x[M * N], cat[M * N], til[M * N], rep[M * N], pt[M * H], row[2 * N], sq[M * H];
	static int32_t y[M * N], st[2 * M * H];
	int32_t k = (int32_t)(o.seed % M);
	for (int i = 0; i < M * N; i++) {
		x[i] = su_uniform(&r, -2.0f, 2.0f);
		y[i] = (int32_t)su_int(&r, -1000, 1000);
	}
	if (su_check(shape_ops(NULL, x, y, k, cat, til, rep, pt, row, st, sq), "shape_ops"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, M, N);
	SU_DUMP(d, "y", SU_I32, y, M, N);
	su_dump_scalar(d, "k", (double)k);
	SU_DUMP(d, "cat", SU_F32, cat, M, N);
	SU_DUMP(d, "til", SU_F32, til, M, N);
	SU_DUMP(d, "rep", SU_F32, rep, M, N);
	SU_DUMP(d, "pt", SU_F32, pt, M, H);
	SU_DUMP(d, "row", SU_F32, row, 2, N);
	SU_DUMP(d, "st", SU_I32, st, 2, M, H);
	SU_DUMP(d, "sq", SU_F32, sq, M, H);
	return su_dump_finish(d);
}
