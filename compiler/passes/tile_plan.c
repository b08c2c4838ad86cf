/* tile_plan.c - the tile-host pass's planner: which instructions of the
 * input are live, how often each value is used, and which tensor values are
 * lazy (computed at their single use) rather than materialised; see
 * tile_host.c for the rules. */
#include "tile_host.h"

#include <string.h>

/* ---- analysis of the input IR ------------------------------------------------------ */

/* Whether instruction i of the input is needed: it has an effect (or ends
 * a region) or a result that is used by a needed instruction. */
bool inst_live(TileHost *t, const Inst *i)
{
	if (op_info[i->op].flags & (F_EFFECT | F_TERM))
		return true;
	for (int r = 0; r < i->nresults; r++)
		if (t->info[i->results[r]->id].live)
			return true;
	return false;
}

/* One sweep marking the operands of needed instructions; true if it
 * marked anything new. */
bool mark_live(TileHost *t, const Region *r)
{
	bool changed = false;
	for (const Inst *i = r->last; i; i = i->prev) {
		for (int j = 0; j < i->nregions; j++)
			changed |= mark_live(t, i->regions[j]);
		if (!inst_live(t, i))
			continue;
		for (int j = 0; j < i->nargs; j++) {
			UseInfo *u = info(t, i->args[j]);
			changed |= !u->live;
			u->live = true;
		}
	}
	return changed;
}

/* Counts the uses of each value by needed instructions. */
void count_uses(TileHost *t, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (!inst_live(t, i))
			continue;
		for (int j = 0; j < i->nargs; j++) {
			UseInfo *u = info(t, i->args[j]);
			u->nuses++;
			u->user = i;
		}
		for (int j = 0; j < i->nregions; j++)
			count_uses(t, i->regions[j]);
	}
}

bool is_view(Op op)
{
	return op == IR_BROADCAST || op == IR_TRANSPOSE || op == IR_RESHAPE || op == IR_SLICE || op == IR_REVERSE;
}

bool is_elementwise(const Inst *i)
{
	return (op_info[i->op].flags & F_ELEMWISE) && is_tensor(i->results[0]);
}

/* The region a value is defined in. */
static const Region *def_region(const Value *v)
{
	return v->def ? v->def->parent : v->region;
}

/* Whether every element of tensor v is read exactly once, in v's own
 * region: then v can be computed at its use instead of being stored.
 * (A loop, not recursion, through a chain of views.) */
static bool consumed_once(TileHost *t, const Value *v)
{
	for (;;) {
		const UseInfo *u = info(t, v);
		if (u->nuses != 1 || u->user->parent != def_region(v))
			return false;
		const Inst *c = u->user;
		if (is_elementwise(c))
			return true;
		switch (c->op) {
		case IR_LOAD: case IR_STORE: case IR_ATOMIC:
		case IR_REDUCE_SUM: case IR_REDUCE_MAX: case IR_REDUCE_MIN: case IR_REDUCE_PROD:
		case IR_ARGMAX: case IR_ARGMIN: case IR_CUMSUM: case IR_DOT: case IR_CONCAT:
		case IR_DEBUG_PRINT: /* copied once into the buffer it prints from */
			return true;
		case IR_TRANSPOSE: case IR_RESHAPE: case IR_SLICE: case IR_REVERSE:
			break;
		case IR_BROADCAST:
			if (type_numel(c->results[0]->type) != type_numel(v->type))
				return false;
			break;
		case IR_FOR: case IR_WHILE: /* a tensor operand is an init: copied once into the carried buffer */
			return true;
		case IR_YIELD: /* of a for/while/if: written once into the carried or result buffer */
			return c->parent->owner != NULL;
		default:
			return false;
		}
		v = c->results[0]; /* the view's elements are v's, each once */
	}
}

/* Whether executing i may write memory. */
static bool writes_memory(const Inst *i)
{
	if (i->op == IR_STORE || i->op == IR_ATOMIC)
		return true;
	for (int r = 0; r < i->nregions; r++)
		for (const Inst *j = i->regions[r]->first; j; j = j->next)
			if (writes_memory(j))
				return true;
	return false;
}

/* Whether integer scalar v of the input is provably >= 0. */
bool nonneg(TileHost *t, const Value *v, int depth)
{
	if (dtype_is_unsigned(v->type->dtype))
		return true;
	if (depth > 16)
		return false;
	if (!v->def) {
		const Region *r = v->region;
		if (r == t->k->body) /* sizes are checked >= 0 at launch */
			return v->index >= t->k->noperands + t->k->nscalars;
		const Inst *owner = r->owner;
		int64_t step;
		return owner && owner->op == IR_FOR && v->index == 0 && const_int(owner->args[2], &step) && step > 0 &&
		       nonneg(t, owner->args[0], depth + 1);
	}
	const Inst *i = v->def;
	switch (i->op) {
	case IR_PROGRAM_ID: case IR_NUM_PROGRAMS:
		return true;
	case IR_CONST:
		return !dtype_is_float(v->type->dtype) && i->ival >= 0;
	case IR_CAST: {
		const Type *from = i->args[0]->type;
		return dtype_is_int(from->dtype) && dtype_bits(v->type->dtype) >= dtype_bits(from->dtype) &&
		       nonneg(t, i->args[0], depth + 1);
	}
	case IR_ADD: case IR_MUL: case IR_MIN: case IR_FLOORDIV:
		return nonneg(t, i->args[0], depth + 1) && nonneg(t, i->args[1], depth + 1);
	case IR_MAX:
		return nonneg(t, i->args[0], depth + 1) || nonneg(t, i->args[1], depth + 1);
	default:
		return false;
	}
}

static bool same_extent(const Type *a, int da, const Type *b, int db)
{
	if (a->dims[da] != b->dims[db])
		return false;
	if (a->dims[da] != DIM_DYNAMIC)
		return true;
	const char *sa = a->syms ? a->syms[da] : NULL, *sb = b->syms ? b->syms[db] : NULL;
	return sa && sb && strcmp(sa, sb) == 0;
}

/* Whether store c's valid box (its masked slices and points) keeps every
 * masked indexer of load l in bounds; the two have the same access shape
 * and element-for-element index map. */
static bool store_covers(const Inst *c, const Inst *l)
{
	const Type *lt = l->args[0]->type, *ct = c->args[0]->type;
	for (int d = 0; d < l->nidx; d++) {
		const Indexer *x = &l->idx[d];
		if (!x->masked || x->kind == IDX_GATHER)
			continue;
		bool found = false;
		if (x->kind == IDX_SLICE) {
			int r = ir_access_dim(l, d);
			for (int e = 0; e < c->nidx && !found; e++) {
				const Indexer *y = &c->idx[e];
				found = y->kind == IDX_SLICE && y->masked && ir_access_dim(c, e) == r && y->size == x->size &&
				        same_extent(lt, d, ct, e) && ir_same_value(ir_index_arg(l, d), ir_index_arg(c, e));
			}
		} else if (x->kind == IDX_POINT) {
			for (int e = 0; e < c->nidx && !found; e++) {
				const Indexer *y = &c->idx[e];
				found = y->kind == IDX_POINT && y->masked && same_extent(lt, d, ct, e) &&
				        ir_same_value(ir_index_arg(l, d), ir_index_arg(c, e));
			}
		}
		if (!found)
			return false;
	}
	return true;
}

/* Whether accesses a and b use identical indexers (same elements in the same order). */
static bool same_indexers(const Inst *a, const Inst *b)
{
	if (a->nidx != b->nidx)
		return false;
	for (int d = 0; d < a->nidx; d++) {
		const Indexer *x = &a->idx[d], *y = &b->idx[d];
		if (x->kind != y->kind || x->size != y->size || x->kind == IDX_GATHER)
			return false;
		if (x->kind != IDX_FULL && !ir_same_value(ir_index_arg(a, d), ir_index_arg(b, d)))
			return false;
	}
	return true;
}

/* Whether tensor load l (consumed once) may be computed at its use. */
static bool load_fusable(TileHost *t, const Inst *l)
{
	/* Follow the single-use chain of lazy ops to where the elements are
	 * finally consumed. */
	const Value *v = l->results[0];
	bool identity = true; /* element i of the chain's end is element i of the load */
	const Inst *c;
	for (;;) {
		c = info(t, v)->user;
		if (is_view(c->op))
			identity = false;
		else if (!(is_elementwise(c) && info(t, c->results[0])->lazy))
			break;
		v = c->results[0];
	}
	for (const Inst *x = l->next; x && x != c; x = x->next)
		if (writes_memory(x))
			return false;
	bool masked = false; /* (masked gathers test each element themselves) */
	for (int d = 0; d < l->nidx; d++)
		masked |= l->idx[d].masked && l->idx[d].kind != IDX_GATHER;
	bool writes_same_ref = (c->op == IR_STORE || c->op == IR_ATOMIC) && c->args[0] == l->args[0];
	if (masked || writes_same_ref) {
		/* Element for element into the stored value of c. */
		if (!identity || c->op != IR_STORE || c->args[ir_access_extras(c)] != v)
			return false;
		if (masked && !store_covers(c, l))
			return false;
		if (writes_same_ref && !same_indexers(c, l))
			return false;
		if (masked)
			info(t, l->results[0])->cover = c;
	}
	return true;
}

/* The longest chain of lazy values elem() may recurse through: as deep as
 * one expression may be (§2.8), so only chains of lets are cut. */
#define MAX_LAZY_DEPTH 1024

/* The depth of i's result in a chain of lazy values if it is lazy. */
static int lazy_depth(TileHost *t, const Inst *i)
{
	int d = 0;
	for (int j = 0; j < i->nargs; j++)
		if (info(t, i->args[j])->depth > d)
			d = info(t, i->args[j])->depth;
	return d + 1;
}

/* Decides which tensor values are lazy (T_LAZY), region by region:
 * elementwise ops first (loads need to know where their chain ends). */
void plan_elementwise(TileHost *t, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->nresults == 1 && is_tensor(i->results[0])) {
			UseInfo *u = info(t, i->results[0]);
			if (is_view(i->op) || i->op == IR_IOTA)
				u->lazy = true;
			else if (is_elementwise(i))
				u->lazy = consumed_once(t, i->results[0]);
			/* (a load counts as lazy: plan_loads may make it so) */
			if (u->lazy || i->op == IR_LOAD)
				u->depth = lazy_depth(t, i);
			if (u->lazy && u->depth > MAX_LAZY_DEPTH) {
				u->lazy = false; /* materialised: chains through it start anew */
				u->depth = 0;
			}
		}
		for (int j = 0; j < i->nregions; j++)
			plan_elementwise(t, i->regions[j]);
	}
}

void plan_loads(TileHost *t, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_LOAD && is_tensor(i->results[0]) && consumed_once(t, i->results[0]))
			info(t, i->results[0])->lazy = load_fusable(t, i);
		for (int j = 0; j < i->nregions; j++)
			plan_loads(t, i->regions[j]);
	}
}
