/* nvptx_size.c - keeping the GPU back end's compile time bounded (§10.2).
 *
 * A thread's code is unrolled over its elements of every value, so a kernel
 * with large blocks becomes one long function.  LLVM's NVPTX code generator
 * is far from linear in it when it optimises (straight-line strength
 * reduction alone took 14 s for 24,000 instructions, 5 times more for each
 * doubling), and roughly linear without optimisation (about 10 µs an
 * instruction).  So, counted once the kernel's NVVM IR is built:
 *
 *   - above NV_OPT_INSTS instructions, the kernel is compiled as with -O0
 *     (the function gets optnone, which both the optimiser and the code
 *     generator honour; the rest of the module stays optimised), with a
 *     warning;
 *   - above NV_MAX_INSTS, it is an error naming the limit.
 *
 * Ordinary kernels (samples/, bench/gpu/, test/) stay far below the first
 * limit, so their code does not change. */
#include "nvptx.h"

#include <stdio.h>
#include <string.h>

/* Above this many instructions a kernel is not optimised by LLVM. */
#define NV_OPT_INSTS (1u << 14)
/* Above this many it is not compiled (about 1.2 s at -O0 on this 2-core
 * VM, 2 MB of SASS: far past what runs well). */
#define NV_MAX_INSTS (1u << 17)

/* LLVM instructions of fn, with those of the functions it calls that are
 * defined in the module (the inline helpers, exp say, which -O0's
 * always-inline copies into it) counted at each call; counting stops past
 * `stop`. */
static unsigned fn_insts(LLVMValueRef fn, unsigned stop, int depth)
{
	unsigned n = 0;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
			LLVMValueRef callee = LLVMIsACallInst(in) ? LLVMGetCalledValue(in) : NULL;
			if (callee && LLVMIsAFunction(callee) && !LLVMIsDeclaration(callee) && depth < 4)
				n += fn_insts(callee, stop - n, depth + 1);
			if (++n > stop)
				return n;
		}
	return n;
}

static void add_fn_attr(Cg *g, LLVMValueRef fn, const char *name)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->ctx, kind, 0));
}

bool nv_kernel_optimisable(LLVMValueRef fn)
{
	return fn_insts(fn, NV_OPT_INSTS, 0) <= NV_OPT_INSTS;
}

bool nv_bound_kernel(Nv *nv, const IrKernel *k, LLVMValueRef fn)
{
	unsigned n = fn_insts(fn, NV_MAX_INSTS, 0);
	if (nv->cc->time_report)
		fprintf(stderr, "pkc: nvptx: %s: %u%s instructions of NVVM IR\n", k->name, n, n > NV_MAX_INSTS ? "+" : "");
	if (n > NV_MAX_INSTS) {
		error_at(nv->cc, k->loc, "%s is too large for one program on --target=%s: more than 2^17 instructions of "
		         "NVVM IR per thread (its values, unrolled over their elements); use smaller blocks [§10.2]",
		         k->name, nv->target_name);
		return false;
	}
	if (n > NV_OPT_INSTS && nv->opt->opt_level > 0) {
		warning_at(nv->cc, k->loc, "%s is compiled without optimisation: %u instructions of NVVM IR per thread, "
		           "more than 2^14 [§10.2]", k->name, n);
		add_fn_attr(&nv->g, fn, "noinline");
		add_fn_attr(&nv->g, fn, "optnone");
	}
	return true;
}
