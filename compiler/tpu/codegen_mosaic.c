/* codegen_mosaic.c - the Mosaic TPU back end's driver (--target=mosaic-tpu):
 * checks every kernel (mosaic_check.c), builds its MLIR module through the
 * C API (mosaic_build.c, mosaic_body.c), verifies it and writes it in the
 * form asked for (mosaic_emit.c).
 *
 * Text and bytecode hold one module: the kernel's own when the file has
 * one kernel (the form JAX gives the TPU compiler), else an outer module
 * holding one nested module per kernel, named after it.  The custom-call
 * form is one JSON object per kernel and line, each with its own module. */
#include "mosaic_priv.h"

#include <stdlib.h>
#include <string.h>

/* Verifies a module; a failure is a bug in this back end. */
static void verify(MlirOperation module, const char *what)
{
	if (!mlirOperationVerify(module)) {
		mlirOperationDump(module);
		internal_error("mosaic: the MLIR module of %s does not verify", what);
	}
}

/* A module holding the kernel mk (and its transforms). */
static MlirModule kernel_module(Mz *z, const MzKernel *mk)
{
	MlirModule m = mlirModuleCreateEmpty(z->loc);
	mz_build_kernel(z, mk, mlirModuleGetBody(m));
	return m;
}

bool codegen_mosaic(Compiler *cc, IrModule *m, MosaicEmit emit, CodegenOutput *out)
{
	Arena *a = arena_new();
	MzKernel *mks = arena_alloc(a, (size_t)(m->nkernels + 1) * sizeof *mks);
	bool ok = true;
	for (int i = 0; i < m->nkernels; i++)
		ok = mz_check_kernel(cc, a, m->kernels[i], &mks[i]) && ok;
	if (!ok) {
		arena_free(a);
		return false;
	}

	Mz z;
	mz_init(&z, cc, a);
	StrBuf buf = {0};
	if (emit == MOSAIC_EMIT_CUSTOM_CALL) {
		for (int i = 0; i < m->nkernels; i++) {
			MlirModule km = kernel_module(&z, &mks[i]);
			MlirOperation op = mlirModuleGetOperation(km);
			verify(op, m->kernels[i]->name);
			mz_emit_custom_call(&z, &mks[i], op, &buf);
			mlirModuleDestroy(km);
		}
	} else {
		MlirModule top;
		if (m->nkernels == 1) {
			top = kernel_module(&z, &mks[0]);
		} else {
			top = mlirModuleCreateEmpty(z.loc);
			MlirBlock body = mlirModuleGetBody(top);
			for (int i = 0; i < m->nkernels; i++) {
				MlirModule km = kernel_module(&z, &mks[i]);
				MlirOperation op = mlirModuleGetOperation(km);
				mlirOperationSetInherentAttributeByName(
					op, mz_str("sym_name"), mlirStringAttrGet(z.ctx, mz_str(m->kernels[i]->name)));
				mlirBlockAppendOwnedOperation(body, op); /* the outer module owns it now */
			}
		}
		MlirOperation op = mlirModuleGetOperation(top);
		verify(op, m->source ? m->source : "the input");
		if (emit == MOSAIC_EMIT_MLIR)
			mz_emit_text(op, &buf);
		else
			mz_emit_bytecode(op, &buf);
		mlirModuleDestroy(top);
	}
	mz_finish(&z);
	arena_free(a);
	if (!buf.data)
		strbuf_put(&buf, "", 0);
	out->data = buf.data;
	out->size = buf.len;
	return true;
}
