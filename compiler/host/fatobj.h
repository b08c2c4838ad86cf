/* fatobj.h - private to the host back end: the CUDA part of the host object
 * (nvptx_fatobj.c), which codegen_llvm_host.c builds into its module when
 * --target= names GPU targets. */
#ifndef PKC_FATOBJ_H
#define PKC_FATOBJ_H

#include "gpu.h"
#include "llvm_util.h"

struct GpuOutput;
struct GpuKernel;
/* Embeds the GPU images and their pk_cuda_module table; returns the
 * module (a pointer).  A cubin still under way gets a stand-in, which
 * cg_cuda_images replaces once it is there. */
LLVMValueRef cg_cuda_module(Cg *g, const struct GpuOutput *gpu);
/* Puts the cubins that had stand-ins into the module, the globals in the
 * order cg_cuda_module would have made them with every cubin at hand, so
 * that the object is the same byte for byte. */
void cg_cuda_images(Cg *g, const struct GpuOutput *gpu);
/* Puts the cubins that had stand-ins into the object out that the module
 * gave (its code was generated while ptxas ran), byte for byte the object
 * cg_cuda_images would have given; false where the object is not laid out
 * as LLVM's ELF writer does (out unchanged: then cg_cuda_images and code
 * generation once more). */
bool cg_cuda_splice(Cg *g, const struct GpuOutput *gpu, CodegenOutput *out);
/* In launch function of k (stream, params in launch order, grid: the
 * [ngrid x i64] extents or NULL): launches on a CUDA stream and returns;
 * on other devices goes on (host_variant) or returns
 * PK_ERR_NO_KERNEL_FOR_DEVICE. */
void cg_cuda_dispatch(Cg *g, const IrKernel *k, const struct GpuKernel *gk, LLVMValueRef module,
                      LLVMValueRef stream, LLVMValueRef *param, LLVMValueRef grid, bool host_variant);

#endif
