/* codegen_mosaic.h - the Mosaic TPU back end (--target=mosaic-tpu): the
 * typed IR right after sema -> one MLIR module per kernel in the format
 * JAX Pallas hands to the TPU compiler:
 * a kernel func.func with the grid, BlockSpec windows and TPU attributes,
 * one @transform_i per windowed operand, and a body of vector / arith /
 * math / scf / memref and tpu ops.
 *
 * codegen_mosaic.c drives it; the private helpers are mosaic_*.c
 * (mosaic_priv.h).  lang-spec/README.md §10.1 "Target notes: mosaic-tpu"
 * lists what a TPU kernel cannot express. */
#ifndef PKC_CODEGEN_MOSAIC_H
#define PKC_CODEGEN_MOSAIC_H

#include "ir.h"

/* What codegen_mosaic writes. */
typedef enum MosaicEmit {
	MOSAIC_EMIT_MLIR,       /* the module as MLIR text */
	MOSAIC_EMIT_MLIRBC,     /* the same module as MLIR bytecode */
	MOSAIC_EMIT_CUSTOM_CALL /* JSON Lines: one tpu_custom_call description per kernel, whose
	                           body is the module after mosaic-serde, as bytecode in base64 */
} MosaicEmit;

/* Compiles every kernel of m (the IR right after sema) for the TPU.  Size
 * symbols must be given values with -D NAME=VALUE (the TPU needs static
 * shapes and a static grid); the Define entries used are marked.
 * Constructs a TPU kernel cannot express are reported with error_at naming
 * the construct, the target and the lang-spec clause.  The module is built
 * through the MLIR C API and verified before it is written; a verifier
 * failure is an internal error (exit 70).  Returns false, with out
 * untouched, if an error was reported.  The output is a function of the IR
 * and the -D values only. */
bool codegen_mosaic(Compiler *cc, IrModule *m, MosaicEmit emit, CodegenOutput *out);

#endif
