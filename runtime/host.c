/* host.c - the host device: memory is PK_HOST_ALIGNMENT-aligned heap
 * memory and every stream operation completes before the call that submits
 * it returns, so host streams need no state, synchronize is a no-op and an
 * event is a clock reading. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include "internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* pk_device_name's text, formatted once: the thread count is fixed after
 * the pool starts. */
static char host_name_buf[48];
static pthread_once_t host_name_once = PTHREAD_ONCE_INIT;

static void format_host_name(void)
{
	int n = pkrt_pool_threads();
	snprintf(host_name_buf, sizeof host_name_buf, "host (%d thread%s)", n, n == 1 ? "" : "s");
}

static const char *host_name(const pk_device *dev)
{
	(void)dev;
	pthread_once(&host_name_once, format_host_name);
	return host_name_buf;
}

static pk_status host_malloc(pk_device *dev, size_t bytes, void **out)
{
	(void)dev;
	/* Round up to whole alignment units (at least one, so that 0 bytes gives
	 * a unique pointer); the check keeps the rounding from wrapping. */
	if (bytes > SIZE_MAX - PK_HOST_ALIGNMENT)
		return pk_set_error(PK_ERR_OUT_OF_MEMORY, "pk_malloc: cannot allocate %zu bytes on the host", bytes);
	size_t size = bytes == 0 ? PK_HOST_ALIGNMENT
	                         : (bytes + PK_HOST_ALIGNMENT - 1) / PK_HOST_ALIGNMENT * PK_HOST_ALIGNMENT;
	void *p = NULL;
	if (posix_memalign(&p, PK_HOST_ALIGNMENT, size) != 0 || !p)
		return pk_set_error(PK_ERR_OUT_OF_MEMORY, "pk_malloc: cannot allocate %zu bytes on the host", bytes);
	*out = p;
	return PK_SUCCESS;
}

static pk_status host_free(pk_device *dev, void *ptr)
{
	(void)dev;
	free(ptr);
	return PK_SUCCESS;
}

static pk_status host_memcpy(pk_stream *s, void *dst, const void *src, size_t bytes, pk_memcpy_kind kind)
{
	(void)s;
	(void)kind; /* all kinds are host memory here */
	memmove(dst, src, bytes);
	return PK_SUCCESS;
}

static pk_status host_memset(pk_stream *s, void *dst, int value, size_t bytes)
{
	(void)s;
	memset(dst, value, bytes);
	return PK_SUCCESS;
}

static pk_status host_stream_nop(pk_stream *s)
{
	(void)s;
	return PK_SUCCESS;
}

static pk_status host_compute_capability(const pk_device *dev, int *major, int *minor)
{
	(void)dev;
	*major = *minor = 0;
	return pk_set_error(PK_ERR_NOT_SUPPORTED, "pk_device_compute_capability: the host device has no compute "
	                    "capability (it is a CUDA property)");
}

static pk_stream *host_default_stream(pk_device *dev)
{
	(void)dev;
	return &pkrt_host_default_stream;
}

/* Host events: work on a host stream is complete when the call that
 * submits it returns, so recording an event just reads the clock. */
static pk_status host_event_nop(pk_event *e)
{
	(void)e;
	return PK_SUCCESS;
}

static pk_status host_event_record(pk_event *e, pk_stream *s)
{
	(void)s;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	e->host_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
	return PK_SUCCESS;
}

static pk_status host_event_elapsed(const pk_event *start, const pk_event *end, double *ms)
{
	*ms = end->host_ms - start->host_ms;
	return PK_SUCCESS;
}

static const pkrt_device_ops host_ops = {
	.name_fn = host_name,
	.compute_capability_fn = host_compute_capability,
	.default_stream_fn = host_default_stream,
	.malloc_fn = host_malloc,
	.free_fn = host_free,
	.memcpy_fn = host_memcpy,
	.memset_fn = host_memset,
	.stream_init = host_stream_nop,
	.stream_fini = host_stream_nop,
	.stream_synchronize = host_stream_nop,
	.event_init = host_event_nop,
	.event_fini = host_event_nop,
	.event_record = host_event_record,
	.event_synchronize = host_event_nop,
	.event_elapsed = host_event_elapsed,
};

pk_device pkrt_host_device = {
	.kind = PK_DEVICE_HOST,
	.ordinal = 0,
	.ops = &host_ops,
	.impl = NULL,
};

pk_stream pkrt_host_default_stream = {
	.magic = PKRT_STREAM_MAGIC,
	.device = &pkrt_host_device,
	.is_default = true,
	.impl = NULL,
};
