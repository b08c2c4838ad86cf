/* rmsnorm: runs samples/rmsnorm.pk (per row of a [rows, COLS] f16 matrix:
 * x / sqrt(mean(x * x) + eps) * w in f32, rounded to f16; BR rows per
 * program, rows need not divide) and checks it against C (double).
 *   build/samples/rmsnorm [--rows N] [--seed S] [--dump DIR] [-v] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "rmsnorm.h"
#include "sample_util.h"

enum { COLS = 512 };

int main(int argc, char **argv)
{
	int64_t rows = 1001; /* not a multiple of BR = 8 */
	su_size sizes[] = {{"rows", &rows}};
	su_opts o;
	int rc = su_parse(argc, argv, "rmsnorm", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t count = (size_t)rows * COLS, bytes = count * sizeof(pk_f16);
	pk_f16 *x = su_xmalloc(bytes), *out = su_xmalloc(bytes);
	pk_f16 w[COLS];
	const float eps = 1e-6f;
	for (size_t i = 0; i < count; i++)
		x[i] = su_f32_to_f16(su_nonzero(&r, -3.0f, 3.0f));
	for (int j = 0; j < COLS; j++)
		w[j] = su_f32_to_f16(su_nonzero(&r, 0.5f, 1.5f));

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	pk_f16 *dx = su_to_device(&c, x, bytes), *dw = su_to_device(&c, w, sizeof w);
	pk_f16 *dout = su_alloc_poisoned(&c, bytes); /* 0xFFFF: an f16 NaN */
	if (!dx || !dw || !dout)
		return 1;
	su_launch_begin(&c);
	pk_status st = rmsnorm(c.stream, dx, dw, eps, dout, rows);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "rmsnorm") || su_from_device(&c, out, dout, bytes))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < rows; i++) {
		const pk_f16 *xr = x + i * COLS;
		double ms = 0;
		for (int j = 0; j < COLS; j++) {
			double v = su_f16_to_f32(xr[j]);
			ms += v * v;
		}
		double inv = 1.0 / sqrt(ms / COLS + (double)eps);
		for (int j = 0; j < COLS; j++)
			su_err_add(&e, su_f16_to_f32(out[i * COLS + j]),
			           su_f16_to_f32(xr[j]) * inv * su_f16_to_f32(w[j]));
	}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F16, x, rows, COLS);
	SU_DUMP(d, "w", SU_F16, w, COLS);
	su_dump_scalar(d, "eps", eps);
	SU_DUMP(d, "o", SU_F16, out, rows, COLS);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F16, "rows=%lld COLS=%d", (long long)rows, COLS);
	su_free(&c, dx);
	su_free(&c, dw);
	su_free(&c, dout);
	su_ctx_free(&c);
	free(x);
	free(out);
	return rc;
}
