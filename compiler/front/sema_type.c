/* sema_type.c - types written in the source (§4.1, §4.2): dtypes (a keyword
 * or a const holding one), constant dimensions evaluated in a constant
 * context, and the static shapes of annotations. */
#include "sema.h"

#include <string.h>

/* Enters a constant context (dims, block shapes, params) for one
 * expression and evaluates it. */
Ex eval_const(Sema *s, AstExpr *e, const char *clause)
{
	Sema saved = *s;
	s->ctx = CTX_CONST;
	s->clause = clause;
	s->region = s->dummy_r;
	s->k = s->dummy_k;
	Ex r = rvalue(s, sema_expr(s, e));
	if (r.kind == EX_VALUE) {
		error_at(s->cc, e->loc, "expected a compile-time constant [%s]", clause);
		r = ex_error(e->loc);
	}
	*s = saved;
	return r;
}

/* A positive constant integer (dims, block dims). */
bool positive_int(Sema *s, Ex e, const char *what, const char *clause, int64_t *out)
{
	if (e.kind == EX_ERROR)
		return false;
	if (e.kind != EX_CONST || !dtype_is_int(e.c.dtype) || e.c.i <= 0) {
		if (e.kind == EX_CONST && dtype_is_int(e.c.dtype))
			error_at(s->cc, e.loc, "%s must be positive, found %lld [%s]", what, (long long)e.c.i, clause);
		else
			error_at(s->cc, e.loc, "%s must be a positive integer constant, found %s [%s]", what, ex_type_str(s, &e),
			         clause);
		return false;
	}
	*out = e.c.i;
	return true;
}

/* The dtype of a type: a dtype keyword, or the name of a const holding
 * one (const DT = f16; x: in DT[n], §4.3).  DT_NONE after an error. */
DType type_dtype(Sema *s, const AstType *t)
{
	if (!t->dtype_name)
		return t->dtype;
	Loc loc = t->loc;
	loc.len = (int)strlen(t->dtype_name);
	Binding *b = lookup(s, t->dtype_name);
	if (b && b->kind == B_CONST && (b->ex.kind == EX_DTYPE || b->ex.kind == EX_ERROR))
		return b->ex.kind == EX_DTYPE ? b->ex.dt : DT_NONE;
	if (b) {
		error_at(s->cc, loc, "'%s' is %s, not a dtype; a type starts with a dtype or a const holding one [§4.1]",
		         t->dtype_name, binding_desc(b));
		if (b->loc.line)
			note_at(s->cc, b->loc, "'%s' is declared here", t->dtype_name);
	} else if (!used_before_declaration(s, t->dtype_name, loc) &&
	           !report_pallas_name(s, "dtype", t->dtype_name, loc)) {
		error_at(s->cc, loc, "unknown dtype '%s'; a type starts with a dtype (f32, bf16, ...) or a const holding one [§4.1]",
		         t->dtype_name);
	}
	return DT_NONE;
}

/* The static shape of a type annotation (scratch, let, var). */
Type *static_type(Sema *s, AstType *t, const char *clause)
{
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->ndims + 1));
	DType dt = type_dtype(s, t);
	bool ok = dt != DT_NONE;
	if (t->any_shape) {
		error_at(s->cc, t->loc, "any shape ([...]) is only for the parameters and results of a fn; write the shape [%s]",
		         clause);
		return NULL;
	}
	for (int d = 0; d < t->ndims; d++)
		ok &= positive_int(s, eval_const(s, t->dims[d], clause), "a dimension", clause, &dims[d]);
	Type *r = ok ? type_tensor(s->a, dt, t->ndims, dims) : NULL;
	return r && check_fits(s, r, t->loc) ? r : NULL;
}
