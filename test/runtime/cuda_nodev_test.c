/* cuda_nodev_test.c - libpkrt's CUDA device kind on a machine without a
 * usable driver or GPU: no CUDA device (count 0, pk_device_get fails with
 * PK_ERR_NO_DEVICE and says why), CUDA launches on host streams are refused,
 * nothing crashes; plus the kind-agnostic additions (compute capability,
 * default streams, host events).
 *
 *   cuda_nodev_test none   there must be no CUDA device (run it with
 *                          PK_CUDA_DRIVER=/nonexistent, or the fake driver
 *                          configured with no GPU); prints the reason
 *   cuda_nodev_test        the same checks if this machine has no CUDA
 *                          device; on a machine with one, only the rest */
#define _POSIX_C_SOURCE 200809L
#include "rt_check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *count_cuda(void *arg)
{
	int *n = arg;
	if (pk_device_count(PK_DEVICE_CUDA, n) != PK_SUCCESS)
		*n = -1;
	return NULL;
}

static void test_no_cuda_device(void)
{
	/* Concurrent first calls: the driver is looked for once. */
	pthread_t t[4];
	int counts[4] = {-2, -2, -2, -2};
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, count_cuda, &counts[i]) == 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(counts[i] == 0);
	}
	pk_device *d = (pk_device *)&counts; /* any non-NULL value: must be reset */
	pk_clear_error();
	CHECK(pk_device_get(PK_DEVICE_CUDA, 0, &d) == PK_ERR_NO_DEVICE);
	CHECK(d == NULL);
	CHECK(strstr(pk_last_error(), "no CUDA device 0") != NULL);
	printf("no-device message: %s\n", pk_last_error());
	CHECK_FAILS(pk_device_get(PK_DEVICE_CUDA, 3, &d), PK_ERR_NO_DEVICE, "no CUDA device 3");
	CHECK_FAILS(pk_device_get(PK_DEVICE_CUDA, -1, &d), PK_ERR_NO_DEVICE, "CUDA");
}

static void test_launch_on_host(void)
{
	static const char ptx[] = "// not real PTX\n";
	static const pk_cuda_image images[] = {{"sm_90a", PK_CUDA_PTX, ptx, sizeof ptx}};
	static pk_cuda_module module = {images, 1, NULL};
	int32_t v = 0;
	void *params[1] = {&v};
	pk_cuda_launch l = {"my_kernel", &module, {4, 1, 1}, {128, 1, 1}, 0, params};

	CHECK_FAILS(pk_launch_cuda(NULL, &l), PK_ERR_INVALID_VALUE, "my_kernel: pk_launch_cuda needs a stream of a CUDA device");
	CHECK(strstr(pk_last_error(), "host") != NULL);
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(pk_stream_device(NULL), &s));
	CHECK_FAILS(pk_launch_cuda(s, &l), PK_ERR_INVALID_VALUE, "CUDA device");
	CHECK_FAILS(pk_launch_cuda(pk_stream_default(NULL), &l), PK_ERR_INVALID_VALUE, "CUDA device");
	/* Even an empty grid needs a CUDA stream. */
	l.grid[0] = 0;
	CHECK_FAILS(pk_launch_cuda(s, &l), PK_ERR_INVALID_VALUE, "CUDA device");
	CHECK_FAILS(pk_launch_cuda(s, NULL), PK_ERR_INVALID_VALUE, "launch is NULL");
	l.kernel_name = NULL;
	CHECK_FAILS(pk_launch_cuda(s, &l), PK_ERR_INVALID_VALUE, "kernel_name is NULL");
	CHECK_OK(pk_stream_destroy(s));
	CHECK(module.cache == NULL); /* nothing was loaded */
}

static void test_device_additions(void)
{
	pk_device *h = NULL;
	CHECK_OK(pk_device_get(PK_DEVICE_HOST, 0, &h));
	int major = -1, minor = -1;
	CHECK_FAILS(pk_device_compute_capability(h, &major, &minor), PK_ERR_NOT_SUPPORTED, "host");
	CHECK(major == 0 && minor == 0);
	CHECK_FAILS(pk_device_compute_capability(NULL, &major, &minor), PK_ERR_NOT_SUPPORTED, "host");
	CHECK_FAILS(pk_device_compute_capability(h, NULL, &minor), PK_ERR_INVALID_VALUE, "major is NULL");
	CHECK_FAILS(pk_device_compute_capability(h, &major, NULL), PK_ERR_INVALID_VALUE, "minor is NULL");

	pk_stream *ds = pk_stream_default(h);
	CHECK(ds != NULL);
	CHECK(pk_stream_default(NULL) == ds);
	CHECK(pk_stream_device(ds) == h);
	CHECK_OK(pk_stream_synchronize(ds));
	CHECK_OK(pk_stream_destroy(ds)); /* a no-op: it stays usable */
	char buf[8] = "abcdefg", out[8];
	CHECK_OK(pk_memcpy(ds, out, buf, sizeof buf, PK_MEMCPY_DEVICE_TO_HOST));
	CHECK(memcmp(out, buf, sizeof buf) == 0);
}

static void test_host_events(void)
{
	pk_event *a = NULL, *b = NULL, *c = NULL;
	CHECK_OK(pk_event_create(NULL, &a));
	CHECK_OK(pk_event_create(pk_stream_device(NULL), &b));
	CHECK_OK(pk_event_create(NULL, &c));
	CHECK(a && b && c);
	double ms = -1;
	CHECK_FAILS(pk_event_elapsed_ms(a, b, &ms), PK_ERR_INVALID_VALUE, "start event was never recorded");
	CHECK_FAILS(pk_event_synchronize(a), PK_ERR_INVALID_VALUE, "never recorded");
	CHECK_OK(pk_event_record(a, NULL));
	CHECK_FAILS(pk_event_elapsed_ms(a, b, &ms), PK_ERR_INVALID_VALUE, "end event was never recorded");
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(pk_stream_device(NULL), &s));
	CHECK_OK(pk_event_record(b, s));
	CHECK_OK(pk_event_synchronize(b));
	CHECK_OK(pk_event_elapsed_ms(a, b, &ms));
	CHECK(ms >= 15.0 && ms < 10000.0);
	CHECK_OK(pk_event_elapsed_ms(b, a, &ms));
	CHECK(ms <= -15.0);
	CHECK_FAILS(pk_event_elapsed_ms(a, b, NULL), PK_ERR_INVALID_VALUE, "ms is NULL");
	CHECK_FAILS(pk_event_elapsed_ms(NULL, b, &ms), PK_ERR_INVALID_VALUE, "start event is NULL");
	CHECK_FAILS(pk_event_record(NULL, s), PK_ERR_INVALID_VALUE, "event is NULL");
	CHECK_FAILS(pk_event_create(NULL, NULL), PK_ERR_INVALID_VALUE, "out is NULL");
	CHECK_OK(pk_stream_destroy(s));
	CHECK_OK(pk_event_destroy(a));
	CHECK_OK(pk_event_destroy(b));
	CHECK_OK(pk_event_destroy(c));
	CHECK_OK(pk_event_destroy(NULL));
}

int main(int argc, char **argv)
{
	int require_none = argc > 1 && !strcmp(argv[1], "none");
	int n = -1;
	CHECK_OK(pk_device_count(PK_DEVICE_CUDA, &n));
	if (require_none)
		CHECK(n == 0);
	if (n == 0) {
		test_no_cuda_device();
	} else {
		printf("cuda_nodev_test: %d CUDA device(s) present: no-device checks skipped\n", n);
	}
	test_launch_on_host();
	test_device_additions();
	test_host_events();
	return check_summary("cuda_nodev_test");
}
