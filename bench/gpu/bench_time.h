/* bench_time.h - how every benchmark program times its launches (bench_gpu.c,
 * matmul_user.c and the attention programs through bench_attention.h): the
 * GPU's time for each launch, between a pair of events, as
 * triton.testing.do_bench times the peers (peers_util.py `tbench`).
 *
 * The launches are queued back to back and nothing waits until the last:
 * an event recorded on an idle stream completes at once, so a launch timed
 * after a wait would count the host's time to issue it (pkc's stub and the
 * driver call, a few microseconds) as GPU time, which the peers' figures
 * do not hold.  PK_BENCH_SYNC_EACH=1 waits after each launch instead (how
 * the figures before 2026-11-30's nineteenth session were taken), to
 * compare the two.  Header-only (static functions), so each program still
 * builds from its one .c file. */
#ifndef BENCH_TIME_H
#define BENCH_TIME_H

#include <stdlib.h>

#include <pk_runtime.h>

/* One launch of what a program times (rep: which, from 0). */
typedef pk_status (*BenchTimedLaunch)(void *ctx, long long rep);

static int bench_time_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* `warmup` untimed launches, then `reps` timed ones on stream s of dev:
 * t[0..reps) their milliseconds, sorted.  On failure, *what says which step
 * failed. */
static pk_status bench_time_launches(pk_device *dev, pk_stream *s, long long warmup, long long reps,
                                     BenchTimedLaunch launch, void *ctx, double *t, const char **what)
{
	pk_status st = PK_SUCCESS;
	*what = "launch";
	for (long long w = 0; w < warmup && st == PK_SUCCESS; w++)
		st = launch(ctx, w);
	if (st == PK_SUCCESS && (st = pk_stream_synchronize(s)) != PK_SUCCESS)
		return st;
	const char *sync = getenv("PK_BENCH_SYNC_EACH");
	int each = sync && *sync && *sync != '0';
	pk_event **ev = calloc((size_t)(2 * reps), sizeof *ev);
	if (!ev)
		return *what = "malloc", PK_ERR_OUT_OF_MEMORY;
	long long made = 0;
	for (*what = "pk_event_create"; made < 2 * reps && st == PK_SUCCESS; made++)
		st = pk_event_create(dev, &ev[made]);
	for (long long k = 0; k < reps && st == PK_SUCCESS; k++) {
		*what = "pk_event_record";
		if ((st = pk_event_record(ev[2 * k], s)) != PK_SUCCESS)
			break;
		*what = "launch";
		if ((st = launch(ctx, k)) != PK_SUCCESS)
			break;
		*what = "pk_event_record";
		if ((st = pk_event_record(ev[2 * k + 1], s)) != PK_SUCCESS)
			break;
		if (each && (*what = "launch", st = pk_event_synchronize(ev[2 * k + 1])) != PK_SUCCESS)
			break;
	}
	if (st == PK_SUCCESS)
		*what = "launch", st = pk_stream_synchronize(s);
	for (long long k = 0; k < reps && st == PK_SUCCESS; k++)
		*what = "pk_event_elapsed_ms", st = pk_event_elapsed_ms(ev[2 * k], ev[2 * k + 1], &t[k]);
	for (long long e = 0; e < made; e++)
		if (ev[e])
			pk_event_destroy(ev[e]);
	free(ev);
	if (st == PK_SUCCESS)
		qsort(t, (size_t)reps, sizeof *t, bench_time_cmp);
	return st;
}

/* The median of n sorted times (the mean of the middle two for even n). */
static double bench_time_median(const double *t, long long n)
{
	return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

#endif
