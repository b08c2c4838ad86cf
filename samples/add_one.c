/* add_one: runs samples/add_one.pk (o = x + 1 over i32, any n; masked ds
 * slices, no BlockSpecs) on random inputs and checks it exactly.
 *   build/samples/add_one [--n N] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "add_one.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	int64_t n = 100003; /* not a multiple of BLOCK = 8 */
	su_size sizes[] = {{"n", &n}};
	su_opts o;
	int rc = su_parse(argc, argv, "add_one", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t bytes = (size_t)n * sizeof(int32_t);
	int32_t *x = su_xmalloc(bytes), *out = su_xmalloc(bytes);
	for (int64_t i = 0; i < n; i++)
		x[i] = (int32_t)su_int(&r, -1000000, 1000000);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	int32_t *dx = su_to_device(&c, x, bytes);
	int32_t *dout = su_alloc_poisoned(&c, bytes); /* -1 everywhere */
	if (!dx || !dout)
		return 1;
	su_launch_begin(&c);
	pk_status st = add_one(c.stream, dx, dout, n);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "add_one") || su_from_device(&c, out, dout, bytes))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < n; i++)
		su_err_add(&e, out[i], (double)x[i] + 1.0);

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_I32, x, n);
	SU_DUMP(d, "o", SU_I32, out, n);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_EXACT, "n=%lld", (long long)n);
	su_free(&c, dx);
	su_free(&c, dout);
	su_ctx_free(&c);
	free(x);
	free(out);
	return rc;
}
