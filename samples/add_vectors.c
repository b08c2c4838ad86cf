/* add_vectors: runs samples/add_vectors.pk (o = x + y, f32, any n) on random
 * inputs and checks it against C.  Build: make samples; run:
 *   build/samples/add_vectors [--n N] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "add_vectors.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	int64_t n = 1000003; /* not a multiple of BLOCK = 1024: a partial last block */
	su_size sizes[] = {{"n", &n}};
	su_opts o;
	int rc = su_parse(argc, argv, "add_vectors", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t bytes = (size_t)n * sizeof(float);
	float *x = su_xmalloc(bytes), *y = su_xmalloc(bytes), *out = su_xmalloc(bytes);
	for (int64_t i = 0; i < n; i++) {
		x[i] = su_nonzero(&r, -1.0f, 1.0f);
		y[i] = su_nonzero(&r, -1.0f, 1.0f);
	}

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	float *dx = su_to_device(&c, x, bytes), *dy = su_to_device(&c, y, bytes);
	float *dout = su_alloc_poisoned(&c, bytes);
	if (!dx || !dy || !dout)
		return 1;
	su_launch_begin(&c);
	pk_status st = add_vectors(c.stream, dx, dy, dout, n);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "add_vectors") || su_from_device(&c, out, dout, bytes))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < n; i++)
		su_err_add(&e, out[i], (double)x[i] + (double)y[i]);

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, n);
	SU_DUMP(d, "y", SU_F32, y, n);
	SU_DUMP(d, "o", SU_F32, out, n);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "n=%lld", (long long)n);
	su_free(&c, dx);
	su_free(&c, dy);
	su_free(&c, dout);
	su_ctx_free(&c);
	free(x);
	free(y);
	free(out);
	return rc;
}
