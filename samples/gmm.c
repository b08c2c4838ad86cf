/* gmm: runs samples/gmm.pk (grouped matmul: row block i of lhs [m, K] times
 * rhs[group_of[i]] of [g, K, N], group_of a scalar-prefetch array sorted as
 * megablox has it) and checks it against C (double).
 *   build/samples/gmm [--m M] [--g G] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "gmm.h"
#include "sample_util.h"

enum { BM = 32, K = 64, N = 256 };

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int64_t m = 200, g = 4; /* m not a multiple of BM = 32 */
	su_size sizes[] = {{"m", &m}, {"g", &g}};
	su_opts o;
	int rc = su_parse(argc, argv, "gmm", sizes, 2, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (g < 1) {
		fprintf(stderr, "gmm: --g must be at least 1\n");
		return 2;
	}
	int64_t nb = (m + BM - 1) / BM;

	su_rng r = su_rng_new(o.seed);
	size_t nl = (size_t)(m * K), nr = (size_t)(g * K * N), no = (size_t)(m * N);
	int32_t *group_of = su_xmalloc((size_t)(nb + 1) * sizeof *group_of);
	float *lhs = su_xmalloc(nl * sizeof *lhs), *rhs = su_xmalloc(nr * sizeof *rhs), *out = su_xmalloc(no * sizeof *out);
	for (int64_t i = 0; i < nb; i++)
		group_of[i] = (int32_t)su_int(&r, 0, g - 1);
	qsort(group_of, (size_t)nb, sizeof *group_of, cmp_i32); /* tokens sorted by group */
	for (size_t i = 0; i < nl; i++)
		lhs[i] = su_nonzero(&r, -1.0f, 1.0f);
	for (size_t i = 0; i < nr; i++)
		rhs[i] = su_nonzero(&r, -1.0f, 1.0f);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	int32_t *dgroup = su_to_device(&c, group_of, (size_t)(nb + 1) * sizeof *group_of);
	float *dl = su_to_device(&c, lhs, nl * sizeof *lhs), *dr = su_to_device(&c, rhs, nr * sizeof *rhs);
	float *dout = su_alloc_poisoned(&c, no * sizeof *out);
	if (!dgroup || !dl || !dr || !dout)
		return 1;
	su_launch_begin(&c);
	pk_status st = gmm(c.stream, dgroup, dl, dr, dout, nb, m, g);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "gmm") || su_from_device(&c, out, dout, no * sizeof *out))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < m; i++) {
		const float *w = rhs + (size_t)group_of[i / BM] * K * N;
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)lhs[i * K + k] * w[k * N + j];
			su_err_add(&e, out[i * N + j], s);
		}
	}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "group_of", SU_I32, group_of, nb);
	SU_DUMP(d, "lhs", SU_F32, lhs, m, K);
	SU_DUMP(d, "rhs", SU_F32, rhs, g, K, N);
	SU_DUMP(d, "o", SU_F32, out, m, N);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "m=%lld g=%lld nb=%lld K=%d N=%d", (long long)m, (long long)g,
	                (long long)nb, K, N);
	su_free(&c, dgroup);
	su_free(&c, dl);
	su_free(&c, dr);
	su_free(&c, dout);
	su_ctx_free(&c);
	free(group_of);
	free(lhs);
	free(rhs);
	free(out);
	return rc;
}
