/* types.h - the types of the typed IR, the dtype promotion lattice (JAX's)
 * and NumPy broadcasting.  lang-spec §4 is the prose for all of this. */
#ifndef PKC_TYPES_H
#define PKC_TYPES_H

#include "dtype.h"
#include "pkc.h"

typedef enum TypeKind {
	TY_VALUE, /* a block value: dtype + static shape (rank 0 = scalar) */
	TY_REF    /* a Ref: a mutable view of memory (an operand block, a whole array, or scratch) */
} TypeKind;

typedef enum RefSpace {
	SPACE_GLOBAL,  /* device/host memory: an operand (its block view or the whole array) */
	SPACE_SCRATCH, /* on-chip, per-program scratch buffer */
	SPACE_LOCAL    /* a block value materialised in per-program memory by tiling (pass tile-host) */
} RefSpace;

/* A dimension extent that is only known at launch time. */
#define DIM_DYNAMIC (-1)

typedef struct Type {
	TypeKind kind;     /* value or Ref */
	DType dtype;       /* element type */
	int rank;          /* number of dimensions (0 = scalar) */
	int64_t *dims;     /* extents; a TY_REF dim may be DIM_DYNAMIC */
	const char **syms; /* TY_REF only, may be NULL: size-symbol name of each DIM_DYNAMIC dim */
	RefSpace space;    /* TY_REF only */
} Type;

/* Constructors allocate in the arena; types are compared with type_equal. */
Type *type_scalar(Arena *a, DType dt);
Type *type_tensor(Arena *a, DType dt, int rank, const int64_t *dims);
Type *type_ref(Arena *a, DType dt, int rank, const int64_t *dims, const char *const *syms, RefSpace space);
Type *type_with_dtype(Arena *a, const Type *t, DType dt); /* same shape, other dtype */
bool type_equal(const Type *a, const Type *b);
bool type_same_shape(const Type *a, const Type *b);

/* Checked arithmetic for element counts, byte sizes and offsets (the one
 * place for it): false, with *out unspecified, when the exact result does
 * not fit in int64. */
static inline bool ck_mul(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool ck_add(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
/* Python's a // b (b != 0): the quotient rounded toward minus infinity; b
 * == -1 negates in two's complement, as the generated code does. */
static inline int64_t floor_div(int64_t a, int64_t b)
{
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
/* The product of n dims (each >= 0), false if it does not fit in int64. */
bool shape_numel(int n, const int64_t *dims, int64_t *out);
/* Bytes of one element in memory (a bool takes a byte). */
int dtype_bytes(DType dt);
/* Whether t fits in memory: its element count times its element size, its
 * dynamic dims counted as 1, is below 2^63 (§4.2).  Sema reports every
 * type that does not and the verifier checks it, so later phases may
 * multiply dims and sizes freely. */
bool type_fits(const Type *t);
/* The product of t's static dims: -1 if any is dynamic, INT64_MAX if it
 * overflows (only in a program sema rejects, !type_fits). */
int64_t type_numel(const Type *t);
/* "f32[16,8]", "i64", "ref<f32[n,128]>", "scratch<f32[64]>" - arena string. */
const char *type_str(Arena *a, const Type *t);
const char *type_shape_str(Arena *a, const Type *t); /* "f32[n,128]" also for a Ref: what a message names */
void type_fprint(FILE *out, const Type *t);     /* the same text as type_str, to a stream */

/* dtype classes */
bool dtype_is_float(DType dt);
bool dtype_is_int(DType dt);       /* signed or unsigned integer (not bool) */
bool dtype_is_signed(DType dt);
bool dtype_is_unsigned(DType dt);
int dtype_bits(DType dt);          /* 1 for bool */
DType dtype_from_name(const char *s, size_t n); /* DT_NONE if not a dtype name */
const char *dtype_str(DType dt);   /* "f32"; "none" for DT_NONE (static string) */
/* The dtype in which a sum or product with result dtype dt accumulates
 * (sum, cumsum, dot; lang-spec §7.11, §7.13): f32 for f16 and bf16, which
 * are rounded to dt once at the end, as JAX does; dt itself otherwise.
 * Sema widens to it (casts around the op); the verifier checks that no
 * reduce_sum, cumsum or dot is left in a narrower dtype. */
DType dtype_accumulator(DType dt);

/* JAX type promotion.  A weak operand is a Python-style literal (or a
 * const without a dtype): it takes the other operand's dtype when that is
 * of the same or a higher kind (bool < int < float).  weak_out says whether
 * the result is still weak.  Returns DT_NONE for no valid promotion. */
DType promote_dtypes(DType a, bool a_weak, DType b, bool b_weak, bool *weak_out);

/* NumPy broadcasting of two static shapes.  Returns false (and leaves out
 * unspecified) when they are incompatible. */
bool broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rout, int64_t *out);

#endif
