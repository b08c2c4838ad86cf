/* pool.c - the process-wide worker pool and pk_launch_host.
 *
 * Work model.  A launch's grid splits into tasks: one task per combination
 * of the parallel axes' pids (linearised row-major over the parallel axes),
 * and a task runs every program along the arbitrary axes in lexicographic
 * order.  Tasks are grouped into chunks of consecutive task indices; a job
 * (one per launch, on the launching thread's stack) hands out chunks with an
 * atomic counter, so threads that finish early take more (dynamic
 * balancing) and no lock is taken per chunk.
 *
 * Threads.  The pool has nthreads-1 workers; the launching thread is the
 * nth, working on its own job, so a launch always makes progress even if
 * every worker is busy elsewhere (concurrent or nested launches never
 * deadlock).  Jobs wait in a FIFO queue; idle workers sleep on a condition
 * variable (no spinning) and join the first queued job that still has
 * chunks.
 *
 * Lifetime of a job.  A worker registers on a job (users++) only under the
 * pool mutex and only while the job is queued.  When the launcher has no
 * more chunks to claim it unqueues the job and waits, under the mutex,
 * until users is 0; after that nobody can touch the job, so it may leave
 * the stack.  The mutex hand-off also makes every program's writes visible
 * to the launcher before pk_launch_host returns. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, pthread_setname_np */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Upper bound on threads per launch (caller included), whatever
 * PK_NUM_THREADS or the CPU count say. */
#define PKRT_MAX_THREADS 1024

/* Chunks per thread a launch aims for: enough that threads finishing early
 * can balance the load, few enough that claiming stays cheap. */
#define PKRT_CHUNKS_PER_THREAD 8

/* Workers each thread joining a launch wakes (see wake_helpers_locked). */
#ifndef PKRT_WAKE_FANOUT
#define PKRT_WAKE_FANOUT 2
#endif

/* Stack size of pool workers: generated programs may keep sizeable scratch
 * blocks on the stack. */
#define PKRT_WORKER_STACK (16u << 20)

/* One launch in flight. */
typedef struct pkrt_job {
	/* Set before the job is published, then read-only. */
	pk_host_program_fn program;    /* the kernel's program */
	void *args;                    /* its argument struct */
	int32_t nprog[PK_MAX_GRID];    /* extents, 1 beyond the grid rank */
	int npar;                      /* number of parallel axes */
	int narb;                      /* number of arbitrary axes */
	int par_axes[PK_MAX_GRID];     /* the parallel axes, in increasing order */
	int arb_axes[PK_MAX_GRID];     /* the arbitrary axes, in increasing order */
	int64_t ntasks;                /* product of the parallel extents */
	int64_t chunk;                 /* tasks per claim */
	int64_t nchunks;               /* ceil(ntasks / chunk) */
	/* Shared, lock-free. */
	_Atomic int64_t next_chunk;    /* next chunk to claim; >= nchunks: none left */
	/* Guarded by pool.mu. */
	int users;                     /* pool workers currently working on the job */
	bool queued;                   /* in the pool's queue (workers may join) */
	struct pkrt_job *next;         /* next job in the queue */
	pthread_cond_t idle;           /* signalled when users drops to 0 */
} pkrt_job;

static struct {
	pthread_once_t once;     /* guards pool_init */
	pthread_mutex_t mu;      /* guards everything below and the jobs' guarded fields */
	pthread_cond_t work;     /* signalled when a job is queued */
	pkrt_job *head, *tail;   /* the job queue, oldest first */
	int nthreads;            /* threads per launch wanted, caller included (>= 1) */
	int nworkers;            /* workers running (nthreads - 1 unless creation failed) */
	bool respawn;            /* a fork() left the child without workers: start them again */
} pool = {
	.once = PTHREAD_ONCE_INIT,
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
};

/* ---- sizing ---------------------------------------------------------------- */

/* CPUs this process may run on: the affinity mask (honours taskset and
 * cgroup cpusets), else the online count. */
static int cpu_count(void)
{
#ifdef CPU_COUNT
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		int n = CPU_COUNT(&set);
		if (n > 0)
			return n;
	}
#endif
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (n > PKRT_MAX_THREADS ? PKRT_MAX_THREADS : (int)n) : 1;
}

/* PK_NUM_THREADS if it is a valid count, else the CPU count.  A bad value
 * is reported once on stderr rather than silently ignored. */
static int wanted_threads(void)
{
	const char *env = getenv("PK_NUM_THREADS");
	if (env && *env) {
		char *end;
		errno = 0;
		long n = strtol(env, &end, 10);
		if (errno == 0 && *end == '\0' && n >= 1) /* strtol accepts leading blanks; fine */
			return n > PKRT_MAX_THREADS ? PKRT_MAX_THREADS : (int)n;
		fprintf(stderr, "pkrt: ignoring invalid PK_NUM_THREADS=\"%s\" (want an integer >= 1)\n", env);
	}
	int n = cpu_count();
	return n > PKRT_MAX_THREADS ? PKRT_MAX_THREADS : n;
}

/* ---- workers --------------------------------------------------------------- */

static void run_chunks(pkrt_job *j);

/* The first queued job that still has chunks to claim.  Exhausted jobs are
 * unqueued on the way so later scans skip them.  Called with pool.mu held. */
static pkrt_job *find_job_locked(void)
{
	pkrt_job *prev = NULL, *j = pool.head;
	while (j) {
		pkrt_job *next = j->next;
		if (atomic_load_explicit(&j->next_chunk, memory_order_relaxed) < j->nchunks)
			return j;
		/* unlink j */
		if (prev)
			prev->next = next;
		else
			pool.head = next;
		if (pool.tail == j)
			pool.tail = prev;
		j->next = NULL;
		j->queued = false;
		j = next;
	}
	return NULL;
}

/* Wakes up to PKRT_WAKE_FANOUT sleeping workers if j has more unclaimed
 * chunks than threads working on it (its users plus the launcher).  The
 * launcher and every worker that joins call this, so helpers arrive as a
 * tree: a big launch gets every worker after a few wake-up latencies, while
 * a small one does not wake (and contend with) workers it cannot use.
 * Called with pool.mu held. */
static void wake_helpers_locked(const pkrt_job *j)
{
	int64_t left = j->nchunks - atomic_load_explicit(&j->next_chunk, memory_order_relaxed);
	int64_t spare = left - (j->users + 1);
	for (int64_t i = 0; i < spare && i < PKRT_WAKE_FANOUT; i++)
		pthread_cond_signal(&pool.work);
}

static void *worker_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		pkrt_job *j = find_job_locked();
		if (!j) {
			pthread_cond_wait(&pool.work, &pool.mu);
			continue;
		}
		j->users++;
		wake_helpers_locked(j);
		pthread_mutex_unlock(&pool.mu);
		run_chunks(j);
		pthread_mutex_lock(&pool.mu);
		if (--j->users == 0)
			pthread_cond_signal(&j->idle);
	}
	return NULL; /* not reached: workers live as long as the process */
}

/* Starts workers until there are nthreads-1.  If the system refuses a
 * thread, the pool simply stays smaller: launches still complete, because
 * the launching thread works too.  Called with pool.mu held (or from
 * pool_init, before anyone else can see the pool). */
static void spawn_workers_locked(void)
{
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0)
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	size_t stack = 0;
	if (pthread_attr_getstacksize(&attr, &stack) == 0 && stack < PKRT_WORKER_STACK)
		pthread_attr_setstacksize(&attr, PKRT_WORKER_STACK);
	/* Workers inherit this mask: block asynchronous signals in them so they
	 * go to the application's own threads.  Fault signals stay unblocked: a
	 * blocked fault kills the process without running its handler (a
	 * sanitizer's or the application's crash reporter). */
	sigset_t mask, old;
	sigfillset(&mask);
	static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS};
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
		sigdelset(&mask, faults[i]);
	pthread_sigmask(SIG_SETMASK, &mask, &old);
	while (pool.nworkers < pool.nthreads - 1) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker_main, NULL) != 0)
			break;
#ifdef __GLIBC__
		pthread_setname_np(t, "pkrt-worker");
#endif
		pool.nworkers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

/* fork() copies only the forking thread.  Hold the mutex across the fork
 * so the child gets a consistent pool, then give the child an empty queue
 * (the parent's jobs belong to threads it does not have) and fresh
 * condition variables, and let its next launch start workers again. */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&pool.mu);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&pool.mu);
}

static void atfork_child(void)
{
	pool.head = pool.tail = NULL;
	pool.nworkers = 0;
	pool.respawn = pool.nthreads > 1;
	pthread_cond_init(&pool.work, NULL);
	pthread_mutex_unlock(&pool.mu);
}

static void pool_init(void)
{
	pool.nthreads = wanted_threads();
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	pthread_mutex_lock(&pool.mu);
	spawn_workers_locked();
	pthread_mutex_unlock(&pool.mu);
}

/* Starts the pool if needed (again, in a forked child) and returns the
 * number of threads a launch can use, caller included. */
static int pool_start(void)
{
	pthread_once(&pool.once, pool_init);
	pthread_mutex_lock(&pool.mu);
	if (pool.respawn) {
		pool.respawn = false;
		spawn_workers_locked();
	}
	int n = pool.nworkers + 1;
	pthread_mutex_unlock(&pool.mu);
	return n;
}

int pkrt_pool_threads(void)
{
	return pool_start();
}

int pk_host_num_threads(void)
{
	return pkrt_pool_threads();
}

/* ---- running programs ------------------------------------------------------- */

/* Runs tasks [t0, t1) of j: for each task, every program along the
 * arbitrary axes in lexicographic order.  pids advance like an odometer
 * (last axis fastest), so only the first task needs divisions. */
static void run_tasks(const pkrt_job *j, int64_t t0, int64_t t1)
{
	int32_t pid[PK_MAX_GRID] = {0};
	int64_t t = t0;
	for (int k = j->npar - 1; k >= 0; k--) {
		int a = j->par_axes[k];
		pid[a] = (int32_t)(t % j->nprog[a]);
		t /= j->nprog[a];
	}
	for (t = t0; t < t1; t++) {
		for (int k = 0; k < j->narb; k++)
			pid[j->arb_axes[k]] = 0;
		for (;;) {
			j->program(j->args, pid, j->nprog);
			int k = j->narb - 1;
			for (; k >= 0; k--) {
				int a = j->arb_axes[k];
				if (++pid[a] < j->nprog[a])
					break;
				pid[a] = 0;
			}
			if (k < 0)
				break;
		}
		for (int k = j->npar - 1; k >= 0; k--) {
			int a = j->par_axes[k];
			if (++pid[a] < j->nprog[a])
				break;
			pid[a] = 0;
		}
	}
}

/* Claims and runs chunks of j until none are left. */
static void run_chunks(pkrt_job *j)
{
	for (;;) {
		int64_t c = atomic_fetch_add_explicit(&j->next_chunk, 1, memory_order_relaxed);
		if (c >= j->nchunks)
			return;
		int64_t t0 = c * j->chunk;
		int64_t t1 = j->ntasks - t0 < j->chunk ? j->ntasks : t0 + j->chunk;
		run_tasks(j, t0, t1);
	}
}

/* ---- pk_launch_host ---------------------------------------------------------- */

/* Checks the launch description and fills the job's read-only part.
 * *empty is set when the grid has no programs. */
static pk_status prepare_job(const pk_host_launch *l, const char *name, pkrt_job *j, bool *empty)
{
	if (l->ngrid < 0 || l->ngrid > PK_MAX_GRID)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: grid rank %d out of range 0..%d", name, l->ngrid,
		                    PK_MAX_GRID);
	if (!l->program)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: program is NULL", name);
	if (l->ngrid > 0 && !l->grid)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: grid is NULL for a rank-%d grid", name, l->ngrid);
	*empty = false;
	for (int a = 0; a < l->ngrid; a++) {
		int64_t e = l->grid[a];
		if (e < 0)
			return pk_set_error(PK_ERR_INVALID_VALUE, "%s: grid axis %d has negative extent %" PRId64, name,
			                    a, e);
		if (e > INT32_MAX)
			return pk_set_error(PK_ERR_INVALID_VALUE,
			                    "%s: grid axis %d has extent %" PRId64 ", more than the maximum %" PRId32,
			                    name, a, e, INT32_MAX);
		if (e == 0)
			*empty = true;
	}
	if (*empty)
		return PK_SUCCESS;

	j->program = l->program;
	j->args = l->args;
	j->npar = j->narb = 0;
	int64_t total = 1; /* programs in the grid, to reject counts that overflow */
	j->ntasks = 1;
	for (int a = 0; a < PK_MAX_GRID; a++) {
		if (a >= l->ngrid) {
			j->nprog[a] = 1;
			continue;
		}
		j->nprog[a] = (int32_t)l->grid[a];
		if (total > INT64_MAX / l->grid[a])
			return pk_set_error(PK_ERR_INVALID_VALUE, "%s: grid has more than %" PRId64 " programs", name,
			                    INT64_MAX);
		total *= l->grid[a];
		if (l->parallel && l->parallel[a]) {
			j->par_axes[j->npar++] = a;
			j->ntasks *= l->grid[a]; /* divides total, so no overflow */
		} else {
			j->arb_axes[j->narb++] = a;
		}
	}
	return PK_SUCCESS;
}

pk_status pk_launch_host(pk_stream *s, const pk_host_launch *l)
{
	if (!l)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_launch_host: launch description is NULL");
	const char *name = l->kernel_name ? l->kernel_name : "pk_launch_host";
	pk_status bad = pkrt_check_stream(s, name);
	if (bad != PK_SUCCESS)
		return bad;
	/* Generated code calls this for a kernel's host variant: on another
	 * device's stream, the kernel has no variant for that device. */
	if (s && s->device->kind != PK_DEVICE_HOST)
		return pk_set_error(PK_ERR_NO_KERNEL_FOR_DEVICE, "%s: the kernel was compiled for the host only, but the "
		                    "stream is on %s", name, pk_device_name(s->device));

	pkrt_job job;
	bool empty = false;
	pk_status st = prepare_job(l, name, &job, &empty);
	if (st != PK_SUCCESS || empty)
		return st;

	int nthreads = pool_start();

	/* Chunk size: about PKRT_CHUNKS_PER_THREAD chunks per thread. */
	int64_t target = (int64_t)nthreads * PKRT_CHUNKS_PER_THREAD;
	job.chunk = job.ntasks / target + (job.ntasks % target != 0);
	job.nchunks = job.ntasks / job.chunk + (job.ntasks % job.chunk != 0);
	atomic_init(&job.next_chunk, 0);

	/* Nothing to share: run inline, skipping the queue and its lock. */
	if (nthreads == 1 || job.nchunks == 1) {
		run_tasks(&job, 0, job.ntasks);
		return PK_SUCCESS;
	}

	job.users = 0;
	job.queued = true;
	job.next = NULL;
	if (pthread_cond_init(&job.idle, NULL) != 0) {
		run_tasks(&job, 0, job.ntasks); /* cannot share it; still correct */
		return PK_SUCCESS;
	}
	pthread_mutex_lock(&pool.mu);
	if (pool.tail)
		pool.tail->next = &job;
	else
		pool.head = &job;
	pool.tail = &job;
	wake_helpers_locked(&job);
	pthread_mutex_unlock(&pool.mu);

	run_chunks(&job);

	pthread_mutex_lock(&pool.mu);
	if (job.queued) { /* no worker unqueued it: do it here */
		pkrt_job *prev = NULL;
		for (pkrt_job *q = pool.head; q != &job; q = q->next)
			prev = q;
		if (prev)
			prev->next = job.next;
		else
			pool.head = job.next;
		if (pool.tail == &job)
			pool.tail = prev;
		job.queued = false;
	}
	while (job.users > 0)
		pthread_cond_wait(&job.idle, &pool.mu);
	pthread_mutex_unlock(&pool.mu);
	pthread_cond_destroy(&job.idle);
	return PK_SUCCESS;
}
