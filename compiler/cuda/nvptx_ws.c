/* nvptx_ws.c - warp specialization of the copy-engine wgmma pipelines
 * (--gpu-warp-specialize; issues 13 and 14).
 *
 * In a copy-engine pipeline (nvptx_pipe.c, nvptx_tma.c) every warp runs
 * the whole loop: one elected thread of warp 0 issues the boxes, and a
 * CTA barrier each iteration protects the buffer being refilled, so the
 * issuing warpgroup stalls whenever the copies wait.  A warp-specialized
 * entry gives the copies to a warp of their own, after the warps that the
 * layouts describe:
 *
 *   set-up     every thread: the rings' mbarriers initialised (one
 *              thread), a CTA barrier, then the roles split on the warp
 *              index (read from lane 0, so ptxas knows it warp-uniform)
 *   consumers  warps 0 .. C-1: the kernel as emitted otherwise, but each
 *              such pipeline waits for its buffer's "full" barrier and,
 *              once the first dot's wgmma wait has completed the previous
 *              iteration's groups, hands that buffer back on its "empty"
 *              barrier (one elected lane a warp); their CTA barriers are a
 *              named barrier of the C warps (nv_barrier)
 *   producer   warp C: the same tasks and programs, running only the
 *              scalar chains the pipelines need (trip counts, tile
 *              coordinates: nv_ws_region) and, for each pipeline's loop,
 *              nv_pipe_produce: wait for the buffer's empty barrier,
 *              arrive.expect_tx on its full one, issue the boxes
 *
 * No wait without its arrive, on any path: both roles run the same loops
 * with the same trip counts (the producer computes them from the same
 * scalars, under the same ifs and loops, or the entry is emitted without
 * warp specialization); a ring's counts run on across loops, programs and
 * tasks, so a zero-trip loop issues and consumes nothing; the producer
 * waits only for the consumers' releases and for the hand-off below,
 * which both roles reach once a program.
 *
 * The producer writes a ring's buffers up to `stages` iterations ahead,
 * across loops and tasks, so consumers may use pipeline buffers for
 * nothing else while it runs: pipelines share buffers only as one ring
 * (plan_ws), and a store staged through dead pipeline buffers (stage_store
 * in nvptx_mem.c) is allowed only where no pipeline runs after it in the
 * program; the producer then waits at the end of each program until the
 * consumers are done with them (nv_ws_program_end: a named barrier both
 * roles sync on).
 *
 * Registers: ptxas gives every thread of the CTA the same registers at
 * launch.  The producer needs few; with a warpgroup of its own it gives
 * the rest to the consumers (setmaxnreg, which works on whole warpgroups
 * and needs the count at entry: .reqntid and .minnctapersm, the CTAs an
 * SM the schedule sized the stages for).  That form is taken where it
 * leaves the consumers more registers than a single producer warp does:
 * with two consumer warpgroups and one CTA an SM, 240 against 224.  The
 * increase waits until the pool holds what it asks for: ptxas launches
 * such kernels with the most registers .reqntid and .minnctapersm allow
 * (168 for 384 threads, whatever the code needs), so what the producer's
 * warpgroup gives up is always there. */
#include "nvptx_dot.h" /* nv_proxy_fence */

#include <stdio.h>
#include <string.h>

/* Registers of an SM (sm_90), the most a thread may take, and what the
 * producer's warpgroup keeps when it gives the rest away (FlashAttention
 * 3's figure: the copies' scalar chains fit). */
#define WS_SM_REGS 65536
#define WS_MAX_REGS 255
#define WS_PRODUCER_REGS 24
/* The most setmaxnreg gives a consumer: a multiple of 8 below 255. */
#define WS_CONSUMER_REGS 248

/* The registers each of `threads` threads may take when `ctas` CTAs
 * share an SM (ptxas allocates them in eights). */
static int regs_per_thread(int threads, int ctas)
{
	int r = WS_SM_REGS / ((threads + 31) / 32 * 32 * ctas) / 8 * 8;
	return r > WS_MAX_REGS ? WS_MAX_REGS : r;
}

/* The producer's threads for C consumer threads, `ctas` CTAs an SM: a
 * warp, or a warpgroup that gives its registers away when that leaves
 * the consumers more (*give: their registers after setmaxnreg, else 0). */
static int producer_threads(int C, int ctas, int *give)
{
	int one = regs_per_thread(C + 32, ctas), wg = regs_per_thread(C + 128, ctas);
	int more = ((C + 128) * wg - 128 * WS_PRODUCER_REGS) / C / 8 * 8;
	more = more > WS_CONSUMER_REGS ? WS_CONSUMER_REGS : more;
	*give = more > one ? more : 0;
	return *give ? 128 : 32;
}

static void set_attr(NvFn *f, const char *k, int v)
{
	Cg *g = f->g;
	char s[16];
	snprintf(s, sizeof s, "%d", v);
	LLVMRemoveStringAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex, k, (unsigned)strlen(k));
	LLVMAddAttributeAtIndex(f->fn, LLVMAttributeFunctionIndex,
	                        LLVMCreateStringAttribute(g->ctx, k, (unsigned)strlen(k), s, (unsigned)strlen(s)));
}

static void setmaxnreg(NvFn *f, const char *op, int regs)
{
	LLVMValueRef n = cg_i32(f->g, regs);
	nv_intrinsic(f, op, NULL, 0, &n, 1);
}

void nv_ws_begin(NvFn *f, LLVMBasicBlockRef prog)
{
	const Region *body = f->k->body;
	f->ws = true;
	f->ws_prog = prog;
	f->ws_init = LLVMAppendBasicBlockInContext(f->g->ctx, f->fn, "ws.init");
	f->ws_prod = LLVMAppendBasicBlockInContext(f->g->ctx, f->fn, "ws.producer");
	LLVMSetSuccessor(f->entry_br, 0, f->ws_init);
	f->ws_have = arena_alloc(nv_arena(f), (size_t)(f->k->nvalues + 1) * sizeof *f->ws_have);
	for (int j = 0; j < body->nargs; j++)
		f->ws_have[body->args[j]->id] = true;
}

bool nv_ws_split(NvFn *f, GpuKernel *info, int warps)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	if (!f->ws_pipes.len)
		return false;
	int ctas = f->sched_shared ? 2 : 1, give;
	info->threads = warps * 32 + producer_threads(warps * 32, ctas, &give);
	set_attr(f, "nvvm.reqntid", info->threads);
	set_attr(f, "nvvm.minctasm", ctas);

	/* Every thread: the rings' barriers, then the roles. */
	LLVMPositionBuilderAtEnd(b, f->ws_init);
	nv_pipe_ws_init(f);
	LLVMValueRef all = cg_i32(g, NV_BAR_CTA);
	nv_intrinsic(f, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &all, 1);
	LLVMValueRef w = nv_shfl_idx(f, f->warp, cg_i32(g, 0));
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, w, cg_i32(g, warps), ""), f->ws_prog, f->ws_prod);
	if (give) {
		LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(f->ws_prog));
		setmaxnreg(f, "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32", give);
	}

	/* The producer: its warpgroup's other warps leave at once. */
	LLVMPositionBuilderAtEnd(b, f->ws_prod);
	if (give) {
		setmaxnreg(f, "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32", WS_PRODUCER_REGS);
		LLVMBasicBlockRef go = cg_block(g, "producer"), idle = cg_block(g, "producer.idle");
		LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, w, cg_i32(g, warps), ""), go, idle);
		LLVMPositionBuilderAtEnd(b, idle);
		LLVMBuildRetVoid(b);
		LLVMPositionBuilderAtEnd(b, go);
		f->ws_prod = go;
	}
	f->ws_producer = true;
	return true;
}

/* The pipeline the producer feeds whose loop is i, or NULL. */
static const LoopPipe *ws_pipe_of(NvFn *f, const Inst *i)
{
	for (int j = 0; i->op == IR_FOR && j < f->ws_pipes.len; j++)
		if (((const LoopPipe *)f->ws_pipes.items[j])->loop == i)
			return f->ws_pipes.items[j];
	return NULL;
}

/* Whether inst i is or holds a loop the producer feeds. */
static bool holds_ws_loop(NvFn *f, const Inst *i)
{
	if (ws_pipe_of(f, i))
		return true;
	for (int k = 0; k < i->nregions; k++)
		for (const Inst *j = i->regions[k]->first; j; j = j->next)
			if (holds_ws_loop(f, j))
				return true;
	return false;
}

/* Whether the producer computes inst i as the consumers do: a pure
 * scalar of values it has. */
static bool producible(NvFn *f, const Inst *i)
{
	const Type *t = i->nresults == 1 ? i->results[0]->type : NULL;
	if (!t || t->kind != TY_VALUE || t->rank != 0 ||
	    !(i->op == IR_CONST || i->op == IR_PROGRAM_ID || i->op == IR_NUM_PROGRAMS ||
	      (op_info[i->op].flags & F_ELEMWISE)))
		return false;
	for (int a = 0; a < i->nargs; a++)
		if (!f->ws_have[i->args[a]->id])
			return false;
	return true;
}

/* An if that holds a fed loop: its branches on the same condition. */
static bool produce_if(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	if (!f->ws_have[i->args[0]->id])
		return false;
	LLVMBasicBlockRef bb[2] = {cg_block(g, "producer.then"), cg_block(g, "producer.else")};
	LLVMBasicBlockRef join = cg_block(g, "producer.endif");
	LLVMBuildCondBr(g->b, nv_val(f, i->args[0])->r[0], bb[0], bb[1]);
	for (int k = 0; k < 2; k++) {
		LLVMPositionBuilderAtEnd(g->b, bb[k]);
		if (!nv_ws_region(f, i->regions[k]))
			return false;
		LLVMBuildBr(g->b, join);
	}
	LLVMPositionBuilderAtEnd(g->b, join);
	return true;
}

/* A for that holds a fed loop: the same iterations (its carried values
 * are not the producer's). */
static bool produce_for(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	for (int a = 0; a < 3; a++)
		if (!f->ws_have[i->args[a]->id])
			return false;
	DType dt = i->args[0]->type->dtype;
	LLVMTypeRef t = cg_type(g, dt);
	LLVMValueRef lo = nv_val(f, i->args[0])->r[0], step = nv_val(f, i->args[2])->r[0];
	LLVMValueRef trips = cg_for_trips(g, dt, lo, nv_val(f, i->args[1])->r[0], step);
	NvCount l;
	LLVMValueRef c = nv_count_begin(f, trips, &l, "producer.for");
	LLVMValueRef ct = t == g->t_i64 ? c : LLVMBuildTrunc(b, c, t, "");
	const Value *iv = i->regions[0]->args[0];
	f->vals[iv->id] = gv_scalar(f, dt, LLVMBuildAdd(b, LLVMBuildMul(b, ct, step, ""), lo, "iv"));
	f->ws_have[iv->id] = true;
	if (!nv_ws_region(f, i->regions[0]))
		return false;
	nv_count_end(f, &l);
	return true;
}

bool nv_ws_region(NvFn *f, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		const LoopPipe *p = ws_pipe_of(f, i);
		bool ok = true;
		if (p)
			ok = nv_pipe_produce(f, p);
		else if (holds_ws_loop(f, i))
			ok = i->op == IR_IF ? produce_if(f, i) : i->op == IR_FOR && produce_for(f, i);
		else if (producible(f, i))
			ok = f->ws_have[i->results[0]->id] = nv_emit_inst(f, i);
		if (!ok) {
			f->ws_fail = true;
			return false;
		}
	}
	return true;
}

void nv_ws_program_end(NvFn *f)
{
	if (!f->ws || !f->ws_sync)
		return;
	/* The consumers' last reads and writes of the buffers (the generic
	 * proxy) before the copy engine's next writes. */
	if (!f->ws_producer)
		nv_proxy_fence(f, true);
	LLVMValueRef a[2] = {cg_i32(f->g, NV_BAR_HANDOFF), cg_i32(f->g, (32 << f->plan->lc->warpbits) + 32)};
	nv_intrinsic(f, "llvm.nvvm.barrier.cta.sync.aligned.count", NULL, 0, a, 2);
}

/* Whether inst i is or holds a loop with a dot: one a pipeline may copy for. */
static bool holds_dot_loop(const Inst *i)
{
	for (int k = 0; k < i->nregions; k++)
		for (const Inst *j = i->regions[k]->first; j; j = j->next)
			if ((i->op == IR_FOR && j->op == IR_DOT) || holds_dot_loop(j))
				return true;
	return false;
}

bool nv_ws_stage_ok(NvFn *f, const Inst *i, uint64_t at, uint64_t end)
{
	/* The rings' barriers live on from program to program. */
	for (int j = 0; j < f->ws_pipes.len; j++) {
		const LoopPipe *p = f->ws_pipes.items[j];
		if (p->bars < end && p->bars + 16 * (uint64_t)p->stages > at)
			return false;
	}
	for (const Inst *s = i; s; s = s->parent->owner) {
		/* What follows in its region, and the next iterations of a loop
		 * around it, run after it in the program. */
		for (const Inst *j = s->next; j; j = j->next)
			if (holds_dot_loop(j))
				return false;
		const Inst *o = s->parent->owner;
		if (o && o->op != IR_IF && holds_dot_loop(o))
			return false;
	}
	return true;
}
