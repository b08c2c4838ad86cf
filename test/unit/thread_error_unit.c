/* thread_error_unit.c - an internal error on a thread other than the main
 * one (pkc's GPU back-end thread) ends that thread through the hook it set
 * (internal_error_ends_thread), not the process: the main thread, which may
 * be inside LLVM, goes on and decides how pkc exits.  A thread without the
 * hook still exits 70 (the last check; lit checks the status).
 * Prints what happened in order on stderr. */
#include "pkc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	bool ended;   /* the hook ran */
	bool resumed; /* internal_error returned into the thread: it must not */
} Outcome;

static void end_thread(void *arg)
{
	((Outcome *)arg)->ended = true;
	pthread_exit(NULL);
}

static void *hooked(void *arg)
{
	internal_error_ends_thread(end_thread, arg);
	internal_error("on the hooked thread");
	((Outcome *)arg)->resumed = true;
	return NULL;
}

static void *unhooked(void *arg)
{
	(void)arg;
	internal_error("on a thread without the hook");
	return NULL;
}

int main(void)
{
	Outcome o = {0};
	pthread_t t;
	if (pthread_create(&t, NULL, hooked, &o) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	fprintf(stderr, "main thread goes on: hook %s, thread %s\n", o.ended ? "ran" : "did not run",
	        o.resumed ? "resumed" : "ended");
	if (!o.ended || o.resumed)
		return 1;
	/* The hook is the thread's own: this one's error ends the process. */
	if (pthread_create(&t, NULL, unhooked, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	fprintf(stderr, "not reached\n");
	return 0;
}
