/* pk_runtime.h - the pkc runtime (libpkrt): errors, devices, streams,
 * events, buffers, and the host and CUDA launchers that pkc-generated launch
 * functions call.
 *
 * Plain C: compiles as C99 or later and as C++ (the API has C linkage).
 * Every function is thread-safe unless its comment says otherwise.
 * Functions that can fail return a pk_status; on failure they also record a
 * detailed message retrievable on the same thread with pk_last_error().
 * Nothing in the runtime calls exit() or abort() on a user error.
 * See runtime/README.md for the launch model. */
#ifndef PK_RUNTIME_H
#define PK_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's ABI version.  Generated headers may check it with #if. */
#define PK_RUNTIME_ABI_VERSION 5 /* 2: CUDA devices, events, pk_launch_cuda; 3: pk_launch_cuda_persistent;
                                    4: pk_cuda_sm_count; 5: pk_cuda_resident_ctas */

/* Most grid axes a kernel can have. */
#define PK_MAX_GRID 8

/* Alignment in bytes of every pk_malloc'd host buffer. */
#define PK_HOST_ALIGNMENT 64

#if defined(__GNUC__) || defined(__clang__)
#define PK_API __attribute__((visibility("default")))
#define PK_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PK_API
#define PK_PRINTF(fmt, args)
#endif

/* 16-bit floats as their bit patterns, for generated launch functions'
 * f16/bf16 parameters (generated headers repeat these under the same guard). */
#ifndef PK_F16_TYPES_DEFINED
#define PK_F16_TYPES_DEFINED
typedef uint16_t pk_f16;  /* IEEE 754 binary16, as its bits */
typedef uint16_t pk_bf16; /* bfloat16, as its bits */
#endif

/* ---- status and errors ------------------------------------------------- */

/* Result of every fallible runtime call (and of generated launch functions).
 * The values are stable: new ones are only ever appended. */
typedef enum pk_status {
	PK_SUCCESS = 0,               /* no error */
	PK_ERR_INVALID_VALUE,         /* a bad argument: NULL pointer, bad grid, unknown enum value... */
	PK_ERR_OUT_OF_MEMORY,         /* an allocation failed */
	PK_ERR_NO_DEVICE,             /* no device of the requested kind is present */
	PK_ERR_LAUNCH_FAILED,         /* a kernel could not be launched */
	PK_ERR_SIZE_CONSTRAINT,       /* a kernel's `requires` clause failed at launch */
	PK_ERR_NO_KERNEL_FOR_DEVICE,  /* the kernel was not compiled for the stream's device kind */
	PK_ERR_NOT_SUPPORTED,         /* the operation is not available in this build or on this device */
	PK_ERR_DRIVER,                /* the CUDA driver reported an error */
	PK_ERR_INTERNAL               /* a bug in the runtime or in generated code */
} pk_status;

/* A short English description ("invalid value"); never NULL. */
PK_API const char *pk_status_string(pk_status status);
/* The enumerator's name ("PK_ERR_INVALID_VALUE"); never NULL. */
PK_API const char *pk_status_name(pk_status status);

/* The detailed message of the most recent failure on the calling thread,
 * e.g. "add_vectors: requires n % 16 == 0 failed (n = 10)"; "" if there was
 * none since the thread started (or since pk_clear_error).  Successful calls
 * do not clear it.  The text stays valid until the next failure on this
 * thread; never NULL. */
PK_API const char *pk_last_error(void);

/* Records `status` with a printf-formatted message as this thread's last
 * error and returns `status`, so callers can `return pk_set_error(...)`.
 * fmt NULL: the message is pk_status_string(status).  Messages longer than
 * 1023 bytes are truncated.  status PK_SUCCESS clears the last error. */
PK_API pk_status pk_set_error(pk_status status, const char *fmt, ...) PK_PRINTF(2, 3);

/* Clears this thread's last error (pk_last_error() returns ""). */
PK_API void pk_clear_error(void);

/* ---- devices and streams ---------------------------------------------- */

typedef enum pk_device_kind {
	PK_DEVICE_HOST = 0, /* the CPU, running compiled host kernels on a thread pool */
	PK_DEVICE_CUDA = 1  /* an NVIDIA GPU, through the CUDA driver (libcuda.so.1, loaded at first use) */
} pk_device_kind;

typedef struct pk_device pk_device; /* opaque; owned by the runtime, never freed */
typedef struct pk_stream pk_stream; /* opaque; an ordered queue of work on one device */

/* Number of devices of `kind`: 1 for PK_DEVICE_HOST; for PK_DEVICE_CUDA the
 * GPUs the CUDA driver reports, 0 (and PK_SUCCESS) when there is no driver
 * (libcuda.so.1 cannot be loaded; the environment variable PK_CUDA_DRIVER may
 * name another file to load instead) or no GPU.  The driver is loaded and
 * initialised once, by the first call that needs it. */
PK_API pk_status pk_device_count(pk_device_kind kind, int *n);

/* The device `ordinal` (0-based) of `kind`.  *out is set to NULL on failure:
 * PK_ERR_NO_DEVICE if there is no device of that kind at all (for CUDA the
 * message says why: no driver, no GPU, ...), PK_ERR_INVALID_VALUE for an
 * ordinal out of range or an unknown kind.  Getting a CUDA device retains
 * its primary context (for the life of the process); the runtime makes it
 * current on each thread that calls into the runtime for that device. */
PK_API pk_status pk_device_get(pk_device_kind kind, int ordinal, pk_device **out);

/* The kind of a device.  NULL counts as the host device (the device of the
 * NULL stream). */
PK_API pk_device_kind pk_device_kind_of(const pk_device *dev);

/* A human-readable name, e.g. "host (16 threads)" or "NVIDIA H100 80GB HBM3
 * (CUDA device 0, sm_90)"; never NULL.  NULL counts as the host device. */
PK_API const char *pk_device_name(const pk_device *dev);

/* The compute capability of a CUDA device (9 and 0 for an H100).  The host
 * device (or NULL) has none: PK_ERR_NOT_SUPPORTED, and 0.0. */
PK_API pk_status pk_device_compute_capability(const pk_device *dev, int *major, int *minor);

/* Creates a stream on `dev`.  Work submitted to one stream runs in
 * submission order.  On the host device every operation completes before
 * the call that submits it returns, so host streams never have pending work.
 * A CUDA stream is asynchronous (a CUstream created with
 * CU_STREAM_NON_BLOCKING): copies, fills and launches are queued and the call
 * returns; pk_stream_synchronize waits for them. */
PK_API pk_status pk_stream_create(pk_device *dev, pk_stream **out);

/* Destroys a stream created by pk_stream_create, after waiting for its
 * work.  NULL (the default stream) is a no-op.  No other thread may use the
 * stream during or after this call.
 *
 * Destroyed handles.  Using a stream or an event after destroying it
 * (destroying it twice included) is detected on a best-effort basis: the
 * runtime keeps the memory of the last 64 handles destroyed, with their
 * magic word cleared, and every function here that returns a pk_status
 * gives PK_ERR_INVALID_VALUE for such a handle, as does a launch function
 * of generated code.  Still undefined: using a handle after 64 more have
 * been destroyed (its memory is freed), pk_stream_device on a destroyed
 * stream, a pointer that never was a handle, and a use concurrent with the
 * destroy. */
PK_API pk_status pk_stream_destroy(pk_stream *s);

/* Waits until all work submitted to `s` has finished and returns the first
 * asynchronous error it produced, if any (on CUDA a faulting kernel gives
 * PK_ERR_LAUNCH_FAILED naming the last kernel launched on the stream; such
 * errors are sticky: the device is unusable for the rest of the process).
 * NULL: the default host stream. */
PK_API pk_status pk_stream_synchronize(pk_stream *s);

/* The device a stream belongs to.  NULL: the default host stream, whose
 * device is the host device.  Never NULL. */
PK_API pk_device *pk_stream_device(const pk_stream *s);

/* The default stream of `dev`, owned by the runtime (pk_stream_destroy on it
 * is a no-op); never NULL.  Host device or NULL: the default host stream
 * (what a NULL stream argument means everywhere).  CUDA device: the legacy
 * default stream (CUstream 0) of its primary context.  A NULL stream always
 * means the host, never a GPU: pass this stream (or one of your own) to run
 * on a CUDA device. */
PK_API pk_stream *pk_stream_default(pk_device *dev);

/* ---- events (timing) ---------------------------------------------------- */

typedef struct pk_event pk_event; /* opaque; a point in a stream's work, with a timestamp */

/* Creates an event on `dev` (NULL: the host device).  *out is NULL on failure. */
PK_API pk_status pk_event_create(pk_device *dev, pk_event **out);

/* Destroys an event; NULL is a no-op (destroyed handles: see
 * pk_stream_destroy). */
PK_API pk_status pk_event_destroy(pk_event *e);

/* Records `e` in stream `s` (NULL: the default host stream), which must be on
 * the event's device: the event completes when the work submitted to `s`
 * before it has finished, and takes the time then.  On the host, where work
 * completes as it is submitted, that is the time of the call.  Recording
 * again moves the event. */
PK_API pk_status pk_event_record(pk_event *e, pk_stream *s);

/* Waits until `e` has completed (it must have been recorded). */
PK_API pk_status pk_event_synchronize(pk_event *e);

/* Milliseconds between two completed events of the same device (CUDA:
 * cuEventElapsedTime, about 0.5 us resolution).  PK_ERR_INVALID_VALUE if one
 * was never recorded or they belong to different devices. */
PK_API pk_status pk_event_elapsed_ms(const pk_event *start, const pk_event *end, double *ms);

/* ---- buffers ------------------------------------------------------------ */

typedef enum pk_memcpy_kind {
	PK_MEMCPY_HOST_TO_DEVICE = 0,  /* dst is device memory, src host memory */
	PK_MEMCPY_DEVICE_TO_HOST = 1,  /* dst is host memory, src device memory */
	PK_MEMCPY_DEVICE_TO_DEVICE = 2 /* both on the stream's device */
} pk_memcpy_kind;

/* Allocates `bytes` of memory on `dev` (host: aligned to PK_HOST_ALIGNMENT;
 * CUDA: device memory from cuMemAlloc, at least 256-byte aligned; 0 bytes
 * still yields a unique pointer).  *out is NULL on failure (CUDA:
 * PK_ERR_OUT_OF_MEMORY with the driver's message when the GPU is full). */
PK_API pk_status pk_malloc(pk_device *dev, size_t bytes, void **out);

/* Frees memory pk_malloc returned for the same device; NULL is a no-op. */
PK_API pk_status pk_free(pk_device *dev, void *ptr);

/* Copies `bytes` from src to dst, ordered on stream `s` (NULL: the default
 * host stream).  "device" means the stream's device; on the host device all
 * kinds are a plain copy, complete when the call returns.  The regions
 * should not overlap (on the host an overlapping copy behaves as memmove).
 * On a CUDA stream the copy is asynchronous: host memory it reads or writes
 * must stay valid (and, for a source, unchanged) until the stream is
 * synchronized, and a device-to-host result is there only after
 * pk_stream_synchronize.  Device pointers must come from pk_malloc on the
 * stream's device. */
PK_API pk_status pk_memcpy(pk_stream *s, void *dst, const void *src, size_t bytes, pk_memcpy_kind kind);

/* Sets `bytes` bytes of device memory at dst to (unsigned char)value,
 * ordered on stream `s` (NULL: the default host stream; CUDA:
 * cuMemsetD8Async, asynchronous). */
PK_API pk_status pk_memset(pk_stream *s, void *dst, int value, size_t bytes);

/* ---- host launch (called by generated code) -------------------------- */

/* One program of a host kernel.
 *   args:  the launch's argument struct (pk_host_launch.args), shared by all
 *          programs of the launch, which may run concurrently: read-only.
 *   pid:   pid[a] is this program's id on grid axis a;
 *   nprog: nprog[a] is the grid's extent on axis a.
 * Both arrays have PK_MAX_GRID entries; entries at and beyond the grid
 * rank hold pid 0 and nprog 1 (so a rank-0 grid sees valid arrays too).
 * They are only valid during the call. */
typedef void (*pk_host_program_fn)(void *args, const int32_t *pid, const int32_t *nprog);

typedef struct pk_host_launch {
	const char *kernel_name;    /* for error messages; may be NULL */
	pk_host_program_fn program; /* the compiled program */
	void *args;                 /* the kernel's argument struct, passed to every program */
	int ngrid;                  /* grid rank 0..PK_MAX_GRID */
	const int64_t *grid;        /* ngrid extents, each 0..INT32_MAX; may be NULL if ngrid is 0 */
	const uint8_t *parallel;    /* per axis: 1 = parallel (programs may run concurrently),
	                               0 = arbitrary (sequential); NULL: all arbitrary */
} pk_host_launch;

/* Runs every program of the grid exactly once, then returns (the launch is
 * synchronous on the host, whatever the stream).
 *   - A task is one combination of pids on the parallel axes.  Different
 *     tasks may run concurrently, on the calling thread and pool workers.
 *   - Within a task, the programs along the arbitrary axes run in increasing
 *     lexicographic order, back to back on one thread, with no other program
 *     of any launch in between (except launches a program makes itself).  So
 *     an output block revisited along an arbitrary axis works as an
 *     accumulator, and thread-local scratch carries from one program of a
 *     task to the next.  It starts with whatever the thread's previous task
 *     left there.
 *   - Writes made by the programs are visible to the caller on return.
 * A grid with an extent 0 runs nothing and succeeds.  `s` must be a host
 * stream (NULL: the default): on a stream of another device the kernel has
 * no variant for it, PK_ERR_NO_KERNEL_FOR_DEVICE (what the launch function
 * of a kernel compiled for the host only returns there).  Safe to call
 * concurrently from several threads, and from inside a program (nested
 * launches). */
PK_API pk_status pk_launch_host(pk_stream *s, const pk_host_launch *l);

/* The number of threads that execute a host launch: the calling thread
 * plus the pool's workers.  It is the number of CPUs this process may run
 * on, or the environment variable PK_NUM_THREADS (read once, at the first
 * use of the pool).  Starts the pool if it is not running yet. */
PK_API int pk_host_num_threads(void);

/* ---- CUDA launch (called by generated code) -------------------------- */

/* One image of a fat object's GPU code (compiler/GPU-DESIGN.md). */
typedef enum pk_cuda_image_kind {
	PK_CUDA_SASS = 0, /* a cubin: machine code for one compute capability */
	PK_CUDA_PTX = 1   /* PTX text, NUL-terminated (the NUL counted in size), JIT-compiled by the driver */
} pk_cuda_image_kind;

typedef struct pk_cuda_image {
	const char *arch;        /* "sm_80", "sm_90", "sm_90a" ... ("compute_XY" accepted for PTX) */
	pk_cuda_image_kind kind; /* cubin (SASS) or PTX text */
	const void *data;        /* the image */
	size_t size;             /* its bytes */
} pk_cuda_image;

typedef struct pk_cuda_module {
	const pk_cuda_image *images; /* every variant compiled into the object */
	int nimages;                 /* how many */
	void *cache;                 /* runtime-owned: the modules loaded from it, per context.
	                                Zero-initialised (static storage); never touch it */
} pk_cuda_module;

typedef struct pk_cuda_launch {
	const char *kernel_name;  /* entry name in the module, for cuModuleGetFunction and errors */
	pk_cuda_module *module;   /* the object's module table */
	uint32_t grid[3];         /* CUDA grid (any 0: nothing runs, success) */
	uint32_t block[3];        /* CUDA block: num_warps*32, 1, 1 */
	uint32_t shared_bytes;    /* dynamic shared memory bytes (above 48 KiB the runtime opts in) */
	void **params;            /* kernel parameters, cuLaunchKernel style (pointers to the values) */
} pk_cuda_launch;

/* Launches a kernel of a fat object on CUDA stream `s` (asynchronous: the
 * call returns once the launch is queued).  On first use per (module, CUDA
 * context), under a lock, the runtime picks an image for the device and
 * loads it:
 *   1. SASS for exactly the device's compute capability ("sm_90a" or
 *      "sm_90" on 9.0; the "a" one first);
 *   2. else SASS of the same major and a lower minor, newest first, except
 *      "a" (architecture-specific) images, which run on their own compute
 *      capability only (an "sm_80" cubin runs on 8.6: NVIDIA's binary
 *      compatibility rule);
 *   3. else the newest PTX not newer than the device, JIT-compiled by the
 *      driver (an "a" PTX only on its exact compute capability);
 * trying the next candidate when the driver rejects one.  None usable:
 * PK_ERR_NO_KERNEL_FOR_DEVICE naming the device's sm_XY and the images the
 * object has (with the JIT log when PTX failed to compile).  Loaded modules
 * stay loaded for the life of the process.  Kernel faults surface at the next
 * synchronization.  Errors: PK_ERR_INVALID_VALUE (`s` is not a CUDA stream,
 * bad launch), PK_ERR_LAUNCH_FAILED (the driver refused the launch, naming
 * the kernel), PK_ERR_DRIVER, PK_ERR_INTERNAL (the entry is missing). */
PK_API pk_status pk_launch_cuda(pk_stream *s, const pk_cuda_launch *l);

/* As pk_launch_cuda, for a kernel whose CTAs are persistent: CTA c runs
 * the tasks c, c + gridDim.x, ... below grid[0] (compiler/cuda/nvptx_sched.c).
 * The runtime launches min(grid[0], the CTAs the device holds at once: SMs
 * times cuOccupancyMaxActiveBlocksPerMultiprocessor for the block and its
 * shared memory, 1 an SM without that entry point; at most
 * PK_CUDA_PERSISTENT_CTAS when that is set, for tests). */
PK_API pk_status pk_launch_cuda_persistent(pk_stream *s, const pk_cuda_launch *l);

/* The number of SMs of the CUDA device stream `s` runs on; 0 when `s` is
 * not a CUDA stream (no error is set).  The launch stubs of merged programs
 * (compiler/cuda/nvptx_merge.c) ask it: they run the merged entry only on
 * grids whose fewer CTAs still fill the GPU (host/nvptx_fatobj.c). */
PK_API uint32_t pk_cuda_sm_count(pk_stream *s);

/* The CTAs of launch `l` (its kernel, block and dynamic shared memory)
 * the CUDA device of stream `s` holds at once, as pk_launch_cuda_persistent
 * counts them; 0 when `s` is not a CUDA stream or the kernel cannot be
 * loaded (the launch that follows reports why).  The stubs of wide merged
 * programs weigh the waves of both entries with it (host/nvptx_fatobj.c). */
PK_API uint32_t pk_cuda_resident_ctas(pk_stream *s, const pk_cuda_launch *l);

/* Fills `map` (PK_CUDA_TENSOR_MAP_BYTES bytes, 64-byte aligned: a
 * CUtensorMap) for the Hopper copy engine (cp.async.bulk.tensor) through
 * the driver's cuTensorMapEncodeTiled: a row-major, contiguous array of
 * `rank` (2 to PK_CUDA_TENSOR_MAP_MAX_RANK) dimensions `dims` (outermost
 * first) of elem_bytes-byte elements at device address `base`, read in
 * boxes of box_rows elements along dimension row_dim (< rank - 1), box_cols
 * along the last dimension and 1 along the others, swizzled in
 * swizzle_bytes (32, 64 or 128) lines; elements outside the array read as
 * zeros.  Launch stubs of kernels that use the copy engine call it before
 * pk_launch_cuda, for the kernel's __grid_constant__ parameters.  A
 * dimension of 0 gives a map of zeros (the kernel reads nothing through
 * it).  Errors: PK_ERR_INVALID_VALUE (base or rows not 16-byte aligned, a
 * dimension of 2^31 or more, a bad rank or box), PK_ERR_DRIVER (no driver,
 * or a driver without the entry point, or its refusal); messages name
 * `kernel_name`. */
#define PK_CUDA_TENSOR_MAP_BYTES 128
#define PK_CUDA_TENSOR_MAP_MAX_RANK 5
PK_API pk_status pk_cuda_tensor_map(void *map, const void *base, uint32_t elem_bytes, uint32_t rank,
                                    const uint64_t *dims, uint32_t row_dim, uint32_t box_rows, uint32_t box_cols,
                                    uint32_t swizzle_bytes, const char *kernel_name);
/* The rank-2 form the launch stubs of pkc before rank-N maps called: kept
 * so that their objects still link; the same as pk_cuda_tensor_map with
 * dims {rows, cols} and the rows along dimension 0. */
PK_API pk_status pk_cuda_tensor_map_2d(void *map, const void *base, uint32_t elem_bytes, uint64_t rows,
                                       uint64_t cols, uint32_t box_rows, uint32_t box_cols, uint32_t swizzle_bytes,
                                       const char *kernel_name);

/* ---- debug_print (called by generated host code) ----------------------- */

/* The dtype of a debug_print value; the numbering is pkc's (ir/dtype.h). */
typedef enum pk_debug_dtype {
	PK_DEBUG_BOOL = 1, PK_DEBUG_I8, PK_DEBUG_I16, PK_DEBUG_I32, PK_DEBUG_I64,
	PK_DEBUG_U8, PK_DEBUG_U16, PK_DEBUG_U32, PK_DEBUG_U64,
	PK_DEBUG_F16, PK_DEBUG_BF16, PK_DEBUG_F32, PK_DEBUG_F64
} pk_debug_dtype;

/* One value of a debug_print: `rank` 0 is a scalar, otherwise a block of
 * `shape`, row-major and contiguous.  Elements are in the form generated
 * code computes with: bool one byte 0 or 1, integers in their width, f16 and
 * bf16 as float (holding a value of that dtype), f32 float, f64 double. */
typedef struct pk_debug_value {
	int32_t dtype;        /* a pk_debug_dtype */
	int32_t rank;         /* 0: a scalar */
	const int64_t *shape; /* rank extents (NULL for a scalar) */
	const void *data;     /* the element(s) */
} pk_debug_value;

/* Prints `fmt` with its i-th "{}" replaced by values[i], and a newline, to
 * stdout as one write (lines of concurrent programs do not mix): scalars as
 * C's %g (floats), decimal (integers), 1/0 (bool); blocks as NumPy's str()
 * of the array, which is what Pallas interpret mode prints (lang-spec
 * §7.19).  Never fails: a value it cannot format prints as "?". */
PK_API void pk_debug_print(const char *fmt, int32_t n, const pk_debug_value *values);

#ifdef __cplusplus
}
#endif

#endif /* PK_RUNTIME_H */
