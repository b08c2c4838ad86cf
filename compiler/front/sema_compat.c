/* sema_compat.c - small jnp/lax/pl functions that real Pallas kernels use,
 * built from other operations (lang-spec §7.20): sign, clip, clamp, square,
 * reciprocal, isnan, isfinite, swapaxes, and the hints multiple_of and
 * max_contiguous.  Each is what jnp computes, written with the elementwise
 * operations of §7.2-§7.4, so every target takes it as it takes those.
 * (lax.clamp is not one: `clamp` is a common fn name; a hint says clip.) */
#include "sema.h"

#include <string.h>

static const char *const compat_names[COMPAT_COUNT] = {
	[COMPAT_SIGN] = "sign", [COMPAT_CLIP] = "clip", [COMPAT_SQUARE] = "square",
	[COMPAT_RECIPROCAL] = "reciprocal", [COMPAT_ISNAN] = "isnan", [COMPAT_ISFINITE] = "isfinite",
	[COMPAT_SWAPAXES] = "swapaxes", [COMPAT_MULTIPLE_OF] = "multiple_of",
	[COMPAT_MAX_CONTIGUOUS] = "max_contiguous",
};

static Ex weak_int(int64_t i, Loc loc)
{
	return ex_const(const_int(i, DT_I32, true), loc);
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
	Ex nan = sema_binary_ast(s, OP_NE, loc, x, x);
	if (nan.kind == EX_ERROR)
		return nan;
	return ex_value(emit(s, IR_SELECT, loc, x.v->type, 3, nan.v, x.v, r.v), x.weak, loc);
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

Ex sema_compat(Sema *s, Compat which, Loc loc, const Ex *args, int nargs)
{
	Ex a[3];
	for (int i = 0; i < nargs && i < 3; i++) {
		a[i] = args[i].kind == EX_NONE || args[i].kind == EX_ERROR ? args[i] : rvalue(s, args[i]);
		if (a[i].kind == EX_ERROR)
			return a[i];
	}
	DType dt = ex_dtype(&a[0]);
	bool number = which != COMPAT_ISNAN && which != COMPAT_ISFINITE &&
	              which != COMPAT_SWAPAXES;
	if (a[0].kind == EX_NONE || (number && dt == DT_BOOL) ||
	    (which == COMPAT_RECIPROCAL && !dtype_is_float(dt))) {
		error_at(s->cc, a[0].loc, "%s() needs %s, found %s [§7.20]", compat_names[which],
		         which == COMPAT_RECIPROCAL ? "a float" : "a number", a[0].kind == EX_NONE ? "None" : ex_type_str(s, &a[0]));
		return ex_error(loc);
	}
	switch (which) {
	case COMPAT_SIGN: return sign(s, loc, a[0]);
	case COMPAT_CLIP: return clip(s, loc, a[0], a[1], a[2]);
	case COMPAT_SQUARE: return sema_binary_ast(s, OP_MUL, loc, a[0], a[0]);
	case COMPAT_RECIPROCAL: return sema_binary_ast(s, OP_DIV, loc, ex_const(const_float(1.0, DT_F32, true), loc), a[0]);
	case COMPAT_ISNAN: return sema_binary_ast(s, OP_NE, loc, a[0], a[0]);
	case COMPAT_ISFINITE: /* x - x is 0 unless x is inf or NaN */
		if (!dtype_is_float(dt))
			return sema_binary_ast(s, OP_EQ, loc, a[0], a[0]);
		return sema_binary_ast(s, OP_EQ, loc, sema_binary_ast(s, OP_SUB, loc, a[0], a[0]), weak_int(0, loc));
	case COMPAT_SWAPAXES: return swapaxes(s, loc, a[0], a[1], a[2]);
	case COMPAT_MULTIPLE_OF:
	case COMPAT_MAX_CONTIGUOUS: return hint(s, which, loc, a[0], a[1]);
	case COMPAT_COUNT: break;
	}
	internal_error("sema_compat: %d", (int)which);
}
