/* cuda_abi_check.c - runtime/cuda_driver.h must agree with the CUDA
 * toolkit's <cuda.h>: every constant, handle size and entry-point signature
 * the runtime uses.  Compile-only (cc -c -I<cuda>/include); runtime.mk
 * builds it when <cuda.h> is installed.  The assignments of the real
 * entry points to the runtime's function pointer types fail to compile
 * (-Werror) if a signature differs. */
#include <cuda.h>

#include "../../runtime/cuda_driver.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)

SAME(PKCU_SUCCESS, CUDA_SUCCESS);
SAME(PKCU_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
SAME(PKCU_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME(PKCU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
SAME(PKCU_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY);
SAME(PKCU_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME(PKCU_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
SAME(PKCU_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE);
SAME(PKCU_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT);
SAME(PKCU_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NO_BINARY_FOR_GPU);
SAME(PKCU_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX);
SAME(PKCU_ERROR_JIT_COMPILER_NOT_FOUND, CUDA_ERROR_JIT_COMPILER_NOT_FOUND);
SAME(PKCU_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
SAME(PKCU_ERROR_JIT_COMPILATION_DISABLED, CUDA_ERROR_JIT_COMPILATION_DISABLED);
SAME(PKCU_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE);
SAME(PKCU_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
SAME(PKCU_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
SAME(PKCU_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS);
SAME(PKCU_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
SAME(PKCU_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
SAME(PKCU_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
SAME(PKCU_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN);
SAME(PKCU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME(PKCU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
SAME(PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME(PKCU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME(PKCU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SAME(PKCU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SAME(PKCU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
SAME(PKCU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER);
SAME(PKCU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
SAME(PKCU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER);
SAME(PKCU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
SAME(PKCU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
SAME(PKCU_EVENT_DEFAULT, CU_EVENT_DEFAULT);
SAME(PKCU_TENSOR_MAP_DATA_TYPE_UINT8, CU_TENSOR_MAP_DATA_TYPE_UINT8);
SAME(PKCU_TENSOR_MAP_DATA_TYPE_UINT16, CU_TENSOR_MAP_DATA_TYPE_UINT16);
SAME(PKCU_TENSOR_MAP_DATA_TYPE_UINT32, CU_TENSOR_MAP_DATA_TYPE_UINT32);
SAME(PKCU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE);
SAME(PKCU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_32B);
SAME(PKCU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_64B);
SAME(PKCU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B);
SAME(PKCU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
SAME(PKCU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
_Static_assert(PKCU_TENSOR_MAP_BYTES == sizeof(CUtensorMap), "CUtensorMap");
_Static_assert(sizeof(pkcu_result) == sizeof(CUresult), "CUresult");
_Static_assert(sizeof(pkcu_device) == sizeof(CUdevice), "CUdevice");
_Static_assert(sizeof(pkcu_deviceptr) == sizeof(CUdeviceptr), "CUdeviceptr");
_Static_assert(sizeof(int) == sizeof(CUjit_option), "CUjit_option");
_Static_assert(sizeof(int) == sizeof(CUdevice_attribute), "CUdevice_attribute");
_Static_assert(sizeof(int) == sizeof(CUfunction_attribute), "CUfunction_attribute");
/* pkcu_launch_config is CUlaunchConfig, field by field. */
#include <stddef.h>
_Static_assert(sizeof(pkcu_launch_config) == sizeof(CUlaunchConfig), "CUlaunchConfig");
SAME(offsetof(pkcu_launch_config, grid), offsetof(CUlaunchConfig, gridDimX));
SAME(offsetof(pkcu_launch_config, block), offsetof(CUlaunchConfig, blockDimX));
SAME(offsetof(pkcu_launch_config, shared_bytes), offsetof(CUlaunchConfig, sharedMemBytes));
SAME(offsetof(pkcu_launch_config, stream), offsetof(CUlaunchConfig, hStream));
SAME(offsetof(pkcu_launch_config, attrs), offsetof(CUlaunchConfig, attrs));
SAME(offsetof(pkcu_launch_config, nattrs), offsetof(CUlaunchConfig, numAttrs));

/* The signatures, modulo the handle types (same representation): the
 * <cuda.h> prototypes as the runtime's types with the handles renamed. */
#define CHECK_SIG(ours, real, ...) typedef CUresult (*ours##_real)(__VA_ARGS__); \
	static ours##_real ours##_check = real;
CHECK_SIG(init, cuInit, unsigned int)
CHECK_SIG(gen, cuGetErrorName, CUresult, const char **)
CHECK_SIG(ges, cuGetErrorString, CUresult, const char **)
CHECK_SIG(dgc, cuDeviceGetCount, int *)
CHECK_SIG(dg, cuDeviceGet, CUdevice *, int)
CHECK_SIG(dgn, cuDeviceGetName, char *, int, CUdevice)
CHECK_SIG(dga, cuDeviceGetAttribute, int *, CUdevice_attribute, CUdevice)
CHECK_SIG(pcr, cuDevicePrimaryCtxRetain, CUcontext *, CUdevice)
CHECK_SIG(cgc, cuCtxGetCurrent, CUcontext *)
CHECK_SIG(csc, cuCtxSetCurrent, CUcontext)
CHECK_SIG(sc, cuStreamCreate, CUstream *, unsigned int)
CHECK_SIG(sd, cuStreamDestroy_v2, CUstream)
CHECK_SIG(ss, cuStreamSynchronize, CUstream)
CHECK_SIG(ec, cuEventCreate, CUevent *, unsigned int)
CHECK_SIG(ed, cuEventDestroy_v2, CUevent)
CHECK_SIG(er, cuEventRecord, CUevent, CUstream)
CHECK_SIG(es, cuEventSynchronize, CUevent)
CHECK_SIG(eet, cuEventElapsedTime_v2, float *, CUevent, CUevent)
CHECK_SIG(ma, cuMemAlloc_v2, CUdeviceptr *, size_t)
CHECK_SIG(mf, cuMemFree_v2, CUdeviceptr)
CHECK_SIG(h2d, cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, size_t, CUstream)
CHECK_SIG(d2h, cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t, CUstream)
CHECK_SIG(d2d, cuMemcpyDtoDAsync_v2, CUdeviceptr, CUdeviceptr, size_t, CUstream)
CHECK_SIG(ms8, cuMemsetD8Async, CUdeviceptr, unsigned char, size_t, CUstream)
CHECK_SIG(mld, cuModuleLoadDataEx, CUmodule *, const void *, unsigned int, CUjit_option *, void **)
CHECK_SIG(mgf, cuModuleGetFunction, CUfunction *, CUmodule, const char *)
CHECK_SIG(fsa, cuFuncSetAttribute, CUfunction, CUfunction_attribute, int)
CHECK_SIG(tme, cuTensorMapEncodeTiled, CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
          const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
          CUtensorMapL2promotion, CUtensorMapFloatOOBfill)
CHECK_SIG(fga, cuFuncGetAttribute, int *, CUfunction_attribute, CUfunction)
CHECK_SIG(omac, cuOccupancyMaxActiveClusters, int *, CUfunction, const CUlaunchConfig *)
CHECK_SIG(lk, cuLaunchKernel, CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
          unsigned int, unsigned int, CUstream, void **, void **)

/* Keeps the checks referenced. */
void *cuda_abi_check_refs[] = {
	&init_check, &gen_check, &ges_check, &dgc_check, &dg_check, &dgn_check, &dga_check, &pcr_check, &cgc_check,
	&csc_check, &sc_check, &sd_check, &ss_check, &ec_check, &ed_check, &er_check, &es_check, &eet_check,
	&ma_check, &mf_check, &h2d_check, &d2h_check, &d2d_check, &ms8_check, &mld_check, &mgf_check, &fsa_check,
	&lk_check, &tme_check, &fga_check, &omac_check,
};
