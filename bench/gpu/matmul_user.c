/* matmul_user: times the kernels bench/gpu/user_matmul.sh generates
 * (matmuls written as users write them: user_list.h names them) on the
 * shapes of issue 13, on the CUDA device.  Each kernel is checked first
 * (1024 sampled elements and the corners against a double reference,
 * output poisoned before), then timed: `--warmup` launches, then `--reps`
 * launches each between a pair of pk events, queued back to back
 * (bench_time.h); the median gives TFLOP/s.
 * One buffer set per shape (the operands of the large shapes exceed L2).
 *
 *   matmul_user [--reps N] [--warmup N] [--only SUBSTRING]
 *
 * SHAPES="MxNxK ..." in the environment replaces the default shapes; a
 * kernel whose config names the relu epilogue is checked against
 * max(reference, 0).
 *
 * Prints one row per kernel and shape: name, config, shape, median ms,
 * TFLOP/s, relative error, OK/FAILED; exit status 1 if any failed. */
#include "pk_runtime.h"
#include "bench_time.h"
#include "sample_util.h"
#include "user.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef pk_status (*spec_fn)(pk_stream *, const void *, const void *, void *, int64_t, int64_t);
typedef pk_status (*ds_fn)(pk_stream *, const void *, const void *, void *, int64_t, int64_t, int64_t);

typedef struct um {
	const char *name, *config;
	int bf16;
	int64_t K;      /* spec kernels: their constant K; ds: 0 */
	spec_fn spec;
	ds_fn ds;
} um;

#define UM_SPEC(n, c, bf, k) {#n, c, bf, k, (spec_fn)n, NULL},
#define UM_DS(n, c, bf) {#n, c, bf, 0, NULL, (ds_fn)n},
static const um kernels[] = {
#include "user_list.h"
};
#define NK ((int)(sizeof kernels / sizeof kernels[0]))

enum { MAX_SHAPES = 16 };
static int64_t shapes[MAX_SHAPES][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {8192, 8192, 1024}, {16384, 1024, 4096}};
static int NS = 4;

/* SHAPES="MxNxK ...": the shapes to run instead of the default ones. */
static void read_shapes(const char *env)
{
	if (!env || !*env)
		return;
	NS = 0;
	for (const char *p = env; *p && NS < MAX_SHAPES;) {
		long long m, n, k;
		int used = 0;
		if (sscanf(p, " %lldx%lldx%lld%n", &m, &n, &k, &used) != 3 || m < 1 || n < 1 || k < 1)
			break;
		shapes[NS][0] = m, shapes[NS][1] = n, shapes[NS][2] = k;
		NS++;
		p += used;
	}
}

static int fail(pk_status st, const char *what)
{
	if (st == PK_SUCCESS)
		return 0;
	fprintf(stderr, "matmul_user: %s: %s: %s\n", what, pk_status_name(st), pk_last_error());
	return 1;
}

static double to_f(uint16_t v, int bf16)
{
	return bf16 ? su_bf16_to_f32(v) : su_f16_to_f32(v);
}

typedef struct run {
	pk_stream *s;
	pk_device *dev;
	int reps, warmup;
} run;

static pk_status launch(const um *k, pk_stream *s, void *x, void *y, void *z, int64_t m, int64_t n, int64_t K)
{
	return k->spec ? k->spec(s, x, y, z, m, n) : k->ds(s, x, y, z, m, K, n);
}

/* One kernel's launch on one shape, as bench_time_launches calls it. */
typedef struct timed {
	const um *k;
	pk_stream *s;
	void *x, *y, *z;
	int64_t m, n, K;
} timed;

static pk_status timed_launch(void *ctx, long long rep)
{
	(void)rep;
	const timed *t = ctx;
	return launch(t->k, t->s, t->x, t->y, t->z, t->m, t->n, t->K);
}

int main(int argc, char **argv)
{
	run R = {NULL, NULL, 20, 3};
	const char *only = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--reps"))
			R.reps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--warmup"))
			R.warmup = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--only"))
			only = argv[i + 1];
	}
	if (R.reps < 1)
		R.reps = 1;
	read_shapes(getenv("SHAPES"));
	if (fail(pk_device_get(PK_DEVICE_CUDA, 0, &R.dev), "pk_device_get") ||
	    fail(pk_stream_create(R.dev, &R.s), "pk_stream_create"))
		return 1;
	printf("matmul_user: %s, median of %d launches after %d\n", pk_device_name(R.dev), R.reps, R.warmup);
	printf("%-22s %-24s %-22s %9s %9s %9s %s\n", "kernel", "config", "shape", "ms", "TFLOP/s", "relerr", "check");
	int failures = 0;
	su_rng r = su_rng_new(4242);
	double *t = malloc(sizeof(double) * (size_t)R.reps);
	for (int sh = 0; sh < NS; sh++) {
		int64_t m = shapes[sh][0], n = shapes[sh][1], K = shapes[sh][2];
		size_t xb = (size_t)(m * K) * 2, yb = (size_t)(K * n) * 2, zb = (size_t)(m * n) * 2;
		for (int bf = 0; bf < 2; bf++) {
			int any = 0;
			for (int k = 0; k < NK; k++)
				any |= kernels[k].bf16 == bf && (!kernels[k].K || kernels[k].K == K) &&
				       (!only || strstr(kernels[k].name, only));
			if (!any)
				continue;
			uint16_t *hx = su_xmalloc(xb), *hy = su_xmalloc(yb), *hz = su_xmalloc(zb);
			for (size_t i = 0; i < xb / 2; i++)
				hx[i] = bf ? su_f32_to_bf16(su_uniform(&r, -1, 1)) : su_f32_to_f16(su_uniform(&r, -1, 1));
			for (size_t i = 0; i < yb / 2; i++)
				hy[i] = bf ? su_f32_to_bf16(su_uniform(&r, -1, 1)) : su_f32_to_f16(su_uniform(&r, -1, 1));
			void *dx = NULL, *dy = NULL, *dz = NULL;
			if (fail(pk_malloc(R.dev, xb, &dx), "pk_malloc") || fail(pk_malloc(R.dev, yb, &dy), "pk_malloc") ||
			    fail(pk_malloc(R.dev, zb, &dz), "pk_malloc") ||
			    fail(pk_memcpy(R.s, dx, hx, xb, PK_MEMCPY_HOST_TO_DEVICE), "pk_memcpy") ||
			    fail(pk_memcpy(R.s, dy, hy, yb, PK_MEMCPY_HOST_TO_DEVICE), "pk_memcpy"))
				return 1;
			/* The sampled reference, once per shape and dtype. */
			enum { NSAMP = 1028 };
			static int64_t si[NSAMP], sj[NSAMP];
			static double ref[NSAMP];
			for (int q = 0; q < NSAMP; q++) {
				si[q] = q < 1024 ? su_int(&r, 0, m - 1) : (q & 1 ? m - 1 : 0);
				sj[q] = q < 1024 ? su_int(&r, 0, n - 1) : (q & 2 ? n - 1 : 0);
				double acc = 0;
				for (int64_t e = 0; e < K; e++)
					acc += to_f(hx[si[q] * K + e], bf) * to_f(hy[e * n + sj[q]], bf);
				ref[q] = acc;
			}
			char shape[64];
			snprintf(shape, sizeof shape, "%lldx%lldx%lld %s", (long long)m, (long long)n, (long long)K,
			         bf ? "bf16" : "f16");
			for (int k = 0; k < NK; k++) {
				const um *u = &kernels[k];
				if (u->bf16 != bf || (u->K && u->K != K) || (only && !strstr(u->name, only)))
					continue;
				double ms = NAN, d2 = 0, r2 = 0;
				int relu = strstr(u->config, "relu") != NULL;
				int bad = fail(pk_memset(R.s, dz, 0xFF, zb), "pk_memset") ||
				          fail(launch(u, R.s, dx, dy, dz, m, n, K), u->name) ||
				          fail(pk_memcpy(R.s, hz, dz, zb, PK_MEMCPY_DEVICE_TO_HOST), "pk_memcpy") ||
				          fail(pk_stream_synchronize(R.s), u->name);
				for (int q = 0; q < NSAMP && !bad; q++) {
					double got = to_f(hz[si[q] * n + sj[q]], bf), want = relu && ref[q] < 0 ? 0 : ref[q];
					if (!isfinite(got))
						bad = 1;
					d2 += (got - want) * (got - want);
					r2 += want * want;
				}
				if (!bad) {
					timed tl = {u, R.s, dx, dy, dz, m, n, K};
					const char *what;
					pk_status st = bench_time_launches(R.dev, R.s, R.warmup, R.reps, timed_launch, &tl, t, &what);
					bad = fail(st, strcmp(what, "launch") ? what : u->name);
				}
				double rel = r2 > 0 ? sqrt(d2 / r2) : NAN;
				if (!bad)
					ms = bench_time_median(t, R.reps);
				int ok = !bad && rel <= (bf ? 2e-2 : 1e-2);
				failures += !ok;
				printf("%-22s %-24s %-22s %9.4f %9.1f %9.2e %s\n", u->name, u->config, shape, ms,
				       2.0 * (double)m * (double)n * (double)K / ms / 1e9, rel, ok ? "OK" : "FAILED");
				fflush(stdout);
			}
			pk_free(R.dev, dx);
			pk_free(R.dev, dy);
			pk_free(R.dev, dz);
			free(hx);
			free(hy);
			free(hz);
		}
	}
	free(t);
	printf("matmul_user: %s\n", failures ? "some kernels FAILED" : "all kernels OK");
	return failures ? 1 : 0;
}
