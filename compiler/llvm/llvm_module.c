/* llvm_module.c - one compilation's LLVM state, for both LLVM back ends:
 * the context (LLVM's errors are pkc bugs), the module and its target, the
 * builder and the common types, verification, and the -O level. */
#include "llvm_util.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Support.h>
#include <llvm-c/TargetMachine.h>

#include <stdlib.h>
#include <string.h>

int cg_opt_level(int opt_level)
{
	return opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level;
}

LLVMCodeGenOptLevel cg_codegen_level(int opt_level)
{
	static const LLVMCodeGenOptLevel levels[4] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
	                                              LLVMCodeGenLevelDefault, LLVMCodeGenLevelAggressive};
	return levels[cg_opt_level(opt_level)];
}

/* Dead-store elimination may walk no memory accesses back from a store
 * (LLVM's -dse-memoryssa-walklimit, default 90): it still removes stores
 * to memory nothing reads, but no longer looks for a later store that
 * overwrites one.  Its walks were a third of the NVPTX passes of a
 * tensor-core kernel (samples/matmul.pk: 41 -> 18-26 ms of LLVM passes;
 * its shared-memory addresses are swizzled, and alias analysis of each
 * pair of accesses decomposes their xor chains).  What it gave up, over
 * the PTX (sm_90a, sm_80) and host assembly of every .pk file in the tree
 * (807 outputs, twenty-seventh session): one PTX store (test/ir/scratch.pk,
 * a scratch block zeroed, then overwritten) and repeated stores in the
 * host code of 8 files (samples/flash_attention.pk's host run no slower).
 * Walk limits of 4 and 8 changed the same files.  A global option, so set
 * once for both back ends before any pass runs: the host code does not
 * depend on the GPU targets given. */
void cg_llvm_init(void)
{
	static bool done;
	if (done)
		return;
	const char *args[] = {"pkc", "-dse-memoryssa-walklimit=0"};
	LLVMParseCommandLineOptions(2, args, NULL);
	done = true;
}

/* LLVM's diagnostics: errors are pkc bugs; warnings and remarks (e.g. a
 * vectorisation hint that could not be honoured) are not the user's
 * business. */
static void diag_handler(LLVMDiagnosticInfoRef di, void *ctx)
{
	const Cg *g = ctx;
	if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
		return;
	char *msg = LLVMGetDiagInfoDescription(di);
	internal_error("LLVM%s: %s", g->nvptx ? " (NVPTX)" : "", msg);
}

static const char *source_name(const Cg *g)
{
	return g->m->source ? g->m->source : "<stdin>";
}

void cg_open(Cg *g, Compiler *cc, const IrModule *m, const char *triple, LLVMTargetMachineRef tm)
{
	g->cc = cc;
	g->m = m;
	g->tm = tm;
	g->ctx = LLVMContextCreate();
	LLVMContextSetDiagnosticHandler(g->ctx, diag_handler, g);
	const char *src = source_name(g);
	g->mod = LLVMModuleCreateWithNameInContext(src, g->ctx);
	LLVMSetSourceFileName(g->mod, src, strlen(src));
	LLVMSetTarget(g->mod, triple);
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	LLVMSetModuleDataLayout(g->mod, td);
	LLVMDisposeTargetData(td);
	g->b = LLVMCreateBuilderInContext(g->ctx);
	g->t_void = LLVMVoidTypeInContext(g->ctx);
	g->t_i1 = LLVMInt1TypeInContext(g->ctx);
	g->t_i8 = LLVMInt8TypeInContext(g->ctx);
	g->t_i16 = LLVMInt16TypeInContext(g->ctx);
	g->t_i32 = LLVMInt32TypeInContext(g->ctx);
	g->t_i64 = LLVMInt64TypeInContext(g->ctx);
	g->t_f32 = LLVMFloatTypeInContext(g->ctx);
	g->t_f64 = LLVMDoubleTypeInContext(g->ctx);
	g->t_ptr = LLVMPointerTypeInContext(g->ctx, 0);
	g->md_loop_kind = LLVMGetMDKindIDInContext(g->ctx, "llvm.loop", 9);
}

void cg_verify(Cg *g)
{
	char *msg = NULL;
	if (LLVMVerifyModule(g->mod, LLVMReturnStatusAction, &msg)) {
		char *text = g->nvptx && getenv("PKC_DEBUG_NVVM") ? LLVMPrintModuleToString(g->mod) : NULL;
		internal_error("%s module verification failed for %s:\n%s%s", g->nvptx ? "NVVM" : "LLVM", source_name(g),
		               msg ? msg : "", text ? text : "");
	}
	LLVMDisposeMessage(msg);
}

void cg_close(Cg *g)
{
	LLVMDisposeBuilder(g->b);
	LLVMDisposeModule(g->mod);
	LLVMDisposeTargetMachine(g->tm);
	LLVMContextDispose(g->ctx);
}
