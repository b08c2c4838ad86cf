/* mosaic_priv.h - private to the Mosaic TPU back end (codegen_mosaic.c,
 * mosaic_*.c).  Three layers:
 *
 *   mosaic_check.c  what the TPU can express: resolves the size symbols
 *                   (-D), evaluates the grid and requires, applies the
 *                   block tiling rule, and rejects unsupported constructs
 *                   with a diagnostic -> an MzKernel;
 *   mosaic_build.c  thin helpers over the MLIR C API (types, attributes,
 *                   generic op creation);
 *   mosaic_body.c   lowers IR regions (kernel bodies, index maps) to ops;
 *   mosaic_emit.c   the output forms: text, bytecode, and the
 *                   tpu_custom_call JSON (mosaic-serde renaming, base64).
 *
 * The MLIR module is the back end's only IR: nothing here outlives one
 * call of codegen_mosaic. */
#ifndef PKC_MOSAIC_PRIV_H
#define PKC_MOSAIC_PRIV_H

#include "codegen_mosaic.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/IR.h>
#include <mlir-c/Support.h>

/* The target's name in diagnostics. */
#define MZ_TARGET "--target=mosaic-tpu"

/* The stable_mosaic.version written by mosaic-serde in the custom-call
 * body: JAX 0.11.2's _FWD_COMPAT_VERSION, what it writes when lowering for
 * a TPU it cannot query. */
#define MZ_SERDE_VERSION 15

/* ---- a kernel as the TPU sees it (mosaic_check.c) ----------------------- */

/* What one argument of the kernel function is (after the grid indices). */
typedef enum MzArgKind {
	MZ_ARG_PREFETCH, /* a prefetch operand (§5.11): the whole array in SMEM, no window */
	MZ_ARG_INPUT,  /* an `in` operand: a VMEM window */
	MZ_ARG_SCALAR, /* a scalar parameter: a rank-0 SMEM operand, an input */
	MZ_ARG_OUTPUT, /* an `out` operand: a VMEM window */
	MZ_ARG_SCRATCH /* a scratch buffer in VMEM */
} MzArgKind;

typedef struct MzArg {
	MzArgKind kind; /* what it is */
	int index;      /* its index in k->operands, k->scalars or k->scratch */
} MzArg;

/* One kernel with every size resolved, ready to be built. */
typedef struct MzKernel {
	const IrKernel *k; /* the kernel (IR right after sema) */
	int64_t *sizes;    /* the value of each size symbol (k->nsizes), from -D */
	int64_t *grid;     /* the static grid extents (k->ngrid) */
	int64_t **dims;    /* per operand: the array's static extents */
	int64_t **window;  /* per operand: its window (block shape, squeezed dims as 1; the array without a spec) */
	bool *trivial;     /* per operand: the window is the whole array at block index 0 (single-buffered) */
	MzArg *args;       /* the kernel function's arguments after the grid indices */
	int nargs;         /* prefetch arrays first, then inputs (MZ_ARG_INPUT, MZ_ARG_SCALAR), outputs, scratch */
	int nprefetch;     /* the prefetch arrays: args[0 .. nprefetch) (Pallas' scalar_prefetch) */
	int nwindows;      /* arguments with a window and a transform function, args[nprefetch ..): the inputs
	                      and outputs */
} MzKernel;

/* Checks that k can run on the TPU and resolves its static shape (arena
 * a).  Reports every problem with error_at and returns false if any. */
bool mz_check_kernel(Compiler *cc, Arena *a, const IrKernel *k, MzKernel *out);

/* Evaluates a scalar integer region whose arguments are the size symbols
 * followed by the scalar parameters (the grid and requires regions) with
 * the given sizes: results[i] and known[i] for each yielded value; for an
 * unknown one (it depends on a scalar parameter, or on an operation the
 * evaluator does not fold) blame[i] is the value responsible (or NULL).
 * Returns whether every result is known. */
bool mz_eval_region(const IrKernel *k, const Region *r, const int64_t *sizes, int64_t *results, bool *known,
                    const Value **blame);

/* ---- MLIR building (mosaic_build.c) -------------------------------------- */

/* The builder: the MLIR context and where new operations go. */
typedef struct Mz {
	Compiler *cc;          /* for diagnostics */
	Arena *a;              /* scratch memory of this compilation */
	MlirContext ctx;       /* upstream dialects registered, unregistered ones (tpu) allowed */
	MlirLocation loc;      /* the location of every operation (unknown: output is location-free) */
	MlirBlock block;       /* new operations are appended here */
	MlirAttribute fastmath;/* #arith.fastmath<none>, set on ops that have the attribute (as JAX does) */
} Mz;

/* Creates the context (registering the upstream dialects) and the builder;
 * mz_finish destroys the context. */
void mz_init(Mz *z, Compiler *cc, Arena *a);
void mz_finish(Mz *z);

MlirStringRef mz_str(const char *s);
/* Parses an attribute or a type (internal error if it does not parse). */
MlirAttribute mz_attr(Mz *z, const char *text);
MlirAttribute mz_attrf(Mz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
MlirNamedAttribute mz_named(Mz *z, const char *name, MlirAttribute attr);
MlirAttribute mz_i64_array(Mz *z, int n, const int64_t *v);   /* array<i64: ...> */
MlirAttribute mz_i32_array(Mz *z, int n, const int32_t *v);   /* array<i32: ...> */

MlirType mz_elem_type(Mz *z, DType dt);                      /* i1 i8 ... f32, signless integers */
MlirType mz_type(Mz *z, DType dt, int rank, const int64_t *dims); /* scalar (rank 0) or vector */
MlirType mz_value_type(Mz *z, const Type *t);                /* of a TY_VALUE */
/* memref<dims x dt, #tpu.memory_space<space>> */
MlirType mz_memref(Mz *z, DType dt, int rank, const int64_t *dims, const char *space);

/* Creates an operation at the end of z->block (regions: owned, given
 * filled).  Sets fastmath = none on ops that have that inherent attribute. */
MlirOperation mz_op(Mz *z, const char *name, int nresults, const MlirType *results, int nargs,
                    const MlirValue *args, int nattrs, const MlirNamedAttribute *attrs, int nregions,
                    MlirRegion *regions);
/* The same, returning the single result. */
MlirValue mz_op1(Mz *z, const char *name, MlirType result, int nargs, const MlirValue *args, int nattrs,
                 const MlirNamedAttribute *attrs);

MlirValue mz_const(Mz *z, MlirType t, MlirAttribute value);   /* arith.constant */
MlirValue mz_const_int(Mz *z, MlirType t, int64_t v);         /* scalar integer or index constant */
MlirValue mz_const_float(Mz *z, MlirType t, double v);        /* scalar float constant */
/* arith.constant dense<v> : t (t a vector type; v an element attribute) */
MlirValue mz_const_splat(Mz *z, MlirType vector_type, MlirAttribute element);
/* A scalar constant broadcast to t when t is a vector (as JAX materialises splats). */
MlirValue mz_splat_int(Mz *z, MlirType t, int64_t v);
MlirValue mz_splat_float(Mz *z, MlirType t, double v);

/* A new region holding one block with arguments of the given types. */
MlirRegion mz_region(Mz *z, int nargs, const MlirType *types, MlirBlock *block);

/* ---- lowering IR regions (mosaic_body.c) --------------------------------- */

/* Builds the kernel function (named after the kernel) and its transform
 * functions @transform_<i> at the end of module_body. */
void mz_build_kernel(Mz *z, const MzKernel *mk, MlirBlock module_body);

/* ---- output (mosaic_emit.c) ---------------------------------------------- */

void mz_print_cb(MlirStringRef s, void *buf); /* MlirStringCallback appending to a StrBuf */

/* The module as text, as bytecode, or as the custom-call JSON line of one
 * kernel (mk; module holds that kernel alone), appended to b. */
void mz_emit_text(MlirOperation module, StrBuf *b);
void mz_emit_bytecode(MlirOperation module, StrBuf *b);
void mz_emit_custom_call(Mz *z, const MzKernel *mk, MlirOperation module, StrBuf *b);

#endif
