/* nvptx.h - private to the CUDA back end (codegen_nvptx.c, nvptx_*.c,
 * gpu_layout.c): layouts, the per-kernel emission state and the helpers
 * that turn the tensor IR (after lower-refs) into NVVM IR.
 *
 * Layouts.  Every tensor value of a kernel is spread over the CTA's
 * threads: each thread holds some of its elements in registers.  A layout
 * says which, as a map of bits ("linear layouts" restricted to single bits):
 * the padded tensor (every extent rounded up to a power of two) has a
 * row-major flat index of nbits bits, and each of those bits is one bit of
 * the register index, of the lane (0..4) or of the warp index.  So
 *
 *     flat(reg r, lane l, warp w) = OR over bits b of  bit(source of b) << b
 *
 * Lane and warp bits that no flat bit uses replicate the tensor (those
 * threads hold the same elements); every element is held at least once, and
 * a thread holds each of its elements exactly once (1 << nregbits
 * registers).  Blocked, slice (reduction results), broadcast, transposed,
 * reshaped and MMA fragment layouts are all of this form, so most layout
 * changes are relabellings, and every other change goes through shared
 * memory.  Elements whose coordinate is past the real extent (padding) are
 * never loaded, stored or reduced. */
#ifndef PKC_NVPTX_H
#define PKC_NVPTX_H

#include "gpu.h"
#include "llvm_util.h"

/* A tensor may take at most 2^NV_MAX_REG_BITS registers per thread
 * (§10.2): its per-element code is unrolled. */
#define NV_MAX_REG_BITS 12

/* ---- layouts (gpu_layout.c) ------------------------------------------------ */

enum { LB_REG, LB_LANE, LB_WARP }; /* sources of a flat-index bit */

typedef struct GpuLayout {
	int rank;          /* tensor rank (>= 1) */
	int64_t *dims;     /* real extents */
	int *dbits;        /* per dim: bits of its padded extent (ceil log2) */
	int *dlo;          /* per dim: its lowest flat bit (the last dim's is 0) */
	int nbits;         /* flat-index bits: the sum of dbits */
	uint8_t *kind;     /* per flat bit: LB_REG, LB_LANE or LB_WARP */
	uint8_t *idx;      /* per flat bit: which register, lane or warp bit */
	int nregbits;      /* register-index bits: a thread holds 1 << nregbits elements */
	int *regflat;      /* per register bit: the flat bit it sets */
	unsigned lane_used;/* lane bits that select elements (the others replicate) */
	unsigned warp_used;/* warp bits that select elements */
	int warpbits;      /* log2 of the CTA's warps */
	int id;            /* index in the kernel's intern table (equal layouts: equal ids) */
} GpuLayout;

/* The interned layouts of one kernel: equal layouts are one pointer. */
typedef struct LayoutCtx {
	Arena *a;          /* where layouts live */
	Vec all;           /* GpuLayout*, interned */
	int warpbits;      /* log2(num_warps) of the kernel */
} LayoutCtx;

int lay_log2_ceil(int64_t x);
/* log2 of the elements of a tensor value of type t that each thread of a
 * CTA of 2^warpbits warps holds when spread over all of them, each dim
 * rounded up to a power of two (§10.2's count). */
int lay_thread_bits(const Type *t, int warpbits);
/* Whether x is a power of two (an extent without padding). */
bool lay_pow2(int64_t x);
/* Row-major blocked layout: the lowest flat bits (at most the last dim's)
 * are `vec` consecutive registers (fewer when the tensor is too small to
 * give every thread a vector), the next five the lanes, the highest ones
 * the warps, and the bits between them more registers. */
const GpuLayout *lay_blocked(LayoutCtx *lc, int rank, const int64_t *dims, int vec);
/* The default layout of a tensor of type t: blocked with 16-byte vectors. */
const GpuLayout *lay_default(LayoutCtx *lc, const Type *t);
/* For a scan along `axis`: its lowest bits in registers (as many as the
 * threads leave), its next ones the lanes, then the warps, so that each
 * thread holds a run of the axis and the lanes and warps follow in order;
 * the other dims' bits take what is left. */
const GpuLayout *lay_scan(LayoutCtx *lc, int rank, const int64_t *dims, int axis);
/* Whether a scan along `axis` can run in L: the warp bits along the axis
 * are its highest (registers and lanes below them in any order). */
bool lay_scan_ok(const GpuLayout *L, int axis);
/* The layout of a reduction over `axis` of L (the axis dropped). */
const GpuLayout *lay_slice(LayoutCtx *lc, const GpuLayout *L, int axis);
/* transpose: result dim d is dim perm[d] of L; registers keep their numbers. */
const GpuLayout *lay_transpose(LayoutCtx *lc, const GpuLayout *L, const int64_t *perm);
/* reshape to dims: L relabelled when the flat index does not change (every
 * dim but the first a power of two on both sides), else NULL. */
const GpuLayout *lay_reshape(LayoutCtx *lc, const GpuLayout *L, int rank, const int64_t *dims);
/* For a NumPy broadcast from shape (rank, dims) to L's shape: the layout of
 * the operand in which every thread holds, in registers, what it needs. */
const GpuLayout *lay_project(LayoutCtx *lc, const GpuLayout *L, int rank, const int64_t *dims);
/* The layout of elements (flat bits) given explicitly: kinds/idx per flat
 * bit (interned copy). */
const GpuLayout *lay_make(LayoutCtx *lc, int rank, const int64_t *dims, const uint8_t *kind, const uint8_t *idx);

/* The compile-time part of register r's coordinates (coord[d] per dim); the
 * thread's part is ORed in (the bits are disjoint). */
void lay_reg_coord(const GpuLayout *L, int r, int64_t *coord);
/* The register of L whose compile-time coordinates are coord (bits of
 * thread-selected positions are ignored). */
int lay_reg_of(const GpuLayout *L, const int64_t *coord);
/* Whether converting A to B moves no data between threads: every lane and
 * warp bit selects the same flat bit in both (registers may be renumbered). */
bool lay_same_threads(const GpuLayout *A, const GpuLayout *B);
/* Number of consecutive registers (from register 0 of each group) that are
 * consecutive elements of the last dim: 1 << k for the k lowest flat bits
 * that are the k lowest register bits. */
int lay_contig(const GpuLayout *L);
/* Whether some lane or warp bit replicates the tensor. */
bool lay_replicated(const GpuLayout *L);
/* "blocked<f32[8,16]: r0 r1 l0 ...>" for debugging (arena). */
const char *lay_str(Arena *a, const GpuLayout *L);

/* The layouts a kernel's values get (gpu_layout.c, before emission). */
typedef struct LayoutPlan {
	LayoutCtx *lc;            /* the interned layouts */
	const GpuLayout **of;     /* per value id: the layout of a tensor computed into registers */
	bool *lazy;               /* per value id: a tensor computed at each use, in the user's layout
	                             (constants, iota, broadcasts and elementwise ops of those) */
	const GpuLayout **hint;   /* per value id: layout wanted for a load (from its broadcast user) */
	const GpuLayout **pref;   /* per value id: loop-carried values with a lazy init take this */
	int *nuses;               /* per value id: operand slots using it */
	const Inst **dot_a;       /* per DOT result id: the LOAD feeding operand a directly (or NULL) */
	const Inst **dot_b;       /* ... operand b */
	const Inst **dot_of;      /* per LOAD result id: the DOT it feeds directly (dot_a/dot_b), or NULL */
	bool *mma;                /* per DOT result id: done on the tensor cores */
	bool *wgmma;              /* per DOT result id: ... with Hopper wgmma (nvptx_dot.c) */
} LayoutPlan;

/* MMA fragment layouts of m16n8k16 over warps: C[M,N], A[M,K] and B[K,N]
 * (gpu_layout.c).  wm x wn warps tile M x N; A is replicated over the warps
 * along N, B over those along M. */
const GpuLayout *lay_mma_c(LayoutCtx *lc, int64_t M, int64_t N, int wm_bits);
const GpuLayout *lay_mma_a(LayoutCtx *lc, int64_t M, int64_t K, int wm_bits);
const GpuLayout *lay_mma_b(LayoutCtx *lc, int64_t K, int64_t N, int wm_bits);
/* The warp split for an MMA dot of M x N: log2 of the warps along M. */
int lay_mma_wm_bits(int64_t M, int64_t N, int warpbits);
/* Whether a dot of these operand/result types runs on the tensor cores. */
bool lay_dot_is_mma(const Type *a, const Type *b, const Type *r);
/* Whether such a dot fits Hopper wgmma with warpbits warps, and the layout of
 * its accumulator (M rows in 64-row tiles over the warpgroups, N whole). */
bool lay_dot_is_wgmma(const Type *a, const Type *b, const Type *r, int warpbits);
const GpuLayout *lay_wgmma_c(LayoutCtx *lc, int64_t M, int64_t N);

/* wgmma: tensor-core dots that fit (lay_dot_is_wgmma) take wgmma layouts. */
LayoutPlan *gpu_assign_layouts(Arena *a, const IrKernel *k, int warpbits, bool wgmma);

/* ---- emission state ---------------------------------------------------------- */

/* Entries of one kernel, each a slot of Nv.kinfo (nkernels apart): the
 * kernel's own, its aligned variant, their few-trips variants, then their
 * merged variants (nvptx_merge.c) and those's few-trips variants. */
#define NV_ENTRY_SLOTS 8

/* Per compilation: the shared scalar emitter (llvm_scalar.c) and more. */
typedef struct Nv {
	Cg g;                     /* context, module, builder, common types (g.nvptx set) */
	Compiler *cc;             /* diagnostics, arena */
	const IrModule *m;        /* the module */
	const GpuOptions *opt;    /* the options */
	const char *target_name;  /* for "not supported yet by --target=sm_XX" */
	LLVMTypeRef t_gptr;       /* ptr addrspace(1): global memory */
	LLVMTypeRef t_sptr;       /* ptr addrspace(3): shared memory */
	GpuKernel *kinfo;         /* launch geometry (filled while emitting): NV_ENTRY_SLOTS per kernel */
	bool wgmma;               /* every target sm_90a, no --gpu-mma-sync, not emulated */
	bool wgmma_warps;         /* every target sm_90a, no --gpu-mma-sync: the CTA takes the warps that
	                             wgmma wants (nv_sched_warps), emulated too, so that the emulated
	                             kernel has the launch geometry of the object's stub */
	bool reblock;             /* every target sm_90a, no --gpu-mma-sync or --gpu-no-reblock
	                             (nvptx_reblock.c; the emulator runs those loops on mma.sync) */
	bool kgrid;               /* no --gpu-no-kgrid-loop: K-grid bodies as K loops (nvptx_kgrid.c) */
	int kgrid_axis;           /* the arbitrary axis the entry being emitted loops over in its body
	                             (nvptx_kgrid.c), so emit_task does not; -1: none */
	bool reblock_whole;       /* no --gpu-no-reblock: entries of unaligned rows run their whole-K
	                             dots as K loops on every target (nvptx_reblock.c) */
	bool hint_stages;         /* pipelines take num_stages (the kernel did not fit with more) */
	bool hint_warps;          /* the CTA takes num_warps, not fewer (too much code with fewer) */
	uint64_t assume_div16;    /* emitting an aligned variant: bit s, size symbol s is a multiple of
	                             GPU_ALIGNED_DIV */
	bool rows_unaligned;      /* the entry being emitted has operand rows not known to be 16-byte
	                             aligned (emit_entry; their copies go element by element) */
	bool few_trips;           /* sm_90a entries may get few-trips variants (no --gpu-no-few-trips) */
	const Inst *few_loop;     /* emitting a few-trips variant: this loop of a run-time trip count
	                             runs at most SCHED_SQUARE_TRIPS iterations (nv_sched_few_trips) */
	bool tma;                 /* wgmma pipelines may copy with the copy engine (nvptx_tma.c) */
	bool persistent;          /* every target sm_90 or newer, no --gpu-no-persistent */
	bool cluster;             /* wgmma pipelines may share tiles in 2-CTA clusters (no --gpu-no-cluster) */
	bool early;               /* mma.sync dots may copy later dots' operands (early_copies; no
	                             --gpu-no-early-copies) */
	bool ahead;               /* a loop's first mma.sync dot may copy its operands an iteration ahead
	                             (ahead_plan; no --gpu-no-copies-ahead) */
	int apart;                /* chained wgmma dots' warpgroups may run apart (plan_mbar, plan_turns):
	                             -1 --gpu-no-pingpong (never), else yes (1 --gpu-pingpong, 0 the
	                             default, now the same: nvptx_pipe.c apart) */
	int ptxas_release;        /* nv_ptxas_release's answer; -1: not asked yet */
	bool merge_blocks;        /* sm_90a entries may get merged variants (no --gpu-no-merge-blocks) */
	const int *merge;         /* the entry being emitted runs merge[d] programs of grid axis d in a
	                             CTA (nvptx_merge.c); NULL: one of each */
	int pair_axis;            /* the entry being emitted runs in 2-CTA clusters, the programs of grid
	                             axis pair_axis 2r and 2r + 1 on the cluster's CTAs (nvptx_sched.c);
	                             -1: not */
	const GpuTma *tma_decl;   /* the tensor maps the entry being emitted takes (NULL: none yet) */
	int ntma_decl;
	Vec builders;             /* LLVMBuilderRef: the kernels' entry builders, disposed at the end */
} Nv;

/* Most shared memory (dynamic included) a CTA may use on target t (nvptx_base.c). */
uint64_t nv_smem_limit(const GpuTarget *t);
/* The least shared memory (dynamic included) a CTA may use on any of the targets. */
uint64_t nv_smem_cap(const Nv *nv);

/* A tensor (or scalar) value in registers. */
typedef struct GV {
	const GpuLayout *L;       /* its layout; NULL for a scalar (the same in every thread) */
	int n;                    /* registers (1 for a scalar) */
	DType dt;                 /* dtype: registers hold the compute form (llvm_util.h) */
	LLVMValueRef *r;          /* the registers */
} GV;

/* A Ref: a global operand or a scratch buffer in shared memory. */
typedef struct GRef {
	LLVMValueRef base;        /* pointer to element [0, ..., 0] (addrspace 1 or 3) */
	unsigned as;              /* 1 global, 3 shared */
	int rank;                 /* dimensions */
	LLVMValueRef *stride;     /* per dim: i64 element stride (row-major) */
	LLVMValueRef *extent;     /* per dim: i64 extent */
	int64_t *sdiv;            /* per dim: a power of two known to divide the stride */
	DType dt;                 /* element dtype */
	LLVMTypeRef mem;          /* element type in memory (bool i8, f16/bf16 i16) */
	int slot;                 /* index in the kernel's Ref table (barrier tracking) */
	bool readonly;            /* an `in` operand */
} GRef;

/* Accesses to one Ref since the last barrier (see nvptx_mem.c). */
typedef struct RefState {
	bool read, written;       /* accessed since the last CTA barrier */
	const Inst *sig;          /* the access whose ownership all of them shared, or NULL: mixed */
	const GpuLayout *sig_lay; /* ...and its layout */
} RefState;

/* A cached conversion of a value to another layout, valid in the scope it
 * was made in (see nv_get). */
typedef struct ConvEntry {
	int vid;                  /* the value */
	const GpuLayout *L;       /* the layout */
	GV *v;                    /* the converted registers */
	int depth;                /* scope depth at creation */
	int scope;                /* scope serial at creation */
} ConvEntry;

/* A software-pipelined loop (nvptx_pipe.c): the operands of the dots in its
 * body are loads that cp.async copies num_stages - 1 iterations ahead into
 * rotating shared-memory buffers. */
typedef struct LoopPipe {
	const Inst *loop;         /* the FOR */
	int stages;               /* buffers per operand (num_stages) */
	int ahead;                /* iterations copied ahead: stages - 1, or stages - 2 when the last
	                             wgmma group of an iteration stays in flight into the next (wg_pending) */
	bool wg;                  /* some dot of the body uses wgmma */
	LLVMValueRef c, trips;    /* the loop's counter (i64) and trip count */
	LLVMValueRef buf, phase;  /* c % stages and (c / stages) & 1 (i32) carried round the loop
	                             (nv_pipe_head), or NULL: computed from c */
	LLVMValueRef lo, step;    /* iv = lo + c * step, in the iv's dtype */
	const Inst **dots;        /* the dots whose operands are copied ahead */
	int ndots;
	uint64_t *off;            /* per dot: offset of its buffers in the pipeline area */
	uint64_t *bytes;          /* per dot: bytes of one buffer (both operands) */
	struct LoopPipe *outer;   /* the enclosing pipelined loop, or NULL */
	uint64_t base;            /* where its buffers start: what enclosing loops' buffers take */
	bool reuse;               /* an earlier loop's buffers overlap its own */
	bool tma;                 /* the copy engine copies every operand, completing on mbarriers */
	bool mbar;                /* cp.async completing on mbarriers, no CTA barrier in the loop
	                             (plan_mbar) */
	uint64_t bars;            /* with tma: offset of the `stages` mbarriers in the pipeline area; with
	                             mbar: of the `stages` "full" ones, then the `stages` "empty" ones */
	int *slot;                /* with tma: per dot, per operand (2x + k): its tensor map, or -1 */
	bool *inflight;           /* per dot: its wgmma group may stay in flight into the next iteration */
	int mcast;                /* with tma in a 2-CTA cluster: the operand (0 A, 1 B) of dots[0] that both
	                             programs of the cluster read, each CTA copying half of its rows into
	                             both (multicast) when the pair is whole; -1: none */
	int mslot;                /* with mcast: the tensor map of the half boxes */
	LLVMValueRef coupled;     /* with mcast: i1, the pair is whole and the loop long enough: the CTAs
	                             multicast and release buffers to each other (nv_pipe_prologue) */
	const Value **late;       /* per dot: the body argument carrying its accumulator when that is
	                             read only after the first dot (acc_read_late), else NULL */
	int64_t *resident;        /* per dot: wgmma's A loaded before the loop (attention's q), stored once
	                             in the prologue to this offset of the pipeline area and read from
	                             there by every iteration (plan_resident); -1: none */
	bool turns;               /* with tma, chained dots on two warpgroups: they take turns at issuing
	                             their dots (named barriers; FA3's ping-pong: nv_pipe_turn), and
	                             each warp releases a buffer on its "empty" mbarrier once read, the
	                             copies into it waiting for that: no CTA barrier in the loop
	                             (plan_turns) */
} LoopPipe;

/* A FOR loop being emitted (codegen_nvptx.c emit_for), for what its body
 * emits across iterations (nvptx_dot.c: a dot's operand copied a turn
 * ahead). */
typedef struct ForLoop {
	const Inst *loop;         /* the FOR */
	LLVMValueRef c, trips;    /* its counter (i64, from 0) and trip count */
	LLVMValueRef lo, step;    /* iv = lo + c * step, in the iv's dtype */
	LLVMBasicBlockRef pre;    /* the block that enters its head (ending in the branch there; the
	                             incoming block of the head's phis) */
	uint64_t live;            /* NvFn.smem_pipe_live at its start: restored at its end, past what
	                             copies a turn ahead keep for the whole loop */
	bool ahead;               /* a dot of its body copies a turn ahead: its last copies (zeros
	                             written past the last iteration) are waited for at the exit */
	struct ForLoop *outer;    /* the enclosing FOR being emitted, or NULL */
} ForLoop;

typedef struct NvFn {
	Nv *nv;                   /* the compilation */
	Cg *g;                    /* == &nv->g */
	const IrKernel *k;        /* the kernel */
	LayoutPlan *plan;         /* layouts of its values */
	LLVMValueRef fn;          /* the kernel entry */
	LLVMBuilderRef pre;       /* builder at the end of the entry block: hoisted per-thread values */
	LLVMValueRef entry_br;    /* the entry block's terminator (pre inserts before it) */
	LLVMValueRef tid;         /* threadIdx.x (i32) */
	LLVMValueRef lane, warp;  /* tid & 31, tid >> 5 (i32) */
	LLVMValueRef warp0;       /* i1: warp 0, known warp-uniform to ptxas (nv_tma_leader), or NULL */
	LLVMValueRef *pid;        /* per grid axis: this program's coordinate (i32) */
	LLVMValueRef *nprog;      /* per grid axis: the extent (i32) */
	LLVMValueRef *sizes;      /* per size symbol: its i64 value */
	GV **vals;                /* per value id: computed values (tensors in plan->of layouts, scalars) */
	GRef **refs;              /* per value id: Refs */
	struct NvAccess **deferred; /* per value id: a load a dot copies itself (nv_dot_takes_load) */
	struct EarlyCopy **early; /* per value id: a load a later dot reads, copied by an earlier dot of
	                             its region (nvptx_dot.c, early_copies), until that dot reads it */
	LLVMValueRef **tcoord;    /* per layout id: per dim the thread's coordinate part (i32), or NULL */
	LLVMValueRef *owner;      /* per layout id: i1, this thread holds the canonical copy (or NULL) */
	LLVMValueRef *tflat;      /* per layout id: the thread's part of the flat index (i32), or NULL */
	int nlay_cache;           /* entries of tcoord/owner */
	ConvEntry *conv;          /* cached conversions (a stack) */
	int nconv, capconv;
	int depth;                /* scope depth (regions entered) */
	int *scope_serial;        /* per depth: serial of the scope open at that depth */
	int scope_cap;
	int next_serial;          /* scope serial allocator */
	RefState *rs;             /* per Ref slot: accesses since the last barrier */
	int nrefs;                /* Ref slots */
	LLVMValueRef smem;        /* placeholder for the shared memory block (replaced at the end) */
	uint64_t smem_scratch;    /* bytes of scratch buffers (at the start of the block) */
	uint64_t smem_temp;       /* most bytes a conversion/reduction/dot needs (after scratch) */
	bool smem_busy;           /* the temporary area was read since the last barrier */
	int arbitrary_depth;      /* arbitrary-axis loops around the body */
	LoopPipe *pipe;           /* the innermost software-pipelined loop being emitted */
	struct ForLoop *loop;     /* the innermost FOR loop being emitted (codegen_nvptx.c emit_for) */
	bool *pipelined;          /* per value id: a load a pipelined dot copies (never emitted) */
	LLVMValueRef smem_pipe;   /* placeholder for the pipeline buffers (after the temporary area) */
	uint64_t smem_pipe_bytes; /* their bytes */
	uint64_t smem_pipe_live;  /* the bytes of the pipelined loops being emitted (loops one after
	                             another reuse the same buffers) */
	bool wgmma;               /* some dot uses wgmma: its buffers are NV_WGMMA_ALIGN-aligned */
	bool persistent;          /* the CTA loops over tasks (nv_sched_persistent) */
	bool sched_shared;        /* a pipeline's stages were sized for CTAs sharing an SM */
	bool chain_shared;        /* ... for a loop of two or more dots: the kernel asks ptxas for two
	                             CTAs an SM (nvvm.minctasm 2, half the registers; nv_sched_stages) */
	bool pipe_chain;          /* a pipeline of chained wgmma dots on mbarriers (plan_mbar) or the copy
	                             engine (plan_tma): one task a CTA */
	bool sched_raised;        /* a pipeline took more stages than num_stages (nv_sched_stages) */
	bool in_turn;             /* emitting a turns loop's body where the warpgroup may hold its turn
	                             (nv_pipe_turn): a CTA barrier there would wait for the other
	                             warpgroup, which waits for the turn */
	bool turns_blocked;       /* a CTA barrier was emitted in_turn: the entry is emitted again
	                             without turns (emit_kernel) */
	Vec tma_want;             /* GpuTma *: the tensor maps the pipelines asked for (nv_tma_slot) */
	int pair_cand;            /* a pipeline could share a tile between the programs of this grid axis
	                             (plan_tma; -1: none): emit again in 2-CTA clusters */
	LLVMValueRef rank;        /* in 2-CTA clusters: this CTA's rank in its cluster (i32, 0 or 1) */
	LLVMValueRef paired;      /* in 2-CTA clusters: i1, the task's pair of programs is whole (both CTAs
	                             run one; otherwise rank 0 runs the first alone) */
} NvFn;

/* The compilation's arena (layouts, values, plans of this function). */
static inline Arena *nv_arena(NvFn *f)
{
	return f->nv->cc->arena;
}

/* Alignment of wgmma operand buffers in shared memory: the largest
 * swizzle atom (8 rows of 128 bytes); the hardware swizzles address bits. */
#define NV_WGMMA_ALIGN 1024

/* x rounded up to a multiple of a. */
static inline uint64_t nv_align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

/* ---- nvptx_base.c ------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
bool nv_unsupported(NvFn *f, Loc loc, const char *fmt, ...);
__attribute__((format(printf, 3, 4)))
bool nv_fail(NvFn *f, Loc loc, const char *fmt, ...);
/* Calls an NVVM intrinsic (not overloaded unless ov is given). */
LLVMValueRef nv_intrinsic(NvFn *f, const char *name, LLVMTypeRef *ov, int nov, LLVMValueRef *args, int nargs);
/* Inline PTX with side effects (a memory clobber where cons says so). */
LLVMValueRef nv_inline_ptx(NvFn *f, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int n);
/* The i64 {lo, hi} of two i32, as PTX's mov.b64 packs it: opaque to LLVM,
 * which would otherwise fold a constant high word into a 64-bit add. */
LLVMValueRef nv_pack_b64(NvFn *f, LLVMValueRef lo, LLVMValueRef hi);
/* A CTA-wide barrier (bar.sync 0); forgets the tracked accesses. */
void nv_barrier(NvFn *f);
/* bar.sync 0 alone, the tracked accesses kept: for a barrier on one path
 * of several. */
void nv_bar_sync(NvFn *f);
/* A barrier of both CTAs of the 2-CTA cluster, every thread of each. */
void nv_cluster_sync(NvFn *f);
/* Where `paired` (i1, the same in every thread of the cluster) holds, a
 * barrier of both CTAs of the 2-CTA cluster (release and acquire: each
 * CTA's prior accesses, its shared memory's included, come before the
 * other's later ones); elsewhere, or with paired NULL, nv_barrier. */
void nv_cluster_barrier(NvFn *f, LLVMValueRef paired);
/* Opens/closes a scope (a region being emitted): conversions made inside die with it. */
void nv_scope_push(NvFn *f);
void nv_scope_pop(NvFn *f);

/* ---- codegen_nvptx.c ---------------------------------------------------------- */

/* Emits one instruction (its results go to f->vals). */
bool nv_emit_inst(NvFn *f, const Inst *i);
/* Emits region r (arguments bound to args; tensors GV*) and returns its
 * yields in ys (GV*), in the layouts `want` (NULL: their own).  false
 * after an error. */
bool nv_region(NvFn *f, const Region *r, GV **args, const GpuLayout **want, GV **ys);

/* ---- nvptx_tensor.c: values, layouts, elementwise ops, shape ops, reductions ---- */

GV *gv_new(NvFn *f, const GpuLayout *L, DType dt);
GV *gv_scalar(NvFn *f, DType dt, LLVMValueRef x);
/* The value v in layout L (NULL: v is a scalar): converts or materialises
 * lazily computed values as needed (cached per scope). */
GV *nv_get(NvFn *f, const Value *v, const GpuLayout *L);
/* The value v in the layout the plan gave it (tensors), or the scalar. */
GV *nv_val(NvFn *f, const Value *v);
/* x (a scalar, or a tensor that broadcasts to L's shape) broadcast into L. */
GV *nv_broadcast(NvFn *f, const Value *x, const GpuLayout *L);
/* x converted to layout L (same shape). */
GV *nv_convert(NvFn *f, GV *x, const GpuLayout *L);
/* The thread's coordinate part of dim d in L (i32, hoisted). */
LLVMValueRef nv_tcoord(NvFn *f, const GpuLayout *L, int d);
/* Coordinate of register r along dim d (i32). */
LLVMValueRef nv_coord(NvFn *f, const GpuLayout *L, int r, int d);
/* i1: this thread holds the canonical copy of L's elements (no replica). */
LLVMValueRef nv_owner(NvFn *f, const GpuLayout *L);
/* i1 or NULL (always true): register r is a real element (not padding). */
LLVMValueRef nv_valid(NvFn *f, const GpuLayout *L, int r);
/* Emits a tensor op of the plan (elementwise, shape, reduce, cumsum); false
 * after an error.  Results go to f->vals. */
bool nv_tensor_op(NvFn *f, const Inst *i);
/* Shared memory: a pointer (addrspace 3) `off` bytes into the temporary area. */
LLVMValueRef nv_temp_ptr(NvFn *f, uint64_t off);
/* Before writing the temporary area: waits (barrier) for its last readers. */
void nv_temp_begin(NvFn *f);
/* Reserves `bytes` of the temporary shared area for one operation. */
void nv_temp_need(NvFn *f, uint64_t bytes);
/* Writes x's elements (owners only) into shared memory at base + flat
 * index * elem size (padded row-major order, memory form); reads them
 * back in layout L. */
void nv_smem_write(NvFn *f, GV *x, LLVMValueRef base, bool staged);
GV *nv_smem_read(NvFn *f, LLVMValueRef base, const GpuLayout *L, DType dt, bool staged);
/* Bytes of one element in shared memory. */
int nv_smem_elem(DType dt);
LLVMTypeRef nv_smem_type(NvFn *f, DType dt);
/* Shuffle across lanes (butterfly: lane ^ mask) of any compute type. */
LLVMValueRef nv_shfl_bfly(NvFn *f, LLVMValueRef x, int mask);
LLVMValueRef nv_shfl_idx(NvFn *f, LLVMValueRef x, LLVMValueRef lane);
LLVMValueRef nv_shfl_up(NvFn *f, LLVMValueRef x, int delta);

/* ---- nvptx_mem.c: Refs and accesses ---------------------------------------------- */

/* A power of two that kernel k's `requires sym % C == 0` clauses prove
 * dividing size symbol s (1 if none). */
int64_t nv_requires_divisor(const IrKernel *k, int s);

/* One LOAD/STORE/ATOMIC being emitted (or deferred: a dot's operand). */
typedef struct NvAccess {
	const Inst *i;         /* the access */
	GRef *ref;             /* the Ref it addresses */
	const GpuLayout *L;    /* the access shape's layout; NULL for a scalar access */
	const GpuLayout *view; /* a dot's deferred operand that a reshape merges to 2-D: the operand's
	                          layout (L's registers, dims merged), else NULL */
	int *rdim;             /* per Ref dim: the access dim of a FULL/SLICE indexer, else -1 */
	LLVMValueRef *idx;     /* per Ref dim: POINT index or SLICE start as i64, else NULL */
	const Value **gval;    /* per Ref dim: the GATHER index value, else NULL */
	GV **gat;              /* per Ref dim: the gather indices in L */
	GV *val, *cmp, *mask, *other; /* operands in L (or scalars) */
	LLVMValueRef ubase;    /* i64: offset of the uniform part (points, slice starts) */
	LLVMValueRef tbase;    /* i64: ubase plus the thread's part of the FULL/SLICE dims, or NULL
	                          (nv_access_tbase: register offsets then add constants to it) */
	LLVMValueRef *tidx;    /* with tbase, per masked FULL/SLICE Ref dim: idx plus the thread's part
	                          of the coordinate (i64), else NULL */
	LLVMValueRef upred;    /* i1: every masked point is in bounds (NULL: none) */
	bool store, atomic;    /* the kind */
} NvAccess;

/* Prepares access i (a LOAD, STORE or ATOMIC): its index, mask and value
 * operands as they are now.  false after an error. */
bool nv_access_setup(NvFn *f, const Inst *i, NvAccess *out);
/* Sets A->tbase from A->ubase and A->L, here: at a point that dominates
 * every later use of A.  (The pipelined dot operands of bench_matmul-like
 * loops keep the offsets per register: their code is tuned.) */
void nv_access_tbase(NvFn *f, NvAccess *A);
/* Elements per vector access of A (1: scalar accesses) and whether the
 * lanes of a vector always share their predicate. */
int nv_access_width(NvFn *f, NvAccess *A, bool *uniform);
/* Pointer to register r's element of A, and its predicate (NULL: always):
 * `from`, register r0's pointer, plus the constant distance between their
 * coordinates, or (from NULL, or a distance that depends on the thread:
 * gathers) computed whole. */
LLVMValueRef nv_access_ptr(NvFn *f, NvAccess *A, int r, LLVMValueRef *pred, int r0, LLVMValueRef from);
/* For the w-element vector of A at register r (along the contiguous last
 * dim, no user mask): how many of its leading elements are within the
 * last dim's extent and the padding (i32, 0..w), or NULL if all always are.
 * Past the first invalid element every one is invalid. */
LLVMValueRef nv_access_prefix(NvFn *f, NvAccess *A, int r, int w);
/* Whether dot d copies the tensor load A straight into shared memory
 * (cp.async) instead of the load being emitted into registers. */
bool nv_dot_takes_load(NvFn *f, const Inst *d, NvAccess *A);

/* The Ref of a kernel operand (global) or scratch ALLOC (shared). */
GRef *nv_make_ref(NvFn *f, const Type *t, LLVMValueRef base, unsigned as, int slot, bool readonly, Loc loc);
bool nv_access(NvFn *f, const Inst *i);
/* Tracking for barriers: call before an access of ref (write: store or atomic). */
void nv_sync_access(NvFn *f, const GRef *ref, bool write, const Inst *i, const GpuLayout *L);
/* Emits a barrier if an access in the regions (a loop about to start or
 * to repeat) could race with the accesses since the last barrier. */
void nv_sync_regions(NvFn *f, const Region *const *rs, int n);
/* Records every access of region r as done (after a loop that may leave
 * after it). */
void nv_state_touch(NvFn *f, const Region *r);
/* State merging around control flow. */
RefState *nv_state_save(NvFn *f);
void nv_state_restore(NvFn *f, const RefState *s);
void nv_state_merge(NvFn *f, const RefState *other);
/* The largest power of two (up to 2^30) known to divide integer scalar v. */
int64_t nv_divisor(NvFn *f, const Value *v);

/* ---- nvptx_ptxas.c: the CUDA toolkit ---------------------------------------------- */

/* ptxas: `path` (--ptxas=, which must exist), else on PATH, else in
 * /usr/local/cuda/bin; NULL if none (arena string). */
const char *nv_find_ptxas(Compiler *cc, const char *path);
/* CUDA's libdevice.10.bc next to ptxas or in /usr/local/cuda; NULL if none. */
const char *nv_find_libdevice(Compiler *cc, const char *ptxas_option);
/* Assembles PTX for target t with ptxas into a cubin (malloc'd).  required:
 * a missing ptxas is an error.  --resource-usage notes come from here. */
bool nv_ptxas_compile(Nv *nv, const GpuTarget *t, const char *ptx, size_t n, char **cubin, size_t *size,
                      bool required);
/* ptxas's release as major * 100 + minor (1300: CUDA 13.0), from `ptxas
 * --version`, asked once a compilation; 0 without ptxas or a release in
 * what it says. */
int nv_ptxas_release(Nv *nv);
/* ptxas (nv_find_ptxas), or NULL with the error --ptxas= or `required` calls for. */
const char *nv_ptxas_path(Nv *nv, bool required);
/* Registers, once, the exit handler that ends the ptxas runs still under
 * way (before a thread that starts them does: exit handlers run in reverse). */
void nv_ptxas_prepare(void);
/* Starts ptxas on the PTX (NUL-terminated; copied to a temporary file, so
 * the caller may free it) as a child process; NULL after an error. */
PtxasRun *nv_ptxas_start(Compiler *cc, const char *ptxas, const GpuTarget *t, int opt_level, bool verbose,
                         const char *ptx, size_t n);
/* Waits for run r and frees it: the cubin (malloc'd), or false after the
 * error; *log: what ptxas printed (malloc'd, or NULL). */
bool nv_ptxas_finish(Compiler *cc, PtxasRun *r, char **cubin, size_t *size, char **log);
/* Kills run r's ptxas and frees it (its output is not wanted). */
void nv_ptxas_abandon(PtxasRun *r);

/* ---- nvptx_dot.c ---------------------------------------------------------------- */

bool nv_dot(NvFn *f, const Inst *i);
/* The add that `acc + dot(a, b)` fuses into dot d (the dot starts from acc),
 * or NULL. */
const Inst *nv_dot_fused_add(NvFn *f, const Inst *d);

/* ---- nvptx_wgmma_chain.c: chained wgmma dots (attention) ---------------------------------- */

/* x when tensor-core dot `dot` (wgmma or mma.sync) multiplies by
 * transpose(x) (x [N, K]: B staged K-major, as x lies), else NULL. */
const Value *nv_dot_trans_b(const LayoutPlan *P, const Inst *dot);
/* Whether the registers a ([M, K], 16-bit) are wgmma's register-A fragments. */
bool nv_wg_a_in_regs(NvFn *f, const GV *a, int64_t M, int64_t K);
/* Whether the layout plan puts A of wgmma dot `dot` in registers as wgmma's
 * register A (before its registers exist: a pipelined loop copies only B). */
bool nv_wg_a_regs_planned(NvFn *f, const Inst *dot);
/* The load whose result is v, or whose result v reshapes (the attention
 * ops' `k_pages[h, tables].reshape(block_k, d)`), when dot `dot` may copy
 * it into shared memory itself: single uses, the dot's region; else NULL. */
const Inst *nv_dot_operand_load(const LayoutPlan *P, const Value *v, const Inst *dot);
/* The load under dot's transposed B (nv_dot_trans_b, nv_dot_operand_load)
 * when the dot or a pipelined loop can copy it in place of the transpose. */
const Inst *nv_dot_trans_b_load(const LayoutPlan *P, const Inst *dot);
/* The 4 packed A fragment registers (i32) of the 64-row tile at row m0
 * (compile-time part) for the k-step at k0. */
void nv_wg_a_frag(NvFn *f, const GV *a, int64_t m0, int64_t k0, LLVMValueRef *out);

/* ---- nvptx_pipe.c --------------------------------------------------------------- */

/* Software pipelining of a FOR (num_stages >= 2) whose body has dots fed
 * by loads: the plan (NULL: not applicable), the copies of the first
 * iterations before the loop (builder in the preheader, after the trip
 * count), and the wait for the last (empty) copies after it, with the
 * wgmma groups still in flight: then res[0..n) (the loop's results) are
 * replaced by registers that no use can read before the wait. */
LoopPipe *nv_pipe_plan(NvFn *f, const Inst *loop);
void nv_pipe_prologue(NvFn *f, LoopPipe *p);
/* In the loop's head (before its branch): p's carried buffer and phase,
 * when it carries them (a wgmma pipeline whose stage count is no power of
 * two); at the end of the body (the latch): their next values, and the
 * preheader's (pre) zeros. */
void nv_pipe_head(NvFn *f, LoopPipe *p);
void nv_pipe_advance(NvFn *f, LoopPipe *p, LLVMBasicBlockRef pre);
void nv_pipe_epilogue(NvFn *f, LoopPipe *p, GV **res, int n);
/* Whether wgmma groups of pipeline p are still in flight when its loop
 * ends (the epilogue waits for them). */
bool nv_pipe_in_flight(const LoopPipe *p);
/* Whether dot x's group stays in flight into the next iteration. */
bool nv_pipe_dot_in_flight(const LoopPipe *p, int x);
/* Whether dot x reads its A from the area the prologue stored it in
 * (LoopPipe.resident) instead of from registers. */
bool nv_pipe_resident(const LoopPipe *p, int x);
/* Whether wgmma dot d would read a register A loaded before the innermost
 * loop around it, which the ptxas in use may miscompile (nvptx_pipe.c
 * invariant_a_safe): then A is staged instead (or resident). */
bool nv_wg_a_invariant_unsafe(NvFn *f, const Inst *d);
/* After the wait of dot x (the first): the accumulators carried in
 * flight from the previous iteration and read late, fenced for their
 * readers. */
void nv_pipe_fence_carried(NvFn *f, const LoopPipe *p, int x);
/* After the wait of dot x that leaves `pending` groups in flight: in a
 * 2-CTA cluster, the release of the buffer it completed to both CTAs;
 * with turns, of the previous iteration's buffer to the CTA's leader. */
void nv_pipe_release(NvFn *f, const LoopPipe *p, int x, int pending);
/* Around the issue of dot x of p (before its fence: issued false; after
 * its commit: true): with turns, the warpgroup waits for its turn or
 * gives the other one its. */
void nv_pipe_turn(NvFn *f, const LoopPipe *p, int x, bool issued);

/* ---- nvptx_sched.c ---------------------------------------------------------------- */

/* Warps of kernel k's CTA: num_warps, more for its wgmma dots, or fewer
 * where its dots could not run on wgmma with num_warps. */
int nv_sched_warps(const Nv *nv, const IrKernel *k);
/* The first tensor value of r that does not fit a thread of 2^warpbits
 * warps (§10.2: more than 2^NV_MAX_REG_BITS elements each), *at its
 * instruction; NULL when all fit. */
const Value *nv_value_too_large(const Region *r, int warpbits, const Inst **at);
/* Stages of a pipeline of wgmma dot d whose buffers take `bytes` each, in
 * `avail` bytes of shared memory, beside `used` bytes of the CTA's other
 * shared memory (fewer than 2: no pipeline); chain_acc: for a pipeline of
 * two or more dots of a loop (attention's q kᵀ and p v), their f32
 * accumulators a thread, else 0; trips: the loop's constant trip count, or
 * -1 (unknown, or not a loop's pipeline); neither the choice nor
 * num_stages goes past it. */
int nv_sched_stages(NvFn *f, const Inst *d, uint64_t bytes, uint64_t avail, uint64_t used, int64_t chain_acc,
                    int64_t trips);
/* A FOR loop's trip count when its bounds and step are constants; for the
 * loop of a few-trips variant (Nv.few_loop), the most it runs; else -1. */
int64_t nv_loop_trips(const Nv *nv, const Inst *loop);
/* The loop for which kernel k's entry now emitted (aligned rows, its IR as
 * that entry sees it) wants a few-trips variant, or NULL: a K loop of a
 * run-time trip count that the schedule would run on three CTAs an SM
 * were it known to be short.  *size: the size symbol of its trip count,
 * *most: the largest value of it for which it runs few enough. */
const Inst *nv_sched_few_trips(Nv *nv, const IrKernel *k, int *size, int64_t *most);
/* Whether a wgmma pipeline whose every operand fits the copy engine takes
 * it, its iterations copying `bytes` (both operands of every dot). */
bool nv_sched_tma(uint64_t bytes);
/* This program's ids on the parallel axes from blockIdx.x (lin, i32), in
 * f->pid; in 2-CTA clusters (nv->pair_axis) from the pair index lin and
 * f->rank, with f->paired. */
void nv_sched_program_ids(NvFn *f, LLVMValueRef lin);
/* The grid axis along which the programs of the persistent entry f could
 * run in pairs on 2-CTA clusters: that of the rows of the grouped order
 * (neighbouring programs share their column's blocks); -1 when f runs no
 * such order or clusters are off. */
int nv_sched_pair_axis(NvFn *f);
/* Whether kernel k's CTAs are persistent: each runs the tasks blockIdx.x,
 * + gridDim.x, ... (codegen_nvptx.c), the stub launching as many as the
 * GPU holds at once (pk_launch_cuda_persistent). */
bool nv_sched_persistent(const Nv *nv, const IrKernel *k);
/* Whether region r has a dot on the tensor cores (codegen_nvptx.c). */
bool nv_has_mma_dot(const Region *r);

/* ---- nvptx_reblock.c ------------------------------------------------------------ */

/* Rewrites kernel k's K loops of one tensor-core dot, and its dots over a
 * whole K of 128 or more, to loops of K slices of 64 (same sums) for one
 * entry; with `whole_only`, the whole-K dots alone, in slices of 64, 32 or
 * 16 (whichever divides K first).  nv_reblock_undo puts them back as
 * written.  NULL: nothing rewritten (undo takes it too). */
typedef struct NvReblock NvReblock;
NvReblock *nv_reblock(Arena *a, IrKernel *k, bool whole_only);
void nv_reblock_undo(NvReblock *rb);

/* nvptx_kgrid.c: a body accumulating into scratch over an arbitrary grid
 * axis, rewritten as that axis' loop (NULL: k is no such kernel); the
 * axis the new body loops over (-1 for NULL); the kernel's body back. */
typedef struct NvKgrid NvKgrid;
NvKgrid *nv_kgrid(Arena *a, IrKernel *k);
int nv_kgrid_axis(const NvKgrid *r);
void nv_kgrid_undo(NvKgrid *r);

/* nvptx_merge.c: kernel k's programs of small tensor-core blocks merged,
 * factor[d] of grid axis d (1: none) into one CTA, for one entry (value
 * types and slice sizes changed in place); NULL: nothing merged (factor
 * all 1); *wide: 128 x 128 blocks merged into 128 x 256, whose stub
 * weighs the waves.  nv_merge_undo puts the IR back (NULL is taken too). */
typedef struct NvMerge NvMerge;
NvMerge *nv_merge(Arena *a, IrKernel *k, int *factor, bool *wide);
void nv_merge_undo(NvMerge *m);

/* ---- nvptx_size.c --------------------------------------------------------------- */

/* Kernel k's function fn, once built, against the size limits of §10.2:
 * an error when too large to compile, optnone (and a warning) when too
 * large to optimise. */
bool nv_bound_kernel(Nv *nv, const IrKernel *k, LLVMValueRef fn);
/* Whether fn, once built, is small enough for LLVM to optimise it. */
bool nv_kernel_optimisable(LLVMValueRef fn);

#endif
