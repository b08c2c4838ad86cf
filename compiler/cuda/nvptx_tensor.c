/* nvptx_tensor.c - tensor values on the GPU: per-thread coordinates of a
 * layout, conversions between layouts (register renumbering, or a round
 * trip through shared memory), values computed lazily in their user's
 * layout (constants, iota, broadcasts), elementwise ops, shape ops,
 * reductions (in-thread, then warp shuffles, then shared memory across
 * warps) and cumsum. */
#include "nvptx.h"

#include <math.h>
#include <string.h>

static bool is_tensor(const Value *v)
{
	return v->type->kind == TY_VALUE && v->type->rank > 0;
}

GV *gv_new(NvFn *f, const GpuLayout *L, DType dt)
{
	GV *v = arena_alloc(nv_arena(f), sizeof *v);
	v->L = L;
	v->dt = dt;
	v->n = L ? 1 << L->nregbits : 1;
	v->r = arena_alloc(nv_arena(f), (size_t)v->n * sizeof *v->r);
	return v;
}

GV *gv_scalar(NvFn *f, DType dt, LLVMValueRef x)
{
	GV *v = gv_new(f, NULL, dt);
	v->r[0] = x;
	return v;
}

/* ---- per-thread coordinates ------------------------------------------------------ */

/* The per-layout caches, grown to the number of interned layouts. */
static void lay_cache(NvFn *f, const GpuLayout *L)
{
	int need = f->plan->lc->all.len;
	if (need <= f->nlay_cache)
		return;
	int cap = need * 2;
	LLVMValueRef **tc = arena_alloc(nv_arena(f), (size_t)cap * sizeof *tc);
	LLVMValueRef *ow = arena_alloc(nv_arena(f), (size_t)cap * sizeof *ow);
	LLVMValueRef *tf = arena_alloc(nv_arena(f), (size_t)cap * sizeof *tf);
	if (f->nlay_cache) {
		memcpy(tc, f->tcoord, (size_t)f->nlay_cache * sizeof *tc);
		memcpy(ow, f->owner, (size_t)f->nlay_cache * sizeof *ow);
		memcpy(tf, f->tflat, (size_t)f->nlay_cache * sizeof *tf);
	}
	f->tcoord = tc;
	f->owner = ow;
	f->tflat = tf;
	f->nlay_cache = cap;
	(void)L;
}

/* ((src >> idx) & ((1 << len) - 1)) << pos */
static LLVMValueRef bits_of(NvFn *f, LLVMBuilderRef b, LLVMValueRef src, int idx, int len, int pos)
{
	Cg *g = f->g;
	LLVMValueRef x = idx ? LLVMBuildLShr(b, src, cg_i32(g, idx), "") : src;
	x = LLVMBuildAnd(b, x, cg_i32(g, (1 << len) - 1), "");
	return pos ? LLVMBuildShl(b, x, cg_i32(g, pos), "") : x;
}

LLVMValueRef nv_tcoord(NvFn *f, const GpuLayout *L, int d)
{
	lay_cache(f, L);
	if (!f->tcoord[L->id]) {
		LLVMValueRef *c = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *c);
		LLVMBuilderRef b = f->pre;
		for (int e = 0; e < L->rank; e++) {
			LLVMValueRef acc = NULL;
			int lo = L->dlo[e], hi = lo + L->dbits[e];
			for (int bit = lo; bit < hi;) {
				if (L->kind[bit] == LB_REG) {
					bit++;
					continue;
				}
				/* A run of bits from consecutive lane (or warp) bits. */
				int len = 1;
				while (bit + len < hi && L->kind[bit + len] == L->kind[bit] && L->idx[bit + len] == L->idx[bit] + len)
					len++;
				LLVMValueRef src = L->kind[bit] == LB_LANE ? f->lane : f->warp;
				LLVMValueRef t = bits_of(f, b, src, L->idx[bit], len, bit - lo);
				acc = acc ? LLVMBuildOr(b, acc, t, "") : t;
				bit += len;
			}
			c[e] = acc; /* NULL: no thread part */
		}
		f->tcoord[L->id] = c;
	}
	return f->tcoord[L->id][d];
}

LLVMValueRef nv_coord(NvFn *f, const GpuLayout *L, int r, int d)
{
	int64_t *cc = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *cc);
	lay_reg_coord(L, r, cc);
	LLVMValueRef t = nv_tcoord(f, L, d);
	LLVMValueRef k = cg_i32(f->g, (int32_t)cc[d]);
	if (!t)
		return k;
	if (!cc[d])
		return t;
	LLVMValueRef x = LLVMBuildOr(f->g->b, t, k, "");
	LLVMSetIsDisjoint(x, 1);
	return x;
}

LLVMValueRef nv_owner(NvFn *f, const GpuLayout *L)
{
	if (!lay_replicated(L))
		return NULL;
	lay_cache(f, L);
	if (!f->owner[L->id]) {
		Cg *g = f->g;
		LLVMBuilderRef b = f->pre;
		unsigned lm = 31u & ~L->lane_used, wm = ((1u << L->warpbits) - 1) & ~L->warp_used;
		LLVMValueRef c = NULL;
		if (lm)
			c = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, f->lane, cg_i32(g, (int32_t)lm), ""), cg_i32(g, 0), "");
		if (wm) {
			LLVMValueRef w = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, f->warp, cg_i32(g, (int32_t)wm), ""),
			                               cg_i32(g, 0), "");
			c = c ? LLVMBuildAnd(b, c, w, "owner") : w;
		}
		f->owner[L->id] = c;
	}
	return f->owner[L->id];
}

LLVMValueRef nv_valid(NvFn *f, const GpuLayout *L, int r)
{
	LLVMValueRef c = NULL;
	for (int d = 0; d < L->rank; d++) {
		if ((L->dims[d] & (L->dims[d] - 1)) == 0)
			continue; /* a power of two: no padding */
		LLVMValueRef x = LLVMBuildICmp(f->g->b, LLVMIntULT, nv_coord(f, L, r, d), cg_i32(f->g, (int32_t)L->dims[d]), "");
		c = c ? LLVMBuildAnd(f->g->b, c, x, "") : x;
	}
	return c;
}

/* The flat (padded, row-major) index of register r's element, i32. */
static LLVMValueRef flat_index(NvFn *f, const GpuLayout *L, int r)
{
	Cg *g = f->g;
	lay_cache(f, L);
	if (!f->tflat[L->id]) {
		LLVMValueRef acc = NULL;
		for (int d = 0; d < L->rank; d++) {
			LLVMValueRef t = nv_tcoord(f, L, d);
			if (!t)
				continue;
			t = L->dlo[d] ? LLVMBuildShl(f->pre, t, cg_i32(g, L->dlo[d]), "") : t;
			acc = acc ? LLVMBuildOr(f->pre, acc, t, "") : t;
		}
		f->tflat[L->id] = acc ? acc : cg_i32(g, 0);
	}
	LLVMValueRef acc = f->tflat[L->id];
	if (LLVMIsConstant(acc))
		acc = NULL;
	int64_t *cc = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *cc);
	lay_reg_coord(L, r, cc);
	int64_t k = 0;
	for (int d = 0; d < L->rank; d++)
		k |= cc[d] << L->dlo[d];
	if (!acc)
		return cg_i32(g, (int32_t)k);
	if (!k)
		return acc;
	LLVMValueRef x = LLVMBuildOr(g->b, acc, cg_i32(g, (int32_t)k), "");
	LLVMSetIsDisjoint(x, 1);
	return x;
}

/* ---- shared memory --------------------------------------------------------------- */

int nv_smem_elem(DType dt)
{
	switch (dt) {
	case DT_BOOL: case DT_I8: case DT_U8: return 1;
	case DT_I16: case DT_U16: case DT_F16: case DT_BF16: return 2;
	case DT_I64: case DT_U64: case DT_F64: return 8;
	default: return 4;
	}
}

LLVMTypeRef nv_smem_type(NvFn *f, DType dt)
{
	return cg_mem_type(f->g, dt);
}

void nv_temp_need(NvFn *f, uint64_t bytes)
{
	bytes = (bytes + 15) / 16 * 16;
	if (bytes > f->smem_temp)
		f->smem_temp = bytes;
}

LLVMValueRef nv_temp_ptr(NvFn *f, uint64_t off)
{
	LLVMValueRef o = cg_i32(f->g, (int32_t)(f->smem_scratch + off));
	return LLVMBuildInBoundsGEP2(f->g->b, f->g->t_i8, f->smem, &o, 1, "tmp");
}

void nv_temp_begin(NvFn *f)
{
	if (f->smem_busy)
		nv_barrier(f);
}

/* if (cond) { ...the caller emits... }: returns the join block, the
 * builder sits in the guarded block. */
static LLVMBasicBlockRef guard_open(NvFn *f, LLVMValueRef cond)
{
	Cg *g = f->g;
	LLVMBasicBlockRef then = cg_block(g, "guard"), join = cg_block(g, "guard.end");
	LLVMBuildCondBr(g->b, cond, then, join);
	LLVMPositionBuilderAtEnd(g->b, then);
	return join;
}

static void guard_close(NvFn *f, LLVMBasicBlockRef join)
{
	LLVMBuildBr(f->g->b, join);
	LLVMPositionBuilderAtEnd(f->g->b, join);
}

/* Elements per vector access for layout L with elements of `bytes`. */
static int smem_vec(const GpuLayout *L, int bytes)
{
	int v = lay_contig(L);
	while (v * bytes > 16)
		v /= 2;
	return v;
}

/* The byte offset of element (row, col) of a [R, C] block (C padded to a
 * power of two) in a staging area: rows one after another, the 16-byte chunks of a row XORed with the
 * low bits of the row (up to 8 chunks), so that the 8 rows a warp's
 * tensor-core fragment writes at once fall on distinct banks. */
static int64_t staged_swizzle(int64_t C, int es)
{
	int64_t chunks = C * es / 16;
	return chunks < 8 ? chunks - 1 : 7;
}

/* The staging addresses of one layout, split so that most accesses are a
 * base plus a constant (an immediate offset in PTX, not four instructions
 * of address arithmetic each): with row = tr | kr and col = tc | kc (thread
 * and register parts, disjoint bits), the offset
 *   row * C * es + ((col * es) ^ ((row & m) << 4))
 * is tr * C * es + (X ^ Kin) + Kout + kr * C * es, where X = tc * es ^
 * ((tr & m) << 4) is the thread's, and K = kc * es ^ ((kr & m) << 4) splits
 * into its bits under the swizzle (Kin, one of m + 1 values) and the rest
 * (Kout, disjoint from X's bits, so added).  One base per Kin. */
typedef struct {
	LLVMValueRef base, trow, x; /* x: X, NULL when the thread has no part */
	LLVMValueRef at[8];         /* base + trow + (X ^ Kin), by Kin >> 4 */
	int64_t C;
	int es, m;
} Staged;

static void staged_open(NvFn *f, Staged *s, LLVMValueRef base, const GpuLayout *L, int es)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	memset(s, 0, sizeof *s);
	s->base = base;
	s->C = INT64_C(1) << L->dbits[1]; /* padded: every register has its place */
	s->es = es;
	s->m = (int)staged_swizzle(s->C, es);
	LLVMValueRef tr = nv_tcoord(f, L, 0), tc = nv_tcoord(f, L, 1);
	if (tr)
		s->trow = LLVMBuildMul(b, tr, cg_i32(g, (int32_t)(s->C * es)), "");
	LLVMValueRef x = tc ? LLVMBuildMul(b, tc, cg_i32(g, es), "") : NULL;
	if (tr) {
		LLVMValueRef sw = LLVMBuildShl(b, LLVMBuildAnd(b, tr, cg_i32(g, s->m), ""), cg_i32(g, 4), "");
		x = x ? LLVMBuildXor(b, x, sw, "") : sw;
	}
	s->x = x;
}

static LLVMValueRef staged_ptr(NvFn *f, Staged *s, const GpuLayout *L, int r)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	int64_t *cc = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *cc);
	lay_reg_coord(L, r, cc);
	int64_t mask = (int64_t)s->m << 4;
	int64_t k = (cc[1] * s->es) ^ ((cc[0] & s->m) << 4);
	int kin = (int)((k & mask) >> 4);
	int64_t kconst = (k & ~mask) + cc[0] * s->C * s->es;
	if (!s->at[kin]) {
		LLVMValueRef off = s->x ? s->x : NULL;
		if (kin)
			off = off ? LLVMBuildXor(b, off, cg_i32(g, kin << 4), "") : cg_i32(g, kin << 4);
		if (s->trow)
			off = off ? LLVMBuildAdd(b, s->trow, off, "") : s->trow;
		s->at[kin] = off ? LLVMBuildInBoundsGEP2(b, g->t_i8, s->base, &off, 1, "") : s->base;
	}
	if (!kconst)
		return s->at[kin];
	LLVMValueRef o = cg_i32(g, (int32_t)kconst);
	return LLVMBuildInBoundsGEP2(b, g->t_i8, s->at[kin], &o, 1, "");
}

/* The address of register r of layout L in the shared-memory area at
 * base: its padded flat index, or with a staging (s, a rank-2 L) its place
 * in the swizzled rows. */
static LLVMValueRef smem_elem_ptr(NvFn *f, LLVMValueRef base, const GpuLayout *L, int r, DType dt, Staged *s)
{
	Cg *g = f->g;
	if (!s)
		return LLVMBuildInBoundsGEP2(g->b, nv_smem_type(f, dt), base, (LLVMValueRef[]){flat_index(f, L, r)}, 1, "");
	return staged_ptr(f, s, L, r);
}

void nv_smem_write(NvFn *f, GV *x, LLVMValueRef base, bool staged)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const GpuLayout *L = x->L;
	LLVMTypeRef mt = nv_smem_type(f, x->dt);
	int es = nv_smem_elem(x->dt);
	LLVMValueRef own = nv_owner(f, L);
	LLVMBasicBlockRef join = own ? guard_open(f, own) : NULL;
	int v = smem_vec(L, es);
	Staged st_;
	Staged *s = staged ? &st_ : NULL;
	if (s)
		staged_open(f, s, base, L, es);
	for (int r = 0; r < x->n; r += v) {
		LLVMValueRef p = smem_elem_ptr(f, base, L, r, x->dt, s);
		if (v == 1) {
			LLVMValueRef st = LLVMBuildStore(b, cg_to_mem(g, x->dt, x->r[r]), p);
			LLVMSetAlignment(st, (unsigned)es);
			continue;
		}
		LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)v);
		LLVMValueRef vec = LLVMGetUndef(vt);
		for (int j = 0; j < v; j++)
			vec = LLVMBuildInsertElement(b, vec, cg_to_mem(g, x->dt, x->r[r + j]), cg_i32(g, j), "");
		LLVMValueRef st = LLVMBuildStore(b, vec, p);
		LLVMSetAlignment(st, (unsigned)(v * es));
	}
	if (join)
		guard_close(f, join);
}

GV *nv_smem_read(NvFn *f, LLVMValueRef base, const GpuLayout *L, DType dt, bool staged)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMTypeRef mt = nv_smem_type(f, dt);
	int es = nv_smem_elem(dt);
	GV *y = gv_new(f, L, dt);
	int v = smem_vec(L, es);
	Staged st_;
	Staged *s = staged ? &st_ : NULL;
	if (s)
		staged_open(f, s, base, L, es);
	for (int r = 0; r < y->n; r += v) {
		LLVMValueRef p = smem_elem_ptr(f, base, L, r, dt, s);
		if (v == 1) {
			LLVMValueRef ld = LLVMBuildLoad2(b, mt, p, "");
			LLVMSetAlignment(ld, (unsigned)es);
			y->r[r] = cg_from_mem(g, dt, ld);
			continue;
		}
		LLVMValueRef ld = LLVMBuildLoad2(b, LLVMVectorType(mt, (unsigned)v), p, "");
		LLVMSetAlignment(ld, (unsigned)(v * es));
		for (int j = 0; j < v; j++)
			y->r[r + j] = cg_from_mem(g, dt, LLVMBuildExtractElement(b, ld, cg_i32(g, j), ""));
	}
	return y;
}

/* ---- conversions --------------------------------------------------------------------- */

/* x with its registers renumbered for L (the same threads hold the same
 * elements). */
static GV *renumber(NvFn *f, GV *x, const GpuLayout *L)
{
	GV *y = gv_new(f, L, x->dt);
	int64_t *c = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *c);
	for (int r = 0; r < y->n; r++) {
		lay_reg_coord(L, r, c);
		y->r[r] = x->r[lay_reg_of(x->L, c)];
	}
	return y;
}

GV *nv_convert(NvFn *f, GV *x, const GpuLayout *L)
{
	if (x->L == L)
		return x;
	if (lay_same_threads(x->L, L))
		return renumber(f, x, L);
	/* Through shared memory: every element at its padded flat index. */
	uint64_t bytes = ((uint64_t)1 << L->nbits) * (uint64_t)nv_smem_elem(x->dt);
	nv_temp_need(f, bytes);
	nv_temp_begin(f);
	LLVMValueRef base = nv_temp_ptr(f, 0);
	nv_smem_write(f, x, base, false);
	nv_barrier(f);
	GV *y = nv_smem_read(f, base, L, x->dt, false);
	f->smem_busy = true;
	return y;
}

/* ---- values on demand ------------------------------------------------------------------ */

static ConvEntry *conv_find(NvFn *f, int vid, const GpuLayout *L)
{
	for (int e = f->nconv - 1; e >= 0; e--) {
		ConvEntry *c = &f->conv[e];
		if (c->vid == vid && c->L == L && c->depth <= f->depth && f->scope_serial[c->depth] == c->scope)
			return c;
	}
	return NULL;
}

static void conv_add(NvFn *f, int vid, const GpuLayout *L, GV *v)
{
	if (f->nconv == f->capconv) {
		int cap = f->capconv ? 2 * f->capconv : 64;
		ConvEntry *n = arena_alloc(nv_arena(f), (size_t)cap * sizeof *n);
		if (f->nconv)
			memcpy(n, f->conv, (size_t)f->nconv * sizeof *n);
		f->conv = n;
		f->capconv = cap;
	}
	f->conv[f->nconv++] = (ConvEntry){vid, L, v, f->depth, f->scope_serial ? f->scope_serial[f->depth] : 0};
}

static GV *materialize(NvFn *f, const Value *v, const GpuLayout *L);

GV *nv_val(NvFn *f, const Value *v)
{
	GV *x = f->vals[v->id];
	if (!x) {
		if (is_tensor(v) && f->plan->lazy[v->id])
			internal_error("nvptx: kernel %s: lazy value %%%d used without a layout", f->k->name, v->id);
		internal_error("nvptx: kernel %s: value %%%d used before its definition", f->k->name, v->id);
	}
	return x;
}

GV *nv_get(NvFn *f, const Value *v, const GpuLayout *L)
{
	if (!is_tensor(v))
		return nv_val(f, v);
	if (!L)
		L = f->plan->lazy[v->id] ? lay_default(f->plan->lc, v->type) : f->plan->of[v->id];
	if (!f->plan->lazy[v->id]) {
		GV *x = nv_val(f, v);
		if (x->L == L)
			return x;
	}
	ConvEntry *c = conv_find(f, v->id, L);
	if (c)
		return c->v;
	GV *y = f->plan->lazy[v->id] ? materialize(f, v, L) : nv_convert(f, nv_val(f, v), L);
	if (y)
		conv_add(f, v->id, L, y);
	return y;
}

GV *nv_broadcast(NvFn *f, const Value *x, const GpuLayout *L)
{
	GV *y = gv_new(f, L, x->type->dtype);
	if (!is_tensor(x)) {
		GV *s = nv_val(f, x);
		for (int r = 0; r < y->n; r++)
			y->r[r] = s->r[0];
		return y;
	}
	const Type *xt = x->type;
	const GpuLayout *P = lay_project(f->plan->lc, L, xt->rank, xt->dims);
	GV *s = nv_get(f, x, P);
	int off = L->rank - xt->rank;
	int64_t *c = arena_alloc(nv_arena(f), (size_t)(L->rank + 1) * sizeof *c);
	int64_t *sc = arena_alloc(nv_arena(f), (size_t)(xt->rank + 1) * sizeof *sc);
	for (int r = 0; r < y->n; r++) {
		lay_reg_coord(L, r, c);
		for (int d = 0; d < xt->rank; d++)
			sc[d] = xt->dims[d] == 1 ? 0 : c[d + off];
		y->r[r] = s->r[lay_reg_of(P, sc)];
	}
	return y;
}

static GV *elementwise(NvFn *f, const Inst *i, const GpuLayout *L);
static GV *reshape_general(NvFn *f, GV *x, const Type *rt, const GpuLayout *L);

static int64_t *inverse_perm(NvFn *f, const int64_t *perm, int n)
{
	int64_t *inv = arena_alloc(nv_arena(f), (size_t)(n + 1) * sizeof *inv);
	for (int d = 0; d < n; d++)
		inv[perm[d]] = d;
	return inv;
}

/* A lazy value in layout L: computed here, from its operands in the
 * matching layouts. */
static GV *materialize(NvFn *f, const Value *v, const GpuLayout *L)
{
	Cg *g = f->g;
	const Inst *i = v->def;
	PKC_ASSERT(i);
	DType dt = v->type->dtype;
	switch (i->op) {
	case IR_CONST: {
		GV *y = gv_new(f, L, dt);
		LLVMValueRef c = cg_const(g, dt, i->ival, i->fval);
		for (int r = 0; r < y->n; r++)
			y->r[r] = c;
		return y;
	}
	case IR_IOTA: {
		GV *y = gv_new(f, L, dt);
		for (int r = 0; r < y->n; r++)
			y->r[r] = cg_cast(g, nv_coord(f, L, r, (int)i->ival), DT_I32, dt);
		return y;
	}
	case IR_BROADCAST:
		return nv_broadcast(f, i->args[0], L);
	case IR_TRANSPOSE: {
		const Value *x = i->args[0];
		const GpuLayout *Lx = lay_transpose(f->plan->lc, L, inverse_perm(f, i->perm, L->rank));
		GV *s = nv_get(f, x, Lx);
		GV *y = gv_new(f, L, dt);
		memcpy(y->r, s->r, (size_t)y->n * sizeof *y->r);
		return y;
	}
	case IR_RESHAPE: {
		const Value *x = i->args[0];
		if (!is_tensor(x))
			return nv_broadcast(f, x, L);
		const GpuLayout *Lx = lay_reshape(f->plan->lc, L, x->type->rank, x->type->dims);
		if (!Lx)
			return reshape_general(f, nv_get(f, x, NULL), v->type, L);
		GV *s = nv_get(f, x, Lx);
		GV *y = gv_new(f, L, dt);
		memcpy(y->r, s->r, (size_t)y->n * sizeof *y->r);
		return y;
	}
	default:
		if (op_info[i->op].flags & F_ELEMWISE)
			return elementwise(f, i, L);
		internal_error("nvptx: %s cannot be computed lazily", op_info[i->op].name);
	}
}

/* ---- elementwise ------------------------------------------------------------------------ */

static GV *elementwise(NvFn *f, const Inst *i, const GpuLayout *L)
{
	Cg *g = f->g;
	GV *a[3] = {NULL, NULL, NULL};
	for (int k = 0; k < i->nargs && k < 3; k++) {
		a[k] = nv_get(f, i->args[k], is_tensor(i->args[k]) ? L : NULL);
		if (!a[k])
			return NULL;
	}
	const Value *res = i->results[0];
	GV *y = gv_new(f, L, res->type->dtype);
	DType dt = i->args[i->op == IR_SELECT ? 1 : 0]->type->dtype;
	for (int r = 0; r < y->n; r++) {
		LLVMValueRef x[3];
		for (int k = 0; k < i->nargs && k < 3; k++)
			x[k] = a[k]->L ? a[k]->r[r] : a[k]->r[0];
		if (i->op == IR_CAST || i->op == IR_BITCAST)
			y->r[r] = cg_convert(g, i->op, x[0], i->args[0]->type->dtype, res->type->dtype);
		else
			y->r[r] = cg_elementwise(g, i->op, dt, x, i->loc);
		if (!y->r[r])
			return NULL;
	}
	return y;
}

/* ---- reshape through shared memory ------------------------------------------------------ */

/* The row-major linear index (i32), in a buffer of extents bdims, of
 * register r of L with off[d] (NULL: 0) added to its coordinate in dim d. */
static LLVMValueRef linear_index(NvFn *f, const GpuLayout *L, int r, const int64_t *off, const int64_t *bdims)
{
	Cg *g = f->g;
	LLVMValueRef acc = NULL;
	int64_t stride = 1, add = 0;
	for (int d = L->rank - 1; d >= 0; d--) {
		LLVMValueRef c = nv_coord(f, L, r, d);
		LLVMValueRef t = stride == 1 ? c : LLVMBuildMul(g->b, c, cg_i32(g, (int32_t)stride), "");
		acc = acc ? LLVMBuildAdd(g->b, acc, t, "") : t;
		add += off ? off[d] * stride : 0;
		stride *= bdims[d];
	}
	return add ? LLVMBuildAdd(g->b, acc, cg_i32(g, (int32_t)add), "") : acc;
}

/* Writes the real elements of x (their owners) to shared memory at their
 * linear index in a buffer of extents bdims, offset by off (no barrier). */
static void smem_put(NvFn *f, GV *x, LLVMValueRef base, const int64_t *off, const int64_t *bdims)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMTypeRef mt = nv_smem_type(f, x->dt);
	LLVMValueRef own = nv_owner(f, x->L);
	for (int r = 0; r < x->n; r++) {
		LLVMValueRef ok = nv_valid(f, x->L, r);
		ok = ok && own ? LLVMBuildAnd(b, ok, own, "") : ok ? ok : own;
		LLVMBasicBlockRef join = ok ? guard_open(f, ok) : NULL;
		LLVMValueRef p = LLVMBuildInBoundsGEP2(b, mt, base, (LLVMValueRef[]){linear_index(f, x->L, r, off, bdims)}, 1, "");
		LLVMBuildStore(b, cg_to_mem(g, x->dt, x->r[r]), p);
		if (join)
			guard_close(f, join);
	}
}

/* Reads a value in layout L back from the buffer smem_put wrote: element
 * r from its linear index in bdims, offset by off. */
static GV *smem_get(NvFn *f, LLVMValueRef base, const GpuLayout *L, DType dt, const int64_t *off, const int64_t *bdims)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMTypeRef mt = nv_smem_type(f, dt);
	GV *y = gv_new(f, L, dt);
	for (int r = 0; r < y->n; r++) {
		/* Padding elements read element 0 (any real one will do). */
		LLVMValueRef idx = linear_index(f, L, r, off, bdims);
		LLVMValueRef ok = nv_valid(f, L, r);
		if (ok)
			idx = LLVMBuildSelect(b, ok, idx, cg_i32(g, 0), "");
		LLVMValueRef p = LLVMBuildInBoundsGEP2(b, mt, base, &idx, 1, "");
		y->r[r] = cg_from_mem(g, dt, LLVMBuildLoad2(b, mt, p, ""));
	}
	f->smem_busy = true;
	return y;
}

/* A reshape the layouts cannot express (non-power-of-two extents move):
 * each element goes to shared memory at its real linear index and comes
 * back at the new shape's. */
static GV *reshape_general(NvFn *f, GV *x, const Type *rt, const GpuLayout *L)
{
	nv_temp_need(f, (uint64_t)type_numel(rt) * (uint64_t)nv_smem_elem(x->dt));
	nv_temp_begin(f);
	LLVMValueRef base = nv_temp_ptr(f, 0);
	smem_put(f, x, base, NULL, x->L->dims);
	nv_barrier(f);
	return smem_get(f, base, L, x->dt, NULL, L->dims);
}

/* slice and concat (value indexing and joining, lang-spec §7.9, §7.12):
 * through shared memory, the operands at their place in the larger shape. */
static GV *slice_concat(NvFn *f, const Inst *i, const GpuLayout *L)
{
	const Type *rt = i->results[0]->type;
	const Type *big = i->op == IR_SLICE ? i->args[0]->type : rt;
	nv_temp_need(f, (uint64_t)type_numel(big) * (uint64_t)nv_smem_elem(rt->dtype));
	nv_temp_begin(f);
	LLVMValueRef base = nv_temp_ptr(f, 0);
	int64_t *off = arena_alloc(nv_arena(f), (size_t)(rt->rank + 1) * sizeof *off);
	memset(off, 0, (size_t)rt->rank * sizeof *off);
	for (int k = 0; k < i->nargs; k++) {
		smem_put(f, nv_get(f, i->args[k], NULL), base, i->op == IR_CONCAT ? off : NULL, big->dims);
		if (i->op == IR_CONCAT)
			off[i->ival] += i->args[k]->type->dims[i->ival];
	}
	nv_barrier(f);
	return smem_get(f, base, L, rt->dtype, i->op == IR_SLICE ? i->perm : NULL, big->dims);
}

/* reverse (jnp.flip, lang-spec §7.20): through shared memory, each element
 * read back from the mirrored place along the axis. */
static GV *reverse(NvFn *f, const Inst *i, const GpuLayout *L)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const Type *rt = i->results[0]->type;
	nv_temp_need(f, (uint64_t)type_numel(rt) * (uint64_t)nv_smem_elem(rt->dtype));
	nv_temp_begin(f);
	LLVMValueRef base = nv_temp_ptr(f, 0);
	smem_put(f, nv_get(f, i->args[0], NULL), base, NULL, rt->dims);
	nv_barrier(f);
	LLVMTypeRef mt = nv_smem_type(f, rt->dtype);
	GV *y = gv_new(f, L, rt->dtype);
	for (int r = 0; r < y->n; r++) {
		LLVMValueRef idx = cg_i32(g, 0);
		int64_t stride = 1;
		for (int d = L->rank - 1; d >= 0; d--) {
			LLVMValueRef c = nv_coord(f, L, r, d);
			if (d == i->ival)
				c = LLVMBuildSub(b, cg_i32(g, (int32_t)(rt->dims[d] - 1)), c, "");
			idx = LLVMBuildAdd(b, idx, LLVMBuildMul(b, c, cg_i32(g, (int32_t)stride), ""), "");
			stride *= rt->dims[d];
		}
		LLVMValueRef ok = nv_valid(f, L, r); /* padding elements read element 0 */
		if (ok)
			idx = LLVMBuildSelect(b, ok, idx, cg_i32(g, 0), "");
		LLVMValueRef p = LLVMBuildInBoundsGEP2(b, mt, base, &idx, 1, "");
		y->r[r] = cg_from_mem(g, rt->dtype, LLVMBuildLoad2(b, mt, p, ""));
	}
	f->smem_busy = true;
	return y;
}

/* ---- shuffles ------------------------------------------------------------------------ */

/* Shuffles an i32 or float. */
static LLVMValueRef shfl32(NvFn *f, const char *mode, LLVMValueRef x, LLVMValueRef arg, int clamp)
{
	Cg *g = f->g;
	bool fl = LLVMTypeOf(x) == g->t_f32;
	const char *name = arena_printf(nv_arena(f), "llvm.nvvm.shfl.sync.%s.%s", mode, fl ? "f32" : "i32");
	LLVMValueRef args[4] = {cg_i32(g, -1), x, arg, cg_i32(g, clamp)};
	return nv_intrinsic(f, name, NULL, 0, args, 4);
}

static LLVMValueRef shfl(NvFn *f, const char *mode, LLVMValueRef x, LLVMValueRef arg, int clamp)
{
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = LLVMTypeOf(x);
	if (t == g->t_i32 || t == g->t_f32)
		return shfl32(f, mode, x, arg, clamp);
	if (t == g->t_i64 || t == g->t_f64) {
		LLVMValueRef i = t == g->t_f64 ? LLVMBuildBitCast(b, x, g->t_i64, "") : x;
		LLVMValueRef lo = LLVMBuildTrunc(b, i, g->t_i32, "");
		LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, i, cg_i64(g, 32), ""), g->t_i32, "");
		lo = LLVMBuildZExt(b, shfl32(f, mode, lo, arg, clamp), g->t_i64, "");
		hi = LLVMBuildZExt(b, shfl32(f, mode, hi, arg, clamp), g->t_i64, "");
		LLVMValueRef r = LLVMBuildOr(b, lo, LLVMBuildShl(b, hi, cg_i64(g, 32), ""), "");
		return t == g->t_f64 ? LLVMBuildBitCast(b, r, g->t_f64, "") : r;
	}
	/* i1, i8, i16 */
	LLVMValueRef w = LLVMBuildZExt(b, x, g->t_i32, "");
	return LLVMBuildTrunc(b, shfl32(f, mode, w, arg, clamp), t, "");
}

LLVMValueRef nv_shfl_bfly(NvFn *f, LLVMValueRef x, int mask)
{
	return shfl(f, "bfly", x, cg_i32(f->g, mask), 31);
}

LLVMValueRef nv_shfl_idx(NvFn *f, LLVMValueRef x, LLVMValueRef lane)
{
	return shfl(f, "idx", x, lane, 31);
}

LLVMValueRef nv_shfl_up(NvFn *f, LLVMValueRef x, int delta)
{
	return shfl(f, "up", x, cg_i32(f->g, delta), 0);
}

/* ---- reductions ------------------------------------------------------------------------ */

/* The identity of a sum/max/min/prod over dt. */
static LLVMValueRef reduce_identity(NvFn *f, Op op, DType dt)
{
	int64_t ival;
	double fval;
	ir_reduce_identity(op, dt, &ival, &fval);
	return cg_const(f->g, dt, ival, fval);
}

/* An element of an arg-reduction: the value and its index along the axis. */
typedef struct Pair {
	LLVMValueRef v, i;
} Pair;

/* Combines two partial results of op (a first in order). */
static LLVMValueRef combine(NvFn *f, Op op, DType dt, LLVMValueRef a, LLVMValueRef b, Loc loc)
{
	LLVMValueRef x[2] = {a, b};
	Op e = op == IR_REDUCE_SUM ? IR_ADD : op == IR_REDUCE_PROD ? IR_MUL : op == IR_REDUCE_MAX ? IR_MAX : IR_MIN;
	return cg_elementwise(f->g, e, dt, x, loc);
}

/* argmax/argmin: the extreme, NaN counting as one (the first NaN wins),
 * ties to the lowest index. */
static Pair combine_arg(NvFn *f, Op op, DType dt, Pair a, Pair b)
{
	Cg *g = f->g;
	LLVMBuilderRef bl = g->b;
	LLVMValueRef take_b; /* b is the better one */
	LLVMValueRef lower = LLVMBuildICmp(bl, LLVMIntSLT, b.i, a.i, "");
	if (dtype_is_float(dt)) {
		LLVMValueRef an = LLVMBuildFCmp(bl, LLVMRealUNO, a.v, a.v, "");
		LLVMValueRef bn = LLVMBuildFCmp(bl, LLVMRealUNO, b.v, b.v, "");
		LLVMValueRef better = LLVMBuildFCmp(bl, op == IR_ARGMAX ? LLVMRealOGT : LLVMRealOLT, b.v, a.v, "");
		LLVMValueRef eq = LLVMBuildFCmp(bl, LLVMRealOEQ, b.v, a.v, "");
		LLVMValueRef num = LLVMBuildOr(bl, better, LLVMBuildAnd(bl, eq, lower, ""), "");
		/* both NaN: the lower index; only b NaN: b; only a NaN: a. */
		LLVMValueRef both = LLVMBuildAnd(bl, an, bn, "");
		LLVMValueRef nan_pick = LLVMBuildSelect(bl, both, lower, bn, "");
		take_b = LLVMBuildSelect(bl, LLVMBuildOr(bl, an, bn, ""), nan_pick, num, "");
	} else {
		bool s = dtype_is_signed(dt);
		LLVMIntPredicate p = op == IR_ARGMAX ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT);
		LLVMValueRef better = LLVMBuildICmp(bl, p, b.v, a.v, "");
		LLVMValueRef eq = LLVMBuildICmp(bl, LLVMIntEQ, b.v, a.v, "");
		take_b = LLVMBuildOr(bl, better, LLVMBuildAnd(bl, eq, lower, ""), "");
	}
	return (Pair){LLVMBuildSelect(bl, take_b, b.v, a.v, ""), LLVMBuildSelect(bl, take_b, b.i, a.i, "")};
}

/* One reduction being emitted: x's layout Lx, the result's R (NULL for a
 * scalar), and the partial result of each of the nr result registers. */
typedef struct Red {
	NvFn *f;
	const Inst *i;
	DType dt;
	bool arg; /* argmax/argmin: acc[q].i is the index */
	int axis;
	const GpuLayout *Lx, *R;
	int nr;
	Pair *acc;
} Red;

/* a then b, combined by the reduction's op (a.v is NULL when the op failed). */
static Pair red_combine(Red *rd, Pair a, Pair b)
{
	if (rd->arg)
		return combine_arg(rd->f, rd->i->op, rd->dt, a, b);
	a.v = combine(rd->f, rd->i->op, rd->dt, a.v, b.v, rd->i->loc);
	return a;
}

/* Register r of x as an element of the reduction. Padding never counts: the
 * identity for a reduction; for an arg-reduction a value that loses (-inf for
 * argmax, never NaN) at an index past every real one (ties go to the lower). */
static Pair red_element(Red *rd, GV *x, int r, bool padded)
{
	NvFn *f = rd->f;
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	const GpuLayout *Lx = rd->Lx;
	Pair e = {x->r[r], rd->arg ? nv_coord(f, Lx, r, rd->axis) : NULL};
	if (!padded)
		return e;
	LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntULT, nv_coord(f, Lx, r, rd->axis),
	                                cg_i32(g, (int32_t)Lx->dims[rd->axis]), "");
	Op worst = rd->i->op == IR_ARGMAX ? IR_REDUCE_MAX : IR_REDUCE_MIN;
	e.v = LLVMBuildSelect(b, ok, e.v, reduce_identity(f, rd->arg ? worst : rd->i->op, rd->dt), "");
	if (rd->arg)
		e.i = LLVMBuildSelect(b, ok, e.i, cg_i32(g, INT32_MAX), "");
	return e;
}

/* Step 1: in-thread, as a balanced tree over the elements in register
 * order (ascending along the axis): neighbours first, so the partial
 * results stay in order for the arg-reductions, and the chain of dependent
 * combines is log2 of the elements long instead of their number (§4.1 lets
 * float reductions reassociate; max and min are exact either way).  On the
 * H100 the sequential chains of attention's row max and row sum (16 deep a
 * row at d64) held the warps between the dots. */
static bool red_in_thread(Red *rd, GV *x)
{
	const GpuLayout *Lx = rd->Lx;
	Arena *a = nv_arena(rd->f);
	bool padded = (Lx->dims[rd->axis] & (Lx->dims[rd->axis] - 1)) != 0;
	int *n = arena_alloc(a, (size_t)rd->nr * sizeof *n);
	Pair **el = arena_alloc(a, (size_t)rd->nr * sizeof *el);
	int64_t *c = arena_alloc(a, (size_t)(Lx->rank + 1) * sizeof *c);
	int64_t *rc = arena_alloc(a, (size_t)(Lx->rank + 1) * sizeof *rc);
	int *q_of = arena_alloc(a, (size_t)(x->n + 1) * sizeof *q_of);
	for (int r = 0; r < x->n; r++) {
		lay_reg_coord(Lx, r, c);
		for (int d = 0, s = 0; d < Lx->rank; d++)
			if (d != rd->axis)
				rc[s++] = c[d];
		q_of[r] = rd->R ? lay_reg_of(rd->R, rc) : 0;
		n[q_of[r]]++;
	}
	for (int q = 0; q < rd->nr; q++) {
		el[q] = arena_alloc(a, (size_t)(n[q] + 1) * sizeof *el[q]);
		n[q] = 0;
	}
	for (int r = 0; r < x->n; r++)
		el[q_of[r]][n[q_of[r]]++] = red_element(rd, x, r, padded);
	for (int q = 0; q < rd->nr; q++) {
		for (int w = n[q]; w > 1; w = (w + 1) / 2)
			for (int j = 0; j < w / 2; j++) {
				el[q][j] = red_combine(rd, el[q][2 * j], el[q][2 * j + 1]);
				if (!el[q][j].v)
					return false;
				if (w % 2 && j == w / 2 - 1)
					el[q][j + 1] = el[q][w - 1];
			}
		rd->acc[q] = el[q][0];
	}
	return true;
}

/* Step 2: across the lanes that share the result element (combine_arg is
 * symmetric: ties and NaNs go by index). */
static void red_across_lanes(Red *rd)
{
	const GpuLayout *Lx = rd->Lx;
	for (int bit = Lx->dlo[rd->axis]; bit < Lx->dlo[rd->axis] + Lx->dbits[rd->axis]; bit++) {
		if (Lx->kind[bit] != LB_LANE)
			continue;
		int m = 1 << Lx->idx[bit];
		for (int q = 0; q < rd->nr; q++) {
			Pair o = {nv_shfl_bfly(rd->f, rd->acc[q].v, m), NULL};
			if (rd->arg)
				o.i = nv_shfl_bfly(rd->f, rd->acc[q].i, m);
			rd->acc[q] = red_combine(rd, rd->acc[q], o);
		}
	}
}

/* Step 3: across the nw warps along the axis (their warp-index bits wbits):
 * each warp writes its partial results to its slot of shared memory, then
 * every thread combines the slots in order. */
static void red_across_warps(Red *rd, int nw, const int *wbits)
{
	NvFn *f = rd->f;
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	DType dt = rd->dt;
	const GpuLayout *R = rd->R;
	int64_t slots = INT64_C(1) << nw, relems = R ? INT64_C(1) << R->nbits : 1;
	int es = nv_smem_elem(dt);
	LLVMTypeRef mt = nv_smem_type(f, dt);
	uint64_t vbytes = (uint64_t)(slots * relems * es);
	vbytes = (vbytes + 15) / 16 * 16;
	nv_temp_need(f, vbytes + (rd->arg ? (uint64_t)(slots * relems * 4) : 0));
	nv_temp_begin(f);
	LLVMValueRef vbase = nv_temp_ptr(f, 0), ibase = rd->arg ? nv_temp_ptr(f, vbytes) : NULL;
	/* This thread's slot: its warp bits along the axis. */
	LLVMValueRef slot = cg_i32(g, 0);
	for (int j = 0; j < nw; j++)
		slot = LLVMBuildOr(b, slot, bits_of(f, b, f->warp, wbits[j], 1, j), "");
	/* One thread stores each partial: the lanes along the axis hold the
	 * same one after red_across_lanes, and so do copies of the operand's
	 * elements (lane and warp bits its layout does not use); their stores
	 * to the same slot would race (compute-sanitizer racecheck). */
	unsigned along = 0;
	for (int bit = rd->Lx->dlo[rd->axis]; bit < rd->Lx->dlo[rd->axis] + rd->Lx->dbits[rd->axis]; bit++)
		if (rd->Lx->kind[bit] == LB_LANE)
			along |= 1u << rd->Lx->idx[bit];
	LLVMValueRef own = nv_owner(f, rd->Lx);
	if (along) {
		LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, f->lane, cg_i32(g, (int32_t)along), ""),
		                                   cg_i32(g, 0), "");
		own = own ? LLVMBuildAnd(b, own, first, "") : first;
	}
	LLVMBasicBlockRef join = own ? guard_open(f, own) : NULL;
	for (int q = 0; q < rd->nr; q++) {
		LLVMValueRef e = R ? flat_index(f, R, q) : cg_i32(g, 0);
		LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, slot, cg_i32(g, (int32_t)relems), ""), e, "");
		LLVMBuildStore(b, cg_to_mem(g, dt, rd->acc[q].v), LLVMBuildInBoundsGEP2(b, mt, vbase, &at, 1, ""));
		if (rd->arg)
			LLVMBuildStore(b, rd->acc[q].i, LLVMBuildInBoundsGEP2(b, g->t_i32, ibase, &at, 1, ""));
	}
	if (join)
		guard_close(f, join);
	nv_barrier(f);
	for (int q = 0; q < rd->nr; q++) {
		LLVMValueRef e = R ? flat_index(f, R, q) : cg_i32(g, 0);
		Pair a = {NULL, NULL};
		for (int64_t s = 0; s < slots; s++) {
			LLVMValueRef at = LLVMBuildAdd(b, cg_i32(g, (int32_t)(s * relems)), e, "");
			Pair p = {cg_from_mem(g, dt, LLVMBuildLoad2(b, mt, LLVMBuildInBoundsGEP2(b, mt, vbase, &at, 1, ""), "")),
			          rd->arg ? LLVMBuildLoad2(b, g->t_i32, LLVMBuildInBoundsGEP2(b, g->t_i32, ibase, &at, 1, ""), "")
			                  : NULL};
			a = s ? red_combine(rd, a, p) : p;
		}
		rd->acc[q] = a;
	}
	f->smem_busy = true;
}

/* max/min(s * c) of an f32 s and a positive finite constant c is
 * max/min(s) * c exactly (rounding a product by c > 0 is monotone): the
 * reduction reads s, where s is in the reduction's layout L, so the
 * product's other use (softmax's exp2(s * c - m)) contracts into an FMA
 * and the product is never formed.  Returns s and c, or NULL. */
static const Value *scaled_operand(NvFn *f, const Inst *i, const GpuLayout *L, double *c)
{
	const Inst *m = i->args[0]->def;
	if ((i->op != IR_REDUCE_MAX && i->op != IR_REDUCE_MIN) || i->args[0]->type->dtype != DT_F32 || !m ||
	    m->op != IR_MUL)
		return NULL;
	for (int side = 0; side < 2; side++) {
		const Value *s = m->args[side];
		const Inst *k = m->args[1 - side]->def;
		if (!k || k->op != IR_CONST || !(k->fval > 0 && isfinite(k->fval)) || s->type->dtype != DT_F32 ||
		    !is_tensor(s) || s->type->rank != i->args[0]->type->rank ||
		    memcmp(s->type->dims, i->args[0]->type->dims, (size_t)s->type->rank * sizeof *s->type->dims) ||
		    (f->plan->lazy[s->id] ? lay_default(f->plan->lc, s->type) : f->plan->of[s->id]) != L)
			continue;
		*c = k->fval;
		return s;
	}
	return NULL;
}

/* A reduction along an axis: in each thread, then across lanes by shuffles,
 * then across warps through shared memory. */
static bool reduce(NvFn *f, const Inst *i)
{
	const Value *xv = i->args[0], *res = i->results[0];
	LayoutCtx *lc = f->plan->lc;
	Red rd = {.f = f, .i = i, .dt = xv->type->dtype, .axis = (int)i->ival};
	rd.arg = i->op == IR_ARGMAX || i->op == IR_ARGMIN;
	rd.Lx = f->plan->lazy[xv->id] ? lay_default(lc, xv->type) : f->plan->of[xv->id];
	double scale = 0;
	const Value *sv = scaled_operand(f, i, rd.Lx, &scale);
	GV *x = nv_get(f, sv ? sv : xv, rd.Lx);
	if (!x)
		return false;
	rd.R = is_tensor(res) ? f->plan->of[res->id] : NULL;
	PKC_ASSERT(!rd.R || rd.R == lay_slice(lc, rd.Lx, rd.axis));
	rd.nr = rd.R ? 1 << rd.R->nregbits : 1;
	rd.acc = arena_alloc(nv_arena(f), (size_t)rd.nr * sizeof *rd.acc);
	if (!red_in_thread(&rd, x))
		return false;
	red_across_lanes(&rd);
	int nw = 0, wbits[8];
	for (int bit = rd.Lx->dlo[rd.axis]; bit < rd.Lx->dlo[rd.axis] + rd.Lx->dbits[rd.axis]; bit++)
		if (rd.Lx->kind[bit] == LB_WARP)
			wbits[nw++] = rd.Lx->idx[bit];
	if (nw)
		red_across_warps(&rd, nw, wbits);
	for (int q = 0; sv && q < rd.nr; q++) {
		LLVMValueRef a[2] = {rd.acc[q].v, cg_const(f->g, DT_F32, 0, scale)};
		rd.acc[q].v = cg_elementwise(f->g, IR_MUL, DT_F32, a, i->loc);
	}

	GV *y = gv_new(f, rd.R, res->type->dtype);
	for (int q = 0; q < rd.nr; q++)
		y->r[q] = rd.arg ? rd.acc[q].i : rd.acc[q].v;
	f->vals[res->id] = y;
	return true;
}

/* Values a scan step computes once for the registers that share them (a
 * block's total is the same value in each of its registers): key pair ->
 * value, searched linearly (a thread holds few blocks). */
typedef struct ScanMemo {
	LLVMValueRef a, b, v;
} ScanMemo;

typedef struct Scan {
	NvFn *f;
	const Inst *i;
	DType dt;
	ScanMemo *memo; /* this step's: at most two sums a register */
	int nmemo, cap;
} Scan;

/* a + b (b alone when a is NULL), once per step for each pair. */
static LLVMValueRef scan_add(Scan *sc, LLVMValueRef a, LLVMValueRef b)
{
	if (!a)
		return b;
	for (int j = 0; j < sc->nmemo; j++)
		if (sc->memo[j].a == a && sc->memo[j].b == b)
			return sc->memo[j].v;
	LLVMValueRef e[2] = {a, b};
	LLVMValueRef v = cg_elementwise(sc->f->g, IR_ADD, sc->dt, e, sc->i->loc);
	PKC_ASSERT(sc->nmemo < sc->cap);
	sc->memo[sc->nmemo++] = (ScanMemo){a, b, v};
	return v;
}

/* Step 3 of cumsum: the nw warps along the axis (their warp-index bits
 * wbits, the axis's highest) leave the totals t of their blocks in shared
 * memory, one slot a warp; each register's offset o adds the totals of
 * the slots before its warp's, in order. */
static bool scan_across_warps(Scan *sc, const GpuLayout *L, int axis, int nw, const int *wbits, LLVMValueRef *o,
                              LLVMValueRef *t)
{
	NvFn *f = sc->f;
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	DType dt = sc->dt;
	const GpuLayout *S = lay_slice(f->plan->lc, L, axis);
	int n = 1 << L->nregbits;
	Arena *a = nv_arena(f);
	int *q_of = arena_alloc(a, (size_t)n * sizeof *q_of);
	int64_t *c = arena_alloc(a, (size_t)(L->rank + 1) * sizeof *c);
	int64_t *cs = arena_alloc(a, (size_t)(L->rank + 1) * sizeof *cs);
	for (int r = 0; r < n; r++) {
		lay_reg_coord(L, r, c);
		for (int d = 0, k = 0; d < L->rank; d++)
			if (d != axis)
				cs[k++] = c[d];
		q_of[r] = S->rank ? lay_reg_of(S, cs) : 0;
	}
	int64_t slots = INT64_C(1) << nw, relems = INT64_C(1) << S->nbits;
	LLVMTypeRef mt = nv_smem_type(f, dt);
	nv_temp_need(f, (uint64_t)(slots * relems * nv_smem_elem(dt)));
	nv_temp_begin(f);
	LLVMValueRef base = nv_temp_ptr(f, 0);
	LLVMValueRef slot = cg_i32(g, 0);
	for (int j = 0; j < nw; j++)
		slot = LLVMBuildOr(b, slot, bits_of(f, b, f->warp, wbits[j], 1, j), "");
	/* One thread a slot: the lanes along the axis hold the same totals, and
	 * so do copies of the elements (racecheck). */
	unsigned along = 0;
	for (int bit = L->dlo[axis]; bit < L->dlo[axis] + L->dbits[axis]; bit++)
		if (L->kind[bit] == LB_LANE)
			along |= 1u << L->idx[bit];
	LLVMValueRef own = nv_owner(f, L);
	if (along) {
		LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, f->lane, cg_i32(g, (int32_t)along), ""),
		                                   cg_i32(g, 0), "");
		own = own ? LLVMBuildAnd(b, own, first, "") : first;
	}
	LLVMBasicBlockRef join = own ? guard_open(f, own) : NULL;
	for (int r = 0; r < n; r++) {
		bool first = true;
		for (int k = 0; k < r && first; k++)
			first = q_of[k] != q_of[r];
		if (!first)
			continue;
		LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, slot, cg_i32(g, (int32_t)relems), ""),
		                               flat_index(f, S, q_of[r]), "");
		LLVMBuildStore(b, cg_to_mem(g, dt, t[r]), LLVMBuildInBoundsGEP2(b, mt, base, &at, 1, ""));
	}
	if (join)
		guard_close(f, join);
	nv_barrier(f);
	LLVMValueRef *before = arena_alloc(a, (size_t)n * sizeof *before);
	sc->nmemo = 0;
	for (int r = 0; r < n; r++) {
		before[r] = NULL;
		for (int k = 0; k < r && !before[r]; k++)
			if (q_of[k] == q_of[r])
				before[r] = before[k];
		if (!before[r]) {
			LLVMValueRef e = flat_index(f, S, q_of[r]), sum = NULL;
			for (int64_t s = 0; s + 1 < slots; s++) {
				LLVMValueRef at = LLVMBuildAdd(b, cg_i32(g, (int32_t)(s * relems)), e, "");
				LLVMValueRef v = cg_from_mem(g, dt, LLVMBuildLoad2(b, mt, LLVMBuildInBoundsGEP2(b, mt, base, &at, 1, ""), ""));
				LLVMValueRef e2[2] = {sum, v}; /* once per slice register: no memo */
				LLVMValueRef with = sum ? cg_elementwise(g, IR_ADD, dt, e2, sc->i->loc) : v;
				if (!with)
					return false;
				LLVMValueRef take = LLVMBuildICmp(b, LLVMIntULT, cg_i32(g, (int32_t)s), slot, "");
				sum = LLVMBuildSelect(b, take, with, sum ? sum : cg_const(g, dt, 0, 0), "");
			}
			before[r] = sum;
		}
		o[r] = scan_add(sc, o[r], before[r]);
		if (!o[r])
			return false;
	}
	f->smem_busy = true;
	return true;
}

/* Inclusive prefix sum along the axis, in a layout whose warp bits along
 * the axis are its highest (gpu_layout.c: lay_scan_ok).  Each register r
 * holds p[r], its prefix within a block of the axis, o[r], the sum of the
 * blocks before it, and t[r], its block's total; the blocks double bit by
 * bit, lowest first:
 *  1. the axis's lowest register bits: a running sum in each thread;
 *  2. each further register bit: the upper register's offset adds the
 *     lower's total; each lane bit: partners exchange totals by a
 *     butterfly shuffle and the upper lane's offsets add the other's; both
 *     sides' totals become the sum;
 *  3. the warps along the axis leave their totals in shared memory, and
 *     each adds those of the warps before it, in order;
 *  4. each element is p[r] + o[r].
 * Each prefix is a sum of exactly the elements up to it (padding lies past
 * every real element, so it reaches only padding); the adds follow a tree,
 * not the host's sequence (§4.1 lets sums reassociate).  The code grows
 * with a thread's share of the axis, not the axis. */
static bool cumsum(NvFn *f, const Inst *i)
{
	const Value *xv = i->args[0], *res = i->results[0];
	const GpuLayout *L = f->plan->of[res->id];
	Cg *g = f->g;
	LLVMBuilderRef b = g->b;
	DType dt = res->type->dtype;
	int axis = (int)i->ival, lo = L->dlo[axis], hi = lo + L->dbits[axis];
	PKC_ASSERT(lay_scan_ok(L, axis));
	GV *x = nv_get(f, xv, L);
	if (!x)
		return false;
	int n = x->n;
	Arena *a = nv_arena(f);
	LLVMValueRef *p = arena_alloc(a, (size_t)n * sizeof *p), *o = arena_alloc(a, (size_t)n * sizeof *o),
	             *t = arena_alloc(a, (size_t)n * sizeof *t);
	Scan sc = {f, i, dt, arena_alloc(a, (size_t)(2 * n + 1) * sizeof *sc.memo), 0, 2 * n + 1};
	/* Step 1. */
	int bit = lo;
	uint32_t run = 0; /* the registers' bits of the run */
	for (; bit < hi && L->kind[bit] == LB_REG; bit++)
		run |= 1u << L->idx[bit];
	for (int r = 0; r < n; r++) {
		if (r & (int)run)
			continue;
		LLVMValueRef sum = NULL;
		int last = r;
		for (int k = 0; k < (1 << (bit - lo)); k++) {
			int q = r;
			for (int j = 0; j < bit - lo; j++)
				if (k >> j & 1)
					q |= 1 << L->idx[lo + j];
			sum = scan_add(&sc, sum, x->r[q]);
			if (!sum)
				return false;
			p[q] = sum;
			o[q] = NULL;
			last = q;
		}
		for (int k = 0; k < n; k++)
			if ((k & ~(int)run) == r)
				t[k] = p[last];
	}
	/* Step 2. */
	for (; bit < hi && L->kind[bit] != LB_WARP; bit++) {
		sc.nmemo = 0;
		if (L->kind[bit] == LB_REG) {
			int m = 1 << L->idx[bit];
			for (int r = 0; r < n; r++) {
				if (r & m)
					continue;
				LLVMValueRef up = scan_add(&sc, o[r | m], t[r]), tot = scan_add(&sc, t[r], t[r | m]);
				if (!up || !tot)
					return false;
				o[r | m] = up;
				t[r] = t[r | m] = tot;
			}
			continue;
		}
		int l = L->idx[bit];
		LLVMValueRef upper = LLVMBuildICmp(b, LLVMIntNE, bits_of(f, b, f->lane, l, 1, 0), cg_i32(g, 0), "");
		LLVMValueRef *other = arena_alloc(a, (size_t)n * sizeof *other);
		for (int r = 0; r < n; r++) {
			other[r] = NULL;
			for (int k = 0; k < r && !other[r]; k++)
				if (t[k] == t[r])
					other[r] = other[k];
			if (!other[r])
				other[r] = nv_shfl_bfly(f, t[r], 1 << l);
		}
		LLVMValueRef *oldt = arena_alloc(a, (size_t)n * sizeof *oldt);
		memcpy(oldt, t, (size_t)n * sizeof *t);
		for (int r = 0; r < n; r++) {
			LLVMValueRef with = scan_add(&sc, o[r], other[r]), tot = scan_add(&sc, oldt[r], other[r]);
			if (!with || !tot)
				return false;
			o[r] = LLVMBuildSelect(b, upper, with, o[r] ? o[r] : cg_const(g, dt, 0, 0), "");
			t[r] = tot;
		}
	}
	/* Step 3. */
	int nw = 0, wbits[8];
	for (; bit < hi; bit++)
		wbits[nw++] = L->idx[bit];
	if (nw && !scan_across_warps(&sc, L, axis, nw, wbits, o, t))
		return false;
	/* Step 4. */
	GV *y = gv_new(f, L, dt);
	sc.nmemo = 0;
	for (int r = 0; r < n; r++) {
		y->r[r] = o[r] ? scan_add(&sc, o[r], p[r]) : p[r];
		if (!y->r[r])
			return false;
	}
	f->vals[res->id] = y;
	return true;
}

/* ---- dispatch ------------------------------------------------------------------------ */

bool nv_tensor_op(NvFn *f, const Inst *i)
{
	const Value *res = i->nresults == 1 ? i->results[0] : NULL;
	if (!res)
		return nv_fail(f, i->loc, "%s: '%s' has %d results", f->k->name, op_info[i->op].name, i->nresults);
	if (is_tensor(res) && f->plan->lazy[res->id])
		return true; /* computed where it is used */
	const GpuLayout *L = is_tensor(res) ? f->plan->of[res->id] : NULL;
	switch (i->op) {
	case IR_REDUCE_SUM: case IR_REDUCE_MAX: case IR_REDUCE_MIN: case IR_REDUCE_PROD: case IR_ARGMAX: case IR_ARGMIN:
		return reduce(f, i);
	case IR_CUMSUM:
		return cumsum(f, i);
	case IR_TRANSPOSE: {
		if (f->pipelined[i->args[0]->id]) {
			f->pipelined[res->id] = true; /* a dot's operand the loop's pipeline copies */
			return true;
		}
		if (f->deferred[i->args[0]->id])
			return true; /* a load the dot copies K-major (nv_dot_trans_b) */
		GV *x = nv_val(f, i->args[0]);
		GV *y = gv_new(f, L, res->type->dtype);
		memcpy(y->r, x->r, (size_t)y->n * sizeof *y->r);
		f->vals[res->id] = y;
		return true;
	}
	case IR_RESHAPE: {
		const Value *xv = i->args[0];
		if (f->deferred[xv->id]) {
			/* A load the dot copies itself (nv_dot_takes_load: A->view). */
			f->deferred[res->id] = f->deferred[xv->id];
			return true;
		}
		if (!L) {
			/* To a scalar: the single element, which every thread holds
			 * (a layout of one element has no bits). */
			GV *x = nv_get(f, xv, NULL);
			f->vals[res->id] = gv_scalar(f, res->type->dtype, x->r[0]);
			return true;
		}
		if (!is_tensor(xv)) {
			f->vals[res->id] = nv_broadcast(f, xv, L);
			return true;
		}
		GV *x = nv_val(f, xv);
		const GpuLayout *Lx = lay_reshape(f->plan->lc, L, xv->type->rank, xv->type->dims);
		if (Lx == x->L) {
			GV *y = gv_new(f, L, res->type->dtype);
			memcpy(y->r, x->r, (size_t)y->n * sizeof *y->r);
			f->vals[res->id] = y;
		} else {
			f->vals[res->id] = reshape_general(f, x, res->type, L);
		}
		return true;
	}
	case IR_SLICE: case IR_CONCAT:
		f->vals[res->id] = slice_concat(f, i, L);
		return true;
	case IR_REVERSE:
		f->vals[res->id] = reverse(f, i, L);
		return true;
	case IR_BROADCAST:
		if (!L) {
			f->vals[res->id] = nv_val(f, i->args[0]);
			return true;
		}
		f->vals[res->id] = nv_broadcast(f, i->args[0], L);
		return true;
	default:
		break;
	}
	if (op_info[i->op].flags & F_ELEMWISE) {
		GV *y = elementwise(f, i, L);
		if (!y)
			return false;
		f->vals[res->id] = y;
		return true;
	}
	return nv_unsupported(f, i->loc, "'%s'", op_info[i->op].name);
}
