/* layernorm: runs samples/layernorm.pk (per row of a [rows, COLS] f32 matrix:
 * (x - mean) / sqrt(var + eps) * w + b) and checks it against C (double).
 *   build/samples/layernorm [--rows N] [--seed S] [--dump DIR] [-v] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "layernorm.h"
#include "sample_util.h"

enum { COLS = 256 };

int main(int argc, char **argv)
{
	int64_t rows = 1001;
	su_size sizes[] = {{"rows", &rows}};
	su_opts o;
	int rc = su_parse(argc, argv, "layernorm", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t count = (size_t)rows * COLS, bytes = count * sizeof(float);
	float *x = su_xmalloc(bytes), *out = su_xmalloc(bytes);
	float w[COLS], b[COLS];
	const float eps = 1e-5f;
	for (size_t i = 0; i < count; i++)
		x[i] = su_nonzero(&r, -2.0f, 2.0f) + 0.5f; /* a nonzero mean */
	for (int j = 0; j < COLS; j++) {
		w[j] = su_nonzero(&r, 0.5f, 1.5f);
		b[j] = su_nonzero(&r, -0.5f, 0.5f);
	}

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	float *dx = su_to_device(&c, x, bytes), *dw = su_to_device(&c, w, sizeof w);
	float *db = su_to_device(&c, b, sizeof b), *dout = su_alloc_poisoned(&c, bytes);
	if (!dx || !dw || !db || !dout)
		return 1;
	su_launch_begin(&c);
	pk_status st = layernorm(c.stream, dx, dw, db, eps, dout, rows);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "layernorm") || su_from_device(&c, out, dout, bytes))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < rows; i++) {
		const float *xr = x + i * COLS;
		double mean = 0, var = 0;
		for (int j = 0; j < COLS; j++)
			mean += xr[j];
		mean /= COLS;
		for (int j = 0; j < COLS; j++)
			var += (xr[j] - mean) * (xr[j] - mean);
		var /= COLS;
		double inv = 1.0 / sqrt(var + (double)eps);
		for (int j = 0; j < COLS; j++)
			su_err_add(&e, out[i * COLS + j], (xr[j] - mean) * inv * w[j] + b[j]);
	}

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "x", SU_F32, x, rows, COLS);
	SU_DUMP(d, "w", SU_F32, w, COLS);
	SU_DUMP(d, "b", SU_F32, b, COLS);
	su_dump_scalar(d, "eps", eps);
	SU_DUMP(d, "o", SU_F32, out, rows, COLS);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_F32, "rows=%lld COLS=%d", (long long)rows, COLS);
	su_free(&c, dx);
	su_free(&c, dw);
	su_free(&c, db);
	su_free(&c, dout);
	su_ctx_free(&c);
	free(x);
	free(out);
	return rc;
}
