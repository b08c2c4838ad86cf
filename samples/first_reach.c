/* first_reach: runs samples/first_reach.pk (per row of counts, the first
 * index where the running total reaches thr, and its chunk and lane) and
 * checks it against C.
 *   build/samples/first_reach [--rows N] [--thr T] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "first_reach.h"
#include "sample_util.h"

enum { C = 256, CH = 32 };

int main(int argc, char **argv)
{
	int64_t rows = 1001, thr = 700;
	su_size sizes[] = {{"rows", &rows}, {"thr", &thr}};
	su_opts o;
	int rc = su_parse(argc, argv, "first_reach", sizes, 2, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	/* Counts 0..9 with runs of zero chunks, so that rows reach thr early,
	 * late or never, and some chunks are skipped. */
	su_rng r = su_rng_new(o.seed);
	size_t count = (size_t)rows * C, bytes = count * sizeof(int32_t), obytes = (size_t)rows * sizeof(int32_t);
	int32_t *x = su_xmalloc(bytes);
	int32_t *cut = su_xmalloc(obytes), *chunk = su_xmalloc(obytes), *lane = su_xmalloc(obytes);
	for (int64_t i = 0; i < rows; i++)
		for (int c = 0; c < C / CH; c++) {
			bool zero = su_int(&r, 0, 2) == 0;
			for (int j = 0; j < CH; j++)
				x[i * C + c * CH + j] = zero ? 0 : (int32_t)su_int(&r, 0, 9);
		}

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	int32_t *dx = su_to_device(&c, x, bytes);
	int32_t *dcut = su_alloc_poisoned(&c, obytes), *dchunk = su_alloc_poisoned(&c, obytes);
	int32_t *dlane = su_alloc_poisoned(&c, obytes);
	if (!dx || !dcut || !dchunk || !dlane)
		return 1;
	su_launch_begin(&c);
	pk_status st = first_reach(c.stream, dx, dcut, dchunk, dlane, (int32_t)thr, rows);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "first_reach") || su_from_device(&c, cut, dcut, obytes) ||
	    su_from_device(&c, chunk, dchunk, obytes) || su_from_device(&c, lane, dlane, obytes))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < rows; i++) {
		int32_t k = C, total = 0;
		for (int j = 0; j < C; j++) {
			total += x[i * C + j];
			if (total >= thr) {
				k = j;
				break;
			}
		}
		su_err_add(&e, cut[i], k);
		su_err_add(&e, chunk[i], k / CH);
		su_err_add(&e, lane[i], k % CH);
	}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_I32, x, rows, C);
	su_dump_scalar(d, "thr", (double)thr);
	SU_DUMP(d, "cut", SU_I32, cut, rows);
	SU_DUMP(d, "chunk", SU_I32, chunk, rows);
	SU_DUMP(d, "lane", SU_I32, lane, rows);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_EXACT, "rows=%lld thr=%lld C=%d", (long long)rows, (long long)thr, C);
	su_free(&c, dx);
	su_free(&c, dcut);
	su_free(&c, dchunk);
	su_free(&c, dlane);
	su_ctx_free(&c);
	free(x);
	free(cut);
	free(chunk);
	free(lane);
	return rc;
}
