/* Chained tensor-core dots on wgmma (sm_90a), as attention chains them:
 *
 *   s = dot(q, k, trans_b = true)       B given transposed
 *   p = astype(exp2(s - m), f16)        computed in s's accumulator layout
 *   acc += dot(p, v)                    A already in registers
 *
 * B transposed: dot(a, transpose(x)) with x [N, K] in registers is staged
 * as x lies, K-major like A (16-byte stores along K), and wgmma reads it
 * with imm-trans-b 0; no element moves between threads and no 2-byte
 * stores transpose it.
 *
 * A from registers: a 16-bit value in the wgmma accumulator layout of its
 * shape (lay_wgmma_c: warp w holds rows 16w.. of each 64-row tile, lane l
 * rows l / 4 and l / 4 + 8, columns 2 (l % 4) + {0, 1} of every 8) is
 * already wgmma's register-A fragment: the A fragment of the k-step at
 * k0 is the pairs at columns k0 and k0 + 8 of rows +0 and +8.  So the
 * accumulator of the first dot, converted elementwise, feeds the second
 * without shared memory (nvptx_dot.c: wg_slice).  A loaded before a loop
 * and used by a wgmma dot in it is loaded in that layout (gpu_layout.c):
 * attention's q is read from registers every iteration, never staged.
 *
 * In a software-pipelined loop (num_stages >= 2) such dots copy only B,
 * ahead of the iteration that reads it: a load, or the load under a
 * transpose (nv_dot_trans_b_load), whose stage is then K-major. */
#include "nvptx.h"

const Value *nv_dot_trans_b(const LayoutPlan *P, const Inst *dot)
{
	const Value *b = dot->args[1];
	const Inst *t = b->def;
	if (!P->mma[dot->results[0]->id] || !t || t->op != IR_TRANSPOSE || b->type->rank != 2 ||
	    t->perm[0] != 1 || t->perm[1] != 0)
		return NULL;
	return t->args[0];
}

bool nv_wg_a_in_regs(NvFn *f, const GV *a, int64_t M, int64_t K)
{
	return a && (a->dt == DT_F16 || a->dt == DT_BF16) && a->L == lay_wgmma_c(f->plan->lc, M, K);
}

void nv_wg_a_frag(NvFn *f, const GV *a, int64_t m0, int64_t k0, LLVMValueRef *out)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMTypeRef pair = LLVMVectorType(cg_mem_type(g, a->dt), 2);
	for (int q = 0; q < 4; q++) {
		/* a0: row +0, columns k0..; a1: row +8; a2, a3: columns k0 + 8.. */
		int64_t at[2] = {m0 + 8 * (q % 2), k0 + 8 * (q / 2)};
		LLVMValueRef v = LLVMGetUndef(pair);
		for (int j = 0; j < 2; j++, at[1]++)
			v = LLVMBuildInsertElement(b, v, cg_to_mem(g, a->dt, a->r[lay_reg_of(a->L, at)]), cg_i32(g, j), "");
		out[q] = LLVMBuildBitCast(b, v, g->t_i32, "");
	}
}

bool nv_wg_a_regs_planned(NvFn *f, const Inst *dot)
{
	const LayoutPlan *P = f->plan;
	const Value *a = dot->args[0];
	DType dt = a->type->dtype;
	return P->wgmma[dot->results[0]->id] && !P->lazy[a->id] && (dt == DT_F16 || dt == DT_BF16) &&
	       P->of[a->id] == lay_wgmma_c(P->lc, a->type->dims[0], a->type->dims[1]);
}

const Inst *nv_dot_operand_load(const LayoutPlan *P, const Value *v, const Inst *dot)
{
	if (v->def && v->def->op == IR_RESHAPE && v->def->parent == dot->parent && P->nuses[v->id] == 1)
		v = v->def->args[0];
	if (!v->def || v->def->op != IR_LOAD || v->def->parent != dot->parent || P->nuses[v->id] != 1)
		return NULL;
	return v->def;
}

const Inst *nv_dot_trans_b_load(const LayoutPlan *P, const Inst *dot)
{
	const Value *x = nv_dot_trans_b(P, dot);
	if (!x || P->nuses[dot->args[1]->id] != 1)
		return NULL;
	return nv_dot_operand_load(P, x, dot);
}
