/* parse.h - private to the parser: its state (ParseCtx) and the AST
 * constructors its grammar actions call (parse_ast.c).  Token kinds,
 * YYSTYPE and the Lexer come from the generated parser.h. */
#ifndef PKC_PARSE_H
#define PKC_PARSE_H

#include "parser.h"

/* Parser state for one source file. */
struct ParseCtx {
	Compiler *cc;          /* the compilation */
	Source *src;           /* the file being parsed */
	Lexer lex;             /* its lexer */
	Vec *items;            /* AstItem*: output, shared with including files */
	ParseCtx *parent;      /* the including file's parser, NULL for the main file */
	const char *canon;     /* canonical path of src (include cycle detection) */
	int include_depth;     /* 0 for the main file */
	int depth_limit;       /* deepest expression or statement nesting allowed */
	bool depth_reported;   /* the depth limit error was reported (once per file) */
	const char *range_name;/* interned "range" */
	const char *parallel_name;  /* interned "parallel" */
	const char *arbitrary_name; /* interned "arbitrary" */
	int section;           /* lang-spec clause the last token belongs to: 31..36 = §3.1..§3.6 */
	int err_section;       /* the clause before it: where a syntax error at that token is */
	bool in_kernel;        /* between 'kernel' and the end of its body */
	bool in_header;        /* between a kernel's parameter list and its body */
	bool header_error;     /* a syntax error was reported in this kernel header */
	int pending[2];        /* tokens yylex injects (a stack: last is next) */
	int npending;          /* how many */
	Loc pending_loc;       /* their location */
	bool quiet;            /* the last token was injected: no syntax error for it */
	/* the kernel being built: its clauses accumulate here */
	AstKernel *kern;       /* NULL outside a kernel */
	Vec grid;              /* AstExpr* */
	Vec specs;             /* AstSpec* */
	Vec scratch;           /* AstScratch* */
	Vec cparams;           /* AstKeyVal* */
	Vec requires;          /* AstExpr* */
	bool seen_params;      /* a params clause was written */
	Loc params_loc;        /* where the first one is */
	AstExpr *expr;         /* parse_expr_line: the expression parsed */
};

/* Copies the list `v` into a fresh arena array `dst` of the element type
 * of `dst` (each void* converted by assignment), and its length into `n`.
 * The array is never NULL. */
#define LIST_TO(pc, dst, n, v)                                                        \
	do {                                                                           \
		Vec v_ = (v);                                                          \
		(n) = v_.len;                                                          \
		(dst) = arena_alloc((pc)->cc->arena, (size_t)v_.len * sizeof *(dst) + 1); \
		for (int i_ = 0; i_ < v_.len; i_++)                                    \
			(dst)[i_] = v_.items[i_];                                      \
	} while (0)

/* Extends `a` to the end of `b` when both are on the same line. */
void loc_extend(Loc *a, Loc b);

/* AST constructors (parse_ast.c): each node records its nesting depth;
 * past the limit (§2.8) an error and a shallow placeholder instead, so no
 * later walk over the AST recurses too deep. */
AstExpr *mk_leaf(ParseCtx *pc, AstExprKind kind, Loc loc);
AstExpr *mk_int(ParseCtx *pc, IntLit v, Loc loc);
AstExpr *mk_float(ParseCtx *pc, double v, Loc loc);
AstExpr *mk_bool(ParseCtx *pc, bool v, Loc loc);
AstExpr *mk_name(ParseCtx *pc, const char *name, Loc loc);
AstExpr *mk_string(ParseCtx *pc, const char *text, Loc loc);
AstExpr *mk_dtype(ParseCtx *pc, DType dt, Loc loc);
AstExpr *mk_unary(ParseCtx *pc, AstOp op, Loc loc, AstExpr *x);
AstExpr *mk_binary(ParseCtx *pc, AstOp op, Loc loc, AstExpr *l, AstExpr *r);
AstExpr *mk_call(ParseCtx *pc, Loc loc, AstExpr *callee, Vec args);
AstExpr *mk_index(ParseCtx *pc, Loc loc, AstExpr *base, Vec idx);
AstExpr *mk_slice(ParseCtx *pc, Loc loc, AstExpr *lo, AstExpr *hi, AstExpr *step);
AstExpr *mk_field(ParseCtx *pc, Loc loc, AstExpr *base, const char *name);
AstExpr *mk_tuple(ParseCtx *pc, Loc loc, Vec items);
AstArg *mk_arg(ParseCtx *pc, Loc loc, const char *name, AstExpr *value);
AstType *mk_type(ParseCtx *pc, Loc loc, DType dt, bool has_shape, Vec dims);
AstStmt *mk_stmt(ParseCtx *pc, AstStmtKind kind, Loc loc, Vec *body, Vec *els);
AstStmt *mk_decl(ParseCtx *pc, AstStmtKind kind, Loc loc, NameLoc name, AstType *type, AstExpr *value);
/* let a, b, ... = value: `first`, then the NameLoc* of `rest`. */
AstStmt *mk_unpack(ParseCtx *pc, Loc loc, NameLoc first, Vec rest, AstExpr *value);
AstStmt *mk_assign(ParseCtx *pc, Loc loc, AstExpr *target, AstOp op, AstExpr *value);
AstStmt *mk_for(ParseCtx *pc, Loc loc, NameLoc var, NameLoc range, AstExpr *lo, AstExpr *hi,
                AstExpr *step, Vec body);
NameLoc *mk_nameloc(ParseCtx *pc, const char *name, Loc loc);

/* Items: the kernel being built collects its clauses in the ParseCtx. */
void kernel_begin(ParseCtx *pc, Loc loc, const char *name, Vec params);
void kernel_end(ParseCtx *pc, Vec body);
void clause_once(ParseCtx *pc, bool *seen, Loc loc, Loc first, const char *what);
void add_const(ParseCtx *pc, NameLoc name, DType dt, AstExpr *value);
void add_fn(ParseCtx *pc, NameLoc name, Vec params, AstType *ret, Vec body);

/* Lists in the arena. */
void list_push(ParseCtx *pc, Vec *v, void *item);
Vec list1(ParseCtx *pc, void *item);

#endif
