/* sema.h - private declarations shared by the seven files of semantic
 * analysis: sema.c (items, -D, consts, kernels and their clauses, fns),
 * sema_stmt.c (statements and SSA for vars), sema_type.c (types written in
 * the source), sema_scope.c (scopes, bindings, lookup), sema_expr.c
 * (constants, expressions, conversions), sema_access.c (Ref access) and
 * sema_builtins.c (the builtin-function table), sema_prefetch.c (scalar
 * prefetch).  Nothing outside sema includes this header; the public entry
 * point is sema_file in front.h.
 *
 * The central type is Ex, the result of evaluating an expression.  It is
 * either a compile-time constant (folded, never emitted unless a runtime
 * value needs it), a runtime IR value, or one of the non-value things an
 * expression can denote (a Ref, an indexed Ref not yet read, a dtype, a
 * tuple, None).  EX_ERROR is the poison that suppresses cascading errors:
 * an operation with a poisoned operand reports nothing and yields poison. */
#ifndef PKC_SEMA_H
#define PKC_SEMA_H

#include "front.h"

/* A compile-time constant: bool, integer (any integer dtype, held in an
 * int64) or float (held in a double). */
typedef struct ConstVal {
	DType dtype; /* its dtype (i32 or f32 for a weak literal) */
	bool weak;   /* weakly typed: a literal or an unannotated const (§4.7) */
	int64_t i;   /* bool or integer value */
	double f;    /* float value */
} ConstVal;

struct Binding;
typedef struct Scope Scope;

/* An indexed Ref (x[i, ds(s, 16)]) that has not been read or written yet:
 * a place.  Loads, stores and atomics share it, so `o[...] += v` indexes
 * once. */
typedef struct Access {
	Value *ref;                    /* the Ref being indexed */
	const struct Binding *binding; /* its declaration (name, mode), NULL if none */
	Indexer *idx;                  /* one indexer per Ref dimension */
	int nidx;                      /* = the Ref's rank */
	Value **ops;                   /* operand of each non-FULL indexer, in dimension order */
	int nops;                      /* count of ops */
	Type *type;                    /* value type a read yields (and a write takes) */
	int dyn_dim;                   /* a FULL dimension of dynamic size (-1: none); type is NULL then */
	Loc loc;                       /* of the whole index expression */
	bool view;                     /* x.at[...] (§7.5): not read until indexed again or passed
	                                  to load/store/an atomic */
} Access;

typedef enum ExKind {
	EX_ERROR, /* poison: an error was already reported */
	EX_VOID,  /* no value: store(...) */
	EX_CONST, /* compile-time constant c */
	EX_VALUE, /* runtime value v */
	EX_REF,   /* a Ref v (operand block, whole array or scratch) */
	EX_ACCESS,/* an indexed Ref acc, not yet read */
	EX_DTYPE, /* a dtype dt used as an argument: astype(x, f32) */
	EX_TUPLE, /* items: shapes, permutations */
	EX_NONE   /* the None literal */
} ExKind;

/* The meaning of an evaluated expression. */
typedef struct Ex {
	ExKind kind;             /* which variant */
	Loc loc;                 /* the expression, for diagnostics */
	ConstVal c;              /* EX_CONST */
	Value *v;                /* EX_VALUE, EX_REF */
	bool weak;               /* EX_VALUE: weakly typed (derived only from weak literals) */
	DType dt;                /* EX_DTYPE */
	struct Ex *items;        /* EX_TUPLE elements */
	int nitems;              /* count of items */
	Access *acc;             /* EX_ACCESS */
	const struct Binding *b; /* EX_REF: its declaration, for mode checks and notes */
} Ex;

/* What a name is bound to. */
typedef enum BindKind {
	B_CONST,   /* file-level const (evaluated lazily, cycles detected) */
	B_SIZE,    /* size symbol of the kernel (i64 at launch) */
	B_SCALAR,  /* scalar kernel parameter */
	B_OPERAND, /* array kernel parameter (a Ref in the body) */
	B_SCRATCH, /* scratch buffer (a Ref in the body) */
	B_PID,     /* program-id parameter of an index map */
	B_LET,     /* let binding, or any immutable local */
	B_VAR,     /* var binding: mutable, SSA-renamed */
	B_LOOP,    /* for-loop induction variable */
	B_FN       /* a fn (§3.7), inlined where it is called */
} BindKind;

typedef struct Binding {
	BindKind kind;        /* what the name denotes */
	const char *name;     /* interned */
	Loc loc;              /* of the declaration, for notes */
	int index;            /* SIZE, SCALAR, OPERAND, SCRATCH, PID: position in its kernel list */
	ParamMode mode;       /* OPERAND: in/out/inout/prefetch */
	AstConst *konst;      /* CONST: the declaration */
	Ex ex;                /* CONST, LET, LOOP: the bound meaning */
	Value *cur;           /* VAR: the current SSA value */
	Type *type;           /* VAR: its fixed type; NULL when the declaration was in error */
	bool poisoned;        /* its declaration had an error: uses are silently poison */
	bool hidden;          /* made by pkc (a loop's break flag): never offered in "did you mean" */
	const AstFn *fn;      /* FN: the declaration */
	Scope *view;          /* FN: the file's names its body sees (those declared before it) */
	struct Binding *next; /* next binding of the same scope */
} Binding;


/* A lexical scope: a list of bindings and the enclosing scope. */
struct Scope {
	Binding *first;       /* bindings, most recent first */
	struct Scope *parent; /* enclosing scope, NULL for the file scope */
	PtrMap index;         /* name -> most recent binding, once the scope is large */
	int n;                /* bindings in the list */
};

/* Which names and operations an expression may use. */
typedef enum Ctx {
	CTX_CONST,     /* const initializers, dims, block shapes, params: must fold */
	CTX_GRID,      /* grid and requires: sizes, scalars and consts */
	CTX_INDEX_MAP, /* spec index maps: program ids, consts and prefetch arrays (§5.11) */
	CTX_BODY       /* the kernel body: everything */
} Ctx;

/* The state of semantic analysis. */
typedef struct Sema {
	Compiler *cc;         /* diagnostics, arena, -D defines */
	Arena *a;             /* where types and IR are allocated (the compilation's arena) */
	Scope *file;          /* consts (each bound at its declaration) */
	PtrMap all_consts;    /* every const of the file, name -> AstConst*, for use-before-declaration errors */
	Scope *scope;         /* innermost scope of the current context */
	Ctx ctx;              /* what the current expression may use */
	const char *clause;   /* clause cited for context violations (e.g. "§5.3") */
	IrKernel *k;          /* kernel being built (a dummy one in constant contexts) */
	Region *region;       /* where new instructions are appended */
	Value **sizes;        /* current region's value of each size symbol (grid, requires, body) */
	Value **scalars;      /* current region's value of each scalar parameter */
	Value **refs;         /* body: the Ref of each operand; index map: of each prefetch operand */
	Value **scratch;      /* body: the Ref of each scratch buffer */
	Value **pids;         /* index map: the program ids */
	struct LoopCtx *loop; /* the innermost loop whose body is being built (break, continue), or NULL */
	int nloops;           /* loops seen, to name their flags */
	IrKernel *dummy_k;    /* owns dummy_r */
	Region *dummy_r;      /* sink for instructions in constant contexts (never emitted) */
	const Source *cmdline; /* "<command line>": the -D values, one a line (command_line in sema.c) */
} Sema;

/* ---- sema_expr.c: values, constants, conversions ----------------------- */

Ex ex_error(Loc loc);
Ex ex_void(Loc loc);
Ex ex_const(ConstVal c, Loc loc);
Ex ex_value(Value *v, bool weak, Loc loc);
ConstVal const_int(int64_t i, DType dt, bool weak);
ConstVal const_float(double f, DType dt, bool weak);
ConstVal const_bool(bool b);

/* dtype / rank / dims of a CONST or VALUE (a constant is a scalar). */
DType ex_dtype(const Ex *e);
bool ex_weak(const Ex *e);
int ex_rank(const Ex *e);
const int64_t *ex_dims(const Ex *e);
/* "f32[16,8]", "i32" - for messages. */
const char *ex_type_str(Sema *s, const Ex *e);

/* Turns an access into a load, and rejects non-values (Refs, dtypes,
 * tuples, None, void) with an error naming `what`.  CONST and VALUE pass. */
Ex rvalue(Sema *s, Ex e);
/* Requires a compile-time constant integer; reports at e.loc citing clause. */
bool const_int_arg(Sema *s, Ex e, const char *what, const char *clause, int64_t *out);
bool const_bool_arg(Sema *s, Ex e, const char *what, const char *clause, bool *out);
/* Converts a constant to dt (range-checked; reports at loc when it does
 * not fit, explicit: astype semantics, float->int truncates). */
bool const_convert(Sema *s, ConstVal *c, DType dt, bool explicit_cast, Loc loc);
/* Whether converting c to dt keeps its value in range (integers). */
bool const_fits(const ConstVal *c, DType dt);

/* Reports (at loc) a type too large for memory (§4.2); true if it fits. */
bool check_fits(Sema *s, const Type *t, Loc loc);
/* Instruction building in s->region (a result too large is reported). */
Inst *emit_inst(Sema *s, Op op, Loc loc, int nargs, Value **args, int nres, Type **rtypes);
Value *emit(Sema *s, Op op, Loc loc, Type *rt, int nargs, ...);
Value *emit_const(Sema *s, ConstVal c, Type *t, Loc loc);
Value **vals(Sema *s, int n);

/* A CONST or VALUE as a Value of exactly type t (cast and/or broadcast);
 * the caller has checked that the conversion is allowed. */
Value *to_value(Sema *s, Ex e, Type *t);
/* A CONST or VALUE as a Value of its own (default) type. */
Value *as_value(Sema *s, Ex e);
Value *cast_value(Sema *s, Value *v, DType dt, Loc loc);
Value *broadcast_value(Sema *s, Value *v, int rank, const int64_t *dims, Loc loc);
Value *reshape_value(Sema *s, Value *v, int rank, const int64_t *dims, Loc loc);
Value *transpose_value(Sema *s, Value *v, const int64_t *perm, Loc loc);

/* Converts e to type t for a store into a Ref, an assignment to a var, an
 * annotated let (§6.2, §6.3): a weak value converts (§4.7), a strong one
 * must have t's dtype exactly; the shape must broadcast to t's.  Returns
 * NULL after reporting (`what` names the target, clause is cited). */
Value *coerce_value(Sema *s, Ex e, Type *t, const char *what, const char *clause);

/* Elementwise binary operations. */
typedef enum BinClass {
	BC_ARITH,   /* numbers, not bool */
	BC_DIV,     /* true division: ints become float */
	BC_CMP,     /* any; result bool */
	BC_LOGIC,   /* bool only */
	BC_BITWISE, /* ints or bool */
	BC_SHIFT,   /* ints only */
	BC_MINMAX,  /* numbers or bool */
	BC_INTONLY  /* ints only (cdiv) */
} BinClass;

typedef struct BinInfo {
	Op op;              /* IR opcode */
	const char *verb;   /* "add": for "cannot add X and Y" */
	BinClass cls;       /* operand class rule */
	const char *clause; /* clause cited for operand errors */
} BinInfo;

extern const BinInfo bin_min, bin_max, bin_add, bin_sub, bin_floordiv, bin_mod, bin_ne, bin_div, bin_rem,
	bin_atan2;
Ex sema_binop(Sema *s, const BinInfo *bi, Loc loc, Ex a, Ex b);
Ex sema_binary_ast(Sema *s, AstOp op, Loc loc, Ex a, Ex b);
/* -x, +x, ~x, not x (sema_expr.c). */
Ex sema_unary(Sema *s, AstOp op, Loc loc, Ex x);

/* Expressions. */
Ex sema_expr(Sema *s, AstExpr *e);
Ex sema_value_expr(Sema *s, AstExpr *e); /* sema_expr + rvalue */
/* x[()] (NumPy's index of a rank-0 array) as x[...]; other indexes as they are. */
AstExpr *unit_index(Sema *s, AstExpr *e);

/* Whether a value of dtype from converts implicitly to to (a weak value
 * converts, a strong one must match). */
bool implicitly_converts(DType from, bool weak, DType to);
/* A bool scalar condition (if, when, while, requires); NULL after an error. */
Value *condition(Sema *s, Ex e, const char *what, const char *clause);
/* "f32[16,8]" of a dtype and dims, for messages. */
const char *shape_str(Sema *s, DType dt, int rank, const int64_t *dims);

/* ---- sema_access.c: Ref access (§7.5-§7.8) ----------------------------- */

Access *build_access(Sema *s, Ex base, AstExpr *index);
Access *whole_access(Sema *s, Ex ref, Loc loc);
bool access_ready(Sema *s, Access *acc, const char *verb);
bool access_writable(Sema *s, Access *acc, Loc loc, const char *verb);
Value *emit_load(Sema *s, Access *acc, Value *mask, Value *other, Loc loc);
void emit_store(Sema *s, Access *acc, Value *v, Value *mask, Loc loc);

/* Names (sema_scope.c; name_value: sema_expr.c). */
Binding *lookup(Sema *s, const char *name);
Binding *lookup_in(Scope *sc, const char *name);
Binding *bind(Sema *s, Scope *sc, BindKind kind, const char *name, Loc loc);
const char *binding_desc(const Binding *b); /* "a scalar parameter", ... */
Ex name_value(Sema *s, Binding *b, Loc loc);
/* The names a declaration may not take (§5.10): builtins (and range), and
 * anything declared in the scopes from sc outwards (no shadowing). */
bool check_new_name(Sema *s, Scope *sc, const char *name, Loc loc);
void report_unknown_name(Sema *s, const char *name, Loc loc, const char *what,
                         const char *const *extra, int nextra);
const char *closest_name(const char *name, const char *const *cands, int n);

/* The value of a const at a use. */
Ex const_binding_value(Sema *s, Binding *b, Loc use);
/* Reports (and returns true) when name is a const declared later in the file. */
bool used_before_declaration(Sema *s, const char *name, Loc loc);

/* Shared shape helpers. */
bool shape_arg(Sema *s, Ex e, const char *fname, const char *clause, bool allow_minus1,
               int *rank, int64_t **dims);
int normalize_axis(Sema *s, int64_t axis, int rank, Loc loc, const char *fname, const char *clause);

/* ---- sema_type.c: types written in the source ------------------------- */

/* Evaluates e in a constant context (dims, block shapes, params). */
Ex eval_const(Sema *s, AstExpr *e, const char *clause);
/* A positive constant integer (dims, block dims); reports otherwise. */
bool positive_int(Sema *s, Ex e, const char *what, const char *clause, int64_t *out);
/* The dtype of a type: a dtype keyword or a const holding one (DT_NONE
 * after an error). */
DType type_dtype(Sema *s, const AstType *t);
/* The static shape of a type annotation (scratch, let, var, fn slots). */
Type *static_type(Sema *s, AstType *t, const char *clause);

static inline void name_arg(Region *r, int i, const char *name)
{
	r->args[i]->name = name;
}

/* ---- sema_stmt.c ------------------------------------------------------- */

/* The statements of a body, in the current scope. */
void sema_stmts(Sema *s, AstStmt **v, int n);

/* ---- sema_shape.c: value indexing (§7.9), joining and regrouping (§7.12) */

Ex sema_value_index(Sema *s, Ex base, AstExpr *ix);
/* x.at[idx] (e: the index whose base is the field .at), and a view indexed again. */
Ex sema_ref_view(Sema *s, AstExpr *e);
Ex sema_view_index(Sema *s, Ex view, AstExpr *e);
Ex sema_concatenate(Sema *s, Loc loc, Ex list, int64_t axis, bool stack);
Ex sema_tile(Sema *s, Loc loc, Ex x, Ex reps);
Ex sema_repeat(Sema *s, Loc loc, Ex x, Ex count, bool has_axis, int64_t axis);
Ex sema_split(Sema *s, Loc loc, Ex x, Ex sections, int64_t axis);
/* x.at[index].op(u) of a value x: op is set, add, multiply, divide, min, max or get (§7.9). */
Ex sema_value_update(Sema *s, Loc loc, Ex base, AstExpr *ix, const char *op, Ex u);
Ex sema_expand_squeeze(Sema *s, Loc loc, Ex x, const Ex *axes, bool expand);
/* The options of one dot (§7.13). */
typedef struct DotOpts {
	DType acc_dt;           /* acc = T or preferred_element_type = T; DT_NONE if neither */
	const Ex *acc;          /* acc = value, added to the products; NULL if none */
	bool ta, tb;            /* trans_a, trans_b */
	DotPrecision precision; /* precision= (lax.Precision) */
} DotOpts;
/* dot of two values of one rank r >= 3: a dot per batch (§7.13). */
Ex sema_batched_dot(Sema *s, Loc loc, Ex a, Ex b, const DotOpts *o);

/* ---- sema_debug.c: debug_print, debug_check (§7.19) --------------------- */

Ex sema_debug_call(Sema *s, AstExpr *call, Op op);

/* ---- sema_prefetch.c: scalar prefetch (§5.11) ------------------------- */

/* A prefetch parameter's dtype must be an integer one (reports, false). */
bool prefetch_param_check(Sema *s, const AstParam *p, DType dt);
/* A spec names a prefetch parameter: reported (false). */
bool prefetch_spec_check(Sema *s, const Binding *b, Loc at);
/* How many of an index map's parameters are program ids: all of them, or
 * the grid's rank when the others name the prefetch arrays in order, as
 * Pallas' index maps receive them (`(i, j, ids_ref) -> (ids_ref[i], j)`). */
int prefetch_map_pids(Sema *s, const IrKernel *k, const AstSpec *sp);
/* After a wrong count of index-map parameters: a note on the Pallas form. */
void prefetch_pids_note(Sema *s, const IrKernel *k, Loc loc);
/* Binds index-map parameter `name` to the p-th prefetch array. */
void prefetch_bind_param(Sema *s, Scope *ps, Scope *ks, const IrKernel *k, int p, const char *name, Loc loc);
/* An index map's region: npids i32 program ids, then the Ref of each
 * prefetch operand; s->refs holds those Refs by operand index. */
Region *prefetch_map_region(Sema *s, IrKernel *k, int npids);
/* An array parameter named in an index map: its Ref if it is a prefetch
 * array, else an error. */
Ex prefetch_map_ref(Sema *s, const Binding *b, Loc loc);
/* A read in an index map must yield a scalar (reports, false). */
bool prefetch_map_read_ok(Sema *s, const Access *acc, Loc loc);
/* A store or atomic on a prefetch array: reported; returns false. */
bool prefetch_write_error(Sema *s, const Binding *b, Loc loc, const char *verb);

/* ---- sema_compat.c: small jnp/lax/pl functions (§7.20) ----------------- */

typedef enum Compat {
	COMPAT_SIGN, COMPAT_CLIP, COMPAT_SQUARE, COMPAT_RECIPROCAL, COMPAT_ISNAN, COMPAT_ISFINITE,
	COMPAT_SWAPAXES, COMPAT_MULTIPLE_OF, COMPAT_MAX_CONTIGUOUS,
	COMPAT_TRUNC, COMPAT_ERF_INV, COMPAT_POPCNT, COMPAT_CLZ, COMPAT_SHIFT_RIGHT_LOGICAL, COMPAT_BITCAST,
	COMPAT_SELECT_N,
	/* jax.nn activations and float functions built from §7.2-§7.10's operations;
	 * from here on the names are not reserved (is_reserved_name, §5.10) */
	COMPAT_NEXTAFTER, COMPAT_COPYSIGN, COMPAT_SIGNBIT, COMPAT_LOGADDEXP, COMPAT_RELU, COMPAT_RELU6,
	COMPAT_SOFTPLUS, COMPAT_LOG_SIGMOID, COMPAT_SILU, COMPAT_GELU, COMPAT_LEAKY_RELU, COMPAT_ELU,
	COMPAT_HARD_TANH, COMPAT_COUNT
} Compat;

/* which of args[0 .. nargs - 1] (nargs as the builtin table checked; for
 * gelu, leaky_relu and elu, args[1] is their keyword's value or None). */
Ex sema_compat(Sema *s, Compat which, Loc loc, const Ex *args, int nargs);
/* where(cond, a, b) (§7.16: sema_builtins.c). */
Ex sema_where(Sema *s, Loc loc, Ex cond, Ex a, Ex b);
/* astype(x, dt) (§7.14): a strong value; constants fold. */
Ex sema_cast(Sema *s, Ex x, DType dt, Loc loc);
/* abs(x) (§7.10): a number's magnitude, folded for a constant. */
Ex sema_abs(Sema *s, Loc loc, Ex x);
/* A §7.10 math function (op F_MATH) of x, folded for a constant; fname
 * names it in messages. */
Ex sema_math(Sema *s, Op op, Loc loc, Ex x, const char *fname);
/* roll(x, shift, axis) (jnp.roll, pltpu.roll) and lax.broadcast_in_dim
 * (sema_shape.c). */
Ex sema_roll(Sema *s, Loc loc, Ex x, Ex shift, const Ex *axis);
/* jnp.flip, jnp.pad (mode "constant"), jnp.diagonal (sema_shape.c, §7.20). */
Ex sema_flip(Sema *s, Loc loc, Ex x, const Ex *axis);
Ex sema_pad(Sema *s, Loc loc, Ex x, Ex widths, const Ex *value);
Ex sema_diagonal(Sema *s, Loc loc, Ex x, int64_t offset, int64_t axis1, int64_t axis2);
Ex sema_broadcast_in_dim(Sema *s, Loc loc, Ex x, Ex shape, Ex dims);

/* ---- sema_einsum.c: einsum of two operands (§7.13) ------------------------ */

Ex sema_einsum(Sema *s, AstExpr *call);

/* ---- sema_builtins.c --------------------------------------------------- */

Ex sema_call(Sema *s, AstExpr *call);
/* Evaluates the arguments of a call that failed, so their own errors are
 * still reported; a string literal is left alone: only debug_print and
 * debug_check take one (§7.19), and pl.debug_print("...") needs no second
 * error about it. */
void eval_args(Sema *s, AstExpr *call);
/* A call of a fn (sema.c, §3.7): its body inlined here. */
Ex call_fn(Sema *s, Binding *fb, AstExpr *call);
Ex sema_dot(Sema *s, Loc loc, Ex a, Ex b, const DotOpts *o);
/* a @ b: jnp.matmul's broadcast of a matrix over batches, else dot (§7.13). */
Ex sema_matmul(Sema *s, Loc loc, Ex a, Ex b);
/* einsum(subscripts, a, b) of values, subscripts made by pkc (§7.13). */
Ex sema_einsum_of(Sema *s, Loc loc, const char *subscripts, Ex a, Ex b, const DotOpts *o);
/* The value of precision= on dot or einsum: an EX_CONST of a DotPrecision (§7.13). */
Ex sema_precision_arg(Sema *s, const AstExpr *v);
Ex sema_transpose(Sema *s, Loc loc, Ex x, const int64_t *perm, int nperm);
bool is_builtin_name(const char *name);
/* A builtin name no declaration may take (§5.10): not §7.20's hideable ones. */
bool is_reserved_name(const char *name);
/* A predeclared constant (pi, §7.18): its value in *out. */
bool builtin_constant(const char *name, Loc loc, Ex *out);
/* finfo(T).max, iinfo(T).min (§7.18): field is a FIELD whose base
 * is_dtype_info. */
bool is_dtype_info(const AstExpr *e);
Ex sema_dtype_info(Sema *s, AstExpr *field);
const char *builtin_suggestion(const char *name);
/* Pallas habits (§10): reports `name` when JAX spells something .pk writes
 * otherwise (True, float32, arange), naming it "unknown <what>"; reports a
 * module prefix (jnp.exp, jax.lax.rsqrt, pl.program_id) on the FIELD f,
 * the callee of a call when `call`.  Both return whether they reported. */
bool report_pallas_name(Sema *s, const char *what, const char *name, Loc loc);
bool report_module_prefix(Sema *s, const AstExpr *f, bool call);
/* Whether a call names store/atomic/debug_* (an effect whose result may be dropped). */
bool call_is_effect(const AstExpr *call);

#endif
