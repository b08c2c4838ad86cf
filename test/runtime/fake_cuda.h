/* fake_cuda.h - the test-only interface of the fake CUDA driver
 * (fake_cuda.c, built as libcuda.so.1 in a directory of its own and found
 * through LD_LIBRARY_PATH).  cuda_fake_test.c looks these functions up
 * with dlsym in the driver the runtime loaded.
 *
 * Configuration (environment, read by cuInit):
 *   FAKE_CUDA_CC=90,86,103   one GPU per entry, its compute capability times
 *                            ten (default "90"; empty: no GPU)
 *   FAKE_CUDA_INIT_ERROR=N   cuInit returns CUresult N
 *   FAKE_CUDA_MEM_LIMIT=N    cuMemAlloc of more than N bytes fails with
 *                            CUDA_ERROR_OUT_OF_MEMORY (default 1 GiB)
 *
 * Images (pk_cuda_image.data) are text: "FAKE-OK kernels: a b c" loads and
 * has entries a, b, c; "FAKE-BADPTX ..." fails with CUDA_ERROR_INVALID_PTX and
 * a JIT log; "FAKE-NOBIN ..." fails with CUDA_ERROR_NO_BINARY_FOR_GPU.
 * Kernels are run at launch, synchronously: "store_i32" (params: device
 * pointer, int32 value, int64 n) fills n int32s; "fail_launch" fails with
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; any other does nothing.  Every call
 * that needs a context fails with CUDA_ERROR_INVALID_CONTEXT when none is
 * current on the calling thread, and a launch of a function of another
 * context fails likewise.
 *
 * Linked with test/gpu-emu/emu_cta.c (test/gpu-emu/exec.py builds it so),
 * the devices are named "Emulated GPU N", any other image loads, and its
 * kernels are the programs' emulated kernels pk_emu_<name>, run at launch. */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

/* cuTensorMapEncodeTiled writes 64-bit words into the map: the magic,
 * the dtype, the base, the rank, then from
 * FAKE_TMAP_DIMS the dimensions (innermost first), from FAKE_TMAP_STRIDES
 * the byte strides of dimensions 1 up, at FAKE_TMAP_BOX the box (12 bits a
 * dimension, innermost lowest) and at FAKE_TMAP_MODES swizzle | L2
 * promotion << 8 | out-of-bounds fill << 16. */
#define FAKE_TMAP_MAGIC 0x70616d74656b6166ull /* "faketmap" */
#define FAKE_TMAP_DIMS 4
#define FAKE_TMAP_STRIDES 9
#define FAKE_TMAP_BOX 13
#define FAKE_TMAP_MODES 14
#define FAKE_TMAP_WORDS 15

typedef struct fake_cuda_stats {
	int inits;           /* successful cuInit calls */
	int retains;         /* cuDevicePrimaryCtxRetain calls */
	int module_loads;    /* successful cuModuleLoadDataEx calls */
	int load_failures;   /* failed cuModuleLoadDataEx calls */
	int get_functions;   /* successful cuModuleGetFunction calls */
	int set_attributes;  /* cuFuncSetAttribute calls */
	int last_attribute;  /* the value of the last one */
	int launches;        /* successful cuLaunchKernel calls */
	int live_allocations; /* cuMemAlloc'd blocks not freed yet */
	int live_streams;    /* streams created and not destroyed */
	int live_events;     /* events created and not destroyed */
	const void *last_image; /* data of the last image loaded */
	unsigned last_grid[3], last_block[3], last_shared; /* of the last launch */
} fake_cuda_stats;

typedef void (*fake_cuda_stats_fn)(fake_cuda_stats *out);
/* fake_cuda_set_sync_error(N): cuStreamSynchronize and cuEventSynchronize
 * return CUresult N from now on (0: success again). */
typedef void (*fake_cuda_set_sync_error_fn)(int code);

#endif
