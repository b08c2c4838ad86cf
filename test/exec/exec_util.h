/* exec_util.h - checks and devices for the execution tests (test/exec/<feature>.c).
 *
 * Each test is <feature>.pk (kernels, with the RUN lines) plus <feature>.c,
 * a driver that launches the kernels, compares every output element with a
 * C reference and ends with one line
 *     "<feature>: N checks OK"   or   "<feature>: K of N checks FAILED"
 * (the first mismatches are printed on stderr).  Header-only; use with
 * samples/common/sample_util.h for the PRNG and f16/bf16 conversions.
 *
 * The device.  A driver keeps its arrays in host memory and launches every
 * kernel as
 *     EX_OK(kernel(ex_stream(), EX_DEV(x, n), EX_DEV(o, n), scalar, n));
 * ex_init (first thing in main) picks the device from --device D or
 * $PK_DEVICE (host, cuda or auto; default host).  On the host ex_stream()
 * is NULL (the default host stream) and EX_DEV(p, n) is p itself: the
 * kernel works on the driver's memory.  On a CUDA device ex_init prints
 * "<feature>: device: <name>", ex_stream() is a CUDA stream, and EX_DEV(p, n)
 * copies the n elements at p into a new device buffer and returns it; the
 * EX_STATUS/EX_OK around the launch (or ex_sync(status) for a launch whose
 * status is checked by hand) then synchronizes the stream, copies every
 * such buffer back over its host array and frees it.  Either way the
 * checks that follow read the host arrays, so a driver is the same for
 * both devices.  EX_GUARDED(p, n, g) also mirrors the g elements on each
 * side of the array (guard zones), so their checks look at device memory. */
#ifndef EXEC_UTIL_H
#define EXEC_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pk_runtime.h>

#include "sample_util.h"

static long ex_checks, ex_failures;

static inline int ex_note_failure(void)
{
	ex_failures++;
	return ex_failures <= 20; /* print the first few only */
}

/* ---- the device -------------------------------------------------------------------- */

enum { EX_MAX_MIRRORS = 64 };

typedef struct ex_mirror {
	char *host;   /* the host bytes (guard zones included) */
	char *dev;    /* their device copy */
	size_t bytes; /* how many */
} ex_mirror;

static struct {
	const char *name; /* the feature, for messages */
	pk_device *dev;   /* NULL: the host (NULL stream, host memory) */
	pk_stream *stream;
	int nmirrors;
	ex_mirror mirrors[EX_MAX_MIRRORS]; /* buffers of the launch being set up */
} ex_state;

static inline void ex_fatal(const char *what, pk_status st)
{
	fprintf(stderr, "%s: %s: %s: %s\n", ex_state.name, what, pk_status_name(st), pk_last_error());
	exit(1);
}

/* Picks the device: --device D (removed from argv) or $PK_DEVICE, D one of
 * host, cuda, auto (CUDA device 0 if there is one, else the host); default
 * host.  Exits with a message when D is bad or no CUDA device is there. */
static inline void ex_init(int *argc, char **argv, const char *name)
{
	const char *d = getenv("PK_DEVICE");
	if (!d || !*d)
		d = "host";
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--device") && i + 1 < *argc)
			d = argv[++i];
		else if (!strncmp(argv[i], "--device=", 9))
			d = argv[i] + 9;
		else
			argv[out++] = argv[i];
	}
	*argc = out;
	argv[out] = NULL;
	ex_state.name = name;
	if (strcmp(d, "host") && strcmp(d, "cuda") && strcmp(d, "auto")) {
		fprintf(stderr, "%s: the device must be host, cuda or auto, not '%s'\n", name, d);
		exit(2);
	}
	if (!strcmp(d, "host"))
		return;
	int n = 0;
	pk_status st = pk_device_count(PK_DEVICE_CUDA, &n);
	if (st != PK_SUCCESS)
		ex_fatal("pk_device_count", st);
	if (n == 0 && !strcmp(d, "auto"))
		return;
	if ((st = pk_device_get(PK_DEVICE_CUDA, 0, &ex_state.dev)) != PK_SUCCESS)
		ex_fatal("no CUDA device", st);
	if ((st = pk_stream_create(ex_state.dev, &ex_state.stream)) != PK_SUCCESS)
		ex_fatal("pk_stream_create", st);
	printf("%s: device: %s\n", name, pk_device_name(ex_state.dev));
}

/* The stream every launch goes to: NULL on the host. */
static inline pk_stream *ex_stream(void)
{
	return ex_state.stream;
}

/* The device copy of `bytes` at host + guard, with `guard` bytes on each
 * side; the host pointer itself on the host.  NULL stays NULL (a launch's
 * NULL-argument check).  The same host range twice in one launch gives the
 * same device buffer. */
static inline void *ex_buf_guarded(const void *host, size_t bytes, size_t guard)
{
	if (!ex_state.dev || !host)
		return (void *)host;
	char *h = (char *)host - guard;
	size_t total = bytes + 2 * guard;
	for (int i = 0; i < ex_state.nmirrors; i++) {
		ex_mirror *m = &ex_state.mirrors[i];
		if (m->host == h && m->bytes == total)
			return m->dev + guard;
		if (h < m->host + m->bytes && m->host < h + total) {
			fprintf(stderr, "%s: EX_DEV: overlapping host ranges in one launch (a driver bug)\n",
			        ex_state.name);
			exit(1);
		}
	}
	if (ex_state.nmirrors == EX_MAX_MIRRORS) {
		fprintf(stderr, "%s: EX_DEV: more than %d arrays in one launch\n", ex_state.name, EX_MAX_MIRRORS);
		exit(1);
	}
	void *d = NULL;
	pk_status st = pk_malloc(ex_state.dev, total, &d);
	if (st == PK_SUCCESS)
		st = pk_memcpy(ex_state.stream, d, h, total, PK_MEMCPY_HOST_TO_DEVICE);
	if (st != PK_SUCCESS)
		ex_fatal("EX_DEV: copying an array to the device", st);
	ex_state.mirrors[ex_state.nmirrors++] = (ex_mirror){h, (char *)d, total};
	return (char *)d + guard;
}

static inline void *ex_buf(const void *host, size_t bytes)
{
	return ex_buf_guarded(host, bytes, 0);
}

/* n elements of the array p (host memory) where the launch can use them. */
#define EX_DEV(p, n) ex_buf((p), (size_t)(n) * sizeof *(p))
/* Likewise with g elements of guard zone before and after the array. */
#define EX_GUARDED(p, n, g) ex_buf_guarded((p), (size_t)(n) * sizeof *(p), (size_t)(g) * sizeof *(p))

/* After a launch that returned st: on a CUDA device, waits for it, copies
 * every EX_DEV buffer back to its host array (also after a failed launch:
 * the arrays must be as before) and frees them.  Returns st, or the
 * synchronization's error (a kernel fault) when st is PK_SUCCESS. */
static inline pk_status ex_sync(pk_status st)
{
	if (!ex_state.dev)
		return st;
	pk_status s2 = pk_stream_synchronize(ex_state.stream);
	if (st == PK_SUCCESS)
		st = s2;
	for (int i = 0; i < ex_state.nmirrors; i++) {
		ex_mirror *m = &ex_state.mirrors[i];
		if (s2 == PK_SUCCESS)
			s2 = pk_memcpy(ex_state.stream, m->host, m->dev, m->bytes, PK_MEMCPY_DEVICE_TO_HOST);
	}
	if (s2 == PK_SUCCESS)
		s2 = pk_stream_synchronize(ex_state.stream);
	if (s2 != PK_SUCCESS)
		ex_checks++;
	if (s2 != PK_SUCCESS && ex_note_failure())
		fprintf(stderr, "%s: copying the arrays back from the device: %s: %s\n", ex_state.name,
		        pk_status_name(s2), pk_last_error());
	for (int i = 0; i < ex_state.nmirrors; i++)
		pk_free(ex_state.dev, ex_state.mirrors[i].dev);
	ex_state.nmirrors = 0;
	return st;
}

/* A launch must return `want`; on failure prints the status and message. */
#define EX_STATUS(call, want)                                                                      \
	do {                                                                                       \
		pk_status st_ = ex_sync(call);                                                     \
		ex_checks++;                                                                       \
		if (st_ != (want) && ex_note_failure())                                           \
			fprintf(stderr, "%s:%d: %s returned %s (%s), want %s\n", __FILE__, __LINE__, #call, \
			        pk_status_name(st_), pk_last_error(), pk_status_name(want));          \
	} while (0)

#define EX_OK(call) EX_STATUS(call, PK_SUCCESS)

/* Exact integer comparison. */
#define EX_EQ(got, want, ...)                                                                      \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		ex_checks++;                                                                       \
		if (g_ != w_ && ex_note_failure()) {                                               \
			fprintf(stderr, "%s:%d: %s = %lld, want %lld: ", __FILE__, __LINE__, #got, g_, w_); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* Unsigned 64-bit comparison. */
#define EX_EQU(got, want, ...)                                                                     \
	do {                                                                                       \
		unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want); \
		ex_checks++;                                                                       \
		if (g_ != w_ && ex_note_failure()) {                                               \
			fprintf(stderr, "%s:%d: %s = %llu, want %llu: ", __FILE__, __LINE__, #got, g_, w_); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* Float comparison: |got - want| <= tol * max(1, |want|); NaN equals NaN
 * only when want is NaN; infinities must match exactly. */
static inline int ex_close(double got, double want, double tol)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want) || isinf(got))
		return got == want;
	if (isnan(got))
		return 0;
	double scale = fabs(want) > 1.0 ? fabs(want) : 1.0;
	return fabs(got - want) <= tol * scale;
}

#define EX_NEAR(got, want, tol, ...)                                                               \
	do {                                                                                       \
		double g_ = (double)(got), w_ = (double)(want);                                    \
		ex_checks++;                                                                       \
		if (!ex_close(g_, w_, (tol)) && ex_note_failure()) {                               \
			fprintf(stderr, "%s:%d: %s = %.9g, want %.9g: ", __FILE__, __LINE__, #got, g_, w_); \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* Bitwise float equality (exactly rounded results). */
#define EX_SAME(got, want, ...) EX_NEAR(got, want, 0.0, __VA_ARGS__)

/* The one-line summary and the exit status. */
static inline int ex_done(const char *name)
{
	if (ex_state.stream && pk_stream_destroy(ex_state.stream) != PK_SUCCESS && ex_note_failure())
		fprintf(stderr, "%s: pk_stream_destroy: %s\n", name, pk_last_error());
	ex_state.stream = NULL;
	if (ex_failures)
		printf("%s: %ld of %ld checks FAILED\n", name, ex_failures, ex_checks);
	else
		printf("%s: %ld checks OK\n", name, ex_checks);
	return ex_failures ? 1 : 0;
}

/* Poison: 0xFF bytes (NaN for floats, -1 for integers). */
static inline void ex_poison(void *p, size_t bytes)
{
	memset(p, 0xFF, bytes);
}

#endif /* EXEC_UTIL_H */
