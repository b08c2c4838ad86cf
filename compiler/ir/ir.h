/* ir.h - the typed, shape-checked SSA IR.  sema builds it from the AST;
 * passes rewrite it; backends read it.  Control flow is structured: an op
 * (for/if/while) owns regions, each region is a straight list of
 * instructions ending in a yield.  Opcodes live in ops.def.
 *
 * Invariants that hold after sema (checked by ir_verify):
 *  - every value has a Type; every operand is defined before use and is
 *    visible (defined in the same region or an enclosing one);
 *  - elementwise operands have exactly the result's shape (broadcasts are
 *    explicit BROADCAST ops) and promoted dtypes (casts are explicit);
 *  - value shapes are static; only Ref dims may be DIM_DYNAMIC;
 *  - reduce_sum, reduce_prod, cumsum and dot run in their accumulator dtype
 *    (dtype_accumulator: never f16/bf16; sema casts around them);
 *  - every region ends with exactly one YIELD whose operands match the
 *    owning op's results (the grid, requires and index-map regions yield
 *    their lists). */
#ifndef PKC_IR_H
#define PKC_IR_H

#include "types.h"

typedef enum Op {
#define X(id, name, mina, maxa, nres, flags) IR_##id,
#include "ops.def"
#undef X
	IR_OP_COUNT
} Op;

typedef struct OpInfo {
	const char *name; /* spelling in --emit=ir */
	int min_args;     /* fewest operands */
	int max_args;     /* most operands, -1 = any */
	int nresults;     /* results, -1 = op-defined */
	unsigned flags;   /* F_* from ops.def */
} OpInfo;

extern const OpInfo op_info[IR_OP_COUNT];

typedef struct Inst Inst;
typedef struct Region Region;

/* An SSA value: the result of an instruction or an argument of a region. */
typedef struct Value {
	int id;           /* number for printing, unique within a kernel */
	Type *type;       /* its type */
	Inst *def;        /* defining instruction; NULL for a region argument */
	Region *region;   /* for a region argument: its region */
	int index;        /* result index in def, or argument index in region */
	const char *name; /* source name hint for printing (%x), may be NULL */
} Value;

/* How one dimension of a Ref is indexed by a load/store/atomic. */
typedef enum IndexKind {
	IDX_FULL,   /* the whole dimension (':' or '...'); no operand */
	IDX_POINT,  /* a scalar integer index; the dimension is dropped; one operand */
	IDX_SLICE,  /* ds(start, size) or lo:hi; size is static; one operand (start) */
	IDX_GATHER  /* an integer tensor of indices; one operand */
} IndexKind;

typedef struct Indexer {
	IndexKind kind; /* which form */
	int64_t size;   /* IDX_SLICE: static number of elements */
	bool masked;    /* set by lower-refs: lanes past the Ref's extent in this dim are masked
	                   off (loads read `other`, or 0 without one; stores are dropped) */
} Indexer;

typedef enum AtomicKind {
	ATOMIC_ADD, ATOMIC_MAX, ATOMIC_MIN, ATOMIC_AND, ATOMIC_OR,
	ATOMIC_XOR, ATOMIC_XCHG, ATOMIC_CAS, ATOMIC_KIND_COUNT
} AtomicKind;
extern const char *const atomic_kind_names[ATOMIC_KIND_COUNT];

/* A dot's precision= (lax.Precision; DOT's ival): what mosaic-tpu's
 * tpu.matmul is asked for.  Host and CUDA compute f32 dots in f32 at each. */
typedef enum DotPrecision { PREC_DEFAULT, PREC_HIGH, PREC_HIGHEST, PREC_COUNT } DotPrecision;
extern const char *const dot_precision_names[PREC_COUNT];

struct Inst {
	Op op;              /* opcode */
	Loc loc;            /* source construct it came from */
	Value **args;       /* operands */
	int nargs;
	Value **results;    /* results */
	int nresults;
	Region **regions;   /* nested regions (for/if/while) */
	int nregions;
	/* attributes; which are meaningful depends on op */
	int64_t ival;       /* CONST int/bool value, axis (reductions, CUMSUM, CONCAT), IOTA dim, AtomicKind,
	                       DOT's DotPrecision */
	double fval;        /* CONST float value */
	int64_t *perm;      /* TRANSPOSE permutation; SLICE start per dim */
	int nperm;
	const char *str;    /* DEBUG_PRINT format, DEBUG_CHECK message (arena) */
	Indexer *idx;       /* LOAD/STORE/ATOMIC: one indexer per Ref dimension */
	int nidx;
	bool has_mask;      /* LOAD/STORE/ATOMIC: a mask operand follows */
	bool has_other;     /* LOAD: an 'other' operand follows the mask (or the indices) */
	bool reassoc;       /* FOR made by tile-host for a tensor op: its float reductions may be
	                       reassociated (vectorised); loops the user wrote keep their order */
	Inst *prev, *next;  /* siblings in the region */
	Region *parent;     /* the region holding this instruction */
};

struct Region {
	Value **args;       /* region arguments */
	int nargs;
	Inst *first, *last; /* instructions; the last is a YIELD once complete */
	Inst *owner;        /* the for/if/while owning it; NULL for kernel-level regions */
};

/* A kernel array operand and its BlockSpec. */
typedef struct IrOperand {
	const char *name;   /* source name */
	Loc loc;            /* of the parameter */
	ParamMode mode;     /* PM_IN, PM_OUT, PM_INOUT or PM_PREFETCH (never a spec; every index map reads it) */
	Type *array;        /* TY_REF of the whole array (dims may be DIM_DYNAMIC) */
	bool has_spec;      /* false: the body sees the whole array */
	int64_t *block;     /* block shape, one per array dim (1 for a squeezed dim) */
	bool *squeezed;     /* which block dims are squeezed (None) */
	Region *index_map;  /* args: one i32 per grid axis, then the whole-array Ref of each prefetch operand
	                       (ir_prefetch_count, in operand order); yields one i32 block index per array dim */
} IrOperand;

/* A scalar passed by value. */
typedef struct IrScalar {
	const char *name;   /* source name */
	Loc loc;            /* of the parameter */
	DType dtype;        /* its dtype */
} IrScalar;

typedef struct IrScratch {
	const char *name;   /* source name */
	Loc loc;            /* of the declaration */
	Type *type;         /* TY_REF, SPACE_SCRATCH, static dims */
} IrScratch;

/* The launch-time parameters of a kernel, in the order of the generated C
 * launch function: every source parameter in order (arrays and scalars),
 * then every size symbol in order of first appearance. */
typedef enum KParamKind { KP_OPERAND, KP_SCALAR, KP_SIZE } KParamKind;

typedef struct IrKernel {
	const char *name;      /* kernel name */
	Loc loc;               /* of the name */
	IrOperand **operands;  /* array parameters, in source order */
	int noperands;
	IrScalar **scalars;    /* scalar parameters, in source order */
	int nscalars;
	const char **sizes;    /* size symbols (i64 at launch), in order of first appearance */
	Loc *size_locs;        /* where each first appears */
	int nsizes;
	KParamKind *order;     /* launch parameter order: kind of each... */
	int *order_index;      /* ...and its index in operands/scalars/sizes */
	int norder;
	int ngrid;             /* grid rank (0 = a single program) */
	AxisSemantics *semantics; /* one per grid axis */
	Region *grid;          /* args: sizes (i64) then scalars; yields ngrid i64 extents */
	Region *requires;      /* args as grid; yields one bool per constraint (may be NULL) */
	Loc *require_locs;     /* where each constraint is written */
	int nrequires;
	IrScratch **scratch;   /* scratch buffers */
	int nscratch;
	int num_warps;         /* compile parameter (default 4) */
	int num_stages;        /* compile parameter (default 1) */
	Region *body;          /* args: one Ref per operand (its block view, squeezed dims dropped),
	                          then one value per scalar, then one i64 per size, then one Ref per scratch */
	int nvalues;           /* values numbered so far (Value.id allocator) */
	bool refs_lowered;     /* after lower-refs: body args are whole-array Refs, scratch is ALLOCed */
	bool tiled;            /* after tile-host: every non-Ref value is a scalar */
} IrKernel;

typedef struct IrModule {
	const char *source;    /* path of the main source file */
	IrKernel **kernels;
	int nkernels;
	const char *name_prefix, *name_suffix; /* added to every kernel's name (--name-prefix/-suffix=);
	                                          NULL: none; the header's include guard carries them */
} IrModule;

/* ---- building (ir.c) ------------------------------------------------- */
Region *ir_region_new(Arena *a, IrKernel *k, int nargs, Type **arg_types);
Inst *ir_inst_new(Arena *a, IrKernel *k, Op op, Loc loc, int nargs, Value **args, int nresults, Type **result_types);
void ir_append(Region *r, Inst *i);
void ir_insert_before(Inst *pos, Inst *i);
void ir_remove(Inst *i);
Region *ir_add_region(Arena *a, IrKernel *k, Inst *owner, int nargs, Type **arg_types);
/* Conveniences (ir.c): build and append to the end of region r. */
/* One op with one result of result_type (none when it is NULL). */
Inst *ir_emit(Arena *a, IrKernel *k, Region *r, Op op, Loc loc, int nargs, Value **args, Type *result_type);
Value *ir_const_int(Arena *a, IrKernel *k, Region *r, Loc loc, Type *t, int64_t v);   /* also bool */
Value *ir_const_float(Arena *a, IrKernel *k, Region *r, Loc loc, Type *t, double v);
Inst *ir_yield(Arena *a, IrKernel *k, Region *r, Loc loc, int n, Value **vals);
/* Copy an indexer list / a permutation into the instruction (arena). */
void ir_set_indexers(Arena *a, Inst *i, int nidx, const Indexer *idx);
void ir_set_perm(Arena *a, Inst *i, int nperm, const int64_t *perm);

/* The number of prefetch operands of k (§5.11): the Refs every index map
 * takes after the program ids. */
int ir_prefetch_count(const IrKernel *k);
/* Whether instruction i (an argument, or its nested regions) / some
 * instruction of region r reads v. */
bool ir_inst_reads(const Inst *i, const Value *v);
bool ir_region_reads(const Region *r, const Value *v);

/* ---- text form (irprint.c) -------------------------------------------- */
void ir_print_module(FILE *out, const IrModule *m);
void ir_print_kernel(FILE *out, const IrKernel *k);
/* One instruction on one line (nested regions elided as {...}), named as in
 * ir_print_kernel; for diagnostics such as the verifier's. */
void ir_print_inst(FILE *out, const IrKernel *k, const Inst *i);

/* The identity of a sum/prod/max/min reduction over dt, where accumulation
 * starts: 0, 1, -inf/+inf, or the dtype's min/max for integers (false/true
 * for bool).  A float's in *fval (*ival 0), an integer's in *ival (*fval 0). */
void ir_reduce_identity(Op op, DType dt, int64_t *ival, double *fval);

/* Whether a and b are provably equal (the same value, or the same pure
 * computation of provably equal values).  Used to see that two accesses cover the same
 * elements (tile-host fusion, GPU barrier placement). */
bool ir_same_value(const Value *a, const Value *b);
/* Whether v is a scalar integer or bool constant; its value in *out. */
bool ir_const_value(const Value *v, int64_t *out);
/* The x of v when v is cdiv(x, c) as the front end lowers it,
 * select(ne(mod(x, c), 0), add(floordiv(x, c), 1), floordiv(x, c)) with a
 * constant c > 0 (*c); else NULL. */
const Value *ir_cdiv_of(const Value *v, int64_t *c);

/* Accesses (LOAD/STORE/ATOMIC; the access shape is verify.c's rule): the
 * operand of indexer d (not FULL); the operand number of the first extra
 * (value, compare, mask, other: the Ref and the index operands come
 * first); the access dim a FULL or SLICE indexer d runs along (-1 for a
 * POINT or GATHER); whether any indexer is a GATHER. */
const Value *ir_index_arg(const Inst *i, int d);
int ir_access_extras(const Inst *i);
int ir_access_dim(const Inst *i, int d);
bool ir_access_gathers(const Inst *i);

/* ---- verifier (verify.c) --------------------------------------------- */
/* Checks the invariants above.  On a violation, reports an internal error
 * naming the pass (`after`) and the instruction, and returns false. */
bool ir_verify(const IrModule *m, const char *after);

#endif
