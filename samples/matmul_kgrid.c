/* matmul_kgrid: runs samples/matmul_kgrid.pk (z = x @ y, f32 [m, k] x [k, n],
 * k as a sequential third grid axis accumulating into the z block;
 * requires k % BK == 0) and checks it against C (double).  A k that BK = 32
 * does not divide makes the launch fail with PK_ERR_SIZE_CONSTRAINT.
 *   build/samples/matmul_kgrid [--m M] [--k K] [--n N] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "matmul_kgrid.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	int64_t m = 100, k = 96, n = 70; /* m, n not multiples of BM = BN = 32 */
	su_size sizes[] = {{"m", &m}, {"k", &k}, {"n", &n}};
	su_opts o;
	int rc = su_parse(argc, argv, "matmul_kgrid", sizes, 3, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t nx = (size_t)(m * k), ny = (size_t)(k * n), nz = (size_t)(m * n);
	float *x = su_xmalloc(nx * sizeof *x), *y = su_xmalloc(ny * sizeof *y), *z = su_xmalloc(nz * sizeof *z);
	for (size_t i = 0; i < nx; i++)
		x[i] = su_nonzero(&r, -1.0f, 1.0f);
	for (size_t i = 0; i < ny; i++)
		y[i] = su_nonzero(&r, -1.0f, 1.0f);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	float *dx = su_to_device(&c, x, nx * sizeof *x), *dy = su_to_device(&c, y, ny * sizeof *y);
	float *dz = su_alloc_poisoned(&c, nz * sizeof *z);
	if (!dx || !dy || !dz)
		return 1;
	su_launch_begin(&c);
	pk_status st = matmul_kgrid(c.stream, dx, dy, dz, m, k, n);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "matmul_kgrid") || su_from_device(&c, z, dz, nz * sizeof *z))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t kk = 0; kk < k; kk++)
				s += (double)x[i * k + kk] * y[kk * n + j];
			su_err_add(&e, z[i * n + j], s);
		}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, m, k);
	SU_DUMP(d, "y", SU_F32, y, k, n);
	SU_DUMP(d, "z", SU_F32, z, m, n);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "m=%lld k=%lld n=%lld", (long long)m, (long long)k, (long long)n);
	su_free(&c, dx);
	su_free(&c, dy);
	su_free(&c, dz);
	su_ctx_free(&c);
	free(x);
	free(y);
	free(z);
	return rc;
}
