/* split_loops.c - splits a `for` where an iota mask is uniformly true.
 *
 * Causal attention masks each block of scores with
 *     where(span_q[:, None] >= span_k[None, :], s, MASK)
 * where span_q = start_q * BQ + iota(BQ) and span_k = start_k * BK +
 * iota(BK), start_k the loop index: every element is true on all blocks
 * but the diagonal ones.  When a top-level SELECT of a loop body has such a
 * condition (a signed comparison of integer tensors built from iota,
 * constants and scalars affine in the index with loop-invariant parts), the
 * condition holds for every element exactly when
 *     A * i + B >= 0        (A a constant, B a loop-invariant scalar)
 * which is a prefix of the iterations when A < 0 and a suffix when A > 0.
 * The loop is split there: the copy over that part takes the SELECT's
 * first operand and drops the mask; the other part is the loop as written.
 * The split point is computed in i64 before the loop and clamped to the
 * loop's range; when the scalars are large enough that the i32 arithmetic
 * of the mask could wrap, the uniform part is empty. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* Offsets and scales stay small, so no sum below overflows. */
#define SMALL (INT64_C(1) << 20)

/* a * i + b + c, i the loop index, b a loop-invariant scalar (or NULL). */
typedef struct Lin {
	int64_t a, c;
	Value *b;
	bool neg_b;   /* the term is -b */
	int64_t amag; /* uniform_true: the largest |a| of the two sides */
} Lin;

/* Integer tensor elements base + [lo, hi]. */
typedef struct Span {
	Lin base;
	int64_t lo, hi;
} Span;

typedef struct Split {
	Arena *a;
	IrKernel *k;
	Region *body; /* the loop's body */
} Split;

static bool small(int64_t v)
{
	return v > -SMALL && v < SMALL;
}

static bool signed_int(const Value *v)
{
	DType d = v->type->dtype;
	return d == DT_I32 || d == DT_I64;
}

/* A cast that keeps every value: signed to signed, no narrower. */
static bool widening(const Inst *i)
{
	const Value *x = i->args[0];
	return signed_int(x) && dtype_bytes(i->results[0]->type->dtype) >= dtype_bytes(x->type->dtype);
}

static bool const_int(const Value *v, int64_t *out)
{
	return signed_int(v) && ir_const_value(v, out);
}

/* Whether scalar v has the same value in every iteration: defined outside
 * the body, or a pure scalar computation of such values in it. */
static bool invariant(const Split *S, const Value *v, int depth)
{
	if (v->type->rank != 0 || depth > 8)
		return false;
	if (!v->def)
		return v->region != S->body;
	const Inst *i = v->def;
	if (i->parent != S->body)
		return true;
	switch (i->op) {
	case IR_CONST: case IR_PROGRAM_ID: case IR_NUM_PROGRAMS:
		return true;
	case IR_ADD: case IR_SUB: case IR_MUL: case IR_MIN: case IR_MAX: case IR_CAST:
		for (int j = 0; j < i->nargs; j++)
			if (!invariant(S, i->args[j], depth + 1))
				return false;
		return true;
	default:
		return false;
	}
}

static bool add_lin(Lin *r, Lin x, Lin y, bool sub)
{
	if (x.b && y.b)
		return false;
	*r = (Lin){sub ? x.a - y.a : x.a + y.a, sub ? x.c - y.c : x.c + y.c, x.b ? x.b : y.b,
	           x.b ? x.neg_b : y.neg_b != sub, 0};
	return small(r->a) && small(r->c);
}

/* Scalar v as a * i + b + c. */
static bool lin(const Split *S, Value *v, Lin *out, int depth)
{
	int64_t k;
	if (!signed_int(v) || v->type->rank != 0 || depth > 8)
		return false;
	if (!v->def && v->region == S->body && v->index == 0) {
		*out = (Lin){1, 0, NULL, false, 0};
		return true;
	}
	if (const_int(v, &k)) {
		*out = (Lin){0, k, NULL, false, 0};
		return small(k);
	}
	if (invariant(S, v, 0)) {
		*out = (Lin){0, 0, v, false, 0};
		return true;
	}
	const Inst *i = v->def;
	Lin x, y;
	if (!i)
		return false;
	switch (i->op) {
	case IR_CAST:
		return widening(i) && lin(S, i->args[0], out, depth + 1);
	case IR_ADD: case IR_SUB:
		return lin(S, i->args[0], &x, depth + 1) && lin(S, i->args[1], &y, depth + 1) &&
		       add_lin(out, x, y, i->op == IR_SUB);
	case IR_MUL:
		for (int side = 0; side < 2; side++)
			if (const_int(i->args[1 - side], &k) && small(k) && lin(S, i->args[side], &x, depth + 1) && !x.b) {
				*out = (Lin){x.a * k, x.c * k, NULL, false, 0};
				return small(out->a) && small(out->c);
			}
		return false;
	default:
		return false;
	}
}

/* Integer tensor v as base + [lo, hi]. */
static bool span(const Split *S, Value *v, Span *out, int depth)
{
	const Inst *i = v->def;
	int64_t k;
	if (!signed_int(v) || !i || depth > 12)
		return false;
	if (v->type->rank == 0) {
		out->lo = out->hi = 0;
		return lin(S, v, &out->base, depth + 1);
	}
	Span x, y;
	switch (i->op) {
	case IR_CONST:
		*out = (Span){{0, i->ival, NULL, false, 0}, 0, 0};
		return small(i->ival);
	case IR_IOTA:
		*out = (Span){{0, 0, NULL, false, 0}, 0, v->type->dims[i->ival] - 1};
		return small(out->hi);
	case IR_BROADCAST: case IR_RESHAPE:
		return span(S, i->args[0], out, depth + 1);
	case IR_CAST: /* i32 -> i64 keeps every value */
		return widening(i) && span(S, i->args[0], out, depth + 1);
	case IR_ADD: case IR_SUB: {
		bool sub = i->op == IR_SUB;
		if (!span(S, i->args[0], &x, depth + 1) || !span(S, i->args[1], &y, depth + 1) ||
		    !add_lin(&out->base, x.base, y.base, sub))
			return false;
		out->lo = sub ? x.lo - y.hi : x.lo + y.lo;
		out->hi = sub ? x.hi - y.lo : x.hi + y.hi;
		return small(out->lo) && small(out->hi);
	}
	case IR_MUL:
		for (int side = 0; side < 2; side++) {
			Value *c = i->args[1 - side];
			while (c->def && c->def->op == IR_BROADCAST)
				c = c->def->args[0];
			if (!const_int(c, &k) || !small(k) || !span(S, i->args[side], &x, depth + 1) || x.base.b)
				continue;
			*out = (Span){{x.base.a * k, x.base.c * k, NULL, false, 0}, k >= 0 ? x.lo * k : x.hi * k,
			              k >= 0 ? x.hi * k : x.lo * k};
			return small(out->base.a) && small(out->base.c) && small(out->lo) && small(out->hi);
		}
		return false;
	default:
		return false;
	}
}

/* The condition "every element of cond is true" as A * i + (+/-b) + C >= 0. */
static bool uniform_true(const Split *S, Value *cond, Lin *out)
{
	const Inst *i = cond->def;
	if (!i || cond->type->rank == 0 || (i->op != IR_GE && i->op != IR_GT && i->op != IR_LE && i->op != IR_LT))
		return false;
	/* min(p) - max(q) >= t */
	bool ge = i->op == IR_GE || i->op == IR_GT;
	int64_t t = i->op == IR_GT || i->op == IR_LT ? 1 : 0;
	Span p, q;
	if (!span(S, i->args[ge ? 0 : 1], &p, 0) || !span(S, i->args[ge ? 1 : 0], &q, 0))
		return false;
	p.base.c += p.lo;
	q.base.c += q.hi + t;
	if (!add_lin(out, p.base, q.base, true) || out->a == 0)
		return false;
	out->amag = llabs(p.base.a) > llabs(q.base.a) ? llabs(p.base.a) : llabs(q.base.a);
	return true;
}

static Value *emit(Split *S, InsertPoint at, Op op, Loc loc, Type *t, Value *x, Value *y)
{
	Value *args[2] = {x, y};
	Inst *i = ir_inst_new(S->a, S->k, op, loc, y ? 2 : 1, args, 1, &t);
	ir_insert_at(at, i);
	return i->results[0];
}

static Value *const_at(Split *S, InsertPoint at, Loc loc, Type *t, int64_t v)
{
	Inst *i = ir_inst_new(S->a, S->k, IR_CONST, loc, 0, NULL, 1, &t);
	i->ival = v;
	ir_insert_at(at, i);
	return i->results[0];
}

/* v, computed before the loop: invariant values of the body are cloned
 * there (operands first). */
static Value *hoist(Split *S, InsertPoint at, ValueMap *m, Value *v)
{
	if (!v->def || v->def->parent != S->body)
		return v;
	Value *have = vmap_get(m, v);
	if (have)
		return have;
	for (int j = 0; j < v->def->nargs; j++)
		hoist(S, at, m, v->def->args[j]);
	ir_clone_inst(S->a, S->k, v->def, m, at);
	return vmap_get(m, v);
}

/* The first index of the iterations after the prefix (A < 0) or of the
 * suffix (A > 0) where c holds, clamped to [lo, hi]; lo or hi (an empty
 * uniform part) when |b| or |a * index| could make the mask's i32
 * arithmetic wrap. */
static Value *split_point(Split *S, Inst *loop, Lin c)
{
	InsertPoint at = {loop->parent, loop};
	Loc loc = loop->loc;
	Type *i64 = type_scalar(S->a, DT_I64);
	Type *it = loop->args[0]->type;
	ValueMap *m = vmap_new(S->a);
	Value *lo = emit(S, at, IR_CAST, loc, i64, loop->args[0], NULL);
	Value *hi = emit(S, at, IR_CAST, loc, i64, loop->args[1], NULL);
	/* x = B + C; prefix: floordiv(x, -A) + 1; suffix: -floordiv(x, A) */
	Value *x = const_at(S, at, loc, i64, c.c);
	Value *b = NULL;
	if (c.b) {
		b = emit(S, at, IR_CAST, loc, i64, hoist(S, at, m, c.b), NULL);
		x = emit(S, at, c.neg_b ? IR_SUB : IR_ADD, loc, i64, x, b);
	}
	bool prefix = c.a < 0;
	Value *n = emit(S, at, IR_FLOORDIV, loc, i64, x, const_at(S, at, loc, i64, llabs(c.a)));
	n = prefix ? emit(S, at, IR_ADD, loc, i64, n, const_at(S, at, loc, i64, 1))
	           : emit(S, at, IR_NEG, loc, i64, n, NULL);
	n = emit(S, at, IR_MIN, loc, i64, emit(S, at, IR_MAX, loc, i64, n, lo), hi);
	/* the guard: |lo|, |hi| <= 2^29 / (each side's largest |a|), |b| <= 2^29 */
	Type *bt = type_scalar(S->a, DT_BOOL);
	Value *ok = NULL;
	Value *vals[3] = {lo, hi, b};
	for (int j = 0; j < 3 && vals[j]; j++) {
		int64_t lim = (INT64_C(1) << 29) / (j < 2 ? c.amag : 1);
		Value *in = emit(S, at, IR_AND, loc, bt, emit(S, at, IR_GE, loc, bt, vals[j], const_at(S, at, loc, i64, -lim)),
		                 emit(S, at, IR_LE, loc, bt, vals[j], const_at(S, at, loc, i64, lim)));
		ok = ok ? emit(S, at, IR_AND, loc, bt, ok, in) : in;
	}
	Value *sel[3] = {ok, n, prefix ? lo : hi};
	Inst *pick = ir_inst_new(S->a, S->k, IR_SELECT, loc, 3, sel, 1, &i64);
	ir_insert_at(at, pick);
	return emit(S, at, IR_CAST, loc, it, pick->results[0], NULL);
}

/* A top-level SELECT of the body whose condition is uniform on part of the
 * iterations, and that condition; NULL if none. */
static Inst *find_select(Split *S, Lin *c)
{
	for (Inst *i = S->body->first; i; i = i->next)
		if (i->op == IR_SELECT && i->args[0]->type->rank > 0 && uniform_true(S, i->args[0], c))
			return i;
	return NULL;
}

static void mark_uses(const Region *r, bool *used)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nargs; j++)
			used[i->args[j]->id] = true;
		for (int j = 0; j < i->nregions; j++)
			mark_uses(i->regions[j], used);
	}
}

/* Drops the instructions of r (top level) whose results nothing uses and
 * that have no effect: the mask left behind in the uniform copy. */
static void drop_dead(Arena *a, const IrKernel *k, Region *r)
{
	bool *used = arena_alloc(a, (size_t)k->nvalues + 1);
	for (bool changed = true; changed;) {
		changed = false;
		memset(used, 0, (size_t)k->nvalues + 1);
		mark_uses(k->body, used);
		for (Inst *i = r->last, *prev; i; i = prev) {
			prev = i->prev;
			bool dead = i->nresults > 0 && i->nregions == 0 && i->op != IR_LOAD && i->op != IR_ATOMIC &&
			            i->op != IR_ALLOC && !(op_info[i->op].flags & F_EFFECT);
			for (int j = 0; dead && j < i->nresults; j++)
				dead = !used[i->results[j]->id];
			if (dead) {
				ir_remove(i);
				changed = true;
			}
		}
	}
}

static void split_loop(Arena *a, IrKernel *k, Inst *loop)
{
	int64_t step;
	Split S = {a, k, loop->regions[0]};
	Lin c;
	if (!const_int(loop->args[2], &step) || step != 1)
		return;
	Inst *sel = find_select(&S, &c);
	if (!sel)
		return;
	Value *mid = split_point(&S, loop, c);
	/* The first part is a copy of the loop over [lo, mid); the loop itself
	 * runs [mid, hi) from the copy's results. */
	ValueMap *m = vmap_new(a);
	Inst *first = ir_clone_inst(a, k, loop, m, (InsertPoint){loop->parent, loop});
	first->args[1] = mid;
	loop->args[0] = mid;
	for (int j = 3; j < loop->nargs; j++)
		loop->args[j] = first->results[j - 3];
	Inst *fast = c.a < 0 ? vmap_get(m, sel->results[0])->def : sel;
	ir_replace_all_uses(k, fast->results[0], fast->args[1]);
	ir_remove(fast);
	drop_dead(a, k, c.a < 0 ? first->regions[0] : loop->regions[0]);
}

static void split_region(Arena *a, IrKernel *k, Region *r)
{
	for (Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nregions; j++)
			split_region(a, k, i->regions[j]);
		if (i->op == IR_FOR)
			split_loop(a, k, i);
	}
}

bool pass_split_loops(Compiler *cc, IrModule *m)
{
	for (int n = 0; n < m->nkernels; n++)
		split_region(cc->arena, m->kernels[n], m->kernels[n]->body);
	return true;
}
