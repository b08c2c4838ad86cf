/* internal.h - declarations shared by the runtime's source files; not
 * installed.  Internal symbols are named pkrt_* and have hidden visibility
 * in libpkrt.so (the build uses -fvisibility=hidden; only PK_API functions
 * are exported). */
#ifndef PKRT_INTERNAL_H
#define PKRT_INTERNAL_H

#include "pk_runtime.h"

#include <stdbool.h>

/* What a device kind implements.  Every device kind (host now, CUDA later)
 * provides one table; the public API checks arguments, then dispatches
 * through the device's table, so adding a kind touches no caller. */
typedef struct pkrt_device_ops {
	const char *(*name_fn)(const pk_device *dev);                        /* pk_device_name's text */
	pk_status (*malloc_fn)(pk_device *dev, size_t bytes, void **out);    /* allocate device memory */
	pk_status (*free_fn)(pk_device *dev, void *ptr);                     /* free it (ptr != NULL) */
	pk_status (*memcpy_fn)(pk_stream *s, void *dst, const void *src,
	                       size_t bytes, pk_memcpy_kind kind);          /* enqueue a copy (bytes > 0) */
	pk_status (*memset_fn)(pk_stream *s, void *dst, int value, size_t bytes); /* enqueue a fill (bytes > 0) */
	pk_status (*stream_init)(pk_stream *s);        /* set up s->impl for a new stream */
	pk_status (*stream_fini)(pk_stream *s);        /* drain and release s->impl */
	pk_status (*stream_synchronize)(pk_stream *s); /* wait for s's work */
} pkrt_device_ops;

struct pk_device {
	pk_device_kind kind;        /* which kind of device */
	int ordinal;                /* index among the devices of its kind */
	const pkrt_device_ops *ops; /* its implementation */
	void *impl;                 /* kind-specific state (e.g. a CUcontext); NULL for the host */
};

struct pk_stream {
	pk_device *device; /* the device the stream's work runs on */
	bool is_default;   /* the static default stream of a device: never freed */
	void *impl;        /* kind-specific state (e.g. a CUstream); NULL for the host */
};

/* The host device and its default stream (host.c). */
extern pk_device pkrt_host_device;
extern pk_stream pkrt_host_default_stream;

/* The thread pool's size (pool.c): threads per launch, caller included. */
int pkrt_pool_threads(void);

#endif
