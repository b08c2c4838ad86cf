/* The K axis of a grid as the K loop of one program (issue 13).
 *
 * The Pallas TPU guide's matmul puts K on the grid: a third, "arbitrary"
 * axis whose programs run in order, each adding its block's product into a
 * scratch accumulator that the first one zeroes and the last one stores:
 *
 *     grid(cdiv(m, BM), cdiv(n, BN), k // BK) semantics(parallel, parallel, arbitrary)
 *     when program_id(2) == 0 { acc[...] = zeros((BM, BN), f32) }
 *     acc[...] += dot(x[...], y[...], acc = f32)
 *     when program_id(2) == num_programs(2) - 1 { z[...] = acc[...].astype(f16) }
 *
 * A CTA runs the arbitrary axis as a loop around the body (codegen_nvptx.c:
 * emit_task), so the accumulator went through shared memory at every step
 * and the operands were copied one step at a time: 63-69 TFLOP/s for 128 x
 * 128 x 64 blocks on the H200, where the same dot as a `for` loop runs at
 * 650-720 (bench/RESULTS.md, twenty-fifth session).  Such a body is
 * rewritten into that loop, for the GPU's entries alone:
 *
 *     acc = zeros; for t in range(num_programs(2)) { acc = acc + dot(x[..t..], y[..t..]) }
 *     when num_programs(2) > 0 { z[...] = acc.astype(f16) }
 *
 * and the axis' loop of emit_task is left out (Nv.kgrid_axis), so the dot
 * runs on the loop's pipeline as any K loop does, with a few-trips variant
 * where the axis' extent is k // BK (nvptx_sched.c: sym_value reads
 * num_programs through the grid).  What the body must be
 * (anything else keeps the axis' loop): one arbitrary axis d and one
 * scratch buffer S, only ever loaded and stored whole; at the top level, in
 * order, values that touch no memory but by loads, `when program_id(d) ==
 * 0 { S = v }` (v of the body's values not of the step), one load of S
 * and, later, one store of S (the step), and last `when program_id(d) ==
 * num_programs(d) - 1 { ... }`, which may load S but not store it and
 * reads no value of the step but through S.  The programs of the axis run
 * in order in one CTA (§5.4), S lives across them (§8), so the loop
 * computes what they did; with no programs on the axis neither runs.
 *
 * The IR is shared with the host back end: the body is built anew beside
 * the kernel's own, which nv_kgrid_undo puts back. */
#include "ir_clone.h"
#include "nvptx.h"

#include <string.h>

struct NvKgrid {
	IrKernel *k;
	Region *body; /* the kernel's own body, back after the entry */
	int axis;     /* the arbitrary axis the new body loops over */
};

/* The parts of a body the rewrite takes (see the top). */
typedef struct Shape {
	int axis;            /* the arbitrary axis d */
	const Inst *alloc;   /* S */
	const Inst *init;    /* when program_id(d) == 0 { S = v } */
	const Inst *load;    /* the step's load of S */
	const Inst *store;   /* the step's store of S */
	const Inst *last;    /* when program_id(d) == num_programs(d) - 1 { ... } */
	bool *step;          /* per value id: of the step (program_id(d) or S's load behind it) */
} Shape;

static bool op_axis(const Value *v, Op op, int axis)
{
	return v->def && v->def->op == op && v->def->ival == axis;
}

static bool const_is(const Value *v, int64_t c)
{
	int64_t x;
	return ir_const_value(v, &x) && x == c;
}

/* Whether cond is program_id(d) == 0 (first) or == num_programs(d) - 1. */
static bool cond_is(const Value *cond, int d, bool first)
{
	const Inst *e = cond->def;
	if (!e || e->op != IR_EQ || e->nargs != 2)
		return false;
	for (int s = 0; s < 2; s++) {
		const Value *p = e->args[s], *o = e->args[1 - s];
		if (!op_axis(p, IR_PROGRAM_ID, d))
			continue;
		if (first)
			return const_is(o, 0);
		return o->def && o->def->op == IR_SUB && op_axis(o->def->args[0], IR_NUM_PROGRAMS, d) &&
		       const_is(o->def->args[1], 1);
	}
	return false;
}

/* Whether value type v is what a ref of type r holds. */
static bool holds(const Type *r, const Type *v)
{
	return v->kind == TY_VALUE && v->dtype == r->dtype && type_same_shape(r, v);
}

/* Whether access i takes all of every dim of its ref, unmasked. */
static bool whole_access(const Inst *i)
{
	for (int d = 0; d < i->nidx; d++)
		if (i->idx[d].kind != IDX_FULL)
			return false;
	return !i->has_mask && !i->has_other;
}

/* Whether region r (recursively) uses S other than by whole loads (and
 * whole stores where stores_ok), or reads a value of the step. */
static bool region_bad(const Region *r, const Shape *s, bool stores_ok)
{
	const Value *S = s->alloc->results[0];
	for (const Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nargs; j++) {
			const Value *v = i->args[j];
			if (v->def && v->def->parent == s->alloc->parent && s->step[v->id])
				return true;
			if (v == S && !(j == 0 && whole_access(i) && (i->op == IR_LOAD || (stores_ok && i->op == IR_STORE))))
				return true;
		}
		for (int k = 0; k < i->nregions; k++)
			if (region_bad(i->regions[k], s, stores_ok))
				return true;
	}
	return false;
}

/* The init's region: pure values (none of S or of the axis' program id,
 * which the new body has not), then `store S, v` of S's type. */
static bool init_ok(const Inst *init, const Shape *s)
{
	const Region *r = init->regions[0];
	const Inst *st = r->last ? r->last->prev : NULL;
	if (!st || st->op != IR_STORE || st->args[0] != s->alloc->results[0] || !whole_access(st) ||
	    !holds(s->alloc->results[0]->type, st->args[st->nargs - 1]->type) ||
	    init->regions[1]->first != init->regions[1]->last)
		return false;
	for (const Inst *i = r->first; i != st; i = i->next) {
		if ((op_info[i->op].flags & F_EFFECT) || i->nregions || (i->op == IR_PROGRAM_ID && i->ival == s->axis))
			return false;
		for (int j = 0; j < i->nargs; j++)
			if (i->args[j] == s->alloc->results[0])
				return false;
	}
	return !region_bad(r, s, true);
}

/* Whether k's body has the shape at the top, filled into *s. */
static bool match(Arena *a, const IrKernel *k, Shape *s)
{
	memset(s, 0, sizeof *s);
	s->axis = -1;
	for (int d = 0; d < k->ngrid; d++)
		if (k->semantics && k->semantics[d] == AXIS_ARBITRARY) {
			if (s->axis >= 0)
				return false;
			s->axis = d;
		}
	if (s->axis < 0 || !k->refs_lowered)
		return false;
	s->step = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *s->step);
	memset(s->step, 0, (size_t)(k->nvalues + 1) * sizeof *s->step);
	const Region *b = k->body;
	for (const Inst *i = b->first; i && i->op != IR_YIELD; i = i->next) {
		if (s->last)
			return false; /* the last `when` ends the body */
		if (i->op == IR_ALLOC) {
			if (s->alloc)
				return false;
			s->alloc = i;
			continue;
		}
		const Value *S = s->alloc ? s->alloc->results[0] : NULL;
		if (i->op == IR_IF && S && !s->load && !s->init && cond_is(i->args[0], s->axis, true)) {
			s->init = i;
			continue;
		}
		if (i->op == IR_IF && s->store && cond_is(i->args[0], s->axis, false)) {
			s->last = i;
			continue;
		}
		if (i->nregions || (op_info[i->op].flags & F_EFFECT && i->op != IR_STORE))
			return false;
		bool of_step = i->op == IR_PROGRAM_ID && i->ival == s->axis;
		for (int j = 0; j < i->nargs; j++)
			of_step |= s->step[i->args[j]->id] && i->args[j]->def && i->args[j]->def->parent == b;
		if (S && i->nargs && i->args[0] == S) {
			if (!whole_access(i))
				return false;
			if (i->op == IR_LOAD && !s->load && s->init) {
				s->load = i;
				of_step = true;
			} else if (i->op == IR_STORE && s->load && !s->store &&
			           holds(S->type, i->args[i->nargs - 1]->type)) {
				s->store = i;
			} else {
				return false;
			}
		} else if (i->op == IR_STORE) {
			return false;
		}
		for (int j = 1; j < i->nargs; j++)
			if (S && i->args[j] == S)
				return false;
		for (int r = 0; r < i->nresults; r++)
			s->step[i->results[r]->id] = of_step;
	}
	return s->alloc && s->init && s->load && s->store && s->last && init_ok(s->init, s) &&
	       !region_bad(s->last->regions[0], s, false) && s->last->regions[1]->first == s->last->regions[1]->last;
}

/* Replaces, in r (recursively), program_id(axis) by pid and the loads of S
 * by acc (removing them). */
static void rewrite_last(IrKernel *k, Region *r, const Value *S, int axis, Value *pid, Value *acc)
{
	for (Inst *i = r->first, *next; i; i = next) {
		next = i->next;
		for (int j = 0; j < i->nregions; j++)
			rewrite_last(k, i->regions[j], S, axis, pid, acc);
		if (i->op == IR_PROGRAM_ID && i->ival == axis) {
			ir_replace_all_uses(k, i->results[0], pid);
			ir_remove(i);
		} else if (i->op == IR_LOAD && i->args[0] == S) {
			ir_replace_all_uses(k, i->results[0], acc);
			ir_remove(i);
		}
	}
}

NvKgrid *nv_kgrid(Arena *a, IrKernel *k)
{
	Shape s;
	if (!match(a, k, &s))
		return NULL;
	Region *old = k->body;
	Loc loc = s.store->loc;
	Type **at = arena_alloc(a, (size_t)(old->nargs + 1) * sizeof *at);
	for (int j = 0; j < old->nargs; j++)
		at[j] = old->args[j]->type;
	Region *b = ir_region_new(a, k, old->nargs, at);
	ValueMap *m = vmap_new(a);
	for (int j = 0; j < old->nargs; j++) {
		b->args[j]->name = old->args[j]->name;
		vmap_set(m, old->args[j], b->args[j]);
	}
	InsertPoint top = {b, NULL};
	/* The values not of the step, before the loop; then S's first value. */
	for (const Inst *i = old->first; i && i->op != IR_YIELD; i = i->next)
		if (i != s.alloc && i != s.init && i != s.last && i->nresults && !s.step[i->results[0]->id])
			ir_clone_inst(a, k, i, m, top);
	int ny;
	ir_clone_region_body(a, k, s.init->regions[0], m, top, &ny);
	Inst *first_store = b->last; /* the init's store, cloned: its value starts the loop */
	Value *init = first_store->args[first_store->nargs - 1];
	ir_remove(first_store);
	/* for t in range(num_programs(d)), the step's values inside. */
	Type *i32 = type_scalar(a, DT_I32), *i64 = type_scalar(a, DT_I64), *acc_t = init->type;
	Inst *np = ir_emit(a, k, b, IR_NUM_PROGRAMS, loc, 0, NULL, i32);
	np->ival = s.axis;
	Value *n = ir_emit(a, k, b, IR_CAST, loc, 1, &np->results[0], i64)->results[0];
	Value *fargs[4] = {ir_const_int(a, k, b, loc, i64, 0), n, ir_const_int(a, k, b, loc, i64, 1), init};
	Inst *loop = ir_inst_new(a, k, IR_FOR, loc, 4, fargs, 1, &acc_t);
	ir_append(b, loop);
	Type *lt[2] = {i64, acc_t};
	Region *body = ir_add_region(a, k, loop, 2, lt);
	Value *t = body->args[0], *acc = body->args[1];
	t->name = "kk";
	InsertPoint in = {body, NULL};
	Value *t32 = ir_emit(a, k, body, IR_CAST, loc, 1, &t, i32)->results[0];
	vmap_set(m, s.load->results[0], acc);
	for (const Inst *i = old->first; i && i->op != IR_YIELD; i = i->next) {
		if (i == s.alloc || i == s.init || i == s.last || i == s.load || !i->nresults || !s.step[i->results[0]->id])
			continue;
		if (i->op == IR_PROGRAM_ID)
			vmap_set(m, i->results[0], t32);
		else if (i->op == IR_CAST && op_axis(i->args[0], IR_PROGRAM_ID, s.axis) && type_equal(i->results[0]->type, i64))
			vmap_set(m, i->results[0], t); /* the iv as it is: t < 2^31 */
		else
			ir_clone_inst(a, k, i, m, in);
	}
	Value *next = vmap_lookup(m, s.store->args[s.store->nargs - 1]);
	ir_yield(a, k, body, loc, 1, &next);
	/* The last program's `when`, after the loop, when it ran. */
	Value *cmp[2] = {n, ir_const_int(a, k, b, loc, i64, 0)};
	Value *ran = ir_emit(a, k, b, IR_GT, loc, 2, cmp, type_scalar(a, DT_BOOL))->results[0];
	Value *lastv[2] = {n, ir_const_int(a, k, b, loc, i64, 1)};
	Value *l64 = ir_emit(a, k, b, IR_SUB, loc, 2, lastv, i64)->results[0];
	Value *lpid = ir_emit(a, k, b, IR_CAST, loc, 1, &l64, i32)->results[0];
	vmap_set(m, s.last->args[0], ran);
	Inst *last = ir_clone_inst(a, k, s.last, m, top);
	ir_yield(a, k, b, loc, 0, NULL);
	k->body = b;
	rewrite_last(k, last->regions[0], s.alloc->results[0], s.axis, lpid, loop->results[0]);
	NvKgrid *r = arena_alloc(a, sizeof *r);
	r->k = k;
	r->body = old;
	r->axis = s.axis;
	return r;
}

int nv_kgrid_axis(const NvKgrid *r)
{
	return r ? r->axis : -1;
}

void nv_kgrid_undo(NvKgrid *r)
{
	if (r)
		r->k->body = r->body;
}
