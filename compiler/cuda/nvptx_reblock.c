/* The K step of a tensor-core loop, chosen by pkc (issue 13).
 *
 * Users write the K loop of a matmul with the BK they like:
 *
 *     for kk in range(T) { acc += dot(x[.., ds(kk * BK, BK)], y[ds(kk * BK, BK), ..]) }
 *
 * On the H100 a BK of 64 (16-bit operands: 128-byte lines, the widest
 * swizzle, one copy-engine box per operand and stage) ran fastest for every
 * block shape measured: BK 16 ran 25-45 % slower, 32 and 128 up to 16 %,
 * 256 20-35 % (bench/RESULTS.md, helper hopper8).  So, in an entry whose operand rows
 * are 16-byte aligned (codegen_nvptx.c: the copy engine's entries; with
 * cp.async copies of unaligned rows BK 64 ran slower), such a loop runs
 * with K slices of 64:
 *   - BK > 64: each iteration split in r = BK / 64, a loop over [lo r, hi r);
 *   - BK < 64: r = 64 / BK iterations merged, a loop over cdiv(T, r) from 0,
 *     when the T iterations cover the K dims to their end (T a constant
 *     and the dims too, T = cdiv(S, BK), or T = S // BK with `requires
 *     S % BK == 0`): the merged slices past the last iteration are masked
 *     (read as zeros) unless T is a multiple of r.
 * A tensor-core dot accumulates in place, one 16-deep k-step after the
 * other in order, so the sums are those of the loop as written (the
 * products of masked zeros add +0; §4.1 lets dot products reassociate).
 *
 * A dot over a whole K of WHOLE_K_MIN or more (BlockSpecs [BM, K] and
 * [K, BN], one dot, as in the Pallas quickstart) becomes the loop a user
 * would write, with slices of 64:
 *
 *     acc = zeros; for kk in range(K / 64) { acc += dot(x[.., ds(kk * 64, 64)], y[ds(kk * 64, 64), ..]) }
 *
 * so that it runs on the loop's pipeline (the copy engine, the schedule
 * of nvptx_sched.c) rather than on the dot's own cp.async slices: on the
 * H200, 128 x 128 blocks at K 4096 ran 14-18 % faster as a loop, at K 1024
 * 2-3 % (bench/RESULTS.md, twenty-first session), and at K 128 to 768
 * 1.00-1.18x for every block measured (twenty-second and twenty-third
 * sessions: 128 x 128 on 4 and 8 warps, 128 x 256 on 4 and 8, 256 x 128
 * on 8, 64 x 128 on 4).  The sums are the same
 * (§4.1; the tensor cores add the k-steps in order either way).
 *
 * The IR is shared with the host back end, which runs after the GPU's: the
 * rewrite lasts for one entry (nv_reblock_undo). */
#include "ir_clone.h"
#include "nvptx.h"

#include <string.h>

enum {
	BK_BEST = 64,              /* 16-bit elements: 128-byte lines */
	WHOLE_K_MIN = 2 * BK_BEST, /* the shortest whole K that runs as a loop (one iteration gains nothing) */
};

/* One rewritten instruction: `old` was unlinked before `next`, the new
 * instructions put after `mark` (NULL: the region's start); `res` (NULL:
 * none) replaced its results. */
typedef struct Redo {
	Inst *old, *next, *mark;
	Value **res;
	struct Redo *prev;
} Redo;

struct NvReblock {
	IrKernel *k;
	Redo *last;
};

typedef struct Loop {
	Inst *ld[2];    /* the dot's loads: A [.., K], B [K, ..] */
	int kidx[2];    /* their K indexer */
	Inst *mul[2];   /* kk * BK, each load's K start */
	int64_t bk;
} Loop;

typedef struct Whole {
	Inst *dot;
	Inst *ld[2];    /* its loads: A [.., K], B [K, ..] */
	int kidx[2];    /* their K indexer (whole) */
	int kop[2];     /* where its operand goes among their operands */
	int64_t bk;     /* the K slices of the loop */
} Whole;

/* The indexer of load `ld` behind result dim `dim`, and its operand. */
static int indexer_of(const Inst *ld, int dim, int *operand)
{
	int d = 0, op = 1;
	for (int j = 0; j < ld->nidx; j++) {
		IndexKind kind = ld->idx[j].kind;
		if (kind != IDX_POINT && d++ == dim) {
			*operand = op;
			return j;
		}
		op += kind != IDX_FULL;
	}
	return -1;
}

/* Whether v is iv * c (either order) with c a constant; c in *c. */
static bool iv_times(const Value *v, const Value *iv, int64_t *c)
{
	const Inst *m = v->def;
	if (!m || m->op != IR_MUL)
		return false;
	return (m->args[0] == iv && ir_const_value(m->args[1], c)) || (m->args[1] == iv && ir_const_value(m->args[0], c));
}

/* Whether `ld` is a load in region r the rewrites take: no mask, no
 * `other`, no gathered dim (the emulator's pipeline then used a gather's
 * indices before it had them: NVVM verification failed). */
static bool plain_load(const Inst *ld, const Region *r)
{
	return ld && ld->op == IR_LOAD && ld->parent == r && !ld->has_mask && !ld->has_other && !ir_access_gathers(ld);
}

static bool used_only_by(const Region *body, const Value *v, const Inst *user)
{
	for (const Inst *i = body->first; i; i = i->next)
		if (i != user && ir_inst_reads(i, v))
			return false;
	return true;
}

/* Whether `loop` is a K loop of one tensor-core dot (the form above, the
 * accumulator its one carried value), filled in L. */
static bool match(const Inst *loop, Loop *L)
{
	int64_t step;
	if (loop->nargs != 4 || !ir_const_value(loop->args[2], &step) || step != 1)
		return false;
	const Region *body = loop->regions[0];
	const Value *iv = body->args[0], *acc = body->args[1];
	const Inst *y = body->last, *add = y->args[0]->def;
	if (y->op != IR_YIELD || !add || add->op != IR_ADD || add->parent != body)
		return false;
	const Value *dv = add->args[0] == acc ? add->args[1] : add->args[1] == acc ? add->args[0] : NULL;
	const Inst *dot = dv ? dv->def : NULL;
	if (!dot || dot->op != IR_DOT || dot->nargs != 2 || dot->parent != body)
		return false;
	const Type *at = dot->args[0]->type, *bt = dot->args[1]->type, *rt = dot->results[0]->type;
	L->bk = at->dims[1];
	/* Whole slices of 64 only: a BK of 96 (tensor cores take it) or 48 stays. */
	if (!lay_dot_is_mma(at, bt, rt) || at->dims[0] < 64 || L->bk == BK_BEST ||
	    (L->bk > BK_BEST ? L->bk % BK_BEST : BK_BEST % L->bk) != 0 || !used_only_by(body, acc, add) ||
	    !used_only_by(body, dv, add))
		return false;
	for (int s = 0; s < 2; s++) {
		Inst *ld = dot->args[s]->def;
		int op;
		if (!plain_load(ld, body) || ld->results[0]->type->rank != 2 || !used_only_by(body, ld->results[0], dot))
			return false;
		int j = indexer_of(ld, s == 0 ? 1 : 0, &op);
		int64_t c;
		if (j < 0 || ld->idx[j].kind != IDX_SLICE || ld->idx[j].size != L->bk || !iv_times(ld->args[op], iv, &c) ||
		    c != L->bk || !used_only_by(body, ld->args[op], ld))
			return false;
		L->ld[s] = ld;
		L->kidx[s] = j;
		L->mul[s] = ld->args[op]->def;
	}
	/* Nothing else reads the index or has an effect. */
	for (const Inst *i = body->first; i; i = i->next)
		if (i->nregions || (op_info[i->op].flags & F_EFFECT) ||
		    (i != L->mul[0] && i != L->mul[1] && ir_inst_reads(i, iv)))
			return false;
	return true;
}

/* Whether v is S // bk (a FLOORDIV by the constant). */
static bool quotient(const Value *v, const Value *S, int64_t bk)
{
	int64_t c;
	return v->def && v->def->op == IR_FLOORDIV && v->def->args[0] == S && ir_const_value(v->def->args[1], &c) &&
	       c == bk;
}

/* Whether the loop (from 0) covers the K dims of both loads to their end:
 * T * BK >= the extent (the comment at the top). */
static bool covers(const IrKernel *k, const Inst *loop, const Loop *L)
{
	int64_t lo, T, c;
	if (!ir_const_value(loop->args[0], &lo) || lo != 0)
		return false;
	const Type *t[2] = {L->ld[0]->args[0]->type, L->ld[1]->args[0]->type};
	int64_t e[2] = {t[0]->dims[L->kidx[0]], t[1]->dims[L->kidx[1]]};
	const char *sym[2] = {t[0]->syms ? t[0]->syms[L->kidx[0]] : NULL, t[1]->syms ? t[1]->syms[L->kidx[1]] : NULL};
	if (ir_const_value(loop->args[1], &T))
		return e[0] >= 0 && e[1] >= 0 && T * L->bk >= e[0] && T * L->bk >= e[1];
	if (e[0] >= 0 || e[1] >= 0 || !sym[0] || !sym[1] || strcmp(sym[0], sym[1]) != 0)
		return false;
	int s = 0;
	while (s < k->nsizes && strcmp(k->sizes[s], sym[0]) != 0)
		s++;
	if (s == k->nsizes)
		return false;
	const Value *S = k->body->args[k->noperands + k->nscalars + s], *hi = loop->args[1];
	if (quotient(hi, S, L->bk))
		return nv_requires_divisor(k, s) % L->bk == 0;
	return ir_cdiv_of(hi, &c) == S && c == L->bk;
}

static Value *emit(Arena *a, IrKernel *k, InsertPoint at, Op op, Loc loc, Type *t, Value *x, Value *y)
{
	Value *args[2] = {x, y};
	Inst *i = ir_inst_new(a, k, op, loc, y ? 2 : 1, args, 1, &t);
	ir_insert_at(at, i);
	return i->results[0];
}

static Value *konst(Arena *a, IrKernel *k, InsertPoint at, Loc loc, Type *t, int64_t v)
{
	Inst *i = ir_inst_new(a, k, IR_CONST, loc, 0, NULL, 1, &t);
	i->ival = v;
	ir_insert_at(at, i);
	return i->results[0];
}

/* x * r, a constant where x is one (and the product fits): the pipeline
 * sizes its stages by a constant trip count (nvptx_sched.c). */
static Value *times(Arena *a, IrKernel *k, InsertPoint at, Loc loc, Type *t, Value *x, int64_t r)
{
	int64_t v, p;
	if (ir_const_value(x, &v) && ck_mul(v, r, &p))
		return konst(a, k, at, loc, t, p);
	return emit(a, k, at, IR_MUL, loc, t, x, konst(a, k, at, loc, t, r));
}

/* A copy of `loop` before it whose slices are BK_BEST deep (masked along
 * K when `mask`). */
static Inst *copy_with_k(Arena *a, IrKernel *k, Inst *loop, const Loop *L, bool mask)
{
	ValueMap *m = vmap_new(a);
	Inst *c = ir_clone_inst(a, k, loop, m, (InsertPoint){loop->parent, loop});
	for (int s = 0; s < 2; s++) {
		Inst *mul = vmap_get(m, L->mul[s]->results[0])->def;
		int cj = mul->args[0] == c->regions[0]->args[0];
		mul->args[cj] = konst(a, k, (InsertPoint){mul->parent, mul}, mul->loc, mul->args[cj]->type, BK_BEST);
		Inst *ld = vmap_get(m, L->ld[s]->results[0])->def;
		ld->idx[L->kidx[s]].size = BK_BEST;
		ld->idx[L->kidx[s]].masked |= mask;
		const Type *t = ld->results[0]->type;
		int64_t dims[2] = {t->dims[0], t->dims[1]};
		dims[s == 0 ? 1 : 0] = BK_BEST;
		ld->results[0]->type = type_tensor(a, t->dtype, 2, dims);
	}
	return c;
}

/* A redo record of `old` (before anything is put in its place). */
static Redo *redo_of(Arena *a, NvReblock *rb, Inst *old)
{
	Redo *d = arena_alloc(a, sizeof *d);
	memset(d, 0, sizeof *d);
	d->old = old;
	d->next = old->next;
	d->mark = old->prev;
	d->prev = rb->last;
	rb->last = d;
	return d;
}

/* Puts the results of c in place of those of d's old instruction, which
 * leaves the region (d records both for nv_reblock_undo). */
static void replace_old(Arena *a, IrKernel *k, Redo *d, const Inst *c)
{
	Inst *old = d->old;
	d->res = arena_alloc(a, sizeof *d->res * (size_t)old->nresults);
	for (int j = 0; j < old->nresults; j++) {
		d->res[j] = c->results[j];
		ir_replace_all_uses(k, old->results[j], c->results[j]);
	}
	ir_remove(old);
}

/* Rewrites `loop` (matched in L) for K slices of BK_BEST (its redo record
 * in rb). */
static void rewrite(Arena *a, NvReblock *rb, Inst *loop, const Loop *L)
{
	IrKernel *k = rb->k;
	Redo *d = redo_of(a, rb, loop);
	InsertPoint at = {loop->parent, loop};
	Loc loc = loop->loc;
	Type *it = loop->args[0]->type;
	Value *lo, *hi;
	int64_t T;
	bool mask = false;
	if (L->bk > BK_BEST) {
		/* [lo * r, hi * r) */
		int64_t r = L->bk / BK_BEST;
		lo = times(a, k, at, loc, it, loop->args[0], r);
		hi = times(a, k, at, loc, it, loop->args[1], r);
	} else {
		/* [0, cdiv(T, r)) = [0, (T + r - 1) // r) */
		int64_t r = BK_BEST / L->bk;
		bool known = ir_const_value(loop->args[1], &T);
		mask = !known || T % r != 0;
		lo = loop->args[0];
		if (known && T >= 0)
			hi = konst(a, k, at, loc, it, T / r + (T % r != 0));
		else
			hi = emit(a, k, at, IR_FLOORDIV, loc, it,
			          emit(a, k, at, IR_ADD, loc, it, loop->args[1], konst(a, k, at, loc, it, r - 1)),
			          konst(a, k, at, loc, it, r));
	}
	Inst *c = copy_with_k(a, k, loop, L, mask);
	c->args[0] = lo;
	c->args[1] = hi;
	replace_old(a, k, d, c);
}


/* The K slices of a whole-K loop: 64, or with `whole_only` (entries of
 * unaligned rows, any target) the first of 64, 32, 16 that divides K; 0
 * for none. */
static int64_t whole_bk(int64_t K, bool whole_only)
{
	for (int64_t bk = BK_BEST; bk >= (whole_only ? 16 : BK_BEST); bk /= 2)
		if (K % bk == 0)
			return bk;
	return 0;
}

/* Whether `dot`, in the kernel's body, is one over a whole K of its two
 * loads (the form at the top), filled in W. */
static bool match_whole(const IrKernel *k, Inst *dot, Whole *W, bool whole_only)
{
	if (dot->op != IR_DOT || dot->nargs != 2 || dot->parent != k->body || dot->args[0] == dot->args[1])
		return false;
	const Type *at = dot->args[0]->type, *bt = dot->args[1]->type, *rt = dot->results[0]->type;
	/* The loop's index and its slices' starts are i32: a K past that is
	 * left to §10.2's bound on the dot's operands. */
	if (at->rank != 2 || bt->rank != 2 || !lay_dot_is_mma(at, bt, rt) || at->dims[0] < 64 ||
	    rt->dtype != DT_F32 || at->dims[1] < WHOLE_K_MIN || at->dims[1] > INT32_MAX ||
	    !(W->bk = whole_bk(at->dims[1], whole_only)))
		return false;
	for (int s = 0; s < 2; s++) {
		Inst *ld = dot->args[s]->def;
		if (!plain_load(ld, dot->parent) || !used_only_by(dot->parent, ld->results[0], dot))
			return false;
		int j = indexer_of(ld, s == 0 ? 1 : 0, &W->kop[s]);
		if (j < 0 || ld->idx[j].kind != IDX_FULL)
			return false;
		W->ld[s] = ld;
		W->kidx[s] = j;
	}
	W->dot = dot;
	return true;
}

/* Load `ld` (a whole K along result dim kdim, indexer j) sliced to
 * ds(off, bk) there, appended to body. */
static Value *slice_load(Arena *a, IrKernel *k, Region *body, const Inst *ld, int j, int op, int kdim, Value *off,
                         int64_t bk)
{
	const Type *t = ld->results[0]->type;
	int64_t dims[2] = {t->dims[0], t->dims[1]};
	dims[kdim] = bk;
	Type *rt = type_tensor(a, t->dtype, 2, dims);
	Inst *c = ir_inst_new(a, k, IR_LOAD, ld->loc, ld->nargs + 1, NULL, 1, &rt);
	for (int x = 0, y = 0; x < c->nargs; x++)
		c->args[x] = x == op ? off : ld->args[y++];
	ir_set_indexers(a, c, ld->nidx, ld->idx);
	c->idx[j].kind = IDX_SLICE; /* `masked` as the whole dim's */
	c->idx[j].size = bk;
	c->results[0]->name = ld->results[0]->name;
	ir_append(body, c);
	return c->results[0];
}

/* Rewrites the whole-K dot of W into its K loop (the form at the top). */
static void rewrite_whole(Arena *a, NvReblock *rb, const Whole *W)
{
	IrKernel *k = rb->k;
	Inst *dot = W->dot;
	Loc loc = dot->loc;
	Redo *d = redo_of(a, rb, dot);
	InsertPoint at = {dot->parent, dot};
	Type *it = type_scalar(a, DT_I32), *rt = dot->results[0]->type;
	Inst *zero = ir_inst_new(a, k, IR_CONST, loc, 0, NULL, 1, &rt);
	zero->fval = 0.0;
	ir_insert_at(at, zero);
	Value *args[4] = {konst(a, k, at, loc, it, 0), konst(a, k, at, loc, it, dot->args[0]->type->dims[1] / W->bk),
	                  konst(a, k, at, loc, it, 1), zero->results[0]};
	Inst *loop = ir_inst_new(a, k, IR_FOR, loc, 4, args, 1, &rt);
	ir_insert_at(at, loop);
	Type *atypes[2] = {it, rt};
	Region *body = ir_add_region(a, k, loop, 2, atypes);
	InsertPoint end = {body, NULL};
	Value *off = emit(a, k, end, IR_MUL, loc, it, body->args[0], konst(a, k, end, loc, it, W->bk));
	ValueMap *m = vmap_new(a);
	for (int s = 0; s < 2; s++)
		vmap_set(m, dot->args[s], slice_load(a, k, body, W->ld[s], W->kidx[s], W->kop[s], 1 - s, off, W->bk));
	Inst *nd = ir_clone_inst(a, k, dot, m, end);
	Value *sum = emit(a, k, end, IR_ADD, loc, rt, body->args[1], nd->results[0]);
	ir_yield(a, k, body, loc, 1, &sum);
	replace_old(a, k, d, loop);
	/* The loads go too (read by the old dot alone), each put back before
	 * the dot is. */
	for (int s = 0; s < 2; s++) {
		redo_of(a, rb, W->ld[s]);
		ir_remove(W->ld[s]);
	}
}

static void reblock_region(Arena *a, NvReblock *rb, Region *r)
{
	for (Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nregions; j++)
			reblock_region(a, rb, i->regions[j]);
		Loop L;
		if (i->op == IR_FOR && match(i, &L) && (L.bk > BK_BEST || covers(rb->k, i, &L))) {
			Inst *next = i->next;
			rewrite(a, rb, i, &L);
			i = next->prev; /* on after the new loop */
		}
	}
}

NvReblock *nv_reblock(Arena *a, IrKernel *k, bool whole_only)
{
	NvReblock *rb = arena_alloc(a, sizeof *rb);
	memset(rb, 0, sizeof *rb);
	rb->k = k;
	for (Inst *i = k->body->first, *next; i; i = next) {
		next = i->next;
		Whole W;
		if (match_whole(k, i, &W, whole_only))
			rewrite_whole(a, rb, &W);
	}
	if (!whole_only)
		reblock_region(a, rb, k->body);
	return rb->last ? rb : NULL;
}

void nv_reblock_undo(NvReblock *rb)
{
	for (Redo *d = rb ? rb->last : NULL; d; d = d->prev) {
		/* The new instructions lie between `mark` and `next`. */
		ir_insert_before(d->next, d->old);
		for (int j = 0; d->res && j < d->old->nresults; j++)
			ir_replace_all_uses(rb->k, d->res[j], d->old->results[j]);
		for (Inst *i = d->old->prev, *p; i && i != d->mark; i = p) {
			p = i->prev;
			ir_remove(i);
		}
	}
}
