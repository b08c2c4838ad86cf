/* sema_builtins.c - builtin functions (lang-spec/README.md §7): one table
 * row per name with its positional arity, accepted keywords and handler.
 * sema_call checks a call against its row (argument counts, keyword names,
 * duplicates) and evaluates the arguments; handlers check types and build
 * the IR.  Method sugar x.f(args) calls f with x as the first positional
 * argument; a dtype used as a function, f32(x), is a cast. */
#include "sema.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* Keyword arguments any builtin may accept. */
typedef enum Kw {
	KW_AXIS, KW_KEEPDIMS, KW_MASK, KW_OTHER, KW_ACC, KW_TRANS_A, KW_TRANS_B, KW_DIM, KW_DTYPE, KW_K,
	KW_CONSTANT_VALUES, KW_OFFSET, KW_AXIS1, KW_AXIS2, /* pad, diagonal (§7.20) */
	KW_APPROXIMATE, KW_NEGATIVE_SLOPE, KW_ALPHA,       /* gelu, leaky_relu, elu (§7.20) */
	KW_PREFERRED_ELEMENT_TYPE,                         /* dot: jnp.dot's name of acc = T (§7.13) */
	KW_SHIFT,                                          /* roll (§7.20) */
	KW_APPROX,                                         /* reciprocal (§7.20) */
	KW_PRECISION,                                      /* dot: lax.Precision (§7.13) */
	KW_COUNT
} Kw;

static const char *const kw_names[KW_COUNT] = {
	"axis", "keepdims", "mask", "other", "acc", "trans_a", "trans_b", "dim", "dtype", "k",
	"constant_values", "offset", "axis1", "axis2", "approximate", "negative_slope", "alpha",
	"preferred_element_type", "shift", "approx", "precision",
};

#define K(x) (1u << KW_##x)
#define NOKW (-1)
#define MAXPOS 8 /* select_n(which, up to 7 cases) */

struct Builtin;

/* One call being checked: the arguments, evaluated. */
typedef struct Call {
	const struct Builtin *bi; /* the builtin called */
	Loc loc;                  /* of the call */
	Ex pos[MAXPOS];           /* positional arguments (a method's receiver first) */
	int npos;                 /* count of pos */
	Ex kw[KW_COUNT];          /* keyword arguments */
	bool has[KW_COUNT];       /* which keywords were given */
} Call;

typedef Ex (*BuiltinFn)(Sema *s, Call *c);

typedef struct Builtin {
	const char *name;   /* spelling */
	int min_pos;        /* fewest positional arguments */
	int max_pos;        /* most positional arguments (not counting pos_kw) */
	int pos_kw;         /* keyword that one more positional argument stands for, or NOKW */
	unsigned kws;       /* accepted keywords (K_ bits) */
	const char *clause; /* lang-spec clause its diagnostics cite */
	BuiltinFn fn;       /* handler; NULL: string_call reads the call itself (its string argument) */
	int arg;            /* handler parameter: IR opcode or AtomicKind; STRING_EINSUM */
	bool const_ok;      /* may appear in constant expressions (it folds) */
} Builtin;

/* arg of the einsum row: the string-taking builtins other than §7.19's. */
enum { STRING_EINSUM = -1 };

/* ---- helpers ----------------------------------------------------------------- */

/* Where the current expression is, for messages. */
static const char *ctx_phrase(const Sema *s)
{
	switch (s->ctx) {
	case CTX_CONST: return "a constant expression";
	case CTX_GRID: return strcmp(s->clause, "§5.9") == 0 ? "a requires clause" : "the grid";
	case CTX_INDEX_MAP: return "an index map";
	case CTX_BODY: break;
	}
	return "a kernel body";
}

/* The argument as a value, or poison. */
static Ex val(Sema *s, Ex e)
{
	return rvalue(s, e);
}

static DType kw_dtype(Sema *s, Call *c, Kw k, DType dflt)
{
	if (!c->has[k])
		return dflt;
	Ex e = c->kw[k];
	if (e.kind == EX_ERROR)
		return DT_NONE;
	if (e.kind != EX_DTYPE) {
		error_at(s->cc, e.loc, "%s= of %s() must be a dtype such as f32, found %s [%s]", kw_names[k], c->bi->name,
		         ex_type_str(s, &e), c->bi->clause);
		return DT_NONE;
	}
	return e.dt;
}

static Ex ex_of(Value *v, Loc loc)
{
	return ex_value(v, false, loc);
}

/* Explicit conversion (astype semantics): constants fold with range checks. */
static Ex cast_ex(Sema *s, Ex x, DType dt, Loc loc)
{
	x = val(s, x);
	if (x.kind == EX_ERROR)
		return x;
	if (x.kind == EX_CONST) {
		ConstVal c = x.c;
		if (!const_convert(s, &c, dt, true, x.loc))
			return ex_error(loc);
		return ex_const(c, loc);
	}
	return ex_of(cast_value(s, x.v, dt, loc), loc);
}

Ex sema_cast(Sema *s, Ex x, DType dt, Loc loc)
{
	return cast_ex(s, x, dt, loc);
}

/* The Ref access a load/store/atomic addresses: x[...] or a bare Ref. */
static Access *target_access(Sema *s, Call *c, Ex t)
{
	if (t.kind == EX_ERROR)
		return NULL;
	if (t.kind == EX_ACCESS)
		return t.acc;
	if (t.kind == EX_REF)
		return whole_access(s, t, t.loc);
	error_at(s->cc, t.loc, "the first argument of %s() must be a Ref access such as x[...], found %s [%s]",
	         c->bi->name, ex_type_str(s, &t), c->bi->clause);
	return NULL;
}

/* mask= as a bool value of the access shape. */
static Value *mask_value(Sema *s, Call *c, const Type *shape)
{
	Ex m = val(s, c->kw[KW_MASK]);
	if (m.kind == EX_ERROR)
		return NULL;
	if (ex_dtype(&m) != DT_BOOL) {
		error_at(s->cc, m.loc, "mask= of %s() must be bool, found %s [%s]", c->bi->name, ex_type_str(s, &m),
		         c->bi->clause);
		return NULL;
	}
	Type *t = type_tensor(s->a, DT_BOOL, shape->rank, shape->dims);
	int r = ex_rank(&m);
	const int64_t *d = ex_dims(&m);
	bool ok = r <= t->rank;
	for (int i = 1; ok && i <= r; i++)
		ok = d[r - i] == 1 || d[r - i] == t->dims[t->rank - i];
	if (!ok) {
		error_at(s->cc, m.loc, "mask= of %s(): cannot broadcast %s to the access shape %s [%s]", c->bi->name,
		         ex_type_str(s, &m), type_str(s->a, t), c->bi->clause);
		return NULL;
	}
	return to_value(s, m, t);
}

/* ---- program environment (§7.15) and integer helpers (§7.17) --------------- */

static Ex bi_program_id(Sema *s, Call *c)
{
	const char *fname = c->bi->name;
	if (!c->has[KW_AXIS]) {
		error_at(s->cc, c->loc, "%s() needs the grid axis: %s(0) [§7.15]", fname, fname);
		return ex_error(c->loc);
	}
	int64_t axis;
	if (!const_int_arg(s, c->kw[KW_AXIS], "the axis of program_id()", "§7.15", &axis))
		return ex_error(c->loc);
	int ngrid = s->k->ngrid;
	if (axis < 0 || axis >= ngrid) {
		error_at(s->cc, c->kw[KW_AXIS].loc, "%s() axis %lld is out of range: the grid has rank %d [§7.15]", fname,
		         (long long)axis, ngrid);
		return ex_error(c->loc);
	}
	Value *v = emit(s, (Op)c->bi->arg, c->loc, type_scalar(s->a, DT_I32), 0);
	v->def->ival = axis;
	return ex_of(v, c->loc);
}

/* cdiv(a, b): the ceiling of a / b (§7.17): a // b, plus 1 where a % b is
 * not 0 (both floored, so right for every sign).  Exact wherever a // b is:
 * pl.cdiv's (a + b - 1) // b overflows near the top of the range, and
 * -((-a) // b) at its bottom.  Folds on constants (a constant zero divisor
 * is an error there). */
static Ex bi_cdiv(Sema *s, Call *c)
{
	Ex a = val(s, c->pos[0]), b = val(s, c->pos[1]);
	if (a.kind == EX_ERROR || b.kind == EX_ERROR)
		return ex_error(c->loc);
	if (!dtype_is_int(ex_dtype(&a)) || !dtype_is_int(ex_dtype(&b))) {
		error_at(s->cc, c->loc, "cdiv() needs integer operands, found %s and %s [§7.17]", ex_type_str(s, &a),
		         ex_type_str(s, &b));
		return ex_error(c->loc);
	}
	Ex q = sema_binop(s, &bin_floordiv, c->loc, a, b);
	Ex r = sema_binop(s, &bin_mod, c->loc, a, b);
	if (q.kind == EX_ERROR || r.kind == EX_ERROR)
		return ex_error(c->loc);
	if (!dtype_is_int(ex_dtype(&q))) { /* i64 with u64: promoted to f64 (§4.8) */
		error_at(s->cc, c->loc, "cdiv() of %s and %s: they promote to %s, not to an integer [§7.17]",
		         ex_type_str(s, &a), ex_type_str(s, &b), dtype_str(ex_dtype(&q)));
		return ex_error(c->loc);
	}
	/* (q + 1 cannot overflow where r != 0: then |b| > 1) */
	Ex one = ex_const(const_int(1, DT_I32, true), c->loc);
	if (r.kind == EX_CONST)
		return r.c.i != 0 ? sema_binop(s, &bin_add, c->loc, q, one) : q;
	Ex zero = ex_const(const_int(0, DT_I32, true), c->loc);
	Value *up = as_value(s, sema_binop(s, &bin_add, c->loc, q, one));
	Value *inexact = as_value(s, sema_binop(s, &bin_ne, c->loc, r, zero));
	Value *vq = as_value(s, q);
	return ex_value(emit(s, IR_SELECT, c->loc, vq->type, 3, inexact, up, vq), ex_weak(&q), c->loc);
}

/* next_power_of_2(n): the least power of 2 >= n (1 for 0), for a constant
 * n >= 0, as pl.next_power_of_2 (§7.17). */
static Ex bi_next_power_of_2(Sema *s, Call *c)
{
	Ex n = val(s, c->pos[0]);
	if (n.kind == EX_ERROR)
		return n;
	int64_t v;
	if (!const_int_arg(s, n, "the argument of next_power_of_2()", "§7.17", &v))
		return ex_error(c->loc);
	uint64_t p = 1;
	while (p < (uint64_t)v && p <= (uint64_t)INT64_MAX / 2)
		p <<= 1;
	ConstVal r = n.c;
	r.i = (int64_t)p;
	if (v < 0 || p < (uint64_t)v || !const_fits(&r, r.dtype)) {
		error_at(s->cc, n.loc, "next_power_of_2(%lld) is %s [§7.17]", (long long)v,
		         v < 0 ? "not defined for a negative number" : "out of range");
		return ex_error(c->loc);
	}
	return ex_const(r, c->loc);
}

static Ex bi_ds(Sema *s, Call *c)
{
	error_at(s->cc, c->loc, "ds() can only be used as an index of a Ref: x[ds(start, size)] [§7.6]");
	return ex_error(c->loc);
}

/* ---- elementwise ------------------------------------------------------------- */

static Ex bi_astype(Sema *s, Call *c)
{
	Ex dt = c->pos[1];
	if (dt.kind == EX_ERROR)
		return dt;
	if (dt.kind != EX_DTYPE) {
		error_at(s->cc, dt.loc, "the second argument of astype() must be a dtype such as f32, found %s [§7.14]",
		         ex_type_str(s, &dt));
		return ex_error(c->loc);
	}
	return cast_ex(s, c->pos[0], dt.dt, c->loc);
}

/* where(cond, a, b) (§7.16); also select_n's select (sema_compat.c). */
Ex sema_where(Sema *s, Loc loc, Ex cond, Ex a, Ex b)
{
	cond = val(s, cond), a = val(s, a), b = val(s, b);
	if (cond.kind == EX_ERROR || a.kind == EX_ERROR || b.kind == EX_ERROR)
		return ex_error(loc);
	if (ex_dtype(&cond) != DT_BOOL) {
		error_at(s->cc, cond.loc, "the condition of where() must be bool, found %s [§7.16]", ex_type_str(s, &cond));
		return ex_error(loc);
	}
	bool weak;
	DType dt = promote_dtypes(ex_dtype(&a), ex_weak(&a), ex_dtype(&b), ex_weak(&b), &weak);
	if (dt == DT_NONE) {
		error_at(s->cc, loc, "where(): %s and %s have no common dtype [§4.6]", ex_type_str(s, &a),
		         ex_type_str(s, &b));
		return ex_error(loc);
	}
	int r1, r2;
	int64_t *d1 = arena_alloc(s->a, sizeof(int64_t) * (size_t)(ex_rank(&cond) + ex_rank(&a) + 1));
	int64_t *d2 = arena_alloc(s->a, sizeof(int64_t) * (size_t)(ex_rank(&cond) + ex_rank(&a) + ex_rank(&b) + 1));
	if (!broadcast_shapes(ex_rank(&cond), ex_dims(&cond), ex_rank(&a), ex_dims(&a), &r1, d1) ||
	    !broadcast_shapes(r1, d1, ex_rank(&b), ex_dims(&b), &r2, d2)) {
		error_at(s->cc, loc, "where(): the shapes %s, %s and %s are not broadcast-compatible [§4.8]",
		         ex_type_str(s, &cond), ex_type_str(s, &a), ex_type_str(s, &b));
		return ex_error(loc);
	}
	if (cond.kind == EX_CONST && a.kind == EX_CONST && b.kind == EX_CONST) {
		ConstVal r = cond.c.i ? a.c : b.c;
		if (!const_convert(s, &r, dt, false, loc))
			return ex_error(loc);
		r.weak = weak;
		return ex_const(r, loc);
	}
	Value *vc = to_value(s, cond, type_tensor(s->a, DT_BOOL, r2, d2));
	Type *t = type_tensor(s->a, dt, r2, d2);
	Value *va = to_value(s, a, t), *vb = to_value(s, b, t);
	return ex_value(emit(s, IR_SELECT, loc, t, 3, vc, va, vb), weak, loc);
}

static Ex bi_where(Sema *s, Call *c)
{
	return sema_where(s, c->loc, c->pos[0], c->pos[1], c->pos[2]);
}

/* A math function of a constant, in f64 (the caller rounds it to its
 * dtype, §4.3). */
static double fold_math(Op op, double x)
{
	switch (op) {
	case IR_EXP: return exp(x);
	case IR_EXP2: return exp2(x);
	case IR_LOG: return log(x);
	case IR_LOG1P: return log1p(x);
	case IR_SQRT: return sqrt(x);
	case IR_RSQRT: return 1.0 / sqrt(x);
	case IR_TANH: return tanh(x);
	case IR_SIGMOID: return 1.0 / (1.0 + exp(-x));
	case IR_ERF: return erf(x);
	case IR_SIN: return sin(x);
	case IR_COS: return cos(x);
	case IR_FLOOR: return floor(x);
	case IR_CEIL: return ceil(x);
	case IR_TAN: return tan(x);
	case IR_ATAN: return atan(x);
	case IR_ASIN: return asin(x);
	case IR_ACOS: return acos(x);
	case IR_SINH: return sinh(x);
	case IR_COSH: return cosh(x);
	case IR_ASINH: return asinh(x);
	case IR_ACOSH: return acosh(x);
	case IR_ATANH: return atanh(x);
	case IR_EXPM1: return expm1(x);
	case IR_CBRT: return cbrt(x);
	case IR_ROUND: return nearbyint(x); /* the default rounding mode: to nearest, ties to even */
	default: internal_error("sema: no constant folding for %s", op_info[op].name);
	}
}

/* exp, log, ... : integers and bool are converted to f32 first (jnp.exp).
 * Constants fold, so they may be used in constant expressions (§4.3). */
static Ex math_call(Sema *s, Call *c, Op op)
{
	return sema_math(s, op, c->loc, c->pos[0], c->bi->name);
}

Ex sema_math(Sema *s, Op op, Loc loc, Ex x, const char *fname)
{
	x = val(s, x);
	if (x.kind == EX_ERROR)
		return x;
	DType dt = ex_dtype(&x);
	if (!dtype_is_float(dt) && (op == IR_FLOOR || op == IR_CEIL || op == IR_ROUND))
		return x; /* the identity on integers and bool, as in JAX (§7.10) */
	if (!dtype_is_float(dt))
		dt = DT_F32;
	if (x.kind == EX_CONST) {
		ConstVal r = x.c;
		if (!const_convert(s, &r, DT_F64, true, x.loc))
			return ex_error(loc);
		r = const_float(fold_math(op, r.f), DT_F64, false);
		if (!const_convert(s, &r, dt, true, loc)) /* rounds to dt */
			return ex_error(loc);
		r.weak = x.c.weak;
		return ex_const(r, loc);
	}
	if (s->ctx != CTX_BODY) { /* only constants fold outside a body */
		error_at(s->cc, x.loc, "%s() of a run-time value cannot be used in %s; its argument must be a constant [%s]",
		         fname, ctx_phrase(s), s->clause);
		return ex_error(loc);
	}
	Type *t = type_tensor(s->a, dt, ex_rank(&x), ex_dims(&x));
	Value *v = to_value(s, x, t);
	return ex_value(emit(s, op, loc, t, 1, v), ex_weak(&x), loc);
}

static Ex bi_math(Sema *s, Call *c)
{
	return math_call(s, c, (Op)c->bi->arg);
}

/* log2(x) = log(x) * (1 / ln 2) in x's float dtype, as XLA lowers
 * jnp.log2 (lax.log2) and Pallas' TPU lowering may. */
static Ex bi_log2(Sema *s, Call *c)
{
	Ex l = math_call(s, c, IR_LOG);
	if (l.kind == EX_ERROR)
		return l;
	ConstVal k = const_float(1.4426950408889634, DT_F64, false);
	if (!const_convert(s, &k, ex_dtype(&l), true, c->loc))
		return ex_error(c->loc);
	k.weak = ex_weak(&l);
	return sema_binary_ast(s, OP_MUL, c->loc, l, ex_const(k, c->loc));
}

/* div(a, b), rem(a, b): truncating division and C's remainder (lax.div,
 * lax.rem); on floats a / b and fmod (§7.2). */
static Ex bi_div_rem(Sema *s, Call *c)
{
	return sema_binop(s, c->bi->arg == IR_REM ? &bin_rem : &bin_div, c->loc, c->pos[0], c->pos[1]);
}

/* atan2(y, x) (jnp.arctan2, lax.atan2): operands promoted and broadcast,
 * integers and bool as f32, as true division (§7.10). */
static Ex bi_atan2(Sema *s, Call *c)
{
	return sema_binop(s, &bin_atan2, c->loc, c->pos[0], c->pos[1]);
}

Ex sema_abs(Sema *s, Loc loc, Ex x)
{
	x = val(s, x);
	if (x.kind == EX_ERROR)
		return x;
	DType dt = ex_dtype(&x);
	if (dt == DT_BOOL) {
		error_at(s->cc, x.loc, "abs() needs a number, found %s [§7.10]", ex_type_str(s, &x));
		return ex_error(loc);
	}
	if (x.kind == EX_CONST) {
		ConstVal r = x.c;
		if (dtype_is_float(dt)) {
			r.f = r.f < 0 ? -r.f : r.f;
		} else if (r.i == INT64_MIN) {
			error_at(s->cc, x.loc, "integer overflow in a constant expression [§4.3]");
			return ex_error(loc);
		} else {
			r.i = r.i < 0 ? -r.i : r.i;
		}
		return ex_const(r, loc);
	}
	return ex_value(emit(s, IR_ABS, loc, x.v->type, 1, x.v), x.weak, loc);
}

static Ex bi_abs(Sema *s, Call *c)
{
	return sema_abs(s, c->loc, c->pos[0]);
}

/* pow(a, b) and floordiv(a, b) are the operators ** and //. */
static Ex bi_operator(Sema *s, Call *c)
{
	return sema_binary_ast(s, (AstOp)c->bi->arg, c->loc, c->pos[0], c->pos[1]);
}

/* ---- constants (§7.18) ------------------------------------------------------ */

/* finfo(T) and iinfo(T) are only read through a field (finfo(f32).max). */
static Ex bi_dtype_info(Sema *s, Call *c)
{
	error_at(s->cc, c->loc, "%s() is not a value; read one of its fields, e.g. %s(f32).max [§7.18]", c->bi->name,
	         c->bi->name);
	return ex_error(c->loc);
}

bool is_dtype_info(const AstExpr *e)
{
	return e->kind == AE_CALL && e->lhs->kind == AE_NAME &&
	       (strcmp(e->lhs->name, "finfo") == 0 || strcmp(e->lhs->name, "iinfo") == 0);
}

Ex sema_dtype_info(Sema *s, AstExpr *field)
{
	AstExpr *call = field->lhs;
	const char *fn = call->lhs->name;
	bool fl = fn[0] == 'f';
	Loc loc = field->loc;
	if (call->nargs != 1 || call->args[0].name) {
		error_at(s->cc, call->loc, "%s() takes one dtype, e.g. %s(f32).max [§7.18]", fn, fl ? "finfo" : "iinfo");
		return ex_error(loc);
	}
	Ex d = sema_expr(s, call->args[0].value);
	if (d.kind == EX_ERROR)
		return d;
	if (d.kind != EX_DTYPE) {
		error_at(s->cc, d.loc, "%s() takes a dtype such as %s, found %s [§7.18]", fn, fl ? "f32" : "i32",
		         ex_type_str(s, &d));
		return ex_error(loc);
	}
	if (fl ? !dtype_is_float(d.dt) : !dtype_is_int(d.dt)) {
		error_at(s->cc, d.loc, "%s() needs %s dtype, found %s; for %s use %s() [§7.18]", fn, fl ? "a float" : "an integer",
		         dtype_str(d.dt), fl ? "integers" : "floats", fl ? "iinfo" : "finfo");
		return ex_error(loc);
	}
	DType dt = d.dt;
	const char *f = field->name;
	if (!fl) {
		int bits = dtype_bits(dt);
		bool u = dtype_is_unsigned(dt);
		int64_t max = u ? (bits == 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1)) /* u64: all ones */
		                : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
		int64_t min = u ? 0 : -max - 1;
		if (strcmp(f, "max") == 0 || strcmp(f, "min") == 0)
			return ex_const(const_int(f[1] == 'a' ? max : min, dt, false), loc);
		error_at(s->cc, loc, "iinfo() has the fields max and min, not '%s' [§7.18]", f);
		return ex_error(loc);
	}
	/* mantissa bits and the largest exponent of each float dtype */
	int mant = dt == DT_F16 ? 10 : dt == DT_BF16 ? 7 : dt == DT_F32 ? 23 : 52;
	int emax = dt == DT_F16 ? 15 : dt == DT_F64 ? 1023 : 127;
	double max = (2.0 - ldexp(1.0, -mant)) * ldexp(1.0, emax);
	double v;
	if (strcmp(f, "max") == 0)
		v = max;
	else if (strcmp(f, "min") == 0)
		v = -max;
	else if (strcmp(f, "eps") == 0)
		v = ldexp(1.0, -mant);
	else if (strcmp(f, "tiny") == 0 || strcmp(f, "smallest_normal") == 0)
		v = ldexp(1.0, 1 - emax);
	else {
		error_at(s->cc, loc, "finfo() has the fields max, min, eps, tiny and smallest_normal, not '%s' [§7.18]", f);
		return ex_error(loc);
	}
	return ex_const(const_float(v, dt, false), loc);
}

/* ---- reductions (§7.11) ------------------------------------------------------ */

/* Reduces one axis of v. */
static Value *reduce_axis(Sema *s, Op op, Loc loc, Value *v, int axis)
{
	const Type *t = v->type;
	int64_t *dims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->rank + 1));
	for (int d = 0, r = 0; d < t->rank; d++)
		if (d != axis)
			dims[r++] = t->dims[d];
	DType dt = (op == IR_ARGMAX || op == IR_ARGMIN) ? DT_I32 : t->dtype;
	Value *out = emit(s, op, loc, type_tensor(s->a, dt, t->rank - 1, dims), 1, v);
	out->def->ival = axis;
	return out;
}

/* The result dtype of sum: bool and small integers give 32 bits, as
 * jnp.sum does. */
static DType sum_dtype(DType dt)
{
	switch (dt) {
	case DT_BOOL:
	case DT_I8:
	case DT_I16: return DT_I32;
	case DT_U8:
	case DT_U16: return DT_U32;
	default: return dt;
	}
}

/* The reduction axes of c (axis= an int or a tuple); all when absent. */
static bool reduce_axes(Sema *s, Call *c, int rank, bool *axes)
{
	for (int d = 0; d < rank; d++)
		axes[d] = !c->has[KW_AXIS];
	if (!c->has[KW_AXIS])
		return true;
	Ex a = c->kw[KW_AXIS];
	Ex *items = &a;
	int n = 1;
	if (a.kind == EX_TUPLE) {
		if (c->bi->arg == IR_ARGMAX || c->bi->arg == IR_ARGMIN) {
			error_at(s->cc, a.loc, "the axis of %s() must be one constant integer [§7.11]", c->bi->name);
			return false;
		}
		items = a.items;
		n = a.nitems;
	}
	for (int i = 0; i < n; i++) {
		int64_t ax;
		if (!const_int_arg(s, items[i], "axis=", "§7.11", &ax))
			return false;
		int d = normalize_axis(s, ax, rank, items[i].loc, c->bi->name, "§7.11");
		if (d < 0)
			return false;
		if (axes[d]) {
			error_at(s->cc, items[i].loc, "axis %lld of %s() is repeated [§7.11]", (long long)ax, c->bi->name);
			return false;
		}
		axes[d] = true;
	}
	return true;
}

/* The dtype= of sum, prod and mean (jnp's: the result's dtype, computed
 * in its accumulator), dflt where not given; DT_NONE after an error. */
static DType result_dtype(Sema *s, Call *c, DType dflt, bool float_only)
{
	DType dt = kw_dtype(s, c, KW_DTYPE, dflt);
	if (dt != DT_NONE && c->has[KW_DTYPE] && (dt == DT_BOOL || (float_only && !dtype_is_float(dt)))) {
		error_at(s->cc, c->kw[KW_DTYPE].loc, "%s(dtype = %s) is not allowed: the dtype must be %s [§7.11]",
		         c->bi->name, dtype_str(dt), float_only ? "a float" : "a number");
		return DT_NONE;
	}
	return dt;
}

/* sum/max/min/argmax/argmin(x, axis=k, keepdims=b); sum and prod also dtype=T. */
static Ex reduce_call(Sema *s, Call *c, Op op)
{
	Ex x = val(s, c->pos[0]);
	if (x.kind == EX_ERROR)
		return x;
	Value *v = as_value(s, x);
	DType sum_dt = result_dtype(s, c, sum_dtype(v->type->dtype), false);
	if (sum_dt == DT_NONE)
		return ex_error(c->loc);
	if (c->has[KW_DTYPE]) /* jnp converts the elements to dtype first */
		v = cast_value(s, v, sum_dt, c->loc);
	bool acc = op == IR_REDUCE_SUM || op == IR_REDUCE_PROD; /* sums and products as jnp.sum, jnp.prod */
	if (acc) /* in the accumulator dtype, rounded to sum_dt once below */
		v = cast_value(s, v, dtype_accumulator(sum_dt), c->loc);
	const Type *t = v->type;
	bool keep = false, arg = op == IR_ARGMAX || op == IR_ARGMIN;
	if (c->has[KW_KEEPDIMS] && !const_bool_arg(s, c->kw[KW_KEEPDIMS], "keepdims=", "§7.11", &keep))
		return ex_error(c->loc);
	bool *axes = arena_alloc(s->a, (size_t)t->rank + 1);
	if (!reduce_axes(s, c, t->rank, axes))
		return ex_error(c->loc);
	int nred = 0;
	for (int d = 0; d < t->rank; d++)
		nred += axes[d];
	int64_t *kdims = arena_alloc(s->a, sizeof(int64_t) * (size_t)(t->rank + 1));
	for (int d = 0; d < t->rank; d++)
		kdims[d] = axes[d] ? 1 : t->dims[d];
	Value *r = v;
	if (arg && nred > 1) {
		/* argmax over several axes: the index into the flattened axes, as
		 * jnp.argmax over all of them (only all axes are supported). */
		if (nred != t->rank) {
			error_at(s->cc, c->kw[KW_AXIS].loc, "%s() reduces one axis or all of them [§7.11]", c->bi->name);
			return ex_error(c->loc);
		}
		int64_t n = type_numel(t);
		r = reduce_axis(s, op, c->loc, reshape_value(s, v, 1, &n, c->loc), 0);
	} else if (arg && nred == 0) {
		if (t->rank == 0) /* argmax of a scalar */
			r = emit_const(s, const_int(0, DT_I32, false), type_scalar(s->a, DT_I32), c->loc);
	} else {
		for (int d = t->rank - 1; d >= 0; d--)
			if (axes[d])
				r = reduce_axis(s, op, c->loc, r, d);
		if (acc)
			r = cast_value(s, r, sum_dt, c->loc);
	}
	if (keep)
		r = reshape_value(s, r, t->rank, kdims, c->loc);
	/* weak arguments give weak results, unless a dtype is named */
	return ex_value(r, ex_weak(&x) && !c->has[KW_DTYPE], c->loc);
}

static Ex bi_reduce(Sema *s, Call *c)
{
	return reduce_call(s, c, (Op)c->bi->arg);
}

/* mean(x, axis=, keepdims=): as jnp.mean, the sum in the computation
 * dtype (f32 for 16-bit floats, integers and bool) divided by the count
 * there, rounded to the result dtype (x's float dtype, else f32) once.
 * With dtype = T, as jnp.mean too: the elements converted to T, their sum
 * (§7.11's rule: rounded to T once) divided by the count in T. */
static Ex bi_mean(Sema *s, Call *c)
{
	Ex x = val(s, c->pos[0]);
	if (x.kind == EX_ERROR)
		return x;
	DType dt = ex_dtype(&x), rdt = result_dtype(s, c, dtype_is_float(dt) ? dt : DT_F32, true);
	if (rdt == DT_NONE)
		return ex_error(c->loc);
	bool named = c->has[KW_DTYPE];
	DType ct = named ? rdt : dtype_accumulator(rdt);
	Value *v = cast_value(s, as_value(s, x), ct, c->loc);
	int64_t n = type_numel(v->type);
	c->pos[0] = ex_value(v, false, x.loc);
	c->has[KW_DTYPE] = false; /* the sum in ct's own dtype */
	Ex sum = reduce_call(s, c, IR_REDUCE_SUM);
	c->has[KW_DTYPE] = named;
	if (sum.kind == EX_ERROR)
		return sum;
	n /= type_numel(sum.v->type); /* the elements each result element sums */
	ConstVal k = const_float((double)n, ct, false);
	Ex m = sema_binop(s, &bin_div, c->loc, sum, ex_const(k, c->loc));
	if (m.kind == EX_ERROR)
		return m;
	return ex_value(cast_value(s, m.v, rdt, c->loc), ex_weak(&x) && !named, c->loc);
}

/* all/any(x, axis=, keepdims=): the min/max of the bools x != 0, as
 * jnp.all/jnp.any. */
static Ex bi_all_any(Sema *s, Call *c)
{
	Ex x = val(s, c->pos[0]);
	if (x.kind != EX_ERROR && ex_dtype(&x) != DT_BOOL)
		x = sema_binary_ast(s, OP_NE, c->loc, x, ex_const(const_int(0, DT_I32, true), c->loc));
	if (x.kind == EX_ERROR)
		return x;
	c->pos[0] = x;
	return reduce_call(s, c, (Op)c->bi->arg);
}

/* max/min: with two positional arguments elementwise, with one a reduction. */
static Ex bi_minmax(Sema *s, Call *c)
{
	bool is_max = c->bi->arg == IR_REDUCE_MAX;
	if (c->npos == 2) {
		for (int k = 0; k < KW_COUNT; k++)
			if (c->has[k]) {
				error_at(s->cc, c->kw[k].loc, "%s(a, b) is elementwise and takes no %s=; for a reduction use %s(x, axis=k) [§7.11]",
				         c->bi->name, kw_names[k], c->bi->name);
				return ex_error(c->loc);
			}
		return sema_binop(s, is_max ? &bin_max : &bin_min, c->loc, c->pos[0], c->pos[1]);
	}
	if (s->ctx != CTX_BODY) {
		error_at(s->cc, c->loc, "%s() with one argument (a reduction) cannot be used in %s [%s]", c->bi->name,
		         ctx_phrase(s), s->clause);
		return ex_error(c->loc);
	}
	return reduce_call(s, c, (Op)c->bi->arg);
}

static Ex bi_minimum(Sema *s, Call *c)
{
	return sema_binop(s, c->bi->arg == IR_MAX ? &bin_max : &bin_min, c->loc, c->pos[0], c->pos[1]);
}

static Ex bi_cumsum(Sema *s, Call *c)
{
	Ex x = val(s, c->pos[0]);
	if (x.kind == EX_ERROR)
		return x;
	Value *v = as_value(s, x);
	int rank = v->type->rank;
	if (rank == 0) {
		error_at(s->cc, x.loc, "cumsum() needs a value of rank 1 or more, found %s [§7.11]", ex_type_str(s, &x));
		return ex_error(c->loc);
	}
	int64_t axis = 0;
	if (c->has[KW_AXIS]) {
		if (!const_int_arg(s, c->kw[KW_AXIS], "axis=", "§7.11", &axis))
			return ex_error(c->loc);
	} else if (rank > 1) {
		error_at(s->cc, c->loc, "cumsum() of %s needs axis= [§7.11]", ex_type_str(s, &x));
		return ex_error(c->loc);
	}
	int d = normalize_axis(s, axis, rank, c->has[KW_AXIS] ? c->kw[KW_AXIS].loc : c->loc, "cumsum", "§7.11");
	if (d < 0)
		return ex_error(c->loc);
	if (v->type->dtype == DT_BOOL) /* cumsum keeps the dtype, except bool (§7.11) */
		v = cast_value(s, v, DT_I32, c->loc);
	DType rdt = v->type->dtype;
	v = cast_value(s, v, dtype_accumulator(rdt), c->loc);
	Value *r = emit(s, IR_CUMSUM, c->loc, v->type, 1, v);
	r->def->ival = d;
	return ex_of(cast_value(s, r, rdt, c->loc), c->loc); /* each prefix sum rounded once */
}

/* ---- shape operations (§7.12) ------------------------------------------------- */

static Ex bi_iota(Sema *s, Call *c)
{
	int rank;
	int64_t *dims, dim = 0;
	if (!shape_arg(s, c->pos[0], "iota", "§7.12", false, &rank, &dims))
		return ex_error(c->loc);
	DType dt = kw_dtype(s, c, KW_DTYPE, DT_I32);
	if (dt == DT_NONE)
		return ex_error(c->loc);
	if (dt == DT_BOOL) {
		error_at(s->cc, c->kw[KW_DTYPE].loc, "iota() of bool is not allowed [§7.12]");
		return ex_error(c->loc);
	}
	if (c->has[KW_DIM]) {
		if (!const_int_arg(s, c->kw[KW_DIM], "dim=", "§7.12", &dim))
			return ex_error(c->loc);
		if ((dim = normalize_axis(s, dim, rank, c->kw[KW_DIM].loc, "iota", "§7.12")) < 0)
			return ex_error(c->loc);
	}
	DType it = dtype_is_int(dt) ? dt : DT_I32; /* the IR counts in integers */
	Value *v = emit(s, IR_IOTA, c->loc, type_tensor(s->a, it, rank, dims), 0);
	v->def->ival = dim;
	return ex_of(cast_value(s, v, dt, c->loc), c->loc);
}

/* zeros(shape[, dtype]), ones(...), full(shape, value[, dtype]). */
/* The shape and dtype of the first argument of zeros_like(x) and friends:
 * a value, a Ref or an indexed Ref (not read) of static shape. */
static bool like_shape(Sema *s, Call *c, int *rank, int64_t **dims, DType *dt)
{
	Ex x = c->pos[0];
	const Type *t = x.kind == EX_REF ? x.v->type : x.kind == EX_ACCESS ? x.acc->type : NULL;
	if (x.kind != EX_REF && x.kind != EX_ACCESS) {
		x = val(s, x);
		if (x.kind == EX_ERROR)
			return false;
		*rank = ex_rank(&x);
		*dims = (int64_t *)ex_dims(&x);
		*dt = ex_dtype(&x);
		return true;
	}
	bool dynamic = !t;
	for (int d = 0; t && d < t->rank; d++)
		dynamic |= t->dims[d] == DIM_DYNAMIC;
	if (dynamic) {
		error_at(s->cc, x.loc, "%s() of a Ref with a dynamic dimension has no static shape [§7.12]", c->bi->name);
		return false;
	}
	*rank = t->rank;
	*dims = t->dims;
	*dt = t->dtype;
	return true;
}

/* zeros/ones(shape[, dtype]), full(shape, value[, dtype]); the _like
 * forms take the shape, and the default dtype, of a value or Ref. */
static Ex bi_fill(Sema *s, Call *c)
{
	int rank, kind = c->bi->arg % 3; /* 0, 1: zeros, ones; 2: full */
	bool like = c->bi->arg >= 3;
	int64_t *dims;
	DType like_dt = DT_NONE;
	if (like ? !like_shape(s, c, &rank, &dims, &like_dt)
	         : !shape_arg(s, c->pos[0], c->bi->name, "§7.12", false, &rank, &dims))
		return ex_error(c->loc);
	Ex v;
	if (kind == 2) {
		v = val(s, c->pos[1]);
		if (v.kind == EX_ERROR)
			return v;
	} else {
		v = ex_const(const_int(kind, DT_I32, true), c->loc);
	}
	DType dt = kw_dtype(s, c, KW_DTYPE, like ? like_dt : kind == 2 ? ex_dtype(&v) : DT_F32);
	if (dt == DT_NONE)
		return ex_error(c->loc);
	int vr = ex_rank(&v);
	const int64_t *vd = ex_dims(&v);
	bool ok = vr <= rank;
	for (int i = 1; ok && i <= vr; i++)
		ok = vd[vr - i] == 1 || vd[vr - i] == dims[rank - i];
	if (!ok) {
		error_at(s->cc, v.loc, "%s(): cannot broadcast %s to the shape %s [§7.12]", c->bi->name, ex_type_str(s, &v),
		         type_str(s->a, type_tensor(s->a, dt, rank, dims)));
		return ex_error(c->loc);
	}
	v = cast_ex(s, v, dt, v.loc); /* an explicit dtype converts like astype */
	if (v.kind == EX_ERROR)
		return v;
	return ex_of(to_value(s, v, type_tensor(s->a, dt, rank, dims)), c->loc);
}

static Ex bi_reshape(Sema *s, Call *c)
{
	Ex x = val(s, c->pos[0]);
	int rank;
	int64_t *dims;
	if (x.kind == EX_ERROR || !shape_arg(s, c->pos[1], "reshape", "§7.12", true, &rank, &dims))
		return ex_error(c->loc);
	Value *v = as_value(s, x);
	int64_t n = type_numel(v->type), known = 1;
	int infer = -1;
	bool fits = true;
	for (int d = 0; d < rank; d++) {
		if (dims[d] == -1)
			infer = d;
		else
			fits &= ck_mul(known, dims[d], &known);
	}
	if (infer >= 0 && fits && n % known == 0)
		dims[infer] = n / known;
	int64_t m = 0;
	if (!fits || !shape_numel(rank, dims, &m) || m != n) {
		error_at(s->cc, c->pos[1].loc, "cannot reshape %s (%lld elements) to %s [§7.12]", ex_type_str(s, &x),
		         (long long)n, infer >= 0 ? "that shape" : type_str(s->a, type_tensor(s->a, v->type->dtype, rank, dims)));
		return ex_error(c->loc);
	}
	return ex_value(reshape_value(s, v, rank, dims, c->loc), ex_weak(&x), c->loc);
}

Ex sema_transpose(Sema *s, Loc loc, Ex x, const int64_t *perm, int nperm)
{
	x = val(s, x);
	if (x.kind == EX_ERROR)
		return x;
	Value *v = as_value(s, x);
	int rank = v->type->rank;
	int64_t *p = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	if (!perm) {
		for (int d = 0; d < rank; d++)
			p[d] = rank - 1 - d;
	} else {
		bool *used = arena_alloc(s->a, (size_t)rank + 1);
		bool ok = nperm == rank;
		for (int d = 0; ok && d < rank; d++) {
			int64_t q = perm[d] < 0 ? perm[d] + rank : perm[d];
			ok = q >= 0 && q < rank && !used[q];
			if (ok)
				used[q] = true, p[d] = q;
		}
		if (!ok) {
			error_at(s->cc, loc, "the permutation of transpose() is not a permutation of the %d axes of %s [§7.12]",
			         rank, ex_type_str(s, &x));
			return ex_error(loc);
		}
	}
	return ex_value(transpose_value(s, v, p, loc), ex_weak(&x), loc);
}

static Ex bi_transpose(Sema *s, Call *c)
{
	if (c->npos < 2)
		return sema_transpose(s, c->loc, c->pos[0], NULL, 0);
	Ex pe = c->pos[1];
	if (pe.kind == EX_ERROR)
		return pe;
	Ex *items = pe.kind == EX_TUPLE ? pe.items : &pe;
	int n = pe.kind == EX_TUPLE ? pe.nitems : 1;
	int64_t *perm = arena_alloc(s->a, sizeof(int64_t) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		if (!const_int_arg(s, items[i], "an axis of the permutation", "§7.12", &perm[i]))
			return ex_error(c->loc);
	return sema_transpose(s, c->loc, c->pos[0], perm, n);
}

static Ex bi_broadcast_to(Sema *s, Call *c)
{
	Ex x = val(s, c->pos[0]);
	int rank;
	int64_t *dims;
	if (x.kind == EX_ERROR || !shape_arg(s, c->pos[1], "broadcast_to", "§7.12", false, &rank, &dims))
		return ex_error(c->loc);
	int xr = ex_rank(&x);
	const int64_t *xd = ex_dims(&x);
	bool ok = xr <= rank;
	for (int i = 1; ok && i <= xr; i++)
		ok = xd[xr - i] == 1 || xd[xr - i] == dims[rank - i];
	Type *t = type_tensor(s->a, ex_dtype(&x), rank, dims);
	if (!ok) {
		error_at(s->cc, c->loc, "cannot broadcast %s to %s [§7.12]", ex_type_str(s, &x), type_str(s->a, t));
		return ex_error(c->loc);
	}
	return ex_value(to_value(s, x, t), ex_weak(&x), c->loc);
}

/* The joining and regrouping builtins (sema_shape.c); arg: 0 concatenate, 1 stack, 2 tile, 3 repeat,
 * 4 expand_dims, 5 squeeze, 6 split. */
static Ex bi_join(Sema *s, Call *c)
{
	int64_t axis = 0;
	int op = c->bi->arg;
	if (op != 5 && c->has[KW_AXIS] && !const_int_arg(s, c->kw[KW_AXIS], "the axis", "§7.12", &axis))
		return ex_error(c->loc);
	switch (op) {
	case 0: case 1: return sema_concatenate(s, c->loc, c->pos[0], axis, op == 1);
	case 2: return sema_tile(s, c->loc, c->pos[0], c->pos[1]);
	case 3: return sema_repeat(s, c->loc, c->pos[0], c->pos[1], c->has[KW_AXIS], axis);
	case 4: return sema_expand_squeeze(s, c->loc, c->pos[0], &c->pos[1], true);
	case 6: return sema_split(s, c->loc, c->pos[0], c->pos[1], axis);
	default: return sema_expand_squeeze(s, c->loc, c->pos[0], c->has[KW_AXIS] ? &c->kw[KW_AXIS] : NULL, false);
	}
}

/* triu(x, k) / tril(x, k): x with the elements below / above diagonal k of
 * its last two dims zeroed (jnp.triu/tril), by the iota idiom of §7.12:
 * where(iota(s, dim = r-1) - iota(s, dim = r-2) >= k, x, 0). */
static Ex bi_tri(Sema *s, Call *c)
{
	Ex x = val(s, c->pos[0]);
	if (x.kind == EX_ERROR)
		return x;
	int rank = ex_rank(&x);
	if (rank < 2) {
		error_at(s->cc, x.loc, "%s() needs a value of rank 2 or more, found %s [§7.12]", c->bi->name,
		         ex_type_str(s, &x));
		return ex_error(c->loc);
	}
	int64_t k = 0;
	if (c->has[KW_K] && !const_int_arg(s, c->kw[KW_K], "k=", "§7.12", &k))
		return ex_error(c->loc);
	const int64_t *dims = ex_dims(&x);
	k = k < -dims[rank - 2] ? -dims[rank - 2] : k > dims[rank - 1] ? dims[rank - 1] : k; /* fits i32 */
	Type *it = type_tensor(s->a, DT_I32, rank, dims);
	Value *rows = emit(s, IR_IOTA, c->loc, it, 0), *cols = emit(s, IR_IOTA, c->loc, it, 0);
	rows->def->ival = rank - 2;
	cols->def->ival = rank - 1;
	Ex diag = sema_binop(s, &bin_sub, c->loc, ex_of(cols, c->loc), ex_of(rows, c->loc));
	Ex keep = sema_binary_ast(s, c->bi->arg ? OP_GE : OP_LE, c->loc, diag, ex_const(const_int(k, DT_I32, true), c->loc));
	if (keep.kind == EX_ERROR)
		return keep;
	Value *v = as_value(s, x);
	Value *zero = emit_const(s, ex_dtype(&x) == DT_BOOL ? const_bool(false) : const_int(0, ex_dtype(&x), false), v->type,
	                         c->loc);
	return ex_value(emit(s, IR_SELECT, c->loc, v->type, 3, keep.v, v, zero), ex_weak(&x), c->loc);
}

/* ---- dot (§7.13) ------------------------------------------------------------- */

/* jnp.dot's forms beside rank-2 operands and batches: a vector `a` [K] is
 * one row and a vector `b` [K] one column, each dropped from the result;
 * the leading dims of an `a` of rank 3 or more against a rank-2 `b` are
 * rows ([..., M, K] x [K, N] -> [..., M, N], as `@` gives too).  A dot of
 * rank-2 operands between reshapes; an acc value has the result's shape. */
static Ex dot_reshaped(Sema *s, Loc loc, Ex a, Ex b, const DotOpts *o)
{
	int ra = ex_rank(&a), rb = ex_rank(&b);
	const int64_t *ad = ex_dims(&a), *bd = ex_dims(&b);
	if (o->ta || o->tb) {
		error_at(s->cc, loc, "trans_a= and trans_b= need operands of rank 2 (or batches), found %s and %s [§7.13]",
		         ex_type_str(s, &a), ex_type_str(s, &b));
		return ex_error(loc);
	}
	if (ad[ra - 1] != bd[0]) {
		error_at(s->cc, loc, "dot of %s and %s: the contracting dimensions differ (%lld vs %lld) [§7.13]",
		         ex_type_str(s, &a), ex_type_str(s, &b), (long long)ad[ra - 1], (long long)bd[0]);
		return ex_error(loc);
	}
	int64_t *out = arena_alloc(s->a, sizeof *out * (size_t)(ra + 1)), rows = 1;
	int ro = 0;
	for (int d = 0; d < ra - 1; d++)
		rows *= out[ro++] = ad[d]; /* a value's elements fit (§10.2) */
	if (rb == 2)
		out[ro++] = bd[1];
	int64_t a2[2] = {rows, ad[ra - 1]}, b2[2] = {bd[0], rb == 2 ? bd[1] : 1}, r2[2] = {rows, b2[1]};
	Ex A = ex_value(reshape_value(s, as_value(s, a), 2, a2, loc), a.weak, loc);
	Ex B = ex_value(reshape_value(s, as_value(s, b), 2, b2, loc), b.weak, loc);
	Ex acc2, *pacc = NULL;
	if (o->acc) {
		Ex e = val(s, *o->acc);
		if (e.kind == EX_ERROR)
			return e;
		bool same = ex_rank(&e) == ro;
		for (int d = 0; same && d < ro; d++)
			same = ex_dims(&e)[d] == out[d];
		if (!same) {
			error_at(s->cc, e.loc, "the accumulator of this dot must have the result's shape %s, found %s [§7.13]",
			         type_str(s->a, type_tensor(s->a, ex_dtype(&e), ro, out)), ex_type_str(s, &e));
			return ex_error(loc);
		}
		acc2 = ex_value(reshape_value(s, as_value(s, e), 2, r2, loc), e.weak, loc);
		pacc = &acc2;
	}
	DotOpts o2 = *o;
	o2.acc = pacc;
	Ex r = sema_dot(s, loc, A, B, &o2);
	if (r.kind == EX_ERROR)
		return r;
	return ex_value(reshape_value(s, as_value(s, r), ro, out, loc), r.weak, loc);
}

/* a @ b (jnp.matmul): dot(a, b), except that a matrix a against b of
 * rank 3 or more is broadcast over b's batch dims ([M, K] @ [B..., K, N]
 * is [B..., M, N], where jnp.dot gives [M, B..., N]). */
Ex sema_matmul(Sema *s, Loc loc, Ex a, Ex b)
{
	a = val(s, a);
	b = val(s, b);
	if (a.kind == EX_ERROR || b.kind == EX_ERROR)
		return ex_error(loc);
	int rb = ex_rank(&b);
	DotOpts o = {.acc_dt = DT_NONE};
	if (ex_rank(&a) != 2 || rb < 3 || rb > 26)
		return sema_dot(s, loc, a, b, &o);
	char sub[96], batch[32];
	for (int i = 0; i < rb - 2; i++)
		batch[i] = (char)('A' + i);
	batch[rb - 2] = 0;
	snprintf(sub, sizeof sub, "mk,%skn->%smn", batch, batch);
	const int64_t *ad = ex_dims(&a), *bd = ex_dims(&b);
	if (ad[1] != bd[rb - 2]) {
		error_at(s->cc, loc, "dot of %s and %s: the contracting dimensions differ (%lld vs %lld) [§7.13]",
		         ex_type_str(s, &a), ex_type_str(s, &b), (long long)ad[1], (long long)bd[rb - 2]);
		return ex_error(loc);
	}
	return sema_einsum_of(s, loc, sub, a, b, &o);
}

Ex sema_dot(Sema *s, Loc loc, Ex a, Ex b, const DotOpts *o)
{
	a = val(s, a);
	b = val(s, b);
	if (a.kind == EX_ERROR || b.kind == EX_ERROR)
		return ex_error(loc);
	if (ex_rank(&a) >= 3 && ex_rank(&b) == ex_rank(&a))
		return sema_batched_dot(s, loc, a, b, o);
	int ra = ex_rank(&a), rb = ex_rank(&b);
	if (ra >= 1 && (rb == 1 || (rb == 2 && ra != 2)))
		return dot_reshaped(s, loc, a, b, o);
	if ((ra == 1 || ra == 2) && rb >= 3 && rb <= 26 && !o->ta && !o->tb && !o->acc) {
		/* jnp.dot's [M, K] x [B..., K, N] -> [M, B..., N]: "mk,ABkn->mABn" */
		const int64_t *ad = ex_dims(&a), *bd = ex_dims(&b);
		if (ad[ra - 1] != bd[rb - 2]) {
			error_at(s->cc, loc, "dot of %s and %s: the contracting dimensions differ (%lld vs %lld) [§7.13]",
			         ex_type_str(s, &a), ex_type_str(s, &b), (long long)ad[ra - 1], (long long)bd[rb - 2]);
			return ex_error(loc);
		}
		char sub[64];
		int n = snprintf(sub, sizeof sub, "%s,", ra == 2 ? "mk" : "k");
		for (int i = 0; i < rb - 2; i++)
			sub[n++] = (char)('A' + i);
		n += snprintf(sub + n, sizeof sub - (size_t)n, "kn->%s", ra == 2 ? "m" : "");
		for (int i = 0; i < rb - 2; i++)
			sub[n++] = (char)('A' + i);
		snprintf(sub + n, sizeof sub - (size_t)n, "n");
		return sema_einsum_of(s, loc, sub, a, b, o);
	}
	if (ex_rank(&a) != 2 || ex_rank(&b) != 2) {
		error_at(s->cc, loc, "dot needs rank-2 operands, two of one higher rank (batches of dots), a vector beside a "
		         "matrix or vector, a matrix of rank 3 or more beside a rank-2 one, or one of rank 1 or 2 beside one "
		         "of rank 3 or more (without transposes or an acc value), found %s and %s [§7.13]",
		         ex_type_str(s, &a),
		         ex_type_str(s, &b));
		return ex_error(loc);
	}
	DType da = ex_dtype(&a), db = ex_dtype(&b);
	if (da == DT_BOOL || db == DT_BOOL) {
		error_at(s->cc, loc, "dot of %s and %s: bool operands are not allowed [§7.13]", ex_type_str(s, &a),
		         ex_type_str(s, &b));
		return ex_error(loc);
	}
	bool weak;
	DType dt = promote_dtypes(da, a.weak, db, b.weak, &weak);
	Value *va = cast_value(s, a.v, dt, loc), *vb = cast_value(s, b.v, dt, loc);
	static const int64_t swap[2] = {1, 0};
	if (o->ta)
		va = transpose_value(s, va, swap, loc);
	if (o->tb)
		vb = transpose_value(s, vb, swap, loc);
	const int64_t *ad = va->type->dims, *bd = vb->type->dims;
	if (ad[1] != bd[0]) {
		error_at(s->cc, loc, "dot of %s and %s: the contracting dimensions differ (%lld vs %lld) [§7.13]",
		         type_str(s->a, va->type), type_str(s->a, vb->type), (long long)ad[1], (long long)bd[0]);
		return ex_error(loc);
	}
	int64_t mn[2] = {ad[0], bd[1]};
	DType rdt = dt;
	Value *vacc = NULL;
	if (o->acc) {
		Ex e = val(s, *o->acc);
		if (e.kind == EX_ERROR)
			return e;
		rdt = ex_dtype(&e);
		Type *t = type_tensor(s->a, rdt, 2, mn);
		int er = ex_rank(&e);
		const int64_t *ed = ex_dims(&e);
		bool ok = er <= 2;
		for (int i = 1; ok && i <= er; i++)
			ok = ed[er - i] == 1 || ed[er - i] == mn[2 - i];
		if (!ok) {
			error_at(s->cc, e.loc, "the accumulator of dot must have the result shape %s, found %s [§7.13]",
			         type_str(s->a, t), ex_type_str(s, &e));
			return ex_error(loc);
		}
		vacc = to_value(s, e, t);
	} else if (o->acc_dt != DT_NONE) {
		rdt = o->acc_dt;
	}
	bool w;
	if (rdt != dt && promote_dtypes(dt, false, rdt, false, &w) != rdt) {
		error_at(s->cc, loc, "dot of %s operands cannot accumulate in %s: the accumulator must be a dtype they promote to [§7.13]",
		         dtype_str(dt), dtype_str(rdt));
		return ex_error(loc);
	}
	/* The IR dot's result dtype is the accumulator's: f32 for a 16-bit
	 * float T, rounded to T once after the dot. */
	Type *at = type_tensor(s->a, dtype_accumulator(rdt), 2, mn);
	if (vacc)
		vacc = cast_value(s, vacc, at->dtype, loc);
	Value *r = vacc ? emit(s, IR_DOT, loc, at, 3, va, vb, vacc) : emit(s, IR_DOT, loc, at, 2, va, vb);
	r->def->ival = o->precision;
	return ex_of(cast_value(s, r, rdt, loc), loc);
}

static Ex bi_dot(Sema *s, Call *c)
{
	bool ta = false, tb = false;
	if (c->has[KW_TRANS_A] && !const_bool_arg(s, c->kw[KW_TRANS_A], "trans_a=", "§7.13", &ta))
		return ex_error(c->loc);
	if (c->has[KW_TRANS_B] && !const_bool_arg(s, c->kw[KW_TRANS_B], "trans_b=", "§7.13", &tb))
		return ex_error(c->loc);
	DType acc_dt = DT_NONE;
	const Ex *acc = NULL;
	if (c->has[KW_PREFERRED_ELEMENT_TYPE]) {
		Ex e = c->kw[KW_PREFERRED_ELEMENT_TYPE];
		if (e.kind == EX_ERROR)
			return e;
		if (c->has[KW_ACC]) {
			error_at(s->cc, e.loc, "give acc= or preferred_element_type=, not both: they are one option [§7.13]");
			return ex_error(c->loc);
		}
		if (e.kind != EX_DTYPE) {
			error_at(s->cc, e.loc, "preferred_element_type= takes a dtype (as jnp.dot does); to add a value to the "
			         "product use acc= [§7.13]");
			return ex_error(c->loc);
		}
		acc_dt = e.dt;
	}
	if (c->has[KW_ACC]) {
		Ex e = c->kw[KW_ACC];
		if (e.kind == EX_ERROR)
			return e;
		if (e.kind == EX_DTYPE)
			acc_dt = e.dt;
		else
			acc = &c->kw[KW_ACC];
	}
	DotOpts o = {.acc_dt = acc_dt, .acc = acc, .ta = ta, .tb = tb};
	if (c->has[KW_PRECISION])
		o.precision = (DotPrecision)c->kw[KW_PRECISION].c.i; /* precision_arg's */
	return sema_dot(s, c->loc, c->pos[0], c->pos[1], &o);
}

/* One of lax.Precision's names: DEFAULT ("default", "fastest", "bfloat16"),
 * HIGH ("high", "tensorfloat32", "bfloat16_3x"), HIGHEST ("highest",
 * "float32"); -1 for another string. */
static int precision_named(const char *name)
{
	static const struct { const char *name; DotPrecision p; } names[] = {
		{"default", PREC_DEFAULT}, {"fastest", PREC_DEFAULT}, {"bfloat16", PREC_DEFAULT},
		{"high", PREC_HIGH}, {"tensorfloat32", PREC_HIGH}, {"bfloat16_3x", PREC_HIGH},
		{"highest", PREC_HIGHEST}, {"float32", PREC_HIGHEST},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(names[i].name, name) == 0)
			return (int)names[i].p;
	return -1;
}

/* precision = "highest", a pair of one name for both operands, or None
 * (jnp.dot's and einsum's precision=): an EX_CONST holding the
 * DotPrecision (§7.13). */
Ex sema_precision_arg(Sema *s, const AstExpr *v)
{
	if (v->kind == AE_NONE)
		return ex_const(const_int(PREC_DEFAULT, DT_I32, false), v->loc);
	if (v->kind == AE_TUPLE && v->nitems == 2 && v->items[0]->kind == AE_STRING && v->items[1]->kind == AE_STRING) {
		Ex a = sema_precision_arg(s, v->items[0]), b = sema_precision_arg(s, v->items[1]);
		if (a.kind == EX_ERROR || b.kind == EX_ERROR)
			return ex_error(v->loc);
		if (a.c.i != b.c.i) {
			error_at(s->cc, v->loc, "precision= must name one precision for both operands, found %s and %s [§7.13]",
			         dot_precision_names[a.c.i], dot_precision_names[b.c.i]);
			return ex_error(v->loc);
		}
		return a;
	}
	int p = v->kind == AE_STRING ? precision_named(v->name) : -1;
	if (p < 0) {
		int errors = s->cc->diag.nerrors;
		if (v->kind != AE_STRING)
			sema_expr(s, (AstExpr *)v); /* its own errors instead (lax.Precision.HIGHEST is §10.3's) */
		if (s->cc->diag.nerrors == errors)
			error_at(s->cc, v->loc, "precision= takes \"default\", \"high\" or \"highest\" (lax.Precision's names, "
			         "or \"float32\", \"tensorfloat32\", \"bfloat16\" ...), a pair of one of them, or None [§7.13]");
		return ex_error(v->loc);
	}
	return ex_const(const_int(p, DT_I32, false), v->loc);
}

/* ---- memory (§7.7, §7.8) ----------------------------------------------------- */

static Ex bi_load(Sema *s, Call *c)
{
	Access *acc = target_access(s, c, c->pos[0]);
	if (!acc || !access_ready(s, acc, "load"))
		return ex_error(c->loc);
	Value *mask = NULL, *other = NULL;
	if (c->has[KW_MASK] && !(mask = mask_value(s, c, acc->type)))
		return ex_error(c->loc);
	if (c->has[KW_OTHER]) { /* without mask= it fills the out-of-bounds lanes (§7.7, §8) */
		if (!(other = coerce_value(s, c->kw[KW_OTHER], acc->type, "other= of load()", "§7.7")))
			return ex_error(c->loc);
	}
	return ex_of(emit_load(s, acc, mask, other, c->loc), c->loc);
}

/* store(ref[...], v[, mask=]), and swap (arg 1: pl.swap, Ref.swap), which
 * returns the value read there just before: a load then a store, not
 * atomic. */
static Ex bi_store(Sema *s, Call *c)
{
	bool swap = c->bi->arg == 1;
	const char *verb = swap ? "swap" : "store to";
	Access *acc = target_access(s, c, c->pos[0]);
	if (!acc || !access_ready(s, acc, verb) || !access_writable(s, acc, c->pos[0].loc, verb))
		return ex_error(c->loc);
	const char *what = arena_printf(s->a, "%s '%s'", swap ? "swap of" : verb, acc->binding ? acc->binding->name : "ref");
	Value *v = coerce_value(s, c->pos[1], acc->type, what, "§7.7");
	Value *mask = NULL;
	if (!v || (c->has[KW_MASK] && !(mask = mask_value(s, c, acc->type))))
		return ex_error(c->loc);
	Value *old = swap ? emit_load(s, acc, mask, NULL, c->loc) : NULL;
	emit_store(s, acc, v, mask, c->loc);
	return swap ? ex_of(old, c->loc) : ex_void(c->loc);
}

/* atomic_<kind>(ref[...], v[, mask=]) and atomic_cas(ref[...], cmp, v). */
static Ex bi_atomic(Sema *s, Call *c)
{
	AtomicKind kind = (AtomicKind)c->bi->arg;
	Access *acc = target_access(s, c, c->pos[0]);
	if (!acc || !access_ready(s, acc, "update") ||
	    !access_writable(s, acc, c->pos[0].loc, "atomically update"))
		return ex_error(c->loc);
	DType dt = acc->type->dtype;
	const char *need = NULL;
	if ((kind == ATOMIC_AND || kind == ATOMIC_OR || kind == ATOMIC_XOR || kind == ATOMIC_CAS) && !dtype_is_int(dt))
		need = "an integer";
	else if ((kind == ATOMIC_ADD || kind == ATOMIC_MAX || kind == ATOMIC_MIN) && dt == DT_BOOL)
		need = "a numeric";
	if (need) {
		error_at(s->cc, c->pos[0].loc, "%s() needs %s Ref, found %s [§7.8]", c->bi->name, need,
		         type_str(s->a, acc->ref->type));
		return ex_error(c->loc);
	}
	const char *what = arena_printf(s->a, "%s() on '%s'", c->bi->name, acc->binding ? acc->binding->name : "ref");
	Value *args[3];
	int n = 0;
	Value *cmp = NULL;
	if (kind == ATOMIC_CAS && !(cmp = coerce_value(s, c->pos[1], acc->type, what, "§7.8")))
		return ex_error(c->loc);
	if (!(args[n++] = coerce_value(s, c->pos[kind == ATOMIC_CAS ? 2 : 1], acc->type, what, "§7.8")))
		return ex_error(c->loc);
	if (cmp)
		args[n++] = cmp;
	Value *mask = NULL;
	if (c->has[KW_MASK] && !(mask = mask_value(s, c, acc->type)))
		return ex_error(c->loc);
	if (mask)
		args[n++] = mask;
	int nargs = 1 + acc->nops + n;
	Value **all = vals(s, nargs);
	all[0] = acc->ref;
	memcpy(all + 1, acc->ops, sizeof(Value *) * (size_t)acc->nops);
	memcpy(all + 1 + acc->nops, args, sizeof(Value *) * (size_t)n);
	Inst *i = emit_inst(s, IR_ATOMIC, c->loc, nargs, all, 1, &acc->type);
	ir_set_indexers(s->a, i, acc->nidx, acc->idx);
	i->ival = kind;
	i->has_mask = mask != NULL;
	return ex_of(i->results[0], c->loc);
}

/* ---- small jnp/lax/pl functions (§7.20, sema_compat.c) ----------------------- */

static Ex bi_compat(Sema *s, Call *c)
{
	return sema_compat(s, (Compat)c->bi->arg, c->loc, c->pos, c->npos);
}

/* reciprocal(x, approx = b), pl.reciprocal's: approx= lets a target
 * approximate; every target computes 1 / x exactly, which it allows. */
static Ex bi_reciprocal(Sema *s, Call *c)
{
	bool approx;
	if (c->has[KW_APPROX] && !const_bool_arg(s, c->kw[KW_APPROX], "approx=", "§7.20", &approx))
		return ex_error(c->loc);
	return sema_compat(s, (Compat)c->bi->arg, c->loc, c->pos, 1);
}

/* gelu(x, approximate), leaky_relu(x, negative_slope), elu(x, alpha): the
 * keyword's value (or a second positional argument) second, None if
 * absent. */
static Ex bi_compat_kw(Sema *s, Call *c)
{
	Kw k = (Kw)c->bi->pos_kw;
	Ex a[2] = {c->pos[0], c->has[k] ? c->kw[k] : (Ex){.kind = EX_NONE, .loc = c->loc}};
	return sema_compat(s, (Compat)c->bi->arg, c->loc, a, 2);
}

/* roll(x, shift, axis) as jnp.roll and pltpu.roll: shift and axis by
 * position or keyword. */
static Ex bi_roll(Sema *s, Call *c)
{
	if ((c->npos == 2) == c->has[KW_SHIFT]) {
		error_at(s->cc, c->loc, "roll() takes one shift, by position or as shift= [§7.20]");
		return ex_error(c->loc);
	}
	Ex shift = c->npos == 2 ? c->pos[1] : c->kw[KW_SHIFT];
	return sema_roll(s, c->loc, c->pos[0], shift, c->has[KW_AXIS] ? &c->kw[KW_AXIS] : NULL);
}

static Ex bi_flip(Sema *s, Call *c)
{
	return sema_flip(s, c->loc, c->pos[0], c->has[KW_AXIS] ? &c->kw[KW_AXIS] : NULL);
}

static Ex bi_pad(Sema *s, Call *c)
{
	return sema_pad(s, c->loc, c->pos[0], c->pos[1], c->has[KW_CONSTANT_VALUES] ? &c->kw[KW_CONSTANT_VALUES] : NULL);
}

static Ex bi_diagonal(Sema *s, Call *c)
{
	int64_t k[3] = {0, 0, 1};
	static const Kw kws[3] = {KW_OFFSET, KW_AXIS1, KW_AXIS2};
	static const char *const what[3] = {"offset= of diagonal()", "axis1= of diagonal()", "axis2= of diagonal()"};
	for (int j = 0; j < 3; j++)
		if (c->has[kws[j]] && !const_int_arg(s, c->kw[kws[j]], what[j], "§7.20", &k[j]))
			return ex_error(c->loc);
	return sema_diagonal(s, c->loc, c->pos[0], k[0], k[1], k[2]);
}

static Ex bi_broadcast_in_dim(Sema *s, Call *c)
{
	return sema_broadcast_in_dim(s, c->loc, c->pos[0], c->pos[1], c->pos[2]);
}

/* ---- the table ---------------------------------------------------------------- */

#define MATH(n, op) {n, 1, 1, NOKW, 0, "§7.10", bi_math, IR_##op, true}
#define RED(n, op, kws) {n, 1, 1, NOKW, K(AXIS) | K(KEEPDIMS) | (kws), "§7.11", bi_reduce, IR_##op, false}
#define ATOM(n, k) {n, 2, 2, NOKW, K(MASK), "§7.8", bi_atomic, ATOMIC_##k, false}
#define COMPAT(n, npos, w) {n, npos, npos, NOKW, 0, "§7.20", bi_compat, COMPAT_##w, false}

static const Builtin builtins[] = {
	{"program_id", 0, 0, KW_AXIS, K(AXIS), "§7.15", bi_program_id, IR_PROGRAM_ID, false},
	{"num_programs", 0, 0, KW_AXIS, K(AXIS), "§7.15", bi_program_id, IR_NUM_PROGRAMS, false},
	{"cdiv", 2, 2, NOKW, 0, "§7.17", bi_cdiv, 0, true},
	{"next_power_of_2", 1, 1, NOKW, 0, "§7.17", bi_next_power_of_2, 0, true},
	{"finfo", 1, 1, NOKW, 0, "§7.18", bi_dtype_info, 0, true},
	{"iinfo", 1, 1, NOKW, 0, "§7.18", bi_dtype_info, 0, true},
	{"ds", 0, 2, NOKW, 0, "§7.6", bi_ds, 0, false},
	{"where", 3, 3, NOKW, 0, "§7.16", bi_where, 0, true},
	{"astype", 2, 2, NOKW, 0, "§7.14", bi_astype, 0, true},
	MATH("exp", EXP), MATH("exp2", EXP2), MATH("log", LOG), MATH("log1p", LOG1P),
	MATH("sqrt", SQRT), MATH("rsqrt", RSQRT), MATH("tanh", TANH), MATH("sigmoid", SIGMOID),
	MATH("erf", ERF), MATH("sin", SIN), MATH("cos", COS), MATH("floor", FLOOR), MATH("ceil", CEIL),
	{"log2", 1, 1, NOKW, 0, "§7.10", bi_log2, 0, true},
	{"abs", 1, 1, NOKW, 0, "§7.10", bi_abs, 0, true},
	{"div", 2, 2, NOKW, 0, "§7.2", bi_div_rem, IR_DIV, true},
	{"rem", 2, 2, NOKW, 0, "§7.2", bi_div_rem, IR_REM, true},
	{"pow", 2, 2, NOKW, 0, "§7.10", bi_operator, OP_POW, false},
	{"floordiv", 2, 2, NOKW, 0, "§7.17", bi_operator, OP_FLOORDIV, true},
	{"min", 1, 2, NOKW, K(AXIS) | K(KEEPDIMS), "§7.11", bi_minmax, IR_REDUCE_MIN, true},
	{"max", 1, 2, NOKW, K(AXIS) | K(KEEPDIMS), "§7.11", bi_minmax, IR_REDUCE_MAX, true},
	{"minimum", 2, 2, NOKW, 0, "§7.10", bi_minimum, IR_MIN, true},
	{"maximum", 2, 2, NOKW, 0, "§7.10", bi_minimum, IR_MAX, true},
	RED("sum", REDUCE_SUM, K(DTYPE)), RED("argmax", ARGMAX, 0), RED("argmin", ARGMIN, 0),
	RED("prod", REDUCE_PROD, K(DTYPE)),
	{"mean", 1, 1, NOKW, K(AXIS) | K(KEEPDIMS) | K(DTYPE), "§7.11", bi_mean, 0, false},
	{"all", 1, 1, NOKW, K(AXIS) | K(KEEPDIMS), "§7.11", bi_all_any, IR_REDUCE_MIN, false},
	{"any", 1, 1, NOKW, K(AXIS) | K(KEEPDIMS), "§7.11", bi_all_any, IR_REDUCE_MAX, false},
	{"cumsum", 1, 1, NOKW, K(AXIS), "§7.11", bi_cumsum, 0, false},
	{"iota", 1, 1, NOKW, K(DIM) | K(DTYPE), "§7.12", bi_iota, 0, false},
	{"zeros", 1, 1, KW_DTYPE, K(DTYPE), "§7.12", bi_fill, 0, false},
	{"ones", 1, 1, KW_DTYPE, K(DTYPE), "§7.12", bi_fill, 1, false},
	{"full", 2, 2, KW_DTYPE, K(DTYPE), "§7.12", bi_fill, 2, false},
	{"zeros_like", 1, 1, KW_DTYPE, K(DTYPE), "§7.12", bi_fill, 3, false},
	{"ones_like", 1, 1, KW_DTYPE, K(DTYPE), "§7.12", bi_fill, 4, false},
	{"full_like", 2, 2, KW_DTYPE, K(DTYPE), "§7.12", bi_fill, 5, false},
	{"reshape", 2, 2, NOKW, 0, "§7.12", bi_reshape, 0, false},
	{"transpose", 1, 2, NOKW, 0, "§7.12", bi_transpose, 0, false},
	{"broadcast_to", 2, 2, NOKW, 0, "§7.12", bi_broadcast_to, 0, false},
	{"concatenate", 1, 1, KW_AXIS, K(AXIS), "§7.12", bi_join, 0, false},
	{"stack", 1, 1, KW_AXIS, K(AXIS), "§7.12", bi_join, 1, false},
	{"tile", 2, 2, NOKW, 0, "§7.12", bi_join, 2, false},
	{"repeat", 2, 2, KW_AXIS, K(AXIS), "§7.12", bi_join, 3, false},
	{"expand_dims", 2, 2, NOKW, 0, "§7.12", bi_join, 4, false},
	{"squeeze", 1, 1, KW_AXIS, K(AXIS), "§7.12", bi_join, 5, false},
	{"split", 2, 2, KW_AXIS, K(AXIS), "§7.12", bi_join, 6, false},
	{"triu", 1, 1, KW_K, K(K), "§7.12", bi_tri, 1, false},
	{"tril", 1, 1, KW_K, K(K), "§7.12", bi_tri, 0, false},
	{"dot", 2, 2, NOKW, K(ACC) | K(TRANS_A) | K(TRANS_B) | K(PREFERRED_ELEMENT_TYPE) | K(PRECISION), "§7.13", bi_dot,
	 0, false},
	{"load", 1, 1, NOKW, K(MASK) | K(OTHER), "§7.7", bi_load, 0, false},
	{"store", 2, 2, NOKW, K(MASK), "§7.7", bi_store, 0, false},
	{"swap", 2, 2, NOKW, K(MASK), "§7.7", bi_store, 1, false},
	ATOM("atomic_add", ADD), ATOM("atomic_max", MAX), ATOM("atomic_min", MIN),
	ATOM("atomic_and", AND), ATOM("atomic_or", OR), ATOM("atomic_xor", XOR),
	ATOM("atomic_xchg", XCHG),
	{"atomic_cas", 3, 3, NOKW, K(MASK), "§7.8", bi_atomic, ATOMIC_CAS, false},
	{"einsum", 3, 3, NOKW, K(ACC), "§7.13", NULL, STRING_EINSUM, false},
	COMPAT("sign", 1, SIGN), COMPAT("clip", 3, CLIP), COMPAT("square", 1, SQUARE),
	{"reciprocal", 1, 1, NOKW, K(APPROX), "§7.20", bi_reciprocal, COMPAT_RECIPROCAL, false},
	COMPAT("isnan", 1, ISNAN), COMPAT("isfinite", 1, ISFINITE),
	COMPAT("swapaxes", 3, SWAPAXES), COMPAT("multiple_of", 2, MULTIPLE_OF), COMPAT("max_contiguous", 2, MAX_CONTIGUOUS),
	{"roll", 1, 2, KW_AXIS, K(AXIS) | K(SHIFT), "§7.20", bi_roll, 0, false},
	{"broadcast_in_dim", 3, 3, NOKW, 0, "§7.20", bi_broadcast_in_dim, 0, false},
	/* more math (§7.10), bit operations (§7.4, §7.14), select_n, flip, pad, diagonal (§7.20) */
	MATH("tan", TAN), MATH("atan", ATAN), MATH("asin", ASIN), MATH("acos", ACOS), MATH("sinh", SINH),
	MATH("cosh", COSH), MATH("asinh", ASINH), MATH("acosh", ACOSH), MATH("atanh", ATANH), MATH("expm1", EXPM1),
	MATH("cbrt", CBRT), MATH("round", ROUND), MATH("rint", ROUND),
	{"atan2", 2, 2, NOKW, 0, "§7.10", bi_atan2, 0, true},
	COMPAT("trunc", 1, TRUNC), COMPAT("erf_inv", 1, ERF_INV),
	COMPAT("population_count", 1, POPCNT), COMPAT("clz", 1, CLZ),
	COMPAT("shift_right_logical", 2, SHIFT_RIGHT_LOGICAL), COMPAT("bitcast_convert_type", 2, BITCAST),
	{"select_n", 2, MAXPOS, NOKW, 0, "§7.20", bi_compat, COMPAT_SELECT_N, false},
	/* float functions and jax.nn's activations (§7.20, sema_compat.c) */
	COMPAT("nextafter", 2, NEXTAFTER), COMPAT("copysign", 2, COPYSIGN), COMPAT("signbit", 1, SIGNBIT),
	COMPAT("logaddexp", 2, LOGADDEXP), COMPAT("relu", 1, RELU), COMPAT("relu6", 1, RELU6),
	COMPAT("softplus", 1, SOFTPLUS), COMPAT("log_sigmoid", 1, LOG_SIGMOID), COMPAT("silu", 1, SILU),
	COMPAT("swish", 1, SILU), COMPAT("hard_tanh", 1, HARD_TANH),
	{"gelu", 1, 1, KW_APPROXIMATE, K(APPROXIMATE), "§7.20", bi_compat_kw, COMPAT_GELU, false},
	{"leaky_relu", 1, 1, KW_NEGATIVE_SLOPE, K(NEGATIVE_SLOPE), "§7.20", bi_compat_kw, COMPAT_LEAKY_RELU, false},
	{"elu", 1, 1, KW_ALPHA, K(ALPHA), "§7.20", bi_compat_kw, COMPAT_ELU, false},
	{"flip", 1, 1, KW_AXIS, K(AXIS), "§7.20", bi_flip, 0, false},
	{"pad", 2, 2, NOKW, K(CONSTANT_VALUES), "§7.20", bi_pad, 0, false},
	{"diagonal", 1, 1, KW_OFFSET, K(OFFSET) | K(AXIS1) | K(AXIS2), "§7.20", bi_diagonal, 0, false},
	{"debug_print", 1, 1, NOKW, 0, "§7.19", NULL, IR_DEBUG_PRINT, false},
	{"debug_check", 2, 2, NOKW, 0, "§7.19", NULL, IR_DEBUG_CHECK, false},
};

enum { NBUILTINS = sizeof builtins / sizeof builtins[0] };

static const Builtin *find_builtin(const char *name)
{
	for (int i = 0; i < NBUILTINS; i++)
		if (strcmp(builtins[i].name, name) == 0)
			return &builtins[i];
	return NULL;
}

/* Predeclared constants (§7.18), weakly typed like a float literal.  They
 * are not reserved: `pi` is a common name (a program index), and a
 * declaration of it hides the constant.  (`e` is not one at all: write
 * exp(1.0).) */
static const struct {
	const char *name; /* spelling */
	double value;     /* its value */
} builtin_consts[] = {
	{"pi", 3.14159265358979323846},
};

bool builtin_constant(const char *name, Loc loc, Ex *out)
{
	for (size_t i = 0; i < sizeof builtin_consts / sizeof builtin_consts[0]; i++)
		if (strcmp(builtin_consts[i].name, name) == 0) {
			*out = ex_const(const_float(builtin_consts[i].value, DT_F32, true), loc);
			return true;
		}
	return false;
}

bool is_builtin_name(const char *name)
{
	return find_builtin(name) != NULL || strcmp(name, "range") == 0;
}

/* §7.20's jax.nn activations and float functions (the Compat rows from
 * COMPAT_NEXTAFTER on) are predeclared but not reserved (§5.10): kernels
 * wrote their own `fn gelu` before pkc had one, and a declaration of the
 * name hides the builtin, as one of pi does. */
bool is_reserved_name(const char *name)
{
	const Builtin *bi = find_builtin(name);
	if (bi && (bi->fn == bi_compat || bi->fn == bi_compat_kw) && bi->arg >= COMPAT_NEXTAFTER)
		return false;
	return is_builtin_name(name);
}

const char *builtin_suggestion(const char *name)
{
	const char *names[NBUILTINS];
	for (int i = 0; i < NBUILTINS; i++)
		names[i] = builtins[i].name;
	return closest_name(name, names, NBUILTINS);
}

bool call_is_effect(const AstExpr *call)
{
	const AstExpr *f = call->kind == AE_CALL ? call->lhs : NULL;
	if (!f || (f->kind != AE_NAME && f->kind != AE_FIELD))
		return false;
	return strcmp(f->name, "store") == 0 || strcmp(f->name, "swap") == 0 || strncmp(f->name, "atomic_", 7) == 0 ||
	       strncmp(f->name, "debug_", 6) == 0;
}

/* ---- Pallas habits -------------------------------------------------------- */

/* Names a JAX Pallas user may bring along, with their .pk spelling (§10)
 * and the clause that defines it; "unknown ..." errors offer them. */
typedef struct PallasName {
	const char *jax;    /* as JAX spells it (the last part of jnp.x, lax.x, pl.x) */
	const char *pk;     /* how .pk writes it */
	const char *clause; /* where lang-spec defines that */
} PallasName;

static const PallasName pallas_names[] = {
	{"True", "true", "§2.3"}, {"False", "false", "§2.3"},
	{"float16", "f16", "§4.1"}, {"bfloat16", "bf16", "§4.1"}, {"float32", "f32", "§4.1"},
	{"float64", "f64", "§4.1"}, {"int8", "i8", "§4.1"}, {"int16", "i16", "§4.1"}, {"int32", "i32", "§4.1"},
	{"int64", "i64", "§4.1"}, {"uint8", "u8", "§4.1"}, {"uint16", "u16", "§4.1"}, {"uint32", "u32", "§4.1"},
	{"uint64", "u64", "§4.1"}, {"bool_", "bool", "§4.1"},
	{"arange", "iota(n)", "§7.12"}, {"broadcasted_iota", "iota(shape, dim = d, dtype = t)", "§7.12"},
	{"power", "pow(a, b) or a ** b", "§7.10"},
	{"floor_divide", "a // b or floordiv(a, b)", "§7.2"}, {"remainder", "a % b", "§7.2"}, {"mod", "a % b", "§7.2"},
	{"true_divide", "a / b", "§7.2"}, {"divide", "a / b", "§7.2"}, {"matmul", "a @ b or dot(a, b)", "§7.13"},
	{"dot_general", "dot(a, b, trans_a = ..., trans_b = ...)", "§7.13"},
	{"logical_and", "a and b", "§7.3"},
	{"logical_or", "a or b", "§7.3"}, {"logical_not", "not a", "§7.3"}, {"select", "where(c, a, b)", "§7.16"},
	{"convert_element_type", "astype(x, T) or T(x)", "§7.14"}, {"dslice", "ds(start, size)", "§7.6"},
	{"cond", "if c { ... } else { ... }", "§6.4"}, {"fori_loop", "a var and for i in range(lo, hi) { ... }", "§6.5"},
	{"while_loop", "a var and while c { ... }", "§6.6"},
	{"clamp", "clip(x, lo, hi) (lax.clamp(lo, x, hi) takes x second)", "§7.20"}, {"negative", "-x", "§7.2"},
	{"equal", "a == b", "§7.3"}, {"not_equal", "a != b", "§7.3"}, {"greater", "a > b", "§7.3"},
	{"greater_equal", "a >= b", "§7.3"}, {"less", "a < b", "§7.3"}, {"less_equal", "a <= b", "§7.3"},
	{"add", "a + b", "§7.2"}, {"subtract", "a - b", "§7.2"}, {"multiply", "a * b", "§7.2"},
	{"integer_pow", "x ** n", "§7.2"}, {"bitwise_and", "a & b", "§7.4"}, {"bitwise_or", "a | b", "§7.4"},
	{"bitwise_xor", "a ^ b", "§7.4"}, {"bitwise_not", "~a", "§7.4"}, {"invert", "~a", "§7.4"},
	{"shift_left", "a << b", "§7.4"}, {"shift_right_arithmetic", "a >> b (of a signed a)", "§7.4"},
	/* jnp's spellings of §7.10's math and §7.20's functions */
	{"arctan", "atan(x)", "§7.10"}, {"arcsin", "asin(x)", "§7.10"}, {"arccos", "acos(x)", "§7.10"},
	{"arctan2", "atan2(y, x)", "§7.10"}, {"arcsinh", "asinh(x)", "§7.10"}, {"arccosh", "acosh(x)", "§7.10"},
	{"arctanh", "atanh(x)", "§7.10"}, {"erfinv", "erf_inv(x)", "§7.20"}, {"around", "round(x)", "§7.10"},
	{"fix", "trunc(x)", "§7.20"}, {"fliplr", "flip(x, 1)", "§7.20"}, {"flipud", "flip(x, 0)", "§7.20"},
	{"bitcast", "bitcast_convert_type(x, T) (one width; pltpu.bitcast's reshaping is not supported)", "§7.14"},
	{"popcount", "population_count(x)", "§7.4"}, {"bitwise_count", "population_count(x)", "§7.4"},
	{"left_shift", "a << b", "§7.4"}, {"right_shift", "a >> b, or shift_right_logical(a, b)", "§7.4"},
};

static const PallasName *pallas_name(const char *name)
{
	for (size_t i = 0; i < sizeof pallas_names / sizeof pallas_names[0]; i++)
		if (strcmp(pallas_names[i].jax, name) == 0)
			return &pallas_names[i];
	return NULL;
}

bool report_pallas_name(Sema *s, const char *what, const char *name, Loc loc)
{
	const PallasName *pn = pallas_name(name);
	if (!pn)
		return false;
	error_at(s->cc, loc, "unknown %s '%s' (the .pk spelling is %s) [%s]", what, name, pn->pk, pn->clause);
	return true;
}

/* The module a Pallas habit prefixes a name with (jnp, jax.lax, pl, ...)
 * when e is one that no declaration takes; else NULL. */
static const char *module_path(Sema *s, const AstExpr *e)
{
	static const char *const roots[] = {"jnp", "np", "numpy", "jax", "lax", "pl", "plgpu", "pltpu", "math"};
	if (e->kind == AE_FIELD) {
		const char *p = module_path(s, e->lhs);
		return p ? arena_printf(s->a, "%s.%s", p, e->name) : NULL;
	}
	if (e->kind != AE_NAME || lookup(s, e->name))
		return NULL;
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
		if (strcmp(e->name, roots[i]) == 0)
			return e->name;
	return NULL;
}

bool report_module_prefix(Sema *s, const AstExpr *f, bool call)
{
	const char *mod = f->kind == AE_FIELD ? module_path(s, f->lhs) : NULL;
	if (!mod)
		return false;
	const PallasName *pn = pallas_name(f->name);
	const char *sug = builtin_suggestion(f->name);
	Ex k;
	size_t ml = strlen(mod);
	char lower[16];
	size_t n = 0;
	for (; f->name[n] && n < sizeof lower - 1; n++)
		lower[n] = (char)tolower((unsigned char)f->name[n]);
	lower[n] = 0;
	if (ml >= 10 && strcmp(mod + ml - 10, ".Precision") == 0 && precision_named(lower) >= 0)
		error_at(s->cc, f->loc, "'%s.%s': .pk has no modules; write precision = \"%s\" [§7.13]", mod, f->name, lower);
	else if (find_builtin(f->name) || builtin_constant(f->name, f->loc, &k))
		error_at(s->cc, f->loc, "drop the '%s.' prefix: .pk has no modules; write %s%s [§10.3]", mod, f->name,
		         call && find_builtin(f->name) ? "(...)" : "");
	else if (pn)
		error_at(s->cc, f->loc, "'%s.%s': .pk has no modules; the .pk spelling is %s [%s]", mod, f->name, pn->pk, pn->clause);
	else if (sug)
		error_at(s->cc, f->loc, "'%s.%s': .pk has no modules, and '%s' is no builtin; did you mean '%s'? [§10.3]", mod,
		         f->name, f->name, sug);
	else
		error_at(s->cc, f->loc, "'%s.%s': .pk has no modules, and '%s' is no builtin [§10.3]", mod, f->name, f->name);
	return true;
}

/* What to say when a call has more positional arguments than the builtin
 * takes and Pallas passes the rest positionally: keywords .pk takes only
 * by name (§3.6).  NULL when nothing specific applies. */
static const char *keyword_only_hint(Sema *s, const Builtin *bi)
{
	if (bi->fn == bi_load)
		return "mask= and other= are keyword arguments: load(x[...], mask = m, other = v)";
	if (bi->fn == bi_store)
		return "mask= is a keyword argument: store(o[...], v, mask = m)";
	if (bi->fn == bi_atomic)
		return arena_printf(s->a, "index the Ref rather than passing the index: %s(x[idx], %sv, mask = m)", bi->name,
		                    bi->arg == ATOMIC_CAS ? "cmp, " : "");
	if (bi->kws & K(AXIS))
		return arena_printf(s->a, "axis= is a keyword argument: %s(x, axis = k)", bi->name);
	return NULL;
}

/* ---- calls ---------------------------------------------------------------- */

/* "1 positional argument", "1 to 2 positional arguments" */
static const char *arity_str(Sema *s, const Builtin *bi)
{
	int lo = bi->min_pos, hi = bi->max_pos + (bi->pos_kw != NOKW);
	if (lo == hi)
		return arena_printf(s->a, "%d positional argument%s", lo, lo == 1 ? "" : "s");
	return arena_printf(s->a, "%d to %d positional arguments", lo, hi);
}

static const char *kw_list(Sema *s, unsigned kws)
{
	const char *out = "";
	for (int k = 0; k < KW_COUNT; k++)
		if (kws & (1u << k))
			out = arena_printf(s->a, "%s%s%s", out, *out ? ", " : "", kw_names[k]);
	return out;
}

void eval_args(Sema *s, AstExpr *call)
{
	for (int i = 0; i < call->nargs; i++)
		if (call->args[i].value->kind != AE_STRING)
			sema_expr(s, call->args[i].value);
}

/* f32(x): a dtype (or a const holding one) called as a function is a cast
 * (§7.14). */
static Ex dtype_call(Sema *s, AstExpr *call, DType dt)
{
	const char *dn = dtype_str(dt);
	if (call->nargs != 1 || call->args[0].name) {
		error_at(s->cc, call->loc, "%s() takes exactly 1 positional argument: %s(x) converts x to %s [§7.14]", dn, dn, dn);
		eval_args(s, call);
		return ex_error(call->loc);
	}
	return cast_ex(s, sema_expr(s, call->args[0].value), dt, call->loc);
}

/* Evaluates the arguments of a call to a name that is not a builtin, so
 * their own errors are still reported, and reports the callee. */
static Ex bad_callee(Sema *s, AstExpr *call, bool method, const char *name)
{
	AstExpr *f = call->lhs;
	if (method) {
		const char *sug = builtin_suggestion(name);
		if (sug)
			error_at(s->cc, f->loc, "unknown method '.%s'; did you mean '.%s'? [§7.1]", name, sug);
		else
			error_at(s->cc, f->loc, "unknown method '.%s' (methods are the builtin functions) [§7.1]", name);
	} else if (!name) {
		error_at(s->cc, f->loc, "this expression cannot be called; only builtins and dtypes can [§7.1]");
	} else {
		Binding *b = lookup(s, name);
		if (b) {
			error_at(s->cc, f->loc, "'%s' is not a function [§7.1]", name);
			if (b->loc.line)
				note_at(s->cc, b->loc, "'%s' is declared here", name);
		} else if (!report_pallas_name(s, "function", name, f->loc)) {
			const char *sug = builtin_suggestion(name);
			if (sug)
				error_at(s->cc, f->loc, "unknown function '%s'; did you mean '%s'? [§7.1]", name, sug);
			else
				error_at(s->cc, f->loc, "unknown function '%s' [§7.1]", name);
		}
	}
	eval_args(s, call);
	return ex_error(call->loc);
}

/* The methods of jnp's x.at[index] on a value (§7.9). */
static const char *const at_methods[] = {"set", "add", "multiply", "divide", "min", "max", "get"};

/* callee x.at[index].m with m one of at_methods */
static bool is_at_update(const AstExpr *f)
{
	const AstExpr *ix = f->lhs;
	if (ix->kind != AE_INDEX || ix->lhs->kind != AE_FIELD || strcmp(ix->lhs->name, "at") != 0)
		return false;
	for (size_t i = 0; i < sizeof at_methods / sizeof at_methods[0]; i++)
		if (strcmp(f->name, at_methods[i]) == 0)
			return true;
	return false;
}

/* x.at[index].set(u) ... of a value x; a Ref is updated by storing. */
static Ex at_update_call(Sema *s, AstExpr *call)
{
	AstExpr *f = call->lhs, *ix = f->lhs;
	const char *op = f->name;
	bool get = strcmp(op, "get") == 0;
	bool bad = false;
	int npos = 0;
	for (int i = 0; i < call->nargs; i++)
		if (call->args[i].name) {
			error_at(s->cc, call->args[i].loc, ".at[].%s() takes no keyword arguments, found '%s' [§7.9]", op,
			         call->args[i].name);
			bad = true;
		} else {
			npos++;
		}
	if (npos != (get ? 0 : 1)) {
		error_at(s->cc, call->loc, ".at[].%s() takes %s [§7.9]", op, get ? "no arguments" : "one value");
		bad = true;
	}
	Ex base = sema_expr(s, ix->lhs->lhs);
	if (base.kind == EX_REF || (base.kind == EX_ACCESS && base.acc->view)) {
		error_at(s->cc, f->loc, ".at[].%s() updates a value; to change a Ref, store to it: x[idx] = u [§7.9]", op);
		bad = true;
	}
	Ex u = get || bad ? ex_void(call->loc) : sema_expr(s, call->args[0].value);
	if (bad || base.kind == EX_ERROR)
		return ex_error(call->loc);
	return sema_value_update(s, call->loc, base, ix, op, u);
}

Ex sema_call(Sema *s, AstExpr *call)
{
	AstExpr *f = call->lhs;
	if (f->kind == AE_DTYPE)
		return dtype_call(s, call, f->dtype);
	Binding *fb = f->kind == AE_NAME ? lookup(s, f->name) : NULL;
	if (fb && fb->kind == B_CONST && fb->ex.kind == EX_DTYPE)
		return dtype_call(s, call, fb->ex.dt);
	if (fb && fb->kind == B_FN)
		return call_fn(s, fb, call);
	if (report_module_prefix(s, f, true)) { /* jnp.exp(x): one error, and poison */
		eval_args(s, call);
		return ex_error(call->loc);
	}
	bool method = f->kind == AE_FIELD;
	const char *name = f->kind == AE_NAME || method ? f->name : NULL;
	if (method && is_at_update(f))
		return at_update_call(s, call);
	Ex recv = {0};
	if (method)
		recv = sema_expr(s, f->lhs);
	const Builtin *bi = name ? find_builtin(name) : NULL;
	if (!bi) {
		if (method && recv.kind == EX_ERROR) { /* the receiver's error is enough */
			eval_args(s, call);
			return ex_error(call->loc);
		}
		return bad_callee(s, call, method, name);
	}
	if (s->ctx != CTX_BODY && !bi->const_ok) { /* §4.3, §5.3, §5.6, §5.9 */
		if (bi->fn == bi_program_id)
			error_at(s->cc, f->loc, "%s() can only be used in a kernel body%s [§7.15]", bi->name,
			         s->ctx == CTX_INDEX_MAP ? "; an index map receives the program ids as its parameters" : "");
		else
			error_at(s->cc, f->loc, "%s() cannot be used in %s; only the builtins that fold to constants (§4.3) can [%s]",
			         bi->name, ctx_phrase(s), s->clause);
		eval_args(s, call);
		return ex_error(call->loc);
	}
	if (!bi->fn)
		return bi->arg == STRING_EINSUM ? sema_einsum(s, call) : sema_debug_call(s, call, (Op)bi->arg);

	Call c = {.bi = bi, .loc = call->loc};
	bool bad = false;
	int npos = 0;
	if (method)
		c.pos[npos++] = recv;
	for (int i = 0; i < call->nargs; i++) {
		AstArg *arg = &call->args[i];
		bool prec = arg->name && strcmp(arg->name, "precision") == 0 && (bi->kws & K(PRECISION));
		Ex e = prec ? sema_precision_arg(s, arg->value) : sema_expr(s, arg->value);
		bad |= e.kind == EX_ERROR;
		if (!arg->name) {
			if (npos < MAXPOS)
				c.pos[npos] = e;
			npos++;
			continue;
		}
		int k = 0;
		while (k < KW_COUNT && strcmp(kw_names[k], arg->name) != 0)
			k++;
		if (k == KW_COUNT || !(bi->kws & (1u << k))) {
			const char *names[KW_COUNT];
			int n = 0;
			for (int j = 0; j < KW_COUNT; j++)
				if (bi->kws & (1u << j))
					names[n++] = kw_names[j];
			const char *sug = closest_name(arg->name, names, n);
			if (sug)
				error_at(s->cc, arg->loc, "unknown keyword argument '%s' for %s(); did you mean '%s'? [%s]", arg->name,
				         bi->name, sug, bi->clause);
			else if (bi->kws)
				error_at(s->cc, arg->loc, "unknown keyword argument '%s' for %s(); it takes %s [%s]", arg->name,
				         bi->name, kw_list(s, bi->kws), bi->clause);
			else
				error_at(s->cc, arg->loc, "%s() takes no keyword arguments, found '%s' [%s]", bi->name, arg->name,
				         bi->clause);
			bad = true;
		} else if (c.has[k]) {
			error_at(s->cc, arg->loc, "keyword argument '%s' of %s() is given twice [%s]", arg->name, bi->name,
			         bi->clause);
			bad = true;
		} else {
			c.has[k] = true;
			c.kw[k] = e;
		}
	}
	/* One positional argument more than max_pos stands for pos_kw. */
	if (bi->pos_kw != NOKW && npos == bi->max_pos + 1) {
		if (c.has[bi->pos_kw]) {
			error_at(s->cc, c.pos[npos - 1].loc, "%s() got %s both by position and as a keyword [%s]", bi->name,
			         kw_names[bi->pos_kw], bi->clause);
			bad = true;
		}
		c.has[bi->pos_kw] = true;
		c.kw[bi->pos_kw] = c.pos[--npos];
	}
	if (npos < bi->min_pos || npos > bi->max_pos) {
		const char *hint = npos > bi->max_pos ? keyword_only_hint(s, bi) : NULL;
		error_at(s->cc, call->loc, "%s() takes %s, %d given%s%s%s [%s]", bi->name, arity_str(s, bi), npos,
		         method ? " (counting the receiver of the method call)" : "", hint ? "; " : "", hint ? hint : "",
		         bi->clause);
		return ex_error(call->loc);
	}
	c.npos = npos;
	if (bad)
		return ex_error(call->loc);
	/* axis = None is jnp's default: a builtin without axis= does what jnp
	 * does with None (every axis), or asks for one where jnp would flatten. */
	if (c.has[KW_AXIS] && c.kw[KW_AXIS].kind == EX_NONE)
		c.has[KW_AXIS] = false;
	return bi->fn(s, &c);
}
