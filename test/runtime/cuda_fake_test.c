/* cuda_fake_test.c - libpkrt's CUDA device kind against the fake driver
 * (fake_cuda.c as libcuda.so.1, through LD_LIBRARY_PATH), configured with
 *   FAKE_CUDA_CC=90,86,103 FAKE_CUDA_MEM_LIMIT=1048576
 * Devices, contexts on other threads, streams, buffers, events, and
 * pk_launch_cuda: image selection (exact SASS, compatible SASS, PTX JIT,
 * fallback after a rejected image, none), module caching (one load per
 * module and context, from 4 threads), the dynamic shared memory opt-in,
 * parameter passing, and the driver's error strings in every message.
 * Prints "cuda_fake_test: N checks passed". */
#define _POSIX_C_SOURCE 200809L
#include "rt_check.h"
#include "fake_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static fake_cuda_stats_fn get_stats;
static fake_cuda_set_sync_error_fn set_sync_error;
static pk_device *dev[3]; /* sm_90, sm_86, sm_103 */

static fake_cuda_stats stats(void)
{
	fake_cuda_stats s;
	get_stats(&s);
	return s;
}

/* ---- devices, streams, memory, events ------------------------------------------ */

static void test_devices(void)
{
	int n = -1;
	CHECK_OK(pk_device_count(PK_DEVICE_CUDA, &n));
	CHECK(n == 3);
	for (int i = 0; i < 3; i++) {
		CHECK_OK(pk_device_get(PK_DEVICE_CUDA, i, &dev[i]));
		CHECK(dev[i] != NULL);
		CHECK(pk_device_kind_of(dev[i]) == PK_DEVICE_CUDA);
	}
	CHECK(!strcmp(pk_device_name(dev[0]), "Fake GPU 0 (CUDA device 0, sm_90)"));
	CHECK(!strcmp(pk_device_name(dev[2]), "Fake GPU 2 (CUDA device 2, sm_103)"));
	pk_device *again = NULL;
	CHECK_OK(pk_device_get(PK_DEVICE_CUDA, 1, &again));
	CHECK(again == dev[1]);
	CHECK(stats().retains == 3); /* once per device */
	CHECK_FAILS(pk_device_get(PK_DEVICE_CUDA, 3, &again), PK_ERR_INVALID_VALUE, "out of range (there are 3 CUDA devices)");
	CHECK(again == NULL);
	int major = 0, minor = 0;
	CHECK_OK(pk_device_compute_capability(dev[1], &major, &minor));
	CHECK(major == 8 && minor == 6);
	CHECK_OK(pk_device_compute_capability(dev[2], &major, &minor));
	CHECK(major == 10 && minor == 3);
}

static void test_streams(void)
{
	int live = stats().live_streams;
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(dev[0], &s));
	CHECK(s != NULL && pk_stream_device(s) == dev[0]);
	CHECK(stats().live_streams == live + 1);
	CHECK_OK(pk_stream_synchronize(s));
	CHECK_OK(pk_stream_destroy(s));
	CHECK(stats().live_streams == live);

	pk_stream *d = pk_stream_default(dev[1]);
	CHECK(d != NULL && pk_stream_device(d) == dev[1]);
	CHECK(d != pk_stream_default(dev[0]));
	CHECK(pk_stream_default(dev[1]) == d);
	CHECK_OK(pk_stream_synchronize(d));
	CHECK_OK(pk_stream_destroy(d)); /* no-op */
	CHECK_OK(pk_stream_synchronize(d));

	/* A destroyed CUDA stream (recent enough to be kept): every use fails,
	 * a launch included, and the driver sees nothing. */
	CHECK_OK(pk_stream_create(dev[0], &s));
	CHECK_OK(pk_stream_destroy(s));
	CHECK(stats().live_streams == live);
	CHECK_FAILS(pk_stream_destroy(s), PK_ERR_INVALID_VALUE, "pk_stream_destroy: the stream was destroyed");
	CHECK_FAILS(pk_stream_synchronize(s), PK_ERR_INVALID_VALUE, "the stream was destroyed");
	static const char text[] = "FAKE-OK kernels: k1";
	static const pk_cuda_image img[] = {{"sm_90", PK_CUDA_SASS, text, sizeof text}};
	pk_cuda_module m = {img, 1, NULL};
	pk_cuda_launch l = {"k1", &m, {1, 1, 1}, {128, 1, 1}, 0, NULL};
	int launches = stats().launches;
	CHECK_FAILS(pk_launch_cuda(s, &l), PK_ERR_INVALID_VALUE, "k1: the stream was destroyed");
	CHECK(stats().live_streams == live && stats().launches == launches);
}

static void test_memory(void)
{
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(dev[0], &s));
	int live = stats().live_allocations;
	unsigned char host[4096], back[4096];
	for (int i = 0; i < 4096; i++)
		host[i] = (unsigned char)(i * 7 + 1);
	void *p = NULL, *q = NULL, *z = NULL, *z2 = NULL;
	CHECK_OK(pk_malloc(dev[0], sizeof host, &p));
	CHECK_OK(pk_malloc(dev[0], sizeof host, &q));
	CHECK_OK(pk_malloc(dev[0], 0, &z));
	CHECK_OK(pk_malloc(dev[0], 0, &z2));
	CHECK(p && q && z && z2 && z != z2);
	CHECK(stats().live_allocations == live + 4);
	CHECK_OK(pk_memcpy(s, p, host, sizeof host, PK_MEMCPY_HOST_TO_DEVICE));
	CHECK_OK(pk_memcpy(s, q, p, sizeof host, PK_MEMCPY_DEVICE_TO_DEVICE));
	memset(back, 0, sizeof back);
	CHECK_OK(pk_memcpy(s, back, q, sizeof back, PK_MEMCPY_DEVICE_TO_HOST));
	CHECK_OK(pk_stream_synchronize(s));
	CHECK(memcmp(back, host, sizeof host) == 0);
	CHECK_OK(pk_memset(s, q, 0x1AB, 100)); /* (unsigned char)0x1AB = 0xAB */
	CHECK_OK(pk_memcpy(pk_stream_default(dev[0]), back, q, sizeof back, PK_MEMCPY_DEVICE_TO_HOST));
	CHECK(back[0] == 0xAB && back[99] == 0xAB && back[100] == host[100]);

	/* Errors carry the driver's name and description. */
	void *big = (void *)&live;
	CHECK_FAILS(pk_malloc(dev[0], 2u << 20, &big), PK_ERR_OUT_OF_MEMORY,
	            "pk_malloc: cannot allocate 2097152 bytes on Fake GPU 0 (CUDA device 0, sm_90): "
	            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
	CHECK(big == NULL);
	CHECK_FAILS(pk_free(dev[0], host), PK_ERR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE (invalid argument)");
	CHECK_FAILS(pk_memcpy(s, host, back, 16, PK_MEMCPY_DEVICE_TO_HOST), PK_ERR_INVALID_VALUE,
	            "device-to-host copy of 16 bytes");
	CHECK_FAILS(pk_memset(s, host, 0, 16), PK_ERR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE");
	CHECK_FAILS(pk_memcpy(s, p, host, 16, (pk_memcpy_kind)9), PK_ERR_INVALID_VALUE, "unknown copy kind 9");

	CHECK_OK(pk_free(dev[0], p));
	CHECK_OK(pk_free(dev[0], q));
	CHECK_OK(pk_free(dev[0], z));
	CHECK_OK(pk_free(dev[0], z2));
	CHECK_OK(pk_free(dev[0], NULL));
	CHECK(stats().live_allocations == live);
	CHECK_OK(pk_stream_destroy(s));
}

static void test_events(void)
{
	pk_event *a = NULL, *b = NULL, *other = NULL;
	int live = stats().live_events;
	CHECK_OK(pk_event_create(dev[0], &a));
	CHECK_OK(pk_event_create(dev[0], &b));
	CHECK_OK(pk_event_create(dev[1], &other));
	CHECK(stats().live_events == live + 3);
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(dev[0], &s));
	CHECK_OK(pk_event_record(a, s));
	CHECK_OK(pk_event_record(b, pk_stream_default(dev[0])));
	CHECK_OK(pk_event_synchronize(b));
	double ms = -1;
	CHECK_OK(pk_event_elapsed_ms(a, b, &ms));
	CHECK(ms == 0.5); /* the fake clock advances 0.5 ms per record */
	CHECK_FAILS(pk_event_record(other, s), PK_ERR_INVALID_VALUE, "the event belongs to Fake GPU 1");
	CHECK_FAILS(pk_event_record(a, NULL), PK_ERR_INVALID_VALUE, "but the stream to host");
	CHECK_OK(pk_event_record(other, pk_stream_default(dev[1])));
	CHECK_FAILS(pk_event_elapsed_ms(a, other, &ms), PK_ERR_INVALID_VALUE, "different devices");
	set_sync_error(719);
	CHECK_FAILS(pk_event_synchronize(a), PK_ERR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
	set_sync_error(0);
	CHECK_OK(pk_stream_destroy(s));
	CHECK_OK(pk_event_destroy(a));
	CHECK_OK(pk_event_destroy(b));
	CHECK_OK(pk_event_destroy(other));
	CHECK(stats().live_events == live);
}

/* ---- launches ------------------------------------------------------------------- */

#define IMG(arch, kind, text) {arch, kind, text, sizeof text}

static const char ok_k1[] = "FAKE-OK kernels: k1 k2 store_i32 fail_launch";
static const char ok_k1b[] = "FAKE-OK kernels: k1 store_i32";
static const char ok_k1c[] = "FAKE-OK kernels: k1";
static const char ok_cluster[] = "FAKE-OK kernels: cluster_k";

/* Launches kernel `name` of m with a 1x1x1 grid on dev d's default stream;
 * returns the status. */
static pk_status launch(pk_cuda_module *m, int d, const char *name, uint32_t shared)
{
	pk_cuda_launch l = {name, m, {1, 1, 1}, {128, 1, 1}, shared, NULL};
	return pk_launch_cuda(pk_stream_default(dev[d]), &l);
}

static void test_selection(void)
{
	/* Exact SASS, then compatible SASS (8.0 on 8.6), then PTX (10.3). */
	static const pk_cuda_image i1[] = {
		IMG("sm_80", PK_CUDA_SASS, ok_k1), IMG("sm_90a", PK_CUDA_SASS, ok_k1b), IMG("sm_80", PK_CUDA_PTX, ok_k1c)};
	static pk_cuda_module m1 = {i1, 3, NULL};
	CHECK_OK(launch(&m1, 0, "k1", 0));
	CHECK(stats().last_image == i1[1].data);
	CHECK_OK(launch(&m1, 1, "k1", 0));
	CHECK(stats().last_image == i1[0].data);
	CHECK_OK(launch(&m1, 2, "k1", 0));
	CHECK(stats().last_image == i1[2].data);

	/* "a" images: exact compute capability only, SASS and PTX alike. */
	static const pk_cuda_image i2[] = {IMG("sm_90a", PK_CUDA_SASS, ok_k1), IMG("sm_90a", PK_CUDA_PTX, ok_k1b)};
	static pk_cuda_module m2 = {i2, 2, NULL};
	CHECK_FAILS(launch(&m2, 1, "k1", 0), PK_ERR_NO_KERNEL_FOR_DEVICE,
	            "k1: no kernel image for Fake GPU 1 (CUDA device 1, sm_86): the object has sm_90a (SASS), "
	            "sm_90a (PTX).");
	CHECK(strstr(pk_last_error(), "--target=...,sm_86") != NULL);
	CHECK_FAILS(launch(&m2, 2, "k1", 0), PK_ERR_NO_KERNEL_FOR_DEVICE, "sm_103): the object has");
	CHECK_OK(launch(&m2, 0, "k1", 0));
	CHECK(stats().last_image == i2[0].data);

	/* 10.3: sm_100a is not usable, sm_100f SASS is (before PTX);
	 * an exact sm_103a beats a compatible sm_100; among exact, "a" first. */
	static const pk_cuda_image i3[] = {IMG("sm_100a", PK_CUDA_SASS, ok_k1), IMG("sm_100f", PK_CUDA_SASS, ok_k1b),
	                                   IMG("sm_100", PK_CUDA_PTX, ok_k1c)};
	static pk_cuda_module m3 = {i3, 3, NULL};
	CHECK_OK(launch(&m3, 2, "k1", 0));
	CHECK(stats().last_image == i3[1].data);
	static const pk_cuda_image i3b[] = {IMG("sm_100", PK_CUDA_SASS, ok_k1), IMG("sm_103a", PK_CUDA_SASS, ok_k1b)};
	static pk_cuda_module m3b = {i3b, 2, NULL};
	CHECK_OK(launch(&m3b, 2, "k1", 0));
	CHECK(stats().last_image == i3b[1].data);
	static const pk_cuda_image i3c[] = {IMG("sm_90", PK_CUDA_SASS, ok_k1), IMG("sm_90a", PK_CUDA_SASS, ok_k1b)};
	static pk_cuda_module m3c = {i3c, 2, NULL};
	CHECK_OK(launch(&m3c, 0, "k1", 0));
	CHECK(stats().last_image == i3c[1].data);

	/* PTX: the newest not newer than the device. */
	static const pk_cuda_image i4[] = {IMG("sm_75", PK_CUDA_PTX, ok_k1), IMG("sm_90", PK_CUDA_PTX, ok_k1b),
	                                   IMG("compute_86", PK_CUDA_PTX, ok_k1c), IMG("sm_100", PK_CUDA_PTX, ok_k1)};
	static pk_cuda_module m4 = {i4, 4, NULL};
	CHECK_OK(launch(&m4, 1, "k1", 0));
	CHECK(stats().last_image == i4[2].data);
	CHECK_OK(launch(&m4, 0, "k1", 0));
	CHECK(stats().last_image == i4[1].data);
	CHECK_OK(launch(&m4, 2, "k1", 0));
	CHECK(stats().last_image == i4[3].data);

	/* A cubin the driver rejects: on to the PTX. */
	static const char nobin[] = "FAKE-NOBIN";
	static const pk_cuda_image i5[] = {IMG("sm_90", PK_CUDA_SASS, nobin), IMG("sm_90", PK_CUDA_PTX, ok_k1b)};
	static pk_cuda_module m5 = {i5, 2, NULL};
	int failures = stats().load_failures;
	CHECK_OK(launch(&m5, 0, "k1", 0));
	CHECK(stats().last_image == i5[1].data);
	CHECK(stats().load_failures == failures + 1);

	/* PTX that does not compile: the JIT log is in the message. */
	static const char bad[] = "FAKE-BADPTX";
	static const pk_cuda_image i6[] = {IMG("sm_80", PK_CUDA_PTX, bad)};
	static pk_cuda_module m6 = {i6, 1, NULL};
	CHECK_FAILS(launch(&m6, 0, "k1", 0), PK_ERR_NO_KERNEL_FOR_DEVICE,
	            "k1: cannot load a kernel image on Fake GPU 0 (CUDA device 0, sm_90) (the object has sm_80 (PTX)): "
	            "sm_80 (PTX): CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): JIT log: ptxas application ptx "
	            "input, line 7; error   : fake syntax error ptxas fatal");
	/* Every candidate rejected: the first failure decides the status. */
	static const pk_cuda_image i6b[] = {IMG("sm_90", PK_CUDA_SASS, nobin), IMG("sm_80", PK_CUDA_PTX, bad)};
	static pk_cuda_module m6b = {i6b, 2, NULL};
	CHECK_FAILS(launch(&m6b, 0, "k1", 0), PK_ERR_NO_KERNEL_FOR_DEVICE,
	            "sm_90 (SASS): CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available for execution on the "
	            "device); sm_80 (PTX): CUDA_ERROR_INVALID_PTX");

	/* Malformed tables. */
	static const pk_cuda_image i7[] = {{"sm_80", PK_CUDA_PTX, ok_k1, sizeof ok_k1 - 1}}; /* no NUL */
	static pk_cuda_module m7 = {i7, 1, NULL};
	CHECK_FAILS(launch(&m7, 0, "k1", 0), PK_ERR_INTERNAL, "sm_80 (PTX) is not NUL-terminated");
	static const pk_cuda_image i8[] = {IMG("gfx90a", PK_CUDA_SASS, ok_k1), IMG("sm_9", PK_CUDA_SASS, ok_k1),
	                                   IMG("sm_90x", PK_CUDA_SASS, ok_k1), {NULL, PK_CUDA_SASS, ok_k1, 3}};
	static pk_cuda_module m8 = {i8, 4, NULL};
	CHECK_FAILS(launch(&m8, 0, "k1", 0), PK_ERR_NO_KERNEL_FOR_DEVICE,
	            "the object has gfx90a (SASS), sm_9 (SASS), sm_90x (SASS), (null) (SASS).");
	static pk_cuda_module m9 = {NULL, 0, NULL};
	CHECK_FAILS(launch(&m9, 0, "k1", 0), PK_ERR_NO_KERNEL_FOR_DEVICE, "the object has no GPU images");
	static pk_cuda_module m10 = {NULL, 2, NULL};
	CHECK_FAILS(launch(&m10, 0, "k1", 0), PK_ERR_INVALID_VALUE, "image table is invalid");
	CHECK_FAILS(launch(NULL, 0, "k1", 0), PK_ERR_INVALID_VALUE, "module is NULL");
}

static void test_launch_errors(void)
{
	static const pk_cuda_image im[] = {IMG("sm_90", PK_CUDA_SASS, ok_k1)};
	static pk_cuda_module m = {im, 1, NULL};
	CHECK_FAILS(launch(&m, 0, "fail_launch", 0), PK_ERR_LAUNCH_FAILED,
	            "fail_launch: launch of grid (1, 1, 1) x block (128, 1, 1) with 0 bytes of dynamic shared memory on "
	            "Fake GPU 0 (CUDA device 0, sm_90) failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
	            "requested for launch)");
	CHECK_FAILS(launch(&m, 0, "nope", 0), PK_ERR_INTERNAL,
	            "nope: no such kernel entry in the sm_90 (SASS) image loaded on Fake GPU 0 (CUDA device 0, sm_90): "
	            "CUDA_ERROR_NOT_FOUND (named symbol not found)");

	/* An empty grid: success, nothing loaded or launched. */
	static pk_cuda_module mz = {im, 1, NULL};
	int launches = stats().launches;
	for (int d = 0; d < 3; d++) {
		pk_cuda_launch l = {"k1", &mz, {1, 1, 1}, {128, 1, 1}, 0, NULL};
		l.grid[d] = 0;
		CHECK_OK(pk_launch_cuda(pk_stream_default(dev[0]), &l));
	}
	CHECK(mz.cache == NULL);
	CHECK(stats().launches == launches);
	pk_cuda_launch l = {"k1", &mz, {1, 1, 1}, {0, 1, 1}, 0, NULL};
	CHECK_FAILS(pk_launch_cuda(pk_stream_default(dev[0]), &l), PK_ERR_INVALID_VALUE, "empty block (0, 1, 1)");
	CHECK_FAILS(pk_launch_cuda(NULL, &l), PK_ERR_INVALID_VALUE, "needs a stream of a CUDA device");
}

static void test_params_and_faults(void)
{
	static const pk_cuda_image im[] = {IMG("sm_90", PK_CUDA_SASS, ok_k1)};
	static pk_cuda_module m = {im, 1, NULL};
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(dev[0], &s));
	int32_t *buf = NULL, host[100];
	CHECK_OK(pk_malloc(dev[0], sizeof host, (void **)&buf));
	CHECK_OK(pk_memset(s, buf, 0xFF, sizeof host));
	int32_t value = 7;
	int64_t n = 100;
	void *params[3] = {&buf, &value, &n};
	pk_cuda_launch l = {"store_i32", &m, {3, 2, 1}, {256, 1, 1}, 1024, params};
	CHECK_OK(pk_launch_cuda(s, &l));
	fake_cuda_stats st = stats();
	CHECK(st.last_grid[0] == 3 && st.last_grid[1] == 2 && st.last_grid[2] == 1);
	CHECK(st.last_block[0] == 256 && st.last_block[1] == 1 && st.last_shared == 1024);
	/* Persistent kernels: at most the CTAs the device holds at once (132
	 * SMs, 2 CTAs each; 1 with over half the shared memory). */
	l.grid[0] = 1000, l.grid[1] = 1;
	CHECK_OK(pk_launch_cuda_persistent(s, &l));
	CHECK(stats().last_grid[0] == 264 && stats().last_grid[1] == 1);
	l.shared_bytes = 150 * 1024;
	CHECK_OK(pk_launch_cuda_persistent(s, &l));
	CHECK(stats().last_grid[0] == 132 && stats().last_shared == 150 * 1024);
	l.grid[0] = 5;
	CHECK_OK(pk_launch_cuda_persistent(s, &l));
	CHECK(stats().last_grid[0] == 5);
	/* The SMs the launch stubs of merged programs weigh the grid against
	 * (132 on the fake device; 0 for the host's streams). */
	CHECK(pk_cuda_sm_count(s) == 132);
	CHECK(pk_cuda_sm_count(NULL) == 0);
	/* The CTAs a launch holds at once, as the persistent launches above
	 * counted them (wide merges' stubs weigh waves with it); 0 off CUDA
	 * or for a kernel the module lacks. */
	CHECK(pk_cuda_resident_ctas(s, &l) == 132);
	l.shared_bytes = 1024;
	CHECK(pk_cuda_resident_ctas(s, &l) == 264);
	CHECK(pk_cuda_resident_ctas(NULL, &l) == 0);
	pk_cuda_launch missing = l;
	missing.kernel_name = "no_such_kernel";
	CHECK(pk_cuda_resident_ctas(s, &missing) == 0);
	pk_clear_error();
	l.shared_bytes = 150 * 1024;
	CHECK_OK(pk_memcpy(s, host, buf, sizeof host, PK_MEMCPY_DEVICE_TO_HOST));
	CHECK_OK(pk_stream_synchronize(s));
	int all = 1;
	for (int i = 0; i < 100; i++)
		all &= host[i] == 7;
	CHECK(all);

	/* A kernel fault surfaces at the next synchronization, naming the
	 * stream's last kernel. */
	set_sync_error(700);
	CHECK_FAILS(pk_stream_synchronize(s), PK_ERR_LAUNCH_FAILED,
	            "pk_stream_synchronize: work on Fake GPU 0 (CUDA device 0, sm_90) failed (the last kernel launched on "
	            "this stream: store_i32): CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
	int live = stats().live_streams;
	CHECK_FAILS(pk_stream_destroy(s), PK_ERR_LAUNCH_FAILED, "CUDA_ERROR_ILLEGAL_ADDRESS");
	CHECK(stats().live_streams == live - 1); /* destroyed all the same */
	set_sync_error(0);
	CHECK_OK(pk_free(dev[0], buf));
}

/* A kernel of 2-CTA clusters (the fake's cluster_* entries, through
 * cuFuncGetAttribute): persistent launches take whole clusters, at most
 * the driver's count of clusters at once (cuOccupancyMaxActiveClusters:
 * 61 in the fake, below the 66 pairs of its 132 SMs), a task count
 * rounded up to whole clusters (the kernel gives the extra CTA none);
 * a launch of one CTA a task cannot be of clusters. */
static void test_clusters(void)
{
	static const pk_cuda_image im[] = {IMG("sm_90", PK_CUDA_SASS, ok_cluster)};
	static pk_cuda_module m = {im, 1, NULL};
	pk_stream *s = NULL;
	CHECK_OK(pk_stream_create(dev[0], &s));
	pk_cuda_launch l = {"cluster_k", &m, {1000, 1, 1}, {256, 1, 1}, 150 * 1024, NULL};
	CHECK_OK(pk_launch_cuda_persistent(s, &l));
	CHECK(stats().last_grid[0] == 122);
	l.grid[0] = 5;
	CHECK_OK(pk_launch_cuda_persistent(s, &l));
	CHECK(stats().last_grid[0] == 6);
	l.grid[0] = 1;
	CHECK_OK(pk_launch_cuda_persistent(s, &l));
	CHECK(stats().last_grid[0] == 2);
	l.grid[0] = 5;
	CHECK_FAILS(pk_launch_cuda(s, &l), PK_ERR_INTERNAL, "cluster_k: a kernel of clusters of 2 CTAs launched with 5 CTAs");
	CHECK_OK(pk_stream_synchronize(s));
	CHECK_OK(pk_stream_destroy(s));
}

static void test_shared_memory(void)
{
	static const pk_cuda_image im[] = {IMG("sm_90", PK_CUDA_SASS, ok_k1)};
	static pk_cuda_module m = {im, 1, NULL};
	int sets = stats().set_attributes;
	CHECK_OK(launch(&m, 0, "k1", 48 * 1024));
	CHECK(stats().set_attributes == sets);
	for (int i = 0; i < 10; i++)
		CHECK_OK(launch(&m, 0, "k1", 64 * 1024));
	CHECK(stats().set_attributes == sets + 1);
	CHECK(stats().last_attribute == 64 * 1024);
	CHECK_OK(launch(&m, 0, "k1", 96 * 1024));
	CHECK(stats().set_attributes == sets + 2);
	CHECK(stats().last_attribute == 96 * 1024);
	CHECK_OK(launch(&m, 0, "k1", 64 * 1024));
	CHECK(stats().set_attributes == sets + 2);
	CHECK(stats().last_shared == 64 * 1024);
	/* Per function and per context. */
	CHECK_OK(launch(&m, 0, "k2", 64 * 1024 + 4));
	CHECK(stats().set_attributes == sets + 3);
	CHECK_FAILS(launch(&m, 0, "k1", 300 * 1024), PK_ERR_LAUNCH_FAILED,
	            "k1: needs 307200 bytes of dynamic shared memory; Fake GPU 0 (CUDA device 0, sm_90) allows at most "
	            "232448 per block");
}

/* ---- caching from several threads ------------------------------------------------- */

static const pk_cuda_image cache_images[] = {IMG("sm_90a", PK_CUDA_SASS, "FAKE-OK kernels: ka kb"),
                                             IMG("sm_80", PK_CUDA_SASS, "FAKE-OK kernels: ka kb")};
static pk_cuda_module cache_module = {cache_images, 2, NULL};

typedef struct worker {
	int device;      /* 0 or 1 */
	int launches;    /* how many */
	int failures;    /* launches that did not succeed */
} worker;

static void *launch_many(void *arg)
{
	worker *w = arg;
	pk_stream *s = NULL;
	if (pk_stream_create(dev[w->device], &s) != PK_SUCCESS) {
		w->failures = w->launches;
		return NULL;
	}
	for (int i = 0; i < w->launches; i++) {
		pk_cuda_launch l = {i % 2 ? "kb" : "ka", &cache_module, {1, 1, 1}, {32, 1, 1}, 0, NULL};
		if (pk_launch_cuda(s, &l) != PK_SUCCESS) {
			if (!w->failures)
				fprintf(stderr, "launch_many: %s\n", pk_last_error());
			w->failures++;
		}
	}
	if (pk_stream_destroy(s) != PK_SUCCESS)
		w->failures++;
	return NULL;
}

static void test_cache_threads(void)
{
	fake_cuda_stats before = stats();
	pthread_t t[4];
	worker w[4];
	for (int i = 0; i < 4; i++) {
		w[i] = (worker){i / 2, 250, 0};
		CHECK(pthread_create(&t[i], NULL, launch_many, &w[i]) == 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(w[i].failures == 0);
	}
	fake_cuda_stats after = stats();
	CHECK(after.module_loads == before.module_loads + 2);   /* one per context */
	CHECK(after.get_functions == before.get_functions + 4); /* ka, kb per context */
	CHECK(after.launches == before.launches + 1000);
	CHECK(cache_module.cache != NULL);
	/* And again from this thread: everything cached. */
	CHECK_OK(launch(&cache_module, 1, "kb", 0));
	CHECK(stats().module_loads == after.module_loads);
	CHECK(stats().last_image == cache_images[1].data);
}

/* pk_cuda_tensor_map: the driver gets the array innermost first, the
 * byte strides, the box (1 along the dimensions other than the rows and
 * the last) and the swizzle; bad shapes are refused before the driver sees
 * them. */
static void test_tensor_maps(void)
{
	_Alignas(64) unsigned long long map[PK_CUDA_TENSOR_MAP_BYTES / 8];
	void *p = NULL;
	CHECK_OK(pk_malloc(dev[0], 1 << 20, &p));
	uint64_t d2[2] = {300, 136};
	CHECK_OK(pk_cuda_tensor_map(map, p, 2, 2, d2, 0, 128, 64, 128, "k"));
	CHECK(map[0] == FAKE_TMAP_MAGIC && map[1] == 1 && map[2] == (uintptr_t)p && map[3] == 2);
	CHECK(map[FAKE_TMAP_DIMS] == 136 && map[FAKE_TMAP_DIMS + 1] == 300 && map[FAKE_TMAP_STRIDES] == 272);
	CHECK(map[FAKE_TMAP_BOX] == (64 | 128 << 12) && map[FAKE_TMAP_MODES] == (3 | 2 << 8));
	/* The rank-2 entry older launch stubs call gives the same map. */
	_Alignas(64) unsigned long long map2[PK_CUDA_TENSOR_MAP_BYTES / 8];
	CHECK_OK(pk_cuda_tensor_map_2d(map2, p, 2, 300, 136, 128, 64, 128, "k"));
	CHECK(memcmp(map, map2, sizeof map) == 0);
	uint64_t small[2] = {64, 32};
	CHECK_OK(pk_cuda_tensor_map(map, p, 2, 2, small, 0, 64, 32, 64, "k"));
	CHECK(map[FAKE_TMAP_MODES] == (2 | 2 << 8) && map[FAKE_TMAP_BOX] == (32 | 64 << 12));
	/* Attention's keys [b, seq, h, d], the rows along seq: the box is
	 * d x rows x 1 x 1, innermost first. */
	uint64_t d4[4] = {3, 200, 5, 64};
	CHECK_OK(pk_cuda_tensor_map(map, p, 2, 4, d4, 1, 64, 64, 128, "k"));
	CHECK(map[3] == 4 && map[FAKE_TMAP_DIMS] == 64 && map[FAKE_TMAP_DIMS + 1] == 5 && map[FAKE_TMAP_DIMS + 2] == 200 &&
	      map[FAKE_TMAP_DIMS + 3] == 3);
	CHECK(map[FAKE_TMAP_STRIDES] == 128 && map[FAKE_TMAP_STRIDES + 1] == 640 &&
	      map[FAKE_TMAP_STRIDES + 2] == 128000);
	CHECK(map[FAKE_TMAP_BOX] == (64 | 1 << 12 | 64ull << 24 | 1ull << 36));
	/* A batched [b, m, k] operand of 5 dimensions' worth at most. */
	uint64_t d5[5] = {2, 2, 2, 16, 32};
	CHECK_OK(pk_cuda_tensor_map(map, p, 4, 5, d5, 3, 16, 32, 128, "k"));
	CHECK(map[3] == 5 && map[FAKE_TMAP_BOX] == (32 | 16 << 12 | 1ull << 24 | 1ull << 36 | 1ull << 48));
	/* An empty array: a map of zeros, never read. */
	uint64_t e[3] = {4, 0, 64};
	CHECK_OK(pk_cuda_tensor_map(map, p, 2, 3, e, 1, 64, 64, 128, "k"));
	CHECK(map[0] == 0);
	/* Rows of 100 f16 (200 bytes) misaligned: refused (the stub launches
	 * the variant that copies with cp.async instead, test/gpu kernels.txt
	 * tma-rank3-unaligned). */
	uint64_t bad[3] = {2, 64, 100};
	CHECK_FAILS(pk_cuda_tensor_map(map, p, 2, 3, bad, 1, 64, 64, 128, "k"), PK_ERR_INVALID_VALUE,
	            "k: the copy engine needs a 16-byte aligned array and rows (200 bytes here)");
	uint64_t sq[2] = {64, 64};
	CHECK_FAILS(pk_cuda_tensor_map(map, (char *)p + 8, 2, 2, sq, 0, 64, 64, 128, "k"), PK_ERR_INVALID_VALUE,
	            "16-byte aligned");
	CHECK_FAILS(pk_cuda_tensor_map(map, p, 2, 2, sq, 0, 64, 128, 128, "k"), PK_ERR_INVALID_VALUE,
	            "k: tensor map box 64 x 128 of 2-byte elements with a 128-byte swizzle is invalid");
	uint64_t big[3] = {1, (uint64_t)1 << 31, 64};
	CHECK_FAILS(pk_cuda_tensor_map(map, p, 2, 3, big, 1, 64, 64, 128, "k"), PK_ERR_INVALID_VALUE,
	            "k: dimension 1 of the array (2147483648) is too large for the copy engine");
	CHECK_FAILS(pk_cuda_tensor_map(map, p, 2, 6, d4, 1, 64, 64, 128, "k"), PK_ERR_INVALID_VALUE,
	            "k: a tensor map of rank 6 with rows along dimension 1 is invalid");
	CHECK_FAILS(pk_cuda_tensor_map(map, p, 2, 4, d4, 3, 64, 64, 128, "k"), PK_ERR_INVALID_VALUE,
	            "rows along dimension 3 is invalid");
	CHECK_FAILS(pk_cuda_tensor_map((char *)map + 16, p, 2, 2, sq, 0, 64, 64, 128, "k"), PK_ERR_INVALID_VALUE,
	            "not 64-byte aligned");
	CHECK_OK(pk_free(dev[0], p));
}

int main(void)
{
	int n = 0;
	if (pk_device_count(PK_DEVICE_CUDA, &n) != PK_SUCCESS || n == 0) {
		pk_device *d;
		pk_device_get(PK_DEVICE_CUDA, 0, &d);
		printf("cuda_fake_test: the fake driver was not loaded (run with LD_LIBRARY_PATH=<fakecuda dir> "
		       "FAKE_CUDA_CC=90,86,103): %s\n", pk_last_error());
		return 1;
	}
	/* The library the runtime loaded (same name, same search path). */
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (lib) {
		void *a = dlsym(lib, "fake_cuda_stats_get"), *b = dlsym(lib, "fake_cuda_set_sync_error");
		memcpy(&get_stats, &a, sizeof a);
		memcpy(&set_sync_error, &b, sizeof b);
	}
	if (!get_stats || !set_sync_error) {
		printf("cuda_fake_test: libcuda.so.1 is not the fake driver\n");
		return 1;
	}
	test_devices();
	test_streams();
	test_memory();
	test_events();
	test_selection();
	test_launch_errors();
	test_params_and_faults();
	test_clusters();
	test_shared_memory();
	test_cache_threads();
	test_tensor_maps();
	return check_summary("cuda_fake_test");
}
