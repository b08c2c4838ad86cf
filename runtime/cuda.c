/* cuda.c - the CUDA device kind and pk_launch_cuda (compiler/GPU-DESIGN.md,
 * "Runtime interface").
 *
 * The CUDA driver is not linked: the first call that needs it (counting or
 * getting a CUDA device) dlopens libcuda.so.1 (or $PK_CUDA_DRIVER) once,
 * looks up the entry points of cuda_driver.h and runs cuInit.  Without a
 * driver or a GPU there are simply no CUDA devices.
 *
 * Contexts: each device uses its primary context, retained by the first
 * pk_device_get of that device and never released.  Every operation makes
 * it current on the calling thread when it is not (cuCtxGetCurrent is a
 * thread-local read in the driver), so any thread may use any device.
 *
 * Modules: pk_cuda_module.cache (one per fat object) points to a
 * cuda_module_cache, created once under a global lock and published with an
 * atomic store.  It lists the module loaded per context and, per module,
 * the functions looked up so far; a per-cache mutex guards the lists, so a
 * module is loaded (and a function looked up) once per context however many
 * threads launch.  Loaded modules stay loaded for the life of the process.
 *
 * PK_CUDA_TRACE=1 in the environment prints each module load (the image
 * chosen) and each launch on stderr, prefixed "pk-cuda:". */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "cuda_driver.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PKRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PKRT_PRINTF(f, a)
#endif

/* ---- the driver's entry points ------------------------------------------------ */

typedef struct cuda_api {
	pkcu_init_fn init;                                 /* cuInit */
	pkcu_get_error_name_fn get_error_name;             /* cuGetErrorName */
	pkcu_get_error_string_fn get_error_string;         /* cuGetErrorString */
	pkcu_device_get_count_fn device_get_count;         /* cuDeviceGetCount */
	pkcu_device_get_fn device_get;                     /* cuDeviceGet */
	pkcu_device_get_name_fn device_get_name;           /* cuDeviceGetName */
	pkcu_device_get_attribute_fn device_get_attribute; /* cuDeviceGetAttribute */
	pkcu_device_primary_ctx_retain_fn primary_ctx_retain; /* cuDevicePrimaryCtxRetain */
	pkcu_ctx_get_current_fn ctx_get_current;           /* cuCtxGetCurrent */
	pkcu_ctx_set_current_fn ctx_set_current;           /* cuCtxSetCurrent */
	pkcu_stream_create_fn stream_create;               /* cuStreamCreate */
	pkcu_stream_destroy_fn stream_destroy;             /* cuStreamDestroy_v2 */
	pkcu_stream_synchronize_fn stream_synchronize;     /* cuStreamSynchronize */
	pkcu_event_create_fn event_create;                 /* cuEventCreate */
	pkcu_event_destroy_fn event_destroy;               /* cuEventDestroy_v2 */
	pkcu_event_record_fn event_record;                 /* cuEventRecord */
	pkcu_event_synchronize_fn event_synchronize;       /* cuEventSynchronize */
	pkcu_event_elapsed_time_fn event_elapsed_time;     /* cuEventElapsedTime_v2 (or the v1) */
	pkcu_mem_alloc_fn mem_alloc;                       /* cuMemAlloc_v2 */
	pkcu_mem_free_fn mem_free;                         /* cuMemFree_v2 */
	pkcu_memcpy_htod_async_fn memcpy_htod_async;       /* cuMemcpyHtoDAsync_v2 */
	pkcu_memcpy_dtoh_async_fn memcpy_dtoh_async;       /* cuMemcpyDtoHAsync_v2 */
	pkcu_memcpy_dtod_async_fn memcpy_dtod_async;       /* cuMemcpyDtoDAsync_v2 */
	pkcu_memset_d8_async_fn memset_d8_async;           /* cuMemsetD8Async */
	pkcu_module_load_data_ex_fn module_load_data_ex;   /* cuModuleLoadDataEx */
	pkcu_module_get_function_fn module_get_function;   /* cuModuleGetFunction */
	pkcu_func_set_attribute_fn func_set_attribute;     /* cuFuncSetAttribute */
	pkcu_launch_kernel_fn launch_kernel;               /* cuLaunchKernel */
	pkcu_tensor_map_encode_tiled_fn tensor_map_encode_tiled; /* cuTensorMapEncodeTiled (optional: NULL) */
	pkcu_occupancy_max_active_blocks_fn occupancy;     /* cuOccupancyMaxActiveBlocksPerMultiprocessor
	                                                      (optional: NULL) */
	pkcu_func_get_attribute_fn func_get_attribute;     /* cuFuncGetAttribute (optional: NULL) */
	pkcu_occupancy_max_active_clusters_fn max_clusters; /* cuOccupancyMaxActiveClusters (optional: NULL) */
} cuda_api;

/* Filled once by load_driver (under pthread_once), read-only afterwards. */
static cuda_api cu;

/* One entry point to look up: its name, an older name to fall back to, and
 * the cuda_api member (a function pointer object) to store it in. */
typedef struct sym_spec {
	const char *name;     /* the preferred (newest) name */
	const char *fallback; /* an older name with the same signature, or NULL */
	void *slot;           /* &cu.<member> */
} sym_spec;

/* The lookup stores a dlsym'd object pointer into function pointer
 * objects by memcpy (POSIX guarantees the representations agree). */
_Static_assert(sizeof(pkcu_init_fn) == sizeof(void *), "function pointers must be pointer-sized");

/* ---- per-device and per-stream state ---------------------------------------------- */

typedef struct cuda_function cuda_function;

/* A CUDA stream's pk_stream.impl. */
typedef struct cuda_stream {
	pkcu_stream handle;                     /* the CUstream; NULL: the legacy default stream */
	_Atomic(cuda_function *) last_kernel;   /* the last kernel launched on it (for errors), or NULL */
} cuda_stream;

/* A CUDA device's pk_device.impl. */
typedef struct cuda_device {
	pkcu_device handle;       /* the driver's device */
	int major, minor;         /* compute capability */
	int smem_optin;           /* shared bytes a CTA may opt into (0: unknown) */
	int sms;                  /* streaming multiprocessors (0: unknown) */
	pkcu_context ctx;         /* its retained primary context, once ctx_ready */
	bool ctx_ready;           /* set (under ctx_lock) by the first pk_device_get */
	pk_stream default_stream; /* pk_stream_default's object (is_default) */
	cuda_stream default_impl; /* its impl: the legacy default stream */
	char name[320];           /* pk_device_name's text */
} cuda_device;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int cuda_ndev;               /* the devices found (0: see cuda_unavailable) */
static pk_device *cuda_devs;        /* cuda_ndev device objects, never freed */
static cuda_device *cuda_state;     /* their impl */
static char cuda_unavailable[600];  /* why there are no devices, for pk_device_get */
static bool cuda_trace;             /* PK_CUDA_TRACE is set to something other than 0 */
static uint32_t persistent_most;    /* PK_CUDA_PERSISTENT_CTAS (tests): at most this many persistent
                                       CTAs (0: no limit) */
static int sm_count_said = -1;      /* PK_CUDA_SM_COUNT (tests): what pk_cuda_sm_count answers
                                       (-1: the device's SMs) */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER; /* guards ctx/ctx_ready */

/* ---- errors ---------------------------------------------------------------------- */

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for r, into buf. */
static void describe(pkcu_result r, char *buf, size_t size)
{
	const char *name = NULL, *str = NULL;
	if (!cu.get_error_name || cu.get_error_name(r, &name) != PKCU_SUCCESS)
		name = NULL;
	if (!cu.get_error_string || cu.get_error_string(r, &str) != PKCU_SUCCESS)
		str = NULL;
	if (name)
		snprintf(buf, size, "%s (%s)", name, str ? str : "no description");
	else
		snprintf(buf, size, "CUDA error %d", (int)r);
}

/* The pk_status for a driver error outside of a launch. */
static pk_status status_of(pkcu_result r)
{
	switch (r) {
	case PKCU_ERROR_INVALID_VALUE:
	case PKCU_ERROR_INVALID_HANDLE:
		return PK_ERR_INVALID_VALUE;
	case PKCU_ERROR_OUT_OF_MEMORY:
		return PK_ERR_OUT_OF_MEMORY;
	case PKCU_ERROR_NO_DEVICE:
	case PKCU_ERROR_INVALID_DEVICE:
		return PK_ERR_NO_DEVICE;
	case PKCU_ERROR_INVALID_IMAGE:
	case PKCU_ERROR_NO_BINARY_FOR_GPU:
	case PKCU_ERROR_INVALID_PTX:
	case PKCU_ERROR_JIT_COMPILER_NOT_FOUND:
	case PKCU_ERROR_UNSUPPORTED_PTX_VERSION:
	case PKCU_ERROR_JIT_COMPILATION_DISABLED:
		return PK_ERR_NO_KERNEL_FOR_DEVICE;
	default:
		/* Kernel faults (illegal address, trap, ...) show up at the
		 * next synchronization: they are failed launches. */
		if (r >= PKCU_ERROR_ILLEGAL_ADDRESS && r <= PKCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
			return PK_ERR_LAUNCH_FAILED;
		return PK_ERR_DRIVER;
	}
}

/* Records "<formatted what>: <driver's name and description of r>" with
 * status st and returns st. */
static pk_status PKRT_PRINTF(3, 4) cu_error(pk_status st, pkcu_result r, const char *fmt, ...)
{
	char what[700], why[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	describe(r, why, sizeof why);
	return pk_set_error(st, "%s: %s", what, why);
}

/* ---- loading the driver ------------------------------------------------------------- */

static const pkrt_device_ops cuda_ops;

static void PKRT_PRINTF(1, 2) unavailable(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cuda_unavailable, sizeof cuda_unavailable, fmt, ap);
	va_end(ap);
}

/* Looks up every entry point; false (and the reason recorded) if one is missing. */
static bool resolve(void *lib, const char *path)
{
	const sym_spec syms[] = {
		{"cuInit", NULL, &cu.init},
		{"cuGetErrorName", NULL, &cu.get_error_name},
		{"cuGetErrorString", NULL, &cu.get_error_string},
		{"cuDeviceGetCount", NULL, &cu.device_get_count},
		{"cuDeviceGet", NULL, &cu.device_get},
		{"cuDeviceGetName", NULL, &cu.device_get_name},
		{"cuDeviceGetAttribute", NULL, &cu.device_get_attribute},
		{"cuDevicePrimaryCtxRetain", NULL, &cu.primary_ctx_retain},
		{"cuCtxGetCurrent", NULL, &cu.ctx_get_current},
		{"cuCtxSetCurrent", NULL, &cu.ctx_set_current},
		{"cuStreamCreate", NULL, &cu.stream_create},
		{"cuStreamDestroy_v2", "cuStreamDestroy", &cu.stream_destroy},
		{"cuStreamSynchronize", NULL, &cu.stream_synchronize},
		{"cuEventCreate", NULL, &cu.event_create},
		{"cuEventDestroy_v2", "cuEventDestroy", &cu.event_destroy},
		{"cuEventRecord", NULL, &cu.event_record},
		{"cuEventSynchronize", NULL, &cu.event_synchronize},
		{"cuEventElapsedTime_v2", "cuEventElapsedTime", &cu.event_elapsed_time},
		{"cuMemAlloc_v2", NULL, &cu.mem_alloc},
		{"cuMemFree_v2", NULL, &cu.mem_free},
		{"cuMemcpyHtoDAsync_v2", NULL, &cu.memcpy_htod_async},
		{"cuMemcpyDtoHAsync_v2", NULL, &cu.memcpy_dtoh_async},
		{"cuMemcpyDtoDAsync_v2", NULL, &cu.memcpy_dtod_async},
		{"cuMemsetD8Async", NULL, &cu.memset_d8_async},
		{"cuModuleLoadDataEx", NULL, &cu.module_load_data_ex},
		{"cuModuleGetFunction", NULL, &cu.module_get_function},
		{"cuFuncSetAttribute", NULL, &cu.func_set_attribute},
		{"cuLaunchKernel", NULL, &cu.launch_kernel},
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		void *p = dlsym(lib, syms[i].name);
		if (!p && syms[i].fallback)
			p = dlsym(lib, syms[i].fallback);
		if (!p) {
			unavailable("the CUDA driver %s has no entry point %s (the driver is too old)", path, syms[i].name);
			return false;
		}
		memcpy(syms[i].slot, &p, sizeof p);
	}
	/* Optional: drivers before CUDA 12 have no copy engine API. */
	void *p = dlsym(lib, "cuTensorMapEncodeTiled");
	memcpy(&cu.tensor_map_encode_tiled, &p, sizeof p);
	/* Optional: without it persistent launches take one CTA per SM. */
	p = dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
	memcpy(&cu.occupancy, &p, sizeof p);
	/* Optional: without it no kernel is taken for one of clusters. */
	p = dlsym(lib, "cuFuncGetAttribute");
	memcpy(&cu.func_get_attribute, &p, sizeof p);
	p = dlsym(lib, "cuOccupancyMaxActiveClusters");
	memcpy(&cu.max_clusters, &p, sizeof p);
	return true;
}

/* Fills in device i (its handle, name and properties); false on a driver error. */
static bool probe_device(int i)
{
	cuda_device *cd = &cuda_state[i];
	pk_device *d = &cuda_devs[i];
	char name[256] = "";
	pkcu_result r = cu.device_get(&cd->handle, i);
	if (r == PKCU_SUCCESS)
		r = cu.device_get_name(name, (int)sizeof name - 1, cd->handle);
	if (r == PKCU_SUCCESS)
		r = cu.device_get_attribute(&cd->major, PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cd->handle);
	if (r == PKCU_SUCCESS)
		r = cu.device_get_attribute(&cd->minor, PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cd->handle);
	if (r != PKCU_SUCCESS) {
		char why[300];
		describe(r, why, sizeof why);
		unavailable("the CUDA driver cannot describe device %d: %s", i, why);
		return false;
	}
	if (cu.device_get_attribute(&cd->smem_optin, PKCU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
	                            cd->handle) != PKCU_SUCCESS)
		cd->smem_optin = 0;
	if (cu.device_get_attribute(&cd->sms, PKCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cd->handle) != PKCU_SUCCESS)
		cd->sms = 0;
	name[sizeof name - 1] = '\0';
	snprintf(cd->name, sizeof cd->name, "%s (CUDA device %d, sm_%d%d)", name[0] ? name : "unnamed GPU", i,
	         cd->major, cd->minor);
	cd->default_impl.handle = NULL;
	atomic_init(&cd->default_impl.last_kernel, NULL);
	cd->default_stream.magic = PKRT_STREAM_MAGIC;
	cd->default_stream.device = d;
	cd->default_stream.is_default = true;
	cd->default_stream.impl = &cd->default_impl;
	d->kind = PK_DEVICE_CUDA;
	d->ordinal = i;
	d->ops = &cuda_ops;
	d->impl = cd;
	return true;
}

/* Runs once: loads the driver and enumerates the GPUs.  On any failure the
 * device count stays 0 and cuda_unavailable says why. */
static void load_driver(void)
{
	const char *trace = getenv("PK_CUDA_TRACE");
	cuda_trace = trace && *trace && strcmp(trace, "0") != 0;
	const char *most = getenv("PK_CUDA_PERSISTENT_CTAS");
	persistent_most = most && atoi(most) > 0 ? (uint32_t)atoi(most) : 0;
	const char *sms = getenv("PK_CUDA_SM_COUNT");
	sm_count_said = sms && *sms && atoi(sms) >= 0 ? atoi(sms) : -1;
	const char *path = getenv("PK_CUDA_DRIVER");
	if (!path || !*path)
		path = "libcuda.so.1";
	dlerror();
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		unavailable("the CUDA driver %s cannot be loaded (%s)", path, e ? e : "no reason given");
		return;
	}
	if (!resolve(lib, path)) {
		memset(&cu, 0, sizeof cu);
		dlclose(lib);
		return;
	}
	/* The library stays loaded from here on: the error strings live in it. */
	char why[300];
	pkcu_result r = cu.init(0);
	if (r != PKCU_SUCCESS) {
		describe(r, why, sizeof why);
		unavailable("cuInit failed: %s", why);
		return;
	}
	int n = 0;
	r = cu.device_get_count(&n);
	if (r != PKCU_SUCCESS) {
		describe(r, why, sizeof why);
		unavailable("cuDeviceGetCount failed: %s", why);
		return;
	}
	if (n <= 0) {
		unavailable("the CUDA driver reports no GPU");
		return;
	}
	cuda_devs = calloc((size_t)n, sizeof *cuda_devs);
	cuda_state = calloc((size_t)n, sizeof *cuda_state);
	if (!cuda_devs || !cuda_state) {
		free(cuda_devs);
		free(cuda_state);
		cuda_devs = NULL;
		cuda_state = NULL;
		unavailable("out of memory while enumerating %d CUDA devices", n);
		return;
	}
	for (int i = 0; i < n; i++)
		if (!probe_device(i))
			return; /* count stays 0; the arrays are kept (tiny) */
	cuda_ndev = n;
}

pk_status pkrt_cuda_device_count(int *n)
{
	pthread_once(&load_once, load_driver);
	*n = cuda_ndev;
	return PK_SUCCESS;
}

pk_status pkrt_cuda_device_get(int ordinal, pk_device **out)
{
	pthread_once(&load_once, load_driver);
	if (cuda_ndev == 0)
		return pk_set_error(PK_ERR_NO_DEVICE, "pk_device_get: no CUDA device %d: %s", ordinal, cuda_unavailable);
	if (ordinal < 0 || ordinal >= cuda_ndev)
		return pk_set_error(PK_ERR_INVALID_VALUE,
		                    "pk_device_get: CUDA device ordinal %d out of range (there %s %d CUDA device%s)", ordinal,
		                    cuda_ndev == 1 ? "is" : "are", cuda_ndev, cuda_ndev == 1 ? "" : "s");
	cuda_device *cd = &cuda_state[ordinal];
	pkcu_result r = PKCU_SUCCESS;
	pthread_mutex_lock(&ctx_lock);
	if (!cd->ctx_ready) {
		r = cu.primary_ctx_retain(&cd->ctx, cd->handle);
		cd->ctx_ready = r == PKCU_SUCCESS;
	}
	pthread_mutex_unlock(&ctx_lock);
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r) == PK_ERR_OUT_OF_MEMORY ? PK_ERR_OUT_OF_MEMORY : PK_ERR_DRIVER, r,
		                "pk_device_get: cannot retain the primary context of %s", cd->name);
	*out = &cuda_devs[ordinal];
	return PK_SUCCESS;
}

/* ---- contexts -------------------------------------------------------------------- */

/* Makes cd's primary context current on this thread (if it is not). */
static pk_status make_current(const cuda_device *cd, const char *what)
{
	pkcu_context cur = NULL;
	if (cu.ctx_get_current(&cur) == PKCU_SUCCESS && cur == cd->ctx)
		return PK_SUCCESS;
	pkcu_result r = cu.ctx_set_current(cd->ctx);
	if (r != PKCU_SUCCESS)
		return cu_error(PK_ERR_DRIVER, r, "%s: cannot make the context of %s current", what, cd->name);
	return PK_SUCCESS;
}

static cuda_device *dev_of(const pk_device *d)
{
	return (cuda_device *)d->impl;
}

static pkcu_stream stream_of(const pk_stream *s)
{
	return ((const cuda_stream *)s->impl)->handle;
}

static pkcu_deviceptr dptr(const void *p)
{
	return (pkcu_deviceptr)(uintptr_t)p;
}

/* ---- device operations ------------------------------------------------------------- */

static const char *cuda_name(const pk_device *d)
{
	return dev_of(d)->name;
}

static pk_status cuda_compute_capability(const pk_device *d, int *major, int *minor)
{
	*major = dev_of(d)->major;
	*minor = dev_of(d)->minor;
	return PK_SUCCESS;
}

static pk_stream *cuda_default_stream(pk_device *d)
{
	return &dev_of(d)->default_stream;
}

static pk_status cuda_malloc(pk_device *d, size_t bytes, void **out)
{
	cuda_device *cd = dev_of(d);
	pk_status st = make_current(cd, "pk_malloc");
	if (st != PK_SUCCESS)
		return st;
	pkcu_deviceptr p = 0;
	/* cuMemAlloc refuses 0 bytes; one byte still gives a unique pointer. */
	pkcu_result r = cu.mem_alloc(&p, bytes ? bytes : 1);
	if (r != PKCU_SUCCESS)
		return cu_error(r == PKCU_ERROR_OUT_OF_MEMORY ? PK_ERR_OUT_OF_MEMORY : status_of(r), r,
		                "pk_malloc: cannot allocate %zu bytes on %s", bytes, cd->name);
	*out = (void *)(uintptr_t)p;
	return PK_SUCCESS;
}

static pk_status cuda_free(pk_device *d, void *ptr)
{
	cuda_device *cd = dev_of(d);
	pk_status st = make_current(cd, "pk_free");
	if (st != PK_SUCCESS)
		return st;
	pkcu_result r = cu.mem_free(dptr(ptr));
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_free: cannot free %p on %s (not from pk_malloc on this device?)", ptr,
		                cd->name);
	return PK_SUCCESS;
}

static pk_status cuda_memcpy(pk_stream *s, void *dst, const void *src, size_t bytes, pk_memcpy_kind kind)
{
	cuda_device *cd = dev_of(s->device);
	pk_status st = make_current(cd, "pk_memcpy");
	if (st != PK_SUCCESS)
		return st;
	pkcu_stream h = stream_of(s);
	pkcu_result r;
	const char *how;
	switch (kind) {
	case PK_MEMCPY_HOST_TO_DEVICE:
		r = cu.memcpy_htod_async(dptr(dst), src, bytes, h);
		how = "host-to-device";
		break;
	case PK_MEMCPY_DEVICE_TO_HOST:
		r = cu.memcpy_dtoh_async(dst, dptr(src), bytes, h);
		how = "device-to-host";
		break;
	default:
		r = cu.memcpy_dtod_async(dptr(dst), dptr(src), bytes, h);
		how = "device-to-device";
		break;
	}
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_memcpy: %s copy of %zu bytes from %p to %p on %s failed", how, bytes,
		                src, dst, cd->name);
	return PK_SUCCESS;
}

static pk_status cuda_memset(pk_stream *s, void *dst, int value, size_t bytes)
{
	cuda_device *cd = dev_of(s->device);
	pk_status st = make_current(cd, "pk_memset");
	if (st != PK_SUCCESS)
		return st;
	pkcu_result r = cu.memset_d8_async(dptr(dst), (unsigned char)value, bytes, stream_of(s));
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_memset: fill of %zu bytes at %p on %s failed", bytes, dst, cd->name);
	return PK_SUCCESS;
}

static pk_status cuda_stream_init(pk_stream *s)
{
	cuda_device *cd = dev_of(s->device);
	pk_status st = make_current(cd, "pk_stream_create");
	if (st != PK_SUCCESS)
		return st;
	cuda_stream *cs = calloc(1, sizeof *cs);
	if (!cs)
		return pk_set_error(PK_ERR_OUT_OF_MEMORY, "pk_stream_create: out of memory");
	atomic_init(&cs->last_kernel, NULL);
	pkcu_result r = cu.stream_create(&cs->handle, PKCU_STREAM_NON_BLOCKING);
	if (r != PKCU_SUCCESS) {
		free(cs);
		return cu_error(status_of(r), r, "pk_stream_create: cannot create a stream on %s", cd->name);
	}
	s->impl = cs;
	return PK_SUCCESS;
}

/* The text naming the stream's last kernel, for errors found at a sync. */
static void last_kernel_note(const pk_stream *s, char *buf, size_t size);

static pk_status cuda_stream_synchronize(pk_stream *s)
{
	cuda_device *cd = dev_of(s->device);
	pk_status st = make_current(cd, "pk_stream_synchronize");
	if (st != PK_SUCCESS)
		return st;
	pkcu_result r = cu.stream_synchronize(stream_of(s));
	if (r != PKCU_SUCCESS) {
		char note[200];
		last_kernel_note(s, note, sizeof note);
		return cu_error(status_of(r), r, "pk_stream_synchronize: work on %s failed%s", cd->name, note);
	}
	return PK_SUCCESS;
}

static pk_status cuda_stream_fini(pk_stream *s)
{
	/* Drain first (reporting its error), then destroy regardless. */
	cuda_stream *cs = s->impl;
	pk_status st = cuda_stream_synchronize(s);
	pkcu_result r = cu.stream_destroy(cs->handle);
	if (r != PKCU_SUCCESS && st == PK_SUCCESS)
		st = cu_error(status_of(r), r, "pk_stream_destroy: cannot destroy a stream of %s", dev_of(s->device)->name);
	free(cs);
	s->impl = NULL;
	return st;
}

static pk_status cuda_event_init(pk_event *e)
{
	cuda_device *cd = dev_of(e->device);
	pk_status st = make_current(cd, "pk_event_create");
	if (st != PK_SUCCESS)
		return st;
	pkcu_event ev = NULL;
	pkcu_result r = cu.event_create(&ev, PKCU_EVENT_DEFAULT);
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_event_create: cannot create an event on %s", cd->name);
	e->impl = ev;
	return PK_SUCCESS;
}

static pk_status cuda_event_fini(pk_event *e)
{
	cuda_device *cd = dev_of(e->device);
	pk_status st = make_current(cd, "pk_event_destroy");
	if (st != PK_SUCCESS)
		return st;
	pkcu_result r = cu.event_destroy((pkcu_event)e->impl);
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_event_destroy: cannot destroy an event of %s", cd->name);
	return PK_SUCCESS;
}

static pk_status cuda_event_record(pk_event *e, pk_stream *s)
{
	cuda_device *cd = dev_of(e->device);
	pk_status st = make_current(cd, "pk_event_record");
	if (st != PK_SUCCESS)
		return st;
	pkcu_result r = cu.event_record((pkcu_event)e->impl, stream_of(s));
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_event_record: cannot record an event on %s", cd->name);
	return PK_SUCCESS;
}

static pk_status cuda_event_synchronize(pk_event *e)
{
	cuda_device *cd = dev_of(e->device);
	pk_status st = make_current(cd, "pk_event_synchronize");
	if (st != PK_SUCCESS)
		return st;
	pkcu_result r = cu.event_synchronize((pkcu_event)e->impl);
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_event_synchronize: waiting for an event of %s failed", cd->name);
	return PK_SUCCESS;
}

static pk_status cuda_event_elapsed(const pk_event *start, const pk_event *end, double *ms)
{
	cuda_device *cd = dev_of(start->device);
	pk_status st = make_current(cd, "pk_event_elapsed_ms");
	if (st != PK_SUCCESS)
		return st;
	float f = 0.0f;
	pkcu_result r = cu.event_elapsed_time(&f, (pkcu_event)start->impl, (pkcu_event)end->impl);
	if (r != PKCU_SUCCESS)
		return cu_error(status_of(r), r, "pk_event_elapsed_ms: on %s%s", cd->name,
		                r == PKCU_ERROR_NOT_READY ? " (an event has not completed: synchronize it first)" : "");
	*ms = (double)f;
	return PK_SUCCESS;
}

static const pkrt_device_ops cuda_ops = {
	.name_fn = cuda_name,
	.compute_capability_fn = cuda_compute_capability,
	.default_stream_fn = cuda_default_stream,
	.malloc_fn = cuda_malloc,
	.free_fn = cuda_free,
	.memcpy_fn = cuda_memcpy,
	.memset_fn = cuda_memset,
	.stream_init = cuda_stream_init,
	.stream_fini = cuda_stream_fini,
	.stream_synchronize = cuda_stream_synchronize,
	.event_init = cuda_event_init,
	.event_fini = cuda_event_fini,
	.event_record = cuda_event_record,
	.event_synchronize = cuda_event_synchronize,
	.event_elapsed = cuda_event_elapsed,
};

/* ---- modules: image selection ------------------------------------------------------- */

/* Parses "sm_90a" / "compute_80": major 9, minor 0, variant 'a' ('f' for a
 * family image, 0 for a plain one).  False for anything else. */
static bool parse_arch(const char *arch, int *major, int *minor, char *variant)
{
	if (!arch)
		return false;
	const char *p;
	if (!strncmp(arch, "sm_", 3))
		p = arch + 3;
	else if (!strncmp(arch, "compute_", 8))
		p = arch + 8;
	else
		return false;
	int v = 0, digits = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits == 4)
			return false;
		v = v * 10 + (*p - '0');
	}
	if (digits < 2)
		return false;
	char var = 0;
	if (*p == 'a' || *p == 'f')
		var = *p++;
	if (*p)
		return false;
	*major = v / 10;
	*minor = v % 10;
	*variant = var;
	return true;
}

/* How usable image `im` is on a device of compute capability maj.min:
 * 0 not at all, else the tier (1 exact SASS, 2 compatible SASS of an older
 * minor, 3 PTX to JIT); *key orders the images of one tier (larger first). */
static int image_tier(const pk_cuda_image *im, int maj, int min, int *key)
{
	int a, b;
	char v;
	if (!im->data || im->size == 0 || !parse_arch(im->arch, &a, &b, &v))
		return 0;
	int vrank = v == 'a' ? 2 : v == 'f' ? 1 : 0; /* the more specific, the better */
	if (im->kind == PK_CUDA_SASS) {
		if (a == maj && b == min) {
			*key = vrank;
			return 1;
		}
		/* Cubins run on later minors of their major, except
		 * architecture-specific ("a") ones. */
		if (a == maj && b < min && v != 'a') {
			*key = b * 4 + vrank;
			return 2;
		}
		return 0;
	}
	if (im->kind == PK_CUDA_PTX) {
		bool ok;
		if (v == 'a') /* arch-specific PTX: only its own compute capability */
			ok = a == maj && b == min;
		else if (v == 'f') /* family PTX: its major, same or later minor */
			ok = a == maj && b <= min;
		else /* plain PTX: any newer GPU */
			ok = a < maj || (a == maj && b <= min);
		if (!ok)
			return 0;
		*key = (a * 10 + b) * 4 + vrank;
		return 3;
	}
	return 0;
}

/* The usable images of m for maj.min in the order to try them; returns how
 * many (order must hold m->nimages entries). */
static int select_images(const pk_cuda_module *m, int maj, int min, int *order)
{
	int n = 0;
	int *tier = malloc(sizeof(int) * (size_t)(m->nimages > 0 ? m->nimages : 1));
	int *key = malloc(sizeof(int) * (size_t)(m->nimages > 0 ? m->nimages : 1));
	if (!tier || !key) {
		free(tier);
		free(key);
		return -1;
	}
	for (int i = 0; i < m->nimages; i++) {
		key[i] = 0;
		tier[i] = image_tier(&m->images[i], maj, min, &key[i]);
		if (!tier[i])
			continue;
		/* Insertion sort: by tier, then key descending, then table order. */
		int j = n++;
		while (j > 0) {
			int o = order[j - 1];
			if (tier[o] < tier[i] || (tier[o] == tier[i] && key[o] >= key[i]))
				break;
			order[j] = o;
			j--;
		}
		order[j] = i;
	}
	free(tier);
	free(key);
	return n;
}

static const char *kind_name(pk_cuda_image_kind k)
{
	return k == PK_CUDA_SASS ? "SASS" : k == PK_CUDA_PTX ? "PTX" : "unknown kind";
}

/* "sm_80 (SASS), sm_90a (PTX)" into buf: what the object has. */
static void list_images(const pk_cuda_module *m, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	if (m->nimages == 0)
		snprintf(buf, size, "no GPU images");
	for (int i = 0; i < m->nimages && len < size; i++) {
		int w = snprintf(buf + len, size - len, "%s%s (%s)", i ? ", " : "",
		                 m->images[i].arch ? m->images[i].arch : "(null)", kind_name(m->images[i].kind));
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

/* ---- modules: the cache ---------------------------------------------------------------- */

struct cuda_function {
	cuda_function *next;    /* the next function looked up in the same loaded module */
	char *name;             /* its entry name (an owned copy) */
	pkcu_function handle;   /* from cuModuleGetFunction */
	uint32_t dynamic_limit; /* dynamic shared bytes it may use (48 KiB, raised on demand) */
	uint32_t resident;      /* persistent launches: CTAs the device holds at once (0: not yet known) */
	uint32_t resident_block, resident_shared; /* ... of this block size and dynamic shared memory */
	uint32_t cluster;       /* CTAs a cluster (the entry's .reqnctapercluster x; 1: no clusters): the
	                           grid's x is a multiple of it */
};

/* One module loaded into one context. */
typedef struct cuda_loaded {
	struct cuda_loaded *next; /* the same module in another context */
	pkcu_context ctx;         /* the context it is loaded in */
	pkcu_module handle;       /* the loaded module */
	int image;                /* the index of the image loaded */
	cuda_function *functions; /* the entries looked up so far */
} cuda_loaded;

/* What pk_cuda_module.cache points to. */
typedef struct cuda_module_cache {
	pthread_mutex_t lock; /* guards `loaded` and everything reachable from it */
	cuda_loaded *loaded;  /* one entry per context the module was loaded in */
} cuda_module_cache;

/* Serialises the creation of caches (rare: once per fat object). */
static pthread_mutex_t cache_create_lock = PTHREAD_MUTEX_INITIALIZER;

/* m's cache, created on first use; NULL when out of memory. */
static cuda_module_cache *module_cache(pk_cuda_module *m)
{
	cuda_module_cache *c = __atomic_load_n(&m->cache, __ATOMIC_ACQUIRE);
	if (c)
		return c;
	pthread_mutex_lock(&cache_create_lock);
	c = __atomic_load_n(&m->cache, __ATOMIC_RELAXED);
	if (!c) {
		c = calloc(1, sizeof *c);
		if (c) {
			pthread_mutex_init(&c->lock, NULL);
			__atomic_store_n(&m->cache, c, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&cache_create_lock);
	return c;
}

/* Appends printf output to buf (which holds *len bytes), truncating. */
static void PKRT_PRINTF(4, 5) append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	if (*len + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len = *len + (size_t)w < size ? *len + (size_t)w : size - 1;
}

/* Picks and loads an image of m for cd (whose context is current). */
static pk_status load_module(const pk_cuda_module *m, const cuda_device *cd, const char *kname, cuda_loaded **out)
{
	int *order = malloc(sizeof(int) * (size_t)(m->nimages > 0 ? m->nimages : 1));
	int n = order ? select_images(m, cd->major, cd->minor, order) : -1;
	if (n < 0) {
		free(order);
		return pk_set_error(PK_ERR_OUT_OF_MEMORY, "%s: out of memory", kname);
	}
	char have[400];
	list_images(m, have, sizeof have);
	if (n == 0) {
		free(order);
		return pk_set_error(PK_ERR_NO_KERNEL_FOR_DEVICE,
		                    "%s: no kernel image for %s: the object has %s. SASS runs on its own compute "
		                    "capability (without the 'a' suffix also on later minors of its major), PTX on the "
		                    "same or newer GPUs: compile with --target=...,sm_%d%d",
		                    kname, cd->name, have, cd->major, cd->minor);
	}
	char errors[900];
	size_t elen = 0;
	errors[0] = '\0';
	pkcu_result first = PKCU_SUCCESS;
	for (int k = 0; k < n; k++) {
		const pk_cuda_image *im = &m->images[order[k]];
		if (im->kind == PK_CUDA_PTX && !memchr(im->data, 0, im->size)) {
			append(errors, sizeof errors, &elen, "%s%s (PTX) is not NUL-terminated", elen ? "; " : "", im->arch);
			continue;
		}
		char log[4096];
		log[0] = '\0';
		int opts[2] = {PKCU_JIT_ERROR_LOG_BUFFER, PKCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
		void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
		pkcu_module h = NULL;
		pkcu_result r = cu.module_load_data_ex(&h, im->data, 2, opts, vals);
		if (r == PKCU_SUCCESS) {
			cuda_loaded *ld = calloc(1, sizeof *ld);
			if (!ld) {
				free(order);
				return pk_set_error(PK_ERR_OUT_OF_MEMORY, "%s: out of memory", kname);
			}
			ld->ctx = cd->ctx;
			ld->handle = h;
			ld->image = order[k];
			if (cuda_trace)
				fprintf(stderr, "pk-cuda: loaded %s (%s) of %s for %s on %s\n", im->arch, kind_name(im->kind),
				        have, kname, cd->name);
			free(order);
			*out = ld;
			return PK_SUCCESS;
		}
		if (first == PKCU_SUCCESS)
			first = r;
		char why[300];
		describe(r, why, sizeof why);
		log[sizeof log - 1] = '\0';
		for (char *p = log; *p; p++) /* keep the message on one line */
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		append(errors, sizeof errors, &elen, "%s%s (%s): %s%s%s", elen ? "; " : "", im->arch, kind_name(im->kind),
		       why, log[0] ? ": JIT log: " : "", log);
	}
	free(order);
	/* No driver error at all: every candidate was malformed (a compiler bug). */
	pk_status st = PK_ERR_INTERNAL;
	if (first != PKCU_SUCCESS) {
		st = status_of(first);
		if (st != PK_ERR_OUT_OF_MEMORY && st != PK_ERR_NO_KERNEL_FOR_DEVICE)
			st = PK_ERR_DRIVER;
	}
	return pk_set_error(st, "%s: cannot load a kernel image on %s (the object has %s): %s", kname, cd->name, have,
	                    errors);
}

static uint32_t resident_ctas(const cuda_device *cd, cuda_function *f, const pk_cuda_launch *l);

/* The function `name` of m in cd's context, loading the module and raising
 * the function's dynamic shared memory limit to `shared` as needed; with
 * `persistent`, *resident: the CTAs of that launch the device holds at once. */
static pk_status get_function(pk_cuda_module *m, const cuda_device *cd, const char *name, uint32_t shared,
                              const pk_cuda_launch *persistent, uint32_t *resident, cuda_function **out)
{
	cuda_module_cache *c = module_cache(m);
	if (!c)
		return pk_set_error(PK_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
	pk_status st = PK_SUCCESS;
	pthread_mutex_lock(&c->lock);
	cuda_loaded *ld = c->loaded;
	while (ld && ld->ctx != cd->ctx)
		ld = ld->next;
	if (!ld) {
		st = load_module(m, cd, name, &ld);
		if (st != PK_SUCCESS)
			goto done;
		ld->next = c->loaded;
		c->loaded = ld;
	}
	cuda_function *f = ld->functions;
	while (f && strcmp(f->name, name) != 0)
		f = f->next;
	if (!f) {
		pkcu_function h = NULL;
		pkcu_result r = cu.module_get_function(&h, ld->handle, name);
		if (r != PKCU_SUCCESS) {
			st = cu_error(r == PKCU_ERROR_NOT_FOUND ? PK_ERR_INTERNAL : status_of(r), r,
			              "%s: no such kernel entry in the %s (%s) image loaded on %s", name,
			              m->images[ld->image].arch, kind_name(m->images[ld->image].kind), cd->name);
			goto done;
		}
		f = calloc(1, sizeof *f);
		char *copy = malloc(strlen(name) + 1);
		if (!f || !copy) {
			free(f);
			free(copy);
			st = pk_set_error(PK_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
			goto done;
		}
		strcpy(copy, name);
		f->name = copy;
		f->handle = h;
		f->dynamic_limit = PKCU_DEFAULT_DYNAMIC_SHARED;
		int width = 0;
		f->cluster = cu.func_get_attribute &&
		                     cu.func_get_attribute(&width, PKCU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, h) ==
		                         PKCU_SUCCESS &&
		                     width > 1
		                 ? (uint32_t)width
		                 : 1;
		f->next = ld->functions;
		ld->functions = f;
	}
	if (shared > f->dynamic_limit) {
		if ((cd->smem_optin > 0 && shared > (uint32_t)cd->smem_optin) || shared > INT_MAX) {
			st = pk_set_error(PK_ERR_LAUNCH_FAILED,
			                  "%s: needs %u bytes of dynamic shared memory; %s allows at most %d per block", name,
			                  shared, cd->name, cd->smem_optin);
			goto done;
		}
		pkcu_result r = cu.func_set_attribute(f->handle, PKCU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		                                      (int)shared);
		if (r != PKCU_SUCCESS) {
			st = cu_error(PK_ERR_LAUNCH_FAILED, r,
			              "%s: cannot raise the dynamic shared memory limit to %u bytes on %s", name, shared,
			              cd->name);
			goto done;
		}
		f->dynamic_limit = shared;
	}
	if (persistent)
		*resident = resident_ctas(cd, f, persistent);
	*out = f;
done:
	pthread_mutex_unlock(&c->lock);
	return st;
}

static void last_kernel_note(const pk_stream *s, char *buf, size_t size)
{
	cuda_stream *cs = s->impl;
	cuda_function *f = atomic_load(&cs->last_kernel);
	if (f)
		snprintf(buf, size, " (the last kernel launched on this stream: %s)", f->name);
	else
		buf[0] = '\0';
}

/* ---- launch ------------------------------------------------------------------------ */

/* The CTAs of l the device holds at once (SMs x CTAs an SM for its block
 * size and shared memory; for a kernel of clusters, the driver's count of
 * clusters that fit at once, which a GPC's SMs bound: a cluster's CTAs
 * share one), at least 1, remembered per function; under the module's
 * lock. */
static uint32_t resident_ctas(const cuda_device *cd, cuda_function *f, const pk_cuda_launch *l)
{
	if (f->resident && f->resident_block == l->block[0] && f->resident_shared == l->shared_bytes)
		return f->resident;
	int per_sm = 0;
	if (!cu.occupancy || cu.occupancy(&per_sm, f->handle, (int)l->block[0], l->shared_bytes) != PKCU_SUCCESS ||
	    per_sm < 1)
		per_sm = 1;
	uint64_t n = (uint64_t)(cd->sms > 0 ? cd->sms : 1) * (uint64_t)per_sm;
	int clusters = 0;
	pkcu_launch_config cfg = {{f->cluster, 1, 1}, {l->block[0], l->block[1], l->block[2]}, l->shared_bytes, NULL, NULL, 0};
	if (f->cluster > 1 && cu.max_clusters && cu.max_clusters(&clusters, f->handle, &cfg) == PKCU_SUCCESS &&
	    clusters > 0 && (uint64_t)clusters * f->cluster < n)
		n = (uint64_t)clusters * f->cluster;
	if (persistent_most && n > persistent_most)
		n = persistent_most;
	/* Whole clusters (the persistent loop takes any number of them). */
	n = n < f->cluster ? f->cluster : n / f->cluster * f->cluster;
	f->resident = n > UINT32_MAX ? UINT32_MAX / f->cluster * f->cluster : (uint32_t)n;
	f->resident_block = l->block[0];
	f->resident_shared = l->shared_bytes;
	return f->resident;
}

static pk_status launch(pk_stream *s, const pk_cuda_launch *l, bool persistent)
{
	if (!l)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_launch_cuda: launch is NULL");
	const char *name = l->kernel_name;
	if (!name)
		return pk_set_error(PK_ERR_INVALID_VALUE, "pk_launch_cuda: kernel_name is NULL");
	pk_status bad = pkrt_check_stream(s, name);
	if (bad != PK_SUCCESS)
		return bad;
	pk_device *dev = pk_stream_device(s);
	if (dev->kind != PK_DEVICE_CUDA)
		return pk_set_error(PK_ERR_INVALID_VALUE,
		                    "%s: pk_launch_cuda needs a stream of a CUDA device; this one belongs to %s%s", name,
		                    pk_device_name(dev), s ? "" : " (a NULL stream is the host's default stream)");
	const pk_cuda_module *m = l->module;
	if (!m || m->nimages < 0 || (m->nimages > 0 && !m->images))
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: pk_launch_cuda: %s", name,
		                    !m ? "module is NULL" : "the module's image table is invalid");
	if (l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0)
		return PK_SUCCESS; /* an empty grid runs nothing */
	if (l->block[0] == 0 || l->block[1] == 0 || l->block[2] == 0)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: pk_launch_cuda: empty block (%u, %u, %u)", name,
		                    l->block[0], l->block[1], l->block[2]);
	cuda_device *cd = dev_of(dev);
	pk_status st = make_current(cd, name);
	if (st != PK_SUCCESS)
		return st;
	cuda_function *f = NULL;
	uint32_t resident = 0;
	st = get_function(l->module, cd, name, l->shared_bytes, persistent ? l : NULL, &resident, &f);
	if (st != PK_SUCCESS)
		return st;
	/* A persistent kernel loops over grid[0] tasks on fewer CTAs. */
	uint32_t gx = persistent && l->grid[0] > resident ? resident : l->grid[0];
	if (gx % f->cluster) {
		/* A kernel of clusters: whole ones (the kernel gives the CTAs past
		 * its tasks none); the stub checked that the tasks fit in 2^31. */
		if (!persistent)
			return pk_set_error(PK_ERR_INTERNAL, "%s: a kernel of clusters of %u CTAs launched with %u CTAs", name,
			                    f->cluster, gx);
		gx += f->cluster - gx % f->cluster;
	}
	cuda_stream *cs = s->impl;
	if (cuda_trace)
		fprintf(stderr, "pk-cuda: launch %s grid (%u, %u, %u) block (%u, %u, %u) shared %u on %s%s%s\n", name,
		        gx, l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->shared_bytes,
		        cd->name, persistent ? " (persistent)" : "", f->cluster > 1 ? " in clusters" : "");
	pkcu_result r = cu.launch_kernel(f->handle, gx, l->grid[1], l->grid[2], l->block[0], l->block[1],
	                                 l->block[2], l->shared_bytes, cs->handle, l->params, NULL);
	if (r != PKCU_SUCCESS)
		return cu_error(PK_ERR_LAUNCH_FAILED, r,
		                "%s: launch of grid (%u, %u, %u) x block (%u, %u, %u) with %u bytes of dynamic shared "
		                "memory on %s failed",
		                name, gx, l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
		                l->shared_bytes, cd->name);
	atomic_store(&cs->last_kernel, f);
	return PK_SUCCESS;
}

pk_status pk_launch_cuda(pk_stream *s, const pk_cuda_launch *l)
{
	return launch(s, l, false);
}

pk_status pk_launch_cuda_persistent(pk_stream *s, const pk_cuda_launch *l)
{
	return launch(s, l, true);
}

uint32_t pk_cuda_sm_count(pk_stream *s)
{
	pk_device *dev = pk_stream_device(s);
	if (!dev || dev->kind != PK_DEVICE_CUDA)
		return 0;
	return sm_count_said >= 0 ? (uint32_t)sm_count_said : (uint32_t)dev_of(dev)->sms;
}

uint32_t pk_cuda_resident_ctas(pk_stream *s, const pk_cuda_launch *l)
{
	pk_device *dev = pk_stream_device(s);
	if (!l || !l->kernel_name || !l->module || !dev || dev->kind != PK_DEVICE_CUDA || l->block[0] == 0)
		return 0;
	cuda_device *cd = dev_of(dev);
	cuda_function *f = NULL;
	uint32_t resident = 0;
	if (make_current(cd, l->kernel_name) != PK_SUCCESS ||
	    get_function(l->module, cd, l->kernel_name, l->shared_bytes, l, &resident, &f) != PK_SUCCESS)
		return 0;
	return resident;
}

/* ---- tensor maps (the Hopper copy engine) ------------------------------------------ */

pk_status pk_cuda_tensor_map(void *map, const void *base, uint32_t elem_bytes, uint32_t rank, const uint64_t *dims,
                             uint32_t row_dim, uint32_t box_rows, uint32_t box_cols, uint32_t swizzle_bytes,
                             const char *kernel_name)
{
	const char *name = kernel_name ? kernel_name : "pk_cuda_tensor_map";
	if (!map || ((uintptr_t)map & 63) != 0)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: the tensor map is NULL or not 64-byte aligned", name);
	memset(map, 0, PKCU_TENSOR_MAP_BYTES);
	if (rank < 2 || rank > PK_CUDA_TENSOR_MAP_MAX_RANK || !dims || row_dim >= rank - 1)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: a tensor map of rank %u with rows along dimension %u is "
		                    "invalid", name, rank, row_dim);
	int swz = swizzle_bytes == 32 ? PKCU_TENSOR_MAP_SWIZZLE_32B : swizzle_bytes == 64 ? PKCU_TENSOR_MAP_SWIZZLE_64B
	        : swizzle_bytes == 128 ? PKCU_TENSOR_MAP_SWIZZLE_128B : -1;
	int dtype = elem_bytes == 1 ? PKCU_TENSOR_MAP_DATA_TYPE_UINT8 : elem_bytes == 2 ? PKCU_TENSOR_MAP_DATA_TYPE_UINT16
	          : elem_bytes == 4 ? PKCU_TENSOR_MAP_DATA_TYPE_UINT32 : -1;
	if (swz < 0 || dtype < 0 || box_rows < 1 || box_rows > 256 || box_cols < 1 ||
	    (uint64_t)box_cols * elem_bytes > swizzle_bytes || ((uint64_t)box_cols * elem_bytes) % 16 != 0)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: tensor map box %u x %u of %u-byte elements with a %u-byte "
		                    "swizzle is invalid", name, box_rows, box_cols, elem_bytes, swizzle_bytes);
	/* The driver's order is innermost first; the box is 1 along the
	 * dimensions the kernel indexes with scalars. */
	unsigned long long gdim[PK_CUDA_TENSOR_MAP_MAX_RANK], stride[PK_CUDA_TENSOR_MAP_MAX_RANK - 1];
	unsigned int box[PK_CUDA_TENSOR_MAP_MAX_RANK], estr[PK_CUDA_TENSOR_MAP_MAX_RANK];
	unsigned long long bytes = elem_bytes;
	for (uint32_t i = 0; i < rank; i++) {
		uint32_t d = rank - 1 - i;
		if (dims[d] == 0)
			return PK_SUCCESS;
		if (dims[d] > INT32_MAX)
			return pk_set_error(PK_ERR_INVALID_VALUE, "%s: dimension %u of the array (%llu) is too large for "
			                    "the copy engine's 32-bit coordinates", name, d, (unsigned long long)dims[d]);
		gdim[i] = dims[d];
		box[i] = i == 0 ? box_cols : d == row_dim ? box_rows : 1;
		estr[i] = 1;
		if (i > 0)
			stride[i - 1] = bytes;
		bytes *= dims[d];
	}
	if (((uintptr_t)base & 15) != 0 || stride[0] % 16 != 0)
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s: the copy engine needs a 16-byte aligned array and rows "
		                    "(%llu bytes here)", name, stride[0]);
	pthread_once(&load_once, load_driver);
	if (!cu.tensor_map_encode_tiled)
		return pk_set_error(PK_ERR_DRIVER, "%s: the CUDA driver has no cuTensorMapEncodeTiled (too old, or "
		                    "not loaded)", name);
	pkcu_result r = cu.tensor_map_encode_tiled(map, dtype, rank, (void *)(uintptr_t)base, gdim, stride, box, estr,
	                                           PKCU_TENSOR_MAP_INTERLEAVE_NONE, swz,
	                                           PKCU_TENSOR_MAP_L2_PROMOTION_L2_128B,
	                                           PKCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != PKCU_SUCCESS)
		return cu_error(PK_ERR_DRIVER, r, "%s: cuTensorMapEncodeTiled refused a rank-%u array of %llu rows of "
		                "%llu elements in %u x %u boxes", name, rank, (unsigned long long)dims[row_dim],
		                (unsigned long long)dims[rank - 1], box_rows, box_cols);
	return PK_SUCCESS;
}

pk_status pk_cuda_tensor_map_2d(void *map, const void *base, uint32_t elem_bytes, uint64_t rows, uint64_t cols,
                                uint32_t box_rows, uint32_t box_cols, uint32_t swizzle_bytes, const char *kernel_name)
{
	const uint64_t dims[2] = {rows, cols};
	return pk_cuda_tensor_map(map, base, elem_bytes, 2, dims, 0, box_rows, box_cols, swizzle_bytes, kernel_name);
}
