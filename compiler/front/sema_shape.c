/* sema_shape.c - value indexing (lang-spec §7.9) and the shape builtins
 * that join, copy or regroup values (§7.12: concatenate, stack, tile,
 * repeat, expand_dims, squeeze).  Everything here is built from the IR's
 * shape ops: SLICE for static windows, CONCAT, RESHAPE and BROADCAST; a
 * run-time point index is a masked max-reduction (every target has one). */
#include "sema.h"

#include <stdio.h>
#include <string.h>

static Value *slice_value(Sema *s, Value *v, const int64_t *start, const int64_t *size, Loc loc)
{
	bool whole = true;
	for (int d = 0; d < v->type->rank; d++)
		whole &= start[d] == 0 && size[d] == v->type->dims[d];
	if (whole)
		return v;
	Value *out = emit(s, IR_SLICE, loc, type_tensor(s->a, v->type->dtype, v->type->rank, size), 1, v);
	ir_set_perm(s->a, out->def, v->type->rank, start);
	return out;
}

/* The max over dim d of where(m, v, lowest): the one element of each line
 * along d that the bool mask m picks (exact, whatever the dtype). */
static Value *masked_max(Sema *s, Value *v, Value *m, int d, Loc loc)
{
	const Type *t = v->type;
	int64_t iv;
	double fv;
	ir_reduce_identity(IR_REDUCE_MAX, t->dtype, &iv, &fv);
	Type *et = type_tensor(s->a, t->dtype, 0, NULL);
	Value *low = dtype_is_float(t->dtype) ? ir_const_float(s->a, s->k, s->region, loc, et, fv)
	                                      : ir_const_int(s->a, s->k, s->region, loc, et, iv);
	Value *sel = emit(s, IR_SELECT, loc, v->type, 3, m, v, broadcast_value(s, low, t->rank, t->dims, loc));
	int64_t *rd = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->rank + 1));
	for (int k = 0, r = 0; k < t->rank; k++)
		if (k != d)
			rd[r++] = t->dims[k];
	Value *red = emit(s, IR_REDUCE_MAX, loc, type_tensor(s->a, t->dtype, t->rank - 1, rd), 1, sel);
	red->def->ival = d;
	return red;
}

/* v with dim d reduced to element i (a run-time integer scalar, counted
 * from the end when negative and then clamped to the dim, as jnp indexing
 * does), the dim kept with extent 1: max over d of where(iota == i, v,
 * lowest). */
static Value *dynamic_point(Sema *s, Value *v, int d, Value *i, Loc loc)
{
	const Type *t = v->type;
	if (dtype_bits(i->type->dtype) < 32)
		i = cast_value(s, i, DT_I32, loc); /* so that the extent fits its dtype */
	DType it = i->type->dtype;
	Type *st = type_tensor(s->a, it, 0, NULL), *bt = type_tensor(s->a, DT_BOOL, 0, NULL);
	Value *n = ir_const_int(s->a, s->k, s->region, loc, st, t->dims[d]);
	Value *zero = ir_const_int(s->a, s->k, s->region, loc, st, 0);
	if (dtype_is_signed(it)) {
		Value *neg = emit(s, IR_LT, loc, bt, 2, i, zero);
		i = emit(s, IR_SELECT, loc, st, 3, neg, emit(s, IR_ADD, loc, st, 2, i, n), i);
		i = emit(s, IR_MAX, loc, st, 2, i, zero);
	}
	i = emit(s, IR_MIN, loc, st, 2, i, ir_const_int(s->a, s->k, s->region, loc, st, t->dims[d] - 1));
	i = cast_value(s, i, DT_I32, loc);
	Type *it32 = type_tensor(s->a, DT_I32, t->rank, t->dims);
	Value *io = emit(s, IR_IOTA, loc, it32, 0);
	io->def->ival = d;
	Value *m = emit(s, IR_EQ, loc, type_with_dtype(s->a, it32, DT_BOOL), 2, io, broadcast_value(s, i, t->rank, t->dims, loc));
	Value *red = masked_max(s, v, m, d, loc);
	int64_t *kd = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->rank + 1));
	memcpy(kd, t->dims, sizeof(int64_t) * (size_t)t->rank);
	kd[d] = 1;
	return reshape_value(s, red, t->rank, kd, loc);
}

/* A constant bound of a slice, negative from the end (NumPy). */
static bool slice_bound(Sema *s, AstExpr *e, int64_t dflt, int64_t n, int64_t *out)
{
	if (!e) {
		*out = dflt;
		return true;
	}
	if (!const_int_arg(s, sema_expr(s, e), "a slice bound of a value", "§7.9", out))
		return false;
	if (*out < 0)
		*out += n;
	return true;
}

static Value *concat_values(Sema *s, int n, Value **xs, int axis, Loc loc);

/* Elements 0, k, 2k, ... of dim d of v (a slice's step k > 1): the dim
 * split into rows of k whose first column is kept; a last row shorter
 * than k is sliced apart and joined after. */
static Value *every_nth(Sema *s, Value *v, int d, int64_t k, Loc loc)
{
	const Type *t = v->type;
	int rank = t->rank;
	int64_t m = t->dims[d], c = (m - 1) / k + 1, whole = m / k;
	int64_t *start = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 2));
	int64_t *size = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 2));
	for (int i = 0; i < rank; i++)
		start[i] = 0, size[i] = t->dims[i];
	Value *rows = NULL, *last = NULL;
	if (whole > 0) {
		size[d] = whole * k;
		Value *w = slice_value(s, v, start, size, loc);
		int64_t *split = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 2));
		for (int i = 0, j = 0; i < rank; i++) {
			split[j++] = i == d ? whole : t->dims[i];
			if (i == d)
				split[j++] = k;
		}
		w = reshape_value(s, w, rank + 1, split, loc);
		int64_t *s1 = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 2));
		int64_t *z1 = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 2));
		for (int i = 0; i <= rank; i++)
			s1[i] = 0, z1[i] = i == d + 1 ? 1 : split[i];
		w = slice_value(s, w, s1, z1, loc);
		size[d] = whole;
		rows = reshape_value(s, w, rank, size, loc);
	}
	if (c > whole) { /* the element at whole * k, alone in a short row */
		start[d] = whole * k, size[d] = 1;
		last = slice_value(s, v, start, size, loc);
	}
	if (!rows)
		return last;
	if (!last)
		return rows;
	Value *parts[2] = {rows, last};
	return concat_values(s, 2, parts, d, loc);
}

Ex sema_value_index(Sema *s, Ex base, AstExpr *ix)
{
	base = rvalue(s, base);
	if (base.kind == EX_ERROR)
		return base;
	Value *v = as_value(s, base);
	const Type *t = v->type;
	int rank = t->rank, nsrc = 0, nnew = 0, ell = -1;
	for (int i = 0; i < ix->nitems; i++) {
		AstExpr *it = ix->items[i];
		if (it->kind == AE_NONE)
			nnew++;
		else if (it->kind == AE_ELLIPSIS && ell < 0)
			ell = i;
		else if (it->kind == AE_ELLIPSIS) {
			error_at(s->cc, it->loc, "an index may contain at most one '...' [§7.9]");
			return ex_error(ix->loc);
		} else
			nsrc++;
	}
	if (nsrc > rank) {
		error_at(s->cc, ix->loc, "too many indices for a value of type %s (rank %d) [§7.9]", type_str(s->a, t), rank);
		return ex_error(ix->loc);
	}
	/* Per source dim: the window (start, size), and whether it stays;
	 * per result dim: its extent.  Dims not mentioned are kept (NumPy). */
	int64_t *start = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	int64_t *size = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	Value **dyn = vals(s, rank);
	int64_t *out = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + nnew + 1));
	int64_t *steps = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1)); /* 0: no slice */
	int r = 0, src = 0;
	for (int i = 0; i <= ix->nitems; i++) {
		AstExpr *it = i < ix->nitems ? ix->items[i] : NULL;
		if (it && it->kind == AE_NONE) {
			out[r++] = 1;
			continue;
		}
		int nfull = !it ? rank - src : it->kind == AE_ELLIPSIS ? rank - nsrc : 0;
		for (int k = 0; k < nfull; k++, src++)
			start[src] = 0, size[src] = out[r++] = t->dims[src];
		if (!it || it->kind == AE_ELLIPSIS)
			continue;
		int64_t n = t->dims[src], lo, hi;
		if (it->kind == AE_SLICE) {
			int64_t step = 1;
			if (it->step && !const_int_arg(s, sema_expr(s, it->step), "the step of a slice", "§7.9", &step))
				return ex_error(ix->loc);
			if (step == 0 || step < -INT32_MAX || step > INT32_MAX) {
				error_at(s->cc, it->step->loc, "the step of a slice must be a nonzero integer of magnitude below "
				         "2^31, found %lld [§7.9]", (long long)step);
				return ex_error(ix->loc);
			}
			/* A negative step runs from lo (default: the last element)
			 * down to hi (default: before the first), NumPy's order. */
			bool down = step < 0;
			if (!slice_bound(s, it->lhs, down ? n - 1 : 0, n, &lo) || !slice_bound(s, it->rhs, n, n, &hi))
				return ex_error(ix->loc);
			if (down && !it->rhs)
				hi = -1;
			if (down ? hi < -1 || lo >= n || hi >= lo : lo < 0 || hi > n || lo >= hi) {
				error_at(s->cc, it->loc, "the slice %lld:%lld%s is empty or outside dim %d (extent %lld) of %s [§7.9]",
				         (long long)lo, (long long)hi, down ? " (a negative step)" : "", src, (long long)n,
				         type_str(s->a, t));
				return ex_error(ix->loc);
			}
			int64_t m = down ? lo - hi : hi - lo, c = (m - 1) / (down ? -step : step) + 1;
			if (!down && c * step <= n - lo)
				m = c * step; /* whole rows of step elements: every_nth joins nothing */
			start[src] = down ? hi + 1 : lo, size[src] = m;
			steps[src] = step;
			out[r++] = c;
			src++;
			continue;
		}
		Ex e = rvalue(s, sema_expr(s, it));
		if (e.kind == EX_ERROR)
			return e;
		if (ex_rank(&e) != 0 || !dtype_is_int(ex_dtype(&e))) {
			error_at(s->cc, it->loc, "a value is indexed with integer scalars, constant slices lo:hi, ':', '...' "
			         "and None, found %s; to gather, index the Ref instead [§7.9]", ex_type_str(s, &e));
			return ex_error(ix->loc);
		}
		start[src] = 0, size[src] = e.kind == EX_CONST ? 1 : n;
		if (e.kind == EX_CONST) {
			lo = e.c.i < 0 ? e.c.i + n : e.c.i;
			if (lo < 0 || lo >= n) {
				error_at(s->cc, it->loc, "index %lld is outside dim %d (extent %lld) of %s [§7.9]",
				         (long long)e.c.i, src, (long long)n, type_str(s->a, t));
				return ex_error(ix->loc);
			}
			start[src] = lo;
		} else {
			dyn[src] = e.v;
		}
		src++;
	}
	v = slice_value(s, v, start, size, ix->loc);
	for (int d = 0; d < rank; d++) {
		if (dyn[d])
			v = dynamic_point(s, v, d, dyn[d], ix->loc);
		if (steps[d] < 0 && v->type->dims[d] > 1) {
			v = emit(s, IR_REVERSE, ix->loc, v->type, 1, v);
			v->def->ival = d;
		}
		if (steps[d] > 1 || steps[d] < -1)
			v = every_nth(s, v, d, steps[d] < 0 ? -steps[d] : steps[d], ix->loc);
	}
	return ex_value(reshape_value(s, v, r, out, ix->loc), base.kind == EX_VALUE && base.weak, ix->loc);
}

/* ---- functional updates: x.at[index].set(u) ------------------------------------------ */

/* The lanes of a [dims] value whose coordinate along d satisfies
 * lo <= c < hi (hi = lo + 1: one point). */
static Value *coord_in(Sema *s, int rank, const int64_t *dims, int d, Value *lo, Value *hi, Loc loc)
{
	DType dt = lo->type->dtype;
	Type *it = type_tensor(s->a, dt, rank, dims), *bt = type_tensor(s->a, DT_BOOL, rank, dims);
	Value *c = emit(s, IR_IOTA, loc, it, 0);
	c->def->ival = d;
	Value *ge = emit(s, IR_GE, loc, bt, 2, c, broadcast_value(s, lo, rank, dims, loc));
	return emit(s, IR_AND, loc, bt, 2, ge, emit(s, IR_LT, loc, bt, 2, c, broadcast_value(s, hi, rank, dims, loc)));
}

/* x.at[index].OP(u) of a value x (jnp's functional update, §7.9): x with
 * the elements the index selects replaced by u (set) or combined with it
 * (add, multiply, divide, min, max) in x's dtype; get() is x[index].  The
 * index takes ':', '...', lo:hi slices and points (a run-time one negative
 * from the end; out of range it selects nothing, as jnp drops it), or one
 * bool value of x's shape with a scalar u.  u, converted to x's dtype,
 * broadcasts to the selected shape; it is placed into x's shape (slices
 * padded) and selected: where(selected, x OP u, x). */
Ex sema_value_update(Sema *s, Loc loc, Ex base, AstExpr *ix, const char *op, Ex u)
{
	base = rvalue(s, base);
	if (strcmp(op, "get") == 0)
		return sema_value_index(s, base, ix);
	u = rvalue(s, u);
	if (base.kind == EX_ERROR || u.kind == EX_ERROR)
		return ex_error(loc);
	Value *v = as_value(s, base);
	const Type *t = v->type;
	int rank = t->rank;
	Op irop = strcmp(op, "set") == 0 ? IR_OP_COUNT : strcmp(op, "add") == 0 ? IR_ADD
	        : strcmp(op, "multiply") == 0 ? IR_MUL : strcmp(op, "divide") == 0 ? IR_DIV
	        : strcmp(op, "min") == 0 ? IR_MIN : IR_MAX;
	if (irop != IR_OP_COUNT && (t->dtype == DT_BOOL || (irop == IR_DIV && !dtype_is_float(t->dtype)))) {
		error_at(s->cc, loc, ".at[].%s() needs a %s value, found %s [§7.9]", op, irop == IR_DIV ? "float" : "numeric",
		         type_str(s->a, t));
		return ex_error(loc);
	}
	Type *bt = type_tensor(s->a, DT_BOOL, rank, t->dims);
	Value *mask = NULL;
	int64_t *sel = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1)); /* the selected shape */
	int64_t *lo = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	int64_t *hi = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	bool *point = arena_alloc(s->a, (size_t)rank + 1); /* a point index: the dim is not selected */
	bool *dyn = arena_alloc(s->a, (size_t)rank + 1);   /* a run-time point: in the mask already */
	int nsel = 0, nsrc = 0, nell = 0;
	for (int i = 0; i < ix->nitems; i++)
		if (ix->items[i]->kind == AE_ELLIPSIS)
			nell++;
		else
			nsrc++;
	if (nsrc > rank || nell > 1) {
		error_at(s->cc, ix->loc, "%s for .at[] of a value of type %s [§7.9]",
		         nsrc > rank ? "too many indices" : "at most one '...'", type_str(s->a, t));
		return ex_error(loc);
	}
	for (int d = 0; d < rank; d++)
		lo[d] = 0, hi[d] = t->dims[d];
	for (int i = 0, d = 0; i < ix->nitems; i++) {
		AstExpr *it = ix->items[i];
		if (it->kind == AE_ELLIPSIS) {
			d += rank - nsrc;
			continue;
		}
		int64_t n = t->dims[d];
		if (it->kind == AE_NONE || (it->kind == AE_SLICE && it->step)) {
			error_at(s->cc, it->loc, "an index of .at[] takes ':', '...', lo:hi, points or a bool mask, found %s "
			         "[§7.9]", it->kind == AE_NONE ? "None" : "a step");
			return ex_error(loc);
		}
		if (it->kind == AE_SLICE) {
			if (!slice_bound(s, it->lhs, 0, n, &lo[d]) || !slice_bound(s, it->rhs, n, n, &hi[d]))
				return ex_error(loc);
			if (lo[d] < 0 || hi[d] > n || lo[d] >= hi[d]) {
				error_at(s->cc, it->loc, "the slice %lld:%lld is empty or outside dim %d (extent %lld) of %s [§7.9]",
				         (long long)lo[d], (long long)hi[d], d, (long long)n, type_str(s->a, t));
				return ex_error(loc);
			}
			d++;
			continue;
		}
		Ex e = rvalue(s, sema_expr(s, it));
		if (e.kind == EX_ERROR)
			return e;
		if (ex_dtype(&e) == DT_BOOL && ex_rank(&e) > 0 && ix->nitems == 1) { /* x.at[mask] */
			if (ex_rank(&e) != rank || memcmp(ex_dims(&e), t->dims, sizeof(int64_t) * (size_t)rank) != 0 ||
			    ex_rank(&u) != 0) {
				error_at(s->cc, it->loc, "a bool mask of .at[] has the value's shape %s and takes a scalar, found "
				         "%s and %s [§7.9]", type_str(s->a, t), ex_type_str(s, &e), ex_type_str(s, &u));
				return ex_error(loc);
			}
			mask = e.v;
			nsel = -1;
			break;
		}
		if (ex_rank(&e) != 0 || !dtype_is_int(ex_dtype(&e))) {
			error_at(s->cc, it->loc, "an index of .at[] takes ':', '...', lo:hi, integer points or one bool mask of "
			         "the value's shape, found %s [§7.9]", ex_type_str(s, &e));
			return ex_error(loc);
		}
		point[d] = true;
		if (e.kind == EX_CONST) {
			lo[d] = e.c.i < 0 ? e.c.i + n : e.c.i;
			if (lo[d] < 0 || lo[d] >= n) {
				error_at(s->cc, it->loc, "index %lld is outside dim %d (extent %lld) of %s [§7.9]",
				         (long long)e.c.i, d, (long long)n, type_str(s->a, t));
				return ex_error(loc);
			}
			hi[d] = lo[d] + 1;
		} else { /* negative from the end; out of range selects nothing */
			dyn[d] = true;
			Loc l = it->loc;
			Ex i = ex_value(cast_value(s, e.v, DT_I64, l), false, l);
			Ex zero = ex_const(const_int(0, DT_I64, true), l), ext = ex_const(const_int(n, DT_I64, true), l);
			Ex w = sema_where(s, l, sema_binary_ast(s, OP_LT, l, i, zero), sema_binary_ast(s, OP_ADD, l, i, ext), i);
			/* in i64 as a scalar; the lanes compare in i32 where the dim
			 * allows (mosaic-tpu has no i64 vectors), -1 selecting none */
			Ex in = sema_binary_ast(s, OP_AND, l, sema_binary_ast(s, OP_GE, l, w, zero),
			                        sema_binary_ast(s, OP_LT, l, w, ext));
			w = sema_where(s, l, in, w, ex_const(const_int(-1, DT_I64, true), l));
			Value *iv = cast_value(s, as_value(s, w), n > INT32_MAX ? DT_I64 : DT_I32, l);
			Value *one = emit_const(s, const_int(1, iv->type->dtype, false), iv->type, l);
			Value *c = coord_in(s, rank, t->dims, d, iv, emit(s, IR_ADD, it->loc, iv->type, 2, iv, one), it->loc);
			mask = mask ? emit(s, IR_AND, it->loc, bt, 2, mask, c) : c;
		}
		d++;
	}
	if (nsel >= 0)
		for (int d = 0; d < rank; d++) {
			if (!point[d])
				sel[nsel++] = hi[d] - lo[d];
			if (dyn[d] || (lo[d] == 0 && hi[d] == t->dims[d]))
				continue;
			DType it = t->dims[d] > INT32_MAX ? DT_I64 : DT_I32;
			Value *l = emit_const(s, const_int(lo[d], it, false), type_scalar(s->a, it), ix->loc);
			Value *h = emit_const(s, const_int(hi[d], it, false), type_scalar(s->a, it), ix->loc);
			Value *c = coord_in(s, rank, t->dims, d, l, h, ix->loc);
			mask = mask ? emit(s, IR_AND, ix->loc, bt, 2, mask, c) : c;
		}
	/* u over the selection, then in x's shape: points as extent 1, slices
	 * padded to their dim (zeros outside, never selected). */
	ConstVal zero = t->dtype == DT_BOOL ? const_bool(false) : const_int(0, t->dtype, false);
	int64_t *full = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	int ru = ex_rank(&u), rb;
	int64_t *b = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + ru + 1));
	if (nsel >= 0 && (!broadcast_shapes(ru, ex_dims(&u), nsel, sel, &rb, b) || rb != nsel ||
	                  memcmp(b, sel, sizeof(int64_t) * (size_t)nsel) != 0)) {
		error_at(s->cc, u.loc, ".at[].%s(): %s does not broadcast to the selected shape %s [§7.9]", op,
		         ex_type_str(s, &u), shape_str(s, t->dtype, nsel, sel));
		return ex_error(loc);
	}
	Value *uv = to_value(s, u, type_tensor(s->a, t->dtype, nsel < 0 ? 0 : nsel, sel));
	if (nsel >= 0) {
		for (int d = 0, j = 0; d < rank; d++)
			full[d] = point[d] ? 1 : sel[j++];
		uv = reshape_value(s, uv, rank, full, loc);
		for (int d = 0; d < rank; d++) {
			if (point[d] || full[d] == t->dims[d] || full[d] == 1)
				continue;
			/* [zeros(lo)], u, [zeros(n - hi)] */
			Value *seq[3];
			int ns = 0;
			int64_t keep = full[d];
			if (lo[d]) {
				full[d] = lo[d];
				seq[ns++] = emit_const(s, zero, type_tensor(s->a, t->dtype, rank, full), loc);
			}
			seq[ns++] = uv;
			if (hi[d] < t->dims[d]) {
				full[d] = t->dims[d] - hi[d];
				seq[ns++] = emit_const(s, zero, type_tensor(s->a, t->dtype, rank, full), loc);
			}
			full[d] = keep + lo[d] + (t->dims[d] - hi[d]);
			uv = concat_values(s, ns, seq, d, loc);
		}
	}
	uv = broadcast_value(s, uv, rank, t->dims, loc);
	Type *vt = type_tensor(s->a, t->dtype, rank, t->dims);
	Value *nv = irop == IR_OP_COUNT ? uv : emit(s, irop, loc, vt, 2, v, uv);
	Value *r = mask ? emit(s, IR_SELECT, loc, vt, 3, mask, nv, v) : nv;
	return ex_value(r, base.kind == EX_VALUE && base.weak, loc);
}

/* ---- joining and copying ------------------------------------------------------------ */

static Value *concat_values(Sema *s, int n, Value **xs, int axis, Loc loc)
{
	if (n == 1)
		return xs[0];
	const Type *t0 = xs[0]->type;
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t0->rank + 1));
	memcpy(dims, t0->dims, sizeof(int64_t) * (size_t)t0->rank);
	dims[axis] = 0;
	for (int k = 0; k < n; k++)
		dims[axis] += xs[k]->type->dims[axis];
	Type *rt = type_tensor(s->a, t0->dtype, t0->rank, dims);
	Value *out = emit_inst(s, IR_CONCAT, loc, n, xs, 1, &rt)->results[0];
	out->def->ival = axis;
	return out;
}

/* concatenate(xs, axis) (jnp.concatenate) and stack(xs, axis) (jnp.stack:
 * a new axis of extent 1 on each first). */
Ex sema_concatenate(Sema *s, Loc loc, Ex list, int64_t axis, bool stack)
{
	const char *fname = stack ? "stack" : "concatenate";
	if (list.kind == EX_ERROR)
		return list;
	if (list.kind != EX_TUPLE || list.nitems == 0) {
		error_at(s->cc, list.loc, "%s() takes a list of values, e.g. %s([a, b], axis = 0) [§7.12]", fname, fname);
		return ex_error(loc);
	}
	int n = list.nitems;
	Ex *xs = list.items;
	for (int k = 0; k < n; k++)
		if ((xs[k] = rvalue(s, xs[k])).kind == EX_ERROR)
			return xs[k];
	bool weak = ex_weak(&xs[0]);
	DType dt = ex_dtype(&xs[0]);
	for (int k = 1; k < n; k++)
		dt = promote_dtypes(dt, weak, ex_dtype(&xs[k]), ex_weak(&xs[k]), &weak);
	int rank = ex_rank(&xs[0]);
	if (rank + stack == 0) {
		error_at(s->cc, xs[0].loc, "concatenate() of scalars: use stack() [§7.12]");
		return ex_error(loc);
	}
	int ax = normalize_axis(s, axis, rank + stack, loc, fname, "§7.12");
	if (ax < 0)
		return ex_error(loc);
	Value **vs = vals(s, n);
	for (int k = 0; k < n; k++) {
		const int64_t *d0 = ex_dims(&xs[0]), *dk = ex_dims(&xs[k]);
		bool ok = ex_rank(&xs[k]) == rank;
		for (int d = 0; ok && d < rank; d++)
			ok = d == ax && !stack ? true : d0[d] == dk[d];
		if (!ok) {
			error_at(s->cc, xs[k].loc, "%s(): %s does not match %s%s [§7.12]", fname, ex_type_str(s, &xs[k]),
			         ex_type_str(s, &xs[0]), stack ? "" : " outside the axis");
			return ex_error(loc);
		}
		vs[k] = to_value(s, xs[k], type_tensor(s->a, dt, rank, dk));
		if (stack) {
			int64_t *sd = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 2));
			for (int d = 0, j = 0; d <= rank; d++)
				sd[d] = d == ax ? 1 : dk[j++];
			vs[k] = reshape_value(s, vs[k], rank + 1, sd, loc);
		}
	}
	return ex_value(concat_values(s, n, vs, ax, loc), weak, loc);
}

/* The integers of a constant integer or tuple of them. */
/* split(x, n) makes at most this many parts (each a value of its own; a
 * list of split points is bounded by the source). */
enum { SPLIT_MAX_PARTS = 4096 };

static bool int_list(Sema *s, Ex e, const char *what, int *n, int64_t **out)
{
	Ex *items = e.kind == EX_TUPLE ? e.items : &e;
	*n = e.kind == EX_TUPLE ? e.nitems : 1;
	*out = arena_alloc(s->a, sizeof(int64_t) * (size_t)(*n + 1));
	for (int i = 0; i < *n; i++)
		if (!const_int_arg(s, items[i], what, "§7.12", &(*out)[i]))
			return false;
	return true;
}

/* split(x, sections, axis) (jnp.split): a tuple of x's parts along axis.
 * sections is a count of equal parts, which must divide the extent, or a
 * list of ascending split points inside the axis (no empty part). */
Ex sema_split(Sema *s, Loc loc, Ex x, Ex sections, int64_t axis)
{
	x = rvalue(s, x);
	if (x.kind == EX_ERROR || sections.kind == EX_ERROR)
		return ex_error(loc);
	int rank = ex_rank(&x);
	if (rank == 0) {
		error_at(s->cc, x.loc, "split() of a scalar: it splits a value of rank 1 or more [§7.12]");
		return ex_error(loc);
	}
	int ax = normalize_axis(s, axis, rank, loc, "split", "§7.12");
	if (ax < 0)
		return ex_error(loc);
	int64_t n = ex_dims(&x)[ax], *cut;
	int ncut;
	if (sections.kind != EX_TUPLE) {
		int64_t k;
		if (!const_int_arg(s, sections, "the number of sections of split()", "§7.12", &k))
			return ex_error(loc);
		if (k < 1 || k > SPLIT_MAX_PARTS || n % k != 0) {
			error_at(s->cc, sections.loc, "split(): %lld sections %s dim %d (extent %lld) [§7.12]", (long long)k,
			         k < 1 || k > SPLIT_MAX_PARTS ? "(1 to 4096) cannot divide" : "do not divide", ax,
			         (long long)n);
			return ex_error(loc);
		}
		ncut = (int)k - 1;
		cut = arena_alloc(s->a, sizeof(int64_t) * (size_t)(ncut + 1));
		for (int i = 0; i < ncut; i++)
			cut[i] = (i + 1) * (n / k);
	} else if (!int_list(s, sections, "a split point of split()", &ncut, &cut)) {
		return ex_error(loc);
	}
	for (int i = 0; i < ncut; i++)
		if (cut[i] <= (i ? cut[i - 1] : 0) || cut[i] >= n) {
			error_at(s->cc, sections.loc, "split(): split point %lld makes an empty part or lies outside dim %d "
			         "(extent %lld); the points must ascend inside the dim [§7.12]", (long long)cut[i], ax,
			         (long long)n);
			return ex_error(loc);
		}
	Value *v = as_value(s, x);
	int64_t *start = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	int64_t *size = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	Ex t = {.kind = EX_TUPLE, .loc = loc, .nitems = ncut + 1};
	t.items = arena_alloc(s->a, sizeof(Ex) * (size_t)(ncut + 2));
	for (int i = 0; i <= ncut; i++) {
		for (int d = 0; d < rank; d++)
			start[d] = 0, size[d] = v->type->dims[d];
		start[ax] = i ? cut[i - 1] : 0;
		size[ax] = (i < ncut ? cut[i] : n) - start[ax];
		t.items[i] = ex_value(slice_value(s, v, start, size, loc), ex_weak(&x), loc);
	}
	return t;
}

/* tile(x, reps) (jnp.tile): copies joined along each axis, as Pallas
 * lowers it; a longer reps adds leading axes. */
Ex sema_tile(Sema *s, Loc loc, Ex x, Ex reps)
{
	x = rvalue(s, x);
	int n;
	int64_t *rp;
	if (x.kind == EX_ERROR || reps.kind == EX_ERROR || !int_list(s, reps, "a repetition count of tile()", &n, &rp))
		return ex_error(loc);
	for (int i = 0; i < n; i++)
		if (rp[i] < 1) {
			error_at(s->cc, reps.loc, "tile(): repetition counts must be >= 1 [§7.12]");
			return ex_error(loc);
		}
	Value *v = as_value(s, x);
	int rank = v->type->rank > n ? v->type->rank : n;
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	for (int d = 0; d < rank; d++)
		dims[d] = d < rank - v->type->rank ? 1 : v->type->dims[d - (rank - v->type->rank)];
	v = reshape_value(s, v, rank, dims, loc);
	for (int d = 0; d < rank; d++) {
		int64_t k = d < rank - n ? 1 : rp[d - (rank - n)];
		if (k > 4096) {
			error_at(s->cc, reps.loc, "tile(): %lld copies along one axis; at most 4096 [§7.12]", (long long)k);
			return ex_error(loc);
		}
		Value **cs = vals(s, (int)k);
		for (int j = 0; j < k; j++)
			cs[j] = v;
		v = concat_values(s, (int)k, cs, d, loc);
	}
	return ex_value(v, ex_weak(&x), loc);
}

/* repeat(x, n, axis) (jnp.repeat with a constant count): each element n
 * times along axis; without axis, of the flattened x.  A new axis of
 * extent n after it, broadcast, merged (Pallas' lowering). */
Ex sema_repeat(Sema *s, Loc loc, Ex x, Ex count, bool has_axis, int64_t axis)
{
	x = rvalue(s, x);
	int64_t n;
	if (x.kind == EX_ERROR || !const_int_arg(s, count, "the count of repeat()", "§7.12", &n))
		return ex_error(loc);
	if (n < 1) {
		error_at(s->cc, count.loc, "repeat(): the count must be >= 1 [§7.12]");
		return ex_error(loc);
	}
	Value *v = as_value(s, x);
	if (!has_axis) {
		int64_t m = type_numel(v->type);
		v = reshape_value(s, v, 1, &m, loc);
		axis = 0;
	}
	const Type *t = v->type;
	int ax = normalize_axis(s, axis, t->rank, loc, "repeat", "§7.12");
	if (ax < 0)
		return ex_error(loc);
	int64_t *e = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->rank + 2));
	int64_t *m = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->rank + 1));
	for (int d = 0, j = 0; d < t->rank; d++) {
		e[j++] = t->dims[d];
		if (d == ax)
			e[j++] = 1;
		m[d] = t->dims[d] * (d == ax ? n : 1);
	}
	v = reshape_value(s, v, t->rank + 1, e, loc);
	e[ax + 1] = n;
	Type *bt = type_tensor(s->a, t->dtype, t->rank + 1, e);
	if (!check_fits(s, bt, loc))
		return ex_error(loc);
	v = broadcast_value(s, v, t->rank + 1, e, loc);
	return ex_value(reshape_value(s, v, t->rank, m, loc), ex_weak(&x), loc);
}

/* expand_dims(x, axes) (jnp.expand_dims) and squeeze(x [, axes])
 * (jnp.squeeze): reshapes that add or drop extent-1 axes. */
Ex sema_expand_squeeze(Sema *s, Loc loc, Ex x, const Ex *axes, bool expand)
{
	const char *fname = expand ? "expand_dims" : "squeeze";
	x = rvalue(s, x);
	int n = 0;
	int64_t *ax = NULL;
	if (x.kind == EX_ERROR || (axes && (axes->kind == EX_ERROR || !int_list(s, *axes, "an axis", &n, &ax))))
		return ex_error(loc);
	Value *v = as_value(s, x);
	const Type *t = v->type;
	int rank = expand ? t->rank + n : t->rank;
	bool *mark = arena_alloc(s->a, (size_t)rank + 1);
	for (int i = 0; i < n; i++) {
		int a = normalize_axis(s, ax[i], rank, loc, fname, "§7.12");
		if (a < 0)
			return ex_error(loc);
		if (mark[a]) {
			error_at(s->cc, axes->loc, "%s(): axis %d given twice [§7.12]", fname, a);
			return ex_error(loc);
		}
		if (!expand && t->dims[a] != 1) {
			error_at(s->cc, axes->loc, "squeeze(): axis %d has extent %lld, not 1 [§7.12]", a, (long long)t->dims[a]);
			return ex_error(loc);
		}
		mark[a] = true;
	}
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	int r = 0;
	for (int d = 0, j = 0; d < rank; d++) {
		if (expand)
			dims[r++] = mark[d] ? 1 : t->dims[j++];
		else if (axes ? !mark[d] : t->dims[d] != 1)
			dims[r++] = t->dims[d];
	}
	return ex_value(reshape_value(s, v, r, dims, loc), ex_weak(&x), loc);
}

/* v with the last k elements (0 < k < extent) along d moved to the front:
 * the two slices joined in the other order. */
static Value *roll_static(Sema *s, Value *v, int d, int64_t k, Loc loc)
{
	const Type *t = v->type;
	int rank = t->rank;
	int64_t n = t->dims[d];
	int64_t *start = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank), *size = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank);
	memcpy(size, t->dims, sizeof(int64_t) * (size_t)rank);
	Value *parts[2];
	start[d] = n - k, size[d] = k;
	parts[0] = slice_value(s, v, start, size, loc);
	start[d] = 0, size[d] = n - k;
	parts[1] = slice_value(s, v, start, size, loc);
	return concat_values(s, 2, parts, d, loc);
}

/* roll(x, shift, axis) (jnp.roll, pltpu.roll, §7.20): the last `shift`
 * elements along axis move to the front; a rank-1 x needs no axis.  A
 * run-time shift, taken modulo the extent n, is the constant rolls by its
 * bits: ceil(log2 n) rolls by 1, 2, 4, ..., each kept where its bit is set. */
Ex sema_roll(Sema *s, Loc loc, Ex x, Ex shift, const Ex *axis)
{
	x = rvalue(s, x);
	shift = rvalue(s, shift);
	if (x.kind == EX_ERROR || shift.kind == EX_ERROR || (axis && axis->kind == EX_ERROR))
		return ex_error(loc);
	int64_t k = 0, ax = 0;
	bool dynamic = shift.kind == EX_VALUE;
	if (dynamic && (ex_rank(&shift) != 0 || !dtype_is_int(ex_dtype(&shift)))) {
		error_at(s->cc, shift.loc, "the shift of roll() must be an integer scalar, found %s [§7.20]",
		         ex_type_str(s, &shift));
		return ex_error(loc);
	}
	if ((!dynamic && !const_int_arg(s, shift, "the shift of roll()", "§7.20", &k)) ||
	    (axis && !const_int_arg(s, *axis, "the axis of roll()", "§7.20", &ax)))
		return ex_error(loc);
	int rank = ex_rank(&x);
	if (!axis && rank != 1) {
		error_at(s->cc, loc, "roll() of %s needs an axis (a flattened roll is not supported) [§7.20]", ex_type_str(s, &x));
		return ex_error(loc);
	}
	int d = normalize_axis(s, ax, rank, axis ? axis->loc : loc, "roll", "§7.20");
	if (d < 0)
		return ex_error(loc);
	Value *v = as_value(s, x);
	int64_t n = v->type->dims[d];
	if (!dynamic) {
		k = ((k % n) + n) % n;
		return k == 0 ? x : ex_value(roll_static(s, v, d, k, loc), ex_weak(&x), loc);
	}
	/* in i32, or i64 for wider or u32 shifts, where n and the shift fit */
	DType sdt = ex_dtype(&shift), dt = dtype_bits(sdt) > 32 || sdt == DT_U32 || n > INT32_MAX ? DT_I64 : DT_I32;
	shift = ex_value(cast_value(s, shift.v, dt, loc), false, loc);
	Ex km = sema_binary_ast(s, OP_MOD, loc, shift, ex_const(const_int(n, dt, true), loc)); /* in [0, n) */
	for (int64_t step = 1; step < n; step *= 2) {
		Ex bit = sema_binary_ast(s, OP_BITAND, loc, km, ex_const(const_int(step, dt, true), loc));
		Ex set = sema_binary_ast(s, OP_NE, loc, bit, ex_const(const_int(0, dt, true), loc));
		Ex rolled = ex_value(roll_static(s, v, d, step, loc), false, loc);
		v = as_value(s, sema_where(s, loc, set, rolled, ex_value(v, false, loc)));
	}
	return ex_value(v, ex_weak(&x), loc);
}

/* flip(x, axis) (jnp.flip, §7.20): the elements along each given axis (an
 * int or a tuple; all axes when left out) in reverse order. */
Ex sema_flip(Sema *s, Loc loc, Ex x, const Ex *axis)
{
	x = rvalue(s, x);
	int n = 0;
	int64_t *ax = NULL;
	if (x.kind == EX_ERROR || (axis && (axis->kind == EX_ERROR || !int_list(s, *axis, "an axis of flip()", &n, &ax))))
		return ex_error(loc);
	int rank = ex_rank(&x);
	if (x.kind == EX_CONST || rank == 0) {
		if (axis && n) {
			error_at(s->cc, axis->loc, "flip() of %s has no axis to flip [§7.20]", ex_type_str(s, &x));
			return ex_error(loc);
		}
		return x;
	}
	Value *v = x.v;
	bool *done = arena_alloc(s->a, (size_t)rank + 1);
	for (int k = 0; k < (axis ? n : rank); k++) {
		int d = axis ? normalize_axis(s, ax[k], rank, axis->loc, "flip", "§7.20") : k;
		if (d < 0)
			return ex_error(loc);
		if (done[d]) {
			error_at(s->cc, axis->loc, "flip(): axis %d given twice [§7.20]", d);
			return ex_error(loc);
		}
		done[d] = true;
		if (v->type->dims[d] == 1)
			continue;
		v = emit(s, IR_REVERSE, loc, v->type, 1, v);
		v->def->ival = d;
	}
	return ex_value(v, x.weak, loc);
}

/* The (before, after) widths of pad(): an int (every side), (lo, hi) (every
 * axis) or one (lo, hi) per axis, constants >= 0. */
static bool pad_widths(Sema *s, Ex w, int rank, int64_t *lo, int64_t *hi)
{
	bool nested = w.kind == EX_TUPLE && w.nitems > 0 && w.items[0].kind == EX_TUPLE;
	if (nested && w.nitems != rank && w.nitems != 1) {
		error_at(s->cc, w.loc, "pad(): %d (before, after) pairs for a value of rank %d [§7.20]", w.nitems, rank);
		return false;
	}
	for (int d = 0; d < rank; d++) {
		Ex e = nested ? w.items[w.nitems == 1 ? 0 : d] : w;
		int n;
		int64_t *p;
		if (!int_list(s, e, "a width of pad()", &n, &p))
			return false;
		if (n != 1 && n != 2) {
			error_at(s->cc, e.loc, "pad(): a width is an int or a (before, after) pair, found %d values [§7.20]", n);
			return false;
		}
		lo[d] = p[0], hi[d] = p[n - 1];
		if (lo[d] < 0 || hi[d] < 0) {
			error_at(s->cc, e.loc, "pad(): widths must be >= 0 (jnp.pad; negative lax.pad widths are not supported) "
			         "[§7.20]");
			return false;
		}
	}
	return true;
}

/* pad(x, widths, constant_values = c) (jnp.pad, mode "constant"): x with
 * lo[d] and hi[d] elements of c before and after it along each axis d - a
 * concatenation with filled blocks, axis by axis. */
Ex sema_pad(Sema *s, Loc loc, Ex x, Ex widths, const Ex *value)
{
	x = rvalue(s, x);
	Ex c = value ? rvalue(s, *value) : ex_const(const_int(0, DT_I32, true), loc);
	if (x.kind == EX_ERROR || widths.kind == EX_ERROR || c.kind == EX_ERROR)
		return ex_error(loc);
	int rank = ex_rank(&x);
	if (rank == 0) {
		error_at(s->cc, x.loc, "pad() of %s: there is no axis to pad [§7.20]", ex_type_str(s, &x));
		return ex_error(loc);
	}
	if (ex_rank(&c) != 0) {
		error_at(s->cc, c.loc, "constant_values= of pad() must be a scalar, found %s [§7.20]", ex_type_str(s, &c));
		return ex_error(loc);
	}
	int64_t *lo = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank), *hi = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank);
	if (!pad_widths(s, widths, rank, lo, hi))
		return ex_error(loc);
	Value *v = as_value(s, x);
	DType dt = v->type->dtype;
	c = sema_cast(s, c, dt, loc); /* jnp.pad converts the constant to x's dtype */
	if (c.kind == EX_ERROR)
		return c;
	Value *cv = as_value(s, c);
	for (int d = 0; d < rank; d++) {
		Value *parts[3];
		int np = 0;
		int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank);
		memcpy(dims, v->type->dims, sizeof(int64_t) * (size_t)rank);
		for (int side = 0; side < 2; side++) {
			int64_t w = side ? hi[d] : lo[d];
			if (side)
				parts[np++] = v;
			if (w == 0)
				continue;
			int64_t *fd = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank);
			memcpy(fd, dims, sizeof(int64_t) * (size_t)rank);
			fd[d] = w;
			Type *ft = type_tensor(s->a, dt, rank, fd);
			if (!check_fits(s, ft, loc))
				return ex_error(loc);
			parts[np++] = broadcast_value(s, cv, rank, fd, loc);
		}
		if (np > 1) {
			int64_t total = dims[d];
			if (__builtin_add_overflow(total, lo[d], &total) || __builtin_add_overflow(total, hi[d], &total)) {
				error_at(s->cc, widths.loc, "pad(): the padded extent exceeds 64 bits [§7.20]");
				return ex_error(loc);
			}
			v = concat_values(s, np, parts, d, loc);
			if (!type_fits(v->type)) /* emit_inst said so; the next axis would say it again */
				return ex_error(loc);
		}
	}
	return ex_value(v, ex_weak(&x), loc);
}

/* diagonal(x, offset, axis1, axis2) (jnp.diagonal): the elements
 * x[.., i, .., i + offset, ..] of axes axis1 and axis2, which are removed;
 * the diagonal becomes the last axis.  The window holding it is sliced
 * out, and each line along axis1 keeps its one element by a masked max. */
Ex sema_diagonal(Sema *s, Loc loc, Ex x, int64_t offset, int64_t axis1, int64_t axis2)
{
	x = rvalue(s, x);
	if (x.kind == EX_ERROR)
		return x;
	int rank = ex_rank(&x);
	if (rank < 2) {
		error_at(s->cc, x.loc, "diagonal() needs a value of rank 2 or more, found %s [§7.20]", ex_type_str(s, &x));
		return ex_error(loc);
	}
	int a1 = normalize_axis(s, axis1, rank, loc, "diagonal", "§7.20");
	int a2 = a1 < 0 ? -1 : normalize_axis(s, axis2, rank, loc, "diagonal", "§7.20");
	if (a2 < 0)
		return ex_error(loc);
	if (a1 == a2) {
		error_at(s->cc, loc, "diagonal(): axis1 and axis2 are both %d [§7.20]", a1);
		return ex_error(loc);
	}
	Value *v = as_value(s, x);
	const Type *t = v->type;
	int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
	int64_t len = 0;
	if (r0 < t->dims[a1] && c0 < t->dims[a2])
		len = t->dims[a1] - r0 < t->dims[a2] - c0 ? t->dims[a1] - r0 : t->dims[a2] - c0;
	if (len == 0) {
		error_at(s->cc, loc, "diagonal(): offset %lld leaves no element of %s (values have no empty axes) [§7.20]",
		         (long long)offset, ex_type_str(s, &x));
		return ex_error(loc);
	}
	int64_t *start = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank), *size = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank);
	memcpy(size, t->dims, sizeof(int64_t) * (size_t)rank);
	start[a1] = r0, size[a1] = len;
	start[a2] = c0, size[a2] = len;
	v = slice_value(s, v, start, size, loc);
	Type *it = type_tensor(s->a, DT_I32, rank, size);
	Value *i1 = emit(s, IR_IOTA, loc, it, 0), *i2 = emit(s, IR_IOTA, loc, it, 0);
	i1->def->ival = a1;
	i2->def->ival = a2;
	Value *m = emit(s, IR_EQ, loc, type_with_dtype(s->a, it, DT_BOOL), 2, i1, i2);
	Value *red = masked_max(s, v, m, a1, loc);
	int d = a2 > a1 ? a2 - 1 : a2; /* the diagonal's axis now; move it last */
	if (d != rank - 2) {
		int64_t *perm = arena_alloc(s->a, sizeof(int64_t) * (size_t)rank);
		for (int k = 0, j = 0; k < rank - 1; k++)
			if (k != d)
				perm[j++] = k;
		perm[rank - 2] = d;
		red = transpose_value(s, red, perm, loc);
	}
	return ex_value(red, ex_weak(&x), loc);
}

/* broadcast_in_dim(x, shape, dims) (lax.broadcast_in_dim, §7.20): axis i
 * of x becomes axis dims[i] of the result (increasing), of extent 1 or
 * shape[dims[i]]; a reshape that puts them there, then broadcast_to. */
Ex sema_broadcast_in_dim(Sema *s, Loc loc, Ex x, Ex shape, Ex dims)
{
	x = rvalue(s, x);
	int rank, n;
	int64_t *sh, *dm;
	if (x.kind == EX_ERROR || !shape_arg(s, shape, "broadcast_in_dim", "§7.20", false, &rank, &sh) ||
	    dims.kind == EX_ERROR || !int_list(s, dims, "an axis of broadcast_in_dim()", &n, &dm))
		return ex_error(loc);
	if (dims.kind == EX_TUPLE && dims.nitems == 0)
		n = 0;
	int xr = ex_rank(&x);
	const int64_t *xd = ex_dims(&x);
	if (n != xr) {
		error_at(s->cc, dims.loc, "broadcast_in_dim(): %s needs %d broadcast dimensions, found %d [§7.20]",
		         ex_type_str(s, &x), xr, n);
		return ex_error(loc);
	}
	int64_t *e = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	for (int d = 0; d < rank; d++)
		e[d] = 1;
	for (int i = 0; i < n; i++) {
		if (dm[i] < 0 || dm[i] >= rank || (i > 0 && dm[i] <= dm[i - 1]) || (xd[i] != 1 && xd[i] != sh[dm[i]])) {
			error_at(s->cc, dims.loc, "broadcast_in_dim(): broadcast dimension %d of %s is %lld, which is not an "
			         "increasing axis of the result shape %s of extent 1 or %lld [§7.20]", i, ex_type_str(s, &x),
			         (long long)dm[i], shape_str(s, ex_dtype(&x), rank, sh), (long long)xd[i]);
			return ex_error(loc);
		}
		e[dm[i]] = xd[i];
	}
	Type *bt = type_tensor(s->a, ex_dtype(&x), rank, sh);
	if (!check_fits(s, bt, loc))
		return ex_error(loc);
	Value *v = reshape_value(s, as_value(s, x), rank, e, loc);
	return ex_value(broadcast_value(s, v, rank, sh, loc), ex_weak(&x), loc);
}

/* ---- batched dot ------------------------------------------------------------------ */

/* Each batch is a dot of its own: the host's LLVM passes take time growing
 * faster than linearly in their number (64 batches of [16, 8] x [8, 8]:
 * 6.4 s; 256: 76 s), so more are an error (§7.13). */
enum { BDOT_MAX_BATCHES = 64 };

/* Operand k of batch j: x[j] as a rank-2 value (x of rank 3). */
static Ex batch_of(Sema *s, Ex x, int64_t j, Loc loc)
{
	const Type *t = x.v->type;
	int64_t start[3] = {j, 0, 0}, size[3] = {1, t->dims[1], t->dims[2]};
	Value *v = slice_value(s, x.v, start, size, loc);
	return ex_value(reshape_value(s, v, 2, t->dims + 1, loc), x.weak, loc);
}

/* dot of a[B, M, K] and b[B, K, N] (lax.dot_general with batch dimension 0,
 * einsum "bmk,bkn->bmn"): the B rank-2 dots of §7.13, one per batch, joined
 * along a new leading axis - so every target takes it as it takes dots,
 * slices and concatenations.  An acc value of rank 3 is sliced likewise; a
 * lower-rank one broadcasts to every batch. */
static Ex batched_dot3(Sema *s, Loc loc, Ex a, Ex b, const DotOpts *o)
{
	int64_t n = ex_dims(&a)[0];
	Value **parts = vals(s, (int)n);
	const Ex *acc = o->acc;
	for (int64_t j = 0; j < n; j++) {
		Ex accj = acc && ex_rank(acc) == 3 ? batch_of(s, *acc, j, loc) : acc ? *acc : (Ex){0};
		DotOpts oj = *o;
		oj.acc = acc ? &accj : NULL;
		Ex r = sema_dot(s, loc, batch_of(s, a, j, loc), batch_of(s, b, j, loc), &oj);
		if (r.kind == EX_ERROR)
			return r; /* the same error for every batch: report it once */
		const Type *rt = r.v->type;
		int64_t dims[3] = {1, rt->dims[0], rt->dims[1]};
		parts[j] = reshape_value(s, r.v, 3, dims, loc);
	}
	return ex_value(concat_values(s, (int)n, parts, 0, loc), false, loc);
}

/* x[B1, ..., Bk, P, Q] as x[B1 * ... * Bk, P, Q]. */
static Ex flatten_batches(Sema *s, Ex x, int64_t nb, Loc loc)
{
	int r = ex_rank(&x);
	const int64_t *d = ex_dims(&x);
	int64_t dims[3] = {nb, d[r - 2], d[r - 1]};
	return ex_value(reshape_value(s, as_value(s, x), 3, dims, loc), ex_weak(&x), loc);
}

/* dot of a[B..., M, K] and b[B..., K, N], values of one rank r >= 3
 * (dot_general with batch dimensions 0 .. r - 3): the leading batch dims
 * are flattened into one, the rank-3 batched dot above, and the result
 * reshaped to [B..., M, N].  An acc value of rank r has the same batch
 * dims; one of rank 2 or less broadcasts to every batch. */
Ex sema_batched_dot(Sema *s, Loc loc, Ex a, Ex b, const DotOpts *o)
{
	const Ex *acc = o->acc;
	int r = ex_rank(&a); /* a and b are values of one rank r >= 3 */
	const int64_t *ad = ex_dims(&a), *bd = ex_dims(&b);
	int64_t nb = 1; /* the batches, saturated at INT64_MAX (dims up to 2^62 each) */
	for (int i = 0; i < r - 2; i++) {
		if (ad[i] != bd[i]) {
			error_at(s->cc, loc, "batched dot of %s and %s: the batch dimensions differ (%lld vs %lld) [§7.13]",
			         ex_type_str(s, &a), ex_type_str(s, &b), (long long)ad[i], (long long)bd[i]);
			return ex_error(loc);
		}
		nb = ad[i] != 0 && nb > INT64_MAX / ad[i] ? INT64_MAX : nb * ad[i];
	}
	if (nb > BDOT_MAX_BATCHES) {
		char count[32];
		snprintf(count, sizeof count, nb == INT64_MAX ? "over 2^63" : "%lld", (long long)nb);
		error_at(s->cc, loc, "batched dot of %s and %s: %s batches, but pkc unrolls at most %d; put the batch "
		         "on a grid axis with a squeezed block dim (samples/bmm.pk) [§7.13]",
		         ex_type_str(s, &a), ex_type_str(s, &b), count, BDOT_MAX_BATCHES);
		return ex_error(loc);
	}
	Ex accv = {0};
	if (acc) {
		accv = rvalue(s, *acc);
		if (accv.kind == EX_ERROR)
			return accv;
		int er = ex_rank(&accv);
		bool ok = er <= 2 || (er == r && memcmp(ex_dims(&accv), ad, sizeof(int64_t) * (size_t)(r - 2)) == 0);
		if (!ok) {
			char bd[96] = "";
			for (int i = 0, n = 0; i < r - 2 && n < (int)sizeof bd - 24; i++)
				n += snprintf(bd + n, sizeof bd - (size_t)n, "%s%lld", i ? ", " : "", (long long)ad[i]);
			error_at(s->cc, accv.loc, "the accumulator of a batched dot must have the batch dims [%s] or rank 2 or less, "
			         "found %s [§7.13]", bd, ex_type_str(s, &accv));
			return ex_error(loc);
		}
		if (er == r)
			accv = flatten_batches(s, accv, nb, loc);
	}
	DotOpts o3 = *o;
	o3.acc = acc ? &accv : NULL;
	if (r == 3)
		return batched_dot3(s, loc, a, b, &o3);
	Ex res = batched_dot3(s, loc, flatten_batches(s, a, nb, loc), flatten_batches(s, b, nb, loc), &o3);
	if (res.kind == EX_ERROR)
		return res;
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)r);
	memcpy(dims, ad, sizeof(int64_t) * (size_t)(r - 2));
	dims[r - 2] = res.v->type->dims[1];
	dims[r - 1] = res.v->type->dims[2];
	return ex_value(reshape_value(s, res.v, r, dims, loc), false, loc);
}
