/* rt_test.c - tests of libpkrt: statuses and per-thread errors, devices,
 * streams, buffers, and pk_launch_host (every grid point exactly once,
 * ordering along arbitrary axes, real concurrency, concurrent and nested
 * launches, invalid grids).
 *
 * Prints "rt_test: N checks passed" and exits 0, or lists the failed checks
 * and exits 1.  Run it with PK_NUM_THREADS unset, =1 and =N (the pool size
 * is fixed per process); the checks adapt to the pool size. */
#define _POSIX_C_SOURCE 200809L
#include "pk_runtime.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- checking: CHECK, CHECK_OK, CHECK_FAILS, check_summary ---------------- */

#include "rt_check.h"

/* A small id per thread (0, 1, 2... in order of first use). */
#define MAX_TIDS 4096
static atomic_int next_tid;
static _Thread_local int my_tid_value = -1;

static int my_tid(void)
{
	if (my_tid_value < 0)
		my_tid_value = atomic_fetch_add(&next_tid, 1);
	return my_tid_value;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static pk_device *host(void)
{
	pk_device *d = NULL;
	pk_device_get(PK_DEVICE_HOST, 0, &d);
	return d;
}

/* ---- statuses and errors ------------------------------------------------------ */

static void test_status(void)
{
	static const pk_status all[] = {
		PK_SUCCESS, PK_ERR_INVALID_VALUE, PK_ERR_OUT_OF_MEMORY, PK_ERR_NO_DEVICE,
		PK_ERR_LAUNCH_FAILED, PK_ERR_SIZE_CONSTRAINT, PK_ERR_NO_KERNEL_FOR_DEVICE,
		PK_ERR_NOT_SUPPORTED, PK_ERR_DRIVER, PK_ERR_INTERNAL,
	};
	size_t n = sizeof all / sizeof all[0];
	CHECK(PK_SUCCESS == 0);
	for (size_t i = 0; i < n; i++) {
		const char *s = pk_status_string(all[i]);
		const char *name = pk_status_name(all[i]);
		CHECK(s && *s && strcmp(s, "unknown status") != 0);
		CHECK(name && strncmp(name, "PK_", 3) == 0);
		for (size_t j = 0; j < i; j++) {
			CHECK(strcmp(s, pk_status_string(all[j])) != 0);
			CHECK(strcmp(name, pk_status_name(all[j])) != 0);
		}
	}
	CHECK(strcmp(pk_status_name(PK_ERR_SIZE_CONSTRAINT), "PK_ERR_SIZE_CONSTRAINT") == 0);
	CHECK(strcmp(pk_status_string(PK_SUCCESS), "no error") == 0);
	CHECK(strcmp(pk_status_string((pk_status)999), "unknown status") == 0);
	CHECK(strcmp(pk_status_string((pk_status)-1), "unknown status") == 0);
	CHECK(strcmp(pk_status_name((pk_status)999), "PK_ERR_UNKNOWN") == 0);
}

static void *error_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	/* A new thread starts without an error, whatever other threads did. */
	CHECK(strcmp(pk_last_error(), "") == 0);
	char want[64];
	snprintf(want, sizeof want, "thread %d failed", id);
	int ok = 1;
	for (int i = 0; i < 2000 && ok; i++) {
		ok &= pk_set_error(PK_ERR_LAUNCH_FAILED, "thread %d failed", id) == PK_ERR_LAUNCH_FAILED;
		ok &= strcmp(pk_last_error(), want) == 0; /* no other thread's text */
	}
	CHECK(ok);
	return NULL;
}

static void test_errors(void)
{
	pk_clear_error();
	CHECK(strcmp(pk_last_error(), "") == 0);
	CHECK(pk_set_error(PK_ERR_SIZE_CONSTRAINT, "add_vectors: requires n %% 16 == 0 failed (n = %d)", 10) ==
	      PK_ERR_SIZE_CONSTRAINT);
	CHECK(strcmp(pk_last_error(), "add_vectors: requires n % 16 == 0 failed (n = 10)") == 0);

	/* Successful calls leave the message alone. */
	int n;
	CHECK_OK(pk_device_count(PK_DEVICE_HOST, &n));
	CHECK(strcmp(pk_last_error(), "add_vectors: requires n % 16 == 0 failed (n = 10)") == 0);

	/* The message may quote the previous one. */
	pk_set_error(PK_ERR_LAUNCH_FAILED, "wrapped: %s", pk_last_error());
	CHECK(strcmp(pk_last_error(), "wrapped: add_vectors: requires n % 16 == 0 failed (n = 10)") == 0);

	CHECK(pk_set_error(PK_ERR_OUT_OF_MEMORY, NULL) == PK_ERR_OUT_OF_MEMORY);
	CHECK(strcmp(pk_last_error(), pk_status_string(PK_ERR_OUT_OF_MEMORY)) == 0);

	/* Long messages are truncated, not overflowed. */
	char *big = malloc(5000);
	memset(big, 'x', 4999);
	big[4999] = '\0';
	pk_set_error(PK_ERR_INTERNAL, "%s", big);
	CHECK(strlen(pk_last_error()) == 1023);
	free(big);

	CHECK(pk_set_error(PK_SUCCESS, "ignored") == PK_SUCCESS);
	CHECK(strcmp(pk_last_error(), "") == 0);

	/* Per thread: other threads' errors do not show here, and vice versa. */
	pk_set_error(PK_ERR_NO_DEVICE, "main thread error");
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, error_thread, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(strcmp(pk_last_error(), "main thread error") == 0);
	pk_clear_error();
}

/* ---- devices, streams, buffers ------------------------------------------------ */

static void test_devices(void)
{
	int n = -1;
	CHECK_OK(pk_device_count(PK_DEVICE_HOST, &n));
	CHECK(n == 1);
	int ncuda = -1; /* 0 without a CUDA driver (test/runtime/cuda.test covers CUDA) */
	CHECK_OK(pk_device_count(PK_DEVICE_CUDA, &ncuda));
	CHECK(ncuda >= 0);
	CHECK_FAILS(pk_device_count(PK_DEVICE_HOST, NULL), PK_ERR_INVALID_VALUE, "NULL");
	CHECK_FAILS(pk_device_count((pk_device_kind)42, &n), PK_ERR_INVALID_VALUE, "unknown device kind 42");

	pk_device *d = NULL, *d2 = NULL;
	CHECK_OK(pk_device_get(PK_DEVICE_HOST, 0, &d));
	CHECK(d != NULL);
	CHECK(pk_device_kind_of(d) == PK_DEVICE_HOST);
	CHECK_OK(pk_device_get(PK_DEVICE_HOST, 0, &d2));
	CHECK(d2 == d);
	CHECK(strncmp(pk_device_name(d), "host (", 6) == 0);
	CHECK(strcmp(pk_device_name(NULL), pk_device_name(d)) == 0);
	CHECK(pk_device_kind_of(NULL) == PK_DEVICE_HOST);

	CHECK_FAILS(pk_device_get(PK_DEVICE_HOST, 1, &d2), PK_ERR_INVALID_VALUE, "ordinal 1");
	CHECK(d2 == NULL);
	d2 = d;
	if (ncuda == 0) {
		CHECK_FAILS(pk_device_get(PK_DEVICE_CUDA, 0, &d2), PK_ERR_NO_DEVICE, "CUDA");
		CHECK(d2 == NULL);
	}
	CHECK_FAILS(pk_device_get((pk_device_kind)7, 0, &d2), PK_ERR_INVALID_VALUE, "unknown device kind 7");
	CHECK_FAILS(pk_device_get(PK_DEVICE_HOST, 0, NULL), PK_ERR_INVALID_VALUE, "NULL");
}

static void test_streams(void)
{
	pk_device *d = host();
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(d, &s));
	CHECK(s != NULL);
	CHECK(pk_stream_device(s) == d);
	CHECK_OK(pk_stream_synchronize(s));
	CHECK_OK(pk_stream_destroy(s));

	CHECK(pk_stream_device(NULL) == d);
	CHECK_OK(pk_stream_synchronize(NULL));
	CHECK_OK(pk_stream_destroy(NULL));

	s = (pk_stream *)d; /* garbage that must be overwritten */
	CHECK_FAILS(pk_stream_create(NULL, &s), PK_ERR_INVALID_VALUE, "device is NULL");
	CHECK(s == NULL);
	CHECK_FAILS(pk_stream_create(d, NULL), PK_ERR_INVALID_VALUE, "NULL");
}

static void test_buffers(void)
{
	pk_device *d = host();
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(d, &s));

	static const size_t sizes[] = {0, 1, 63, 64, 65, 1000, 1u << 20};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		void *p = NULL;
		CHECK_OK(pk_malloc(d, sizes[i], &p));
		CHECK(p != NULL);
		CHECK((uintptr_t)p % PK_HOST_ALIGNMENT == 0);
		CHECK_OK(pk_memset(i % 2 ? s : NULL, p, 0xAB, sizes[i]));
		int ok = 1;
		for (size_t k = 0; k < sizes[i]; k++)
			ok &= ((unsigned char *)p)[k] == 0xAB;
		CHECK(ok);
		CHECK_OK(pk_free(d, p));
	}
	void *z1 = NULL, *z2 = NULL;
	CHECK_OK(pk_malloc(d, 0, &z1));
	CHECK_OK(pk_malloc(d, 0, &z2));
	CHECK(z1 && z2 && z1 != z2); /* 0 bytes still gives unique pointers */
	pk_free(d, z1);
	pk_free(d, z2);

	/* Round trip host -> device -> device -> host on both streams. */
	enum { N = 1000 };
	int src[N], dst[N];
	for (int i = 0; i < N; i++) {
		src[i] = i * 7 - 3;
		dst[i] = 0;
	}
	void *a = NULL, *b = NULL;
	CHECK_OK(pk_malloc(d, sizeof src, &a));
	CHECK_OK(pk_malloc(d, sizeof src, &b));
	CHECK_OK(pk_memcpy(s, a, src, sizeof src, PK_MEMCPY_HOST_TO_DEVICE));
	CHECK_OK(pk_memcpy(NULL, b, a, sizeof src, PK_MEMCPY_DEVICE_TO_DEVICE));
	CHECK_OK(pk_memcpy(s, dst, b, sizeof src, PK_MEMCPY_DEVICE_TO_HOST));
	CHECK_OK(pk_stream_synchronize(s));
	CHECK(memcmp(src, dst, sizeof src) == 0);
	/* memset uses the low byte of value. */
	CHECK_OK(pk_memset(s, a, 0x1FF, sizeof src));
	CHECK(((unsigned char *)a)[0] == 0xFF && ((unsigned char *)a)[sizeof src - 1] == 0xFF);

	/* Errors. */
	void *p = a;
	CHECK_FAILS(pk_malloc(NULL, 16, &p), PK_ERR_INVALID_VALUE, "device is NULL");
	CHECK(p == NULL);
	CHECK_FAILS(pk_malloc(d, 16, NULL), PK_ERR_INVALID_VALUE, "NULL");
	p = a;
	CHECK_FAILS(pk_malloc(d, SIZE_MAX - 10, &p), PK_ERR_OUT_OF_MEMORY, "cannot allocate");
	CHECK(p == NULL);
	CHECK_OK(pk_free(d, NULL));
	CHECK_FAILS(pk_free(NULL, a), PK_ERR_INVALID_VALUE, "device is NULL");
	CHECK_FAILS(pk_memcpy(s, NULL, src, 4, PK_MEMCPY_HOST_TO_DEVICE), PK_ERR_INVALID_VALUE, "dst is NULL");
	CHECK_FAILS(pk_memcpy(s, a, NULL, 4, PK_MEMCPY_HOST_TO_DEVICE), PK_ERR_INVALID_VALUE, "src is NULL");
	CHECK_FAILS(pk_memcpy(s, a, b, 4, (pk_memcpy_kind)9), PK_ERR_INVALID_VALUE, "unknown copy kind 9");
	CHECK_OK(pk_memcpy(s, NULL, NULL, 0, PK_MEMCPY_DEVICE_TO_DEVICE));
	CHECK_FAILS(pk_memset(s, NULL, 0, 4), PK_ERR_INVALID_VALUE, "dst is NULL");
	CHECK_OK(pk_memset(s, NULL, 0, 0));

	CHECK_OK(pk_free(d, a));
	CHECK_OK(pk_free(d, b));
	CHECK_OK(pk_stream_destroy(s));
}

/* ---- launch: every point exactly once ------------------------------------------ */

typedef struct count_args {
	int ngrid;               /* grid rank */
	int64_t ext[PK_MAX_GRID]; /* extents */
	atomic_int *hits;        /* one counter per grid point (row-major) */
	atomic_int bad;          /* programs that saw an inconsistent pid/nprog */
} count_args;

/* The last order_program this thread ran (see order_program); other
 * programs reset it, so a program of another task or launch running in
 * the middle of a task is caught. */
static _Thread_local const void *tl_last_args;
static _Thread_local int tl_last_row, tl_last_idx;

static void count_program(void *vargs, const int32_t *pid, const int32_t *nprog)
{
	count_args *a = vargs;
	tl_last_args = NULL;
	int64_t lin = 0;
	for (int k = 0; k < PK_MAX_GRID; k++) {
		if (k < a->ngrid) {
			if (nprog[k] != a->ext[k] || pid[k] < 0 || pid[k] >= nprog[k]) {
				atomic_fetch_add(&a->bad, 1);
				return;
			}
			lin = lin * a->ext[k] + pid[k];
		} else if (pid[k] != 0 || nprog[k] != 1) {
			atomic_fetch_add(&a->bad, 1);
			return;
		}
	}
	atomic_fetch_add_explicit(&a->hits[lin], 1, memory_order_relaxed);
}

/* Launches a grid of count_program and checks that every point ran once.
 * Returns 1 when all is well (for the callers that loop). */
static int run_count(pk_stream *s, int ngrid, const int64_t *ext, const uint8_t *par)
{
	count_args a;
	memset(&a, 0, sizeof a);
	a.ngrid = ngrid;
	int64_t total = 1;
	for (int k = 0; k < ngrid; k++) {
		a.ext[k] = ext[k];
		total *= ext[k];
	}
	a.hits = calloc((size_t)(total > 0 ? total : 1), sizeof *a.hits);
	atomic_init(&a.bad, 0);
	pk_host_launch l = {"count", count_program, &a, ngrid, ext, par};
	pk_status st = pk_launch_host(s, &l);
	int ok = st == PK_SUCCESS && atomic_load(&a.bad) == 0;
	for (int64_t i = 0; i < total; i++)
		ok &= atomic_load_explicit(&a.hits[i], memory_order_relaxed) == 1;
	if (!ok) {
		fprintf(stderr, "  count launch of rank %d (", ngrid);
		for (int k = 0; k < ngrid; k++)
			fprintf(stderr, "%s%" PRId64 "%s", k ? ", " : "", ext[k], par && par[k] ? "p" : "a");
		fprintf(stderr, ") failed: %s %s\n", pk_status_name(st), pk_last_error());
	}
	free(a.hits);
	return ok;
}

static void test_launch_counts(void)
{
	static const uint8_t P[PK_MAX_GRID] = {1, 1, 1, 1, 1, 1, 1, 1};
	static const uint8_t A[PK_MAX_GRID] = {0};

	/* 0-D: one program; grid may be NULL. */
	CHECK(run_count(NULL, 0, NULL, NULL));
	CHECK(run_count(NULL, 0, NULL, P));

	/* 1-D */
	int64_t g1[] = {1000};
	CHECK(run_count(NULL, 1, g1, P));
	CHECK(run_count(NULL, 1, g1, A));
	CHECK(run_count(NULL, 1, g1, NULL));
	int64_t one[] = {1};
	CHECK(run_count(NULL, 1, one, P));
	int64_t big[] = {100003}; /* prime: chunks do not divide it */
	CHECK(run_count(NULL, 1, big, P));

	/* 2-D, every semantics combination */
	int64_t g2[] = {37, 53};
	for (int m = 0; m < 4; m++) {
		uint8_t par[2] = {(uint8_t)(m & 1), (uint8_t)(m >> 1 & 1)};
		CHECK(run_count(NULL, 2, g2, par));
	}

	/* 3-D, every semantics combination, on a created stream */
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(host(), &s));
	int64_t g3[] = {7, 11, 13};
	for (int m = 0; m < 8; m++) {
		uint8_t par[3] = {(uint8_t)(m & 1), (uint8_t)(m >> 1 & 1), (uint8_t)(m >> 2 & 1)};
		CHECK(run_count(s, 3, g3, par));
	}
	CHECK_OK(pk_stream_synchronize(s));
	CHECK_OK(pk_stream_destroy(s));

	/* 8-D, mixed */
	int64_t g8[] = {2, 3, 1, 2, 3, 2, 1, 2};
	uint8_t p8[] = {1, 0, 1, 1, 0, 1, 0, 1};
	CHECK(run_count(NULL, 8, g8, p8));
	CHECK(run_count(NULL, 8, g8, P));
}

/* ---- launch: arbitrary axes run in order, one task per thread ----------------- */

typedef struct order_args {
	int row_axis;  /* the parallel axis: one log per row */
	int cols;      /* number of entries a complete log has */
	int *len;      /* per row: entries logged so far (plain ints: a race shows under TSan) */
	int *log;      /* per row: the logged arbitrary indices */
	int *tid;      /* per row: the thread that ran it, -1 before the first program */
	atomic_int bad; /* a row ran on two threads, or was interrupted */
} order_args;

/* Logs the linearised arbitrary indices (all axes but row_axis) per row. */
static void order_program(void *vargs, const int32_t *pid, const int32_t *nprog)
{
	order_args *a = vargs;
	int row = a->row_axis >= 0 ? pid[a->row_axis] : 0;
	int idx = 0;
	for (int k = 0; k < PK_MAX_GRID; k++)
		if (k != a->row_axis)
			idx = idx * nprog[k] + pid[k];
	if (a->tid[row] < 0)
		a->tid[row] = my_tid();
	else if (a->tid[row] != my_tid())
		atomic_fetch_add(&a->bad, 1);
	/* The task's programs run back to back: this thread's previous program
	 * was the task's previous one. */
	if (idx > 0 && !(tl_last_args == a && tl_last_row == row && tl_last_idx == idx - 1))
		atomic_fetch_add(&a->bad, 1);
	tl_last_args = a;
	tl_last_row = row;
	tl_last_idx = idx;
	a->log[row * a->cols + a->len[row]++] = idx;
}

/* Runs the grid with one parallel axis `row_axis` (or none: -1) and checks
 * that each row logged 0..cols-1 in order, back to back on one thread. */
static int run_order(int ngrid, const int64_t *ext, int row_axis)
{
	uint8_t par[PK_MAX_GRID] = {0};
	int rows = 1, cols = 1;
	for (int k = 0; k < ngrid; k++) {
		if (k == row_axis) {
			par[k] = 1;
			rows = (int)ext[k];
		} else {
			cols *= (int)ext[k];
		}
	}
	order_args a;
	a.row_axis = row_axis;
	a.cols = cols;
	a.len = calloc((size_t)rows, sizeof *a.len);
	a.log = calloc((size_t)rows * (size_t)cols, sizeof *a.log);
	a.tid = malloc((size_t)rows * sizeof *a.tid);
	for (int r = 0; r < rows; r++)
		a.tid[r] = -1;
	atomic_init(&a.bad, 0);
	pk_host_launch l = {"order", order_program, &a, ngrid, ext, par};
	int ok = pk_launch_host(NULL, &l) == PK_SUCCESS && atomic_load(&a.bad) == 0;
	for (int r = 0; r < rows; r++) {
		ok &= a.len[r] == cols;
		for (int c = 0; c < cols && c < a.len[r]; c++)
			ok &= a.log[r * cols + c] == c;
	}
	free(a.len);
	free(a.log);
	free(a.tid);
	return ok;
}

static void test_launch_order(void)
{
	int64_t g2[] = {64, 100};
	CHECK(run_order(2, g2, 0));  /* (parallel, arbitrary) */
	CHECK(run_order(2, g2, 1));  /* (arbitrary, parallel) */
	CHECK(run_order(2, g2, -1)); /* (arbitrary, arbitrary): one global order */
	int64_t g3[] = {5, 16, 7};
	CHECK(run_order(3, g3, 1));  /* (arbitrary, parallel, arbitrary) */
	int64_t g3b[] = {300, 4, 9};
	CHECK(run_order(3, g3b, 0)); /* many rows: several chunks per thread */
}

/* ---- launch: concurrency -------------------------------------------------------- */

typedef struct conc_args {
	atomic_uchar seen[MAX_TIDS]; /* threads that ran a program */
	atomic_int distinct;         /* number of set entries in seen */
	int waited_out;              /* program 0 timed out waiting for a second thread */
	int wait;                    /* program 0 waits for a second thread */
} conc_args;

static void conc_program(void *vargs, const int32_t *pid, const int32_t *nprog)
{
	(void)nprog;
	conc_args *a = vargs;
	int t = my_tid();
	if (t < MAX_TIDS && !atomic_exchange(&a->seen[t], 1))
		atomic_fetch_add(&a->distinct, 1);
	if (pid[0] == 0 && a->wait) {
		/* Block until some other thread has run a program.  With >= 2 pool
		 * threads one must, as this program holds only one of them. */
		double t0 = now_seconds();
		while (atomic_load(&a->distinct) < 2) {
			if (now_seconds() - t0 > 20.0) {
				a->waited_out = 1;
				break;
			}
			sleep_ms(1);
		}
	}
}

static void test_concurrency(void)
{
	int nthreads = pk_host_num_threads();
	CHECK(nthreads >= 1);
	const char *env = getenv("PK_NUM_THREADS");
	if (env && atoi(env) >= 1)
		CHECK(nthreads == (atoi(env) < 1024 ? atoi(env) : 1024));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	conc_args *a = calloc(1, sizeof *a);
	a->wait = nthreads >= 2;
	int64_t g[] = {4096};
	static const uint8_t P[] = {1};
	pk_host_launch l = {"concurrency", conc_program, a, 1, g, P};
	CHECK_OK(pk_launch_host(NULL, &l));
	int distinct = atomic_load(&a->distinct);
	if (nthreads == 1) {
		/* Everything ran on the calling thread. */
		CHECK(distinct == 1);
		CHECK(atomic_load(&a->seen[my_tid()]) == 1);
	} else {
		CHECK(!a->waited_out);
		CHECK(distinct >= 2 && distinct <= nthreads);
	}
	printf("rt_test: %d pool threads, %ld CPUs; %d threads ran the blocking launch\n", nthreads, cpus, distinct);
	free(a);
}

/* ---- launch: concurrent and nested launches ---------------------------------- */

static void *launcher_thread(void *arg)
{
	int id = (int)(intptr_t)arg;
	unsigned seed = 12345u + (unsigned)id;
	for (int it = 0; it < 150; it++) {
		seed = seed * 1103515245u + 12345u;
		int64_t g[3] = {1 + (seed >> 8) % 17, 1 + (seed >> 13) % 23, 1 + (seed >> 18) % 9};
		uint8_t par[3] = {(uint8_t)(seed >> 3 & 1), (uint8_t)(seed >> 4 & 1), (uint8_t)(seed >> 5 & 1)};
		int ok = run_count(NULL, 3, g, par);
		CHECK(ok);
		if (!ok)
			break;
		if (it % 10 == 0) {
			int64_t g2[] = {20, 30};
			CHECK(run_order(2, g2, id % 2));
		}
	}
	return NULL;
}

typedef struct nested_args {
	atomic_int hits[8][100]; /* [outer pid][inner pid] */
	atomic_int failures;     /* inner launches that failed */
} nested_args;

typedef struct inner_args {
	nested_args *outer; /* where to count */
	int row;            /* the outer program's pid */
} inner_args;

static void inner_program(void *vargs, const int32_t *pid, const int32_t *nprog)
{
	(void)nprog;
	inner_args *a = vargs;
	atomic_fetch_add(&a->outer->hits[a->row][pid[0]], 1);
}

static void outer_program(void *vargs, const int32_t *pid, const int32_t *nprog)
{
	(void)nprog;
	inner_args in = {vargs, pid[0]};
	int64_t g[] = {100};
	static const uint8_t P[] = {1};
	pk_host_launch l = {"inner", inner_program, &in, 1, g, P};
	if (pk_launch_host(NULL, &l) != PK_SUCCESS)
		atomic_fetch_add(&((nested_args *)vargs)->failures, 1);
}

static void test_concurrent_launches(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, launcher_thread, (void *)(intptr_t)i) == 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);

	/* A program may launch a kernel itself. */
	nested_args *n = calloc(1, sizeof *n);
	int64_t g[] = {8};
	static const uint8_t P[] = {1};
	pk_host_launch l = {"outer", outer_program, n, 1, g, P};
	CHECK_OK(pk_launch_host(NULL, &l));
	int ok = atomic_load(&n->failures) == 0;
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 100; c++)
			ok &= atomic_load(&n->hits[r][c]) == 1;
	CHECK(ok);
	free(n);
}

/* ---- launch: invalid grids ------------------------------------------------------- */

static atomic_int never_count;

static void never_program(void *vargs, const int32_t *pid, const int32_t *nprog)
{
	(void)vargs;
	(void)pid;
	(void)nprog;
	atomic_fetch_add(&never_count, 1);
}

/* A stream or event used after its destroy (within the last 64 destroys,
 * whose memory the runtime keeps: defined, also under ASan) is
 * PK_ERR_INVALID_VALUE, not a second success or a silent use. */
static void test_destroyed_handles(void)
{
	pk_device *d = host();
	pk_stream *s = NULL;
	pk_event *e = NULL, *e2 = NULL;
	CHECK_OK(pk_stream_create(d, &s));
	CHECK_OK(pk_event_create(d, &e));
	CHECK_OK(pk_event_create(d, &e2));
	CHECK_OK(pk_event_record(e2, NULL));
	CHECK_OK(pk_stream_destroy(s));
	CHECK_OK(pk_event_destroy(e));
	const char *gone = "the stream was destroyed";
	CHECK_FAILS(pk_stream_destroy(s), PK_ERR_INVALID_VALUE, "pk_stream_destroy: the stream was destroyed");
	CHECK_FAILS(pk_stream_synchronize(s), PK_ERR_INVALID_VALUE, gone);
	char buf[8] = {0};
	CHECK_FAILS(pk_memcpy(s, buf, buf + 4, 4, PK_MEMCPY_HOST_TO_DEVICE), PK_ERR_INVALID_VALUE, gone);
	CHECK_FAILS(pk_memset(s, buf, 0, 4), PK_ERR_INVALID_VALUE, gone);
	CHECK_FAILS(pk_event_record(e2, s), PK_ERR_INVALID_VALUE, gone);
	static const uint8_t P[1] = {1};
	int64_t g[1] = {4};
	pk_host_launch l = {"late_kernel", never_program, NULL, 1, g, P};
	CHECK_FAILS(pk_launch_host(s, &l), PK_ERR_INVALID_VALUE, "late_kernel: the stream was destroyed");
	CHECK_FAILS(pk_event_destroy(e), PK_ERR_INVALID_VALUE, "pk_event_destroy: the event was destroyed");
	CHECK_FAILS(pk_event_record(e, NULL), PK_ERR_INVALID_VALUE, "the event was destroyed");
	CHECK_FAILS(pk_event_synchronize(e), PK_ERR_INVALID_VALUE, "the event was destroyed");
	double ms = 1.0;
	CHECK_FAILS(pk_event_elapsed_ms(e, e2, &ms), PK_ERR_INVALID_VALUE, "the start event was destroyed");
	CHECK_FAILS(pk_event_elapsed_ms(e2, e, &ms), PK_ERR_INVALID_VALUE, "the end event was destroyed");
	CHECK(atomic_load(&never_count) == 0);
	/* The default stream is never destroyed. */
	CHECK_OK(pk_stream_destroy(pk_stream_default(d)));
	CHECK_OK(pk_stream_synchronize(pk_stream_default(d)));
	CHECK_OK(pk_event_destroy(e2));
	/* Many more streams come and go (the kept memory is freed in turn). */
	for (int i = 0; i < 200; i++) {
		pk_stream *t = NULL;
		CHECK_OK(pk_stream_create(d, &t));
		CHECK_OK(pk_stream_destroy(t));
		CHECK_FAILS(pk_stream_destroy(t), PK_ERR_INVALID_VALUE, gone);
	}
}

static void test_invalid_grids(void)
{
	static const uint8_t P[PK_MAX_GRID] = {1, 1, 1, 1, 1, 1, 1, 1};
	int64_t g[PK_MAX_GRID + 1] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
	pk_host_launch l = {"bad_kernel", never_program, NULL, 2, g, P};

	CHECK_FAILS(pk_launch_host(NULL, NULL), PK_ERR_INVALID_VALUE, "NULL");

	l.ngrid = PK_MAX_GRID + 1;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "bad_kernel: grid rank 9 out of range");
	l.ngrid = -1;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "bad_kernel: grid rank -1");
	l.ngrid = 2;
	l.grid = NULL;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "grid is NULL");
	l.grid = g;
	l.program = NULL;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "program is NULL");
	l.program = never_program;

	g[1] = -3;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "bad_kernel: grid axis 1 has negative extent -3");
	g[0] = 0; /* a negative extent is an error even when another is 0 */
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "negative extent -3");
	g[0] = 4;
	g[1] = (int64_t)INT32_MAX + 1;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "grid axis 1 has extent 2147483648");
	l.kernel_name = NULL;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "pk_launch_host: grid axis 1");
	l.kernel_name = "bad_kernel";

	/* Extents in range whose product overflows int64. */
	for (int k = 0; k < PK_MAX_GRID; k++)
		g[k] = INT32_MAX;
	l.ngrid = PK_MAX_GRID;
	CHECK_FAILS(pk_launch_host(NULL, &l), PK_ERR_INVALID_VALUE, "bad_kernel: grid has more than");

	/* Empty grids: success, no programs. */
	g[3] = 0;
	CHECK_OK(pk_launch_host(NULL, &l));
	int64_t e1[] = {0};
	l.ngrid = 1;
	l.grid = e1;
	CHECK_OK(pk_launch_host(NULL, &l));
	CHECK(atomic_load(&never_count) == 0);
}

/* ---- fork ------------------------------------------------------------------------ */

/* TSan by default kills a child that starts threads after a fork of a
 * multi-threaded process, which the pool does by design: skip there. */
#if defined(__SANITIZE_THREAD__)
#define RT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RT_TSAN 1
#endif
#endif

static void test_fork(void)
{
#ifndef RT_TSAN
	/* The pool is running (earlier tests used it).  The child gets no
	 * workers from fork(); its launches must still work, on a new pool. */
	int nthreads = pk_host_num_threads();
	fflush(NULL);
	pid_t child = fork();
	if (child == 0) {
		int64_t g[] = {50, 40};
		static const uint8_t par[] = {1, 0};
		int ok = pk_host_num_threads() == nthreads && run_count(NULL, 2, g, par) && run_order(2, g, 0);
		_exit(ok ? 0 : 1);
	}
	CHECK(child > 0);
	int status = 0;
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* ...and the parent's pool is unharmed. */
	int64_t g[] = {1000};
	static const uint8_t par[] = {1};
	CHECK(run_count(NULL, 1, g, par));
#endif
}

int main(void)
{
	printf("rt_test: device \"%s\"\n", pk_device_name(NULL));
	test_status();
	test_errors();
	test_devices();
	test_streams();
	test_destroyed_handles();
	test_buffers();
	test_launch_counts();
	test_launch_order();
	test_concurrency();
	test_concurrent_launches();
	test_invalid_grids();
	test_fork();

	return check_summary("rt_test");
}
