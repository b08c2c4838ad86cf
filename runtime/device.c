/* device.c - the public device, stream, event and buffer API: argument
 * checks, then dispatch through the device kind's pkrt_device_ops table.
 *
 * Only pk_device_count/pk_device_get know the kinds (host.c, cuda.c); the
 * rest of this file is kind-agnostic. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

/* The stream that NULL stands for. */
static pk_stream *resolve_stream(pk_stream *s)
{
	return s ? s : &pkrt_host_default_stream;
}

/* ---- destroyed handles ------------------------------------------------------- */

/* Destroying a stream or event clears its magic word and parks its memory
 * here instead of freeing it; the oldest parked handle is freed when a new
 * one arrives.  So a use of one of the last QUARANTINE handles destroyed
 * (destroying it twice, a launch after destroy) reads memory that is still
 * allocated, finds the word cleared and fails with PK_ERR_INVALID_VALUE.
 * Older ones are freed: using them is undefined (pk_runtime.h). */
enum { QUARANTINE = 64 };
static struct {
	pthread_mutex_t mu;
	void *parked[QUARANTINE]; /* destroyed handles, a ring */
	int next;                 /* the slot the next one takes (its old one is freed) */
} graveyard = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void retire(void *handle)
{
	pthread_mutex_lock(&graveyard.mu);
	void *old = graveyard.parked[graveyard.next];
	graveyard.parked[graveyard.next] = handle;
	graveyard.next = (graveyard.next + 1) % QUARANTINE;
	pthread_mutex_unlock(&graveyard.mu);
	free(old);
}

pk_status pkrt_check_stream(const pk_stream *s, const char *fn)
{
	if (s && s->magic != PKRT_STREAM_MAGIC)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: the stream was destroyed (or is not a stream)", fn);
	return PK_SUCCESS;
}

static pk_status check_event(const pk_event *e, const char *fn, const char *which)
{
	if (!e)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: %sevent is NULL", fn, which);
	if (e->magic != PKRT_EVENT_MAGIC)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: the %sevent was destroyed (or is not an event)", fn,
		                    which);
	return PK_SUCCESS;
}

/* Returns from the calling function when `call` (a pk_status) fails. */
#define TRY(call)                                    \
	do {                                         \
		pk_status try_ = (call);             \
		if (try_ != PK_SUCCESS)              \
			return try_;                 \
	} while (0)

pk_status pk_device_count(pk_device_kind kind, int *n)
{
	if (!n)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_device_count: n is NULL");
	switch (kind) {
	case PK_DEVICE_HOST:
		*n = 1;
		return PK_SUCCESS;
	case PK_DEVICE_CUDA:
		return pkrt_cuda_device_count(n);
	}
	*n = 0;
	return pk_set_error(PK_ERR_INVALID_VALUE, "pk_device_count: unknown device kind %d", (int)kind);
}

pk_status pk_device_get(pk_device_kind kind, int ordinal, pk_device **out)
{
	if (!out)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_device_get: out is NULL");
	*out = NULL;
	switch (kind) {
	case PK_DEVICE_HOST:
		if (ordinal != 0)
			return pk_set_error(PK_ERR_INVALID_VALUE,
			                    "pk_device_get: host device ordinal %d out of range (there is 1 host device)",
			                    ordinal);
		*out = &pkrt_host_device;
		return PK_SUCCESS;
	case PK_DEVICE_CUDA:
		return pkrt_cuda_device_get(ordinal, out);
	}
	return pk_set_error(PK_ERR_INVALID_VALUE, "pk_device_get: unknown device kind %d", (int)kind);
}

pk_device_kind pk_device_kind_of(const pk_device *dev)
{
	return dev ? dev->kind : PK_DEVICE_HOST;
}

const char *pk_device_name(const pk_device *dev)
{
	if (!dev)
		dev = &pkrt_host_device;
	return dev->ops->name_fn(dev);
}

pk_status pk_device_compute_capability(const pk_device *dev, int *major, int *minor)
{
	if (!major || !minor)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_device_compute_capability: %s is NULL",
		                    !major ? "major" : "minor");
	*major = *minor = 0;
	if (!dev)
		dev = &pkrt_host_device;
	return dev->ops->compute_capability_fn(dev, major, minor);
}

pk_stream *pk_stream_default(pk_device *dev)
{
	if (!dev)
		return &pkrt_host_default_stream;
	return dev->ops->default_stream_fn(dev);
}

pk_status pk_stream_create(pk_device *dev, pk_stream **out)
{
	if (!out)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_stream_create: out is NULL");
	*out = NULL;
	if (!dev)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_stream_create: device is NULL");
	pk_stream *s = calloc(1, sizeof *s);
	if (!s)
		return pk_set_error(PK_ERR_OUT_OF_MEMORY, "pk_stream_create: out of memory");
	s->device = dev;
	s->is_default = false;
	pk_status st = dev->ops->stream_init(s);
	if (st != PK_SUCCESS) {
		free(s);
		return st;
	}
	s->magic = PKRT_STREAM_MAGIC;
	*out = s;
	return PK_SUCCESS;
}

pk_status pk_stream_destroy(pk_stream *s)
{
	TRY(pkrt_check_stream(s, "pk_stream_destroy"));
	if (!s || s->is_default)
		return PK_SUCCESS;
	/* Release the stream even if draining it reported an error: the caller
	 * cannot retry a destroy, so keeping it would only leak. */
	pk_status st = s->device->ops->stream_fini(s);
	s->magic = 0;
	retire(s);
	return st;
}

pk_status pk_stream_synchronize(pk_stream *s)
{
	TRY(pkrt_check_stream(s, "pk_stream_synchronize"));
	s = resolve_stream(s);
	return s->device->ops->stream_synchronize(s);
}

pk_device *pk_stream_device(const pk_stream *s)
{
	return s ? s->device : &pkrt_host_device;
}

pk_status pk_malloc(pk_device *dev, size_t bytes, void **out)
{
	if (!out)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_malloc: out is NULL");
	*out = NULL;
	if (!dev)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_malloc: device is NULL");
	return dev->ops->malloc_fn(dev, bytes, out);
}

pk_status pk_free(pk_device *dev, void *ptr)
{
	if (!dev)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_free: device is NULL");
	if (!ptr)
		return PK_SUCCESS;
	return dev->ops->free_fn(dev, ptr);
}

pk_status pk_memcpy(pk_stream *s, void *dst, const void *src, size_t bytes, pk_memcpy_kind kind)
{
	switch (kind) {
	case PK_MEMCPY_HOST_TO_DEVICE:
	case PK_MEMCPY_DEVICE_TO_HOST:
	case PK_MEMCPY_DEVICE_TO_DEVICE:
		break;
	default:
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_memcpy: unknown copy kind %d", (int)kind);
	}
	if (bytes == 0)
		return PK_SUCCESS;
	if (!dst || !src)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_memcpy: %s is NULL (copying %zu bytes)",
		                    !dst ? "dst" : "src", bytes);
	TRY(pkrt_check_stream(s, "pk_memcpy"));
	s = resolve_stream(s);
	return s->device->ops->memcpy_fn(s, dst, src, bytes, kind);
}

pk_status pk_memset(pk_stream *s, void *dst, int value, size_t bytes)
{
	if (bytes == 0)
		return PK_SUCCESS;
	if (!dst)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_memset: dst is NULL (setting %zu bytes)", bytes);
	TRY(pkrt_check_stream(s, "pk_memset"));
	s = resolve_stream(s);
	return s->device->ops->memset_fn(s, dst, value, bytes);
}

/* ---- events ------------------------------------------------------------------ */

pk_status pk_event_create(pk_device *dev, pk_event **out)
{
	if (!out)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_create: out is NULL");
	*out = NULL;
	if (!dev)
		dev = &pkrt_host_device;
	pk_event *e = calloc(1, sizeof *e);
	if (!e)
		return pk_set_error(PK_ERR_OUT_OF_MEMORY, "pk_event_create: out of memory");
	e->device = dev;
	pk_status st = dev->ops->event_init(e);
	if (st != PK_SUCCESS) {
		free(e);
		return st;
	}
	e->magic = PKRT_EVENT_MAGIC;
	*out = e;
	return PK_SUCCESS;
}

pk_status pk_event_destroy(pk_event *e)
{
	if (!e)
		return PK_SUCCESS;
	TRY(check_event(e, "pk_event_destroy", ""));
	pk_status st = e->device->ops->event_fini(e);
	e->magic = 0;
	retire(e);
	return st;
}

pk_status pk_event_record(pk_event *e, pk_stream *s)
{
	TRY(check_event(e, "pk_event_record", ""));
	TRY(pkrt_check_stream(s, "pk_event_record"));
	s = resolve_stream(s);
	if (s->device != e->device)
		return pk_set_error(PK_ERR_INVALID_VALUE,
		                    "pk_event_record: the event belongs to %s but the stream to %s",
		                    pk_device_name(e->device), pk_device_name(s->device));
	pk_status st = e->device->ops->event_record(e, s);
	if (st == PK_SUCCESS)
		e->recorded = true;
	return st;
}

pk_status pk_event_synchronize(pk_event *e)
{
	TRY(check_event(e, "pk_event_synchronize", ""));
	if (!e->recorded)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_synchronize: the event was never recorded");
	return e->device->ops->event_synchronize(e);
}

pk_status pk_event_elapsed_ms(const pk_event *start, const pk_event *end, double *ms)
{
	if (!ms)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_elapsed_ms: ms is NULL");
	*ms = 0.0;
	TRY(check_event(start, "pk_event_elapsed_ms", "start "));
	TRY(check_event(end, "pk_event_elapsed_ms", "end "));
	if (start->device != end->device)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_elapsed_ms: the events belong to different devices "
		                    "(%s, %s)", pk_device_name(start->device), pk_device_name(end->device));
	if (!start->recorded || !end->recorded)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_elapsed_ms: the %s event was never recorded",
		                    !start->recorded ? "start" : "end");
	return start->device->ops->event_elapsed(start, end, ms);
}
