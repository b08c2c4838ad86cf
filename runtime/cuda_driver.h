/* cuda_driver.h - the few CUDA driver API types, constants and entry-point
 * signatures that runtime/cuda.c uses; not installed.
 *
 * The runtime never includes <cuda.h> or links libcuda: it dlopens
 * libcuda.so.1 at first use and looks the entry points below up by name,
 * so programs build and run on machines without CUDA.  The names are
 * prefixed (pkcu_*, PKCU_*) so this header can sit next to <cuda.h> in one
 * translation unit; test/runtime/cuda_abi_check.c checks every value against
 * <cuda.h> when the toolkit is installed.  The fake driver of the tests
 * (test/runtime/fake_cuda.c) implements the same entry points from here. */
#ifndef PKRT_CUDA_DRIVER_H
#define PKRT_CUDA_DRIVER_H

#include <stddef.h>

/* Handles, as in <cuda.h> (opaque pointers, a plain int device, 64-bit
 * device addresses). */
typedef int pkcu_result;                   /* CUresult */
typedef int pkcu_device;                   /* CUdevice */
typedef unsigned long long pkcu_deviceptr; /* CUdeviceptr (CUdeviceptr_v2) */
typedef struct pkcu_ctx_st *pkcu_context;  /* CUcontext */
typedef struct pkcu_mod_st *pkcu_module;   /* CUmodule */
typedef struct pkcu_func_st *pkcu_function; /* CUfunction */
typedef struct pkcu_stream_st *pkcu_stream; /* CUstream (NULL: the legacy default stream) */
typedef struct pkcu_event_st *pkcu_event;  /* CUevent */

/* CUresult values the runtime distinguishes (any other is passed through). */
enum {
	PKCU_SUCCESS = 0,                          /* CUDA_SUCCESS */
	PKCU_ERROR_INVALID_VALUE = 1,              /* CUDA_ERROR_INVALID_VALUE */
	PKCU_ERROR_OUT_OF_MEMORY = 2,              /* CUDA_ERROR_OUT_OF_MEMORY */
	PKCU_ERROR_NOT_INITIALIZED = 3,            /* CUDA_ERROR_NOT_INITIALIZED */
	PKCU_ERROR_STUB_LIBRARY = 34,              /* CUDA_ERROR_STUB_LIBRARY */
	PKCU_ERROR_NO_DEVICE = 100,                /* CUDA_ERROR_NO_DEVICE */
	PKCU_ERROR_INVALID_DEVICE = 101,           /* CUDA_ERROR_INVALID_DEVICE */
	PKCU_ERROR_INVALID_IMAGE = 200,            /* CUDA_ERROR_INVALID_IMAGE */
	PKCU_ERROR_INVALID_CONTEXT = 201,          /* CUDA_ERROR_INVALID_CONTEXT */
	PKCU_ERROR_NO_BINARY_FOR_GPU = 209,        /* CUDA_ERROR_NO_BINARY_FOR_GPU */
	PKCU_ERROR_INVALID_PTX = 218,              /* CUDA_ERROR_INVALID_PTX */
	PKCU_ERROR_JIT_COMPILER_NOT_FOUND = 221,   /* CUDA_ERROR_JIT_COMPILER_NOT_FOUND */
	PKCU_ERROR_UNSUPPORTED_PTX_VERSION = 222,  /* CUDA_ERROR_UNSUPPORTED_PTX_VERSION */
	PKCU_ERROR_JIT_COMPILATION_DISABLED = 223, /* CUDA_ERROR_JIT_COMPILATION_DISABLED */
	PKCU_ERROR_INVALID_HANDLE = 400,           /* CUDA_ERROR_INVALID_HANDLE */
	PKCU_ERROR_NOT_FOUND = 500,                /* CUDA_ERROR_NOT_FOUND */
	PKCU_ERROR_NOT_READY = 600,                /* CUDA_ERROR_NOT_READY */
	PKCU_ERROR_ILLEGAL_ADDRESS = 700,          /* CUDA_ERROR_ILLEGAL_ADDRESS: first of the kernel-fault range */
	PKCU_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,  /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */
	PKCU_ERROR_LAUNCH_FAILED = 719,            /* CUDA_ERROR_LAUNCH_FAILED */
	PKCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720, /* CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: last of the range */
	PKCU_ERROR_UNKNOWN = 999                   /* CUDA_ERROR_UNKNOWN */
};

/* CUdevice_attribute values. */
enum {
	PKCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,              /* SMs */
	PKCU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,                     /* bytes */
	PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,          /* e.g. 9 */
	PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,          /* e.g. 0 */
	PKCU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97  /* bytes a CTA may opt into */
};

/* CUfunction_attribute: a function's dynamic shared memory limit (set); its cluster width (read). */
enum { PKCU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8, PKCU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11 };

/* CUjit_option values for cuModuleLoadDataEx. */
enum {
	PKCU_JIT_INFO_LOG_BUFFER = 3,             /* char * */
	PKCU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,  /* unsigned int, passed as the pointer's value */
	PKCU_JIT_ERROR_LOG_BUFFER = 5,            /* char * */
	PKCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6  /* unsigned int, passed as the pointer's value */
};

/* Flags. */
enum {
	PKCU_STREAM_NON_BLOCKING = 0x1, /* CU_STREAM_NON_BLOCKING: no implicit sync with stream 0 */
	PKCU_EVENT_DEFAULT = 0x0        /* CU_EVENT_DEFAULT: timing enabled, spin-wait */
};

/* cuTensorMapEncodeTiled's enums (CUtensorMapDataType, ...Interleave,
 * ...Swizzle, ...L2promotion, ...FloatOOBfill): the values the runtime uses. */
enum {
	PKCU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
	PKCU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
	PKCU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
	PKCU_TENSOR_MAP_INTERLEAVE_NONE = 0,
	PKCU_TENSOR_MAP_SWIZZLE_32B = 1,
	PKCU_TENSOR_MAP_SWIZZLE_64B = 2,
	PKCU_TENSOR_MAP_SWIZZLE_128B = 3,
	PKCU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
	PKCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 /* out-of-bounds elements read as zeros */
};

/* CUtensorMap: 128 opaque bytes, 64-byte aligned. */
#define PKCU_TENSOR_MAP_BYTES 128

/* Bytes of dynamic shared memory a function may use without opting in. */
#define PKCU_DEFAULT_DYNAMIC_SHARED 49152u

/* Entry-point signatures (CUDAAPI is empty on Linux). */
typedef pkcu_result (*pkcu_init_fn)(unsigned int flags);
typedef pkcu_result (*pkcu_driver_get_version_fn)(int *version);
typedef pkcu_result (*pkcu_get_error_name_fn)(pkcu_result error, const char **str);
typedef pkcu_result (*pkcu_get_error_string_fn)(pkcu_result error, const char **str);
typedef pkcu_result (*pkcu_device_get_count_fn)(int *count);
typedef pkcu_result (*pkcu_device_get_fn)(pkcu_device *device, int ordinal);
typedef pkcu_result (*pkcu_device_get_name_fn)(char *name, int len, pkcu_device dev);
typedef pkcu_result (*pkcu_device_get_attribute_fn)(int *value, int attrib, pkcu_device dev);
typedef pkcu_result (*pkcu_device_primary_ctx_retain_fn)(pkcu_context *ctx, pkcu_device dev);
typedef pkcu_result (*pkcu_ctx_get_current_fn)(pkcu_context *ctx);
typedef pkcu_result (*pkcu_ctx_set_current_fn)(pkcu_context ctx);
typedef pkcu_result (*pkcu_stream_create_fn)(pkcu_stream *stream, unsigned int flags);
typedef pkcu_result (*pkcu_stream_destroy_fn)(pkcu_stream stream);
typedef pkcu_result (*pkcu_stream_synchronize_fn)(pkcu_stream stream);
typedef pkcu_result (*pkcu_event_create_fn)(pkcu_event *event, unsigned int flags);
typedef pkcu_result (*pkcu_event_destroy_fn)(pkcu_event event);
typedef pkcu_result (*pkcu_event_record_fn)(pkcu_event event, pkcu_stream stream);
typedef pkcu_result (*pkcu_event_synchronize_fn)(pkcu_event event);
typedef pkcu_result (*pkcu_event_elapsed_time_fn)(float *ms, pkcu_event start, pkcu_event end);
typedef pkcu_result (*pkcu_mem_alloc_fn)(pkcu_deviceptr *dptr, size_t bytes);
typedef pkcu_result (*pkcu_mem_free_fn)(pkcu_deviceptr dptr);
typedef pkcu_result (*pkcu_memcpy_htod_async_fn)(pkcu_deviceptr dst, const void *src, size_t bytes,
                                                 pkcu_stream stream);
typedef pkcu_result (*pkcu_memcpy_dtoh_async_fn)(void *dst, pkcu_deviceptr src, size_t bytes, pkcu_stream stream);
typedef pkcu_result (*pkcu_memcpy_dtod_async_fn)(pkcu_deviceptr dst, pkcu_deviceptr src, size_t bytes,
                                                 pkcu_stream stream);
typedef pkcu_result (*pkcu_memset_d8_async_fn)(pkcu_deviceptr dst, unsigned char value, size_t n,
                                               pkcu_stream stream);
typedef pkcu_result (*pkcu_module_load_data_ex_fn)(pkcu_module *module, const void *image, unsigned int nopts,
                                                   int *options, void **values);
typedef pkcu_result (*pkcu_module_get_function_fn)(pkcu_function *fn, pkcu_module module, const char *name);
typedef pkcu_result (*pkcu_func_set_attribute_fn)(pkcu_function fn, int attrib, int value);
typedef pkcu_result (*pkcu_launch_kernel_fn)(pkcu_function fn, unsigned int gx, unsigned int gy, unsigned int gz,
                                             unsigned int bx, unsigned int by, unsigned int bz,
                                             unsigned int shared_bytes, pkcu_stream stream, void **params,
                                             void **extra);
/* Optional (CUDA 12 drivers on): a missing one fails only its callers. */
typedef pkcu_result (*pkcu_occupancy_max_active_blocks_fn)(int *blocks, pkcu_function fn, int block_size,
                                                           size_t dynamic_shared);
typedef pkcu_result (*pkcu_func_get_attribute_fn)(int *value, int attrib, pkcu_function fn);
/* CUlaunchConfig (cuda.h), for cuOccupancyMaxActiveClusters. */
typedef struct pkcu_launch_config {
	unsigned int grid[3], block[3], shared_bytes;
	pkcu_stream stream;
	void *attrs;
	unsigned int nattrs;
} pkcu_launch_config;
typedef pkcu_result (*pkcu_occupancy_max_active_clusters_fn)(int *clusters, pkcu_function fn,
                                                             const pkcu_launch_config *config);
typedef pkcu_result (*pkcu_tensor_map_encode_tiled_fn)(void *map, int dtype, unsigned int rank, void *base,
                                                       const unsigned long long *dims,
                                                       const unsigned long long *strides, const unsigned int *box,
                                                       const unsigned int *elem_strides, int interleave, int swizzle,
                                                       int l2_promotion, int oob_fill);

#endif
