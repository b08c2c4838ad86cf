/* device.c - the public device, stream, event and buffer API: argument
 * checks, then dispatch through the device kind's pkrt_device_ops table.
 *
 * Only pk_device_count/pk_device_get know the kinds (host.c, cuda.c); the
 * rest of this file is kind-agnostic. */
#include "internal.h"

#include <stdlib.h>

/* The stream that NULL stands for. */
static pk_stream *resolve_stream(pk_stream *s)
{
	return s ? s : &pkrt_host_default_stream;
}

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
	*out = s;
	return PK_SUCCESS;
}

pk_status pk_stream_destroy(pk_stream *s)
{
	if (!s || s->is_default)
		return PK_SUCCESS;
	/* Release the stream even if draining it reported an error: the caller
	 * cannot retry a destroy, so keeping it would only leak. */
	pk_status st = s->device->ops->stream_fini(s);
	free(s);
	return st;
}

pk_status pk_stream_synchronize(pk_stream *s)
{
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
	s = resolve_stream(s);
	return s->device->ops->memcpy_fn(s, dst, src, bytes, kind);
}

pk_status pk_memset(pk_stream *s, void *dst, int value, size_t bytes)
{
	if (bytes == 0)
		return PK_SUCCESS;
	if (!dst)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_memset: dst is NULL (setting %zu bytes)", bytes);
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
	*out = e;
	return PK_SUCCESS;
}

pk_status pk_event_destroy(pk_event *e)
{
	if (!e)
		return PK_SUCCESS;
	pk_status st = e->device->ops->event_fini(e);
	free(e);
	return st;
}

pk_status pk_event_record(pk_event *e, pk_stream *s)
{
	if (!e)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_record: event is NULL");
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
	if (!e)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_synchronize: event is NULL");
	if (!e->recorded)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_synchronize: the event was never recorded");
	return e->device->ops->event_synchronize(e);
}

pk_status pk_event_elapsed_ms(const pk_event *start, const pk_event *end, double *ms)
{
	if (!ms)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_elapsed_ms: ms is NULL");
	*ms = 0.0;
	if (!start || !end)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_elapsed_ms: %s event is NULL",
		                    !start ? "start" : "end");
	if (start->device != end->device)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_elapsed_ms: the events belong to different devices "
		                    "(%s, %s)", pk_device_name(start->device), pk_device_name(end->device));
	if (!start->recorded || !end->recorded)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_event_elapsed_ms: the %s event was never recorded",
		                    !start->recorded ? "start" : "end");
	return start->device->ops->event_elapsed(start, end, ms);
}
