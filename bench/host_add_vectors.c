/* bench/host_add_vectors.c - memory bandwidth of the host add_vectors kernel
 * (samples/add_vectors.pk, compiled by pkc, run on libpkrt's thread pool)
 * against this machine's memcpy bandwidth.  Built and run by bench/host.sh.
 *
 *   host_add_vectors [--log2n N] [--runs R] [--warmup W] [--threads T] [--only pkc|memcpy]
 *                    [--tag TEXT]
 *
 * Every measurement is the median wall time (CLOCK_MONOTONIC) of R runs
 * after W warm-up runs (the bandwidth of the fastest run is shown as "best"), over n = 2^N f32 elements (default N = 26, three
 * 256 MiB buffers from pk_malloc, every page touched before timing).
 * Bandwidth counts the bytes the program asks for, 1 GB = 1e9 bytes:
 *   add o = x + y   12 bytes per element (read x and y, write o)
 *   memcpy o <- x    8 bytes per element (read x, write o)
 * (Stores to lines that are not in cache also read them first unless the
 * code uses non-temporal stores; that traffic is not counted.)
 * Baselines: glibc memcpy on 1 thread and on T threads (default 2; each
 * copies a contiguous share, the calling thread included), and a plain C
 * loop o[i] = x[i] + y[i] (as vectorised by the compiler of this file: host.sh
 * uses -O3) on 1 and T threads.  The pkc kernel runs on pk_host_num_threads() threads
 * (the CPUs this process may use, or PK_NUM_THREADS). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "add_vectors.h"

#define MAX_RUNS 1000
#define MAX_THREADS 64

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- a fixed team of threads for the baselines ------------------------------- */

typedef enum { OP_MEMCPY, OP_ADD, OP_EXIT } op_kind;

static struct {
	int nthreads; /* team size, the calling thread included */
	pthread_barrier_t start, done;
	op_kind op;
	float *o;
	const float *x, *y;
	size_t n;
} team;

/* Thread `t` of `nthreads` does its contiguous share, rounded to 16
 * elements (64 bytes) so shares do not split cache lines. */
static void share(int t, int nthreads, size_t n, size_t *lo, size_t *hi)
{
	size_t per = (n / nthreads + 15) / 16 * 16;
	*lo = per * t < n ? per * t : n;
	*hi = per * (t + 1) < n && t + 1 < nthreads ? per * (t + 1) : n;
}

/* The reference loop; noinline so the compiler cannot specialise it per call. */
__attribute__((noinline)) static void add_loop(float *restrict o, const float *restrict x,
                                               const float *restrict y, size_t lo, size_t hi)
{
	for (size_t i = lo; i < hi; i++)
		o[i] = x[i] + y[i];
}

static void do_share(int t)
{
	size_t lo, hi;
	share(t, team.nthreads, team.n, &lo, &hi);
	if (team.op == OP_MEMCPY)
		memcpy(team.o + lo, team.x + lo, (hi - lo) * sizeof(float));
	else if (team.op == OP_ADD)
		add_loop(team.o, team.x, team.y, lo, hi);
}

static void *team_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	for (;;) {
		pthread_barrier_wait(&team.start);
		if (team.op == OP_EXIT)
			return NULL;
		do_share(t);
		pthread_barrier_wait(&team.done);
	}
}

/* Runs op on nthreads threads: the team when nthreads > 1, else inline. */
static void team_run(op_kind op, int nthreads)
{
	team.op = op;
	if (nthreads == 1) {
		size_t lo = 0, hi = team.n;
		if (op == OP_MEMCPY)
			memcpy(team.o, team.x, team.n * sizeof(float));
		else
			add_loop(team.o, team.x, team.y, lo, hi);
		return;
	}
	pthread_barrier_wait(&team.start);
	do_share(0);
	pthread_barrier_wait(&team.done);
}

/* ---- measuring ----------------------------------------------------------------- */

typedef enum { RUN_PKC, RUN_MEMCPY, RUN_ADD_LOOP } run_kind;

static int runs = 15, warmup = 3;
static double last_min; /* the fastest run of the last measure() */

/* The median time of one operation, in seconds. */
static double measure(run_kind kind, int nthreads, float *o, const float *x, const float *y, size_t n)
{
	double t[MAX_RUNS];
	for (int r = -warmup; r < runs; r++) {
		double t0 = now();
		if (kind == RUN_PKC) {
			pk_status st = add_vectors(NULL, x, y, o, (int64_t)n);
			if (st != PK_SUCCESS) {
				fprintf(stderr, "add_vectors: %s: %s\n", pk_status_name(st), pk_last_error());
				exit(1);
			}
		} else {
			team_run(kind == RUN_MEMCPY ? OP_MEMCPY : OP_ADD, nthreads);
		}
		double dt = now() - t0;
		if (r >= 0)
			t[r] = dt;
	}
	qsort(t, runs, sizeof t[0], cmp_double);
	last_min = t[0];
	return runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
}

static double report(const char *what, double bytes_per_elem, double sec, size_t n)
{
	double gbs = bytes_per_elem * (double)n / sec / 1e9;
	printf("  %-56s %2.0f B/elem %9.2f ms %8.2f GB/s  (best %.2f)\n", what, bytes_per_elem, sec * 1e3, gbs,
	       bytes_per_elem * (double)n / last_min / 1e9);
	return gbs;
}

static int check_sum(const float *o, const float *x, const float *y, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (o[i] != x[i] + y[i]) {
			fprintf(stderr, "%s: wrong result at %zu: %g + %g gave %g\n", what, i, x[i], y[i], o[i]);
			return 1;
		}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: host_add_vectors [--log2n N] [--runs R] [--warmup W] [--threads T] [--only pkc|memcpy] [--tag TEXT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int log2n = 26, nthreads = 2;
	const char *only = "", *tag = "";
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--only"))
			only = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--tag"))
			tag = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--log2n"))
			log2n = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--runs"))
			runs = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--warmup"))
			warmup = atoi(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--threads"))
			nthreads = atoi(argv[++i]);
		else
			usage();
	}
	if (log2n < 4 || log2n > 32 || runs < 1 || runs > MAX_RUNS || warmup < 0 || nthreads < 1 ||
	    nthreads > MAX_THREADS || (*only && strcmp(only, "pkc") && strcmp(only, "memcpy")))
		usage();
	size_t n = (size_t)1 << log2n;

	pk_device *dev;
	float *x, *y, *o;
	pk_status st;
	if ((st = pk_device_get(PK_DEVICE_HOST, 0, &dev)) != PK_SUCCESS ||
	    (st = pk_malloc(dev, n * sizeof *x, (void **)&x)) != PK_SUCCESS ||
	    (st = pk_malloc(dev, n * sizeof *y, (void **)&y)) != PK_SUCCESS ||
	    (st = pk_malloc(dev, n * sizeof *o, (void **)&o)) != PK_SUCCESS) {
		fprintf(stderr, "setup: %s: %s\n", pk_status_name(st), pk_last_error());
		return 1;
	}
	/* Touch every page (small integers: every sum is exact). */
	for (size_t i = 0; i < n; i++) {
		x[i] = (float)(i & 1023);
		y[i] = (float)((i >> 10) & 1023);
		o[i] = -1.0f;
	}

	int pool = pk_host_num_threads();
	printf("host add_vectors: n = 2^%d f32 (3 buffers of %zu MiB), median of %d runs after %d warm-up\n",
	       log2n, n * sizeof(float) >> 20, runs, warmup);
	char what[96];
	double add_gbs = 0;
	int team_started = 0;
	pthread_t tids[MAX_THREADS];
	if (strcmp(only, "memcpy")) {
		snprintf(what, sizeof what, "pkc add_vectors%s (libpkrt pool, %d thread%s)", tag, pool, pool == 1 ? "" : "s");
		add_gbs = report(what, 12, measure(RUN_PKC, pool, o, x, y, n), n);
		if (check_sum(o, x, y, n, "pkc add_vectors"))
			return 1;
		if (!strcmp(only, "pkc"))
			goto done;
	}

	team.nthreads = nthreads;
	team.o = o;
	team.x = x;
	team.y = y;
	team.n = n;
	if (nthreads > 1) {
		if (pthread_barrier_init(&team.start, NULL, nthreads) || pthread_barrier_init(&team.done, NULL, nthreads)) {
			fprintf(stderr, "pthread_barrier_init failed\n");
			return 1;
		}
		for (int t = 1; t < nthreads; t++)
			if (pthread_create(&tids[t], NULL, team_main, (void *)(intptr_t)t)) {
				fprintf(stderr, "pthread_create failed\n");
				return 1;
			}
		team_started = 1;
	}
	snprintf(what, sizeof what, "memcpy%s, 1 thread", tag);
	double cp1 = report(what, 8, measure(RUN_MEMCPY, 1, o, x, y, n), n);
	snprintf(what, sizeof what, "memcpy%s, %d threads", tag, nthreads);
	double cpn = nthreads > 1 ? report(what, 8, measure(RUN_MEMCPY, nthreads, o, x, y, n), n) : cp1;
	if (memcmp(o, x, n * sizeof *o)) {
		fprintf(stderr, "memcpy: wrong result\n");
		return 1;
	}
	if (!strcmp(only, "memcpy"))
		goto done;
	report("C loop o[i] = x[i] + y[i], 1 thread", 12, measure(RUN_ADD_LOOP, 1, o, x, y, n), n);
	if (nthreads > 1) {
		snprintf(what, sizeof what, "C loop o[i] = x[i] + y[i], %d threads", nthreads);
		report(what, 12, measure(RUN_ADD_LOOP, nthreads, o, x, y, n), n);
	}
	if (check_sum(o, x, y, n, "C loop"))
		return 1;
	printf("  ratio pkc add / memcpy %d threads: %.2f   (target >= 0.5)\n", nthreads, add_gbs / cpn);
	printf("  ratio pkc add / memcpy 1 thread:  %.2f\n", add_gbs / cp1);

done:
	if (team_started) {
		team.op = OP_EXIT;
		pthread_barrier_wait(&team.start);
		for (int t = 1; t < nthreads; t++)
			pthread_join(tids[t], NULL);
	}
	pk_free(dev, x);
	pk_free(dev, y);
	pk_free(dev, o);
	return 0;
}
