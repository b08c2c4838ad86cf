/* sema_access.c - Ref access (§7.5-§7.8): an indexed Ref as a place (Access)
 * that loads, stores and atomics share; the indexers (points, slices, ds,
 * gathers) with their bounds and masks. */
#include "sema.h"

#include <string.h>

static const char *ref_name(const Access *acc)
{
	return acc->binding ? acc->binding->name : "ref";
}

static const char *dim_size_str(Sema *s, const Type *rt, int d)
{
	if (rt->dims[d] != DIM_DYNAMIC)
		return arena_printf(s->a, "%lld", (long long)rt->dims[d]);
	return rt->syms && rt->syms[d] ? rt->syms[d] : "?";
}

static bool is_ds_call(const AstExpr *e)
{
	return e->kind == AE_CALL && e->lhs && e->lhs->kind == AE_NAME && strcmp(e->lhs->name, "ds") == 0;
}

/* An integer scalar index operand (point index, slice start); constants
 * are range-checked against a static dim by the caller. */
static bool index_scalar(Sema *s, Ex e, const char *what, Value **out)
{
	if (e.kind == EX_ERROR)
		return false;
	if (!dtype_is_int(ex_dtype(&e)) || ex_rank(&e) != 0) {
		error_at(s->cc, e.loc, "%s must be an integer scalar, found %s [§7.6]", what, ex_type_str(s, &e));
		return false;
	}
	*out = as_value(s, e);
	return true;
}

/* Dim d's elements start, start + step, ... (n of them; *op holds start)
 * as a gather of start + step * iota(n) (*strided set): in i64 for a
 * dynamic dim or a 64-bit start.  In i32 (a static dim, below 2^31 as the
 * span) a start near INT32_MAX can only wrap to a negative index: out of
 * bounds, as the true one, and masked alike (§8). */
static bool strided_gather(Sema *s, Access *acc, int d, Loc loc, int64_t n, int64_t step, Indexer *x, Value **op,
                           bool *strided)
{
	int64_t dim = acc->ref->type->dims[d];
	DType sdt = (*op)->type->dtype;
	DType dt = dim == DIM_DYNAMIC || dim > INT32_MAX || sdt == DT_I64 || sdt == DT_U64 ? DT_I64 : DT_I32;
	Type *vt = type_tensor(s->a, dt, 1, &n);
	Value *iota = emit(s, IR_IOTA, loc, vt, 0);
	iota->def->ival = 0;
	Ex idx = sema_binary_ast(s, OP_MUL, loc, ex_value(iota, false, loc), ex_const(const_int(step, dt, true), loc));
	idx = sema_binary_ast(s, OP_ADD, loc, idx, ex_value(cast_value(s, *op, dt, loc), false, loc));
	if (idx.kind == EX_ERROR)
		return false;
	x->kind = IDX_GATHER;
	*op = as_value(s, idx);
	*strided = true;
	return true;
}

/* lo:hi and lo:hi:step with constant bounds and step (§7.6); a step over
 * 1 is ds(lo, cdiv(hi - lo, step), step)'s gather (*strided set). */
static bool slice_indexer(Sema *s, Access *acc, int d, AstExpr *it, Indexer *x, Value **op, bool *strided)
{
	const Type *rt = acc->ref->type;
	int64_t dim = rt->dims[d], step = 1;
	if (it->step) {
		Ex e = sema_value_expr(s, it->step);
		if (!const_int_arg(s, e, "the step of a slice", "§7.6", &step))
			return false;
		if (step <= 0 || step > INT32_MAX) {
			error_at(s->cc, e.loc, "the step of a slice must be a positive integer below 2^31, found %lld [§7.6]",
			         (long long)step);
			return false;
		}
	}
	if (!it->lhs && !it->rhs && step == 1) {
		x->kind = IDX_FULL;
		return true;
	}
	int64_t lo = 0, hi = dim;
	if (it->lhs) {
		Ex e = sema_value_expr(s, it->lhs);
		if (e.kind == EX_ERROR)
			return false;
		if (e.kind != EX_CONST || !dtype_is_int(e.c.dtype)) {
			error_at(s->cc, e.loc, "slice bounds must be constant integers; for a dynamic start use ds(start, size) [§7.6]");
			return false;
		}
		lo = e.c.i;
	}
	if (it->rhs) {
		Ex e = sema_value_expr(s, it->rhs);
		if (e.kind == EX_ERROR)
			return false;
		if (e.kind != EX_CONST || !dtype_is_int(e.c.dtype)) {
			error_at(s->cc, e.loc, "slice bounds must be constant integers; for a dynamic start use ds(start, size) [§7.6]");
			return false;
		}
		hi = e.c.i;
	} else if (dim == DIM_DYNAMIC) {
		error_at(s->cc, it->loc, "a slice to the end of dimension %d of '%s' (dynamic size %s) has no static size; use ds(start, size) [§7.6]",
		         d, ref_name(acc), dim_size_str(s, rt, d));
		return false;
	}
	if (lo < 0 || hi < 0) {
		error_at(s->cc, it->loc, "negative slice bounds are not supported (%lld:%lld) [§7.6]", (long long)lo,
		         (long long)hi);
		return false;
	}
	if (hi <= lo) {
		error_at(s->cc, it->loc, "empty slice %lld:%lld [§7.6]", (long long)lo, (long long)hi);
		return false;
	}
	if (dim != DIM_DYNAMIC && hi > dim) {
		error_at(s->cc, it->loc, "slice %lld:%lld is out of range for dimension %d of '%s' (size %lld) [§7.6]",
		         (long long)lo, (long long)hi, d, ref_name(acc), (long long)dim);
		return false;
	}
	if (lo == 0 && hi == dim && step == 1) {
		x->kind = IDX_FULL;
		return true;
	}
	*op = emit_const(s, const_int(lo, DT_I32, false), type_scalar(s->a, DT_I32), it->loc);
	if (step > 1)
		return strided_gather(s, acc, d, it->loc, (hi - lo - 1) / step + 1, step, x, op, strided);
	x->kind = IDX_SLICE;
	x->size = hi - lo;
	return true;
}

/* ds(start, size [, stride]) (§7.6), pl.ds's arguments: the stride by
 * position or as stride=.  A stride of 1 is a slice; a larger one is a
 * gather of start + stride * iota(size) (*strided set), within the dim when
 * start is a constant and the dim static. */
static bool ds_indexer(Sema *s, Access *acc, int d, AstExpr *it, Indexer *x, Value **op, bool *strided)
{
	const Type *rt = acc->ref->type;
	int64_t dim = rt->dims[d];
	bool bad = it->nargs < 2 || it->nargs > 3;
	for (int i = 0; i < it->nargs; i++)
		bad |= it->args[i].name != NULL && (i != 2 || strcmp(it->args[i].name, "stride") != 0);
	if (bad) {
		error_at(s->cc, it->loc, "ds() takes a start and a size, and a stride by position or as stride=; found %d "
		         "argument%s [§7.6]", it->nargs, it->nargs == 1 ? "" : "s");
		return false;
	}
	Ex start = sema_value_expr(s, it->args[0].value);
	Ex size = sema_value_expr(s, it->args[1].value);
	int64_t n, step = 1;
	if (start.kind == EX_ERROR || !const_int_arg(s, size, "the size of ds()", "§7.6", &n))
		return false;
	if (it->nargs == 3) {
		Ex st = sema_value_expr(s, it->args[2].value);
		if (!const_int_arg(s, st, "the stride of ds()", "§7.6", &step))
			return false;
		if (step <= 0) {
			error_at(s->cc, st.loc, "the stride of ds() must be positive, found %lld [§7.6]", (long long)step);
			return false;
		}
	}
	if (n <= 0) {
		error_at(s->cc, size.loc, "the size of ds() must be positive, found %lld [§7.6]", (long long)n);
		return false;
	}
	/* The elements span (n - 1) * step + 1: within a static dim, tested
	 * without overflow. */
	if (dim != DIM_DYNAMIC && (n > dim || (n - 1) > (dim - 1) / step)) {
		error_at(s->cc, size.loc, "ds() of size %lld%s exceeds dimension %d of '%s' (size %lld) [§7.6]",
		         (long long)n, step > 1 ? " and its stride" : "", d, ref_name(acc), (long long)dim);
		return false;
	}
	if (n > INT32_MAX || step > INT32_MAX) {
		error_at(s->cc, size.loc, "ds() of size %lld and stride %lld is too large [§7.6]", (long long)n,
		         (long long)step);
		return false;
	}
	int64_t span = (n - 1) * step + 1;
	if (start.kind == EX_CONST && dtype_is_int(start.c.dtype) &&
	    (start.c.i < 0 || (dim != DIM_DYNAMIC && start.c.i > dim - span))) {
		error_at(s->cc, start.loc, "ds(%lld, %lld%s) is out of range for dimension %d of '%s' (size %s) [§7.6]",
		         (long long)start.c.i, (long long)n, step > 1 ? ", stride" : "", d, ref_name(acc),
		         dim_size_str(s, rt, d));
		return false;
	}
	if (!index_scalar(s, start, "the start of ds()", op))
		return false;
	if (step == 1) {
		x->kind = IDX_SLICE;
		x->size = n;
		return true;
	}
	return strided_gather(s, acc, d, it->loc, n, step, x, op, strided);
}

/* An expression index: an integer scalar (point) or tensor (gather). */
static bool expr_indexer(Sema *s, Access *acc, int d, AstExpr *it, Indexer *x, Value **op)
{
	const Type *rt = acc->ref->type;
	Ex e = sema_value_expr(s, it);
	if (e.kind == EX_ERROR)
		return false;
	DType dt = ex_dtype(&e);
	if (!dtype_is_int(dt)) {
		error_at(s->cc, e.loc, "a Ref index must be an integer (scalar or tensor), found %s%s [§7.5]",
		         ex_type_str(s, &e), dt == DT_BOOL ? "; use load(..., mask=) for masking" : "");
		return false;
	}
	if (ex_rank(&e) > 0) {
		x->kind = IDX_GATHER;
		*op = e.v;
		return true;
	}
	if (e.kind == EX_CONST && (e.c.i < 0 || (rt->dims[d] != DIM_DYNAMIC && e.c.i >= rt->dims[d]))) {
		error_at(s->cc, e.loc, "index %lld is out of range for dimension %d of '%s' (size %s) [§7.5]",
		         (long long)e.c.i, d, ref_name(acc), dim_size_str(s, rt, d));
		return false;
	}
	x->kind = IDX_POINT;
	*op = as_value(s, e);
	return true;
}

/* The access shape of a gather (§7.5): the point and gather dims form one
 * run whose broadcast shape G replaces them, between the ':'/slice dims
 * before and after it (t[rows, :] is [8, C]).  The IR wants each gather
 * operand of the access's rank with G in place and ones at the ':'/slice
 * dims (verify.c), which stay as they are: the back ends see whole rows. */
static bool finish_gather(Sema *s, Access *acc, AstExpr **dimitem, Value **dimop, int *rank_out, int64_t **shape_out)
{
	const Type *rt = acc->ref->type;
	int rank = rt->rank, first = -1, last = -1;
	for (int d = 0; d < rank; d++)
		if (acc->idx[d].kind == IDX_GATHER || acc->idx[d].kind == IDX_POINT) {
			first = first < 0 ? d : first;
			last = d;
		}
	for (int d = first; d <= last; d++)
		if (acc->idx[d].kind == IDX_FULL || acc->idx[d].kind == IDX_SLICE) {
			error_at(s->cc, dimitem[d] ? dimitem[d]->loc : acc->loc,
			         "the gather and point indices of '%s' must be adjacent, but dimension %d between them is a slice or ':' [§7.5]",
			         ref_name(acc), d);
			return false;
		}
	/* G: the gathers broadcast together. */
	int rg = 0;
	int64_t *g = arena_alloc(s->a, sizeof(int64_t));
	for (int d = first; d <= last; d++) {
		if (acc->idx[d].kind != IDX_GATHER)
			continue;
		const Type *t = dimop[d]->type;
		int64_t *tmp = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rg + t->rank + 1));
		int r2;
		if (!broadcast_shapes(rg, g, t->rank, t->dims, &r2, tmp)) {
			error_at(s->cc, dimitem[d]->loc, "gather index %s does not broadcast with the other indices %s [§4.8]",
			         type_str(s->a, t), shape_str(s, DT_I32, rg, g));
			return false;
		}
		g = tmp;
		rg = r2;
	}
	/* R = the dims before the run, G, the dims after it. */
	int64_t *shape = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + rg + 1));
	int r = 0, npre = 0;
	for (int d = 0; d < rank; d++) {
		if (d == first) {
			npre = r;
			for (int i = 0; i < rg; i++)
				shape[r++] = g[i];
			d = last;
			continue;
		}
		if (acc->idx[d].kind == IDX_FULL && rt->dims[d] == DIM_DYNAMIC) {
			acc->dyn_dim = acc->dyn_dim < 0 ? d : acc->dyn_dim;
			continue;
		}
		shape[r++] = acc->idx[d].kind == IDX_SLICE ? acc->idx[d].size : rt->dims[d];
	}
	*rank_out = r;
	*shape_out = shape;
	if (acc->dyn_dim >= 0)
		return true;
	int64_t *placed = arena_alloc(s->a, sizeof(int64_t) * (size_t)(r + 1)); /* G with 1s around */
	for (int i = 0; i < r; i++)
		placed[i] = i >= npre && i < npre + rg ? g[i - npre] : 1;
	for (int d = first; d <= last; d++) {
		if (acc->idx[d].kind != IDX_GATHER)
			continue;
		Loc loc = dimitem[d] ? dimitem[d]->loc : acc->loc;
		Value *v = broadcast_value(s, dimop[d], rg, g, loc);
		dimop[d] = reshape_value(s, v, r, placed, loc);
	}
	return true;
}

/* Strided dims beside points or other strided dims, x[::2, ::2] or
 * x[i, ::2, :]: each strided dim keeps its place (NumPy's basic indexing).
 * The run of dims from the first to the last strided or point one becomes
 * one run of gathers (finish_gather's rule) whose index vectors lie each
 * along its own axis, so they broadcast to their outer product: a ':' or
 * slice inside the run is a gather too (step 1). */
static bool orthogonal_gathers(Sema *s, Access *acc, AstExpr **dimitem, Value **dimop, const bool *strided)
{
	const Type *rt = acc->ref->type;
	int rank = rt->rank, first = -1, last = -1;
	for (int d = 0; d < rank; d++)
		if (strided[d] || acc->idx[d].kind == IDX_POINT) {
			first = first < 0 ? d : first;
			last = d;
		}
	int k = 0, naxes = 0;
	for (int d = first; d <= last; d++)
		naxes += acc->idx[d].kind != IDX_POINT;
	int64_t *placed = arena_alloc(s->a, sizeof(int64_t) * (size_t)(naxes + 1));
	for (int d = first; d <= last; d++) {
		Indexer *x = &acc->idx[d];
		Loc loc = dimitem[d] ? dimitem[d]->loc : acc->loc;
		if (x->kind == IDX_POINT)
			continue;
		if (x->kind == IDX_FULL && rt->dims[d] == DIM_DYNAMIC) {
			error_at(s->cc, loc, "':' over dimension %d of '%s' (dynamic size %s) lies between strided or point "
			         "indices; use ds(start, size) [§7.6]", d, ref_name(acc), dim_size_str(s, rt, d));
			return false;
		}
		if (x->kind != IDX_GATHER) { /* ':' or a slice: start + iota(size) */
			int64_t n = x->kind == IDX_SLICE ? x->size : rt->dims[d];
			bool unused;
			if (x->kind == IDX_FULL)
				dimop[d] = emit_const(s, const_int(0, DT_I32, false), type_scalar(s->a, DT_I32), loc);
			if (!strided_gather(s, acc, d, loc, n, 1, x, &dimop[d], &unused))
				return false;
		}
		for (int i = 0; i < naxes; i++)
			placed[i] = i == k ? dimop[d]->type->dims[0] : 1;
		dimop[d] = reshape_value(s, dimop[d], naxes, placed, loc);
		k++;
	}
	return true;
}

/* Computes the access's value type, or records the dynamic FULL dim that
 * prevents one. */
static bool finish_access(Sema *s, Access *acc, AstExpr **dimitem, Value **dimop)
{
	const Type *rt = acc->ref->type;
	int rank = rt->rank, ngather = 0;
	for (int d = 0; d < rank; d++)
		ngather += acc->idx[d].kind == IDX_GATHER;
	int64_t *shape = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	int r = 0;
	if (ngather) {
		if (!finish_gather(s, acc, dimitem, dimop, &r, &shape))
			return false;
	} else {
		for (int d = 0; d < rank; d++) {
			if (acc->idx[d].kind == IDX_FULL) {
				if (rt->dims[d] == DIM_DYNAMIC) {
					if (acc->dyn_dim < 0)
						acc->dyn_dim = d;
					continue;
				}
				shape[r++] = rt->dims[d];
			} else if (acc->idx[d].kind == IDX_SLICE) {
				shape[r++] = acc->idx[d].size;
			}
		}
	}
	acc->ops = vals(s, rank);
	for (int d = 0; d < rank; d++)
		if (acc->idx[d].kind != IDX_FULL)
			acc->ops[acc->nops++] = dimop[d];
	if (acc->dyn_dim < 0)
		acc->type = type_tensor(s->a, rt->dtype, r, shape);
	return true;
}

Access *build_access(Sema *s, Ex base, AstExpr *ix)
{
	const Type *rt = base.v->type;
	int rank = rt->rank;
	Access *acc = arena_alloc(s->a, sizeof *acc);
	acc->ref = base.v;
	acc->binding = base.b;
	acc->nidx = rank;
	acc->idx = arena_alloc(s->a, sizeof(Indexer) * (size_t)(rank + 1));
	acc->dyn_dim = -1;
	acc->loc = ix->loc;

	/* Place each index item on its dimension: '...' fills the middle,
	 * missing trailing dims are ':' (NumPy). */
	int ell = -1, nreal = 0;
	for (int i = 0; i < ix->nitems; i++) {
		AstExpr *it = ix->items[i];
		if (it->kind == AE_ELLIPSIS) {
			if (ell >= 0) {
				error_at(s->cc, it->loc, "an index may contain at most one '...' [§7.5]");
				return NULL;
			}
			ell = i;
		} else if (it->kind == AE_NONE) {
			error_at(s->cc, it->loc, "None cannot index a Ref; add new axes to the loaded value: %s[...][None, :] [§7.5]",
			         ref_name(acc));
			return NULL;
		} else {
			nreal++;
		}
	}
	if (nreal > rank) {
		error_at(s->cc, ix->loc, "too many indices for '%s': %d given, but %s has rank %d [§7.5]", ref_name(acc),
		         nreal, type_str(s->a, rt), rank);
		return NULL;
	}
	AstExpr **dimitem = arena_alloc(s->a, sizeof(AstExpr *) * (size_t)(rank + 1));
	Value **dimop = vals(s, rank);
	int head = ell >= 0 ? ell : ix->nitems;
	for (int i = 0; i < head; i++)
		dimitem[i] = ix->items[i];
	for (int i = ell + 1; ell >= 0 && i < ix->nitems; i++)
		dimitem[rank - (ix->nitems - i)] = ix->items[i];

	bool ok = true;
	bool *strided = arena_alloc(s->a, sizeof(bool) * (size_t)(rank + 1));
	int nstrided = 0, npoint = 0, ngather = 0; /* strided ds() or slice dims; point dims; gather dims */
	for (int d = 0; d < rank; d++) {
		AstExpr *it = dimitem[d];
		Indexer *x = &acc->idx[d];
		x->kind = IDX_FULL;
		strided[d] = false;
		if (!it)
			continue;
		if (it->kind == AE_SLICE)
			ok &= slice_indexer(s, acc, d, it, x, &dimop[d], &strided[d]);
		else if (is_ds_call(it))
			ok &= ds_indexer(s, acc, d, it, x, &dimop[d], &strided[d]);
		else
			ok &= expr_indexer(s, acc, d, it, x, &dimop[d]);
		nstrided += strided[d];
		npoint += x->kind == IDX_POINT;
		ngather += !strided[d] && x->kind == IDX_GATHER;
	}
	/* A strided ds() is a gather: alone, its dim keeps its place as a
	 * slice's would; beside points or other strided dims it is NumPy's
	 * basic indexing (orthogonal_gathers); beside an index array, whose
	 * dims NumPy moves, it is refused. */
	if (ok && nstrided && ngather) {
		error_at(s->cc, ix->loc, "a strided ds() or slice cannot be combined with a gather index in an access to "
		         "'%s': load the rows, then index the value [§7.6]", ref_name(acc));
		return NULL;
	}
	if (ok && nstrided && (nstrided > 1 || npoint) && !orthogonal_gathers(s, acc, dimitem, dimop, strided))
		return NULL;
	if (!ok || !finish_access(s, acc, dimitem, dimop))
		return NULL;
	return acc;
}

Access *whole_access(Sema *s, Ex ref, Loc loc)
{
	AstExpr ix = {.kind = AE_INDEX, .loc = loc};
	return build_access(s, ref, &ix);
}

bool access_ready(Sema *s, Access *acc, const char *verb)
{
	if (acc->type)
		return true;
	if (acc->dyn_dim >= 0)
		error_at(s->cc, acc->loc, "cannot %s a dimension of dynamic size %s; use ds(start, size) [§7.5]", verb,
		         dim_size_str(s, acc->ref->type, acc->dyn_dim));
	acc->dyn_dim = -2; /* reported */
	return false;
}

bool access_writable(Sema *s, Access *acc, Loc loc, const char *verb)
{
	const Binding *b = acc->binding;
	if (b && b->kind == B_OPERAND && b->mode == PM_PREFETCH)
		return prefetch_write_error(s, b, loc, verb);
	if (!b || b->kind != B_OPERAND || b->mode != PM_IN)
		return true;
	error_at(s->cc, loc, "cannot %s '%s': it is an 'in' parameter [§5.2]", verb, b->name);
	note_at(s->cc, b->loc, "'%s' is declared here; declare it 'out' or 'inout' to write it", b->name);
	return false;
}

static Inst *emit_access(Sema *s, Op op, Access *acc, Loc loc, int nextra, Value **extra, Type *rt)
{
	int n = 1 + acc->nops + nextra;
	Value **args = vals(s, n);
	args[0] = acc->ref;
	memcpy(args + 1, acc->ops, sizeof(Value *) * (size_t)acc->nops);
	memcpy(args + 1 + acc->nops, extra, sizeof(Value *) * (size_t)nextra);
	Inst *i = emit_inst(s, op, loc, n, args, rt ? 1 : 0, rt ? &rt : NULL);
	ir_set_indexers(s->a, i, acc->nidx, acc->idx);
	return i;
}

Value *emit_load(Sema *s, Access *acc, Value *mask, Value *other, Loc loc)
{
	Value *extra[2];
	int n = 0;
	if (mask)
		extra[n++] = mask;
	if (other)
		extra[n++] = other;
	Inst *i = emit_access(s, IR_LOAD, acc, loc, n, extra, acc->type);
	i->has_mask = mask != NULL;
	i->has_other = other != NULL;
	return i->results[0];
}

void emit_store(Sema *s, Access *acc, Value *v, Value *mask, Loc loc)
{
	Value *extra[2] = {v, mask};
	Inst *i = emit_access(s, IR_STORE, acc, loc, mask ? 2 : 1, extra, NULL);
	i->has_mask = mask != NULL;
}
