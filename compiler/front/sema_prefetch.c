/* sema_prefetch.c - scalar prefetch (§5.11): a parameter `ids: prefetch
 * i32[G]` is a read-only integer array that every index map may read
 * (Pallas' PrefetchScalarGridSpec), and that the body sees whole.
 *
 * In the IR it is an operand of mode PM_PREFETCH without a spec; every
 * index map takes the whole-array Refs of the prefetch operands as
 * arguments after its program ids (as Mosaic's transform functions take
 * the SMEM prefetch memrefs), and reads them with point loads only.  An
 * index map reads them by their names, or by the names of its parameters
 * after the program ids, as Pallas' index maps receive them. */
#include "sema.h"

bool prefetch_param_check(Sema *s, const AstParam *p, DType dt)
{
	if (dtype_is_int(dt))
		return true;
	error_at(s->cc, p->type->loc, "prefetch parameter '%s' must have an integer dtype (block indices are integers), "
	         "found %s [§5.11]", p->name, dtype_str(dt));
	return false;
}

bool prefetch_spec_check(Sema *s, const Binding *b, Loc at)
{
	if (b->mode != PM_PREFETCH)
		return true;
	error_at(s->cc, at, "spec for '%s': a prefetch array is seen whole, in the index maps and in the body; "
	         "it takes no spec [§5.11]", b->name);
	note_at(s->cc, b->loc, "'%s' is declared here", b->name);
	return false;
}

int prefetch_map_pids(Sema *s, const IrKernel *k, const AstSpec *sp)
{
	(void)s;
	int npf = ir_prefetch_count(k);
	return npf > 0 && sp->npids == k->ngrid + npf ? k->ngrid : sp->npids;
}

void prefetch_pids_note(Sema *s, const IrKernel *k, Loc loc)
{
	int npf = ir_prefetch_count(k);
	if (npf > 0)
		note_at(s->cc, loc, "after the %d program id%s, an index map may name the %d prefetch array%s, as Pallas' "
		        "index maps receive them", k->ngrid, k->ngrid == 1 ? "" : "s", npf, npf == 1 ? "" : "s");
}

void prefetch_bind_param(Sema *s, Scope *ps, Scope *ks, const IrKernel *k, int p, const char *name, Loc loc)
{
	int o = 0;
	for (int seen = -1; o < k->noperands; o++)
		if (k->operands[o]->mode == PM_PREFETCH && ++seen == p)
			break;
	PKC_ASSERT(o < k->noperands);
	const Binding *decl = lookup_in(ks, k->operands[o]->name);
	Binding *b = bind(s, ps, B_OPERAND, name, loc);
	b->index = o;
	b->mode = PM_PREFETCH;
	b->poisoned = decl && decl->poisoned;
}

Region *prefetch_map_region(Sema *s, IrKernel *k, int npids)
{
	int npf = ir_prefetch_count(k);
	Type **types = arena_alloc(s->a, sizeof(Type *) * (size_t)(npids + npf + 1));
	for (int i = 0; i < npids; i++)
		types[i] = type_scalar(s->a, DT_I32);
	int n = npids;
	for (int o = 0; o < k->noperands; o++)
		if (k->operands[o]->mode == PM_PREFETCH)
			types[n++] = k->operands[o]->array;
	Region *r = ir_region_new(s->a, k, n, types);
	/* s->refs: the Ref of each prefetch operand, by operand index (the
	 * others are not visible in an index map). */
	s->refs = arena_alloc(s->a, sizeof(Value *) * (size_t)(k->noperands + 1));
	n = npids;
	for (int o = 0; o < k->noperands; o++)
		if (k->operands[o]->mode == PM_PREFETCH) {
			name_arg(r, n, k->operands[o]->name);
			s->refs[o] = r->args[n++];
		}
	return r;
}

Ex prefetch_map_ref(Sema *s, const Binding *b, Loc loc)
{
	if (b->mode == PM_PREFETCH) {
		Ex e = {.kind = EX_REF, .loc = loc, .b = b, .v = s->refs[b->index]};
		return e;
	}
	error_at(s->cc, loc, "'%s' is an array parameter; an index map reads only prefetch arrays (declare it "
	         "'%s: prefetch ...' if it holds block indices) [§5.11]", b->name, b->name);
	note_at(s->cc, b->loc, "'%s' is declared here", b->name);
	return ex_error(loc);
}

bool prefetch_map_read_ok(Sema *s, const Access *acc, Loc loc)
{
	if (acc->type && acc->type->rank == 0)
		return true;
	const char *n = acc->binding ? acc->binding->name : "ref";
	error_at(s->cc, loc, "an index map reads one element of a prefetch array at a time: index every dim "
	         "with a scalar, e.g. %s[i] [§5.11]", n);
	return false;
}

bool prefetch_write_error(Sema *s, const Binding *b, Loc loc, const char *verb)
{
	error_at(s->cc, loc, "cannot %s '%s': a prefetch array is read-only [§5.11]", verb, b->name);
	note_at(s->cc, b->loc, "'%s' is declared here", b->name);
	return false;
}
