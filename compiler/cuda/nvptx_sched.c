/* nvptx_sched.c - the schedule pkc picks for tensor-core kernels from the
 * block shapes: warps per CTA and pipeline depth (wgmma, sm_90a), the
 * order of the programs.  `num_warps` and `num_stages` (§5.8) are hints: they
 * never change results, and this file may take more of either than the
 * kernel asks for, and fewer warps only where no dot could run on wgmma
 * with those asked for or a short loop's 128 x 128 dot runs faster on one
 * warpgroup (short_square).
 *
 * - Warps: a wgmma dot keeps its f32 accumulators in registers, M x N / threads
 *   of them per thread; more than 128 leave too few registers for the rest
 *   (ptxas spills), so the CTA gets enough warpgroups for at most 128 each,
 *   as long as every warpgroup keeps a 64-row tile (up to 8 warps); and two
 *   warpgroups for a dot in a loop (a pipeline's) with two 64-row tiles
 *   (attention's q kᵀ and p v of 128 rows among them).  A kernel whose
 *   tensor-core dots all have fewer rows than the warpgroups asked for hold
 *   (64 rows each: the Pallas op's 8 warps for head dims over 64 with a
 *   64-row q block) takes the warpgroups its dots fill instead of falling
 *   to mma.sync (H200: attention d128 with 64-row q blocks ran 127
 *   TFLOP/s on 8 warps' mma.sync), unless a value would then exceed a
 *   thread's share (§10.2, nv_value_too_large) or the code the optimiser takes (NV_OPT_INSTS:
 *   emitted again with the warps asked for, Nv.hint_warps).
 * - Stages: a pipeline of wgmma operand buffers takes as many buffers as
 *   fit, up to SCHED_MAX_STAGES, in the shared memory of the CTAs the
 *   registers let share an SM (at most 2), when SCHED_SHARED_STAGES fit so;
 *   otherwise the SM is one CTA's, and it takes as many as fit up to
 *   SCHED_MAX_STAGES_ALONE; a larger num_stages that fits wins.  A loop of
 *   two or more dots whose accumulators fit SCHED_CHAIN_SHARED_ACC
 *   registers a thread (attention's q kᵀ and p v up to head dim 128)
 *   shares the SM already with SCHED_SHARED_CHAIN_STAGES, and the kernel
 *   asks ptxas for two CTAs an SM (nvvm.minctasm): one CTA's softmax, start
 *   and end run beside the other's dots.  A loop of a constant trip count
 *   takes no more buffers than it has iterations, and shares the SM as
 *   soon as every iteration has its buffer or, at SCHED_SHORT_TRIPS
 *   iterations or fewer, SCHED_SHORT_SHARED_STAGES do: a short loop's CTA
 *   spends much of its time starting and storing, which another CTA
 *   beside it overlaps; a loop of SCHED_SQUARE_TRIPS iterations or fewer
 *   of a 128 x 128 dot takes one warpgroup, 4 or 8 warps asked, and takes
 *   2 stages on each of three CTAs an SM (SCHED_SHORT_CTAS).  On the
 *   H100 (bench/RESULTS.md, helper hopper4): 128 x 128 x 64 on 4 warps with
 *   3 stages, 2 CTAs an SM, ran 0.74-0.86x cuBLAS; on 8 warps with 6
 *   stages, one CTA, 0.79-0.94x; 128 x 128 x 32 blocks ran slower with 6
 *   stages than with 4 (0.70-0.86x against 0.73-0.89x), so shared SMs keep
 *   at most 4.
 * - Copy engine: a wgmma pipeline whose operands the copy engine can copy
 *   (nvptx_tma.c) takes it when an iteration copies SCHED_TMA_MIN_BYTES or
 *   more; below, cp.async by every thread (on the H100, 128 x 128 x 32
 *   blocks, 16 KiB an iteration, ran 5 to 15 % slower at 8192^3 with the
 *   copy engine on 4 warps, 3 CTAs an SM, but up to 16 % faster on 8
 *   warps, 2 CTAs an SM; 64 x 256 x 32 (20 KiB) up to 8 % faster,
 *   128 x 256 x 64 (48 KiB) up to 11 %: bench/RESULTS.md).
 * - Program order (every target): kernels with tensor-core dots run the
 *   programs of their last two parallel axes in groups of SCHED_GROUP rows
 *   (CTAs running together share their operands' blocks in L2), as Triton's
 *   GROUP_SIZE_M.  When the input blocks do not make the last two axes share
 *   (attention: k and v are indexed by batch and head, not by the q block),
 *   the parallel axis along which most of the bytes a program reads are
 *   shared runs fastest instead (`shared_axis`): on the H100 the attention
 *   kernel read k and v from DRAM at 66 % of its bandwidth with the q block
 *   slowest (L2 hit rate 28 %, bench/RESULTS.md "attn5").  When a loop
 *   runs longer the larger that axis's program id (causal attention: the
 *   q block), the longest programs run first, in sections of the other
 *   programs that read SCHED_L2_SHARED bytes of shared blocks together
 *   (`heavy_first`): the programs left at the end are short, so the SMs
 *   finish together; on the H100 causal attention went from 355 to 394
 *   TFLOP/s at d64, 402 to 433 at d128 (sections of 4 MiB: 365 / 419; of
 *   64 MiB: 392 / 428; bench/RESULTS.md "attn6").  The order of parallel
 *   programs is unspecified (§5.4).
 * - Persistent CTAs (sm_90): a kernel with tensor-core dots runs as many
 *   CTAs as the GPU holds at once, each looping over the tasks gridDim.x
 *   apart in the grouped order, so that no SM waits for a CTA to end and
 *   the next to start between two tiles.  Tasks are independent (§5.4:
 *   the arbitrary axes are loops inside a task), and scratch before its
 *   first write in a task is unspecified (§8), so any kernel may.  Not
 *   when a pipeline's stages were sized for CTAs sharing an SM
 *   (NvFn.sched_shared): values live across the task loop cost registers
 *   (H100: 128 x 128 x 64 blocks, one CTA an SM, 0.98-1.13x of one CTA a
 *   task; flash attention d64, two CTAs of 8 warps an SM, went from 128
 *   to 167 registers, one CTA an SM, 26 % slower; bench/RESULTS.md).
 *   Nor with a pipeline of chained dots (NvFn.pipe_chain): on mbarriers,
 *   attention d128 went from 178 to 206 registers, 1-2 % slower in one
 *   H100 call, no faster in any; copied by the copy engine, causal d128
 *   went from 460 to 371 TFLOP/s, full no faster (bench/RESULTS.md).
 * - 2-CTA clusters (sm_90a, persistent, grouped order): when a pipeline can
 *   share one operand's tile between neighbouring rows of blocks
 *   (nvptx_pipe.c: plan_cluster), the entry is emitted again with
 *   nv->pair_axis set: a task is a pair of rows 2r, 2r + 1 of one column
 *   (groups of SCHED_GROUP / 2 pairs), run by the cluster's CTAs (rank 0
 *   the first), clusters looping over the tasks as CTAs do; a lone last
 *   row runs on rank 0 (f->paired false). */
#include <string.h>

#include "nvptx.h"

/* Accumulator registers per thread a wgmma dot may take. */
#define SCHED_MAX_ACC 128
/* Warps a wgmma kernel may be given. */
#define SCHED_MAX_WARPS 8
/* Buffers a chosen pipeline takes at most on an SM shared by 2 CTAs, at
 * least for the SM to be shared, and at most on an SM of its own. */
#define SCHED_MAX_STAGES 4
#define SCHED_SHARED_STAGES 4
/* The same for a loop of two or more dots (attention's q kᵀ and p v) whose
 * f32 accumulators take at most SCHED_CHAIN_SHARED_ACC registers a thread
 * together: two CTAs an SM, each held to 128 registers a thread on 8 warps
 * (nvvm.minctasm), one CTA's softmax and the other's dots side by side. */
#define SCHED_SHARED_CHAIN_STAGES 2
#define SCHED_CHAIN_SHARED_ACC 96
#define SCHED_MAX_STAGES_ALONE 8
/* A loop of at most SCHED_SHORT_TRIPS iterations shares the SM with
 * SCHED_SHORT_SHARED_STAGES buffers.  H200, user matmuls of K 256 and 512
 * in BK 64 (bench/RESULTS.md, twenty-second session): 128 x 128 blocks on
 * 4 or 8 warps with 3 stages and 2 CTAs an SM ran 1.00-1.29x the speed of
 * 4 (K 256) or 6 stages on one CTA; at K 1024 (16 iterations) 0.91-1.02x,
 * hence 8. */
#define SCHED_SHORT_TRIPS 8
#define SCHED_SHORT_SHARED_STAGES 3
/* A loop of at most SCHED_SQUARE_TRIPS iterations of one dot keeps the
 * warps asked for, and where one warpgroup then holds two 64-row tiles
 * (128 x 128 on 4 warps: 128 accumulators a thread), three CTAs share the
 * SM with 2 stages each, a larger num_stages notwithstanding.  H200,
 * 128 x 128 blocks on 4 warps in BK 64 and 32 (bench/RESULTS.md,
 * twenty-second and twenty-third sessions), against two warpgroups on two
 * CTAs: K 128-512 1.03-1.27x, K 768 1.11-1.14x, K 1024 1.07x, K 2048
 * 0.98-1.00x (hence 16 iterations); one warpgroup on two CTAs alone
 * 0.98-1.16x.  ptxas is not held to a third of the registers
 * (nvvm.minctasm): it gives 154-155 unasked with a plain epilogue, the
 * same speed as held (0.98-1.01x), and where a heavier epilogue takes
 * more (171 for bias, relu and exp) two CTAs still fit, where held it
 * spilled.  SCHED_SHORT_OTHER_REGS is the registers besides the
 * accumulators that three CTAs leave.  64-row blocks on three CTAs were
 * measured at long K only (0.95-1.11x): not taken. */
#define SCHED_SQUARE_TRIPS 16
#define SCHED_SHORT_CTAS 3
#define SCHED_SHORT_CTAS_STAGES 2
#define SCHED_SHORT_OTHER_REGS 40
/* Shared memory and registers of one SM (sm_90), the part of the shared
 * memory the driver keeps per CTA, and what a pipeline leaves to the
 * temporary area of each CTA. */
#define SM_SMEM (228 * 1024)
#define SM_REGS 65536
#define CTA_SMEM_RESERVED 1024
#define SCHED_TEMP_RESERVE (8 * 1024)
/* Registers per thread besides the accumulators (addresses, operands):
 * ptxas gave 40 to 68 to 4 warps with 128 accumulators, 26 to 56 to 8
 * warps with 64 (H100, 128 x 128 blocks). */
#define SCHED_OTHER_REGS 56
/* Bytes an iteration of a pipeline copies at least for the copy engine
 * to pay. */
#define SCHED_TMA_MIN_BYTES (16 * 1024)
/* Rows of program blocks per group (program order). */
#define SCHED_GROUP 8
/* Bytes of shared input blocks the programs of one section read together,
 * and the programs of the other axes a section takes at most, when the
 * longest programs run first (heavy_first): a third of the H100's 50 MiB
 * of L2. */
#define SCHED_L2_SHARED (16u << 20)
#define SCHED_MAX_SECTION 64

static int64_t pow2_ceil(int64_t x)
{
	int64_t p = 1;
	while (p < x)
		p *= 2;
	return p;
}

/* The warps dot d needs (0: no wgmma there); in_loop: d is in a loop
 * body (its K slices are a pipeline's stages). */
static int dot_warps(const Inst *d, bool in_loop)
{
	const Type *a = d->args[0]->type, *b = d->args[1]->type, *r = d->results[0]->type;
	if (!lay_dot_is_wgmma(a, b, r, 2))
		return 0;
	int64_t M = a->dims[0], N = r->dims[1];
	int64_t w = pow2_ceil(M * N / (32 * SCHED_MAX_ACC));
	/* A pipeline's dot gets two warpgroups where it has two 64-row tiles,
	 * whether or not a second CTA shares the SM: on the H100, 128 x 128 x
	 * 64 with 4 stages ran 408 TFLOP/s on 4 warps, 493 on 8; 128 x 128 x
	 * 32 (4 stages, 2 CTAs an SM, the copy engine) 0.76-0.82x cuBLAS at
	 * 8192^3 on 8 warps, 0.65-0.79x on 4 (3 CTAs an SM, cp.async). */
	if (in_loop)
		w = w > 8 ? w : 8;
	if (w > M / 16) /* a 64-row tile per warpgroup */
		w = M / 16;
	if (w > SCHED_MAX_WARPS)
		w = SCHED_MAX_WARPS;
	return w < 4 ? 4 : (int)w;
}

int64_t nv_loop_trips(const Nv *nv, const Inst *loop)
{
	if (loop == nv->few_loop)
		return SCHED_SQUARE_TRIPS;
	int64_t v[3];
	for (int a = 0; a < 3; a++)
		if (!ir_const_value(loop->args[a], &v[a]))
			return -1;
	if (v[2] <= 0 || v[1] <= v[0])
		return -1;
	uint64_t n = ((uint64_t)v[1] - (uint64_t)v[0] - 1) / (uint64_t)v[2] + 1; /* no signed overflow */
	return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

/* Whether dot d is a 128 x 128 block: on one warpgroup, two 64-row tiles
 * and 128 accumulators a thread (the shape SCHED_SHORT_CTAS measured). */
static bool square128(const Inst *d)
{
	return d->results[0]->type->rank == 2 && d->args[0]->type->dims[0] == 128 &&
	       d->results[0]->type->dims[1] == 128;
}

/* Whether a loop of `trips` iterations is short enough for three CTAs an
 * SM (SCHED_SQUARE_TRIPS): one rule for the warps (short_square) and the
 * stages (nv_sched_stages). */
static bool square_trips(int64_t trips)
{
	return trips >= 1 && trips <= SCHED_SQUARE_TRIPS;
}

/* Whether `loop` runs one dot, a 128 x 128 block whose 2 stages fit a
 * third of the SM (K slices of 64 or less; attention's loops of two dots
 * stay as they are), SCHED_SQUARE_TRIPS iterations or fewer or, in an
 * entry of unaligned rows, in K slices of 64 and any number of them: there
 * the copies go element by element through registers, and two warpgroups
 * (168 registers) left one CTA an SM; one warpgroup ran 1.47-1.64x as
 * fast (H200, 8191^2 x 1024 and x 4096, 4095^2 x 4096; bench/RESULTS.md,
 * twenty-third session), but 0.91-0.95x with K slices of 32.  Such a loop
 * takes one warpgroup even where 8 warps are asked (nv_sched_warps): two
 * warpgroups on two CTAs an SM ran 0.82-0.96x (twenty-fifth session). */
static bool short_square(const Nv *nv, const Inst *loop)
{
	const Inst *dot = NULL;
	for (const Inst *i = loop->regions[0]->first; i; i = i->next)
		if (i->op == IR_DOT) {
			if (dot)
				return false;
			dot = i;
		}
	if (!dot || !square128(dot))
		return false;
	int64_t bk = dot->args[0]->type->dims[1];
	if (!square_trips(nv_loop_trips(nv, loop)) && !(nv->rows_unaligned && bk == 64))
		return false;
	uint64_t stage = (uint64_t)(128 + 128) * (uint64_t)bk * (uint64_t)dtype_bytes(dot->args[0]->type->dtype);
	return SCHED_SHORT_CTAS_STAGES * stage <= SM_SMEM / SCHED_SHORT_CTAS - CTA_SMEM_RESERVED - SCHED_TEMP_RESERVE;
}

static int region_warps(const Nv *nv, const Region *r, bool in_loop)
{
	int w = 0;
	for (const Inst *i = r->first; i; i = i->next) {
		int x = i->op == IR_DOT ? dot_warps(i, in_loop) : 0;
		w = x > w ? x : w;
		for (int k = 0; k < i->nregions; k++) {
			x = region_warps(nv, i->regions[k], in_loop || (i->op == IR_FOR && !short_square(nv, i)));
			w = x > w ? x : w;
		}
	}
	return w;
}

/* Whether some loop of r is short_square's. */
static bool any_short_square(const Nv *nv, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_FOR && short_square(nv, i))
			return true;
		for (int k = 0; k < i->nregions; k++)
			if (any_short_square(nv, i->regions[k]))
				return true;
	}
	return false;
}

/* Whether some dot of r runs on wgmma with 2^warpbits warps. */
static bool any_wgmma(const Region *r, int warpbits)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_DOT && lay_dot_is_wgmma(i->args[0]->type, i->args[1]->type, i->results[0]->type, warpbits))
			return true;
		for (int k = 0; k < i->nregions; k++)
			if (any_wgmma(i->regions[k], warpbits))
				return true;
	}
	return false;
}

const Value *nv_value_too_large(const Region *r, int warpbits, const Inst **at)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nresults; j++)
			if (lay_thread_bits(i->results[j]->type, warpbits) > NV_MAX_REG_BITS) {
				*at = i;
				return i->results[j];
			}
		for (int j = 0; j < i->nregions; j++) {
			const Value *v = nv_value_too_large(i->regions[j], warpbits, at);
			if (v)
				return v;
		}
	}
	return NULL;
}

int nv_sched_warps(const Nv *nv, const IrKernel *k)
{
	int hint = k->num_warps > 0 ? k->num_warps : 4;
	if (!nv->wgmma_warps)
		return hint;
	int w = region_warps(nv, k->body, false);
	if (w >= hint)
		return w;
	/* Fewer warps only where those asked for leave every dot off wgmma,
	 * or where the dots that take fewer are short loops' 128 x 128 blocks
	 * (one warpgroup, three CTAs an SM, short_square), and each value
	 * still fits the threads that remain. */
	const Inst *at;
	if (w > 0 && !nv->hint_warps &&
	    (!any_wgmma(k->body, lay_log2_ceil(hint)) || any_short_square(nv, k->body)) &&
	    !nv_value_too_large(k->body, lay_log2_ceil(w), &at))
		return w;
	return hint;
}

/* The value of v, an i64 of constants and size symbol `sym` (a body
 * argument) by + and - of constants, * by constants >= 0, // and cdiv by
 * constants > 0, casts between signed integers and num_programs (a grid
 * extent of the symbol), all of which keep it nondecreasing in the
 * symbol, for the symbol's value s (of kernel k); false when v is not such
 * a value or does not fit. */
static bool sym_value(const IrKernel *k, const Value *v, const Value *sym, int64_t s, int depth, int64_t *out)
{
	int64_t c, x;
	if (v == sym) {
		*out = s;
		return true;
	}
	if (ir_const_value(v, out))
		return true;
	const Inst *d = v->def;
	if (!d || depth > 16)
		return false;
	/* A cast between integers keeps the value where it fits; the extent
	 * of a grid axis (num_programs: nvptx_kgrid.c's K loops) is its grid
	 * expression, of the symbol's argument there (sizes come first). */
	if (d->op == IR_CAST && dtype_is_signed(d->args[0]->type->dtype) && dtype_is_signed(v->type->dtype)) {
		if (!sym_value(k, d->args[0], sym, s, depth + 1, out))
			return false;
		return v->type->dtype == DT_I64 || (v->type->dtype == DT_I32 && *out >= INT32_MIN && *out <= INT32_MAX);
	}
	if (d->op == IR_NUM_PROGRAMS && k->grid && sym->region == k->body && d->ival < k->ngrid) {
		int si = sym->index - k->noperands - k->nscalars;
		const Inst *y = k->grid->last;
		if (si < 0 || si >= k->nsizes || !y || y->op != IR_YIELD ||
		    !sym_value(k, y->args[d->ival], k->grid->args[si], s, depth + 1, out))
			return false;
		return *out >= 0 && *out <= INT32_MAX;
	}
	const Value *cx = ir_cdiv_of(v, &c);
	if (cx) {
		if (!sym_value(k, cx, sym, s, depth + 1, &x) || !ck_add(x, c - 1, &x))
			return false;
		*out = floor_div(x, c);
		return true;
	}
	if (d->nargs != 2 || !(d->op == IR_ADD || d->op == IR_SUB || d->op == IR_MUL || d->op == IR_FLOORDIV))
		return false;
	int var = ir_const_value(d->args[1], &c) ? 0 : 1; /* the operand that is not the constant */
	if (var == 1 && (d->op == IR_SUB || d->op == IR_FLOORDIV || !ir_const_value(d->args[0], &c)))
		return false;
	if (!sym_value(k, d->args[var], sym, s, depth + 1, &x))
		return false;
	switch (d->op) {
	case IR_ADD: return ck_add(x, c, out);
	case IR_SUB: return c != INT64_MIN && ck_add(x, -c, out);
	case IR_MUL: return c >= 0 && ck_mul(x, c, out);
	default: /* IR_FLOORDIV */
		if (c <= 0)
			return false;
		*out = floor_div(x, c);
		return true;
	}
}

/* Whether a loop from `start` to `end` (step 1) runs few enough
 * iterations for three CTAs (none counts). */
static bool few_enough(int64_t start, int64_t end)
{
	int64_t trips;
	return ck_add(end, -start, &trips) && trips <= SCHED_SQUARE_TRIPS;
}

/* Few-trips variants: a K loop over whole arrays (`for kk in range(k //
 * BK)`) has a run-time trip count, so the rules above for short loops
 * cannot see it, and its pipeline took two warpgroups, 6 stages and one
 * CTA an SM at any K.  Where short_square would hold were the loop known
 * to run at most SCHED_SQUARE_TRIPS iterations, and give the CTA fewer
 * warps (one warpgroup: three CTAs an SM), the entry gets a variant
 * that assumes so (Nv.few_loop), and the stub launches it when the size
 * symbol the trip count follows says the loop is that short: its start
 * and step constant (step 1), its end of that symbol as sym_value reads
 * it (also as nvptx_reblock.c rewrites it for slices of 64).  H200,
 * 128 x 128 blocks on 4 warps, BK 32 to 128, f16 and bf16
 * (bench/RESULTS.md, twenty-fourth session): K 256 1.31-1.47x, K 512
 * 1.16-1.22x, K 1024 1.07-1.10x; longer loops keep the entry's schedule. */
const Inst *nv_sched_few_trips(Nv *nv, const IrKernel *k, int *size, int64_t *most)
{
	for (const Inst *i = k->body->first; i; i = i->next) {
		int64_t start, step, e;
		if (i->op != IR_FOR || nv_loop_trips(nv, i) >= 0 || !ir_const_value(i->args[0], &start) ||
		    !ir_const_value(i->args[2], &step) || step != 1 || start == INT64_MIN)
			continue;
		for (int s = 0; s < k->nsizes; s++) {
			const Value *sym = k->body->args[k->noperands + k->nscalars + s];
			/* The loop is short at s = 0 and its end nondecreasing in s:
			 * the largest s with end - start <= T, by bisection. */
			int64_t lo = 0, hi = INT64_C(1) << 40;
			if (!sym_value(k, i->args[1], sym, lo, 0, &e) || !few_enough(start, e) ||
			    (sym_value(k, i->args[1], sym, hi, 0, &e) && few_enough(start, e)))
				continue;
			while (hi - lo > 1) {
				int64_t mid = lo + (hi - lo) / 2;
				if (sym_value(k, i->args[1], sym, mid, 0, &e) && few_enough(start, e))
					lo = mid;
				else
					hi = mid;
			}
			int many = nv_sched_warps(nv, k);
			nv->few_loop = i;
			bool few = short_square(nv, i) && nv_sched_warps(nv, k) < many;
			nv->few_loop = NULL;
			if (!few)
				break;
			*size = s;
			*most = lo;
			return i;
		}
	}
	return NULL;
}

/* CTAs of `threads` threads with `acc` accumulators each that the
 * registers of an SM hold (1 or 2; 3 for a short loop's 128 x 128 block
 * on one warpgroup, `three`: SCHED_SHORT_CTAS). */
static int ctas_per_sm(int threads, int64_t acc, bool three)
{
	if (three && threads == 128 && acc == SCHED_MAX_ACC &&
	    SCHED_SHORT_CTAS * (int64_t)threads * (acc + SCHED_SHORT_OTHER_REGS) <= SM_REGS)
		return SCHED_SHORT_CTAS;
	int64_t n = SM_REGS / ((int64_t)threads * (acc + SCHED_OTHER_REGS));
	return n < 1 ? 1 : n > 2 ? 2 : (int)n;
}

int nv_sched_stages(NvFn *f, const Inst *d, uint64_t bytes, uint64_t avail, uint64_t used, int64_t chain_acc,
                    int64_t trips)
{
	int hint = f->k->num_stages;
	if (f->nv->hint_stages)
		return hint;
	int threads = 32 << f->plan->lc->warpbits;
	int64_t acc = type_numel(d->results[0]->type) / threads;
	/* A loop of dots whose accumulators leave room in 128 registers takes
	 * two CTAs an SM as soon as 2 stages fit: on one warpgroup the other
	 * CTA's is the partner that runs its dots during this one's softmax,
	 * and one CTA's start and end (6 us of a 60 us attention program at
	 * d128) overlap the other's loop.  H200, attention at seq 4096
	 * (bench/RESULTS.md, twentieth session): d128 full 579 -> 622
	 * TFLOP/s, causal 501 -> 571, d96 444 -> 543, d64 with k blocks of
	 * 128 419 -> 502; 64-row q blocks at d128 394 -> 526. */
	bool chain = chain_acc > 0 && chain_acc <= SCHED_CHAIN_SHARED_ACC;
	int shared = chain ? SCHED_SHARED_CHAIN_STAGES : SCHED_SHARED_STAGES;
	/* A buffer past the trip count would never be filled: a loop of 2
	 * iterations (K 128 in BK 64) took 6 buffers and one CTA an SM, and
	 * ran 1.04-1.50x faster with 2 buffers and two CTAs (H200, the same
	 * session; 128 x 128, 128 x 256 and 64 x 128 blocks).  Its every
	 * iteration buffered, the SM is shared. */
	if (trips >= 2 && trips < shared)
		shared = (int)trips;
	if (trips >= 2 && trips <= SCHED_SHORT_TRIPS && shared > SCHED_SHORT_SHARED_STAGES)
		shared = SCHED_SHORT_SHARED_STAGES;
	int s = 0, ctas;
	bool short_loop = trips >= 2 && trips <= SCHED_SHORT_TRIPS;
	bool three = trips >= 2 && square_trips(trips) && chain_acc == 0 && square128(d);
	for (ctas = chain ? 2 : ctas_per_sm(threads, acc, three); ctas >= 1; ctas--) {
		uint64_t budget = SM_SMEM / (uint64_t)ctas - CTA_SMEM_RESERVED - SCHED_TEMP_RESERVE;
		/* There the CTA's other shared memory (q resident) must fit the
		 * half too.  Elsewhere the budget stays as measured (counted
		 * there too, attention at head dim 96 on one CTA an SM took 6
		 * stages instead of 3 and ran causal 1.8 % slower; H200,
		 * twentieth session, before this rule made it two CTAs). */
		if (chain)
			budget = budget > used ? budget - used : 0;
		if (budget > avail)
			budget = avail;
		uint64_t n = budget / bytes, most = ctas > 2 ? SCHED_SHORT_CTAS_STAGES
		                                  : ctas > 1 ? SCHED_MAX_STAGES : SCHED_MAX_STAGES_ALONE;
		if (trips >= 2 && (uint64_t)trips < most)
			most = (uint64_t)trips;
		s = n > most ? (int)most : (int)n;
		if (ctas == 1 || s >= (ctas > 2 ? (int)most : shared))
			break;
	}
	if (ctas > 1)
		f->sched_shared = true;
	if (ctas > 1 && chain)
		f->chain_shared = true;
	/* A short loop, and three CTAs, keep the SM shared rather than take
	 * a larger num_stages (which would leave room for one CTA: BK 32 with
	 * num_stages = 4 on three CTAs at K 1024 ran 0.82-0.84x so). */
	if (trips >= 2 && hint > trips)
		hint = (int)trips;
	bool short_shared = ctas > 2 || (ctas > 1 && short_loop);
	if (hint > s && (uint64_t)hint * bytes <= avail && !short_shared)
		s = hint;
	if (s > hint)
		f->sched_raised = true;
	return s;
}

bool nv_sched_tma(uint64_t bytes)
{
	return bytes >= SCHED_TMA_MIN_BYTES;
}

/* Whether instruction i (or one in its regions) reads a value marked in dep. */
static bool reads_marked(const Inst *i, const bool *dep, int nvalues)
{
	for (int a = 0; a < i->nargs; a++)
		if (i->args[a]->id <= nvalues && dep[i->args[a]->id])
			return true;
	for (int r = 0; r < i->nregions; r++)
		for (const Inst *j = i->regions[r]->first; j; j = j->next)
			if (reads_marked(j, dep, nvalues))
				return true;
	return false;
}

/* Whether index map `map` computes some block index from value `v`
 * (directly or through other values); dep: scratch, one flag per value id. */
static bool map_reads(const Region *map, const Value *v, bool *dep, int nvalues)
{
	dep[v->id] = true;
	for (const Inst *i = map->first; i; i = i->next) {
		if (!reads_marked(i, dep, nvalues))
			continue;
		if (i->op == IR_YIELD)
			return true;
		for (int x = 0; x < i->nresults; x++)
			if (i->results[x]->id <= nvalues)
				dep[i->results[x]->id] = true;
	}
	return false;
}

/* The parallel axis along which programs share most of the bytes of the
 * input blocks each reads (their index maps do not read the axis), when
 * that is at least half of those bytes and the last two parallel axes
 * par[0], par[1] do not both share some (that is the grouped order's
 * case), with those bytes in *bytes_out; -1 otherwise, and when an input has
 * no block spec (what its programs read is not known here). */
static int shared_axis(const IrKernel *k, const int *par, int np, Arena *a, uint64_t *bytes_out)
{
	uint64_t total = 0, *shared = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *shared);
	bool *dep = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *dep);
	for (int o = 0; o < k->noperands; o++) {
		const IrOperand *op = k->operands[o];
		if (op->mode != PM_IN && op->mode != PM_INOUT)
			continue;
		if (!op->has_spec)
			return -1;
		uint64_t bytes = (uint64_t)dtype_bytes(op->array->dtype);
		for (int d = 0; d < op->array->rank; d++)
			bytes *= (uint64_t)op->block[d];
		total += bytes;
		for (int g = 0; g < k->ngrid; g++) {
			memset(dep, 0, (size_t)(k->nvalues + 1) * sizeof *dep);
			if (!map_reads(op->index_map, op->index_map->args[g], dep, k->nvalues))
				shared[g] += bytes;
		}
	}
	if (np == 2 && shared[par[0]] && shared[par[1]])
		return -1;
	int best = -1;
	for (int g = 0; g < k->ngrid; g++)
		if (!(k->semantics && k->semantics[g] == AXIS_ARBITRARY) && (best < 0 || shared[g] > shared[best]))
			best = g;
	if (best < 0 || !shared[best] || 2 * shared[best] < total)
		return -1;
	*bytes_out = shared[best];
	return best;
}

/* GROW_*: how a scalar changes as program_id(axis) grows, the other
 * program ids fixed. */
enum { GROW_NONE, GROW_UP, GROW_DOWN, GROW_UNKNOWN };

static int grow_join(int a, int b)
{
	return a == GROW_NONE ? b : b == GROW_NONE || a == b ? a : GROW_UNKNOWN;
}

static int grow_neg(int a)
{
	return a == GROW_UP ? GROW_DOWN : a == GROW_DOWN ? GROW_UP : a;
}

/* The sign of v when it is an integer constant (0 when not one). */
static int const_sign(const Value *v)
{
	int64_t c;
	if (!dtype_is_int(v->type->dtype) || !ir_const_value(v, &c))
		return 0;
	return c > 0 ? 1 : c < 0 ? -1 : 0;
}

/* How integer scalar v grows with program_id(axis) (GROW_*), through
 * sums, products and quotients by constants, minimum and maximum, and
 * the arms of a select (cdiv lowers to one whose arms differ by 1: the
 * condition is not looked at, so this is an estimate, good for the order
 * of programs and nothing else).  body: the kernel's region, whose
 * arguments (sizes, scalars) are the same in every program. */
static int grow(const Value *v, int axis, const Region *body, int depth)
{
	const Inst *d = v->def;
	if (!d)
		return v->region == body ? GROW_NONE : GROW_UNKNOWN;
	if (depth > 32 || v->type->rank != 0)
		return GROW_UNKNOWN;
	switch (d->op) {
	case IR_CONST:
	case IR_NUM_PROGRAMS: return GROW_NONE;
	case IR_PROGRAM_ID: return d->ival == axis ? GROW_UP : GROW_NONE;
	case IR_CAST: return dtype_is_int(v->type->dtype) ? grow(d->args[0], axis, body, depth + 1) : GROW_UNKNOWN;
	case IR_NEG: return grow_neg(grow(d->args[0], axis, body, depth + 1));
	case IR_ADD:
	case IR_MIN:
	case IR_MAX:
		return grow_join(grow(d->args[0], axis, body, depth + 1), grow(d->args[1], axis, body, depth + 1));
	case IR_SUB:
		return grow_join(grow(d->args[0], axis, body, depth + 1), grow_neg(grow(d->args[1], axis, body, depth + 1)));
	case IR_SELECT:
		return grow_join(grow(d->args[1], axis, body, depth + 1), grow(d->args[2], axis, body, depth + 1));
	case IR_MUL:
	case IR_DIV:
	case IR_FLOORDIV: {
		int x = d->op == IR_MUL && const_sign(d->args[0]) ? 1 : 0, c = const_sign(d->args[1 - x]);
		if (!c)
			return GROW_UNKNOWN;
		int g = grow(d->args[x], axis, body, depth + 1);
		return c > 0 ? g : grow_neg(g);
	}
	default: return GROW_UNKNOWN;
	}
}

/* Whether some loop of region r runs more iterations the larger
 * program_id(axis) is (a constant positive step; its start and bound
 * grow, GROW_*), and none fewer. */
static int loops_grow(const Region *r, int axis, const Region *body)
{
	int g = GROW_NONE;
	for (const Inst *i = r->first; i && g != GROW_UNKNOWN; i = i->next) {
		if (i->op == IR_FOR) {
			int t = const_sign(i->args[2]) > 0 ? grow_join(grow(i->args[1], axis, body, 0),
			                                               grow_neg(grow(i->args[0], axis, body, 0)))
			                                   : GROW_UNKNOWN;
			/* A loop whose trip count does not depend on the axis weighs the same in every program. */
			g = grow_join(g, t == GROW_UNKNOWN ? GROW_NONE : t);
		}
		for (int k = 0; k < i->nregions; k++)
			g = grow_join(g, loops_grow(i->regions[k], axis, body));
	}
	return g;
}

/* The order of programs whose loops run longer the larger program_id(axis)
 * (causal attention: the q block), where axis is the shared one: the
 * other parallel programs in sections of `per` (together reading about
 * SCHED_L2_SHARED bytes of the shared blocks), and in a section the
 * longest programs of all first, axis from its last program down (the
 * longest processing time first: the programs left at the end are the
 * short ones, so the SMs finish together).  lin: blockIdx.x; sets
 * f->pid[axis] and returns the index over the other parallel axes. */
static LLVMValueRef heavy_first(NvFn *f, LLVMValueRef lin, int axis, uint64_t shared_bytes)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const IrKernel *k = f->k;
	int64_t per = 1;
	while (per < SCHED_MAX_SECTION && (uint64_t)per * 2 * shared_bytes <= SCHED_L2_SHARED)
		per *= 2;
	/* In i64: n * per may pass 2^32 where n * rest (gridDim.x) does not. */
	LLVMValueRef rest = cg_i64(g, 1), sec = cg_i64(g, per), l = LLVMBuildZExt(b, lin, g->t_i64, "");
	LLVMValueRef n = LLVMBuildZExt(b, f->nprog[axis], g->t_i64, "");
	for (int d = 0; d < k->ngrid; d++)
		if (d != axis && !(k->semantics && k->semantics[d] == AXIS_ARBITRARY))
			rest = LLVMBuildMul(b, rest, LLVMBuildZExt(b, f->nprog[d], g->t_i64, ""), "");
	LLVMValueRef span = LLVMBuildMul(b, n, sec, "");
	LLVMValueRef x = LLVMBuildURem(b, l, span, "");
	LLVMValueRef first = LLVMBuildMul(b, LLVMBuildUDiv(b, l, span, ""), sec, "");
	LLVMValueRef left = LLVMBuildSub(b, rest, first, "");
	LLVMValueRef gs = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, left, sec, ""), left, sec, "section");
	LLVMValueRef up = LLVMBuildUDiv(b, x, gs, "");
	f->pid[axis] = LLVMBuildTrunc(b, LLVMBuildSub(b, LLVMBuildSub(b, n, cg_i64(g, 1), ""), up, ""), g->t_i32, "pid");
	return LLVMBuildTrunc(b, LLVMBuildAdd(b, first, LLVMBuildURem(b, x, gs, ""), ""), g->t_i32, "");
}

/* How the programs of kernel k are ordered: its last two parallel axes
 * (par[0] the last, *np of them), whether it has tensor-core dots, and
 * the shared axis (shared_axis: -1 none; its bytes in *sbytes). */
typedef struct Order {
	int par[2], np;
	bool mma;
	int inner;
	uint64_t sbytes;
} Order;

static Order order_of(NvFn *f)
{
	const IrKernel *k = f->k;
	Order o = {{-1, -1}, 0, false, -1, 0};
	for (int d = k->ngrid - 1; d >= 0 && o.np < 2; d--)
		if (!(k->semantics && k->semantics[d] == AXIS_ARBITRARY))
			o.par[o.np++] = d;
	for (int v = 0; v <= k->nvalues && !o.mma; v++)
		o.mma = f->plan->mma[v];
	o.inner = o.mma ? shared_axis(k, o.par, o.np, f->nv->cc->arena, &o.sbytes) : -1;
	return o;
}

int nv_sched_pair_axis(NvFn *f)
{
	if (!f->nv->cluster || !f->persistent)
		return -1;
	Order o = order_of(f);
	return o.inner < 0 && o.mma && o.np == 2 ? o.par[1] : -1;
}

void nv_sched_program_ids(NvFn *f, LLVMValueRef lin)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const IrKernel *k = f->k;
	Order o = order_of(f);
	const int *par = o.par, inner = o.inner;
	int skip = -1;
	if (inner >= 0 && loops_grow(k->body, inner, k->body) == GROW_UP) {
		lin = heavy_first(f, lin, inner, o.sbytes);
	} else if (inner >= 0) {
		f->pid[inner] = LLVMBuildURem(b, lin, f->nprog[inner], "pid");
		lin = LLVMBuildUDiv(b, lin, f->nprog[inner], "");
	} else if (o.mma && o.np == 2) {
		/* par[1] (rows) and par[0] (columns) from the lowest part of lin;
		 * in 2-CTA clusters lin counts pairs of rows, rows 2r and 2r + 1
		 * on the cluster's CTAs (its rank), in groups of as many rows. */
		bool pairs = f->nv->pair_axis == par[1];
		int64_t group = pairs ? SCHED_GROUP / 2 : SCHED_GROUP;
		LLVMValueRef rows = LLVMBuildZExt(b, f->nprog[par[1]], g->t_i64, "");
		LLVMValueRef nr = pairs ? LLVMBuildLShr(b, LLVMBuildAdd(b, rows, cg_i64(g, 1), ""), cg_i64(g, 1), "") : rows;
		LLVMValueRef nc = LLVMBuildZExt(b, f->nprog[par[0]], g->t_i64, "");
		LLVMValueRef l = LLVMBuildZExt(b, lin, g->t_i64, "");
		LLVMValueRef plane = LLVMBuildMul(b, nr, nc, "");
		LLVMValueRef x = LLVMBuildURem(b, l, plane, "");
		LLVMValueRef per = LLVMBuildMul(b, nc, cg_i64(g, group), "");
		LLVMValueRef first = LLVMBuildMul(b, LLVMBuildUDiv(b, x, per, ""), cg_i64(g, group), "");
		LLVMValueRef left = LLVMBuildSub(b, nr, first, "");
		LLVMValueRef gs = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, left, cg_i64(g, group), ""), left,
		                                  cg_i64(g, group), "group");
		LLVMValueRef in = LLVMBuildURem(b, x, per, "");
		LLVMValueRef row = LLVMBuildAdd(b, first, LLVMBuildURem(b, in, gs, ""), "");
		if (pairs) {
			LLVMValueRef two = LLVMBuildShl(b, row, cg_i64(g, 1), "");
			f->paired = LLVMBuildICmp(b, LLVMIntULT, LLVMBuildAdd(b, two, cg_i64(g, 1), ""), rows, "paired");
			row = LLVMBuildAdd(b, two, LLVMBuildZExt(b, f->rank, g->t_i64, ""), "");
		}
		f->pid[par[1]] = LLVMBuildTrunc(b, row, g->t_i32, "pid");
		f->pid[par[0]] = LLVMBuildTrunc(b, LLVMBuildUDiv(b, in, gs, ""), g->t_i32, "pid");
		lin = LLVMBuildTrunc(b, LLVMBuildUDiv(b, l, plane, ""), g->t_i32, "");
		skip = par[1];
	}
	for (int d = skip >= 0 ? skip - 1 : k->ngrid - 1; d >= 0; d--) {
		if ((k->semantics && k->semantics[d] == AXIS_ARBITRARY) || d == inner)
			continue;
		f->pid[d] = LLVMBuildURem(b, lin, f->nprog[d], "pid");
		lin = LLVMBuildUDiv(b, lin, f->nprog[d], "");
	}
	/* A CTA of merged programs runs programs r p .. r p + r - 1 (nvptx_merge.c). */
	for (int d = 0; f->nv->merge && d < k->ngrid; d++)
		if (f->nv->merge[d] > 1)
			f->pid[d] = LLVMBuildMul(b, f->pid[d], cg_i32(g, f->nv->merge[d]), "pid.merged");
}

bool nv_sched_persistent(const Nv *nv, const IrKernel *k)
{
	return nv->persistent && nv_has_mma_dot(k->body);
}
