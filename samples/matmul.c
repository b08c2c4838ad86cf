/* matmul: runs samples/matmul.pk (z = x @ y, f16 [256, 256] inputs, f32
 * result, a 2x2 grid of blocks) and checks it against C (double).
 *   build/samples/matmul [--seed S] [--dump DIR] [-v]   (no size symbols) */
#include <stdio.h>
#include <stdlib.h>

#include "matmul.h"
#include "sample_util.h"

enum { M = 256, K = 256, N = 256 };

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "matmul", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	pk_f16 *x = su_xmalloc(M * K * sizeof *x), *y = su_xmalloc(K * N * sizeof *y);
	float *z = su_xmalloc(M * N * sizeof *z);
	for (int i = 0; i < M * K; i++)
		x[i] = su_f32_to_f16(su_nonzero(&r, -1.0f, 1.0f));
	for (int i = 0; i < K * N; i++)
		y[i] = su_f32_to_f16(su_nonzero(&r, -1.0f, 1.0f));

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	pk_f16 *dx = su_to_device(&c, x, M * K * sizeof *x), *dy = su_to_device(&c, y, K * N * sizeof *y);
	float *dz = su_alloc_poisoned(&c, M * N * sizeof *z);
	if (!dx || !dy || !dz)
		return 1;
	su_launch_begin(&c);
	pk_status st = matmul(c.stream, dx, dy, dz);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "matmul") || su_from_device(&c, z, dz, M * N * sizeof *z))
		return 1;

	/* The inputs are exact in f16, so the reference sees the same numbers. */
	double *xd = su_xmalloc(M * K * sizeof *xd), *yd = su_xmalloc(K * N * sizeof *yd);
	for (int i = 0; i < M * K; i++)
		xd[i] = su_f16_to_f32(x[i]);
	for (int i = 0; i < K * N; i++)
		yd[i] = su_f16_to_f32(y[i]);
	su_err e = {0};
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += xd[i * K + k] * yd[k * N + j];
			su_err_add(&e, z[i * N + j], s);
		}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F16, x, M, K);
	SU_DUMP(d, "y", SU_F16, y, K, N);
	SU_DUMP(d, "z", SU_F32, z, M, N);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "M=%d K=%d N=%d", M, K, N);
	su_free(&c, dx);
	su_free(&c, dy);
	su_free(&c, dz);
	su_ctx_free(&c);
	free(x);
	free(y);
	free(z);
	free(xd);
	free(yd);
	return rc;
}
