/* verify.c - the IR verifier: checks the invariants listed in ir.h and the
 * per-op type rules of ops.def after every pass.  A violation is a bug in
 * pkc, reported as
 *   pkc: internal error: IR verification failed after <pass>: <kernel>: <part>: <inst>: <what>
 * (<part> is kernel, grid, requires, spec <operand> or body; <inst> is
 * the instruction on one line, absent for kernel-level checks) and
 * ir_verify returns false (the driver exits 70).  The first violation
 * stops the check (longjmp back to ir_verify): later ones are usually
 * consequences of it.
 *
 * Ref accesses (LOAD/STORE/ATOMIC) address one "access shape":
 *  - without GATHER indexers: one dim per non-POINT indexer, in order:
 *    FULL -> the Ref's dim (which must be static), SLICE -> its size;
 *  - with GATHER indexers: the gathers (and points between them) form one
 *    run, as in NumPy advanced indexing with the index arrays side by
 *    side; every gather operand has the access's rank R; the FULL/SLICE
 *    dims before the run are access dims 0, 1, ..., those after it the
 *    last ones (ir_access_dim), where the gather operands have extent 1;
 *    the other access dims (G) are the NumPy broadcast of the gathers'.
 * A load's result, a store's value, an atomic's value/cmp/result and any
 * mask (bool) all have exactly the access shape; an `other` has the
 * result's type. */
#include "ir.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Verifier {
	const IrKernel *k;     /* kernel being checked */
	const char *after;     /* pass name for the message */
	const char *ctx;       /* kernel-level part being checked ("body", "spec x"), for messages */
	Arena *arena;          /* per-kernel scratch memory */
	const Value **vis;     /* per Value.id: the value if it is visible at this point, else NULL */
	unsigned char *seen;   /* per Value.id: already defined somewhere in this kernel */
	jmp_buf fail;          /* where a violation returns to */
} Verifier;

/* How a region's YIELD operands are checked. */
typedef struct YieldRule {
	int n;                       /* operand count */
	Value *const *like;          /* when non-NULL: operand j has like[j]'s type */
	bool (*pred)(const Type *t); /* otherwise: every operand satisfies pred */
	const char *what;            /* what pred demands, for the message */
} YieldRule;

/* ---- reporting ----------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
_Noreturn static void fail(Verifier *V, const Inst *i, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "pkc: internal error: IR verification failed after %s: %s: ",
	        V->after ? V->after : "?", V->k && V->k->name ? V->k->name : "<kernel>");
	fputs(V->ctx ? V->ctx : "kernel", stderr);
	fputs(": ", stderr);
	if (i) {
		ir_print_inst(stderr, V->k, i);
		fputs(": ", stderr);
	}
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	longjmp(V->fail, 1);
}

#define CHECK(cond, i, ...) ((cond) ? (void)0 : fail(V, (i), __VA_ARGS__))

/* ---- type predicates ------------------------------------------------------ */

static bool is_value(const Type *t) { return t && t->kind == TY_VALUE; }
static bool is_ref(const Type *t) { return t && t->kind == TY_REF; }
static bool is_scalar(const Type *t) { return is_value(t) && t->rank == 0; }
static bool is_int_scalar(const Type *t) { return is_scalar(t) && dtype_is_int(t->dtype); }
static bool is_bool_scalar(const Type *t) { return is_scalar(t) && t->dtype == DT_BOOL; }
static bool is_i32_scalar(const Type *t) { return is_scalar(t) && t->dtype == DT_I32; }
static bool is_i64_scalar(const Type *t) { return is_scalar(t) && t->dtype == DT_I64; }
static bool is_none(const Type *t) { (void)t; return false; }

static const char *tstr(Verifier *V, const Type *t)
{
	return type_str(V->arena, t);
}

/* Type of operand j (already known to exist and be non-NULL). */
static const Type *arg_type(const Inst *i, int j)
{
	return i->args[j]->type;
}

static const Type *res_type(const Inst *i)
{
	return i->results[0]->type;
}

/* ---- definitions and uses ----------------------------------------------- */

/* A value comes into existence (region argument or result): its id is
 * fresh and in range, its type well formed; it becomes visible. */
static void define(Verifier *V, const Inst *i, const Value *v)
{
	const IrKernel *k = V->k;
	CHECK(v, i, "null value");
	CHECK(v->id >= 0 && v->id < k->nvalues, i, "value id %d out of range [0, %d)", v->id, k->nvalues);
	CHECK(!V->seen[v->id], i, "value %%%d is defined twice", v->id);
	const Type *t = v->type;
	CHECK(t, i, "value %%%d has no type", v->id);
	CHECK(t->dtype > DT_NONE && t->dtype < DT_COUNT, i, "value %%%d has no dtype", v->id);
	CHECK(t->rank >= 0 && (t->rank == 0 || t->dims), i, "value %%%d: bad rank %d", v->id, t->rank);
	for (int d = 0; d < t->rank; d++) {
		if (t->kind == TY_VALUE)
			CHECK(t->dims[d] >= 0, i, "value %%%d: dim %d of a block value is not static", v->id, d);
		else
			CHECK(t->dims[d] >= 0 || t->dims[d] == DIM_DYNAMIC, i, "value %%%d: bad dim %lld", v->id,
			      (long long)t->dims[d]);
	}
	if (t->kind == TY_REF)
		CHECK(t->space == SPACE_GLOBAL || t->space == SPACE_SCRATCH || t->space == SPACE_LOCAL, i,
		      "value %%%d: bad memory space", v->id);
	else
		CHECK(t->kind == TY_VALUE, i, "value %%%d: bad type kind", v->id);
	if (k->tiled && t->kind == TY_VALUE)
		CHECK(t->rank == 0, i, "value %%%d: %s is not a scalar after tiling", v->id, tstr(V, t));
	V->seen[v->id] = 1;
	V->vis[v->id] = v;
}

static void undefine(Verifier *V, const Value *v)
{
	V->vis[v->id] = NULL;
}

static void use(Verifier *V, const Inst *i, int j)
{
	const Value *v = i->args[j];
	CHECK(v, i, "operand %d is null", j);
	CHECK(v->id >= 0 && v->id < V->k->nvalues, i, "operand %d: value id %d out of range", j, v->id);
	if (V->vis[v->id] == v)
		return;
	if (V->seen[v->id])
		fail(V, i, "operand %d (%%%d) is not visible here: it is defined in a region that does not enclose this use",
		     j, v->id);
	fail(V, i, "operand %d (%%%d) is used before its definition", j, v->id);
}

/* ---- per-op rules ----------------------------------------------------------- */

/* dtype classes allowed for elementwise ops (operands of CMP/SELECT/CAST
 * are described in check_elemwise). */
enum { K_B = 1, K_I = 2, K_F = 4, K_ANY = 7 };

static const unsigned char elem_classes[IR_OP_COUNT] = {
	[IR_ADD] = K_B | K_I | K_F, /* bool add/mul are logical or/and, as in JAX */
	[IR_MUL] = K_B | K_I | K_F,
	[IR_SUB] = K_I | K_F, [IR_FLOORDIV] = K_I | K_F, [IR_MOD] = K_I | K_F, [IR_POW] = K_I | K_F,
	[IR_NEG] = K_I | K_F, [IR_ABS] = K_I | K_F,
	[IR_DIV] = K_I | K_F, [IR_REM] = K_I | K_F,
	[IR_MIN] = K_ANY, [IR_MAX] = K_ANY,
	[IR_AND] = K_B | K_I, [IR_OR] = K_B | K_I, [IR_XOR] = K_B | K_I, [IR_NOT] = K_B | K_I,
	[IR_SHL] = K_I, [IR_SHR] = K_I,
	[IR_EQ] = K_ANY, [IR_NE] = K_ANY, [IR_LT] = K_ANY, [IR_LE] = K_ANY, [IR_GT] = K_ANY, [IR_GE] = K_ANY,
	[IR_SELECT] = K_ANY, [IR_CAST] = K_ANY,
	[IR_POPCNT] = K_I, [IR_CLZ] = K_I, [IR_BITCAST] = K_I | K_F,
	/* F_MATH ops: K_F, from their flag */
};

static unsigned dtype_class(DType dt)
{
	return dt == DT_BOOL ? K_B : dtype_is_int(dt) ? K_I : dtype_is_float(dt) ? K_F : 0;
}

/* Regions each opcode owns. */
static const unsigned char op_nregions[IR_OP_COUNT] = {
	[IR_FOR] = 1, [IR_IF] = 2, [IR_WHILE] = 2,
};

static void check_elemwise(Verifier *V, const Inst *i)
{
	const Type *r = res_type(i);
	unsigned flags = op_info[i->op].flags;
	unsigned allowed = (flags & F_MATH) ? K_F : elem_classes[i->op];
	CHECK(is_value(r), i, "result is not a value");
	for (int j = 0; j < i->nargs; j++)
		CHECK(type_same_shape(arg_type(i, j), r), i, "operand %d has shape %s, the result %s", j,
		      tstr(V, arg_type(i, j)), tstr(V, r));
	if (flags & F_CMP) {
		CHECK(r->dtype == DT_BOOL, i, "comparison result is not bool");
		CHECK(arg_type(i, 0)->dtype == arg_type(i, 1)->dtype, i, "compared operands have different dtypes");
		return;
	}
	if (i->op == IR_BITCAST)
		CHECK(dtype_bits(arg_type(i, 0)->dtype) == dtype_bits(r->dtype) && r->dtype != DT_BOOL &&
		      arg_type(i, 0)->dtype != DT_BOOL, i, "bitcast between %s and %s", dtype_str(arg_type(i, 0)->dtype),
		      dtype_str(r->dtype));
	if (i->op == IR_CAST || i->op == IR_BITCAST)
		return;
	int first = 0;
	if (i->op == IR_SELECT) {
		CHECK(arg_type(i, 0)->dtype == DT_BOOL, i, "select condition is not bool");
		first = 1;
	}
	CHECK(dtype_class(r->dtype) & allowed, i, "%s is not defined on %s", op_info[i->op].name,
	      dtype_str(r->dtype));
	for (int j = first; j < i->nargs; j++)
		CHECK(arg_type(i, j)->dtype == r->dtype, i, "operand %d has dtype %s, the result %s", j,
		      dtype_str(arg_type(i, j)->dtype), dtype_str(r->dtype));
}

static void check_const(Verifier *V, const Inst *i)
{
	const Type *r = res_type(i);
	CHECK(is_value(r), i, "constant is not a value");
	if (r->dtype == DT_BOOL)
		CHECK(i->ival == 0 || i->ival == 1, i, "bool constant %lld", (long long)i->ival);
}

static void check_program_id(Verifier *V, const Inst *i)
{
	CHECK(is_i32_scalar(res_type(i)), i, "result is not an i32 scalar");
	CHECK(i->ival >= 0 && i->ival < V->k->ngrid, i, "grid axis %lld out of range [0, %d)", (long long)i->ival,
	      V->k->ngrid);
}

static void check_broadcast(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *r = res_type(i);
	CHECK(is_value(r) && a->dtype == r->dtype, i, "dtype changes");
	CHECK(a->rank <= r->rank, i, "broadcast to a lower rank");
	for (int d = 1; d <= a->rank; d++) {
		int64_t x = a->dims[a->rank - d], y = r->dims[r->rank - d];
		CHECK(x == y || x == 1, i, "%s does not broadcast to %s", tstr(V, a), tstr(V, r));
	}
}

static void check_reshape(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *r = res_type(i);
	CHECK(is_value(r) && a->dtype == r->dtype, i, "dtype changes");
	CHECK(type_numel(a) == type_numel(r), i, "%s and %s differ in element count", tstr(V, a), tstr(V, r));
}

static void check_transpose(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *r = res_type(i);
	CHECK(is_value(r) && a->dtype == r->dtype, i, "dtype changes");
	CHECK(i->nperm == a->rank && r->rank == a->rank && (i->nperm == 0 || i->perm), i,
	      "permutation of length %d for rank %d", i->nperm, a->rank);
	unsigned char *used = arena_alloc(V->arena, (size_t)a->rank + 1);
	for (int d = 0; d < a->rank; d++) {
		int64_t p = i->perm[d];
		CHECK(p >= 0 && p < a->rank && !used[p], i, "perm is not a permutation of 0..%d", a->rank - 1);
		used[p] = 1;
		CHECK(r->dims[d] == a->dims[p], i, "result dim %d is %lld, operand dim %lld is %lld", d,
		      (long long)r->dims[d], (long long)p, (long long)a->dims[p]);
	}
}

static void check_slice(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *r = res_type(i);
	CHECK(is_value(r) && a->dtype == r->dtype && a->rank == r->rank && a->rank >= 1, i, "%s is not a window of %s",
	      tstr(V, r), tstr(V, a));
	CHECK(i->nperm == a->rank && i->perm, i, "%d starts for rank %d", i->nperm, a->rank);
	for (int d = 0; d < a->rank; d++)
		CHECK(i->perm[d] >= 0 && r->dims[d] >= 1 && i->perm[d] <= a->dims[d] - r->dims[d], i,
		      "window [%lld, +%lld) outside dim %d of %s", (long long)i->perm[d], (long long)r->dims[d], d,
		      tstr(V, a));
}

static void check_concat(Verifier *V, const Inst *i)
{
	const Type *r = res_type(i);
	int axis = (int)i->ival;
	CHECK(is_value(r) && r->rank >= 1 && axis >= 0 && axis < r->rank, i, "axis %d for %s", axis, tstr(V, r));
	int64_t sum = 0;
	for (int k = 0; k < i->nargs; k++) {
		const Type *a = arg_type(i, k);
		CHECK(a->dtype == r->dtype && a->rank == r->rank, i, "operand %d is %s, the result %s", k, tstr(V, a),
		      tstr(V, r));
		for (int d = 0; d < r->rank; d++)
			CHECK(d == axis || a->dims[d] == r->dims[d], i, "operand %d is %s, the result %s", k, tstr(V, a),
			      tstr(V, r));
		sum += a->dims[axis];
	}
	CHECK(sum == r->dims[axis], i, "the operands' extents sum to %lld, the result's is %lld", (long long)sum,
	      (long long)r->dims[axis]);
}

static void check_iota(Verifier *V, const Inst *i)
{
	const Type *r = res_type(i);
	CHECK(is_value(r) && dtype_is_int(r->dtype), i, "iota of a non-integer dtype");
	CHECK(r->rank >= 1 && i->ival >= 0 && i->ival < r->rank, i, "dim %lld out of range for rank %d",
	      (long long)i->ival, r->rank);
}

/* Sums run in their accumulator dtype (sema casts around them, §7.11). */
static void check_accumulator(Verifier *V, const Inst *i, DType dt)
{
	CHECK(dtype_accumulator(dt) == dt, i, "sums in %s, not in its accumulator dtype %s", dtype_str(dt),
	      dtype_str(dtype_accumulator(dt)));
}

static void check_reduce(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *r = res_type(i);
	CHECK(is_value(r), i, "result is not a value");
	CHECK(i->ival >= 0 && i->ival < a->rank, i, "axis %lld out of range for rank %d", (long long)i->ival,
	      a->rank);
	if (i->op == IR_ARGMAX || i->op == IR_ARGMIN)
		CHECK(r->dtype == DT_I32, i, "index result is not i32");
	else
		CHECK(r->dtype == a->dtype, i, "dtype changes");
	if (i->op == IR_REDUCE_SUM || i->op == IR_REDUCE_PROD)
		check_accumulator(V, i, a->dtype);
	CHECK(r->rank == a->rank - 1, i, "result rank %d, expected %d", r->rank, a->rank - 1);
	for (int d = 0, s = 0; d < a->rank; d++) {
		if (d == i->ival)
			continue;
		CHECK(r->dims[s] == a->dims[d], i, "result shape %s is not %s without axis %lld", tstr(V, r),
		      tstr(V, a), (long long)i->ival);
		s++;
	}
}

static void check_reverse(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *r = res_type(i);
	CHECK(is_value(r) && type_equal(a, r), i, "result type %s differs from the operand's %s", tstr(V, r), tstr(V, a));
	CHECK(i->ival >= 0 && i->ival < a->rank, i, "axis %lld out of range for rank %d", (long long)i->ival, a->rank);
}

static void check_cumsum(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *r = res_type(i);
	CHECK(type_equal(a, r), i, "result type %s differs from the operand's %s", tstr(V, r), tstr(V, a));
	CHECK(i->ival >= 0 && i->ival < a->rank, i, "axis %lld out of range for rank %d", (long long)i->ival,
	      a->rank);
	check_accumulator(V, i, a->dtype);
}

static void check_dot(Verifier *V, const Inst *i)
{
	const Type *a = arg_type(i, 0), *b = arg_type(i, 1), *r = res_type(i);
	CHECK(a->rank == 2 && b->rank == 2 && is_value(r) && r->rank == 2, i, "dot operands and result must be rank 2");
	CHECK(a->dtype == b->dtype, i, "dot operands have different dtypes");
	CHECK(a->dims[1] == b->dims[0], i, "contracting dims differ: %s x %s", tstr(V, a), tstr(V, b));
	CHECK(r->dims[0] == a->dims[0] && r->dims[1] == b->dims[1], i, "result %s is not [%lld,%lld]", tstr(V, r),
	      (long long)a->dims[0], (long long)b->dims[1]);
	CHECK(dtype_class(r->dtype) & (K_I | K_F), i, "dot result dtype %s", dtype_str(r->dtype));
	check_accumulator(V, i, r->dtype);
	CHECK(i->ival >= 0 && i->ival < PREC_COUNT, i, "precision %lld", (long long)i->ival);
	if (i->nargs == 3)
		CHECK(type_equal(arg_type(i, 2), r), i, "accumulator %s is not of the result type",
		      tstr(V, arg_type(i, 2)));
}

static void check_alloc(Verifier *V, const Inst *i)
{
	const Type *r = res_type(i);
	CHECK(V->k->refs_lowered || V->k->tiled, i, "alloc before lower-refs");
	CHECK(is_ref(r) && (r->space == SPACE_SCRATCH || r->space == SPACE_LOCAL), i,
	      "alloc result is not a scratch or local Ref");
	CHECK(type_numel(r) >= 0, i, "alloc of a dynamic shape");
}

/* LOAD / STORE / ATOMIC: see the access-shape rule at the top. */
static void check_access(Verifier *V, const Inst *i)
{
	const IrKernel *k = V->k;
	const Type *ref = arg_type(i, 0);
	CHECK(is_ref(ref), i, "operand 0 is not a Ref");
	CHECK(i->nidx == ref->rank && (i->nidx == 0 || i->idx), i, "%d indexers for a Ref of rank %d", i->nidx,
	      ref->rank);
	int nonfull = 0, ngather = 0, nslice = 0;
	for (int d = 0; d < i->nidx; d++) {
		IndexKind kd = i->idx[d].kind;
		CHECK(kd == IDX_FULL || kd == IDX_POINT || kd == IDX_SLICE || kd == IDX_GATHER, i, "bad indexer kind");
		nonfull += kd != IDX_FULL;
		ngather += kd == IDX_GATHER;
		nslice += kd == IDX_FULL || kd == IDX_SLICE;
		CHECK(!i->idx[d].masked || k->refs_lowered, i, "masked indexer before lower-refs");
		CHECK(!k->tiled || (kd == IDX_POINT && !i->idx[d].masked), i,
		      "after tiling only unmasked point indexers remain");
	}
	CHECK(!k->tiled || !i->has_mask, i, "mask after tiling");
	CHECK(!i->has_other || i->op == IR_LOAD, i, "only a load has an 'other'");
	bool cas = i->op == IR_ATOMIC && i->ival == ATOMIC_CAS;
	int nextra = (i->op != IR_LOAD) + cas + i->has_mask + i->has_other;
	CHECK(i->nargs == 1 + nonfull + nextra, i, "%d operands, expected %d (ref, %d indices, %d extras)", i->nargs,
	      1 + nonfull + nextra, nonfull, nextra);
	/* The access shape, built from the indexers: with gathers, rank R of
	 * the gather operands, ones at the FULL/SLICE dims' places. */
	int rank = 0, first = -1, last = -1;
	for (int d = 0; d < i->nidx; d++)
		if (i->idx[d].kind == IDX_GATHER) {
			first = first < 0 ? d : first;
			last = d;
		}
	if (ngather) {
		rank = ir_index_arg(i, first)->type->rank;
		CHECK(nslice == 0 || rank > nslice, i, "gather operands of rank %d leave no dim for the gathers beside %d full or sliced dims",
		      rank, nslice);
	}
	int64_t *shape = arena_alloc(V->arena, (size_t)(ref->rank + rank + 1) * sizeof *shape);
	unsigned char *sliced = arena_alloc(V->arena, (size_t)(ref->rank + rank + 1));
	for (int a = 0; a < rank; a++)
		shape[a] = 1;
	for (int d = 0; d < i->nidx; d++) {
		const Indexer *x = &i->idx[d];
		if (x->kind != IDX_FULL && x->kind != IDX_SLICE)
			continue;
		CHECK(d < first || d > last, i, "dim %d is full or sliced between the gathers of dims %d and %d", d,
		      first, last);
		int a = ngather ? ir_access_dim(i, d) : rank++;
		sliced[a] = 1;
		if (x->kind == IDX_FULL) {
			CHECK(ref->dims[d] >= 0, i, "full index of dynamic dim %d", d);
			shape[a] = ref->dims[d];
			continue;
		}
		CHECK(x->size >= 1, i, "slice of dim %d has size %lld", d, (long long)x->size);
		CHECK(x->masked || ref->dims[d] < 0 || x->size <= ref->dims[d], i,
		      "slice of %lld elements of dim %d of extent %lld", (long long)x->size, d, (long long)ref->dims[d]);
		shape[a] = x->size;
	}
	for (int d = 0, next = 1; d < i->nidx; d++) {
		const Indexer *x = &i->idx[d];
		if (x->kind == IDX_FULL)
			continue;
		const Type *t = arg_type(i, next++);
		if (x->kind != IDX_GATHER) {
			CHECK(is_int_scalar(t), i, "index of dim %d is not an integer scalar", d);
			continue;
		}
		CHECK(is_value(t) && dtype_is_int(t->dtype), i, "gather index of dim %d is not an integer value", d);
		CHECK(t->rank == rank, i, "gather index of dim %d has rank %d, the access %d", d, t->rank, rank);
		for (int a = 0; a < rank; a++) {
			if (sliced[a]) {
				CHECK(t->dims[a] == 1, i, "gather index of dim %d varies along the sliced access dim %d", d, a);
			} else {
				CHECK(t->dims[a] == 1 || shape[a] == 1 || t->dims[a] == shape[a], i,
				      "gather indices do not broadcast together");
				if (t->dims[a] != 1)
					shape[a] = t->dims[a];
			}
		}
	}
	Type acc = {.kind = TY_VALUE, .dtype = ref->dtype, .rank = rank, .dims = shape};
	Type mask = acc;
	mask.dtype = DT_BOOL;

	int next = 1 + nonfull;
	if (i->op == IR_STORE || i->op == IR_ATOMIC) {
		CHECK(type_equal(arg_type(i, next), &acc), i, "stored value is %s, the access %s",
		      tstr(V, arg_type(i, next)), tstr(V, &acc));
		next++;
	}
	if (cas) {
		CHECK(type_equal(arg_type(i, next), &acc), i, "compare value is %s, the access %s",
		      tstr(V, arg_type(i, next)), tstr(V, &acc));
		next++;
	}
	if (i->has_mask) {
		CHECK(type_equal(arg_type(i, next), &mask), i, "mask is %s, expected %s", tstr(V, arg_type(i, next)),
		      tstr(V, &mask));
		next++;
	}
	if (i->has_other) {
		CHECK(type_equal(arg_type(i, next), &acc), i, "other is %s, expected %s", tstr(V, arg_type(i, next)),
		      tstr(V, &acc));
		next++;
	}
	if (i->nresults)
		CHECK(type_equal(res_type(i), &acc), i, "result is %s, the access %s", tstr(V, res_type(i)),
		      tstr(V, &acc));
	if (i->op == IR_ATOMIC) {
		CHECK(i->ival >= 0 && i->ival < ATOMIC_KIND_COUNT, i, "bad atomic kind %lld", (long long)i->ival);
		unsigned need = (i->ival == ATOMIC_AND || i->ival == ATOMIC_OR || i->ival == ATOMIC_XOR) ? K_B | K_I
		                : (i->ival == ATOMIC_XCHG || i->ival == ATOMIC_CAS)                     ? K_ANY
		                                                                                         : K_I | K_F;
		CHECK(dtype_class(ref->dtype) & need, i, "atomic %s on %s", atomic_kind_names[i->ival],
		      dtype_str(ref->dtype));
	}
}

static void verify_region(Verifier *V, const Region *r, const Inst *owner, const YieldRule *rule);

static void check_for(Verifier *V, const Inst *i)
{
	const Type *lo = arg_type(i, 0);
	CHECK(is_int_scalar(lo), i, "loop bounds are not integer scalars");
	CHECK(type_equal(arg_type(i, 1), lo) && type_equal(arg_type(i, 2), lo), i, "lo, hi and step differ in type");
	int n = i->nargs - 3;
	CHECK(i->nresults == n, i, "%d results for %d carried values", i->nresults, n);
	const Region *body = i->regions[0];
	CHECK(body->nargs == 1 + n, i, "body has %d arguments, expected %d (iv + carried)", body->nargs, 1 + n);
	CHECK(body->args[0] && type_equal(body->args[0]->type, lo), i, "induction variable type differs from lo");
	for (int j = 0; j < n; j++) {
		const Type *init = arg_type(i, 3 + j);
		CHECK(i->results[j] && type_equal(i->results[j]->type, init), i, "result %d type differs from its init", j);
		CHECK(body->args[1 + j] && type_equal(body->args[1 + j]->type, init), i,
		      "carried argument %d type differs from its init", j);
	}
	verify_region(V, body, i, &(YieldRule){n, i->results, NULL, NULL});
}

static void check_if(Verifier *V, const Inst *i)
{
	CHECK(is_bool_scalar(arg_type(i, 0)), i, "condition is not a bool scalar");
	for (int r = 0; r < 2; r++) {
		CHECK(i->regions[r]->nargs == 0, i, "if region %d has arguments", r);
		verify_region(V, i->regions[r], i, &(YieldRule){i->nresults, i->results, NULL, NULL});
	}
}

static void check_while(Verifier *V, const Inst *i)
{
	int n = i->nargs;
	CHECK(i->nresults == n, i, "%d results for %d carried values", i->nresults, n);
	for (int r = 0; r < 2; r++) {
		const Region *reg = i->regions[r];
		CHECK(reg->nargs == n, i, "region %d has %d arguments, expected %d", r, reg->nargs, n);
		for (int j = 0; j < n; j++)
			CHECK(reg->args[j] && type_equal(reg->args[j]->type, arg_type(i, j)), i,
			      "region %d argument %d type differs from its init", r, j);
	}
	for (int j = 0; j < n; j++)
		CHECK(i->results[j] && type_equal(i->results[j]->type, arg_type(i, j)), i,
		      "result %d type differs from its init", j);
	verify_region(V, i->regions[0], i, &(YieldRule){1, NULL, is_bool_scalar, "a bool scalar"});
	verify_region(V, i->regions[1], i, &(YieldRule){n, i->results, NULL, NULL});
}

/* debug_print: a format with one "{}" per operand; debug_check: a bool scalar and a message. */
static void check_debug(Verifier *V, const Inst *i)
{
	CHECK(i->str, i, "no %s", i->op == IR_DEBUG_PRINT ? "format" : "message");
	if (i->op == IR_DEBUG_CHECK) {
		CHECK(is_bool_scalar(arg_type(i, 0)), i, "condition is not a bool scalar");
		return;
	}
	int holes = 0;
	for (const char *c = i->str; (c = strstr(c, "{}")); c += 2)
		holes++;
	CHECK(holes == i->nargs, i, "%d placeholders for %d operands", holes, i->nargs);
	/* Blocks print too: static values, or after tile-host the per-program buffer holding one. */
	for (int j = 0; j < i->nargs; j++) {
		const Type *t = arg_type(i, j);
		CHECK(is_value(t) || (V->k->tiled && is_ref(t) && t->space == SPACE_LOCAL), i,
		      "operand %d is neither a value nor a tiled block", j);
	}
}

typedef void (*OpCheck)(Verifier *V, const Inst *i);

/* Per-op rules beyond the generic ones (elementwise and reductions are
 * chosen by flag in op_check_of). */
static const OpCheck op_check[IR_OP_COUNT] = {
	[IR_CONST] = check_const,
	[IR_PROGRAM_ID] = check_program_id, [IR_NUM_PROGRAMS] = check_program_id,
	[IR_BROADCAST] = check_broadcast, [IR_RESHAPE] = check_reshape,
	[IR_TRANSPOSE] = check_transpose, [IR_IOTA] = check_iota, [IR_SLICE] = check_slice, [IR_CONCAT] = check_concat,
	[IR_CUMSUM] = check_cumsum, [IR_DOT] = check_dot, [IR_ALLOC] = check_alloc, [IR_REVERSE] = check_reverse,
	[IR_LOAD] = check_access, [IR_STORE] = check_access, [IR_ATOMIC] = check_access,
	[IR_FOR] = check_for, [IR_IF] = check_if, [IR_WHILE] = check_while,
	[IR_DEBUG_PRINT] = check_debug, [IR_DEBUG_CHECK] = check_debug,
};

static OpCheck op_check_of(Op op)
{
	unsigned f = op_info[op].flags;
	return (f & F_ELEMWISE) ? check_elemwise : (f & F_REDUCE) ? check_reduce : op_check[op];
}

/* ---- instructions and regions -------------------------------------------- */

static void verify_inst(Verifier *V, const Inst *i)
{
	CHECK((unsigned)i->op < IR_OP_COUNT, NULL, "bad opcode %d", (int)i->op);
	const OpInfo *info = &op_info[i->op];
	CHECK(i->nargs >= info->min_args && (info->max_args < 0 || i->nargs <= info->max_args), i,
	      "%d operands, %s takes %d..%d", i->nargs, info->name, info->min_args, info->max_args);
	CHECK(info->nresults < 0 || i->nresults == info->nresults, i, "%d results, %s has %d", i->nresults,
	      info->name, info->nresults);
	CHECK(i->nregions == op_nregions[i->op], i, "%d regions, %s has %d", i->nregions, info->name,
	      op_nregions[i->op]);
	CHECK(i->nargs == 0 || i->args, i, "no operand array");
	CHECK(i->nresults == 0 || i->results, i, "no result array");
	bool access = i->op == IR_LOAD || i->op == IR_STORE || i->op == IR_ATOMIC;
	for (int j = 0; j < i->nargs; j++) {
		use(V, i, j);
		const Type *t = arg_type(i, j);
		CHECK(t, i, "operand %d has no type", j);
		if (!(access && j == 0) && i->op != IR_DEBUG_PRINT) /* a tiled block prints from its buffer */
			CHECK(t->kind == TY_VALUE, i, "operand %d is a Ref", j);
	}
	for (int r = 0; r < i->nresults; r++) {
		const Value *v = i->results[r];
		CHECK(v && v->def == i && v->index == r, i, "result %d does not point back to its instruction", r);
		CHECK(v->type, i, "result %d has no type", r);
		CHECK(v->type->kind == (i->op == IR_ALLOC ? TY_REF : TY_VALUE), i, "result %d has the wrong kind", r);
		CHECK(type_fits(v->type), i, "result %d (%s) is too large for memory", r, tstr(V, v->type));
	}
	if ((info->flags & F_SCALAR) && i->nresults)
		CHECK(is_scalar(res_type(i)), i, "result is not a scalar");
	for (int r = 0; r < i->nregions; r++)
		CHECK(i->regions[r] && i->regions[r]->owner == i, i, "region %d does not point back to its owner", r);
	OpCheck check = op_check_of(i->op);
	if (check)
		check(V, i);
	/* Results become visible after the op (and its regions). */
	for (int r = 0; r < i->nresults; r++)
		define(V, i, i->results[r]);
}

/* Checks a region: its arguments, its instructions in order (nested
 * regions see what is visible here), the final YIELD against `rule`. */
static void verify_region(Verifier *V, const Region *r, const Inst *owner, const YieldRule *rule)
{
	CHECK(r, owner, "missing region");
	for (int a = 0; a < r->nargs; a++) {
		const Value *v = r->args[a];
		CHECK(v && !v->def && v->region == r && v->index == a, owner,
		      "region argument %d does not point back to its region", a);
		define(V, owner, v);
	}
	CHECK(r->first && r->last, owner, "empty region (no yield)");
	const Inst *prev = NULL;
	for (const Inst *i = r->first; i; prev = i, i = i->next) {
		CHECK(i->parent == r && i->prev == prev, i, "instruction list links are broken");
		CHECK(i->op != IR_YIELD || !i->next, i, "yield is not the last instruction of its region");
		verify_inst(V, i);
	}
	const Inst *y = r->last;
	CHECK(prev == y, y, "region's last pointer is not its last instruction");
	CHECK(y->op == IR_YIELD, y, "region does not end with a yield");
	CHECK(y->nargs == rule->n, y, "yields %d values, expected %d", y->nargs, rule->n);
	for (int j = 0; j < y->nargs; j++) {
		const Type *t = arg_type(y, j);
		if (rule->like)
			CHECK(rule->like[j] && type_equal(t, rule->like[j]->type), y, "yielded value %d is %s, expected %s", j,
			      tstr(V, t), tstr(V, rule->like[j] ? rule->like[j]->type : NULL));
		else
			CHECK(rule->pred(t), y, "yielded value %d is %s, expected %s", j, tstr(V, t), rule->what);
	}
	/* Leaving the region: its values go out of scope. */
	for (int a = 0; a < r->nargs; a++)
		undefine(V, r->args[a]);
	for (const Inst *i = r->first; i; i = i->next)
		for (int j = 0; j < i->nresults; j++)
			undefine(V, i->results[j]);
}

/* ---- kernel level ---------------------------------------------------------- */

/* Argument a of a kernel-level region has type satisfying pred. */
static void check_arg(Verifier *V, const Region *r, int a, bool (*pred)(const Type *), const char *what)
{
	const Value *v = r->args[a];
	CHECK(v && pred(v->type), NULL, "argument %d is %s, expected %s", a, tstr(V, v ? v->type : NULL), what);
}

static void check_arg_dtype(Verifier *V, const Region *r, int a, DType dt)
{
	const Value *v = r->args[a];
	CHECK(v && is_scalar(v->type) && v->type->dtype == dt, NULL, "argument %d is %s, expected %s", a,
	      tstr(V, v ? v->type : NULL), dtype_str(dt));
}

/* The grid and requires regions: args = sizes (i64) then scalars. */
static void check_launch_args(Verifier *V, const Region *r)
{
	const IrKernel *k = V->k;
	CHECK(r->nargs == k->nsizes + k->nscalars, NULL, "%d arguments, expected %d sizes + %d scalars", r->nargs,
	      k->nsizes, k->nscalars);
	for (int s = 0; s < k->nsizes; s++)
		check_arg(V, r, s, is_i64_scalar, "an i64 size");
	for (int s = 0; s < k->nscalars; s++)
		check_arg_dtype(V, r, k->nsizes + s, k->scalars[s]->dtype);
}

/* The body's argument of operand o: its block view (before lower-refs) or
 * the whole array (after). */
static void check_body_operand(Verifier *V, const Region *body, int o)
{
	const IrOperand *op = V->k->operands[o];
	const Value *v = body->args[o];
	CHECK(v && is_ref(v->type) && v->type->space == SPACE_GLOBAL && v->type->dtype == op->array->dtype, NULL,
	      "argument %d (%s) is %s, expected a global Ref of %s", o, op->name, tstr(V, v ? v->type : NULL),
	      dtype_str(op->array->dtype));
	CHECK(type_fits(op->array) && type_fits(v->type), NULL, "argument %d (%s) is too large for memory", o, op->name);
	int rank = op->array->rank;
	if (op->has_spec && !V->k->refs_lowered)
		for (int d = 0; d < op->array->rank; d++)
			rank -= op->squeezed[d];
	CHECK(v->type->rank == rank, NULL, "argument %d (%s) has rank %d, expected %d", o, op->name, v->type->rank,
	      rank);
}

/* ---- scalar prefetch (§5.11) ------------------------------------------------ */

/* An index map's arguments: one i32 program id per grid axis, then the
 * whole-array Ref of each prefetch operand, in operand order. */
static void check_map_args(Verifier *V, const Region *map)
{
	const IrKernel *k = V->k;
	int npf = ir_prefetch_count(k);
	CHECK(map->nargs == k->ngrid + npf, NULL, "index map takes %d arguments for a grid of rank %d and %d prefetch "
	      "arrays", map->nargs, k->ngrid, npf);
	for (int a = 0; a < k->ngrid; a++)
		check_arg(V, map, a, is_i32_scalar, "an i32 program id");
	int a = k->ngrid;
	for (int o = 0; o < k->noperands; o++)
		if (k->operands[o]->mode == PM_PREFETCH) {
			const Value *v = map->args[a];
			CHECK(v && type_equal(v->type, k->operands[o]->array), NULL, "argument %d is %s, expected prefetch "
			      "array %s", a, tstr(V, v ? v->type : NULL), k->operands[o]->name);
			a++;
		}
}

/* An index map only computes: no effects, no control flow, and its loads
 * read one element of a prefetch argument, unmasked. */
static void check_map_reads(Verifier *V, const Region *map, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		CHECK(!(op_info[i->op].flags & (F_EFFECT | F_REGION)) || i->op == IR_YIELD, i,
		      "an index map has no effects or regions");
		if (i->op != IR_LOAD)
			continue;
		const Value *ref = i->args[0];
		CHECK(!ref->def && ref->region == map && ref->index >= V->k->ngrid, i,
		      "an index map loads only from its prefetch arguments");
		CHECK(!i->has_mask && !i->has_other && is_scalar(res_type(i)), i, "an index map's load reads one element");
		for (int d = 0; d < i->nidx; d++)
			CHECK(i->idx[d].kind == IDX_POINT, i, "an index map's load indexes by points");
	}
}

/* No store or atomic writes a prefetch operand (it is read-only). */
static void check_prefetch_unwritten(Verifier *V, const Region *body, const Region *r)
{
	const IrKernel *k = V->k;
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_STORE || i->op == IR_ATOMIC)
			for (int o = 0; o < k->noperands; o++)
				CHECK(k->operands[o]->mode != PM_PREFETCH || i->args[0] != body->args[o], i,
				      "writes the prefetch array %s", k->operands[o]->name);
		for (int j = 0; j < i->nregions; j++)
			check_prefetch_unwritten(V, body, i->regions[j]);
	}
}

static void verify_kernel(Verifier *V)
{
	const IrKernel *k = V->k;
	V->ctx = "kernel";
	CHECK(k->name, NULL, "kernel without a name");
	CHECK(k->ngrid >= 0 && (k->ngrid == 0 || k->semantics), NULL, "grid rank %d without semantics", k->ngrid);
	for (int a = 0; a < k->ngrid; a++)
		CHECK(k->semantics[a] == AXIS_PARALLEL || k->semantics[a] == AXIS_ARBITRARY, NULL,
		      "bad semantics of grid axis %d", a);
	CHECK(k->num_warps >= 1 && k->num_stages >= 1, NULL, "num_warps %d, num_stages %d", k->num_warps,
	      k->num_stages);
	CHECK(k->noperands >= 0 && k->nscalars >= 0 && k->nsizes >= 0 && k->nscratch >= 0, NULL, "negative count");

	/* Launch order: every parameter exactly once. */
	int nparams = k->noperands + k->nscalars + k->nsizes;
	CHECK(k->norder == nparams && (nparams == 0 || (k->order && k->order_index)), NULL,
	      "launch order has %d entries for %d parameters", k->norder, nparams);
	int counts[3] = {k->noperands, k->nscalars, k->nsizes};
	int base[3] = {0, k->noperands, k->noperands + k->nscalars};
	unsigned char *once = arena_alloc(V->arena, (size_t)nparams + 1);
	for (int j = 0; j < k->norder; j++) {
		KParamKind kind = k->order[j];
		int x = k->order_index[j];
		CHECK((unsigned)kind < 3 && x >= 0 && x < counts[kind] && !once[base[kind] + x], NULL,
		      "launch order entry %d is invalid or repeated", j);
		once[base[kind] + x] = 1;
	}
	for (int o = 0; o < k->noperands; o++) {
		const IrOperand *op = k->operands[o];
		CHECK(op && op->name && is_ref(op->array) && op->array->space == SPACE_GLOBAL, NULL,
		      "operand %d is not a global Ref", o);
		CHECK(op->mode == PM_IN || op->mode == PM_OUT || op->mode == PM_INOUT || op->mode == PM_PREFETCH, NULL,
		      "operand %s: bad mode", op->name);
		CHECK(op->mode != PM_PREFETCH || (!op->has_spec && dtype_is_int(op->array->dtype)), NULL,
		      "prefetch operand %s has a spec or is not an integer array", op->name);
	}
	for (int s = 0; s < k->nscalars; s++)
		CHECK(k->scalars[s] && k->scalars[s]->dtype > DT_NONE && k->scalars[s]->dtype < DT_COUNT, NULL,
		      "scalar %d has no dtype", s);
	for (int s = 0; s < k->nscratch; s++) {
		const IrScratch *sc = k->scratch[s];
		CHECK(sc && is_ref(sc->type) && sc->type->space == SPACE_SCRATCH && type_numel(sc->type) >= 0, NULL,
		      "scratch %d is not a static scratch Ref", s);
	}

	V->ctx = "grid";
	CHECK(k->grid || k->ngrid == 0, NULL, "missing grid region");
	if (k->grid) {
		check_launch_args(V, k->grid);
		verify_region(V, k->grid, NULL, &(YieldRule){k->ngrid, NULL, is_int_scalar, "an integer scalar"});
	}
	V->ctx = "requires";
	CHECK(k->requires || k->nrequires == 0, NULL, "%d constraints without a region", k->nrequires);
	if (k->requires) {
		check_launch_args(V, k->requires);
		verify_region(V, k->requires, NULL, &(YieldRule){k->nrequires, NULL, is_bool_scalar, "a bool scalar"});
	}
	for (int o = 0; o < k->noperands; o++) {
		const IrOperand *op = k->operands[o];
		if (!op->has_spec)
			continue;
		V->ctx = arena_printf(V->arena, "spec %s", op->name);
		CHECK(op->block && op->squeezed && op->index_map, NULL, "spec without block shape or index map");
		for (int d = 0; d < op->array->rank; d++)
			CHECK(op->squeezed[d] ? op->block[d] == 1 : op->block[d] >= 1, NULL, "block dim %d is %lld", d,
			      (long long)op->block[d]);
		check_map_args(V, op->index_map);
		verify_region(V, op->index_map, NULL,
		              &(YieldRule){op->array->rank, NULL, is_int_scalar, "an integer scalar"});
		check_map_reads(V, op->index_map, op->index_map);
	}

	V->ctx = "body";
	const Region *body = k->body;
	CHECK(body, NULL, "missing body");
	int nscratch = k->refs_lowered ? 0 : k->nscratch;
	CHECK(body->nargs == nparams + nscratch, NULL,
	      "%d arguments, expected %d operands + %d scalars + %d sizes + %d scratch", body->nargs, k->noperands,
	      k->nscalars, k->nsizes, nscratch);
	for (int o = 0; o < k->noperands; o++)
		check_body_operand(V, body, o);
	for (int s = 0; s < k->nscalars; s++)
		check_arg_dtype(V, body, k->noperands + s, k->scalars[s]->dtype);
	for (int s = 0; s < k->nsizes; s++)
		check_arg(V, body, k->noperands + k->nscalars + s, is_i64_scalar, "an i64 size");
	for (int s = 0; s < nscratch; s++) {
		const Value *v = body->args[nparams + s];
		CHECK(v && type_equal(v->type, k->scratch[s]->type), NULL, "scratch argument %d is %s, expected %s", s,
		      tstr(V, v ? v->type : NULL), tstr(V, k->scratch[s]->type));
	}
	verify_region(V, body, NULL, &(YieldRule){0, NULL, is_none, "nothing"});
	check_prefetch_unwritten(V, body, body);
}

/* One kernel; the setjmp lives here so no local changes after it. */
static bool verify_one(const IrModule *m, int n, const char *after)
{
	Verifier state = {.k = m->kernels[n], .after = after};
	Verifier *const V = &state;
	if (!V->k) {
		fprintf(stderr, "pkc: internal error: IR verification failed after %s: kernel %d is null\n",
		        after ? after : "?", n);
		return false;
	}
	V->arena = arena_new();
	const int nv = V->k->nvalues > 0 ? V->k->nvalues : 0;
	V->vis = arena_alloc(V->arena, (size_t)nv * sizeof *V->vis + 1);
	V->seen = arena_alloc(V->arena, (size_t)nv + 1);
	if (setjmp(V->fail)) {
		arena_free(V->arena);
		return false;
	}
	for (int j = 0; j < n; j++)
		CHECK(!m->kernels[j] || !m->kernels[j]->name || !V->k->name ||
		          strcmp(m->kernels[j]->name, V->k->name) != 0,
		      NULL, "two kernels with this name");
	verify_kernel(V);
	arena_free(V->arena);
	return true;
}

bool ir_verify(const IrModule *m, const char *after)
{
	for (int n = 0; n < m->nkernels; n++)
		if (!verify_one(m, n, after))
			return false;
	return true;
}
