/* ast.h - the abstract syntax tree the parser builds and sema consumes.
 * It mirrors the surface syntax (lang-spec §3 grammar) one to one; meaning
 * (types, shapes, names) is assigned only by sema.  Every node has a Loc. */
#ifndef PKC_AST_H
#define PKC_AST_H

#include "dtype.h"
#include "pkc.h"

/* ---- expressions ----------------------------------------------------- */

#define AST_EXPR_KINDS(X) \
	X(INT)      /* integer literal: ival */ \
	X(FLOAT)    /* float literal: fval (also inf, nan) */ \
	X(BOOL)     /* true / false: ival */ \
	X(NONE)     /* None (squeezed block dim, new axis in value index) */ \
	X(ELLIPSIS) /* ... (only inside an index) */ \
	X(NAME)     /* identifier: name */ \
	X(DTYPE)    /* dtype used as a value: f32 in astype(x, f32) or f32(x): dtype */ \
	X(UNARY)    /* op lhs: neg, plus, bitnot, not */ \
	X(BINARY)   /* lhs op rhs */ \
	X(CALL)     /* callee(args): callee is an expression (NAME, DTYPE or FIELD) */ \
	X(INDEX)    /* lhs[index...]: a Ref access or a value index */ \
	X(SLICE)    /* [lo]:[hi][:[step]] inside an index; lhs/rhs/step may be NULL */ \
	X(FIELD)    /* lhs.name: x.T, or the callee of x.astype(f32) */ \
	X(TUPLE)    /* (a, b, ...) : items */ \
	X(STRING)   /* string literal: name holds its decoded text (only debug_print/debug_check take one) */

typedef enum AstExprKind {
#define X(k) AE_##k,
	AST_EXPR_KINDS(X)
#undef X
	AE_COUNT
} AstExprKind;

/* Operators, unary and binary, with their spelling. */
#define AST_OPS(X) \
	X(ADD, "+") X(SUB, "-") X(MUL, "*") X(DIV, "/") X(FLOORDIV, "//") \
	X(MOD, "%") X(POW, "**") X(MATMUL, "@") \
	X(BITAND, "&") X(BITOR, "|") X(BITXOR, "^") X(SHL, "<<") X(SHR, ">>") \
	X(EQ, "==") X(NE, "!=") X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=") \
	X(AND, "and") X(OR, "or") \
	X(NEG, "-") X(PLUS, "+") X(BITNOT, "~") X(NOT, "not")

typedef enum AstOp {
#define X(id, s) OP_##id,
	AST_OPS(X)
#undef X
	OP_COUNT
} AstOp;

extern const char *const ast_op_spelling[OP_COUNT];

typedef struct AstExpr AstExpr;

/* A call argument: positional (name == NULL) or keyword (name = value). */
typedef struct AstArg {
	Loc loc;          /* of the argument (the keyword, if any) */
	const char *name; /* interned keyword, NULL if positional */
	AstExpr *value;   /* the argument */
} AstArg;

struct AstExpr {
	AstExprKind kind; /* which variant */
	Loc loc;          /* the whole expression; for BINARY the operator */
	AstOp op;         /* UNARY, BINARY */
	AstExpr *lhs;     /* UNARY operand, BINARY left, INDEX/FIELD base, CALL callee, SLICE lo */
	AstExpr *rhs;     /* BINARY right, SLICE hi */
	AstExpr *step;    /* SLICE step (lo:hi:step), NULL if none */
	const char *name; /* NAME, FIELD: interned identifier */
	DType dtype;      /* DTYPE */
	int64_t ival;     /* INT (non-negative; '-' is a UNARY), BOOL */
	double fval;      /* FLOAT */
	bool int_overflow;/* INT literal did not fit in int64: sema reports it */
	AstExpr **items;  /* TUPLE items, INDEX index list */
	int nitems;       /* count of items */
	AstArg *args;     /* CALL arguments */
	int nargs;        /* count of args */
};

/* ---- statements ------------------------------------------------------ */

#define AST_STMT_KINDS(X) \
	X(LET)     /* let name [: type] = value; */ \
	X(VAR)     /* var name [: type] = value; */ \
	X(ASSIGN)  /* target op= value;  target is a NAME (a var) or an INDEX (a Ref store) */ \
	X(EXPR)    /* expr;  (store(...), atomics) */ \
	X(IF)      /* if cond {then} [else {els}];  also 'when cond {then}' (is_when) */ \
	X(FOR)     /* for name in range(lo, hi, step) {body} */ \
	X(WHILE)   /* while cond {body} */ \
	X(BREAK)   /* break;  (leaves the innermost loop) */ \
	X(CONTINUE) /* continue;  (ends the innermost loop's iteration) */ \
	X(RETURN)  /* return value;  (the last statement of a fn body) */ \
	X(BLOCK)   /* { stmts } */

typedef enum AstStmtKind {
#define X(k) AS_##k,
	AST_STMT_KINDS(X)
#undef X
	AS_COUNT
} AstStmtKind;

typedef struct AstStmt AstStmt;

/* A type written in the source: dtype with an optional shape, e.g. f32[16, 8].
 * Used for parameters, scratch, let/var annotations and const. */
typedef struct AstType {
	Loc loc;         /* of the whole type */
	DType dtype;     /* element type; DT_NONE when written as a name */
	const char *dtype_name; /* a const holding a dtype (const DT = f16; DT[8]): sema resolves it */
	bool has_shape;  /* written with [...] (a scalar has none) */
	bool any_shape;  /* written DTYPE[...]: any shape (fn parameters and results only) */
	AstExpr **dims;  /* dimension expressions (a NAME may introduce a size symbol) */
	int ndims;       /* count of dims */
} AstType;

struct AstStmt {
	AstStmtKind kind;  /* which variant */
	Loc loc;           /* the statement's first token */
	const char *name;  /* LET, VAR, FOR: the bound identifier (NULL for a LET that unpacks) */
	Loc name_loc;      /* where that name is written */
	const char **names;/* LET unpacking a tuple (let a, b = e): its names, two or more */
	Loc *name_locs;    /* where each is written */
	int nnames;        /* count of names; 0 for other statements */
	AstType *type;     /* LET, VAR: optional annotation (NULL if absent) */
	AstExpr *target;   /* ASSIGN: NAME or INDEX */
	AstOp assign_op;   /* ASSIGN: OP_COUNT for plain '=', else ADD/SUB/MUL/DIV for op= */
	AstExpr *value;    /* LET, VAR, ASSIGN, EXPR: the value; IF, WHILE: the condition */
	AstExpr *lo, *hi, *step; /* FOR range(lo, hi, step); lo/step NULL when not written */
	AstStmt **body;    /* IF then-branch, FOR/WHILE body, BLOCK statements */
	int nbody;         /* count of body */
	AstStmt **els;     /* IF else-branch (an else-if is a single IF statement) */
	int nels;          /* count of els; has_else says whether 'else' was written */
	bool has_else;     /* IF: an else branch was written */
	bool is_when;      /* IF: written as 'when' (pl.when) */
};

/* ---- declarations ---------------------------------------------------- */

/* A kernel parameter: name : [mode] dtype[dims]. */
typedef struct AstParam {
	Loc loc;          /* of the name */
	const char *name; /* interned */
	ParamMode mode;   /* in/out/inout, or scalar */
	AstType *type;    /* dtype and shape */
} AstParam;

/* A BlockSpec: spec name: [bdims] (pids) -> (indices). */
typedef struct AstSpec {
	Loc loc;            /* of 'spec' */
	const char *operand;/* interned name of the parameter it applies to */
	Loc operand_loc;    /* where that name is written */
	AstExpr **block;    /* block shape; an AE_NONE entry is a squeezed dim */
	int nblock;         /* count of block dims */
	const char **pids;  /* index-map parameter names (one per grid axis) */
	Loc *pid_locs;      /* where each is written */
	int npids;          /* count of pids */
	AstExpr **index;    /* index-map results: block indices, one per array dim */
	int nindex;         /* count of index */
} AstSpec;

/* A scratch buffer: scratch name: dtype[dims]. */
typedef struct AstScratch {
	Loc loc;          /* of the name */
	const char *name; /* interned */
	AstType *type;    /* dtype and static shape */
} AstScratch;

/* A compile parameter: params(num_warps = 4, num_stages = 2). */
typedef struct AstKeyVal {
	Loc loc;          /* of the key */
	const char *key;  /* interned */
	AstExpr *value;   /* the value */
} AstKeyVal;

typedef struct AstKernel {
	Loc loc;              /* of the kernel's name */
	const char *name;     /* interned */
	AstParam **params;    /* parameters in order */
	int nparams;
	bool has_grid;        /* a grid clause was written (else grid = ()) */
	Loc grid_loc;         /* of 'grid' */
	AstExpr **grid;       /* grid extents */
	int ngrid;
	bool has_semantics;   /* a semantics clause was written (else all parallel) */
	Loc semantics_loc;    /* of 'semantics' */
	AxisSemantics *semantics; /* one per grid axis */
	Loc *semantics_locs;  /* where each is written */
	int nsemantics;
	AstSpec **specs;      /* BlockSpecs, in source order */
	int nspecs;
	AstScratch **scratch; /* scratch buffers, in source order */
	int nscratch;
	AstKeyVal **cparams;  /* compile parameters from params(...) */
	int ncparams;
	AstExpr **requires;   /* launch-time constraints on sizes */
	int nrequires;
	AstStmt **body;       /* the kernel body */
	int nbody;
} AstKernel;

/* const NAME [: dtype] = value; */
typedef struct AstConst {
	Loc loc;          /* of the name */
	const char *name; /* interned */
	DType dtype;      /* DT_NONE when not annotated (weakly typed) */
	AstExpr *value;   /* a compile-time expression */
} AstConst;

/* fn NAME(params) [-> type] { ... return value; }: a function inlined at
 * each call. */
typedef struct AstFn {
	Loc loc;          /* of the name */
	const char *name; /* interned */
	AstParam **params;/* its parameters (values: mode PM_SCALAR) */
	int nparams;
	AstType *ret;     /* the result type, NULL when not written */
	AstStmt **body;   /* the body; the last statement is a return */
	int nbody;
} AstFn;

/* A top-level item, in source order (includes are expanded by the parser:
 * their items appear in place, so the AST holds only consts, fns and
 * kernels). */
typedef struct AstItem {
	bool is_kernel;     /* a kernel (else a const or a fn) */
	AstConst *konst;    /* a const: !is_kernel, fn NULL */
	AstKernel *kernel;  /* when is_kernel */
	AstFn *fn;          /* a fn: !is_kernel, konst NULL */
} AstItem;

typedef struct AstFile {
	AstItem **items;  /* all items, includes expanded */
	int nitems;
} AstFile;

/* Parses `src` (and, recursively, the files it includes).  Returns the AST,
 * possibly partial; errors go to cc->diag.  Never returns NULL. */
AstFile *parse_file(Compiler *cc, Source *src);

/* Parses line `line` of `src`, from column `col` to the line's end, as one
 * expression (the value of a -D, §4.3), under the limits of a file (§2.8).
 * Returns NULL after reporting an error. */
AstExpr *parse_expr_line(Compiler *cc, const Source *src, int line, int col);

/* Prints the AST as an indented S-expression (--emit=ast). */
#include <stdio.h>
void ast_print(FILE *out, const AstFile *f);

#endif
