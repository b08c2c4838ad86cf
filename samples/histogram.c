/* histogram: runs samples/histogram.pk (h[c] += count of x == c, clamped to
 * [0, NBINS); atomic adds through a gather; h is inout) and checks it
 * exactly.  h starts with random counts, so the kernel must add to them.
 *   build/samples/histogram [--n N] [--seed S] [--dump DIR] [-v]
 * With --dump, DIR/h.npy holds h after the run and DIR/in/h.npy before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "sample_util.h"

enum { NBINS = 64 };

int main(int argc, char **argv)
{
	int64_t n = 100003; /* not a multiple of BLOCK = 256 */
	su_size sizes[] = {{"n", &n}};
	su_opts o;
	int rc = su_parse(argc, argv, "histogram", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t bytes = (size_t)n * sizeof(int32_t);
	int32_t *x = su_xmalloc(bytes);
	int32_t h0[NBINS], h[NBINS];
	for (int64_t i = 0; i < n; i++)
		x[i] = (int32_t)su_int(&r, -5, NBINS + 5); /* some out of range: clamped */
	for (int b = 0; b < NBINS; b++)
		h0[b] = (int32_t)su_int(&r, 1, 10);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	int32_t *dx = su_to_device(&c, x, bytes);
	int32_t *dh = su_to_device(&c, h0, sizeof h0);
	if (!dx || !dh)
		return 1;
	su_launch_begin(&c);
	pk_status st = histogram(c.stream, dx, dh, n);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "histogram") || su_from_device(&c, h, dh, sizeof h))
		return 1;

	int64_t ref[NBINS];
	for (int b = 0; b < NBINS; b++)
		ref[b] = h0[b];
	for (int64_t i = 0; i < n; i++)
		ref[x[i] < 0 ? 0 : x[i] >= NBINS ? NBINS - 1 : x[i]]++;
	su_err e = {0};
	for (int b = 0; b < NBINS; b++)
		su_err_add(&e, h[b], (double)ref[b]);

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_I32, x, n);
	SU_DUMP_INITIAL(d, "h", SU_I32, h0, NBINS);
	SU_DUMP(d, "h", SU_I32, h, NBINS);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_EXACT, "n=%lld NBINS=%d", (long long)n, NBINS);
	su_free(&c, dx);
	su_free(&c, dh);
	su_ctx_free(&c);
	free(x);
	return rc;
}
