/* gpu.h - the CUDA back end (cuda/GPU-DESIGN.md): the GPU targets of
 * --target=, the NVPTX code generator (codegen_nvptx.c and its private
 * nvptx_*.c, layouts in gpu_layout.c) and what it hands to the host back end
 * for the fat object (the images and, per kernel, the launch geometry).
 *
 * The generator reads the IR after lower-refs (tensors still whole), so the
 * driver runs it before tile-host rewrites the body for the host. */
#ifndef PKC_GPU_H
#define PKC_GPU_H

#include "ir.h"

/* One GPU target of --target=. */
typedef struct GpuTarget {
	const char *name;    /* "sm_90a": the --target spelling, LLVM's CPU and ptxas -arch */
	int sm;              /* compute capability times ten: 80, 86, 89, 90 */
	bool arch_specific;  /* an "a" target (sm_90a): its code runs on exactly that capability */
	const char *ptx;     /* LLVM feature choosing the PTX ISA version ("+ptx70") */
} GpuTarget;

/* The target named `name` ("sm_80" ...), or NULL. */
const GpuTarget *gpu_target_find(const char *name);
/* "sm_80, sm_86, sm_89, sm_90, sm_90a": for diagnostics (static string). */
const char *gpu_target_list(void);

/* What codegen_nvptx produces. */
typedef enum GpuEmit {
	GPU_EMIT_IMAGES, /* per target a cubin (PTX without ptxas) and the PTX of the newest */
	GPU_EMIT_PTX,    /* the PTX text of the (single) target only; ptxas does not run */
	GPU_EMIT_CUBIN,  /* the cubin of the (single) target only (ptxas is required) */
	GPU_EMIT_NVVM    /* the optimised NVVM IR (LLVM text) of the (single) target only */
} GpuEmit;

typedef struct GpuOptions {
	const GpuTarget **targets; /* the GPU targets, in --target order */
	int ntargets;
	int opt_level;             /* -O0..3: LLVM's pipeline and ptxas -O */
	const char *ptxas;         /* --ptxas=PATH; NULL: PATH, then /usr/local/cuda/bin/ptxas */
	bool resource_usage;       /* --resource-usage: ptxas -v, a note per kernel and target */
	GpuEmit emit;              /* what to produce */
	bool mma_sync;             /* --gpu-mma-sync: no Hopper wgmma (by default the dots that fit use it
	                              when every target is sm_90a) */
	bool no_tma;               /* --gpu-no-tma: wgmma pipelines copy with cp.async, not the copy engine */
	bool no_persistent;        /* --gpu-no-persistent: one CTA per task for tensor-core kernels on sm_90 */
	bool no_reblock;           /* --gpu-no-reblock: K loops keep their BK (nvptx_reblock.c) */
	bool no_cluster;           /* --gpu-no-cluster: no 2-CTA clusters sharing operand tiles (nvptx_pipe.c) */
	bool no_pingpong;          /* --gpu-no-pingpong: the warpgroups of chained dots run in step (nvptx_pipe.c) */
	bool pingpong;             /* --gpu-pingpong: they run apart whatever the ptxas */
	bool no_early;             /* --gpu-no-early-copies: each dot copies its own operands (nvptx_dot.c) */
	bool no_ahead;             /* --gpu-no-copies-ahead: a loop's first dot copies its operands when it
	                              runs, not one iteration ahead (nvptx_dot.c) */
	bool no_few_trips;         /* --gpu-no-few-trips: no few-trips variants (nvptx_sched.c) */
	bool no_kgrid_loop;        /* --gpu-no-kgrid-loop: an arbitrary grid axis stays a loop around the
	                              body (nvptx_kgrid.c) */
	bool no_merge_blocks;      /* --gpu-no-merge-blocks: no merged variants (nvptx_merge.c) */
} GpuOptions;

typedef enum GpuImageKind { GPU_IMAGE_SASS, GPU_IMAGE_PTX } GpuImageKind;

/* One image of the module (malloc'd bytes; PTX is NUL-terminated, and the
 * terminator is counted in size so the driver can take the text as is). */
typedef struct PtxasRun PtxasRun;
typedef struct GpuWorker GpuWorker;
typedef struct GpuImage {
	const GpuTarget *target; /* the target it was compiled for */
	GpuImageKind kind;       /* cubin or PTX */
	char *data;              /* the bytes (NULL while pending) */
	size_t size;             /* how many */
	PtxasRun *pending;       /* a cubin ptxas is still assembling (gpu_output_wait) */
} GpuImage;

/* Size symbols a kernel's aligned variant assumes to be multiples of (as
 * Triton's divisibility specialisation). */
#define GPU_ALIGNED_DIV 16

/* A tensor map the launch stub makes for a kernel that reads tiles with the
 * Hopper copy engine (nvptx_tma.c; pk_cuda_tensor_map): operand `operand`
 * (row-major, of `rank` dimensions) in boxes of box_rows along dimension
 * `row`, box_cols along the last and 1 along the others (the ones the
 * kernel indexes with scalars), lines swizzled in `swizzle` bytes.  The
 * maps follow the grid extents among the entry's parameters, as
 * __grid_constant__ 128-byte structs. */
typedef struct GpuTma {
	int operand;             /* the kernel's operand */
	int es;                  /* bytes per element */
	uint32_t box_rows, box_cols;
	int swizzle;             /* 32, 64 or 128 */
	int rank;                /* the operand's dimensions, 2 to NV_TMA_MAX_RANK */
	int row;                 /* the dimension of the box's rows (< rank - 1) */
} GpuTma;

/* How the launch stub launches one kernel (the same for every image). */
typedef struct GpuKernel {
	const char *name;        /* the entry's name: the kernel's */
	int threads;             /* CTA size: num_warps * 32, or what pkc chose (nvptx_sched.c) */
	uint32_t dynamic_smem;   /* dynamic shared memory bytes (0: static shared memory only) */
	const struct GpuKernel *aligned; /* the variant the stub launches when the size symbols of
	                                    aligned_sizes are multiples of GPU_ALIGNED_DIV, or NULL */
	uint64_t aligned_sizes;  /* bit s: size symbol s */
	const struct GpuKernel *few_trips; /* the variant for a K loop of few iterations (nvptx_sched.c,
	                                      nv_sched_few_trips) that the stub launches when size symbol
	                                      few_size is at most few_most, or NULL */
	int few_size;
	int64_t few_most;
	const struct GpuKernel *merged; /* the variant running merged programs (nvptx_merge.c) that the
	                                   stub launches when merge[d] divides every grid extent d, or NULL */
	const int *merge;        /* in a merged variant: programs of each grid axis a CTA runs (1: one) */
	bool merge_waves;        /* in a merged variant of 128 x 128 blocks: the stub launches it only
	                            where its waves are no more work than the plain entry's */
	const GpuTma *tma;       /* the tensor maps it takes (after the grid extents) */
	int ntma;
	bool persistent;         /* each CTA loops over the tasks (blockIdx.x, + gridDim.x, ...): the stub
	                            launches it with pk_launch_cuda_persistent */
} GpuKernel;

/* Everything codegen_nvptx produced; free with gpu_output_free. */
typedef struct GpuOutput {
	GpuImage *images;        /* GPU_EMIT_IMAGES: the images, in target order, PTX last */
	int nimages;
	GpuKernel *kernels;      /* one per kernel of the module, in module order */
	int nkernels;
	char *text;              /* GPU_EMIT_PTX/CUBIN/NVVM: the output bytes (malloc'd) */
	size_t text_size;
	GpuWorker *worker;       /* the thread still making the images (LLVM, then ptxas), or NULL */
} GpuOutput;

/* Also ends the ptxas runs still under way (their output unused). */
void gpu_output_free(GpuOutput *out);
/* Waits for the images still under way (codegen_nvptx returns with a
 * thread running LLVM's passes and PTX generation for the targets and
 * starting their ptxas, so that the host back end works meanwhile), then
 * for the cubins ptxas is still assembling: false after an error (ptxas
 * failed), reported. */
bool gpu_output_wait(Compiler *cc, GpuOutput *out);

/* Compiles every kernel of m (after lower-refs, before tile-host) for every
 * target of opt.  Constructs the GPU back end does not implement are
 * reported with error_at ("... is not supported yet by --target=sm_XX [§10.4]");
 * LLVM failures are internal errors.  Returns false after an error. */
bool codegen_nvptx(Compiler *cc, const IrModule *m, const GpuOptions *opt, GpuOutput *out);

#endif
