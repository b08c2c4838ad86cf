/* nvptx_dot.h - what nvptx_dot.c (dots, their K slices) and nvptx_pipe.c
 * (software-pipelined loops, whose copies fill the dots' slices) share:
 * the staged operands and the few helpers both emit with.  Private to
 * those two files. */
#ifndef PKC_NVPTX_DOT_H
#define PKC_NVPTX_DOT_H

#include "nvptx.h"

/* Closes this thread's cp.async group (an empty one too). */
static inline void commit(NvFn *f)
{
	nv_intrinsic(f, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
}

/* Whether d computes one scalar from its operands alone (a const, a
 * program id, an elementwise op): it may be emitted again wherever they
 * are known (a pipeline's copies ahead, early copies). */
static inline bool nv_pure_scalar(const Inst *d)
{
	return d->nresults == 1 && d->results[0]->type->rank == 0 &&
	       (d->op == IR_CONST || d->op == IR_PROGRAM_ID || d->op == IR_NUM_PROGRAMS ||
	        (op_info[d->op].flags & F_ELEMWISE));
}

/* Alignment of dot buffers in shared memory. */
static inline uint64_t buf_align(NvFn *f)
{
	return f->wgmma ? NV_WGMMA_ALIGN : 16;
}

/* The line of wgmma's canonical layouts (nvptx_dot.c, wg_stage_off) for
 * rows of `row_bytes` (a multiple of 32): the widest swizzle, 128, 64 or
 * 32 bytes, whose lines tile a row exactly, so that a block of lines is
 * never half used (a row of 96 f16 takes three 64-byte blocks) and the
 * copy engine writes each block as one box. */
static inline int nv_wg_line(int64_t row_bytes)
{
	int line = 128;
	while (line > 32 && row_bytes % line != 0)
		line /= 2;
	return line;
}

/* One K slice of an operand, [rows, cols] row-major in shared memory.
 * Swizzled (MMA): in 16-byte chunks whose index is XORed, within each
 * 128-byte line, with the line's number, so that the eight rows an ldmatrix
 * reads and the chunks a warp stores fall in distinct banks. */
typedef struct Stage {
	LLVMValueRef base;   /* byte pointer (addrspace 3), 16-byte aligned */
	int64_t cols;        /* elements per row */
	int es;              /* bytes per element (memory form) */
	bool swz;            /* swizzled 16-byte chunks (cols * es a multiple of 16) */
	bool wg;             /* wgmma's canonical layout instead (wg_stage_off) */
	int64_t rows;        /* with wg: rows (a multiple of 8) */
	LLVMValueRef field;  /* with wg: its descriptors' start-address field (nv_wg_field, i32) */
} Stage;

/* A dot operand on its way to shared memory. */
typedef struct Operand {
	GV *regs;            /* in registers (any layout), or */
	NvAccess *load;      /* a deferred load, copied with cp.async */
	int kd;              /* its contracted dim: 1 for a, 0 for b (1 for B given transposed) */
	DType dt;            /* element dtype */
	bool unstaged;       /* read from registers by the dot itself (wgmma's register A) */
} Operand;

/* A load that a later mma.sync dot reads whole, copied by cp.async right
 * after the copies of an earlier dot of the same region, into a buffer of
 * its own in the pipeline area (nvptx_dot.c, early_copies). */
typedef struct EarlyCopy {
	Stage s;             /* its stage: the whole K */
	uint64_t live;       /* NvFn.smem_pipe_live before its batch's buffers (restored when read) */
	int *left;           /* copies of its batch not read yet (shared by the batch) */
	int *newer;          /* cp.async groups committed after its batch that its readers may leave in
	                        flight (a copy a turn ahead; shared by the batch) */
} EarlyCopy;

/* A dot's operand copied a turn ahead (nvptx_dot.c, ahead_plan): in a FOR
 * loop, the first dot of the body copies its load for the first
 * iteration, and for iteration c + 1 once it has read iteration c's, into
 * a buffer of its own in the pipeline area, kept for the whole loop. */
typedef struct Ahead {
	Stage s;             /* its buffer: the whole K */
	const Inst *L;       /* the load */
	int kd;              /* its contracted dim */
	int64_t K;
	bool reuse;          /* an earlier loop's buffers took the area: a barrier before the first copy */
} Ahead;

/* ---- nvptx_dot.c ---------------------------------------------------------------- */

/* Shared memory that ordinary stores or cp.async wrote and wgmma (the async
 * proxy) reads next (wg): the writing thread's fence before the barrier. */
void nv_proxy_fence(NvFn *f, bool wg);
/* The f32 registers of v, in place, through an empty asm after a
 * wgmma.wait_group, so that no use of them moves above the wait. */
void nv_wg_fence(NvFn *f, GV *v);
/* The start-address field (i32) of wgmma descriptors of the shared
 * memory at ptr + off16 * 16 bytes (off16: i32, or NULL for 0): the
 * address >> 4, one add per offset (nvptx_dot.c says why it is exact). */
LLVMValueRef nv_wg_field(NvFn *f, LLVMValueRef ptr, LLVMValueRef off16);
/* The fields of a buffer's stages: A's at area + off16 * 16 bytes, B's
 * a_bytes after it. */
void nv_wg_stage_fields(NvFn *f, LLVMValueRef area, LLVMValueRef off16, uint64_t a_bytes, Stage *sa, Stage *sb);
/* Copies the elements of o whose coordinate along o->kd lies in [k0, k0 +
 * kc) into stage s; with `live` (i1) false, cp.async writes zeros. */
void nv_stage_slice(NvFn *f, const Operand *o, int64_t k0, int64_t kc, const Stage *s, LLVMValueRef live);

/* ---- nvptx_pipe.c --------------------------------------------------------------- */

/* Shared memory all the buffers of one pipelined loop may take. */
uint64_t nv_pipe_cap(NvFn *f);
/* The pipelined loop being emitted that dot i belongs to (its index in
 * *px), or NULL. */
const LoopPipe *nv_pipe_of(NvFn *f, const Inst *i, int *px);
/* In the loop body, at dot x of p: waits for this iteration's copies,
 * starts the ones p->ahead iterations ahead (unless the first dot does:
 * nv_pipe_issue_late), and gives the stages to read. */
bool nv_pipe_step(NvFn *f, const LoopPipe *p, int x, Stage *sa, Stage *sb);
/* Called by dot x of p once its wgmma group is committed, before its
 * wait: starts the copies ahead when the pipeline issues them late. */
bool nv_pipe_issue_late(NvFn *f, const LoopPipe *p, int x);

/* Whether load L's indices are scalar functions of the loop's induction
 * variable and of values from before the loop (computable for any
 * iteration). */
bool nv_loop_computable(const Inst *loop, const Inst *L);
/* Copies load L (K its dim kd, kc deep) as iteration iv (the induction
 * variable's value) of `loop` reads it, into stage st by cp.async: L's
 * index chain emitted for that iteration (nv_loop_computable); where i1
 * `live` is false, the copies read nothing (and write zeros). */
bool nv_copy_at(NvFn *f, const Inst *loop, const Inst *L, LLVMValueRef iv, int kd, int64_t kc, const Stage *st,
                LLVMValueRef live);

/* ---- nvptx_tma.c ---------------------------------------------------------------- */

/* Whether the copy engine can copy load L (a pipelined operand tile) into
 * its wgmma stage; the tensor map it needs in *out. */
bool nv_tma_fits(NvFn *f, const Inst *L, GpuTma *out);
/* Records map t as wanted; its index among the entry's tensor-map
 * parameters, or -1 when the entry does not take it (yet). */
int nv_tma_slot(NvFn *f, const GpuTma *t);
/* if (warp 0 [&& also] && elect.sync) { the caller's code: nv_tma_leader_end }:
 * one thread, sm_90 (the wgmma pipelines'); `also` is the same in every
 * thread (elect.sync needs the whole warp). */
LLVMBasicBlockRef nv_tma_leader(NvFn *f, LLVMValueRef also);
void nv_tma_leader_end(NvFn *f, LLVMBasicBlockRef join);
/* The n mbarriers at bars (shared, 8 bytes each): initialised for
 * `count` arrivals a phase, then a CTA barrier (of the cluster where
 * `paired` holds: nv_cluster_barrier); or a CTA barrier, then
 * invalidated. */
void nv_tma_bars_init(NvFn *f, LLVMValueRef bars, int n, int count, LLVMValueRef paired);
void nv_tma_bars_inval(NvFn *f, LLVMValueRef bars, int n);
/* The shared-space address (i32) of mbarrier i (i32) of those at bars. */
LLVMValueRef nv_mbar_at(NvFn *f, LLVMValueRef bars, LLVMValueRef i);
/* The leader (nv_tma_leader): mbarrier buf (i32) of bars expects `bytes` more. */
void nv_tma_expect(NvFn *f, LLVMValueRef bars, LLVMValueRef buf, uint64_t bytes);
/* The copy engine's coordinates of load L's tile through map t (slice
 * starts, scalar indices, or 0), computed by every thread before the
 * leader's branch (nvptx_pipe.c says why): those of dimensions 0 to
 * rank - 2 in c[0 ...], then the first column of each box (at most
 * NV_TMA_MAX_BOXES) from c[t->rank - 1] on. */
#define NV_TMA_MAX_RANK 5
#define NV_TMA_MAX_BOXES 16
#define NV_TMA_COORDS (NV_TMA_MAX_RANK - 1 + NV_TMA_MAX_BOXES)
void nv_tma_coords(NvFn *f, const Inst *L, const GpuTma *t, LLVMValueRef *c);
/* The leader: copies load L's tile through map `slot` (t) at the
 * coordinates c (nv_tma_coords) into the stage at dst, completing on
 * mbarrier buf of bars.  With `half` (i32, the CTA's rank in a 2-CTA
 * cluster), `slot` is a map of boxes of t->box_rows / 2 rows, and the
 * copy is rows [half, half + 1) * box_rows / 2 of each box into the same
 * place of both CTAs' stages, completing on both CTAs' mbarrier buf. */
void nv_tma_copy(NvFn *f, const Inst *L, const GpuTma *t, int slot, LLVMValueRef dst, const LLVMValueRef *c,
                 LLVMValueRef bars, LLVMValueRef buf, LLVMValueRef half);
/* Every thread: waits until mbarrier buf of bars has completed the phase
 * of parity `parity` (i32). */
void nv_tma_wait(NvFn *f, LLVMValueRef bars, LLVMValueRef buf, LLVMValueRef parity);

#endif
