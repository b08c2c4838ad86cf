/* Programs of a small block merged into one CTA (issue 13).
 *
 * A user's matmul of 64-row or 64-column blocks (Triton's autotune list:
 * 64 x 256, 64 x 128, 128 x 64, 128 x 32) ran at 0.59-0.87x cuBLAS on the
 * H200 where 128 x 128 and 128 x 256 blocks run at 0.90-1.21x
 * (bench/RESULTS.md, twenty-fifth session): a warpgroup's 64 x N wgmma
 * reads its whole B tile from shared memory for half the flops, and B is
 * read from L2 by twice the CTAs.  So where the programs of a parallel axis
 * are independent blocks of rows (or columns), a CTA runs r of them at
 * once, programs r p .. r p + r - 1 of that axis as one block r times as
 * large: the sums of each output element are those of its own program
 * (the same K slices in the same order), so the results are the same bits.
 *
 * Which kernels: those whose tensor-core dots (up to MERGE_MAX_DOTS; a
 * matmul's one, attention's two) all have results carrying the axis in
 * the same dim with the same extent E under MERGE_ROWS: their rows, or
 * their columns under at most MERGE_ROWS rows; r = MERGE_ROWS / E.  And,
 * a "wide" merge, 128 x 128 blocks' columns into 128 x 256 (r = 2): the
 * two warpgroups' m64n256 tiles read each row of A from shared memory
 * once for twice the flops (8192^3 on the H200: 0.93-0.99x -> 0.97-1.05x
 * cuBLAS); its gain is small enough that a tail wave of twice the work
 * loses it (3072^3: -11 %), so its stub also weighs the waves.
 * Flash attention with 64-row q blocks then runs as with 128 (d128: 531
 * -> 625 TFLOP/s on the H200).  What the body must be, for axis a
 * (anything else keeps one program a CTA): program_id(a) is used only as pid * E (through integer casts),
 * and pid * E only as the start of a slice of E elements of a load or a
 * store (the BlockSpec form after lower-refs, and `ds(i * BM, BM)`); no
 * num_programs(a), scratch, atomics, debug output or while loops; and the
 * dim those slices run along flows through the body as rows do: through
 * elementwise ops, broadcasts that keep it, transposes, reductions and
 * scans over other dims, the M dim of a dot's A (or the N dim of its B),
 * loop-carried values and `when` results; constants, iotas over other dims
 * and broadcasts that create it take any extent.  Each such value's dim
 * (of extent E) becomes r E; the slices take r E elements; the CTA's
 * program id along a is r times its index (codegen_nvptx.c).  The stub
 * launches the merged entry only when r divides the axis' extent, so a CTA
 * never runs a program the grid does not have, and when its fewer CTAs
 * still fill most of the GPU's SMs (host/nvptx_fatobj.c); the plain entry
 * otherwise.
 *
 * The rewrite changes value types and slice sizes in place for one entry;
 * nv_merge_undo puts them back. */
#include "nvptx.h"

#include <string.h>

enum {
	MERGE_ROWS = 128,    /* the block extent merged programs make (rows of two warpgroups) */
	MERGE_WIDE = 256,    /* the columns 128 x 128 blocks' programs make (a warpgroup's widest wgmma) */
	MERGE_MAX_RANK = 8,  /* values of more dims keep their programs apart */
	MERGE_MAX_DOTS = 8,  /* bodies of more tensor-core dots keep them apart */
	NONE = -1,           /* a value does not carry the axis */
	FAIL = -2,           /* in a dim map: that dim may not carry it */
	FREE = -3,           /* in a dim map: no counterpart, and none needed */
};

/* One change, undone in reverse order. */
typedef struct Saved {
	Value *v;         /* a value retyped (or NULL) */
	Type *type;       /* its old type */
	Inst *access;     /* an access whose indexers were replaced (or NULL) */
	Indexer *idx;     /* its old indexers */
} Saved;

struct NvMerge {
	Saved *saved;
	int nsaved;
};

/* The analysis of one axis. */
typedef struct Carry {
	int axis;
	int64_t ext;     /* E: the slices' extent (0: none seen yet) */
	signed char *pid;     /* per value id: 1 program_id(a) or a cast of it, 2 pid * E */
	signed char *dim;     /* per value id: the dim carrying the axis' programs, NONE */
	bool ok;
	bool changed;
} Carry;

typedef void (*InstFn)(Carry *c, Inst *i);

static void walk(Carry *c, const Region *r, InstFn fn)
{
	for (Inst *i = r->first; i && c->ok; i = i->next) {
		fn(c, i);
		for (int j = 0; j < i->nregions; j++)
			walk(c, i->regions[j], fn);
	}
}

/* As walk, last instruction first (a value's users before its definition). */
static void walk_back(Carry *c, const Region *r, InstFn fn)
{
	for (Inst *i = r->last; i && c->ok; i = i->prev) {
		for (int j = i->nregions - 1; j >= 0; j--)
			walk_back(c, i->regions[j], fn);
		fn(c, i);
	}
}

static bool is_pid(const Carry *c, const Value *v, int kind)
{
	return c->pid[v->id] == kind;
}

/* The number of the indexer whose operand is args[n] of access i, or -1. */
static int indexer_at(const Inst *i, int n)
{
	for (int d = 0; d < i->nidx; d++)
		if (i->idx[d].kind != IDX_FULL && ir_index_arg(i, d) == i->args[n])
			return d;
	return -1;
}

/* The pid slice of access i: its indexer, or -1 (none), -2 (two). */
static int pid_slice(const Carry *c, const Inst *i)
{
	int found = -1;
	for (int d = 0; d < i->nidx; d++) {
		if (i->idx[d].kind != IDX_SLICE || !is_pid(c, ir_index_arg(i, d), 2))
			continue;
		if (found >= 0)
			return -2;
		found = d;
	}
	return found;
}

/* Pass 1: program_id(a), its casts and its products with E; every other
 * use of them, and what no merged CTA may run, fails. */
static void find_pid(Carry *c, Inst *i)
{
	switch (i->op) {
	case IR_PROGRAM_ID:
		if (i->ival == c->axis)
			c->pid[i->results[0]->id] = 1;
		return;
	case IR_NUM_PROGRAMS:
		c->ok &= i->ival != c->axis;
		return;
	case IR_ATOMIC: case IR_DEBUG_PRINT: case IR_DEBUG_CHECK: case IR_WHILE:
		c->ok = false;
		return;
	case IR_CAST:
		if (is_pid(c, i->args[0], 1)) {
			c->ok &= dtype_is_int(i->results[0]->type->dtype) && dtype_bits(i->results[0]->type->dtype) >= 32;
			c->pid[i->results[0]->id] = 1;
			return;
		}
		break;
	case IR_MUL:
		for (int s = 0; s < 2; s++) {
			int64_t e;
			if (!is_pid(c, i->args[s], 1))
				continue;
			if (!ir_const_value(i->args[1 - s], &e) || e <= 0 || (c->ext && e != c->ext)) {
				c->ok = false;
				return;
			}
			c->ext = e;
			c->pid[i->results[0]->id] = 2;
			return;
		}
		break;
	default:
		break;
	}
	bool access = i->op == IR_LOAD || i->op == IR_STORE;
	for (int n = 0; n < i->nargs; n++) {
		const Value *v = i->args[n];
		if (is_pid(c, v, 1)) {
			c->ok = false;
		} else if (is_pid(c, v, 2)) {
			int d = access ? indexer_at(i, n) : -1;
			c->ok &= d >= 0 && i->idx[d].kind == IDX_SLICE && i->idx[d].size == c->ext;
		}
	}
	/* One pid slice an access, unmasked, ungathered (its operands are
	 * defined before it, so their marks are in). */
	int d = access ? pid_slice(c, i) : -1;
	c->ok &= d != -2 && (d < 0 || (!i->has_mask && !ir_access_gathers(i)));
}

/* a carries the axis in dim x iff b does in map[x] (FAIL: x may not
 * carry it; FREE: b need not); back maps b's dims to a's. */
static void link(Carry *c, const Value *a, const int *map, const Value *b, const int *back)
{
	for (int s = 0; s < 2 && c->ok; s++) {
		const Value *from = s ? b : a, *to = s ? a : b;
		const int *m = s ? back : map;
		int x = c->dim[from->id];
		if (x == NONE)
			continue;
		int y = m[x];
		if (y == FAIL || (y >= 0 && c->dim[to->id] != NONE && c->dim[to->id] != y)) {
			c->ok = false;
		} else if (y >= 0 && c->dim[to->id] == NONE) {
			c->dim[to->id] = (signed char)y;
			c->changed = true;
		}
	}
}

static const int identity[MERGE_MAX_RANK] = {0, 1, 2, 3, 4, 5, 6, 7};

static void same(Carry *c, const Value *a, const Value *b)
{
	if (a->type->kind == TY_VALUE && b->type->kind == TY_VALUE && a->type->rank == b->type->rank)
		link(c, a, identity, b, identity);
	else if (c->dim[a->id] != NONE || c->dim[b->id] != NONE)
		c->ok = false;
}

/* Fails where v carries the axis in dim x. */
static void not_in(Carry *c, const Value *v, int x)
{
	c->ok &= c->dim[v->id] != x;
}

/* Fails where any operand or result carries the axis. */
static void opaque(Carry *c, const Inst *i)
{
	for (int n = 0; n < i->nargs; n++)
		c->ok &= c->dim[i->args[n]->id] == NONE;
	for (int n = 0; n < i->nresults; n++)
		c->ok &= c->dim[i->results[n]->id] == NONE;
}

/* The ops' rules: which dims of operands and results correspond. */
static void propagate(Carry *c, Inst *i)
{
	const Value *res = i->nresults == 1 ? i->results[0] : NULL;
	int ra = i->nargs ? i->args[0]->type->rank : 0, rr = res ? res->type->rank : 0;
	int map[MERGE_MAX_RANK], back[MERGE_MAX_RANK];
	if (ra > MERGE_MAX_RANK || rr > MERGE_MAX_RANK) {
		opaque(c, i);
		return;
	}
	if (op_info[i->op].flags & F_ELEMWISE) {
		for (int n = 0; n < i->nargs; n++)
			same(c, i->args[n], res);
		return;
	}
	switch (i->op) {
	case IR_CONST:
		return;
	case IR_IOTA:
		not_in(c, res, (int)i->ival);
		return;
	case IR_BROADCAST:
		/* NumPy: trailing dims line up; an operand dim of 1 under a larger
		 * one, or none, is created. */
		for (int d = 0; d < rr; d++) {
			int s = d - (rr - ra);
			back[d] = s >= 0 && i->args[0]->type->dims[s] == res->type->dims[d] ? s : FREE;
		}
		for (int s = 0; s < ra; s++)
			map[s] = i->args[0]->type->dims[s] == res->type->dims[s + rr - ra] ? s + rr - ra : FAIL;
		link(c, i->args[0], map, res, back);
		return;
	case IR_RESHAPE: {
		/* Only unit dims added or dropped (x[None, :]): the others pair up in order. */
		const int64_t *ad = i->args[0]->type->dims, *rd = res->type->dims;
		int s = 0, d = 0;
		for (;;) {
			while (s < ra && ad[s] == 1)
				map[s++] = FAIL;
			while (d < rr && rd[d] == 1)
				back[d++] = FAIL;
			if (s == ra || d == rr)
				break;
			if (ad[s] != rd[d])
				break;
			map[s++] = d;
			back[d++] = s - 1;
		}
		if (s != ra || d != rr)
			opaque(c, i);
		else
			link(c, i->args[0], map, res, back);
		return;
	}
	case IR_TRANSPOSE:
		for (int d = 0; d < rr; d++) {
			back[d] = (int)i->perm[d];
			map[i->perm[d]] = d;
		}
		link(c, i->args[0], map, res, back);
		return;
	case IR_REDUCE_SUM: case IR_REDUCE_MAX: case IR_REDUCE_MIN: case IR_REDUCE_PROD: case IR_ARGMAX:
	case IR_ARGMIN:
		for (int s = 0; s < ra; s++)
			map[s] = s == i->ival ? FAIL : s < i->ival ? s : s - 1;
		for (int d = 0; d < rr; d++)
			back[d] = d < i->ival ? d : d + 1;
		link(c, i->args[0], map, res, back);
		return;
	case IR_CUMSUM: case IR_REVERSE:
		not_in(c, i->args[0], (int)i->ival);
		same(c, i->args[0], res);
		return;
	case IR_DOT: {
		if (ra != 2 || i->args[1]->type->rank != 2 || rr != 2) {
			opaque(c, i);
			return;
		}
		int ma[2] = {0, FAIL}, ba[2] = {0, FREE}, mb[2] = {FAIL, 1}, bb[2] = {FREE, 1};
		link(c, i->args[0], ma, res, ba);
		link(c, i->args[1], mb, res, bb);
		if (i->nargs == 3)
			same(c, i->args[2], res);
		/* Neither operand's carried rows may meet the other's. */
		c->ok &= c->dim[res->id] == NONE || c->dim[i->args[0]->id] != NONE || c->dim[i->args[1]->id] != NONE;
		return;
	}
	case IR_LOAD: case IR_STORE: {
		int d = pid_slice(c, i);
		const Value *v = i->op == IR_LOAD ? res : i->args[ir_access_extras(i)];
		if (d >= 0) {
			int x = ir_access_dim(i, d);
			if (c->dim[v->id] == NONE) {
				c->dim[v->id] = (signed char)x;
				c->changed = true;
			}
			c->ok &= c->dim[v->id] == x;
		} else {
			c->ok &= c->dim[v->id] == NONE;
		}
		/* `other` has the loaded value's shape (or is a scalar). */
		for (int n = ir_access_extras(i); n < i->nargs; n++)
			if (i->args[n] != v && i->args[n]->type->rank == v->type->rank)
				same(c, i->args[n], v);
		return;
	}
	case IR_FOR:
		/* lo, hi, step, inits; the region: the index, the carried values. */
		for (int n = 3; n < i->nargs; n++) {
			const Region *r = i->regions[0];
			same(c, i->args[n], r->args[n - 2]);
			same(c, r->args[n - 2], r->last->args[n - 3]);
			same(c, r->args[n - 2], i->results[n - 3]);
		}
		return;
	case IR_IF:
		for (int j = 0; j < i->nregions; j++)
			for (int n = 0; n < i->nresults; n++)
				same(c, i->regions[j]->last->args[n], i->results[n]);
		return;
	case IR_YIELD:
		return;
	default:
		opaque(c, i);
		return;
	}
}

/* Last: every value carrying the axis has E in that dim, and is one a
 * merged block can give: no load but along a pid slice. */
static void check(Carry *c, Inst *i)
{
	for (int n = 0; n < i->nresults; n++) {
		const Value *v = i->results[n];
		int x = c->dim[v->id];
		if (x == NONE)
			continue;
		c->ok &= v->type->kind == TY_VALUE && x < v->type->rank && v->type->dims[x] == c->ext;
		c->ok &= i->op != IR_LOAD || pid_slice(c, i) >= 0;
	}
	for (int j = 0; j < i->nregions; j++)
		for (int n = 0; n < i->regions[j]->nargs; n++) {
			const Value *v = i->regions[j]->args[n];
			int x = c->dim[v->id];
			c->ok &= x == NONE || (v->type->kind == TY_VALUE && x < v->type->rank && v->type->dims[x] == c->ext);
		}
}

/* Carry analysis of axis a: c->ok when the body's programs along a may
 * merge (the top of the file). */
static void analyse(Arena *a, const IrKernel *k, int axis, Carry *c)
{
	size_t n = (size_t)k->nvalues + 1;
	*c = (Carry){axis, 0, arena_alloc(a, n), arena_alloc(a, n), true, false};
	memset(c->pid, 0, n);
	memset(c->dim, NONE, n);
	walk(c, k->body, find_pid);
	if (!c->ext)
		c->ok = false;
	if (!c->ok)
		return;
	/* Rounds alternate between forward (operands to results) and backward
	 * (a store's demand back to the constants it needs), so that a chain
	 * either way takes one; it ends after one of each changes nothing,
	 * and every other round sets at least one dim. */
	for (size_t round = 0, quiet = 0; c->ok && quiet < 2 && round < 2 * n + 2; round++) {
		c->changed = false;
		(round % 2 ? walk_back : walk)(c, k->body, propagate);
		quiet = c->changed ? 0 : quiet + 1;
	}
	if (c->ok)
		walk(c, k->body, check);
}

/* The tensor-core dots of region r (recursively) into dots[*n..]. */
static void mma_dots(const Region *r, const Inst **dots, int *n, int most)
{
	for (const Inst *i = r->first; i; i = i->next) {
		if (i->op == IR_DOT && lay_dot_is_mma(i->args[0]->type, i->args[1]->type, i->results[0]->type) && *n < most)
			dots[(*n)++] = i;
		for (int j = 0; j < i->nregions; j++)
			mma_dots(i->regions[j], dots, n, most);
	}
}

/* The programs of axis c->axis a CTA runs, where every tensor-core dot's
 * result carries the axis in the same dim (its rows, or its columns under
 * at most MERGE_ROWS rows) of the same extent E: MERGE_ROWS / E for E
 * below MERGE_ROWS; MERGE_WIDE / E for columns of E = MERGE_ROWS under
 * exactly MERGE_ROWS rows (*wide set: 128 x 128 blocks run as 128 x 256);
 * else 1. */
static int factor_of(const Carry *c, const Inst *const *dots, int ndots, bool *wide)
{
	int x = NONE;
	int64_t e = 0;
	bool rows_full = true;  /* every dot has MERGE_ROWS rows */
	for (int j = 0; j < ndots; j++) {
		const Value *res = dots[j]->results[0];
		int xj = c->dim[res->id];
		if (xj == NONE || (j && (xj != x || res->type->dims[xj] != e)) || (xj == 1 && res->type->dims[0] > MERGE_ROWS))
			return 1;
		x = xj;
		e = res->type->dims[xj];
		rows_full &= res->type->dims[0] == MERGE_ROWS;
	}
	if (ndots && x == 1 && e == MERGE_ROWS && rows_full) {
		*wide = true;
		return MERGE_WIDE / MERGE_ROWS;
	}
	return ndots && e >= 16 && e < MERGE_ROWS && MERGE_ROWS % e == 0 ? (int)(MERGE_ROWS / e) : 1;
}

static int count_insts(const Region *r)
{
	int n = 0;
	for (const Inst *i = r->first; i; i = i->next) {
		n++;
		for (int j = 0; j < i->nregions; j++)
			n += count_insts(i->regions[j]);
	}
	return n;
}

static void retype(Arena *a, NvMerge *m, Value *v, int x, int r)
{
	Type *t = v->type;
	int64_t dims[MERGE_MAX_RANK];
	memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
	dims[x] *= r;
	m->saved[m->nsaved++] = (Saved){v, t, NULL, NULL};
	v->type = type_tensor(a, t->dtype, t->rank, dims);
}

static void resize(Arena *a, NvMerge *m, Inst *i, int d, int r)
{
	Indexer *idx = arena_alloc(a, (size_t)i->nidx * sizeof *idx);
	memcpy(idx, i->idx, (size_t)i->nidx * sizeof *idx);
	idx[d].size *= r;
	m->saved[m->nsaved++] = (Saved){NULL, NULL, i, i->idx};
	i->idx = idx;
}

typedef struct Apply {
	Arena *a;
	NvMerge *m;
	const Carry *c;
	int r;
} Apply;

static void apply_region(Apply *ap, Region *reg)
{
	const Carry *c = ap->c;
	for (int n = 0; n < reg->nargs; n++)
		if (c->dim[reg->args[n]->id] != NONE)
			retype(ap->a, ap->m, reg->args[n], c->dim[reg->args[n]->id], ap->r);
	for (Inst *i = reg->first; i; i = i->next) {
		for (int n = 0; n < i->nresults; n++)
			if (c->dim[i->results[n]->id] != NONE)
				retype(ap->a, ap->m, i->results[n], c->dim[i->results[n]->id], ap->r);
		int d = (i->op == IR_LOAD || i->op == IR_STORE) ? pid_slice(c, i) : -1;
		if (d >= 0)
			resize(ap->a, ap->m, i, d, ap->r);
		for (int j = 0; j < i->nregions; j++)
			apply_region(ap, i->regions[j]);
	}
}

NvMerge *nv_merge(Arena *a, IrKernel *k, int *factor, bool *wide)
{
	*wide = false;
	for (int d = 0; d < k->ngrid; d++)
		factor[d] = 1;
	const Inst *dots[MERGE_MAX_DOTS];
	int ndots = 0;
	mma_dots(k->body, dots, &ndots, MERGE_MAX_DOTS);
	if (!ndots || ndots == MERGE_MAX_DOTS || k->nscratch)
		return NULL;
	Carry *cs = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *cs);
	int merged = 0;
	for (int d = 0; d < k->ngrid; d++) {
		if (k->semantics && k->semantics[d] == AXIS_ARBITRARY)
			continue;
		analyse(a, k, d, &cs[d]);
		bool w = false;
		factor[d] = cs[d].ok ? factor_of(&cs[d], dots, ndots, &w) : 1;
		merged += factor[d] > 1;
		*wide |= w;
	}
	if (!merged)
		return NULL;
	/* Two axes may not carry the same dim of a value. */
	for (int d = 0; d < k->ngrid; d++)
		for (int e = d + 1; e < k->ngrid; e++)
			if (factor[d] > 1 && factor[e] > 1)
				for (int v = 0; v <= k->nvalues; v++)
					if (cs[d].dim[v] != NONE && cs[d].dim[v] == cs[e].dim[v])
						factor[e] = 1;
	NvMerge *m = arena_alloc(a, sizeof *m);
	/* At most every value retyped and every access resized, per axis. */
	m->saved = arena_alloc(a, (size_t)k->ngrid * (size_t)(k->nvalues + count_insts(k->body) + 1) * sizeof *m->saved);
	m->nsaved = 0;
	for (int d = 0; d < k->ngrid; d++)
		if (factor[d] > 1) {
			Apply ap = {a, m, &cs[d], factor[d]};
			apply_region(&ap, k->body);
		}
	return m;
}

void nv_merge_undo(NvMerge *m)
{
	for (int j = m ? m->nsaved - 1 : -1; j >= 0; j--) {
		Saved *s = &m->saved[j];
		if (s->v)
			s->v->type = s->type;
		else
			s->access->idx = s->idx;
	}
}
