/* codegen_nvptx.c - the CUDA back end (cuda/GPU-DESIGN.md): the IR after
 * lower-refs to NVVM IR through the LLVM C API, PTX from LLVM's NVPTX
 * target, cubins from ptxas (nvptx_ptxas.c).
 *
 * Per kernel one entry (`ptx_kernel`) whose CTA of num_warps * 32 threads
 * runs one task: the point of the parallel grid axes that blockIdx.x
 * linearises (row-major), and, in a loop, every point of the arbitrary axes
 * in lexicographic order, with a CTA barrier between them (so an output
 * block revisited along an arbitrary axis accumulates, as on the host).
 * Each thread holds its elements of every tensor in registers (layouts:
 * gpu_layout.c); scalars are computed by every thread alike, so all control
 * flow is uniform across the CTA and barriers may appear anywhere.
 *
 * This file: the kernel entry, regions and control flow, scalar code, the
 * module pipeline (libdevice, passes, PTX per target, ptxas).  nvptx_base.c
 * has the targets and the helpers every file uses, nvptx_tensor.c tensor
 * ops and layout conversions, nvptx_mem.c Ref accesses and barriers,
 * nvptx_dot.c matrix products, nvptx_pipe.c software-pipelined loops. */
#include "nvptx_dot.h" /* nv_proxy_fence */
#include "pk_runtime.h" /* PK_MAX_GRID */

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"
/* Shared memory up to this many bytes per CTA is static; more is dynamic. */
#define STATIC_SMEM_LIMIT (48 * 1024)

static bool worker_join(Compiler *cc, GpuOutput *out);

void gpu_output_free(GpuOutput *out)
{
	worker_join(NULL, out);
	for (int i = 0; i < out->nimages; i++) {
		nv_ptxas_abandon(out->images[i].pending);
		free(out->images[i].data);
	}
	free(out->images);
	free(out->kernels);
	free(out->text);
	memset(out, 0, sizeof *out);
}

/* ---- control flow --------------------------------------------------------------------- */

static bool emit_inst(NvFn *f, const Inst *i);

bool nv_emit_inst(NvFn *f, const Inst *i)
{
	return emit_inst(f, i);
}

static bool is_tensor(const Value *v)
{
	return v->type->kind == TY_VALUE && v->type->rank > 0;
}

/* The layout a carried value or op result lives in (NULL: a scalar). */
static const GpuLayout *value_layout(NvFn *f, const Value *v)
{
	return is_tensor(v) ? f->plan->of[v->id] : NULL;
}

/* Emits the instructions of r (its arguments bound to args), all but the
 * final YIELD, which the caller reads (in the same scope). */
static bool region_body(NvFn *f, const Region *r, GV **args)
{
	for (int j = 0; j < r->nargs; j++)
		if (args && args[j])
			f->vals[r->args[j]->id] = args[j];
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_YIELD)
			return true;
		if (!emit_inst(f, i))
			return false;
	}
	internal_error("nvptx: kernel %s: region without a yield", f->k->name);
}

bool nv_region(NvFn *f, const Region *r, GV **args, const GpuLayout **want, GV **ys)
{
	nv_scope_push(f);
	bool ok = region_body(f, r, args);
	if (ok && ys)
		for (int j = 0; j < r->last->nargs; j++)
			ys[j] = nv_get(f, r->last->args[j], want ? want[j] : value_layout(f, r->last->args[j]));
	nv_scope_pop(f);
	return ok && !f->g->failed;
}

/* Phis at the builder's position for carried values of layouts ls. */
static GV **carried_phis(NvFn *f, Value *const *vals, const GpuLayout **ls, int n)
{
	Cg *g = f->g;
	GV **out = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *out);
	for (int j = 0; j < n; j++) {
		DType dt = vals[j]->type->dtype;
		GV *v = gv_new(f, ls[j], dt);
		for (int r = 0; r < v->n; r++)
			v->r[r] = LLVMBuildPhi(g->b, cg_type(g, dt), "");
		out[j] = v;
	}
	return out;
}

static void add_incoming(GV *phi, GV *v, LLVMBasicBlockRef from)
{
	for (int r = 0; r < phi->n; r++)
		LLVMAddIncoming(phi->r[r], &v->r[r], &from, 1);
}

/* Values of inits in the layouts of the carried values. */
static GV **carried_inits(NvFn *f, Value *const *inits, const GpuLayout **ls, int n)
{
	GV **out = arena_alloc(f->nv->cc->arena, (size_t)(n + 1) * sizeof *out);
	for (int j = 0; j < n; j++)
		out[j] = nv_get(f, inits[j], ls[j]);
	return out;
}

static const GpuLayout **layouts_of(NvFn *f, Value *const *vs, int n)
{
	const GpuLayout **ls = arena_alloc(f->nv->cc->arena, (size_t)(n + 1) * sizeof *ls);
	for (int j = 0; j < n; j++)
		ls[j] = value_layout(f, vs[j]);
	return ls;
}

static bool emit_for(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	DType dt = i->args[0]->type->dtype;
	LLVMTypeRef t = cg_type(g, dt);
	int n = i->nargs - 3;
	LLVMValueRef lo = nv_val(f, i->args[0])->r[0], hi = nv_val(f, i->args[1])->r[0];
	LLVMValueRef step = nv_val(f, i->args[2])->r[0];
	const GpuLayout **ls = layouts_of(f, i->results, n);
	GV **inits = carried_inits(f, i->args + 3, ls, n);
	const Region *body = i->regions[0];
	nv_sync_regions(f, &body, 1);
	LLVMValueRef trips = cg_for_trips(g, dt, lo, hi, step);
	LoopPipe *pipe = nv_pipe_plan(f, i);
	LLVMBasicBlockRef guard_bb = NULL, join = NULL;
	if (pipe && nv_pipe_in_flight(pipe)) {
		/* Only when it runs: on a path that skips it, the copies of the
		 * initial values into the accumulators' registers would join the
		 * wgmma groups still in flight before the epilogue's wait, and
		 * ptxas would serialize every wgmma (warning C7515). */
		LLVMBasicBlockRef run = cg_block(g, "pipe.run");
		join = cg_block(g, "pipe.join");
		guard_bb = LLVMGetInsertBlock(b);
		LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, trips, cg_i64(g, 0), ""), run, join);
		LLVMPositionBuilderAtEnd(b, run);
	}
	if (pipe) {
		pipe->trips = trips;
		pipe->lo = lo;
		pipe->step = step;
		nv_pipe_prologue(f, pipe);
	}

	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef head = cg_block(g, "for.head"), bb = cg_block(g, "for.body"), exit = cg_block(g, "for.exit");
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef c = LLVMBuildPhi(b, g->t_i64, "c");
	GV **phis = carried_phis(f, i->results, ls, n);
	if (pipe)
		nv_pipe_head(f, pipe);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, c, trips, ""), bb, exit);
	if (pipe) {
		pipe->c = c;
		pipe->outer = f->pipe;
		f->pipe = pipe;
	}

	RefState *at_entry = nv_state_save(f);
	bool busy0 = f->smem_busy;
	ForLoop fl = {i, c, trips, lo, step, pre, f->smem_pipe_live, false, f->loop};
	f->loop = &fl;
	LLVMPositionBuilderAtEnd(b, bb);
	LLVMValueRef ct = t == g->t_i64 ? c : LLVMBuildTrunc(b, c, t, "");
	LLVMValueRef iv = LLVMBuildAdd(b, LLVMBuildMul(b, ct, step, ""), lo, "iv");
	GV **args = arena_alloc(g->cc->arena, (size_t)(n + 2) * sizeof *args);
	args[0] = gv_scalar(f, dt, iv);
	for (int j = 0; j < n; j++)
		args[1 + j] = phis[j];
	GV **ys = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *ys);
	bool in_turn = f->in_turn;
	f->in_turn |= pipe && pipe->turns;
	if (!nv_region(f, body, args, ls, ys))
		return false;
	f->loop = fl.outer;
	f->smem_pipe_live = fl.live;
	pre = fl.pre; /* copies a turn ahead may have added blocks before the head */
	/* The next iteration's accesses against this one's, and its use of the
	 * temporary shared area against this one's readers. */
	nv_sync_regions(f, &body, 1);
	if (f->smem_busy)
		nv_barrier(f);
	f->in_turn = in_turn;
	LLVMValueRef c1 = LLVMBuildAdd(b, c, cg_i64(g, 1), "");
	if (pipe)
		nv_pipe_advance(f, pipe, pre);
	LLVMBuildBr(b, head);
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMValueRef zero = cg_i64(g, 0);
	LLVMAddIncoming(c, &zero, &pre, 1);
	LLVMAddIncoming(c, &c1, &latch, 1);
	for (int j = 0; j < n; j++) {
		add_incoming(phis[j], inits[j], pre);
		add_incoming(phis[j], ys[j], latch);
	}
	nv_state_merge(f, at_entry);
	f->smem_busy |= busy0;
	LLVMPositionBuilderAtEnd(b, exit);
	if (fl.ahead) /* before anything else writes the buffers (a persistent CTA's next task) */
		nv_intrinsic(f, "llvm.nvvm.cp.async.wait.all", NULL, 0, NULL, 0);
	if (pipe) {
		f->pipe = pipe->outer;
		nv_pipe_epilogue(f, pipe, phis, n);
	}
	if (join) {
		LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
		LLVMBuildBr(b, join);
		LLVMPositionBuilderAtEnd(b, join);
		GV **out = carried_phis(f, i->results, ls, n);
		for (int j = 0; j < n; j++) {
			add_incoming(out[j], phis[j], from);
			add_incoming(out[j], inits[j], guard_bb);
		}
		phis = out;
	}
	for (int j = 0; j < n; j++)
		f->vals[i->results[j]->id] = phis[j];
	return true;
}

static bool emit_if(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int n = i->nresults;
	const GpuLayout **ls = layouts_of(f, i->results, n);
	LLVMBasicBlockRef bt = cg_block(g, "if.then"), be = cg_block(g, "if.else"), bj = cg_block(g, "if.end");
	LLVMBuildCondBr(b, nv_val(f, i->args[0])->r[0], bt, be);
	GV **ys[2];
	LLVMBasicBlockRef ends[2], starts[2] = {bt, be};
	RefState *before = nv_state_save(f), *after_then = NULL;
	bool busy = f->smem_busy, busy_then = false;
	for (int k = 0; k < 2; k++) {
		LLVMPositionBuilderAtEnd(b, starts[k]);
		if (k == 1) {
			after_then = nv_state_save(f);
			busy_then = f->smem_busy;
			nv_state_restore(f, before);
			f->smem_busy = busy;
		}
		ys[k] = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *ys[k]);
		nv_scope_push(f);
		bool ok = region_body(f, i->regions[k], NULL);
		for (int j = 0; ok && j < n; j++)
			ys[k][j] = nv_get(f, i->regions[k]->last->args[j], ls[j]);
		nv_scope_pop(f);
		if (!ok || g->failed)
			return false;
		ends[k] = LLVMGetInsertBlock(b);
		LLVMBuildBr(b, bj);
	}
	nv_state_merge(f, after_then);
	f->smem_busy |= busy_then;
	LLVMPositionBuilderAtEnd(b, bj);
	for (int j = 0; j < n; j++) {
		GV *v = gv_new(f, ls[j], i->results[j]->type->dtype);
		for (int r = 0; r < v->n; r++) {
			v->r[r] = LLVMBuildPhi(b, LLVMTypeOf(ys[0][j]->r[r]), "");
			LLVMValueRef in[2] = {ys[0][j]->r[r], ys[1][j]->r[r]};
			LLVMAddIncoming(v->r[r], in, ends, 2);
		}
		f->vals[i->results[j]->id] = v;
	}
	return true;
}

static bool emit_while(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int n = i->nargs;
	const GpuLayout **ls = layouts_of(f, i->results, n);
	GV **inits = carried_inits(f, i->args, ls, n);
	const Region *rs[2] = {i->regions[0], i->regions[1]};
	nv_sync_regions(f, rs, 2);
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef head = cg_block(g, "while.cond"), body = cg_block(g, "while.body"),
	                  exit = cg_block(g, "while.exit");
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	GV **phis = carried_phis(f, i->results, ls, n);
	RefState *at_entry = nv_state_save(f);
	bool busy0 = f->smem_busy;
	GV *cond;
	if (!nv_region(f, i->regions[0], phis, NULL, &cond))
		return false;
	bool busy_cond = f->smem_busy;
	LLVMBuildCondBr(b, cond->r[0], body, exit);
	LLVMPositionBuilderAtEnd(b, body);
	GV **ys = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *ys);
	if (!nv_region(f, i->regions[1], phis, ls, ys))
		return false;
	nv_sync_regions(f, rs, 2);
	if (f->smem_busy)
		nv_barrier(f);
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, head);
	for (int j = 0; j < n; j++) {
		add_incoming(phis[j], inits[j], pre);
		add_incoming(phis[j], ys[j], latch);
	}
	/* Leaving after the condition: its accesses may be the last ones. */
	nv_state_merge(f, at_entry);
	nv_state_touch(f, i->regions[0]);
	f->smem_busy |= busy0 || busy_cond;
	LLVMPositionBuilderAtEnd(b, exit);
	for (int j = 0; j < n; j++)
		f->vals[i->results[j]->id] = phis[j];
	return true;
}

/* ---- instructions ---------------------------------------------------------------------- */

static bool emit_scalar_op(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	const Value *res = i->results[0];
	if (i->op == IR_CAST || i->op == IR_BITCAST) {
		LLVMValueRef x = nv_val(f, i->args[0])->r[0];
		f->vals[res->id] =
			gv_scalar(f, res->type->dtype, cg_convert(g, i->op, x, i->args[0]->type->dtype, res->type->dtype));
		return true;
	}
	LLVMValueRef a[3];
	for (int k = 0; k < i->nargs && k < 3; k++)
		a[k] = nv_val(f, i->args[k])->r[0];
	DType dt = i->args[i->op == IR_SELECT ? 1 : 0]->type->dtype;
	LLVMValueRef r = cg_elementwise(g, i->op, dt, a, i->loc);
	if (!r)
		return false;
	f->vals[res->id] = gv_scalar(f, res->type->dtype, r);
	return true;
}

/* fmt with its k-th "{}" (a block of the given rank) replaced by "[{}, …]: {}":
 * the element's coordinates, then its value. */
static const char *element_format(NvFn *f, const char *fmt, int k, int rank)
{
	size_t n = strlen(fmt);
	char *out = arena_alloc(f->g->cc->arena, n + 4 * (size_t)rank + 8);
	char *o = out;
	for (const char *c = fmt; *c; c++) {
		if (c[0] == '{' && c[1] == '}' && k-- == 0) {
			*o++ = '[';
			for (int d = 0; d < rank; d++)
				o += sprintf(o, d ? ", {}" : "{}");
			o += sprintf(o, "]: {}");
			c++;
		} else {
			*o++ = *c;
		}
	}
	*o = '\0';
	return out;
}

/* debug_print of a block (sema allows one per statement on CUDA): one line
 * per element, printed by the thread that holds its canonical copy, the
 * block's "{}" showing the element's coordinates and value. */
static void emit_debug_block(NvFn *f, const Inst *i, int k, LLVMValueRef *v, DType *dts)
{
	Cg *g = f->g;
	const Value *b = i->args[k]; /* a lazy block (iota, constants...) is computed here, in the default layout */
	GV *x = f->plan->lazy[b->id] ? nv_get(f, b, lay_default(f->plan->lc, b->type)) : nv_val(f, b);
	const GpuLayout *L = x->L;
	int n = i->nargs + L->rank;
	LLVMValueRef *ev = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *ev);
	DType *edt = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *edt);
	const char *fmt = element_format(f, i->str, k, L->rank);
	LLVMValueRef own = nv_owner(f, L);
	for (int r = 0; r < x->n; r++) {
		int m = 0;
		for (int j = 0; j < i->nargs; j++) {
			if (j != k) {
				ev[m] = v[j], edt[m++] = dts[j];
				continue;
			}
			for (int d = 0; d < L->rank; d++)
				ev[m] = nv_coord(f, L, r, d), edt[m++] = DT_I32;
			ev[m] = x->r[r], edt[m++] = x->dt;
		}
		LLVMValueRef c = nv_valid(f, L, r);
		c = own && c ? LLVMBuildAnd(g->b, own, c, "") : own ? own : c;
		if (!c) {
			cg_debug_print(g, fmt, ev, edt, n);
			continue;
		}
		LLVMBasicBlockRef print = cg_block(g, "print"), cont = cg_block(g, "print.end");
		LLVMBuildCondBr(g->b, c, print, cont);
		LLVMPositionBuilderAtEnd(g->b, print);
		cg_debug_print(g, fmt, ev, edt, n);
		LLVMBuildBr(g->b, cont);
		LLVMPositionBuilderAtEnd(g->b, cont);
	}
}

/* debug_print and debug_check (§7.19).  A program's scalars are the same on
 * every thread, so thread 0 prints, once per program as on the host; a
 * failed check traps in thread 0 after printing, which ends the launch with
 * an error (the other threads go on until then).  A block prints one line
 * per element (emit_debug_block). */
static bool emit_debug(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMValueRef first = LLVMBuildICmp(g->b, LLVMIntEQ, f->tid, cg_i32(g, 0), "first");
	if (i->op == IR_DEBUG_CHECK) {
		LLVMValueRef ok = nv_val(f, i->args[0])->r[0];
		cg_debug_check(g, LLVMBuildOr(g->b, ok, LLVMBuildNot(g->b, first, ""), ""), i->str, i->loc);
		return true;
	}
	LLVMValueRef *v = arena_alloc(g->cc->arena, (size_t)(i->nargs + 1) * sizeof *v);
	DType *dts = arena_alloc(g->cc->arena, (size_t)(i->nargs + 1) * sizeof *dts);
	int block = -1;
	for (int k = 0; k < i->nargs; k++) {
		if (i->args[k]->type->rank > 0) {
			if (block >= 0)
				return nv_fail(f, i->loc, "a debug_print of more than one block is not supported by --target=%s "
				               "(it prints a line per element of its block): print each block in a "
				               "debug_print of its own [§7.19]", f->nv->target_name);
			block = k;
			continue;
		}
		v[k] = nv_val(f, i->args[k])->r[0];
		dts[k] = i->args[k]->type->dtype;
	}
	if (block >= 0) {
		emit_debug_block(f, i, block, v, dts);
		return true;
	}
	LLVMBasicBlockRef print = cg_block(g, "print"), cont = cg_block(g, "print.end");
	LLVMBuildCondBr(g->b, first, print, cont);
	LLVMPositionBuilderAtEnd(g->b, print);
	cg_debug_print(g, i->str, v, dts, i->nargs);
	LLVMBuildBr(g->b, cont);
	LLVMPositionBuilderAtEnd(g->b, cont);
	return true;
}

/* Whether a tensor of type t with 2^regbits elements on each thread of a
 * CTA of 2^warpbits warps fits. */
static bool fits_thread(NvFn *f, Loc loc, const Type *t, int regbits, int warpbits)
{
	if (regbits <= NV_MAX_REG_BITS)
		return true;
	return nv_fail(f, loc, "%s is too large for one program on --target=%s: 2^%d elements per thread, at most "
	               "2^%d (%d threads) [§10.2]", type_str(f->nv->cc->arena, t), f->nv->target_name, regbits,
	               NV_MAX_REG_BITS, 32 << warpbits);
}

/* Every tensor value of region r, spread over all threads (layouts never
 * spread one wider), fits a thread: checked before layouts are made, so no
 * later step works per element of a value too large. */
static bool values_fit(NvFn *f, const Region *r, int warpbits)
{
	const Inst *at;
	const Value *v = nv_value_too_large(r, warpbits, &at);
	return !v || fits_thread(f, at->loc, v->type, lay_thread_bits(v->type, warpbits), warpbits);
}

static bool emit_inst(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	if (g->failed)
		return false;
	for (int r = 0; r < i->nresults; r++) {
		const GpuLayout *L = is_tensor(i->results[r]) ? f->plan->of[i->results[r]->id] : NULL;
		if (L && !fits_thread(f, i->loc, i->results[r]->type, L->nregbits, L->warpbits))
			return false;
	}
	switch (i->op) {
	case IR_CONST:
		if (!is_tensor(i->results[0])) {
			DType dt = i->results[0]->type->dtype;
			f->vals[i->results[0]->id] = gv_scalar(f, dt, cg_const(g, dt, i->ival, i->fval));
		}
		return true;
	case IR_PROGRAM_ID: case IR_NUM_PROGRAMS:
		if (i->ival < 0 || i->ival >= f->k->ngrid)
			return nv_fail(f, i->loc, "%s: %s of axis %lld, the grid has %d", f->k->name, op_info[i->op].name,
			               (long long)i->ival, f->k->ngrid);
		f->vals[i->results[0]->id] =
			gv_scalar(f, DT_I32, (i->op == IR_PROGRAM_ID ? f->pid : f->nprog)[i->ival]);
		return true;
	case IR_LOAD: case IR_STORE: case IR_ATOMIC:
		return nv_access(f, i);
	case IR_ALLOC:
		if (!f->refs[i->results[0]->id])
			return nv_fail(f, i->loc, "%s: a scratch buffer outside the kernel body", f->k->name);
		return true;
	case IR_FOR: return emit_for(f, i);
	case IR_IF: return emit_if(f, i);
	case IR_WHILE: return emit_while(f, i);
	case IR_DOT: return nv_dot(f, i);
	case IR_DEBUG_PRINT: case IR_DEBUG_CHECK: return emit_debug(f, i);
	case IR_ADD:
		/* acc + dot(a, b): the dot started from acc. */
		for (int k = 0; k < 2 && i->nargs == 2; k++) {
			const Value *d = i->args[k];
			if (d->def && d->def->op == IR_DOT && nv_dot_fused_add(f, d->def) == i) {
				GV *y = nv_convert(f, f->vals[d->id], f->plan->of[i->results[0]->id]);
				if (!y)
					return false;
				f->vals[i->results[0]->id] = y;
				return true;
			}
		}
		break;
	case IR_YIELD: internal_error("nvptx: stray yield");
	default:
		break;
	}
	if ((op_info[i->op].flags & F_ELEMWISE) && !is_tensor(i->results[0]))
		return emit_scalar_op(f, i);
	return nv_tensor_op(f, i);
}

/* ---- the kernel entry ---------------------------------------------------------------------- */

static LLVMValueRef sreg(NvFn *f, const char *name)
{
	return nv_intrinsic(f, name, NULL, 0, NULL, 0);
}

static void str_attr(Cg *g, LLVMValueRef fn, const char *k, const char *v)
{
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
	                        LLVMCreateStringAttribute(g->ctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

/* Gives every ALLOC (scratch) of the body its place at the start of the
 * shared memory block; false (reported) when they do not fit in it. */
static bool place_scratch(NvFn *f, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int k = 0; k < i->nregions; k++)
			if (!place_scratch(f, i->regions[k]))
				return false;
		if (i->op != IR_ALLOC)
			continue;
		const Type *t = i->results[0]->type;
		/* < 2^63 bytes (type_fits), so no overflow; smem_scratch <= cap */
		uint64_t bytes = ((uint64_t)type_numel(t) * (uint64_t)nv_smem_elem(t->dtype) + 15) / 16 * 16;
		uint64_t cap = nv_smem_cap(f->nv);
		if (bytes > cap - f->smem_scratch)
			return nv_fail(f, i->loc, "scratch %s does not fit in shared memory on --target=%s: at most %llu "
			               "bytes of scratch per program [§10.2]", type_shape_str(f->g->cc->arena, t),
			               f->nv->target_name, (unsigned long long)cap);
		LLVMValueRef off = cg_i32(f->g, (int32_t)f->smem_scratch);
		LLVMValueRef p = LLVMBuildInBoundsGEP2(f->pre, f->g->t_i8, f->smem, &off, 1, "scratch");
		f->refs[i->results[0]->id] = nv_make_ref(f, t, p, 3, f->nrefs++, false, i->loc);
		f->smem_scratch += bytes;
	}
	return true;
}

static int count_allocs(const Region *r)
{
	int n = 0;
	for (const Inst *i = r->first; i; i = i->next) {
		n += i->op == IR_ALLOC;
		for (int k = 0; k < i->nregions; k++)
			n += count_allocs(i->regions[k]);
	}
	return n;
}

/* The shared memory block of the kernel: the placeholder every access
 * addresses becomes a static array, or the dynamic one. */
static uint64_t smem_total(NvFn *f)
{
	if (f->wgmma)
		f->smem_temp = nv_align_up(f->smem_temp, NV_WGMMA_ALIGN);
	return f->smem_scratch + f->smem_temp + f->smem_pipe_bytes;
}

static void finish_smem(NvFn *f, GpuKernel *info)
{
	Cg *g = f->g;
	uint64_t total = smem_total(f);
	info->dynamic_smem = 0;
	if (total == 0) {
		LLVMReplaceAllUsesWith(f->smem, LLVMGetUndef(LLVMTypeOf(f->smem)));
		LLVMDeleteGlobal(f->smem);
		LLVMReplaceAllUsesWith(f->smem_pipe, LLVMGetUndef(LLVMTypeOf(f->smem_pipe)));
		LLVMDeleteGlobal(f->smem_pipe);
		return;
	}
	LLVMValueRef gv;
	if (total <= STATIC_SMEM_LIMIT) {
		LLVMTypeRef at = LLVMArrayType2(g->t_i8, total);
		gv = LLVMAddGlobalInAddressSpace(g->mod, at, arena_printf(g->cc->arena, "%s.smem", f->k->name), 3);
		LLVMSetInitializer(gv, LLVMGetUndef(at));
		LLVMSetLinkage(gv, LLVMInternalLinkage);
	} else {
		gv = LLVMGetNamedGlobal(g->mod, "pk_dynamic_smem");
		if (!gv) {
			gv = LLVMAddGlobalInAddressSpace(g->mod, LLVMArrayType2(g->t_i8, 0), "pk_dynamic_smem", 3);
			LLVMSetLinkage(gv, LLVMExternalLinkage);
		}
		info->dynamic_smem = (uint32_t)total;
	}
	LLVMSetAlignment(gv, f->wgmma ? NV_WGMMA_ALIGN : 16);
	LLVMReplaceAllUsesWith(f->smem, gv);
	LLVMDeleteGlobal(f->smem);
	/* The pipeline buffers follow the temporary area. */
	LLVMValueRef off = cg_i32(g, (int32_t)(f->smem_scratch + f->smem_temp));
	LLVMReplaceAllUsesWith(f->smem_pipe, LLVMConstInBoundsGEP2(g->t_i8, gv, &off, 1));
	LLVMDeleteGlobal(f->smem_pipe);
}

/* The kernel's entry function: parameters operands, scalars (memory form),
 * sizes, grid extents; a CTA of `warps` warps. */
static LLVMValueRef kernel_entry(Nv *nv, const IrKernel *k, const char *name, int warps)
{
	Cg *g = &nv->g;
	Arena *a = nv->cc->arena;
	int np = k->noperands + k->nscalars + k->nsizes + k->ngrid;
	LLVMTypeRef *pt = arena_alloc(a, (size_t)(np + nv->ntma_decl + 1) * sizeof *pt);
	int p = 0;
	for (int o = 0; o < k->noperands; o++)
		pt[p++] = nv->t_gptr;
	for (int s = 0; s < k->nscalars; s++)
		pt[p++] = cg_mem_type(g, k->scalars[s]->dtype);
	for (int s = 0; s < k->nsizes; s++)
		pt[p++] = g->t_i64;
	for (int d = 0; d < k->ngrid; d++)
		pt[p++] = g->t_i32;
	for (int t = 0; t < nv->ntma_decl; t++)
		pt[p++] = g->t_ptr;
	LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->t_void, pt, (unsigned)p, 0));
	LLVMSetFunctionCallConv(fn, LLVMPTXKernelCallConv);
	cg_attr(g, fn, LLVMAttributeFunctionIndex, "nounwind", 0);
	str_attr(g, fn, "nvvm.reqntid", arena_printf(a, "%d", warps * 32));
	if (nv->pair_axis >= 0)
		str_attr(g, fn, "nvvm.cluster_dim", "2,1,1");
	for (int o = 0; o < k->noperands; o++) {
		LLVMValueRef prm = LLVMGetParam(fn, (unsigned)o);
		LLVMSetValueName2(prm, k->operands[o]->name, strlen(k->operands[o]->name));
		/* Distinct operands do not alias (lang-spec §5.2); `in` ones are
		 * read-only, so loads from them may use the non-coherent path.
		 * The launch stub checks the 16-byte alignment. */
		cg_attr(g, fn, (unsigned)o + 1, "noalias", 0);
		cg_attr(g, fn, (unsigned)o + 1, "align", 16);
		if (param_mode_readonly(k->operands[o]->mode))
			cg_attr(g, fn, (unsigned)o + 1, "readonly", 0);
	}
	/* Tensor maps: 128-byte structs in the parameter space, addressed in
	 * place by the copy engine (__grid_constant__). */
	for (int t = 0; t < nv->ntma_decl; t++) {
		unsigned at = (unsigned)(np + t) + 1;
		unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
		LLVMAddAttributeAtIndex(fn, at, LLVMCreateTypeAttribute(g->ctx, byval, LLVMArrayType2(g->t_i8, 128)));
		cg_attr(g, fn, at, "align", 64);
		LLVMAddAttributeAtIndex(fn, at, LLVMCreateStringAttribute(g->ctx, "nvvm.grid_constant", 18, "", 0));
		LLVMSetValueName2(LLVMGetParam(fn, at - 1), "tmap", 4);
	}
	return fn;
}

/* The per-function state of kernel k's entry fn: the layout plan, the value
 * tables, the entry and program blocks (the builder at the end of the entry
 * block, before its branch to prog), thread ids, the shared-memory
 * placeholders. */
static NvFn *new_fn(Nv *nv, const IrKernel *k, LLVMValueRef fn, int warpbits, LLVMBasicBlockRef *prog_out)
{
	Cg *g = &nv->g;
	Arena *a = nv->cc->arena;
	NvFn *f = arena_alloc(a, sizeof *f);
	f->nv = nv;
	f->g = g;
	f->k = k;
	f->fn = fn;
	f->pair_cand = -1;
	if (!values_fit(f, k->body, warpbits))
		return NULL;
	f->plan = gpu_assign_layouts(a, k, warpbits, nv->wgmma);
	for (int v = 0; v <= k->nvalues; v++)
		f->wgmma |= f->plan->wgmma[v];
	f->vals = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *f->vals);
	f->refs = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *f->refs);
	f->deferred = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *f->deferred);
	f->early = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *f->early);
	f->nrefs = 0;
	int maxrefs = k->noperands + count_allocs(k->body) + 1;
	f->rs = arena_alloc(a, (size_t)maxrefs * sizeof *f->rs);

	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g->ctx, fn, "entry");
	LLVMBasicBlockRef prog = *prog_out = LLVMAppendBasicBlockInContext(g->ctx, fn, "program");
	LLVMPositionBuilderAtEnd(g->b, entry);
	f->entry_br = LLVMBuildBr(g->b, prog);
	f->pre = LLVMCreateBuilderInContext(g->ctx);
	vec_push(a, &nv->builders, f->pre);
	LLVMPositionBuilderBefore(f->pre, f->entry_br);
	LLVMPositionBuilderBefore(g->b, f->entry_br);
	f->tid = sreg(f, "llvm.nvvm.read.ptx.sreg.tid.x");
	f->lane = LLVMBuildAnd(g->b, f->tid, cg_i32(g, 31), "lane");
	f->warp = LLVMBuildLShr(g->b, f->tid, cg_i32(g, 5), "warp");
	f->smem = LLVMAddGlobalInAddressSpace(g->mod, g->t_i8, arena_printf(a, "%s.smem.placeholder", k->name), 3);
	f->smem_pipe = LLVMAddGlobalInAddressSpace(g->mod, g->t_i8, arena_printf(a, "%s.pipe.placeholder", k->name), 3);
	f->pipelined = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *f->pipelined);
	return f;
}

/* Program ids: blockIdx.x is the index over the parallel axes, row-major
 * or grouped (nv_sched_program_ids); the arbitrary axes are loops
 * (emit_task). */
static void program_ids(NvFn *f)
{
	const IrKernel *k = f->k;
	Arena *a = f->nv->cc->arena;
	LLVMValueRef fn = f->fn;
	f->pid = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *f->pid);
	f->nprog = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *f->nprog);
	int base = k->noperands + k->nscalars + k->nsizes;
	for (int d = 0; d < k->ngrid; d++) {
		f->nprog[d] = LLVMGetParam(fn, (unsigned)(base + d));
		LLVMSetValueName2(f->nprog[d], arena_printf(a, "nprog%d", d), strlen(arena_printf(a, "nprog%d", d)));
		/* Merged programs (nvptx_merge.c): the CTAs along d are the
		 * extent's r-th part (the stub checks that r divides it). */
		if (f->nv->merge && f->nv->merge[d] > 1)
			f->nprog[d] = LLVMBuildUDiv(f->g->b, f->nprog[d], cg_i32(f->g, f->nv->merge[d]), "merged");
	}
	if (!f->persistent)
		nv_sched_program_ids(f, sreg(f, "llvm.nvvm.read.ptx.sreg.ctaid.x"));
}

/* Binds the body's arguments: operand Refs, scalars, sizes; places the
 * scratch buffers.  false after an error. */
static bool bind_body_args(NvFn *f)
{
	Cg *g = f->g;
	const IrKernel *k = f->k;
	Arena *a = f->nv->cc->arena;
	LLVMValueRef fn = f->fn;
	const Region *body = k->body;
	int nargs = k->noperands + k->nscalars + k->nsizes;
	if (body->nargs != nargs || !k->refs_lowered || k->tiled) {
		error_at(f->nv->cc, k->loc, "%s: the CUDA back end needs the IR after lower-refs (and before tile-host)",
		         k->name);
		return false;
	}
	f->sizes = arena_alloc(a, (size_t)(k->nsizes + 1) * sizeof *f->sizes);
	for (int s = 0; s < k->nsizes; s++) {
		f->sizes[s] = LLVMGetParam(fn, (unsigned)(k->noperands + k->nscalars + s));
		LLVMSetValueName2(f->sizes[s], k->sizes[s], strlen(k->sizes[s]));
	}
	for (int o = 0; o < k->noperands; o++) {
		const Value *v = body->args[o];
		if (v->type->kind != TY_REF)
			return nv_fail(f, k->operands[o]->loc, "%s: body argument %d is not a Ref", k->name, o);
		GRef *r = nv_make_ref(f, v->type, LLVMGetParam(fn, (unsigned)o), 1, f->nrefs++,
		                      param_mode_readonly(k->operands[o]->mode), k->operands[o]->loc);
		if (!r)
			return false;
		f->refs[v->id] = r;
	}
	for (int s = 0; s < k->nscalars; s++) {
		LLVMValueRef x = LLVMGetParam(fn, (unsigned)(k->noperands + s));
		LLVMSetValueName2(x, k->scalars[s]->name, strlen(k->scalars[s]->name));
		DType dt = k->scalars[s]->dtype;
		f->vals[body->args[k->noperands + s]->id] = gv_scalar(f, dt, cg_from_mem(g, dt, x));
	}
	for (int s = 0; s < k->nsizes; s++)
		f->vals[body->args[k->noperands + k->nscalars + s]->id] = gv_scalar(f, DT_I64, f->sizes[s]);
	if (!place_scratch(f, body))
		return false;
	/* wgmma operand buffers (temporary and pipeline areas) start on
	 * swizzle-atom boundaries. */
	if (f->wgmma)
		f->smem_scratch = nv_align_up(f->smem_scratch, NV_WGMMA_ALIGN);
	return true;
}

/* One task of the CTA from block prog on: the body, in nested loops over
 * the arbitrary axes (the first axis outermost).  false after an error. */
static bool emit_task(NvFn *f, LLVMBasicBlockRef prog)
{
	Cg *g = f->g;
	const IrKernel *k = f->k;
	Arena *a = f->nv->cc->arena;
	const Region *body = k->body;
	LLVMPositionBuilderAtEnd(g->b, prog);
	int narb = 0;
	LLVMBasicBlockRef *heads = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *heads);
	LLVMBasicBlockRef *exits = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *exits);
	LLVMValueRef *ctr = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *ctr);
	for (int d = 0; d < k->ngrid; d++) {
		if (!(k->semantics && k->semantics[d] == AXIS_ARBITRARY) || d == f->nv->kgrid_axis)
			continue;
		LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
		heads[narb] = cg_block(g, "arb.head");
		LLVMBasicBlockRef bb = cg_block(g, "arb.body");
		exits[narb] = cg_block(g, "arb.exit");
		LLVMBuildBr(g->b, heads[narb]);
		LLVMPositionBuilderAtEnd(g->b, heads[narb]);
		ctr[narb] = LLVMBuildPhi(g->b, g->t_i32, "arb");
		LLVMValueRef zero = cg_i32(g, 0);
		LLVMAddIncoming(ctr[narb], &zero, &from, 1);
		LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, ctr[narb], f->nprog[d], ""), bb, exits[narb]);
		LLVMPositionBuilderAtEnd(g->b, bb);
		f->pid[d] = ctr[narb++];
	}
	f->arbitrary_depth = narb;
	if (!nv_region(f, body, NULL, NULL, NULL))
		return false;
	for (int j = narb - 1; j >= 0; j--) {
		/* The next program of the task sees every effect of this one. */
		if (j == narb - 1)
			nv_barrier(f);
		LLVMValueRef next = LLVMBuildAdd(g->b, ctr[j], cg_i32(g, 1), "");
		LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
		LLVMAddIncoming(ctr[j], &next, &latch, 1);
		LLVMBuildBr(g->b, heads[j]);
		LLVMPositionBuilderAtEnd(g->b, exits[j]);
	}
	return true;
}

/* The tasks of a persistent CTA from block prog on (nv_sched_persistent):
 * task t = blockIdx.x, then every gridDim.x after it below the number of
 * tasks (the product of the parallel axes' extents, < 2^31 as the stub
 * checks, so t + gridDim.x < 2^32 does not wrap), each its programs as in a
 * CTA of its own.  false after an error. */
static bool emit_tasks(NvFn *f, LLVMBasicBlockRef prog)
{
	Cg *g = f->g;
	const IrKernel *k = f->k;
	int pair = f->nv->pair_axis;
	LLVMPositionBuilderAtEnd(g->b, prog);
	LLVMValueRef tasks = cg_i32(g, 1);
	for (int d = 0; d < k->ngrid; d++) {
		if (k->semantics && k->semantics[d] == AXIS_ARBITRARY)
			continue;
		LLVMValueRef n = f->nprog[d];
		if (d == pair) /* pairs of programs along it, the last one maybe alone */
			n = LLVMBuildLShr(g->b, LLVMBuildAdd(g->b, n, cg_i32(g, 1), ""), cg_i32(g, 1), "pairs");
		tasks = LLVMBuildMul(g->b, tasks, n, "tasks");
	}
	/* In 2-CTA clusters the cluster's two CTAs take the same task, a pair
	 * of programs (nv_sched_program_ids). */
	LLVMValueRef first =
	    sreg(f, pair >= 0 ? "llvm.nvvm.read.ptx.sreg.clusterid.x" : "llvm.nvvm.read.ptx.sreg.ctaid.x");
	LLVMValueRef step =
	    sreg(f, pair >= 0 ? "llvm.nvvm.read.ptx.sreg.nclusterid.x" : "llvm.nvvm.read.ptx.sreg.nctaid.x");
	if (pair >= 0)
		f->rank = sreg(f, "llvm.nvvm.read.ptx.sreg.cluster.ctarank");
	LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b), head = cg_block(g, "task.head");
	LLVMBasicBlockRef body = cg_block(g, "task"), done = cg_block(g, "task.done");
	LLVMBuildBr(g->b, head);
	LLVMPositionBuilderAtEnd(g->b, head);
	LLVMValueRef t = LLVMBuildPhi(g->b, g->t_i32, "task");
	LLVMAddIncoming(t, &first, &from, 1);
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, t, tasks, ""), body, done);
	LLVMPositionBuilderAtEnd(g->b, body);
	nv_sched_program_ids(f, t);
	LLVMBasicBlockRef run = body, skip = NULL;
	if (pair >= 0) {
		/* A lone program: rank 0's, rank 1 waits for the next task. */
		run = cg_block(g, "task.run");
		skip = cg_block(g, "task.next");
		LLVMValueRef mine = LLVMBuildOr(g->b, f->paired, LLVMBuildICmp(g->b, LLVMIntEQ, f->rank, cg_i32(g, 0), ""), "");
		LLVMBuildCondBr(g->b, mine, run, skip);
	}
	if (!emit_task(f, run))
		return false;
	if (skip) {
		LLVMBuildBr(g->b, skip);
		LLVMPositionBuilderAtEnd(g->b, skip);
	}
	/* plan_cluster asked for clusters only where the CTAs stayed persistent. */
	PKC_ASSERT(pair < 0 || !(f->sched_shared || f->pipe_chain));
	if (f->sched_shared || f->pipe_chain) {
		/* CTAs sharing an SM, or a pipeline of chained dots (attention:
		 * more registers and no gain, causal d128 24 % slower with the copy
		 * engine): one task each after all (nvptx_sched.c). */
		LLVMReplaceAllUsesWith(t, first);
		LLVMInstructionEraseFromParent(t);
		LLVMBuildBr(g->b, done);
		LLVMPositionBuilderAtEnd(g->b, done);
		f->persistent = false;
		return true;
	}
	/* The next task's copies (the copy engine's among them) may overwrite
	 * shared memory this one's threads still read or wrote. */
	nv_proxy_fence(f, f->wgmma);
	nv_barrier(f);
	LLVMValueRef next = LLVMBuildAdd(g->b, t, step, "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
	LLVMAddIncoming(t, &next, &latch, 1);
	LLVMBuildBr(g->b, head);
	LLVMPositionBuilderAtEnd(g->b, done);
	/* Neither CTA of a cluster leaves while copies the other issued may
	 * still write its shared memory. */
	if (pair >= 0)
		nv_cluster_sync(f);
	return true;
}

/* Drops f's entry and its shared-memory placeholders (to emit it again),
 * and the known bit patterns of half values: keyed by the address of an
 * LLVM value, they would outlive the entry's values. */
static void discard(NvFn *f)
{
	f->g->half_bits = (PtrMap){0};
	LLVMDeleteFunction(f->fn);
	LLVMReplaceAllUsesWith(f->smem, LLVMGetUndef(LLVMTypeOf(f->smem)));
	LLVMDeleteGlobal(f->smem);
	LLVMReplaceAllUsesWith(f->smem_pipe, LLVMGetUndef(LLVMTypeOf(f->smem_pipe)));
	LLVMDeleteGlobal(f->smem_pipe);
}

/* --resource-usage: the unit each dot of region r takes (layout plan P),
 * and why not the tensor cores' where it cannot take them (gpu_layout.c's
 * rules), so that a block shape off them shows.  The dots of one source
 * dot (a batched dot's, one per batch) get one note: *last is the last
 * noted. */
static void note_dot_units(Nv *nv, const Region *r, const LayoutPlan *P, int warpbits, Loc *last)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int k = 0; k < i->nregions; k++)
			note_dot_units(nv, i->regions[k], P, warpbits, last);
		if (i->op != IR_DOT ||
		    (last->file == i->loc.file && last->line == i->loc.line && last->col == i->loc.col))
			continue;
		*last = i->loc;
		const Type *a = i->args[0]->type, *rt = i->results[0]->type;
		int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1], N = rt->dims[rt->rank - 1];
		int res = i->results[0]->id, warps = 1 << warpbits;
		char why[160] = "";
		const char *unit = P->wgmma[res] ? "wgmma (tensor cores, a warpgroup a 64-row tile)"
		                 : P->mma[res]   ? "mma.sync (tensor cores, a warp a 16-row tile)"
		                                 : "FMA (no tensor cores)";
		if (!P->mma[res])
			snprintf(why, sizeof why, "; they need f16 or bf16 operands with f32 accumulation, M a power of two, "
			                          "K a multiple of 16, N a power of two >= 8 or a multiple of 16");
		else if (!P->wgmma[res] && nv->wgmma && warps < 4)
			snprintf(why, sizeof why, "; wgmma needs a warpgroup (4 warps); the kernel runs with %d", warps);
		else if (!P->wgmma[res] && nv->wgmma)
			snprintf(why, sizeof why, "; wgmma needs M >= %d here (64 rows for each of the %d warpgroup%s of "
			                          "the %d warps the kernel runs with) and N >= 16", 16 * warps, warps / 4,
			         warps > 4 ? "s" : "", warps);
		note_at(nv->cc, i->loc, "dot of %s[%lld, %lld] and [%lld, %lld] on %s: %s%s", dtype_str(a->dtype),
		        (long long)M, (long long)K, (long long)K, (long long)N, nv->target_name, unit, why);
	}
}

/* Entry `name` for kernel k; info gets its launch geometry. */
static bool emit_kernel(Nv *nv, const IrKernel *k, const char *name, GpuKernel *info)
{
	int warps = nv_sched_warps(nv, k);
	info->name = name;
	info->threads = warps * 32;
	LLVMValueRef fn = kernel_entry(nv, k, name, warps);
	LLVMBasicBlockRef prog;
	NvFn *f = new_fn(nv, k, fn, lay_log2_ceil(warps), &prog);
	if (!f)
		return false;
	f->persistent = nv_sched_persistent(nv, k);
	program_ids(f);
	if (!bind_body_args(f) || !(f->persistent ? emit_tasks(f, prog) : emit_task(f, prog)))
		return false;
	LLVMBuildRetVoid(f->g->b);
	if (f->turns_blocked) {
		/* A CTA barrier where a warpgroup of a turns loop may hold its
		 * turn (nvptx_pipe.c: plan_turns) would deadlock: again with the
		 * warpgroups in step. */
		discard(f);
		int apart = nv->apart;
		nv->apart = -1;
		bool ok = emit_kernel(nv, k, name, info);
		nv->apart = apart;
		return ok;
	}
	if (f->sched_raised && !nv->hint_stages && smem_total(f) > nv_smem_cap(nv)) {
		/* The stages pkc added do not fit beside the rest: again with
		 * num_stages. */
		discard(f);
		nv->hint_stages = true;
		bool ok = emit_kernel(nv, k, name, info);
		nv->hint_stages = false;
		return ok;
	}
	if (f->tma_want.len && !nv->tma_decl) {
		/* Pipelines asked for tensor maps: again with the entry taking
		 * them (nvptx_tma.c), in 2-CTA clusters where a pipeline can share
		 * a tile between neighbouring programs and the CTAs stayed
		 * persistent. */
		int pair = f->persistent ? f->pair_cand : -1;
		discard(f);
		GpuTma *maps = arena_alloc(nv->cc->arena, (size_t)f->tma_want.len * sizeof *maps);
		for (int j = 0; j < f->tma_want.len; j++)
			maps[j] = *(const GpuTma *)f->tma_want.items[j];
		nv->tma_decl = maps;
		nv->ntma_decl = f->tma_want.len;
		nv->pair_axis = pair;
		bool ok = emit_kernel(nv, k, name, info);
		nv->tma_decl = NULL;
		nv->ntma_decl = 0;
		nv->pair_axis = -1;
		return ok;
	}
	if (warps < k->num_warps && !nv->hint_warps && !nv_kernel_optimisable(fn)) {
		/* Fewer warps than asked (nv_sched_warps) made too much code per
		 * thread for LLVM to optimise: again with num_warps. */
		discard(f);
		nv->hint_warps = true;
		bool ok = emit_kernel(nv, k, name, info);
		nv->hint_warps = false;
		return ok;
	}
	if (nv->opt->resource_usage && !nv->assume_div16 && !nv->few_loop) {
		/* Once a kernel: its emission that stands, not its variants'. */
		Loc last = {0};
		note_dot_units(nv, k->body, f->plan, lay_log2_ceil(warps), &last);
	}
	/* Two CTAs an SM (nv_sched_stages): ptxas keeps each to half the
	 * registers. */
	if (f->chain_shared)
		str_attr(f->g, fn, "nvvm.minctasm", "2");
	finish_smem(f, info);
	info->tma = nv->tma_decl;
	info->ntma = nv->ntma_decl;
	info->persistent = f->persistent;
	return !f->g->failed && nv_bound_kernel(nv, k, fn);
}

/* The name of kernel k's aligned variant. */
static const char *aligned_name(Nv *nv, const IrKernel *k)
{
	return arena_printf(nv->cc->arena, "%s__a%d", k->name, GPU_ALIGNED_DIV);
}

bool nv_has_mma_dot(const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_DOT && lay_dot_is_mma(i->args[0]->type, i->args[1]->type, i->results[0]->type))
			return true;
		for (int k = 0; k < i->nregions; k++)
			if (nv_has_mma_dot(i->regions[k]))
				return true;
	}
	return false;
}

/* Whether the strides that dim d of array type t enters (those of the dims
 * before it) are multiples of 16 bytes whatever its extent: the constant
 * dims after d give them that factor ([b, S, h, 64] f16: h's strides are
 * multiples of 128 bytes). */
static bool dim_strides_aligned(const Type *t, int d)
{
	int64_t bytes = dtype_bytes(t->dtype);
	for (int i = d + 1; i < t->rank && bytes % 16; i++)
		if (t->dims[i] > 0)
			bytes *= t->dims[i];
	return bytes % 16 == 0;
}

/* The size symbols kernel k's aligned variant assumes to be multiples of
 * GPU_ALIGNED_DIV (bit s for symbol s; 0: no variant): those that give an
 * operand's rows their stride (a dim after the first, unless constant dims
 * after it already make that stride 16-byte aligned) and that its requires
 * clauses do not prove multiples, when k has a tensor-core dot (whose
 * operand copies need 16-byte rows: cp.async, the pipelines) and the
 * variant's name is free. */
static uint64_t unaligned_sizes(const IrKernel *k)
{
	uint64_t mask = 0;
	for (int o = 0; o < k->noperands; o++) {
		const Type *t = k->operands[o]->array;
		for (int d = 1; t->syms && d < t->rank; d++)
			for (int s = 0; s < k->nsizes && s < 64; s++)
				if (t->dims[d] < 0 && t->syms[d] && strcmp(t->syms[d], k->sizes[s]) == 0 &&
				    !dim_strides_aligned(t, d) && nv_requires_divisor(k, s) < GPU_ALIGNED_DIV)
					mask |= UINT64_C(1) << s;
	}
	return mask;
}

/* Whether no kernel of the module is named `name` (a variant's). */
static bool name_free(const Nv *nv, const char *name)
{
	for (int i = 0; i < nv->m->nkernels; i++)
		if (strcmp(nv->m->kernels[i]->name, name) == 0)
			return false;
	return true;
}

static uint64_t wants_aligned(Nv *nv, const IrKernel *k)
{
	uint64_t mask = unaligned_sizes(k);
	if (!mask || !nv_has_mma_dot(k->body) || !name_free(nv, aligned_name(nv, k)))
		return 0;
	return mask;
}

/* Whether every operand's rows are 16-byte multiples in the entry made now
 * (constant dims, `requires`, or the aligned variant's assumption). */
static bool rows_aligned(const Nv *nv, const IrKernel *k)
{
	if (unaligned_sizes(k) & ~nv->assume_div16)
		return false;
	for (int o = 0; o < k->noperands; o++) {
		const Type *t = k->operands[o]->array;
		bool fixed = t->rank >= 2;
		for (int d = 1; d < t->rank; d++)
			fixed &= t->dims[d] >= 0;
		if (fixed && !dim_strides_aligned(t, 0))
			return false;
	}
	return true;
}

/* Forgets entry `name` (an optional variant). */
static void drop_entry(Nv *nv, const char *name, GpuKernel *info)
{
	LLVMValueRef fn = LLVMGetNamedFunction(nv->g.mod, name);
	if (fn)
		LLVMDeleteFunction(fn);
	memset(info, 0, sizeof *info);
}

/* Kernel k's optional entry `name` (a few-trips or merged variant):
 * where its emission would report anything (§10.2's bounds on its fewer
 * threads, say) or it needs more shared memory than the SM holds (a
 * merged block's f32 epilogue operand staged, say), there is no such
 * entry and nothing is reported; the kernel's other entries stand. */
static bool emit_variant(Nv *nv, const IrKernel *k, const char *name, GpuKernel *info)
{
	Diag saved = nv->cc->diag;
	bool failed = nv->g.failed;
	nv->cc->diag.stream = NULL;
	bool ok = emit_kernel(nv, k, name, info) && nv->cc->diag.nerrors == saved.nerrors &&
	          nv->cc->diag.nwarnings == saved.nwarnings && !nv->g.failed && info->dynamic_smem <= nv_smem_cap(nv);
	nv->cc->diag = saved;
	nv->g.failed = failed;
	if (!ok)
		drop_entry(nv, name, info);
	return ok;
}

/* Entry `name`'s few-trips variant (nvptx_sched.c) into *few, from the
 * same IR, where it has one. */
static void emit_few(Nv *nv, const IrKernel *k, const char *name, GpuKernel *info, GpuKernel *few)
{
	int size;
	int64_t most;
	const char *fname = arena_printf(nv->cc->arena, "%s__few", name);
	if (nv->few_trips && name_free(nv, fname) && (nv->few_loop = nv_sched_few_trips(nv, k, &size, &most)) != NULL) {
		if (emit_variant(nv, k, fname, few)) {
			info->few_trips = few;
			info->few_size = size;
			info->few_most = most;
		}
		nv->few_loop = NULL;
	}
}

/* Whether k's grid is static with fewer than MERGE_STATIC_MIN CTAs once
 * factor[d] programs of each axis d share one: a grid no sm_90 GPU (78 to
 * 144 SMs) would run merged (the stub asks for 3/2 of the SMs for pairs). */
enum {
	MERGE_STATIC_MIN = 64,    /* merged CTAs a static grid needs for a wide merge */
	MERGE_WIDE_THREADS = 256, /* a plain 128 x 128 entry of fewer is the short-loop schedule */
};
static bool grid_small(const IrKernel *k, const int *factor)
{
	int64_t ctas = 1, e;
	for (int d = 0; d < k->ngrid; d++) {
		if (!k->grid || !ir_const_value(k->grid->last->args[d], &e))
			return false;
		ctas *= e / factor[d] > 0 ? e / factor[d] : 1;
		if (ctas >= MERGE_STATIC_MIN)
			return false;
	}
	return true;
}

/* Entry `name`'s merged variant (nvptx_merge.c) into *merged, with its
 * own few-trips variant into *merged_few, where its programs merge.  A
 * wide merge (128 x 128 blocks as 128 x 256) has no few-trips variant
 * (the stub prefers the plain one's: short loops gained nothing from it,
 * bench/RESULTS.md, twenty-sixth session), and none at all where the plain
 * entry is one warpgroup (the short-loop schedule, three CTAs an SM) or
 * the grid is static and small: each entry is ptxas time. */
static void emit_merged(Nv *nv, const IrKernel *k, const char *name, GpuKernel *info, GpuKernel *merged,
                        GpuKernel *merged_few)
{
	Arena *a = nv->cc->arena;
	const char *mname = arena_printf(a, "%s__m", name);
	int *factor = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *factor);
	bool wide = false;
	NvMerge *mg = nv->merge_blocks && name_free(nv, mname) ? nv_merge(a, (IrKernel *)k, factor, &wide) : NULL;
	if (!mg)
		return;
	if (wide && (grid_small(k, factor) || info->threads < MERGE_WIDE_THREADS)) {
		nv_merge_undo(mg);
		return;
	}
	if (!ir_verify(nv->m, "nvptx-merge"))
		internal_error("kernel %s: the merged programs' IR does not verify", k->name);
	nv->merge = factor;
	if (emit_variant(nv, k, mname, merged)) {
		info->merged = merged;
		merged->merge = factor;
		merged->merge_waves = wide;
		if (!wide)
			emit_few(nv, k, mname, merged, merged_few);
	}
	nv->merge = NULL;
	nv_merge_undo(mg);
}

/* Kernel k's entry `name`, its K loops with slices of 64 where the rows
 * are aligned on sm_90a (nvptx_reblock.c: the IR is changed for this entry
 * alone).  Where they are not, on every target, its dots over a whole K
 * become K loops all the same: their copies of unaligned rows go element
 * by element, unrolled over the whole operand (a K of 4096 passed §10.2's
 * bound, 1024 compiled without optimisation).  slot: the entry, its
 * few-trips variant, its merged variant and that one's few-trips variant. */
static bool emit_entry(Nv *nv, const IrKernel *k, const char *name, GpuKernel *slot[4])
{
	/* The module's IR is restored before this returns. */
	GpuKernel *info = slot[0];
	bool aligned = rows_aligned(nv, k);
	nv->rows_unaligned = !aligned;
	NvKgrid *kg = nv->kgrid ? nv_kgrid(nv->cc->arena, (IrKernel *)k) : NULL;
	nv->kgrid_axis = nv_kgrid_axis(kg);
	NvReblock *rb = nv->reblock && aligned     ? nv_reblock(nv->cc->arena, (IrKernel *)k, false)
	                : nv->reblock_whole && !aligned ? nv_reblock(nv->cc->arena, (IrKernel *)k, true)
	                                                : NULL;
	bool ok = emit_kernel(nv, k, name, info);
	if (ok && aligned && nv->wgmma_warps) {
		emit_few(nv, k, name, info, slot[1]);
		emit_merged(nv, k, name, info, slot[2], slot[3]);
	}
	nv_reblock_undo(rb);
	nv_kgrid_undo(kg);
	nv->kgrid_axis = -1;
	return ok;
}

/* ---- the module ------------------------------------------------------------------------ */

static void init_llvm_nvptx(void)
{
	static bool done;
	if (done)
		return;
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
	cg_llvm_init();
	done = true;
}

/* The NVPTX target machine.  Its code generation stops at the Default
 * level: ptxas schedules and allocates again, and what Aggressive adds
 * (block placement, tail duplication) left the PTX of every sample and
 * benchmark kernel as it was, at 3.7 ms of samples/matmul.pk's 20 and
 * 2.3 of samples/flash_attention.pk's 31 (twenty-third session). */
static LLVMTargetMachineRef target_machine(const GpuTarget *t, int opt_level)
{
	char *err = NULL;
	LLVMTargetRef target;
	if (LLVMGetTargetFromTriple(NVPTX_TRIPLE, &target, &err))
		internal_error("LLVM has no NVPTX target: %s", err ? err : "?");
	LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, NVPTX_TRIPLE, t->name, t->ptx,
	                                                  cg_codegen_level(opt_level < 2 ? opt_level : 2), LLVMRelocDefault,
	                                                  LLVMCodeModelDefault);
	if (!tm)
		internal_error("cannot create an LLVM target machine for %s %s", NVPTX_TRIPLE, t->name);
	return tm;
}

static bool uses_libdevice(LLVMModuleRef mod)
{
	for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
		size_t n;
		const char *name = LLVMGetValueName2(fn, &n);
		if (LLVMIsDeclaration(fn) && n > 5 && strncmp(name, "__nv_", 5) == 0)
			return true;
	}
	return false;
}

/* Links CUDA's libdevice (the math functions the scalar code calls as
 * __nv_*) into mod; every function but the kernels becomes internal, so
 * the optimiser drops what is unused. */
static bool link_libdevice(Nv *nv, LLVMModuleRef mod)
{
	const char *path = nv_find_libdevice(nv->cc, nv->opt->ptxas);
	Loc none = {0};
	if (!path) {
		error_at(nv->cc, none, "the math functions of --target=%s need CUDA's libdevice.10.bc, which was not found "
		         "(looked next to ptxas and in /usr/local/cuda/nvvm/libdevice)", nv->target_name);
		return false;
	}
	LLVMMemoryBufferRef buf = NULL;
	char *msg = NULL;
	if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
		error_at(nv->cc, none, "cannot read '%s': %s", path, msg ? msg : "?");
		LLVMDisposeMessage(msg);
		return false;
	}
	/* Read lazily, each definition linkonce: the linker then reads and
	 * links only the functions the module calls (and theirs), not the
	 * whole library (24 ms of flash_attention's compile). */
	LLVMModuleRef lib = NULL;
	if (LLVMGetBitcodeModuleInContext2(nv->g.ctx, buf, &lib)) {
		LLVMDisposeMemoryBuffer(buf);
		error_at(nv->cc, none, "'%s' is not LLVM bitcode", path);
		return false;
	}
	for (LLVMValueRef fn = LLVMGetFirstFunction(lib); fn; fn = LLVMGetNextFunction(fn))
		if (!LLVMIsDeclaration(fn) && LLVMGetLinkage(fn) == LLVMExternalLinkage)
			LLVMSetLinkage(fn, LLVMLinkOnceODRLinkage);
	for (LLVMValueRef gv = LLVMGetFirstGlobal(lib); gv; gv = LLVMGetNextGlobal(gv))
		if (!LLVMIsDeclaration(gv) && LLVMGetLinkage(gv) == LLVMExternalLinkage)
			LLVMSetLinkage(gv, LLVMLinkOnceODRLinkage);
	LLVMSetTarget(lib, NVPTX_TRIPLE);
	LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(mod));
	if (LLVMLinkModules2(mod, lib))
		internal_error("cannot link libdevice '%s' into the module", path);
	return true;
}

static void internalize(LLVMModuleRef mod)
{
	for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
		if (!LLVMIsDeclaration(fn) && LLVMGetFunctionCallConv(fn) != LLVMPTXKernelCallConv)
			LLVMSetLinkage(fn, LLVMInternalLinkage);
	for (LLVMValueRef gv = LLVMGetFirstGlobal(mod); gv; gv = LLVMGetNextGlobal(gv))
		if (!LLVMIsDeclaration(gv))
			LLVMSetLinkage(gv, LLVMInternalLinkage);
}

/* Optimises mod for target t and emits its PTX (or its NVVM IR): a copy of
 * it, or, for the last target (`last`), mod itself.  tm: a target machine
 * for t at the optimisation level, or NULL. */
static char *compile_target(Nv *nv, LLVMModuleRef base, const GpuTarget *t, LLVMTargetMachineRef tm, bool last,
                            bool nvvm, size_t *size)
{
	Compiler *cc = nv->cc;
	int o = cg_opt_level(nv->opt->opt_level);
	LLVMModuleRef mod = last ? base : LLVMCloneModule(base);
	LLVMTargetMachineRef own = tm ? NULL : target_machine(t, o);
	if (own)
		tm = own;
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	LLVMPassBuilderOptionsSetLoopUnrolling(po, o >= 2);
	LLVMPassBuilderOptionsSetSLPVectorization(po, o >= 2);
	/* -O0 still resolves libdevice's __nvvm_reflect and drops what is unused. */
	static const char *const pipelines[4] = {"nvvm-reflect,always-inline,globaldce", "default<O1>", "default<O2>",
	                                         "default<O3>"};
	double t0 = time_ms();
	LLVMErrorRef err = LLVMRunPasses(mod, pipelines[o], tm, po);
	time_note(cc, t0, "%s: LLVM passes", t->name);
	LLVMDisposePassBuilderOptions(po);
	if (err) {
		char *e = LLVMGetErrorMessage(err);
		internal_error("LLVM pass pipeline %s failed for %s: %s", pipelines[o], t->name, e);
	}
	char *out;
	if (nvvm) {
		char *text = LLVMPrintModuleToString(mod);
		*size = strlen(text);
		out = xmemdup(text, *size);
		LLVMDisposeMessage(text);
	} else {
		LLVMMemoryBufferRef buf = NULL;
		char *e = NULL;
		t0 = time_ms();
		if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &e, &buf))
			internal_error("LLVM PTX generation failed for %s: %s", t->name, e ? e : "?");
		time_note(cc, t0, "%s: PTX generation", t->name);
		*size = LLVMGetBufferSize(buf);
		out = xmemdup(LLVMGetBufferStart(buf), *size);
		LLVMDisposeMemoryBuffer(buf);
	}
	if (own)
		LLVMDisposeTargetMachine(own);
	if (!last)
		LLVMDisposeModule(mod);
	return out;
}

/* ---- emulation on the CPU (a test aid) ------------------------------------------- */

/* With PKC_GPU_EMULATE set, --emit=nvvm writes the module rewritten to run
 * on the host CPU under test/gpu-emu/emu_rt.c, which runs every thread of a
 * CTA as a POSIX thread: NVVM intrinsics become calls to pk_emu_* (thread
 * ids, barriers, shuffles, mma.sync through warp-wide exchanges), libdevice
 * calls become libm calls, atomics system-scope, and each kernel gets an
 * entry `pk_emu_<kernel>(void **params)` taking its parameters the way
 * cuLaunchKernel does.  It checks the code generator's logic (layouts,
 * barriers, masks) against the host back end without a GPU; PTX and ptxas
 * are not involved. */
static void emu_call_rewrite(Nv *nv, LLVMModuleRef mod, LLVMValueRef fn, const char *emu)
{
	Cg *g = &nv->g;
	LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
	LLVMTypeRef ret = LLVMGetReturnType(fty);
	bool to_ptrs = LLVMGetTypeKind(ret) == LLVMStructTypeKind;
	if (!to_ptrs) {
		/* Scalar signatures are C-compatible: same type, new name. */
		LLVMValueRef nf = LLVMGetNamedFunction(mod, emu);
		if (!nf)
			nf = LLVMAddFunction(mod, emu, fty);
		LLVMReplaceAllUsesWith(fn, nf);
		LLVMDeleteFunction(fn);
		return;
	}
	/* Struct results: void emu(ptr out, ptr in) with every operand as 64
	 * bits in `in` (32-bit ones zero-extended, pointers as addresses) and
	 * the 32-bit results in `out`. */
	LLVMTypeRef pt[2] = {g->t_ptr, g->t_ptr};
	LLVMTypeRef ety = LLVMFunctionType(g->t_void, pt, 2, 0);
	LLVMValueRef nf = LLVMGetNamedFunction(mod, emu);
	if (!nf)
		nf = LLVMAddFunction(mod, emu, ety);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(g->ctx);
	while (LLVMGetFirstUse(fn)) {
		LLVMValueRef call = LLVMGetUser(LLVMGetFirstUse(fn));
		LLVMPositionBuilderBefore(b, call);
		unsigned nargs = (unsigned)LLVMGetNumArgOperands(call);
		unsigned nres = LLVMCountStructElementTypes(ret);
		LLVMValueRef in = LLVMBuildAlloca(b, LLVMArrayType2(g->t_i64, nargs ? nargs : 1), "");
		LLVMValueRef out = LLVMBuildAlloca(b, LLVMArrayType2(g->t_i32, nres), "");
		for (unsigned a = 0; a < nargs; a++) {
			LLVMValueRef v = LLVMGetOperand(call, a);
			if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMPointerTypeKind) {
				v = LLVMBuildPtrToInt(b, v, g->t_i64, "");
			} else {
				if (LLVMTypeOf(v) != g->t_i32)
					v = LLVMBuildBitCast(b, v, g->t_i32, "");
				v = LLVMBuildZExt(b, v, g->t_i64, "");
			}
			LLVMValueRef idx[2] = {cg_i32(g, 0), cg_i32(g, (int32_t)a)};
			LLVMBuildStore(b, v, LLVMBuildInBoundsGEP2(b, LLVMArrayType2(g->t_i64, nargs), in, idx, 2, ""));
		}
		LLVMValueRef args[2] = {out, in};
		LLVMBuildCall2(b, ety, nf, args, 2, "");
		LLVMValueRef agg = LLVMGetUndef(ret);
		for (unsigned r = 0; r < nres; r++) {
			LLVMValueRef idx[2] = {cg_i32(g, 0), cg_i32(g, (int32_t)r)};
			LLVMTypeRef et = LLVMStructGetTypeAtIndex(ret, r);
			LLVMValueRef v = LLVMBuildLoad2(b, g->t_i32, LLVMBuildInBoundsGEP2(b, LLVMArrayType2(g->t_i32, nres), out, idx, 2, ""), "");
			if (et != g->t_i32)
				v = LLVMBuildBitCast(b, v, et, "");
			agg = LLVMBuildInsertValue(b, agg, v, r, "");
		}
		LLVMReplaceAllUsesWith(call, agg);
		LLVMInstructionEraseFromParent(call);
	}
	LLVMDisposeBuilder(b);
	LLVMDeleteFunction(fn);
}

/* The emulator's function for NVVM intrinsic `name`, or NULL.  A prefix
 * entry maps the rest of the name too, its dots made underscores
 * (llvm.nvvm.shfl.sync.bfly.i32 -> pk_emu_shfl_bfly_i32). */
static const char *emu_name(Arena *a, const char *name)
{
	static const struct {
		const char *nvvm, *emu;
		bool prefix;
	} names[] = {
		{"llvm.nvvm.read.ptx.sreg.tid.x", "pk_emu_tid_x", false},
		{"llvm.nvvm.read.ptx.sreg.ctaid.x", "pk_emu_ctaid_x", false},
		{"llvm.nvvm.read.ptx.sreg.nctaid.x", "pk_emu_nctaid_x", false},
		{"llvm.nvvm.barrier.cta.sync.aligned.all", "pk_emu_barrier", false},
		{"llvm.nvvm.shfl.sync.", "pk_emu_shfl_", true},
		{"llvm.nvvm.mma.m16n8k16.row.col.f32.f32", "pk_emu_mma_f16", false},
		{"llvm.nvvm.mma.m16n8k16.row.col.bf16", "pk_emu_mma_bf16", false},
		{"llvm.nvvm.ldmatrix.sync.aligned.m8n8.", "pk_emu_ldmatrix_", true},
		{"llvm.nvvm.cp.async.cg.shared.global.16.s", "pk_emu_cp_async_16", false},
		{"llvm.nvvm.cp.async.commit.group", "pk_emu_cp_async_commit", false},
		{"llvm.nvvm.cp.async.wait.group", "pk_emu_cp_async_wait", false},
		{"llvm.nvvm.cp.async.wait.all", "pk_emu_cp_async_wait_all", false},
		{"llvm.nvvm.ex2.approx.ftz.f32", "pk_emu_ex2_ftz", false},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		size_t n = strlen(names[i].nvvm);
		if (!names[i].prefix) {
			if (strcmp(name, names[i].nvvm) == 0)
				return names[i].emu;
		} else if (strncmp(name, names[i].nvvm, n) == 0) {
			char *e = arena_printf(a, "%s%s", names[i].emu, name + n);
			for (char *c = e + strlen(names[i].emu); *c; c++)
				if (*c == '.')
					*c = '_';
			return e;
		}
	}
	return NULL;
}

static void emulate_module(Nv *nv, LLVMModuleRef mod)
{
	Cg *g = &nv->g;
	Arena *a = nv->cc->arena;
	/* Intrinsics and libdevice. */
	LLVMValueRef next;
	for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = next) {
		next = LLVMGetNextFunction(fn);
		size_t n;
		const char *name = LLVMGetValueName2(fn, &n);
		if (strncmp(name, "__nv_", 5) == 0 && LLVMIsDeclaration(fn)) {
			const char *libm = name + 5;
			LLVMValueRef ex = LLVMGetNamedFunction(mod, libm);
			if (ex) {
				LLVMReplaceAllUsesWith(fn, ex);
				LLVMDeleteFunction(fn);
			} else {
				LLVMSetValueName2(fn, libm, strlen(libm));
			}
			continue;
		}
		if (strcmp(name, "vprintf") == 0) { /* CUDA's printf: an argument buffer, not a va_list */
			LLVMSetValueName2(fn, "pk_emu_vprintf", strlen("pk_emu_vprintf"));
			continue;
		}
		if (strncmp(name, "llvm.nvvm.", 10) != 0)
			continue;
		const char *emu = emu_name(a, name);
		if (!emu)
			internal_error("PKC_GPU_EMULATE: no emulation of %s", name);
		emu_call_rewrite(nv, mod, fn, emu);
	}
	/* Atomics: the CPU has one scope. */
	unsigned sys = LLVMGetSyncScopeID(g->ctx, "", 0);
	for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
		for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
			for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
				if (LLVMIsAAtomicRMWInst(in) || LLVMIsAAtomicCmpXchgInst(in) ||
				    (LLVMIsALoadInst(in) && LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic))
					LLVMSetAtomicSyncScopeID(in, sys);
	/* Kernels: entries taking cuLaunchKernel-style parameters. */
	LLVMBuilderRef b = LLVMCreateBuilderInContext(g->ctx);
	for (int i = 0; i < NV_ENTRY_SLOTS * nv->m->nkernels; i++) {
		if (!nv->kinfo[i].name) /* no such variant */
			continue;
		LLVMValueRef k = LLVMGetNamedFunction(mod, nv->kinfo[i].name);
		LLVMSetFunctionCallConv(k, LLVMCCallConv);
		LLVMSetLinkage(k, LLVMInternalLinkage);
		LLVMTypeRef kty = LLVMGlobalGetValueType(k);
		LLVMValueRef e = LLVMAddFunction(mod, arena_printf(a, "pk_emu_%s", nv->kinfo[i].name),
		                                 LLVMFunctionType(g->t_void, &g->t_ptr, 1, 0));
		LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->ctx, e, "entry"));
		unsigned np = LLVMCountParamTypes(kty);
		LLVMTypeRef *pt = arena_alloc(a, (np + 1) * sizeof *pt);
		LLVMGetParamTypes(kty, pt);
		LLVMValueRef *args = arena_alloc(a, (np + 1) * sizeof *args);
		for (unsigned j = 0; j < np; j++) {
			LLVMValueRef idx = cg_i64(g, j);
			LLVMValueRef slot = LLVMBuildLoad2(b, g->t_ptr, LLVMBuildInBoundsGEP2(b, g->t_ptr, LLVMGetParam(e, 0), &idx, 1, ""), "");
			args[j] = LLVMBuildLoad2(b, pt[j], slot, "");
		}
		LLVMBuildCall2(b, kty, k, args, np, "");
		LLVMBuildRetVoid(b);
	}
	LLVMDisposeBuilder(b);
	LLVMSetTarget(mod, "x86_64-pc-linux-gnu");
	LLVMSetDataLayout(mod, "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128");
}

static void push_image(GpuOutput *out, const GpuTarget *t, GpuImageKind kind)
{
	out->images = xrealloc(out->images, (size_t)(out->nimages + 1) * sizeof *out->images);
	out->images[out->nimages++] = (GpuImage){t, kind, NULL, 0, NULL};
}

/* Disposes the kernels' entry builders and the LLVM state. */
static void nv_close(Nv *nv)
{
	for (int j = 0; j < nv->builders.len; j++)
		LLVMDisposeBuilder(nv->builders.items[j]);
	cg_close(&nv->g);
}

/* What the CUDA back end cannot take, kernel by kernel: stops at the first. */
static bool check_kernels(Compiler *cc, const IrModule *m)
{
	for (int i = 0; i < m->nkernels; i++) {
		const IrKernel *k = m->kernels[i];
		int w = k->num_warps > 0 ? k->num_warps : 4;
		if (w > 32 || (w & (w - 1)) != 0) {
			error_at(cc, k->loc, "%s: num_warps = %d: the CUDA back end needs a power of two up to 32 [§5.8]", k->name,
			         w);
			return false;
		}
		if (k->ngrid > PK_MAX_GRID) {
			error_at(cc, k->loc, "%s: the grid has %d axes; at most %d are supported [§5.3]", k->name, k->ngrid,
			         PK_MAX_GRID);
			return false;
		}
		if (!check_kernel_name(cc, k->name, k->loc))
			return false;
	}
	return true;
}

/* The dynamic shared memory of each kernel against every target's limit:
 * reports the first kernel that does not fit. */
static bool check_smem(Nv *nv)
{
	const GpuOptions *opt = nv->opt;
	for (int j = 0; j < NV_ENTRY_SLOTS * nv->m->nkernels; j++) {
		int i = j % nv->m->nkernels;
		uint64_t total = nv->kinfo[j].dynamic_smem;
		for (int t = 0; t < opt->ntargets && total; t++)
			if (total > nv_smem_limit(opt->targets[t])) {
				error_at(nv->cc, nv->m->kernels[i]->loc, "%s needs %llu bytes of shared memory; %s allows at most %llu [§10.2]",
				         nv->m->kernels[i]->name, (unsigned long long)total, opt->targets[t]->name,
				         (unsigned long long)nv_smem_limit(opt->targets[t]));
				return false;
			}
	}
	return true;
}

/* --emit=ptx, cubin or nvvm: the text of the single target. */
static bool emit_text(Nv *nv, GpuOutput *out)
{
	const GpuOptions *opt = nv->opt;
	const GpuTarget *t = opt->targets[0];
	size_t n;
	char *text = compile_target(nv, nv->g.mod, t, nv->g.tm, true, opt->emit == GPU_EMIT_NVVM, &n);
	if (opt->emit != GPU_EMIT_CUBIN) {
		out->text = text;
		out->text_size = n;
		return true;
	}
	bool ok = nv_ptxas_compile(nv, t, text, n, &out->text, &out->text_size, true);
	free(text);
	return ok;
}

/* Image im's cubin, once its ptxas has finished. */
static bool finish_image(Compiler *cc, GpuImage *im)
{
	char *log;
	PtxasRun *r = im->pending;
	im->pending = NULL;
	bool ok = nv_ptxas_finish(cc, r, &im->data, &im->size, &log);
	free(log);
	return ok;
}

/* How many ptxas runs may be under way at once: one per CPU, up to 8. */
static int max_ptxas_runs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

/* The image of target t and kind k in out. */
static GpuImage *image_of(GpuOutput *out, const GpuTarget *t, GpuImageKind k)
{
	for (int i = 0; i < out->nimages; i++)
		if (out->images[i].target == t && out->images[i].kind == k)
			return &out->images[i];
	return NULL;
}

/* Fills the images planned in out (emit_images): per target LLVM's passes
 * and its PTX, then ptxas as a child process while LLVM compiles the next
 * target (gpu_output_wait collects the cubins); with --resource-usage
 * ptxas is waited for at once, for its notes.  cc: for diagnostics (the
 * worker's own, in a thread). */
static bool fill_images(Nv *nv, Compiler *cc, GpuOutput *out, const char *ptxas)
{
	const GpuOptions *opt = nv->opt;
	bool ok = true;
	int running = 0, oldest = 0, max_runs = max_ptxas_runs();
	for (int t = 0; t < opt->ntargets && ok; t++) {
		size_t n;
		char *ptx = compile_target(nv, nv->g.mod, opt->targets[t], t == 0 ? nv->g.tm : NULL,
		                           t == opt->ntargets - 1, false, &n);
		GpuImage *sass = image_of(out, opt->targets[t], GPU_IMAGE_SASS);
		if (sass && opt->resource_usage) {
			ok = nv_ptxas_compile(nv, opt->targets[t], ptx, n, &sass->data, &sass->size, false);
		} else if (sass) {
			for (; running >= max_runs; oldest++)
				if (out->images[oldest].pending) {
					ok &= finish_image(cc, &out->images[oldest]);
					running--;
				}
			sass->pending = ok ? nv_ptxas_start(cc, ptxas, opt->targets[t], cg_opt_level(opt->opt_level), false,
			                                    ptx, n) : NULL;
			ok = sass->pending != NULL;
			running += ok;
		}
		GpuImage *text = image_of(out, opt->targets[t], GPU_IMAGE_PTX);
		if (ok && text) {
			text->data = ptx;
			text->size = n + 1;
		} else {
			free(ptx);
		}
	}
	return ok;
}

/* The images' thread: LLVM for the GPU targets and their ptxas starts
 * beside the host back end (flash_attention's host,sm_90a: 70 ms of 300 on
 * the critical path before).  It owns the NVVM module and its own
 * diagnostics (wcc, a copy of the compiler's with its own counters: it
 * reports only failures to write or run, with no source location); the
 * IR and the arena are the main thread's. */
struct GpuWorker {
	pthread_t thread;  /* runs worker_main */
	Nv nv;             /* the LLVM state handed over by emit_images */
	GpuOptions opt;    /* a copy of the options (nv.opt points here) */
	Compiler wcc;      /* the thread's compiler: its own counts, and time notes into `times` */
	char *times;       /* -ftime-report lines, printed by worker_join (open_memstream) */
	size_t ntimes;     /* their length */
	GpuOutput *out;    /* the images it fills */
	const char *ptxas; /* the ptxas it starts */
	bool ok;           /* fill_images' result */
	bool internal;     /* it ended on an internal error (message printed): pkc exits 70 at the join */
};

/* An internal error on the thread ends the thread, not the process: the
 * main thread may be inside LLVM; it exits 70 when it joins. */
static void worker_internal_error(void *arg)
{
	GpuWorker *w = arg;
	w->internal = true;
	pthread_exit(NULL);
}

static void *worker_main(void *arg)
{
	GpuWorker *w = arg;
	internal_error_ends_thread(worker_internal_error, w);
	w->ok = fill_images(&w->nv, &w->wcc, w->out, w->ptxas);
	return NULL;
}

/* The thread running (one at a time), from its start to worker_join. */
static GpuWorker *live_worker;

/* Whether out's images are complete: waits for its thread, if any (the
 * thread's diagnostics counted into cc's; its internal error exits 70). */
static bool worker_join(Compiler *cc, GpuOutput *out)
{
	GpuWorker *w = out->worker;
	if (!w)
		return true;
	pthread_join(w->thread, NULL);
	out->worker = NULL;
	live_worker = NULL;
	if (w->internal)
		exit(EXIT_INTERNAL);
	if (w->wcc.time_out) {
		fclose(w->wcc.time_out);
		fwrite(w->times, 1, w->ntimes, stderr);
		free(w->times);
	}
	if (cc) {
		cc->diag.nerrors += w->wcc.diag.nerrors;
		cc->diag.nwarnings += w->wcc.diag.nwarnings;
	}
	nv_close(&w->nv);
	bool ok = w->ok;
	free(w);
	return ok;
}

/* An exit while the thread runs (an error in the host back end, or an
 * internal error) waits for it: LLVM's static destructors must not run
 * under it.  Only the worker is remembered, not its GpuOutput: that may
 * live in a frame gone by the time exit handlers run. */
static void worker_atexit(void)
{
	GpuWorker *w = live_worker;
	if (w && !pthread_equal(pthread_self(), w->thread))
		pthread_join(w->thread, NULL);
}

bool gpu_output_wait(Compiler *cc, GpuOutput *out)
{
	bool ok = worker_join(cc, out);
	for (int i = 0; i < out->nimages; i++)
		if (out->images[i].pending)
			ok &= finish_image(cc, &out->images[i]);
	return ok;
}

/* The images of the fat object: per target a cubin (when ptxas is there)
 * and the PTX of the newest target, PTX last (the runtime prefers exact
 * SASS); fill_images makes them, in a thread when nothing waits for them
 * here (not with --resource-usage, whose notes come in order).  On
 * success nv's LLVM state belongs to the thread (*handed). */
static bool emit_images(Nv *nv, GpuOutput *out, bool *handed)
{
	Compiler *cc = nv->cc;
	const GpuOptions *opt = nv->opt;
	Loc none = {0};
	const char *ptxas = nv_find_ptxas(cc, opt->ptxas);
	if (!ptxas && opt->ptxas && strcmp(opt->ptxas, "none") != 0) {
		error_at(cc, none, "--ptxas=%s: not an executable file", opt->ptxas);
		return false;
	} else if (!ptxas && !opt->ptxas) {
		warning_at(cc, none, "ptxas not found: embedding PTX only; the driver will JIT-compile it at load");
	}
	/* The PTX kept for newer GPUs: the newest target's (a plain one
	 * before an "a" one of the same capability). */
	const GpuTarget *newest = NULL;
	for (int t = 0; t < opt->ntargets; t++) {
		const GpuTarget *x = opt->targets[t];
		if (!newest || x->sm > newest->sm || (x->sm == newest->sm && newest->arch_specific && !x->arch_specific))
			newest = x;
	}
	for (int t = 0; t < opt->ntargets && ptxas; t++)
		push_image(out, opt->targets[t], GPU_IMAGE_SASS);
	for (int t = 0; t < opt->ntargets; t++)
		if (!ptxas || opt->targets[t] == newest)
			push_image(out, opt->targets[t], GPU_IMAGE_PTX);
	if (opt->resource_usage)
		return fill_images(nv, cc, out, ptxas);
	GpuWorker *w = xmalloc(sizeof *w);
	memset(w, 0, sizeof *w);
	w->nv = *nv;
	w->opt = *opt;
	w->nv.opt = &w->opt;
	w->wcc = *cc;
	w->wcc.diag.nerrors = w->wcc.diag.nwarnings = 0;
	if (cc->time_report)
		w->wcc.time_out = open_memstream(&w->times, &w->ntimes);
	w->nv.cc = &w->wcc;
	w->nv.g.cc = &w->wcc;
	w->out = out;
	w->ptxas = ptxas;
	nv_ptxas_prepare();
	static bool handler;
	if (!handler)
		handler = atexit(worker_atexit) == 0;
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
		if (w->wcc.time_out) {
			fclose(w->wcc.time_out);
			free(w->times);
		}
		free(w);
		return fill_images(nv, cc, out, ptxas);
	}
	out->worker = w;
	live_worker = w;
	*handed = true;
	return true;
}

bool codegen_nvptx(Compiler *cc, const IrModule *m, const GpuOptions *opt, GpuOutput *out)
{
	init_llvm_nvptx();
	PKC_ASSERT(opt->ntargets > 0);
	if (!check_kernels(cc, m))
		return false;

	Nv nv = {0};
	nv.cc = cc;
	nv.m = m;
	nv.opt = opt;
	nv.target_name = opt->targets[0]->name;
	/* One NVVM module serves every target: wgmma only when all are sm_90a
	 * (the emulator models mma.sync, not wgmma). */
	bool hopper = !opt->mma_sync;
	for (int t = 0; t < opt->ntargets; t++)
		hopper &= opt->targets[t]->sm == 90 && opt->targets[t]->arch_specific;
	nv.wgmma = hopper && !(opt->emit == GPU_EMIT_NVVM && getenv("PKC_GPU_EMULATE"));
	nv.wgmma_warps = hopper;
	nv.reblock = hopper && !opt->no_reblock;
	nv.reblock_whole = !opt->no_reblock;
	nv.kgrid = !opt->no_kgrid_loop;
	nv.kgrid_axis = -1;
	nv.tma = nv.wgmma && !opt->no_tma;
	nv.persistent = !opt->no_persistent;
	nv.cluster = nv.tma && !opt->no_cluster;
	nv.early = !opt->no_early;
	nv.ahead = !opt->no_ahead;
	nv.few_trips = !opt->no_few_trips;
	nv.merge_blocks = !opt->no_merge_blocks;
	nv.apart = opt->no_pingpong ? -1 : opt->pingpong ? 1 : 0;
	nv.ptxas_release = -1;
	nv.pair_axis = -1;
	for (int t = 0; t < opt->ntargets; t++)
		nv.persistent &= opt->targets[t]->sm >= 90;
	for (int t = 1; t < opt->ntargets; t++)
		nv.target_name = arena_printf(cc->arena, "%s,%s", nv.target_name, opt->targets[t]->name);
	Cg *g = &nv.g;
	g->nvptx = true;
	g->ptx_cas16 = !(opt->emit == GPU_EMIT_NVVM && getenv("PKC_GPU_EMULATE"));
	/* The first target's machine: the data layout, then its code. */
	cg_open(g, cc, m, NVPTX_TRIPLE, target_machine(opt->targets[0], cg_opt_level(opt->opt_level)));
	/* libdevice: no flush-to-zero of subnormals (IEEE results). */
	LLVMAddModuleFlag(g->mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
	                  LLVMValueAsMetadata(LLVMConstInt(g->t_i32, 0, 0)));
	nv.t_gptr = LLVMPointerTypeInContext(g->ctx, 1);
	nv.t_sptr = LLVMPointerTypeInContext(g->ctx, 3);

	int nerr = cc->diag.nerrors;
	/* Per kernel, then per kernel its aligned variant, then their
	 * few-trips variants, their merged variants and those's few-trips
	 * variants (if any): NV_ENTRY_SLOTS. */
	int nk = m->nkernels;
	GpuKernel *kinfo = xmalloc((size_t)(NV_ENTRY_SLOTS * nk + 1) * sizeof *kinfo);
	memset(kinfo, 0, (size_t)(NV_ENTRY_SLOTS * nk + 1) * sizeof *kinfo);
	nv.kinfo = kinfo;
	double t0 = time_ms();
	for (int i = 0; i < nk && !g->failed; i++) {
		const IrKernel *k = m->kernels[i];
		uint64_t mask;
		GpuKernel *own[4] = {&kinfo[i], &kinfo[2 * nk + i], &kinfo[4 * nk + i], &kinfo[5 * nk + i]};
		GpuKernel *al[4] = {&kinfo[nk + i], &kinfo[3 * nk + i], &kinfo[6 * nk + i], &kinfo[7 * nk + i]};
		if (!emit_entry(&nv, k, k->name, own) || !(mask = wants_aligned(&nv, k)))
			continue;
		nv.assume_div16 = mask;
		if (emit_entry(&nv, k, aligned_name(&nv, k), al)) {
			kinfo[i].aligned = &kinfo[nk + i];
			kinfo[i].aligned_sizes = mask;
		}
		nv.assume_div16 = 0;
	}
	time_note(cc, t0, "nvptx: NVVM IR");
	bool ok = !g->failed && cc->diag.nerrors == nerr && check_smem(&nv);

	if (ok) {
		cg_verify(g);
		if (opt->emit == GPU_EMIT_NVVM && getenv("PKC_GPU_EMULATE")) {
			emulate_module(&nv, g->mod);
			char *text = LLVMPrintModuleToString(g->mod);
			out->text_size = strlen(text);
			out->text = xmemdup(text, out->text_size);
			LLVMDisposeMessage(text);
			out->kernels = kinfo;
			out->nkernels = m->nkernels;
			nv_close(&nv);
			return true;
		}
		if (uses_libdevice(g->mod))
			ok = link_libdevice(&nv, g->mod);
		internalize(g->mod);
	}
	/* --resource-usage reports ptxas's figures: say so when it does not run
	 * (a --ptxas=PATH that is no executable is an error in emit_images). */
	bool ptxas_none = opt->ptxas && strcmp(opt->ptxas, "none") == 0;
	if (ok && opt->resource_usage && opt->emit != GPU_EMIT_CUBIN && (!opt->ptxas || ptxas_none) &&
	    (opt->emit != GPU_EMIT_IMAGES || !nv_find_ptxas(cc, opt->ptxas)))
		warning_at(cc, (Loc){0}, "--resource-usage: no register, shared memory or spill figures without ptxas (%s)",
		           opt->emit != GPU_EMIT_IMAGES ? "--emit=ptx and --emit=nvvm do not run it"
		           : ptxas_none ? "--ptxas=none" : "none was found");
	bool handed = false;
	if (ok)
		ok = opt->emit == GPU_EMIT_IMAGES ? emit_images(&nv, out, &handed) : emit_text(&nv, out);
	if (ok && opt->resource_usage && opt->emit == GPU_EMIT_IMAGES)
		for (int i = 0; i < m->nkernels; i++)
			if (kinfo[i].dynamic_smem)
				note_at(cc, m->kernels[i]->loc, "kernel '%s': %u bytes of dynamic shared memory", kinfo[i].name,
				        kinfo[i].dynamic_smem);
	if (ok) {
		out->kernels = kinfo;
		out->nkernels = m->nkernels;
	} else {
		free(kinfo);
	}
	if (!handed)
		nv_close(&nv);
	return ok;
}
