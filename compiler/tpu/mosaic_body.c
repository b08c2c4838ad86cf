/* mosaic_body.c - the kernel function and its transform functions, built
 * from the typed IR right after sema (mosaic_check.c has accepted it).
 *
 * The forms follow what JAX 0.11.2's Pallas emits for the same kernel
 * (jax/_src/pallas/mosaic/lowering.py), so that pkc's module reads like
 * the Pallas one:
 *  - a Ref read is a vector.load of the full-rank window slice (squeezed and
 *    point dims as 1) followed by a vector.shape_cast (or vector.extract for
 *    a scalar); a store re-reads the slice (Pallas' swap), reshapes the
 *    value to the slice and writes it with tpu.vector_store;
 *  - constant indices are `arith.constant N : index`, dynamic ones
 *    arith.index_cast; splat constants are a scalar arith.constant and a
 *    vector.broadcast; broadcasts to a higher rank shape_cast first;
 *  - reductions are vector.multi_reduction (to a scalar through a leading
 *    unit dim and vector.extract); argmax/argmin tpu.reduce_index; dot is
 *    tpu.matmul with #tpu.dot_dimension_numbers and a zero accumulator;
 *  - `if`/`when` compare the condition, widened to i32, with 0 (lax.cond).
 * Transposes that only feed a dot are folded into its dimension numbers.
 * Scalar parameters are loaded (memref.load from SMEM) and size symbols
 * materialised at the top of the body, where first needed. */
#include "mosaic_priv.h"

#include <math.h>
#include <string.h>

/* How a region's YIELD is spelled. */
typedef enum Term {
	TERM_RETURN,    /* func.return */
	TERM_YIELD,     /* scf.yield */
	TERM_CONDITION, /* scf.condition(cond, carried...): the before region of scf.while */
	TERM_TRANSFORM  /* func.return of a transform function, after Pallas' trailing constant */
} Term;

/* Lowering state of one function (a kernel or a transform). */
typedef struct Lower {
	Mz *z;                 /* the builder */
	const MzKernel *mk;    /* the kernel */
	const IrKernel *k;     /* mk->k */
	MlirValue *vals;       /* by Value id: its MLIR value (null until lowered) */
	int *uses;             /* by Value id: its uses in the function */
	int *index_uses;       /* by Value id: uses as a load/store index (those get index constants) */
	bool *folded;          /* by Value id: a transpose folded into the dot that uses it */
	MlirBlock entry;       /* the entry block (scalar loads and sizes go to its top) */
	int nprologue;         /* operations inserted at the top of entry so far */
	MlirValue *windows;    /* per operand: its memref */
	MlirValue *smem;       /* per scalar parameter: its SMEM memref */
	MlirValue *scratch;    /* per scratch buffer: its memref */
} Lower;

static void lower_region(Lower *L, const Region *r, MlirBlock block, Term term, const MlirValue *args);

/* ---- values ------------------------------------------------------------------ */

static MlirType i32_type(Mz *z)
{
	return mlirIntegerTypeGet(z->ctx, 32);
}

static MlirType index_type(Mz *z)
{
	return mlirIndexTypeGet(z->ctx);
}

/* Makes one operation with make(L, arg) and puts it at the top of the
 * entry block, after the ones put there before. */
static MlirValue in_prologue(Lower *L, MlirOperation (*make)(Lower *, int), int arg)
{
	Mz *z = L->z;
	MlirBlock saved = z->block;
	MlirBlock tmp = mlirBlockCreate(0, NULL, NULL);
	z->block = tmp;
	MlirOperation op = make(L, arg);
	z->block = saved;
	mlirOperationRemoveFromParent(op);
	mlirBlockDestroy(tmp);
	mlirBlockInsertOwnedOperation(L->entry, L->nprologue++, op);
	return mlirOperationGetResult(op, 0);
}

static MlirOperation make_scalar_load(Lower *L, int s)
{
	Mz *z = L->z;
	MlirType t = mz_elem_type(z, L->k->scalars[s]->dtype);
	return mz_op(z, "memref.load", 1, &t, 1, &L->smem[s], 0, NULL, 0, NULL);
}

static MlirOperation make_size(Lower *L, int s)
{
	Mz *z = L->z;
	MlirType t = mlirIntegerTypeGet(z->ctx, 64);
	MlirNamedAttribute v = mz_named(z, "value", mlirIntegerAttrGet(t, L->mk->sizes[s]));
	return mz_op(z, "arith.constant", 1, &t, 0, NULL, 1, &v, 0, NULL);
}

/* The MLIR value of an IR value; scalar parameters and sizes on first use. */
static MlirValue get(Lower *L, const Value *v)
{
	MlirValue m = L->vals[v->id];
	if (!mlirValueIsNull(m))
		return m;
	const IrKernel *k = L->k;
	if (!v->def && v->region == k->body) {
		int i = v->index - k->noperands;
		if (i >= 0 && i < k->nscalars)
			m = in_prologue(L, make_scalar_load, i);
		else if (i >= k->nscalars && i - k->nscalars < k->nsizes)
			m = in_prologue(L, make_size, i - k->nscalars);
	}
	if (mlirValueIsNull(m))
		internal_error("mosaic: value %%%d used before it is lowered", v->id);
	L->vals[v->id] = m;
	return m;
}

static void set(Lower *L, const Value *v, MlirValue m)
{
	L->vals[v->id] = m;
}

/* Counts the uses of every value in r (recursively). */
static void count_uses(Lower *L, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int a = 0; a < i->nargs; a++)
			L->uses[i->args[a]->id]++;
		if (i->op == IR_LOAD || i->op == IR_STORE) {
			for (int a = 1, n = ir_access_extras(i); a < n; a++)
				L->index_uses[i->args[a]->id]++;
		}
		for (int n = 0; n < i->nregions; n++)
			count_uses(L, i->regions[n]);
	}
}

/* ---- small builders -------------------------------------------------------------- */

static MlirValue op1(Lower *L, const char *name, MlirType t, MlirValue a)
{
	return mz_op1(L->z, name, t, 1, &a, 0, NULL);
}

static MlirValue op2(Lower *L, const char *name, MlirType t, MlirValue a, MlirValue b)
{
	MlirValue args[2] = {a, b};
	return mz_op1(L->z, name, t, 2, args, 0, NULL);
}

static MlirValue select3(Lower *L, MlirType t, MlirValue c, MlirValue a, MlirValue b)
{
	MlirValue args[3] = {c, a, b};
	return mz_op1(L->z, "arith.select", t, 3, args, 0, NULL);
}

/* The type with t's shape (scalar or vector) and element type e. */
static MlirType shaped_like(MlirType t, MlirType e)
{
	if (!mlirTypeIsAVector(t))
		return e;
	int r = (int)mlirShapedTypeGetRank(t);
	int64_t dims[r > 0 ? r : 1];
	for (int d = 0; d < r; d++)
		dims[d] = mlirShapedTypeGetDimSize(t, d);
	return mlirVectorTypeGet(r, dims, e);
}

/* The i1 (or vector of i1) type with t's shape. */
static MlirType bool_like(Mz *z, MlirType t)
{
	return shaped_like(t, mlirIntegerTypeGet(z->ctx, 1));
}

/* arith.cmpi / arith.cmpf with a predicate number. */
static MlirValue cmp(Lower *L, bool is_float, int pred, MlirValue a, MlirValue b)
{
	Mz *z = L->z;
	MlirNamedAttribute p = mz_named(z, "predicate", mlirIntegerAttrGet(mlirIntegerTypeGet(z->ctx, 64), pred));
	MlirValue args[2] = {a, b};
	return mz_op1(z, is_float ? "arith.cmpf" : "arith.cmpi", bool_like(z, mlirValueGetType(a)), 2, args, 1, &p);
}

enum { CMPI_EQ = 0, CMPI_NE = 1, CMPI_SLT = 2, CMPI_SLE = 3, CMPI_SGT = 4, CMPI_SGE = 5,
       CMPI_ULT = 6, CMPI_ULE = 7, CMPI_UGT = 8, CMPI_UGE = 9 };
enum { CMPF_OEQ = 1, CMPF_OGT = 2, CMPF_OGE = 3, CMPF_OLT = 4, CMPF_OLE = 5, CMPF_UNE = 13 };

/* A constant of t's element type (a dense splat for vectors). */
static MlirValue dense_int(Lower *L, MlirType t, int64_t v)
{
	Mz *z = L->z;
	if (!mlirTypeIsAVector(t))
		return mz_const_int(z, t, v);
	return mz_const_splat(z, t, mlirIntegerAttrGet(mlirShapedTypeGetElementType(t), v));
}

static int64_t *int_array(Lower *L, int n)
{
	return arena_alloc(L->z->a, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
}

/* ---- elementwise ---------------------------------------------------------------- */

/* Python floor division and modulo on integers (the sign of the divisor
 * wins), as jnp.floor_divide and jnp.remainder lower on TPU. */
static MlirValue int_floordiv(Lower *L, MlirType t, MlirValue a, MlirValue b)
{
	MlirValue q = op2(L, "arith.divsi", t, a, b);
	MlirValue r = op2(L, "arith.remsi", t, a, b);
	MlirValue zero = mz_splat_int(L->z, t, 0);
	MlirValue nz = cmp(L, false, CMPI_NE, r, zero);
	MlirValue rneg = cmp(L, false, CMPI_SLT, r, zero);
	MlirValue bneg = cmp(L, false, CMPI_SLT, b, zero);
	MlirValue fix = op2(L, "arith.andi", bool_like(L->z, t), op2(L, "arith.xori", bool_like(L->z, t), rneg, bneg), nz);
	MlirValue qm1 = op2(L, "arith.subi", t, q, mz_splat_int(L->z, t, 1));
	return select3(L, t, fix, qm1, q);
}

static MlirValue int_mod(Lower *L, MlirType t, MlirValue a, MlirValue b)
{
	/* A zero divisor becomes 1 (no trap), as JAX's lowering does. */
	MlirValue bz = cmp(L, false, CMPI_EQ, b, mz_splat_int(L->z, t, 0));
	MlirValue b1 = select3(L, t, bz, mz_splat_int(L->z, t, 1), b);
	MlirValue r = op2(L, "arith.remsi", t, a, b1);
	MlirValue zero = mz_splat_int(L->z, t, 0);
	MlirValue nz = cmp(L, false, CMPI_NE, r, zero);
	MlirValue rneg = cmp(L, false, CMPI_SLT, r, zero);
	MlirValue bneg = cmp(L, false, CMPI_SLT, b1, zero);
	MlirType bt = bool_like(L->z, t);
	MlirValue fix = op2(L, "arith.andi", bt, op2(L, "arith.xori", bt, rneg, bneg), nz);
	return select3(L, t, fix, op2(L, "arith.addi", t, r, b1), r);
}

/* Python floor division and modulo on floats, as jnp.floor_divide and
 * jnp.remainder lower: both from the remainder r = a rem b, so 1.0 // 0.1
 * is 9, not floor(1.0 / 0.1) = 10 (§7.2). */
static MlirValue float_divmod(Lower *L, MlirType t, MlirValue a, MlirValue b, bool want_div)
{
	MlirValue r = op2(L, "arith.remf", t, a, b);
	MlirValue zero = mz_splat_float(L->z, t, 0.0);
	MlirValue nz = cmp(L, true, CMPF_UNE, r, zero);
	MlirValue rneg = cmp(L, true, CMPF_OLT, r, zero);
	MlirValue bneg = cmp(L, true, CMPF_OLT, b, zero);
	MlirType bt = bool_like(L->z, t);
	MlirValue fix = op2(L, "arith.andi", bt, op2(L, "arith.xori", bt, rneg, bneg), nz);
	if (!want_div)
		return select3(L, t, fix, op2(L, "arith.addf", t, r, b), r);
	MlirValue bz = cmp(L, true, CMPF_OEQ, b, zero); /* a / 0 is +-inf or NaN, as a / b */
	MlirValue q = op2(L, "arith.divf", t, select3(L, t, bz, a, op2(L, "arith.subf", t, a, r)), b);
	q = select3(L, t, fix, op2(L, "arith.subf", t, q, mz_splat_float(L->z, t, 1.0)), q);
	return op1(L, "math.round", t, q); /* q is within an ulp or so of an integer */
}

/* Converts x (dtype from) to dtype to, with t the result type (JAX's
 * convert_element_type lowering). */
static MlirValue convert(Lower *L, MlirValue x, DType from, DType to, MlirType t)
{
	Mz *z = L->z;
	if (from == to)
		return x;
	MlirType xt = mlirValueGetType(x);
	if (to == DT_BOOL) {
		/* x != 0 (NaN is true, §7.14) */
		if (dtype_is_float(from))
			return cmp(L, true, CMPF_UNE, x, mz_splat_float(z, xt, 0.0));
		return cmp(L, false, CMPI_NE, x, mz_splat_int(z, xt, 0));
	}
	if (from == DT_BOOL) {
		if (dtype_is_int(to))
			return op1(L, "arith.extui", t, x);
		/* via i32, as JAX does */
		MlirType i32t = shaped_like(t, mlirIntegerTypeGet(z->ctx, 32));
		return op1(L, "arith.sitofp", t, op1(L, "arith.extui", i32t, x));
	}
	int fb = dtype_bits(from), tb = dtype_bits(to);
	if (dtype_is_float(from) && dtype_is_float(to) && fb == tb) {
		/* f16 <-> bf16: arith has no same-width float cast (and Pallas
		 * none at all); through f32, which holds both exactly. */
		MlirType f32t = shaped_like(t, mlirF32TypeGet(z->ctx));
		return op1(L, "arith.truncf", t, op1(L, "arith.extf", f32t, x));
	}
	if (dtype_is_float(from) && dtype_is_float(to))
		return op1(L, fb < tb ? "arith.extf" : "arith.truncf", t, x);
	if (dtype_is_int(from) && dtype_is_int(to)) {
		if (fb == tb)
			return x;
		if (fb < tb)
			return op1(L, dtype_is_unsigned(from) ? "arith.extui" : "arith.extsi", t, x);
		return op1(L, "arith.trunci", t, x);
	}
	if (dtype_is_float(from))
		return op1(L, dtype_is_unsigned(to) ? "arith.fptoui" : "arith.fptosi", t, x);
	return op1(L, dtype_is_unsigned(from) ? "arith.uitofp" : "arith.sitofp", t, x);
}

static MlirValue lower_elementwise(Lower *L, const Inst *i, MlirType t)
{
	Mz *z = L->z;
	DType dt = i->args[0]->type->dtype; /* the operands' dtype */
	bool f = dtype_is_float(dt), u = dtype_is_unsigned(dt) || dt == DT_BOOL;
	MlirValue a = get(L, i->args[0]);
	MlirValue b = i->nargs > 1 ? get(L, i->args[1]) : a;
	switch (i->op) {
	case IR_ADD: return op2(L, f ? "arith.addf" : "arith.addi", t, a, b);
	case IR_SUB: return op2(L, f ? "arith.subf" : "arith.subi", t, a, b);
	case IR_MUL: return op2(L, f ? "arith.mulf" : "arith.muli", t, a, b);
	case IR_DIV: return op2(L, f ? "arith.divf" : u ? "arith.divui" : "arith.divsi", t, a, b);
	case IR_FLOORDIV:
		if (f)
			return float_divmod(L, t, a, b, true);
		return u ? op2(L, "arith.divui", t, a, b) : int_floordiv(L, t, a, b);
	case IR_MOD:
		return f ? float_divmod(L, t, a, b, false) : u ? op2(L, "arith.remui", t, a, b) : int_mod(L, t, a, b);
	case IR_REM: return op2(L, f ? "arith.remf" : u ? "arith.remui" : "arith.remsi", t, a, b); /* as lax.rem lowers */
	case IR_POW: return op2(L, "math.powf", t, a, b);
	case IR_MIN:
		return op2(L, f ? "arith.minimumf" : dt == DT_BOOL ? "arith.andi" : u ? "arith.minui" : "arith.minsi", t, a, b);
	case IR_MAX:
		return op2(L, f ? "arith.maximumf" : dt == DT_BOOL ? "arith.ori" : u ? "arith.maxui" : "arith.maxsi", t, a, b);
	case IR_AND: return op2(L, "arith.andi", t, a, b);
	case IR_OR: return op2(L, "arith.ori", t, a, b);
	case IR_XOR: return op2(L, "arith.xori", t, a, b);
	case IR_SHL: return op2(L, "arith.shli", t, a, b);
	case IR_SHR: return op2(L, u ? "arith.shrui" : "arith.shrsi", t, a, b);
	case IR_EQ: return cmp(L, f, f ? CMPF_OEQ : CMPI_EQ, a, b);
	case IR_NE: return cmp(L, f, f ? CMPF_UNE : CMPI_NE, a, b);
	case IR_LT: return cmp(L, f, f ? CMPF_OLT : u ? CMPI_ULT : CMPI_SLT, a, b);
	case IR_LE: return cmp(L, f, f ? CMPF_OLE : u ? CMPI_ULE : CMPI_SLE, a, b);
	case IR_GT: return cmp(L, f, f ? CMPF_OGT : u ? CMPI_UGT : CMPI_SGT, a, b);
	case IR_GE: return cmp(L, f, f ? CMPF_OGE : u ? CMPI_UGE : CMPI_SGE, a, b);
	case IR_SELECT: {
		/* operands: cond, a, b (the cond dtype is bool) */
		MlirValue c = get(L, i->args[2]);
		return select3(L, t, a, b, c);
	}
	case IR_NEG:
		/* 0 - x, as lax.neg lowers */
		return f ? op2(L, "arith.subf", t, mz_splat_float(z, t, 0.0), a)
		         : op2(L, "arith.subi", t, mz_splat_int(z, t, 0), a);
	case IR_NOT: return op2(L, "arith.xori", t, a, dense_int(L, t, -1));
	case IR_ABS:
		return f ? op1(L, "math.absf", t, a) : u ? a : op1(L, "math.absi", t, a);
	case IR_CAST: return convert(L, a, dt, i->results[0]->type->dtype, t);
	case IR_EXP: return op1(L, "math.exp", t, a);
	case IR_EXP2: return op1(L, "math.exp2", t, a);
	case IR_LOG: return op1(L, "math.log", t, a);
	case IR_LOG1P: return op1(L, "math.log1p", t, a);
	case IR_SQRT: return op1(L, "math.sqrt", t, a);
	case IR_RSQRT: return op1(L, "math.rsqrt", t, a);
	case IR_TANH: return op1(L, "math.tanh", t, a);
	case IR_ERF: return op1(L, "math.erf", t, a);
	case IR_SIN: return op1(L, "math.sin", t, a);
	case IR_COS: return op1(L, "math.cos", t, a);
	case IR_FLOOR: return f ? op1(L, "math.floor", t, a) : a;
	case IR_CEIL: return f ? op1(L, "math.ceil", t, a) : a;
	/* as Pallas' TPU lowering has them (jax 0.11: lax.tan, atan2, round, clz,
	 * population_count, bitcast_convert_type); atan is atan2(x, 1) */
	case IR_TAN: return op1(L, "math.tan", t, a);
	case IR_ATAN: return op2(L, "math.atan2", t, a, mz_splat_float(z, t, 1.0));
	case IR_ATAN2: return op2(L, "math.atan2", t, a, b);
	case IR_ROUND: return op1(L, "math.roundeven", t, a);
	case IR_POPCNT: return op1(L, "math.ctpop", t, a);
	case IR_CLZ: return op1(L, "math.ctlz", t, a);
	case IR_BITCAST:
		if (mlirTypeEqual(mlirValueGetType(a), t))
			return a; /* i32 <-> u32: one MLIR type */
		return op1(L, mlirTypeIsAVector(t) ? "tpu.bitcast" : "arith.bitcast", t, a);
	case IR_SIGMOID:
		if (mlirTypeIsAVector(t))
			return op1(L, "tpu.logistic", t, a);
		/* 1 / (1 + exp(-x)) for a scalar, as JAX's fallback */
		return op2(L, "arith.divf", t, mz_const_float(z, t, 1.0),
		           op2(L, "arith.addf", t, mz_const_float(z, t, 1.0),
		               op1(L, "math.exp", t, op1(L, "arith.negf", t, a))));
	default:
		internal_error("mosaic: no lowering for elementwise op %s", op_info[i->op].name);
	}
}

/* ---- shapes -------------------------------------------------------------------- */

static MlirValue shape_cast(Lower *L, MlirType t, MlirValue x)
{
	if (mlirTypeEqual(mlirValueGetType(x), t))
		return x;
	return op1(L, "vector.shape_cast", t, x);
}

/* NumPy broadcast of x (type from) to t (type to), as
 * broadcast_in_dim lowers: a higher rank first gets leading unit dims. */
static MlirValue broadcast(Lower *L, MlirValue x, const Type *from, const Type *to)
{
	Mz *z = L->z;
	MlirType t = mz_value_type(z, to);
	if (from->rank == 0)
		return op1(L, "vector.broadcast", t, x);
	if (to->rank > from->rank) {
		int64_t *dims = int_array(L, to->rank);
		int lead = to->rank - from->rank;
		for (int d = 0; d < to->rank; d++)
			dims[d] = d < lead ? 1 : from->dims[d - lead];
		x = shape_cast(L, mz_type(z, to->dtype, to->rank, dims), x);
	}
	if (mlirTypeEqual(mlirValueGetType(x), t))
		return x;
	return op1(L, "vector.broadcast", t, x);
}

static MlirValue reshape(Lower *L, MlirValue x, const Type *from, const Type *to)
{
	Mz *z = L->z;
	MlirType t = mz_value_type(z, to);
	if (from->rank == 0)
		return op1(L, "vector.broadcast", t, x);
	if (to->rank == 0) {
		int64_t *pos = int_array(L, from->rank);
		memset(pos, 0, (size_t)from->rank * sizeof *pos);
		MlirNamedAttribute p = mz_named(z, "static_position", mz_i64_array(z, from->rank, pos));
		return mz_op1(z, "vector.extract", t, 1, &x, 1, &p);
	}
	return shape_cast(L, t, x);
}

/* [a : i64, b : i64, ...], the array attribute vector.extract_strided_slice takes. */
static MlirAttribute i64_list(Lower *L, int n, const int64_t *v)
{
	Mz *z = L->z;
	MlirAttribute *e = arena_alloc(z->a, (size_t)(n + 1) * sizeof *e);
	for (int d = 0; d < n; d++)
		e[d] = mlirIntegerAttrGet(mlirIntegerTypeGet(z->ctx, 64), v[d]);
	return mlirArrayAttrGet(z->ctx, n, e);
}

/* A static window (value indexing, §7.9) as Pallas lowers it. */
static MlirValue slice(Lower *L, const Inst *i, MlirType t)
{
	Mz *z = L->z;
	const Type *rt = i->results[0]->type;
	int64_t *ones = int_array(L, rt->rank);
	for (int d = 0; d < rt->rank; d++)
		ones[d] = 1;
	MlirNamedAttribute a[3] = {mz_named(z, "offsets", i64_list(L, rt->rank, i->perm)),
	                           mz_named(z, "sizes", i64_list(L, rt->rank, rt->dims)),
	                           mz_named(z, "strides", i64_list(L, rt->rank, ones))};
	MlirValue x = get(L, i->args[0]);
	return mz_op1(z, "vector.extract_strided_slice", t, 1, &x, 3, a);
}

static MlirValue concat(Lower *L, const Inst *i, MlirType t)
{
	Mz *z = L->z;
	MlirValue *xs = arena_alloc(z->a, (size_t)(i->nargs + 1) * sizeof *xs);
	for (int k = 0; k < i->nargs; k++)
		xs[k] = get(L, i->args[k]);
	MlirNamedAttribute a = mz_named(z, "dimension", mz_attrf(z, "%d : i32", (int)i->ival));
	return mz_op1(z, "tpu.concatenate", t, i->nargs, xs, 1, &a);
}

static MlirValue iota(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	const Type *t = i->results[0]->type;
	int32_t dim = (int32_t)i->ival;
	MlirValue v;
	if (t->rank == 1) {
		/* Mosaic's iota is 2-D: (1, N) along dim 1, then reshaped. */
		int64_t d2[2] = {1, t->dims[0]};
		int32_t one = 1;
		MlirNamedAttribute a = mz_named(z, "dimensions", mz_i32_array(z, 1, &one));
		v = mz_op1(z, "tpu.iota", mz_type(z, DT_I32, 2, d2), 0, NULL, 1, &a);
		v = shape_cast(L, mz_type(z, DT_I32, 1, t->dims), v);
	} else {
		MlirNamedAttribute a = mz_named(z, "dimensions", mz_i32_array(z, 1, &dim));
		v = mz_op1(z, "tpu.iota", mz_type(z, DT_I32, t->rank, t->dims), 0, NULL, 1, &a);
	}
	return convert(L, v, DT_I32, t->dtype, mz_value_type(z, t));
}

/* ---- reductions ---------------------------------------------------------------- */

/* A bool max/min (any/all) reduces 1.0/0.0 in f32 and compares with 0,
 * as Pallas' TPU lowering of reduce_or/reduce_and does. */
static MlirValue reduce(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	const Type *in = i->args[0]->type, *out = i->results[0]->type;
	bool is_bool = in->dtype == DT_BOOL;
	DType dt = is_bool ? DT_F32 : in->dtype;
	bool f = dtype_is_float(dt);
	const char *kind;
	double fid = 0.0;
	int64_t iid = 0;
	switch (i->op) {
	case IR_REDUCE_SUM: kind = "add"; break;
	case IR_REDUCE_MAX: kind = f ? "maximumf" : "maxsi"; fid = -INFINITY; iid = INT32_MIN; break;
	default: kind = f ? "minimumf" : "minsi"; fid = INFINITY; iid = INT32_MAX; break;
	}
	MlirValue x = get(L, i->args[0]);
	if (is_bool) {
		MlirType ft = mz_type(z, DT_F32, in->rank, in->dims);
		x = select3(L, ft, x, mz_splat_float(z, ft, 1.0), mz_splat_float(z, ft, 0.0));
	}
	int64_t axis = i->ival;
	int rank = in->rank;
	const int64_t *dims = in->dims;
	bool to_scalar = out->rank == 0;
	if (to_scalar) {
		/* Reduce (1, ...) over all dims but the first, then extract: Mosaic
		 * does not materialise scalar reductions. */
		int64_t *d1 = int_array(L, rank + 1);
		d1[0] = 1;
		memcpy(d1 + 1, dims, (size_t)rank * sizeof *d1);
		x = shape_cast(L, mz_type(z, dt, rank + 1, d1), x);
		dims = d1;
		rank++;
		axis++;
	}
	int64_t *rd = int_array(L, rank);
	int nr = 0;
	for (int d = 0; d < rank; d++)
		if (d != axis)
			rd[nr++] = dims[d];
	MlirType rt = mz_type(z, dt, nr, rd);
	MlirType et = mz_elem_type(z, dt);
	MlirAttribute idattr = f ? mlirFloatAttrDoubleGet(z->ctx, et, fid) : mlirIntegerAttrGet(et, iid);
	MlirValue acc = mz_const_splat(z, rt, idattr);
	MlirNamedAttribute attrs[2] = {
		mz_named(z, "kind", mz_attrf(z, "#vector.kind<%s>", kind)),
		mz_named(z, "reduction_dims", mz_i64_array(z, 1, &axis)),
	};
	MlirValue args[2] = {x, acc};
	MlirValue r = mz_op1(z, "vector.multi_reduction", rt, 2, args, 2, attrs);
	if (to_scalar) {
		/* vector<1> -> vector<1x...x1> -> scalar */
		int64_t *ones = int_array(L, rank);
		for (int d = 0; d < rank; d++)
			ones[d] = 1;
		r = shape_cast(L, mz_type(z, dt, rank, ones), r);
		int64_t *pos = int_array(L, rank);
		memset(pos, 0, (size_t)rank * sizeof *pos);
		MlirNamedAttribute p = mz_named(z, "static_position", mz_i64_array(z, rank, pos));
		r = mz_op1(z, "vector.extract", et, 1, &r, 1, &p);
	}
	if (is_bool)
		r = cmp(L, true, CMPF_OGT, r, mz_splat_float(z, mlirValueGetType(r), 0.0));
	return r;
}

static MlirValue reduce_index(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	const Type *in = i->args[0]->type, *out = i->results[0]->type;
	MlirValue x = get(L, i->args[0]);
	int64_t axis = i->ival;
	int rank = in->rank;
	const int64_t *dims = in->dims;
	bool is_1d = rank == 1;
	if (is_1d) {
		int64_t d2[2] = {1, dims[0]};
		x = shape_cast(L, mz_type(z, in->dtype, 2, d2), x);
		axis = 1;
	}
	DType native = in->dtype == DT_BF16 ? DT_I16 : DT_I32;
	int64_t one = 1;
	MlirType nt = is_1d ? mz_type(z, native, 1, &one) : mz_type(z, native, out->rank, out->dims);
	MlirNamedAttribute attrs[2] = {
		mz_named(z, "axis", mlirIntegerAttrGet(i32_type(z), axis)),
		mz_named(z, "kind", mz_attrf(z, "#tpu.reduction_kind<%s>", i->op == IR_ARGMAX ? "arg_max" : "arg_min")),
	};
	MlirValue r = mz_op1(z, "tpu.reduce_index", nt, 1, &x, 2, attrs);
	if (native != out->dtype) {
		MlirType wt = is_1d ? mz_type(z, out->dtype, 1, &one) : mz_type(z, out->dtype, out->rank, out->dims);
		r = op1(L, "arith.extsi", wt, r);
	}
	if (is_1d) {
		int64_t pos = 0;
		MlirNamedAttribute p = mz_named(z, "static_position", mz_i64_array(z, 1, &pos));
		r = mz_op1(z, "vector.extract", mz_elem_type(z, out->dtype), 1, &r, 1, &p);
	}
	return r;
}

/* ---- dot ------------------------------------------------------------------------- */

/* A 2-D transpose used only by a dot is folded into it. */
static bool foldable_transpose(Lower *L, const Value *v)
{
	const Inst *d = v->def;
	return d && d->op == IR_TRANSPOSE && d->nperm == 2 && d->perm[0] == 1 && d->perm[1] == 0 &&
	       L->uses[v->id] == 1;
}

static void mark_folds(Lower *L, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_DOT)
			for (int a = 0; a < 2; a++)
				if (foldable_transpose(L, i->args[a]))
					L->folded[i->args[a]->id] = true;
		for (int n = 0; n < i->nregions; n++)
			mark_folds(L, i->regions[n]);
	}
}

static MlirValue dot(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	const Value *a = i->args[0], *b = i->args[1];
	bool ta = L->folded[a->id], tb = L->folded[b->id];
	MlirValue va = get(L, ta ? a->def->args[0] : a);
	MlirValue vb = get(L, tb ? b->def->args[0] : b);
	const Type *rt = i->results[0]->type;
	MlirType t = mz_value_type(z, rt);
	MlirValue acc;
	if (i->nargs > 2) {
		acc = get(L, i->args[2]);
	} else {
		MlirType et = mz_elem_type(z, rt->dtype);
		acc = mz_const_splat(z, t, dtype_is_float(rt->dtype) ? mlirFloatAttrDoubleGet(z->ctx, et, 0.0)
		                                                    : mlirIntegerAttrGet(et, 0));
	}
	/* lhs [M, K] (or [K, M] transposed), rhs [K, N] (or [N, K]) */
	int lc = ta ? 0 : 1, lnc = 1 - lc, rc = tb ? 1 : 0, rnc = 1 - rc;
	/* precision= as Pallas' TPU lowering passes it: none for DEFAULT */
	static const char *const contract_precision[PREC_COUNT] = {
		[PREC_HIGH] = "#tpu.contract_precision<bf16x3>", [PREC_HIGHEST] = "#tpu.contract_precision<fp32>",
	};
	const char *prec = i->ival > PREC_DEFAULT && i->ival < PREC_COUNT ? contract_precision[i->ival] : NULL;
	MlirNamedAttribute attrs[3] = {
		mz_named(z, "dimension_numbers",
		         mz_attrf(z, "#tpu.dot_dimension_numbers<[%d], [%d], [%d], [%d], [0, %d, 1, %d], [], []>", lc, rc,
		                  lnc, rnc, lnc, rnc)),
		mz_named(z, "transpose_lhs_hint", mlirBoolAttrGet(z->ctx, 0)),
	};
	int nattrs = 2;
	if (prec)
		attrs[nattrs++] = mz_named(z, "precision", mz_attrf(z, "%s", prec));
	MlirValue args[3] = {va, vb, acc};
	return mz_op1(z, "tpu.matmul", t, 3, args, nattrs, attrs);
}

/* ---- Ref access ------------------------------------------------------------------ */

/* The memref behind a Ref value and which of its dims the Ref drops. */
typedef struct RefView {
	MlirValue mem;        /* the memref */
	DType dtype;          /* its element type */
	int rank;             /* the memref's rank */
	const int64_t *shape; /* the memref's shape */
	const bool *squeezed; /* per memref dim: not a dim of the Ref (NULL: none) */
} RefView;

static RefView ref_view(Lower *L, const Value *ref)
{
	const IrKernel *k = L->k;
	PKC_ASSERT(!ref->def && ref->region == k->body);
	int i = ref->index;
	RefView v = {0};
	if (i < k->noperands) {
		const IrOperand *op = k->operands[i];
		v.mem = L->windows[i];
		v.dtype = op->array->dtype;
		v.rank = op->array->rank;
		v.shape = L->mk->window[i];
		v.squeezed = op->has_spec ? op->squeezed : NULL;
		return v;
	}
	int s = i - k->noperands - k->nscalars - k->nsizes;
	PKC_ASSERT(s >= 0 && s < k->nscratch);
	v.mem = L->scratch[s];
	v.dtype = k->scratch[s]->type->dtype;
	v.rank = k->scratch[s]->type->rank;
	v.shape = k->scratch[s]->type->dims;
	return v;
}

/* An index operand: `arith.constant N : index` for a constant, else
 * arith.index_cast. */
static MlirValue index_of(Lower *L, const Value *v)
{
	Mz *z = L->z;
	if (v->def && v->def->op == IR_CONST)
		return mz_const_int(z, index_type(z), v->def->ival);
	return op1(L, "arith.index_cast", index_type(z), get(L, v));
}

/* The start index of every memref dim and the slice's extent in it. */
static MlirValue *access_starts(Lower *L, const Inst *i, const RefView *v, int64_t *sizes)
{
	Mz *z = L->z;
	MlirValue *starts = arena_alloc(z->a, (size_t)(v->rank + 1) * sizeof *starts);
	int x = 0, op = 1; /* next indexer, next index operand */
	for (int d = 0; d < v->rank; d++) {
		if (v->squeezed && v->squeezed[d]) {
			starts[d] = mz_const_int(z, index_type(z), 0);
			sizes[d] = 1;
			continue;
		}
		const Indexer *ix = &i->idx[x++];
		switch (ix->kind) {
		case IDX_FULL:
			starts[d] = mz_const_int(z, index_type(z), 0);
			sizes[d] = v->shape[d];
			break;
		case IDX_POINT:
			starts[d] = index_of(L, i->args[op++]);
			sizes[d] = 1;
			break;
		case IDX_SLICE:
			starts[d] = index_of(L, i->args[op++]);
			sizes[d] = ix->size;
			break;
		default:
			internal_error("mosaic: gather index reached the builder");
		}
	}
	return starts;
}

static MlirValue vector_load(Lower *L, const RefView *v, MlirValue *starts, const int64_t *sizes)
{
	Mz *z = L->z;
	MlirValue *args = arena_alloc(z->a, (size_t)(v->rank + 1) * sizeof *args);
	args[0] = v->mem;
	memcpy(args + 1, starts, (size_t)v->rank * sizeof *args);
	return mz_op1(z, "vector.load", mz_type(z, v->dtype, v->rank, sizes), v->rank + 1, args, 0, NULL);
}

/* The SMEM memref of a prefetch array (§5.11): a body argument, or an
 * index map's argument after the program ids; null for any other Ref. */
static MlirValue prefetch_mem(Lower *L, const Value *ref)
{
	const IrKernel *k = L->k;
	if (ref->def)
		return (MlirValue){NULL};
	if (ref->region != k->body)
		return L->vals[ref->id]; /* index maps take no other Refs */
	if (ref->index < k->noperands && k->operands[ref->index]->mode == PM_PREFETCH)
		return L->windows[ref->index];
	return (MlirValue){NULL};
}

/* memref.load of one element, as Pallas reads SMEM (mosaic_check.c has
 * checked that every index is a point). */
static MlirValue prefetch_load(Lower *L, const Inst *i, MlirValue mem)
{
	Mz *z = L->z;
	MlirValue *args = arena_alloc(z->a, (size_t)(i->nidx + 1) * sizeof *args);
	args[0] = mem;
	for (int d = 0; d < i->nidx; d++)
		args[1 + d] = index_of(L, i->args[1 + d]);
	MlirType t = mz_elem_type(z, i->results[0]->type->dtype);
	return mz_op1(z, "memref.load", t, i->nidx + 1, args, 0, NULL);
}

static MlirValue load(Lower *L, const Inst *i)
{
	MlirValue mem = prefetch_mem(L, i->args[0]);
	if (!mlirValueIsNull(mem))
		return prefetch_load(L, i, mem);
	RefView v = ref_view(L, i->args[0]);
	int64_t *sizes = int_array(L, v.rank);
	MlirValue *starts = access_starts(L, i, &v, sizes);
	MlirValue x = vector_load(L, &v, starts, sizes);
	const Type *t = i->results[0]->type;
	Type slice = {TY_VALUE, v.dtype, v.rank, sizes, NULL, SPACE_GLOBAL};
	return reshape(L, x, &slice, t);
}

static void store(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	RefView v = ref_view(L, i->args[0]);
	int64_t *sizes = int_array(L, v.rank);
	MlirValue *starts = access_starts(L, i, &v, sizes);
	const Value *val = i->args[i->nargs - 1];
	/* The access shape: the slice without its point and squeezed dims. */
	int64_t *ad = int_array(L, v.rank);
	int ar = 0, x = 0;
	for (int d = 0; d < v.rank; d++) {
		if (v.squeezed && v.squeezed[d])
			continue;
		if (i->idx[x++].kind != IDX_POINT)
			ad[ar++] = sizes[d];
	}
	Type access = {TY_VALUE, v.dtype, ar, ad, NULL, SPACE_GLOBAL};
	Type slice = {TY_VALUE, v.dtype, v.rank, sizes, NULL, SPACE_GLOBAL};
	MlirValue value = get(L, val);
	if (!type_equal(val->type, &access))
		value = broadcast(L, value, val->type, &access);
	/* Pallas' swap: read the old contents, then write. */
	MlirValue old = vector_load(L, &v, starts, sizes);
	(void)reshape(L, old, &slice, &access);
	MlirType st = mz_value_type(z, &slice);
	value = shape_cast(L, st, value);
	MlirValue *args = arena_alloc(z->a, (size_t)(v.rank + 2) * sizeof *args);
	args[0] = value;
	args[1] = v.mem;
	memcpy(args + 2, starts, (size_t)v.rank * sizeof *args);
	int32_t seg[4] = {1, 1, v.rank, 0};
	MlirNamedAttribute attrs[2] = {
		mz_named(z, "operandSegmentSizes", mz_i32_array(z, 4, seg)),
		mz_named(z, "strides", mz_i32_array(z, 0, NULL)),
	};
	mz_op(z, "tpu.vector_store", 0, NULL, v.rank + 2, args, 2, attrs, 0, NULL);
}

/* ---- debug_print (§7.19) ------------------------------------------------------------- */

/* As Pallas' TPU lowering builds it (mosaic_check.c admits these two forms):
 * scalars through tpu.log, each "{}" of the format becoming "$s<k>", "$u<k>"
 * or "$f<k>" (formatted); one block at the end of the format through a VMEM
 * buffer it is stored to and tpu.log_buffer, inside a tpu.region. */
static void debug_print(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	if (i->nargs == 1 && i->args[0]->type->rank > 0) {
		const Type *t = i->args[0]->type;
		size_t n = strlen(i->str) - 2; /* the format less its final "{}" */
		char *tag = arena_alloc(z->a, n + 1);
		memcpy(tag, i->str, n);
		tag[n] = '\0';
		MlirBlock body;
		MlirRegion reg = mz_region(z, 0, NULL, &body);
		MlirBlock saved = z->block;
		z->block = body;
		int32_t seg[2] = {0, 0};
		MlirNamedAttribute sa = mz_named(z, "operandSegmentSizes", mz_i32_array(z, 2, seg));
		MlirValue mem = mz_op1(z, "memref.alloca", mz_memref(z, t->dtype, t->rank, t->dims, "vmem"), 0, NULL, 1, &sa);
		MlirValue *args = arena_alloc(z->a, (size_t)(t->rank + 2) * sizeof *args);
		args[0] = get(L, i->args[0]);
		args[1] = mem;
		for (int d = 0; d < t->rank; d++)
			args[2 + d] = mz_const_int(z, index_type(z), 0);
		mz_op(z, "vector.store", 0, NULL, t->rank + 2, args, 0, NULL, 0, NULL);
		MlirNamedAttribute la[2] = {
			mz_named(z, "shape", mz_i64_array(z, t->rank, t->dims)),
			mz_named(z, "tag", mlirStringAttrGet(z->ctx, mz_str(tag))),
		};
		mz_op(z, "tpu.log_buffer", 0, NULL, 1, &mem, 2, la, 0, NULL);
		mz_op(z, "tpu.yield", 0, NULL, 0, NULL, 0, NULL, 0, NULL);
		z->block = saved;
		mz_op(z, "tpu.region", 0, NULL, 0, NULL, 0, NULL, 1, &reg);
		return;
	}
	size_t cap = strlen(i->str) + 16 * (size_t)i->nargs + 1, len = 0;
	char *tag = arena_alloc(z->a, cap);
	MlirValue *args = arena_alloc(z->a, (size_t)(i->nargs + 1) * sizeof *args);
	int k = 0;
	for (const char *c = i->str; *c; c++) {
		if (c[0] == '{' && c[1] == '}') {
			DType dt = i->args[k]->type->dtype;
			args[k] = get(L, i->args[k]);
			len += (size_t)snprintf(tag + len, cap - len, "$%c%d", dtype_is_float(dt) ? 'f' : dt == DT_U32 ? 'u' : 's', k);
			k++;
			c++;
		} else {
			tag[len++] = *c;
		}
	}
	tag[len] = '\0';
	MlirNamedAttribute la[2] = {
		mz_named(z, "tag", mlirStringAttrGet(z->ctx, mz_str(tag))),
		mz_named(z, "formatted", mlirBoolAttrGet(z->ctx, i->nargs > 0)),
	};
	mz_op(z, "tpu.log", 0, NULL, i->nargs, args, 2, la, 0, NULL);
}

/* ---- control flow ------------------------------------------------------------------ */

static MlirType *result_types(Lower *L, const Inst *i)
{
	MlirType *t = arena_alloc(L->z->a, (size_t)(i->nresults + 1) * sizeof *t);
	for (int r = 0; r < i->nresults; r++)
		t[r] = mz_value_type(L->z, i->results[r]->type);
	return t;
}

static void set_results(Lower *L, const Inst *i, MlirOperation op)
{
	for (int r = 0; r < i->nresults; r++)
		set(L, i->results[r], mlirOperationGetResult(op, r));
}

/* The block argument types of a region. */
static MlirType *arg_types(Lower *L, const Region *r)
{
	MlirType *types = arena_alloc(L->z->a, (size_t)(r->nargs + 1) * sizeof *types);
	for (int a = 0; a < r->nargs; a++)
		types[a] = mz_value_type(L->z, r->args[a]->type);
	return types;
}

/* A region of an scf op: a block with the region's argument types. */
static MlirRegion sub_region(Lower *L, const Region *r, Term term)
{
	MlirBlock block;
	MlirRegion reg = mz_region(L->z, r->nargs, arg_types(L, r), &block);
	lower_region(L, r, block, term, NULL);
	return reg;
}

static void lower_if(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	/* lax.cond: the bool index widened to i32 and compared with 0 */
	MlirValue c = get(L, i->args[0]);
	MlirValue w = op1(L, "arith.extui", i32_type(z), c);
	MlirValue p = cmp(L, false, CMPI_NE, w, mz_const_int(z, i32_type(z), 0));
	MlirRegion regs[2] = {sub_region(L, i->regions[0], TERM_YIELD),
	                      sub_region(L, i->regions[1], TERM_YIELD)};
	MlirOperation op = mz_op(z, "scf.if", i->nresults, result_types(L, i), 1, &p, 0, NULL, 2, regs);
	set_results(L, i, op);
}

static void lower_for(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	const Value *stepv = i->args[2];
	PKC_ASSERT(stepv->def && stepv->def->op == IR_CONST);
	int64_t step = stepv->def->ival;
	MlirValue *args = arena_alloc(z->a, (size_t)(i->nargs + 1) * sizeof *args);
	for (int a = 0; a < i->nargs; a++)
		args[a] = get(L, i->args[a]);
	const Region *body = i->regions[0];
	if (step > 0) {
		MlirRegion reg = sub_region(L, body, TERM_YIELD);
		MlirOperation op = mz_op(z, "scf.for", i->nresults, result_types(L, i), i->nargs, args, 0, NULL, 1, &reg);
		set_results(L, i, op);
		return;
	}
	/* A negative step: scf.for counts up, so loop over the trip count
	 * t = max(0, ceil((lo - hi) / -step)) with iv = lo + t * step. */
	MlirType it = mlirValueGetType(args[0]);
	MlirValue diff = op2(L, "arith.subi", it, args[0], args[1]);
	MlirValue num = op2(L, "arith.addi", it, diff, mz_const_int(z, it, -step - 1));
	MlirValue quo = op2(L, "arith.divsi", it, num, mz_const_int(z, it, -step));
	MlirValue *fargs = arena_alloc(z->a, (size_t)(i->nargs + 1) * sizeof *fargs);
	fargs[0] = mz_const_int(z, it, 0);
	fargs[1] = op2(L, "arith.maxsi", it, quo, mz_const_int(z, it, 0));
	fargs[2] = mz_const_int(z, it, 1);
	memcpy(fargs + 3, args + 3, (size_t)(i->nargs - 3) * sizeof *fargs);
	MlirBlock block;
	MlirRegion reg = mz_region(z, body->nargs, arg_types(L, body), &block);
	MlirBlock saved = z->block;
	z->block = block;
	MlirValue *bargs = arena_alloc(z->a, (size_t)(body->nargs + 1) * sizeof *bargs);
	for (int a = 0; a < body->nargs; a++)
		bargs[a] = mlirBlockGetArgument(block, a);
	bargs[0] = op2(L, "arith.addi", it, args[0], op2(L, "arith.muli", it, bargs[0], mz_const_int(z, it, step)));
	z->block = saved;
	lower_region(L, body, block, TERM_YIELD, bargs);
	MlirOperation op = mz_op(z, "scf.for", i->nresults, result_types(L, i), i->nargs, fargs, 0, NULL, 1, &reg);
	set_results(L, i, op);
}

static void lower_while(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	MlirValue *args = arena_alloc(z->a, (size_t)(i->nargs + 1) * sizeof *args);
	for (int a = 0; a < i->nargs; a++)
		args[a] = get(L, i->args[a]);
	MlirRegion regs[2] = {sub_region(L, i->regions[0], TERM_CONDITION),
	                      sub_region(L, i->regions[1], TERM_YIELD)};
	MlirOperation op = mz_op(z, "scf.while", i->nresults, result_types(L, i), i->nargs, args, 0, NULL, 2, regs);
	set_results(L, i, op);
}

/* ---- instructions -------------------------------------------------------------------- */

static void lower_inst(Lower *L, const Inst *i)
{
	Mz *z = L->z;
	const Type *rt = i->nresults == 1 ? i->results[0]->type : NULL;
	MlirType t = rt && rt->kind == TY_VALUE ? mz_value_type(z, rt) : (MlirType){NULL};
	MlirValue r = {NULL};
	switch (i->op) {
	case IR_CONST: {
		const Value *v = i->results[0];
		if (L->uses[v->id] > 0 && L->uses[v->id] == L->index_uses[v->id])
			return; /* only load/store indices use it: they get index constants */
		MlirType et = mz_elem_type(z, rt->dtype);
		MlirValue c = dtype_is_float(rt->dtype) ? mz_const_float(z, et, i->fval) : mz_const_int(z, et, i->ival);
		r = rt->rank ? op1(L, "vector.broadcast", t, c) : c;
		break;
	}
	case IR_PROGRAM_ID:
		r = mlirBlockGetArgument(L->entry, (intptr_t)i->ival);
		break;
	case IR_NUM_PROGRAMS:
		r = mz_const_int(z, t, L->mk->grid[i->ival]);
		break;
	case IR_BROADCAST: r = broadcast(L, get(L, i->args[0]), i->args[0]->type, rt); break;
	case IR_RESHAPE: r = reshape(L, get(L, i->args[0]), i->args[0]->type, rt); break;
	case IR_TRANSPOSE: {
		if (L->folded[i->results[0]->id])
			return;
		MlirNamedAttribute p = mz_named(z, "permutation", mz_i64_array(z, i->nperm, i->perm));
		MlirValue x = get(L, i->args[0]);
		r = mz_op1(z, "tpu.transpose", t, 1, &x, 1, &p);
		break;
	}
	case IR_IOTA: r = iota(L, i); break;
	case IR_SLICE: r = slice(L, i, t); break;
	case IR_CONCAT: r = concat(L, i, t); break;
	case IR_REDUCE_SUM:
	case IR_REDUCE_MAX:
	case IR_REDUCE_MIN: r = reduce(L, i); break;
	case IR_ARGMAX:
	case IR_ARGMIN: r = reduce_index(L, i); break;
	case IR_DOT: r = dot(L, i); break;
	case IR_LOAD: r = load(L, i); break;
	case IR_STORE: store(L, i); return;
	case IR_DEBUG_PRINT: debug_print(L, i); return;
	case IR_IF: lower_if(L, i); return;
	case IR_FOR: lower_for(L, i); return;
	case IR_WHILE: lower_while(L, i); return;
	default:
		if (!(op_info[i->op].flags & F_ELEMWISE))
			internal_error("mosaic: no lowering for %s", op_info[i->op].name);
		r = lower_elementwise(L, i, t);
		break;
	}
	set(L, i->results[0], r);
}

/* Lowers the instructions of r into block, ending it as term says.  r's
 * arguments are args, or the block's arguments when args is NULL. */
static void lower_region(Lower *L, const Region *r, MlirBlock block, Term term, const MlirValue *args)
{
	Mz *z = L->z;
	MlirBlock saved = z->block;
	z->block = block;
	for (int a = 0; a < r->nargs; a++)
		set(L, r->args[a], args ? args[a] : mlirBlockGetArgument(block, a));
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op != IR_YIELD) {
			lower_inst(L, i);
			continue;
		}
		int n = i->nargs;
		MlirValue *vals = arena_alloc(z->a, (size_t)(n + 1) * sizeof *vals);
		for (int a = 0; a < n; a++)
			vals[a] = get(L, i->args[a]);
		switch (term) {
		case TERM_RETURN: mz_op(z, "func.return", 0, NULL, n, vals, 0, NULL, 0, NULL); break;
		case TERM_TRANSFORM:
			(void)mz_const_int(z, i32_type(z), 0); /* Pallas leaves this constant before the return */
			mz_op(z, "func.return", 0, NULL, n, vals, 0, NULL, 0, NULL);
			break;
		case TERM_YIELD: mz_op(z, "scf.yield", 0, NULL, n, vals, 0, NULL, 0, NULL); break;
		case TERM_CONDITION: {
			/* scf.condition(cond) carried...: the carried values are the block's arguments */
			int nb = (int)mlirBlockGetNumArguments(block);
			MlirValue *cargs = arena_alloc(z->a, (size_t)(nb + 1) * sizeof *cargs);
			cargs[0] = vals[0];
			for (int a = 0; a < nb; a++)
				cargs[a + 1] = mlirBlockGetArgument(block, a);
			mz_op(z, "scf.condition", 0, NULL, nb + 1, cargs, 0, NULL, 0, NULL);
			break;
		}
		}
	}
	z->block = saved;
}

/* ---- functions ------------------------------------------------------------------------ */

static Lower *new_lower(Mz *z, const MzKernel *mk)
{
	const IrKernel *k = mk->k;
	size_t n = (size_t)k->nvalues + 1;
	Lower *L = arena_alloc(z->a, sizeof *L);
	L->z = z;
	L->mk = mk;
	L->k = k;
	L->vals = arena_alloc(z->a, n * sizeof *L->vals);
	L->uses = arena_alloc(z->a, n * sizeof *L->uses);
	L->index_uses = arena_alloc(z->a, n * sizeof *L->index_uses);
	L->folded = arena_alloc(z->a, n * sizeof *L->folded);
	return L;
}

/* func.func @name(args) -> res with the given attributes and body region
 * (filled), at the end of module_body. */
static MlirOperation make_func(Mz *z, MlirBlock module_body, const char *name, int nargs, const MlirType *args,
                               int nres, const MlirType *res, int nattrs, const MlirNamedAttribute *attrs,
                               MlirRegion body)
{
	MlirType ft = mlirFunctionTypeGet(z->ctx, nargs, args, nres, res);
	MlirNamedAttribute *all = arena_alloc(z->a, (size_t)(nattrs + 2) * sizeof *all);
	all[0] = mz_named(z, "sym_name", mlirStringAttrGet(z->ctx, mz_str(name)));
	all[1] = mz_named(z, "function_type", mlirTypeAttrGet(ft));
	if (nattrs)
		memcpy(all + 2, attrs, (size_t)nattrs * sizeof *all);
	MlirBlock saved = z->block;
	z->block = module_body;
	MlirOperation f = mz_op(z, "func.func", 0, NULL, 0, NULL, nattrs + 2, all, 1, &body);
	z->block = saved;
	return f;
}

static MlirType arg_type(Mz *z, const MzKernel *mk, const MzArg *a)
{
	const IrKernel *k = mk->k;
	switch (a->kind) {
	case MZ_ARG_SCALAR: return mz_memref(z, k->scalars[a->index]->dtype, 0, NULL, "smem");
	case MZ_ARG_PREFETCH: {
		const Type *t = k->operands[a->index]->array;
		return mz_memref(z, t->dtype, t->rank, mk->dims[a->index], "smem");
	}
	case MZ_ARG_SCRATCH: {
		const Type *t = k->scratch[a->index]->type;
		return mz_memref(z, t->dtype, t->rank, t->dims, "vmem");
	}
	default: {
		const Type *t = k->operands[a->index]->array;
		return mz_memref(z, t->dtype, t->rank, mk->window[a->index], "vmem");
	}
	}
}

/* One transform function: the operand's index map (block indices), all
 * zeros for a whole array, nothing for a scalar. */
static void build_transform(Mz *z, const MzKernel *mk, const MzArg *a, int w, MlirBlock module_body)
{
	const IrKernel *k = mk->k;
	MlirType i32 = i32_type(z);
	int nin = k->ngrid + mk->nprefetch; /* the grid indices, then the prefetch memrefs (§5.11) */
	MlirType *in = arena_alloc(z->a, (size_t)(nin + 1) * sizeof *in);
	for (int g = 0; g < k->ngrid; g++)
		in[g] = i32;
	for (int p = 0; p < mk->nprefetch; p++)
		in[k->ngrid + p] = arg_type(z, mk, &mk->args[p]);
	int nres = a->kind == MZ_ARG_SCALAR ? 0 : k->operands[a->index]->array->rank;
	MlirType *out = arena_alloc(z->a, (size_t)(nres + 1) * sizeof *out);
	for (int r = 0; r < nres; r++)
		out[r] = i32;
	MlirBlock block;
	MlirRegion region = mz_region(z, nin, in, &block);
	const IrOperand *op = a->kind == MZ_ARG_SCALAR ? NULL : k->operands[a->index];
	if (op && op->has_spec) {
		Lower *L = new_lower(z, mk);
		L->entry = block;
		count_uses(L, op->index_map);
		lower_region(L, op->index_map, block, TERM_TRANSFORM, NULL);
	} else {
		/* Pallas' default index map: a literal 0 per dim. */
		MlirBlock saved = z->block;
		z->block = block;
		MlirValue *zeros = arena_alloc(z->a, (size_t)(nres + 1) * sizeof *zeros);
		for (int r = 0; r < nres; r++)
			zeros[r] = mz_const_int(z, i32, 0);
		(void)mz_const_int(z, i32, 0);
		mz_op(z, "func.return", 0, NULL, nres, zeros, 0, NULL, 0, NULL);
		z->block = saved;
	}
	char *name = arena_printf(z->a, "transform_%d", w);
	make_func(z, module_body, name, nin, in, nres, out, 0, NULL, region);
}

void mz_build_kernel(Mz *z, const MzKernel *mk, MlirBlock module_body)
{
	const IrKernel *k = mk->k;
	int nin = k->ngrid + mk->nargs;
	MlirType *types = arena_alloc(z->a, (size_t)(nin + 1) * sizeof *types);
	for (int g = 0; g < k->ngrid; g++)
		types[g] = i32_type(z);
	for (int a = 0; a < mk->nargs; a++)
		types[k->ngrid + a] = arg_type(z, mk, &mk->args[a]);

	/* The function's attributes (MLIR keeps them sorted by name). */
	MlirNamedAttribute attrs[6];
	int na = 0;
	MlirAttribute *sem = arena_alloc(z->a, (size_t)(k->ngrid + 1) * sizeof *sem);
	for (int g = 0; g < k->ngrid; g++)
		sem[g] = mz_attrf(z, "#tpu.dimension_semantics<%s>",
		                  k->semantics[g] == AXIS_ARBITRARY ? "arbitrary" : "parallel");
	attrs[na++] = mz_named(z, "dimension_semantics", mlirArrayAttrGet(z->ctx, k->ngrid, sem));
	if (k->ngrid > 0)
		attrs[na++] = mz_named(z, "iteration_bounds", mz_i64_array(z, k->ngrid, mk->grid));
	MlirType i64 = mlirIntegerTypeGet(z->ctx, 64);
	attrs[na++] = mz_named(z, "scalar_prefetch", mlirIntegerAttrGet(i64, mk->nprefetch));
	attrs[na++] = mz_named(z, "scratch_operands", mlirIntegerAttrGet(i64, k->nscratch));
	attrs[na++] = mz_named(z, "tpu.core_type", mz_attr(z, "#tpu.core_type<tc>"));
	if (k->ngrid > 0) {
		MlirAttribute *wp = arena_alloc(z->a, (size_t)(mk->nwindows + 1) * sizeof *wp);
		for (int w = 0; w < mk->nwindows; w++) {
			const MzArg *a = &mk->args[mk->nprefetch + w];
			MlirNamedAttribute p[3];
			int np = 0;
			bool scalar = a->kind == MZ_ARG_SCALAR;
			if (!scalar && mk->trivial[a->index])
				p[np++] = mz_named(z, "pipeline_mode", mz_attr(z, "#tpu.pipeline_mode<synchronous>"));
			p[np++] = mz_named(z, "transform_indices",
			                   mlirFlatSymbolRefAttrGet(z->ctx, mz_str(arena_printf(z->a, "transform_%d", w))));
			int rank = scalar ? 0 : k->operands[a->index]->array->rank;
			p[np++] = mz_named(z, "window_bounds", mz_i64_array(z, rank, scalar ? NULL : mk->window[a->index]));
			wp[w] = mlirDictionaryAttrGet(z->ctx, np, p);
		}
		attrs[na++] = mz_named(z, "window_params", mlirArrayAttrGet(z->ctx, mk->nwindows, wp));
	}

	MlirBlock entry;
	MlirRegion region = mz_region(z, nin, types, &entry);
	Lower *L = new_lower(z, mk);
	L->entry = entry;
	L->windows = arena_alloc(z->a, (size_t)(k->noperands + 1) * sizeof *L->windows);
	L->smem = arena_alloc(z->a, (size_t)(k->nscalars + 1) * sizeof *L->smem);
	L->scratch = arena_alloc(z->a, (size_t)(k->nscratch + 1) * sizeof *L->scratch);
	for (int a = 0; a < mk->nargs; a++) {
		MlirValue v = mlirBlockGetArgument(entry, k->ngrid + a);
		const MzArg *arg = &mk->args[a];
		if (arg->kind == MZ_ARG_SCALAR)
			L->smem[arg->index] = v;
		else if (arg->kind == MZ_ARG_SCRATCH)
			L->scratch[arg->index] = v;
		else
			L->windows[arg->index] = v;
	}
	count_uses(L, k->body);
	mark_folds(L, k->body);
	/* The body's Refs are the windows and scratch memrefs (ref_view); its
	 * scalars and sizes are materialised on first use (get). */
	MlirBlock saved = z->block;
	z->block = entry;
	for (const Inst *i = k->body->first; i; i = i->next) {
		if (i->op == IR_YIELD)
			mz_op(z, "func.return", 0, NULL, 0, NULL, 0, NULL, 0, NULL);
		else
			lower_inst(L, i);
	}
	z->block = saved;
	make_func(z, module_body, k->name, nin, types, 0, NULL, na, attrs, region);

	if (k->ngrid > 0)
		for (int w = 0; w < mk->nwindows; w++)
			build_transform(z, mk, &mk->args[mk->nprefetch + w], w, module_body);
}
