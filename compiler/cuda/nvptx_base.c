/* nvptx_base.c - the CUDA back end's base, which every other nvptx_*.c file
 * uses: the targets and their shared-memory limits, diagnostics, NVVM
 * intrinsic calls, the CTA barrier and the conversion scopes. */
#include "nvptx.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- targets ------------------------------------------------------------------ */

/* PTX ISA versions: the oldest that has everything the generated code may
 * use on that target (mma.sync, ldmatrix, cp.async need 7.0), so the PTX
 * JIT-compiles with drivers as old as possible. */
static const GpuTarget gpu_targets[] = {
	{"sm_80", 80, false, "+ptx70"},
	{"sm_86", 86, false, "+ptx71"},
	{"sm_89", 89, false, "+ptx78"},
	{"sm_90", 90, false, "+ptx78"},
	{"sm_90a", 90, true, "+ptx80"},
};

const GpuTarget *gpu_target_find(const char *name)
{
	for (size_t i = 0; i < sizeof gpu_targets / sizeof gpu_targets[0]; i++)
		if (strcmp(gpu_targets[i].name, name) == 0)
			return &gpu_targets[i];
	return NULL;
}

const char *gpu_target_list(void)
{
	return "sm_80, sm_86, sm_89, sm_90, sm_90a";
}

/* Most shared memory a CTA may use (dynamic included) per capability. */
uint64_t nv_smem_limit(const GpuTarget *t)
{
	switch (t->sm) {
	case 80: return 166912;
	case 86: case 89: return 101376;
	default: return 232448;
	}
}

uint64_t nv_smem_cap(const Nv *nv)
{
	uint64_t m = UINT64_MAX;
	for (int t = 0; t < nv->opt->ntargets; t++)
		if (nv_smem_limit(nv->opt->targets[t]) < m)
			m = nv_smem_limit(nv->opt->targets[t]);
	return m;
}

/* ---- diagnostics and small helpers ------------------------------------------------- */

bool nv_unsupported(NvFn *f, Loc loc, const char *fmt, ...)
{
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *what = arena_alloc(nv_arena(f), (size_t)(n > 0 ? n : 0) + 1);
	vsnprintf(what, (size_t)(n > 0 ? n : 0) + 1, fmt, aq);
	va_end(aq);
	error_at(f->nv->cc, loc, "%s is not supported yet by --target=%s [§10.4]", what, f->nv->target_name);
	f->g->failed = true;
	return false;
}

bool nv_fail(NvFn *f, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(&f->nv->cc->diag, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
	f->g->failed = true;
	return false;
}

LLVMValueRef nv_intrinsic(NvFn *f, const char *name, LLVMTypeRef *ov, int nov, LLVMValueRef *args, int nargs)
{
	Cg *g = f->g;
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	if (!id)
		internal_error("nvptx: LLVM has no intrinsic %s", name);
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, ov, (size_t)nov);
	LLVMTypeRef fty = LLVMIntrinsicGetType(g->ctx, id, ov, (size_t)nov);
	return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)nargs, "");
}

/* A call of inline PTX text returning ret; with side_effects false LLVM
 * may hoist, merge or drop it like any pure value. */
static LLVMValueRef inline_asm(NvFn *f, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args,
                               int n, bool side_effects)
{
	LLVMTypeRef *pt = arena_alloc(nv_arena(f), (size_t)(n + 1) * sizeof *pt);
	for (int j = 0; j < n; j++)
		pt[j] = LLVMTypeOf(args[j]);
	LLVMTypeRef fty = LLVMFunctionType(ret, pt, (unsigned)n, 0);
	LLVMValueRef asm_ = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), side_effects, 0,
	                                     LLVMInlineAsmDialectATT, 0);
	return LLVMBuildCall2(f->g->b, fty, asm_, args, (unsigned)n, "");
}

LLVMValueRef nv_inline_ptx(NvFn *f, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int n)
{
	return inline_asm(f, ret, text, cons, args, n, true);
}

LLVMValueRef nv_pack_b64(NvFn *f, LLVMValueRef lo, LLVMValueRef hi)
{
	LLVMValueRef args[2] = {lo, hi};
	return inline_asm(f, f->g->t_i64, "mov.b64 $0, {$1, $2};", "=l,r,r", args, 2, false);
}

void nv_bar_sync(NvFn *f)
{
	f->turns_blocked |= f->in_turn;
	LLVMValueRef zero = cg_i32(f->g, 0);
	nv_intrinsic(f, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &zero, 1);
}

/* Every path since the last barrier met one: the tracked accesses go. */
static void forget_accesses(NvFn *f)
{
	for (int s = 0; s < f->nrefs; s++)
		f->rs[s] = (RefState){0};
	f->smem_busy = false;
}

void nv_barrier(NvFn *f)
{
	nv_bar_sync(f);
	forget_accesses(f);
}

void nv_cluster_sync(NvFn *f)
{
	nv_intrinsic(f, "llvm.nvvm.barrier.cluster.arrive.aligned", NULL, 0, NULL, 0);
	nv_intrinsic(f, "llvm.nvvm.barrier.cluster.wait.aligned", NULL, 0, NULL, 0);
}

void nv_cluster_barrier(NvFn *f, LLVMValueRef paired)
{
	Cg *g = f->g;
	if (!paired) {
		nv_barrier(f);
		return;
	}
	LLVMBasicBlockRef both = cg_block(g, "cluster.sync"), alone = cg_block(g, "cta.sync"),
	                  join = cg_block(g, "sync.end");
	LLVMBuildCondBr(g->b, paired, both, alone);
	LLVMPositionBuilderAtEnd(g->b, both);
	nv_cluster_sync(f);
	LLVMBuildBr(g->b, join);
	LLVMPositionBuilderAtEnd(g->b, alone);
	nv_bar_sync(f);
	LLVMBuildBr(g->b, join);
	LLVMPositionBuilderAtEnd(g->b, join);
	forget_accesses(f); /* a barrier of the cluster is one of the CTA too */
}

void nv_scope_push(NvFn *f)
{
	f->depth++;
	if (f->depth >= f->scope_cap) {
		int cap = f->scope_cap ? 2 * f->scope_cap : 16;
		int *s = arena_alloc(nv_arena(f), (size_t)cap * sizeof *s);
		if (f->scope_cap)
			memcpy(s, f->scope_serial, (size_t)f->scope_cap * sizeof *s);
		f->scope_serial = s;
		f->scope_cap = cap;
	}
	f->scope_serial[f->depth] = ++f->next_serial;
}

void nv_scope_pop(NvFn *f)
{
	/* Conversions made in the closing scope are not available outside. */
	while (f->nconv > 0 && f->conv[f->nconv - 1].depth >= f->depth)
		f->nconv--;
	f->depth--;
}
