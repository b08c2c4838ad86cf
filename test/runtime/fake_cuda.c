/* fake_cuda.c - a fake CUDA driver for testing libpkrt's CUDA device kind
 * on machines without a GPU.  Built as build/.../fakecuda/libcuda.so.1 and
 * loaded by the runtime through LD_LIBRARY_PATH; see fake_cuda.h for its
 * configuration and behaviour.  Device memory is host memory (malloc), all
 * work completes synchronously, and every entry point the runtime uses
 * (runtime/cuda_driver.h) is implemented with the real one's signature.
 * Thread-safe: one mutex guards the state.
 *
 * Built together with test/gpu-emu/emu_cta.c into one libcuda.so.1 (as
 * test/gpu-emu/exec.py does), it also runs real kernels: images that are
 * not FAKE-* text (pkc's cubins and PTX) load, their functions are the
 * emulated kernels pk_emu_<name> linked into the program, and launches of
 * them run on the CPU (pk_emu_run), synchronously.  For a PTX image, every
 * pointer parameter of the entry (".param .u64 .ptr") must point into
 * memory from cuMemAlloc, else the launch fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS (a host array passed to a GPU kernel).  Each
 * allocation then has guard zones (GUARD bytes of GUARD_BYTE) on both
 * sides; a launch after which one is changed (a kernel wrote out of
 * bounds) fails likewise. */
#define _POSIX_C_SOURCE 200809L
#include "../../runtime/cuda_driver.h"
#include "fake_cuda.h"

#include "../gpu-emu/emu_cta.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEV 8

struct pkcu_ctx_st {
	int device; /* the ordinal whose primary context this is */
};

struct pkcu_mod_st {
	pkcu_context ctx; /* where it was loaded */
	char *text;       /* a copy of the image text */
	int emulated;     /* a real image: its kernels run through pk_emu_run */
};

/* test/gpu-emu/emu_cta.c, when it is linked in (NULL otherwise). */
__attribute__((weak)) void *pk_emu_entry(const char *kernel_name);
__attribute__((weak)) int pk_emu_run(const char *kernel_name, const uint32_t grid[3], const uint32_t block[3],
                                     uint32_t shared_bytes, void **params, char *err, size_t errlen);

struct pkcu_func_st {
	pkcu_module mod;      /* its module */
	char name[64];        /* its entry name */
	int dynamic_limit;    /* MAX_DYNAMIC_SHARED_SIZE_BYTES (default 48 KiB) */
	struct pkcu_func_st *next; /* the next function handed out */
};

struct pkcu_stream_st {
	pkcu_context ctx; /* the context it was created in */
};

struct pkcu_event_st {
	pkcu_context ctx; /* the context it was created in */
	double time_ms;   /* when it was last recorded (fake clock) */
	int recorded;     /* recorded at least once */
};

typedef struct allocation {
	char *base;              /* the block */
	size_t size;             /* its bytes */
	struct allocation *next; /* the next live block */
} allocation;

enum { GUARD = 256, GUARD_BYTE = 0xA5 }; /* emulation only: see above */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ndev;                         /* GPUs configured by FAKE_CUDA_CC */
static int cc[MAX_DEV];                  /* their compute capabilities times ten */
static struct pkcu_ctx_st ctxs[MAX_DEV]; /* their primary contexts */
static size_t mem_limit = (size_t)1 << 30; /* largest allocation */
static int initialized;                  /* cuInit succeeded */
static int sync_error;                   /* what synchronizations return */
static double fake_clock;                /* advanced by each event record */
static allocation *allocs;               /* live device memory */
static struct pkcu_func_st *functions;   /* every function handed out (freed never: test lifetime) */
static fake_cuda_stats stats;            /* counters for the test */
static _Thread_local pkcu_context current; /* this thread's current context */

/* Is [p, p+n) inside a live allocation?  (lock held) */
static int valid_range(pkcu_deviceptr p, size_t n)
{
	for (allocation *a = allocs; a; a = a->next) {
		uintptr_t b = (uintptr_t)a->base;
		if (p >= b && p - b <= a->size && n <= a->size - (size_t)(p - b))
			return 1;
	}
	return 0;
}

static int need_ctx(void)
{
	return current != NULL;
}

EXPORT pkcu_result cuInit(unsigned int flags)
{
	if (flags != 0)
		return PKCU_ERROR_INVALID_VALUE;
	const char *e = getenv("FAKE_CUDA_INIT_ERROR");
	if (e && *e)
		return atoi(e);
	pthread_mutex_lock(&lock);
	if (!initialized) {
		const char *list = getenv("FAKE_CUDA_CC");
		if (!list)
			list = "90";
		ndev = 0;
		for (const char *p = list; *p && ndev < MAX_DEV;) {
			char *end;
			long v = strtol(p, &end, 10);
			if (end == p)
				break;
			ctxs[ndev].device = ndev;
			cc[ndev++] = (int)v;
			p = *end == ',' ? end + 1 : end;
		}
		const char *lim = getenv("FAKE_CUDA_MEM_LIMIT");
		if (lim && *lim)
			mem_limit = (size_t)strtoull(lim, NULL, 10);
		initialized = 1;
	}
	stats.inits++;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuDriverGetVersion(int *v)
{
	*v = 13000;
	return PKCU_SUCCESS;
}

static const struct {
	int code;         /* the CUresult */
	const char *name; /* cuGetErrorName's text */
	const char *text; /* cuGetErrorString's text */
} errors[] = {
	{0, "CUDA_SUCCESS", "no error"},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	{218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{600, "CUDA_ERROR_NOT_READY", "device not ready"},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	{719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

EXPORT pkcu_result cuGetErrorName(pkcu_result e, const char **s)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == e) {
			*s = errors[i].name;
			return PKCU_SUCCESS;
		}
	*s = NULL;
	return PKCU_ERROR_INVALID_VALUE;
}

EXPORT pkcu_result cuGetErrorString(pkcu_result e, const char **s)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == e) {
			*s = errors[i].text;
			return PKCU_SUCCESS;
		}
	*s = NULL;
	return PKCU_ERROR_INVALID_VALUE;
}

EXPORT pkcu_result cuDeviceGetCount(int *n)
{
	if (!initialized)
		return PKCU_ERROR_NOT_INITIALIZED;
	*n = ndev;
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuDeviceGet(pkcu_device *d, int ordinal)
{
	if (ordinal < 0 || ordinal >= ndev)
		return PKCU_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuDeviceGetName(char *name, int len, pkcu_device d)
{
	if (d < 0 || d >= ndev)
		return PKCU_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, pk_emu_run ? "Emulated GPU %d" : "Fake GPU %d", d);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuDeviceGetAttribute(int *v, int attrib, pkcu_device d)
{
	if (d < 0 || d >= ndev)
		return PKCU_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*v = cc[d] / 10;
		return PKCU_SUCCESS;
	case PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*v = cc[d] % 10;
		return PKCU_SUCCESS;
	case PKCU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		*v = 227 * 1024;
		return PKCU_SUCCESS;
	case PKCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*v = 132;
		return PKCU_SUCCESS;
	case PKCU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
		*v = 50 << 20;
		return PKCU_SUCCESS;
	}
	return PKCU_ERROR_INVALID_VALUE;
}

EXPORT pkcu_result cuDevicePrimaryCtxRetain(pkcu_context *c, pkcu_device d)
{
	if (d < 0 || d >= ndev)
		return PKCU_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	stats.retains++;
	pthread_mutex_unlock(&lock);
	*c = &ctxs[d];
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuCtxGetCurrent(pkcu_context *c)
{
	*c = current;
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuCtxSetCurrent(pkcu_context c)
{
	current = c;
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuStreamCreate(pkcu_stream *s, unsigned int flags)
{
	(void)flags;
	if (!need_ctx())
		return PKCU_ERROR_INVALID_CONTEXT;
	*s = calloc(1, sizeof **s);
	if (!*s)
		return PKCU_ERROR_OUT_OF_MEMORY;
	(*s)->ctx = current;
	pthread_mutex_lock(&lock);
	stats.live_streams++;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuStreamDestroy_v2(pkcu_stream s)
{
	if (!s)
		return PKCU_ERROR_INVALID_HANDLE;
	free(s);
	pthread_mutex_lock(&lock);
	stats.live_streams--;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

/* A stream of the current context, or the default stream (NULL). */
static int stream_ok(pkcu_stream s)
{
	return current && (!s || s->ctx == current);
}

EXPORT pkcu_result cuStreamSynchronize(pkcu_stream s)
{
	(void)s;
	pthread_mutex_lock(&lock);
	int e = sync_error;
	pthread_mutex_unlock(&lock);
	return e;
}

EXPORT pkcu_result cuEventCreate(pkcu_event *e, unsigned int flags)
{
	(void)flags;
	if (!need_ctx())
		return PKCU_ERROR_INVALID_CONTEXT;
	*e = calloc(1, sizeof **e);
	if (!*e)
		return PKCU_ERROR_OUT_OF_MEMORY;
	(*e)->ctx = current;
	pthread_mutex_lock(&lock);
	stats.live_events++;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuEventDestroy_v2(pkcu_event e)
{
	if (!e)
		return PKCU_ERROR_INVALID_HANDLE;
	free(e);
	pthread_mutex_lock(&lock);
	stats.live_events--;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuEventRecord(pkcu_event e, pkcu_stream s)
{
	if (!e || !stream_ok(s) || e->ctx != current)
		return PKCU_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	fake_clock += 0.5;
	e->time_ms = fake_clock;
	e->recorded = 1;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuEventSynchronize(pkcu_event e)
{
	if (!e)
		return PKCU_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	int err = sync_error;
	pthread_mutex_unlock(&lock);
	return err;
}

EXPORT pkcu_result cuEventElapsedTime_v2(float *ms, pkcu_event a, pkcu_event b)
{
	if (!a || !b || !a->recorded || !b->recorded)
		return PKCU_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	*ms = (float)(b->time_ms - a->time_ms);
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

/* The guard zone of each side of an emulated allocation (0 otherwise). */
static size_t guard_bytes(void)
{
	return pk_emu_run ? GUARD : 0;
}

EXPORT pkcu_result cuMemAlloc_v2(pkcu_deviceptr *p, size_t bytes)
{
	if (!need_ctx())
		return PKCU_ERROR_INVALID_CONTEXT;
	if (bytes == 0)
		return PKCU_ERROR_INVALID_VALUE;
	if (bytes > mem_limit)
		return PKCU_ERROR_OUT_OF_MEMORY;
	size_t g = guard_bytes();
	allocation *a = malloc(sizeof *a);
	char *block = malloc(bytes + 2 * g);
	if (!a || !block) {
		free(a);
		free(block);
		return PKCU_ERROR_OUT_OF_MEMORY;
	}
	memset(block, GUARD_BYTE, g);
	memset(block + g + bytes, GUARD_BYTE, g);
	a->base = block + g;
	a->size = bytes;
	pthread_mutex_lock(&lock);
	a->next = allocs;
	allocs = a;
	stats.live_allocations++;
	pthread_mutex_unlock(&lock);
	*p = (pkcu_deviceptr)(uintptr_t)a->base;
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuMemFree_v2(pkcu_deviceptr p)
{
	if (!need_ctx())
		return PKCU_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&lock);
	for (allocation **a = &allocs; *a; a = &(*a)->next)
		if ((uintptr_t)(*a)->base == p) {
			allocation *dead = *a;
			*a = dead->next;
			stats.live_allocations--;
			pthread_mutex_unlock(&lock);
			free(dead->base - guard_bytes());
			free(dead);
			return PKCU_SUCCESS;
		}
	pthread_mutex_unlock(&lock);
	return PKCU_ERROR_INVALID_VALUE;
}

/* The first live allocation whose guard zones were written, or NULL. */
static allocation *damaged_allocation(void)
{
	size_t g = guard_bytes();
	allocation *bad = NULL;
	pthread_mutex_lock(&lock);
	for (allocation *a = allocs; a && !bad; a = a->next)
		for (size_t i = 0; i < g && !bad; i++)
			if ((unsigned char)a->base[-1 - (ptrdiff_t)i] != GUARD_BYTE ||
			    (unsigned char)a->base[a->size + i] != GUARD_BYTE)
				bad = a;
	pthread_mutex_unlock(&lock);
	return bad;
}

/* Checks a copy or fill: a context, the stream, and device ranges. */
static pkcu_result check_op(pkcu_stream s, pkcu_deviceptr d1, pkcu_deviceptr d2, size_t n)
{
	if (!need_ctx())
		return PKCU_ERROR_INVALID_CONTEXT;
	if (!stream_ok(s))
		return PKCU_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	int ok = (!d1 || valid_range(d1, n)) && (!d2 || valid_range(d2, n));
	pthread_mutex_unlock(&lock);
	return ok ? PKCU_SUCCESS : PKCU_ERROR_INVALID_VALUE;
}

EXPORT pkcu_result cuMemcpyHtoDAsync_v2(pkcu_deviceptr dst, const void *src, size_t n, pkcu_stream s)
{
	pkcu_result r = check_op(s, dst ? dst : 1, 0, n);
	if (r)
		return r;
	memcpy((void *)(uintptr_t)dst, src, n);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuMemcpyDtoHAsync_v2(void *dst, pkcu_deviceptr src, size_t n, pkcu_stream s)
{
	pkcu_result r = check_op(s, src ? src : 1, 0, n);
	if (r)
		return r;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuMemcpyDtoDAsync_v2(pkcu_deviceptr dst, pkcu_deviceptr src, size_t n, pkcu_stream s)
{
	pkcu_result r = check_op(s, dst ? dst : 1, src ? src : 1, n);
	if (r)
		return r;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuMemsetD8Async(pkcu_deviceptr dst, unsigned char v, size_t n, pkcu_stream s)
{
	pkcu_result r = check_op(s, dst ? dst : 1, 0, n);
	if (r)
		return r;
	memset((void *)(uintptr_t)dst, v, n);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuModuleLoadDataEx(pkcu_module *m, const void *image, unsigned int nopts, int *opts, void **vals)
{
	if (!need_ctx())
		return PKCU_ERROR_INVALID_CONTEXT;
	char *log = NULL;
	size_t logsize = 0;
	for (unsigned i = 0; i < nopts; i++) {
		if (opts[i] == PKCU_JIT_ERROR_LOG_BUFFER)
			log = vals[i];
		else if (opts[i] == PKCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			logsize = (size_t)(uintptr_t)vals[i];
	}
	const char *text = image;
	pkcu_result r = PKCU_SUCCESS;
	int emulated = 0;
	if (!strncmp(text, "FAKE-BADPTX", 11)) {
		r = PKCU_ERROR_INVALID_PTX;
		if (log && logsize)
			snprintf(log, logsize, "ptxas application ptx input, line 7; error   : fake syntax error\n"
			                       "ptxas fatal   : Ptx assembly aborted due to errors");
	} else if (!strncmp(text, "FAKE-NOBIN", 10)) {
		r = PKCU_ERROR_NO_BINARY_FOR_GPU;
	} else if (strncmp(text, "FAKE-OK", 7) != 0) {
		if (pk_emu_run)
			emulated = 1;
		else
			r = PKCU_ERROR_INVALID_IMAGE;
	}
	pthread_mutex_lock(&lock);
	if (r != PKCU_SUCCESS) {
		stats.load_failures++;
		pthread_mutex_unlock(&lock);
		return r;
	}
	stats.module_loads++;
	stats.last_image = image;
	pthread_mutex_unlock(&lock);
	*m = calloc(1, sizeof **m);
	if (!*m)
		return PKCU_ERROR_OUT_OF_MEMORY;
	(*m)->ctx = current;
	(*m)->emulated = emulated;
	(*m)->text = malloc(strlen(text) + 1);
	if (!(*m)->text) {
		free(*m);
		return PKCU_ERROR_OUT_OF_MEMORY;
	}
	strcpy((*m)->text, text);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuModuleGetFunction(pkcu_function *f, pkcu_module m, const char *name)
{
	if (!m)
		return PKCU_ERROR_INVALID_HANDLE;
	/* "... kernels: a b c": name must be one of the words after "kernels:". */
	const char *k = strstr(m->text, "kernels:");
	size_t len = strlen(name);
	int found = m->emulated && pk_emu_entry(name) != NULL;
	for (const char *p = k && !m->emulated ? k + 8 : ""; *p;) {
		while (*p == ' ')
			p++;
		size_t w = strcspn(p, " ");
		if (w == len && !strncmp(p, name, len))
			found = 1;
		p += w;
	}
	if (!found || len >= sizeof((*f)->name))
		return PKCU_ERROR_NOT_FOUND;
	*f = calloc(1, sizeof **f);
	if (!*f)
		return PKCU_ERROR_OUT_OF_MEMORY;
	(*f)->mod = m;
	strcpy((*f)->name, name);
	(*f)->dynamic_limit = 48 * 1024;
	pthread_mutex_lock(&lock);
	(*f)->next = functions;
	functions = *f;
	stats.get_functions++;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

EXPORT pkcu_result cuFuncSetAttribute(pkcu_function f, int attrib, int value)
{
	if (!f)
		return PKCU_ERROR_INVALID_HANDLE;
	if (attrib != PKCU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 || value > 227 * 1024)
		return PKCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	f->dynamic_limit = value;
	stats.set_attributes++;
	stats.last_attribute = value;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

/* Entries named cluster_* stand for kernels of clusters of 2 CTAs
 * (.reqnctapercluster 2, 1, 1). */
static unsigned cluster_width(pkcu_function f)
{
	return strncmp(f->name, "cluster_", 8) ? 1 : 2;
}

EXPORT pkcu_result cuFuncGetAttribute(int *value, int attrib, pkcu_function f)
{
	if (!f || !value || attrib != PKCU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH)
		return PKCU_ERROR_INVALID_VALUE;
	*value = cluster_width(f) > 1 ? (int)cluster_width(f) : 0;
	return PKCU_SUCCESS;
}

/* 61 clusters at once: fewer than the 66 pairs of SMs (as when a GPC has
 * an odd SM out), so that the runtime's use of the count shows. */
EXPORT pkcu_result cuOccupancyMaxActiveClusters(int *clusters, pkcu_function f, const pkcu_launch_config *config)
{
	if (!f || !clusters || !config || config->grid[0] % cluster_width(f) || config->nattrs)
		return PKCU_ERROR_INVALID_VALUE;
	*clusters = 61;
	return PKCU_SUCCESS;
}

/* Two CTAs an SM, one when a CTA takes over half the shared memory. */
EXPORT pkcu_result cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, pkcu_function f, int block_size,
                                                               size_t dynamic_shared)
{
	if (!f || !blocks || block_size < 1 || block_size > 1024)
		return PKCU_ERROR_INVALID_VALUE;
	*blocks = dynamic_shared > 114 * 1024 ? 1 : 2;
	return PKCU_SUCCESS;
}

/* The fake's tensor map: what was asked, as 64-bit words (fake_cuda.h
 * FAKE_TMAP_*), after the driver's own checks of the parameters. */
EXPORT pkcu_result cuTensorMapEncodeTiled(void *map, int dtype, unsigned int rank, void *base,
                                          const unsigned long long *dims, const unsigned long long *strides,
                                          const unsigned int *box, const unsigned int *elem_strides, int interleave,
                                          int swizzle, int l2_promotion, int oob_fill)
{
	if (!map || ((uintptr_t)map & 63) || ((uintptr_t)base & 15) || rank < 1 || rank > 5 || dtype < 0 || dtype > 2 ||
	    interleave != PKCU_TENSOR_MAP_INTERLEAVE_NONE || swizzle < 1 || swizzle > 3 ||
	    ((unsigned long long)box[0] << dtype) > (16u << swizzle))
		return PKCU_ERROR_INVALID_VALUE;
	unsigned long long w[FAKE_TMAP_WORDS] = {FAKE_TMAP_MAGIC, (unsigned long long)dtype, (uintptr_t)base, rank};
	for (unsigned i = 0; i < rank; i++) {
		if (dims[i] == 0 || box[i] == 0 || box[i] > 256 || elem_strides[i] != 1 || (i && strides[i - 1] % 16))
			return PKCU_ERROR_INVALID_VALUE;
		w[FAKE_TMAP_DIMS + i] = dims[i];
		if (i)
			w[FAKE_TMAP_STRIDES + i - 1] = strides[i - 1];
		w[FAKE_TMAP_BOX] |= (unsigned long long)box[i] << (12 * i);
	}
	w[FAKE_TMAP_MODES] = (unsigned long long)swizzle | (unsigned long long)l2_promotion << 8 |
	                     (unsigned long long)oob_fill << 16;
	memcpy(map, w, sizeof w);
	return PKCU_SUCCESS;
}

/* Checks the pointer parameters of entry `name` in PTX text (not a PTX
 * image: nothing to check).  0, or the index of the first bad one + 1. */
static int bad_pointer_param(const char *ptx, const char *name, void **params)
{
	char head[128];
	snprintf(head, sizeof head, ".entry %s(", name);
	const char *p = strstr(ptx, head);
	if (!p || !params)
		return 0;
	p += strlen(head);
	const char *end = strchr(p, ')');
	for (int i = 0; p && end && p < end; i++) {
		const char *comma = strchr(p, ',');
		const char *stop = comma && comma < end ? comma : end;
		const char *ptr = strstr(p, ".ptr");
		if (ptr && ptr < stop) {
			pkcu_deviceptr v;
			memcpy(&v, params[i], sizeof v);
			pthread_mutex_lock(&lock);
			int ok = valid_range(v, 1);
			pthread_mutex_unlock(&lock);
			if (!ok)
				return i + 1;
		}
		p = stop == end ? NULL : stop + 1;
	}
	return 0;
}

EXPORT pkcu_result cuLaunchKernel(pkcu_function f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                  unsigned int by, unsigned int bz, unsigned int shared, pkcu_stream s, void **params,
                                  void **extra)
{
	if (!need_ctx())
		return PKCU_ERROR_INVALID_CONTEXT;
	if (!f || f->mod->ctx != current)
		return PKCU_ERROR_INVALID_CONTEXT;
	if (!stream_ok(s))
		return PKCU_ERROR_INVALID_HANDLE;
	if (extra || gx == 0 || gy == 0 || gz == 0 || bx * by * bz > 1024 || bx * by * bz == 0 ||
	    gx % cluster_width(f))
		return PKCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	int limit = f->dynamic_limit;
	pthread_mutex_unlock(&lock);
	if (shared > (unsigned)limit)
		return PKCU_ERROR_INVALID_VALUE;
	if (f->mod->emulated) {
		int bad = bad_pointer_param(f->mod->text, f->name, params);
		if (bad) {
			fprintf(stderr, "fake_cuda: %s: parameter %d (%p) is not device memory\n", f->name, bad - 1,
			        *(void **)params[bad - 1]);
			return PKCU_ERROR_ILLEGAL_ADDRESS;
		}
		char err[512];
		const uint32_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
		int e = pk_emu_run(f->name, grid, block, shared, params, err, sizeof err);
		if (e != PK_EMU_OK) {
			fprintf(stderr, "fake_cuda: %s\n", err);
			return e == PK_EMU_NO_ENTRY ? PKCU_ERROR_NOT_FOUND : PKCU_ERROR_INVALID_VALUE;
		}
		allocation *hit = damaged_allocation();
		if (hit) {
			fprintf(stderr, "fake_cuda: %s wrote outside the %zu bytes at %p\n", f->name, hit->size,
			        (void *)hit->base);
			return PKCU_ERROR_ILLEGAL_ADDRESS;
		}
	} else if (!strcmp(f->name, "fail_launch")) {
		return PKCU_ERROR_LAUNCH_OUT_OF_RESOURCES;
	} else if (!strcmp(f->name, "store_i32")) {
		if (!params)
			return PKCU_ERROR_INVALID_VALUE;
		pkcu_deviceptr p = *(pkcu_deviceptr *)params[0];
		int32_t v = *(int32_t *)params[1];
		int64_t n = *(int64_t *)params[2];
		pthread_mutex_lock(&lock);
		int ok = n >= 0 && valid_range(p, (size_t)n * sizeof(int32_t));
		pthread_mutex_unlock(&lock);
		if (!ok)
			return PKCU_ERROR_ILLEGAL_ADDRESS;
		for (int64_t i = 0; i < n; i++)
			((int32_t *)(uintptr_t)p)[i] = v;
	}
	pthread_mutex_lock(&lock);
	stats.launches++;
	stats.last_grid[0] = gx;
	stats.last_grid[1] = gy;
	stats.last_grid[2] = gz;
	stats.last_block[0] = bx;
	stats.last_block[1] = by;
	stats.last_block[2] = bz;
	stats.last_shared = shared;
	pthread_mutex_unlock(&lock);
	return PKCU_SUCCESS;
}

EXPORT void fake_cuda_stats_get(fake_cuda_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}

EXPORT void fake_cuda_set_sync_error(int code)
{
	pthread_mutex_lock(&lock);
	sync_error = code;
	pthread_mutex_unlock(&lock);
}
