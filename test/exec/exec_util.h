/* exec_util.h - checks for the execution tests (test/exec/<feature>.c).
 *
 * Each test is <feature>.pk (kernels, with the RUN lines) plus <feature>.c,
 * a driver that launches the kernels on host memory, compares every output
 * element with a C reference and ends with one line
 *     "<feature>: N checks OK"   or   "<feature>: K of N checks FAILED"
 * (the first mismatches are printed on stderr).  Header-only; use with
 * samples/common/sample_util.h for the PRNG and f16/bf16 conversions. */
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

/* A launch must return `want`; on failure prints the status and message. */
#define EX_STATUS(call, want)                                                                      \
	do {                                                                                       \
		pk_status st_ = (call);                                                            \
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
