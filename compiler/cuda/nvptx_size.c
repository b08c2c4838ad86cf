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
 * limit, so their code does not change.
 *
 * ptxas expands every div.rn.f32 in place (a reciprocal, its refinement, a
 * check and a branch to the slow path): attention's epilogue `acc / l[:, None]`
 * has 32 to 64 of them per thread, which cost ptxas 11 to 27 ms.  A kernel
 * with many divisions shares them: each four in a row become a call of one
 * noinline function of the module, whose four div.rn.f32 give the same bits
 * (nv_share_divisions); the calls cost the epilogue a few cycles. */
#include "nvptx.h"

#include <stdio.h>
#include <string.h>

/* Above this many instructions a kernel is not optimised by LLVM. */
#define NV_OPT_INSTS (1u << 14)
/* From this many f32 divisions by a variable, a kernel shares them. */
#define NV_SHARED_DIVS 16
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

/* An IEEE f32 division by a variable: ptxas expands it in place. */
static bool variable_division(Cg *g, LLVMValueRef in)
{
	return LLVMGetInstructionOpcode(in) == LLVMFDiv && LLVMTypeOf(in) == g->t_f32 &&
	       !LLVMIsConstant(LLVMGetOperand(in, 1)) && LLVMGetFastMathFlags(in) == 0;
}

/* pk_div_rn_f32x4(a, b) = a / b, lane by lane, out of line. */
static LLVMValueRef div4_fn(Cg *g)
{
	static const char name[] = "pk_div_rn_f32x4";
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
	if (fn)
		return fn;
	LLVMTypeRef v4 = LLVMVectorType(g->t_f32, 4), params[2] = {v4, v4};
	fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(v4, params, 2, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	static const char *const attrs[] = {"noinline", "nounwind", "willreturn", "memory"}; /* memory(none) */
	for (size_t j = 0; j < sizeof attrs / sizeof attrs[0]; j++)
		cg_attr(g, fn, LLVMAttributeFunctionIndex, attrs[j], 0);
	LLVMBuilderRef b = LLVMCreateBuilderInContext(g->ctx);
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));
	LLVMBuildRet(b, LLVMBuildFDiv(b, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), ""));
	LLVMDisposeBuilder(b);
	return fn;
}

/* Up to four divisions of one block, not yet replaced. */
typedef struct DivGroup {
	LLVMValueRef divs[4];
	int n;
} DivGroup;

/* Replaces the group's divisions with one call, placed before `at` (the
 * first use of one of them, a fifth division or the block's end): their
 * operands are defined above it, and nothing above it uses the quotients.
 * Lanes past n divide the first division's operands again. */
static void flush_group(Cg *g, LLVMBuilderRef b, DivGroup *d, LLVMValueRef at)
{
	if (!d->n)
		return;
	LLVMValueRef fn = div4_fn(g);
	LLVMPositionBuilderBefore(b, at);
	LLVMValueRef args[2];
	for (unsigned op = 0; op < 2; op++) {
		args[op] = LLVMGetUndef(LLVMVectorType(g->t_f32, 4));
		for (int j = 0; j < 4; j++)
			args[op] = LLVMBuildInsertElement(b, args[op], LLVMGetOperand(d->divs[j < d->n ? j : 0], op),
			                                  LLVMConstInt(g->t_i32, (unsigned)j, 0), "");
	}
	LLVMValueRef q = LLVMBuildCall2(b, LLVMGlobalGetValueType(fn), fn, args, 2, "");
	for (int j = 0; j < d->n; j++) {
		LLVMReplaceAllUsesWith(d->divs[j], LLVMBuildExtractElement(b, q, LLVMConstInt(g->t_i32, (unsigned)j, 0), ""));
		LLVMInstructionEraseFromParent(d->divs[j]);
	}
	d->n = 0;
}

/* Whether instruction `in` uses one of the group's quotients. */
static bool uses_group(LLVMValueRef in, const DivGroup *d)
{
	int nops = LLVMGetNumOperands(in);
	for (int o = 0; o < nops; o++)
		for (int j = 0; j < d->n; j++)
			if (LLVMGetOperand(in, o) == d->divs[j])
				return true;
	return false;
}

void nv_share_divisions(Nv *nv, LLVMValueRef fn)
{
	Cg *g = &nv->g;
	int count = 0;
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
			count += variable_division(g, in);
	if (count < NV_SHARED_DIVS)
		return;
	LLVMBuilderRef b = LLVMCreateBuilderInContext(g->ctx);
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
		DivGroup d = {0};
		LLVMValueRef next;
		for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = next) {
			next = LLVMGetNextInstruction(in);
			if (!next || uses_group(in, &d)) /* the terminator, or a use */
				flush_group(g, b, &d, in);
			if (!variable_division(g, in))
				continue;
			d.divs[d.n++] = in;
			if (d.n == 4)
				flush_group(g, b, &d, next);
		}
	}
	LLVMDisposeBuilder(b);
}
