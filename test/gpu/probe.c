/* probe.c - the first thing test/gpu/run.sh runs on the GPU machine: does
 * libpkrt find the GPU through the CUDA driver, and do buffers, streams and
 * events work?  Prints one line per device and "probe: OK", or the failure
 * (with pk_last_error()) and exits 1. */
#include <stdio.h>
#include <string.h>

#include <pk_runtime.h>

static int fail(pk_status st, const char *what)
{
	printf("probe: %s: %s: %s\n", what, pk_status_name(st), pk_last_error());
	return 1;
}

int main(void)
{
	int n = 0;
	pk_status st = pk_device_count(PK_DEVICE_CUDA, &n);
	if (st != PK_SUCCESS)
		return fail(st, "pk_device_count");
	if (n == 0) {
		pk_device *d = NULL;
		return fail(pk_device_get(PK_DEVICE_CUDA, 0, &d), "no CUDA device");
	}
	for (int i = 0; i < n; i++) {
		pk_device *d = NULL;
		int major = 0, minor = 0;
		if ((st = pk_device_get(PK_DEVICE_CUDA, i, &d)) != PK_SUCCESS)
			return fail(st, "pk_device_get");
		if ((st = pk_device_compute_capability(d, &major, &minor)) != PK_SUCCESS)
			return fail(st, "pk_device_compute_capability");
		printf("probe: CUDA device %d: %s, compute capability %d.%d\n", i, pk_device_name(d), major, minor);
	}
	pk_device *d = NULL;
	pk_stream *s = NULL;
	pk_event *e0 = NULL, *e1 = NULL;
	void *buf = NULL;
	enum { N = 1 << 20 };
	static unsigned char in[N], out[N];
	for (int i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 31 + 7);
	if ((st = pk_device_get(PK_DEVICE_CUDA, 0, &d)) || (st = pk_stream_create(d, &s)) ||
	    (st = pk_event_create(d, &e0)) || (st = pk_event_create(d, &e1)) || (st = pk_malloc(d, N, &buf)))
		return fail(st, "setup");
	double ms = -1;
	if ((st = pk_event_record(e0, s)) || (st = pk_memcpy(s, buf, in, N, PK_MEMCPY_HOST_TO_DEVICE)) ||
	    (st = pk_memset(s, buf, 0x5A, 16)) || (st = pk_memcpy(s, out, buf, N, PK_MEMCPY_DEVICE_TO_HOST)) ||
	    (st = pk_event_record(e1, s)) || (st = pk_stream_synchronize(s)) || (st = pk_event_elapsed_ms(e0, e1, &ms)))
		return fail(st, "copies");
	int ok = out[0] == 0x5A && out[15] == 0x5A && !memcmp(out + 16, in + 16, N - 16);
	printf("probe: 1 MiB round trip %s in %.3f ms\n", ok ? "matches" : "DIFFERS", ms);
	if ((st = pk_free(d, buf)) || (st = pk_event_destroy(e0)) || (st = pk_event_destroy(e1)) ||
	    (st = pk_stream_destroy(s)))
		return fail(st, "teardown");
	printf("probe: %s\n", ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
