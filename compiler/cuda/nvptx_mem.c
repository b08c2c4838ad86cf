/* nvptx_mem.c - Refs on the GPU: global operands and scratch buffers in
 * shared memory; loads, stores and atomics of tensors in any layout; the
 * barriers that order the CTA's accesses.
 *
 * An access of a tensor is done per register by the thread holding it:
 * the element's offset is the uniform part (points, slice starts) plus the
 * register's coordinates times the strides.  Runs of registers that are
 * consecutive elements of the contiguous last dim become one vector access
 * of up to 16 bytes (ld.global.v4.f32) when the divisibility of the offsets
 * proves the alignment (operand bases are 16-byte aligned: the launch stub
 * checks).  Masked lanes (edge blocks, user masks, padding) are predicated:
 * a vector whose lanes share their predicate is one predicated access; one
 * whose lanes may differ is a vector access when all are in, else lane by
 * lane.  Stores and atomics are done by one thread per element (replicas
 * of a replicated layout stay silent).
 *
 * Barriers.  Threads of the CTA may access the same element in different
 * program steps (a scalar stored by thread 0 and loaded by all; a block
 * stored in one layout and loaded in another).  Per Ref the code generator
 * tracks what was read and written since the last barrier and emits
 * bar.sync before a read after a write or a write after an access, unless
 * all of them were by the same threads (same indices, same unreplicated
 * layout).  Loops re-check at their back edge. */
#include "nvptx.h"

#include <string.h>

static bool is_tensor(const Value *v)
{
	return v->type->kind == TY_VALUE && v->type->rank > 0;
}

/* ---- divisibility ------------------------------------------------------------------ */

#define DIV_MAX (INT64_C(1) << 30)

static int64_t lowbit(int64_t c)
{
	if (c == 0)
		return DIV_MAX;
	uint64_t u = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
	uint64_t l = u & (~u + 1);
	return l > (uint64_t)DIV_MAX ? DIV_MAX : (int64_t)l;
}

static int64_t div_mul(int64_t a, int64_t b)
{
	return a >= DIV_MAX / b ? DIV_MAX : a * b;
}

/* What the clause c (or its `and` terms) says of size symbol s: a power of
 * two dividing it, from `s % C == 0`. */
static int64_t clause_divisor(const Region *r, const Value *c, int s, int depth)
{
	int64_t best = 1;
	if (!c->def || depth > 16)
		return best;
	if (c->def->op == IR_AND && c->type->dtype == DT_BOOL) {
		int64_t a = clause_divisor(r, c->def->args[0], s, depth + 1);
		int64_t b = clause_divisor(r, c->def->args[1], s, depth + 1);
		return a > b ? a : b;
	}
	if (c->def->op == IR_EQ) {
		for (int side = 0; side < 2; side++) {
			int64_t zero, m;
			const Value *x = c->def->args[side], *z = c->def->args[1 - side];
			if (!ir_const_value(z, &zero) || zero != 0 || !x->def || x->def->op != IR_MOD)
				continue;
			const Value *a = x->def->args[0];
			while (a->def && a->def->op == IR_CAST && dtype_is_int(a->def->args[0]->type->dtype))
				a = a->def->args[0];
			if (!a->def && a->region == r && a->index == s && ir_const_value(x->def->args[1], &m) && m > 0) {
				int64_t l = lowbit(m);
				if (l > best)
					best = l;
			}
		}
	}
	return best;
}

/* What `requires sym % C == 0` says about size symbol `s`: a power of two
 * dividing it (the launch stub has checked the clause). */
int64_t nv_requires_divisor(const IrKernel *k, int s)
{
	const Region *r = k->requires;
	int64_t best = 1;
	if (!r || !r->last)
		return best;
	for (int j = 0; j < r->last->nargs; j++) {
		int64_t d = clause_divisor(r, r->last->args[j], s, 0);
		if (d > best)
			best = d;
	}
	return best;
}

/* ... and in an aligned variant, what its launch stub checked. */
static int64_t size_divisor(NvFn *f, int s)
{
	int64_t d = nv_requires_divisor(f->k, s);
	return s < 64 && (f->nv->assume_div16 >> s & 1) && d < GPU_ALIGNED_DIV ? GPU_ALIGNED_DIV : d;
}

static int64_t divisor(NvFn *f, const Value *v, int depth)
{
	if (depth > 24 || v->type->rank != 0 || !dtype_is_int(v->type->dtype))
		return 1;
	if (!v->def) {
		const Region *r = v->region;
		const IrKernel *k = f->k;
		int first = k->noperands + k->nscalars;
		if (r == k->body && v->index >= first && v->index < first + k->nsizes)
			return size_divisor(f, v->index - first);
		const Inst *o = r->owner;
		if (o && o->op == IR_FOR && v->index == 0) {
			int64_t a = divisor(f, o->args[0], depth + 1), b = divisor(f, o->args[2], depth + 1);
			return a < b ? a : b;
		}
		return 1;
	}
	const Inst *i = v->def;
	int64_t a, b, c;
	switch (i->op) {
	case IR_CONST:
		return lowbit(i->ival);
	case IR_MUL:
		return div_mul(divisor(f, i->args[0], depth + 1), divisor(f, i->args[1], depth + 1));
	case IR_ADD: case IR_SUB: case IR_MIN: case IR_MAX:
		a = divisor(f, i->args[0], depth + 1);
		b = divisor(f, i->args[1], depth + 1);
		return a < b ? a : b;
	case IR_SHL:
		if (ir_const_value(i->args[1], &c) && c >= 0 && c < 30)
			return div_mul(divisor(f, i->args[0], depth + 1), INT64_C(1) << c);
		return divisor(f, i->args[0], depth + 1) == DIV_MAX ? DIV_MAX : 1;
	case IR_CAST: {
		if (!dtype_is_int(i->args[0]->type->dtype))
			return 1;
		a = divisor(f, i->args[0], depth + 1);
		int bits = dtype_bits(v->type->dtype);
		int64_t cap = bits >= 31 ? DIV_MAX : INT64_C(1) << bits;
		return a < cap ? a : cap;
	}
	default:
		return 1;
	}
}

int64_t nv_divisor(NvFn *f, const Value *v)
{
	return divisor(f, v, 0);
}

/* ---- Refs -------------------------------------------------------------------------- */

GRef *nv_make_ref(NvFn *f, const Type *t, LLVMValueRef base, unsigned as, int slot, bool readonly, Loc loc)
{
	Cg *g = f->g;
	const IrKernel *k = f->k;
	GRef *r = arena_alloc(nv_arena(f), sizeof *r);
	r->base = base;
	r->as = as;
	r->rank = t->rank;
	r->dt = t->dtype;
	r->mem = cg_mem_type(g, t->dtype);
	r->slot = slot;
	r->readonly = readonly;
	r->stride = arena_alloc(nv_arena(f), (size_t)(t->rank + 1) * sizeof *r->stride);
	r->extent = arena_alloc(nv_arena(f), (size_t)(t->rank + 1) * sizeof *r->extent);
	r->sdiv = arena_alloc(nv_arena(f), (size_t)(t->rank + 1) * sizeof *r->sdiv);
	int64_t *ediv = arena_alloc(nv_arena(f), (size_t)(t->rank + 1) * sizeof *ediv);
	for (int d = 0; d < t->rank; d++) {
		if (t->dims[d] >= 0) {
			r->extent[d] = cg_i64(g, t->dims[d]);
			ediv[d] = lowbit(t->dims[d]);
			continue;
		}
		const char *sym = t->syms ? t->syms[d] : NULL;
		int s = -1;
		for (int j = 0; sym && j < k->nsizes; j++)
			if (k->sizes[j] == sym || strcmp(k->sizes[j], sym) == 0)
				s = j;
		if (s < 0) {
			nv_fail(f, loc, "%s: dynamic dimension '%s' is not a size of the kernel", k->name, sym ? sym : "?");
			return NULL;
		}
		r->extent[d] = f->sizes[s];
		ediv[d] = size_divisor(f, s);
	}
	LLVMValueRef stride = cg_i64(g, 1);
	int64_t sd = 1;
	for (int d = t->rank - 1; d >= 0; d--) {
		r->stride[d] = stride;
		r->sdiv[d] = sd;
		if (d == 0)
			break;
		stride = LLVMBuildMul(f->pre, stride, r->extent[d], "stride");
		sd = div_mul(sd, ediv[d]);
	}
	return r;
}

/* ---- barrier tracking ---------------------------------------------------------------- */

/* Whether accesses a and b (layouts La, Lb) touch each element from the
 * same single thread. */
static bool same_owner(const Inst *a, const GpuLayout *La, const Inst *b, const GpuLayout *Lb)
{
	if (!La || La != Lb || lay_replicated(La) || a->nidx != b->nidx)
		return false;
	for (int d = 0, j = 1; d < a->nidx; d++) {
		const Indexer *x = &a->idx[d], *y = &b->idx[d];
		if (x->kind != y->kind || x->size != y->size || x->kind == IDX_GATHER)
			return false;
		if (x->kind != IDX_FULL) {
			if (!ir_same_value(a->args[j], b->args[j]))
				return false;
			j++;
		}
	}
	return true;
}

void nv_sync_access(NvFn *f, const GRef *ref, bool write, const Inst *i, const GpuLayout *L)
{
	if (ref->readonly)
		return;
	RefState *s = &f->rs[ref->slot];
	bool need = write ? s->read || s->written : s->written;
	if (need && s->sig && same_owner(s->sig, s->sig_lay, i, L))
		need = false;
	if (need)
		nv_barrier(f);
	bool first = !s->read && !s->written;
	if (i->op == IR_ATOMIC) {
		s->read = s->written = true;
	} else if (write) {
		s->written = true;
	} else {
		s->read = true;
	}
	if (first) {
		s->sig = i;
		s->sig_lay = L;
	} else if (!s->sig || !same_owner(s->sig, s->sig_lay, i, L)) {
		s->sig = NULL;
	}
}

RefState *nv_state_save(NvFn *f)
{
	RefState *s = arena_alloc(nv_arena(f), (size_t)(f->nrefs + 1) * sizeof *s);
	memcpy(s, f->rs, (size_t)f->nrefs * sizeof *s);
	return s;
}

void nv_state_restore(NvFn *f, const RefState *s)
{
	memcpy(f->rs, s, (size_t)f->nrefs * sizeof *s);
}

void nv_state_merge(NvFn *f, const RefState *o)
{
	for (int k = 0; k < f->nrefs; k++) {
		RefState *s = &f->rs[k];
		bool s_any = s->read || s->written, o_any = o[k].read || o[k].written;
		if (!s_any) {
			*s = o[k];
			continue;
		}
		if (o_any && !(s->sig && o[k].sig && same_owner(s->sig, s->sig_lay, o[k].sig, o[k].sig_lay)))
			s->sig = NULL;
		s->read |= o[k].read;
		s->written |= o[k].written;
	}
}

/* The Ref slots region r reads and writes. */
static void touched(NvFn *f, const Region *r, bool *reads, bool *writes)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int k = 0; k < i->nregions; k++)
			touched(f, i->regions[k], reads, writes);
		if (i->op != IR_LOAD && i->op != IR_STORE && i->op != IR_ATOMIC)
			continue;
		const GRef *ref = f->refs[i->args[0]->id];
		if (!ref || ref->readonly)
			continue;
		if (i->op != IR_STORE)
			reads[ref->slot] = true;
		if (i->op != IR_LOAD)
			writes[ref->slot] = true;
	}
}

void nv_sync_regions(NvFn *f, const Region *const *rs, int n)
{
	bool *reads = arena_alloc(nv_arena(f), (size_t)f->nrefs + 1);
	bool *writes = arena_alloc(nv_arena(f), (size_t)f->nrefs + 1);
	for (int j = 0; j < n; j++)
		touched(f, rs[j], reads, writes);
	for (int k = 0; k < f->nrefs; k++) {
		const RefState *s = &f->rs[k];
		if ((s->written && (reads[k] || writes[k])) || (s->read && writes[k])) {
			nv_barrier(f);
			return;
		}
	}
}

void nv_state_touch(NvFn *f, const Region *r)
{
	bool *reads = arena_alloc(nv_arena(f), (size_t)f->nrefs + 1);
	bool *writes = arena_alloc(nv_arena(f), (size_t)f->nrefs + 1);
	touched(f, r, reads, writes);
	for (int k = 0; k < f->nrefs; k++) {
		if (!reads[k] && !writes[k])
			continue;
		f->rs[k].read |= reads[k];
		f->rs[k].written |= writes[k];
		f->rs[k].sig = NULL;
	}
}

/* ---- accesses ------------------------------------------------------------------------ */

typedef NvAccess Acc;

static LLVMValueRef to_i64(NvFn *f, LLVMValueRef x, DType dt)
{
	Cg *g = f->g;
	if (dtype_bits(dt) == 64)
		return x;
	return dtype_is_signed(dt) ? LLVMBuildSExt(g->b, x, g->t_i64, "") : LLVMBuildZExt(g->b, x, g->t_i64, "");
}

static LLVMValueRef and_pred(NvFn *f, LLVMValueRef a, LLVMValueRef b)
{
	return !a ? b : !b ? a : LLVMBuildAnd(f->g->b, a, b, "");
}

/* The compile-time part of register r's coordinate along dim d of L. */
static int64_t reg_coord(NvFn *f, const GpuLayout *L, int r, int d)
{
	int64_t *c = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *c);
	lay_reg_coord(L, r, c);
	return c[d];
}

void nv_access_tbase(NvFn *f, NvAccess *A)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	A->tbase = A->ubase;
	if (!A->L)
		return;
	A->tidx = arena_alloc(nv_arena(f), (size_t)(A->ref->rank + 1) * sizeof *A->tidx);
	for (int d = 0; d < A->ref->rank; d++) {
		const Indexer *x = &A->i->idx[d];
		if (x->kind != IDX_FULL && x->kind != IDX_SLICE)
			continue;
		LLVMValueRef t = nv_tcoord(f, A->L, A->rdim[d]);
		t = t ? LLVMBuildZExt(b, t, g->t_i64, "") : NULL;
		if (t)
			A->tbase = LLVMBuildAdd(b, A->tbase, LLVMBuildMul(b, t, A->ref->stride[d], ""), "");
		if (x->masked)
			A->tidx[d] = t ? LLVMBuildAdd(b, A->idx[d], t, "") : A->idx[d];
	}
}

/* The element offset (i64) of register r, and, if pred is not NULL, its
 * predicate (or NULL: always). */
static LLVMValueRef reg_offset(NvFn *f, Acc *A, int r, LLVMValueRef *pred)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMValueRef off = A->tbase ? A->tbase : A->ubase, p = A->upred;
	const Inst *i = A->i;
	for (int d = 0; d < A->ref->rank; d++) {
		const Indexer *x = &i->idx[d];
		LLVMValueRef ix = NULL; /* the element index in dim d, for masks */
		switch (x->kind) {
		case IDX_POINT:
			continue;
		case IDX_FULL: case IDX_SLICE: {
			if (A->tbase) {
				/* The thread's parts are in tbase and tidx; the register's
				 * (its bits are disjoint from the thread's) is a constant. */
				int64_t k = reg_coord(f, A->L, r, A->rdim[d]);
				if (k)
					off = LLVMBuildAdd(b, off, LLVMBuildMul(b, cg_i64(g, k), A->ref->stride[d], ""), "");
				if (x->masked && pred)
					ix = k ? LLVMBuildAdd(b, A->tidx[d], cg_i64(g, k), "") : A->tidx[d];
				break;
			}
			LLVMValueRef c = LLVMBuildZExt(b, nv_coord(f, A->L, r, A->rdim[d]), g->t_i64, "");
			off = LLVMBuildAdd(b, off, LLVMBuildMul(b, c, A->ref->stride[d], ""), "");
			if (x->masked && pred)
				ix = LLVMBuildAdd(b, A->idx[d], c, "");
			break;
		}
		case IDX_GATHER: {
			LLVMValueRef gi = to_i64(f, A->gat[d]->r[r], A->gval[d]->type->dtype);
			off = LLVMBuildAdd(b, off, LLVMBuildMul(b, gi, A->ref->stride[d], ""), "");
			if (x->masked && pred)
				ix = gi;
			break;
		}
		}
		if (ix) /* unsigned: a negative index is out of bounds too */
			p = and_pred(f, p, LLVMBuildICmp(b, LLVMIntULT, ix, A->ref->extent[d], ""));
	}
	if (!pred)
		return off;
	p = and_pred(f, p, nv_valid(f, A->L, r));
	if (A->mask)
		p = and_pred(f, p, A->mask->r[r]);
	*pred = p;
	return off;
}

static LLVMValueRef elem_ptr(NvFn *f, Acc *A, LLVMValueRef off)
{
	return LLVMBuildInBoundsGEP2(f->g->b, A->ref->mem, A->ref->base, &off, 1, "");
}

/* A thread's copies of a tile address rows a constant distance apart;
 * written as one offset a register (tbase + k·stride), LLVM hoists every
 * k·stride out of the loops as an i64 of its own, which ptxas keeps live
 * across the loop (decode attention: 16 copies of k and of v a thread, 32
 * registers of offsets, twice over with copies ahead).  A step from the
 * previous register's pointer needs one offset for every distinct
 * distance, usually one. */
LLVMValueRef nv_access_ptr(NvFn *f, NvAccess *A, int r, LLVMValueRef *pred, int r0, LLVMValueRef from)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMValueRef off = reg_offset(f, A, r, pred); /* unused with a step: LLVM drops it */
	bool steps = from && A->L;
	for (int d = 0; steps && d < A->ref->rank; d++)
		steps = A->i->idx[d].kind != IDX_GATHER;
	if (!steps)
		return elem_ptr(f, A, off);
	LLVMValueRef step = NULL;
	for (int d = 0; d < A->ref->rank; d++) {
		if (A->rdim[d] < 0)
			continue;
		int64_t k = reg_coord(f, A->L, r, A->rdim[d]) - reg_coord(f, A->L, r0, A->rdim[d]);
		if (!k)
			continue;
		LLVMValueRef t = LLVMBuildMul(b, cg_i64(g, k), A->ref->stride[d], "");
		step = step ? LLVMBuildAdd(b, step, t, "") : t;
	}
	if (!step)
		return from;
	return LLVMBuildGEP2(b, A->ref->mem, from, &step, 1, "");
}

LLVMValueRef nv_access_prefix(NvFn *f, NvAccess *A, int r, int w)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const Inst *i = A->i;
	int last = A->ref->rank - 1, la = A->L->rank - 1;
	LLVMValueRef c = LLVMBuildZExt(b, nv_coord(f, A->L, r, la), g->t_i64, "");
	LLVMValueRef n = NULL;
	if (i->idx[last].masked) /* extent - (start + c) */
		n = LLVMBuildSub(b, A->ref->extent[last], LLVMBuildAdd(b, A->idx[last], c, ""), "");
	if (A->L->dims[la] % w != 0) { /* padding: dims - c */
		LLVMValueRef p = LLVMBuildSub(b, cg_i64(g, A->L->dims[la]), c, "");
		n = n ? LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, p, n, ""), p, n, "") : p;
	}
	if (!n)
		return NULL;
	n = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, n, cg_i64(g, w), ""), cg_i64(g, w), n, "");
	n = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, n, cg_i64(g, 0), ""), cg_i64(g, 0), n, "");
	return LLVMBuildTrunc(b, n, g->t_i32, "");
}

/* A power of two dividing the extent of dim d of access i's Ref: a static
 * extent's, a size symbol's from requires. */
static int64_t extent_divisor(NvFn *f, const Inst *i, int d)
{
	const Type *rt = i->args[0]->type;
	if (rt->dims[d] >= 0)
		return lowbit(rt->dims[d]);
	for (int s = 0; s < f->k->nsizes; s++)
		if (rt->syms && strcmp(f->k->sizes[s], rt->syms[d]) == 0)
			return size_divisor(f, s);
	return 1;
}

/* Elements per vector access of A (1: scalar accesses), and whether the
 * lanes of a vector always share their predicate. */
int nv_access_width(NvFn *f, NvAccess *A, bool *uniform)
{
	const Inst *i = A->i;
	const GRef *ref = A->ref;
	int last = ref->rank - 1;
	*uniform = true;
	if (!A->L || last < 0 || (i->idx[last].kind != IDX_FULL && i->idx[last].kind != IDX_SLICE))
		return 1;
	int es = nv_smem_elem(ref->dt);
	int64_t w = lay_contig(A->L);
	while (w * es > 16)
		w /= 2;
	/* Alignment: the offset of a vector's first element must be a multiple of w. */
	for (int d = 0, j = 1; d < ref->rank && w > 1; d++) {
		const Indexer *x = &i->idx[d];
		int64_t dv = ref->sdiv[d];
		if (x->kind == IDX_POINT)
			dv = div_mul(dv, nv_divisor(f, i->args[j]));
		else if (x->kind == IDX_SLICE && d == last)
			dv = nv_divisor(f, i->args[j]);
		else if (x->kind == IDX_FULL && d == last)
			dv = DIV_MAX;
		if (x->kind != IDX_FULL)
			j++;
		while (w > dv)
			w /= 2;
	}
	if (w == 1)
		return 1;
	/* Predicates along the last dim. */
	if (i->idx[last].masked) {
		int64_t ds = nv_divisor(f, ir_index_arg(i, last)), de = extent_divisor(f, i, last);
		if (ds < w || de < w)
			*uniform = false;
	}
	if (A->L->dims[A->L->rank - 1] % w != 0)
		*uniform = false;
	if (A->mask)
		*uniform = false;
	return (int)w;
}

/* The value a masked-off load lane yields: `other`, else 0. */
static LLVMValueRef other_of(NvFn *f, Acc *A, int r)
{
	if (A->other)
		return A->other->L ? A->other->r[r] : A->other->r[0];
	return cg_const(f->g, A->ref->dt, 0, 0.0);
}

/* A vector load of w elements at ptr into out[0..w) (compute form). */
static void vload(NvFn *f, Acc *A, LLVMValueRef ptr, int w, LLVMValueRef *out)
{
	Cg *g = f->g;
	int es = nv_smem_elem(A->ref->dt);
	if (w == 1) {
		LLVMValueRef v = LLVMBuildLoad2(g->b, A->ref->mem, ptr, "");
		LLVMSetAlignment(v, (unsigned)es);
		out[0] = cg_from_mem(g, A->ref->dt, v);
		return;
	}
	LLVMValueRef v = LLVMBuildLoad2(g->b, LLVMVectorType(A->ref->mem, (unsigned)w), ptr, "");
	LLVMSetAlignment(v, (unsigned)(w * es));
	for (int j = 0; j < w; j++)
		out[j] = cg_from_mem(g, A->ref->dt, LLVMBuildExtractElement(g->b, v, cg_i32(g, j), ""));
}

static void vstore(NvFn *f, Acc *A, LLVMValueRef ptr, int w, LLVMValueRef *vals)
{
	Cg *g = f->g;
	int es = nv_smem_elem(A->ref->dt);
	if (w == 1) {
		LLVMValueRef st = LLVMBuildStore(g->b, cg_to_mem(g, A->ref->dt, vals[0]), ptr);
		LLVMSetAlignment(st, (unsigned)es);
		return;
	}
	LLVMValueRef v = LLVMGetUndef(LLVMVectorType(A->ref->mem, (unsigned)w));
	for (int j = 0; j < w; j++)
		v = LLVMBuildInsertElement(g->b, v, cg_to_mem(g, A->ref->dt, vals[j]), cg_i32(g, j), "");
	LLVMValueRef st = LLVMBuildStore(g->b, v, ptr);
	LLVMSetAlignment(st, (unsigned)(w * es));
}

/* Loads (or stores) w elements at ptr under predicate p (NULL: always);
 * for a load, out[j] gets the element or other[j]. */
static void guarded(NvFn *f, Acc *A, LLVMValueRef p, LLVMValueRef ptr, int w, LLVMValueRef *vals,
                    LLVMValueRef *other)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	if (!p) {
		if (A->store)
			vstore(f, A, ptr, w, vals);
		else
			vload(f, A, ptr, w, vals);
		return;
	}
	LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef then = cg_block(g, A->store ? "st" : "ld"), join = cg_block(g, A->store ? "st.end" : "ld.end");
	LLVMBuildCondBr(b, p, then, join);
	LLVMPositionBuilderAtEnd(b, then);
	LLVMValueRef *got = arena_alloc(nv_arena(f), (size_t)w * sizeof *got);
	if (A->store)
		vstore(f, A, ptr, w, vals);
	else
		vload(f, A, ptr, w, got);
	LLVMBasicBlockRef then_end = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	if (A->store)
		return;
	for (int j = 0; j < w; j++) {
		LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(got[j]), "");
		LLVMValueRef in[2] = {got[j], other[j]};
		LLVMBasicBlockRef bb[2] = {then_end, from};
		LLVMAddIncoming(phi, in, bb, 2);
		vals[j] = phi;
	}
}

/* One vector group: registers r0 .. r0+w-1. */
static void access_group(NvFn *f, Acc *A, int r0, int w, bool uniform, LLVMValueRef own, GV *out, bool inb)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMValueRef *preds = arena_alloc(nv_arena(f), (size_t)w * sizeof *preds);
	LLVMValueRef *vals = arena_alloc(nv_arena(f), (size_t)w * sizeof *vals);
	LLVMValueRef *other = arena_alloc(nv_arena(f), (size_t)w * sizeof *other);
	/* The vector's address, and the predicates that matter: none when the
	 * caller checked that all are in, the first one when the lanes share
	 * it, else each lane's. */
	preds[0] = NULL;
	LLVMValueRef off0 = reg_offset(f, A, r0, inb ? NULL : &preds[0]);
	for (int j = 0; j < w; j++) {
		if (j > 0)
			preds[j] = NULL;
		if (j > 0 && !inb && !uniform)
			reg_offset(f, A, r0 + j, &preds[j]);
		preds[j] = and_pred(f, preds[j], own);
		if (A->store)
			vals[j] = A->val->r[r0 + j];
		else
			other[j] = other_of(f, A, r0 + j);
	}
	LLVMValueRef ptr = elem_ptr(f, A, off0);
	bool all_true = true;
	for (int j = 0; j < w; j++)
		all_true &= preds[j] == NULL;
	if (w == 1 || all_true || uniform) {
		guarded(f, A, preds[0], ptr, w, vals, other);
	} else {
		/* Lanes may differ: the vector when all are in, else one by one. */
		LLVMValueRef all = NULL;
		for (int j = 0; j < w; j++)
			all = and_pred(f, all, preds[j]);
		LLVMBasicBlockRef vec = cg_block(g, "vec"), slow = cg_block(g, "lanes"), join = cg_block(g, "lanes.end");
		LLVMBuildCondBr(b, all, vec, slow);
		LLVMPositionBuilderAtEnd(b, vec);
		LLVMValueRef *vv = arena_alloc(nv_arena(f), (size_t)w * sizeof *vv);
		memcpy(vv, vals, (size_t)w * sizeof *vv);
		guarded(f, A, NULL, ptr, w, vv, other);
		LLVMBasicBlockRef vec_end = LLVMGetInsertBlock(b);
		LLVMBuildBr(b, join);
		LLVMPositionBuilderAtEnd(b, slow);
		LLVMValueRef *sv = arena_alloc(nv_arena(f), (size_t)w * sizeof *sv);
		for (int j = 0; j < w; j++) {
			LLVMValueRef pj = LLVMBuildInBoundsGEP2(b, A->ref->mem, ptr, (LLVMValueRef[]){cg_i64(g, j)}, 1, "");
			sv[j] = vals[j];
			guarded(f, A, preds[j], pj, 1, &sv[j], &other[j]);
		}
		LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(b);
		LLVMBuildBr(b, join);
		LLVMPositionBuilderAtEnd(b, join);
		if (!A->store)
			for (int j = 0; j < w; j++) {
				LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(vv[j]), "");
				LLVMValueRef in[2] = {vv[j], sv[j]};
				LLVMBasicBlockRef bb[2] = {vec_end, slow_end};
				LLVMAddIncoming(phi, in, bb, 2);
				vals[j] = phi;
			}
	}
	if (out)
		for (int j = 0; j < w; j++)
			out->r[r0 + j] = vals[j];
}

/* Every thread gets the owner's copy of each element of x (results of an
 * atomic, which only the owners performed). */
static GV *from_owners(NvFn *f, GV *x)
{
	uint64_t bytes = ((uint64_t)1 << x->L->nbits) * (uint64_t)nv_smem_elem(x->dt);
	nv_temp_need(f, bytes);
	nv_temp_begin(f);
	LLVMValueRef base = nv_temp_ptr(f, 0);
	nv_smem_write(f, x, base, false);
	nv_barrier(f);
	GV *y = nv_smem_read(f, base, x->L, x->dt, false);
	f->smem_busy = true;
	return y;
}

static bool atomic_elems(NvFn *f, Acc *A, LLVMValueRef own, GV *out)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int n = A->L ? 1 << A->L->nregbits : 1;
	for (int r = 0; r < n; r++) {
		LLVMValueRef p;
		LLVMValueRef off = A->L ? reg_offset(f, A, r, &p) : A->ubase;
		if (!A->L)
			p = A->upred;
		p = and_pred(f, p, own);
		LLVMValueRef ptr = elem_ptr(f, A, off);
		LLVMValueRef v = A->val->L ? A->val->r[r] : A->val->r[0];
		LLVMValueRef c = A->cmp ? (A->cmp->L ? A->cmp->r[r] : A->cmp->r[0]) : NULL;
		LLVMBasicBlockRef from = LLVMGetInsertBlock(b), then = NULL, join = NULL;
		if (p) {
			then = cg_block(g, "atom");
			join = cg_block(g, "atom.end");
			LLVMBuildCondBr(b, p, then, join);
			LLVMPositionBuilderAtEnd(b, then);
		}
		LLVMValueRef old = cg_atomic(g, (int)A->i->ival, A->ref->dt, A->ref->mem, false, ptr, v, c, f->k->name,
		                             A->i->loc);
		if (!old)
			return false;
		if (p) {
			LLVMBasicBlockRef end = LLVMGetInsertBlock(b);
			LLVMBuildBr(b, join);
			LLVMPositionBuilderAtEnd(b, join);
			LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(old), "");
			LLVMValueRef in[2] = {old, cg_const(g, A->ref->dt, 0, 0.0)};
			LLVMBasicBlockRef bb[2] = {end, from};
			LLVMAddIncoming(phi, in, bb, 2);
			old = phi;
		}
		if (out)
			out->r[r] = old;
	}
	return true;
}

bool nv_access_setup(NvFn *f, const Inst *i, NvAccess *out)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LayoutPlan *P = f->plan;
	GRef *ref = f->refs[i->args[0]->id];
	if (!ref)
		return nv_fail(f, i->loc, "%s: access to an unknown Ref", f->k->name);
	Acc A = {0};
	A.i = i;
	A.ref = ref;
	A.store = i->op == IR_STORE;
	A.atomic = i->op == IR_ATOMIC;
	int n = ref->rank;
	A.rdim = arena_alloc(nv_arena(f), (size_t)(n + 1) * sizeof *A.rdim);
	A.idx = arena_alloc(nv_arena(f), (size_t)(n + 1) * sizeof *A.idx);
	A.gval = arena_alloc(nv_arena(f), (size_t)(n + 1) * sizeof *A.gval);
	A.gat = arena_alloc(nv_arena(f), (size_t)(n + 1) * sizeof *A.gat);
	int next = 1;
	for (int d = 0; d < n; d++) {
		const Indexer *x = &i->idx[d];
		A.rdim[d] = ir_access_dim(i, d);
		switch (x->kind) {
		case IDX_FULL:
			break;
		case IDX_POINT: case IDX_SLICE: {
			const Value *v = i->args[next++];
			A.idx[d] = to_i64(f, nv_val(f, v)->r[0], v->type->dtype);
			break;
		}
		case IDX_GATHER:
			A.gval[d] = i->args[next++];
			break;
		}
	}
	int e = next;
	const Value *val = A.store || A.atomic ? i->args[e++] : NULL;
	const Value *cmp = A.atomic && i->ival == ATOMIC_CAS ? i->args[e++] : NULL;
	const Value *mask = i->has_mask ? i->args[e++] : NULL;
	const Value *other = i->has_other ? i->args[e++] : NULL;

	/* The layout of the access. */
	const Value *res = i->nresults ? i->results[0] : NULL;
	if (res && is_tensor(res))
		A.L = P->of[res->id];
	else if (val && is_tensor(val))
		A.L = P->lazy[val->id] ? lay_default(P->lc, val->type) : P->of[val->id];
	for (int d = 0; d < n; d++)
		if (A.gval[d]) {
			if (!A.L)
				return nv_fail(f, i->loc, "%s: a gather with a scalar result", f->k->name);
			A.gat[d] = nv_broadcast(f, A.gval[d], A.L);
		}
	if (val)
		A.val = nv_get(f, val, A.L && is_tensor(val) ? A.L : NULL);
	if (cmp)
		A.cmp = nv_get(f, cmp, A.L && is_tensor(cmp) ? A.L : NULL);
	if (mask)
		A.mask = A.L ? nv_broadcast(f, mask, A.L) : nv_val(f, mask);
	if (other)
		A.other = A.L && is_tensor(other) ? nv_get(f, other, A.L) : nv_val(f, other);
	if (f->g->failed)
		return false;

	/* The uniform part. */
	A.ubase = cg_i64(g, 0);
	for (int d = 0; d < n; d++) {
		const Indexer *x = &i->idx[d];
		if (x->kind != IDX_POINT && x->kind != IDX_SLICE)
			continue;
		A.ubase = LLVMBuildAdd(b, A.ubase, LLVMBuildMul(b, A.idx[d], ref->stride[d], ""), "");
		if (x->kind == IDX_POINT && x->masked)
			A.upred = and_pred(f, A.upred, LLVMBuildICmp(b, LLVMIntULT, A.idx[d], ref->extent[d], ""));
	}
	if (!A.L && A.mask)
		A.upred = and_pred(f, A.upred, A.mask->r[0]);
	*out = A;
	return true;
}


/* Whether the masked SLICE indexer of dim d of A lies wholly inside or
 * wholly outside the extent: its start and the extent are multiples of a
 * power of two at least its size. */
static bool slice_whole(NvFn *f, Acc *A, int d)
{
	const Inst *i = A->i;
	if (i->idx[d].kind != IDX_SLICE || i->idx[d].size <= 0)
		return false;
	int64_t s = nv_divisor(f, ir_index_arg(i, d)), de = extent_divisor(f, i, d);
	if (de < s)
		s = de;
	return s >= i->idx[d].size;
}

/* i1 or NULL (always): every element this thread holds of A is in (the
 * AND of its registers' predicates, owner aside).  Along a dim the thread's
 * coordinates are t | k for every combination k of its register bits there
 * (t: its thread part), so without gathers and user masks they are all in
 * when the least (t) and the largest (t | every register bit) are.
 * *block: then the predicate is also every element's (each masked slice
 * wholly in or out, no padding). */
static LLVMValueRef all_in(NvFn *f, Acc *A, bool *block)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const GpuLayout *L = A->L;
	const Inst *i = A->i;
	int n = A->ref->rank;
	*block = false;
	if (A->mask || ir_access_gathers(i)) {
		LLVMValueRef all = NULL;
		for (int r = 0; r < 1 << L->nregbits; r++) {
			LLVMValueRef p;
			reg_offset(f, A, r, &p);
			all = and_pred(f, all, p);
		}
		return all;
	}
	int64_t *kmax = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *kmax);
	lay_reg_coord(L, (1 << L->nregbits) - 1, kmax);
	LLVMValueRef *cmax = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *cmax);
	for (int a = 0; a < L->rank; a++) {
		LLVMValueRef t = nv_tcoord(f, L, a);
		cmax[a] = cg_i32(g, (int32_t)kmax[a]);
		if (t && kmax[a]) {
			cmax[a] = LLVMBuildOr(b, t, cmax[a], "");
			LLVMSetIsDisjoint(cmax[a], 1);
		} else if (t) {
			cmax[a] = t;
		}
	}
	LLVMValueRef all = A->upred;
	bool whole = true;
	for (int d = 0; d < n; d++) {
		const Indexer *x = &i->idx[d];
		if ((x->kind != IDX_FULL && x->kind != IDX_SLICE) || !x->masked)
			continue;
		LLVMValueRef ext = A->ref->extent[d];
		if (slice_whole(f, A, d)) {
			all = and_pred(f, all, LLVMBuildICmp(b, LLVMIntULT, A->idx[d], ext, ""));
			continue;
		}
		whole = false;
		int a = A->rdim[d];
		LLVMValueRef t = nv_tcoord(f, L, a);
		LLVMValueRef lo = t ? LLVMBuildAdd(b, A->idx[d], LLVMBuildZExt(b, t, g->t_i64, ""), "") : A->idx[d];
		LLVMValueRef hi = LLVMBuildAdd(b, A->idx[d], LLVMBuildZExt(b, cmax[a], g->t_i64, ""), "");
		all = and_pred(f, all, LLVMBuildICmp(b, LLVMIntULT, lo, ext, ""));
		all = and_pred(f, all, LLVMBuildICmp(b, LLVMIntULT, hi, ext, ""));
	}
	for (int a = 0; a < L->rank; a++) {
		if ((L->dims[a] & (L->dims[a] - 1)) == 0)
			continue; /* a power of two: no padding */
		whole = false;
		all = and_pred(f, all, LLVMBuildICmp(b, LLVMIntULT, cmax[a], cg_i32(g, (int32_t)L->dims[a]), ""));
	}
	*block = whole;
	return all;
}

/* The layout of the reshape of load result res that dot d reads, or NULL. */
static const GpuLayout *reshaped_operand(NvFn *f, const Inst *d, const Value *res)
{
	const Value *ops[3] = {d->args[0], d->args[1], nv_dot_trans_b(f->plan, d)};
	for (int k = 0; k < 3; k++)
		if (ops[k] && ops[k]->def && ops[k]->def->op == IR_RESHAPE && ops[k]->def->args[0] == res)
			return f->plan->of[ops[k]->id];
	return NULL;
}

bool nv_dot_takes_load(NvFn *f, const Inst *d, NvAccess *A)
{
	const Value *res = A->i->results[0];
	if (A->ref->as != 1 || A->mask || A->other)
		return false;
	/* Through a reshape that only merges dims (the same bits, so the same
	 * registers): the dot sees the operand's layout, the copies address
	 * the load's. */
	A->view = NULL;
	if (A->L->rank != 2) {
		A->view = reshaped_operand(f, d, res);
		if (!A->view || A->view->rank != 2 || lay_reshape(f->plan->lc, A->view, A->L->rank, A->L->dims) != A->L)
			return false;
	}
	int es = nv_smem_elem(res->type->dtype);
	if (lay_contig(A->L) * es < 16)
		return false;
	/* No write between the load and the dot may change what it reads. */
	if (!A->ref->readonly)
		for (const Inst *x = A->i->next; x && x != d; x = x->next)
			if (op_info[x->op].flags & F_EFFECT)
				return false;
	/* Lanes may differ only along the last dim (no user mask): a prefix. */
	bool uniform;
	return nv_access_width(f, A, &uniform) * es == 16;
}

/* An atomic: the elements' old values are its result when used (a scalar
 * one: thread 0's, broadcast through shared memory). */
static bool access_atomic(NvFn *f, Acc *A, LLVMValueRef own, const Value *res)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	GRef *ref = A->ref;
	LayoutPlan *P = f->plan;
	bool used = res && P->nuses[res->id] > 0;
	GV *out = used ? gv_new(f, A->L, ref->dt) : NULL;
	if (!atomic_elems(f, A, own, out))
		return false;
	if (!used)
		return true;
	if (!A->L) {
		/* Thread 0's old value for everyone. */
		nv_temp_need(f, 16);
		nv_temp_begin(f);
		LLVMValueRef p = nv_temp_ptr(f, 0);
		LLVMTypeRef mt = cg_mem_type(g, ref->dt);
		LLVMBasicBlockRef join = NULL;
		LLVMBasicBlockRef then = cg_block(g, "bcast");
		join = cg_block(g, "bcast.end");
		LLVMBuildCondBr(b, own, then, join);
		LLVMPositionBuilderAtEnd(b, then);
		LLVMBuildStore(b, cg_to_mem(g, ref->dt, out->r[0]), p);
		LLVMBuildBr(b, join);
		LLVMPositionBuilderAtEnd(b, join);
		nv_barrier(f);
		out->r[0] = cg_from_mem(g, ref->dt, LLVMBuildLoad2(b, mt, p, ""));
		f->smem_busy = true;
	} else if (lay_replicated(A->L)) {
		out = from_owners(f, out);
	}
	f->vals[res->id] = out;
	return true;
}

/* A scalar load or store: every thread loads it; thread 0 stores it. */
static bool access_scalar(NvFn *f, Acc *A, LLVMValueRef own, const Value *res)
{
	GRef *ref = A->ref;
	LLVMValueRef ptr = elem_ptr(f, A, A->ubase);
	LLVMValueRef v[1] = {A->store ? A->val->r[0] : NULL};
	LLVMValueRef o[1] = {A->store ? NULL : other_of(f, A, 0)};
	guarded(f, A, and_pred(f, A->upred, own), ptr, 1, v, o);
	if (!A->store)
		f->vals[res->id] = gv_scalar(f, ref->dt, v[0]);
	return true;
}

/* A tensor load or store, in vectors of the access width; masked with
 * several vector groups: when every element of the thread is in (all
 * threads but those at an edge), one straight-line path of unguarded
 * vectors, whose loads are all in flight at once; the edge path keeps the
 * per-vector checks. */
static bool access_tensor(NvFn *f, Acc *A, LLVMValueRef own, const Value *res)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	GRef *ref = A->ref;
	bool uniform;
	int w = nv_access_width(f, A, &uniform);
	GV *out = A->store ? NULL : gv_new(f, A->L, ref->dt);
	int nr = 1 << A->L->nregbits;
	bool block = false;
	LLVMValueRef all = nr / w > 1 ? all_in(f, A, &block) : NULL;
	if (!all) {
		for (int r = 0; r < nr; r += w)
			access_group(f, A, r, w, uniform, own, out, false);
		if (!A->store)
			f->vals[res->id] = out;
		return true;
	}
	LLVMBasicBlockRef fast = cg_block(g, "inb"), slow = cg_block(g, "edge"), join = cg_block(g, "inb.end");
	LLVMBuildCondBr(b, all, fast, slow);
	LLVMPositionBuilderAtEnd(b, fast);
	GV *fo = A->store ? NULL : gv_new(f, A->L, ref->dt);
	for (int r = 0; r < nr; r += w)
		access_group(f, A, r, w, true, own, fo, true);
	LLVMBasicBlockRef fast_end = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, slow);
	if (block) {
		/* Every element is out: loads read `other`. */
		if (!A->store)
			for (int r = 0; r < nr; r++)
				out->r[r] = other_of(f, A, r);
	} else {
		for (int r = 0; r < nr; r += w)
			access_group(f, A, r, w, uniform, own, out, false);
	}
	LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, join);
	LLVMPositionBuilderAtEnd(b, join);
	if (A->store)
		return true;
	for (int r = 0; r < nr; r++) {
		LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(fo->r[r]), "");
		LLVMValueRef in[2] = {fo->r[r], out->r[r]};
		LLVMBasicBlockRef bb[2] = {fast_end, slow_end};
		LLVMAddIncoming(phi, in, bb, 2);
		out->r[r] = phi;
	}
	f->vals[res->id] = out;
	return true;
}

/* ---- epilogue staging ------------------------------------------------------------------ */

/* A rank-2 block stored to global memory in a layout whose vectors are
 * narrower than 16 bytes (a tensor-core dot's accumulator layout: pairs of
 * columns) leaves through shared memory in the default blocked layout,
 * whose 16-byte vectors the warps store coalesced; edge masks are those of
 * the blocked store.  The staging area is dead already: the buffers of
 * the software-pipelined loops emitted before (none is live here), else
 * the temporary area (a whole-K dot's operand buffers), when large enough,
 * so shared memory does not grow; otherwise the store stays as it is. */
static void stage_store(NvFn *f, Acc *A)
{
	LayoutPlan *P = f->plan;
	const GpuLayout *L = A->L, *B;
	int es = nv_smem_elem(A->ref->dt);
	if (!A->store || !L || L->rank != 2 || A->ref->as != 1 || A->mask || A->ref->rank < 2 || f->pipe)
		return;
	if (ir_access_gathers(A->i))
		return;
	/* Rows of C padded to a power of two (a tensor-core N of 96: 128). */
	int64_t R = L->dims[0], C = L->dims[1], Cp = INT64_C(1) << L->dbits[1];
	if ((R & (R - 1)) || C * es < 16)
		return;
	B = lay_default(P->lc, A->i->args[ir_access_extras(A->i)]->type); /* the stored value's */
	if (B == L || B->dims[1] != C)
		return;
	uint64_t at = nv_align_up(f->smem_pipe_live, 128), bytes = (uint64_t)(R * Cp * es);
	bool pipe = at + bytes <= f->smem_pipe_bytes;
	if (!pipe && bytes > f->smem_temp)
		return;
	bool u;
	int w0 = nv_access_width(f, A, &u);
	Acc S = *A;
	S.L = B;
	if (nv_access_width(f, &S, &u) * es < 16 || w0 * es >= 16)
		return;
	Cg *g = f->g;
	LLVMValueRef off = cg_i32(g, (int32_t)at);
	LLVMValueRef base = pipe ? LLVMBuildInBoundsGEP2(g->b, g->t_i8, f->smem_pipe, &off, 1, "epi.stage")
	                         : nv_temp_ptr(f, 0);
	/* Other warps may still read the buffers (their last wgmma or
	 * ldmatrix); after the store the next loop may write them. */
	nv_barrier(f);
	nv_smem_write(f, A->val, base, true);
	nv_barrier(f);
	GV *y = nv_smem_read(f, base, B, A->val->dt, true);
	if (pipe)
		nv_barrier(f);
	else
		f->smem_busy = true;
	A->L = B;
	A->val = y;
}

bool nv_access(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LayoutPlan *P = f->plan;
	const Value *res = i->nresults ? i->results[0] : NULL;
	/* Loaded for a dot of a software-pipelined loop: cp.async does it. */
	if (res && f->pipelined && f->pipelined[res->id])
		return true;
	Acc A;
	if (!nv_access_setup(f, i, &A))
		return false;
	GRef *ref = A.ref;
	nv_sync_access(f, ref, A.store || A.atomic, i, A.L);

	/* A tensor-core dot may copy this load straight into shared memory. */
	if (i->op == IR_LOAD && A.L && P->dot_of[res->id] && nv_dot_takes_load(f, P->dot_of[res->id], &A)) {
		NvAccess *keep = arena_alloc(nv_arena(f), sizeof *keep);
		*keep = A;
		f->deferred[res->id] = keep;
		return true;
	}

	stage_store(f, &A);
	nv_access_tbase(f, &A);
	/* Stores and atomics: one thread per element. */
	LLVMValueRef own = NULL;
	if (A.store || A.atomic)
		own = A.L ? nv_owner(f, A.L) : LLVMBuildICmp(b, LLVMIntEQ, f->tid, cg_i32(g, 0), "");

	if (A.atomic)
		return access_atomic(f, &A, own, res);
	if (!A.L)
		return access_scalar(f, &A, own, res);
	return access_tensor(f, &A, own, res);
}
