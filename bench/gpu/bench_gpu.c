/* bench_gpu.c - times pkc's GPU kernels (bench/gpu/bench_*.pk, compiled with
 * --target=host,sm_90a) against a device-to-device copy, with pk events:
 *
 *   copy       pk_memcpy device-to-device of 2^28 f32   GB/s (read + write)
 *   add        o = x + y, 2^28 f32                      GB/s (2 reads + 1 write)
 *   softmax    32768 x 4096 f32 rows                    GB/s (1 read + 1 write)
 *   layernorm  32768 x 4096 f32 rows                    GB/s (1 read + 1 write)
 *   matmul     8192^3 f16 and bf16, f32 accumulation    TFLOP/s
 *
 * Each kernel: checked first (outputs poisoned with NaN bytes, then compared
 * with a double-precision C reference on all or sampled elements), then
 * `--warmup` untimed launches, then `--reps` launches each timed with a pair
 * of events, queued back to back (bench_time.h); the median is reported (min
 * too).  When one set of inputs and
 * outputs is smaller than 256 MiB (four times the largest Hopper L2), the
 * launches rotate through enough sets to exceed that, so repeated runs do not
 * read from L2.  Prints a table and, with --json FILE, writes the rows for
 * bench/gpu/report.py (which adds the peers of peers.py).
 *
 *   bench_gpu [--device cuda|host] [--reps N] [--warmup N] [--json FILE]
 *             [--only k1,k2] [--quick]
 * --quick uses small sizes (a smoke test, e.g. on the host).  The device
 * defaults to $PK_DEVICE, else cuda.  Exit status 0 when every kernel ran and
 * matched its reference. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pk_runtime.h>

#include "bench_time.h"
#include "sample_util.h"

#include "bench_add.h"
#include "bench_layernorm.h"
#include "bench_matmul.h"
#include "bench_softmax.h"

#define ROTATE_BYTES ((size_t)256 << 20) /* rotate sets until this many bytes */
#define MAX_SETS 16
#define MATMUL_K 8192 /* the K of bench_matmul.pk */
#define LN_COLS 4096  /* the COLS of bench_softmax.pk and bench_layernorm.pk */

typedef struct bench {
	pk_device *dev;     /* where the kernels run */
	pk_stream *stream;  /* their stream */
	int reps, warmup;   /* timed and untimed launches */
	int quick;          /* small sizes */
	const char *only;   /* comma list of kernels to run, or NULL */
	FILE *json;         /* --json output, or NULL */
	int njson;          /* rows written to it */
	int failures;       /* kernels that failed to run or to match */
	double copy_gbs;    /* the device-to-device copy's rate, for the ratios */
} bench;

/* One timed configuration: launch(ctx, set) enqueues one run on buffer set `set`. */
typedef pk_status (*launch_fn)(bench *b, void *ctx, int set);

static int wanted(const bench *b, const char *name)
{
	if (!b->only)
		return 1;
	size_t n = strlen(name);
	for (const char *p = b->only; *p;) {
		size_t w = strcspn(p, ",");
		if (w == n && !strncmp(p, name, n))
			return 1;
		p += w + (p[w] == ',');
	}
	return 0;
}

static int failed(pk_status st, const char *what)
{
	if (st == PK_SUCCESS)
		return 0;
	fprintf(stderr, "bench_gpu: %s: %s: %s\n", what, pk_status_name(st), pk_last_error());
	return 1;
}

static void *dev_alloc(bench *b, size_t bytes)
{
	void *p = NULL;
	if (failed(pk_malloc(b->dev, bytes, &p), "pk_malloc"))
		return NULL;
	return p;
}

static int to_dev(bench *b, void *d, const void *h, size_t bytes)
{
	return failed(pk_memcpy(b->stream, d, h, bytes, PK_MEMCPY_HOST_TO_DEVICE), "pk_memcpy") ||
	       failed(pk_stream_synchronize(b->stream), "pk_stream_synchronize");
}

static int from_dev(bench *b, void *h, const void *d, size_t bytes)
{
	return failed(pk_memcpy(b->stream, h, d, bytes, PK_MEMCPY_DEVICE_TO_HOST), "pk_memcpy") ||
	       failed(pk_stream_synchronize(b->stream), "pk_stream_synchronize");
}

static int sets_for(size_t bytes_per_set)
{
	if (bytes_per_set >= ROTATE_BYTES)
		return 1;
	size_t n = (ROTATE_BYTES + bytes_per_set - 1) / bytes_per_set;
	return n > MAX_SETS ? MAX_SETS : (int)n;
}

/* A configuration's launch as bench_time_launches calls it: on set rep % nsets. */
typedef struct timed {
	bench *b;
	launch_fn f;
	void *ctx;
	int nsets;
} timed;

static pk_status timed_launch(void *ctx, long long rep)
{
	const timed *x = ctx;
	return x->f(x->b, x->ctx, (int)(rep % x->nsets));
}

/* Warm-up, then reps timed launches (bench_time.h); the median and minimum in ms. */
static int time_it(bench *b, launch_fn f, void *ctx, int nsets, const char *name, double *median, double *min)
{
	double *t = malloc(sizeof(double) * (size_t)b->reps);
	if (!t)
		return 1;
	timed x = {b, f, ctx, nsets};
	const char *what;
	pk_status st = bench_time_launches(b->dev, b->stream, b->warmup, b->reps, timed_launch, &x, t, &what);
	if (st == PK_SUCCESS) {
		*median = bench_time_median(t, b->reps);
		*min = t[0];
	}
	free(t);
	return failed(st, strcmp(what, "launch") ? what : name);
}

/* Prints a row and appends it to the JSON file. */
static void report(bench *b, const char *kernel, const char *shape, double ms, double min, double gbs, double tflops,
                   double relerr, double tol, int nsets)
{
	int ok = isfinite(relerr) && relerr <= tol;
	if (!ok)
		b->failures++;
	char rate[32], ratio[32];
	if (tflops > 0)
		snprintf(rate, sizeof rate, "%8.1f TFLOP/s", tflops);
	else
		snprintf(rate, sizeof rate, "%8.1f GB/s   ", gbs);
	if (gbs > 0 && b->copy_gbs > 0)
		snprintf(ratio, sizeof ratio, "%6.2f", gbs / b->copy_gbs);
	else
		snprintf(ratio, sizeof ratio, "%6s", "-");
	printf("%-14s %-22s %9.4f %9.4f %s %s %9.2e %-6s %d\n", kernel, shape, ms, min, rate, ratio, relerr,
	       ok ? "OK" : "FAILED", nsets);
	fflush(stdout);
	if (b->json) {
		fprintf(b->json, "%s\n  {\"kernel\": \"%s\", \"shape\": \"%s\", \"ms\": %.6f, \"min_ms\": %.6f, ", b->njson ? "," : "",
		        kernel, shape, ms, min);
		if (tflops > 0)
			fprintf(b->json, "\"gbs\": null, \"tflops\": %.3f, ", tflops);
		else
			fprintf(b->json, "\"gbs\": %.3f, \"tflops\": null, ", gbs);
		fprintf(b->json, "\"relerr\": %.3e, \"ok\": %s, \"sets\": %d}", isfinite(relerr) ? relerr : -1.0,
		        ok ? "true" : "false", nsets);
		b->njson++;
	}
}

static void report_failure(bench *b, const char *kernel, const char *shape)
{
	b->failures++;
	printf("%-14s %-22s %9s %9s %16s %6s %9s %-6s\n", kernel, shape, "-", "-", "-", "-", "-", "ERROR");
	fflush(stdout);
}

static void fill_uniform(su_rng *r, float *x, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = su_uniform(r, lo, hi);
}

/* ||out - ref|| / ||ref|| accumulated in double; NaN if out is not finite. */
typedef struct err {
	double d2;     /* sum of (out - ref)^2 */
	double r2;     /* sum of ref^2 */
	int nonfinite; /* some out was NaN or infinite */
} err;

static void err_add(err *e, double out, double ref)
{
	if (!isfinite(out))
		e->nonfinite = 1;
	e->d2 += (out - ref) * (out - ref);
	e->r2 += ref * ref;
}

static double err_rel(const err *e)
{
	if (e->nonfinite)
		return NAN;
	return e->r2 > 0 ? sqrt(e->d2 / e->r2) : sqrt(e->d2);
}

/* ---- copy ------------------------------------------------------------------ */

typedef struct copy_ctx {
	float *src[MAX_SETS], *dst[MAX_SETS]; /* per set */
	size_t bytes;                         /* per copy */
} copy_ctx;

static pk_status launch_copy(bench *b, void *p, int set)
{
	copy_ctx *c = p;
	return pk_memcpy(b->stream, c->dst[set], c->src[set], c->bytes, PK_MEMCPY_DEVICE_TO_DEVICE);
}

static void bench_copy(bench *b, int64_t n)
{
	copy_ctx c = {{NULL}, {NULL}, (size_t)n * 4};
	int nsets = sets_for(2 * c.bytes);
	char shape[64];
	snprintf(shape, sizeof shape, "%lld f32", (long long)n);
	for (int s = 0; s < nsets; s++) {
		c.src[s] = dev_alloc(b, c.bytes);
		c.dst[s] = dev_alloc(b, c.bytes);
		if (!c.src[s] || !c.dst[s] || failed(pk_memset(b->stream, c.src[s], 0x3C, c.bytes), "pk_memset")) {
			report_failure(b, "copy (d2d)", shape);
			goto out;
		}
	}
	double ms, min;
	if (time_it(b, launch_copy, &c, nsets, "copy", &ms, &min)) {
		report_failure(b, "copy (d2d)", shape);
		goto out;
	}
	b->copy_gbs = 2.0 * (double)c.bytes / ms / 1e6;
	report(b, "copy (d2d)", shape, ms, min, b->copy_gbs, 0, 0.0, 0.0, nsets);
out:
	for (int s = 0; s < nsets; s++) {
		pk_free(b->dev, c.src[s]);
		pk_free(b->dev, c.dst[s]);
	}
}

/* ---- add --------------------------------------------------------------------- */

typedef struct add_ctx {
	float *x[MAX_SETS], *y[MAX_SETS], *o[MAX_SETS]; /* per set */
	int64_t n;                                      /* elements */
} add_ctx;

static pk_status launch_add(bench *b, void *p, int set)
{
	add_ctx *c = p;
	return bench_add(b->stream, c->x[set], c->y[set], c->o[set], c->n);
}

static void bench_add_run(bench *b, int64_t n, su_rng *r)
{
	add_ctx c = {{NULL}, {NULL}, {NULL}, n};
	size_t bytes = (size_t)n * 4;
	int nsets = sets_for(3 * bytes);
	char shape[64];
	snprintf(shape, sizeof shape, "%lld f32", (long long)n);
	float *hx = su_xmalloc(bytes), *hy = su_xmalloc(bytes), *ho = su_xmalloc(bytes);
	fill_uniform(r, hx, (size_t)n, -1, 1);
	fill_uniform(r, hy, (size_t)n, -1, 1);
	for (int s = 0; s < nsets; s++) {
		c.x[s] = dev_alloc(b, bytes);
		c.y[s] = dev_alloc(b, bytes);
		c.o[s] = dev_alloc(b, bytes);
		if (!c.x[s] || !c.y[s] || !c.o[s] || to_dev(b, c.x[s], hx, bytes) || to_dev(b, c.y[s], hy, bytes) ||
		    failed(pk_memset(b->stream, c.o[s], 0xFF, bytes), "pk_memset")) {
			report_failure(b, "add", shape);
			goto out;
		}
	}
	/* Check set 0 on every element (f32 addition is exact to compare). */
	if (failed(launch_add(b, &c, 0), "bench_add") || from_dev(b, ho, c.o[0], bytes)) {
		report_failure(b, "add", shape);
		goto out;
	}
	err e = {0, 0, 0};
	for (int64_t i = 0; i < n; i++)
		err_add(&e, ho[i], (double)hx[i] + (double)hy[i]);
	double ms, min;
	if (time_it(b, launch_add, &c, nsets, "bench_add", &ms, &min)) {
		report_failure(b, "add", shape);
		goto out;
	}
	report(b, "add", shape, ms, min, 3.0 * (double)bytes / ms / 1e6, 0, err_rel(&e), 1e-6, nsets);
out:
	for (int s = 0; s < nsets; s++) {
		pk_free(b->dev, c.x[s]);
		pk_free(b->dev, c.y[s]);
		pk_free(b->dev, c.o[s]);
	}
	free(hx);
	free(hy);
	free(ho);
}

/* ---- softmax and layernorm ------------------------------------------------------ */

typedef struct rows_ctx {
	float *x[MAX_SETS], *o[MAX_SETS]; /* per set */
	float *w, *bias;                  /* layernorm's weight and bias */
	float eps;                        /* layernorm's epsilon */
	int64_t rows;                     /* rows of LN_COLS */
	int layernorm;                    /* 0: softmax */
} rows_ctx;

static pk_status launch_rows(bench *b, void *p, int set)
{
	rows_ctx *c = p;
	if (c->layernorm)
		return bench_layernorm(b->stream, c->x[set], c->w, c->bias, c->eps, c->o[set], c->rows);
	return bench_softmax(b->stream, c->x[set], c->o[set], c->rows);
}

/* The reference of one row into ref (double). */
static void row_ref(const rows_ctx *c, const float *x, const float *w, const float *bias, double *ref)
{
	if (c->layernorm) {
		double mean = 0, var = 0;
		for (int j = 0; j < LN_COLS; j++)
			mean += x[j];
		mean /= LN_COLS;
		for (int j = 0; j < LN_COLS; j++)
			var += (x[j] - mean) * (x[j] - mean);
		var /= LN_COLS;
		double inv = 1.0 / sqrt(var + (double)c->eps);
		for (int j = 0; j < LN_COLS; j++)
			ref[j] = (x[j] - mean) * inv * w[j] + bias[j];
	} else {
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < LN_COLS; j++)
			mx = x[j] > mx ? x[j] : mx;
		for (int j = 0; j < LN_COLS; j++)
			sum += (ref[j] = exp(x[j] - mx));
		for (int j = 0; j < LN_COLS; j++)
			ref[j] /= sum;
	}
}

static void bench_rows(bench *b, int64_t rows, int layernorm, su_rng *r)
{
	const char *name = layernorm ? "layernorm" : "softmax";
	rows_ctx c = {{NULL}, {NULL}, NULL, NULL, 1e-5f, rows, layernorm};
	size_t n = (size_t)rows * LN_COLS, bytes = n * 4;
	int nsets = sets_for(2 * bytes);
	char shape[64];
	snprintf(shape, sizeof shape, "%lld x %d f32", (long long)rows, LN_COLS);
	float *hx = su_xmalloc(bytes), *hw = su_xmalloc(LN_COLS * 4), *hb = su_xmalloc(LN_COLS * 4);
	float *row = su_xmalloc(LN_COLS * 4);
	double *ref = su_xmalloc(LN_COLS * sizeof(double));
	fill_uniform(r, hx, n, -4, 4);
	fill_uniform(r, hw, LN_COLS, 0.5f, 1.5f);
	fill_uniform(r, hb, LN_COLS, -0.5f, 0.5f);
	c.w = dev_alloc(b, LN_COLS * 4);
	c.bias = dev_alloc(b, LN_COLS * 4);
	if (!c.w || !c.bias || to_dev(b, c.w, hw, LN_COLS * 4) || to_dev(b, c.bias, hb, LN_COLS * 4)) {
		report_failure(b, name, shape);
		goto out;
	}
	for (int s = 0; s < nsets; s++) {
		c.x[s] = dev_alloc(b, bytes);
		c.o[s] = dev_alloc(b, bytes);
		if (!c.x[s] || !c.o[s] || to_dev(b, c.x[s], hx, bytes) ||
		    failed(pk_memset(b->stream, c.o[s], 0xFF, bytes), "pk_memset")) {
			report_failure(b, name, shape);
			goto out;
		}
	}
	if (failed(launch_rows(b, &c, 0), name) || failed(pk_stream_synchronize(b->stream), name)) {
		report_failure(b, name, shape);
		goto out;
	}
	/* Check 64 rows spread over the matrix (and the last). */
	err e = {0, 0, 0};
	for (int k = 0; k <= 64; k++) {
		int64_t i = k < 64 ? k * rows / 64 : rows - 1;
		if (from_dev(b, row, c.o[0] + i * LN_COLS, LN_COLS * 4)) {
			report_failure(b, name, shape);
			goto out;
		}
		row_ref(&c, hx + i * LN_COLS, hw, hb, ref);
		for (int j = 0; j < LN_COLS; j++)
			err_add(&e, row[j], ref[j]);
	}
	double ms, min;
	if (time_it(b, launch_rows, &c, nsets, name, &ms, &min)) {
		report_failure(b, name, shape);
		goto out;
	}
	report(b, name, shape, ms, min, 2.0 * (double)bytes / ms / 1e6, 0, err_rel(&e), 1e-4, nsets);
out:
	for (int s = 0; s < nsets; s++) {
		pk_free(b->dev, c.x[s]);
		pk_free(b->dev, c.o[s]);
	}
	pk_free(b->dev, c.w);
	pk_free(b->dev, c.bias);
	free(hx);
	free(hw);
	free(hb);
	free(row);
	free(ref);
}

/* ---- matmul -------------------------------------------------------------------------- */

typedef struct mm_ctx {
	uint16_t *x[MAX_SETS], *y[MAX_SETS], *z[MAX_SETS]; /* per set: f16 or bf16 bits */
	int64_t m, n;                                      /* z is m x n; K is MATMUL_K */
	int bf16;                                          /* 0: f16 */
} mm_ctx;

static pk_status launch_mm(bench *b, void *p, int set)
{
	mm_ctx *c = p;
	if (c->bf16)
		return bench_matmul_bf16(b->stream, c->x[set], c->y[set], c->z[set], c->m, c->n);
	return bench_matmul_f16(b->stream, c->x[set], c->y[set], c->z[set], c->m, c->n);
}

static void bench_mm(bench *b, int64_t m, int64_t n, int bf16, su_rng *r)
{
	const char *name = bf16 ? "matmul-bf16" : "matmul-f16";
	mm_ctx c = {{NULL}, {NULL}, {NULL}, m, n, bf16};
	const int64_t K = MATMUL_K;
	size_t xb = (size_t)(m * K) * 2, yb = (size_t)(K * n) * 2, zb = (size_t)(m * n) * 2;
	int nsets = sets_for(xb + yb + zb);
	char shape[64];
	snprintf(shape, sizeof shape, "%lldx%lldx%lld %s", (long long)m, (long long)n, (long long)K, bf16 ? "bf16" : "f16");
	uint16_t *hx = su_xmalloc(xb), *hy = su_xmalloc(yb), *hz = su_xmalloc(zb);
	for (size_t i = 0; i < xb / 2; i++) {
		float v = su_uniform(r, -1, 1);
		hx[i] = bf16 ? su_f32_to_bf16(v) : su_f32_to_f16(v);
	}
	for (size_t i = 0; i < yb / 2; i++) {
		float v = su_uniform(r, -1, 1);
		hy[i] = bf16 ? su_f32_to_bf16(v) : su_f32_to_f16(v);
	}
	for (int s = 0; s < nsets; s++) {
		c.x[s] = dev_alloc(b, xb);
		c.y[s] = dev_alloc(b, yb);
		c.z[s] = dev_alloc(b, zb);
		if (!c.x[s] || !c.y[s] || !c.z[s] || to_dev(b, c.x[s], hx, xb) || to_dev(b, c.y[s], hy, yb) ||
		    failed(pk_memset(b->stream, c.z[s], 0xFF, zb), "pk_memset")) {
			report_failure(b, name, shape);
			goto out;
		}
	}
	if (failed(launch_mm(b, &c, 0), name) || from_dev(b, hz, c.z[0], zb)) {
		report_failure(b, name, shape);
		goto out;
	}
	/* 1024 sampled elements (and the corners) against a double reference. */
	err e = {0, 0, 0};
	for (int k = 0; k < 1028; k++) {
		int64_t i = k < 1024 ? su_int(r, 0, m - 1) : (k & 1 ? m - 1 : 0);
		int64_t j = k < 1024 ? su_int(r, 0, n - 1) : (k & 2 ? n - 1 : 0);
		double ref = 0;
		for (int64_t t = 0; t < K; t++) {
			double a = bf16 ? su_bf16_to_f32(hx[i * K + t]) : su_f16_to_f32(hx[i * K + t]);
			double bb = bf16 ? su_bf16_to_f32(hy[t * n + j]) : su_f16_to_f32(hy[t * n + j]);
			ref += a * bb;
		}
		uint16_t got = hz[i * n + j];
		err_add(&e, bf16 ? su_bf16_to_f32(got) : su_f16_to_f32(got), ref);
	}
	double ms, min;
	if (time_it(b, launch_mm, &c, nsets, name, &ms, &min)) {
		report_failure(b, name, shape);
		goto out;
	}
	report(b, name, shape, ms, min, 0, 2.0 * (double)m * (double)n * (double)K / ms / 1e9, err_rel(&e),
	       bf16 ? 2e-2 : 1e-2, nsets);
out:
	for (int s = 0; s < nsets; s++) {
		pk_free(b->dev, c.x[s]);
		pk_free(b->dev, c.y[s]);
		pk_free(b->dev, c.z[s]);
	}
	free(hx);
	free(hy);
	free(hz);
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_gpu [--device cuda|host] [--reps N] [--warmup N] [--json FILE] [--only k1,k2] "
	           "[--quick]\n  kernels: copy add softmax layernorm matmul-f16 matmul-bf16\n");
}

int main(int argc, char **argv)
{
	bench b = {0};
	b.reps = 25;
	b.warmup = 5;
	const char *device = getenv("PK_DEVICE");
	if (!device || !*device || !strcmp(device, "auto"))
		device = "cuda";
	const char *json = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quick")) {
			b.quick = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (v && !strcmp(a, "--device")) {
			device = v, i++;
		} else if (v && !strcmp(a, "--reps")) {
			b.reps = atoi(v), i++;
		} else if (v && !strcmp(a, "--warmup")) {
			b.warmup = atoi(v), i++;
		} else if (v && !strcmp(a, "--json")) {
			json = v, i++;
		} else if (v && !strcmp(a, "--only")) {
			b.only = v, i++;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (b.reps < 1 || b.warmup < 0) {
		usage(stderr);
		return 2;
	}
	pk_device_kind kind = !strcmp(device, "host") ? PK_DEVICE_HOST : PK_DEVICE_CUDA;
	if (failed(pk_device_get(kind, 0, &b.dev), "pk_device_get") ||
	    failed(pk_stream_create(b.dev, &b.stream), "pk_stream_create"))
		return 1;
	if (json && !(b.json = fopen(json, "w"))) {
		perror(json);
		return 1;
	}
	if (b.json)
		fprintf(b.json, "{\"device\": \"%s\", \"reps\": %d, \"warmup\": %d, \"rows\": [", pk_device_name(b.dev),
		        b.reps, b.warmup);
	printf("bench_gpu: %s, median of %d runs after %d warm-up runs (pk events)\n", pk_device_name(b.dev), b.reps,
	       b.warmup);
	printf("%-14s %-22s %9s %9s %16s %6s %9s %-6s %s\n", "kernel", "shape", "median_ms", "min_ms", "rate", "/copy",
	       "rel_err", "check", "sets");
	su_rng r = su_rng_new(12345);
	int64_t n = b.quick ? 1 << 20 : (int64_t)1 << 28;
	int64_t rows = b.quick ? 256 : 32768;
	int64_t mn = b.quick ? 256 : 8192;
	/* The copy always, first: the other rows' ratios refer to it. */
	bench_copy(&b, n);
	if (wanted(&b, "add"))
		bench_add_run(&b, n, &r);
	if (wanted(&b, "softmax"))
		bench_rows(&b, rows, 0, &r);
	if (wanted(&b, "layernorm"))
		bench_rows(&b, rows, 1, &r);
	if (wanted(&b, "matmul-f16"))
		bench_mm(&b, mn, mn, 0, &r);
	if (wanted(&b, "matmul-bf16"))
		bench_mm(&b, mn, mn, 1, &r);
	if (b.json) {
		fprintf(b.json, "\n]}\n");
		fclose(b.json);
	}
	pk_stream_destroy(b.stream);
	printf("bench_gpu: %s\n", b.failures ? "some kernels FAILED" : "all kernels OK");
	return b.failures ? 1 : 0;
}
