/* causal_softmax: runs samples/causal_softmax.pk (the causal softmax of each
 * [N, N] matrix of a batch, and each row's log-sum-exp) and checks it
 * against C (double).
 *   build/samples/causal_softmax [--b N] [--seed S] [--dump DIR] [-v] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "causal_softmax.h"
#include "sample_util.h"

enum { N = 128 };

int main(int argc, char **argv)
{
	int64_t b = 37;
	su_size sizes[] = {{"b", &b}};
	su_opts o;
	int rc = su_parse(argc, argv, "causal_softmax", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t count = (size_t)b * N * N, bytes = count * sizeof(float), lbytes = (size_t)b * N * sizeof(float);
	float *x = su_xmalloc(bytes), *out = su_xmalloc(bytes), *lse = su_xmalloc(lbytes);
	for (size_t i = 0; i < count; i++)
		x[i] = su_nonzero(&r, -6.0f, 6.0f);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	float *dx = su_to_device(&c, x, bytes), *dout = su_alloc_poisoned(&c, bytes);
	float *dlse = su_alloc_poisoned(&c, lbytes);
	if (!dx || !dout || !dlse)
		return 1;
	su_launch_begin(&c);
	pk_status st = causal_softmax(c.stream, dx, dout, dlse, b);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "causal_softmax") || su_from_device(&c, out, dout, bytes) ||
	    su_from_device(&c, lse, dlse, lbytes))
		return 1;

	/* Row i of a matrix sees columns 0..i: the rest are 0 in o. */
	su_err e = {0};
	for (int64_t m = 0; m < b; m++)
		for (int i = 0; i < N; i++) {
			const float *xr = x + (m * N + i) * N;
			double mx = xr[0], s = 0;
			for (int j = 1; j <= i; j++)
				mx = xr[j] > mx ? xr[j] : mx;
			for (int j = 0; j <= i; j++)
				s += exp(xr[j] - mx);
			for (int j = 0; j < N; j++)
				su_err_add(&e, out[(m * N + i) * N + j], j <= i ? exp(xr[j] - mx) / s : 0.0);
			su_err_add(&e, lse[m * N + i], mx + log(s));
		}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, b, N, N);
	SU_DUMP(d, "o", SU_F32, out, b, N, N);
	SU_DUMP(d, "lse", SU_F32, lse, b, N, 1);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "b=%lld N=%d", (long long)b, N);
	su_free(&c, dx);
	su_free(&c, dout);
	su_free(&c, dlse);
	su_ctx_free(&c);
	free(x);
	free(out);
	free(lse);
	return rc;
}
