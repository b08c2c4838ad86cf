/* sema_view.c - Ref views, x.at[idx] (lang-spec §7.5): Pallas' `ref.at[...]`
 * as far as .pk has it.  A view is the access x[idx], not yet read; it is
 * read or written when indexed again with ':' or '...', or passed to load,
 * store or an atomic (§7.7, §7.8), which take the access itself. */
#include "sema.h"

#include <string.h>

Ex sema_ref_view(Sema *s, AstExpr *e)
{
	AstExpr *f = e->lhs;
	Ex base = sema_expr(s, f->lhs);
	if (base.kind == EX_ERROR)
		return base;
	if (base.kind == EX_ACCESS && base.acc->view) {
		error_at(s->cc, f->loc, "a view of a view (x.at[a].at[b]): index the Ref once, x.at[...] [§7.5]");
		return ex_error(e->loc);
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
	for (int i = 0; i < e->nitems; i++) {
		const AstExpr *it = e->items[i];
		if (it->kind != AE_ELLIPSIS && !(it->kind == AE_SLICE && !it->lhs && !it->rhs)) {
			error_at(s->cc, it->loc, "a view x.at[...] is indexed only with ':' and '...' (the whole view); "
			         "to select in it, index the Ref once [§7.5]");
			return ex_error(e->loc);
		}
	}
	Access *acc = arena_alloc(s->a, sizeof *acc);
	*acc = *view.acc;
	acc->view = false;
	acc->loc = e->loc;
	view.acc = acc;
	view.loc = e->loc;
	return view;
}
