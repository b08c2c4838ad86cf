/* cs_time.c - times samples/causal_softmax.pk's kernel on the GPU with pk
 * events (wip-ctime4's device call: its 128 divisions a thread are shared,
 * nvptx_size.c): b = 8192 programs of 128 x 128 f32 (512 MiB read + written),
 * 5 warm-up launches, then 30 timed ones; prints min and median ms.
 *   cc -I<dir of causal_softmax.h> -Iruntime cs_time.c cs.o libpkrt.a -lm -pthread -ldl */
#include <stdio.h>
#include <stdlib.h>

#include "causal_softmax.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define CHECK(e) do { if ((e) != PK_SUCCESS) { fprintf(stderr, "%s: %s\n", #e, pk_last_error()); return 1; } } while (0)

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "causal_softmax";
	int64_t b = 8192, n = 128;
	pk_device *dev;
	pk_stream *s;
	pk_event *ev[2];
	void *x, *o, *lse;
	CHECK(pk_device_get(PK_DEVICE_CUDA, 0, &dev));
	CHECK(pk_stream_create(dev, &s));
	CHECK(pk_event_create(dev, &ev[0]));
	CHECK(pk_event_create(dev, &ev[1]));
	CHECK(pk_malloc(dev, (size_t)(b * n * n) * 4, &x));
	CHECK(pk_malloc(dev, (size_t)(b * n * n) * 4, &o));
	CHECK(pk_malloc(dev, (size_t)(b * n) * 4, &lse));
	CHECK(pk_memset(s, x, 0x3c, (size_t)(b * n * n) * 4));
	for (int i = 0; i < 5; i++)
		CHECK(causal_softmax(s, x, o, lse, b));
	CHECK(pk_stream_synchronize(s));
	double t[30];
	for (int r = 0; r < 30; r++) {
		CHECK(pk_event_record(ev[0], s));
		CHECK(causal_softmax(s, x, o, lse, b));
		CHECK(pk_event_record(ev[1], s));
		CHECK(pk_event_synchronize(ev[1]));
		CHECK(pk_event_elapsed_ms(ev[0], ev[1], &t[r]));
	}
	qsort(t, 30, sizeof t[0], cmp);
	printf("{\"name\": \"%s\", \"min_ms\": %.4f, \"median_ms\": %.4f, \"GBps\": %.1f}\n", name, t[0],
	       0.5 * (t[14] + t[15]), 2.0 * (double)(b * n * n) * 4 / (t[14] * 1e-3) / 1e9);
	return 0;
}
