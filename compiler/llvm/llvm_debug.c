/* llvm_debug.c - debug_print and debug_check (lang-spec §7.19) for both LLVM
 * back ends: the printf text of a format, the values as C varargs take
 * them, and the call: printf on the host, vprintf (its arguments packed in a
 * local buffer, as CUDA's printf does) on the GPU.  The CUDA back end decides
 * which threads print (nvptx.h); these helpers print once where called. */
#include "llvm_util.h"
#include "pk_runtime.h"

#include <string.h>

/* The conversion of a value of dtype dt as cg_debug_promote passes it. */
static const char *conversion(DType dt)
{
	if (dtype_is_float(dt))
		return "%g";
	if (dt == DT_I64)
		return "%lld";
	if (dt == DT_U64)
		return "%llu";
	return dt == DT_U32 ? "%u" : "%d"; /* narrower integers and bool were widened to int */
}

/* A value as a C vararg: floats to double, integers narrower than int (and
 * bool) to int with their signedness. */
static LLVMValueRef promote(Cg *g, LLVMValueRef v, DType dt)
{
	if (dtype_is_float(dt))
		return dt == DT_F64 ? v : LLVMBuildFPExt(g->b, v, g->t_f64, "");
	if (dtype_bits(dt) >= 32 && dt != DT_BOOL)
		return v;
	return dtype_is_unsigned(dt) || dt == DT_BOOL ? LLVMBuildZExt(g->b, v, g->t_i32, "")
	                                              : LLVMBuildSExt(g->b, v, g->t_i32, "");
}

/* fmt with each "{}" replaced by the conversion of the next value, '%'
 * doubled, and a newline appended. */
static const char *printf_format(Cg *g, const char *fmt, const DType *dts)
{
	size_t cap = 2 * strlen(fmt) + 8, n = 0;
	for (const char *c = fmt; (c = strstr(c, "{}")); c += 2)
		cap += 4; /* "%lld" is the longest conversion */
	char *out = arena_alloc(g->cc->arena, cap);
	int k = 0;
	for (const char *c = fmt; *c; c++) {
		if (c[0] == '{' && c[1] == '}') {
			const char *conv = conversion(dts[k++]);
			memcpy(out + n, conv, strlen(conv));
			n += strlen(conv);
			c++;
		} else {
			if (*c == '%')
				out[n++] = '%';
			out[n++] = *c;
		}
	}
	out[n++] = '\n';
	out[n] = '\0';
	return out;
}

/* A local of type t in the function's entry block (so a loop does not grow the stack). */
static LLVMValueRef entry_alloca(Cg *g, LLVMTypeRef t, const char *name)
{
	LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(LLVMGetBasicBlockParent(LLVMGetInsertBlock(g->b)));
	LLVMBuilderRef eb = LLVMCreateBuilderInContext(g->ctx);
	LLVMValueRef first = LLVMGetFirstInstruction(entry);
	if (first)
		LLVMPositionBuilderBefore(eb, first);
	else
		LLVMPositionBuilderAtEnd(eb, entry);
	LLVMValueRef slot = LLVMBuildAlloca(eb, t, name);
	LLVMDisposeBuilder(eb);
	return slot;
}

/* vprintf(fmt, buf): buf holds the promoted values one after the other,
 * each at its natural alignment (a struct), in a local of the entry block. */
static void call_vprintf(Cg *g, const char *fmt, LLVMValueRef *args, int n)
{
	LLVMValueRef buf = LLVMConstNull(g->t_ptr);
	if (n > 0) {
		LLVMTypeRef *ts = arena_alloc(g->cc->arena, (size_t)n * sizeof *ts);
		for (int j = 0; j < n; j++)
			ts[j] = LLVMTypeOf(args[j]);
		LLVMTypeRef st = LLVMStructTypeInContext(g->ctx, ts, (unsigned)n, false);
		LLVMValueRef slot = entry_alloca(g, st, "dbg");
		for (int j = 0; j < n; j++)
			LLVMBuildStore(g->b, args[j], LLVMBuildStructGEP2(g->b, st, slot, (unsigned)j, ""));
		buf = LLVMGetPointerAddressSpace(LLVMTypeOf(slot)) ? LLVMBuildAddrSpaceCast(g->b, slot, g->t_ptr, "")
		                                                   : slot;
	}
	LLVMTypeRef params[2] = {g->t_ptr, g->t_ptr};
	LLVMValueRef all[2] = {LLVMBuildGlobalString(g->b, fmt, "dbg.fmt"), buf};
	cg_call_extern(g, "vprintf", g->t_i32, params, 2, false, all, 2);
}

void cg_debug_print(Cg *g, const char *fmt, LLVMValueRef *vals, const DType *dts, int n)
{
	LLVMValueRef *all = arena_alloc(g->cc->arena, (size_t)(n + 1) * sizeof *all);
	for (int j = 0; j < n; j++)
		all[1 + j] = promote(g, vals[j], dts[j]);
	const char *text = printf_format(g, fmt, dts);
	if (g->nvptx) {
		call_vprintf(g, text, all + 1, n);
		return;
	}
	all[0] = LLVMBuildGlobalString(g->b, text, "dbg.fmt");
	cg_call_extern(g, "printf", g->t_i32, &g->t_ptr, 1, true, all, n + 1);
}

/* The host's debug_print: pk_debug_print(fmt, n, values) of the runtime,
 * which formats scalars as the GPU's printf does and blocks as NumPy
 * (§7.19).  values is a local array of pk_debug_value {dtype, rank, shape,
 * data}: a scalar's data is a local slot holding it in compute form (bool
 * as a byte), a block's the per-program buffer tile-host copied it to. */
void cg_debug_print_host(Cg *g, const char *fmt, LLVMValueRef *vals, const DType *dts, const Type *const *blocks,
                         int n)
{
	_Static_assert((int)PK_DEBUG_BOOL == (int)DT_BOOL && (int)PK_DEBUG_F64 == (int)DT_F64,
	               "pk_debug_dtype numbers dtypes as ir/dtype.h does");
	LLVMTypeRef fields[4] = {g->t_i32, g->t_i32, g->t_ptr, g->t_ptr};
	LLVMTypeRef vt = LLVMStructTypeInContext(g->ctx, fields, 4, false);
	LLVMValueRef arr = LLVMConstNull(g->t_ptr);
	if (n > 0)
		arr = entry_alloca(g, LLVMArrayType2(vt, (uint64_t)n), "dbg.values");
	for (int j = 0; j < n; j++) {
		LLVMValueRef data = vals[j], shape = LLVMConstNull(g->t_ptr);
		int rank = blocks[j] ? blocks[j]->rank : 0;
		if (rank > 0) {
			LLVMValueRef *dims = arena_alloc(g->cc->arena, (size_t)rank * sizeof *dims);
			for (int d = 0; d < rank; d++)
				dims[d] = cg_i64(g, blocks[j]->dims[d]);
			LLVMValueRef init = LLVMConstArray2(g->t_i64, dims, (uint64_t)rank);
			shape = LLVMAddGlobal(g->mod, LLVMTypeOf(init), "dbg.shape");
			LLVMSetInitializer(shape, init);
			LLVMSetGlobalConstant(shape, true);
			LLVMSetLinkage(shape, LLVMPrivateLinkage);
			LLVMSetUnnamedAddress(shape, LLVMGlobalUnnamedAddr);
		} else if (!blocks[j]) {
			LLVMValueRef v = dts[j] == DT_BOOL ? LLVMBuildZExt(g->b, vals[j], g->t_i8, "") : vals[j];
			data = entry_alloca(g, LLVMTypeOf(v), "dbg.scalar");
			LLVMBuildStore(g->b, v, data);
		}
		LLVMValueRef at[2] = {cg_i64(g, 0), cg_i64(g, j)};
		LLVMValueRef slot = LLVMBuildInBoundsGEP2(g->b, LLVMArrayType2(vt, (uint64_t)n), arr, at, 2, "");
		LLVMValueRef f[4] = {cg_i32(g, (int32_t)dts[j]), cg_i32(g, rank), shape, data};
		for (unsigned k = 0; k < 4; k++)
			LLVMBuildStore(g->b, f[k], LLVMBuildStructGEP2(g->b, vt, slot, k, ""));
	}
	LLVMTypeRef params[3] = {g->t_ptr, g->t_i32, g->t_ptr};
	LLVMValueRef args[3] = {LLVMBuildGlobalString(g->b, fmt, "dbg.fmt"), cg_i32(g, n), arr};
	cg_call_extern(g, "pk_debug_print", g->t_void, params, 3, false, args, 3);
}

void cg_debug_check(Cg *g, LLVMValueRef ok, const char *msg, Loc loc)
{
	LLVMBasicBlockRef failed = cg_block(g, "check.failed"), cont = cg_block(g, "check.ok");
	LLVMBuildCondBr(g->b, ok, cont, failed);
	LLVMPositionBuilderAtEnd(g->b, failed);
	const char *text = arena_printf(g->cc->arena, "%s:%d:%d: debug_check failed: %s\n", loc.file, loc.line,
	                                loc.col, msg);
	LLVMValueRef arg = LLVMBuildGlobalString(g->b, text, "dbg.msg");
	if (g->nvptx) {
		call_vprintf(g, "%s", &arg, 1);
		cg_intrinsic(g, "llvm.trap", NULL, NULL, 0);
	} else { /* what the program printed first is not lost in a buffer */
		LLVMValueRef all[3] = {cg_i32(g, 2), LLVMBuildGlobalString(g->b, "%s", "dbg.fmt"), arg};
		LLVMTypeRef params[2] = {g->t_i32, g->t_ptr};
		LLVMValueRef null = LLVMConstNull(g->t_ptr);
		cg_call_extern(g, "fflush", g->t_i32, &g->t_ptr, 1, false, &null, 1);
		cg_call_extern(g, "dprintf", g->t_i32, params, 2, true, all, 3);
		cg_call_extern(g, "abort", g->t_void, NULL, 0, false, NULL, 0);
	}
	LLVMBuildUnreachable(g->b);
	LLVMPositionBuilderAtEnd(g->b, cont);
}
