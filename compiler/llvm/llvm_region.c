/* llvm_region.c - tiled IR regions to LLVM IR for the host back end:
 * structured control flow (FOR/IF/WHILE become loops and branches with
 * phis), Ref accesses (point loads, stores and atomics), per-program
 * buffers (ALLOC, hoisted to the function entry) and the program
 * environment (PROGRAM_ID, NUM_PROGRAMS). */
#include "llvm_util.h"
#include "pk_runtime.h" /* PK_MAX_GRID */

#include <stdio.h>
#include <string.h>

/* Per-program buffers up to this many bytes in total live on the stack. */
#define STACK_BUFFER_LIMIT (256 * 1024)
/* Alignment of every per-program buffer (a cache line, and enough for any
 * vector). */
#define BUFFER_ALIGN 64

__attribute__((format(printf, 3, 4)))
static bool fail(CgFn *f, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(&f->g->cc->diag, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
	f->g->failed = true;
	return false;
}

static LLVMValueRef val(CgFn *f, const Value *v)
{
	LLVMValueRef x = f->vals[v->id];
	if (!x)
		internal_error("codegen: kernel %s: value %%%d used before its definition", f->k->name, v->id);
	return x;
}

static CgRef *ref_of(CgFn *f, const Value *v)
{
	CgRef *r = f->refs[v->id];
	if (!r)
		internal_error("codegen: kernel %s: %%%d is not a known Ref", f->k->name, v->id);
	return r;
}

/* ---- Refs and buffers -------------------------------------------------------- */

CgRef *cg_make_ref(CgFn *f, const Type *t, LLVMValueRef base, LLVMValueRef *sizes, bool compute_form, Loc loc)
{
	Cg *g = f->g;
	CgRef *r = arena_alloc(g->cc->arena, sizeof *r);
	r->base = base;
	r->rank = t->rank;
	r->dtype = t->dtype;
	r->compute_form = compute_form;
	r->mem = compute_form && t->dtype != DT_BOOL ? cg_type(g, t->dtype) : cg_mem_type(g, t->dtype);
	r->strides = arena_alloc(g->cc->arena, (size_t)(t->rank + 1) * sizeof *r->strides);
	/* Row-major: the last dim is contiguous; a static extent folds. */
	LLVMValueRef stride = cg_i64(g, 1);
	for (int d = t->rank - 1; d >= 0; d--) {
		r->strides[d] = stride;
		if (d == 0)
			break;
		LLVMValueRef extent;
		if (t->dims[d] >= 0) {
			extent = cg_i64(g, t->dims[d]);
		} else {
			const char *sym = t->syms ? t->syms[d] : NULL;
			int s = -1;
			for (int i = 0; sym && i < f->k->nsizes; i++)
				if (f->k->sizes[i] == sym || strcmp(f->k->sizes[i], sym) == 0)
					s = i;
			if (s < 0 || !sizes) {
				fail(f, loc, "%s: dynamic dimension '%s' is not a size of the kernel", f->k->name, sym ? sym : "?");
				return NULL;
			}
			extent = sizes[s];
		}
		stride = LLVMBuildMul(g->b, stride, extent, "stride");
		LLVMSetNUW(stride, 1);
		LLVMSetNSW(stride, 1);
	}
	return r;
}

/* Every ALLOC in region r and the regions nested in it. */
static void collect_allocs(Arena *a, const Region *r, Vec *out)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_ALLOC)
			vec_push(a, out, (void *)i);
		for (int k = 0; k < i->nregions; k++)
			collect_allocs(a, i->regions[k], out);
	}
}

/* A zero-initialised thread-local byte array of the kernel, 64-byte
 * aligned: per-thread storage that outlives a program. */
static LLVMValueRef thread_block(CgFn *f, const char *what, uint64_t bytes)
{
	Cg *g = f->g;
	LLVMTypeRef at = LLVMArrayType2(g->t_i8, bytes);
	LLVMValueRef gv = LLVMAddGlobal(g->mod, at, arena_printf(g->cc->arena, "%s.%s", f->k->name, what));
	LLVMSetInitializer(gv, LLVMConstNull(at));
	LLVMSetLinkage(gv, LLVMInternalLinkage);
	LLVMSetThreadLocal(gv, 1);
	LLVMSetAlignment(gv, BUFFER_ALIGN);
	/* The address differs per thread: take it once, at the entry. */
	return LLVMBuildCall2(g->b, LLVMIntrinsicGetType(g->ctx, LLVMLookupIntrinsicID("llvm.threadlocal.address", 24),
	                                                 &g->t_ptr, 1),
	                      LLVMGetIntrinsicDeclaration(g->mod, LLVMLookupIntrinsicID("llvm.threadlocal.address", 24),
	                                                  &g->t_ptr, 1),
	                      &gv, 1, what);
}

/* Lays out the buffers of one group in a block (each 64-byte aligned) and
 * records their CgRefs.  block NULL: compute *total only. */
static bool place_buffers(CgFn *f, Vec *allocs, LLVMValueRef block, uint64_t *total)
{
	Cg *g = f->g;
	LLVMTargetDataRef td = LLVMGetModuleDataLayout(g->mod);
	uint64_t off = 0;
	for (int n = 0; n < allocs->len; n++) {
		const Inst *i = allocs->items[n];
		const Type *t = i->results[0]->type;
		int64_t numel = type_numel(t);
		if (numel < 0)
			return fail(f, i->loc, "%s: per-program buffer of dynamic shape", f->k->name);
		LLVMTypeRef et = t->dtype == DT_BOOL ? g->t_i8 : cg_type(g, t->dtype);
		uint64_t esize = LLVMABISizeOfType(td, et);
		if ((uint64_t)numel > (UINT64_C(1) << 36) / (esize ? esize : 1))
			return fail(f, i->loc, "%s is too large for one program on the host: a value kept in memory may "
			            "have at most 2^36 bytes [§10.2]", type_shape_str(g->cc->arena, t));
		if (block) {
			LLVMValueRef idx = cg_i64(g, (int64_t)off);
			LLVMValueRef p = off ? LLVMBuildInBoundsGEP2(g->b, g->t_i8, block, &idx, 1, "buf") : block;
			CgRef *r = cg_make_ref(f, t, p, NULL, true, i->loc);
			if (!r)
				return false;
			f->refs[i->results[0]->id] = r;
		}
		off += ((uint64_t)numel * esize + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
	}
	*total = off;
	return true;
}

bool cg_alloc_buffers(CgFn *f, const Region *body, LLVMValueRef *heap)
{
	Cg *g = f->g;
	Vec all = {0}, local = {0}, scratch = {0};
	collect_allocs(g->cc->arena, body, &all);
	for (int n = 0; n < all.len; n++) {
		const Inst *i = all.items[n];
		vec_push(g->cc->arena, i->results[0]->type->space == SPACE_SCRATCH ? &scratch : &local, all.items[n]);
	}
	uint64_t bytes;
	*heap = NULL;
	/* Scratch buffers are thread-local: the programs along the arbitrary
	 * axes of one task run in order on one thread (pk_launch_host), so a
	 * scratch accumulator carries over from one program to the next, as in
	 * Pallas on TPU.  A kernel that initialises its scratch in every
	 * program sees no difference. */
	if (scratch.len) {
		if (!place_buffers(f, &scratch, NULL, &bytes))
			return false;
		if (!place_buffers(f, &scratch, thread_block(f, "scratch", bytes), &bytes))
			return false;
	}
	if (local.len) {
		if (!place_buffers(f, &local, NULL, &bytes))
			return false;
		LLVMValueRef block;
		if (bytes <= STACK_BUFFER_LIMIT) {
			block = LLVMBuildAlloca(g->b, LLVMArrayType2(g->t_i8, bytes), "buffers");
			LLVMSetAlignment(block, BUFFER_ALIGN);
		} else {
			/* Too big for a worker thread's stack.  A program has no way to
			 * report failure, so running out of memory aborts (as a stack
			 * overflow would). */
			LLVMValueRef args[2] = {cg_i64(g, BUFFER_ALIGN), cg_i64(g, (int64_t)bytes)};
			LLVMTypeRef params[2] = {g->t_i64, g->t_i64};
			block = cg_call_extern(g, "aligned_alloc", g->t_ptr, params, 2, false, args, 2);
			LLVMBasicBlockRef oom = cg_block(g, "oom"), ok = cg_block(g, "buffers.ok");
			LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, block, ""), oom, ok);
			LLVMPositionBuilderAtEnd(g->b, oom);
			cg_call_extern(g, "abort", g->t_void, NULL, 0, false, NULL, 0);
			LLVMBuildUnreachable(g->b);
			LLVMPositionBuilderAtEnd(g->b, ok);
			*heap = block;
		}
		if (!place_buffers(f, &local, block, &bytes))
			return false;
	}
	return true;
}

void cg_free_buffers(CgFn *f, LLVMValueRef heap)
{
	if (!heap)
		return;
	Cg *g = f->g;
	LLVMTypeRef p = g->t_ptr;
	cg_call_extern(g, "free", g->t_void, &p, 1, false, &heap, 1);
}

/* ---- memory access ----------------------------------------------------------- */

/* The element address of a point access: base + sum(idx_d * stride_d). */
static LLVMValueRef element_ptr(CgFn *f, const Inst *i, CgRef *r)
{
	Cg *g = f->g;
	LLVMValueRef off = NULL;
	for (int d = 0; d < r->rank; d++) {
		const Value *iv = i->args[1 + d];
		LLVMValueRef x = val(f, iv);
		DType dt = iv->type->dtype;
		if (dtype_bits(dt) < 64)
			x = dtype_is_signed(dt) ? LLVMBuildSExt(g->b, x, g->t_i64, "") : LLVMBuildZExt(g->b, x, g->t_i64, "");
		LLVMValueRef term = x;
		if (d != r->rank - 1) {
			term = LLVMBuildMul(g->b, x, r->strides[d], "");
			LLVMSetNSW(term, 1);
		}
		if (off) {
			off = LLVMBuildAdd(g->b, off, term, "");
			LLVMSetNSW(off, 1);
		} else {
			off = term;
		}
	}
	if (!off)
		return r->base;
	return LLVMBuildInBoundsGEP2(g->b, r->mem, r->base, &off, 1, "");
}

static unsigned elem_align(Cg *g, CgRef *r)
{
	return LLVMABIAlignmentOfType(LLVMGetModuleDataLayout(g->mod), r->mem);
}

/* Point accesses only: tile-host removed everything else. */
static bool check_access(CgFn *f, const Inst *i, CgRef *r)
{
	if (i->has_mask || i->has_other || i->nidx != r->rank)
		return fail(f, i->loc, "%s: masked Ref access reached the host back end (tile-host did not run?)",
		            f->k->name);
	for (int d = 0; d < i->nidx; d++)
		if (i->idx[d].kind != IDX_POINT || i->idx[d].masked)
			return fail(f, i->loc, "%s: a sliced, gathered or masked index reached the host back end "
			            "(tile-host did not run?)", f->k->name);
	return true;
}

/* An element's memory form <-> compute form, for an element stored in
 * compute form (per-program buffers) or not (user memory). */
static LLVMValueRef to_stored_form(Cg *g, DType dt, bool compute_form, LLVMValueRef v)
{
	return compute_form && dt != DT_BOOL ? v : cg_to_mem(g, dt, v);
}

static LLVMValueRef from_stored_form(Cg *g, DType dt, bool compute_form, LLVMValueRef v)
{
	return compute_form && dt != DT_BOOL ? v : cg_from_mem(g, dt, v);
}

static LLVMValueRef to_stored(Cg *g, CgRef *r, LLVMValueRef v)
{
	return to_stored_form(g, r->dtype, r->compute_form, v);
}

static LLVMValueRef from_stored(Cg *g, CgRef *r, LLVMValueRef v)
{
	return from_stored_form(g, r->dtype, r->compute_form, v);
}

static bool emit_load(CgFn *f, const Inst *i)
{
	CgRef *r = ref_of(f, i->args[0]);
	if (!check_access(f, i, r))
		return false;
	LLVMValueRef p = element_ptr(f, i, r);
	LLVMValueRef v = LLVMBuildLoad2(f->g->b, r->mem, p, "");
	LLVMSetAlignment(v, elem_align(f->g, r));
	f->vals[i->results[0]->id] = from_stored(f->g, r, v);
	return true;
}

static bool emit_store(CgFn *f, const Inst *i)
{
	CgRef *r = ref_of(f, i->args[0]);
	if (!check_access(f, i, r))
		return false;
	LLVMValueRef p = element_ptr(f, i, r);
	LLVMValueRef st = LLVMBuildStore(f->g->b, to_stored(f->g, r, val(f, i->args[1 + r->rank])), p);
	LLVMSetAlignment(st, elem_align(f->g, r));
	return true;
}

/* Orders an atomic instruction: sequentially consistent on the host,
 * relaxed at device (GPU) scope in the CUDA back end. */
static void atomic_order(Cg *g, LLVMValueRef inst, bool cmpxchg)
{
	if (!g->nvptx)
		return;
	if (cmpxchg) {
		LLVMSetCmpXchgSuccessOrdering(inst, LLVMAtomicOrderingMonotonic);
		LLVMSetCmpXchgFailureOrdering(inst, LLVMAtomicOrderingMonotonic);
	} else {
		LLVMSetOrdering(inst, LLVMAtomicOrderingMonotonic);
	}
	LLVMSetAtomicSyncScopeID(inst, LLVMGetSyncScopeID(g->ctx, "device", 6));
}

/* Compare-exchange of *p (integer bits): the old bits; *ok whether they
 * equalled cmp (and nv was stored).  For 16 bits in the CUDA back end,
 * inline PTX atom.cas.b16 (sm_70+): LLVM's NVPTX back end widens an i16
 * cmpxchg to a 32-bit one on the enclosing word, which reads the 2 bytes
 * beside the element -- past the end of an array whose last element
 * starts a word (compute-sanitizer memcheck reports it), and LLVM has no
 * intrinsic for the 16-bit form. */
static LLVMValueRef cmpxchg(Cg *g, LLVMValueRef p, LLVMValueRef cmp, LLVMValueRef nv, unsigned align, LLVMValueRef *ok)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef it = LLVMTypeOf(cmp);
	if (g->ptx_cas16 && it == g->t_i16) {
		LLVMTypeRef pt = LLVMTypeOf(p);
		unsigned as = LLVMGetPointerAddressSpace(pt);
		const char *space = as == 1 ? ".global" : as == 3 ? ".shared" : "";
		bool wide = LLVMPointerSizeForAS(LLVMGetModuleDataLayout(g->mod), as) == 8;
		char text[64], cons[32];
		snprintf(text, sizeof text, "atom.relaxed.gpu%s.cas.b16 $0, [$1], $2, $3;", space);
		snprintf(cons, sizeof cons, "=h,%s,h,h,~{memory}", wide ? "l" : "r");
		LLVMTypeRef params[3] = {pt, it, it};
		LLVMTypeRef fty = LLVMFunctionType(it, params, 3, 0);
		LLVMValueRef asm_ = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
		                                     LLVMInlineAsmDialectATT, 0);
		LLVMValueRef args[3] = {p, cmp, nv};
		LLVMValueRef old = LLVMBuildCall2(b, fty, asm_, args, 3, "");
		if (ok)
			*ok = LLVMBuildICmp(b, LLVMIntEQ, old, cmp, "");
		return old;
	}
	LLVMValueRef pair = LLVMBuildAtomicCmpXchg(b, p, cmp, nv, LLVMAtomicOrderingSequentiallyConsistent,
	                                           LLVMAtomicOrderingSequentiallyConsistent, 0);
	LLVMSetAlignment(pair, align);
	atomic_order(g, pair, true);
	if (ok)
		*ok = LLVMBuildExtractValue(b, pair, 1, "");
	return LLVMBuildExtractValue(b, pair, 0, "");
}

/* An atomic read-modify-write done with a compare-exchange loop on the
 * element's bits: for f16/bf16, whose results must be rounded (no native
 * 16-bit float atomics; a local buffer holds them as float, and a plain
 * float atomic add would not round to the dtype); and in the CUDA back end
 * for every 16-bit atomic, as PTX has no 16-bit add/min/max/and/or/xor/
 * exch and LLVM would widen them to the enclosing word (see cmpxchg). */
static LLVMValueRef atomic_cas_loop(Cg *g, int kind, DType dt, LLVMTypeRef mem, bool compute_form, LLVMValueRef p,
                                    LLVMValueRef v, unsigned align, Loc loc)
{
	LLVMBuilderRef b = g->b;
	/* cmpxchg takes integers: f16 in memory already is one, float is not. */
	LLVMTypeRef it = mem == g->t_f32 ? g->t_i32 : mem;
	LLVMValueRef init = LLVMBuildLoad2(b, it, p, "");
	LLVMSetOrdering(init, LLVMAtomicOrderingMonotonic);
	LLVMSetAlignment(init, align);
	if (g->nvptx)
		LLVMSetAtomicSyncScopeID(init, LLVMGetSyncScopeID(g->ctx, "device", 6));
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef loop = cg_block(g, "atomic.loop"), done = cg_block(g, "atomic.done");
	LLVMBuildBr(b, loop);
	LLVMPositionBuilderAtEnd(b, loop);
	LLVMValueRef old = LLVMBuildPhi(b, it, "old");
	LLVMValueRef oldv = from_stored_form(g, dt, compute_form, LLVMBuildBitCast(b, old, mem, ""));
	LLVMValueRef args[2] = {oldv, v};
	LLVMValueRef nv = v;
	if (kind != ATOMIC_XCHG) {
		Op op = kind == ATOMIC_ADD ? IR_ADD : kind == ATOMIC_MAX ? IR_MAX : kind == ATOMIC_MIN ? IR_MIN
		      : kind == ATOMIC_AND ? IR_AND : kind == ATOMIC_OR ? IR_OR : IR_XOR;
		if (!(nv = cg_elementwise(g, op, dt, args, loc)))
			return NULL;
	}
	LLVMValueRef nbits = LLVMBuildBitCast(b, to_stored_form(g, dt, compute_form, nv), it, "");
	LLVMValueRef ok;
	LLVMValueRef seen = cmpxchg(g, p, old, nbits, align, &ok);
	LLVMAddIncoming(old, &init, &pre, 1);
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMAddIncoming(old, &seen, &latch, 1);
	LLVMBuildCondBr(b, ok, done, loop);
	LLVMPositionBuilderAtEnd(b, done);
	return oldv;
}

static LLVMValueRef atomic_fail(Cg *g, Loc loc, const char *kernel, int kind)
{
	error_at(g->cc, loc, "%s: atomic %s on a float is not supported", kernel, atomic_kind_names[kind]);
	g->failed = true;
	return NULL;
}

LLVMValueRef cg_atomic(Cg *g, int kind, DType dt, LLVMTypeRef mem, bool compute_form, LLVMValueRef p,
                       LLVMValueRef v, LLVMValueRef cmp, const char *kernel, Loc loc)
{
	LLVMBuilderRef b = g->b;
	bool half = dt == DT_F16 || dt == DT_BF16;
	unsigned align = LLVMABIAlignmentOfType(LLVMGetModuleDataLayout(g->mod), mem);
	LLVMValueRef old;
	LLVMAtomicOrdering sc = LLVMAtomicOrderingSequentiallyConsistent;

	if (kind == ATOMIC_CAS) {
		/* cmpxchg compares bits: floats go through their integer bits
		 * (so -0.0 and 0.0 differ, and a NaN can match itself). */
		LLVMValueRef sv = to_stored_form(g, dt, compute_form, v), sc_ = to_stored_form(g, dt, compute_form, cmp);
		LLVMTypeRef mt = LLVMTypeOf(sv);
		if (LLVMGetTypeKind(mt) != LLVMIntegerTypeKind) {
			LLVMTypeRef it = mt == g->t_f64 ? g->t_i64 : g->t_i32;
			sv = LLVMBuildBitCast(b, sv, it, "");
			sc_ = LLVMBuildBitCast(b, sc_, it, "");
		}
		old = cmpxchg(g, p, sc_, sv, align, NULL);
		if (LLVMTypeOf(old) != mem)
			old = LLVMBuildBitCast(b, old, mem, "");
		return from_stored_form(g, dt, compute_form, old);
	}
	bool int16 = dt == DT_I16 || dt == DT_U16;
	if ((half && kind != ATOMIC_XCHG) || (g->nvptx && (half || int16))) {
		if (half && (kind == ATOMIC_AND || kind == ATOMIC_OR || kind == ATOMIC_XOR))
			return atomic_fail(g, loc, kernel, kind);
		return atomic_cas_loop(g, kind, dt, mem, compute_form, p, v, align, loc);
	}
	bool fl = dtype_is_float(dt), s = dtype_is_signed(dt);
	LLVMAtomicRMWBinOp op;
	switch (kind) {
	case ATOMIC_ADD: op = fl ? LLVMAtomicRMWBinOpFAdd : dt == DT_BOOL ? LLVMAtomicRMWBinOpOr : LLVMAtomicRMWBinOpAdd; break;
	case ATOMIC_MAX: op = fl ? LLVMAtomicRMWBinOpFMaximum : s ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax; break;
	case ATOMIC_MIN: op = fl ? LLVMAtomicRMWBinOpFMinimum : s ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin; break;
	case ATOMIC_AND: op = LLVMAtomicRMWBinOpAnd; break;
	case ATOMIC_OR: op = LLVMAtomicRMWBinOpOr; break;
	case ATOMIC_XOR: op = LLVMAtomicRMWBinOpXor; break;
	case ATOMIC_XCHG: op = LLVMAtomicRMWBinOpXchg; break;
	default:
		error_at(g->cc, loc, "unknown atomic kind %d", kind);
		g->failed = true;
		return NULL;
	}
	if (fl && (op == LLVMAtomicRMWBinOpAnd || op == LLVMAtomicRMWBinOpOr || op == LLVMAtomicRMWBinOpXor))
		return atomic_fail(g, loc, kernel, kind);
	LLVMValueRef rmw = LLVMBuildAtomicRMW(b, op, p, to_stored_form(g, dt, compute_form, v), sc, 0);
	LLVMSetAlignment(rmw, align);
	atomic_order(g, rmw, false);
	return from_stored_form(g, dt, compute_form, rmw);
}

static bool emit_atomic(CgFn *f, const Inst *i)
{
	CgRef *r = ref_of(f, i->args[0]);
	if (!check_access(f, i, r))
		return false;
	LLVMValueRef p = element_ptr(f, i, r);
	LLVMValueRef v = val(f, i->args[1 + r->rank]);
	LLVMValueRef cmp = i->ival == ATOMIC_CAS ? val(f, i->args[2 + r->rank]) : NULL;
	LLVMValueRef old = cg_atomic(f->g, (int)i->ival, r->dtype, r->mem, r->compute_form, p, v, cmp, f->k->name, i->loc);
	if (!old)
		return false;
	f->vals[i->results[0]->id] = old;
	return true;
}

/* ---- control flow -------------------------------------------------------------- */

/* Phis of the carried values' compute types at the top of `bb`. */
static LLVMValueRef *carried_phis(CgFn *f, Value **types_from, int n)
{
	LLVMValueRef *phis = arena_alloc(f->g->cc->arena, (size_t)(n + 1) * sizeof *phis);
	for (int j = 0; j < n; j++)
		phis[j] = LLVMBuildPhi(f->g->b, cg_type(f->g, types_from[j]->type->dtype), "");
	return phis;
}

static bool scalar_values(CgFn *f, const Inst *i, Value **vs, int n)
{
	for (int j = 0; j < n; j++)
		if (vs[j]->type->kind != TY_VALUE || vs[j]->type->rank != 0)
			return fail(f, i->loc, "%s: a loop or branch carries a non-scalar value (tile-host did not run?)",
			            f->k->name);
	return true;
}

/* Is this FOR an innermost loop (no loop nested in its body)? */
static bool has_loop(const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_FOR || i->op == IR_WHILE)
			return true;
		for (int k = 0; k < i->nregions; k++)
			if (has_loop(i->regions[k]))
				return true;
	}
	return false;
}

static LLVMMetadataRef md_string(Cg *g, const char *s)
{
	return LLVMMDStringInContext2(g->ctx, s, strlen(s));
}

/* Whether region r loads the element that store st writes (the same Ref,
 * the same index values). */
static bool reads_at(const Region *r, const Inst *st)
{
	for (const Inst *l = r->first; l; l = l->next) {
		for (int k = 0; k < l->nregions; k++)
			if (reads_at(l->regions[k], st))
				return true;
		if (l->op != IR_LOAD || l->args[0] != st->args[0] || l->nidx != st->nidx)
			continue;
		bool same = true;
		for (int d = 0; d < l->nidx && same; d++)
			same = l->idx[d].kind == IDX_POINT && st->idx[d].kind == IDX_POINT && l->args[1 + d] == st->args[1 + d];
		if (same)
			return true;
	}
	return false;
}

/* The trip count of FOR i when its bounds and step are constants (step >
 * 0), else -1 (also for a count past INT64_MAX). */
static int64_t static_trips(const Inst *i)
{
	int64_t v[3];
	for (int k = 0; k < 3; k++)
		if (!dtype_is_int(i->args[k]->type->dtype) || !ir_const_value(i->args[k], &v[k]))
			return -1;
	if (v[2] <= 0)
		return -1;
	if (v[1] <= v[0])
		return 0;
	uint64_t n = ((uint64_t)v[1] - (uint64_t)v[0] - 1) / (uint64_t)v[2] + 1;
	return n > INT64_MAX ? -1 : (int64_t)n;
}

/* Whether region r (a loop body, tile-host's form: point indexers only)
 * stores an element that it also loads at the same indices: a
 * read-modify-write that accumulates across an enclosing loop. */
static bool accumulates(const Region *r, const Region *body)
{
	for (const Inst *s = r->first; s; s = s->next) {
		for (int k = 0; k < s->nregions; k++)
			if (accumulates(s->regions[k], body))
				return true;
		if (s->op == IR_STORE && reads_at(body, s))
			return true;
	}
	return false;
}

/* !llvm.loop !{self, !{"llvm.loop.vectorize.enable", i1 true}}: asks the
 * vectoriser to vectorise an innermost loop of a tensor operation,
 * reductions included: that permits reassociating them, as the tree
 * reductions of the programming model do.  A loop the user wrote keeps its
 * sequential floating-point order (LLVM still vectorises it where that
 * needs no reassociation).
 * On the host, a short vectorised loop (static trip count <= 256) that
 * does not accumulate (see accumulates) is not unrolled again
 * (followup_vectorized: unroll.disable): -O3's unroller otherwise copies
 * every such fill and elementwise loop out in full (a 128-element fill:
 * 32 vector stores), a third of flash_attention's host IR after -O3, for
 * no measured run-time gain (bench/RESULTS.md, helper ctime3).  An
 * accumulating loop (a dot's row of C += a * B[k, :]) still unrolls: that
 * lets LICM keep the row in registers across the enclosing loop; so do
 * long loops (partial unrolling: a copy of 512 floats ran 13% slower
 * without it), loops that stay scalar, and the small ones the full
 * unroller takes before vectorising (tile-host's 8 partial accumulators). */
static void vectorize_hint(Cg *g, LLVMValueRef br, bool no_unroll)
{
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(g->ctx, NULL, 0);
	LLVMMetadataRef kv[2] = {md_string(g, "llvm.loop.vectorize.enable"),
	                         LLVMValueAsMetadata(LLVMConstInt(g->t_i1, 1, 0))};
	LLVMMetadataRef ops[3] = {tmp, LLVMMDNodeInContext2(g->ctx, kv, 2), NULL};
	int nops = 2;
	if (no_unroll) {
		LLVMMetadataRef off = md_string(g, "llvm.loop.unroll.disable");
		LLVMMetadataRef fu[2] = {md_string(g, "llvm.loop.vectorize.followup_vectorized"),
		                         LLVMMDNodeInContext2(g->ctx, &off, 1)};
		ops[nops++] = LLVMMDNodeInContext2(g->ctx, fu, 2);
	}
	LLVMMetadataRef node = LLVMMDNodeInContext2(g->ctx, ops, (size_t)nops);
	LLVMMetadataReplaceAllUsesWith(tmp, node); /* makes it self-referential (distinct) */
	LLVMSetMetadata(br, g->md_loop_kind, LLVMMetadataAsValue(g->ctx, node));
}

LLVMValueRef cg_for_trips(Cg *g, DType dt, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef step)
{
	LLVMBuilderRef b = g->b;
	bool s = dtype_is_signed(dt);
	LLVMTypeRef t = cg_type(g, dt);
	LLVMValueRef zero = cg_i64(g, 0);
	LLVMValueRef a = lo, z = hi, st = step;
	if (t != g->t_i64) {
		a = s ? LLVMBuildSExt(b, lo, g->t_i64, "") : LLVMBuildZExt(b, lo, g->t_i64, "");
		z = s ? LLVMBuildSExt(b, hi, g->t_i64, "") : LLVMBuildZExt(b, hi, g->t_i64, "");
		st = s ? LLVMBuildSExt(b, step, g->t_i64, "") : LLVMBuildZExt(b, step, g->t_i64, "");
	}
	LLVMValueRef up = s ? LLVMBuildICmp(b, LLVMIntSGT, st, zero, "") : LLVMBuildICmp(b, LLVMIntNE, st, zero, "");
	LLVMValueRef down = s ? LLVMBuildICmp(b, LLVMIntSLT, st, zero, "") : LLVMConstInt(g->t_i1, 0, 0);
	/* Distance and step magnitude as unsigned 64-bit numbers (exact). */
	LLVMValueRef dist = LLVMBuildSelect(b, up, LLVMBuildSub(b, z, a, ""), LLVMBuildSub(b, a, z, ""), "");
	LLVMValueRef mag = LLVMBuildSelect(b, down, LLVMBuildSub(b, zero, st, ""), st, "");
	LLVMValueRef nonempty = LLVMBuildSelect(b, up, LLVMBuildICmp(b, s ? LLVMIntSGT : LLVMIntUGT, z, a, ""),
	                                        LLVMBuildAnd(b, down, LLVMBuildICmp(b, LLVMIntSGT, a, z, ""), ""), "");
	LLVMValueRef magnz = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, mag, zero, ""), cg_i64(g, 1), mag, "");
	LLVMValueRef q = LLVMBuildUDiv(b, dist, magnz, "");
	LLVMValueRef rem = LLVMBuildURem(b, dist, magnz, "");
	q = LLVMBuildAdd(b, q, LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, rem, zero, ""), g->t_i64, ""), "");
	return LLVMBuildSelect(b, nonempty, q, zero, "trips");
}

/* for iv in range(lo, hi, step): the trip count is computed first (in 64
 * bits, so no overflow of iv can loop forever), then a canonical counter c
 * runs 0..trips and iv = lo + c * step.  step 0 runs no iterations. */
static bool emit_for(CgFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	DType dt = i->args[0]->type->dtype;
	LLVMTypeRef t = cg_type(g, dt);
	int n = i->nargs - 3;
	if (!scalar_values(f, i, i->args + 3, n))
		return false;
	LLVMValueRef lo = val(f, i->args[0]), hi = val(f, i->args[1]), step = val(f, i->args[2]);

	LLVMValueRef zero = cg_i64(g, 0);
	LLVMValueRef trips = cg_for_trips(g, dt, lo, hi, step);

	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef head = cg_block(g, "for.head"), body = cg_block(g, "for.body"), exit = cg_block(g, "for.exit");
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef c = LLVMBuildPhi(b, g->t_i64, "c");
	LLVMValueRef *phis = carried_phis(f, i->args + 3, n);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, c, trips, ""), body, exit);

	LLVMPositionBuilderAtEnd(b, body);
	LLVMValueRef ct = t == g->t_i64 ? c : LLVMBuildTrunc(b, c, t, "");
	LLVMValueRef iv = LLVMBuildAdd(b, LLVMBuildMul(b, ct, step, ""), lo, "iv");
	const Region *r = i->regions[0];
	LLVMValueRef *args = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *args);
	args[0] = iv;
	for (int j = 0; j < n; j++)
		args[1 + j] = phis[j];
	LLVMValueRef *ys = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *ys);
	if (!cg_region(f, r, args, ys))
		return false;
	LLVMValueRef c1 = LLVMBuildAdd(b, c, cg_i64(g, 1), "");
	LLVMSetNUW(c1, 1);
	LLVMSetNSW(c1, 1);
	LLVMValueRef back = LLVMBuildBr(b, head);
	if (!has_loop(r) && i->reassoc)
		vectorize_hint(g, back, !g->nvptx && static_trips(i) >= 0 && static_trips(i) <= 256 && !accumulates(r, r));
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);

	LLVMAddIncoming(c, &zero, &pre, 1);
	LLVMAddIncoming(c, &c1, &latch, 1);
	for (int j = 0; j < n; j++) {
		LLVMValueRef init = val(f, i->args[3 + j]);
		LLVMAddIncoming(phis[j], &init, &pre, 1);
		LLVMAddIncoming(phis[j], &ys[j], &latch, 1);
	}
	LLVMPositionBuilderAtEnd(b, exit);
	for (int j = 0; j < n; j++)
		f->vals[i->results[j]->id] = phis[j];
	return true;
}

static bool emit_if(CgFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int n = i->nresults;
	if (!scalar_values(f, i, i->results, n))
		return false;
	LLVMBasicBlockRef bt = cg_block(g, "if.then"), be = cg_block(g, "if.else"), bj = cg_block(g, "if.end");
	LLVMBuildCondBr(b, val(f, i->args[0]), bt, be);
	LLVMValueRef *ys[2];
	LLVMBasicBlockRef ends[2];
	LLVMBasicBlockRef starts[2] = {bt, be};
	for (int k = 0; k < 2; k++) {
		LLVMPositionBuilderAtEnd(b, starts[k]);
		ys[k] = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *ys[k]);
		if (!cg_region(f, i->regions[k], NULL, ys[k]))
			return false;
		ends[k] = LLVMGetInsertBlock(b);
		LLVMBuildBr(b, bj);
	}
	LLVMPositionBuilderAtEnd(b, bj);
	for (int j = 0; j < n; j++) {
		LLVMValueRef phi = LLVMBuildPhi(b, cg_type(g, i->results[j]->type->dtype), "");
		LLVMValueRef in[2] = {ys[0][j], ys[1][j]};
		LLVMAddIncoming(phi, in, ends, 2);
		f->vals[i->results[j]->id] = phi;
	}
	return true;
}

static bool emit_while(CgFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int n = i->nargs;
	if (!scalar_values(f, i, i->args, n))
		return false;
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef head = cg_block(g, "while.cond"), body = cg_block(g, "while.body"),
	                  exit = cg_block(g, "while.exit");
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef *phis = carried_phis(f, i->args, n);
	LLVMValueRef cond;
	if (!cg_region(f, i->regions[0], phis, &cond))
		return false;
	LLVMBuildCondBr(b, cond, body, exit);
	LLVMPositionBuilderAtEnd(b, body);
	LLVMValueRef *ys = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *ys);
	if (!cg_region(f, i->regions[1], phis, ys))
		return false;
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, head);
	for (int j = 0; j < n; j++) {
		LLVMValueRef init = val(f, i->args[j]);
		LLVMAddIncoming(phis[j], &init, &pre, 1);
		LLVMAddIncoming(phis[j], &ys[j], &latch, 1);
	}
	LLVMPositionBuilderAtEnd(b, exit);
	for (int j = 0; j < n; j++)
		f->vals[i->results[j]->id] = phis[j];
	return true;
}

/* ---- instructions ------------------------------------------------------------------ */

static bool emit_inst(CgFn *f, const Inst *i)
{
	Cg *g = f->g;
	for (int r = 0; r < i->nresults; r++) {
		const Type *t = i->results[r]->type;
		if (i->op != IR_ALLOC && (t->kind != TY_VALUE || t->rank != 0))
			return fail(f, i->loc, "%s: a non-scalar value reached the host back end (tile-host did not run?)",
			            f->k->name);
	}
	switch (i->op) {
	case IR_CONST: {
		const Type *t = i->results[0]->type;
		f->vals[i->results[0]->id] = cg_const(g, t->dtype, i->ival, i->fval);
		return true;
	}
	case IR_PROGRAM_ID: case IR_NUM_PROGRAMS: {
		LLVMValueRef arr = i->op == IR_PROGRAM_ID ? f->pid : f->nprog;
		if (!arr)
			return fail(f, i->loc, "%s: %s cannot be used in the %s (only in the kernel body)", f->k->name,
			            op_info[i->op].name, f->where);
		/* The runtime passes PK_MAX_GRID entries (pid 0 and 1 program
		 * beyond the grid's rank). */
		if (i->ival < 0 || i->ival >= PK_MAX_GRID)
			return fail(f, i->loc, "%s: %s of axis %lld (the host runtime has at most %d grid axes)", f->k->name,
			            op_info[i->op].name, (long long)i->ival, PK_MAX_GRID);
		LLVMValueRef idx = cg_i64(g, i->ival);
		LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, g->t_i32, arr, &idx, 1, "");
		LLVMValueRef v = LLVMBuildLoad2(g->b, g->t_i32, p, i->op == IR_PROGRAM_ID ? "pid" : "nprog");
		LLVMSetAlignment(v, 4);
		f->vals[i->results[0]->id] = v;
		return true;
	}
	case IR_CAST:
	case IR_BITCAST:
		f->vals[i->results[0]->id] =
			cg_convert(g, i->op, val(f, i->args[0]), i->args[0]->type->dtype, i->results[0]->type->dtype);
		return true;
	case IR_LOAD: return emit_load(f, i);
	case IR_STORE: return emit_store(f, i);
	case IR_ATOMIC: return emit_atomic(f, i);
	case IR_DEBUG_PRINT: { /* blocks are per-program buffers here (tile-host) */
		LLVMValueRef *v = arena_alloc(g->cc->arena, (size_t)(i->nargs + 1) * sizeof *v);
		DType *dts = arena_alloc(g->cc->arena, (size_t)(i->nargs + 1) * sizeof *dts);
		const Type **blocks = arena_alloc(g->cc->arena, (size_t)(i->nargs + 1) * sizeof *blocks);
		for (int k = 0; k < i->nargs; k++) {
			const Type *t = i->args[k]->type;
			blocks[k] = t->kind == TY_REF ? t : NULL;
			v[k] = blocks[k] ? ref_of(f, i->args[k])->base : val(f, i->args[k]);
			dts[k] = t->dtype;
		}
		cg_debug_print_host(g, i->str, v, dts, blocks, i->nargs);
		return true;
	}
	case IR_DEBUG_CHECK:
		cg_debug_check(g, val(f, i->args[0]), i->str, i->loc);
		return true;
	case IR_ALLOC:
		if (!f->refs[i->results[0]->id])
			return fail(f, i->loc, "%s: a per-program buffer outside the kernel body", f->k->name);
		return true;
	case IR_FOR: return emit_for(f, i);
	case IR_IF: return emit_if(f, i);
	case IR_WHILE: return emit_while(f, i);
	default:
		break;
	}
	if (op_info[i->op].flags & F_ELEMWISE) {
		LLVMValueRef a[3];
		for (int k = 0; k < i->nargs && k < 3; k++)
			a[k] = val(f, i->args[k]);
		/* The dtype the op works on: SELECT's is its value operands'. */
		DType dt = i->args[i->op == IR_SELECT ? 1 : 0]->type->dtype;
		LLVMValueRef r = cg_elementwise(g, i->op, dt, a, i->loc);
		if (!r)
			return false;
		f->vals[i->results[0]->id] = r;
		return true;
	}
	return fail(f, i->loc, "%s: the host back end cannot compile '%s' (tile-host did not run?)", f->k->name,
	            op_info[i->op].name);
}

bool cg_region(CgFn *f, const Region *r, LLVMValueRef *args, LLVMValueRef *yields)
{
	for (int j = 0; j < r->nargs; j++)
		if (args && args[j])
			f->vals[r->args[j]->id] = args[j];
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_YIELD) {
			for (int j = 0; j < i->nargs; j++)
				yields[j] = val(f, i->args[j]);
			return true;
		}
		if (!emit_inst(f, i))
			return false;
	}
	internal_error("codegen: kernel %s: region without a yield", f->k->name);
}
