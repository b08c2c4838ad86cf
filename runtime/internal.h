/* internal.h - declarations shared by the runtime's source files; not
 * installed.  Internal symbols are named pkrt_* and have hidden visibility
 * in libpkrt.so (the build uses -fvisibility=hidden; only PK_API functions
 * are exported). */
#ifndef PKRT_INTERNAL_H
#define PKRT_INTERNAL_H

#include "pk_runtime.h"

#include <stdbool.h>

/* What a device kind implements.  Every device kind (host.c, cuda.c)
 * provides one table; the public API (device.c) checks arguments, then
 * dispatches through the device's table, so adding a kind touches no caller. */
typedef struct pkrt_device_ops {
	const char *(*name_fn)(const pk_device *dev);                        /* pk_device_name's text */
	pk_status (*compute_capability_fn)(const pk_device *dev, int *major, int *minor); /* or NOT_SUPPORTED */
	pk_stream *(*default_stream_fn)(pk_device *dev);                     /* pk_stream_default (never NULL) */
	pk_status (*malloc_fn)(pk_device *dev, size_t bytes, void **out);    /* allocate device memory */
	pk_status (*free_fn)(pk_device *dev, void *ptr);                     /* free it (ptr != NULL) */
	pk_status (*memcpy_fn)(pk_stream *s, void *dst, const void *src,
	                       size_t bytes, pk_memcpy_kind kind);          /* enqueue a copy (bytes > 0) */
	pk_status (*memset_fn)(pk_stream *s, void *dst, int value, size_t bytes); /* enqueue a fill (bytes > 0) */
	pk_status (*stream_init)(pk_stream *s);        /* set up s->impl for a new stream */
	pk_status (*stream_fini)(pk_stream *s);        /* drain and release s->impl */
	pk_status (*stream_synchronize)(pk_stream *s); /* wait for s's work */
	pk_status (*event_init)(pk_event *e);          /* set up e->impl for a new event */
	pk_status (*event_fini)(pk_event *e);          /* release e->impl */
	pk_status (*event_record)(pk_event *e, pk_stream *s); /* s is on e's device */
	pk_status (*event_synchronize)(pk_event *e);   /* wait for a recorded event */
	pk_status (*event_elapsed)(const pk_event *start, const pk_event *end,
	                           double *ms);        /* both recorded, same device */
} pkrt_device_ops;

struct pk_device {
	pk_device_kind kind;        /* which kind of device */
	int ordinal;                /* index among the devices of its kind */
	const pkrt_device_ops *ops; /* its implementation */
	void *impl;                 /* kind-specific state (cuda.c: its cuda_device); NULL for the host */
};

/* The magic words of live handles (pk_stream.magic, pk_event.magic):
 * destroy clears them, so a destroyed handle is told from a live one for as
 * long as its memory is kept (device.c, "Destroyed handles"). */
#define PKRT_STREAM_MAGIC 0x704b5354u /* "pKST" */
#define PKRT_EVENT_MAGIC 0x704b4556u  /* "pKEV" */

struct pk_stream {
	uint32_t magic;    /* PKRT_STREAM_MAGIC while alive (the default streams too) */
	pk_device *device; /* the device the stream's work runs on */
	bool is_default;   /* the static default stream of a device: never freed */
	void *impl;        /* kind-specific state (cuda.c: its cuda_stream); NULL for the host */
};

struct pk_event {
	uint32_t magic;    /* PKRT_EVENT_MAGIC while alive */
	pk_device *device; /* the device whose streams it can be recorded in */
	bool recorded;     /* pk_event_record has been called (elapsed needs it) */
	double host_ms;    /* host events: CLOCK_MONOTONIC time of the last record, in ms */
	void *impl;        /* kind-specific state (cuda.c: the CUevent); NULL for the host */
};

/* PK_SUCCESS for NULL (the default host stream) or a live stream; for a
 * destroyed one PK_ERR_INVALID_VALUE, with a message naming `fn` (the
 * calling function, or the kernel for a launch). */
pk_status pkrt_check_stream(const pk_stream *s, const char *fn);

/* The host device and its default stream (host.c). */
extern pk_device pkrt_host_device;
extern pk_stream pkrt_host_default_stream;

/* The thread pool's size (pool.c): threads per launch, caller included. */
int pkrt_pool_threads(void);

/* The CUDA device kind (cuda.c).  The driver is loaded on the first call of
 * either; both are thread-safe and never fail for a missing driver or GPU
 * (count 0; get: PK_ERR_NO_DEVICE saying why). */
pk_status pkrt_cuda_device_count(int *n);
pk_status pkrt_cuda_device_get(int ordinal, pk_device **out);

#endif
