/* tile_host.c - tile-host: block values become loops of scalar code.
 *
 * Input: the IR after lower-refs (tensor-valued SSA, accesses of whole
 * arrays with masked indexers where bounds are not provable).  Output: the form
 * HOST-DESIGN.md lists "after tile-host": every non-Ref value is a scalar;
 * each tensor of the input lives in an ALLOC of SPACE_LOCAL filled by FOR
 * nests (the innermost loop runs over the last, contiguous dim), or is
 * *fused*: computed element by element inside the loop nest of its single
 * consumer instead of getting a buffer of its own.
 *
 * How: the body is rebuilt instruction by instruction.  Every tensor value
 * of the input gets a Tile saying where its elements come from:
 *
 *   T_SPLAT   one scalar for every element (constants, broadcast scalars);
 *   T_BUFFER  a SPACE_LOCAL ALLOC holding it (materialised at its definition);
 *   T_LAZY    not materialised: elem() emits the scalar code computing one
 *             element where it is needed (elementwise ops, loads, views
 *             such as broadcast/transpose/reshape, iota).
 *
 * elem(v, idx) is the heart of the pass: it emits the code for element idx
 * of v at the insertion point, recursing through lazy operands.  A value is
 * lazy only when that is both cheap and correct (the planner, tile_plan.c):
 *  - views and iota always (pure index arithmetic over their operand);
 *  - an elementwise op or a load when its element is needed exactly once
 *    (a single use, in the same region, by a consumer that reads every
 *    element once: not an expanding broadcast, not a yield or loop init);
 *  - a load additionally needs no memory write between it and the point
 *    where its elements are finally consumed, no in-place hazard with a
 *    store to the same Ref, and, for a load with `masked` (edge-block)
 *    indexers, a consumer that is a store over exactly the same valid
 *    range, so the store's split loop bounds keep the load in bounds too;
 *  - and never deeper than MAX_LAZY_DEPTH in a chain of lazy values (elem
 *    recurses through the chain, which a run of lets makes as long as the
 *    program): a value deeper than that is materialised (tile_plan.c).
 *
 * Edge blocks: a `masked` slice becomes a loop over its valid range
 * [lo, hi) with hi = clamp(extent - start, 0, n) (lo = clamp(-start, 0, n),
 * folded to 0 when start is provably non-negative), and loads fill `other`
 * (or 0) into the rest with separate loops: bound splitting, no
 * per-element test.  A masked point becomes a condition around the whole
 * nest.  Masked gather indices and user masks become an IF around the
 * scalar access.
 *
 * Tensor loop-carried values (for/while) live in one buffer allocated
 * before the loop and updated in place at the end of each iteration; a new
 * value computed from the old one with a non-identity index map (or from
 * another carried buffer) goes through a temporary first.  Tensor results
 * of an if are written by each branch into a buffer allocated before it.
 *
 * Numerics: reductions start from 0, -inf/+inf, or the dtype's min/max
 * for integers, and accumulate in order along the axis, except that a long
 * last axis (a multiple of REDUCE_LANES, at least 8 of them) is first
 * reduced into REDUCE_LANES interleaved partial results, as a vectorised
 * reduction would (float sums may then round differently from a strictly
 * sequential sum).  argmax/argmin return
 * the first index of the extreme; as in jnp.argmax/argmin a NaN counts as
 * the extreme, so the index of the first NaN is returned when there is one.
 * dot converts both operands to the result (accumulator) dtype and runs an
 * i-k-j nest accumulating in a buffer of that dtype. */
#include "tile_host.h"

#include <math.h>
#include <string.h>

/* Partial accumulators of a reduction along a long last axis. */
#define REDUCE_LANES 8

/* ---- types, constants, scalar ops ----------------------------------------------- */

static Type *sty(TileHost *t, DType dt)
{
	if (!t->scalar[dt])
		t->scalar[dt] = type_scalar(t->a, dt);
	return t->scalar[dt];
}

/* An interned constant: emitted once, at the top of the body. */
static Value *kconst(TileHost *t, DType dt, int64_t ival, double fval)
{
	for (int e = 0; e < t->const_list.len; e++) {
		ConstEntry *c = t->const_list.items[e];
		if (c->dt == dt && c->ival == ival && memcmp(&c->fval, &fval, sizeof fval) == 0)
			return c->v;
	}
	Inst *i = ir_emit(t->a, t->k, t->consts, IR_CONST, t->loc, 0, NULL, sty(t, dt));
	i->ival = ival;
	i->fval = fval;
	ConstEntry *c = arena_alloc(t->a, sizeof *c);
	*c = (ConstEntry){dt, ival, fval, i->results[0]};
	vec_push(t->a, &t->const_list, c);
	return c->v;
}

static Value *ki64(TileHost *t, int64_t v)
{
	return kconst(t, DT_I64, v, 0.0);
}

/* The constant x of dtype dt (floats get the value as a double). */
static Value *knum(TileHost *t, DType dt, int64_t x)
{
	return dtype_is_float(dt) ? kconst(t, dt, 0, (double)x) : kconst(t, dt, x, 0.0);
}

/* A pure scalar op; reuses an identical one among the last few
 * instructions of the current region (index arithmetic repeats a lot). */
static Value *emit(TileHost *t, Op op, DType dt, int nargs, Value **args)
{
	int window = 8;
	for (Inst *i = t->cur->last; i && window-- > 0; i = i->prev) {
		if (i->op != op || i->nargs != nargs || i->nresults != 1 || i->results[0]->type->dtype != dt)
			continue;
		bool same = true;
		for (int j = 0; j < nargs && same; j++)
			same = i->args[j] == args[j];
		if (same)
			return i->results[0];
	}
	return ir_emit(t->a, t->k, t->cur, op, t->loc, nargs, args, sty(t, dt))->results[0];
}

static Value *emit2(TileHost *t, Op op, Value *a, Value *b)
{
	Value *args[2] = {a, b};
	DType dt = (op_info[op].flags & F_CMP) ? DT_BOOL : a->type->dtype;
	return emit(t, op, dt, 2, args);
}

static Value *cast(TileHost *t, Value *v, DType dt)
{
	return v->type->dtype == dt ? v : emit(t, IR_CAST, dt, 1, &v);
}

static Value *to_i64(TileHost *t, Value *v)
{
	return cast(t, v, DT_I64);
}

/* i64 a + b, folding constants. */
static Value *add64(TileHost *t, Value *a, Value *b)
{
	int64_t x, y;
	bool ca = const_int(a, &x), cb = const_int(b, &y);
	if (ca && cb)
		return ki64(t, x + y);
	if (ca && x == 0)
		return b;
	if (cb && y == 0)
		return a;
	return emit2(t, IR_ADD, a, b);
}

/* i64 a * c for a constant c, folding constants. */
static Value *mul64(TileHost *t, Value *a, int64_t c)
{
	int64_t x;
	if (const_int(a, &x))
		return ki64(t, x * c);
	if (c == 1)
		return a;
	return emit2(t, IR_MUL, a, ki64(t, c));
}

/* clamp(x, 0, n) for i64 scalars. */
static Value *clamp0(TileHost *t, Value *x, Value *n)
{
	return emit2(t, IR_MIN, emit2(t, IR_MAX, x, ki64(t, 0)), n);
}

static Value *and_cond(TileHost *t, Value *a, Value *b)
{
	return !a ? b : !b ? a : emit2(t, IR_AND, a, b);
}

static Value *alloc_local(TileHost *t, DType dt, int rank, const int64_t *dims)
{
	Type *ty = type_ref(t->a, dt, rank, dims, NULL, SPACE_LOCAL);
	return ir_emit(t->a, t->k, t->cur, IR_ALLOC, t->loc, 0, NULL, ty)->results[0];
}

/* ref[idx...] with point indexers (n = the Ref's rank). */
static Value *load_point(TileHost *t, Value *ref, Value **idx)
{
	int n = ref->type->rank;
	Value **args = arena_alloc(t->a, (size_t)(n + 1) * sizeof *args);
	Indexer *x = arena_alloc(t->a, (size_t)(n + 1) * sizeof *x);
	args[0] = ref;
	for (int d = 0; d < n; d++) {
		args[1 + d] = idx[d];
		x[d] = (Indexer){.kind = IDX_POINT};
	}
	Inst *i = ir_emit(t->a, t->k, t->cur, IR_LOAD, t->loc, 1 + n, args, sty(t, ref->type->dtype));
	i->idx = x;
	i->nidx = n;
	return i->results[0];
}

/* A point STORE (or ATOMIC when atomic >= 0, with cmp for CAS); returns the
 * atomic's old value. */
static Value *store_point(TileHost *t, Value *ref, Value **idx, Value *val, int atomic, Value *cmp)
{
	int n = ref->type->rank;
	Value **args = arena_alloc(t->a, (size_t)(n + 3) * sizeof *args);
	Indexer *x = arena_alloc(t->a, (size_t)(n + 1) * sizeof *x);
	int nargs = 0;
	args[nargs++] = ref;
	for (int d = 0; d < n; d++) {
		args[nargs++] = idx[d];
		x[d] = (Indexer){.kind = IDX_POINT};
	}
	args[nargs++] = val;
	if (cmp)
		args[nargs++] = cmp;
	Inst *i = ir_emit(t->a, t->k, t->cur, atomic >= 0 ? IR_ATOMIC : IR_STORE, t->loc, nargs, args,
	                  atomic >= 0 ? sty(t, ref->type->dtype) : NULL);
	i->idx = x;
	i->nidx = n;
	if (atomic >= 0)
		i->ival = atomic;
	return atomic >= 0 ? i->results[0] : NULL;
}

/* ---- structured control flow ---------------------------------------------------- */

/* Opens FOR iv in [lo, hi) step 1 (i64) carrying n values; instructions
 * then go into its body until loop_close. */
static void loop_open(TileHost *t, Loop *L, Value *lo, Value *hi, int n, Value **inits)
{
	Value **args = arena_alloc(t->a, (size_t)(3 + n) * sizeof *args);
	Type **rtypes = arena_alloc(t->a, (size_t)(n + 1) * sizeof *rtypes);
	Type **atypes = arena_alloc(t->a, (size_t)(n + 1) * sizeof *atypes);
	args[0] = lo;
	args[1] = hi;
	args[2] = ki64(t, 1);
	atypes[0] = sty(t, DT_I64);
	for (int j = 0; j < n; j++) {
		args[3 + j] = inits[j];
		rtypes[j] = atypes[1 + j] = inits[j]->type;
	}
	L->inst = ir_inst_new(t->a, t->k, IR_FOR, t->loc, 3 + n, args, n, rtypes);
	L->inst->reassoc = true; /* a loop of a tensor op: no order the user wrote */
	ir_append(t->cur, L->inst);
	Region *body = ir_add_region(t->a, t->k, L->inst, 1 + n, atypes);
	L->iv = body->args[0];
	L->carried = body->args + 1;
	L->saved = t->cur;
	t->cur = body;
}

/* Ends the loop body with yield(yields); returns the loop's results. */
static Value **loop_close(TileHost *t, Loop *L, int n, Value **yields)
{
	PKC_ASSERT(t->cur == L->inst->regions[0]);
	ir_yield(t->a, t->k, t->cur, t->loc, n, yields);
	t->cur = L->saved;
	return L->inst->results;
}

/* Opens a nest over the box [lo[d], hi[d]) of shape (lo/hi NULL or an entry
 * NULL: 0 / shape[d]).  A dim of a single element gets no loop. */
static Value **nest_open(TileHost *t, Nest *n, int rank, const int64_t *shape, Value **lo, Value **hi)
{
	n->rank = rank;
	n->iv = arena_alloc(t->a, (size_t)(rank + 1) * sizeof *n->iv);
	n->loops = arena_alloc(t->a, (size_t)(rank + 1) * sizeof *n->loops);
	for (int d = 0; d < rank; d++) {
		Value *l = lo ? lo[d] : NULL, *h = hi ? hi[d] : NULL;
		if (!l && !h && shape[d] == 1) {
			n->iv[d] = ki64(t, 0);
			continue;
		}
		loop_open(t, &n->loops[d], l ? l : ki64(t, 0), h ? h : ki64(t, shape[d]), 0, NULL);
		n->iv[d] = n->loops[d].iv;
	}
	return n->iv;
}

static void nest_close(TileHost *t, Nest *n)
{
	for (int d = n->rank - 1; d >= 0; d--)
		if (n->loops[d].inst)
			loop_close(t, &n->loops[d], 0, NULL);
}

/* Opens IF cond with results of the given scalar dtypes; instructions go
 * into the then-branch until if_else. */
static void if_open(TileHost *t, IfBuild *b, Value *cond, int n, const DType *dts)
{
	Type **rtypes = arena_alloc(t->a, (size_t)(n + 1) * sizeof *rtypes);
	for (int j = 0; j < n; j++)
		rtypes[j] = sty(t, dts[j]);
	b->inst = ir_inst_new(t->a, t->k, IR_IF, t->loc, 1, &cond, n, rtypes);
	ir_append(t->cur, b->inst);
	ir_add_region(t->a, t->k, b->inst, 0, NULL);
	ir_add_region(t->a, t->k, b->inst, 0, NULL);
	b->saved = t->cur;
	t->cur = b->inst->regions[0];
}

static void if_else(TileHost *t, IfBuild *b, int n, Value **yields)
{
	PKC_ASSERT(t->cur == b->inst->regions[0]);
	ir_yield(t->a, t->k, t->cur, t->loc, n, yields);
	t->cur = b->inst->regions[1];
}

static Value **if_close(TileHost *t, IfBuild *b, int n, Value **yields)
{
	PKC_ASSERT(t->cur == b->inst->regions[1]);
	ir_yield(t->a, t->k, t->cur, t->loc, n, yields);
	t->cur = b->saved;
	return b->inst->results;
}

/* ---- elements ------------------------------------------------------------------------ */

static Value *elem(TileHost *t, const Value *v, Value **idx);
static Value *access_elem(TileHost *t, AccessPlan *p, Value **idx, Value *store_val, Value *cmp_val);

/* The index into an operand of type ot for element idx of a NumPy
 * broadcast to rank R: dims align at the right, size-1 dims read 0. */
static Value **broadcast_index(TileHost *t, const Type *ot, int R, Value **idx)
{
	Value **o = arena_alloc(t->a, (size_t)(ot->rank + 1) * sizeof *o);
	for (int j = 0; j < ot->rank; j++)
		o[j] = ot->dims[j] == 1 ? ki64(t, 0) : idx[j + R - ot->rank];
	return o;
}

/* The operand index for element idx of a reshape from ot to rt. */
static Value **reshape_index(TileHost *t, const Type *ot, const Type *rt, Value **idx)
{
	Value **o = arena_alloc(t->a, (size_t)(ot->rank + 1) * sizeof *o);
	/* Only size-1 dims added or removed: the other dims map in order. */
	int a = 0, b = 0;
	for (;;) {
		while (a < ot->rank && ot->dims[a] == 1)
			o[a++] = ki64(t, 0);
		while (b < rt->rank && rt->dims[b] == 1)
			b++;
		if (a == ot->rank || b == rt->rank || ot->dims[a] != rt->dims[b])
			break;
		o[a++] = idx[b++];
	}
	if (a == ot->rank && b == rt->rank)
		return o;
	/* General: linearise over the result, split over the operand. */
	Value *lin = ki64(t, 0);
	for (int d = 0; d < rt->rank; d++)
		lin = add64(t, mul64(t, lin, rt->dims[d]), idx[d]);
	int64_t stride = 1;
	for (int d = ot->rank - 1; d >= 0; d--) {
		Value *q = stride == 1 ? lin : emit2(t, IR_FLOORDIV, lin, ki64(t, stride));
		o[d] = d == 0 ? q : emit2(t, IR_MOD, q, ki64(t, ot->dims[d]));
		stride *= ot->dims[d];
	}
	return o;
}

/* Element idx of a lazy value computed by input instruction i. */
static Value *elem_lazy(TileHost *t, const Inst *i, Value **idx)
{
	const Type *rt = i->results[0]->type;
	Loc saved = t->loc;
	t->loc = i->loc;
	Value *out;
	if (is_elementwise(i)) {
		Value **args = arena_alloc(t->a, (size_t)(i->nargs + 1) * sizeof *args);
		for (int j = 0; j < i->nargs; j++)
			args[j] = elem(t, i->args[j], idx);
		out = emit(t, i->op, rt->dtype, i->nargs, args);
	} else {
		const Value *x = i->nargs ? i->args[0] : NULL;
		switch (i->op) {
		case IR_BROADCAST:
			out = elem(t, x, broadcast_index(t, x->type, rt->rank, idx));
			break;
		case IR_TRANSPOSE: {
			Value **o = arena_alloc(t->a, (size_t)(rt->rank + 1) * sizeof *o);
			for (int d = 0; d < rt->rank; d++)
				o[i->perm[d]] = idx[d];
			out = elem(t, x, o);
			break;
		}
		case IR_RESHAPE:
			out = elem(t, x, reshape_index(t, x->type, rt, idx));
			break;
		case IR_SLICE: {
			Value **o = arena_alloc(t->a, (size_t)(rt->rank + 1) * sizeof *o);
			for (int d = 0; d < rt->rank; d++)
				o[d] = i->perm[d] ? add64(t, idx[d], ki64(t, i->perm[d])) : idx[d];
			out = elem(t, x, o);
			break;
		}
		case IR_REVERSE: {
			Value **o = arena_alloc(t->a, (size_t)(rt->rank + 1) * sizeof *o);
			memcpy(o, idx, (size_t)rt->rank * sizeof *o);
			int d = (int)i->ival; /* n - 1 - i */
			o[d] = add64(t, ki64(t, rt->dims[d] - 1), mul64(t, idx[d], -1));
			out = elem(t, x, o);
			break;
		}
		case IR_IOTA:
			out = cast(t, idx[i->ival], rt->dtype);
			break;
		case IR_LOAD: {
			AccessPlan *p = tile(t, i->results[0])->plan;
			PKC_ASSERT(p && (!info(t, i->results[0])->cover || info(t, i->results[0])->cover == t->covering));
			out = access_elem(t, p, idx, NULL, NULL);
			break;
		}
		default:
			internal_error("tile-host: %s cannot be lazy", op_info[i->op].name);
		}
	}
	t->loc = saved;
	return out;
}

/* Emits the code for element idx of input value v (idx: one i64 per dim;
 * ignored for a scalar). */
static Value *elem(TileHost *t, const Value *v, Value **idx)
{
	Tile *tl = tile(t, v);
	switch (tl->kind) {
	case T_VALUE:
		PKC_ASSERT(v->type->rank == 0);
		return tl->v;
	case T_SPLAT:
		return tl->v;
	case T_BUFFER:
		return load_point(t, tl->v, idx);
	case T_LAZY:
		return elem_lazy(t, tl->inst, idx);
	case T_NONE:
		break;
	}
	internal_error("tile-host: value %%%d used before it was lowered", v->id);
}

/* buf[...] = v for every element (buf has v's shape). */
static void emit_into(TileHost *t, const Value *v, Value *buf)
{
	Nest n;
	Value **idx = nest_open(t, &n, v->type->rank, v->type->dims, NULL, NULL);
	store_point(t, buf, idx, elem(t, v, idx), -1, NULL);
	nest_close(t, &n);
}

/* Stores tensor v (being defined now) in a buffer of its own. */
static void materialize(TileHost *t, const Value *v)
{
	Tile *tl = tile(t, v);
	if (tl->kind == T_BUFFER)
		return;
	Value *buf = alloc_local(t, v->type->dtype, v->type->rank, v->type->dims);
	emit_into(t, v, buf);
	*tl = (Tile){.kind = T_BUFFER, .v = buf};
}

/* A buffer holding v converted to dtype dt: v's own when it has one of
 * that dtype, else a fresh copy. */
static Value *buffer_of_dtype(TileHost *t, const Value *v, DType dt)
{
	Tile *tl = tile(t, v);
	if (tl->kind == T_BUFFER && v->type->dtype == dt)
		return tl->v;
	Value *buf = alloc_local(t, dt, v->type->rank, v->type->dims);
	Nest n;
	Value **idx = nest_open(t, &n, v->type->rank, v->type->dims, NULL, NULL);
	store_point(t, buf, idx, cast(t, elem(t, v, idx), dt), -1, NULL);
	nest_close(t, &n);
	return buf;
}

/* ---- Ref accesses ------------------------------------------------------------------------ */

/* The i64 extent of dim d of Ref type rt: a constant or the size argument. */
static Value *extent_of(TileHost *t, const Type *rt, int d)
{
	if (rt->dims[d] != DIM_DYNAMIC)
		return ki64(t, rt->dims[d]);
	const char *sym = rt->syms ? rt->syms[d] : NULL;
	PKC_ASSERT(sym);
	for (int s = 0; s < t->k->nsizes; s++)
		if (strcmp(t->k->sizes[s], sym) == 0)
			return t->k->body->args[t->k->noperands + t->k->nscalars + s];
	internal_error("tile-host: size symbol '%s' is not a kernel size", sym);
}

/* Sets up access i: index pieces, and unless `lazy`, the valid ranges of
 * masked slices and the condition of masked points. */
static AccessPlan *plan_access(TileHost *t, const Inst *i, bool lazy)
{
	AccessPlan *p = arena_alloc(t->a, sizeof *p);
	int n = i->nidx;
	const Type *rt = i->args[0]->type;
	p->inst = i;
	p->ref = tile(t, i->args[0])->v;
	p->nidx = n;
	p->start = arena_alloc(t->a, (size_t)(n + 1) * sizeof *p->start);
	p->rdim = arena_alloc(t->a, (size_t)(n + 1) * sizeof *p->rdim);
	p->gather = arena_alloc(t->a, (size_t)(n + 1) * sizeof *p->gather);
	p->extent = arena_alloc(t->a, (size_t)(n + 1) * sizeof *p->extent);
	p->shape = arena_alloc(t->a, (size_t)(n + 1) * sizeof *p->shape);

	/* The access shape and the per-dim index pieces (verify.c's rule: with
	 * gathers, their rank, the FULL/SLICE dims at ir_access_dim). */
	int next = 1;
	for (int d = 0; d < n; d++)
		if (i->idx[d].kind == IDX_GATHER && !p->rank) {
			p->rank = ir_index_arg(i, d)->type->rank;
			p->shape = arena_alloc(t->a, (size_t)(p->rank + 1) * sizeof *p->shape);
			for (int a = 0; a < p->rank; a++)
				p->shape[a] = 1;
		}
	bool gathers = p->rank > 0;
	for (int d = 0; d < n; d++) {
		const Indexer *x = &i->idx[d];
		p->rdim[d] = gathers ? ir_access_dim(i, d) : x->kind == IDX_FULL || x->kind == IDX_SLICE ? p->rank++ : -1;
		switch (x->kind) {
		case IDX_FULL:
			p->shape[p->rdim[d]] = rt->dims[d];
			break;
		case IDX_POINT:
			p->start[d] = tile(t, i->args[next++])->v;
			break;
		case IDX_SLICE:
			p->start[d] = to_i64(t, tile(t, i->args[next++])->v);
			p->shape[p->rdim[d]] = x->size;
			break;
		case IDX_GATHER: {
			const Type *g = (p->gather[d] = i->args[next++])->type;
			for (int a = 0; a < p->rank; a++)
				if (g->dims[a] != 1)
					p->shape[a] = g->dims[a];
			break;
		}
		}
	}
	int nextra = i->nargs - next, e = next;
	p->value_arg = i->op != IR_LOAD ? e++ : -1;
	p->cmp_arg = i->op == IR_ATOMIC && i->ival == ATOMIC_CAS ? e++ : -1;
	p->mask_arg = i->has_mask ? e++ : -1;
	p->other_arg = i->has_other ? e++ : -1;
	PKC_ASSERT(e - next == nextra);

	/* Masked dims: valid ranges of slices, the condition of points. */
	p->lo = arena_alloc(t->a, (size_t)(p->rank + 1) * sizeof *p->lo);
	p->hi = arena_alloc(t->a, (size_t)(p->rank + 1) * sizeof *p->hi);
	for (int d = 0; d < n; d++) {
		const Indexer *x = &i->idx[d];
		if (!x->masked || (x->kind == IDX_FULL && rt->dims[d] != DIM_DYNAMIC))
			continue;
		PKC_ASSERT(x->kind != IDX_FULL); /* the verifier rejects FULL on a dynamic dim */
		Value *E = p->extent[d] = extent_of(t, rt, d);
		if (lazy || x->kind == IDX_GATHER)
			continue; /* gathers: tested per element */
		const Value *s_old = ir_index_arg(i, d);
		bool s_nonneg = nonneg(t, s_old, 0);
		if (x->kind == IDX_POINT) {
			Value *s = to_i64(t, p->start[d]);
			Value *c = emit2(t, IR_LT, s, E);
			if (!s_nonneg)
				c = emit2(t, IR_AND, emit2(t, IR_GE, s, ki64(t, 0)), c);
			p->cond = and_cond(t, p->cond, c);
		} else {
			Value *s = p->start[d], *size = ki64(t, x->size);
			int r = p->rdim[d];
			p->hi[r] = clamp0(t, emit2(t, IR_SUB, E, s), size);
			if (!s_nonneg)
				p->lo[r] = clamp0(t, emit2(t, IR_SUB, ki64(t, 0), s), size);
		}
	}
	return p;
}

/* The scalar access at element idx of plan p: a load (returns the value),
 * a store of store_val, or an atomic (returns the old value).  Masked
 * gather indices and the user mask guard it with an IF. */
static Value *access_elem(TileHost *t, AccessPlan *p, Value **idx, Value *store_val, Value *cmp_val)
{
	const Inst *i = p->inst;
	Value **aidx = arena_alloc(t->a, (size_t)(p->nidx + 1) * sizeof *aidx);
	Value *cond = NULL;
	for (int d = 0; d < p->nidx; d++) {
		switch (i->idx[d].kind) {
		case IDX_FULL:
			aidx[d] = idx[p->rdim[d]];
			break;
		case IDX_POINT:
			aidx[d] = p->start[d];
			break;
		case IDX_SLICE:
			aidx[d] = add64(t, p->start[d], idx[p->rdim[d]]);
			break;
		case IDX_GATHER: {
			const Value *g = p->gather[d];
			Value *gi = to_i64(t, elem(t, g, broadcast_index(t, g->type, p->rank, idx)));
			aidx[d] = gi;
			if (p->extent[d]) {
				Value *c = emit2(t, IR_LT, gi, p->extent[d]);
				if (!dtype_is_unsigned(g->type->dtype))
					c = emit2(t, IR_AND, emit2(t, IR_GE, gi, ki64(t, 0)), c);
				cond = and_cond(t, cond, c);
			}
			break;
		}
		}
	}
	if (p->mask_arg >= 0)
		cond = and_cond(t, cond, elem(t, i->args[p->mask_arg], idx));
	DType dt = p->ref->type->dtype;
	int atomic = i->op == IR_ATOMIC ? (int)i->ival : -1;
	IfBuild b;
	bool result = i->op != IR_STORE && !p->no_result;
	if (cond)
		if_open(t, &b, cond, result, &dt);
	Value *out;
	if (i->op == IR_LOAD) {
		out = load_point(t, p->ref, aidx);
	} else {
		/* Evaluated inside the guard: masked lanes compute nothing. */
		Value *val = store_val ? store_val : elem(t, i->args[p->value_arg], idx);
		Value *cmp = cmp_val ? cmp_val : p->cmp_arg >= 0 ? elem(t, i->args[p->cmp_arg], idx) : NULL;
		out = store_point(t, p->ref, aidx, val, atomic, cmp);
	}
	if (!cond)
		return out;
	if_else(t, &b, result, &out);
	Value *other = !result ? NULL : p->other_arg >= 0 ? elem(t, i->args[p->other_arg], idx) : knum(t, dt, 0);
	Value **res = if_close(t, &b, result, &other);
	return result ? res[0] : NULL;
}

/* Fills buf over the box lo/hi with `other` (or 0). */
static void fill_box(TileHost *t, AccessPlan *p, Value *buf, Value **lo, Value **hi)
{
	Nest n;
	Value **idx = nest_open(t, &n, p->rank, p->shape, lo, hi);
	DType dt = p->ref->type->dtype;
	Value *x = p->other_arg >= 0 ? elem(t, p->inst->args[p->other_arg], idx) : knum(t, dt, 0);
	store_point(t, buf, idx, x, -1, NULL);
	nest_close(t, &n);
}

/* Fills buf outside the valid box of p: for each masked dim r, the slabs
 * below lo[r] and from hi[r] on, with the dims before r in their valid
 * range and those after full (a partition of the complement). */
static void fill_outside(TileHost *t, AccessPlan *p, Value *buf)
{
	Value **lo = arena_alloc(t->a, (size_t)(p->rank + 1) * sizeof *lo);
	Value **hi = arena_alloc(t->a, (size_t)(p->rank + 1) * sizeof *hi);
	for (int r = 0; r < p->rank; r++) {
		if (!p->hi[r])
			continue;
		for (int q = 0; q < p->rank; q++) {
			lo[q] = q < r ? p->lo[q] : NULL;
			hi[q] = q < r ? p->hi[q] : NULL;
		}
		if (p->lo[r]) {
			hi[r] = p->lo[r];
			fill_box(t, p, buf, lo, hi);
		}
		lo[r] = p->hi[r];
		hi[r] = NULL;
		fill_box(t, p, buf, lo, hi);
	}
}

/* Lowers a non-lazy access: loops over the valid box doing the scalar
 * access, results (when wanted) in a buffer with the rest filled. */
static void lower_access(TileHost *t, const Inst *i)
{
	bool has_result = i->nresults && info(t, i->results[0])->nuses > 0;
	if (i->op == IR_LOAD && !has_result)
		return; /* an unused load does nothing */
	AccessPlan *p = plan_access(t, i, false);
	p->no_result = !has_result;
	DType dt = p->ref->type->dtype;
	Value *buf = NULL;
	if (has_result && p->rank > 0)
		buf = alloc_local(t, dt, p->rank, p->shape);

	/* Masked points out of range: nothing happens but the fill. */
	IfBuild b;
	bool scalar_result = has_result && p->rank == 0;
	if (p->cond)
		if_open(t, &b, p->cond, scalar_result, &dt);

	const Inst *saved_cover = t->covering;
	if (i->op == IR_STORE)
		t->covering = i;
	Nest n;
	Value **idx = nest_open(t, &n, p->rank, p->shape, p->lo, p->hi);
	Value *x = access_elem(t, p, idx, NULL, NULL);
	if (buf)
		store_point(t, buf, idx, x, -1, NULL);
	nest_close(t, &n);
	t->covering = saved_cover;
	if (buf)
		fill_outside(t, p, buf);

	if (p->cond) {
		if_else(t, &b, scalar_result, &x);
		Value *fill = NULL;
		if (buf)
			fill_box(t, p, buf, NULL, NULL);
		else if (scalar_result)
			fill = p->other_arg >= 0 ? elem(t, i->args[p->other_arg], NULL) : knum(t, dt, 0);
		Value **res = if_close(t, &b, scalar_result, &fill);
		if (scalar_result)
			x = res[0];
	}
	if (!has_result)
		return;
	Tile *tl = tile(t, i->results[0]);
	*tl = buf ? (Tile){.kind = T_BUFFER, .v = buf} : (Tile){.kind = T_VALUE, .v = x};
}

/* ---- reductions, scans, dot ------------------------------------------------------------- */

/* The identity of a sum/max/min/prod reduction over dtype dt. */
static Value *reduce_init(TileHost *t, Op op, DType dt)
{
	int64_t ival;
	double fval;
	ir_reduce_identity(op, dt, &ival, &fval);
	return kconst(t, dt, ival, fval);
}

static Op combine_op(Op reduce)
{
	return reduce == IR_REDUCE_SUM ? IR_ADD : reduce == IR_REDUCE_PROD ? IR_MUL : reduce == IR_REDUCE_MAX ? IR_MAX : IR_MIN;
}

/* The index of the operand (rank r) for result index ridx with k on axis. */
static Value **insert_axis(TileHost *t, int r, int axis, Value **ridx, Value *k)
{
	Value **o = arena_alloc(t->a, (size_t)(r + 1) * sizeof *o);
	for (int d = 0, s = 0; d < r; d++)
		o[d] = d == axis ? k : ridx[s++];
	return o;
}

/* The result index for operand index idx: axis dropped. */
static Value **drop_axis(TileHost *t, int r, int axis, Value **idx)
{
	Value **o = arena_alloc(t->a, (size_t)(r + 1) * sizeof *o);
	for (int d = 0, s = 0; d < r; d++)
		if (d != axis)
			o[s++] = idx[d];
	return o;
}

/* concat: each operand copied into its place in the result's buffer. */
static void lower_concat(TileHost *t, const Inst *i)
{
	const Type *rt = i->results[0]->type;
	int axis = (int)i->ival;
	Value *buf = alloc_local(t, rt->dtype, rt->rank, rt->dims);
	int64_t off = 0;
	for (int k = 0; k < i->nargs; k++) {
		const Type *xt = i->args[k]->type;
		Nest n;
		Value **idx = nest_open(t, &n, xt->rank, xt->dims, NULL, NULL);
		Value **o = arena_alloc(t->a, (size_t)(xt->rank + 1) * sizeof *o);
		for (int d = 0; d < xt->rank; d++)
			o[d] = d == axis && off ? add64(t, idx[d], ki64(t, off)) : idx[d];
		store_point(t, buf, o, elem(t, i->args[k], idx), -1, NULL);
		nest_close(t, &n);
		off += xt->dims[axis];
	}
	*tile(t, i->results[0]) = (Tile){.kind = T_BUFFER, .v = buf};
}

/* Sets the tile of a finished result: a buffer, or the scalar x. */
static void set_result(TileHost *t, const Value *res, Value *buf, Value *x)
{
	*tile(t, res) = buf ? (Tile){.kind = T_BUFFER, .v = buf} : (Tile){.kind = T_VALUE, .v = x};
}

static void lower_reduce(TileHost *t, const Inst *i)
{
	const Value *x = i->args[0];
	const Type *xt = x->type, *rt = i->results[0]->type;
	int axis = (int)i->ival, r = xt->rank;
	Op comb = combine_op(i->op);
	Value *init = reduce_init(t, i->op, rt->dtype);
	Value *buf = rt->rank ? alloc_local(t, rt->dtype, rt->rank, rt->dims) : NULL;

	if (axis != r - 1) {
		/* Not the last axis: accumulate into the result buffer with the
		 * nest in the operand's order, so the innermost loop stays
		 * contiguous. */
		Nest n;
		Value **idx = nest_open(t, &n, rt->rank, rt->dims, NULL, NULL);
		store_point(t, buf, idx, init, -1, NULL);
		nest_close(t, &n);
		idx = nest_open(t, &n, r, xt->dims, NULL, NULL);
		Value **ridx = drop_axis(t, r, axis, idx);
		Value *acc = load_point(t, buf, ridx);
		store_point(t, buf, ridx, emit2(t, comb, acc, cast(t, elem(t, x, idx), rt->dtype)), -1, NULL);
		nest_close(t, &n);
		set_result(t, i->results[0], buf, NULL);
		return;
	}
	/* The last axis: a loop carrying the accumulator, per result element.
	 * A long axis is first reduced into REDUCE_LANES interleaved partial
	 * accumulators (element k goes to lane k % REDUCE_LANES): the inner
	 * loop over the lanes is independent work LLVM can vectorise, where
	 * one carried accumulator would be a serial chain (float adds may not
	 * be reassociated).  Like any vectorised or tree reduction, the sum's
	 * rounding then differs from a strictly sequential one. */
	int64_t len = xt->dims[axis];
	bool lanes = len >= 8 * REDUCE_LANES && len % REDUCE_LANES == 0;
	int64_t nlanes = REDUCE_LANES;
	Value *part = lanes ? alloc_local(t, rt->dtype, 1, &nlanes) : NULL;
	Nest n;
	Value **ridx = nest_open(t, &n, rt->rank, rt->dims, NULL, NULL);
	Loop L;
	if (lanes) {
		Loop lj, lk;
		loop_open(t, &lj, ki64(t, 0), ki64(t, nlanes), 0, NULL);
		store_point(t, part, &lj.iv, init, -1, NULL);
		loop_close(t, &lj, 0, NULL);
		loop_open(t, &lk, ki64(t, 0), ki64(t, len / nlanes), 0, NULL);
		loop_open(t, &lj, ki64(t, 0), ki64(t, nlanes), 0, NULL);
		Value *k = add64(t, mul64(t, lk.iv, nlanes), lj.iv);
		Value *e = cast(t, elem(t, x, insert_axis(t, r, axis, ridx, k)), rt->dtype);
		store_point(t, part, &lj.iv, emit2(t, comb, load_point(t, part, &lj.iv), e), -1, NULL);
		loop_close(t, &lj, 0, NULL);
		loop_close(t, &lk, 0, NULL);
		loop_open(t, &L, ki64(t, 0), ki64(t, nlanes), 1, &init);
		Value *acc = emit2(t, comb, L.carried[0], load_point(t, part, &L.iv));
		loop_close(t, &L, 1, &acc);
	} else {
		loop_open(t, &L, ki64(t, 0), ki64(t, len), 1, &init);
		Value *e = cast(t, elem(t, x, insert_axis(t, r, axis, ridx, L.iv)), rt->dtype);
		Value *acc = emit2(t, comb, L.carried[0], e);
		loop_close(t, &L, 1, &acc);
	}
	Value *sum = L.inst->results[0];
	if (buf)
		store_point(t, buf, ridx, sum, -1, NULL);
	nest_close(t, &n);
	set_result(t, i->results[0], buf, sum);
}

/* argmax/argmin: the first index of the extreme along the axis; a NaN is
 * the extreme (jnp semantics), so the first NaN wins. */
static void lower_argreduce(TileHost *t, const Inst *i)
{
	const Value *x = i->args[0];
	const Type *xt = x->type, *rt = i->results[0]->type;
	int axis = (int)i->ival, r = xt->rank;
	if (xt->dims[axis] == 0) {
		error_at(t->cc, i->loc, "%s of an empty axis", op_info[i->op].name);
		t->failed = true;
		return;
	}
	Value *buf = rt->rank ? alloc_local(t, DT_I32, rt->rank, rt->dims) : NULL;
	Nest n;
	Value **ridx = nest_open(t, &n, rt->rank, rt->dims, NULL, NULL);
	Value *inits[2] = {elem(t, x, insert_axis(t, r, axis, ridx, ki64(t, 0))), kconst(t, DT_I32, 0, 0.0)};
	Loop L;
	loop_open(t, &L, ki64(t, 1), ki64(t, xt->dims[axis]), 2, inits);
	Value *best = L.carried[0], *bi = L.carried[1];
	Value *e = elem(t, x, insert_axis(t, r, axis, ridx, L.iv));
	Value *take = emit2(t, i->op == IR_ARGMAX ? IR_GT : IR_LT, e, best);
	if (dtype_is_float(xt->dtype)) {
		Value *e_nan = emit2(t, IR_NE, e, e), *best_num = emit2(t, IR_EQ, best, best);
		take = emit2(t, IR_OR, take, emit2(t, IR_AND, e_nan, best_num));
	}
	Value *sel_v[3] = {take, e, best}, *sel_i[3] = {take, cast(t, L.iv, DT_I32), bi};
	Value *next[2] = {emit(t, IR_SELECT, xt->dtype, 3, sel_v), emit(t, IR_SELECT, DT_I32, 3, sel_i)};
	Value *index = loop_close(t, &L, 2, next)[1];
	if (buf)
		store_point(t, buf, ridx, index, -1, NULL);
	nest_close(t, &n);
	set_result(t, i->results[0], buf, index);
}

/* Inclusive running sum along the axis. */
static void lower_cumsum(TileHost *t, const Inst *i)
{
	const Value *x = i->args[0];
	const Type *xt = x->type;
	int axis = (int)i->ival, r = xt->rank;
	DType dt = i->results[0]->type->dtype;
	Value *buf = alloc_local(t, dt, r, xt->dims);
	Nest n;
	if (axis == r - 1) {
		/* Along the last dim: a carried running sum per row. */
		Value **ridx = nest_open(t, &n, r - 1, xt->dims, NULL, NULL);
		Value *zero = knum(t, dt, 0);
		Loop L;
		loop_open(t, &L, ki64(t, 0), ki64(t, xt->dims[axis]), 1, &zero);
		Value **idx = insert_axis(t, r, axis, ridx, L.iv);
		Value *s = emit2(t, IR_ADD, L.carried[0], cast(t, elem(t, x, idx), dt));
		store_point(t, buf, idx, s, -1, NULL);
		loop_close(t, &L, 1, &s);
		nest_close(t, &n);
	} else if (xt->dims[axis] > 0) {
		/* Another axis: copy slice 0, then add the previous slice to each
		 * next one, the innermost loop running over the contiguous dim. */
		int64_t *one = arena_alloc(t->a, (size_t)r * sizeof *one);
		memcpy(one, xt->dims, (size_t)r * sizeof *one);
		one[axis] = 1;
		Value **idx = nest_open(t, &n, r, one, NULL, NULL);
		store_point(t, buf, idx, cast(t, elem(t, x, idx), dt), -1, NULL);
		nest_close(t, &n);
		Value **lo = arena_alloc(t->a, (size_t)r * sizeof *lo);
		lo[axis] = ki64(t, 1);
		idx = nest_open(t, &n, r, xt->dims, lo, NULL);
		Value **prev = arena_alloc(t->a, (size_t)r * sizeof *prev);
		memcpy(prev, idx, (size_t)r * sizeof *prev);
		prev[axis] = emit2(t, IR_SUB, idx[axis], ki64(t, 1));
		Value *s = emit2(t, IR_ADD, load_point(t, buf, prev), cast(t, elem(t, x, idx), dt));
		store_point(t, buf, idx, s, -1, NULL);
		nest_close(t, &n);
	}
	set_result(t, i->results[0], buf, NULL);
}

/* C[M,N] = acc + A[M,K] @ B[K,N] in the result dtype: i-k-j, j innermost. */
static void lower_dot(TileHost *t, const Inst *i)
{
	const Type *rt = i->results[0]->type;
	DType dt = rt->dtype;
	int64_t M = rt->dims[0], N = rt->dims[1], K = i->args[0]->type->dims[1];
	Value *A = buffer_of_dtype(t, i->args[0], dt);
	Value *B = buffer_of_dtype(t, i->args[1], dt);
	Value *C = alloc_local(t, dt, 2, rt->dims);
	Nest n;
	Value **idx = nest_open(t, &n, 2, rt->dims, NULL, NULL);
	store_point(t, C, idx, i->nargs == 3 ? elem(t, i->args[2], idx) : knum(t, dt, 0), -1, NULL);
	nest_close(t, &n);

	Loop li, lk, lj;
	loop_open(t, &li, ki64(t, 0), ki64(t, M), 0, NULL);
	loop_open(t, &lk, ki64(t, 0), ki64(t, K), 0, NULL);
	Value *aik = load_point(t, A, (Value *[]){li.iv, lk.iv});
	loop_open(t, &lj, ki64(t, 0), ki64(t, N), 0, NULL);
	Value *cij[2] = {li.iv, lj.iv};
	Value *prod = emit2(t, IR_MUL, aik, load_point(t, B, (Value *[]){lk.iv, lj.iv}));
	store_point(t, C, cij, emit2(t, IR_ADD, load_point(t, C, cij), prod), -1, NULL);
	loop_close(t, &lj, 0, NULL);
	loop_close(t, &lk, 0, NULL);
	loop_close(t, &li, 0, NULL);
	set_result(t, i->results[0], C, NULL);
}

/* ---- control flow ------------------------------------------------------------------------ */

static void lower_insts(TileHost *t, const Region *r);

/* How the lazy tree of v reads buffer buf. */
enum { RD_IDENTITY = 1, RD_OTHER = 2 };

static int tree_reads(TileHost *t, const Value *v, const Value *buf, bool identity)
{
	const Tile *tl = tile(t, v);
	if (tl->kind == T_BUFFER)
		return tl->v != buf ? 0 : identity ? RD_IDENTITY : RD_OTHER;
	if (tl->kind != T_LAZY)
		return 0;
	const Inst *i = tl->inst;
	bool elementwise = is_elementwise(i);
	int flags = 0;
	for (int j = 0; j < i->nargs; j++)
		if (i->args[j]->type->kind == TY_VALUE)
			flags |= tree_reads(t, i->args[j], buf, identity && elementwise);
	return flags;
}

/* Writes the tensor operands of a loop's yield into their carried
 * buffers C[j] (NULL for scalars).  A value computed from a carried buffer
 * other than its own, or from its own through an index map, is first
 * stored in a temporary; the rest are written in place. */
static void write_carried(TileHost *t, int n, Value *const *vals, Value **C)
{
	Value **tmp = arena_alloc(t->a, (size_t)(n + 1) * sizeof *tmp);
	bool *direct = arena_alloc(t->a, (size_t)(n + 1) * sizeof *direct);
	for (int j = 0; j < n; j++) {
		if (!C[j])
			continue;
		const Tile *tl = tile(t, vals[j]);
		if (tl->kind == T_BUFFER && tl->v == C[j]) {
			C[j] = NULL; /* unchanged */
			continue;
		}
		direct[j] = true;
		for (int m = 0; m < n; m++)
			if (C[m] && tree_reads(t, vals[j], C[m], true) & (m == j ? RD_OTHER : RD_IDENTITY | RD_OTHER))
				direct[j] = false;
		if (!direct[j]) {
			tmp[j] = alloc_local(t, vals[j]->type->dtype, vals[j]->type->rank, vals[j]->type->dims);
			emit_into(t, vals[j], tmp[j]);
		}
	}
	for (int j = 0; j < n; j++)
		if (C[j] && direct[j])
			emit_into(t, vals[j], C[j]);
	for (int j = 0; j < n; j++) {
		if (!C[j] || direct[j])
			continue;
		Nest nest;
		const Type *ty = vals[j]->type;
		Value **idx = nest_open(t, &nest, ty->rank, ty->dims, NULL, NULL);
		store_point(t, C[j], idx, load_point(t, tmp[j], idx), -1, NULL);
		nest_close(t, &nest);
	}
}

/* For each carried value j of an op (inits[j]): a buffer when it is a
 * tensor (filled with the init), else NULL.  Returns the buffers; the
 * scalar inits (mapped) go to *scalars, their count to *ns. */
static Value **carried_buffers(TileHost *t, int n, Value *const *inits, Value **scalars, int *ns)
{
	Value **C = arena_alloc(t->a, (size_t)(n + 1) * sizeof *C);
	*ns = 0;
	for (int j = 0; j < n; j++) {
		const Value *v = inits[j];
		if (is_tensor(v)) {
			C[j] = alloc_local(t, v->type->dtype, v->type->rank, v->type->dims);
			emit_into(t, v, C[j]);
		} else {
			scalars[(*ns)++] = tile(t, v)->v;
		}
	}
	return C;
}

/* Binds the carried arguments of an input region (from index `first`):
 * tensors to their buffers, scalars to the new region's arguments. */
static void bind_carried(TileHost *t, const Region *old, int first, Value **C, Region *nr, int nfirst)
{
	for (int j = first, s = nfirst; j < old->nargs; j++) {
		Value **Cj = &C[j - first];
		*tile(t, old->args[j]) = *Cj ? (Tile){.kind = T_BUFFER, .v = *Cj}
		                             : (Tile){.kind = T_VALUE, .v = nr->args[s++]};
	}
}

/* The scalar operands of an input YIELD, mapped. */
static Value **scalar_yields(TileHost *t, const Inst *y, int *ns)
{
	Value **out = arena_alloc(t->a, (size_t)(y->nargs + 1) * sizeof *out);
	*ns = 0;
	for (int j = 0; j < y->nargs; j++)
		if (!is_tensor(y->args[j]))
			out[(*ns)++] = tile(t, y->args[j])->v;
	return out;
}

/* The results of a lowered op: tensors in their buffers, scalars from the new op. */
static void bind_results(TileHost *t, const Inst *old, Value **C, Inst *nw)
{
	for (int j = 0, s = 0; j < old->nresults; j++)
		*tile(t, old->results[j]) = C[j] ? (Tile){.kind = T_BUFFER, .v = C[j]}
		                                 : (Tile){.kind = T_VALUE, .v = nw->results[s++]};
}

static Type **types_of(TileHost *t, Value **vals, int n, Type *first)
{
	Type **ty = arena_alloc(t->a, (size_t)(n + 2) * sizeof *ty);
	int k = 0;
	if (first)
		ty[k++] = first;
	for (int j = 0; j < n; j++)
		ty[k++] = vals[j]->type;
	return ty;
}

/* Lowers the instructions of input region old into new region nr, then its
 * yield: tensors into C (when given), scalars yielded. */
static void lower_body(TileHost *t, const Region *old, Region *nr, Value **C)
{
	Region *saved = t->cur;
	t->cur = nr;
	lower_insts(t, old);
	const Inst *y = old->last;
	Loc loc = t->loc;
	t->loc = y->loc;
	if (C) {
		Value **Cw = arena_alloc(t->a, (size_t)(y->nargs + 1) * sizeof *Cw);
		memcpy(Cw, C, (size_t)y->nargs * sizeof *Cw);
		write_carried(t, y->nargs, y->args, Cw);
	}
	int ns;
	Value **ys = scalar_yields(t, y, &ns);
	ir_yield(t->a, t->k, t->cur, t->loc, ns, ys);
	t->loc = loc;
	t->cur = saved;
}

static void lower_for(TileHost *t, const Inst *i)
{
	int n = i->nargs - 3, ns;
	Value **sinit = arena_alloc(t->a, (size_t)(n + 4) * sizeof *sinit);
	Value **C = carried_buffers(t, n, i->args + 3, sinit + 3, &ns);
	for (int j = 0; j < 3; j++)
		sinit[j] = tile(t, i->args[j])->v;
	const Region *old = i->regions[0];
	Inst *f = ir_inst_new(t->a, t->k, IR_FOR, i->loc, 3 + ns, sinit, ns, types_of(t, sinit + 3, ns, NULL));
	ir_append(t->cur, f);
	Region *nr = ir_add_region(t->a, t->k, f, 1 + ns, types_of(t, sinit + 3, ns, old->args[0]->type));
	nr->args[0]->name = old->args[0]->name;
	*tile(t, old->args[0]) = (Tile){.kind = T_VALUE, .v = nr->args[0]};
	bind_carried(t, old, 1, C, nr, 1);
	lower_body(t, old, nr, C);
	bind_results(t, i, C, f);
}

static void lower_while(TileHost *t, const Inst *i)
{
	int n = i->nargs, ns;
	Value **sinit = arena_alloc(t->a, (size_t)(n + 1) * sizeof *sinit);
	Value **C = carried_buffers(t, n, i->args, sinit, &ns);
	Inst *w = ir_inst_new(t->a, t->k, IR_WHILE, i->loc, ns, sinit, ns, types_of(t, sinit, ns, NULL));
	ir_append(t->cur, w);
	for (int r = 0; r < 2; r++) {
		const Region *old = i->regions[r];
		Region *nr = ir_add_region(t->a, t->k, w, ns, types_of(t, sinit, ns, NULL));
		bind_carried(t, old, 0, C, nr, 0);
		for (int j = 0, s = 0; j < n; j++)
			if (!C[j])
				nr->args[s++]->name = old->args[j]->name;
		/* The condition region yields only its bool. */
		lower_body(t, old, nr, r == 1 ? C : NULL);
	}
	bind_results(t, i, C, w);
}

static void lower_if(TileHost *t, const Inst *i)
{
	int n = i->nresults, ns = 0;
	Value **R = arena_alloc(t->a, (size_t)(n + 1) * sizeof *R);
	Type **rtypes = arena_alloc(t->a, (size_t)(n + 1) * sizeof *rtypes);
	for (int j = 0; j < n; j++) {
		const Value *v = i->results[j];
		if (is_tensor(v))
			R[j] = alloc_local(t, v->type->dtype, v->type->rank, v->type->dims);
		else
			rtypes[ns++] = v->type;
	}
	Value *cond = tile(t, i->args[0])->v;
	Inst *f = ir_inst_new(t->a, t->k, IR_IF, i->loc, 1, &cond, ns, rtypes);
	ir_append(t->cur, f);
	for (int r = 0; r < 2; r++) {
		Region *nr = ir_add_region(t->a, t->k, f, 0, NULL);
		/* Branch results go straight to R: it is fresh, nothing reads it yet. */
		Region *saved = t->cur;
		t->cur = nr;
		lower_insts(t, i->regions[r]);
		const Inst *y = i->regions[r]->last;
		for (int j = 0; j < n; j++)
			if (R[j])
				emit_into(t, y->args[j], R[j]);
		int nsy;
		Value **ys = scalar_yields(t, y, &nsy);
		ir_yield(t->a, t->k, t->cur, y->loc, nsy, ys);
		t->cur = saved;
	}
	bind_results(t, i, R, f);
}

/* ---- instructions ------------------------------------------------------------------------ */

/* A copy of scalar instruction i with its operands mapped. */
static void lower_scalar(TileHost *t, const Inst *i)
{
	Value **args = arena_alloc(t->a, (size_t)(i->nargs + 1) * sizeof *args);
	for (int j = 0; j < i->nargs; j++)
		args[j] = tile(t, i->args[j])->v;
	Inst *c = ir_emit(t->a, t->k, t->cur, i->op, i->loc, i->nargs, args, i->nresults ? i->results[0]->type : NULL);
	c->ival = i->ival;
	c->fval = i->fval;
	c->str = i->str;
	if (i->nresults)
		*tile(t, i->results[0]) = (Tile){.kind = T_VALUE, .v = c->results[0]};
}

/* debug_print of blocks (§7.19): each block is printed from a buffer of its
 * own (row-major, in compute form), which the runtime formats. */
static void lower_debug_print(TileHost *t, const Inst *i)
{
	Value **args = arena_alloc(t->a, (size_t)(i->nargs + 1) * sizeof *args);
	for (int j = 0; j < i->nargs; j++) {
		const Value *v = i->args[j];
		args[j] = is_tensor(v) ? buffer_of_dtype(t, v, v->type->dtype) : tile(t, v)->v;
	}
	ir_emit(t->a, t->k, t->cur, i->op, i->loc, i->nargs, args, NULL)->str = i->str;
}

static void lower_inst(TileHost *t, const Inst *i)
{
	if (!inst_live(t, i))
		return; /* dead: nothing uses it */
	t->loc = i->loc;
	const Value *res = i->nresults == 1 ? i->results[0] : NULL;
	bool tensor = res && is_tensor(res);
	Tile *tl = res ? tile(t, res) : NULL;
	switch (i->op) {
	case IR_FOR:
		lower_for(t, i);
		return;
	case IR_WHILE:
		lower_while(t, i);
		return;
	case IR_IF:
		lower_if(t, i);
		return;
	case IR_LOAD:
		if (tensor && info(t, res)->lazy)
			*tl = (Tile){.kind = T_LAZY, .inst = i, .plan = plan_access(t, i, true)};
		else
			lower_access(t, i);
		return;
	case IR_STORE:
	case IR_ATOMIC:
		lower_access(t, i);
		return;
	case IR_REDUCE_SUM: case IR_REDUCE_MAX: case IR_REDUCE_MIN: case IR_REDUCE_PROD:
		lower_reduce(t, i);
		return;
	case IR_ARGMAX: case IR_ARGMIN:
		lower_argreduce(t, i);
		return;
	case IR_CUMSUM:
		lower_cumsum(t, i);
		return;
	case IR_DOT:
		lower_dot(t, i);
		return;
	case IR_CONCAT:
		lower_concat(t, i);
		return;
	case IR_DEBUG_PRINT:
		lower_debug_print(t, i);
		return;
	case IR_ALLOC:
		*tl = (Tile){.kind = T_VALUE,
		             .v = ir_clone_inst(t->a, t->k, i, vmap_new(t->a), (InsertPoint){t->cur, NULL})->results[0]};
		return;
	case IR_CONST:
		if (tensor) {
			*tl = (Tile){.kind = T_SPLAT, .v = kconst(t, res->type->dtype, i->ival, i->fval)};
			return;
		}
		break;
	case IR_BROADCAST:
		if (tile(t, i->args[0])->kind == T_VALUE && tensor) {
			*tl = (Tile){.kind = T_SPLAT, .v = tile(t, i->args[0])->v};
			return;
		}
		break;
	case IR_YIELD:
		internal_error("tile-host: stray yield");
	default:
		break;
	}
	if (is_view(i->op)) {
		/* A view of a splat is a splat; a scalar view is its one element. */
		const Tile *x = tile(t, i->args[0]);
		if (x->kind == T_SPLAT) {
			*tl = (Tile){.kind = T_SPLAT, .v = x->v};
			return;
		}
		if (!tensor) {
			*tl = (Tile){.kind = T_VALUE, .v = elem_lazy(t, i, NULL)};
			return;
		}
	}
	if (!tensor) {
		lower_scalar(t, i);
		return;
	}
	/* Elementwise ops, views, iota: lazy, or computed into a buffer now. */
	*tl = (Tile){.kind = T_LAZY, .inst = i};
	if (!info(t, res)->lazy)
		materialize(t, res);
}

/* Lowers every instruction of input region r except its final yield. */
static void lower_insts(TileHost *t, const Region *r)
{
	for (const Inst *i = r->first; i && i->op != IR_YIELD && !t->failed; i = i->next)
		lower_inst(t, i);
}

/* ---- kernels ------------------------------------------------------------------------------ */

static bool tile_kernel(TileHost *t)
{
	IrKernel *k = t->k;
	Region *body = k->body;
	t->nold = k->nvalues;
	t->tiles = arena_alloc(t->a, (size_t)(t->nold + 1) * sizeof *t->tiles);
	t->info = arena_alloc(t->a, (size_t)(t->nold + 1) * sizeof *t->info);
	while (mark_live(t, body))
		;
	count_uses(t, body);
	plan_elementwise(t, body);
	plan_loads(t, body);

	/* Rebuild the body in place: detach the input instructions (their own
	 * links stay intact for the walk), keep the arguments. */
	Region old = *body;
	body->first = body->last = NULL;
	for (int a = 0; a < body->nargs; a++)
		*tile(t, body->args[a]) = (Tile){.kind = T_VALUE, .v = body->args[a]};
	t->consts = ir_region_new(t->a, k, 0, NULL);
	t->cur = body;
	t->loc = k->loc;
	lower_insts(t, &old);
	if (t->failed)
		return false;
	ir_yield(t->a, k, body, old.last->loc, 0, NULL);

	/* The interned constants go first, so they dominate every use. */
	Inst *top = body->first;
	for (Inst *c = t->consts->first; c;) {
		Inst *next = c->next;
		ir_remove(c);
		ir_insert_before(top, c);
		c = next;
	}
	k->tiled = true;
	return true;
}

bool pass_tile_host(Compiler *cc, IrModule *m)
{
	bool ok = true;
	for (int n = 0; n < m->nkernels; n++) {
		IrKernel *k = m->kernels[n];
		if (k->tiled)
			continue;
		PKC_ASSERT(k->refs_lowered);
		TileHost t = {.cc = cc, .a = cc->arena, .k = k};
		ok &= tile_kernel(&t);
	}
	return ok;
}
