/* nvptx_tma.c - the Hopper copy engine (TMA) for the operand tiles of
 * wgmma pipelines (nvptx_pipe.c).
 *
 * A tile of a 2-D operand that a pipeline copies into wgmma's canonical
 * layout (nvptx_dot.c, wg_stage_off: blocks of `line` (nv_wg_line) bytes,
 * block-major, the 16-byte chunks XORed with address bits 7 up) is
 * exactly what cp.async.bulk.tensor writes for boxes of [rows, line bytes]
 * with the swizzle of `line` bytes, one box per block of columns.  The
 * tile may lie in an operand of up to 5 dimensions whose others the load
 * indexes with scalars (attention's [b, seq, h, d] keys): the map is of
 * the operand's rank, its box 1 along those.  The launch stub makes the
 * tensor maps (pk_cuda_tensor_map) over the whole operands, so elements
 * past the array's edges, in any dimension, read as zeros, as the masked
 * cp.async copies they replace do; the entry takes them as
 * __grid_constant__ parameters after the grid extents.  One thread issues
 * an iteration's boxes after arrive.expect_tx on the buffer's mbarrier;
 * every thread waits for the barrier's phase before the dots read the
 * buffer.
 *
 * The maps an entry takes are known only once its pipelines are planned:
 * the first emission records the maps it wants (nv_tma_slot) and copies
 * with cp.async; codegen_nvptx.c then emits the kernel again with those
 * maps declared. */
#include "nvptx_dot.h"

#include <string.h>

/* The dimension of load L's rows when the copy engine can address its
 * tile in operand ref: two dimensions sliced or whole, the last among
 * them, the others indexed by scalars (attention's [b, seq, h, d] keys,
 * a batched matmul's [b, m, k]); -1 otherwise. */
static int tile_row_dim(const GRef *ref, const Inst *L)
{
	if (ref->rank < 2 || ref->rank > NV_TMA_MAX_RANK)
		return -1;
	int row = -1, n = 0;
	for (int d = 0; d < ref->rank; d++) {
		IndexKind x = L->idx[d].kind;
		if (x == IDX_FULL || x == IDX_SLICE) {
			if (d < ref->rank - 1)
				row = d;
			n++;
		} else if (x != IDX_POINT) {
			return -1;
		}
	}
	IndexKind last = L->idx[ref->rank - 1].kind;
	return n == 2 && (last == IDX_FULL || last == IDX_SLICE) ? row : -1;
}

bool nv_tma_fits(NvFn *f, const Inst *L, GpuTma *out)
{
	const IrKernel *k = f->k;
	const GRef *ref = f->refs[L->args[0]->id];
	if (!f->nv->tma || !ref)
		return false;
	int o = -1;
	for (int j = 0; j < k->noperands; j++)
		if (f->refs[k->body->args[j]->id] == ref)
			o = j;
	int row = tile_row_dim(ref, L);
	if (o < 0 || row < 0)
		return false;
	const Type *t = L->results[0]->type;
	int es = nv_smem_elem(t->dtype);
	int64_t rows = t->dims[0], cols = t->dims[1], line = nv_wg_line(cols * es);
	/* Boxes of at most 256 rows, whole 8-line swizzle atoms, one box per
	 * block of lines, which tile a row exactly (the stage holds the tile's
	 * real extents: a row of 96 f16, three 64-byte boxes); 16-byte aligned
	 * strides in global memory (the stub checks the base). */
	if (rows % 8 != 0 || rows > 256 || (cols * es) % line != 0 || line < 32 || cols * es / line > NV_TMA_MAX_BOXES)
		return false;
	for (int d = 0; d < ref->rank - 1; d++)
		if ((ref->sdiv[d] * es) % 16 != 0)
			return false;
	*out = (GpuTma){o, es, (uint32_t)rows, (uint32_t)(line / es), (int)line, ref->rank, row};
	return true;
}

int nv_tma_slot(NvFn *f, const GpuTma *t)
{
	bool seen = false;
	for (int j = 0; j < f->tma_want.len && !seen; j++)
		seen = memcmp(f->tma_want.items[j], t, sizeof *t) == 0;
	if (!seen) {
		GpuTma *c = arena_alloc(nv_arena(f), sizeof *c);
		*c = *t;
		vec_push(nv_arena(f), &f->tma_want, c);
	}
	for (int j = 0; j < f->nv->ntma_decl; j++)
		if (memcmp(&f->nv->tma_decl[j], t, sizeof *t) == 0)
			return j;
	return -1;
}

/* The 32-bit shared-window address of p (addrspace 3). */
static LLVMValueRef saddr(NvFn *f, LLVMValueRef p)
{
	Cg *g = f->g;
	return LLVMBuildTrunc(g->b, LLVMBuildPtrToInt(g->b, p, g->t_i64, ""), g->t_i32, "");
}

LLVMValueRef nv_mbar_at(NvFn *f, LLVMValueRef bars, LLVMValueRef i)
{
	LLVMValueRef off = LLVMBuildMul(f->g->b, i, cg_i32(f->g, 8), "");
	return saddr(f, LLVMBuildInBoundsGEP2(f->g->b, f->g->t_i8, bars, &off, 1, "mbar"));
}

/* One thread issues, as CUTLASS picks it: a branch that ptxas knows to be
 * warp-uniform (warp 0, the warp index read from lane 0), then elect.sync.
 * Under `tid == 0` ptxas could not prove one thread active and wrapped
 * each UTMALDG in an ELECT / BRA.U.ANY loop over the active threads. */
LLVMBasicBlockRef nv_tma_leader(NvFn *f, LLVMValueRef also)
{
	Cg *g = f->g;
	if (!f->warp0) {
		LLVMBuilderRef b = g->b;
		g->b = f->pre; /* once, in the entry block */
		LLVMValueRef w = nv_shfl_idx(f, f->warp, cg_i32(g, 0));
		f->warp0 = LLVMBuildICmp(g->b, LLVMIntEQ, w, cg_i32(g, 0), "warp0");
		g->b = b;
	}
	LLVMValueRef p = also ? LLVMBuildAnd(g->b, f->warp0, also, "") : f->warp0;
	LLVMBasicBlockRef elect = cg_block(g, "tma.elect"), then = cg_block(g, "tma.issue"),
	                  join = cg_block(g, "tma.issue.end");
	LLVMBuildCondBr(g->b, p, elect, join);
	LLVMPositionBuilderAtEnd(g->b, elect);
	LLVMValueRef one = nv_inline_ptx(f, g->t_i32, "{ .reg .pred p; elect.sync _|p, -1; selp.u32 $0, 1, 0, p; }",
	                                 "=r", NULL, 0);
	LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, one, cg_i32(g, 0), ""), then, join);
	LLVMPositionBuilderAtEnd(g->b, then);
	return join;
}

void nv_tma_leader_end(NvFn *f, LLVMBasicBlockRef join)
{
	LLVMBuildBr(f->g->b, join);
	LLVMPositionBuilderAtEnd(f->g->b, join);
}

void nv_tma_bars_init(NvFn *f, LLVMValueRef bars, int n, int count, LLVMValueRef paired)
{
	Cg *g = f->g;
	LLVMBasicBlockRef join = nv_tma_leader(f, NULL);
	for (int i = 0; i < n; i++) {
		LLVMValueRef a[2] = {nv_mbar_at(f, bars, cg_i32(g, i)), cg_i32(g, count)};
		nv_inline_ptx(f, g->t_void, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,n,~{memory}", a, 2);
	}
	/* The copy engine (the async proxy) sees the initialised barriers,
	 * the other CTA's copies into this one's too (paired). */
	nv_inline_ptx(f, g->t_void, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0);
	nv_tma_leader_end(f, join);
	nv_cluster_barrier(f, paired);
}

void nv_tma_bars_inval(NvFn *f, LLVMValueRef bars, int n)
{
	Cg *g = f->g;
	nv_barrier(f); /* every thread is past its last wait */
	LLVMBasicBlockRef join = nv_tma_leader(f, NULL);
	for (int i = 0; i < n; i++) {
		LLVMValueRef a = nv_mbar_at(f, bars, cg_i32(g, i));
		nv_inline_ptx(f, g->t_void, "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}", &a, 1);
	}
	nv_tma_leader_end(f, join);
}

void nv_tma_expect(NvFn *f, LLVMValueRef bars, LLVMValueRef buf, uint64_t bytes)
{
	LLVMValueRef args[2] = {nv_mbar_at(f, bars, buf), cg_i32(f->g, (int32_t)bytes)};
	nv_inline_ptx(f, f->g->t_void, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}", args,
	              2);
}

static int tma_boxes(const GpuTma *t, int64_t cols)
{
	return (int)((cols + t->box_cols - 1) / t->box_cols);
}

/* A scalar index as the copy engine's signed 32-bit coordinate; one out
 * of its range becomes INT32_MAX, past every dimension (the stub refuses
 * dimensions of 2^31 or more), so that it reads zeros as a masked index
 * does (free for program ids: LLVM sees the sign extension). */
static LLVMValueRef coord32(NvFn *f, LLVMValueRef v)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	if (LLVMGetIntTypeWidth(LLVMTypeOf(v)) <= 32)
		return LLVMBuildIntCast2(b, v, g->t_i32, 1, "");
	LLVMValueRef t = LLVMBuildTrunc(b, v, g->t_i32, "");
	LLVMValueRef fits = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildSExt(b, t, LLVMTypeOf(v), ""), v, "");
	return LLVMBuildSelect(b, fits, t, cg_i32(g, INT32_MAX), "");
}

void nv_tma_coords(NvFn *f, const Inst *L, const GpuTma *t, LLVMValueRef *c)
{
	Cg *g = f->g;
	LLVMValueRef col0 = NULL;
	int next = 1;
	for (int d = 0; d < t->rank; d++) {
		LLVMValueRef v = cg_i32(g, 0);
		if (L->idx[d].kind == IDX_POINT)
			v = coord32(f, nv_val(f, L->args[next++])->r[0]);
		else if (L->idx[d].kind == IDX_SLICE)
			v = LLVMBuildIntCast2(g->b, nv_val(f, L->args[next++])->r[0], g->t_i32, 1, "");
		if (d < t->rank - 1)
			c[d] = v;
		else
			col0 = v;
	}
	for (int n = 0; n < tma_boxes(t, L->results[0]->type->dims[1]); n++)
		c[t->rank - 1 + n] = n ? LLVMBuildAdd(g->b, col0, cg_i32(g, (int32_t)(n * t->box_cols)), "") : col0;
}

void nv_tma_copy(NvFn *f, const Inst *L, const GpuTma *t, int slot, LLVMValueRef dst, const LLVMValueRef *c,
                 LLVMValueRef bars, LLVMValueRef buf, LLVMValueRef half)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const IrKernel *k = f->k;
	LLVMValueRef map = LLVMGetParam(f->fn, (unsigned)(k->noperands + k->nscalars + k->nsizes + k->ngrid + slot));
	LLVMValueRef bar = nv_mbar_at(f, bars, buf);
	/* cp.async.bulk.tensor.Nd [dst], [map, {column, then the other
	 * dimensions innermost first}], [bar] (, the CTAs of the cluster it
	 * writes: both). */
	char ptx[320], cons[64];
	int at = snprintf(ptx, sizeof ptx,
	                  "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s "
	                  "[$0], [$1, {$2",
	                  t->rank, half ? ".multicast::cluster" : "");
	for (int d = 1; d < t->rank; d++)
		at += snprintf(ptx + at, sizeof ptx - (size_t)at, ", $%d", d + 2);
	at += snprintf(ptx + at, sizeof ptx - (size_t)at, "}], [$%d]", t->rank + 2);
	snprintf(ptx + at, sizeof ptx - (size_t)at, half ? ", $%d;" : ";", t->rank + 3);
	at = snprintf(cons, sizeof cons, "r,l");
	for (int d = 0; d <= t->rank; d++)
		at += snprintf(cons + at, sizeof cons - (size_t)at, ",r");
	snprintf(cons + at, sizeof cons - (size_t)at, half ? ",h,~{memory}" : ",~{memory}");
	/* Half boxes: rows [half * rows / 2, (half + 1) * rows / 2) of each. */
	uint32_t hr = t->box_rows / 2;
	LLVMValueRef row0 = half ? LLVMBuildMul(b, half, cg_i32(g, (int32_t)hr), "") : NULL;
	for (int n = 0; n < tma_boxes(t, L->results[0]->type->dims[1]); n++) {
		/* Block n of the stage: rows x line bytes. */
		LLVMValueRef off = cg_i32(g, (int32_t)(n * t->box_rows * (uint32_t)t->swizzle));
		if (half)
			off = LLVMBuildAdd(b, off, LLVMBuildMul(b, row0, cg_i32(g, t->swizzle), ""), "");
		LLVMValueRef args[NV_TMA_MAX_RANK + 4] = {saddr(f, LLVMBuildInBoundsGEP2(b, g->t_i8, dst, &off, 1, "")), map,
		                                          c[t->rank - 1 + n]};
		for (int d = 1; d < t->rank; d++)
			args[2 + d] = c[t->rank - 1 - d];
		if (half)
			args[2 + t->rank - 1 - t->row] = LLVMBuildAdd(b, args[2 + t->rank - 1 - t->row], row0, "");
		args[t->rank + 2] = bar;
		args[t->rank + 3] = LLVMConstInt(LLVMInt16TypeInContext(g->ctx), 3, 0);
		nv_inline_ptx(f, g->t_void, ptx, cons, args, t->rank + 3 + (half != NULL));
	}
}

void nv_tma_wait(NvFn *f, LLVMValueRef bars, LLVMValueRef buf, LLVMValueRef parity)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMValueRef bar = nv_mbar_at(f, bars, buf);
	LLVMBasicBlockRef loop = cg_block(g, "mbar.wait"), done = cg_block(g, "mbar.done");
	LLVMBuildBr(b, loop);
	LLVMPositionBuilderAtEnd(b, loop);
	LLVMValueRef args[2] = {bar, parity};
	LLVMValueRef ok = nv_inline_ptx(f, g->t_i32,
	                                "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; "
	                                "selp.u32 $0, 1, 0, p; }", "=r,r,r,~{memory}", args, 2);
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, ok, cg_i32(g, 0), ""), done, loop);
	LLVMPositionBuilderAtEnd(b, done);
}
