/* ir_clone.c - IR rewriting helpers shared by the passes: a value map,
 * instruction and region cloning through it, and use replacement. */
#include "ir_clone.h"

#include <string.h>

/* ---- value map ------------------------------------------------------------ */

struct ValueMap {
	Arena *arena; /* where the table lives */
	PtrMap map;   /* old value -> new value */
};

ValueMap *vmap_new(Arena *a)
{
	ValueMap *m = arena_alloc(a, sizeof *m);
	m->arena = a;
	return m;
}

void vmap_set(ValueMap *m, const Value *from, Value *to)
{
	PKC_ASSERT(from);
	*ptrmap_slot(m->arena, &m->map, from, true) = to;
}

Value *vmap_get(const ValueMap *m, const Value *from)
{
	if (!from)
		return NULL;
	return ptrmap_get(&m->map, from);
}

Value *vmap_lookup(const ValueMap *m, Value *from)
{
	Value *to = vmap_get(m, from);
	return to ? to : from;
}

/* ---- cloning ---------------------------------------------------------------- */

void ir_insert_at(InsertPoint at, Inst *i)
{
	if (at.before)
		ir_insert_before(at.before, i);
	else
		ir_append(at.region, i);
}

/* Copies n elements of `size` bytes into the arena (NULL for none). */
static void *dup_array(Arena *a, const void *src, int n, size_t size)
{
	if (n <= 0 || !src)
		return NULL;
	void *p = arena_alloc(a, (size_t)n * size);
	memcpy(p, src, (size_t)n * size);
	return p;
}

static void clone_region_into(Arena *a, IrKernel *k, const Region *src, ValueMap *m, Region *dst)
{
	for (const Inst *i = src->first; i; i = i->next)
		ir_clone_inst(a, k, i, m, (InsertPoint){dst, NULL});
}

Inst *ir_clone_inst(Arena *a, IrKernel *k, const Inst *src, ValueMap *m, InsertPoint at)
{
	Type **rtypes = arena_alloc(a, (size_t)(src->nresults + 1) * sizeof *rtypes);
	for (int r = 0; r < src->nresults; r++)
		rtypes[r] = src->results[r]->type;
	Inst *c = ir_inst_new(a, k, src->op, src->loc, src->nargs, NULL, src->nresults, rtypes);
	for (int j = 0; j < src->nargs; j++)
		c->args[j] = vmap_lookup(m, src->args[j]);
	for (int r = 0; r < src->nresults; r++) {
		c->results[r]->name = src->results[r]->name;
		vmap_set(m, src->results[r], c->results[r]);
	}
	c->ival = src->ival;
	c->fval = src->fval;
	c->nperm = src->nperm;
	c->perm = dup_array(a, src->perm, src->nperm, sizeof *src->perm);
	c->str = src->str;
	c->nidx = src->nidx;
	c->idx = dup_array(a, src->idx, src->nidx, sizeof *src->idx);
	c->has_mask = src->has_mask;
	c->has_other = src->has_other;
	c->reassoc = src->reassoc;
	for (int r = 0; r < src->nregions; r++) {
		const Region *sr = src->regions[r];
		Type **atypes = arena_alloc(a, (size_t)(sr->nargs + 1) * sizeof *atypes);
		for (int j = 0; j < sr->nargs; j++)
			atypes[j] = sr->args[j]->type;
		Region *dr = ir_add_region(a, k, c, sr->nargs, atypes);
		for (int j = 0; j < sr->nargs; j++) {
			dr->args[j]->name = sr->args[j]->name;
			vmap_set(m, sr->args[j], dr->args[j]);
		}
		clone_region_into(a, k, sr, m, dr);
	}
	ir_insert_at(at, c);
	return c;
}

Value **ir_clone_region_body(Arena *a, IrKernel *k, const Region *src, ValueMap *m, InsertPoint at, int *nyield)
{
	const Inst *y = src->last;
	PKC_ASSERT(y && y->op == IR_YIELD);
	for (const Inst *i = src->first; i != y; i = i->next)
		ir_clone_inst(a, k, i, m, at);
	Value **out = arena_alloc(a, (size_t)(y->nargs + 1) * sizeof *out);
	for (int j = 0; j < y->nargs; j++)
		out[j] = vmap_lookup(m, y->args[j]);
	*nyield = y->nargs;
	return out;
}

/* ---- use replacement ---------------------------------------------------------- */

void ir_remap_uses(Region *r, const ValueMap *m)
{
	for (Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nargs; j++)
			i->args[j] = vmap_lookup(m, i->args[j]);
		for (int j = 0; j < i->nregions; j++)
			ir_remap_uses(i->regions[j], m);
	}
}

static void replace_in_region(Region *r, Value *from, Value *to)
{
	for (Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nargs; j++)
			if (i->args[j] == from)
				i->args[j] = to;
		for (int j = 0; j < i->nregions; j++)
			replace_in_region(i->regions[j], from, to);
	}
}

void ir_replace_all_uses(IrKernel *k, Value *from, Value *to)
{
	if (k->body)
		replace_in_region(k->body, from, to);
}
