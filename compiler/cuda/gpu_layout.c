/* gpu_layout.c - layouts of tensor values on the GPU (nvptx.h describes
 * the representation) and their assignment to the values of a kernel.
 *
 * Assignment (gpu_assign_layouts) walks the body in order:
 *  - loads get a blocked layout (16-byte vectors along the last dim, lanes
 *    next, warps on the highest bits), or the layout a broadcast user wants
 *    (a hint from a first walk), so that `x * w[None, :]` needs no data
 *    movement;
 *  - elementwise ops take their first operand's layout; reductions the
 *    slice of their operand's; transposes and most reshapes relabel;
 *  - dots get the MMA accumulator layout (tensor cores) or a blocked one;
 *  - constants, iota, broadcasts and elementwise ops of only those are
 *    *lazy*: computed at each use, in whatever layout the user has;
 *  - loop-carried tensors keep their init's layout (a lazy init: the layout
 *    the loop body yields, from the first walk).
 * The code generator converts a value whose layout differs from what an
 * op needs (nvptx_tensor.c). */
#include "nvptx.h"

#include <string.h>

int lay_log2_ceil(int64_t x)
{
	int b = 0;
	while (b < 63 && (INT64_C(1) << b) < x)
		b++;
	return b;
}

int lay_thread_bits(const Type *t, int warpbits)
{
	int bits = -5 - warpbits; /* less lanes and warps */
	for (int d = 0; t->kind == TY_VALUE && d < t->rank; d++)
		bits += lay_log2_ceil(t->dims[d]);
	return bits;
}

bool lay_pow2(int64_t x)
{
	return x > 0 && (x & (x - 1)) == 0;
}

/* A layout of the given shape with its flat bits still unassigned. */
static GpuLayout *lay_alloc(LayoutCtx *lc, int rank, const int64_t *dims)
{
	GpuLayout *L = arena_alloc(lc->a, sizeof *L);
	L->rank = rank;
	L->dims = arena_alloc(lc->a, (size_t)(rank + 1) * sizeof *L->dims);
	L->dbits = arena_alloc(lc->a, (size_t)(rank + 1) * sizeof *L->dbits);
	L->dlo = arena_alloc(lc->a, (size_t)(rank + 1) * sizeof *L->dlo);
	int b = 0;
	for (int d = rank - 1; d >= 0; d--) {
		L->dims[d] = dims[d];
		L->dbits[d] = lay_log2_ceil(dims[d]);
		L->dlo[d] = b;
		b += L->dbits[d];
	}
	L->nbits = b;
	L->kind = arena_alloc(lc->a, (size_t)b + 1);
	L->idx = arena_alloc(lc->a, (size_t)b + 1);
	L->warpbits = lc->warpbits;
	return L;
}

static void set_bit(GpuLayout *L, int b, int kind, int idx)
{
	L->kind[b] = (uint8_t)kind;
	L->idx[b] = (uint8_t)idx;
}

static bool lay_equal(const GpuLayout *A, const GpuLayout *B)
{
	if (A->rank != B->rank || A->nbits != B->nbits)
		return false;
	for (int d = 0; d < A->rank; d++)
		if (A->dims[d] != B->dims[d])
			return false;
	return memcmp(A->kind, B->kind, (size_t)A->nbits) == 0 && memcmp(A->idx, B->idx, (size_t)A->nbits) == 0;
}

/* Computes the derived fields, checks the invariants and interns. */
static const GpuLayout *lay_finish(LayoutCtx *lc, GpuLayout *L)
{
	int nreg = 0;
	L->lane_used = L->warp_used = 0;
	for (int b = 0; b < L->nbits; b++) {
		switch (L->kind[b]) {
		case LB_REG: nreg++; break;
		case LB_LANE:
			PKC_ASSERT(L->idx[b] < 5 && !(L->lane_used & (1u << L->idx[b])));
			L->lane_used |= 1u << L->idx[b];
			break;
		default:
			PKC_ASSERT(L->idx[b] < L->warpbits && !(L->warp_used & (1u << L->idx[b])));
			L->warp_used |= 1u << L->idx[b];
			break;
		}
	}
	L->nregbits = nreg;
	L->regflat = arena_alloc(lc->a, (size_t)(nreg + 1) * sizeof *L->regflat);
	for (int i = 0; i < nreg; i++)
		L->regflat[i] = -1;
	for (int b = 0; b < L->nbits; b++)
		if (L->kind[b] == LB_REG) {
			PKC_ASSERT(L->idx[b] < nreg && L->regflat[L->idx[b]] < 0);
			L->regflat[L->idx[b]] = b;
		}
	for (int e = 0; e < lc->all.len; e++)
		if (lay_equal(lc->all.items[e], L))
			return lc->all.items[e];
	L->id = lc->all.len;
	vec_push(lc->a, &lc->all, L);
	return L;
}

const GpuLayout *lay_make(LayoutCtx *lc, int rank, const int64_t *dims, const uint8_t *kind, const uint8_t *idx)
{
	GpuLayout *L = lay_alloc(lc, rank, dims);
	memcpy(L->kind, kind, (size_t)L->nbits);
	memcpy(L->idx, idx, (size_t)L->nbits);
	return lay_finish(lc, L);
}

/* Assigns the bits listed in order[0..n) (flat bit numbers, lowest
 * first): lanes first, the top ones to warps, the rest to registers
 * numbered from *reg. */
static void assign_spread(GpuLayout *L, const int *order, int n, int *reg)
{
	int i = 0;
	for (int l = 0; l < 5 && i < n; l++, i++)
		set_bit(L, order[i], LB_LANE, l);
	int nw = L->warpbits < n - i ? L->warpbits : n - i;
	int top = n - nw;
	for (; i < top; i++)
		set_bit(L, order[i], LB_REG, (*reg)++);
	for (int w = 0; i < n; w++, i++)
		set_bit(L, order[i], LB_WARP, w);
}

const GpuLayout *lay_blocked(LayoutCtx *lc, int rank, const int64_t *dims, int vec)
{
	GpuLayout *L = lay_alloc(lc, rank, dims);
	int vb = lay_log2_ceil(vec > 0 ? vec : 1);
	if (vb > L->dbits[rank - 1])
		vb = L->dbits[rank - 1];
	/* A small tensor: shorter vectors, so that every thread gets some. */
	int spare = L->nbits - 5 - lc->warpbits;
	if (vb > spare)
		vb = spare > 0 ? spare : 0;
	int reg = 0, b = 0;
	for (; b < vb; b++)
		set_bit(L, b, LB_REG, reg++);
	int *order = arena_alloc(lc->a, (size_t)(L->nbits + 1) * sizeof *order);
	int n = 0;
	for (; b < L->nbits; b++)
		order[n++] = b;
	assign_spread(L, order, n, &reg);
	return lay_finish(lc, L);
}

const GpuLayout *lay_default(LayoutCtx *lc, const Type *t)
{
	return lay_blocked(lc, t->rank, t->dims, 16 / dtype_bytes(t->dtype));
}

const GpuLayout *lay_scan(LayoutCtx *lc, int rank, const int64_t *dims, int axis)
{
	GpuLayout *L = lay_alloc(lc, rank, dims);
	/* The axis's bits first, lowest first, then the others': registers
	 * take as many of them as the threads leave, then the lanes, then the
	 * warps. */
	int *order = arena_alloc(lc->a, (size_t)(L->nbits + 1) * sizeof *order);
	int n = 0;
	for (int j = 0; j < L->dbits[axis]; j++)
		order[n++] = L->dlo[axis] + j;
	for (int b = 0; b < L->nbits; b++)
		if (b < L->dlo[axis] || b >= L->dlo[axis] + L->dbits[axis])
			order[n++] = b;
	int nreg = n - 5 - L->warpbits, i = 0, reg = 0;
	for (; i < nreg; i++)
		set_bit(L, order[i], LB_REG, reg++);
	for (int l = 0; l < 5 && i < n; l++, i++)
		set_bit(L, order[i], LB_LANE, l);
	for (int w = 0; w < L->warpbits && i < n; w++, i++)
		set_bit(L, order[i], LB_WARP, w);
	return lay_finish(lc, L);
}

bool lay_scan_ok(const GpuLayout *L, int axis)
{
	bool warp = false;
	for (int bit = L->dlo[axis]; bit < L->dlo[axis] + L->dbits[axis]; bit++) {
		if (warp && L->kind[bit] != LB_WARP)
			return false;
		warp = L->kind[bit] == LB_WARP;
	}
	return true;
}

/* The layout keeping only the flat bits for which keep[b] is set (whole
 * dims: dims with keepdim[d]), registers renumbered in their old order. */
static const GpuLayout *lay_keep(LayoutCtx *lc, const GpuLayout *L, const bool *keepdim)
{
	int rank = 0;
	int64_t *dims = arena_alloc(lc->a, (size_t)(L->rank + 1) * sizeof *dims);
	for (int d = 0; d < L->rank; d++)
		if (keepdim[d])
			dims[rank++] = L->dims[d];
	GpuLayout *N = lay_alloc(lc, rank, dims);
	int *newreg = arena_alloc(lc->a, (size_t)(L->nregbits + 1) * sizeof *newreg);
	bool *keep = arena_alloc(lc->a, (size_t)(L->nbits + 1));
	for (int d = 0; d < L->rank; d++)
		for (int j = 0; j < L->dbits[d]; j++)
			keep[L->dlo[d] + j] = keepdim[d];
	int nr = 0;
	for (int i = 0; i < L->nregbits; i++)
		newreg[i] = keep[L->regflat[i]] ? nr++ : -1;
	int nb = 0;
	for (int b = 0; b < L->nbits; b++) {
		if (!keep[b])
			continue;
		set_bit(N, nb++, L->kind[b], L->kind[b] == LB_REG ? newreg[L->idx[b]] : L->idx[b]);
	}
	PKC_ASSERT(nb == N->nbits);
	return lay_finish(lc, N);
}

const GpuLayout *lay_slice(LayoutCtx *lc, const GpuLayout *L, int axis)
{
	bool *keepdim = arena_alloc(lc->a, (size_t)L->rank + 1);
	for (int d = 0; d < L->rank; d++)
		keepdim[d] = d != axis;
	return lay_keep(lc, L, keepdim);
}

const GpuLayout *lay_project(LayoutCtx *lc, const GpuLayout *L, int rank, const int64_t *dims)
{
	PKC_ASSERT(rank <= L->rank);
	bool *keepdim = arena_alloc(lc->a, (size_t)L->rank + 1);
	int off = L->rank - rank;
	for (int d = 0; d < L->rank; d++)
		keepdim[d] = d >= off && dims[d - off] == L->dims[d];
	/* Kept dims are the source's non-broadcast dims; its extent-1 dims
	 * (broadcast ones) have no bits, so they are put back as such. */
	const GpuLayout *K = lay_keep(lc, L, keepdim);
	if (K->rank == rank)
		return K;
	return lay_make(lc, rank, dims, K->kind, K->idx);
}

const GpuLayout *lay_transpose(LayoutCtx *lc, const GpuLayout *L, const int64_t *perm)
{
	int64_t *dims = arena_alloc(lc->a, (size_t)(L->rank + 1) * sizeof *dims);
	for (int d = 0; d < L->rank; d++)
		dims[d] = L->dims[perm[d]];
	GpuLayout *N = lay_alloc(lc, L->rank, dims);
	for (int d = 0; d < L->rank; d++)
		for (int j = 0; j < N->dbits[d]; j++) {
			int ob = L->dlo[perm[d]] + j;
			set_bit(N, N->dlo[d] + j, L->kind[ob], L->idx[ob]);
		}
	return lay_finish(lc, N);
}

/* Whether padding leaves the flat index of every real element alone:
 * every dim but the first (ignoring extent-1 dims) is a power of two. */
static bool flat_exact(int rank, const int64_t *dims)
{
	bool first = true;
	for (int d = 0; d < rank; d++) {
		if (dims[d] == 1)
			continue;
		if (!first && (dims[d] & (dims[d] - 1)) != 0)
			return false;
		first = false;
	}
	return true;
}

const GpuLayout *lay_reshape(LayoutCtx *lc, const GpuLayout *L, int rank, const int64_t *dims)
{
	/* The same non-1 extents in order: the bit segments are unchanged. */
	bool same = true;
	int a = 0, b = 0;
	for (;;) {
		while (a < L->rank && L->dims[a] == 1)
			a++;
		while (b < rank && dims[b] == 1)
			b++;
		if (a == L->rank || b == rank)
			break;
		if (L->dims[a++] != dims[b++]) {
			same = false;
			break;
		}
	}
	same = same && a == L->rank && b == rank;
	int nbits = 0;
	for (int d = 0; d < rank; d++)
		nbits += lay_log2_ceil(dims[d]);
	if (!same && !(flat_exact(L->rank, L->dims) && flat_exact(rank, dims) && nbits == L->nbits))
		return NULL;
	if (nbits != L->nbits)
		return NULL;
	return lay_make(lc, rank, dims, L->kind, L->idx);
}

/* ---- MMA fragments (mma.sync.aligned.m16n8k16) ------------------------------------ */

int lay_mma_wm_bits(int64_t M, int64_t N, int warpbits)
{
	/* Each warp bit halves the longer side of the warp's tile (N on a tie),
	 * as far as M has 16-row and N 8-column tiles for them: square-ish warp
	 * tiles (64 x 64 for 128 x 256 and 8 warps, 64 x 32 for 128 x 128, as
	 * Triton's 2 x 4 warps) load the fewest ldmatrix fragments per mma.
	 * Bits neither side takes go along N (lay_mma_c) or replicate.  An N
	 * that is not a power of two takes none: a warp along N would hold
	 * padding columns (whole 8-column tiles) depending on its index, which
	 * the mma loop must know at compile time to skip them. */
	int mb = lay_log2_ceil(M) - 4, nb = lay_pow2(N) ? lay_log2_ceil(N) - 3 : 0;
	int wm = 0, wn = 0;
	for (int w = 0; w < warpbits; w++) {
		bool m_ok = wm < mb, n_ok = wn < nb;
		if (!m_ok && !n_ok)
			break;
		int64_t mw = (int64_t)1 << (lay_log2_ceil(M) - wm), nw = (int64_t)1 << (lay_log2_ceil(N) - wn);
		if (m_ok && (!n_ok || mw > nw))
			wm++;
		else
			wn++;
	}
	return wm;
}

/* Assigns, in order, the bits of `dim` (rows 0 / cols 1 of a 2-D layout)
 * from bit `from` on to the next sources in `src`. */
typedef struct BitSrc {
	int dim, bit;   /* which coordinate bit */
	int kind, idx;  /* its source */
} BitSrc;

static const GpuLayout *lay_from_srcs(LayoutCtx *lc, int64_t R, int64_t C, const BitSrc *s, int ns)
{
	int64_t dims[2] = {R, C};
	GpuLayout *L = lay_alloc(lc, 2, dims);
	bool *done = arena_alloc(lc->a, (size_t)L->nbits + 1);
	int reg = 0;
	for (int i = 0; i < ns; i++) {
		if (s[i].bit >= L->dbits[s[i].dim])
			continue;
		int b = L->dlo[s[i].dim] + s[i].bit;
		set_bit(L, b, s[i].kind, s[i].kind == LB_REG ? reg++ : s[i].idx);
		done[b] = true;
	}
	/* Every other bit: a register (repetitions), columns first. */
	for (int b = 0; b < L->nbits; b++)
		if (!done[b])
			set_bit(L, b, LB_REG, reg++);
	return lay_finish(lc, L);
}

/* The warps along N of a CTA: the warp bits above wm_bits, as many as N
 * has column bits above the 8-wide tile (the rest replicate). */
static int mma_wn_bits(int64_t N, int warpbits, int wm_bits)
{
	int nb = lay_pow2(N) ? lay_log2_ceil(N) - 3 : 0; /* lay_mma_wm_bits says why */
	int wn = warpbits - wm_bits;
	return wn < nb ? wn : nb;
}

const GpuLayout *lay_mma_c(LayoutCtx *lc, int64_t M, int64_t N, int wm_bits)
{
	int wn_bits = mma_wn_bits(N, lc->warpbits, wm_bits);
	BitSrc s[64];
	int n = 0;
	/* c0..c3: col = (lane % 4) * 2 + (0, 1), row = lane / 4 (+ 8 for c2, c3). */
	s[n++] = (BitSrc){1, 0, LB_REG, 0};
	s[n++] = (BitSrc){0, 3, LB_REG, 0};
	s[n++] = (BitSrc){1, 1, LB_LANE, 0};
	s[n++] = (BitSrc){1, 2, LB_LANE, 1};
	s[n++] = (BitSrc){0, 0, LB_LANE, 2};
	s[n++] = (BitSrc){0, 1, LB_LANE, 3};
	s[n++] = (BitSrc){0, 2, LB_LANE, 4};
	for (int w = 0; w < wm_bits; w++)
		s[n++] = (BitSrc){0, 4 + w, LB_WARP, w};
	for (int w = 0; w < wn_bits; w++)
		s[n++] = (BitSrc){1, 3 + w, LB_WARP, wm_bits + w};
	return lay_from_srcs(lc, M, N, s, n);
}

const GpuLayout *lay_mma_a(LayoutCtx *lc, int64_t M, int64_t K, int wm_bits)
{
	BitSrc s[64];
	int n = 0;
	/* a0..a7 (four .b32 of two halves): k = (lane % 4) * 2 + (0, 1) (+ 8 for
	 * a4..a7), row = lane / 4 (+ 8 for a2, a3, a6, a7). */
	s[n++] = (BitSrc){1, 0, LB_REG, 0};
	s[n++] = (BitSrc){0, 3, LB_REG, 0};
	s[n++] = (BitSrc){1, 3, LB_REG, 0};
	s[n++] = (BitSrc){1, 1, LB_LANE, 0};
	s[n++] = (BitSrc){1, 2, LB_LANE, 1};
	s[n++] = (BitSrc){0, 0, LB_LANE, 2};
	s[n++] = (BitSrc){0, 1, LB_LANE, 3};
	s[n++] = (BitSrc){0, 2, LB_LANE, 4};
	for (int w = 0; w < wm_bits; w++)
		s[n++] = (BitSrc){0, 4 + w, LB_WARP, w};
	return lay_from_srcs(lc, M, K, s, n);
}

const GpuLayout *lay_mma_b(LayoutCtx *lc, int64_t K, int64_t N, int wm_bits)
{
	int wn_bits = mma_wn_bits(N, lc->warpbits, wm_bits);
	BitSrc s[64];
	int n = 0;
	/* b0..b3 (two .b32): k = (lane % 4) * 2 + (0, 1) (+ 8 for b2, b3),
	 * col = lane / 4. */
	s[n++] = (BitSrc){0, 0, LB_REG, 0};
	s[n++] = (BitSrc){0, 3, LB_REG, 0};
	s[n++] = (BitSrc){0, 1, LB_LANE, 0};
	s[n++] = (BitSrc){0, 2, LB_LANE, 1};
	s[n++] = (BitSrc){1, 0, LB_LANE, 2};
	s[n++] = (BitSrc){1, 1, LB_LANE, 3};
	s[n++] = (BitSrc){1, 2, LB_LANE, 4};
	for (int w = 0; w < wn_bits; w++)
		s[n++] = (BitSrc){1, 3 + w, LB_WARP, wm_bits + w};
	return lay_from_srcs(lc, K, N, s, n);
}

/* wgmma m64nNk16 accumulators: warp w of a warpgroup holds rows 16w to
 * 16w + 15 of each 64-row tile, in the m16n8 C-fragment pattern repeated
 * over the 8-column tiles (d[4i + j]: column 8i + 2 * (lane % 4) + j % 2,
 * row lane / 4 + 8 * (j / 2)).  That is the C-fragment layout with every
 * warp bit along M: warpgroups take 64-row tiles in turn. */
const GpuLayout *lay_wgmma_c(LayoutCtx *lc, int64_t M, int64_t N)
{
	return lay_mma_c(lc, M, N, lc->warpbits);
}

bool lay_dot_is_wgmma(const Type *a, const Type *b, const Type *r, int warpbits)
{
	/* Whole warpgroups, each with at least one 64-row tile; operand rows
	 * of at least 32 bytes (a K of 16, an N of 16: swizzled layouts). */
	int64_t M = a->dims[0], N = r->dims[1];
	return lay_dot_is_mma(a, b, r) && warpbits >= 2 && M >= (INT64_C(16) << warpbits) && N >= 16;
}

bool lay_dot_is_mma(const Type *a, const Type *b, const Type *r)
{
	(void)b;
	if (!(a->dtype == DT_F16 || a->dtype == DT_BF16) || r->dtype != DT_F32)
		return false;
	/* K and N need not be powers of two: multiples of 16 run whole k-steps
	 * and 8-column tiles (wgmma m64nNk16 takes any N a multiple of 8), the
	 * padding of their layouts never computed (nvptx_dot.c).  M below 16
	 * (a decode step's few query rows) runs m16 tiles whose rows past M
	 * repeat the first ones and whose results for them are dropped: the
	 * C-fragment layout without its row bits past M (lay_from_srcs), so
	 * rows 8-15 have no registers, and below 8 rows lanes hold copies. */
	int64_t M = a->dims[0], K = a->dims[1], N = r->dims[1];
	return lay_pow2(M) && K >= 16 && K % 16 == 0 && ((lay_pow2(N) && N >= 8) || (N >= 16 && N % 16 == 0));
}

/* ---- queries ------------------------------------------------------------------------ */

void lay_reg_coord(const GpuLayout *L, int r, int64_t *coord)
{
	int64_t flat = 0;
	for (int i = 0; i < L->nregbits; i++)
		if (r >> i & 1)
			flat |= INT64_C(1) << L->regflat[i];
	for (int d = 0; d < L->rank; d++)
		coord[d] = flat >> L->dlo[d] & ((INT64_C(1) << L->dbits[d]) - 1);
}

int lay_reg_of(const GpuLayout *L, const int64_t *coord)
{
	int64_t flat = 0;
	for (int d = 0; d < L->rank; d++)
		flat |= coord[d] << L->dlo[d];
	int r = 0;
	for (int i = 0; i < L->nregbits; i++)
		if (flat >> L->regflat[i] & 1)
			r |= 1 << i;
	return r;
}

bool lay_same_threads(const GpuLayout *A, const GpuLayout *B)
{
	if (A->nbits != B->nbits || A->rank != B->rank)
		return false;
	for (int d = 0; d < A->rank; d++)
		if (A->dims[d] != B->dims[d])
			return false;
	for (int b = 0; b < A->nbits; b++) {
		if ((A->kind[b] == LB_REG) != (B->kind[b] == LB_REG))
			return false;
		if (A->kind[b] != LB_REG && (A->kind[b] != B->kind[b] || A->idx[b] != B->idx[b]))
			return false;
	}
	/* The lanes and warps that replicate in one must replicate in the other
	 * too (else some thread lacks what it needs). */
	return A->lane_used == B->lane_used && A->warp_used == B->warp_used;
}

int lay_contig(const GpuLayout *L)
{
	int k = 0;
	int last = L->dbits[L->rank - 1];
	while (k < L->nbits && k < last && L->kind[k] == LB_REG && L->idx[k] == k)
		k++;
	return 1 << k;
}

bool lay_replicated(const GpuLayout *L)
{
	return L->lane_used != 31u || L->warp_used != (1u << L->warpbits) - 1;
}

const char *lay_str(Arena *a, const GpuLayout *L)
{
	const char *s = "[";
	for (int d = 0; d < L->rank; d++)
		s = arena_printf(a, "%s%s%lld", s, d ? "," : "", (long long)L->dims[d]);
	s = arena_printf(a, "%s]:", s);
	for (int b = 0; b < L->nbits; b++)
		s = arena_printf(a, "%s %c%d", s, "rlw"[L->kind[b]], L->idx[b]);
	return s;
}

/* ---- assignment ------------------------------------------------------------------------ */

typedef struct Assign {
	LayoutPlan *P;     /* the plan being filled */
	const IrKernel *k; /* the kernel */
	Arena *a;          /* its arena */
	bool wgmma;        /* dots that fit take wgmma layouts */
	bool pref_changed; /* a loop carry's preferred layout changed in this walk */
} Assign;

static bool is_tensor(const Value *v)
{
	return v->type->kind == TY_VALUE && v->type->rank > 0;
}

static const GpuLayout *fixed(Assign *A, const Value *v)
{
	return is_tensor(v) && !A->P->lazy[v->id] ? A->P->of[v->id] : NULL;
}

static void set_fixed(Assign *A, const Value *v, const GpuLayout *L)
{
	A->P->lazy[v->id] = false;
	A->P->of[v->id] = L;
}

static void set_lazy(Assign *A, const Value *v)
{
	A->P->lazy[v->id] = true;
	A->P->of[v->id] = NULL;
}

static const GpuLayout *or_default(Assign *A, const GpuLayout *L, const Value *v)
{
	return L ? L : lay_default(A->P->lc, v->type);
}

static bool same_shape(const Type *a, const Type *b)
{
	if (a->rank != b->rank)
		return false;
	for (int d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

static void assign_region(Assign *A, const Region *r);

/* Carried tensors of a loop: the init's layout, else what the body
 * yielded last time (pref), else the default. */
static void assign_carried(Assign *A, Value *const *inits, Value *const *args, Value *const *outs, int n)
{
	for (int j = 0; j < n; j++) {
		if (!is_tensor(inits[j]))
			continue;
		const GpuLayout *L = fixed(A, inits[j]);
		if (!L)
			L = or_default(A, A->P->pref[outs[j]->id], outs[j]);
		set_fixed(A, args[j], L);
		set_fixed(A, outs[j], L);
	}
}

/* The layout a carry should take from the value y its body yields.  An
 * elementwise y took its first fixed operand's layout, which may be the
 * carry's own first guess (`m = maximum(m, max(s, axis = 1))`): then the
 * layout of its first operand computed in the body (a reduction's, a
 * dot's), so the carry follows the body instead of forcing a conversion of
 * that operand every iteration.  Region arguments (no def) are carries. */
static const GpuLayout *yield_pref(Assign *A, const Value *y)
{
	const Inst *d = y->def;
	const GpuLayout *L = fixed(A, y);
	if (!L || !d || !(op_info[d->op].flags & F_ELEMWISE))
		return L;
	bool from_carry = false;
	for (int j = 0; j < d->nargs; j++)
		from_carry |= !d->args[j]->def && fixed(A, d->args[j]) == L;
	for (int j = 0; j < d->nargs && from_carry; j++) {
		const Value *o = d->args[j];
		if (o->def && fixed(A, o) && same_shape(o->type, y->type))
			return fixed(A, o);
	}
	return L;
}

static void record_pref(Assign *A, Value *const *inits, Value *const *outs, const Inst *yield, int n)
{
	for (int j = 0; j < n; j++) {
		if (!is_tensor(inits[j]) || fixed(A, inits[j]))
			continue;
		const GpuLayout *L = yield_pref(A, yield->args[j]);
		if (L && A->P->pref[outs[j]->id] != L) {
			A->P->pref[outs[j]->id] = L;
			A->pref_changed = true;
		}
	}
}

/* for, while, if: their regions, and the layouts of the tensors they carry
 * and yield. False for any other op. */
static bool assign_control(Assign *A, const Inst *i)
{
	switch (i->op) {
	case IR_FOR: {
		int n = i->nargs - 3;
		const Region *body = i->regions[0];
		assign_carried(A, i->args + 3, body->args + 1, i->results, n);
		assign_region(A, body);
		record_pref(A, i->args + 3, i->results, body->last, n);
		return true;
	}
	case IR_WHILE: {
		int n = i->nargs;
		assign_carried(A, i->args, i->regions[0]->args, i->results, n);
		assign_carried(A, i->args, i->regions[1]->args, i->results, n);
		assign_region(A, i->regions[0]);
		assign_region(A, i->regions[1]);
		record_pref(A, i->args, i->results, i->regions[1]->last, n);
		return true;
	}
	case IR_IF:
		assign_region(A, i->regions[0]);
		assign_region(A, i->regions[1]);
		for (int j = 0; j < i->nresults; j++) {
			if (!is_tensor(i->results[j]))
				continue;
			const GpuLayout *L = fixed(A, i->regions[0]->last->args[j]);
			if (!L)
				L = fixed(A, i->regions[1]->last->args[j]);
			set_fixed(A, i->results[j], or_default(A, L, i->results[j]));
		}
		return true;
	default:
		return false;
	}
}

/* A dot's result: the wgmma or mma.sync accumulator layout where the dot
 * takes the tensor cores, else the default; and which operands are loads
 * the dot may read itself (single use, same region). */
static void assign_dot(Assign *A, const Inst *i)
{
	LayoutPlan *P = A->P;
	LayoutCtx *lc = P->lc;
	const Value *res = i->results[0];
	const Type *at = i->args[0]->type, *bt = i->args[1]->type, *rt = res->type;
	P->mma[res->id] = lay_dot_is_mma(at, bt, rt);
	P->wgmma[res->id] = A->wgmma && lay_dot_is_wgmma(at, bt, rt, lc->warpbits);
	if (P->wgmma[res->id])
		set_fixed(A, res, lay_wgmma_c(lc, rt->dims[0], rt->dims[1]));
	else if (P->mma[res->id])
		set_fixed(A, res, lay_mma_c(lc, rt->dims[0], rt->dims[1],
		                            lay_mma_wm_bits(rt->dims[0], rt->dims[1], lc->warpbits)));
	else
		set_fixed(A, res, lay_default(lc, rt));
	for (int k = 0; k < 2; k++) {
		const Value *o = i->args[k];
		const Inst *ld = nv_dot_operand_load(P, o, i);
		if (ld)
			P->dot_of[ld->results[0]->id] = i;
		/* (The pipelined loops copy loads of the operand's own shape.) */
		*(k == 0 ? &P->dot_a[res->id] : &P->dot_b[res->id]) = ld && ld->results[0] == o ? ld : NULL;
	}
	/* B = transpose(x), x a load: the dot copies x as it lies (K-major). */
	const Inst *xt = nv_dot_trans_b_load(P, i);
	if (xt)
		P->dot_of[xt->results[0]->id] = i;
}

/* An elementwise op takes the layout of an operand: a tensor-core dot's
 * accumulator layout first, so that `acc + dot(a, b)` keeps acc in it (and
 * the dot accumulates in place); else the first fixed one; else lazy. */
static void assign_elementwise(Assign *A, const Inst *i)
{
	const Value *res = i->results[0];
	for (int j = 0; j < i->nargs; j++) {
		const Value *d = i->args[j];
		if (d->def && d->def->op == IR_DOT && A->P->mma[d->id] && fixed(A, d) &&
		    same_shape(d->type, res->type)) {
			set_fixed(A, res, fixed(A, d));
			return;
		}
	}
	for (int j = 0; j < i->nargs; j++)
		if (fixed(A, i->args[j])) {
			set_fixed(A, res, fixed(A, i->args[j]));
			return;
		}
	set_lazy(A, res);
}

static void assign_inst(Assign *A, const Inst *i)
{
	LayoutPlan *P = A->P;
	LayoutCtx *lc = P->lc;
	if (assign_control(A, i) || i->nresults != 1 || !is_tensor(i->results[0]))
		return;
	const Value *res = i->results[0];
	const Value *x = i->nargs ? i->args[0] : NULL;
	switch (i->op) {
	case IR_LOAD:
		set_fixed(A, res, or_default(A, P->hint[res->id], res));
		return;
	case IR_ATOMIC: {
		/* The value operand: the first extra. */
		set_fixed(A, res, or_default(A, fixed(A, i->args[ir_access_extras(i)]), res));
		return;
	}
	case IR_CONST: case IR_IOTA: case IR_BROADCAST:
		set_lazy(A, res);
		return;
	case IR_DOT:
		assign_dot(A, i);
		return;
	case IR_REDUCE_SUM: case IR_REDUCE_MAX: case IR_REDUCE_MIN: case IR_REDUCE_PROD: case IR_ARGMAX: case IR_ARGMIN:
		set_fixed(A, res, lay_slice(lc, or_default(A, fixed(A, x), x), (int)i->ival));
		return;
	case IR_CUMSUM: {
		/* The operand's layout where the scan can take it (no copy). */
		const GpuLayout *Lx = fixed(A, x);
		int axis = (int)i->ival;
		set_fixed(A, res, Lx && lay_scan_ok(Lx, axis) ? Lx : lay_scan(lc, res->type->rank, res->type->dims, axis));
		return;
	}
	case IR_TRANSPOSE:
		if (fixed(A, x))
			set_fixed(A, res, lay_transpose(lc, fixed(A, x), i->perm));
		else
			set_lazy(A, res);
		return;
	case IR_RESHAPE:
		if (fixed(A, x)) {
			const GpuLayout *L = lay_reshape(lc, fixed(A, x), res->type->rank, res->type->dims);
			set_fixed(A, res, or_default(A, L, res));
		} else {
			set_lazy(A, res);
		}
		return;
	default:
		break;
	}
	if (op_info[i->op].flags & F_ELEMWISE)
		assign_elementwise(A, i);
	else /* anything else producing a tensor: the default layout */
		set_fixed(A, res, lay_default(lc, res->type));
}

static void assign_region(Assign *A, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next)
		assign_inst(A, i);
}

static void count_uses(LayoutPlan *P, const Region *r)
{
	for (const Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nargs; j++)
			P->nuses[i->args[j]->id]++;
		for (int j = 0; j < i->nregions; j++)
			count_uses(P, i->regions[j]);
	}
}

/* Loads whose only use is (through single-use unary elementwise ops) a
 * broadcast into an elementwise op: load them in the projection of that
 * op's layout, so the broadcast moves no data. */
static bool hint_region(Assign *A, const Region *r)
{
	LayoutPlan *P = A->P;
	bool changed = false;
	for (const Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nregions; j++)
			changed |= hint_region(A, i->regions[j]);
		if (!(op_info[i->op].flags & F_ELEMWISE) || i->nresults != 1 || !fixed(A, i->results[0]))
			continue;
		const GpuLayout *R = fixed(A, i->results[0]);
		for (int j = 0; j < i->nargs; j++) {
			const Value *b = i->args[j];
			if (!b->def || b->def->op != IR_BROADCAST || !is_tensor(b->def->args[0]))
				continue;
			const Value *s = b->def->args[0];
			const GpuLayout *want = lay_project(P->lc, R, s->type->rank, s->type->dims);
			while (s->def && P->nuses[s->id] == 1 && s->def->nargs == 1 &&
			       (op_info[s->def->op].flags & F_ELEMWISE))
				s = s->def->args[0];
			if (s->def && s->def->op == IR_LOAD && P->nuses[s->id] == 1 && P->hint[s->id] != want) {
				P->hint[s->id] = want;
				changed = true;
			}
		}
	}
	return changed;
}

/* Whether region inner lies inside a loop that lies inside region outer. */
static bool in_loop_below(const Region *inner, const Region *outer)
{
	bool loop = false;
	for (const Region *r = inner; r; r = r->owner ? r->owner->parent : NULL) {
		if (r == outer)
			return loop;
		loop |= r->owner && (r->owner->op == IR_FOR || r->owner->op == IR_WHILE);
	}
	return false;
}

/* A 16-bit load made before a loop and used only as A of wgmma dots in
 * loops below it (attention's q; twice when split-loops made two loops):
 * load it in the dots' accumulator layout, which is wgmma's register-A
 * fragment layout (cuda/nvptx_wgmma_chain.c), so the dots read it from
 * registers every iteration instead of staging it.  as_a counts, per
 * value, the dots that could read it so. */
static void count_wg_a(Assign *A, const Region *r, int *as_a)
{
	LayoutPlan *P = A->P;
	for (const Inst *i = r->first; i; i = i->next) {
		for (int j = 0; j < i->nregions; j++)
			count_wg_a(A, i->regions[j], as_a);
		if (i->op != IR_DOT || i->nargs != 2)
			continue;
		const Value *x = i->args[0];
		const Type *at = x->type, *rt = i->results[0]->type;
		if (!A->wgmma || !lay_dot_is_wgmma(at, i->args[1]->type, rt, P->lc->warpbits) || !x->def ||
		    x->def->op != IR_LOAD || i->args[1] == x || !in_loop_below(i->parent, x->def->parent))
			continue;
		if (++as_a[x->id] == P->nuses[x->id])
			P->hint[x->id] = lay_wgmma_c(P->lc, at->dims[0], at->dims[1]);
	}
}

static void hint_wg_a(Assign *A, const IrKernel *k)
{
	int *as_a = arena_alloc(A->a, ((size_t)k->nvalues + 1) * sizeof *as_a);
	count_wg_a(A, k->body, as_a);
}

LayoutPlan *gpu_assign_layouts(Arena *a, const IrKernel *k, int warpbits, bool wgmma)
{
	LayoutPlan *P = arena_alloc(a, sizeof *P);
	size_t n = (size_t)k->nvalues + 1;
	P->lc = arena_alloc(a, sizeof *P->lc);
	P->lc->a = a;
	P->lc->warpbits = warpbits;
	P->of = arena_alloc(a, n * sizeof *P->of);
	P->lazy = arena_alloc(a, n * sizeof *P->lazy);
	P->hint = arena_alloc(a, n * sizeof *P->hint);
	P->pref = arena_alloc(a, n * sizeof *P->pref);
	P->nuses = arena_alloc(a, n * sizeof *P->nuses);
	P->dot_a = arena_alloc(a, n * sizeof *P->dot_a);
	P->dot_b = arena_alloc(a, n * sizeof *P->dot_b);
	P->mma = arena_alloc(a, n * sizeof *P->mma);
	P->wgmma = arena_alloc(a, n * sizeof *P->wgmma);
	P->dot_of = arena_alloc(a, n * sizeof *P->dot_of);
	count_uses(P, k->body);
	Assign A = {P, k, a, wgmma, false};
	hint_wg_a(&A, k);
	/* A first walk finds the broadcast hints and the loop preferences; the
	 * last one is final. */
	assign_region(&A, k->body);
	for (int round = 0; round < 3; round++) {
		bool changed = hint_region(&A, k->body);
		A.pref_changed = false;
		assign_region(&A, k->body);
		if (!changed && !A.pref_changed)
			break;
	}
	return P;
}
