/* mosaic_build.c - thin helpers over the MLIR C API for the Mosaic back
 * end: the context, types, attributes and generic operation creation.
 *
 * The upstream dialects the kernels use (func, arith, math, vector, scf,
 * memref) are registered and loaded, so their operations are built and
 * verified as MLIR defines them.  The TPU dialect is not part of upstream
 * MLIR: its operations are created as unregistered operations (the context
 * allows them) and its attributes are parsed into opaque attributes that
 * print, and serialise to bytecode, as the TPU dialect's own syntax
 * (#tpu.memory_space<vmem>), which jaxlib and the TPU compiler parse back
 * into the real attributes. */
#include "mosaic_priv.h"

#include <mlir-c/Dialect/Arith.h>
#include <mlir-c/Dialect/Func.h>
#include <mlir-c/Dialect/Math.h>
#include <mlir-c/Dialect/MemRef.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Dialect/Vector.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- context --------------------------------------------------------------- */

void mz_init(Mz *z, Compiler *cc, Arena *a)
{
	memset(z, 0, sizeof *z);
	z->cc = cc;
	z->a = a;
	z->ctx = mlirContextCreateWithThreading(false);
	MlirDialectHandle handles[] = {
		mlirGetDialectHandle__func__(), mlirGetDialectHandle__arith__(), mlirGetDialectHandle__math__(),
		mlirGetDialectHandle__vector__(), mlirGetDialectHandle__scf__(), mlirGetDialectHandle__memref__(),
	};
	for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++)
		mlirDialectHandleLoadDialect(handles[i], z->ctx);
	mlirContextSetAllowUnregisteredDialects(z->ctx, true);
	z->loc = mlirLocationUnknownGet(z->ctx);
	z->fastmath = mz_attr(z, "#arith.fastmath<none>");
}

void mz_finish(Mz *z)
{
	mlirContextDestroy(z->ctx);
	z->ctx = (MlirContext){NULL};
}

/* ---- attributes -------------------------------------------------------------- */

MlirStringRef mz_str(const char *s)
{
	return mlirStringRefCreateFromCString(s);
}

MlirAttribute mz_attr(Mz *z, const char *text)
{
	MlirAttribute a = mlirAttributeParseGet(z->ctx, mz_str(text));
	if (mlirAttributeIsNull(a))
		internal_error("mosaic: cannot parse the attribute '%s'", text);
	return a;
}

MlirAttribute mz_attrf(Mz *z, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char buf[512];
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	PKC_ASSERT(n >= 0 && (size_t)n < sizeof buf);
	return mz_attr(z, buf);
}

MlirNamedAttribute mz_named(Mz *z, const char *name, MlirAttribute attr)
{
	return mlirNamedAttributeGet(mlirIdentifierGet(z->ctx, mz_str(name)), attr);
}

MlirAttribute mz_i64_array(Mz *z, int n, const int64_t *v)
{
	return mlirDenseI64ArrayGet(z->ctx, n, v);
}

MlirAttribute mz_i32_array(Mz *z, int n, const int32_t *v)
{
	return mlirDenseI32ArrayGet(z->ctx, n, v);
}

/* ---- types ------------------------------------------------------------------- */

MlirType mz_elem_type(Mz *z, DType dt)
{
	switch (dt) {
	case DT_F16: return mlirF16TypeGet(z->ctx);
	case DT_BF16: return mlirBF16TypeGet(z->ctx);
	case DT_F32: return mlirF32TypeGet(z->ctx);
	case DT_F64: return mlirF64TypeGet(z->ctx);
	default:
		PKC_ASSERT(dt != DT_NONE);
		return mlirIntegerTypeGet(z->ctx, (unsigned)dtype_bits(dt));
	}
}

MlirType mz_type(Mz *z, DType dt, int rank, const int64_t *dims)
{
	MlirType e = mz_elem_type(z, dt);
	return rank == 0 ? e : mlirVectorTypeGet(rank, dims, e);
}

MlirType mz_value_type(Mz *z, const Type *t)
{
	PKC_ASSERT(t->kind == TY_VALUE);
	return mz_type(z, t->dtype, t->rank, t->dims);
}

MlirType mz_memref(Mz *z, DType dt, int rank, const int64_t *dims, const char *space)
{
	/* The memory space is a TPU attribute: opaque to upstream MLIR, whose
	 * memref verifier only admits attributes of registered dialects.  So
	 * the type is made without that check; the TPU dialect, where the
	 * module is read, defines the attribute. */
	MlirAttribute ms = mz_attrf(z, "#tpu.memory_space<%s>", space);
	return mlirMemRefTypeGet(mz_elem_type(z, dt), rank, dims, mlirAttributeGetNull(), ms);
}

/* ---- operations -------------------------------------------------------------- */

/* The float ops that have a fastmath attribute (the ones this back end
 * creates). */
static bool takes_fastmath(const char *name)
{
	static const char *const arith[] = {"addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "negf",
	                                    "cmpf"};
	if (strncmp(name, "math.", 5) == 0) /* not the integer ones */
		return strcmp(name, "math.absi") != 0 && strcmp(name, "math.ctlz") != 0 && strcmp(name, "math.ctpop") != 0;
	if (strncmp(name, "arith.", 6) != 0)
		return false;
	for (size_t i = 0; i < sizeof arith / sizeof arith[0]; i++)
		if (strcmp(name + 6, arith[i]) == 0)
			return true;
	return false;
}

MlirOperation mz_op(Mz *z, const char *name, int nresults, const MlirType *results, int nargs,
                    const MlirValue *args, int nattrs, const MlirNamedAttribute *attrs, int nregions,
                    MlirRegion *regions)
{
	MlirOperationState st = mlirOperationStateGet(mz_str(name), z->loc);
	if (nresults)
		mlirOperationStateAddResults(&st, nresults, results);
	if (nargs)
		mlirOperationStateAddOperands(&st, nargs, args);
	if (nattrs)
		mlirOperationStateAddAttributes(&st, nattrs, attrs);
	if (nregions)
		mlirOperationStateAddOwnedRegions(&st, nregions, regions);
	MlirOperation op = mlirOperationCreate(&st);
	if (mlirOperationIsNull(op))
		internal_error("mosaic: cannot create the operation %s", name);
	/* JAX's op builders always spell out fastmath = none; do the same, so
	 * the serialised body carries the attributes JAX's does. */
	if (takes_fastmath(name))
		mlirOperationSetInherentAttributeByName(op, mz_str("fastmath"), z->fastmath);
	mlirBlockAppendOwnedOperation(z->block, op);
	return op;
}

MlirValue mz_op1(Mz *z, const char *name, MlirType result, int nargs, const MlirValue *args, int nattrs,
                 const MlirNamedAttribute *attrs)
{
	return mlirOperationGetResult(mz_op(z, name, 1, &result, nargs, args, nattrs, attrs, 0, NULL), 0);
}

MlirValue mz_const(Mz *z, MlirType t, MlirAttribute value)
{
	MlirNamedAttribute v = mz_named(z, "value", value);
	return mz_op1(z, "arith.constant", t, 0, NULL, 1, &v);
}

MlirValue mz_const_int(Mz *z, MlirType t, int64_t v)
{
	return mz_const(z, t, mlirIntegerAttrGet(t, v));
}

MlirValue mz_const_float(Mz *z, MlirType t, double v)
{
	return mz_const(z, t, mlirFloatAttrDoubleGet(z->ctx, t, v));
}

MlirValue mz_const_splat(Mz *z, MlirType vector_type, MlirAttribute element)
{
	return mz_const(z, vector_type, mlirDenseElementsAttrSplatGet(vector_type, element));
}

/* A scalar constant, broadcast when t is a vector. */
static MlirValue splat_of(Mz *z, MlirType t, MlirValue scalar)
{
	if (!mlirTypeIsAVector(t))
		return scalar;
	return mz_op1(z, "vector.broadcast", t, 1, &scalar, 0, NULL);
}

MlirValue mz_splat_int(Mz *z, MlirType t, int64_t v)
{
	MlirType e = mlirTypeIsAVector(t) ? mlirShapedTypeGetElementType(t) : t;
	return splat_of(z, t, mz_const_int(z, e, v));
}

MlirValue mz_splat_float(Mz *z, MlirType t, double v)
{
	MlirType e = mlirTypeIsAVector(t) ? mlirShapedTypeGetElementType(t) : t;
	return splat_of(z, t, mz_const_float(z, e, v));
}

MlirRegion mz_region(Mz *z, int nargs, const MlirType *types, MlirBlock *block)
{
	MlirLocation locs[nargs > 0 ? nargs : 1];
	for (int i = 0; i < nargs; i++)
		locs[i] = z->loc;
	MlirRegion r = mlirRegionCreate();
	*block = mlirBlockCreate(nargs, types, locs);
	mlirRegionAppendOwnedBlock(r, *block);
	return r;
}
