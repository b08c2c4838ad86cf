/* types.c - IR types, dtype classes, JAX type promotion and NumPy
 * broadcasting (lang-spec §4). */
#include "types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dtype tables ------------------------------------------------------ */

/* Spelling of each dtype (dtype_str; the AST printer uses it too). */
static const char *const dt_name[DT_COUNT] = {
	[DT_NONE] = "none",
#define X(id, name) [DT_##id] = name,
	PK_DTYPES(X)
#undef X
};

/* Per-dtype class bits and width, indexed by DType. */
enum { C_BOOL = 1, C_SINT = 2, C_UINT = 4, C_FLOAT = 8 };
static const struct {
	unsigned char cls; /* C_* class */
	unsigned char bits; /* storage width in bits (1 for bool) */
} dt_info[DT_COUNT] = {
	[DT_BOOL] = {C_BOOL, 1},
	[DT_I8] = {C_SINT, 8},   [DT_I16] = {C_SINT, 16},  [DT_I32] = {C_SINT, 32},  [DT_I64] = {C_SINT, 64},
	[DT_U8] = {C_UINT, 8},   [DT_U16] = {C_UINT, 16},  [DT_U32] = {C_UINT, 32},  [DT_U64] = {C_UINT, 64},
	[DT_F16] = {C_FLOAT, 16}, [DT_BF16] = {C_FLOAT, 16}, [DT_F32] = {C_FLOAT, 32}, [DT_F64] = {C_FLOAT, 64},
};

static bool dt_valid(DType dt) { return dt > DT_NONE && dt < DT_COUNT; }
static unsigned dt_cls(DType dt) { return dt_valid(dt) ? dt_info[dt].cls : 0; }

bool dtype_is_float(DType dt) { return dt_cls(dt) & C_FLOAT; }
bool dtype_is_int(DType dt) { return dt_cls(dt) & (C_SINT | C_UINT); }
bool dtype_is_signed(DType dt) { return dt_cls(dt) & C_SINT; }
bool dtype_is_unsigned(DType dt) { return dt_cls(dt) & C_UINT; }
int dtype_bits(DType dt) { return dt_valid(dt) ? dt_info[dt].bits : 0; }
DType dtype_accumulator(DType dt) { return dt == DT_F16 || dt == DT_BF16 ? DT_F32 : dt; }

const char *dtype_str(DType dt)
{
	return (dt >= DT_NONE && dt < DT_COUNT) ? dt_name[dt] : "?";
}

DType dtype_from_name(const char *s, size_t n)
{
	for (int dt = DT_NONE + 1; dt < DT_COUNT; dt++)
		if (strlen(dt_name[dt]) == n && memcmp(dt_name[dt], s, n) == 0)
			return (DType)dt;
	return DT_NONE;
}

/* ---- type constructors -------------------------------------------------- */

static int64_t *dims_copy(Arena *a, int rank, const int64_t *dims)
{
	if (rank <= 0)
		return NULL;
	int64_t *d = arena_alloc(a, (size_t)rank * sizeof *d);
	if (dims)
		memcpy(d, dims, (size_t)rank * sizeof *d);
	return d;
}

Type *type_scalar(Arena *a, DType dt)
{
	return type_tensor(a, dt, 0, NULL);
}

Type *type_tensor(Arena *a, DType dt, int rank, const int64_t *dims)
{
	Type *t = arena_alloc(a, sizeof *t);
	t->kind = TY_VALUE;
	t->dtype = dt;
	t->rank = rank;
	t->dims = dims_copy(a, rank, dims);
	return t;
}

Type *type_ref(Arena *a, DType dt, int rank, const int64_t *dims, const char *const *syms, RefSpace space)
{
	Type *t = type_tensor(a, dt, rank, dims);
	t->kind = TY_REF;
	t->space = space;
	if (syms && rank > 0) {
		t->syms = arena_alloc(a, (size_t)rank * sizeof *t->syms);
		memcpy(t->syms, syms, (size_t)rank * sizeof *t->syms);
	}
	return t;
}

Type *type_with_dtype(Arena *a, const Type *t, DType dt)
{
	Type *n = arena_alloc(a, sizeof *n);
	*n = *t;
	n->dtype = dt;
	n->dims = dims_copy(a, t->rank, t->dims);
	if (t->syms && t->rank > 0) {
		n->syms = arena_alloc(a, (size_t)t->rank * sizeof *n->syms);
		memcpy(n->syms, t->syms, (size_t)t->rank * sizeof *n->syms);
	}
	return n;
}

/* The size symbol of dim i, or NULL. */
static const char *dim_sym(const Type *t, int i)
{
	return t->syms ? t->syms[i] : NULL;
}

bool type_same_shape(const Type *a, const Type *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++) {
		if (a->dims[i] != b->dims[i])
			return false;
		/* Two dynamic dims are the same when their size symbols agree (or
		 * one of them is anonymous: nothing says they differ). */
		if (a->dims[i] == DIM_DYNAMIC) {
			const char *sa = dim_sym(a, i), *sb = dim_sym(b, i);
			if (sa && sb && strcmp(sa, sb) != 0)
				return false;
		}
	}
	return true;
}

bool type_equal(const Type *a, const Type *b)
{
	if (a == b)
		return true;
	if (!a || !b || a->kind != b->kind || a->dtype != b->dtype)
		return false;
	if (a->kind == TY_REF && a->space != b->space)
		return false;
	return type_same_shape(a, b);
}

bool shape_numel(int n, const int64_t *dims, int64_t *out)
{
	int64_t r = 1;
	for (int i = 0; i < n; i++)
		if (!ck_mul(r, dims[i], &r))
			return false;
	*out = r;
	return true;
}

int dtype_bytes(DType dt)
{
	return dt == DT_BOOL ? 1 : dtype_bits(dt) / 8;
}

bool type_fits(const Type *t)
{
	int64_t n = dtype_bytes(t->dtype);
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] != DIM_DYNAMIC && !ck_mul(n, t->dims[i], &n))
			return false;
	return true;
}

int64_t type_numel(const Type *t)
{
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] < 0)
			return -1;
	int64_t n;
	return shape_numel(t->rank, t->dims, &n) ? n : INT64_MAX;
}

/* ---- type text ---------------------------------------------------------- */

/* Prefix that wraps a Ref type, per memory space. */
static const char *const space_prefix[] = {
	[SPACE_GLOBAL] = "ref<",
	[SPACE_SCRATCH] = "scratch<",
	[SPACE_LOCAL] = "local<",
};

static void fmt_type(StrBuf *b, const Type *t)
{
	if (!t) {
		strbuf_puts(b, "<null>");
		return;
	}
	bool ref = t->kind == TY_REF;
	if (ref)
		strbuf_puts(b, (unsigned)t->space < sizeof space_prefix / sizeof *space_prefix
		                    ? space_prefix[t->space] : "ref?<");
	strbuf_puts(b, dtype_str(t->dtype));
	if (t->rank > 0) {
		strbuf_puts(b, "[");
		for (int i = 0; i < t->rank; i++) {
			char num[24];
			const char *s = num;
			if (i)
				strbuf_puts(b, ",");
			if (t->dims[i] >= 0)
				snprintf(num, sizeof num, "%lld", (long long)t->dims[i]);
			else
				s = dim_sym(t, i) ? dim_sym(t, i) : "?";
			strbuf_puts(b, s);
		}
		strbuf_puts(b, "]");
	}
	if (ref)
		strbuf_puts(b, ">");
}

const char *type_str(Arena *a, const Type *t)
{
	StrBuf b = {0};
	fmt_type(&b, t);
	char *s = arena_strndup(a, b.data, b.len);
	free(b.data);
	return s;
}

const char *type_shape_str(Arena *a, const Type *t)
{
	Type v = *t;
	v.kind = TY_VALUE;
	return type_str(a, &v);
}

void type_fprint(FILE *out, const Type *t)
{
	StrBuf b = {0};
	fmt_type(&b, t);
	fputs(b.data, out);
	free(b.data);
}

/* ---- JAX type promotion ------------------------------------------------- */

/* The promotion lattice of jax._src.dtypes (jax_numpy_dtype_promotion =
 * 'standard'), restricted to our dtypes.  Nodes are the DTypes plus the two
 * weak nodes i* (a weakly typed int) and f* (a weakly typed float):
 *
 *   bool -> i* -> u8 -> u16 -> u32 -> u64 -> f* -> f16 -> f32 -> f64
 *               \-> i8 -> i16 -> i32 -> i64 -/   \-> bf16 -/
 *   with u8 -> i16, u16 -> i32, u32 -> i64.
 *
 * promote(a, b) is the least upper bound.  Edges are listed below; the
 * upward closure is computed from them, so the table is all there is. */
enum { N_WINT = DT_COUNT, N_WFLOAT, N_COUNT };

static const unsigned char lattice_succ[N_COUNT][3] = { /* 0 (DT_NONE) ends a list */
	[DT_BOOL] = {N_WINT},
	[N_WINT] = {DT_U8, DT_I8},
	[DT_U8] = {DT_I16, DT_U16},
	[DT_U16] = {DT_I32, DT_U32},
	[DT_U32] = {DT_I64, DT_U64},
	[DT_U64] = {N_WFLOAT},
	[DT_I8] = {DT_I16},
	[DT_I16] = {DT_I32},
	[DT_I32] = {DT_I64},
	[DT_I64] = {N_WFLOAT},
	[N_WFLOAT] = {DT_F16, DT_BF16},
	[DT_F16] = {DT_F32},
	[DT_BF16] = {DT_F32},
	[DT_F32] = {DT_F64},
	[DT_F64] = {0},
};

/* Bit set of the nodes >= n (n included), from the edges. */
static uint32_t lattice_closure(int n)
{
	uint32_t s = 1u << n;
	for (int i = 0; i < 3 && lattice_succ[n][i]; i++)
		s |= lattice_closure(lattice_succ[n][i]);
	return s;
}

/* The same, computed once per node (promotion runs for every operator
 * sema checks). */
static uint32_t lattice_up(int n)
{
	static uint32_t up[N_COUNT]; /* 0 = not computed yet (every set holds its node) */
	if (!up[n])
		up[n] = lattice_closure(n);
	return up[n];
}

/* Least upper bound of two nodes: the one upper bound below all others. */
static int lattice_lub(int a, int b)
{
	uint32_t common = lattice_up(a) & lattice_up(b);
	for (int n = DT_NONE + 1; n < N_COUNT; n++)
		if ((common >> n & 1) && lattice_up(n) == common)
			return n;
	return DT_NONE; /* unreachable: the graph is a lattice */
}

/* Where an operand joins the lattice.  JAX has no weak bool (Python bools
 * are strongly typed), so a "weak" bool is simply bool. */
static int lattice_node(DType dt, bool weak)
{
	if (weak && dtype_is_int(dt))
		return N_WINT;
	if (weak && dtype_is_float(dt))
		return N_WFLOAT;
	return dt;
}

/* Follows jax.numpy.promote_types / _lattice_result_type exactly:
 *  - both weak: the LUB of the concrete dtypes, still weak (weak i32 +
 *    weak f32 = weak f32);
 *  - otherwise the LUB of the nodes; the result is weak exactly when that
 *    LUB is a weak node.  So weak int + u8 = u8 (strong), but bool + weak
 *    int = weak int and i32 + weak float = weak float, as in JAX (the
 *    brief's "weak only if both are weak" is a simplification of this).
 * A weak node is materialised with the weak operand's own dtype (a literal
 * is i32 or f32 - JAX's defaults with x64 off, lang-spec/README.md §4.7).
 * The one LUB with no weak operand to take the dtype from is
 * i64 + u64 = f*: JAX with x64 gives a weak float64, and so do we (f64,
 * weak) - the only float wide enough to be a sensible answer. */
DType promote_dtypes(DType a, bool a_weak, DType b, bool b_weak, bool *weak_out)
{
	bool dummy;
	if (!weak_out)
		weak_out = &dummy;
	*weak_out = false;
	if (!dt_valid(a) || !dt_valid(b))
		return DT_NONE;
	a_weak = a_weak && a != DT_BOOL;
	b_weak = b_weak && b != DT_BOOL;

	if (a_weak && b_weak) {
		int n = lattice_lub(a, b);
		*weak_out = true;
		return n == N_WFLOAT ? DT_F64 : (DType)n;
	}
	int n = lattice_lub(lattice_node(a, a_weak), lattice_node(b, b_weak));
	if (n < DT_COUNT)
		return (DType)n;
	*weak_out = true;
	/* The weak operand of the LUB's kind supplies the dtype. */
	bool want_float = n == N_WFLOAT;
	if (a_weak && dtype_is_float(a) == want_float)
		return a;
	if (b_weak && dtype_is_float(b) == want_float)
		return b;
	return want_float ? DT_F64 : DT_I32; /* i64 + u64 (i* cannot arise here) */
}

/* ---- broadcasting -------------------------------------------------------- */

bool broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rout, int64_t *out)
{
	int r = ra > rb ? ra : rb;
	/* Walk from the trailing dim: out[r-1-i] is never an a[]/b[] entry
	 * still to be read, so out may alias either input. */
	for (int i = 0; i < r; i++) {
		int64_t da = i < ra ? a[ra - 1 - i] : 1;
		int64_t db = i < rb ? b[rb - 1 - i] : 1;
		int64_t d;
		if (da == db || db == 1)
			d = da;
		else if (da == 1)
			d = db;
		else
			return false;
		out[r - 1 - i] = d;
	}
	*rout = r;
	return true;
}
