/* sema_compat.c - small jnp/lax/pl functions that real Pallas kernels use,
 * built from other operations (lang-spec §7.20): sign, clip, clamp, square,
 * reciprocal, isnan, isfinite, swapaxes, the hints multiple_of and
 * max_contiguous, trunc, erf_inv, select_n and shift_right_logical; and the
 * bit operations with an IR op of their own (population_count, clz,
 * bitcast_convert_type: §7.4, §7.14); nextafter, copysign, signbit,
 * logaddexp and jax.nn's activations (relu, relu6, softplus, log_sigmoid,
 * silu, gelu, leaky_relu, elu, hard_tanh).  Each is what jnp computes,
 * written with the elementwise operations of §7.2-§7.10 where it can be, so
 * every target takes it as it takes those.
 * (lax.clamp is not one: `clamp` is a common fn name; a hint says clip.) */
#include "sema.h"

#include <math.h>
#include <string.h>

static const char *const compat_names[COMPAT_COUNT] = {
	[COMPAT_SIGN] = "sign", [COMPAT_CLIP] = "clip", [COMPAT_SQUARE] = "square",
	[COMPAT_RECIPROCAL] = "reciprocal", [COMPAT_ISNAN] = "isnan", [COMPAT_ISFINITE] = "isfinite",
	[COMPAT_SWAPAXES] = "swapaxes", [COMPAT_MULTIPLE_OF] = "multiple_of",
	[COMPAT_MAX_CONTIGUOUS] = "max_contiguous", [COMPAT_TRUNC] = "trunc", [COMPAT_ERF_INV] = "erf_inv",
	[COMPAT_POPCNT] = "population_count", [COMPAT_CLZ] = "clz", [COMPAT_SHIFT_RIGHT_LOGICAL] = "shift_right_logical",
	[COMPAT_BITCAST] = "bitcast_convert_type", [COMPAT_SELECT_N] = "select_n",
	[COMPAT_NEXTAFTER] = "nextafter", [COMPAT_COPYSIGN] = "copysign", [COMPAT_SIGNBIT] = "signbit",
	[COMPAT_LOGADDEXP] = "logaddexp", [COMPAT_RELU] = "relu", [COMPAT_RELU6] = "relu6",
	[COMPAT_SOFTPLUS] = "softplus", [COMPAT_LOG_SIGMOID] = "log_sigmoid", [COMPAT_SILU] = "silu",
	[COMPAT_GELU] = "gelu", [COMPAT_LEAKY_RELU] = "leaky_relu", [COMPAT_ELU] = "elu",
	[COMPAT_HARD_TANH] = "hard_tanh",
};

static Ex weak_int(int64_t i, Loc loc)
{
	return ex_const(const_int(i, DT_I32, true), loc);
}

/* A weakly typed float constant (a literal's type, §4.7). */
static Ex fconst(double f, Loc loc)
{
	return ex_const(const_float(f, DT_F32, true), loc);
}

/* jnp.sign: -1, 0 or 1 in x's dtype; a float NaN or zero is itself. */
static Ex sign(Sema *s, Loc loc, Ex x)
{
	DType dt = ex_dtype(&x);
	if (x.kind == EX_CONST) {
		ConstVal c = x.c;
		if (dtype_is_float(dt))
			c.f = c.f > 0 ? 1.0 : c.f < 0 ? -1.0 : c.f;
		else
			c.i = c.i > 0 ? 1 : c.i < 0 ? -1 : 0;
		return ex_const(c, loc);
	}
	Ex gt = sema_binary_ast(s, OP_GT, loc, x, weak_int(0, loc));
	Ex lt = sema_binary_ast(s, OP_LT, loc, x, weak_int(0, loc));
	if (gt.kind == EX_ERROR || lt.kind == EX_ERROR)
		return ex_error(loc);
	Ex r = sema_binary_ast(s, OP_SUB, loc, ex_value(cast_value(s, gt.v, dt, loc), x.weak, loc),
	                       ex_value(cast_value(s, lt.v, dt, loc), x.weak, loc));
	if (r.kind == EX_ERROR || !dtype_is_float(dt))
		return r;
	/* A float neither above nor below zero (±0, NaN) is itself: -0.0
	 * keeps its sign bit, as jnp.sign(-0.0) does. */
	Ex nonzero = sema_binary_ast(s, OP_BITOR, loc, gt, lt);
	if (nonzero.kind == EX_ERROR)
		return nonzero;
	return ex_value(emit(s, IR_SELECT, loc, x.v->type, 3, nonzero.v, r.v, x.v), x.weak, loc);
}

/* jnp.clip(x, lo, hi) = minimum(maximum(x, lo), hi); None leaves a side
 * open. */
static Ex clip(Sema *s, Loc loc, Ex x, Ex lo, Ex hi)
{
	if (lo.kind != EX_NONE)
		x = sema_binop(s, &bin_max, loc, x, lo);
	if (hi.kind != EX_NONE && x.kind != EX_ERROR)
		x = sema_binop(s, &bin_min, loc, x, hi);
	return x;
}

static Ex swapaxes(Sema *s, Loc loc, Ex x, Ex a, Ex b)
{
	int64_t ax[2];
	if (!const_int_arg(s, a, "an axis of swapaxes()", "§7.20", &ax[0]) ||
	    !const_int_arg(s, b, "an axis of swapaxes()", "§7.20", &ax[1]))
		return ex_error(loc);
	int rank = ex_rank(&x);
	int64_t *perm = arena_alloc(s->a, sizeof(int64_t) * (size_t)(rank + 1));
	for (int d = 0; d < rank; d++)
		perm[d] = d;
	int d0 = normalize_axis(s, ax[0], rank, a.loc, "swapaxes", "§7.20");
	int d1 = d0 < 0 ? -1 : normalize_axis(s, ax[1], rank, b.loc, "swapaxes", "§7.20");
	if (d1 < 0)
		return ex_error(loc);
	perm[d0] = d1;
	perm[d1] = d0;
	return sema_transpose(s, loc, x, perm, rank);
}

/* pl.multiple_of(x, n), pl.max_contiguous(x, n): hints that x (an integer
 * index) is a multiple of n / runs of n contiguous values; pkc derives what
 * it needs itself, so they are x, after checking n. */
static Ex hint(Sema *s, Compat which, Loc loc, Ex x, Ex n)
{
	int64_t k;
	if (!const_int_arg(s, n, which == COMPAT_MULTIPLE_OF ? "the multiple of multiple_of()" :
	                                                        "the run length of max_contiguous()", "§7.20", &k))
		return ex_error(loc);
	if (k <= 0) {
		error_at(s->cc, n.loc, "%s() needs a positive constant, found %lld [§7.20]", compat_names[which], (long long)k);
		return ex_error(loc);
	}
	if (!dtype_is_int(ex_dtype(&x))) {
		error_at(s->cc, x.loc, "%s() is a hint about an integer index, and this is %s [§7.20]", compat_names[which],
		         ex_type_str(s, &x));
		return ex_error(loc);
	}
	return x;
}


/* e, weakly typed or not (a cast made it strong). */
static Ex with_weak(Ex e, bool weak)
{
	if (e.kind == EX_CONST)
		e.c.weak = weak;
	else if (e.kind == EX_VALUE)
		e.weak = weak;
	return e;
}

/* jnp.trunc: where(x < 0, ceil(x), floor(x)), as jnp writes it; the
 * identity on integers. */
static Ex trunc_ex(Sema *s, Loc loc, Ex x)
{
	if (!dtype_is_float(ex_dtype(&x)))
		return x;
	Ex neg = sema_binary_ast(s, OP_LT, loc, x, weak_int(0, loc));
	if (neg.kind == EX_ERROR)
		return neg;
	Ex up = sema_math(s, IR_CEIL, loc, x, "trunc");
	Ex down = sema_math(s, IR_FLOOR, loc, x, "trunc");
	return sema_where(s, loc, neg, up, down);
}

/* p(w) = c[0] w^(n-1) + ... + c[n-1], by Horner's rule in w's dtype. */
static Ex horner(Sema *s, Loc loc, Ex w, const double *c, int n)
{
	Ex p = fconst(c[0], loc);
	for (int k = 1; k < n && p.kind != EX_ERROR; k++)
		p = sema_binary_ast(s, OP_ADD, loc, sema_binary_ast(s, OP_MUL, loc, p, w),
		                    fconst(c[k], loc));
	return p;
}

/* lax.erf_inv: M. Giles' single-precision approximation ("Approximating
 * the erfinv function", GPU Computing Gems, 2011), which XLA and Pallas
 * use for f32: w = -log((1 - x)(1 + x)); a polynomial in w - 2.5 below
 * w = 5, else in sqrt(w) - 3; times x.  Both are computed and one taken
 * (branch-free); |x| == 1 gives x * inf, |x| > 1 NaN. */
static Ex erf_inv(Sema *s, Loc loc, Ex x)
{
	static const double lo[9] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
	                             -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
	static const double hi[9] = {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
	                             -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
	Ex one = fconst(1.0, loc);
	DType dt = ex_dtype(&x);
	bool weak = ex_weak(&x);
	/* integers and bool as f32, 16-bit floats computed in f32 (§7.10) */
	DType rt = dtype_is_float(dt) ? dt : DT_F32;
	if (rt != DT_F64)
		x = sema_cast(s, x, DT_F32, loc);
	Ex omx = sema_binary_ast(s, OP_SUB, loc, one, x);
	Ex opx = sema_binary_ast(s, OP_ADD, loc, one, x);
	Ex w = sema_binary_ast(s, OP_MUL, loc, omx, opx);
	w = sema_binary_ast(s, OP_SUB, loc, weak_int(0, loc), sema_math(s, IR_LOG, loc, w, "erf_inv"));
	Ex small = sema_binary_ast(s, OP_LT, loc, w, fconst(5.0, loc));
	Ex pl = horner(s, loc, sema_binary_ast(s, OP_SUB, loc, w, fconst(2.5, loc)), lo, 9);
	Ex ph = horner(s, loc, sema_binary_ast(s, OP_SUB, loc, sema_math(s, IR_SQRT, loc, w, "erf_inv"),
	                                       fconst(3.0, loc)), hi, 9);
	Ex r = sema_binary_ast(s, OP_MUL, loc, sema_where(s, loc, small, pl, ph), x);
	Ex edge = sema_binary_ast(s, OP_EQ, loc, sema_binary_ast(s, OP_MUL, loc, x, x), one);
	Ex inf = sema_binary_ast(s, OP_MUL, loc, x, fconst(INFINITY, loc));
	return with_weak(sema_cast(s, sema_where(s, loc, edge, inf, r), rt, loc), weak);
}

/* The unsigned dtype of dt's width. */
static DType unsigned_of(DType dt)
{
	switch (dt) {
	case DT_I8: return DT_U8;
	case DT_I16: return DT_U16;
	case DT_I32: return DT_U32;
	case DT_I64: return DT_U64;
	default: return dt;
	}
}

/* lax.population_count, lax.clz: an op of their own (§7.4); constants fold
 * on the bits of their dtype. */
static Ex bit_count(Sema *s, Compat which, Loc loc, Ex x)
{
	DType dt = ex_dtype(&x);
	Op op = which == COMPAT_POPCNT ? IR_POPCNT : IR_CLZ;
	if (x.kind == EX_CONST) {
		int bits = dtype_bits(dt);
		uint64_t u = (uint64_t)x.c.i & (bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1);
		ConstVal r = x.c;
		r.i = op == IR_POPCNT ? __builtin_popcountll(u) : u ? __builtin_clzll(u) - (64 - bits) : bits;
		return ex_const(r, loc);
	}
	return ex_value(emit(s, op, loc, x.v->type, 1, x.v), x.weak, loc);
}

/* lax.shift_right_logical(a, b): >> on the bits as unsigned, the result
 * back in the promoted (signed) dtype; an amount outside [0, bits) gives 0
 * (§7.4). */
static Ex shift_right_logical(Sema *s, Loc loc, Ex a, Ex b)
{
	DType da = ex_dtype(&a), db = ex_dtype(&b);
	bool weak;
	DType dt = promote_dtypes(da, ex_weak(&a), db, ex_weak(&b), &weak);
	if (!dtype_is_int(da) || !dtype_is_int(db) || dt == DT_NONE || !dtype_is_signed(dt))
		return sema_binary_ast(s, OP_SHR, loc, a, b); /* unsigned: >> is logical; else its error */
	DType u = unsigned_of(dt);
	Ex ua = sema_cast(s, a, u, loc), ub = sema_cast(s, b, u, loc);
	return with_weak(sema_cast(s, sema_binary_ast(s, OP_SHR, loc, ua, ub), dt, loc), weak);
}

/* x's bits as dtype dt of the same width (a strong value). */
static Ex bits_as(Sema *s, Loc loc, Ex x, DType dt)
{
	Value *v = as_value(s, x);
	return ex_value(emit(s, IR_BITCAST, loc, type_with_dtype(s->a, v->type, dt), 1, v), false, loc);
}

/* lax.bitcast_convert_type(x, T): x's bits as dtype T of the same width
 * (§7.14). */
static Ex bitcast(Sema *s, Loc loc, Ex x, Ex t)
{
	x = rvalue(s, x);
	if (x.kind == EX_ERROR || t.kind == EX_ERROR)
		return ex_error(loc);
	if (t.kind != EX_DTYPE) {
		error_at(s->cc, t.loc, "the second argument of bitcast_convert_type() must be a dtype such as i32, found %s "
		         "[§7.14]", ex_type_str(s, &t));
		return ex_error(loc);
	}
	DType from = ex_dtype(&x);
	if (from == DT_BOOL || t.dt == DT_BOOL || dtype_bits(from) != dtype_bits(t.dt)) {
		error_at(s->cc, loc, "bitcast_convert_type() from %s to %s: both must be numeric dtypes of one width "
		         "[§7.14]", ex_type_str(s, &x), dtype_str(t.dt));
		return ex_error(loc);
	}
	return from == t.dt ? ex_value(as_value(s, x), false, loc) : bits_as(s, loc, x, t.dt);
}

/* lax.select_n(which, *cases): cases[which]; a bool `which` picks between
 * two (false: the first).  A chain of selects, the last case where
 * `which` is out of range (JAX leaves that undefined). */
static Ex select_n(Sema *s, Loc loc, const Ex *args, int nargs)
{
	Ex which = rvalue(s, args[0]);
	if (which.kind == EX_ERROR)
		return which;
	DType wt = ex_dtype(&which);
	int ncases = nargs - 1;
	if (!(wt == DT_BOOL || dtype_is_int(wt)) || (wt == DT_BOOL && ncases != 2)) {
		error_at(s->cc, which.loc, "select_n() takes an integer index (or a bool with two cases), found %s with %d "
		         "case%s [§7.20]", ex_type_str(s, &which), ncases, ncases == 1 ? "" : "s");
		return ex_error(loc);
	}
	if (wt == DT_BOOL)
		return sema_where(s, loc, which, args[2], args[1]);
	Ex r = args[ncases];
	for (int k = ncases - 1; k >= 1 && r.kind != EX_ERROR; k--)
		r = sema_where(s, loc, sema_binary_ast(s, OP_EQ, loc, which, weak_int(k - 1, loc)), args[k], r);
	return r;
}

/* ---- float functions and jax.nn's activations ------------------------------------ */

/* The signed integer dtype of float dtype dt's width. */
static DType bits_dtype(DType dt)
{
	return dtype_bits(dt) == 64 ? DT_I64 : dtype_bits(dt) == 16 ? DT_I16 : DT_I32;
}

/* The operands of a float function of two arguments in their promoted
 * dtype, integers as f32 (jnp's promote_args_inexact); false after an
 * error. */
static bool float_pair(Sema *s, Compat which, Loc loc, Ex *a, Ex *b, bool *weak)
{
	DType dt = promote_dtypes(ex_dtype(a), ex_weak(a), ex_dtype(b), ex_weak(b), weak);
	if (dt == DT_NONE || dt == DT_BOOL) {
		error_at(s->cc, loc, "%s() needs two numbers, found %s and %s [§7.20]", compat_names[which],
		         ex_type_str(s, a), ex_type_str(s, b));
		return false;
	}
	if (!dtype_is_float(dt))
		dt = DT_F32;
	*a = sema_cast(s, *a, dt, loc);
	*b = sema_cast(s, *b, dt, loc);
	return a->kind != EX_ERROR && b->kind != EX_ERROR;
}

/* jnp.nextafter(x, y): the next float after x toward y, by one step of x's
 * bits (magnitude up when y lies beyond x from zero, else down); from ±0
 * the smallest subnormal of y's sign; y when x == y; NaN when either is. */
static Ex nextafter_ex(Sema *s, Loc loc, Ex x, Ex y)
{
	bool weak;
	if (!float_pair(s, COMPAT_NEXTAFTER, loc, &x, &y, &weak))
		return ex_error(loc);
	DType dt = ex_dtype(&x), it = bits_dtype(dt);
	Ex bx = bits_as(s, loc, x, it), by = bits_as(s, loc, y, it);
	Ex one = ex_const(const_int(1, it, false), loc);
	Ex sign = ex_const(const_int(dtype_bits(dt) == 64 ? INT64_MIN : -(INT64_C(1) << (dtype_bits(dt) - 1)), it, false),
	                   loc);
	Ex tiny = sema_binary_ast(s, OP_BITOR, loc, sema_binary_ast(s, OP_BITAND, loc, by, sign), one);
	Ex up = sema_binary_ast(s, OP_NE, loc, sema_binary_ast(s, OP_LT, loc, x, y),
	                        sema_binary_ast(s, OP_LT, loc, x, weak_int(0, loc)));
	Ex step = sema_where(s, loc, up, one, sema_unary(s, OP_NEG, loc, one));
	Ex bits = sema_where(s, loc, sema_binary_ast(s, OP_EQ, loc, x, weak_int(0, loc)), tiny,
	                     sema_binary_ast(s, OP_ADD, loc, bx, step));
	if (bits.kind == EX_ERROR)
		return bits;
	Ex r = sema_where(s, loc, sema_binary_ast(s, OP_EQ, loc, x, y), y, bits_as(s, loc, bits, dt));
	Ex nan = sema_binary_ast(s, OP_OR, loc, sema_binary_ast(s, OP_NE, loc, x, x), sema_binary_ast(s, OP_NE, loc, y, y));
	return with_weak(sema_where(s, loc, nan, sema_binary_ast(s, OP_ADD, loc, x, y), r), weak);
}

/* jnp.signbit: the sign bit of a float (set for -0 and negative NaNs);
 * x < 0 for an integer. */
static Ex signbit_ex(Sema *s, Loc loc, Ex x)
{
	DType dt = ex_dtype(&x);
	if (!dtype_is_float(dt))
		return sema_binary_ast(s, OP_LT, loc, x, weak_int(0, loc));
	if (x.kind == EX_CONST)
		return ex_const(const_int(signbit(x.c.f) != 0, DT_BOOL, false), loc);
	return sema_binary_ast(s, OP_LT, loc, bits_as(s, loc, x, bits_dtype(dt)), weak_int(0, loc));
}

/* jnp.copysign(x, y): |x| with y's sign bit. */
static Ex copysign_ex(Sema *s, Loc loc, Ex x, Ex y)
{
	bool weak;
	if (!float_pair(s, COMPAT_COPYSIGN, loc, &x, &y, &weak))
		return ex_error(loc);
	Ex ax = sema_abs(s, loc, x);
	return with_weak(sema_where(s, loc, signbit_ex(s, loc, y), sema_unary(s, OP_NEG, loc, ax), ax), weak);
}

/* jnp.logaddexp(a, b) = log(e^a + e^b) as jnp computes it:
 * max(a, b) + log1p(e^-|a - b|), and a + b where a - b is NaN (a NaN
 * operand, or infinities of one sign). */
static Ex logaddexp_ex(Sema *s, Loc loc, Ex a, Ex b)
{
	bool weak;
	if (!float_pair(s, COMPAT_LOGADDEXP, loc, &a, &b, &weak))
		return ex_error(loc);
	Ex amax = sema_binop(s, &bin_max, loc, a, b);
	Ex delta = sema_binary_ast(s, OP_SUB, loc, a, b);
	if (delta.kind == EX_ERROR)
		return delta;
	Ex e = sema_math(s, IR_EXP, loc, sema_unary(s, OP_NEG, loc, sema_abs(s, loc, delta)), "logaddexp");
	Ex r = sema_binary_ast(s, OP_ADD, loc, amax, sema_math(s, IR_LOG1P, loc, e, "logaddexp"));
	Ex nan = sema_binary_ast(s, OP_NE, loc, delta, delta);
	return with_weak(sema_where(s, loc, nan, sema_binary_ast(s, OP_ADD, loc, a, b), r), weak);
}

/* x as a float: integers as f32, as jax.nn's functions take them. */
static Ex as_float(Sema *s, Loc loc, Ex x)
{
	return dtype_is_float(ex_dtype(&x)) ? x : with_weak(sema_cast(s, x, DT_F32, loc), ex_weak(&x));
}

/* jax.nn.gelu: x Φ(x); approximate (the default) by 0.5 (1 + tanh(√(2/π)
 * (x + 0.044715 x³))), exactly by (erf(x / √2) + 1) / 2. */
static Ex gelu(Sema *s, Loc loc, Ex x, Ex approximate)
{
	bool approx = true;
	if (approximate.kind != EX_NONE && !const_bool_arg(s, approximate, "approximate=", "§7.20", &approx))
		return ex_error(loc);
	x = as_float(s, loc, x);
	if (!approx) {
		Ex e = sema_math(s, IR_ERF, loc, sema_binary_ast(s, OP_DIV, loc, x, fconst(sqrt(2.0), loc)), "gelu");
		return sema_binary_ast(s, OP_DIV, loc,
		                       sema_binary_ast(s, OP_MUL, loc, x, sema_binary_ast(s, OP_ADD, loc, e, fconst(1.0, loc))),
		                       fconst(2.0, loc));
	}
	Ex x3 = sema_binary_ast(s, OP_MUL, loc, sema_binary_ast(s, OP_MUL, loc, x, x), x);
	Ex inner = sema_binary_ast(s, OP_ADD, loc, x, sema_binary_ast(s, OP_MUL, loc, fconst(0.044715, loc), x3));
	Ex t = sema_math(s, IR_TANH, loc, sema_binary_ast(s, OP_MUL, loc, fconst(sqrt(2.0 / 3.14159265358979323846), loc), inner), "gelu");
	Ex cdf = sema_binary_ast(s, OP_MUL, loc, fconst(0.5, loc), sema_binary_ast(s, OP_ADD, loc, fconst(1.0, loc), t));
	return sema_binary_ast(s, OP_MUL, loc, x, cdf);
}

/* jax.nn.leaky_relu(x, negative_slope = 0.01) and jax.nn.elu(x, alpha =
 * 1.0): x where x is positive (leaky_relu: or zero), else slope * x /
 * alpha * expm1(x) (expm1 of 0 where x > 0, so no inf is formed). */
static Ex leaky_or_elu(Sema *s, Compat which, Loc loc, Ex x, Ex k)
{
	x = as_float(s, loc, x);
	if (k.kind == EX_NONE)
		k = fconst(which == COMPAT_ELU ? 1.0 : 0.01, loc);
	if (which == COMPAT_LEAKY_RELU)
		return sema_where(s, loc, sema_binary_ast(s, OP_GE, loc, x, weak_int(0, loc)), x,
		                  sema_binary_ast(s, OP_MUL, loc, k, x));
	Ex pos = sema_binary_ast(s, OP_GT, loc, x, weak_int(0, loc));
	Ex safe = sema_where(s, loc, pos, fconst(0.0, loc), x);
	Ex neg = sema_binary_ast(s, OP_MUL, loc, k, sema_math(s, IR_EXPM1, loc, safe, "elu"));
	return sema_where(s, loc, pos, x, neg);
}

/* The jax.nn activations of one argument. */
static Ex activation(Sema *s, Compat which, Loc loc, Ex x)
{
	switch (which) {
	case COMPAT_RELU: /* jnp.maximum(x, 0) */
		return sema_binop(s, &bin_max, loc, x, weak_int(0, loc));
	case COMPAT_RELU6: /* jnp.minimum(jnp.maximum(x, 0), 6.) */
		return sema_binop(s, &bin_min, loc, sema_binop(s, &bin_max, loc, x, weak_int(0, loc)), fconst(6.0, loc));
	case COMPAT_SOFTPLUS: /* jnp.logaddexp(x, 0) */
		return logaddexp_ex(s, loc, x, weak_int(0, loc));
	case COMPAT_LOG_SIGMOID: /* -softplus(-x) */
		return sema_unary(s, OP_NEG, loc, logaddexp_ex(s, loc, sema_unary(s, OP_NEG, loc, x), weak_int(0, loc)));
	case COMPAT_SILU: /* x * sigmoid(x) */
		x = as_float(s, loc, x);
		return sema_binary_ast(s, OP_MUL, loc, x, sema_math(s, IR_SIGMOID, loc, x, "silu"));
	case COMPAT_HARD_TANH: /* jnp.where(x > 1, 1, jnp.where(x < -1, -1, x)) */
		return sema_where(s, loc, sema_binary_ast(s, OP_GT, loc, x, weak_int(1, loc)), weak_int(1, loc),
		                  sema_where(s, loc, sema_binary_ast(s, OP_LT, loc, x, weak_int(-1, loc)), weak_int(-1, loc), x));
	default: break;
	}
	internal_error("sema_compat: activation %d", (int)which);
}

Ex sema_compat(Sema *s, Compat which, Loc loc, const Ex *args, int nargs)
{
	if (which == COMPAT_SELECT_N)
		return select_n(s, loc, args, nargs);
	if (which == COMPAT_BITCAST)
		return bitcast(s, loc, args[0], args[1]);
	Ex a[3];
	for (int i = 0; i < nargs && i < 3; i++) {
		a[i] = args[i].kind == EX_NONE || args[i].kind == EX_ERROR ? args[i] : rvalue(s, args[i]);
		if (a[i].kind == EX_ERROR)
			return a[i];
	}
	DType dt = ex_dtype(&a[0]);
	bool number = which != COMPAT_ISNAN && which != COMPAT_ISFINITE &&
	              which != COMPAT_SWAPAXES && which != COMPAT_ERF_INV;
	bool integer = which == COMPAT_POPCNT || which == COMPAT_CLZ || which == COMPAT_SHIFT_RIGHT_LOGICAL;
	if (a[0].kind == EX_NONE || (number && dt == DT_BOOL) || (integer && !dtype_is_int(dt)) ||
	    (which == COMPAT_RECIPROCAL && !dtype_is_float(dt))) {
		error_at(s->cc, a[0].loc, "%s() needs %s, found %s [%s]", compat_names[which],
		         which == COMPAT_RECIPROCAL ? "a float" : integer ? "an integer" : "a number",
		         a[0].kind == EX_NONE ? "None" : ex_type_str(s, &a[0]), integer ? "§7.4" : "§7.20");
		return ex_error(loc);
	}
	switch (which) {
	case COMPAT_SIGN: return sign(s, loc, a[0]);
	case COMPAT_CLIP: return clip(s, loc, a[0], a[1], a[2]);
	case COMPAT_SQUARE: return sema_binary_ast(s, OP_MUL, loc, a[0], a[0]);
	case COMPAT_RECIPROCAL: return sema_binary_ast(s, OP_DIV, loc, fconst(1.0, loc), a[0]);
	case COMPAT_ISNAN: return sema_binary_ast(s, OP_NE, loc, a[0], a[0]);
	case COMPAT_ISFINITE: /* x - x is 0 unless x is inf or NaN */
		if (!dtype_is_float(dt))
			return sema_binary_ast(s, OP_EQ, loc, a[0], a[0]);
		return sema_binary_ast(s, OP_EQ, loc, sema_binary_ast(s, OP_SUB, loc, a[0], a[0]), weak_int(0, loc));
	case COMPAT_SWAPAXES: return swapaxes(s, loc, a[0], a[1], a[2]);
	case COMPAT_MULTIPLE_OF:
	case COMPAT_MAX_CONTIGUOUS: return hint(s, which, loc, a[0], a[1]);
	case COMPAT_TRUNC: return trunc_ex(s, loc, a[0]);
	case COMPAT_ERF_INV: return erf_inv(s, loc, a[0]);
	case COMPAT_POPCNT:
	case COMPAT_CLZ: return bit_count(s, which, loc, a[0]);
	case COMPAT_SHIFT_RIGHT_LOGICAL: return shift_right_logical(s, loc, a[0], a[1]);
	case COMPAT_NEXTAFTER: return nextafter_ex(s, loc, a[0], a[1]);
	case COMPAT_COPYSIGN: return copysign_ex(s, loc, a[0], a[1]);
	case COMPAT_SIGNBIT: return signbit_ex(s, loc, a[0]);
	case COMPAT_LOGADDEXP: return logaddexp_ex(s, loc, a[0], a[1]);
	case COMPAT_GELU: return gelu(s, loc, a[0], a[1]);
	case COMPAT_LEAKY_RELU:
	case COMPAT_ELU: return leaky_or_elu(s, which, loc, a[0], a[1]);
	case COMPAT_RELU: case COMPAT_RELU6: case COMPAT_SOFTPLUS: case COMPAT_LOG_SIGMOID: case COMPAT_SILU:
	case COMPAT_HARD_TANH: return activation(s, which, loc, a[0]);
	case COMPAT_BITCAST:
	case COMPAT_SELECT_N:
	case COMPAT_COUNT: break;
	}
	internal_error("sema_compat: %d", (int)which);
}
