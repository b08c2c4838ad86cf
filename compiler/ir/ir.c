/* ir.c - the opcode table and the builders of the typed IR. */
#include "ir.h"

#include <math.h>
#include <string.h>

const OpInfo op_info[IR_OP_COUNT] = {
#define X(id, name, mina, maxa, nres, flags) [IR_##id] = {name, mina, maxa, nres, flags},
#include "ops.def"
#undef X
};

const char *const atomic_kind_names[ATOMIC_KIND_COUNT] = {
	[ATOMIC_ADD] = "add", [ATOMIC_MAX] = "max", [ATOMIC_MIN] = "min",
	[ATOMIC_AND] = "and", [ATOMIC_OR] = "or", [ATOMIC_XOR] = "xor",
	[ATOMIC_XCHG] = "xchg", [ATOMIC_CAS] = "cas",
};

const char *const dot_precision_names[PREC_COUNT] = {
	[PREC_DEFAULT] = "default", [PREC_HIGH] = "high", [PREC_HIGHEST] = "highest",
};

/* A fresh Value numbered from the kernel's counter. */
static Value *value_new(Arena *a, IrKernel *k, Type *t)
{
	Value *v = arena_alloc(a, sizeof *v);
	v->id = k->nvalues++;
	v->type = t;
	return v;
}

Region *ir_region_new(Arena *a, IrKernel *k, int nargs, Type **arg_types)
{
	Region *r = arena_alloc(a, sizeof *r);
	r->nargs = nargs;
	if (nargs > 0) {
		r->args = arena_alloc(a, (size_t)nargs * sizeof *r->args);
		for (int i = 0; i < nargs; i++) {
			Value *v = value_new(a, k, arg_types ? arg_types[i] : NULL);
			v->region = r;
			v->index = i;
			r->args[i] = v;
		}
	}
	return r;
}

/* Builders never check types: the verifier does, and its tests need to
 * build ill-formed IR. */
Inst *ir_inst_new(Arena *a, IrKernel *k, Op op, Loc loc, int nargs, Value **args, int nresults, Type **result_types)
{
	Inst *i = arena_alloc(a, sizeof *i);
	i->op = op;
	i->loc = loc;
	i->nargs = nargs;
	if (nargs > 0) {
		i->args = arena_alloc(a, (size_t)nargs * sizeof *i->args);
		if (args)
			memcpy(i->args, args, (size_t)nargs * sizeof *i->args);
	}
	i->nresults = nresults;
	if (nresults > 0) {
		i->results = arena_alloc(a, (size_t)nresults * sizeof *i->results);
		for (int r = 0; r < nresults; r++) {
			Value *v = value_new(a, k, result_types ? result_types[r] : NULL);
			v->def = i;
			v->index = r;
			i->results[r] = v;
		}
	}
	return i;
}

void ir_append(Region *r, Inst *i)
{
	i->parent = r;
	i->next = NULL;
	i->prev = r->last;
	if (r->last)
		r->last->next = i;
	else
		r->first = i;
	r->last = i;
}

void ir_insert_before(Inst *pos, Inst *i)
{
	Region *r = pos->parent;
	i->parent = r;
	i->next = pos;
	i->prev = pos->prev;
	if (pos->prev)
		pos->prev->next = i;
	else
		r->first = i;
	pos->prev = i;
}

void ir_remove(Inst *i)
{
	Region *r = i->parent;
	if (i->prev)
		i->prev->next = i->next;
	else if (r)
		r->first = i->next;
	if (i->next)
		i->next->prev = i->prev;
	else if (r)
		r->last = i->prev;
	i->prev = i->next = NULL;
	i->parent = NULL;
}

Region *ir_add_region(Arena *a, IrKernel *k, Inst *owner, int nargs, Type **arg_types)
{
	Region *r = ir_region_new(a, k, nargs, arg_types);
	r->owner = owner;
	/* Regions per op are few (at most 2): copy the array on every add. */
	Region **regs = arena_alloc(a, (size_t)(owner->nregions + 1) * sizeof *regs);
	if (owner->nregions)
		memcpy(regs, owner->regions, (size_t)owner->nregions * sizeof *regs);
	regs[owner->nregions++] = r;
	owner->regions = regs;
	return r;
}

/* ---- conveniences -------------------------------------------------------- */

Inst *ir_emit(Arena *a, IrKernel *k, Region *r, Op op, Loc loc, int nargs, Value **args, Type *result_type)
{
	Inst *i = ir_inst_new(a, k, op, loc, nargs, args, result_type ? 1 : 0, result_type ? &result_type : NULL);
	ir_append(r, i);
	return i;
}

Value *ir_const_int(Arena *a, IrKernel *k, Region *r, Loc loc, Type *t, int64_t v)
{
	Inst *i = ir_emit(a, k, r, IR_CONST, loc, 0, NULL, t);
	i->ival = v;
	return i->results[0];
}

Value *ir_const_float(Arena *a, IrKernel *k, Region *r, Loc loc, Type *t, double v)
{
	Inst *i = ir_emit(a, k, r, IR_CONST, loc, 0, NULL, t);
	i->fval = v;
	return i->results[0];
}

Inst *ir_yield(Arena *a, IrKernel *k, Region *r, Loc loc, int n, Value **vals)
{
	return ir_emit(a, k, r, IR_YIELD, loc, n, vals, NULL);
}

void ir_set_indexers(Arena *a, Inst *i, int nidx, const Indexer *idx)
{
	i->nidx = nidx;
	i->idx = NULL;
	if (nidx > 0) {
		i->idx = arena_alloc(a, (size_t)nidx * sizeof *i->idx);
		memcpy(i->idx, idx, (size_t)nidx * sizeof *i->idx);
	}
}

void ir_set_perm(Arena *a, Inst *i, int nperm, const int64_t *perm)
{
	i->nperm = nperm;
	i->perm = NULL;
	if (nperm > 0) {
		i->perm = arena_alloc(a, (size_t)nperm * sizeof *i->perm);
		memcpy(i->perm, perm, (size_t)nperm * sizeof *i->perm);
	}
}

/* Whether two values are provably equal: the same value, or the same pure
 * computation (no effects, no loads, no regions) of provably equal values.
 * Bounded in depth, so it is cheap and never recurses far. */
static bool same_value_at(const Value *a, const Value *b, int depth)
{
	if (a == b)
		return true;
	if (depth > 16 || !a->def || !b->def || !type_equal(a->type, b->type))
		return false;
	const Inst *x = a->def, *y = b->def;
	if (x->op != y->op || x->nargs != y->nargs || x->nregions || y->nregions || a->index != b->index ||
	    (op_info[x->op].flags & F_EFFECT) || x->op == IR_LOAD || x->ival != y->ival ||
	    memcmp(&x->fval, &y->fval, sizeof x->fval) != 0)
		return false;
	for (int j = 0; j < x->nargs; j++)
		if (!same_value_at(x->args[j], y->args[j], depth + 1))
			return false;
	return true;
}

bool ir_same_value(const Value *a, const Value *b)
{
	return same_value_at(a, b, 0);
}

bool ir_const_value(const Value *v, int64_t *out)
{
	if (!v->def || v->def->op != IR_CONST || v->type->rank != 0 || dtype_is_float(v->type->dtype))
		return false;
	*out = v->def->ival;
	return true;
}

const Value *ir_cdiv_of(const Value *v, int64_t *c)
{
	const Inst *d = v->def;
	if (!d || d->op != IR_SELECT || d->nargs != 3)
		return NULL;
	const Inst *ne = d->args[0]->def, *mod = ne && ne->op == IR_NE ? ne->args[0]->def : NULL;
	const Inst *add = d->args[1]->def, *fl = d->args[2]->def;
	int64_t z, one, c2;
	if (!mod || mod->op != IR_MOD || !ir_const_value(ne->args[1], &z) || z != 0 ||
	    !ir_const_value(mod->args[1], c) || *c <= 0)
		return NULL;
	if (!fl || fl->op != IR_FLOORDIV || fl->args[0] != mod->args[0] || !ir_const_value(fl->args[1], &c2) ||
	    c2 != *c || !add || add->op != IR_ADD || add->args[0] != d->args[2] ||
	    !ir_const_value(add->args[1], &one) || one != 1)
		return NULL;
	return mod->args[0];
}

const Value *ir_index_arg(const Inst *i, int d)
{
	int j = 1;
	for (int e = 0; e < d; e++)
		j += i->idx[e].kind != IDX_FULL;
	return i->args[j];
}

int ir_access_extras(const Inst *i)
{
	int n = 1;
	for (int d = 0; d < i->nidx; d++)
		n += i->idx[d].kind != IDX_FULL;
	return n;
}

bool ir_access_gathers(const Inst *i)
{
	for (int d = 0; d < i->nidx; d++)
		if (i->idx[d].kind == IDX_GATHER)
			return true;
	return false;
}

/* FULL/SLICE dims before the gather run come first, then the gathers'
 * broadcast dims G (their rank less the FULL/SLICE count), then the
 * FULL/SLICE dims after the run. */
int ir_access_dim(const Inst *i, int d)
{
	IndexKind k = i->idx[d].kind;
	if (k != IDX_FULL && k != IDX_SLICE)
		return -1;
	int before = 0, nslice = 0, grank = -1;
	for (int e = 0; e < i->nidx; e++) {
		IndexKind x = i->idx[e].kind;
		if (x == IDX_FULL || x == IDX_SLICE) {
			before += e < d;
			nslice++;
		} else if (x == IDX_GATHER && grank < 0 && e < d) {
			grank = ir_index_arg(i, e)->type->rank;
		}
	}
	return grank < 0 ? before : before + grank - nslice;
}

bool ir_inst_reads(const Inst *i, const Value *v)
{
	for (int j = 0; j < i->nargs; j++)
		if (i->args[j] == v)
			return true;
	for (int j = 0; j < i->nregions; j++)
		if (ir_region_reads(i->regions[j], v))
			return true;
	return false;
}

bool ir_region_reads(const Region *r, const Value *v)
{
	for (const Inst *i = r->first; i; i = i->next)
		if (ir_inst_reads(i, v))
			return true;
	return false;
}

void ir_reduce_identity(Op op, DType dt, int64_t *ival, double *fval)
{
	*ival = 0;
	*fval = 0.0;
	if (op == IR_REDUCE_SUM)
		return;
	if (op == IR_REDUCE_PROD) {
		if (dtype_is_float(dt))
			*fval = 1.0;
		else
			*ival = 1;
		return;
	}
	bool is_max = op == IR_REDUCE_MAX;
	if (dtype_is_float(dt)) {
		*fval = is_max ? -INFINITY : INFINITY;
		return;
	}
	if (dt == DT_BOOL) {
		*ival = is_max ? 0 : 1;
		return;
	}
	int bits = dtype_bits(dt);
	int64_t lo, hi;
	if (dtype_is_signed(dt)) {
		hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
		lo = -hi - 1;
	} else {
		lo = 0;
		hi = bits == 64 ? -1 : (int64_t)(((uint64_t)1 << bits) - 1); /* all ones */
	}
	*ival = is_max ? lo : hi;
}

int ir_prefetch_count(const IrKernel *k)
{
	int n = 0;
	for (int o = 0; o < k->noperands; o++)
		n += k->operands[o]->mode == PM_PREFETCH;
	return n;
}
