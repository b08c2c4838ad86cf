/* sema.c - semantic analysis: the file's consts (with -D overrides), each
 * kernel's parameters and clauses (grid, semantics, specs, scratch, params,
 * requires) and its body, fns, building the typed IR of ir.h.
 *
 * Statements are in sema_stmt.c, types written in the source in
 * sema_type.c, names in sema_scope.c, expressions in sema_expr.c, Ref access
 * in sema_access.c, builtins in sema_builtins.c. */
#include "sema.h"

#include <stdlib.h>
#include <string.h>

/* ---- -D NAME=VALUE ------------------------------------------------------- */

/* The index of the -D of `name` in cc->defines, or -1. */
static int find_define(Sema *s, const char *name)
{
	for (int i = 0; i < s->cc->defines.len; i++)
		if (((Define *)s->cc->defines.items[i])->name == name)
			return i;
	return -1;
}

/* The pseudo-file "<command line>": line i is the i-th -D, "-DNAME=VALUE"
 * (a newline in a value reads as a space), so that the real parser reads
 * the values and their diagnostics point into them with a caret. */
static const Source *command_line(Compiler *cc)
{
	StrBuf b = {0};
	for (int i = 0; i < cc->defines.len; i++) {
		const Define *d = cc->defines.items[i];
		size_t start = b.len;
		strbuf_printf(&b, "%s-D%s=%s", i ? "\n" : "", d->name, d->value);
		for (size_t k = start + 1; k < b.len; k++)
			if (b.data[k] == '\n' || b.data[k] == '\r')
				b.data[k] = ' ';
	}
	const Source *src = source_from_memory(cc, "<command line>", b.data ? b.data : "", b.len);
	free(b.data);
	return src;
}

/* Whether e is made of literals and operators only, as a -D value must be
 * (§4.3), a dtype name counting as a literal (-D DT=bf16 for `const DT =
 * f16;`); reports the first other construct, with the .pk spelling of a
 * Pallas one.  The parser bounds the depth. */
static bool literal_expr(Sema *s, const AstExpr *e)
{
	switch (e->kind) {
	case AE_INT: case AE_FLOAT: case AE_BOOL: case AE_DTYPE:
		return true;
	case AE_UNARY:
		return literal_expr(s, e->lhs);
	case AE_BINARY:
		return literal_expr(s, e->lhs) && literal_expr(s, e->rhs);
	default:
		if (e->kind == AE_NAME && report_pallas_name(s, "name", e->name, e->loc))
			return false; /* -D DT=bfloat16, -D FLAG=True (§10.3) */
		error_at(s->cc, e->loc, "a -D value is made of literals and operators only [§4.3]");
		return false;
	}
}

/* The value of the i-th -D, parsed from "<command line>" (NULL after an error). */
static AstExpr *define_expr(Sema *s, int i)
{
	const Define *d = s->cc->defines.items[i];
	int col = (int)strlen(d->name) + 4; /* after "-DNAME=" */
	AstExpr *e = parse_expr_line(s->cc, s->cmdline, i + 1, col);
	return e && literal_expr(s, e) ? e : NULL;
}

/* ---- consts (§4.3) ----------------------------------------------------------- */

/* A const's value: a scalar, or a dtype (const DT = f16, §4.3). */
static Ex const_init_value(Sema *s, Ex e)
{
	return e.kind == EX_DTYPE ? e : rvalue(s, e);
}

/* Evaluates a const declaration (or its -D override) into b->ex. */
static void eval_const_decl(Sema *s, Binding *b)
{
	Sema saved = *s;
	s->ctx = CTX_CONST;
	s->clause = "§4.3";
	s->scope = s->file;
	s->k = s->dummy_k;
	s->region = s->dummy_r;
	AstConst *kc = b->konst;
	AstExpr *value = kc->value;
	int d = find_define(s, b->name);
	if (d >= 0) {
		((Define *)s->cc->defines.items[d])->used = true;
		value = define_expr(s, d);
	}
	Ex e = value ? const_init_value(s, sema_expr(s, value)) : ex_error(kc->loc);
	if (e.kind == EX_VALUE) {
		error_at(s->cc, value->loc, "the value of constant '%s' is not a compile-time constant [§4.3]", b->name);
		e = ex_error(kc->loc);
	}
	if (e.kind == EX_CONST && kc->dtype != DT_NONE) {
		if (!implicitly_converts(e.c.dtype, e.c.weak, kc->dtype)) {
			error_at(s->cc, value->loc, "constant '%s' of type %s cannot be initialized with %s%s [§4.3]",
			         b->name, dtype_str(kc->dtype), e.c.weak ? "a weak " : "", dtype_str(e.c.dtype));
			e = ex_error(kc->loc);
		} else if (!const_convert(s, &e.c, kc->dtype, false, value->loc)) {
			e = ex_error(kc->loc);
		}
	}
	if (e.kind == EX_DTYPE && kc->dtype != DT_NONE) {
		error_at(s->cc, value->loc, "constant '%s' of type %s cannot hold the dtype %s [§4.3]",
		         b->name, dtype_str(kc->dtype), dtype_str(e.dt));
		e = ex_error(kc->loc);
	} else if (e.kind != EX_CONST && e.kind != EX_DTYPE && e.kind != EX_ERROR) {
		error_at(s->cc, value->loc, "the value of constant '%s' must be a scalar constant or a dtype [§4.3]",
		         b->name);
		e = ex_error(kc->loc);
	}
	*s = saved;
	b->ex = e;
}

/* ---- helpers ------------------------------------------------------------------- */

static Scope *new_scope(Sema *s, Scope *parent)
{
	Scope *sc = arena_alloc(s->a, sizeof *sc);
	sc->parent = parent;
	return sc;
}

/* ---- kernels ----------------------------------------------------------------- */

/* Growable lists of a kernel under construction. */
typedef struct KernelBuild {
	Vec operands;    /* IrOperand* */
	Vec scalars;     /* IrScalar* */
	Vec sizes;       /* const char*: size symbol names */
	Vec size_locs;   /* Loc*: where each first appears */
	Vec scratch;     /* IrScratch* */
	Vec order;       /* KParamKind, as intptr_t */
	Vec order_index; /* int, as intptr_t */
	AstSpec **spec_of; /* per operand: its spec, for duplicate notes */
} KernelBuild;

static void push_order(Sema *s, KernelBuild *kb, KParamKind kind, int index)
{
	vec_push(s->a, &kb->order, (void *)(intptr_t)kind);
	vec_push(s->a, &kb->order_index, (void *)(intptr_t)index);
}

/* Declares a kernel-level name (parameter, scratch): not a builtin, not a
 * const, once per kernel (§5.10). */
static Binding *declare(Sema *s, Scope *ks, BindKind kind, const char *name, Loc loc)
{
	return check_new_name(s, ks, name, loc) ? bind(s, ks, kind, name, loc) : NULL;
}

/* The first name in a dimension expression that is not a known constant
 * (size symbols cannot be combined arithmetically: n * 2 is not a size). */
static const AstExpr *non_const_name(Sema *s, const AstExpr *e)
{
	if (!e)
		return NULL;
	if (e->kind == AE_NAME) {
		Binding *b = lookup(s, e->name);
		return b && b->kind == B_CONST ? NULL : e;
	}
	const AstExpr *r = e->kind == AE_CALL ? NULL : non_const_name(s, e->lhs);
	if (!r)
		r = non_const_name(s, e->rhs);
	for (int i = 0; !r && i < e->nitems; i++)
		r = non_const_name(s, e->items[i]);
	for (int i = 0; !r && i < e->nargs; i++)
		r = non_const_name(s, e->args[i].value);
	return r;
}

/* One dimension of an array parameter: a constant, or a NAME that is not
 * a constant, which introduces (or reuses) a size symbol (§4.2). */
static int64_t param_dim(Sema *s, Scope *ks, KernelBuild *kb, AstExpr *e, const char **sym)
{
	*sym = NULL;
	if (e->kind == AE_NAME) {
		Binding *b = lookup(s, e->name);
		if (!b) {
			if (!check_new_name(s, NULL, e->name, e->loc) || used_before_declaration(s, e->name, e->loc))
				return 0;
			b = bind(s, ks, B_SIZE, e->name, e->loc);
			b->index = kb->sizes.len;
			vec_push(s->a, &kb->sizes, (void *)e->name);
			Loc *l = arena_alloc(s->a, sizeof *l);
			*l = e->loc;
			vec_push(s->a, &kb->size_locs, l);
		}
		if (b->kind == B_SIZE) {
			*sym = b->name;
			return DIM_DYNAMIC;
		}
		if (b->kind != B_CONST) {
			error_at(s->cc, e->loc, "'%s' is %s; a dimension must be a constant or a size name [§4.2]", e->name,
			         b->kind == B_SCALAR ? "a scalar parameter" : b->kind == B_OPERAND ? "an array parameter"
			                                                                          : "not a size");
			note_at(s->cc, b->loc, "'%s' is declared here", e->name);
			return 0;
		}
	}
	const AstExpr *bad = non_const_name(s, e);
	if (bad) {
		error_at(s->cc, bad->loc, "'%s' is not a constant: an array dimension is a constant expression or a single size name [§4.2]",
		         bad->name);
		return 0;
	}
	int64_t v;
	if (!positive_int(s, eval_const(s, e, "§4.2"), "an array dimension", "§4.2", &v))
		return 0;
	return v;
}

static void sema_params(Sema *s, AstKernel *ak, Scope *ks, KernelBuild *kb)
{
	for (int i = 0; i < ak->nparams; i++) {
		AstParam *p = ak->params[i];
		AstType *t = p->type;
		DType dt = type_dtype(s, t);
		bool bad_dtype = dt == DT_NONE;
		if (t->any_shape) {
			error_at(s->cc, t->loc, "any shape ([...]) is only for the parameters and results of a fn; a kernel "
			         "parameter has a shape of constants and size names [§5.1]");
			bad_dtype = true;
		}
		if (bad_dtype)
			dt = DT_F32; /* keep going with a well-formed type; uses are poison */
		if (p->mode == PM_SCALAR) {
			if (t->has_shape)
				error_at(s->cc, t->loc, "scalar parameter '%s' cannot have a shape; an array parameter needs a mode: in, out or inout [§5.1]",
				         p->name);
			Binding *b = declare(s, ks, B_SCALAR, p->name, p->loc);
			if (!b)
				continue;
			b->poisoned = bad_dtype;
			IrScalar *sc = arena_alloc(s->a, sizeof *sc);
			sc->name = p->name;
			sc->loc = p->loc;
			sc->dtype = dt;
			b->index = kb->scalars.len;
			vec_push(s->a, &kb->scalars, sc);
			push_order(s, kb, KP_SCALAR, b->index);
			continue;
		}
		if (!t->has_shape)
			error_at(s->cc, t->loc, "array parameter '%s' needs a shape, e.g. %s[1] (%s[] for one element) [§5.1]",
			         p->name, dtype_str(dt), dtype_str(dt));
		if (p->mode == PM_PREFETCH && !bad_dtype && !prefetch_param_check(s, p, dt))
			bad_dtype = true;
		int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->ndims + 1));
		const char **syms = arena_alloc(s->a, sizeof(char *) * (size_t)(t->ndims + 1));
		bool dynamic = false, ok = true;
		for (int d = 0; d < t->ndims; d++) {
			dims[d] = param_dim(s, ks, kb, t->dims[d], &syms[d]);
			dynamic |= syms[d] != NULL;
			ok &= dims[d] != 0;
		}
		Binding *b = declare(s, ks, B_OPERAND, p->name, p->loc);
		if (!b)
			continue;
		b->poisoned = bad_dtype;
		IrOperand *op = arena_alloc(s->a, sizeof *op);
		op->name = p->name;
		op->loc = p->loc;
		op->mode = p->mode;
		for (int d = 0; !ok && d < t->ndims; d++)
			if (dims[d] == 0)
				dims[d] = 1; /* keep going with a well-formed type */
		op->array = type_ref(s->a, dt, t->ndims, dims, dynamic ? syms : NULL, SPACE_GLOBAL);
		if (ok && !check_fits(s, op->array, t->loc))
			b->poisoned = true; /* no errors about its uses */
		b->index = kb->operands.len;
		b->mode = p->mode;
		vec_push(s->a, &kb->operands, op);
		push_order(s, kb, KP_OPERAND, b->index);
	}
	for (int i = 0; i < kb->sizes.len; i++)
		push_order(s, kb, KP_SIZE, i);
}

static void sema_scratch(Sema *s, AstKernel *ak, Scope *ks, KernelBuild *kb)
{
	for (int i = 0; i < ak->nscratch; i++) {
		AstScratch *sc = ak->scratch[i];
		Type *t = static_type(s, sc->type, "§5.7");
		if (t && t->rank == 0) {
			error_at(s->cc, sc->type->loc, "scratch buffer '%s' needs a shape, e.g. %s[1] [§5.7]", sc->name,
			         dtype_str(t->dtype));
			t = NULL;
		}
		Binding *b = declare(s, ks, B_SCRATCH, sc->name, sc->loc);
		if (b && !t)
			b->poisoned = true; /* its uses are not checked against a guess */
		if (!b || !t)
			continue;
		IrScratch *x = arena_alloc(s->a, sizeof *x);
		x->name = sc->name;
		x->loc = sc->loc;
		x->type = type_ref(s->a, t->dtype, t->rank, t->dims, NULL, SPACE_SCRATCH);
		b->index = kb->scratch.len;
		vec_push(s->a, &kb->scratch, x);
	}
}

/* A region whose arguments are the sizes (i64) then the scalars: grid and
 * requires are evaluated in it. */
static Region *launch_region(Sema *s, IrKernel *k)
{
	int n = k->nsizes + k->nscalars;
	Type **types = arena_alloc(s->a, sizeof(Type *) * (size_t)(n + 1));
	for (int i = 0; i < k->nsizes; i++)
		types[i] = type_scalar(s->a, DT_I64);
	for (int i = 0; i < k->nscalars; i++)
		types[k->nsizes + i] = type_scalar(s->a, k->scalars[i]->dtype);
	Region *r = ir_region_new(s->a, k, n, types);
	for (int i = 0; i < k->nsizes; i++)
		name_arg(r, i, k->sizes[i]);
	for (int i = 0; i < k->nscalars; i++)
		name_arg(r, k->nsizes + i, k->scalars[i]->name);
	s->region = r;
	s->sizes = r->args;
	s->scalars = r->args + k->nsizes;
	return r;
}

static void sema_grid(Sema *s, AstKernel *ak, IrKernel *k)
{
	Region *r = launch_region(s, k);
	s->ctx = CTX_GRID;
	s->clause = "§5.3";
	Value **ext = vals(s, ak->ngrid);
	int n = 0;
	for (int i = 0; i < ak->ngrid; i++) {
		Ex e = sema_value_expr(s, ak->grid[i]);
		if (e.kind == EX_ERROR)
			continue;
		if (!dtype_is_int(ex_dtype(&e)) || ex_rank(&e) != 0) {
			error_at(s->cc, e.loc, "a grid extent must be an integer scalar, found %s [§5.3]", ex_type_str(s, &e));
			continue;
		}
		if (e.kind == EX_CONST && e.c.i <= 0) {
			error_at(s->cc, e.loc, "a grid extent must be positive, found %lld [§5.3]", (long long)e.c.i);
			continue;
		}
		ext[n++] = to_value(s, e, type_scalar(s->a, DT_I64));
	}
	ir_yield(s->a, k, r, ak->has_grid ? ak->grid_loc : ak->loc, n, ext);
	k->grid = r;
	k->ngrid = ak->ngrid;
	k->semantics = arena_alloc(s->a, sizeof(AxisSemantics) * (size_t)(k->ngrid + 1));
	if (ak->has_semantics) {
		if (ak->nsemantics != k->ngrid)
			error_at(s->cc, ak->semantics_loc, "semantics lists %d ax%s, but the grid has rank %d [§5.4]",
			         ak->nsemantics, ak->nsemantics == 1 ? "is" : "es", k->ngrid);
		for (int i = 0; i < ak->nsemantics && i < k->ngrid; i++)
			k->semantics[i] = ak->semantics[i];
	}
}

/* The index map of a spec (§5.6): one i32 program id per grid axis in
 * (and the prefetch arrays, §5.11), one i32 block index per array dim out;
 * only the pids, consts and reads of prefetch arrays. */
static Region *sema_index_map(Sema *s, AstSpec *sp, IrKernel *k, Scope *ks, IrOperand *op)
{
	int npids = prefetch_map_pids(s, k, sp); /* the Pallas form names the prefetch Refs after them (§5.11) */
	if (npids != k->ngrid) {
		error_at(s->cc, npids ? sp->pid_locs[0] : sp->operand_loc,
		         "the index map of '%s' takes %d program id%s, but the grid has rank %d [§5.6]", sp->operand, npids,
		         npids == 1 ? "" : "s", k->ngrid);
		prefetch_pids_note(s, k, sp->operand_loc);
	}
	Region *r = prefetch_map_region(s, k, npids); /* the pids, then the prefetch Refs (§5.11) */
	Scope *ps = new_scope(s, ks);
	for (int i = 0; i < sp->npids; i++) {
		/* Distinct, not a builtin, not a const; kernel-scope names may be
		 * reused (they are not visible in index maps, §5.10). */
		const char *name = sp->pids[i];
		Binding *prev = lookup_in(ps, name);
		if (!prev)
			prev = lookup_in(s->file, name);
		name_arg(r, i, name);
		if (!check_new_name(s, NULL, name, sp->pid_locs[i]))
			continue;
		if (prev) {
			error_at(s->cc, sp->pid_locs[i], "'%s' is already declared (as %s) [§5.10]", name, binding_desc(prev));
			note_at(s->cc, prev->loc, "'%s' is declared here", name);
			continue;
		}
		if (i >= npids)
			prefetch_bind_param(s, ps, ks, k, i - npids, name, sp->pid_locs[i]);
		else
			bind(s, ps, B_PID, name, sp->pid_locs[i])->index = i;
	}
	s->scope = ps;
	s->ctx = CTX_INDEX_MAP;
	s->clause = "§5.6";
	s->region = r;
	s->pids = r->args;
	int rank = op->array->rank;
	if (sp->nindex != rank)
		error_at(s->cc, sp->operand_loc, "the index map of '%s' returns %d block ind%s, but '%s' has rank %d [§5.6]",
		         sp->operand, sp->nindex, sp->nindex == 1 ? "ex" : "ices", sp->operand, rank);
	Value **out = vals(s, sp->nindex);
	int n = 0;
	for (int i = 0; i < sp->nindex; i++) {
		Ex e = sema_value_expr(s, sp->index[i]);
		if (e.kind == EX_ERROR)
			continue;
		if (!dtype_is_int(ex_dtype(&e)) || ex_rank(&e) != 0) {
			error_at(s->cc, e.loc, "a block index must be an integer scalar, found %s [§5.6]", ex_type_str(s, &e));
			continue;
		}
		if (e.kind == EX_CONST && e.c.i < 0) {
			error_at(s->cc, e.loc, "a block index must not be negative, found %lld [§5.6]", (long long)e.c.i);
			continue;
		}
		int64_t off; /* the element offset lower-refs folds */
		if (e.kind == EX_CONST && i < rank && !ck_mul(e.c.i, op->block[i], &off)) {
			error_at(s->cc, e.loc, "block index %lld times the block dim %lld is past any array [§5.6]",
			         (long long)e.c.i, (long long)op->block[i]);
			continue;
		}
		out[n++] = to_value(s, e, type_scalar(s->a, DT_I32));
	}
	ir_yield(s->a, k, r, sp->loc, n, out);
	s->scope = ks;
	return r;
}

static void sema_spec(Sema *s, AstSpec *sp, IrKernel *k, Scope *ks, KernelBuild *kb)
{
	Binding *b = lookup_in(ks, sp->operand);
	if (!b || b->kind != B_OPERAND) {
		if (!b) {
			Sema saved = *s;
			s->scope = ks;
			report_unknown_name(s, sp->operand, sp->operand_loc, "parameter", NULL, 0);
			*s = saved;
		} else {
			error_at(s->cc, sp->operand_loc, "spec for '%s': it is %s, not an array parameter [§5.5]", sp->operand,
			         b->kind == B_SCALAR ? "a scalar parameter" : b->kind == B_SIZE ? "a size symbol" : "a scratch buffer");
			note_at(s->cc, b->loc, "'%s' is declared here", sp->operand);
		}
		return;
	}
	if (!prefetch_spec_check(s, b, sp->operand_loc))
		return;
	IrOperand *op = k->operands[b->index];
	if (kb->spec_of[b->index]) {
		error_at(s->cc, sp->operand_loc, "a second spec for '%s' [§5.5]", sp->operand);
		note_at(s->cc, kb->spec_of[b->index]->operand_loc, "the first spec for '%s' is here", sp->operand);
		return;
	}
	kb->spec_of[b->index] = sp;
	int rank = op->array->rank;
	if (sp->nblock != rank) {
		error_at(s->cc, sp->operand_loc, "the spec for '%s' has %d block dim%s, but '%s' has rank %d (%s) [§5.5]",
		         sp->operand, sp->nblock, sp->nblock == 1 ? "" : "s", sp->operand, rank, type_str(s->a, op->array));
		b->poisoned = true; /* its block view is unknown */
		return;
	}
	op->block = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	op->squeezed = arena_alloc(s->a, sizeof(bool) * (size_t)(rank + 1));
	for (int d = 0; d < rank; d++) {
		AstExpr *e = sp->block[d];
		if (e->kind == AE_NONE) {
			op->block[d] = 1;
			op->squeezed[d] = true;
			continue;
		}
		int64_t bd = 1;
		if (!positive_int(s, eval_const(s, e, "§5.5"), "a block dim", "§5.5", &bd))
			b->poisoned = true; /* the body's accesses would be checked against a guess */
		/* Any extent, whether or not it divides a static dim (or exceeds
		 * it): the last block along the dim is partial (§5.5, §8). */
		op->block[d] = bd;
	}
	if (!check_fits(s, type_tensor(s->a, op->array->dtype, rank, op->block), sp->loc))
		b->poisoned = true;
	op->index_map = sema_index_map(s, sp, k, ks, op);
	op->has_spec = true; /* even after an error: the body sees the block it asked for */
}

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static void sema_cparams(Sema *s, AstKernel *ak, IrKernel *k)
{
	static const char *const keys[] = {"num_warps", "num_stages"};
	const AstKeyVal *seen[2] = {NULL, NULL};
	for (int i = 0; i < ak->ncparams; i++) {
		AstKeyVal *kv = ak->cparams[i];
		int which = strcmp(kv->key, keys[0]) == 0 ? 0 : strcmp(kv->key, keys[1]) == 0 ? 1 : -1;
		if (which < 0) {
			const char *sug = closest_name(kv->key, keys, 2);
			if (sug)
				error_at(s->cc, kv->loc, "unknown compile parameter '%s'; did you mean '%s'? [§5.8]", kv->key, sug);
			else
				error_at(s->cc, kv->loc, "unknown compile parameter '%s'; expected num_warps or num_stages [§5.8]",
				         kv->key);
			continue;
		}
		if (seen[which]) {
			error_at(s->cc, kv->loc, "compile parameter '%s' is given twice [§5.8]", kv->key);
			note_at(s->cc, seen[which]->loc, "first given here");
			continue;
		}
		seen[which] = kv;
		int64_t v;
		if (!const_int_arg(s, eval_const(s, kv->value, "§5.8"), kv->key, "§5.8", &v))
			continue;
		if (which == 0 && !(is_pow2(v) && v <= 32))
			error_at(s->cc, kv->value->loc, "num_warps must be a power of 2 from 1 to 32, found %lld [§5.8]",
			         (long long)v);
		else if (which == 1 && !(v >= 1 && v <= 8))
			error_at(s->cc, kv->value->loc, "num_stages must be from 1 to 8, found %lld [§5.8]", (long long)v);
		else if (which == 0)
			k->num_warps = (int)v;
		else
			k->num_stages = (int)v;
	}
}

static void sema_requires(Sema *s, AstKernel *ak, IrKernel *k)
{
	if (ak->nrequires == 0)
		return;
	Region *r = launch_region(s, k);
	s->ctx = CTX_GRID;
	s->clause = "§5.9";
	Value **v = vals(s, ak->nrequires);
	k->require_locs = arena_alloc(s->a, sizeof(Loc) * (size_t)ak->nrequires);
	int n = 0;
	for (int i = 0; i < ak->nrequires; i++) {
		Ex e = sema_value_expr(s, ak->requires[i]);
		if (e.kind == EX_CONST && e.c.dtype == DT_BOOL) { /* checked now: false is an error, true is dropped */
			if (!e.c.i)
				error_at(s->cc, ak->requires[i]->loc, "this requirement is always false [§5.9]");
			continue;
		}
		Value *c = condition(s, e, "a requires clause", "§5.9");
		if (!c)
			continue;
		k->require_locs[n] = ak->requires[i]->loc;
		v[n++] = c;
	}
	ir_yield(s->a, k, r, ak->loc, n, v);
	k->requires = n ? r : NULL;
	k->nrequires = n;
}

/* The body region: one Ref per operand (its block view, or the whole
 * array without a spec), the scalars, the sizes, the scratch Refs. */
static void sema_body(Sema *s, AstKernel *ak, IrKernel *k, Scope *ks)
{
	int nop = k->noperands, nsc = k->nscalars, nsz = k->nsizes, nscr = k->nscratch;
	int n = nop + nsc + nsz + nscr;
	Type **types = arena_alloc(s->a, sizeof(Type *) * (size_t)(n + 1));
	for (int o = 0; o < nop; o++) {
		IrOperand *op = k->operands[o];
		const Type *a = op->array;
		if (!op->has_spec) {
			types[o] = op->array;
			continue;
		}
		int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(a->rank + 1));
		int r = 0;
		for (int d = 0; d < a->rank; d++)
			if (!op->squeezed[d])
				dims[r++] = op->block[d];
		types[o] = type_ref(s->a, a->dtype, r, dims, NULL, SPACE_GLOBAL);
	}
	for (int i = 0; i < nsc; i++)
		types[nop + i] = type_scalar(s->a, k->scalars[i]->dtype);
	for (int i = 0; i < nsz; i++)
		types[nop + nsc + i] = type_scalar(s->a, DT_I64);
	for (int i = 0; i < nscr; i++)
		types[nop + nsc + nsz + i] = k->scratch[i]->type;
	Region *body = ir_region_new(s->a, k, n, types);
	for (int o = 0; o < nop; o++)
		name_arg(body, o, k->operands[o]->name);
	for (int i = 0; i < nsc; i++)
		name_arg(body, nop + i, k->scalars[i]->name);
	for (int i = 0; i < nsz; i++)
		name_arg(body, nop + nsc + i, k->sizes[i]);
	for (int i = 0; i < nscr; i++)
		name_arg(body, nop + nsc + nsz + i, k->scratch[i]->name);
	s->refs = body->args;
	s->scalars = body->args + nop;
	s->sizes = body->args + nop + nsc;
	s->scratch = body->args + nop + nsc + nsz;
	s->region = body;
	s->ctx = CTX_BODY;
	s->clause = "§5.10";
	s->scope = new_scope(s, ks);
	sema_stmts(s, ak->body, ak->nbody);
	ir_yield(s->a, k, body, ak->loc, 0, NULL);
	k->body = body;
	s->scope = ks;
}

static void *vec_copy(Sema *s, const Vec *v, size_t elem)
{
	void *out = arena_alloc(s->a, elem * (size_t)(v->len + 1));
	if (v->len)
		memcpy(out, v->items, sizeof(void *) * (size_t)v->len);
	return out;
}

static IrKernel *sema_kernel(Sema *s, AstKernel *ak)
{
	IrKernel *k = arena_alloc(s->a, sizeof *k);
	k->name = ak->name;
	k->loc = ak->loc;
	k->num_warps = 4;
	k->num_stages = 1;
	Scope *ks = new_scope(s, s->file);
	KernelBuild kb = {0};
	s->k = k;
	s->scope = ks;

	sema_params(s, ak, ks, &kb);
	bool writes = false;
	for (int i = 0; i < kb.operands.len; i++)
		writes |= !param_mode_readonly(((IrOperand *)kb.operands.items[i])->mode);
	if (!writes)
		warning_at(s->cc, ak->loc, "kernel '%s' has no out or inout parameter, so it has no effect [§5.1]", ak->name);
	k->operands = (IrOperand **)vec_copy(s, &kb.operands, sizeof(void *));
	k->noperands = kb.operands.len;
	k->scalars = (IrScalar **)vec_copy(s, &kb.scalars, sizeof(void *));
	k->nscalars = kb.scalars.len;
	k->sizes = (const char **)vec_copy(s, &kb.sizes, sizeof(void *));
	k->nsizes = kb.sizes.len;
	k->size_locs = arena_alloc(s->a, sizeof(Loc) * (size_t)(k->nsizes + 1));
	for (int i = 0; i < k->nsizes; i++)
		k->size_locs[i] = *(Loc *)kb.size_locs.items[i];
	k->norder = kb.order.len;
	k->order = arena_alloc(s->a, sizeof(KParamKind) * (size_t)(k->norder + 1));
	k->order_index = arena_alloc(s->a, sizeof(int) * (size_t)(k->norder + 1));
	for (int i = 0; i < k->norder; i++) {
		k->order[i] = (KParamKind)(intptr_t)kb.order.items[i];
		k->order_index[i] = (int)(intptr_t)kb.order_index.items[i];
	}

	sema_scratch(s, ak, ks, &kb);
	k->scratch = (IrScratch **)vec_copy(s, &kb.scratch, sizeof(void *));
	k->nscratch = kb.scratch.len;

	sema_grid(s, ak, k);
	kb.spec_of = arena_alloc(s->a, sizeof(AstSpec *) * (size_t)(k->noperands + 1));
	for (int i = 0; i < ak->nspecs && !s->cc->diag.stop; i++)
		sema_spec(s, ak->specs[i], k, ks, &kb);
	sema_cparams(s, ak, k);
	sema_requires(s, ak, k);
	if (!s->cc->diag.stop)
		sema_body(s, ak, k, ks);
	s->scope = s->file;
	s->k = s->dummy_k;
	return k;
}

/* ---- fn (§3.7) ------------------------------------------------------------------ */

/* Declares a fn: its name in the file scope (shared with consts and
 * kernels), its parameters checked once; the body is checked where it is
 * called (call_fn), against the file's names declared before the fn. */
static void sema_fn_decl(Sema *s, AstFn *fn, Vec *kernels)
{
	Scope *view = arena_alloc(s->a, sizeof *view);
	view->first = s->file->first; /* no index: lookups walk what was declared before */
	view->n = s->file->n;
	bool ok = true;
	for (int j = 0; j < kernels->len; j++)
		if (((IrKernel *)kernels->items[j])->name == fn->name) {
			error_at(s->cc, fn->loc, "'%s' is already declared (as a kernel); fns, consts and kernels share one namespace [§5.10]",
			         fn->name);
			ok = false;
		}
	ok = ok && check_new_name(s, s->file, fn->name, fn->loc);
	if (fn->nbody == 0 || fn->body[fn->nbody - 1]->kind != AS_RETURN) {
		error_at(s->cc, fn->loc, "fn '%s' must end with 'return value;' [§3.7]", fn->name);
		ok = false;
	}
	Scope ps = {.parent = view};
	for (int i = 0; i < fn->nparams; i++) {
		AstParam *p = fn->params[i];
		if (p->mode != PM_SCALAR) {
			error_at(s->cc, p->loc, "fn parameter '%s' is a value: drop '%s' (a fn cannot take a Ref) [§3.7]", p->name,
			         p->mode == PM_IN ? "in" : p->mode == PM_OUT ? "out" : p->mode == PM_INOUT ? "inout" : "prefetch");
			ok = false;
		}
		if (!check_new_name(s, &ps, p->name, p->loc))
			ok = false;
		else
			bind(s, &ps, B_LET, p->name, p->loc);
	}
	if (!ok)
		return;
	Binding *b = bind(s, s->file, B_FN, fn->name, fn->loc);
	b->fn = fn;
	b->view = view;
}

/* The type an argument or result converts to: the written type, its shape
 * taken from e for any shape ([...]). */
static Type *fn_slot_type(Sema *s, AstType *t, const Ex *e)
{
	if (!t->any_shape)
		return static_type(s, t, "§3.7");
	DType dt = type_dtype(s, t);
	return dt == DT_NONE ? NULL : type_tensor(s->a, dt, ex_rank(e), ex_dims(e));
}

Ex call_fn(Sema *s, Binding *fb, AstExpr *call)
{
	const AstFn *fn = fb->fn;
	int n = fn->nparams, npos = 0;
	Ex *args = arena_alloc(s->a, sizeof(Ex) * (size_t)(n + 1));
	bool *given = arena_alloc(s->a, (size_t)n + 1);
	bool bad = false;
	for (int i = 0; i < call->nargs; i++) {
		AstArg *a = &call->args[i];
		Ex e = sema_value_expr(s, a->value);
		bad |= e.kind == EX_ERROR;
		int k = a->name ? -1 : npos++;
		for (int j = 0; a->name && j < n; j++)
			if (fn->params[j]->name == a->name)
				k = j;
		if (k < 0 || k >= n || given[k]) {
			if (a->name && k >= 0)
				error_at(s->cc, a->loc, "argument '%s' of fn '%s' is given twice [§3.7]", a->name, fn->name);
			else if (a->name)
				error_at(s->cc, a->loc, "fn '%s' has no parameter '%s' [§3.7]", fn->name, a->name);
			else
				error_at(s->cc, a->loc, "fn '%s' takes %d argument%s [§3.7]", fn->name, n, n == 1 ? "" : "s");
			bad = true;
			continue;
		}
		args[k] = e;
		given[k] = true;
	}
	for (int j = 0; j < n && !bad; j++)
		if (!given[j]) {
			error_at(s->cc, call->loc, "missing argument '%s' of fn '%s' [§3.7]", fn->params[j]->name, fn->name);
			bad = true;
		}
	if (s->ctx != CTX_BODY) {
		error_at(s->cc, call->loc, "fn '%s' can only be called in a kernel body [§3.7]", fn->name);
		bad = true;
	}
	if (bad)
		return ex_error(call->loc);
	int errors = s->cc->diag.nerrors;
	Scope *caller = s->scope;
	struct LoopCtx *loop = s->loop;
	Scope fs = {.parent = fb->view};
	s->scope = &fs;
	s->loop = NULL;
	for (int j = 0; j < n; j++) {
		AstParam *p = fn->params[j];
		Type *t = fn_slot_type(s, p->type, &args[j]);
		Value *v = t ? coerce_value(s, args[j], t, arena_printf(s->a, "argument '%s' of fn '%s'", p->name, fn->name),
		                            "§3.7")
		             : NULL;
		bind(s, &fs, B_LET, p->name, p->loc)->ex = v ? ex_value(v, false, args[j].loc) : ex_error(args[j].loc);
	}
	sema_stmts(s, fn->body, fn->nbody - 1);
	/* A tuple result (return (a, b)) is unpacked by let a, b = f(...). */
	AstExpr *ret = fn->body[fn->nbody - 1]->value;
	Ex r = ret->kind == AE_TUPLE && !fn->ret ? sema_expr(s, ret) : sema_value_expr(s, ret);
	if (fn->ret && r.kind != EX_ERROR) {
		Type *t = fn_slot_type(s, fn->ret, &r);
		Value *v = t ? coerce_value(s, r, t, arena_printf(s->a, "the result of fn '%s'", fn->name), "§3.7") : NULL;
		r = v ? ex_value(v, false, call->loc) : ex_error(call->loc);
	}
	s->scope = caller;
	s->loop = loop;
	if (s->cc->diag.nerrors > errors)
		note_at(s->cc, call->loc, "in this call of fn '%s'", fn->name);
	r.loc = call->loc;
	return r;
}

/* ---- the file ------------------------------------------------------------------ */

IrModule *sema_file(Compiler *cc, AstFile *f)
{
	int errors_before = cc->diag.nerrors;
	Sema sema = {0}, *s = &sema;
	s->cc = cc;
	s->a = cc->arena;
	s->file = new_scope(s, NULL);
	s->scope = s->file;
	s->ctx = CTX_CONST;
	s->clause = "§4.3";
	s->dummy_k = arena_alloc(s->a, sizeof *s->dummy_k);
	s->dummy_k->name = "<const>";
	s->dummy_r = ir_region_new(s->a, s->dummy_k, 0, NULL);
	s->k = s->dummy_k;
	s->region = s->dummy_r;
	if (cc->defines.len)
		s->cmdline = command_line(cc);

	/* Every const of the file, to tell a use before the declaration from
	 * an unknown name. */
	for (int i = 0; i < f->nitems; i++)
		if (f->items[i]->konst)
			*ptrmap_slot(s->a, &s->all_consts, f->items[i]->konst->name, true) = f->items[i]->konst;

	/* Items in order: a const is visible from its declaration on (§5.10);
	 * consts and kernels share one namespace. */
	IrModule *m = arena_alloc(s->a, sizeof *m);
	m->source = cc->sources.len ? ((Source *)cc->sources.items[0])->path : NULL;
	Vec kernels = {0};
	for (int i = 0; i < f->nitems && !cc->diag.stop; i++) {
		if (f->items[i]->fn) {
			sema_fn_decl(s, f->items[i]->fn, &kernels);
			continue;
		}
		const char *name = f->items[i]->is_kernel ? f->items[i]->kernel->name : f->items[i]->konst->name;
		Loc loc = f->items[i]->is_kernel ? f->items[i]->kernel->loc : f->items[i]->konst->loc;
		Binding *prev_const = lookup_in(s->file, name);
		IrKernel *prev_kernel = NULL;
		for (int j = 0; j < kernels.len; j++)
			if (((IrKernel *)kernels.items[j])->name == name)
				prev_kernel = kernels.items[j];
		/* A kernel is never referred to from .pk code, so it may take a
		 * builtin's name (a kernel called iota or softmax); consts may not. */
		bool ok = f->items[i]->is_kernel || check_new_name(s, NULL, name, loc);
		if (ok && (prev_const || prev_kernel)) {
			bool same = f->items[i]->is_kernel ? prev_kernel != NULL : prev_const != NULL;
			if (same)
				error_at(cc, loc, "redefinition of %s '%s' [%s]", f->items[i]->is_kernel ? "kernel" : "constant", name,
				         f->items[i]->is_kernel ? "§3.4" : "§3.3");
			else
				error_at(cc, loc, "'%s' is already declared (as a %s); consts and kernels share one namespace [§5.10]",
				         name, !prev_const ? "kernel" : prev_const->kind == B_FN ? "fn" : "constant");
			note_at(cc, prev_const ? prev_const->loc : prev_kernel->loc, "the previous definition of '%s' is here",
			        name);
			ok = false;
		}
		if (!f->items[i]->is_kernel) {
			AstConst *kc = f->items[i]->konst;
			Binding b = {.kind = B_CONST, .name = kc->name, .loc = kc->loc, .konst = kc};
			eval_const_decl(s, &b); /* its own errors even when the name is taken */
			if (ok) {
				Binding *nb = bind(s, s->file, B_CONST, kc->name, kc->loc);
				nb->konst = kc;
				nb->ex = b.ex;
			}
			continue;
		}
		IrKernel *k = sema_kernel(s, f->items[i]->kernel);
		if (ok)
			vec_push(s->a, &kernels, k);
	}
	m->kernels = (IrKernel **)vec_copy(s, &kernels, sizeof(void *));
	m->nkernels = kernels.len;
	return cc->diag.nerrors > errors_before ? NULL : m;
}
