/* nvptx_pipe.c - software-pipelined loops on the GPU.
 *
 * A FOR loop (num_stages >= 2) whose body has dots fed by global loads
 * copies those loads with cp.async into num_stages buffers in shared
 * memory, `ahead` iterations before the one that reads them: the prologue
 * issues the first iterations before the loop, the first dot of the body
 * waits for its own copies and issues the next ones (evaluating the load
 * indices for that later iteration with the instruction emitter), and the
 * dots (nvptx_dot.c) read their operands from the stages given here.
 * wgmma pipelines may keep an iteration's group in flight into the next
 * (acc_only_carried); the epilogue then waits for it.  Chained wgmma dots
 * (attention) synchronise the copies with mbarriers instead of a CTA
 * barrier per iteration (plan_mbar for cp.async; with the copy engine,
 * plan_turns, where the two warpgroups also take turns at their dots). */
#include "nvptx_dot.h"

#include <string.h>

/* Shared memory all the buffers of one pipelined loop may take: the least
 * any target allows, less 32 KiB for the scratch and conversion areas
 * (sm_80: 131 KiB, sm_86/89: 67 KiB, sm_90: 195 KiB), at least 64 KiB. */
uint64_t nv_pipe_cap(NvFn *f)
{
	uint64_t cap = nv_smem_cap(f->nv);
	cap = cap > 96 * 1024 ? cap - 32 * 1024 : 64 * 1024;
	return cap < 64 * 1024 ? 64 * 1024 : cap;
}

/* Whether region r lies inside region outer (or is it). */
static bool region_within(const Region *r, const Region *outer)
{
	for (; r; r = r->owner ? r->owner->parent : NULL)
		if (r == outer)
			return true;
	return false;
}

/* Whether v is a pure scalar function of the loop's induction variable and
 * of values from before the loop: computable for any iteration. */
static bool iv_computable(const Inst *loop, const Value *v, int depth)
{
	const Region *body = loop->regions[0];
	if (depth > 32)
		return false;
	if (!v->def)
		return v->region == body ? v->index == 0 : !region_within(v->region, body);
	const Inst *d = v->def;
	if (!region_within(d->parent, body))
		return true;
	if (d->parent != body || !nv_pure_scalar(d))
		return false;
	for (int j = 0; j < d->nargs; j++)
		if (!iv_computable(loop, d->args[j], depth + 1))
			return false;
	return true;
}

/* The load the pipeline copies for operand k of dot d, or NULL: B may be
 * the load under a transpose (copied K-major). */
static const Inst *pipe_load(NvFn *f, const Inst *d, int k)
{
	const Value *res = d->results[0];
	if (k == 0)
		return f->plan->dot_a[res->id];
	return f->plan->dot_b[res->id] ? f->plan->dot_b[res->id] : nv_dot_trans_b_load(f->plan, d);
}

/* Whether load L reads a 2-D tile of a global, read-only operand, unmasked:
 * what copying it ahead (or once, before the loop) may read. */
static bool copyable_load(NvFn *f, const Inst *L)
{
	const GRef *ref = f->refs[L->args[0]->id];
	return ref && ref->as == 1 && ref->readonly && !L->has_mask && !L->has_other && L->results[0]->type->rank == 2 &&
	       !ir_access_gathers(L);
}

/* The operand loads of dot d when the pipeline can copy them: global,
 * read-only, unmasked 2-D loads whose indices are computable for any
 * iteration, in 16-byte vectors.  A may instead be wgmma's register A
 * (ld[0] NULL): only B is copied.  (An mma.sync dot's A in registers,
 * stored into its buffer every iteration, was tried for decode attention:
 * the buffers of both dots took one CTA an SM instead of two, and the
 * step ran 4-15 % slower on the H200; bench/RESULTS.md, 2026-11-29.) */
static bool pipe_loads(NvFn *f, const Inst *loop, const Inst *d, const Inst **ld)
{
	LayoutPlan *P = f->plan;
	ld[0] = pipe_load(f, d, 0);
	ld[1] = pipe_load(f, d, 1);
	for (int k = 0; k < 2; k++) {
		const Inst *L = ld[k];
		if (!L && k == 0 && nv_wg_a_regs_planned(f, d))
			continue;
		if (!L)
			return false;
		if (!copyable_load(f, L))
			return false;
		const GRef *ref = f->refs[L->args[0]->id];
		const Type *t = L->results[0]->type;
		for (int j = 1; j < L->nargs; j++)
			if (!iv_computable(loop, L->args[j], 0))
				return false;
		NvAccess probe = {.i = L, .ref = (GRef *)ref, .L = P->of[L->results[0]->id]};
		int es = nv_smem_elem(t->dtype);
		bool uniform;
		if (lay_contig(probe.L) * es < 16 || nv_access_width(f, &probe, &uniform) * es != 16)
			return false;
	}
	return true;
}

/* Whether dot d's accumulators only go round the loop body: they start
 * from a carried value and end in the body's yield, nothing else reads
 * them.  Only then may its wgmma group stay in flight into the next
 * iteration; another reader (attention's softmax of s, the rescale of
 * acc) makes ptxas serialize every wgmma of the loop (info C7514). */
static bool acc_only_carried(NvFn *f, const Region *body, const Inst *d)
{
	const Inst *add = nv_dot_fused_add(f, d);
	const Value *out = add ? add->results[0] : d->results[0];
	const Value *in = add ? add->args[add->args[0] == d->results[0] ? 1 : 0] : d->nargs == 3 ? d->args[2] : NULL;
	const Inst *y = body->last;
	if (!in || in->def || in->region != body || f->plan->nuses[in->id] != 1 || f->plan->nuses[out->id] != 1 ||
	    !y || y->op != IR_YIELD)
		return false;
	for (int j = 0; j < y->nargs; j++)
		if (y->args[j] == out)
			return true;
	return false;
}

/* The argument of loop body `body` that carries out into the next
 * iteration (out yielded), or NULL. */
static const Value *carried_arg(const Region *body, const Value *out)
{
	const Inst *y = body->last;
	for (int j = 0; y && y->op == IR_YIELD && j < y->nargs; j++)
		if (y->args[j] == out && 1 + j < body->nargs)
			return body->args[1 + j];
	return NULL;
}

/* The accumulator a wgmma dot d of the body (not its first dot) carries
 * into the next iteration, its result (or fused add) read by nothing
 * else, when nothing of the body up to and including the first dot reads
 * it (attention's acc += p v, rescaled only after the next q kᵀ): d's
 * group may stay in flight until the first dot's wait of the next
 * iteration, which completes it, and nv_pipe_fence_carried then gives
 * the carried registers to their readers.  NULL otherwise. */
static const Value *acc_read_late(NvFn *f, const Region *body, const Inst *d, const Inst *first)
{
	const Inst *add = nv_dot_fused_add(f, d);
	const Value *out = add ? add->results[0] : d->results[0];
	const Value *arg = carried_arg(body, out);
	if (d == first || !arg || f->plan->nuses[out->id] != 1)
		return NULL;
	for (const Inst *i = body->first; i && i != first->next; i = i->next)
		if (ir_inst_reads(i, arg))
			return NULL;
	return arg;
}

/* The extent e of an operand of dot d in its stage: as it is on the
 * tensor cores (nv_stage_slice copies no padding there), padded to a power
 * of two for FMA (whose loops read the padding). */
static int64_t stage_extent(NvFn *f, const Inst *d, int64_t e)
{
	return f->plan->mma[d->results[0]->id] ? e : INT64_C(1) << lay_log2_ceil(e);
}

/* Bytes of one buffer (both operands) of dot d: a is [M, K], b [K, N]
 * (stage_extent). */
static uint64_t pipe_a_bytes(NvFn *f, const Inst *d)
{
	if (nv_wg_a_regs_planned(f, d))
		return 0;
	const Type *a = d->args[0]->type;
	int es = nv_smem_elem(a->dtype);
	uint64_t x = (uint64_t)(es * stage_extent(f, d, a->dims[0]) * stage_extent(f, d, a->dims[1]));
	return nv_align_up(x, buf_align(f));
}

static uint64_t pipe_bytes(NvFn *f, const Inst *d)
{
	const Type *b = d->args[1]->type;
	int es = nv_smem_elem(b->dtype);
	uint64_t y = (uint64_t)(es * stage_extent(f, d, b->dims[0]) * stage_extent(f, d, b->dims[1]));
	return nv_align_up(pipe_a_bytes(f, d) + y, buf_align(f));
}

/* Bytes of a tile of type t in shared memory (its memory form). */
static uint64_t tile_bytes(const Type *t)
{
	return (uint64_t)type_numel(t) * (uint64_t)nv_smem_elem(t->dtype);
}

/* Whether wgmma dot d in loop body `body` reads a register A loaded
 * before the loop (attention's q): the same registers every iteration. */
static bool a_before_body(NvFn *f, const Region *body, const Inst *d)
{
	const Value *a = d->args[0];
	return nv_wg_a_regs_planned(f, d) && a->def && !region_within(a->def->parent, body);
}

/* Whether ptxas compiles a wgmma register A that stays live across a
 * loop's iterations (loaded before the loop: attention's q) correctly.
 * ptxas of CUDA 13.0 may give its registers to other values of the loop
 * (p, the next dot's A), so that the next iteration's dot reads those:
 * session 12 found it in attention kernels of 2-D arrays under the
 * warpgroups' turns and cp.async mbarriers, session 19 in the backward
 * sample's dq loop (blocks of 64, one warpgroup, in step), where an
 * unrelated change to the kernel's bounds checks made ptxas 13.0 reuse
 * q's registers (dq 0.88 off; the same PTX through ptxas 13.5 ran right
 * on the H200).  NVIDIA lists the fix among CUDA 13.3's. */
static bool invariant_a_safe(NvFn *f)
{
	return nv_ptxas_release(f->nv) >= 1303;
}

/* The innermost loop body around instruction i, or NULL. */
static const Region *loop_body_of(const Inst *i)
{
	for (const Region *r = i->parent; r; r = r->owner ? r->owner->parent : NULL)
		if (r->owner && (r->owner->op == IR_FOR || r->owner->op == IR_WHILE))
			return r;
	return NULL;
}

bool nv_wg_a_invariant_unsafe(NvFn *f, const Inst *d)
{
	const Region *body = loop_body_of(d);
	return body && a_before_body(f, body, d) && !invariant_a_safe(f);
}

/* Whether the A of dot d that a_before_body finds is kept in shared
 * memory instead (LoopPipe.resident): whenever ptxas could miscompile it
 * in registers (invariant_a_safe).  wgmma then reads A as a
 * shared-memory operand, stored once before the loop: copied by the copy
 * engine with the first iteration's tiles, else from its registers.
 * Chained dots on two warpgroups (plan_turns) may then run apart, which is
 * also why this began (session 13): turns overlap one warpgroup's softmax
 * with the other's dots, whose length grows with their K (attention's head
 * dimension): with q in registers they gained at most 1 % at d64 and d96
 * and 3-7 % at d128 (session 12), while q in shared memory costs 3 % in
 * step at d128 (a stage fewer fits, and wgmma reads q every iteration).
 * On the H200 (b 4, h 16, seq 4096, f16; bench/RESULTS.md, session 13) q
 * in shared memory with turns took d128 full from 555-562 to 576-583
 * TFLOP/s and causal from 467-475 to 496-500, d192 from 575 to 613-615. */
static bool plan_resident(NvFn *f, const Inst *loop, const Inst *d)
{
	return a_before_body(f, loop->regions[0], d) && !invariant_a_safe(f);
}

/* Bytes of dot d's resident A (plan_resident), 0 when none. */
static uint64_t resident_bytes(NvFn *f, const Inst *loop, const Inst *d)
{
	if (!plan_resident(f, loop, d))
		return 0;
	return nv_align_up(tile_bytes(d->args[0]->type), buf_align(f));
}

/* Bytes the copy engine writes per iteration (every box whole). */
static uint64_t tma_bytes(NvFn *f, const LoopPipe *p)
{
	uint64_t n = 0;
	for (int x = 0; x < p->ndots; x++)
		for (int k = 0; k < 2; k++) {
			const Inst *L = pipe_load(f, p->dots[x], k);
			if (L)
				n += tile_bytes(L->results[0]->type);
		}
	return n;
}

/* Places n mbarriers of p after its buffers: they live as long as the
 * buffers do (a pipeline nested inside starts aligned again after them,
 * one after the loop may reuse them: nv_pipe_plan). */
static void take_bars(NvFn *f, LoopPipe *p, int n)
{
	p->bars = f->smem_pipe_live;
	f->smem_pipe_live += (uint64_t)n * 8;
	if (f->smem_pipe_live > f->smem_pipe_bytes)
		f->smem_pipe_bytes = f->smem_pipe_live;
}

/* Iterations a pipelined loop runs at least for the CTAs of a pair to run
 * it coupled (nv_pipe_prologue). */
#define PIPE_COUPLE_TRIPS 32

/* Whether scalar v is the same in every program of the grid axis `axis`
 * (the others fixed) and in every iteration of `loop` but through its
 * induction variable: built without that program id, effects or the
 * loop's carried values. */
static bool axis_free(const NvFn *f, const Value *v, int axis, const Inst *loop, int depth)
{
	const Inst *d = v->def;
	if (depth > 32)
		return false;
	if (!d) /* the kernel's operands, scalars and sizes; the loop's iv */
		return v->region == f->k->body || (v->region == loop->regions[0] && v->index == 0);
	if (d->op == IR_PROGRAM_ID)
		return d->ival != axis;
	if (d->nregions || (op_info[d->op].flags & F_EFFECT))
		return false;
	for (int j = 0; j < d->nargs; j++)
		if (!axis_free(f, d->args[j], axis, loop, depth + 1))
			return false;
	return true;
}

/* 2-CTA clusters (issue 13): in a persistent entry running its programs
 * in the grouped order, neighbouring rows of blocks read the same column
 * block (a matmul's B).  When p is the loop of one wgmma dot at the top of
 * the kernel's body, with a trip count and one operand's tile (maps t)
 * the same for both rows, the rows run in pairs on the two CTAs of a
 * cluster (nv_sched_program_ids), and each CTA copies half of that tile's
 * rows into both CTAs' stages (.multicast::cluster): the L2 serves it
 * once.  The CTAs then release each buffer to both (nv_pipe_release).
 * Only for a tile of lines under 128 bytes (96 16-bit columns: three
 * 64-byte boxes), whose copies take the L2 twice the requests a byte of
 * 128-byte lines does: on the H200, 128 x 96 blocks ran L2-bound at
 * 0.67-0.78x cuBLAS, and clusters made them 1.03x faster (geomean of 24
 * rows: BlockSpec and ds forms, 4 shapes, f16 and bf16; 0.93-1.14x in
 * two calls), while 128 x 128, 128 x 192 and 128 x 256 blocks (128-byte
 * lines) ran 0.90-0.98x as fast (bench/RESULTS.md, session 11).  Records
 * the candidate axis in f->pair_cand and the half-box map as wanted; sets
 * p->mcast when the entry is emitted in clusters. */
static void plan_cluster(NvFn *f, LoopPipe *p, const GpuTma *t)
{
	int axis = nv_sched_pair_axis(f);
	const Inst *loop = p->loop;
	if (axis < 0 || p->ndots != 1 || loop->parent != f->k->body || p->ahead < 2)
		return;
	for (int j = 0; j < 3; j++)
		if (!axis_free(f, loop->args[j], axis, loop, 0))
			return;
	for (int k = 0; k < 2; k++) {
		const Inst *L = pipe_load(f, p->dots[0], k);
		bool shared = L && t[k].box_rows % 16 == 0 && t[k].swizzle < 128;
		for (int j = 1; shared && j < L->nargs; j++)
			shared = axis_free(f, L->args[j], axis, loop, 0);
		if (!shared)
			continue;
		GpuTma half = t[k];
		half.box_rows /= 2;
		int slot = nv_tma_slot(f, &half);
		f->pair_cand = axis;
		if (f->nv->pair_axis == axis && slot >= 0) {
			p->mcast = k;
			p->mslot = slot;
		}
		return;
	}
}

/* Whether the warpgroups of chained wgmma dots may run apart, without the
 * CTA barrier of each iteration (plan_mbar, plan_turns): unless
 * --gpu-no-pingpong.  ptxas 13.0's miscompile of a loop-invariant wgmma
 * register A (attention's q), which the turns once waited for ptxas 13.3
 * for (two attention kernels of 2-D arrays, test/gpu-codegen/Inputs/
 * turnsv.pk, came out wrong under turns and cp.async mbarriers alike,
 * session 12), cannot reach them now: with such a ptxas no such A stays in
 * registers (invariant_a_safe, plan_resident). */
static bool apart(const NvFn *f)
{
	return f->nv->apart >= 0;
}

/* Named barriers of the warpgroups' turns (0 is the CTA's): warpgroup w
 * waits at PIPE_TURN_BAR + w. */
#define PIPE_TURN_BAR 1

/* FA3's ping-pong (issue 14): in a copy-engine pipeline of two chained
 * wgmma dots on two warpgroups, each owning its rows of both (attention:
 * q kᵀ, then p v kept in flight into the next iteration), the warpgroups
 * take turns at issuing their dots (nv_pipe_turn), so that one's softmax
 * runs while the other's dots take the tensor cores instead of both doing
 * either at once.  They can only drift apart without the CTA barrier of
 * each iteration: each warp releases the buffer of the previous iteration
 * on its "empty" mbarrier once the first dot's wait has completed that
 * iteration's p v (nv_pipe_release), and the leader's copies into a
 * buffer wait for it.  On the H200 (b 4, h 16, seq 4096, f16): d128 full
 * 558-560 -> 577-579 TFLOP/s, causal 471-472 -> 506-508, d64 unchanged
 * (473-475, 427-430); the releases without the turns were 1-2 % slower
 * (bench/RESULTS.md, session 12, measured with ptxas 13.0, which these
 * kernels happened not to trip: see invariant_a_safe).  A CTA barrier where a
 * warpgroup holds its turn would deadlock: the entry is then emitted
 * again without turns (NvFn.turns_blocked). */
static bool plan_turns(NvFn *f, const LoopPipe *p)
{
	if (p->mcast >= 0 || p->ndots != 2 || p->inflight[0] || !p->late[1] || f->plan->lc->warpbits != 3 ||
	    p->ahead > p->stages - 2)
		return false;
	for (int x = 0; x < p->ndots; x++) {
		const Value *r = p->dots[x]->results[0];
		if (!f->plan->wgmma[r->id] || f->plan->of[r->id]->warp_used != 7u)
			return false;
	}
	return apart(f);
}

/* The copy engine copies p's operands when every one fits it, the schedule
 * takes it (nv_sched_tma) and the entry takes the maps (nv_tma_slot),
 * completing on `stages` mbarriers. */
static void plan_tma(NvFn *f, LoopPipe *p)
{
	p->slot = arena_alloc(nv_arena(f), (size_t)(2 * p->ndots) * sizeof *p->slot);
	GpuTma *t = arena_alloc(nv_arena(f), (size_t)(2 * p->ndots) * sizeof *t);
	for (int x = 0; x < p->ndots; x++) {
		const Inst *d = p->dots[x];
		if (!f->plan->wgmma[d->results[0]->id])
			return;
		for (int k = 0; k < 2; k++) {
			const Inst *L = pipe_load(f, d, k);
			if (L && !nv_tma_fits(f, L, &t[2 * x + k]))
				return;
		}
	}
	if (!nv_sched_tma(tma_bytes(f, p)))
		return;
	plan_cluster(f, p, t);
	bool all = true;
	for (int x = 0; x < p->ndots; x++)
		for (int k = 0; k < 2; k++) {
			p->slot[2 * x + k] = pipe_load(f, p->dots[x], k) ? nv_tma_slot(f, &t[2 * x + k]) : -1;
			all &= !pipe_load(f, p->dots[x], k) || p->slot[2 * x + k] >= 0;
		}
	/* A resident A the copy engine can copy: its map in operand 0's slot
	 * (wanted from the first emission on, as the others). */
	for (int x = 0; x < p->ndots; x++) {
		const Inst *L = p->dots[x]->args[0]->def;
		GpuTma q;
		if (p->resident[x] >= 0 && p->mcast < 0 && L->op == IR_LOAD && copyable_load(f, L) && nv_tma_fits(f, L, &q))
			p->slot[2 * x] = nv_tma_slot(f, &q);
	}
	if (!all) {
		p->mcast = -1;
		return;
	}
	p->turns = plan_turns(f, p);
	take_bars(f, p, p->mcast >= 0 || p->turns ? 2 * p->stages : p->stages);
	p->tma = true;
	f->pipe_chain |= p->ndots >= 2;
}

/* A cp.async pipeline of two or more wgmma dots whose first dot is waited
 * for and whose copies run at most stages - 2 iterations ahead runs
 * without the CTA barrier of each iteration: each thread's copies of a
 * stage complete on the stage's "full" mbarrier
 * (cp.async.mbarrier.arrive.noinc, every thread once a phase), and the
 * consumers wait for it and fence for the async proxy; once the first
 * dot's wait has completed the groups of its warpgroup that read the
 * previous iteration's stage, every thread arrives on that stage's "empty"
 * mbarrier, and copies into a stage wait for it.  The warpgroups then run
 * up to an iteration apart instead of in step, so one's softmax overlaps
 * the other's dots: on the H100 attention at d128 went from 437 to 499
 * TFLOP/s, d64 from 434 to 443; named barriers that made them take turns
 * at the first dot (FA3's ping-pong) were no faster (bench/RESULTS.md,
 * "attn5"). */
static void plan_mbar(NvFn *f, LoopPipe *p)
{
	if (p->tma || !p->wg || p->ndots < 2 || p->ahead > p->stages - 2 || p->inflight[0] || !apart(f))
		return;
	take_bars(f, p, 2 * p->stages);
	p->mbar = true;
	f->pipe_chain = true;
}

/* The buffers, depth and in-flight groups of loop's pipeline, with
 * resident A where plan_resident wants it. */
static LoopPipe *plan_buffers(NvFn *f, const Inst *loop)
{
	int S = f->k->num_stages;
	const Region *body = loop->regions[0];
	int n = 0;
	uint64_t per = 0, res = 0;
	int64_t acc = 0, threads = 32 << f->plan->lc->warpbits;
	const Inst *ld[2], *wd = NULL;
	for (const Inst *d = body->first; d; d = d->next)
		if (d->op == IR_DOT && pipe_loads(f, loop, d, ld)) {
			n++;
			per += pipe_bytes(f, d);
			acc += type_numel(d->results[0]->type) / threads;
			if (!wd && f->plan->wgmma[d->results[0]->id])
				wd = d;
		}
	if (!n)
		return NULL;
	for (const Inst *d = body->first; d; d = d->next)
		if (d->op == IR_DOT && pipe_loads(f, loop, d, ld))
			res += resident_bytes(f, loop, d);
	/* wgmma pipelines: as deep as pkc chooses (nvptx_sched.c). */
	uint64_t used = f->smem_pipe_live + f->smem_scratch + res, cap = nv_pipe_cap(f);
	if (wd)
		S = nv_sched_stages(f, wd, per, cap > used ? cap - used : 0, used, n >= 2 ? acc : 0,
		                    nv_loop_trips(f->nv, loop));
	if (S < 2 || (uint64_t)S * per + res > cap)
		return NULL;
	LoopPipe *p = arena_alloc(nv_arena(f), sizeof *p);
	p->loop = loop;
	p->stages = S;
	p->ahead = S - 1;
	p->mcast = -1;
	p->dots = arena_alloc(nv_arena(f), (size_t)n * sizeof *p->dots);
	p->off = arena_alloc(nv_arena(f), (size_t)n * sizeof *p->off);
	p->bytes = arena_alloc(nv_arena(f), (size_t)n * sizeof *p->bytes);
	p->resident = arena_alloc(nv_arena(f), (size_t)n * sizeof *p->resident);
	p->base = f->smem_pipe_live;
	f->smem_pipe_live = nv_align_up(f->smem_pipe_live, buf_align(f));
	p->reuse = f->smem_pipe_bytes > f->smem_pipe_live;
	for (const Inst *d = body->first; d; d = d->next)
		if (d->op == IR_DOT && pipe_loads(f, loop, d, ld)) {
			p->dots[p->ndots] = d;
			uint64_t rb = resident_bytes(f, loop, d);
			p->resident[p->ndots] = rb ? (int64_t)f->smem_pipe_live : -1;
			f->smem_pipe_live += rb;
			p->bytes[p->ndots] = pipe_bytes(f, d);
			p->off[p->ndots++] = f->smem_pipe_live;
			f->smem_pipe_live += (uint64_t)S * pipe_bytes(f, d);
			if (f->smem_pipe_live > f->smem_pipe_bytes)
				f->smem_pipe_bytes = f->smem_pipe_live;
			for (int k = 0; k < 2; k++)
				if (ld[k])
					f->pipelined[ld[k]->results[0]->id] = true;
			p->wg |= f->plan->wgmma[d->results[0]->id];
		}
	/* wgmma may overlap the next iteration's issue (its buffer is then
	 * not overwritten until the iteration after) when the copies still
	 * run 64 or more of K ahead: on the H100, 3 stages of BK 32 ran 30 %
	 * faster with 2 slices ahead and the group waited for than with one
	 * ahead and the group in flight; with BK 64 or 4 stages, overlapping
	 * was as fast or faster (bench/RESULTS.md).  Slices over 64 of K need
	 * two ahead: 128 x 128 x 128 with 3 stages ran 0.60-0.69x cuBLAS
	 * overlapped, 0.73-0.86x with 2 ahead and the group waited for. */
	int64_t kmin = INT64_MAX;
	for (int x = 0; x < p->ndots; x++)
		if (f->plan->wgmma[p->dots[x]->results[0]->id] && p->dots[x]->args[0]->type->dims[1] < kmin)
			kmin = p->dots[x]->args[0]->type->dims[1];
	/* Every wgmma dot in flight into the next iteration, or, with a later
	 * dot's accumulator read late, the first dot waited for (its wait
	 * completes the groups of the previous iteration). */
	bool carried = true;
	int late = 0;
	p->inflight = arena_alloc(nv_arena(f), (size_t)p->ndots * sizeof *p->inflight);
	p->late = arena_alloc(nv_arena(f), (size_t)p->ndots * sizeof *p->late);
	for (int x = 0; x < p->ndots; x++) {
		const Inst *d = p->dots[x];
		if (!f->plan->wgmma[d->results[0]->id])
			continue;
		p->late[x] = acc_only_carried(f, body, d) ? NULL : acc_read_late(f, body, d, p->dots[0]);
		p->inflight[x] = acc_only_carried(f, body, d) || p->late[x];
		late += p->late[x] != NULL;
		carried &= p->inflight[x] || x == 0;
	}
	carried &= p->inflight[0] || late;
	if (p->wg && carried && S >= 3 && (S - 2) * kmin >= 64 && (S >= 4 || kmin <= 64))
		p->ahead = S - 2;
	return p;
}

LoopPipe *nv_pipe_plan(NvFn *f, const Inst *loop)
{
	LoopPipe *p = plan_buffers(f, loop);
	if (p) {
		plan_tma(f, p);
		plan_mbar(f, p);
	}
	return p;
}

/* The area of dot x's resident A (plan_resident): wgmma's layout of the
 * whole [M, K]. */
static void resident_stage(NvFn *f, const LoopPipe *p, int x, Stage *s)
{
	Cg *g = f->g;
	const Type *at = p->dots[x]->args[0]->type;
	LLVMValueRef off = cg_i32(g, (int32_t)p->resident[x]);
	*s = (Stage){LLVMBuildInBoundsGEP2(g->b, g->t_i8, f->smem_pipe, &off, 1, "resident"), at->dims[1],
	             nv_smem_elem(at->dtype), true, true, at->dims[0], NULL};
	s->field = nv_wg_field(f, f->smem_pipe, cg_i32(g, (int32_t)(p->resident[x] / 16)));
}

/* The load of dot x's resident A when the copy engine copies it with the
 * first iteration's tiles (its map in slot 2x: plan_tma), else NULL. */
static const Inst *resident_load(const LoopPipe *p, int x)
{
	return p->tma && p->resident[x] >= 0 && p->slot[2 * x] >= 0 ? p->dots[x]->args[0]->def : NULL;
}

/* Bytes of the resident A the copy engine copies (resident_load). */
static uint64_t resident_tma_bytes(const LoopPipe *p)
{
	uint64_t n = 0;
	for (int x = 0; x < p->ndots; x++)
		if (resident_load(p, x))
			n += tile_bytes(p->dots[x]->args[0]->type);
	return n;
}

/* The coordinates of the resident A's boxes (every thread: pipe_issue_guarded
 * says why), c[NV_TMA_COORDS x] for dot x. */
static LLVMValueRef *resident_coords(NvFn *f, const LoopPipe *p)
{
	LLVMValueRef *c = arena_alloc(nv_arena(f), (size_t)(NV_TMA_COORDS * p->ndots) * sizeof *c);
	for (int x = 0; x < p->ndots; x++) {
		GpuTma t;
		if (resident_load(p, x) && nv_tma_fits(f, resident_load(p, x), &t))
			nv_tma_coords(f, resident_load(p, x), &t, c + NV_TMA_COORDS * x);
	}
	return c;
}

/* Stores the resident A of p's dots (plan_resident) from their registers,
 * for every iteration's wgmma to read: after the previous run of the loop
 * (an enclosing loop, the task before) has read the area, and before this
 * one does. */
static void store_resident(NvFn *f, const LoopPipe *p)
{
	bool any = false;
	for (int x = 0; x < p->ndots; x++)
		any |= p->resident[x] >= 0 && !resident_load(p, x);
	if (!any)
		return;
	nv_barrier(f);
	for (int x = 0; x < p->ndots; x++) {
		if (p->resident[x] < 0 || resident_load(p, x))
			continue;
		const Value *a = p->dots[x]->args[0];
		Stage s;
		resident_stage(f, p, x, &s);
		Operand o = {nv_get(f, a, NULL), NULL, 1, a->type->dtype, false};
		nv_stage_slice(f, &o, 0, a->type->dims[1], &s, NULL);
	}
	nv_proxy_fence(f, true);
	nv_barrier(f);
}

/* The stages of dot x's operands in buffer buf (i32). */
static void pipe_stages(NvFn *f, const LoopPipe *p, int x, LLVMValueRef buf, Stage *sa, Stage *sb)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const Inst *d = p->dots[x];
	const Type *at = d->args[0]->type, *bt = d->args[1]->type;
	bool swz = f->plan->mma[d->results[0]->id], wg = f->plan->wgmma[d->results[0]->id];
	int es = nv_smem_elem(at->dtype);
	LLVMValueRef off = LLVMBuildAdd(b, cg_i32(g, (int32_t)p->off[x]),
	                                LLVMBuildMul(b, buf, cg_i32(g, (int32_t)p->bytes[x]), ""), "");
	LLVMValueRef base = LLVMBuildInBoundsGEP2(b, g->t_i8, f->smem_pipe, &off, 1, "pipe");
	LLVMValueRef aoff = cg_i32(g, (int32_t)pipe_a_bytes(f, d));
	int64_t kp = stage_extent(f, d, at->dims[1]);
	*sa = (Stage){base, kp, es, swz, wg, stage_extent(f, d, at->dims[0]), NULL};
	int64_t np = stage_extent(f, d, bt->dims[1]);
	bool kmajor = nv_dot_trans_b(f->plan, d) != NULL; /* B = transpose(x): x's rows are N */
	*sb = (Stage){LLVMBuildInBoundsGEP2(b, g->t_i8, base, &aoff, 1, ""), kmajor ? kp : np, es, swz, wg,
	              kmajor ? np : kp, NULL};
	if (wg) {
		/* The area's field (loop-invariant) plus the buffer's offset / 16. */
		LLVMValueRef off16 = LLVMBuildAdd(b, cg_i32(g, (int32_t)(p->off[x] / 16)),
		                                  LLVMBuildMul(b, buf, cg_i32(g, (int32_t)(p->bytes[x] / 16)), ""), "");
		nv_wg_stage_fields(f, f->smem_pipe, off16, pipe_a_bytes(f, d), sa, sb);
	}
	if (p->resident[x] >= 0)
		resident_stage(f, p, x, sa);
}

/* Emits the scalar chain of v for the iteration whose induction variable
 * the caller bound (f->vals), recording what it overwrote. */
static bool eval_at(NvFn *f, const Inst *loop, const Value *v, bool *done, Vec *saved)
{
	if (!v->def || !region_within(v->def->parent, loop->regions[0]) || done[v->id])
		return true;
	for (int j = 0; j < v->def->nargs; j++)
		if (!eval_at(f, loop, v->def->args[j], done, saved))
			return false;
	vec_push(nv_arena(f), saved, (void *)v);
	vec_push(nv_arena(f), saved, f->vals[v->id]);
	done[v->id] = true;
	return nv_emit_inst(f, v->def);
}

/* Another iteration of `loop` bound for the emitter: its induction
 * variable's value, and the values eval_at emits for it (restored by
 * iteration_end). */
typedef struct Iteration {
	const Value *ivv; /* the induction variable */
	GV *iv;           /* its value in the iteration being emitted */
	bool *done;       /* per value id: emitted for the bound iteration */
	Vec saved;        /* (value, its value before) pairs */
} Iteration;

static Iteration iteration_begin(NvFn *f, const Inst *loop, LLVMValueRef iv)
{
	Iteration it = {loop->regions[0]->args[0], NULL, arena_alloc(nv_arena(f), (size_t)(f->k->nvalues + 1)), {0}};
	it.iv = f->vals[it.ivv->id];
	f->vals[it.ivv->id] = gv_scalar(f, it.ivv->type->dtype, iv);
	return it;
}

static void iteration_end(NvFn *f, Iteration *it)
{
	for (int j = it->saved.len - 2; j >= 0; j -= 2)
		f->vals[((const Value *)it->saved.items[j])->id] = it->saved.items[j + 1];
	f->vals[it->ivv->id] = it->iv;
}

bool nv_copy_at(NvFn *f, const Inst *loop, const Inst *L, LLVMValueRef iv, int kd, int64_t kc, const Stage *st,
                LLVMValueRef live)
{
	if (!nv_loop_computable(loop, L))
		return false;
	Iteration it = iteration_begin(f, loop, iv);
	bool ok = true;
	for (int a = 1; a < L->nargs && ok; a++)
		ok = eval_at(f, loop, L->args[a], it.done, &it.saved);
	NvAccess A;
	if (ok && (ok = nv_access_setup(f, L, &A))) {
		Operand o = {NULL, &A, kd, L->results[0]->type->dtype, false};
		nv_stage_slice(f, &o, 0, kc, st, live);
	}
	iteration_end(f, &it);
	return ok;
}

bool nv_loop_computable(const Inst *loop, const Inst *L)
{
	for (int a = 1; a < L->nargs; a++)
		if (!iv_computable(loop, L->args[a], 0))
			return false;
	return true;
}

/* The mbarriers of p. */
static LLVMValueRef pipe_bars(NvFn *f, const LoopPipe *p)
{
	LLVMValueRef off = cg_i32(f->g, (int32_t)p->bars);
	return LLVMBuildInBoundsGEP2(f->g->b, f->g->t_i8, f->smem_pipe, &off, 1, "mbars");
}

/* With mbar: the "full" (empty false) or "empty" mbarriers of p. */
static LLVMValueRef mbars(NvFn *f, const LoopPipe *p, bool empty)
{
	LLVMValueRef off = cg_i32(f->g, (int32_t)(p->bars + (empty ? (uint64_t)p->stages * 8 : 0)));
	return LLVMBuildInBoundsGEP2(f->g->b, f->g->t_i8, f->smem_pipe, &off, 1, empty ? "empty" : "full");
}

/* The leader's copies of iteration j's tiles into buffer buf, at the
 * coordinates pipe_issue evaluated (from c[NV_TMA_COORDS (2x + k)], operand
 * k of dot x). */
static void tma_issue(NvFn *f, const LoopPipe *p, LLVMValueRef buf, LLVMValueRef *c)
{
	for (int x = 0; x < p->ndots; x++) {
		Stage st[2];
		pipe_stages(f, p, x, buf, &st[0], &st[1]);
		for (int k = 0; k < 2; k++) {
			const Inst *L = pipe_load(f, p->dots[x], k);
			if (!L)
				continue; /* wgmma's register A */
			GpuTma t;
			nv_tma_fits(f, L, &t);
			LLVMValueRef *ck = c + NV_TMA_COORDS * (2 * x + k);
			if (x == 0 && k == p->mcast) {
				/* Half of the tile into both CTAs of a whole pair, all of it
				 * for a lone program. */
				Cg *g = f->g;
				LLVMBasicBlockRef both = cg_block(g, "tma.multicast"), alone = cg_block(g, "tma.alone"),
				                  join = cg_block(g, "tma.copied");
				LLVMBuildCondBr(g->b, p->coupled, both, alone);
				LLVMPositionBuilderAtEnd(g->b, both);
				nv_tma_copy(f, L, &t, p->mslot, st[k].base, ck, pipe_bars(f, p), buf, f->rank);
				LLVMBuildBr(g->b, join);
				LLVMPositionBuilderAtEnd(g->b, alone);
				nv_tma_copy(f, L, &t, p->slot[2 * x + k], st[k].base, ck, pipe_bars(f, p), buf, NULL);
				LLVMBuildBr(g->b, join);
				LLVMPositionBuilderAtEnd(g->b, join);
				continue;
			}
			nv_tma_copy(f, L, &t, p->slot[2 * x + k], st[k].base, ck, pipe_bars(f, p), buf, NULL);
		}
	}
}

/* Copies of iteration j's (i64) operands into buffer buf (i32) by every
 * thread (cp.async), or, with the copy engine, their coordinates into c
 * (tma_issue). */
static bool pipe_issue(NvFn *f, const LoopPipe *p, LLVMValueRef j, LLVMValueRef buf, LLVMValueRef *c)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = cg_type(g, p->loop->regions[0]->args[0]->type->dtype);
	LLVMValueRef jt = t == g->t_i64 ? j : LLVMBuildTrunc(b, j, t, "");
	LLVMValueRef iv = LLVMBuildAdd(b, LLVMBuildMul(b, jt, p->step, ""), p->lo, "iv.ahead");
	Iteration it = iteration_begin(f, p->loop, iv);
	bool ok = true;
	for (int x = 0; x < p->ndots && ok; x++) {
		const Inst *d = p->dots[x];
		Stage st[2];
		if (!p->tma)
			pipe_stages(f, p, x, buf, &st[0], &st[1]);
		for (int k = 0; k < 2 && ok; k++) {
			const Inst *L = pipe_load(f, d, k);
			if (!L)
				continue; /* wgmma's register A */
			for (int a = 1; a < L->nargs && ok; a++)
				ok = eval_at(f, p->loop, L->args[a], it.done, &it.saved);
			if (ok && p->tma) {
				GpuTma tm;
				nv_tma_fits(f, L, &tm);
				nv_tma_coords(f, L, &tm, c + NV_TMA_COORDS * (2 * x + k));
				continue;
			}
			NvAccess A;
			if (!ok || !(ok = nv_access_setup(f, L, &A)))
				break;
			/* kd: K is dim 1 of a, and of x in B = transpose(x) */
			Operand o = {NULL, &A, k == 0 || L->results[0] != d->args[1] ? 1 : 0, L->results[0]->type->dtype, false};
			nv_stage_slice(f, &o, 0, INT64_C(1) << A.L->dbits[o.kd], &st[k], NULL);
		}
	}
	iteration_end(f, &it);
	return ok;
}

/* The leader's copies of the resident A into their areas, completing on
 * buffer buf's mbarrier with the first iteration's tiles: the first dot's
 * wait covers them. */
static void copy_resident(NvFn *f, const LoopPipe *p, LLVMValueRef buf, LLVMValueRef *c)
{
	for (int x = 0; x < p->ndots; x++) {
		GpuTma t;
		Stage s;
		if (!resident_load(p, x) || !nv_tma_fits(f, resident_load(p, x), &t))
			continue;
		resident_stage(f, p, x, &s);
		nv_tma_copy(f, resident_load(p, x), &t, p->slot[2 * x], s.base, c + NV_TMA_COORDS * x, pipe_bars(f, p), buf,
		            NULL);
	}
}

/* Before iteration j's copies into buffer buf (jphase: (j / S) & 1):
 * the buffer was last read in iteration j - S, so wait for phase j / S - 1
 * of its empty barrier (nv_pipe_release, or plan_mbar's every thread),
 * when there was such an iteration and, in a 2-CTA cluster, the pair runs
 * coupled. */
static void wait_released(NvFn *f, const LoopPipe *p, LLVMValueRef j, LLVMValueRef buf, LLVMValueRef jphase)
{
	Cg *g = f->g;
	LLVMBasicBlockRef wait = cg_block(g, "empty.wait"), go = cg_block(g, "empty.done");
	LLVMValueRef used = LLVMBuildICmp(g->b, LLVMIntUGE, j, cg_i64(g, p->stages), "");
	LLVMBuildCondBr(g->b, p->coupled ? LLVMBuildAnd(g->b, used, p->coupled, "") : used, wait, go);
	LLVMPositionBuilderAtEnd(g->b, wait);
	nv_tma_wait(f, mbars(f, p, true), buf, LLVMBuildXor(g->b, jphase, cg_i32(g, 1), "parity"));
	LLVMBuildBr(g->b, go);
	LLVMPositionBuilderAtEnd(g->b, go);
}

/* if (j < trips) issue iteration j into buffer buf (j % stages; jphase:
 * (j / stages) & 1, i32); commit (a group even when empty, so that group n
 * always holds iteration n). */
static bool pipe_issue_guarded(NvFn *f, const LoopPipe *p, LLVMValueRef j, LLVMValueRef buf, LLVMValueRef jphase,
                               bool first)
{
	Cg *g = f->g;
	LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntULT, j, p->trips, "");
	if (p->tma) {
		/* The coordinates by every thread, before the leader's branch:
		 * evaluated inside it, LLVM's GVN joined the copies' loop-invariant
		 * starts through phis of that (divergent) branch, which ptxas moved
		 * into uniform registers at each copy (R2UR; H100: 0.7 % slower). */
		LLVMValueRef *c = arena_alloc(nv_arena(f), (size_t)(2 * NV_TMA_COORDS * p->ndots) * sizeof *c);
		bool ok = pipe_issue(f, p, j, buf, c);
		LLVMValueRef *rc = first ? resident_coords(f, p) : NULL;
		LLVMBasicBlockRef join = nv_tma_leader(f, in);
		if (p->mcast >= 0 || p->turns) /* both CTAs of a whole pair, or every warp, release */
			wait_released(f, p, j, buf, jphase);
		nv_tma_expect(f, pipe_bars(f, p), buf, tma_bytes(f, p) + (first ? resident_tma_bytes(p) : 0));
		if (ok)
			tma_issue(f, p, buf, c);
		if (first)
			copy_resident(f, p, buf, rc);
		nv_tma_leader_end(f, join);
		return ok;
	}
	LLVMBasicBlockRef then = cg_block(g, "prefetch"), join = cg_block(g, "prefetch.end");
	LLVMBuildCondBr(g->b, in, then, join);
	LLVMPositionBuilderAtEnd(g->b, then);
	if (p->mbar)
		wait_released(f, p, j, buf, jphase);
	bool ok = pipe_issue(f, p, j, buf, NULL);
	if (p->mbar) {
		LLVMValueRef a = nv_mbar_at(f, mbars(f, p, false), buf);
		nv_inline_ptx(f, g->t_void, "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r,~{memory}", &a, 1);
	}
	LLVMBuildBr(g->b, join);
	LLVMPositionBuilderAtEnd(g->b, join);
	if (!p->mbar)
		commit(f);
	return ok;
}

/* bar.sync (arrive false) or bar.arrive on named barrier `id` (i32) of
 * both warpgroups, where `when` (i1; NULL: always) holds. */
static void turn_bar(NvFn *f, LLVMValueRef id, bool arrive, LLVMValueRef when)
{
	Cg *g = f->g;
	LLVMBasicBlockRef join = NULL;
	if (when) {
		LLVMBasicBlockRef then = cg_block(g, "turn");
		join = cg_block(g, "turn.end");
		LLVMBuildCondBr(g->b, when, then, join);
		LLVMPositionBuilderAtEnd(g->b, then);
	}
	nv_inline_ptx(f, g->t_void, arrive ? "bar.arrive $0, 256;" : "bar.sync $0, 256;", "r,~{memory}", &id, 1);
	if (join) {
		LLVMBuildBr(g->b, join);
		LLVMPositionBuilderAtEnd(g->b, join);
	}
}

/* The warpgroup's own turn barrier (arrive false: wait for it) or the
 * other's (arrive true: give it its turn), where `when` holds. */
static void turn(NvFn *f, bool arrive, LLVMValueRef when)
{
	Cg *g = f->g;
	LLVMValueRef wg = LLVMBuildLShr(g->b, f->warp, cg_i32(g, 2), "wg");
	if (arrive)
		wg = LLVMBuildXor(g->b, wg, cg_i32(g, 1), "");
	turn_bar(f, LLVMBuildAdd(g->b, wg, cg_i32(g, PIPE_TURN_BAR), ""), arrive, when);
}

/* Whether the thread is in warpgroup wg.  The prologue and epilogue of a
 * turns loop run only where the loop runs (its p v stays in flight:
 * emit_for's pipe.run guard), so each turn barrier sees every arrive. */
static LLVMValueRef in_wg(NvFn *f, int wg)
{
	return LLVMBuildICmp(f->g->b, wg ? LLVMIntUGE : LLVMIntULT, f->warp, cg_i32(f->g, 4), "");
}

/* FA3's ping-pong: warpgroup w issues its dots only in its turn, so that
 * its softmax runs while the other's dots take the tensor cores instead
 * of both doing either at once.  A turn is the issue of p v of iteration
 * c - 1 and q kᵀ of iteration c (the first: q kᵀ of iteration 0 alone;
 * the last: p v alone, given back at the loop's end by warpgroup 0).  Per
 * run of the loop warpgroup 0 waits T + 1 times for warpgroup 1's prime
 * and T arrives, warpgroup 1 T + 1 times for warpgroup 0's T + 1. */
void nv_pipe_turn(NvFn *f, const LoopPipe *p, int x, bool issued)
{
	if (!p->turns || (issued && x != 0))
		return;
	/* From q kᵀ's hand-off to p v's turn the warpgroup holds no turn. */
	f->in_turn = !issued;
	if (issued)
		turn(f, true, NULL);
	else
		turn(f, false, x ? NULL : LLVMBuildICmp(f->g->b, LLVMIntEQ, p->c, cg_i64(f->g, 0), ""));
}

void nv_pipe_prologue(NvFn *f, LoopPipe *p)
{
	/* An earlier loop's last reads of these buffers come first
	 * (split-loops' two loops share them). */
	if (p->reuse)
		nv_barrier(f);
	if (p->mcast >= 0) {
		/* Both rows of a whole pair run the loop coupled when it is long
		 * enough to pay for the coupling (the barrier of the cluster
		 * here, the releases): on the H200, 128 x 96 blocks with K 1024
		 * (16 slices) ran 3-5 % slower coupled (bench/RESULTS.md, session
		 * 11).  Otherwise each CTA runs its row alone. */
		p->coupled = LLVMBuildAnd(f->g->b, f->paired,
		                          LLVMBuildICmp(f->g->b, LLVMIntUGE, p->trips, cg_i64(f->g, PIPE_COUPLE_TRIPS), ""),
		                          "coupled");
	}
	if (p->tma)
		nv_tma_bars_init(f, pipe_bars(f, p), p->stages, 1, NULL);
	if (p->mcast >= 0) /* a release by each warp of each CTA a phase (nv_pipe_release) */
		nv_tma_bars_init(f, mbars(f, p, true), p->stages, 2 << f->plan->lc->warpbits, p->coupled);
	if (p->turns) {
		/* A release by each warp a phase (nv_pipe_release); warpgroup 0
		 * takes the first turn, warpgroup 1 gives it. */
		nv_tma_bars_init(f, mbars(f, p, true), p->stages, 1 << f->plan->lc->warpbits, NULL);
		turn_bar(f, cg_i32(f->g, PIPE_TURN_BAR), true, in_wg(f, 1));
	}
	if (p->mbar)
		nv_tma_bars_init(f, mbars(f, p, false), 2 * p->stages, 32 << f->plan->lc->warpbits, NULL);
	PKC_ASSERT(p->ahead >= 1); /* iteration 0's copies, which bring the resident A */
	for (int j = 0; j < p->ahead; j++)
		pipe_issue_guarded(f, p, cg_i64(f->g, j), cg_i32(f->g, j), cg_i32(f->g, 0), j == 0);
	/* After the first copies: their latency hides the stores'. */
	store_resident(f, p);
}

/* The buffer and phase of iteration c (c % S, (c / S) & 1) of a wgmma
 * pipeline of S stages, S not a power of two (6 at attention d128), are
 * carried round the loop: computed from c (a multiply-high sequence for
 * each division), they took about 25 uniform instructions an iteration in
 * the SASS.  For S a power of two the masks cost less than the carried
 * counters' updates. */
void nv_pipe_head(NvFn *f, LoopPipe *p)
{
	int S = p->stages;
	if (!p->wg || (S & (S - 1)) == 0)
		return;
	p->buf = LLVMBuildPhi(f->g->b, f->g->t_i32, "pipe.buf");
	p->phase = LLVMBuildPhi(f->g->b, f->g->t_i32, "pipe.phase");
}

/* The buffer (i32) of iteration c + d (0 <= d < S), and its phase in
 * *phase when asked. */
static LLVMValueRef ring_at(NvFn *f, const LoopPipe *p, int d, LLVMValueRef *phase)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int S = p->stages;
	if (!p->buf) {
		LLVMValueRef j = d ? LLVMBuildAdd(b, p->c, cg_i64(g, d), "") : p->c;
		if (phase)
			*phase = LLVMBuildTrunc(b, LLVMBuildAnd(b, LLVMBuildUDiv(b, j, cg_i64(g, S), ""), cg_i64(g, 1), ""),
			                        g->t_i32, "phase");
		return LLVMBuildTrunc(b, LLVMBuildURem(b, j, cg_i64(g, S), ""), g->t_i32, "");
	}
	if (!d) {
		if (phase)
			*phase = p->phase;
		return p->buf;
	}
	/* d < S: the buffer wraps at most once past the current one. */
	LLVMValueRef t = LLVMBuildAdd(b, p->buf, cg_i32(g, d), "");
	LLVMValueRef wrap = LLVMBuildICmp(b, LLVMIntUGE, t, cg_i32(g, S), "");
	if (phase)
		*phase = LLVMBuildXor(b, p->phase, LLVMBuildZExt(b, wrap, g->t_i32, ""), "phase");
	return LLVMBuildSelect(b, wrap, LLVMBuildSub(b, t, cg_i32(g, S), ""), t, "");
}

void nv_pipe_advance(NvFn *f, LoopPipe *p, LLVMBasicBlockRef pre)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	if (!p->buf)
		return;
	LLVMValueRef n = LLVMBuildAdd(b, p->buf, cg_i32(g, 1), "");
	LLVMValueRef wrap = LLVMBuildICmp(b, LLVMIntEQ, n, cg_i32(g, p->stages), "");
	LLVMValueRef next[2] = {LLVMBuildSelect(b, wrap, cg_i32(g, 0), n, ""),
	                        LLVMBuildXor(b, p->phase, LLVMBuildZExt(b, wrap, g->t_i32, ""), "")};
	LLVMValueRef zero = cg_i32(g, 0), phi[2] = {p->buf, p->phase};
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	for (int k = 0; k < 2; k++) {
		LLVMAddIncoming(phi[k], &zero, &pre, 1);
		LLVMAddIncoming(phi[k], &next[k], &latch, 1);
	}
}

/* Whether the last wgmma group of an iteration of p is still in flight
 * when the next one starts. */
static bool wg_pending(const LoopPipe *p)
{
	return p->wg && p->ahead < p->stages - 1;
}

bool nv_pipe_in_flight(const LoopPipe *p)
{
	return wg_pending(p);
}

bool nv_pipe_dot_in_flight(const LoopPipe *p, int x)
{
	return wg_pending(p) && p->inflight[x];
}

bool nv_pipe_resident(const LoopPipe *p, int x)
{
	return p->resident[x] >= 0;
}

void nv_pipe_fence_carried(NvFn *f, const LoopPipe *p, int x)
{
	if (x == 0 && p->mbar) {
		/* The previous iteration's buffer (that of c + S - 1) is read:
		 * its last group is complete. */
		Cg *g = f->g;
		LLVMBasicBlockRef then = cg_block(g, "empty.arrive"), join = cg_block(g, "empty.arrive.end");
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, p->c, cg_i64(g, 0), ""), then, join);
		LLVMPositionBuilderAtEnd(g->b, then);
		LLVMValueRef a = nv_mbar_at(f, mbars(f, p, true), ring_at(f, p, p->stages - 1, NULL));
		nv_inline_ptx(f, g->t_void, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}", &a, 1);
		LLVMBuildBr(g->b, join);
		LLVMPositionBuilderAtEnd(g->b, join);
	}
	for (int d = 0; x == 0 && wg_pending(p) && d < p->ndots; d++)
		if (p->late[d]) {
			GV *in = f->vals[p->late[d]->id];
			GV *v = gv_new(f, in->L, in->dt);
			memcpy(v->r, in->r, (size_t)v->n * sizeof *v->r);
			nv_wg_fence(f, v);
			f->vals[p->late[d]->id] = v;
		}
}

void nv_pipe_epilogue(NvFn *f, LoopPipe *p, GV **res, int n)
{
	f->smem_pipe_live = p->base;
	if (!p->tma)
		nv_intrinsic(f, "llvm.nvvm.cp.async.wait.all", NULL, 0, NULL, 0);
	if (p->turns) /* warpgroup 0 gives warpgroup 1 the turn of its last p v */
		turn_bar(f, cg_i32(f->g, PIPE_TURN_BAR + 1), true, in_wg(f, 0));
	if (wg_pending(p)) {
		LLVMValueRef none = cg_i64(f->g, 0);
		nv_intrinsic(f, "llvm.nvvm.wgmma.wait_group.sync.aligned", NULL, 0, &none, 1);
		for (int j = 0; j < n; j++) {
			GV *v = gv_new(f, res[j]->L, res[j]->dt);
			memcpy(v->r, res[j]->r, (size_t)v->n * sizeof *v->r);
			nv_wg_fence(f, v);
			res[j] = v;
		}
	}
	/* The next run of the loop (an enclosing loop, the next program of
	 * the task) starts the barriers afresh. */
	if (p->tma || p->mbar)
		nv_tma_bars_inval(f, pipe_bars(f, p), p->tma && !p->turns ? p->stages : 2 * p->stages);
}

/* Whether the copies p->ahead iterations ahead wait until the first dot's
 * wgmma group is issued (issue_ahead from the dot, before its
 * wait), so that the empty barrier's wait and the copies' address
 * arithmetic run while the tensor cores do: with mbar, where the buffer
 * they overwrite was released an iteration before (p->ahead <= stages -
 * 2), when two CTAs share the SM.  On the H100 attention at d64 (two CTAs
 * an SM) went from 440 to 459 TFLOP/s, causal 394 to 400; at d128 (one
 * CTA, 180 -> 198 registers) full went from 493 to 480, causal 435 to 442;
 * issued after the last dot instead: d64 no faster, d128 8-10 % slower
 * (bench/RESULTS.md, "attn6"). */
static bool issues_late(NvFn *f, const LoopPipe *p)
{
	if (p->mcast >= 0 || p->turns) /* the copies wait for both CTAs' (warpgroups') release */
		return true;
	return p->mbar && f->sched_shared && f->plan->wgmma[p->dots[0]->results[0]->id];
}

/* Starts the copies p->ahead iterations ahead of the current one. */
static bool issue_ahead(NvFn *f, const LoopPipe *p)
{
	bool phase = p->mbar || p->mcast >= 0 || p->turns;
	LLVMValueRef j = LLVMBuildAdd(f->g->b, p->c, cg_i64(f->g, p->ahead), "");
	LLVMValueRef ph, nb = ring_at(f, p, p->ahead, phase ? &ph : NULL);
	return pipe_issue_guarded(f, p, j, nb, phase ? ph : NULL, false);
}

/* In a whole pair of a 2-CTA cluster (p->mcast), after the wait of
 * iteration c that completes the wgmma group of iteration c - pending,
 * each warp of both CTAs releases that iteration's buffer to both: lane 0
 * arrives on the buffer's "empty" mbarrier in each CTA (2 x warps
 * arrivals a phase), and the leader's copies into a buffer wait for it
 * (pipe_issue_guarded) instead of a CTA barrier each iteration.  A barrier
 * of the cluster each iteration ran 2.4x slower on the H200, as did
 * arrives with release semantics at the cluster's scope; a release by each
 * CTA's leader after its CTA barrier, with the copies one iteration less
 * ahead, 1-11 % slower than plain CTAs on 128 x 128 blocks.  With turns
 * (plan_turns), lane 0 of each warp of the CTA likewise releases the
 * previous iteration's buffer (warps arrivals a phase).  Only buffers a
 * later iteration refills are released, so every arrive is waited for
 * before the loop ends and none reaches the next task's barriers. */
void nv_pipe_release(NvFn *f, const LoopPipe *p, int x, int pending)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	if (x != 0 || (p->mcast < 0 && !p->turns))
		return;
	int S = p->stages;
	/* turns: the first dot's wait completed the previous iteration's p v,
	 * the last reader of its buffer. */
	int back = p->turns ? 1 : pending;
	LLVMValueRef refill = LLVMBuildAdd(b, p->c, cg_i64(g, S - back), "");
	LLVMValueRef go = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntUGE, refill, cg_i64(g, S), ""),
	                               LLVMBuildICmp(b, LLVMIntULT, refill, p->trips, ""), "");
	if (p->coupled)
		go = LLVMBuildAnd(b, go, p->coupled, "");
	go = LLVMBuildAnd(b, go, LLVMBuildICmp(b, LLVMIntEQ, f->lane, cg_i32(g, 0), ""), "release");
	LLVMBasicBlockRef then = cg_block(g, "release"), join = cg_block(g, "release.end");
	LLVMBuildCondBr(b, go, then, join);
	LLVMPositionBuilderAtEnd(b, then);
	LLVMValueRef bar = nv_mbar_at(f, mbars(f, p, true), ring_at(f, p, (S - back) % S, NULL));
	if (p->turns) {
		nv_inline_ptx(f, g->t_void, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}", &bar, 1);
		LLVMBuildBr(b, join);
		LLVMPositionBuilderAtEnd(b, join);
		return;
	}
	for (int rank = 0; rank < 2; rank++) {
		LLVMValueRef a[2] = {bar, cg_i32(g, rank)};
		nv_inline_ptx(f, g->t_void,
		              "{ .reg .b32 ra; mapa.shared::cluster.u32 ra, $0, $1; "
		              "mbarrier.arrive.shared::cluster.b64 _, [ra]; }",
		              "r,n,~{memory}", a, 2);
	}
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
}

bool nv_pipe_issue_late(NvFn *f, const LoopPipe *p, int x)
{
	return x != 0 || !issues_late(f, p) || issue_ahead(f, p);
}

/* In the body, at dot x of p: wait for this iteration's copies, start the
 * ones p->ahead iterations ahead (or let the first dot start them:
 * issues_late), and give the buffers to read. */
bool nv_pipe_step(NvFn *f, const LoopPipe *p, int x, Stage *sa, Stage *sb)
{
	Cg *g = f->g;
	/* The first dot of the body moves the whole pipeline. */
	if (x == 0 && (p->tma || p->mbar)) {
		/* Phase c / S of buffer c % S: this iteration's copies are in
		 * (the copy engine's boxes, or every thread's cp.async). */
		LLVMValueRef ph, cb = ring_at(f, p, 0, &ph);
		nv_tma_wait(f, p->tma ? pipe_bars(f, p) : mbars(f, p, false), cb, ph);
		/* This thread's wgmma (the async proxy) reads what they wrote. */
		if (p->mbar)
			nv_proxy_fence(f, true);
	} else if (x == 0) {
		LLVMValueRef pending = cg_i32(g, p->ahead - 1);
		nv_intrinsic(f, "llvm.nvvm.cp.async.wait.group", NULL, 0, &pending, 1);
		nv_proxy_fence(f, p->wg);
	}
	if (x == 0) {
		/* Everyone's copies are in, and everyone is done with the buffer
		 * the next copies overwrite (read in the previous iteration, or
		 * the one before by wgmma groups still in flight then); with
		 * mbar, the barriers say so. */
		if (p->mcast >= 0) {
			/* The CTA barrier, unless the pair runs coupled (nv_pipe_release);
			 * not nv_barrier, which would forget the tracked accesses on a
			 * path the coupled CTAs do not take. */
			LLVMBasicBlockRef lone = cg_block(g, "lone.sync"), join = cg_block(g, "lone.sync.end");
			LLVMBuildCondBr(g->b, p->coupled, join, lone);
			LLVMPositionBuilderAtEnd(g->b, lone);
			nv_bar_sync(f);
			LLVMBuildBr(g->b, join);
			LLVMPositionBuilderAtEnd(g->b, join);
		} else if (!p->mbar && !p->turns) {
			nv_barrier(f);
		}
		if (!issues_late(f, p) && !issue_ahead(f, p))
			return false;
	}
	pipe_stages(f, p, x, ring_at(f, p, 0, NULL), sa, sb);
	return true;
}

/* Whether dot i belongs to a pipelined loop being emitted (its index in
 * *px). */
const LoopPipe *nv_pipe_of(NvFn *f, const Inst *i, int *px)
{
	for (const LoopPipe *p = f->pipe; p; p = p->outer)
		for (int x = 0; x < p->ndots; x++)
			if (p->dots[x] == i) {
				*px = x;
				return p;
			}
	return NULL;
}
