/* matmul_tiled: runs samples/matmul_tiled.pk (z = x @ y, f16 [m, K] x [K, n],
 * f32 result, a for loop over BK-wide ds slices with a carried accumulator)
 * and checks it against C (double).
 *   build/samples/matmul_tiled [--m M] [--n N] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "matmul_tiled.h"
#include "sample_util.h"

enum { K = 256 };

int main(int argc, char **argv)
{
	int64_t m = 100, n = 70; /* not multiples of BM = BN = 32 */
	su_size sizes[] = {{"m", &m}, {"n", &n}};
	su_opts o;
	int rc = su_parse(argc, argv, "matmul_tiled", sizes, 2, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t nx = (size_t)(m * K), ny = (size_t)(K * n), nz = (size_t)(m * n);
	pk_f16 *x = su_xmalloc(nx * sizeof *x), *y = su_xmalloc(ny * sizeof *y);
	float *z = su_xmalloc(nz * sizeof *z);
	for (size_t i = 0; i < nx; i++)
		x[i] = su_f32_to_f16(su_nonzero(&r, -1.0f, 1.0f));
	for (size_t i = 0; i < ny; i++)
		y[i] = su_f32_to_f16(su_nonzero(&r, -1.0f, 1.0f));

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	pk_f16 *dx = su_to_device(&c, x, nx * sizeof *x), *dy = su_to_device(&c, y, ny * sizeof *y);
	float *dz = su_alloc_poisoned(&c, nz * sizeof *z);
	if (!dx || !dy || !dz)
		return 1;
	su_launch_begin(&c);
	pk_status st = matmul_tiled(c.stream, dx, dy, dz, m, n);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "matmul_tiled") || su_from_device(&c, z, dz, nz * sizeof *z))
		return 1;

	double *yd = su_xmalloc(ny * sizeof *yd);
	for (size_t i = 0; i < ny; i++)
		yd[i] = su_f16_to_f32(y[i]);
	su_err e = {0};
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)su_f16_to_f32(x[i * K + k]) * yd[k * n + j];
			su_err_add(&e, z[i * n + j], s);
		}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F16, x, m, K);
	SU_DUMP(d, "y", SU_F16, y, K, n);
	SU_DUMP(d, "z", SU_F32, z, m, n);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "m=%lld n=%lld K=%d", (long long)m, (long long)n, K);
	su_free(&c, dx);
	su_free(&c, dy);
	su_free(&c, dz);
	su_ctx_free(&c);
	free(x);
	free(y);
	free(z);
	free(yd);
	return rc;
}
