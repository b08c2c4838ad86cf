/* mosaic_emit.c - the output forms of the Mosaic back end: MLIR text,
 * MLIR bytecode, and the tpu_custom_call description JAX would build.
 *
 * The custom call's body is what JAX's _lower_mosaic_module_to_asm
 * (jax/_src/tpu_custom_call.py) produces: the module after the
 * mosaic-serde pass (every operation but the module renamed to
 * stable_mosaic.<name>, all attributes, inherent ones included, kept as
 * attributes, and stable_mosaic.version on the module), written as MLIR
 * bytecode of version 0, in base64.  The rest of the JSON object follows
 * CustomCallBackendConfig.to_json for a TensorCore kernel. */
#include "mosaic_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the buffer -------------------------------------------------------------- */

void mz_print_cb(MlirStringRef s, void *buf)
{
	strbuf_put(buf, s.data, s.length);
}

/* ---- text and bytecode ------------------------------------------------------------ */

/* LLVM 22 prints vector.extract_strided_slice's attributes in braces,
 * `%0 {offsets = [..], sizes = [..], strides = [..]} : T to U`; jaxlib's
 * MLIR (which JAX users read the text with) spells the same op without
 * them, as Pallas prints it.  Writes that form: the braces dropped. */
static void put_text(StrBuf *b, const char *t, size_t n)
{
	static const char op[] = "vector.extract_strided_slice %";
	const char *end = t + n;
	for (const char *p; (p = memmem(t, (size_t)(end - t), op, sizeof op - 1)) != NULL;) {
		const char *open = memchr(p, '{', (size_t)(end - p)), *nl = memchr(p, '\n', (size_t)(end - p));
		const char *close = open ? memchr(open, '}', (size_t)(end - open)) : NULL;
		if (!close || (nl && close > nl)) {
			strbuf_put(b, t, (size_t)(p + sizeof op - 1 - t));
			t = p + sizeof op - 1;
			continue;
		}
		strbuf_put(b, t, (size_t)(open - t));
		strbuf_put(b, open + 1, (size_t)(close - open - 1));
		t = close + 1;
	}
	strbuf_put(b, t, (size_t)(end - t));
}

void mz_emit_text(MlirOperation module, StrBuf *b)
{
	StrBuf raw = {0};
	MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
	mlirOpPrintingFlagsEnableDebugInfo(flags, false, false);
	mlirOperationPrintWithFlags(module, flags, mz_print_cb, &raw);
	mlirOpPrintingFlagsDestroy(flags);
	put_text(b, raw.data ? raw.data : "", raw.len);
	free(raw.data);
	if (b->len == 0 || b->data[b->len - 1] != '\n')
		strbuf_puts(b, "\n");
}

/* Bytecode of the given version (-1: the current one). */
static void write_bytecode(MlirOperation op, int64_t version, StrBuf *b)
{
	MlirBytecodeWriterConfig cfg = mlirBytecodeWriterConfigCreate();
	if (version >= 0)
		mlirBytecodeWriterConfigDesiredEmitVersion(cfg, version);
	MlirLogicalResult r = mlirOperationWriteBytecodeWithConfig(op, cfg, mz_print_cb, b);
	mlirBytecodeWriterConfigDestroy(cfg);
	if (mlirLogicalResultIsFailure(r))
		internal_error("mosaic: MLIR cannot write bytecode of version %lld", (long long)version);
}

/* Version 0, as JAX writes its bodies: the inherent attributes go in the
 * attribute dictionaries, so newer MLIRs (jaxlib's) read it too. */
void mz_emit_bytecode(MlirOperation module, StrBuf *b)
{
	write_bytecode(module, 0, b);
}

/* ---- mosaic-serde ---------------------------------------------------------------------- */

static void serde_block(Mz *z, MlirBlock block);

/* Replaces op (in its block) by stable_mosaic.<its name> with the same
 * operands, results, attributes and regions. */
static void serde_op(Mz *z, MlirBlock block, MlirOperation op)
{
	for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++)
		for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r)); !mlirBlockIsNull(b);
		     b = mlirBlockGetNextInRegion(b))
			serde_block(z, b);
	MlirIdentifier id = mlirOperationGetName(op);
	MlirStringRef name = mlirIdentifierStr(id);
	char *mangled = arena_printf(z->a, "stable_mosaic.%.*s", (int)name.length, name.data);
	MlirOperationState st = mlirOperationStateGet(mz_str(mangled), mlirOperationGetLocation(op));
	intptr_t nres = mlirOperationGetNumResults(op), nargs = mlirOperationGetNumOperands(op);
	intptr_t nattrs = mlirOperationGetNumAttributes(op), nreg = mlirOperationGetNumRegions(op);
	MlirType *types = arena_alloc(z->a, (size_t)(nres + 1) * sizeof *types);
	for (intptr_t i = 0; i < nres; i++)
		types[i] = mlirValueGetType(mlirOperationGetResult(op, i));
	MlirValue *args = arena_alloc(z->a, (size_t)(nargs + 1) * sizeof *args);
	for (intptr_t i = 0; i < nargs; i++)
		args[i] = mlirOperationGetOperand(op, i);
	/* All attributes: the inherent ones (properties) too, as the pass's
	 * Operation::getAttrs does. */
	MlirNamedAttribute *attrs = arena_alloc(z->a, (size_t)(nattrs + 1) * sizeof *attrs);
	for (intptr_t i = 0; i < nattrs; i++)
		attrs[i] = mlirOperationGetAttribute(op, i);
	MlirRegion *regs = arena_alloc(z->a, (size_t)(nreg + 1) * sizeof *regs);
	for (intptr_t i = 0; i < nreg; i++) {
		regs[i] = mlirRegionCreate();
		mlirRegionTakeBody(regs[i], mlirOperationGetRegion(op, i));
	}
	mlirOperationStateAddResults(&st, nres, types);
	mlirOperationStateAddOperands(&st, nargs, args);
	mlirOperationStateAddAttributes(&st, nattrs, attrs);
	mlirOperationStateAddOwnedRegions(&st, nreg, regs);
	MlirOperation repl = mlirOperationCreate(&st);
	if (mlirOperationIsNull(repl))
		internal_error("mosaic: cannot create %s", mangled);
	mlirBlockInsertOwnedOperationBefore(block, op, repl);
	for (intptr_t i = 0; i < nres; i++)
		mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, i), mlirOperationGetResult(repl, i));
	mlirOperationRemoveFromParent(op);
	mlirOperationDestroy(op);
}

static void serde_block(Mz *z, MlirBlock block)
{
	MlirOperation op = mlirBlockGetFirstOperation(block);
	while (!mlirOperationIsNull(op)) {
		MlirOperation next = mlirOperationGetNextInBlock(op);
		serde_op(z, block, op);
		op = next;
	}
}

/* ---- the custom call -------------------------------------------------------------------- */

static void put_base64(StrBuf *b, const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		q[0] = tab[v >> 18 & 63];
		q[1] = tab[v >> 12 & 63];
		q[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? tab[v & 63] : '=';
		strbuf_put(b, q, 4);
	}
}

/* {"shape": [..], "dtype": "f32"} */
static void put_array(StrBuf *b, DType dt, int rank, const int64_t *dims)
{
	strbuf_puts(b, "{\"shape\": [");
	for (int d = 0; d < rank; d++)
		strbuf_printf(b, "%s%lld", d ? ", " : "", (long long)dims[d]);
	strbuf_printf(b, "], \"dtype\": \"%s\"}", dtype_str(dt));
}

void mz_emit_custom_call(Mz *z, const MzKernel *mk, MlirOperation module, StrBuf *b)
{
	const IrKernel *k = mk->k;
	/* mosaic-serde{serialize=true} on a copy */
	MlirOperation copy = mlirOperationClone(module);
	MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(copy, 0));
	serde_block(z, body);
	mlirOperationSetDiscardableAttributeByName(
		copy, mz_str("stable_mosaic.version"),
		mlirIntegerAttrGet(mlirIntegerTypeGet(z->ctx, 64), MZ_SERDE_VERSION));
	StrBuf bc = {0};
	write_bytecode(copy, 0, &bc);
	mlirOperationDestroy(copy);

	strbuf_puts(b, "{\"custom_call_config\": {\"body\": \"");
	put_base64(b, (const unsigned char *)bc.data, bc.len);
	strbuf_puts(b, "\", \"serialization_format\": 1, \"needs_layout_passes\": true}");
	free(bc.data);
	strbuf_printf(b, ", \"kernel_name\": \"%s\", \"operands\": [", k->name);
	int n = 0;
	for (int a = 0; a < mk->nprefetch + mk->nwindows; a++) { /* the prefetch arrays first (§5.11) */
		const MzArg *arg = &mk->args[a];
		if (arg->kind == MZ_ARG_OUTPUT)
			continue;
		strbuf_puts(b, n++ ? ", " : "");
		if (arg->kind == MZ_ARG_SCALAR)
			put_array(b, k->scalars[arg->index]->dtype, 0, NULL);
		else
			put_array(b, k->operands[arg->index]->array->dtype, k->operands[arg->index]->array->rank,
			          mk->dims[arg->index]);
	}
	strbuf_puts(b, "], \"results\": [");
	n = 0;
	for (int a = mk->nprefetch; a < mk->nprefetch + mk->nwindows; a++) {
		const MzArg *arg = &mk->args[a];
		if (arg->kind != MZ_ARG_OUTPUT)
			continue;
		strbuf_puts(b, n++ ? ", " : "");
		put_array(b, k->operands[arg->index]->array->dtype, k->operands[arg->index]->array->rank,
		          mk->dims[arg->index]);
	}
	strbuf_puts(b, "]}\n");
}
