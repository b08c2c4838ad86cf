/* softmax: runs samples/softmax.pk (row-wise softmax of a [rows, COLS] f32
 * matrix, one program per row) and checks it against C (double).
 *   build/samples/softmax [--rows N] [--seed S] [--dump DIR] [-v] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax.h"
#include "sample_util.h"

enum { COLS = 1024 };

int main(int argc, char **argv)
{
	int64_t rows = 1001;
	su_size sizes[] = {{"rows", &rows}};
	su_opts o;
	int rc = su_parse(argc, argv, "softmax", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t count = (size_t)rows * COLS, bytes = count * sizeof(float);
	float *x = su_xmalloc(bytes), *out = su_xmalloc(bytes);
	for (size_t i = 0; i < count; i++)
		x[i] = su_nonzero(&r, -8.0f, 8.0f);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	float *dx = su_to_device(&c, x, bytes), *dout = su_alloc_poisoned(&c, bytes);
	if (!dx || !dout)
		return 1;
	su_launch_begin(&c);
	pk_status st = softmax(c.stream, dx, dout, rows);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "softmax") || su_from_device(&c, out, dout, bytes))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < rows; i++) {
		const float *xr = x + i * COLS;
		double m = xr[0], s = 0;
		for (int j = 1; j < COLS; j++)
			m = xr[j] > m ? xr[j] : m;
		for (int j = 0; j < COLS; j++)
			s += exp(xr[j] - m);
		for (int j = 0; j < COLS; j++)
			su_err_add(&e, out[i * COLS + j], exp(xr[j] - m) / s);
	}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, rows, COLS);
	SU_DUMP(d, "o", SU_F32, out, rows, COLS);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "rows=%lld COLS=%d", (long long)rows, COLS);
	su_free(&c, dx);
	su_free(&c, dout);
	su_ctx_free(&c);
	free(x);
	free(out);
	return rc;
}
