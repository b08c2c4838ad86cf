/* sema_view.c - Ref views, x.at[idx] (lang-spec §7.5): Pallas' `ref.at[...]`.
 * A view is the access x[idx], not yet read; it is read or written when
 * indexed again, or passed to load, store or an atomic (§7.7, §7.8), which
 * take the access itself.  Indexing a view (x.at[a][b], x.at[a].at[b])
 * composes the two index lists into one access of x (compose). */
#include "sema.h"

#include <string.h>

static const int64_t *const_int_of(const Value *v)
{
	return v->def && v->def->op == IR_CONST && dtype_is_int(v->type->dtype) ? &v->def->ival : NULL;
}

/* start + i, an index into the Ref from the view's slice start and an index
 * into the view (folded when both are constants, so that lower-refs can
 * still prove a constant index inside its dim). */
static Value *offset(Sema *s, Value *start, Value *i, Loc loc)
{
	const int64_t *a = const_int_of(start), *b = const_int_of(i);
	if (a && b && i->type->dtype == DT_I32)
		return emit_const(s, const_int(*a + *b, DT_I32, false), type_scalar(s->a, DT_I32), loc);
	Ex sum = sema_binop(s, &bin_add, loc, ex_value(start, false, loc), ex_value(i, false, loc));
	return sum.kind == EX_ERROR ? NULL : as_value(s, sum);
}

/* The view's index ix, relative to the view, as one access of the Ref:
 * ix is read against a stand-in Ref of the view's shape (the view's ':'
 * and slice dims), and each of its indexers lands on the Ref dim that view
 * dim came from, its start offset by the view's slice start.  Gathers are
 * not composed (the view's or ix's): index the Ref once. */
static Access *compose(Sema *s, const Access *view, AstExpr *ix)
{
	int rank = view->nidx, vr = 0;
	int *from = arena_alloc(s->a, sizeof(int) * (size_t)(rank + 1)); /* Ref dim of each view dim */
	const Type *rt = view->ref->type;
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	const char **syms = arena_alloc(s->a, sizeof(char *) * (size_t)(rank + 1));
	for (int d = 0; d < rank; d++) {
		IndexKind k = view->idx[d].kind;
		if (k == IDX_GATHER) {
			error_at(s->cc, ix->loc, "a view with a gather index cannot be indexed again: index the Ref once [§7.5]");
			return NULL;
		}
		if (k == IDX_POINT)
			continue;
		from[vr] = d;
		syms[vr] = rt->syms ? rt->syms[d] : NULL;
		dims[vr++] = k == IDX_SLICE ? view->idx[d].size : rt->dims[d];
	}
	Value *stand_in = arena_alloc(s->a, sizeof *stand_in); /* never emitted: only its type is read */
	stand_in->type = type_ref(s->a, rt->dtype, vr, dims, syms, rt->space);
	Access *in = build_access(s, (Ex){.kind = EX_REF, .v = stand_in, .b = view->binding, .loc = ix->loc}, ix);
	if (!in)
		return NULL;
	Value **vop = arena_alloc(s->a, sizeof(Value *) * (size_t)(rank + 1)); /* the view's op of each Ref dim */
	Value **iop = arena_alloc(s->a, sizeof(Value *) * (size_t)(vr + 1));   /* ix's op of each view dim */
	for (int d = 0, j = 0; d < rank; d++)
		if (view->idx[d].kind != IDX_FULL)
			vop[d] = view->ops[j++];
	for (int d = 0, j = 0; d < vr; d++) {
		if (in->idx[d].kind == IDX_GATHER) {
			error_at(s->cc, ix->loc, "a gather inside a view: index the Ref once [§7.5]");
			return NULL;
		}
		if (in->idx[d].kind != IDX_FULL)
			iop[d] = in->ops[j++];
	}
	Access *acc = arena_alloc(s->a, sizeof *acc);
	*acc = *view;
	acc->idx = arena_alloc(s->a, sizeof(Indexer) * (size_t)(rank + 1));
	memcpy(acc->idx, view->idx, sizeof(Indexer) * (size_t)rank);
	acc->ops = vals(s, rank);
	acc->nops = 0;
	acc->type = in->type;
	acc->dyn_dim = in->dyn_dim >= 0 ? from[in->dyn_dim] : in->dyn_dim;
	acc->loc = ix->loc;
	for (int j = 0; j < vr; j++) {
		int d = from[j];
		Indexer x = in->idx[j];
		if (x.kind == IDX_FULL)
			continue;
		Value *op = iop[j];
		if (view->idx[d].kind == IDX_SLICE && !(op = offset(s, vop[d], op, ix->loc)))
			return NULL;
		acc->idx[d] = x;
		vop[d] = op;
	}
	for (int d = 0; d < rank; d++)
		if (acc->idx[d].kind != IDX_FULL)
			acc->ops[acc->nops++] = vop[d];
	return acc;
}

Ex sema_ref_view(Sema *s, AstExpr *e)
{
	AstExpr *f = e->lhs;
	Ex base = sema_expr(s, f->lhs);
	if (base.kind == EX_ERROR)
		return base;
	if (base.kind == EX_ACCESS && base.acc->view) { /* x.at[a].at[b]: a view of x */
		Access *acc = compose(s, base.acc, e);
		if (!acc)
			return ex_error(e->loc);
		return (Ex){.kind = EX_ACCESS, .loc = e->loc, .acc = acc, .b = base.b};
	}
	if (base.kind != EX_REF) {
		error_at(s->cc, f->loc, "'.at' makes a view of a Ref, and this is %s: index it directly [§7.5]",
		         ex_type_str(s, &base));
		return ex_error(e->loc);
	}
	Access *acc = build_access(s, base, e);
	if (!acc)
		return ex_error(e->loc);
	acc->view = true;
	return (Ex){.kind = EX_ACCESS, .loc = e->loc, .acc = acc, .b = base.b};
}

/* view[...], view[:, :]: the whole view, an access like x[idx]. */
Ex sema_view_index(Sema *s, Ex view, AstExpr *e)
{
	bool whole = true;
	for (int i = 0; i < e->nitems; i++) {
		const AstExpr *it = e->items[i];
		whole &= it->kind == AE_ELLIPSIS || (it->kind == AE_SLICE && !it->lhs && !it->rhs && !it->step);
	}
	Access *acc = arena_alloc(s->a, sizeof *acc);
	if (!whole) { /* x.at[a][b]: selecting inside the view */
		if (!(acc = compose(s, view.acc, e)))
			return ex_error(e->loc);
	} else
		*acc = *view.acc;
	acc->view = false;
	acc->loc = e->loc;
	view.acc = acc;
	view.loc = e->loc;
	return view;
}
