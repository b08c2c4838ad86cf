/* lower_refs.c - lower-refs: from block views to whole arrays.
 *
 * After sema the body sees one Ref per operand that is its *block view*
 * (the BlockSpec's block, squeezed dims dropped) and one Ref per scratch
 * buffer.  This pass produces the form HOST-DESIGN.md lists "after
 * lower-refs":
 *
 *  - the body's arguments become one whole-array Ref per operand (type
 *    IrOperand.array), then the scalars, then the sizes; scratch arguments
 *    are replaced by ALLOCs (SPACE_SCRATCH) at the top of the body;
 *  - at the top of the body each spec's index map is inlined (its region
 *    cloned, its arguments bound to PROGRAM_ID ops and to the whole arrays
 *    of the prefetch operands, §5.11) and turned into one
 *    i64 element offset per array dim: block_index * block_dim;
 *  - every LOAD/STORE/ATOMIC of a block view is rewritten to address the
 *    whole array: squeezed dims come back as points at their offset,
 *    every other indexer is shifted by its dim's offset;
 *  - finally every indexer of every access (spec'd operands, whole arrays,
 *    scratch) is marked `masked` unless it provably stays inside its dim:
 *    a partial edge block, an index map that points past the array, a ds()
 *    or a gather off the end must never touch memory outside the array
 *    (lang-spec §8).  Only FULL indexers, constant points/slices inside a
 *    static dim and the slices ds(kk * C, C) of a loop `for kk in
 *    range(E // C)` over a dim of extent E (loop_slice_in_bounds), and
 *    the blocks whose index is a program id of an axis with no more
 *    blocks than the dim holds (grid_block_in_bounds: `grid(b)` and a
 *    squeezed dim of extent b indexed `i`) are left unmasked.
 *
 * Offsets are shared: identical index-map results (e.g. the program id in
 * `(i) -> (i)` of several specs) give the same offset value, and constant
 * block indices fold to constant offsets, so a later pass can recognise
 * accesses that cover the same elements by value identity. */
#include "passes.h"

#include <string.h>

/* One computed element offset, for sharing between specs. */
typedef struct OffsetEntry {
	Value *bidx;   /* the block index (NULL for a constant one) */
	int64_t cval;  /* the constant block index when bidx is NULL */
	int64_t block; /* the block dim it was multiplied by */
	Value *off;    /* the resulting i64 element offset */
} OffsetEntry;

/* State of the pass over one kernel. */
typedef struct LowerRefs {
	Compiler *cc;        /* diagnostics and the arena */
	Arena *a;            /* where the new IR is allocated */
	IrKernel *k;         /* the kernel being lowered */
	InsertPoint top;     /* the top of the body: before its first original instruction */
	Value **pids;        /* per grid axis: its PROGRAM_ID, made on first use (NULL until then) */
	Vec offsets;         /* OffsetEntry*, the offsets computed so far */
	Value ***op_offsets; /* per operand with a spec: the i64 element offset of each array dim */
	Value **arrays;      /* per operand: its new whole-array Ref argument */
	Vec consts;          /* Value*, the i64 constants made at the top (shared by value) */
} LowerRefs;

/* ---- small builders --------------------------------------------------------- */

static Value *emit_at(LowerRefs *L, InsertPoint at, Op op, Loc loc, Type *t, int nargs, Value **args)
{
	Inst *i = ir_inst_new(L->a, L->k, op, loc, nargs, args, 1, &t);
	ir_insert_at(at, i);
	return i->results[0];
}

static Value *const_i64(LowerRefs *L, InsertPoint at, Loc loc, int64_t v)
{
	Value *c = emit_at(L, at, IR_CONST, loc, type_scalar(L->a, DT_I64), 0, NULL);
	c->def->ival = v;
	return c;
}

/* An i64 constant at the top of the body, shared by value. */
static Value *top_const(LowerRefs *L, Loc loc, int64_t v)
{
	for (int j = 0; j < L->consts.len; j++) {
		Value *c = L->consts.items[j];
		if (c->def->ival == v)
			return c;
	}
	Value *c = const_i64(L, L->top, loc, v);
	vec_push(L->a, &L->consts, c);
	return c;
}

/* v (a scalar or a tensor of integers) converted to i64. */
static Value *to_i64(LowerRefs *L, InsertPoint at, Loc loc, Value *v)
{
	if (v->type->dtype == DT_I64)
		return v;
	return emit_at(L, at, IR_CAST, loc, type_with_dtype(L->a, v->type, DT_I64), 1, &v);
}

/* a + b for i64 scalars, folding a zero offset away. */
static Value *add_offset(LowerRefs *L, InsertPoint at, Loc loc, Value *off, Value *v)
{
	int64_t c;
	if (ir_const_value(off, &c) && c == 0)
		return v;
	Value *args[2] = {off, to_i64(L, at, loc, v)};
	return emit_at(L, at, IR_ADD, loc, type_scalar(L->a, DT_I64), 2, args);
}

/* ---- offsets ----------------------------------------------------------------- */

static Value *program_id(LowerRefs *L, int axis, Loc loc)
{
	if (!L->pids[axis]) {
		L->pids[axis] = emit_at(L, L->top, IR_PROGRAM_ID, loc, type_scalar(L->a, DT_I32), 0, NULL);
		L->pids[axis]->def->ival = axis;
	}
	return L->pids[axis];
}

/* The i64 element offset block_index * block: shared between specs, folded
 * when the block index is a constant.  bidx is NULL for a constant cval. */
static Value *element_offset(LowerRefs *L, Value *bidx, int64_t cval, int64_t block, Loc loc)
{
	for (int e = 0; e < L->offsets.len; e++) {
		OffsetEntry *x = L->offsets.items[e];
		if (x->bidx == bidx && x->block == block && (bidx || x->cval == cval))
			return x->off;
	}
	Value *off;
	if (!bidx) {
		off = top_const(L, loc, cval * block);
	} else {
		off = to_i64(L, L->top, loc, bidx);
		if (block != 1) {
			Value *args[2] = {off, top_const(L, loc, block)};
			off = emit_at(L, L->top, IR_MUL, loc, type_scalar(L->a, DT_I64), 2, args);
		}
	}
	OffsetEntry *x = arena_alloc(L->a, sizeof *x);
	*x = (OffsetEntry){bidx, cval, block, off};
	vec_push(L->a, &L->offsets, x);
	return off;
}

/* Inlines operand o's index map at the top of the body and computes the
 * element offset of each of its array dims. */
static void compute_offsets(LowerRefs *L, int o)
{
	IrOperand *op = L->k->operands[o];
	const Region *map = op->index_map;
	const Inst *y = map->last;
	int rank = op->array->rank;
	PKC_ASSERT(y && y->op == IR_YIELD && y->nargs == rank);

	/* The block index of each dim: a program id, a constant, or a value
	 * computed by the cloned map. */
	ValueMap *vm = vmap_new(L->a);
	for (int g = 0; g < L->k->ngrid; g++)
		if (ir_region_reads(map, map->args[g]))
			vmap_set(vm, map->args[g], program_id(L, g, op->loc));
	/* The prefetch arrays it reads (§5.11): the body's whole arrays; their
	 * loads are masked like any other (mask_unproven). */
	for (int p = 0, g = L->k->ngrid; p < L->k->noperands; p++)
		if (L->k->operands[p]->mode == PM_PREFETCH)
			vmap_set(vm, map->args[g++], L->arrays[p]);
	bool computed = false;
	for (int d = 0; d < rank; d++) {
		const Value *v = y->args[d];
		computed |= v->region != map && !(v->def && v->def->op == IR_CONST);
	}
	/* (Clones left unused, such as a folded constant, are dropped at the end.) */
	Value **bidx = NULL;
	int nyield = 0;
	if (computed)
		bidx = ir_clone_region_body(L->a, L->k, map, vm, L->top, &nyield);

	L->op_offsets[o] = arena_alloc(L->a, (size_t)(rank + 1) * sizeof(Value *));
	for (int d = 0; d < rank; d++) {
		const Value *v = y->args[d];
		Value *off;
		if (v->def && v->def->op == IR_CONST && v->def->parent == map)
			off = element_offset(L, NULL, v->def->ival, op->block[d], op->loc);
		else
			off = element_offset(L, computed ? bidx[d] : vmap_lookup(vm, (Value *)v), 0, op->block[d], op->loc);
		L->op_offsets[o][d] = off;
	}
}

/* ---- accesses ------------------------------------------------------------------ */

/* Rewrites one access of operand o's block view to address the whole array. */
static void rewrite_access(LowerRefs *L, Inst *i, int o)
{
	IrOperand *op = L->k->operands[o];
	Type *arr = op->array;
	InsertPoint at = {i->parent, i};
	int old_nonfull = 0;
	for (int v = 0; v < i->nidx; v++)
		old_nonfull += i->idx[v].kind != IDX_FULL;
	int nextra = i->nargs - 1 - old_nonfull;

	Indexer *idx = arena_alloc(L->a, (size_t)(arr->rank + 1) * sizeof *idx);
	Value **args = arena_alloc(L->a, (size_t)(1 + arr->rank + nextra) * sizeof *args);
	int nargs = 0;
	args[nargs++] = L->arrays[o];
	int v = 0;          /* block-view dim */
	int next_old = 1;   /* next old index operand */
	for (int d = 0; d < arr->rank; d++) {
		Value *off = L->op_offsets[o][d];
		bool dynamic = arr->dims[d] == DIM_DYNAMIC;
		Indexer x = {0}; /* `masked` is decided by mask_unproven */
		if (op->squeezed[d]) {
			x.kind = IDX_POINT;
			args[nargs++] = off;
			idx[d] = x;
			continue;
		}
		PKC_ASSERT(v < i->nidx);
		Indexer old = i->idx[v++];
		int64_t c;
		switch (old.kind) {
		case IDX_FULL:
			if (!dynamic && ir_const_value(off, &c) && c == 0 && op->block[d] == arr->dims[d]) {
				x.kind = IDX_FULL; /* the block is the whole dim */
			} else {
				x.kind = IDX_SLICE;
				x.size = op->block[d];
				args[nargs++] = off;
			}
			break;
		case IDX_POINT:
		case IDX_SLICE:
			x.kind = old.kind;
			x.size = old.size;
			args[nargs++] = add_offset(L, at, i->loc, off, i->args[next_old++]);
			break;
		case IDX_GATHER: {
			Value *g = i->args[next_old++];
			x.kind = IDX_GATHER;
			if (!(ir_const_value(off, &c) && c == 0)) {
				g = to_i64(L, at, i->loc, g);
				Value *b = emit_at(L, at, IR_BROADCAST, i->loc, g->type, 1, &off);
				Value *sum[2] = {g, b};
				g = emit_at(L, at, IR_ADD, i->loc, g->type, 2, sum);
			}
			args[nargs++] = g;
			break;
		}
		}
		idx[d] = x;
	}
	PKC_ASSERT(v == i->nidx);
	for (int e = 0; e < nextra; e++)
		args[nargs++] = i->args[1 + old_nonfull + e];
	i->args = args;
	i->nargs = nargs;
	i->idx = idx;
	i->nidx = arr->rank;
}

/* Rewrites every access of a spec'd operand's block view (views[o]) in r,
 * recursively. */
static void rewrite_region(LowerRefs *L, Region *r, Value **views)
{
	for (Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_LOAD || i->op == IR_STORE || i->op == IR_ATOMIC) {
			for (int o = 0; o < L->k->noperands; o++)
				if (i->args[0] == views[o] && L->k->operands[o]->has_spec) {
					rewrite_access(L, i, o);
					break;
				}
		}
		for (int j = 0; j < i->nregions; j++)
			rewrite_region(L, i->regions[j], views);
	}
}

/* Does indexer x of dim `extent` provably stay inside it?  FULL always does;
 * a point or slice only with a constant start inside a static extent. */
static bool in_bounds(Indexer x, const Value *start, int64_t extent)
{
	int64_t c;
	if (x.kind == IDX_FULL)
		return true;
	if (x.kind == IDX_GATHER || extent == DIM_DYNAMIC || !ir_const_value(start, &c))
		return false;
	int64_t n = x.kind == IDX_SLICE ? x.size : 1;
	return c >= 0 && n <= extent && c <= extent - n;
}

/* The body argument of kernel k that holds the extent of dim d of Ref
 * type ref (a size symbol), or NULL. */
static const Value *size_value(const IrKernel *k, const Type *ref, int d)
{
	if (!ref->syms || !ref->syms[d])
		return NULL;
	for (int s = 0; s < k->nsizes; s++)
		if (strcmp(k->sizes[s], ref->syms[d]) == 0)
			return k->body->args[k->noperands + k->nscalars + s];
	return NULL;
}

/* Does slice x (n elements from start) of dim d of Ref type ref stay
 * inside it as the K loop of a matmul does: start = iv * n (or n * iv)
 * for the induction variable iv of a FOR from a constant lo >= 0 by a
 * constant step > 0 to hi, where hi * n <= the extent: hi a constant
 * within a static extent, or floordiv(E, n) with E the dim's size
 * symbol (`for kk in range(k // BK)` with `ds(kk * BK, BK)`). */
static bool loop_slice_in_bounds(const IrKernel *k, Indexer x, const Value *start, const Type *ref, int d)
{
	int64_t n = x.size, c, lo, step, hi;
	if (x.kind != IDX_SLICE || n <= 0 || !start->def || start->def->op != IR_MUL)
		return false;
	const Value *iv = NULL;
	for (int side = 0; side < 2; side++)
		if (ir_const_value(start->def->args[1 - side], &c) && c == n)
			iv = start->def->args[side];
	if (!iv || iv->def || iv->index != 0 || !iv->region->owner || iv->region->owner->op != IR_FOR)
		return false;
	const Inst *loop = iv->region->owner;
	if (!ir_const_value(loop->args[0], &lo) || lo < 0 || !ir_const_value(loop->args[2], &step) || step <= 0)
		return false;
	const Value *h = loop->args[1];
	if (ref->dims[d] != DIM_DYNAMIC)
		return ir_const_value(h, &hi) && hi <= ref->dims[d] / n;
	const Value *e = size_value(k, ref, d);
	return e && h->def && h->def->op == IR_FLOORDIV && h->def->args[0] == e && ir_const_value(h->def->args[1], &c) &&
	       c == n;
}

/* The grid axis g when `start` is program id g times n (n = 1: the id
 * itself), else -1.  The product is an i64 (element_offset: the id
 * widened, then multiplied) or, *narrow, one of the id's 32 bits
 * (`ds(i * n, n)` in the body), which only a static extent below 2^31
 * keeps from wrapping. */
static int program_id_axis(const Value *start, int64_t n, bool *narrow)
{
	const Value *v = start;
	int64_t c;
	*narrow = false;
	if (n != 1) {
		if (v->def && v->def->op == IR_CAST)
			v = v->def->args[0], *narrow = true;
		if (!v->def || v->def->op != IR_MUL)
			return -1;
		const Value *id = NULL;
		for (int side = 0; side < 2; side++)
			if (ir_const_value(v->def->args[1 - side], &c) && c == n)
				id = v->def->args[side];
		if (!id)
			return -1;
		v = id;
		*narrow |= v->type->dtype != DT_I64;
	}
	if (v->def && v->def->op == IR_CAST)
		v = v->def->args[0];
	return v->def && v->def->op == IR_PROGRAM_ID ? (int)v->def->ival : -1;
}

/* Is v the grid region's argument of size symbol sym? */
static bool grid_size_arg(const IrKernel *k, const Value *v, const char *sym)
{
	return !v->def && v->region == k->grid && v->index < k->nsizes && strcmp(k->sizes[v->index], sym) == 0;
}

/* Does point or slice x (n elements from start) of dim d of Ref type ref
 * stay inside it as a BlockSpec block does when its index is a program id
 * and the grid has no more blocks along that axis than the dim holds:
 * start = pid(g) * n with grid extent G along g, where G * n <= the extent:
 * G a constant within a static extent, or the dim's size symbol S itself
 * (n = 1: `grid(b)` with a block index `i` into a dim of b), or
 * floordiv(S, n).  Program ids lie in [0, G) on every target. */
static bool grid_block_in_bounds(const IrKernel *k, Indexer x, const Value *start, const Type *ref, int d)
{
	int64_t n = x.kind == IDX_SLICE ? x.size : 1, c;
	if ((x.kind != IDX_POINT && x.kind != IDX_SLICE) || n <= 0 || !k->grid)
		return false;
	bool narrow;
	int g = program_id_axis(start, n, &narrow);
	const Inst *y = k->grid->last;
	if (g < 0 || !y || y->op != IR_YIELD || g >= y->nargs ||
	    (narrow && (ref->dims[d] == DIM_DYNAMIC || ref->dims[d] > INT32_MAX)))
		return false;
	const Value *e = y->args[g];
	if (ref->dims[d] != DIM_DYNAMIC)
		return ir_const_value(e, &c) && c >= 0 && c <= ref->dims[d] / n;
	const char *sym = ref->syms ? ref->syms[d] : NULL;
	if (!sym)
		return false;
	if (grid_size_arg(k, e, sym))
		return n == 1;
	return e->def && e->def->op == IR_FLOORDIV && grid_size_arg(k, e->def->args[0], sym) &&
	       ir_const_value(e->def->args[1], &c) && c == n;
}

/* Marks `masked` every indexer of every access in r that is not provably in
 * bounds (see the comment at the top), recursively. */
static void mask_unproven(const IrKernel *k, Region *r)
{
	for (Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_LOAD || i->op == IR_STORE || i->op == IR_ATOMIC) {
			const Type *ref = i->args[0]->type;
			int next = 1;
			for (int d = 0; d < i->nidx; d++) {
				Indexer *x = &i->idx[d];
				const Value *start = x->kind == IDX_FULL ? NULL : i->args[next++];
				if (!in_bounds(*x, start, ref->dims[d]) && !loop_slice_in_bounds(k, *x, start, ref, d) &&
				    !grid_block_in_bounds(k, *x, start, ref, d))
					x->masked = true;
			}
		}
		for (int j = 0; j < i->nregions; j++)
			mask_unproven(k, i->regions[j]);
	}
}

/* ---- cleanup -------------------------------------------------------------------- */

static void count_uses(const Region *r, int *uses)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nargs; j++)
			uses[i->args[j]->id]++;
		for (int j = 0; j < i->nregions; j++)
			count_uses(i->regions[j], uses);
	}
}

/* Removes the offset computations nothing uses (e.g. the constant 0
 * offset of a dim whose block is the whole dim, which stays FULL): the
 * pure instructions this pass put before the body's original first one. */
static void drop_unused_top(LowerRefs *L)
{
	int *uses = arena_alloc(L->a, (size_t)(L->k->nvalues + 1) * sizeof *uses);
	count_uses(L->top.region, uses);
	for (Inst *i = L->top.before->prev; i;) {
		Inst *prev = i->prev;
		bool used = (op_info[i->op].flags & (F_EFFECT | F_REGION)) != 0;
		for (int r = 0; r < i->nresults; r++)
			used |= uses[i->results[r]->id] > 0;
		if (!used) {
			for (int j = 0; j < i->nargs; j++)
				uses[i->args[j]->id]--;
			ir_remove(i);
		}
		i = prev;
	}
}

/* ---- the kernel ------------------------------------------------------------------ */

static void lower_kernel(LowerRefs *L)
{
	IrKernel *k = L->k;
	Region *body = k->body;
	int nparams = k->noperands + k->nscalars + k->nsizes;
	PKC_ASSERT(body->nargs == nparams + k->nscratch && body->first);
	L->top = (InsertPoint){body, body->first};
	L->pids = arena_alloc(L->a, (size_t)(k->ngrid + 1) * sizeof *L->pids);
	L->op_offsets = arena_alloc(L->a, (size_t)(k->noperands + 1) * sizeof *L->op_offsets);

	/* New arguments: whole-array Refs (fresh values), then the scalars and
	 * sizes (the same values, renumbered). */
	Value **views = arena_alloc(L->a, (size_t)(k->noperands + 1) * sizeof *views);
	Type **types = arena_alloc(L->a, (size_t)(k->noperands + 1) * sizeof *types);
	for (int o = 0; o < k->noperands; o++) {
		views[o] = body->args[o];
		types[o] = k->operands[o]->array;
	}
	Region *tmp = ir_region_new(L->a, k, k->noperands, types);
	L->arrays = tmp->args;
	Value **args = arena_alloc(L->a, (size_t)(nparams + 1) * sizeof *args);
	for (int a = 0; a < nparams; a++) {
		args[a] = a < k->noperands ? L->arrays[a] : body->args[a];
		args[a]->region = body;
		args[a]->index = a;
	}
	for (int o = 0; o < k->noperands; o++)
		L->arrays[o]->name = k->operands[o]->name;

	/* Scratch buffers: one ALLOC each, first thing in the body. */
	for (int s = 0; s < k->nscratch; s++) {
		IrScratch *sc = k->scratch[s];
		Value *buf = emit_at(L, L->top, IR_ALLOC, sc->loc, sc->type, 0, NULL);
		buf->name = sc->name;
		ir_replace_all_uses(k, body->args[nparams + s], buf);
	}

	for (int o = 0; o < k->noperands; o++)
		if (k->operands[o]->has_spec)
			compute_offsets(L, o);
	rewrite_region(L, body, views);
	/* Operands without a spec keep their indexers: only the Ref changes. */
	for (int o = 0; o < k->noperands; o++)
		if (!k->operands[o]->has_spec)
			ir_replace_all_uses(k, views[o], L->arrays[o]);

	body->args = args;
	body->nargs = nparams;
	mask_unproven(k, body);
	drop_unused_top(L);
	k->refs_lowered = true;
}

bool pass_lower_refs(Compiler *cc, IrModule *m)
{
	for (int n = 0; n < m->nkernels; n++) {
		IrKernel *k = m->kernels[n];
		if (k->refs_lowered)
			continue;
		LowerRefs L = {.cc = cc, .a = cc->arena, .k = k};
		lower_kernel(&L);
	}
	return true;
}
