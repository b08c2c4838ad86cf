/* sema_expr.c - expressions: constant folding, the values of names,
 * operators with JAX promotion and NumPy broadcasting, value indexing and
 * the conversions that assignments and stores apply.  Ref access is in
 * sema_access.c, builtin calls in sema_builtins.c, scopes and lookup in
 * sema_scope.c. */
#include "sema.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- Ex constructors ------------------------------------------------------ */

Ex ex_error(Loc loc)
{
	Ex e = {0};
	e.kind = EX_ERROR;
	e.loc = loc;
	return e;
}

Ex ex_void(Loc loc)
{
	Ex e = {0};
	e.kind = EX_VOID;
	e.loc = loc;
	return e;
}

Ex ex_const(ConstVal c, Loc loc)
{
	Ex e = {0};
	e.kind = EX_CONST;
	e.c = c;
	e.loc = loc;
	return e;
}

Ex ex_value(Value *v, bool weak, Loc loc)
{
	Ex e = {0};
	e.kind = EX_VALUE;
	e.v = v;
	e.weak = weak;
	e.loc = loc;
	return e;
}

ConstVal const_int(int64_t i, DType dt, bool weak)
{
	return (ConstVal){.dtype = dt, .weak = weak, .i = i};
}

ConstVal const_float(double f, DType dt, bool weak)
{
	return (ConstVal){.dtype = dt, .weak = weak, .f = f};
}

ConstVal const_bool(bool b)
{
	return (ConstVal){.dtype = DT_BOOL, .i = b};
}

DType ex_dtype(const Ex *e)
{
	return e->kind == EX_CONST ? e->c.dtype : e->kind == EX_VALUE ? e->v->type->dtype : DT_NONE;
}

bool ex_weak(const Ex *e)
{
	return e->kind == EX_CONST ? e->c.weak : e->kind == EX_VALUE ? e->weak : false;
}

int ex_rank(const Ex *e)
{
	return e->kind == EX_VALUE ? e->v->type->rank : 0;
}

const int64_t *ex_dims(const Ex *e)
{
	return e->kind == EX_VALUE ? e->v->type->dims : NULL;
}

const char *ex_type_str(Sema *s, const Ex *e)
{
	switch (e->kind) {
	case EX_CONST: return dtype_str(e->c.dtype);
	case EX_VALUE:
	case EX_REF: return type_str(s->a, e->v->type);
	case EX_ACCESS: return e->acc->type ? type_str(s->a, e->acc->type) : "a Ref access";
	case EX_DTYPE: return "a dtype";
	case EX_TUPLE: return "a tuple";
	case EX_NONE: return "None";
	case EX_VOID: return "no value";
	case EX_ERROR: break;
	}
	return "<error>";
}

/* ---- constants ------------------------------------------------------------ */

static bool is_intlike(DType dt) { return dt == DT_BOOL || dtype_is_int(dt); }

/* The representable range of an integer (or bool) dtype in an int64.  u64
 * is limited to the int64 range: constants live in int64. */
static void int_range(DType dt, int64_t *lo, int64_t *hi)
{
	int bits = dt == DT_BOOL ? 1 : dtype_bits(dt);
	if (dt == DT_BOOL) {
		*lo = 0, *hi = 1;
	} else if (dtype_is_unsigned(dt)) {
		*lo = 0;
		*hi = bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << bits) - 1);
	} else {
		*lo = bits >= 64 ? INT64_MIN : -(int64_t)(UINT64_C(1) << (bits - 1));
		*hi = bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
	}
}

static bool int_fits(int64_t v, DType dt)
{
	int64_t lo, hi;
	int_range(dt, &lo, &hi);
	return v >= lo && v <= hi;
}

/* floor() without libm: exact for every double. */
static double pk_floor(double x)
{
	if (!(x > -9.0e15 && x < 9.0e15)) /* huge (already integral), inf or nan */
		return x;
	double t = (double)(int64_t)x;
	return t > x ? t - 1.0 : t;
}

/* Python's float divmod (and jnp.floor_divide's), as the back ends
 * compute it: from the exact remainder fmod(x, y), so 1.0 // 0.1 is 9,
 * not floor(1.0 / 0.1) = 10 (§7.2).  y is not zero. */
static void float_divmod(double x, double y, double *div, double *mod)
{
	double m = fmod(x, y);
	double d = (x - m) / y;
	if (m != 0.0) {
		if ((y < 0) != (m < 0)) {
			m += y;
			d -= 1.0;
		}
	} else {
		m = copysign(0.0, y);
	}
	if (d != 0.0) {
		double f = pk_floor(d);
		d = d - f > 0.5 ? f + 1.0 : f; /* d is within an ulp or so of an integer */
	} else {
		d = copysign(0.0, x / y);
	}
	*div = d;
	*mod = m;
}

/* Rounds a float constant to the precision of its dtype (f32 only; f16
 * and bf16 are left to the backend). */
static double round_to(double f, DType dt)
{
	return dt == DT_F32 ? (double)(float)f : f;
}

bool const_fits(const ConstVal *c, DType dt)
{
	if (!dtype_is_int(dt))
		return true;
	if (dtype_is_float(c->dtype))
		return c->f > -9.2e18 && c->f < 9.2e18 && int_fits((int64_t)c->f, dt);
	return int_fits(c->i, dt);
}

/* v wrapped to the bits of an integer dtype (two's complement), as the
 * run-time arithmetic of strong integers does (§7.2). */
static int64_t wrap_int(uint64_t v, DType dt)
{
	int bits = dt == DT_BOOL ? 1 : dtype_bits(dt);
	if (bits >= 64)
		return (int64_t)v;
	uint64_t mask = (UINT64_C(1) << bits) - 1;
	v &= mask;
	if (dtype_is_signed(dt) && (v >> (bits - 1)))
		v |= ~mask;
	return (int64_t)v;
}

bool const_convert(Sema *s, ConstVal *c, DType dt, bool explicit_cast, Loc loc)
{
	ConstVal r = {.dtype = dt};
	if (dtype_is_float(dt)) {
		double f = dtype_is_float(c->dtype) ? c->f : c->dtype == DT_U64 ? (double)(uint64_t)c->i : (double)c->i;
		r.f = round_to(f, dt);
	} else if (dt == DT_BOOL) {
		r.i = dtype_is_float(c->dtype) ? c->f != 0.0 : c->i != 0;
	} else if (dtype_is_float(c->dtype)) {
		/* Only a cast converts a float to an integer: truncation; NaN and
		 * out-of-range values are unspecified (§7.14): 0 here. */
		double f = c->f;
		r.i = f > -9.2e18 && f < 9.2e18 ? wrap_int((uint64_t)(int64_t)f, dt) : 0;
	} else if (explicit_cast || !c->weak) {
		/* Casts wrap (§7.14); a strong integer only ever widens implicitly. */
		r.i = wrap_int((uint64_t)c->i, dt);
	} else {
		if (!int_fits(c->i, dt)) { /* a weak constant must fit (§4.7) */
			error_at(s->cc, loc, "constant %lld does not fit in %s [§4.7]", (long long)c->i, dtype_str(dt));
			*c = r;
			return false;
		}
		r.i = c->i;
	}
	*c = r;
	return true;
}

/* Integer power by squaring, wrapping modulo 2^64; true on int64 overflow. */
static bool ipow(int64_t b, int64_t e, int64_t *out)
{
	int64_t r = 1;
	bool ovf = false;
	while (e > 0) {
		if (e & 1)
			ovf |= __builtin_mul_overflow(r, b, &r);
		e >>= 1;
		if (e)
			ovf |= __builtin_mul_overflow(b, b, &b);
	}
	*out = r;
	return ovf;
}

static bool fold_error(Sema *s, Loc loc, bool *err, const char *msg)
{
	error_at(s->cc, loc, "%s", msg);
	*err = true;
	return false;
}

/* Folds a binary operation on float constants (computed in double,
 * rounded to f32 for f32 results). */
static bool fold_float(Sema *s, Op op, Loc loc, double x, double y, DType rdt, ConstVal *out, bool *err)
{
	double r = 0;
	switch (op) {
	case IR_ADD: r = x + y; break;
	case IR_SUB: r = x - y; break;
	case IR_MUL: r = x * y; break;
	case IR_DIV:
	case IR_FLOORDIV:
	case IR_MOD:
	case IR_REM:
		if (y == 0.0)
			return fold_error(s, loc, err, "division by zero in a constant expression [§4.3]");
		if (op == IR_DIV || op == IR_REM) {
			r = op == IR_DIV ? x / y : fmod(x, y);
		} else {
			double d, m;
			float_divmod(x, y, &d, &m);
			r = op == IR_FLOORDIV ? d : m;
		}
		break;
	case IR_POW: {
		if (!(y == pk_floor(y) && y >= -64 && y <= 64)) {
			r = pow(x, y);
			break;
		}
		double p = 1.0;
		for (int n = 0; n < (y < 0 ? -y : y); n++)
			p *= x;
		r = y < 0 ? 1.0 / p : p;
		break;
	}
	case IR_ATAN2: r = atan2(x, y); break;
	case IR_MIN: r = x != x || y != y ? NAN : x < y ? x : y; break; /* NaN wins, as at run time (§7.10) */
	case IR_MAX: r = x != x || y != y ? NAN : x > y ? x : y; break;
	case IR_EQ: out->i = x == y; return true;
	case IR_NE: out->i = x != y; return true;
	case IR_LT: out->i = x < y; return true;
	case IR_LE: out->i = x <= y; return true;
	case IR_GT: out->i = x > y; return true;
	case IR_GE: out->i = x >= y; return true;
	default: return false;
	}
	out->f = round_to(r, rdt);
	return true;
}

/* Folds a binary operation on integer (or bool) constants of dtype cdt.
 * Weak constants compute exactly in 64 bits, an overflow being an error;
 * strong ones wrap in their dtype like the run-time operation (§4.3).  A
 * u64 constant is held in an int64 bit pattern, so it compares, divides
 * and shifts unsigned. */
static bool fold_int(Sema *s, Op op, Loc loc, int64_t x, int64_t y, DType cdt, bool weak, ConstVal *out,
                     bool *err)
{
	uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
	bool u64 = cdt == DT_U64;
	int bits = cdt == DT_BOOL ? 1 : dtype_bits(cdt);
	int64_t r = 0;
	bool ovf = false; /* the exact result does not fit in an int64 (r holds it wrapped) */
	switch (op) {
	case IR_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
	case IR_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
	case IR_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
	case IR_FLOORDIV:
	case IR_MOD:
	case IR_DIV:
	case IR_REM: {
		bool quot = op == IR_FLOORDIV || op == IR_DIV;
		if (y == 0)
			return fold_error(s, loc, err, "division by zero in a constant expression [§4.3]");
		if (u64) {
			r = (int64_t)(quot ? ux / uy : ux % uy);
		} else if (x == INT64_MIN && y == -1) { /* wraps to itself, remainder 0 (§7.2) */
			ovf = quot;
			r = quot ? INT64_MIN : 0;
		} else {
			r = quot ? x / y : x % y;
			if ((op == IR_FLOORDIV || op == IR_MOD) && (x % y != 0) && ((x < 0) != (y < 0))) /* Python floors */
				r = op == IR_FLOORDIV ? r - 1 : r + y;
		}
		break;
	}
	case IR_POW:
		if (y < 0 && !u64)
			return fold_error(s, loc, err, "negative exponent in an integer power [§7.2]");
		ovf = ipow(x, y, &r);
		break;
	case IR_MIN: r = (u64 ? ux < uy : x < y) ? x : y; break;
	case IR_MAX: r = (u64 ? ux > uy : x > y) ? x : y; break;
	case IR_AND: r = x & y; break;
	case IR_OR: r = x | y; break;
	case IR_XOR: r = x ^ y; break;
	case IR_SHL:
	case IR_SHR:
		if (weak && y < 0)
			return fold_error(s, loc, err, "negative shift count in a constant expression [§7.4]");
		if (y < 0 || y >= (weak ? 64 : bits) || (u64 && uy >= 64)) { /* XLA's rule (§7.4) */
			r = op == IR_SHR && x < 0 && !u64 ? -1 : 0;
			ovf = op == IR_SHL && x != 0;
		} else if (op == IR_SHR) {
			r = u64 ? (int64_t)(ux >> y) : x < 0 ? ~(~x >> y) : x >> y;
		} else {
			r = (int64_t)(ux << y);
			ovf = (r >> y) != x;
		}
		break;
	case IR_EQ: r = x == y; break;
	case IR_NE: r = x != y; break;
	case IR_LT: r = u64 ? ux < uy : x < y; break;
	case IR_LE: r = u64 ? ux <= uy : x <= y; break;
	case IR_GT: r = u64 ? ux > uy : x > y; break;
	case IR_GE: r = u64 ? ux >= uy : x >= y; break;
	default: return false;
	}
	if (op_info[op].flags & F_CMP) {
		out->i = r;
		return true;
	}
	if (weak && ovf)
		return fold_error(s, loc, err, "integer overflow in a constant expression: the result exceeds 64 bits [§4.3]");
	out->i = weak ? r : wrap_int((uint64_t)r, out->dtype);
	return true;
}

/* Folds a binary operation on constants already converted to the compute
 * dtype cdt.  Returns false without an error when the operation cannot be
 * folded (float ** non-integer: the caller emits it), and false after an
 * error (division by zero, weak overflow) with *err set. */
static bool fold_binary(Sema *s, Op op, Loc loc, ConstVal a, ConstVal b, DType cdt, DType rdt, bool weak,
                        ConstVal *out, bool *err)
{
	*err = false;
	*out = (ConstVal){.dtype = rdt, .weak = weak};
	if (dtype_is_float(cdt))
		return fold_float(s, op, loc, a.f, b.f, rdt, out, err);
	return fold_int(s, op, loc, a.i, b.i, cdt, weak, out, err);
}

bool const_int_arg(Sema *s, Ex e, const char *what, const char *clause, int64_t *out)
{
	if (e.kind == EX_ERROR)
		return false;
	if (e.kind != EX_CONST || !dtype_is_int(e.c.dtype)) {
		error_at(s->cc, e.loc, "%s must be a constant integer, found %s [%s]", what,
		         e.kind == EX_CONST ? dtype_str(e.c.dtype) : e.kind == EX_VALUE ? "a runtime value"
		                                                                          : ex_type_str(s, &e),
		         clause);
		return false;
	}
	*out = e.c.i;
	return true;
}

bool const_bool_arg(Sema *s, Ex e, const char *what, const char *clause, bool *out)
{
	if (e.kind == EX_ERROR)
		return false;
	if (e.kind != EX_CONST || e.c.dtype != DT_BOOL) {
		error_at(s->cc, e.loc, "%s must be a constant bool (true or false), found %s [%s]", what,
		         e.kind == EX_VALUE ? "a runtime value" : ex_type_str(s, &e), clause);
		return false;
	}
	*out = e.c.i != 0;
	return true;
}

/* ---- instruction building ----------------------------------------------- */

Value **vals(Sema *s, int n)
{
	return arena_alloc(s->a, sizeof(Value *) * (size_t)(n > 0 ? n : 1));
}

bool check_fits(Sema *s, const Type *t, Loc loc)
{
	if (type_fits(t))
		return true;
	error_at(s->cc, loc, "%s is too large: 2^63 bytes or more [§4.2]", type_shape_str(s->a, t));
	return false;
}

Inst *emit_inst(Sema *s, Op op, Loc loc, int nargs, Value **args, int nres, Type **rtypes)
{
	Inst *i = ir_inst_new(s->a, s->k, op, loc, nargs, args, nres, rtypes);
	ir_append(s->region, i);
	/* A shape too large is reported where it first appears, not again in
	 * everything computed from it. */
	bool args_fit = true;
	for (int j = 0; j < nargs; j++)
		args_fit &= type_fits(args[j]->type);
	for (int r = 0; r < nres && args_fit; r++)
		check_fits(s, rtypes[r], loc);
	return i;
}

Value *emit(Sema *s, Op op, Loc loc, Type *rt, int nargs, ...)
{
	Value *args[4];
	va_list ap;
	PKC_ASSERT(nargs <= 4);
	va_start(ap, nargs);
	for (int i = 0; i < nargs; i++)
		args[i] = va_arg(ap, Value *);
	va_end(ap);
	return emit_inst(s, op, loc, nargs, args, 1, &rt)->results[0];
}

Value *emit_const(Sema *s, ConstVal c, Type *t, Loc loc)
{
	check_fits(s, t, loc);
	if (dtype_is_float(t->dtype))
		return ir_const_float(s->a, s->k, s->region, loc, t, c.f);
	return ir_const_int(s->a, s->k, s->region, loc, t, c.i);
}

Value *cast_value(Sema *s, Value *v, DType dt, Loc loc)
{
	if (v->type->dtype == dt)
		return v;
	return emit(s, IR_CAST, loc, type_with_dtype(s->a, v->type, dt), 1, v);
}

static bool same_dims(int ra, const int64_t *a, int rb, const int64_t *b)
{
	if (ra != rb)
		return false;
	for (int d = 0; d < ra; d++)
		if (a[d] != b[d])
			return false;
	return true;
}

Value *broadcast_value(Sema *s, Value *v, int rank, const int64_t *dims, Loc loc)
{
	if (same_dims(v->type->rank, v->type->dims, rank, dims))
		return v;
	return emit(s, IR_BROADCAST, loc, type_tensor(s->a, v->type->dtype, rank, dims), 1, v);
}

Value *reshape_value(Sema *s, Value *v, int rank, const int64_t *dims, Loc loc)
{
	if (same_dims(v->type->rank, v->type->dims, rank, dims))
		return v;
	return emit(s, IR_RESHAPE, loc, type_tensor(s->a, v->type->dtype, rank, dims), 1, v);
}

Value *transpose_value(Sema *s, Value *v, const int64_t *perm, Loc loc)
{
	int r = v->type->rank;
	bool identity = true;
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(r + 1));
	for (int d = 0; d < r; d++) {
		dims[d] = v->type->dims[perm[d]];
		identity &= perm[d] == d;
	}
	if (identity)
		return v;
	Value *out = emit(s, IR_TRANSPOSE, loc, type_tensor(s->a, v->type->dtype, r, dims), 1, v);
	ir_set_perm(s->a, out->def, r, perm);
	return out;
}

Value *to_value(Sema *s, Ex e, Type *t)
{
	if (e.kind == EX_CONST) {
		ConstVal c = e.c;
		const_convert(s, &c, t->dtype, false, e.loc);
		return emit_const(s, c, t, e.loc);
	}
	PKC_ASSERT(e.kind == EX_VALUE);
	Value *v = cast_value(s, e.v, t->dtype, e.loc);
	return broadcast_value(s, v, t->rank, t->dims, e.loc);
}

Value *as_value(Sema *s, Ex e)
{
	if (e.kind == EX_CONST) /* weak literals already carry JAX's defaults, i32 and f32 */
		return to_value(s, e, type_scalar(s->a, e.c.dtype));
	PKC_ASSERT(e.kind == EX_VALUE);
	return e.v;
}

/* ---- values ------------------------------------------------------------- */

Ex rvalue(Sema *s, Ex e)
{
	switch (e.kind) {
	case EX_ERROR:
	case EX_CONST:
	case EX_VALUE:
		return e;
	case EX_ACCESS:
		if (e.acc->view) {
			error_at(s->cc, e.loc, "x.at[...] is a view of a Ref, not a value: read it with x.at[...][...] or "
			         "load(x.at[...]) [§7.5]");
			return ex_error(e.loc);
		}
		if (!access_ready(s, e.acc, "load"))
			return ex_error(e.loc);
		if (s->ctx == CTX_INDEX_MAP && !prefetch_map_read_ok(s, e.acc, e.loc))
			return ex_error(e.loc);
		return ex_value(emit_load(s, e.acc, NULL, NULL, e.loc), false, e.loc);
	case EX_REF: {
		const char *n = e.b ? e.b->name : "ref";
		error_at(s->cc, e.loc, "'%s' is a Ref (%s), not a value: a Ref must be indexed; write %s[...] [§4.5]", n,
		         type_str(s->a, e.v->type), n);
		return ex_error(e.loc);
	}
	case EX_DTYPE:
		error_at(s->cc, e.loc, "dtype '%s' is not a value; to convert x, write %s(x) or astype(x, %s) [§7.14]",
		         dtype_str(e.dt), dtype_str(e.dt), dtype_str(e.dt));
		return ex_error(e.loc);
	case EX_TUPLE:
		error_at(s->cc, e.loc, "expected a value, found a tuple (tuples are only shapes and permutations) [§7.12]");
		return ex_error(e.loc);
	case EX_NONE:
		error_at(s->cc, e.loc, "expected a value, found None (None is a squeezed block dim or a new axis) [§7.9]");
		return ex_error(e.loc);
	case EX_VOID:
		error_at(s->cc, e.loc, "expected a value, but this call produces none [§6.7]");
		return ex_error(e.loc);
	}
	return ex_error(e.loc);
}

Ex sema_value_expr(Sema *s, AstExpr *e)
{
	return rvalue(s, sema_expr(s, e));
}

/* Whether the dtype of e may implicitly become `to` under JAX promotion
 * (weak values adapt; strong ones only widen). */
/* Whether a value of dtype `from` converts implicitly to `to` (a const's
 * initializer, an assignment, a store): a weak value converts, a strong one
 * must match. */
bool implicitly_converts(DType from, bool weak, DType to)
{
	bool w;
	return from == to || (weak && promote_dtypes(from, true, to, false, &w) == to);
}

/* Whether shape (ra, a) broadcasts to exactly (rt, t). */
static bool broadcasts_to(int ra, const int64_t *a, int rt, const int64_t *t)
{
	if (ra > rt)
		return false;
	for (int d = 1; d <= ra; d++)
		if (a[ra - d] != t[rt - d] && a[ra - d] != 1)
			return false;
	return true;
}

const char *shape_str(Sema *s, DType dt, int rank, const int64_t *dims)
{
	return type_str(s->a, type_tensor(s->a, dt, rank, dims));
}

Value *coerce_value(Sema *s, Ex e, Type *t, const char *what, const char *clause)
{
	e = rvalue(s, e);
	if (e.kind == EX_ERROR)
		return NULL;
	DType dt = ex_dtype(&e);
	if (!implicitly_converts(dt, ex_weak(&e), t->dtype)) {
		error_at(s->cc, e.loc, "%s: expected dtype %s, found %s%s; convert with astype(..., %s) [%s]", what,
		         dtype_str(t->dtype), ex_type_str(s, &e),
		         ex_weak(&e) ? " (a weak float converts only to float dtypes)" : "", dtype_str(t->dtype), clause);
		return NULL;
	}
	if (!broadcasts_to(ex_rank(&e), ex_dims(&e), t->rank, t->dims)) {
		error_at(s->cc, e.loc, "%s: cannot broadcast %s to %s [%s]", what, ex_type_str(s, &e),
		         shape_str(s, dt, t->rank, t->dims), clause);
		return NULL;
	}
	return to_value(s, e, type_tensor(s->a, t->dtype, t->rank, t->dims));
}

/* A bool scalar condition (if, when, while, requires). */
Value *condition(Sema *s, Ex e, const char *what, const char *clause)
{
	e = rvalue(s, e);
	if (e.kind == EX_ERROR)
		return NULL;
	if (ex_dtype(&e) != DT_BOOL || ex_rank(&e) != 0) {
		error_at(s->cc, e.loc, "%s must be a bool scalar, found %s [%s]", what, ex_type_str(s, &e), clause);
		return NULL;
	}
	return as_value(s, e);
}

/* ---- names ------------------------------------------------------------------ */

/* Reports a name used where its kind is not allowed. */
static Ex misplaced_name(Sema *s, Binding *b, Loc loc)
{
	const char *desc = binding_desc(b);
	switch (s->ctx) {
	case CTX_CONST:
		error_at(s->cc, loc, "'%s' is not a compile-time constant (it is %s) [%s]", b->name, desc, s->clause);
		break;
	case CTX_GRID:
		error_at(s->cc, loc, "'%s' is %s; only sizes, scalar parameters and constants may be used here [%s]",
		         b->name, desc, s->clause);
		break;
	case CTX_INDEX_MAP:
		error_at(s->cc, loc, "'%s' is %s; an index map may only use its program ids and constants [§5.6]",
		         b->name, desc);
		break;
	case CTX_BODY:
		error_at(s->cc, loc, "'%s' is %s and cannot be used in a kernel body [§5.10]", b->name, desc);
		break;
	}
	if (b->loc.line)
		note_at(s->cc, b->loc, "'%s' is declared here", b->name);
	return ex_error(loc);
}

Ex name_value(Sema *s, Binding *b, Loc loc)
{
	bool launch = s->ctx == CTX_GRID || s->ctx == CTX_BODY;
	Ex e;
	if (b->poisoned)
		return ex_error(loc);
	switch (b->kind) {
	case B_CONST:
		return const_binding_value(s, b, loc);
	case B_SIZE:
		if (!launch)
			break;
		return ex_value(s->sizes[b->index], false, loc);
	case B_SCALAR:
		if (!launch)
			break;
		return ex_value(s->scalars[b->index], false, loc);
	case B_OPERAND:
	case B_SCRATCH:
		if (s->ctx == CTX_INDEX_MAP && b->kind == B_OPERAND)
			return prefetch_map_ref(s, b, loc); /* §5.11 */
		if (s->ctx != CTX_BODY)
			break;
		e = (Ex){.kind = EX_REF, .loc = loc, .b = b};
		e.v = b->kind == B_OPERAND ? s->refs[b->index] : s->scratch[b->index];
		return e;
	case B_PID:
		if (s->ctx != CTX_INDEX_MAP)
			break;
		return ex_value(s->pids[b->index], false, loc);
	case B_LET:
	case B_LOOP:
		e = b->ex;
		e.loc = loc;
		return e;
	case B_VAR:
		if (!b->type)
			return ex_error(loc);
		return ex_value(b->cur, false, loc);
	case B_FN:
		error_at(s->cc, loc, "'%s' is a fn; call it: %s(...) [§3.7]", b->name, b->name);
		return ex_error(loc);
	}
	return misplaced_name(s, b, loc);
}

/* ---- shapes and axes -------------------------------------------------------- */

bool shape_arg(Sema *s, Ex e, const char *fname, const char *clause, bool allow_minus1, int *rank,
               int64_t **dims)
{
	if (e.kind == EX_ERROR)
		return false;
	Ex one[1];
	Ex *items = one;
	int n = 1;
	if (e.kind == EX_TUPLE) {
		items = e.items;
		n = e.nitems;
	} else {
		one[0] = e;
	}
	int64_t *d = arena_alloc(s->a, sizeof(int64_t) * (size_t)(n + 1));
	int minus1 = 0;
	for (int i = 0; i < n; i++) {
		Ex it = items[i];
		if (it.kind == EX_ERROR)
			return false;
		if (it.kind != EX_CONST || !dtype_is_int(it.c.dtype)) {
			error_at(s->cc, it.loc, "shape of %s() must be a constant integer or a tuple of them, found %s [%s]",
			         fname, it.kind == EX_VALUE ? "a runtime value" : ex_type_str(s, &it), clause);
			return false;
		}
		d[i] = it.c.i;
		if (d[i] == -1 && allow_minus1 && minus1++ == 0)
			continue;
		if (d[i] <= 0) {
			error_at(s->cc, it.loc, "dimension %lld in the shape of %s() must be positive%s [%s]",
			         (long long)d[i], fname, allow_minus1 ? " (or -1, once)" : "", clause);
			return false;
		}
	}
	*rank = n;
	*dims = d;
	return true;
}

int normalize_axis(Sema *s, int64_t axis, int rank, Loc loc, const char *fname, const char *clause)
{
	if (axis < -rank || axis >= rank) {
		error_at(s->cc, loc, "axis %lld of %s() is out of range for a value of rank %d [%s]", (long long)axis,
		         fname, rank, clause);
		return -1;
	}
	return (int)(axis < 0 ? axis + rank : axis);
}

/* ---- operators ---------------------------------------------------------------- */

/* How each AST binary operator is checked and built (MATMUL is dot). */
static const BinInfo bin_info[OP_COUNT] = {
	[OP_ADD] = {IR_ADD, "add", BC_ARITH, "§7.2"},
	[OP_SUB] = {IR_SUB, "subtract", BC_ARITH, "§7.2"},
	[OP_MUL] = {IR_MUL, "multiply", BC_ARITH, "§7.2"},
	[OP_DIV] = {IR_DIV, "divide", BC_DIV, "§7.2"},
	[OP_FLOORDIV] = {IR_FLOORDIV, "floor-divide", BC_ARITH, "§7.2"},
	[OP_MOD] = {IR_MOD, "take the remainder of", BC_ARITH, "§7.2"},
	[OP_POW] = {IR_POW, "raise", BC_ARITH, "§7.2"},
	[OP_BITAND] = {IR_AND, "bitwise-and", BC_BITWISE, "§7.4"},
	[OP_BITOR] = {IR_OR, "bitwise-or", BC_BITWISE, "§7.4"},
	[OP_BITXOR] = {IR_XOR, "bitwise-xor", BC_BITWISE, "§7.4"},
	[OP_SHL] = {IR_SHL, "shift", BC_SHIFT, "§7.4"},
	[OP_SHR] = {IR_SHR, "shift", BC_SHIFT, "§7.4"},
	[OP_EQ] = {IR_EQ, "compare", BC_CMP, "§7.3"},
	[OP_NE] = {IR_NE, "compare", BC_CMP, "§7.3"},
	[OP_LT] = {IR_LT, "compare", BC_CMP, "§7.3"},
	[OP_LE] = {IR_LE, "compare", BC_CMP, "§7.3"},
	[OP_GT] = {IR_GT, "compare", BC_CMP, "§7.3"},
	[OP_GE] = {IR_GE, "compare", BC_CMP, "§7.3"},
	[OP_AND] = {IR_AND, "'and'", BC_LOGIC, "§7.3"},
	[OP_OR] = {IR_OR, "'or'", BC_LOGIC, "§7.3"},
};

const BinInfo bin_min = {IR_MIN, "take the minimum of", BC_MINMAX, "§7.10"};
const BinInfo bin_max = {IR_MAX, "take the maximum of", BC_MINMAX, "§7.10"};
const BinInfo bin_add = {IR_ADD, "add", BC_INTONLY, "§7.17"};
const BinInfo bin_sub = {IR_SUB, "subtract", BC_INTONLY, "§7.17"};
const BinInfo bin_floordiv = {IR_FLOORDIV, "floor-divide", BC_INTONLY, "§7.17"};
const BinInfo bin_mod = {IR_MOD, "take the remainder of", BC_INTONLY, "§7.17"};
const BinInfo bin_ne = {IR_NE, "compare", BC_CMP, "§7.17"};
const BinInfo bin_div = {IR_DIV, "divide", BC_ARITH, "§7.2"};
const BinInfo bin_rem = {IR_REM, "take the remainder of", BC_ARITH, "§7.2"};
const BinInfo bin_atan2 = {IR_ATAN2, "take atan2 of", BC_DIV, "§7.10"}; /* integers as f32, as true division */

/* Why operands of dtypes a and b are not acceptable to the operation, or
 * NULL (§7.1). */
static const char *class_violation(const BinInfo *bi, DType a, DType b)
{
	bool fa = dtype_is_float(a), fb = dtype_is_float(b);
	bool ba = a == DT_BOOL, bb = b == DT_BOOL;
	switch (bi->cls) {
	case BC_ARITH:
		/* A bool converts to 0 or 1 next to a number; two bools are an error (§7.2). */
		return ba && bb ? "arithmetic on two bools is not allowed (use and, or, not; or convert with astype)" : NULL;
	case BC_DIV:
	case BC_CMP:
	case BC_MINMAX:
		return NULL;
	case BC_LOGIC:
		return ba && bb ? NULL : "'and', 'or' and 'not' need bool operands (compare first, e.g. x != 0)";
	case BC_BITWISE:
		return fa || fb ? "bitwise operations need integer or bool operands" : NULL;
	case BC_SHIFT:
	case BC_INTONLY:
		return dtype_is_int(a) && dtype_is_int(b) ? NULL : "the operands must be integers";
	}
	return NULL;
}

Ex sema_binop(Sema *s, const BinInfo *bi, Loc loc, Ex a, Ex b)
{
	a = rvalue(s, a);
	b = rvalue(s, b);
	if (a.kind == EX_ERROR || b.kind == EX_ERROR)
		return ex_error(loc);
	DType da = ex_dtype(&a), db = ex_dtype(&b);
	const char *why = class_violation(bi, da, db);
	if (why) {
		error_at(s->cc, loc, "cannot %s %s and %s: %s [%s]", bi->verb, ex_type_str(s, &a), ex_type_str(s, &b), why,
		         bi->clause);
		return ex_error(loc);
	}
	bool weak;
	DType dt = promote_dtypes(da, ex_weak(&a), db, ex_weak(&b), &weak);
	if (dt == DT_NONE) {
		error_at(s->cc, loc, "cannot %s %s and %s: they have no common dtype [§4.6]", bi->verb, ex_type_str(s, &a),
		         ex_type_str(s, &b));
		return ex_error(loc);
	}
	DType cdt = dt, rdt = dt;
	if (bi->cls == BC_DIV && !dtype_is_float(dt))
		cdt = rdt = DT_F32; /* true division: integers divide as f32 (jnp.true_divide) */
	if (op_info[bi->op].flags & F_CMP) {
		rdt = DT_BOOL;
		weak = false;
	}
	int rank;
	int64_t dims[64], *pdims = dims;
	int ra = ex_rank(&a), rb = ex_rank(&b);
	if (ra > 64 || rb > 64)
		pdims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(ra > rb ? ra : rb));
	if (!broadcast_shapes(ra, ex_dims(&a), rb, ex_dims(&b), &rank, pdims)) {
		error_at(s->cc, loc, "cannot %s %s and %s: shapes are not broadcast-compatible [§4.8]", bi->verb,
		         ex_type_str(s, &a), ex_type_str(s, &b));
		return ex_error(loc);
	}
	if (a.kind == EX_CONST && b.kind == EX_CONST) {
		ConstVal ca = a.c, cb = b.c, r;
		bool err;
		/* Weak integers fold exactly in 64 bits (§4.3), not in the i32
		 * they would be as values. */
		bool exact = weak && dtype_is_int(cdt);
		if (!exact && (!const_convert(s, &ca, cdt, false, a.loc) || !const_convert(s, &cb, cdt, false, b.loc)))
			return ex_error(loc);
		if (fold_binary(s, bi->op, loc, ca, cb, cdt, rdt, weak, &r, &err))
			return ex_const(r, loc);
		if (err)
			return ex_error(loc);
	}
	Type *ct = type_tensor(s->a, cdt, rank, pdims);
	Value *va = to_value(s, a, ct), *vb = to_value(s, b, ct);
	Value *v = emit(s, bi->op, loc, type_tensor(s->a, rdt, rank, pdims), 2, va, vb);
	return ex_value(v, weak, loc);
}

Ex sema_binary_ast(Sema *s, AstOp op, Loc loc, Ex a, Ex b)
{
	if ((op == OP_EQ || op == OP_NE) && a.kind == EX_DTYPE && b.kind == EX_DTYPE) /* if DT == bf16 (§7.3) */
		return ex_const(const_bool((a.dt == b.dt) == (op == OP_EQ)), loc);
	if (op == OP_MATMUL)
		return sema_matmul(s, loc, a, b);
	if ((unsigned)op >= OP_COUNT || !bin_info[op].verb)
		internal_error("sema: binary operator %d has no rule", (int)op);
	return sema_binop(s, &bin_info[op], loc, a, b);
}

/* -x, +x, ~x, not x. */
Ex sema_unary(Sema *s, AstOp op, Loc loc, Ex x)
{
	x = rvalue(s, x);
	if (x.kind == EX_ERROR)
		return x;
	DType dt = ex_dtype(&x);
	const char *sp = ast_op_spelling[op];
	bool ok = op == OP_NOT      ? dt == DT_BOOL
	          : op == OP_BITNOT ? is_intlike(dt)
	                            : dt != DT_BOOL;
	if (!ok) {
		error_at(s->cc, loc, "cannot apply unary '%s' to %s: %s [%s]", sp, ex_type_str(s, &x),
		         op == OP_NOT      ? "'not' needs a bool operand (compare first, e.g. x == 0)"
		         : op == OP_BITNOT ? "'~' needs an integer or bool operand"
		                           : "it needs a number (use not for bool)",
		         op == OP_NOT ? "§7.3" : op == OP_BITNOT ? "§7.4" : "§7.2");
		return ex_error(loc);
	}
	if (op == OP_PLUS)
		return x;
	if (x.kind == EX_CONST) {
		ConstVal c = x.c;
		if (dtype_is_float(dt)) {
			c.f = -c.f;
			return ex_const(c, loc);
		}
		if (op == OP_NOT || dt == DT_BOOL) {
			c.i = !c.i;
			return ex_const(c, loc);
		}
		int64_t r;
		bool ovf = false;
		if (op == OP_NEG)
			ovf = __builtin_sub_overflow((int64_t)0, c.i, &r);
		else
			r = ~c.i;
		if (c.weak && ovf) {
			error_at(s->cc, loc, "integer overflow in a constant expression: the result exceeds 64 bits [§4.3]");
			return ex_error(loc);
		}
		c.i = c.weak ? r : wrap_int((uint64_t)r, dt); /* strong constants wrap (§7.2) */
		return ex_const(c, loc);
	}
	Value *v = emit(s, op == OP_NEG ? IR_NEG : IR_NOT, loc, x.v->type, 1, x.v);
	return ex_value(v, x.weak, loc);
}


/* ---- expressions ---------------------------------------------------------- */

static Ex sema_name(Sema *s, AstExpr *e)
{
	Binding *b = lookup(s, e->name);
	if (b)
		return name_value(s, b, e->loc);
	Ex k;
	if (builtin_constant(e->name, e->loc, &k))
		return k;
	if (is_builtin_name(e->name))
		error_at(s->cc, e->loc, "'%s' is a builtin function; call it: %s(...) [§7.1]", e->name, e->name);
	else if (!report_pallas_name(s, "identifier", e->name, e->loc))
		report_unknown_name(s, e->name, e->loc, "identifier", NULL, 0);
	return ex_error(e->loc);
}

static Ex sema_tuple(Sema *s, AstExpr *e)
{
	Ex t = {.kind = EX_TUPLE, .loc = e->loc, .nitems = e->nitems};
	t.items = arena_alloc(s->a, sizeof(Ex) * (size_t)(e->nitems + 1));
	bool bad = false;
	for (int i = 0; i < e->nitems; i++) {
		Ex it = sema_expr(s, e->items[i]);
		if (it.kind == EX_ACCESS || it.kind == EX_REF || it.kind == EX_VOID)
			it = rvalue(s, it);
		bad |= it.kind == EX_ERROR;
		t.items[i] = it;
	}
	return bad ? ex_error(e->loc) : t;
}

/* A tuple indexed with one constant integer (x.shape[0]), negative
 * counting from the end. */
static Ex tuple_index(Sema *s, Ex t, AstExpr *ix)
{
	int64_t k;
	if (ix->nitems != 1 || ix->items[0]->kind == AE_SLICE || ix->items[0]->kind == AE_ELLIPSIS) {
		error_at(s->cc, ix->loc, "a tuple is indexed with one constant integer, e.g. x.shape[0] [§7.12]");
		return ex_error(ix->loc);
	}
	if (!const_int_arg(s, sema_value_expr(s, ix->items[0]), "the index of a tuple", "§7.12", &k))
		return ex_error(ix->loc);
	if (k < -t.nitems || k >= t.nitems) {
		error_at(s->cc, ix->items[0]->loc, "index %lld is out of range for a tuple of %d items [§7.12]", (long long)k,
		         t.nitems);
		return ex_error(ix->loc);
	}
	Ex r = t.items[k < 0 ? k + t.nitems : k];
	r.loc = ix->loc;
	return r;
}

AstExpr *unit_index(Sema *s, AstExpr *e)
{
	if (e->nitems != 1 || e->items[0]->kind != AE_TUPLE || e->items[0]->nitems != 0)
		return e;
	AstExpr *ix = arena_alloc(s->a, sizeof *ix), *ell = arena_alloc(s->a, sizeof *ell);
	*ix = *e;
	*ell = (AstExpr){.kind = AE_ELLIPSIS, .loc = e->items[0]->loc};
	ix->items = arena_alloc(s->a, sizeof *ix->items);
	ix->items[0] = ell;
	return ix;
}

static Ex sema_index(Sema *s, AstExpr *e)
{
	e = unit_index(s, e);
	if (e->lhs->kind == AE_FIELD && strcmp(e->lhs->name, "at") == 0)
		return sema_ref_view(s, e);
	Ex base = sema_expr(s, e->lhs);
	if (base.kind == EX_ERROR)
		return base;
	if (base.kind == EX_ACCESS && base.acc->view)
		return sema_view_index(s, base, e);
	if (base.kind == EX_REF) {
		Access *acc = build_access(s, base, e);
		if (!acc)
			return ex_error(e->loc);
		Ex r = {.kind = EX_ACCESS, .loc = e->loc, .acc = acc, .b = base.b};
		return r;
	}
	if (base.kind == EX_TUPLE)
		return tuple_index(s, base, e);
	return sema_value_index(s, base, e);
}

/* x.shape (a tuple of its extents: constants, and the size for a dynamic
 * dimension of a Ref), x.ndim and x.dtype of a value, a Ref or an indexed
 * Ref, which is not read (§7.12). */
static Ex shape_field(Sema *s, AstExpr *e, Ex x)
{
	const Type *t = x.kind == EX_REF ? x.v->type : x.kind == EX_ACCESS ? x.acc->type : NULL;
	if (x.kind == EX_ACCESS && !t) {
		access_ready(s, x.acc, "take the shape of");
		return ex_error(e->loc);
	}
	if (!t) {
		x = rvalue(s, x);
		if (x.kind == EX_ERROR)
			return x;
		if (x.kind == EX_VALUE)
			t = x.v->type;
	}
	DType dt = t ? t->dtype : ex_dtype(&x);
	int rank = t ? t->rank : 0;
	if (e->name[0] == 'd')
		return (Ex){.kind = EX_DTYPE, .loc = e->loc, .dt = dt};
	if (e->name[0] == 'n')
		return ex_const(const_int(rank, DT_I32, true), e->loc);
	Ex tup = {.kind = EX_TUPLE, .loc = e->loc, .nitems = rank};
	tup.items = arena_alloc(s->a, sizeof(Ex) * (size_t)(rank + 1));
	for (int d = 0; d < rank; d++) {
		Binding *size = t->dims[d] == DIM_DYNAMIC && t->syms ? lookup(s, t->syms[d]) : NULL;
		tup.items[d] = size ? name_value(s, size, e->loc) : ex_const(const_int(t->dims[d], DT_I32, true), e->loc);
	}
	return tup;
}

static Ex sema_field(Sema *s, AstExpr *e)
{
	if (report_module_prefix(s, e, false)) /* jnp.float32, lax.rsqrt */
		return ex_error(e->loc);
	if (is_dtype_info(e->lhs))
		return sema_dtype_info(s, e);
	Ex base = sema_expr(s, e->lhs);
	if (base.kind == EX_ERROR)
		return base;
	if (strcmp(e->name, "T") == 0)
		return sema_transpose(s, e->loc, base, NULL, 0);
	if (strcmp(e->name, "shape") == 0 || strcmp(e->name, "ndim") == 0 || strcmp(e->name, "dtype") == 0)
		return shape_field(s, e, base);
	if (strcmp(e->name, "at") == 0)
		error_at(s->cc, e->loc, "'.at' makes a view of a Ref and is indexed at once: x.at[i, :] [§7.5]");
	else if (is_builtin_name(e->name))
		error_at(s->cc, e->loc, "'.%s' is a method; call it: x.%s(...) [§7.12]", e->name, e->name);
	else
		error_at(s->cc, e->loc, "unknown attribute '.%s' (values have .T, .shape, .ndim, .dtype and builtin methods such as .astype(f32)) [§7.12]",
		         e->name);
	return ex_error(e->loc);
}

Ex sema_expr(Sema *s, AstExpr *e)
{
	switch (e->kind) {
	case AE_INT:
		if (e->int_overflow) {
			error_at(s->cc, e->loc, "integer literal is too large for a 64-bit integer [§2.4]");
			return ex_error(e->loc);
		}
		return ex_const(const_int(e->ival, DT_I32, true), e->loc);
	case AE_FLOAT:
		return ex_const(const_float(e->fval, DT_F32, true), e->loc);
	case AE_BOOL:
		return ex_const(const_bool(e->ival != 0), e->loc);
	case AE_NONE:
		return (Ex){.kind = EX_NONE, .loc = e->loc};
	case AE_ELLIPSIS:
		error_at(s->cc, e->loc, "'...' is only allowed in an index [§7.5]");
		return ex_error(e->loc);
	case AE_NAME:
		return sema_name(s, e);
	case AE_DTYPE:
		return (Ex){.kind = EX_DTYPE, .loc = e->loc, .dt = e->dtype};
	case AE_UNARY:
		return sema_unary(s, e->op, e->loc, sema_expr(s, e->lhs));
	case AE_BINARY: {
		Ex a = sema_expr(s, e->lhs);
		Ex b = sema_expr(s, e->rhs);
		return sema_binary_ast(s, e->op, e->loc, a, b);
	}
	case AE_CALL:
		return sema_call(s, e);
	case AE_INDEX:
		return sema_index(s, e);
	case AE_SLICE:
		error_at(s->cc, e->loc, "a slice is only allowed in an index [§7.6]");
		return ex_error(e->loc);
	case AE_STRING:
		error_at(s->cc, e->loc, "a string is only the format of debug_print(), the message of debug_check(), "
		         "the subscripts of einsum() or the precision= of dot() and einsum() (§7.13) [§7.19]");
		return ex_error(e->loc);
	case AE_FIELD:
		return sema_field(s, e);
	case AE_TUPLE:
		return sema_tuple(s, e);
	case AE_COUNT:
		break;
	}
	internal_error("sema: expression kind %d", (int)e->kind);
}
