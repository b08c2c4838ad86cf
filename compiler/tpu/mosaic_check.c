/* mosaic_check.c - what a TPU kernel can express, and the static shape of
 * a kernel for the Mosaic back end.
 *
 * A Mosaic kernel has static shapes and a static grid, so every size
 * symbol needs a value from -D NAME=VALUE; the grid and the requires
 * constraints are then evaluated here (requires becomes a compile-time
 * check).  Windows follow Pallas' TPU tiling rule (jax 0.11.2,
 * pallas/mosaic/lowering.py _check_block_mappings).  The body is scanned
 * for the constructs the TPU cannot express (atomics, masks, gathers,
 * scalar stores to vector memory, 64-bit values, ...): each is reported
 * with error_at naming the construct, the target and the lang-spec clause.
 * lang-spec/README.md §10.1 "Target notes: mosaic-tpu" lists them. */
#include "mosaic_priv.h"

#include <stdlib.h>
#include <string.h>

/* ---- evaluating the grid and requires ---------------------------------- */

/* A scalar during evaluation. */
typedef struct EvalVal {
	bool known;         /* the value is known */
	int64_t v;          /* the value (bools: 0 or 1), wrapped to its dtype */
	const Value *blame; /* when unknown: the scalar parameter or op responsible */
} EvalVal;

/* v wrapped to dtype dt (two's complement, as the run-time values are). */
static int64_t wrap(int64_t v, DType dt)
{
	if (dt == DT_BOOL)
		return v != 0;
	int bits = dtype_bits(dt);
	if (bits >= 64)
		return v;
	uint64_t mask = (UINT64_C(1) << bits) - 1, u = (uint64_t)v & mask;
	if (dtype_is_signed(dt) && (u >> (bits - 1)))
		u |= ~mask;
	return (int64_t)u;
}

static bool is_scalar_int(const Type *t)
{
	return t->kind == TY_VALUE && t->rank == 0 && (dtype_is_int(t->dtype) || t->dtype == DT_BOOL);
}

/* Python modulo (b != 0); floor division is floor_div (types.h). */
static int64_t pymod(int64_t a, int64_t b)
{
	if (b == -1)
		return 0;
	int64_t r = a % b;
	return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* Evaluates one instruction whose operands are known.  Returns false for
 * an op (or an operand value) it does not evaluate. */
static bool eval_op(const Inst *i, const int64_t *x, int64_t *out)
{
	const Type *t = i->results[0]->type;
	if (!is_scalar_int(t))
		return false;
	for (int a = 0; a < i->nargs; a++)
		if (!is_scalar_int(i->args[a]->type))
			return false;
	DType dt = t->dtype;
	DType at = i->nargs ? i->args[0]->type->dtype : dt; /* operand dtype (comparisons) */
	bool sgn = dtype_is_signed(at);
	uint64_t ua = i->nargs > 0 ? (uint64_t)x[0] : 0, ub = i->nargs > 1 ? (uint64_t)x[1] : 0;
	int64_t r;
	switch (i->op) {
	case IR_CONST: r = i->ival; break;
	case IR_ADD: r = (int64_t)(ua + ub); break;
	case IR_SUB: r = (int64_t)(ua - ub); break;
	case IR_MUL: r = (int64_t)(ua * ub); break;
	case IR_FLOORDIV:
	case IR_MOD:
		if (x[1] == 0)
			return false;
		if (!sgn && dtype_bits(at) == 64)
			r = (int64_t)(i->op == IR_FLOORDIV ? ua / ub : ua % ub);
		else
			r = i->op == IR_FLOORDIV ? floor_div(x[0], x[1]) : pymod(x[0], x[1]);
		break;
	case IR_MIN: r = (sgn ? x[0] < x[1] : ua < ub) ? x[0] : x[1]; break;
	case IR_MAX: r = (sgn ? x[0] > x[1] : ua > ub) ? x[0] : x[1]; break;
	case IR_AND: r = x[0] & x[1]; break;
	case IR_OR: r = x[0] | x[1]; break;
	case IR_XOR: r = x[0] ^ x[1]; break;
	case IR_SHL:
	case IR_SHR:
		if (x[1] < 0 || x[1] >= dtype_bits(at))
			return false;
		r = i->op == IR_SHL ? (int64_t)(ua << x[1])
		    : sgn ? (x[0] < 0 ? ~(~x[0] >> x[1]) : x[0] >> x[1])
		    : (int64_t)(ua >> x[1]);
		break;
	case IR_EQ: r = x[0] == x[1]; break;
	case IR_NE: r = x[0] != x[1]; break;
	case IR_LT: r = sgn ? x[0] < x[1] : ua < ub; break;
	case IR_LE: r = sgn ? x[0] <= x[1] : ua <= ub; break;
	case IR_GT: r = sgn ? x[0] > x[1] : ua > ub; break;
	case IR_GE: r = sgn ? x[0] >= x[1] : ua >= ub; break;
	case IR_SELECT: r = x[0] ? x[1] : x[2]; break;
	case IR_NEG: r = (int64_t)(0 - ua); break;
	case IR_NOT: r = dt == DT_BOOL ? !x[0] : ~x[0]; break;
	case IR_ABS: r = x[0] < 0 && sgn ? (int64_t)(0 - ua) : x[0]; break;
	case IR_CAST: r = x[0]; break;
	default: return false;
	}
	*out = wrap(r, dt);
	return true;
}

bool mz_eval_region(const IrKernel *k, const Region *r, const int64_t *sizes, int64_t *results, bool *known,
                    const Value **blame)
{
	EvalVal *vals = calloc((size_t)k->nvalues + 1, sizeof *vals);
	if (!vals)
		internal_error("out of memory");
	for (int a = 0; a < r->nargs; a++) {
		EvalVal *e = &vals[r->args[a]->id];
		if (a < k->nsizes) {
			e->known = true;
			e->v = sizes[a];
		} else {
			e->blame = r->args[a]; /* a scalar parameter: known at launch only */
		}
	}
	bool all = true;
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_YIELD) {
			for (int a = 0; a < i->nargs; a++) {
				const EvalVal *e = &vals[i->args[a]->id];
				known[a] = e->known;
				results[a] = e->v;
				blame[a] = e->known ? NULL : e->blame;
				all = all && e->known;
			}
			break;
		}
		if (i->nresults != 1 || i->nregions > 0)
			continue;
		EvalVal *res = &vals[i->results[0]->id];
		int64_t x[3] = {0, 0, 0};
		const Value *why = NULL;
		for (int a = 0; a < i->nargs && a < 3; a++) {
			const EvalVal *e = &vals[i->args[a]->id];
			if (!e->known && !why)
				why = e->blame ? e->blame : i->args[a];
			x[a] = e->v;
		}
		if (why || i->nargs > 3 || !eval_op(i, x, &res->v))
			res->blame = why ? why : i->results[0];
		else
			res->known = true;
	}
	free(vals);
	return all;
}

/* ---- sizes from -D ------------------------------------------------------ */

/* Parses a -D value for a size: a positive integer literal (decimal, hex
 * or binary, '_' separators). */
static bool parse_size(const char *text, int64_t *out)
{
	const char *p = text;
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16, p += 2;
	else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
		base = 2, p += 2;
	if (!*p)
		return false;
	int64_t v = 0;
	for (; *p; p++) {
		if (*p == '_')
			continue;
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
		        : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : 99;
		if (d >= base || v > (INT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return v >= 1;
}

static bool resolve_sizes(Compiler *cc, const IrKernel *k, int64_t *sizes)
{
	bool ok = true;
	for (int s = 0; s < k->nsizes; s++) {
		Define *d = NULL;
		for (int i = 0; i < cc->defines.len && !d; i++) {
			Define *x = cc->defines.items[i];
			if (x->name == k->sizes[s])
				d = x;
		}
		if (!d) {
			error_at(cc, k->size_locs[s],
			         "the size '%s' must be known at compile time for " MZ_TARGET
			         " (TPU kernels have static shapes and a static grid): give it with -D %s=VALUE [§4.2]",
			         k->sizes[s], k->sizes[s]);
			ok = false;
			continue;
		}
		d->used = true;
		if (!parse_size(d->value, &sizes[s])) {
			error_at(cc, (Loc){0}, "-D %s=%s: the size '%s' needs a positive integer [§4.2]", d->name, d->value,
			         d->name);
			ok = false;
		}
	}
	return ok;
}

/* ---- the shape of the kernel ------------------------------------------------ */

static const char *mode_name(ParamMode m)
{
	return m == PM_IN ? "in" : m == PM_OUT ? "out" : m == PM_INOUT ? "inout" : m == PM_PREFETCH ? "prefetch" : "scalar";
}

/* The dtypes a TPU array or vector may have: no 64-bit types (the TPU has
 * no f64; Mosaic has no 64-bit vectors) and, in memory, no bool (Mosaic
 * keeps bools in mask registers and stores them as i32). */
static bool array_dtype_ok(DType dt)
{
	return dtype_bits(dt) < 64 && dt != DT_BOOL;
}

/* "[None, 1024]": a block as written (the array's dims without a spec). */
static const char *block_text(Arena *a, const IrOperand *op, const int64_t *win)
{
	const char *s = "[";
	for (int d = 0; d < op->array->rank; d++)
		s = arena_printf(a, "%s%s%s", s, d ? ", " : "",
		                 op->has_spec && op->squeezed[d] ? "None" : arena_printf(a, "%lld", (long long)win[d]));
	return arena_printf(a, "%s]", s);
}

/* Pallas' TPU tiling rule for one window (squeezed dims as 1): NULL when
 * it holds, else what it requires. */
static const char *tiling_rule(Arena *a, const IrOperand *op, const int64_t *win, const int64_t *dims)
{
	int r = op->array->rank;
	if (r >= 2) {
		int64_t b0 = win[r - 1], a0 = dims[r - 1], b1 = win[r - 2], a1 = dims[r - 2];
		if ((b0 == a0 || b0 % 128 == 0) && (b1 == a1 || b1 % 8 == 0))
			return NULL;
		return "its last two dims must be divisible by 8 and 128 respectively, or equal the array's "
		       "(None counts as 1)";
	}
	/* Rank 1: 1024 elements (8 x 128) or a power of 2 of at least one
	 * (packed) vector row. */
	int bits = dtype_bits(op->array->dtype);
	int64_t b = win[0], min_tile = 128 * (32 / (bits < 32 ? bits : 32));
	if (b == dims[0] || b % 1024 == 0 || (b >= min_tile && (b & (b - 1)) == 0))
		return NULL;
	return arena_printf(a, "a rank-1 block must equal the array, be a multiple of 1024, or be a power of 2 of at "
	                    "least %lld", (long long)min_tile);
}

/* The index map yields the literal block index 0 in every dim. */
static bool index_map_zero(const IrOperand *op)
{
	const Inst *y = op->index_map ? op->index_map->last : NULL;
	if (!y || y->op != IR_YIELD)
		return false;
	for (int a = 0; a < y->nargs; a++) {
		const Inst *d = y->args[a]->def;
		if (!d || d->op != IR_CONST || d->ival != 0)
			return false;
	}
	return true;
}

static bool check_operands(Compiler *cc, Arena *a, MzKernel *mk)
{
	const IrKernel *k = mk->k;
	bool ok = true;
	mk->dims = arena_alloc(a, (size_t)(k->noperands + 1) * sizeof *mk->dims);
	mk->window = arena_alloc(a, (size_t)(k->noperands + 1) * sizeof *mk->window);
	mk->trivial = arena_alloc(a, (size_t)(k->noperands + 1) * sizeof *mk->trivial);
	for (int o = 0; o < k->noperands; o++) {
		const IrOperand *op = k->operands[o];
		const Type *t = op->array;
		int64_t *dims = arena_alloc(a, (size_t)t->rank * sizeof *dims);
		int64_t *win = arena_alloc(a, (size_t)t->rank * sizeof *win);
		for (int d = 0; d < t->rank; d++) {
			dims[d] = t->dims[d];
			if (dims[d] == DIM_DYNAMIC)
				for (int s = 0; s < k->nsizes; s++)
					if (t->syms && t->syms[d] == k->sizes[s])
						dims[d] = mk->sizes[s];
			PKC_ASSERT(dims[d] > 0);
			win[d] = op->has_spec ? op->block[d] : dims[d];
		}
		mk->dims[o] = dims;
		mk->window[o] = win;
		bool whole = true;
		for (int d = 0; d < t->rank; d++)
			whole = whole && win[d] == dims[d];
		mk->trivial[o] = whole && (!op->has_spec || index_map_zero(op));
		if (op->mode == PM_PREFETCH) {
			/* Scalar prefetch (§5.11): the whole array in SMEM, no window. */
			if (dtype_bits(t->dtype) != 32) {
				error_at(cc, op->loc, "prefetch array '%s' of type %s is not supported by " MZ_TARGET
				         " (scalar prefetch is in SMEM, which holds 32-bit values: use i32 or u32) [§10.1]",
				         op->name, dtype_str(t->dtype));
				ok = false;
			}
			continue;
		}
		if (t->rank == 0) {
			error_at(cc, op->loc, "rank-0 array operands are not supported by " MZ_TARGET " (a VMEM block is a "
			         "vector: pass a scalar parameter or an array of shape [1]) [§10.1]");
			ok = false;
		}
		if (!array_dtype_ok(t->dtype)) {
			error_at(cc, op->loc, "%s arrays are not supported by " MZ_TARGET " (%s) [§4.1]",
			         dtype_str(t->dtype),
			         t->dtype == DT_BOOL ? "Mosaic keeps bools in mask registers, not in memory"
			                             : "TPU kernels have no 64-bit types");
			ok = false;
		}
		if (op->mode == PM_INOUT) {
			error_at(cc, op->loc, "inout operand '%s' is not supported by " MZ_TARGET " (a TPU kernel sees an "
			         "aliased input and output as two windows that do not see each other's stores): "
			         "use an in and an out operand [§5.2]", op->name);
			ok = false;
		}
		const char *why = tiling_rule(a, op, win, dims);
		if (why) {
			const char *arr = "";
			for (int d = 0; d < t->rank; d++)
				arr = arena_printf(a, "%s%s%lld", arr, d ? ", " : "", (long long)dims[d]);
			error_at(cc, op->loc, "the block %s of %s operand '%s' (array %s[%s]) breaks the TPU tiling rule of "
			         MZ_TARGET ": %s [§5.5]", block_text(a, op, win), mode_name(op->mode), op->name,
			         dtype_str(t->dtype), arr, why);
			ok = false;
		}
		if (k->ngrid == 0 && !mk->trivial[o]) {
			error_at(cc, op->loc, "operand '%s': a kernel without a grid can only see whole arrays on "
			         MZ_TARGET " (block index 0, block = array) [§5.6]", op->name);
			ok = false;
		}
	}
	for (int s = 0; s < k->nscalars; s++) {
		const IrScalar *sc = k->scalars[s];
		if (dtype_bits(sc->dtype) != 32) {
			error_at(cc, sc->loc, "scalar parameter '%s' of type %s is not supported by " MZ_TARGET
			         " (scalars are passed in SMEM, which holds 32-bit values: use i32, u32 or f32) [§5.1]",
			         sc->name, dtype_str(sc->dtype));
			ok = false;
		}
	}
	for (int s = 0; s < k->nscratch; s++) {
		const IrScratch *sc = k->scratch[s];
		if (!array_dtype_ok(sc->type->dtype)) {
			error_at(cc, sc->loc, "%s scratch buffers are not supported by " MZ_TARGET " [§5.7]",
			         dtype_str(sc->type->dtype));
			ok = false;
		}
	}
	return ok;
}

/* The kernel function's arguments after the grid indices: the prefetch
 * arrays, inputs and scalars in source order, then outputs, then scratch. */
static void order_args(Arena *a, MzKernel *mk)
{
	const IrKernel *k = mk->k;
	mk->args = arena_alloc(a, (size_t)(k->noperands + k->nscalars + k->nscratch + 1) * sizeof *mk->args);
	int n = 0;
	for (int o = 0; o < k->noperands; o++) /* Pallas passes the scalar-prefetch operands first */
		if (k->operands[o]->mode == PM_PREFETCH)
			mk->args[n++] = (MzArg){MZ_ARG_PREFETCH, o};
	mk->nprefetch = n;
	for (int p = 0; p < k->norder; p++) {
		if (k->order[p] == KP_SCALAR)
			mk->args[n++] = (MzArg){MZ_ARG_SCALAR, k->order_index[p]};
		else if (k->order[p] == KP_OPERAND && k->operands[k->order_index[p]]->mode == PM_IN)
			mk->args[n++] = (MzArg){MZ_ARG_INPUT, k->order_index[p]};
	}
	for (int p = 0; p < k->norder; p++)
		if (k->order[p] == KP_OPERAND && !param_mode_readonly(k->operands[k->order_index[p]]->mode))
			mk->args[n++] = (MzArg){MZ_ARG_OUTPUT, k->order_index[p]};
	mk->nwindows = n - mk->nprefetch;
	for (int s = 0; s < k->nscratch; s++)
		mk->args[n++] = (MzArg){MZ_ARG_SCRATCH, s};
	mk->nargs = n;
}

/* ---- the grid and requires ---------------------------------------------------- */

/* "n = 1000, m = 8": the sizes, for messages. */
static const char *sizes_text(Arena *a, const MzKernel *mk)
{
	const char *s = "";
	for (int i = 0; i < mk->k->nsizes; i++)
		s = arena_printf(a, "%s%s%s = %lld", s, i ? ", " : "", mk->k->sizes[i], (long long)mk->sizes[i]);
	return s;
}

static const char *blame_name(const IrKernel *k, const Region *r, const Value *v)
{
	if (v && !v->def && v->region == r && v->index >= k->nsizes && v->index - k->nsizes < k->nscalars)
		return k->scalars[v->index - k->nsizes]->name;
	return NULL;
}

/* Where the grid clause is (its yield's location), else the kernel's name. */
static Loc grid_loc(const IrKernel *k)
{
	const Inst *y = k->grid ? k->grid->last : NULL;
	return y && y->loc.line > 0 ? y->loc : k->loc;
}

static bool check_grid(Compiler *cc, Arena *a, MzKernel *mk)
{
	const IrKernel *k = mk->k;
	mk->grid = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *mk->grid);
	if (k->ngrid == 0)
		return true;
	bool *known = arena_alloc(a, (size_t)k->ngrid * sizeof *known);
	const Value **blames = arena_alloc(a, (size_t)k->ngrid * sizeof *blames);
	if (!mz_eval_region(k, k->grid, mk->sizes, mk->grid, known, blames)) {
		const Value *blame = NULL;
		for (int g = 0; g < k->ngrid && !blame; g++)
			blame = known[g] ? NULL : blames[g];
		const char *who = blame_name(k, k->grid, blame);
		Loc at = blame && blame->def ? blame->def->loc : grid_loc(k);
		if (who)
			error_at(cc, grid_loc(k), "the grid of kernel '%s' depends on the scalar parameter '%s'; " MZ_TARGET
			         " needs a static grid [§5.3]", k->name, who);
		else
			error_at(cc, at, "the grid of kernel '%s' cannot be evaluated at compile time, which " MZ_TARGET
			         " needs [§5.3]", k->name);
		return false;
	}
	for (int g = 0; g < k->ngrid; g++)
		if (mk->grid[g] < 1 || mk->grid[g] > INT32_MAX) {
			error_at(cc, grid_loc(k), "grid extent %d of kernel '%s' is %lld for %s; it must be between 1 and "
			         "2^31 - 1 [§5.3]", g, k->name, (long long)mk->grid[g], sizes_text(a, mk));
			return false;
		}
	return true;
}

static bool check_requires(Compiler *cc, Arena *a, MzKernel *mk)
{
	const IrKernel *k = mk->k;
	if (!k->requires || k->nrequires == 0)
		return true;
	int64_t *res = arena_alloc(a, (size_t)k->nrequires * sizeof *res);
	bool *known = arena_alloc(a, (size_t)k->nrequires * sizeof *known);
	const Value **blames = arena_alloc(a, (size_t)k->nrequires * sizeof *blames);
	mz_eval_region(k, k->requires, mk->sizes, res, known, blames);
	bool ok = true;
	for (int r = 0; r < k->nrequires; r++) {
		if (!known[r]) {
			/* A constraint over a scalar parameter: known at launch only. */
			const char *who = blame_name(k, k->requires, blames[r]);
			warning_at(cc, k->require_locs[r], "this requires is not checked by " MZ_TARGET " (%s) [§5.9]",
			           who ? arena_printf(a, "it depends on the scalar parameter '%s'", who)
			               : "it cannot be evaluated at compile time");
		} else if (!res[r]) {
			error_at(cc, k->require_locs[r], "requires is false for %s (" MZ_TARGET
			         " checks it at compile time) [§5.9]", sizes_text(a, mk));
			ok = false;
		}
	}
	return ok;
}

/* ---- the body ---------------------------------------------------------------- */

/* Body scan state: reports each kind of problem once per kernel where it
 * would otherwise repeat for every instruction. */
typedef struct Scan {
	Compiler *cc;        /* diagnostics */
	const IrKernel *k;   /* the kernel */
	bool ok;             /* nothing reported */
	bool said_f64;       /* f64 values reported */
	bool said_wide;      /* 64-bit integer vectors reported */
} Scan;

static const char *kind_name(const Inst *i)
{
	static char buf[32];
	if (i->op == IR_ATOMIC) {
		snprintf(buf, sizeof buf, "atomic_%s", atomic_kind_names[i->ival]);
		return buf;
	}
	return op_info[i->op].name;
}

static void check_value_type(Scan *s, const Inst *i, const Type *t)
{
	if (t->kind != TY_VALUE)
		return;
	if (t->dtype == DT_F64 && !s->said_f64) {
		error_at(s->cc, i->loc, "f64 values are not supported by " MZ_TARGET " (the TPU has no 64-bit floating "
		         "point) [§4.1]");
		s->said_f64 = true;
		s->ok = false;
	} else if (t->rank > 0 && dtype_bits(t->dtype) == 64 && t->dtype != DT_F64 && !s->said_wide) {
		error_at(s->cc, i->loc, "%s vectors are not supported by " MZ_TARGET " (Mosaic has no 64-bit "
		         "vectors; 64-bit integers may only be scalars) [§4.1]", dtype_str(t->dtype));
		s->said_wide = true;
		s->ok = false;
	}
}

static void fail(Scan *s, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(Scan *s, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(&s->cc->diag, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
	s->ok = false;
}

/* A load or store: every Ref of a TPU kernel body is in VMEM, which is
 * accessed in whole vectors. */
static void check_access(Scan *s, const Inst *i)
{
	bool store = i->op == IR_STORE;
	const Value *ref = i->args[0];
	if (!ref->def && ref->region == s->k->body && ref->index < s->k->noperands &&
	    s->k->operands[ref->index]->mode == PM_PREFETCH) {
		/* A prefetch array is in SMEM (§5.11): memref.load of one element. */
		if (i->results[0]->type->rank != 0 || i->has_mask || i->has_other)
			fail(s, i->loc, "a prefetch array is read one element at a time by " MZ_TARGET " (it is in SMEM, "
			     "which holds scalars): index every dim with a scalar [§10.1]");
		return;
	}
	if (i->has_mask)
		fail(s, i->loc, "a masked %s is not supported by " MZ_TARGET " (TPU kernels load and store whole "
		     "vectors of their VMEM blocks; select lanes with where() instead) [§7.7]", store ? "store" : "load");
	else if (i->has_other)
		fail(s, i->loc, "a load with other= is not supported by " MZ_TARGET " (TPU kernels load whole "
		     "vectors of their VMEM blocks; select lanes with where() instead) [§7.7]");
	int rank = 0;
	for (int d = 0; d < i->nidx; d++) {
		if (i->idx[d].kind == IDX_GATHER) {
			fail(s, i->loc, "a gather index is not supported by " MZ_TARGET " (TPU vector loads and stores "
			     "address contiguous blocks) [§7.5]");
			return;
		}
		rank += i->idx[d].kind != IDX_POINT;
	}
	if (store && rank == 0)
		fail(s, i->loc, "a scalar store to a VMEM block is not supported by " MZ_TARGET " (TPU vector memory "
		     "is written in whole vectors) [§6.3]");
}

/* debug_print takes what Pallas' TPU lowering takes: 32-bit scalars
 * (tpu.log), or one block whose "{}" ends the format (tpu.log_buffer). */
static void check_debug_print(Scan *s, const Inst *i)
{
	int blocks = 0;
	for (int k = 0; k < i->nargs; k++)
		blocks += i->args[k]->type->rank > 0;
	size_t n = strlen(i->str);
	if (blocks && (i->nargs > 1 || n < 2 || strcmp(i->str + n - 2, "{}") != 0)) {
		fail(s, i->loc, "debug_print prints either scalars or one block whose '{}' ends the format on "
		     MZ_TARGET " (Pallas' TPU lowering: tpu.log, tpu.log_buffer) [§7.19]");
		return;
	}
	for (int k = 0; k < i->nargs && !blocks; k++) {
		DType dt = i->args[k]->type->dtype;
		if (dt != DT_I32 && dt != DT_U32 && dt != DT_F32)
			fail(s, i->loc, "debug_print of a %s scalar is not supported by " MZ_TARGET " (tpu.log prints "
			     "32-bit integers and floats): convert it, e.g. i32(...) or f32(...) [§7.19]", dtype_str(dt));
	}
}

static void scan_region(Scan *s, const Region *r);

static void scan_inst(Scan *s, const Inst *i)
{
	for (int n = 0; n < i->nresults; n++)
		check_value_type(s, i, i->results[n]->type);
	const Type *a0 = i->nargs ? i->args[0]->type : NULL;
	switch (i->op) {
	case IR_ATOMIC:
		fail(s, i->loc, "%s is not supported by " MZ_TARGET " (TPU kernels have no atomics) [§7.8]", kind_name(i));
		break;
	case IR_LOAD:
	case IR_STORE:
		check_access(s, i);
		break;
	case IR_DEBUG_PRINT:
		check_debug_print(s, i);
		break;
	case IR_DEBUG_CHECK:
		fail(s, i->loc, "debug_check is not supported by " MZ_TARGET " (pkc does not emit the checkify form "
		     "of a check; use the host target, which runs the same kernel) [§7.19]");
		break;
	case IR_CUMSUM:
		fail(s, i->loc, "cumsum is not supported by " MZ_TARGET " (Mosaic has no scan) [§7.11]");
		break;
	case IR_REDUCE_PROD:
		fail(s, i->loc, "prod is not supported by " MZ_TARGET " (Pallas' TPU lowering has no product reduction) [§7.11]");
		break;
	case IR_REDUCE_SUM:
	case IR_REDUCE_MAX:
	case IR_REDUCE_MIN: /* bool max/min (any/all) reduce in f32, as Pallas does */
		if (!dtype_is_float(a0->dtype) && a0->dtype != DT_I32 && (a0->dtype != DT_BOOL || i->op == IR_REDUCE_SUM))
			fail(s, i->loc, "a reduction over %s is not supported by " MZ_TARGET " (Mosaic reduces floats and "
			     "i32: cast first) [§7.11]", dtype_str(a0->dtype));
		break;
	case IR_ARGMAX:
	case IR_ARGMIN:
		if (a0->dtype != DT_F32 && a0->dtype != DT_BF16)
			fail(s, i->loc, "%s over %s is not supported by " MZ_TARGET " (Mosaic's reduce_index takes f32 or "
			     "bf16) [§7.11]", kind_name(i), dtype_str(a0->dtype));
		break;
	case IR_DOT: /* its accumulator is f32 or a signed integer (16-bit floats accumulate in f32, §7.13) */
		if (dtype_is_unsigned(a0->dtype))
			fail(s, i->loc, "dot of %s operands is not supported by " MZ_TARGET " (the TPU multiplies signed "
			     "integers: cast first) [§7.13]", dtype_str(a0->dtype));
		break;
	case IR_REVERSE:
		fail(s, i->loc, "flip is not supported by " MZ_TARGET " (Pallas' TPU lowering has no rule for lax.rev) [§10.1]");
		break;
	case IR_ASIN: case IR_ACOS: case IR_SINH: case IR_COSH: case IR_ASINH: case IR_ACOSH: case IR_ATANH:
	case IR_EXPM1: case IR_CBRT:
		fail(s, i->loc, "%s is not supported by " MZ_TARGET " (Pallas' TPU lowering has no rule for lax.%s) [§10.1]",
		     kind_name(i), op_info[i->op].name);
		break;
	case IR_POW:
		if (!dtype_is_float(i->results[0]->type->dtype))
			fail(s, i->loc, "integer pow is not supported by " MZ_TARGET " (convert to a float first) [§7.2]");
		break;
	default:
		break;
	}
	for (int n = 0; n < i->nregions; n++)
		scan_region(s, i->regions[n]);
}

static void scan_region(Scan *s, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next)
		scan_inst(s, i);
}

/* ---- entry ------------------------------------------------------------------- */

bool mz_check_kernel(Compiler *cc, Arena *a, const IrKernel *k, MzKernel *mk)
{
	memset(mk, 0, sizeof *mk);
	mk->k = k;
	mk->sizes = arena_alloc(a, (size_t)(k->nsizes + 1) * sizeof *mk->sizes);
	if (!resolve_sizes(cc, k, mk->sizes))
		return false;
	bool ok = check_operands(cc, a, mk);
	ok = check_grid(cc, a, mk) && ok;
	ok = check_requires(cc, a, mk) && ok;
	Scan s = {cc, k, true, false, false};
	scan_region(&s, k->body);
	order_args(a, mk);
	return ok && s.ok;
}
