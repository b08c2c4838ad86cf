/* bmm: runs samples/bmm.pk (batched z[b] = x[b] @ y[b], f32 [batch, m, K] x
 * [batch, K, n], a 3-D grid with the batch squeezed) and checks it against
 * C (double).
 *   build/samples/bmm [--batch B] [--m M] [--n N] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "bmm.h"
#include "sample_util.h"

enum { K = 64 };

int main(int argc, char **argv)
{
	int64_t batch = 3, m = 100, n = 70; /* m, n not multiples of BM = BN = 32 */
	su_size sizes[] = {{"batch", &batch}, {"m", &m}, {"n", &n}};
	su_opts o;
	int rc = su_parse(argc, argv, "bmm", sizes, 3, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t nx = (size_t)(batch * m * K), ny = (size_t)(batch * K * n), nz = (size_t)(batch * m * n);
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
	pk_status st = bmm(c.stream, dx, dy, dz, batch, m, n);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "bmm") || su_from_device(&c, z, dz, nz * sizeof *z))
		return 1;

	su_err e = {0};
	for (int64_t b = 0; b < batch; b++)
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				double s = 0;
				for (int k = 0; k < K; k++)
					s += (double)x[(b * m + i) * K + k] * y[(b * K + k) * n + j];
				su_err_add(&e, z[(b * m + i) * n + j], s);
			}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, batch, m, K);
	SU_DUMP(d, "y", SU_F32, y, batch, K, n);
	SU_DUMP(d, "z", SU_F32, z, batch, m, n);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "batch=%lld m=%lld n=%lld K=%d", (long long)batch, (long long)m,
	                (long long)n, K);
	su_free(&c, dx);
	su_free(&c, dy);
	su_free(&c, dz);
	su_ctx_free(&c);
	free(x);
	free(y);
	free(z);
	return rc;
}
