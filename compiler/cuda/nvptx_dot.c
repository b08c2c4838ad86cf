/* nvptx_dot.c - dot (matrix product) on the GPU.
 *
 * Both operands go to shared memory in slices along K (so any K fits):
 * from registers (an operand computed in any layout), or, when the operand
 * is a load used only by the dot, straight from global memory with
 * cp.async (16-byte copies, masked ones zero-filled; the load is never
 * emitted into registers: nv_dot_takes_load).  With cp.async, num_stages
 * slices are in flight: the next ones load while one is computed.  When
 * both operands are copied that way and K is long, the slices run in a
 * loop of the kernel (run_rolled): the code no longer grows with K.
 *
 * Tensor cores (f16/bf16 operands, f32 accumulator, M a power of two, K a
 * multiple of 16, N a power of two or a multiple of 16: lay_dot_is_mma;
 * only the real extents are staged and computed): the slices are stored
 * in 16-byte chunks swizzled per 128-byte line (no bank conflicts), read
 * with ldmatrix (B transposed)
 * into the m16n8k16 fragments, and every 16 x 8 x 16 tile of the warp is
 * one mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.  The accumulator
 * lives in the C-fragment layout (gpu_layout.c: lay_mma_c), which the
 * result keeps.
 *
 * On sm_90a (Nv.wgmma), tensor-core dots whose block fills whole
 * warpgroups use wgmma instead: the slices go to shared memory in wgmma's
 * canonical swizzled layouts (wg_stage_off), fenced for the async proxy
 * before the barrier, and each k-step of each 64-row tile is one
 * wgmma.mma_async m64nNk16 reading them through matrix descriptors; the
 * accumulator is in lay_wgmma_c.
 *
 * Everything else (f32, f64, integers, small or odd shapes): FMA.  Each
 * thread accumulates its elements of the result, c[m][n] += a[m][k] *
 * b[k][n] for its rows m and columns n, k in order, reading the slices
 * (plain row-major) from shared memory. */
#include "nvptx_dot.h"

#include <string.h>

/* Tensor-core dots longer than this along K, with both operands copied by
 * cp.async, loop over K slices of at most ROLL_KC (one barrier per 32 of K,
 * as bench/gpu/bench_matmul.pk's tuned BK) and over the k-steps of 16 of a
 * slice: the code holds one k-step, whatever K. */
#define ROLL_MIN_K 64
#define ROLL_KC 32
/* FMA dots (whose slices already loop over k) loop over their slices from
 * this many slices on. */
#define ROLL_MIN_SLICES 3

/* Shared memory the FMA path may take for one K slice of both operands. */
#define FMA_SLICE_BYTES (32 * 1024)
/* ... and the MMA path for all its stages. */
#define MMA_SLICE_BYTES (64 * 1024)

/* acc + a * b in dtype dt (fused for f32/f64). */
static LLVMValueRef mul_add(NvFn *f, DType dt, LLVMValueRef acc, LLVMValueRef a, LLVMValueRef b, Loc loc)
{
	Cg *g = f->g;
	if (dt == DT_F32 || dt == DT_F64) {
		LLVMValueRef args[3] = {a, b, acc};
		return cg_intrinsic(g, "llvm.fma", cg_type(g, dt), args, 3);
	}
	LLVMValueRef m[2] = {a, b};
	LLVMValueRef p = cg_elementwise(g, IR_MUL, dt, m, loc);
	if (!p)
		return NULL;
	LLVMValueRef s[2] = {acc, p};
	return cg_elementwise(g, IR_ADD, dt, s, loc);
}

static bool same_type(const Type *a, const Type *b)
{
	if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

/* `acc + dot(a, b)` where the add is the dot's only use, in the same
 * region, and acc (of the result's type) exists before the dot:
 * the dot starts from acc (tensor cores accumulate in place: no second
 * accumulator tile, no adds) and the add is the dot's result
 * (codegen_nvptx.c).  The add's layout may order the registers otherwise
 * (the same threads: a free conversion).  The add, or NULL. */
const Inst *nv_dot_fused_add(NvFn *f, const Inst *d)
{
	LayoutPlan *P = f->plan;
	if (d->op != IR_DOT || d->nargs != 2 || d->nresults != 1)
		return NULL;
	const Value *res = d->results[0];
	if (P->nuses[res->id] != 1)
		return NULL;
	for (const Inst *x = d->next; x; x = x->next) {
		bool uses = false;
		for (int j = 0; j < x->nargs; j++)
			uses |= x->args[j] == res;
		if (!uses)
			continue;
		if (x->op != IR_ADD || x->nargs != 2 || x->nresults != 1 || x->args[0] == x->args[1])
			return NULL;
		const Value *o = x->args[x->args[0] == res ? 1 : 0];
		if (!same_type(o->type, res->type) || !same_type(x->results[0]->type, res->type) ||
		    !P->of[x->results[0]->id] || !lay_same_threads(P->of[x->results[0]->id], P->of[res->id]))
			return NULL;
		for (const Inst *y = d->next; y != x; y = y->next)
			for (int r = 0; r < y->nresults; r++)
				if (y->results[r] == o)
					return NULL;
		return x;
	}
	return NULL;
}

/* The accumulator's initial value in layout LC. */
static GV *initial_acc(NvFn *f, const Inst *i, const GpuLayout *LC, DType dt)
{
	if (i->nargs == 3)
		return nv_get(f, i->args[2], LC);
	const Inst *add = nv_dot_fused_add(f, i);
	if (add)
		return nv_get(f, add->args[add->args[0] == i->results[0] ? 1 : 0], LC);
	GV *c = gv_new(f, LC, dt);
	LLVMValueRef z = cg_const(f->g, dt, 0, 0.0);
	for (int r = 0; r < c->n; r++)
		c->r[r] = z;
	return c;
}

/* Whether every accumulator of C is the constant 0. */
static bool zero_acc(const GV *C)
{
	for (int r = 0; r < C->n; r++)
		if (!LLVMIsAConstantFP(C->r[r]) || LLVMConstRealGetDouble(C->r[r], &(LLVMBool){0}) != 0.0)
			return false;
	return true;
}

/* ---- staging ------------------------------------------------------------------------- */

/* Shared memory that ordinary stores or cp.async wrote and wgmma (the
 * async proxy) reads next: every writing thread fences before the barrier
 * (LLVM has no intrinsic for the plain fence). */
void nv_proxy_fence(NvFn *f, bool wg)
{
	if (wg)
		nv_inline_ptx(f, f->g->t_void, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
}

/* The f32 registers of v once a wgmma.wait_group has completed the group
 * that wrote them: each through an empty asm after the wait (in place),
 * so that no use of them moves above it.  LLVM sees no dependence between
 * the wait and the accumulators; a use hoisted above it (the epilogue's
 * conversion after a loop of run-time trip count) made ptxas serialize
 * every wgmma (warning C7514) and cost 15 % on the H100. */
void nv_wg_fence(NvFn *f, GV *v)
{
	Cg *g = f->g;
	enum { CHUNK = 64 }; /* registers per asm statement */
	int idx[CHUNK];
	LLVMValueRef args[CHUNK];
	LLVMTypeRef ft[CHUNK];
	char cons[CHUNK * 8];
	for (int r = 0; r < v->n;) {
		int k = 0;
		for (; r < v->n && k < CHUNK; r++)
			if (LLVMTypeOf(v->r[r]) == g->t_f32) {
				idx[k] = r;
				args[k] = v->r[r];
				ft[k++] = g->t_f32;
			}
		if (!k)
			break;
		size_t c = 0;
		for (int j = 0; j < k; j++)
			c += (size_t)snprintf(cons + c, sizeof cons - c, "%s=f", j ? "," : "");
		for (int j = 0; j < k; j++)
			c += (size_t)snprintf(cons + c, sizeof cons - c, ",%d", j);
		LLVMValueRef out = nv_inline_ptx(f, LLVMStructTypeInContext(g->ctx, ft, (unsigned)k, 0), "", cons, args, k);
		for (int j = 0; j < k; j++)
			v->r[idx[j]] = LLVMBuildExtractValue(g->b, out, (unsigned)j, "");
	}
}

/* wgmma's canonical swizzled layouts (PTX ISA, "matrix descriptor"): rows
 * cut into blocks of wg_line (nv_wg_line: 128, 64 or 32 bytes) bytes, block-major
 * ([cols * es / line][rows][line]), the 16-byte chunks of each line XORed
 * with bits 7 up of the offset (the 128-, 64- or 32-byte swizzle: atoms of
 * 8 lines).  A's rows (M) run along K (K-major), B's (K) along N (N-major);
 * both take 16-byte cp.async copies as they are. */
static int wg_line(const Stage *s)
{
	return nv_wg_line(s->cols * s->es);
}

static LLVMValueRef wg_stage_off(NvFn *f, const Stage *s, LLVMValueRef r, LLVMValueRef c)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int line = wg_line(s), lb = lay_log2_ceil(line);
	LLVMValueRef byte = LLVMBuildMul(b, c, cg_i32(g, s->es), "");
	LLVMValueRef blk = LLVMBuildLShr(b, byte, cg_i32(g, lb), "");
	LLVMValueRef off = LLVMBuildAdd(b, LLVMBuildMul(b, blk, cg_i32(g, (int32_t)s->rows), ""), r, "");
	off = LLVMBuildAdd(b, LLVMBuildShl(b, off, cg_i32(g, lb), ""), LLVMBuildAnd(b, byte, cg_i32(g, line - 1), ""), "");
	LLVMValueRef sw = LLVMBuildAnd(b, LLVMBuildLShr(b, off, cg_i32(g, 7), ""), cg_i32(g, line / 16 - 1), "");
	return LLVMBuildXor(b, off, LLVMBuildShl(b, sw, cg_i32(g, 4), ""), "");
}

/* Byte offset of element (r, c) of a stage (i32 operands). */
static LLVMValueRef stage_off(NvFn *f, const Stage *s, LLVMValueRef r, LLVMValueRef c)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	if (s->wg)
		return wg_stage_off(f, s, r, c);
	if (!s->swz) {
		LLVMValueRef e = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(g, (int32_t)s->cols), ""), c, "");
		return LLVMBuildMul(b, e, cg_i32(g, s->es), "");
	}
	int per = 16 / s->es, lp = lay_log2_ceil(per);
	LLVMValueRef q = LLVMBuildAdd(b, LLVMBuildMul(b, r, cg_i32(g, (int32_t)(s->cols / per)), ""),
	                              LLVMBuildLShr(b, c, cg_i32(g, lp), ""), "");
	LLVMValueRef sw = LLVMBuildAnd(b, LLVMBuildLShr(b, q, cg_i32(g, 3), ""), cg_i32(g, 7), "");
	q = LLVMBuildXor(b, q, sw, "");
	LLVMValueRef in = LLVMBuildMul(b, LLVMBuildAnd(b, c, cg_i32(g, per - 1), ""), cg_i32(g, s->es), "");
	return LLVMBuildAdd(b, LLVMBuildShl(b, q, cg_i32(g, 4), ""), in, "");
}

static LLVMValueRef stage_ptr(NvFn *f, const Stage *s, LLVMValueRef r, LLVMValueRef c)
{
	LLVMValueRef off = stage_off(f, s, r, c);
	return LLVMBuildInBoundsGEP2(f->g->b, f->g->t_i8, s->base, &off, 1, "");
}

/* Whether the byte distance between elements (r + dr, c + dc) and (r, c)
 * of stage s is the same, *bytes, for every (r, c) the caller's copies
 * start at (chunk-aligned; dc a multiple of 16 bytes).  Plain stages are
 * linear; in a swizzled one a chunk's XOR comes from bits 3-5 of its index
 * q, so a distance of a multiple of 64 chunks moves q without touching
 * them.  (wgmma's layouts: not worked out, false.) */
static bool stage_distance(const Stage *s, int64_t dr, int64_t dc, int64_t *bytes)
{
	if (s->wg)
		return false;
	if (!s->swz) {
		*bytes = (dr * s->cols + dc) * s->es;
		return true;
	}
	int64_t per = 16 / s->es;
	if (dc % per != 0)
		return false;
	int64_t dq = dr * (s->cols / per) + dc / per;
	*bytes = dq * 16;
	return dq % 64 == 0;
}

static const GpuLayout *operand_layout(const Operand *o)
{
	return o->regs ? o->regs->L : o->load->view ? o->load->view : o->load->L;
}

/* if (p) { the caller's code } */
static LLVMBasicBlockRef guard(NvFn *f, LLVMValueRef p)
{
	if (!p)
		return NULL;
	Cg *g = f->g;
	LLVMBasicBlockRef then = cg_block(g, "stage"), join = cg_block(g, "stage.end");
	LLVMBuildCondBr(g->b, p, then, join);
	LLVMPositionBuilderAtEnd(g->b, then);
	return join;
}

static void guard_end(NvFn *f, LLVMBasicBlockRef join)
{
	if (!join)
		return;
	LLVMBuildBr(f->g->b, join);
	LLVMPositionBuilderAtEnd(f->g->b, join);
}

/* Copies the elements of o whose coordinate along kd lies in [k0, k0 + kc)
 * into stage s (owners only): vectors of up to 16 bytes of consecutive
 * elements of a row, stored from registers or copied by cp.async.  With
 * `live` (i1) false, cp.async writes zeros and reads nothing.  kc is a
 * power of two, or the whole (padded) K from k0 = 0.  A tensor-core stage
 * (s->swz) holds the operand's real extents only: the vectors of its
 * padding (an N or K of 96 pads to 128) are not copied, not even as zeros
 * (those would land past its rows); the dots never read there. */
void nv_stage_slice(NvFn *f, const Operand *o, int64_t k0, int64_t kc, const Stage *s, LLVMValueRef live)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const GpuLayout *L = operand_layout(o);
	int kd = o->kd, kb = lay_log2_ceil(kc);
	LLVMValueRef own = nv_owner(f, L);
	bool real_only = s->swz && (!lay_pow2(L->dims[0]) || !lay_pow2(L->dims[1]));
	/* Whether a register's slice depends on the thread; the bits of its
	 * slice number the register sets (those must be k0's). */
	bool thread_k = false;
	int64_t regk = 0;
	for (int bit = L->dlo[kd] + kb; bit < L->dlo[kd] + L->dbits[kd]; bit++) {
		thread_k |= L->kind[bit] != LB_REG;
		if (L->kind[bit] == LB_REG)
			regk |= INT64_C(1) << (bit - L->dlo[kd]);
	}
	int v = lay_contig(L);
	while (v * s->es > 16)
		v /= 2;
	if (o->load)
		PKC_ASSERT(v * s->es == 16);
	else
		PKC_ASSERT(!live);
	int64_t c[2];
	/* The last copy's register and source, and every earlier copy's stage
	 * coordinates and destination, from which later ones step
	 * (nv_access_ptr, stage_distance): an offset of its own a copy is an
	 * invariant LLVM hoists and ptxas keeps live. */
	int prev_r = -1, ndst = 0;
	LLVMValueRef prev_src = NULL;
	struct {
		int64_t c[2];     /* its stage coordinates (compile-time parts) */
		LLVMValueRef ptr; /* its destination */
	} *dsts = arena_alloc(nv_arena(f), (size_t)((1 << L->nregbits) / v + 1) * sizeof *dsts);
	for (int r = 0; r < 1 << L->nregbits; r += v) {
		lay_reg_coord(L, r, c);
		if (((c[kd] ^ k0) & regk) != 0)
			continue; /* in another slice whatever the thread */
		if (real_only && (c[0] >= L->dims[0] || c[1] >= L->dims[1]))
			continue; /* padding whatever the thread */
		LLVMValueRef row = nv_coord(f, L, r, 0), col = nv_coord(f, L, r, 1);
		LLVMValueRef kk = kd == 0 ? row : col;
		LLVMValueRef p = own;
		if (real_only) {
			LLVMValueRef in = nv_valid(f, L, r);
			p = p ? LLVMBuildAnd(b, p, in, "") : in;
		}
		if (thread_k) {
			LLVMValueRef in = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildLShr(b, kk, cg_i32(g, kb), ""),
			                                cg_i32(g, (int32_t)(k0 >> kb)), "");
			p = p ? LLVMBuildAnd(b, p, in, "") : in;
		}
		/* The stage's coordinates of this copy: kd's within the slice. */
		int64_t mask = (INT64_C(1) << kb) - 1, sc[2] = {c[0], c[1]};
		sc[kd] &= mask;
		/* From the latest earlier copy whose swizzle this one shares. */
		LLVMValueRef dst = NULL;
		for (int j = ndst - 1; j >= 0 && !dst; j--) {
			int64_t dist;
			if (stage_distance(s, sc[0] - dsts[j].c[0], sc[1] - dsts[j].c[1], &dist)) {
				LLVMValueRef d = cg_i32(g, (int32_t)dist);
				dst = LLVMBuildGEP2(b, g->t_i8, dsts[j].ptr, &d, 1, "");
			}
		}
		if (!dst) {
			LLVMValueRef local = LLVMBuildAnd(b, kk, cg_i32(g, (int32_t)mask), "");
			dst = stage_ptr(f, s, kd == 0 ? local : row, kd == 0 ? col : local);
		}
		dsts[ndst].c[0] = sc[0];
		dsts[ndst].c[1] = sc[1];
		dsts[ndst++].ptr = dst;
		if (o->load) {
			LLVMValueRef pred;
			LLVMValueRef src = nv_access_ptr(f, o->load, r, &pred, prev_r, prev_src);
			prev_r = r;
			prev_src = src;
			/* Bytes past src-size are zeros: masked vectors read nothing, a
			 * vector across the edge of the last dim its valid prefix. */
			LLVMValueRef n = nv_access_prefix(f, o->load, r, v);
			LLVMValueRef size = n ? LLVMBuildMul(b, n, cg_i32(g, s->es), "") : cg_i32(g, 16);
			pred = pred && live ? LLVMBuildAnd(b, pred, live, "") : pred ? pred : live;
			if (pred)
				size = LLVMBuildSelect(b, pred, size, cg_i32(g, 0), "");
			LLVMBasicBlockRef join = guard(f, p);
			LLVMValueRef args[3] = {dst, src, size};
			nv_intrinsic(f, "llvm.nvvm.cp.async.cg.shared.global.16.s", NULL, 0, args, 3);
			guard_end(f, join);
			continue;
		}
		LLVMTypeRef mt = cg_mem_type(g, o->dt);
		LLVMValueRef x = LLVMGetUndef(LLVMVectorType(mt, (unsigned)v));
		for (int j = 0; j < v; j++)
			x = LLVMBuildInsertElement(b, x, cg_to_mem(g, o->dt, o->regs->r[r + j]), cg_i32(g, j), "");
		if (v == 1)
			x = LLVMBuildExtractElement(b, x, cg_i32(g, 0), "");
		LLVMBasicBlockRef join = guard(f, p);
		LLVMValueRef st = LLVMBuildStore(b, x, dst);
		LLVMSetAlignment(st, (unsigned)(v * s->es));
		guard_end(f, join);
	}
}

/* The K-slice pipeline: `stages` buffers (a slice of each operand), slice
 * s computed from buffer s % stages by `compute`; cp.async keeps up to
 * `stages` slices in flight. */
typedef struct Pipeline {
	Operand *a, *b;       /* the operands */
	int64_t kc, nslices;  /* slice depth and count */
	int stages;           /* buffers */
	Stage *sa, *sb;       /* per buffer: the operands' slices */
	uint64_t a_bytes;     /* offset of b's slice in a buffer */
	uint64_t buf_bytes;   /* bytes from one buffer to the next */
	int ahead;            /* run_rolled: slices copied ahead (stages - 1, or stages - 2 with wg_pending) */
	bool wg_pending;      /* run_rolled: a slice's wgmma group stays in flight into the next */
	const Inst *dot;      /* run_pipeline: the mma.sync dot, whose copies later dots' may join
	                         (early_copies), or NULL */
	Ahead *next[2];       /* run_pipeline: per operand, its copy a turn ahead (ahead_plan), or NULL */
} Pipeline;

typedef bool (*SliceFn)(NvFn *f, void *ctx, const Pipeline *p, int buf, int64_t k0);

static NvAccess *slice_access(NvFn *f, const Operand *o, const GpuLayout *LS, LLVMValueRef k0);
static const GpuLayout *slice_layout(NvFn *f, const Operand *o, int64_t kc);

/* Whether layout L of an operand spreads its K (dim kd) over threads above
 * the slices of kc: then which registers lie in a slice depends on the
 * thread. */
static bool spread_k(const GpuLayout *L, int kd, int64_t kc)
{
	for (int bit = L->dlo[kd] + lay_log2_ceil(kc); bit < L->dlo[kd] + L->dbits[kd]; bit++)
		if (L->kind[bit] != LB_REG)
			return true;
	return false;
}

/* Stages the slice of o at k0 into s.  A load whose layout spreads K over
 * threads is copied in a layout of the slice alone (as run_rolled does),
 * so that each slice costs its own elements, not every register of the
 * operand under a predicate (the code would grow with K squared). */
static void stage_part(NvFn *f, const Pipeline *p, const Operand *o, int64_t k0, const Stage *s)
{
	const NvAccess *A = o->load;
	const GpuLayout *L = A ? operand_layout(o) : NULL, *LS;
	if (A && A->ref && L->dims[o->kd] % p->kc == 0 && spread_k(L, o->kd, p->kc) &&
	    (LS = slice_layout(f, o, p->kc))) {
		Operand x = *o;
		x.load = slice_access(f, o, LS, cg_i32(f->g, (int32_t)k0));
		nv_stage_slice(f, &x, 0, p->kc, s, NULL);
		return;
	}
	nv_stage_slice(f, o, k0, p->kc, s, NULL);
}

/* ---- early copies --------------------------------------------------------------------- */

/* The operand (0: A, 1: B) of dot d that load L gives, directly or
 * through reshapes, and in *kmajor whether it is x of B = transpose(x)
 * (staged K-major); -1 when none. */
static int early_operand(NvFn *f, const Inst *d, const Inst *L, bool *kmajor)
{
	const Value *bt = nv_dot_trans_b(f->plan, d);
	for (int k = 0; k < 2; k++) {
		const Value *v = k == 1 && bt ? bt : d->args[k];
		while (v != L->results[0] && v->def && v->def->op == IR_RESHAPE)
			v = v->def->args[0];
		if (v == L->results[0]) {
			*kmajor = k == 1 && bt;
			return k;
		}
	}
	return -1;
}

/* Whether value v, an operand of a load of region r, is computed already
 * (an argument, outside r, or marked in `before`) or is a scalar chain
 * of such values (consts, program ids, elementwise ops: the ds start
 * t * BLOCK_K written again at the load), which it emits now and marks
 * (the emitter computes it again where it stands: the same values). */
static bool early_value(NvFn *f, const Region *r, const Value *v, bool *before, int depth)
{
	const Inst *d = v->def;
	if (!d || d->parent != r || before[v->id])
		return true;
	if (depth > 32 || !nv_pure_scalar(d))
		return false;
	for (int j = 0; j < d->nargs; j++)
		if (!early_value(f, r, d->args[j], before, depth + 1))
			return false;
	before[v->id] = true;
	return nv_emit_inst(f, d);
}

/* Early copies: after the copies of mma.sync dot d, every load that a
 * later mma.sync dot of d's region reads whole, copied by cp.async as that
 * dot would (nv_dot_takes_load) and computable now, is copied too, into a
 * buffer of its own in the pipeline area; that dot then reads it there
 * (EarlyCopy).  Decode and paged attention's v thus arrives with k, in one
 * memory latency instead of one after the other: on the H200 the decode
 * step ran 6-16 % faster (10 % where it ran two CTAs an SM before and
 * after), the paged one 1-3 % (bench/RESULTS.md, session 16).  Only
 * while the CTA's shared memory stays within half of what an SM has, so
 * that the copies never take away the SM's second CTA.  Returns the
 * cp.async groups committed (0 or 1). */
static int early_copies(NvFn *f, const Inst *d)
{
	LayoutPlan *P = f->plan;
	const Region *r = d->parent;
	bool *before = arena_alloc(nv_arena(f), (size_t)(f->k->nvalues + 1));
	for (const Inst *x = r->first; x && x != d; x = x->next)
		for (int j = 0; j < x->nresults; j++)
			before[x->results[j]->id] = true;
	uint64_t live = f->smem_pipe_live, at = nv_align_up(live, buf_align(f));
	int *left = arena_alloc(nv_arena(f), sizeof *left), *newer = arena_alloc(nv_arena(f), sizeof *newer);
	for (const Inst *L = r->first; L; L = L->next) {
		const Value *res = L->nresults ? L->results[0] : NULL;
		const Inst *dx = res && L->op == IR_LOAD ? P->dot_of[res->id] : NULL;
		bool kmajor;
		int k;
		/* dx after d, in its region, on mma.sync; the load not copied by
		 * a pipelined loop, nor loaded into registers already. */
		if (!dx || dx == d || dx->parent != r || before[dx->results[0]->id] || !P->mma[dx->results[0]->id] ||
		    P->wgmma[dx->results[0]->id] || f->pipelined[res->id] || f->early[res->id] ||
		    (k = early_operand(f, dx, L, &kmajor)) < 0)
			continue;
		/* Only operands nothing writes (`in`): a store between d and the
		 * load would come after the copy. */
		NvAccess *A = f->deferred[res->id];
		const GRef *ref = f->refs[L->args[0]->id];
		if (!ref || !ref->readonly)
			continue;
		if (!A) {
			bool now = !before[res->id];
			for (int j = 1; now && j < L->nargs; j++)
				now = early_value(f, r, L->args[j], before, 0);
			if (!now)
				continue;
			A = arena_alloc(nv_arena(f), sizeof *A);
			if (!nv_access_setup(f, L, A) || !A->L || !nv_dot_takes_load(f, dx, A))
				continue;
		}
		const Type *at_ = dx->args[0]->type;
		int64_t M = at_->dims[0], K = at_->dims[1], N = dx->args[1]->type->dims[1];
		int64_t rows = k == 0 ? M : kmajor ? N : K, cols = k == 0 || kmajor ? K : N;
		int es = nv_smem_elem(res->type->dtype);
		uint64_t bytes = nv_align_up((uint64_t)(rows * cols * es), buf_align(f));
		/* dx then stages its other operand whole too (no K slices): in
		 * the temporary area. */
		uint64_t other = (uint64_t)((k == 0 ? N : M) * K * es), temp = f->smem_temp > other ? f->smem_temp : other;
		if (f->smem_scratch + temp + at + bytes > nv_smem_cap(f->nv) / 2)
			continue;
		EarlyCopy *e = arena_alloc(nv_arena(f), sizeof *e);
		LLVMValueRef off = cg_i32(f->g, (int32_t)at);
		e->s = (Stage){LLVMBuildInBoundsGEP2(f->g->b, f->g->t_i8, f->smem_pipe, &off, 1, "early"), cols, es, true,
		               false, rows, NULL};
		e->live = live;
		e->left = left;
		e->newer = newer;
		/* An earlier loop's buffers (or an epilogue's staging) took this
		 * area: their last readers first, as a pipeline's prologue does
		 * (LoopPipe.reuse). */
		if (!*left && at < f->smem_pipe_bytes)
			nv_barrier(f);
		Operand o = {NULL, A, k == 0 || kmajor ? 1 : 0, res->type->dtype, false};
		nv_stage_slice(f, &o, 0, K, &e->s, NULL);
		f->early[res->id] = e;
		++*left;
		at += bytes;
	}
	if (!*left)
		return 0;
	f->smem_pipe_live = at;
	if (at > f->smem_pipe_bytes)
		f->smem_pipe_bytes = at;
	commit(f);
	return 1;
}

/* Operand o's early copy (early_copies), or NULL. */
static EarlyCopy *early_of(NvFn *f, const Operand *o)
{
	return o->load && o->load->i ? f->early[o->load->i->results[0]->id] : NULL;
}

/* Dot of operands a and b has read their early copies: the batch's
 * buffers are free once all of it is read. */
static void early_done(NvFn *f, const Operand *a, const Operand *b)
{
	const Operand *ops[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		EarlyCopy *e = early_of(f, ops[k]);
		if (!e)
			continue;
		f->early[ops[k]->load->i->results[0]->id] = NULL;
		if (--*e->left == 0)
			f->smem_pipe_live = e->live;
	}
}

/* The first iteration's copy of a copy a turn ahead, before the loop (at
 * the end of the block before its head), as a group of its own.  When the
 * loop does not run its copies read nothing and write zeros, which the
 * loop's exit waits for (ForLoop.ahead).  (A branch on the loop's counter
 * in the loop instead cost as many registers and gained less at G 16 on the
 * H200: +2.4 % against +4 %, separate calls.) */
static bool ahead_first(NvFn *f, const Ahead *ah)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	ForLoop *l = f->loop;
	LLVMBasicBlockRef here = LLVMGetInsertBlock(b);
	/* The copies may open blocks of their own (guards): the branch to the
	 * head moves to the last of them, which becomes the loop's entry. */
	LLVMValueRef br = LLVMGetBasicBlockTerminator(l->pre);
	LLVMBasicBlockRef head = LLVMGetSuccessor(br, 0);
	LLVMInstructionEraseFromParent(br);
	LLVMPositionBuilderAtEnd(b, l->pre);
	if (ah->reuse)
		nv_barrier(f); /* an earlier loop's buffers took the area: their last readers first */
	LLVMValueRef runs = LLVMBuildICmp(b, LLVMIntNE, l->trips, cg_i64(g, 0), "");
	bool ok = nv_copy_at(f, l->loop, ah->L, l->lo, ah->kd, ah->K, &ah->s, runs);
	commit(f);
	LLVMBuildBr(b, head);
	l->pre = LLVMGetInsertBlock(b);
	LLVMPositionBuilderAtEnd(b, here);
	return ok;
}

/* Groups committed after the early copies a dot of operands a and b
 * reads that it may leave in flight (EarlyCopy.newer), when it copies
 * nothing itself: else 0. */
static int early_newer(NvFn *f, const Pipeline *p)
{
	const Operand *ops[2] = {p->a, p->b};
	int newer = 0;
	for (int k = 0; k < 2; k++) {
		const EarlyCopy *e = early_of(f, ops[k]);
		if (p->next[k] || (!e && ops[k]->load && !ops[k]->unstaged))
			return 0; /* its own copies */
		if (e && *e->newer > newer)
			newer = *e->newer;
	}
	return newer;
}

static bool run_pipeline(NvFn *f, Pipeline *p, SliceFn compute, void *ctx)
{
	bool async = p->a->load || p->b->load;
	int64_t issued = 0;
	int later = 0; /* early copies' groups committed after the dot's own */
	nv_temp_begin(f);
	for (int64_t s = 0; s < p->nslices; s++) {
		for (; issued < p->nslices && issued < s + p->stages; issued++) {
			if (issued >= p->stages)
				nv_barrier(f); /* the buffer's last readers are done */
			int buf = (int)(issued % p->stages);
			if (!p->a->unstaged && !early_of(f, p->a) && !p->next[0])
				stage_part(f, p, p->a, issued * p->kc, &p->sa[buf]);
			if (!early_of(f, p->b) && !p->next[1])
				stage_part(f, p, p->b, issued * p->kc, &p->sb[buf]);
			if (async)
				commit(f);
			if (issued + 1 == p->nslices && p->dot && async)
				later = early_copies(f, p->dot);
		}
		if (async) {
			/* Slice s is in; later ones may still be on their way.  A dot
			 * reading only early copies waits for them alone: its own
			 * (empty) group and a copy a turn ahead may stay in flight. */
			int newer = early_newer(f, p);
			LLVMValueRef pending = cg_i32(f->g, (int32_t)(newer ? issued + later + newer : issued - s - 1 + later));
			nv_intrinsic(f, "llvm.nvvm.cp.async.wait.group", NULL, 0, &pending, 1);
		}
		nv_proxy_fence(f, p->sa[0].wg);
		nv_barrier(f);
		if (!compute(f, ctx, p, (int)(s % p->stages), s * p->kc))
			return false;
	}
	f->smem_busy = true;
	return true;
}

/* ---- K slices in a loop ---------------------------------------------------------------- */

/* Operand o's deferred load restricted to the K slice that starts at k0
 * (i32, any value): the same access moved k0 along K, over [rows, kc] (a)
 * or [kc, cols] (b), in a blocked layout of its own with 16-byte vectors
 * (every register is in the slice). */
static NvAccess *slice_access(NvFn *f, const Operand *o, const GpuLayout *LS, LLVMValueRef k0)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const NvAccess *A = o->load;
	NvAccess *S = arena_alloc(nv_arena(f), sizeof *S);
	*S = *A;
	S->L = LS;
	int n = A->ref->rank;
	S->idx = arena_alloc(nv_arena(f), (size_t)(n + 1) * sizeof *S->idx);
	memcpy(S->idx, A->idx, (size_t)n * sizeof *S->idx);
	LLVMValueRef k = LLVMBuildZExt(b, k0, g->t_i64, "");
	for (int d = 0; d < n; d++) {
		if (A->rdim[d] != o->kd)
			continue;
		/* A FULL indexer is never masked: only the offset moves. */
		S->ubase = LLVMBuildAdd(b, S->ubase, LLVMBuildMul(b, k, A->ref->stride[d], ""), "");
		if (A->idx[d])
			S->idx[d] = LLVMBuildAdd(b, A->idx[d], k, "");
	}
	nv_access_tbase(f, S);
	return S;
}

/* The layout run_rolled copies a kc-deep slice of o in, or NULL if it has
 * no whole 16-byte vectors. */
static const GpuLayout *slice_layout(NvFn *f, const Operand *o, int64_t kc)
{
	/* (A gather's indices are registers of the load's layout, not of the
	 * slice's.) */
	if (!o->load || o->load->L->rank != 2 || (o->load->i && ir_access_gathers(o->load->i)))
		return NULL;
	int es = nv_smem_elem(o->dt);
	int64_t dims[2] = {o->load->L->dims[0], o->load->L->dims[1]};
	dims[o->kd] = kc;
	const GpuLayout *L = lay_blocked(f->plan->lc, 2, dims, 16 / es);
	return lay_contig(L) * es == 16 ? L : NULL;
}

/* Whether run_rolled can run pipeline p: both operands copied by cp.async
 * in whole 16-byte vectors, every slice whole. */
static bool can_roll(NvFn *f, const Pipeline *p, int64_t K)
{
	return p->a->load && p->b->load && K % p->kc == 0 && slice_layout(f, p->a, p->kc) &&
	       slice_layout(f, p->b, p->kc);
}

/* Buffer buf's (i32) stages of pipeline p, laid out as pipeline_buffers
 * does. */
static void rolled_stages(NvFn *f, const Pipeline *p, LLVMValueRef buf, Stage *sa, Stage *sb)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMValueRef off = LLVMBuildMul(b, buf, cg_i32(g, (int32_t)p->buf_bytes), "");
	LLVMValueRef base = LLVMBuildInBoundsGEP2(b, g->t_i8, p->sa[0].base, &off, 1, "slice");
	LLVMValueRef aoff = cg_i32(g, (int32_t)p->a_bytes);
	*sa = p->sa[0];
	sa->base = base;
	*sb = p->sb[0];
	sb->base = LLVMBuildInBoundsGEP2(b, g->t_i8, base, &aoff, 1, "");
	if (sa->wg)
		nv_wg_stage_fields(f, p->sa[0].base, LLVMBuildMul(b, buf, cg_i32(g, (int32_t)(p->buf_bytes / 16)), ""),
		                   p->a_bytes, sa, sb);
}

/* cp.async copies of slice j (i32) of both operands into buffer buf (i32);
 * past the last slice (j >= nslices, when `clamp`), zeros from nowhere: the
 * addresses are the last slice's, and nothing is read. */
static void rolled_issue(NvFn *f, const Pipeline *p, LLVMValueRef j, LLVMValueRef buf, bool clamp)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	Stage sa, sb;
	rolled_stages(f, p, buf, &sa, &sb);
	LLVMValueRef live = NULL;
	if (clamp) {
		LLVMValueRef last = cg_i32(g, (int32_t)(p->nslices - 1));
		live = LLVMBuildICmp(b, LLVMIntULE, j, last, "live");
		j = LLVMBuildSelect(b, live, j, last, "");
	}
	LLVMValueRef k0 = LLVMBuildMul(b, j, cg_i32(g, (int32_t)p->kc), "k0");
	for (int k = 0; k < 2; k++) {
		const Operand *o = k == 0 ? p->a : p->b;
		Operand s = *o;
		s.load = slice_access(f, o, slice_layout(f, o, p->kc), k0);
		nv_stage_slice(f, &s, 0, p->kc, k == 0 ? &sa : &sb, live);
	}
}

/* !llvm.loop !{self, !{"llvm.loop.unroll.disable"}} on a loop's latch
 * branch: the loop stays rolled (no unrolling, no peeling). */
static void no_unroll(Cg *g, LLVMValueRef br)
{
	LLVMMetadataRef tmp = LLVMTemporaryMDNode(g->ctx, NULL, 0);
	const char *key = "llvm.loop.unroll.disable";
	LLVMMetadataRef k = LLVMMDStringInContext2(g->ctx, key, strlen(key));
	LLVMMetadataRef ops[2] = {tmp, LLVMMDNodeInContext2(g->ctx, &k, 1)};
	LLVMMetadataRef node = LLVMMDNodeInContext2(g->ctx, ops, 2);
	LLVMMetadataReplaceAllUsesWith(tmp, node); /* self-referential (distinct) */
	LLVMSetMetadata(br, g->md_loop_kind, LLVMMetadataAsValue(g->ctx, node));
}

/* Pipeline p as a loop over its slices (can_roll): the copies of slices
 * 0 .. ahead - 1 before it; in iteration s, wait for slice s, barrier (so
 * that every copy of slice s is in and everyone is done reading the
 * buffer of slice s + ahead: slice s - 1's, or s - 2's when its wgmma
 * group stayed in flight through slice s - 1), start slice s + ahead
 * into that buffer, compute slice s.  The last `ahead` iterations copy
 * zeros instead (no branch), which are waited for after the loop.  With one stage:
 * barrier, copy, wait, barrier, compute.  LLVM may not unroll or peel the
 * loop.  *acc (the accumulators `compute` updates or replaces) is carried
 * around it. */
static bool run_rolled(NvFn *f, Pipeline *p, SliceFn compute, void *ctx, GV **acc)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int S = p->stages, ahead = p->ahead ? p->ahead : S - 1;
	PKC_ASSERT(p->nslices >= 2 && p->nslices <= INT32_MAX);
	nv_temp_begin(f);
	for (int j = 0; j < ahead; j++) {
		rolled_issue(f, p, cg_i32(g, j), cg_i32(g, j), false);
		commit(f);
	}
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), body = cg_block(g, "dot.slice"),
	                  exit = cg_block(g, "dot.slice.end");
	LLVMBuildBr(b, body);
	LLVMPositionBuilderAtEnd(b, body);
	LLVMValueRef s = LLVMBuildPhi(b, g->t_i32, "slice");
	GV *in = *acc, *ph = gv_new(f, in->L, in->dt);
	LLVMValueRef *phi = arena_alloc(nv_arena(f), (size_t)in->n * sizeof *phi);
	for (int r = 0; r < in->n; r++)
		ph->r[r] = phi[r] = LLVMBuildPhi(b, LLVMTypeOf(in->r[r]), "");
	*acc = ph; /* compute may update it in place */
	LLVMValueRef nsl = cg_i32(g, (int32_t)p->nslices);
	if (S >= 2) {
		LLVMValueRef pending = cg_i32(g, ahead - 1);
		nv_intrinsic(f, "llvm.nvvm.cp.async.wait.group", NULL, 0, &pending, 1);
		nv_proxy_fence(f, p->sa[0].wg);
		nv_barrier(f);
		LLVMValueRef j = LLVMBuildAdd(b, s, cg_i32(g, ahead), "");
		rolled_issue(f, p, j, LLVMBuildURem(b, j, cg_i32(g, S), ""), true);
		commit(f);
	} else {
		nv_barrier(f);
		rolled_issue(f, p, s, cg_i32(g, 0), false);
		commit(f);
		LLVMValueRef none = cg_i32(g, 0);
		nv_intrinsic(f, "llvm.nvvm.cp.async.wait.group", NULL, 0, &none, 1);
		nv_proxy_fence(f, p->sa[0].wg);
		nv_barrier(f);
	}
	Pipeline one = *p;
	Stage sa, sb;
	rolled_stages(f, p, S >= 2 ? LLVMBuildURem(b, s, cg_i32(g, S), "") : cg_i32(g, 0), &sa, &sb);
	one.nslices = 1;
	one.stages = 1;
	one.sa = &sa;
	one.sb = &sb;
	/* k0 0: every slice is whole, the computation does not depend on it. */
	if (!compute(f, ctx, &one, 0, 0))
		return false;
	GV *out = *acc;
	LLVMValueRef s1 = LLVMBuildAdd(b, s, cg_i32(g, 1), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMValueRef br = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, s1, nsl, ""), body, exit);
	no_unroll(g, br);
	LLVMValueRef zero = cg_i32(g, 0);
	LLVMAddIncoming(s, &zero, &pre, 1);
	LLVMAddIncoming(s, &s1, &latch, 1);
	for (int r = 0; r < in->n; r++) {
		LLVMAddIncoming(phi[r], &in->r[r], &pre, 1);
		LLVMAddIncoming(phi[r], &out->r[r], &latch, 1);
	}
	LLVMPositionBuilderAtEnd(b, exit);
	if (S >= 2) /* the zeros may still be on their way into the temporary area */
		nv_intrinsic(f, "llvm.nvvm.cp.async.wait.all", NULL, 0, NULL, 0);
	GV *res = gv_new(f, out->L, out->dt);
	memcpy(res->r, out->r, (size_t)out->n * sizeof *out->r);
	if (p->wg_pending) {
		LLVMValueRef none = cg_i64(g, 0);
		nv_intrinsic(f, "llvm.nvvm.wgmma.wait_group.sync.aligned", NULL, 0, &none, 1);
		nv_wg_fence(f, res);
	}
	*acc = res;
	f->smem_busy = true;
	return true;
}

/* Buffers for the slices, in the temporary area (wg: wgmma's layout). */
static void pipeline_buffers(NvFn *f, Pipeline *p, int64_t arows, int64_t bcols, int es, bool swz, bool wg)
{
	uint64_t abytes = nv_align_up((uint64_t)(arows * p->kc * es), buf_align(f));
	uint64_t bbytes = (uint64_t)(p->kc * bcols * es);
	uint64_t sbytes = nv_align_up(abytes + bbytes, buf_align(f));
	nv_temp_need(f, sbytes * (uint64_t)p->stages);
	p->a_bytes = abytes;
	p->buf_bytes = sbytes;
	p->sa = arena_alloc(nv_arena(f), (size_t)p->stages * sizeof *p->sa);
	p->sb = arena_alloc(nv_arena(f), (size_t)p->stages * sizeof *p->sb);
	for (int st = 0; st < p->stages; st++) {
		p->sa[st] = (Stage){nv_temp_ptr(f, sbytes * (uint64_t)st), p->kc, es, swz, wg, arows, NULL};
		p->sb[st] = (Stage){nv_temp_ptr(f, sbytes * (uint64_t)st + abytes), bcols, es, swz, wg, p->kc, NULL};
		if (wg) {
			p->sa[st].field = nv_wg_field(f, p->sa[st].base, NULL);
			p->sb[st].field = nv_wg_field(f, p->sb[st].base, NULL);
		}
	}
}

/* The operand of dot i at index k: a deferred load, or registers. */
static bool get_operand(NvFn *f, const Inst *i, int k, Operand *o)
{
	const Value *v = i->args[k];
	o->kd = k == 0 ? 1 : 0;
	o->dt = v->type->dtype;
	o->unstaged = false;
	o->load = f->deferred[v->id];
	if (!o->load && f->pipelined[v->id]) {
		/* Copied by the loop's pipeline: only its layout matters here. */
		o->load = arena_alloc(nv_arena(f), sizeof *o->load);
		o->load->L = f->plan->of[v->id];
	}
	o->regs = o->load ? NULL : nv_get(f, v, NULL);
	return o->load || o->regs;
}

/* Slice depth: K whole, or the largest power of two dividing K that keeps
 * the pipeline's buffers within `budget` bytes (at least `min`, a power of
 * two dividing K). */
static int64_t slice_depth(int64_t K, int64_t rows_cols, int es, int stages, int64_t min, uint64_t budget)
{
	int64_t kc = K;
	while (kc > min) {
		int64_t bufs = stages < K / kc ? stages : K / kc;
		if ((uint64_t)(rows_cols * kc * es * bufs) <= budget)
			break;
		kc = lay_pow2(kc) ? kc / 2 : kc & -kc;
	}
	return kc;
}

/* ---- running a dot (its pipelined loop: nvptx_pipe.c) ---------------------------------- */

/* Runs `compute` over the whole K of dot i from the pipeline's buffers
 * (pipelined loop), or over K slices staged now: in a loop of the kernel
 * when `rolled` (can_roll; *acc carried), else one after the other. */
static bool run_dot(NvFn *f, const Inst *i, Pipeline *pl, SliceFn compute, void *ctx, bool rolled, GV **acc)
{
	int x;
	const LoopPipe *lp = nv_pipe_of(f, i, &x);
	if (!lp && rolled)
		return run_rolled(f, pl, compute, ctx, acc);
	if (!lp)
		return run_pipeline(f, pl, compute, ctx);
	Stage sa, sb;
	if (!nv_pipe_step(f, lp, x, &sa, &sb))
		return false;
	Pipeline one = *pl;
	one.nslices = 1;
	one.stages = 1;
	one.sa = &sa;
	one.sb = &sb;
	return compute(f, ctx, &one, 0, 0);
}

/* ---- FMA -------------------------------------------------------------------------- */

typedef struct FmaCtx {
	const Inst *i;        /* the dot */
	GV *C;                /* accumulators (replaced slice by slice) */
	DType dt, ot;         /* result and operand dtypes */
	int64_t K;            /* real depth */
	int nrows, ncols;     /* distinct rows and columns of the thread's elements */
	int64_t *rows, *cols; /* their compile-time parts */
	int *rofr, *cofr;     /* per accumulator: its row and column there */
	LLVMValueRef trow, tcol; /* the thread's parts (or NULL) */
} FmaCtx;

static bool fma_slice(NvFn *f, void *ctxp, const Pipeline *p, int buf, int64_t k0)
{
	FmaCtx *x = ctxp;
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	GV *C = x->C;
	/* for kk in [0, min(kc, K - k0)): the accumulators are carried. */
	int64_t n = x->K - k0 < p->kc ? x->K - k0 : p->kc;
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
	LLVMBasicBlockRef head = cg_block(g, "dot.k"), body = cg_block(g, "dot.body"), exit = cg_block(g, "dot.exit");
	LLVMBuildBr(b, head);
	LLVMPositionBuilderAtEnd(b, head);
	LLVMValueRef kk = LLVMBuildPhi(b, g->t_i32, "kk");
	LLVMValueRef *phi = arena_alloc(nv_arena(f), (size_t)C->n * sizeof *phi);
	for (int r = 0; r < C->n; r++)
		phi[r] = LLVMBuildPhi(b, cg_type(g, x->dt), "");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, kk, cg_i32(g, (int32_t)n), ""), body, exit);
	LLVMPositionBuilderAtEnd(b, body);
	LLVMTypeRef mt = cg_mem_type(g, x->ot);
	LLVMValueRef *av = arena_alloc(nv_arena(f), (size_t)x->nrows * sizeof *av);
	LLVMValueRef *bv = arena_alloc(nv_arena(f), (size_t)x->ncols * sizeof *bv);
	for (int y = 0; y < x->nrows; y++) {
		LLVMValueRef m = cg_i32(g, (int32_t)x->rows[y]);
		if (x->trow)
			m = LLVMBuildOr(b, x->trow, m, "");
		LLVMValueRef v = LLVMBuildLoad2(b, mt, stage_ptr(f, &p->sa[buf], m, kk), "");
		av[y] = cg_cast(g, cg_from_mem(g, x->ot, v), x->ot, x->dt);
	}
	for (int y = 0; y < x->ncols; y++) {
		LLVMValueRef nn = cg_i32(g, (int32_t)x->cols[y]);
		if (x->tcol)
			nn = LLVMBuildOr(b, x->tcol, nn, "");
		LLVMValueRef v = LLVMBuildLoad2(b, mt, stage_ptr(f, &p->sb[buf], kk, nn), "");
		bv[y] = cg_cast(g, cg_from_mem(g, x->ot, v), x->ot, x->dt);
	}
	LLVMValueRef *next = arena_alloc(nv_arena(f), (size_t)C->n * sizeof *next);
	for (int r = 0; r < C->n; r++) {
		next[r] = mul_add(f, x->dt, phi[r], av[x->rofr[r]], bv[x->cofr[r]], x->i->loc);
		if (!next[r])
			return false;
	}
	LLVMValueRef kk1 = LLVMBuildAdd(b, kk, cg_i32(g, 1), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMBuildBr(b, head);
	LLVMValueRef zero = cg_i32(g, 0);
	LLVMAddIncoming(kk, &zero, &pre, 1);
	LLVMAddIncoming(kk, &kk1, &latch, 1);
	for (int r = 0; r < C->n; r++) {
		LLVMAddIncoming(phi[r], &C->r[r], &pre, 1);
		LLVMAddIncoming(phi[r], &next[r], &latch, 1);
	}
	LLVMPositionBuilderAtEnd(b, exit);
	GV *C2 = gv_new(f, C->L, x->dt);
	memcpy(C2->r, phi, (size_t)C->n * sizeof *phi);
	x->C = C2;
	return true;
}

static bool dot_fma(NvFn *f, const Inst *i)
{
	const Value *res = i->results[0];
	const GpuLayout *LC = f->plan->of[res->id];
	Operand a, b;
	FmaCtx x = {.i = i, .dt = res->type->dtype, .ot = i->args[0]->type->dtype, .K = i->args[0]->type->dims[1]};
	if (!get_operand(f, i, 0, &a) || !get_operand(f, i, 1, &b) || !(x.C = initial_acc(f, i, LC, x.dt)))
		return false;
	const GpuLayout *LA = operand_layout(&a), *LB = operand_layout(&b);
	int64_t Mp = INT64_C(1) << LA->dbits[0], Kp = INT64_C(1) << LA->dbits[1], Np = INT64_C(1) << LB->dbits[1];
	int es = nv_smem_elem(x.ot);
	Pipeline p = {&a, &b, 0, 0, a.load || b.load ? f->k->num_stages : 1, NULL, NULL, 0, 0, 0, false, NULL, {NULL, NULL}};
	if (p.stages < 1)
		p.stages = 1;
	/* A slice holds whole 16-byte vectors of both operands. */
	int px;
	bool in_loop = nv_pipe_of(f, i, &px) != NULL;
	p.kc = in_loop ? Kp : slice_depth(Kp, Mp + Np, es, p.stages, 16 / es < Kp ? 16 / es : Kp, FMA_SLICE_BYTES);
	p.nslices = (x.K + p.kc - 1) / p.kc;
	if (p.stages > p.nslices)
		p.stages = (int)p.nslices;
	bool rolled = !in_loop && p.nslices >= ROLL_MIN_SLICES && can_roll(f, &p, x.K);
	if (!in_loop)
		pipeline_buffers(f, &p, Mp, Np, es, false, false);

	/* The rows and columns this thread's result elements use. */
	GV *C = x.C;
	int64_t c[2];
	x.rows = arena_alloc(nv_arena(f), (size_t)C->n * sizeof *x.rows);
	x.cols = arena_alloc(nv_arena(f), (size_t)C->n * sizeof *x.cols);
	x.rofr = arena_alloc(nv_arena(f), (size_t)C->n * sizeof *x.rofr);
	x.cofr = arena_alloc(nv_arena(f), (size_t)C->n * sizeof *x.cofr);
	for (int r = 0; r < C->n; r++) {
		lay_reg_coord(LC, r, c);
		int u = 0, w = 0;
		while (u < x.nrows && x.rows[u] != c[0])
			u++;
		if (u == x.nrows)
			x.rows[x.nrows++] = c[0];
		while (w < x.ncols && x.cols[w] != c[1])
			w++;
		if (w == x.ncols)
			x.cols[x.ncols++] = c[1];
		x.rofr[r] = u;
		x.cofr[r] = w;
	}
	x.trow = nv_tcoord(f, LC, 0);
	x.tcol = nv_tcoord(f, LC, 1);
	if (!run_dot(f, i, &p, fma_slice, &x, rolled, &x.C))
		return false;
	f->vals[res->id] = x.C;
	return true;
}

/* ---- tensor cores -------------------------------------------------------------------- */

/* mma.sync m16n8k16: d += a * b (a: 4, b: 2 fragment registers as
 * ldmatrix gives them, d: nd x f32: c0..c3, or with nd 2 (M < 16) c0 c1,
 * rows 8-15 (copies of rows 0-7) computed from zeros and dropped). */
static void mma(NvFn *f, DType ot, LLVMValueRef *a, LLVMValueRef *bf, LLVMValueRef *d, int nd)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	bool f16 = ot == DT_F16;
	LLVMValueRef args[10];
	for (int j = 0; j < 4; j++)
		args[j] = a[j];
	for (int j = 0; j < 2; j++)
		args[4 + j] = bf[j];
	for (int j = 0; j < 4; j++)
		args[6 + j] = j < nd ? d[j] : LLVMConstReal(g->t_f32, 0.0);
	LLVMValueRef out = nv_intrinsic(f, f16 ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
	                                       : "llvm.nvvm.mma.m16n8k16.row.col.bf16", NULL, 0, args, 10);
	for (int j = 0; j < nd; j++)
		d[j] = LLVMBuildExtractValue(b, out, (unsigned)j, "");
}

/* ldmatrix.sync.aligned.m8n8.x<n>[.trans].b16 at this lane's row address:
 * n fragment registers in the type mma takes for dtype ot (<2 x half> for
 * f16, i32 for bf16). */
static void ldmatrix(NvFn *f, DType ot, int n, bool trans, LLVMValueRef addr, LLVMValueRef *out)
{
	const char *name = arena_printf(nv_arena(f), "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16", n,
	                                trans ? ".trans" : "");
	LLVMTypeRef sp = f->nv->t_sptr;
	LLVMValueRef r = nv_intrinsic(f, name, &sp, 1, &addr, 1);
	LLVMTypeRef h2 = LLVMVectorType(LLVMHalfTypeInContext(f->g->ctx), 2);
	for (int j = 0; j < n; j++) {
		out[j] = LLVMBuildExtractValue(f->g->b, r, (unsigned)j, "");
		if (ot == DT_F16)
			out[j] = LLVMBuildBitCast(f->g->b, out[j], h2, "");
	}
}

/* Accumulator registers of one m16n8 tile in C's layout: c0..c3, or c0 c1
 * where M < 16 leaves rows 8-15 out (lay_dot_is_mma). */
static int tile_regs(const GpuLayout *LC)
{
	return LC->dims[0] >= 16 ? 4 : 2;
}

/* The distinct 16-row (dim 0) or 8-column (dim 1) tiles of this warp: the
 * compile-time part of their origins in C's layout.  Tiles of the padding
 * (an N of 96 pads to 128) are left out: no warp bit lies along a dim that
 * is not a power of two (lay_mma_wm_bits), so the compile-time part says
 * which they are. */
static int tiles_of(const GpuLayout *LC, int n, int dim, int64_t *out)
{
	int cnt = 0;
	int64_t c[2];
	for (int t = 0; t < n; t += tile_regs(LC)) {
		lay_reg_coord(LC, t, c);
		if (c[dim] >= LC->dims[dim])
			continue;
		int x = 0;
		while (x < cnt && out[x] != c[dim])
			x++;
		if (x == cnt)
			out[cnt++] = c[dim];
	}
	return cnt;
}

typedef struct MmaCtx {
	GV *D;                  /* accumulators, C-fragment layout */
	DType ot;               /* operand dtype */
	int nm, nn;             /* this warp's 16-row and 8-column tiles */
	int64_t *mt, *nt;       /* their compile-time origins */
	LLVMValueRef wrow, wcol;/* the warp's tile origin (thread part, lane bits cleared) */
	LLVMValueRef arow;      /* this lane's k row in an ldmatrix x4 of B */
	LLVMValueRef row_a;     /* ... its row in A's x4 (arow, below M the same modulo M) */
	LLVMValueRef acol;      /* this lane's k column offset in A's x4 (0 or 8) */
	LLVMValueRef l8;        /* 8 on lanes 8-15 and 24-31: the second matrix of a pair */
	bool b_kmajor;          /* B staged K-major (its rows are N: nv_dot_trans_b) */
	bool roll_k;            /* the k-steps of a slice in a loop (run_rolled) */
} MmaCtx;

/* One k-step of 16 at kk (i32) of the slice in buffer buf. */
static void mma_kstep(NvFn *f, MmaCtx *x, const Pipeline *p, int buf, LLVMValueRef kk)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	GV *D = x->D;
	int64_t cc[2];
	/* A: per 16-row tile, x4 = (rows 0-7, k 0-7) (rows 8-15, k 0-7)
	 * (rows 0-7, k 8-15) (rows 8-15, k 8-15): a0a1 a2a3 a4a5 a6a7. */
	LLVMValueRef *af = arena_alloc(nv_arena(f), (size_t)(x->nm * 4) * sizeof *af);
	for (int m = 0; m < x->nm; m++) {
		LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildOr(b, x->wrow, cg_i32(g, (int32_t)x->mt[m]), ""), x->row_a, "");
		LLVMValueRef c = LLVMBuildAdd(b, x->acol, kk, "");
		ldmatrix(f, x->ot, 4, false, stage_ptr(f, &p->sa[buf], r, c), &af[4 * m]);
	}
	/* B: per pair of this warp's 8-column tiles (n, q), one x4.trans of
	 * (k 0-7) (k 8-15) of each: b0b1 b2b3 of tile n, then of tile q
	 * (lanes 16-31 address tile q, nt[q] - nt[n] columns on); a lone
	 * tile takes x2.trans.  Then every tile of the warp with it. */
	bool *done = arena_alloc(nv_arena(f), (size_t)x->nn * sizeof *done);
	memset(done, 0, (size_t)x->nn * sizeof *done);
	for (int n = 0; n < x->nn; n++) {
		if (done[n])
			continue;
		int pair = -1;
		for (int q = n + 1; q < x->nn && pair < 0; q++)
			if (!done[q] && x->nt[q] > x->nt[n] && (x->nt[q] - x->nt[n]) % 8 == 0)
				pair = q;
		LLVMValueRef bf[4];
		LLVMValueRef r = LLVMBuildAdd(b, x->arow, kk, "");
		LLVMValueRef c = LLVMBuildOr(b, x->wcol, cg_i32(g, (int32_t)x->nt[n]), "");
		if (x->b_kmajor) {
			/* Rows of N, k along them: ldmatrix without .trans gives the
			 * fragments; lane l addresses row l % 8 of matrix l / 8 (tile n
			 * at k and k + 8, then tile q at k and k + 8). */
			LLVMValueRef row = LLVMBuildAdd(b, c, LLVMBuildSub(b, x->arow, x->l8, ""), "");
			if (pair >= 0)
				row = LLVMBuildAdd(b, row, LLVMBuildMul(b, x->acol, cg_i32(g, (int32_t)((x->nt[pair] - x->nt[n]) / 8)), ""), "");
			ldmatrix(f, x->ot, pair >= 0 ? 4 : 2, false, stage_ptr(f, &p->sb[buf], row, LLVMBuildAdd(b, kk, x->l8, "")), bf);
		} else if (pair >= 0) {
			/* acol is 8 on lanes 16-31: (nt[q] - nt[n]) / 8 times it. */
			LLVMValueRef d = LLVMBuildMul(b, x->acol, cg_i32(g, (int32_t)((x->nt[pair] - x->nt[n]) / 8)), "");
			ldmatrix(f, x->ot, 4, true, stage_ptr(f, &p->sb[buf], r, LLVMBuildAdd(b, c, d, "")), bf);
		} else
			ldmatrix(f, x->ot, 2, true, stage_ptr(f, &p->sb[buf], r, c), bf);
		int tiles[2] = {n, pair};
		for (int h = 0; h < 2 && tiles[h] >= 0; h++) {
			done[tiles[h]] = true;
			int nd = tile_regs(D->L);
			for (int t = 0; t < D->n; t += nd) {
				lay_reg_coord(D->L, t, cc);
				if (cc[1] != x->nt[tiles[h]])
					continue;
				int m = 0;
				while (x->mt[m] != cc[0])
					m++;
				mma(f, x->ot, &af[4 * m], &bf[2 * h], &D->r[t], nd);
			}
		}
	}
}

static bool mma_slice(NvFn *f, void *ctxp, const Pipeline *p, int buf, int64_t k0)
{
	MmaCtx *x = ctxp;
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	(void)k0;
	if (!x->roll_k || p->kc <= 16) {
		for (int64_t kk = 0; kk < p->kc; kk += 16)
			mma_kstep(f, x, p, buf, cg_i32(g, (int32_t)kk));
		return true;
	}
	/* for kk in [0, kc) step 16, rolled: the accumulators are carried. */
	GV *D = x->D;
	LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), body = cg_block(g, "dot.k"), exit = cg_block(g, "dot.k.end");
	LLVMBuildBr(b, body);
	LLVMPositionBuilderAtEnd(b, body);
	LLVMValueRef kk = LLVMBuildPhi(b, g->t_i32, "kk");
	LLVMValueRef *in = arena_alloc(nv_arena(f), (size_t)D->n * sizeof *in);
	LLVMValueRef *phi = arena_alloc(nv_arena(f), (size_t)D->n * sizeof *phi);
	for (int r = 0; r < D->n; r++) {
		in[r] = D->r[r];
		D->r[r] = phi[r] = LLVMBuildPhi(b, g->t_f32, "");
	}
	mma_kstep(f, x, p, buf, kk);
	LLVMValueRef kk1 = LLVMBuildAdd(b, kk, cg_i32(g, 16), "");
	LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
	LLVMValueRef br = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, kk1, cg_i32(g, (int32_t)p->kc), ""), body, exit);
	no_unroll(g, br);
	LLVMValueRef zero = cg_i32(g, 0);
	LLVMAddIncoming(kk, &zero, &pre, 1);
	LLVMAddIncoming(kk, &kk1, &latch, 1);
	for (int r = 0; r < D->n; r++) {
		LLVMAddIncoming(phi[r], &in[r], &pre, 1);
		LLVMAddIncoming(phi[r], &D->r[r], &latch, 1);
	}
	LLVMPositionBuilderAtEnd(b, exit);
	return true;
}

/* ---- wgmma (sm_90a) -------------------------------------------------------------------- */

/* The start-address field of a descriptor is the shared-space byte
 * address >> 4, 14 bits.  Every shared address lies below 2^18 (228 KiB on
 * sm_90), so for an offset off that is a multiple of 16, (addr + off) >> 4
 * = (addr >> 4) + off / 16 < 2^14: exact, and the add never carries out of
 * the field.  So the field of a stage is that of the pipeline area plus
 * its buffer's offset / 16, and a descriptor is its stage's field plus a
 * constant per k-step and tile (wg_desc). */
LLVMValueRef nv_wg_field(NvFn *f, LLVMValueRef ptr, LLVMValueRef off16)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMValueRef a = LLVMBuildPtrToInt(b, ptr, g->t_i32, "");
	a = LLVMBuildLShr(b, LLVMBuildAnd(b, a, cg_i32(g, 0x3FFFF), ""), cg_i32(g, 4), "");
	return off16 ? LLVMBuildAdd(b, a, off16, "desc.addr") : a;
}

void nv_wg_stage_fields(NvFn *f, LLVMValueRef area, LLVMValueRef off16, uint64_t a_bytes, Stage *sa, Stage *sb)
{
	sa->field = nv_wg_field(f, area, off16);
	sb->field = LLVMBuildAdd(f->g->b, sa->field, cg_i32(f->g, (int32_t)(a_bytes / 16)), "");
}

/* The matrix descriptor of stage s (field: its field, plus any run-time
 * offset / 16) at byte offset off (the layout's offset without the
 * swizzle: the start of an atom, or a k-step into one, which the hardware
 * swizzles as it reads): start address, leading byte offset lbo (N-major
 * B: from one block of lines to the next; unused for K-major A), stride
 * byte offset (8 lines), swizzle mode (1: 128 bytes, 2: 64, 3: 32).  The
 * low word is the field plus a constant, the high word a constant. */
static LLVMValueRef wg_desc(NvFn *f, const Stage *s, LLVMValueRef field, int64_t off, int64_t lbo)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int line = wg_line(s);
	uint64_t mode = line == 128 ? 1 : line == 64 ? 2 : 3;
	PKC_ASSERT(off >= 0 && off % 16 == 0 && off >> 4 < 0x4000);
	uint32_t lo = (uint32_t)(off >> 4) | ((uint32_t)lbo >> 4 & 0x3FFF) << 16;
	uint64_t hi = ((uint64_t)(8 * line) >> 4 & 0x3FFF) << 32 | mode << 62;
	LLVMValueRef w = LLVMBuildAdd(b, field, LLVMConstInt(g->t_i32, lo, 0), "");
	/* Packed, not or'ed: where the field is a 64-bit loop counter (rolled
	 * slices), LLVM made zext | hi one add.s64 of a 64-bit constant, and
	 * ptxas 13.0 then dropped the high word (HGMMA read a descriptor whose
	 * high word was a kernel parameter: an illegal shared address on the
	 * H200, test/gpu kernels wgmma-epilogue). */
	return nv_pack_b64(f, w, LLVMConstInt(g->t_i32, hi >> 32, 0));
}

/* wgmma.mma_async m64nNk16: the n / 2 f32 accumulators d of this thread
 * += A (K-major, descriptor da; or areg: the 4 fragment registers) x B
 * (descriptor db; N-major: imm-trans-b 1, or K-major: 0), f16 or bf16. */
static void wgmma(NvFn *f, DType ot, int n, LLVMValueRef da, const LLVMValueRef *areg, LLVMValueRef db,
                  bool b_kmajor, bool accumulate, LLVMValueRef *d)
{
	Cg *g = f->g;
	int nd = n / 2;
	size_t cap = (size_t)nd * 16 + 256;
	char *text = arena_alloc(nv_arena(f), cap), *cons = arena_alloc(nv_arena(f), cap);
	/* scale-d as an immediate: a register holding it, set between two
	 * wgmmas of a group, makes ptxas serialize the group (C7514). */
	size_t t = (size_t)snprintf(text, cap, "{\n.reg .pred p;\nsetp.ne.b32 p, %d, 0;\n"
	                            "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", accumulate, n,
	                            ot == DT_F16 ? "f16" : "bf16", ot == DT_F16 ? "f16" : "bf16");
	size_t c = 0;
	for (int j = 0; j < nd; j++) {
		t += (size_t)snprintf(text + t, cap - t, "%s$%d", j ? ", " : "", j);
		c += (size_t)snprintf(cons + c, cap - c, "=f,");
	}
	/* Operands after the accumulators: A (1 descriptor or 4 registers), then B. */
	int na = areg ? 4 : 1;
	if (areg)
		snprintf(text + t, cap - t, "}, {$%d, $%d, $%d, $%d}, $%d, p, 1, 1, %d;\n}", nd, nd + 1, nd + 2, nd + 3,
		         nd + 4, !b_kmajor);
	else
		snprintf(text + t, cap - t, "}, $%d, $%d, p, 1, 1, 0, %d;\n}", nd, nd + 1, !b_kmajor);
	c += (size_t)snprintf(cons + c, cap - c, areg ? "r,r,r,r,l" : "l,l");
	for (int j = 0; j < nd; j++)
		c += (size_t)snprintf(cons + c, cap - c, ",%d", j);
	LLVMValueRef *args = arena_alloc(nv_arena(f), (size_t)(nd + na + 1) * sizeof *args);
	LLVMTypeRef *ft = arena_alloc(nv_arena(f), (size_t)nd * sizeof *ft);
	for (int j = 0; j < na; j++)
		args[j] = areg ? areg[j] : da;
	args[na] = db;
	for (int j = 0; j < nd; j++) {
		args[na + 1 + j] = d[j];
		ft[j] = g->t_f32;
	}
	LLVMValueRef out = nv_inline_ptx(f, LLVMStructTypeInContext(g->ctx, ft, (unsigned)nd, 0), text, cons, args,
	                              nd + na + 1);
	for (int j = 0; j < nd; j++)
		d[j] = LLVMBuildExtractValue(g->b, out, (unsigned)j, "");
}

typedef struct WgCtx {
	GV *D;                  /* accumulators, lay_wgmma_c */
	DType ot;               /* operand dtype */
	int nm;                 /* this warpgroup's 64-row tiles */
	int64_t *mt;            /* their compile-time origins */
	int nc, nch;            /* column chunks of one wgmma, and their width (<= 256) */
	int **regs;             /* per tile and chunk: the accumulator registers, in wgmma's order */
	LLVMValueRef wrow;      /* the warpgroup's row origin (thread part) */
	int pending;            /* wgmma groups left in flight after the slice (wg_pending) */
	GV *areg;               /* A in registers (nv_wg_a_in_regs), else NULL: A staged */
	bool zero;              /* the accumulators start at zero: the first k-step sets them */
	bool b_kmajor;          /* B staged K-major (a transposed operand, nv_dot_trans_b) */
	const LoopPipe *pipe;   /* the pipelined loop of the dot (its dot px), or NULL */
	int px;
} WgCtx;

/* Every k-step of the slice in buffer buf, as one wgmma group, waited for
 * before the buffer may be reused (in a pipelined loop with wg_pending,
 * the group stays in flight until the next iteration's). */
static bool wg_slice(NvFn *f, void *ctxp, const Pipeline *p, int buf, int64_t k0)
{
	WgCtx *x = ctxp;
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const Stage *sa = &p->sa[buf], *sb = &p->sb[buf];
	int64_t la = wg_line(sa), lb = wg_line(sb), es = sa->es;
	LLVMValueRef *d = arena_alloc(nv_arena(f), (size_t)x->nch * sizeof *d);
	/* Register A: every fragment packed before the fence, so that no
	 * ordinary instruction writes a wgmma operand inside the group. */
	LLVMValueRef *af = arena_alloc(nv_arena(f), (size_t)(p->kc / 16 * x->nm * 4 + 1) * sizeof *af);
	for (int64_t kk = 0; x->areg && kk < p->kc; kk += 16)
		for (int m = 0; m < x->nm; m++)
			nv_wg_a_frag(f, x->areg, x->mt[m], k0 + kk, af + (kk / 16 * x->nm + m) * 4);
	/* The stages' fields, A's moved to the warpgroup's rows: every
	 * descriptor is one of them plus a constant. */
	LLVMValueRef fa = x->areg ? NULL : LLVMBuildAdd(b, sa->field, LLVMBuildMul(b, x->wrow, cg_i32(g, (int32_t)(la / 16)), ""), "");
	LLVMValueRef fb = sb->field;
	if (x->pipe)
		nv_pipe_turn(f, x->pipe, x->px, false);
	nv_intrinsic(f, "llvm.nvvm.wgmma.fence.sync.aligned", NULL, 0, NULL, 0);
	for (int64_t kk = 0; kk < p->kc; kk += 16) {
		int64_t kb = kk * es;
		for (int m = 0; m < x->nm; m++) {
			LLVMValueRef da = x->areg ? NULL : wg_desc(f, sa, fa, x->mt[m] * la + kb / la * sa->rows * la + kb % la, 16);
			bool acc = !(x->zero && k0 + kk == 0);
			for (int c = 0; c < x->nc; c++) {
				int64_t nb = (int64_t)c * x->nch * es;
				/* K-major B: rows n of the chunk, like A's rows; N-major: lines of N. */
				LLVMValueRef db = x->b_kmajor
				                  ? wg_desc(f, sb, fb, (int64_t)c * x->nch * lb + kb / lb * sb->rows * lb + kb % lb, 16)
				                  : wg_desc(f, sb, fb, (nb / lb * sb->rows + kk) * lb, sb->rows * lb);
				int *rg = x->regs[m * x->nc + c];
				/* Zero accumulators are not read: no register copies them in. */
				for (int q = 0; q < x->nch / 2; q++)
					d[q] = acc ? x->D->r[rg[q]] : LLVMGetUndef(g->t_f32);
				wgmma(f, x->ot, x->nch, da, x->areg ? af + (kk / 16 * x->nm + m) * 4 : NULL, db, x->b_kmajor, acc,
				      d);
				for (int q = 0; q < x->nch / 2; q++)
					x->D->r[rg[q]] = d[q];
			}
		}
	}
	nv_intrinsic(f, "llvm.nvvm.wgmma.commit_group.sync.aligned", NULL, 0, NULL, 0);
	if (x->pipe)
		nv_pipe_turn(f, x->pipe, x->px, true);
	if (x->pipe && !nv_pipe_issue_late(f, x->pipe, x->px))
		return false;
	LLVMValueRef pending = cg_i64(g, x->pending);
	nv_intrinsic(f, "llvm.nvvm.wgmma.wait_group.sync.aligned", NULL, 0, &pending, 1);
	if (x->pipe)
		nv_pipe_release(f, x->pipe, x->px, x->pending);
	if (!x->pending)
		nv_wg_fence(f, x->D);
	if (x->pipe && !x->pending)
		nv_pipe_fence_carried(f, x->pipe, x->px);
	return true;
}

/* Columns of one wgmma of a dot of N columns: N, or, above wgmma's 256,
 * the widest multiple of 8 that divides N and starts each chunk at a
 * block of N-major B's lines (wg_slice). */
static int wg_chunk(int64_t N, int es)
{
	int line = nv_wg_line(N * es), n = 256;
	while (N > 256 && n > 16 && (N % n != 0 || n * es % line != 0))
		n -= 8;
	return N <= 256 ? (int)N : n;
}

/* The warpgroup's tiles and the registers each wgmma takes (lay_wgmma_c). */
static void wg_setup(NvFn *f, WgCtx *x, const GpuLayout *LC, int64_t N)
{
	LLVMBuilderRef b = f->g->b;
	GV *D = x->D;
	int64_t c[2];
	x->mt = arena_alloc(nv_arena(f), (size_t)D->n * sizeof *x->mt);
	for (int r = 0; r < D->n; r++) {
		lay_reg_coord(LC, r, c);
		int m = 0;
		while (m < x->nm && x->mt[m] != (c[0] & ~INT64_C(63)))
			m++;
		if (m == x->nm)
			x->mt[x->nm++] = c[0] & ~INT64_C(63);
	}
	x->nch = wg_chunk(N, nv_smem_elem(x->ot));
	x->nc = (int)(N / x->nch);
	/* The registers of padding columns (N not a power of two) are left alone. */
	PKC_ASSERT((int64_t)x->nm * x->nc * x->nch / 2 << LC->dbits[1] == (int64_t)D->n * N);
	x->regs = arena_alloc(nv_arena(f), (size_t)(x->nm * x->nc) * sizeof *x->regs);
	for (int m = 0; m < x->nm; m++)
		for (int k = 0; k < x->nc; k++) {
			int *rg = x->regs[m * x->nc + k] = arena_alloc(nv_arena(f), (size_t)x->nch / 2 * sizeof *rg);
			/* d[4i + j]: row 8 * (j / 2), column 8i + j % 2 of the tile's chunk. */
			for (int q = 0; q < x->nch / 2; q++) {
				int64_t at[2] = {x->mt[m] + 8 * (q % 4 / 2), (int64_t)k * x->nch + 8 * (q / 4) + q % 2};
				rg[q] = lay_reg_of(LC, at);
			}
		}
	LLVMValueRef trow = nv_tcoord(f, LC, 0);
	x->wrow = trow ? LLVMBuildAnd(b, trow, cg_i32(f->g, ~63), "") : cg_i32(f->g, 0);
}

/* The stages of wgmma dot i over K slices in a loop (run_rolled), as
 * pkc chooses them, and whether a slice's group stays in flight (the
 * pipelined loops' rule, nv_pipe_plan). */
static void wg_roll_stages(NvFn *f, const Inst *i, Pipeline *p)
{
	int64_t M = i->args[0]->type->dims[0], N = i->args[1]->type->dims[1];
	uint64_t bytes = nv_align_up((uint64_t)(M * p->kc * 2), NV_WGMMA_ALIGN) + (uint64_t)(N * p->kc * 2);
	uint64_t cap = nv_pipe_cap(f);
	int S = nv_sched_stages(f, i, nv_align_up(bytes, NV_WGMMA_ALIGN),
	                        cap > f->smem_scratch ? cap - f->smem_scratch : 0, f->smem_scratch, 0, -1);
	p->stages = S < 1 ? 1 : S;
	if (S >= 3 && (S - 2) * p->kc >= 64) {
		p->ahead = S - 2;
		p->wg_pending = true;
	}
}

/* ---- copies a turn ahead ------------------------------------------------------------- */

/* Operand k of the first dot d of a FOR loop's body, a load of an `in`
 * array whose indices any iteration can compute (nv_loop_computable), read
 * whole (one K slice): copied a turn ahead, into a buffer of its own in
 * the pipeline area kept for the whole loop.  The first iteration's copy
 * goes before the loop (ahead_first); each iteration, once every warp has
 * read its copy, copies the next iteration's (ahead_next), which so
 * arrives while the rest of the iteration runs: decode attention's k.
 * Only for the body's first user of the pipeline area (no dot or region
 * before d), and while the CTA's shared memory, with room for one more
 * operand as large (its early copy), stays within half of an SM's (as
 * early_copies).  NULL when not. */
static Ahead *ahead_plan(NvFn *f, const Inst *d, const Operand *o, int64_t rows, int64_t cols, int64_t K,
                         uint64_t temp)
{
	const ForLoop *l = f->loop;
	if (!f->nv->ahead || !l || !o->load || !o->load->i || o->unstaged || d->parent != l->loop->regions[0])
		return NULL;
	const Inst *L = o->load->i;
	const GRef *ref = f->refs[L->args[0]->id];
	if (L->parent != d->parent || !ref || !ref->readonly || !nv_loop_computable(l->loop, L))
		return NULL;
	for (const Inst *x = d->parent->first; x != d; x = x->next)
		if (x->op == IR_DOT || x->nregions)
			return NULL;
	int es = nv_smem_elem(o->dt);
	uint64_t at = nv_align_up(f->smem_pipe_live, buf_align(f)),
	         bytes = nv_align_up((uint64_t)(rows * cols * es), buf_align(f));
	if (temp < f->smem_temp)
		temp = f->smem_temp;
	if (f->smem_scratch + temp + at + 2 * bytes > nv_smem_cap(f->nv) / 2)
		return NULL;
	Ahead *ah = arena_alloc(nv_arena(f), sizeof *ah);
	LLVMValueRef off = cg_i32(f->g, (int32_t)at);
	ah->s = (Stage){LLVMBuildInBoundsGEP2(f->g->b, f->g->t_i8, f->smem_pipe, &off, 1, "ahead"), cols, es, true, false,
	                rows, NULL};
	ah->L = L;
	ah->kd = o->kd;
	ah->K = K;
	ah->reuse = at < f->smem_pipe_bytes;
	f->loop->ahead = true;
	f->smem_pipe_live = at + bytes;
	if (f->smem_pipe_live > f->smem_pipe_bytes)
		f->smem_pipe_bytes = f->smem_pipe_live;
	return ah;
}

/* Once every warp has read this iteration's copy (the caller's barrier):
 * the next iteration's, as a group of its own. */
static bool ahead_next(NvFn *f, const Ahead *ah)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const ForLoop *l = f->loop;
	/* No branch: past the last iteration the copies read nothing (at this
	 * iteration's addresses) and write zeros, waited for at the exit. */
	LLVMValueRef c1 = LLVMBuildAdd(b, l->c, cg_i64(g, 1), "");
	LLVMValueRef more = LLVMBuildICmp(b, LLVMIntULT, c1, l->trips, "");
	c1 = LLVMBuildSelect(b, more, c1, l->c, "");
	LLVMTypeRef t = LLVMTypeOf(l->lo);
	LLVMValueRef ct = t == g->t_i64 ? c1 : LLVMBuildTrunc(b, c1, t, "");
	LLVMValueRef iv = LLVMBuildAdd(b, LLVMBuildMul(b, ct, l->step, ""), l->lo, "iv.next");
	if (!nv_copy_at(f, l->loop, ah->L, iv, ah->kd, ah->K, &ah->s, more))
		return false;
	commit(f);
	return true;
}

static bool dot_mma(NvFn *f, const Inst *i)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const Value *res = i->results[0];
	const GpuLayout *LC = f->plan->of[res->id];
	int64_t M = i->args[0]->type->dims[0], K = i->args[0]->type->dims[1], N = i->args[1]->type->dims[1];
	Operand a, bo;
	GV *C;
	/* B = transpose(x): x staged K-major as it lies (nvptx_wgmma_chain.c),
	 * from its registers or copied from global memory (a deferred load). */
	const Value *bt = nv_dot_trans_b(f->plan, i);
	bool bt_here = bt && !f->pipelined[bt->id]; /* else the loop's pipeline copies x */
	if (bt_here) {
		NvAccess *ld = f->deferred[bt->id];
		bo = (Operand){ld ? NULL : nv_get(f, bt, NULL), ld, 1, bt->type->dtype, false};
	}
	if (!get_operand(f, i, 0, &a) || (!bt_here && !get_operand(f, i, 1, &bo)) ||
	    (bt_here && !bo.regs && !bo.load) || !(C = initial_acc(f, i, LC, DT_F32)))
		return false;
	bool wg = f->plan->wgmma[res->id];
	int px = 0;
	const LoopPipe *lp = nv_pipe_of(f, i, &px); /* the dot's pipelined loop, or NULL */
	bool in_loop = lp != NULL;
	/* Register A, unless the loop's prologue stored it for the stage, or
	 * it lives across the iterations of a loop around the dot and the
	 * ptxas in use may miscompile that: then it is staged as any A. */
	a.unstaged = wg && nv_wg_a_in_regs(f, a.regs, M, K) && !(lp && nv_pipe_resident(lp, px)) &&
	             !nv_wg_a_invariant_unsafe(f, i);
	MmaCtx x = {.ot = a.dt};
	x.D = gv_new(f, LC, DT_F32);
	memcpy(x.D->r, C->r, (size_t)C->n * sizeof *C->r);
	/* Operands an earlier dot copied (early_copies; never a pipelined
	 * loop's): whole K, one stage. */
	const EarlyCopy *ea = early_of(f, &a), *eb = early_of(f, &bo);
	bool early = ea || eb;

	Pipeline p = {&a, &bo, 0, 0, a.load || bo.load ? f->k->num_stages : 1, NULL, NULL, 0, 0, 0, false, NULL, {NULL, NULL}};
	if (p.stages < 1)
		p.stages = 1;
	p.kc = in_loop || early ? K : slice_depth(K, M + N, 2, p.stages, 16, MMA_SLICE_BYTES);
	bool rolled = false;
	if (!in_loop && !early && K > ROLL_MIN_K && a.load && bo.load) {
		/* Slices of ROLL_KC; deeper ones (within the budget's depth) where
		 * those have too few elements for a 16-byte vector a thread: a
		 * dot of few rows or columns (16 x 4096 x 16: 256 mma.sync
		 * unrolled before, §10.2's bound passed). */
		Pipeline q = p;
		q.kc = p.kc < ROLL_KC ? p.kc : ROLL_KC;
		while (!(rolled = can_roll(f, &q, K)) && q.kc * 2 <= p.kc && q.kc * 2 < K)
			q.kc *= 2;
		if (rolled)
			p.kc = q.kc;
		if (rolled && wg)
			wg_roll_stages(f, i, &p);
	}
	p.nslices = K / p.kc;
	if (p.stages > p.nslices)
		p.stages = (int)p.nslices;
	if (p.ahead >= p.stages) { /* fewer slices than stages */
		p.ahead = 0;
		p.wg_pending = false;
	}
	/* mma.sync operands copied a turn ahead (a FOR loop's first dot). */
	Ahead *ah[2] = {NULL, NULL};
	if (!wg && !in_loop && !rolled && !early && p.nslices == 1) {
		ah[0] = ahead_plan(f, i, &a, M, K, K, (uint64_t)(N * K * 2));
		ah[1] = ahead_plan(f, i, &bo, bt ? N : K, bt ? K : N, K, ah[0] ? 0 : (uint64_t)(M * K * 2));
	}
	if (!in_loop)
		pipeline_buffers(f, &p, a.unstaged || ea || ah[0] ? 0 : M, eb || ah[1] ? 0 : N, 2, true, wg);
	for (int st = 0; bt && !in_loop && st < p.stages; st++) {
		p.sb[st].cols = p.kc; /* K-major: N rows of the slice's K */
		p.sb[st].rows = N;
	}
	if (ea)
		p.sa[0] = ea->s;
	if (eb)
		p.sb[0] = eb->s;
	if (ah[0])
		p.sa[0] = ah[0]->s;
	if (ah[1])
		p.sb[0] = ah[1]->s;
	p.next[0] = ah[0];
	p.next[1] = ah[1];
	for (int k = 0; k < 2; k++)
		if (ah[k] && !ahead_first(f, ah[k]))
			return false;
	if (wg) {
		WgCtx w = {.D = x.D, .ot = a.dt, .pending = lp ? nv_pipe_dot_in_flight(lp, px) : rolled && p.wg_pending,
		           .areg = a.unstaged ? a.regs : NULL,
		           .b_kmajor = bt != NULL,
		           /* rolled: one body serves every slice, k0 is 0 in each */
		           .zero = !rolled && zero_acc(C),
		           .pipe = lp,
		           .px = px};
		wg_setup(f, &w, LC, N);
		if (!run_dot(f, i, &p, wg_slice, &w, rolled, &w.D))
			return false;
		f->vals[res->id] = w.D;
		return true;
	}

	x.mt = arena_alloc(nv_arena(f), (size_t)x.D->n * sizeof *x.mt);
	x.nt = arena_alloc(nv_arena(f), (size_t)x.D->n * sizeof *x.nt);
	x.nm = tiles_of(LC, x.D->n, 0, x.mt);
	x.nn = tiles_of(LC, x.D->n, 1, x.nt);
	/* The warp's origin: C's thread coordinates without the lane bits
	 * (rows 0-2, columns 1-2). */
	LLVMValueRef trow = nv_tcoord(f, LC, 0), tcol = nv_tcoord(f, LC, 1);
	x.wrow = trow ? LLVMBuildAnd(b, trow, cg_i32(g, ~7), "") : cg_i32(g, 0);
	x.wcol = tcol ? LLVMBuildAnd(b, tcol, cg_i32(g, ~7), "") : cg_i32(g, 0);
	/* ldmatrix rows: lane l addresses row l % 8 of matrix l / 8. */
	LLVMValueRef lane = f->lane;
	LLVMValueRef l8 = LLVMBuildShl(b, LLVMBuildAnd(b, LLVMBuildLShr(b, lane, cg_i32(g, 3), ""), cg_i32(g, 1), ""),
	                               cg_i32(g, 3), "");
	x.arow = LLVMBuildAdd(b, LLVMBuildAnd(b, lane, cg_i32(g, 7), ""), l8, "");
	x.l8 = l8;
	x.b_kmajor = bt != NULL;
	x.acol = LLVMBuildShl(b, LLVMBuildLShr(b, lane, cg_i32(g, 4), ""), cg_i32(g, 3), "");
	/* Below 16 rows, A's rows 8-15 (and past M) read rows 0 to M - 1 again:
	 * only M rows are staged. */
	x.row_a = M >= 16 ? x.arow : LLVMBuildAnd(b, lane, cg_i32(g, (int32_t)(M - 1)), "");
	x.roll_k = rolled;
	if (!in_loop && !rolled && f->nv->early)
		p.dot = i; /* later dots' loads may join its copies */
	if (!run_dot(f, i, &p, mma_slice, &x, rolled, &x.D))
		return false;
	if (ah[0] || ah[1]) {
		/* The next iterations' copies, once every warp has read this one's;
		 * the early copies not read yet, committed before their groups,
		 * may leave them in flight (EarlyCopy.newer). */
		nv_barrier(f);
		int groups = 0;
		for (int k = 0; k < 2; k++) {
			if (!ah[k])
				continue;
			if (!ahead_next(f, ah[k]))
				return false;
			groups++;
		}
		for (int v = 0; v < f->k->nvalues; v++)
			if (f->early[v])
				*f->early[v]->newer = groups;
	}
	early_done(f, &a, &bo);
	f->vals[res->id] = x.D;
	return true;
}

bool nv_dot(NvFn *f, const Inst *i)
{
	if (f->plan->mma[i->results[0]->id])
		return dot_mma(f, i);
	return dot_fma(f, i);
}
