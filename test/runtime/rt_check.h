/* rt_check.h - the check macros of the runtime tests
 * (rt_test.c, cuda_nodev_test.c, cuda_fake_test.c): count checks, print failures with
 * the status and pk_last_error(), end with "<name>: N checks passed". */
#ifndef RT_CHECK_H
#define RT_CHECK_H

#include "pk_runtime.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int n_checks; /* checks run */
static atomic_int n_failed; /* checks failed */

static void check_at(int ok, const char *what, const char *file, int line)
{
	atomic_fetch_add(&n_checks, 1);
	if (!ok) {
		atomic_fetch_add(&n_failed, 1);
		fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	}
}

#define CHECK(e) check_at((e) ? 1 : 0, #e, __FILE__, __LINE__)

/* A call that must succeed; on failure prints its status and message. */
#define CHECK_OK(e)                                                                              \
	do {                                                                                     \
		pk_status st_ = (e);                                                             \
		if (st_ != PK_SUCCESS)                                                           \
			fprintf(stderr, "  %s -> %s: %s\n", #e, pk_status_name(st_), pk_last_error()); \
		check_at(st_ == PK_SUCCESS, #e, __FILE__, __LINE__);                             \
	} while (0)

/* A call that must fail with `want` and leave a message containing `text`. */
#define CHECK_FAILS(e, want, text)                                                                 \
	do {                                                                                       \
		pk_status st_ = (e);                                                               \
		int ok_ = st_ == (want) && strstr(pk_last_error(), (text)) != NULL;                \
		if (!ok_)                                                                          \
			fprintf(stderr, "  %s -> %s \"%s\", want %s \"...%s...\"\n", #e, pk_status_name(st_), \
			        pk_last_error(), pk_status_name(want), (text));                     \
		check_at(ok_, #e, __FILE__, __LINE__);                                             \
	} while (0)

/* Prints the summary line and returns the exit status. */
static int check_summary(const char *name)
{
	int failed = atomic_load(&n_failed);
	if (failed) {
		printf("%s: %d of %d checks FAILED\n", name, failed, atomic_load(&n_checks));
		return 1;
	}
	printf("%s: %d checks passed\n", name, atomic_load(&n_checks));
	return 0;
}

#endif
