/* parser.y - the .pk parser (lang-spec §3), a pure Bison LALR(1) parser that
 * builds the AST of ast.h.
 *
 * Each rule group carries its EBNF (lang-spec/README.md §3) as a comment.
 * Design notes:
 *  - Locations are Loc (pkc.h); a nonterminal spans from its first to its
 *    last symbol when they are on one line.
 *  - Syntax errors read like gcc's ("expected ';' before '}'"), see
 *    yyreport_syntax_error.  Recovery: statements resynchronise on ';' and
 *    '}' (and on a block), parenthesised clauses on their ')', and items on
 *    the next 'kernel', 'const' or 'include' (the lexer closes any brackets
 *    left open before those keywords, so a broken kernel never swallows the
 *    next one).  Errors stop when the diagnostic engine says so.
 *  - Depth: bracket nesting is bounded by the lexer (§2.8); chains that need
 *    no brackets (a+b+c..., - - x, else if ...) are bounded by the AST
 *    constructors (parse_ast.c), so every later recursive walk over the AST
 *    has bounded depth.
 *  - The parser's state (ParseCtx) and the constructors the actions call are
 *    declared in parse.h.
 *  - include is expanded in place by parsing the included file recursively
 *    into the same item list.
 */

%code top {
#define _XOPEN_SOURCE 700 /* realpath */
}

%code requires {
#include "pkc.h"
#include "ast.h"

typedef struct ParseCtx ParseCtx;

/* The value of an integer literal. */
typedef struct IntLit {
	int64_t value; /* the value (INT64_MAX when it overflowed) */
	bool overflow; /* the literal does not fit in int64 */
} IntLit;

/* A decoded string literal (arena). */
typedef struct StrLit {
	const char *text; /* NUL-terminated contents, escapes decoded */
	size_t len;       /* bytes (the contents may hold no NUL: they are errors) */
	bool bad;         /* the literal had lexical errors (reported): do not use it */
} StrLit;

/* State of the lexer (lexer.re) over one source file. */
typedef struct Lexer {
	Compiler *cc;                /* diagnostics, interner, limits */
	const char *file;            /* interned path, for Locs */
	const unsigned char *cur;    /* re2c cursor: next byte to scan */
	const unsigned char *mar;    /* re2c marker: backtracking point */
	const unsigned char *lim;    /* end of the text (its terminating NUL) */
	const unsigned char *tok;    /* start of the token being scanned */
	const unsigned char *bol;    /* start of the current line */
	int line;                    /* current line, 1-based */
	int enc_err_line;            /* last line an encoding error was reported on */
	int prev_kind;               /* kind of the last token returned (for '//') */
	int prev2_kind;              /* kind of the token before it */
	int prev_line;               /* line of the last token returned */
	bool top_expr;               /* outside brackets, in a const value or requires clause */
	char *opens;                 /* stack of open brackets: '(', '[' or '{' */
	Loc *open_locs;              /* where each open bracket is */
	bool *open_expr;             /* whether expressions are written directly inside each */
	int depth;                   /* brackets open */
	int max_depth;               /* nesting limit (cc->max_nesting) */
	bool held;                   /* synthesized closers are being returned before held_kind */
	int held_kind;               /* the token that found brackets open (item keyword or end of file) */
	Loc held_loc;                /* its location */
	const char *held_text;       /* its spelling */
	ptrdiff_t held_len;          /* bytes of held_text */
	bool quiet;                  /* the last token follows a lexer-reported error: no syntax error for it */
	bool dead;                   /* fatal lexical error: the rest of the file reads as end of file */
	char *sbuf;                  /* string literal being decoded (malloc; freed by lexer_free) */
	size_t slen;                 /* bytes in sbuf */
	size_t scap;                 /* bytes allocated for sbuf */
	Loc last;                    /* location of the last token returned */
	Loc before;                  /* location of the token before that */
	const char *last_text;       /* its spelling (not NUL-terminated) */
	ptrdiff_t last_len;          /* bytes of last_text */
} Lexer;

/* An identifier with its location (lists of names). */
typedef struct NameLoc {
	const char *name; /* interned */
	Loc loc;          /* where it is written */
} NameLoc;
}

%code provides {
void lexer_init(Lexer *L, Compiler *cc, Source *src);
void lexer_free(Lexer *L);
/* Returns the next token kind, its value in *val (val may be NULL) and its
 * location in *loc. */
int lexer_next(Lexer *L, YYSTYPE *val, Loc *loc);
}

%code {
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse.h"

/* Includes may nest this deep (§3.2). */
#define MAX_INCLUDE_DEPTH 32

#define YYMAXDEPTH 20000
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                      \
	do {                                                             \
		if (N) {                                                 \
			(Cur) = YYRHSLOC(Rhs, 1);                        \
			loc_extend(&(Cur), YYRHSLOC(Rhs, N));            \
		} else {                                                 \
			(Cur) = YYRHSLOC(Rhs, 0);                        \
			(Cur).col += (Cur).len;                          \
			(Cur).len = 1;                                   \
		}                                                        \
	} while (0)
#define YYLOCATION_PRINT(File, Loc) ((void)0)

static int yylex(YYSTYPE *val, Loc *loc, ParseCtx *pc);
static void yyerror(Loc *loc, ParseCtx *pc, const char *msg);

static void do_include(ParseCtx *pc, StrLit path, Loc loc);
}

%define api.pure full
%define api.token.prefix {T_}
%define api.location.type {Loc}
%define parse.error custom
%define parse.lac full
%locations
%header
%param {ParseCtx *pc}
%expect 0

%initial-action {
	(void)yynerrs;
	@$ = (Loc){pc->src->path, 1, 1, 1};
}

%union {
	IntLit ival;         /* INT */
	double fval;         /* FLOAT */
	StrLit str;          /* STRING */
	const char *name;    /* IDENT (interned) */
	DType dtype;         /* DTYPE */
	AstOp op;            /* operator nonterminals */
	ParamMode mode;      /* parameter mode */
	AstExpr *expr;       /* expressions */
	AstStmt *stmt;       /* statements */
	AstType *type;       /* types */
	AstParam *param;     /* a parameter */
	AstArg *arg;         /* a call argument */
	AstKeyVal *kv;       /* a params(...) entry */
	NameLoc nl;          /* an identifier with its location */
	NameLoc *nlp;        /* the same, in the arena (list elements) */
	Vec list;            /* lists of any of the above */
}

/* ---- tokens ---- */
%token <name> IDENT "identifier"
%token <ival> INT "integer literal"
%token <fval> FLOAT "floating-point literal"
%token <str> STRING "string literal"
%token <dtype> DTYPE "dtype"
%token CONST "const" KERNEL "kernel" INCLUDE "include" FN "fn" RETURN "return"
%token IN "in" OUT "out" INOUT "inout" PREFETCH "prefetch"
%token LET "let" VAR "var" IF "if" ELSE "else" WHEN "when" FOR "for" WHILE "while"
%token BREAK "break" CONTINUE "continue"
%token GRID "grid" SPEC "spec" SCRATCH "scratch" PARAMS "params" SEMANTICS "semantics"
%token REQUIRES "requires"
%token TRUE "true" FALSE "false" NONE "None" INF "inf" NAN "nan"
%token AND "and" OR "or" NOT "not"
%token PARALLEL "parallel" ARBITRARY "arbitrary"
%token ELLIPSIS "..." ARROW "->"
%token EQ "==" NE "!=" LE "<=" GE ">=" SHL "<<" SHR ">>" POW "**" FLOORDIV "//"
%token ADDEQ "+=" SUBEQ "-=" MULEQ "*=" DIVEQ "/="
/* Never lexed: the parser's first token, which says what to parse. */
%token FILE_START "start of a file" EXPR_START "start of an expression"

%type <expr> expr or_expr and_expr not_expr comparison cmp_chain bit_or bit_xor bit_and shift arith
%type <expr> term unary power postfix primary idx step
%type <op> cmp_op mul_op assign_op
%type <stmt> stmt if_stmt
%type <type> type opt_ret
%type <param> param
%type <arg> arg
%type <kv> kv
%type <nl> name
%type <mode> mode
%type <dtype> opt_dtype
%type <list> stmts block params opt_params exprs opt_exprs tuple_items args opt_args index
%type <list> names opt_names opt_bdims bdims axis_sems kvs
%type <nlp> axis_sem

%start input

%%

/* A file, or one expression (a -D value, parse_expr_line).  (A token
 * first, rather than a choice in the first state, so that the file's first
 * state still reduces the empty file and recovers from errors at once.) */
input
	: FILE_START file
	| EXPR_START expr                      { pc->expr = $2; }
	;

/* file = { item } ;
 * Items are appended to the output as they are parsed, so an aborted parse
 * still yields the items before the error. */
file
	: %empty
	| file item
	| file error
	;

/* item = include | const_decl | kernel | fn ;
 * include    = "include" STRING ";" ;
 * const_decl = "const" IDENT [ ":" DTYPE ] "=" expr ";" ;
 * fn         = "fn" IDENT "(" [ param { "," param } [ "," ] ] ")" [ "->" type ] block ; */
item
	: include_kw STRING ';'                { do_include(pc, $2, @2); }
	| const_kw name opt_dtype '=' expr ';' { add_const(pc, $2, $3, $5); }
	| kernel
	| fn_kw name '(' opt_params ')' opt_ret block { add_fn(pc, $2, $4, $6, $7); }
	| fn_kw name '(' error ')' opt_ret block { add_fn(pc, $2, (Vec){0}, $6, $7); }
	;

opt_ret
	: %empty                               { $$ = NULL; }
	| ARROW type                           { $$ = $2; }
	;

/* An item keyword is a sure synchronisation point after an error (the lexer
 * sees to it that no bracket is open there): report the next error at once. */
include_kw
	: INCLUDE                              { yyerrok; }
	;

const_kw
	: CONST                                { yyerrok; }
	;

kernel_kw
	: KERNEL                               { yyerrok; }
	;

fn_kw
	: FN                                   { yyerrok; }
	;

opt_dtype
	: %empty                               { $$ = DT_NONE; }
	| ':' DTYPE                            { $$ = $2; }
	;

name
	: IDENT                                { $$ = (NameLoc){$1, @1}; }
	;

/* kernel = "kernel" IDENT "(" [ param { "," param } [ "," ] ] ")" { clause } block ; */
kernel
	: kernel_head clauses block            { kernel_end(pc, $3); }
	;

kernel_head
	: kernel_kw name '(' opt_params ')'    { kernel_begin(pc, $2.loc, $2.name, $4); }
	| kernel_kw name '(' error ')'         { kernel_begin(pc, $2.loc, $2.name, (Vec){0}); }
	;

opt_params
	: %empty                               { $$ = (Vec){0}; }
	| params opt_comma                     { $$ = $1; }
	;

params
	: param                                { $$ = list1(pc, $1); }
	| params ',' param                     { $$ = $1; list_push(pc, &$$, $3); }
	;

opt_comma
	: %empty
	| ','
	;

/* param = IDENT ":" [ "in" | "out" | "inout" | "prefetch" ] type ; */
param
	: name ':' mode type {
		$$ = arena_alloc(pc->cc->arena, sizeof *$$);
		$$->loc = $1.loc;
		$$->name = $1.name;
		$$->mode = $3;
		$$->type = $4;
	}
	;

mode
	: %empty                               { $$ = PM_SCALAR; }
	| IN                                   { $$ = PM_IN; }
	| OUT                                  { $$ = PM_OUT; }
	| INOUT                                { $$ = PM_INOUT; }
	| PREFETCH                             { $$ = PM_PREFETCH; }
	;

/* type = ( DTYPE | IDENT ) [ "[" ( expr { "," expr } | "..." ) "]" ] ;
 * (IDENT: a const holding a dtype; "...": any shape, for fn parameters) */
type
	: DTYPE                                { $$ = mk_type(pc, @$, $1, false, (Vec){0}); }
	| DTYPE '[' exprs ']'                  { $$ = mk_type(pc, @$, $1, true, $3); }
	| DTYPE '[' ']'                        { $$ = mk_type(pc, @$, $1, true, (Vec){0}); }
	| DTYPE '[' ELLIPSIS ']'               { $$ = mk_type(pc, @$, $1, true, (Vec){0}); $$->any_shape = true; }
	| IDENT                                { $$ = mk_type(pc, @$, DT_NONE, false, (Vec){0}); $$->dtype_name = $1; }
	| IDENT '[' exprs ']'                  { $$ = mk_type(pc, @$, DT_NONE, true, $3); $$->dtype_name = $1; }
	| IDENT '[' ']'                        { $$ = mk_type(pc, @$, DT_NONE, true, (Vec){0}); $$->dtype_name = $1; }
	| IDENT '[' ELLIPSIS ']'               { $$ = mk_type(pc, @$, DT_NONE, true, (Vec){0}); $$->dtype_name = $1; $$->any_shape = true; }
	;

/* clause = "grid" "(" [ expr { "," expr } [","] ] ")"
 *        | "semantics" "(" axis_sem { "," axis_sem } ")"
 *        | "spec" IDENT ":" "[" bdim { "," bdim } "]" index_map
 *        | "scratch" IDENT ":" type
 *        | "params" "(" IDENT "=" expr { "," IDENT "=" expr } ")"
 *        | "requires" expr ;
 * axis_sem  = "parallel" | "arbitrary" ;   bdim = expr | "None" ;
 * index_map = "(" [ IDENT { "," IDENT } ] ")" "->" "(" [ expr { "," expr } [","] ] ")" ; */
clauses
	: %empty
	| clauses clause
	| clauses error                        /* resynchronises at the next clause or the body */
	;

clause
	: GRID '(' opt_exprs ')' {
		clause_once(pc, &pc->kern->has_grid, @1, pc->kern->grid_loc, "grid");
		pc->kern->grid_loc = @1;
		pc->grid = $3;
	}
	| GRID '(' error ')' {
		clause_once(pc, &pc->kern->has_grid, @1, pc->kern->grid_loc, "grid");
		pc->kern->grid_loc = @1;
	}
	| SEMANTICS '(' axis_sems ')' {
		AstKernel *k = pc->kern;
		clause_once(pc, &k->has_semantics, @1, k->semantics_loc, "semantics");
		k->semantics_loc = @1;
		k->nsemantics = $3.len;
		k->semantics = arena_alloc(pc->cc->arena, (size_t)$3.len * sizeof *k->semantics + 1);
		k->semantics_locs = arena_alloc(pc->cc->arena, (size_t)$3.len * sizeof(Loc) + 1);
		for (int i = 0; i < $3.len; i++) {
			const NameLoc *a = $3.items[i];
			k->semantics[i] = a->name == pc->arbitrary_name ? AXIS_ARBITRARY : AXIS_PARALLEL;
			k->semantics_locs[i] = a->loc;
		}
	}
	| SEMANTICS '(' error ')' {
		clause_once(pc, &pc->kern->has_semantics, @1, pc->kern->semantics_loc, "semantics");
		pc->kern->semantics_loc = @1;
	}
	| SPEC name ':' '[' opt_bdims ']' '(' opt_names ')' ARROW '(' opt_exprs ')' {
		AstSpec *s = arena_alloc(pc->cc->arena, sizeof *s);
		s->loc = @1;
		s->operand = $2.name;
		s->operand_loc = $2.loc;
		LIST_TO(pc, s->block, s->nblock, $5);
		s->npids = $8.len;
		s->pids = arena_alloc(pc->cc->arena, (size_t)$8.len * sizeof *s->pids + 1);
		s->pid_locs = arena_alloc(pc->cc->arena, (size_t)$8.len * sizeof *s->pid_locs + 1);
		for (int i = 0; i < $8.len; i++) {
			NameLoc *nl = $8.items[i];
			s->pids[i] = nl->name;
			s->pid_locs[i] = nl->loc;
		}
		LIST_TO(pc, s->index, s->nindex, $12);
		list_push(pc, &pc->specs, s);
	}
	| SCRATCH name ':' type {
		AstScratch *s = arena_alloc(pc->cc->arena, sizeof *s);
		s->loc = $2.loc;
		s->name = $2.name;
		s->type = $4;
		list_push(pc, &pc->scratch, s);
	}
	| PARAMS '(' kvs ')' {
		clause_once(pc, &pc->seen_params, @1, pc->params_loc, "params");
		pc->params_loc = @1;
		for (int i = 0; i < $3.len; i++)
			list_push(pc, &pc->cparams, $3.items[i]);
	}
	| PARAMS '(' error ')' {
		clause_once(pc, &pc->seen_params, @1, pc->params_loc, "params");
		pc->params_loc = @1;
	}
	| REQUIRES expr                        { list_push(pc, &pc->requires, $2); }
	;

axis_sems
	: axis_sem                             { $$ = list1(pc, $1); }
	| axis_sems ',' axis_sem               { $$ = $1; list_push(pc, &$$, $3); }
	;

axis_sem
	: PARALLEL                             { $$ = mk_nameloc(pc, pc->parallel_name, @1); }
	| ARBITRARY                            { $$ = mk_nameloc(pc, pc->arbitrary_name, @1); }
	;

opt_bdims /* empty: the block of a rank-0 array */
	: %empty                               { $$ = (Vec){0}; }
	| bdims                                { $$ = $1; }
	;

bdims
	: expr                                 { $$ = list1(pc, $1); }
	| bdims ',' expr                       { $$ = $1; list_push(pc, &$$, $3); }
	;

opt_names
	: %empty                               { $$ = (Vec){0}; }
	| names                                { $$ = $1; }
	;

names
	: IDENT                                { $$ = list1(pc, mk_nameloc(pc, $1, @1)); }
	| names ',' IDENT                      { $$ = $1; list_push(pc, &$$, mk_nameloc(pc, $3, @3)); }
	;

kvs
	: kv                                   { $$ = list1(pc, $1); }
	| kvs ',' kv                           { $$ = $1; list_push(pc, &$$, $3); }
	;

kv
	: IDENT '=' expr {
		$$ = arena_alloc(pc->cc->arena, sizeof *$$);
		$$->loc = @1;
		$$->key = $1;
		$$->value = $3;
	}
	;

/* block = "{" { stmt } "}" ; */
block
	: '{' stmts '}'                        { $$ = $2; }
	| '{' stmts error '}'                  { $$ = $2; yyerrok; }
	;

stmts
	: %empty                               { $$ = (Vec){0}; }
	| stmts stmt                           { $$ = $1; if ($2) list_push(pc, &$$, $2); }
	;

/* stmt = "let" IDENT [ ":" type ] "=" expr ";"
 *      | "let" ( IDENT "," IDENT { "," IDENT } | "(" IDENT "," IDENT { "," IDENT } ")" ) "=" expr ";"
 *      | "var" IDENT [ ":" type ] "=" expr ";"
 *      | postfix ( "=" | "+=" | "-=" | "*=" | "/=" ) expr ";"
 *      | expr ";"
 *      | "if" expr block [ "else" ( block | if_stmt ) ]
 *      | "when" expr block
 *      | "for" IDENT "in" "range" "(" expr [ "," expr [ "," expr ] ] ")" block
 *      | "while" expr block
 *      | "break" ";" | "continue" ";" | "return" expr ";"
 *      | block ; */
stmt
	: LET name '=' expr ';'                { $$ = mk_decl(pc, AS_LET, @1, $2, NULL, $4); }
	| LET name ':' type '=' expr ';'       { $$ = mk_decl(pc, AS_LET, @1, $2, $4, $6); }
	| LET name ',' names '=' expr ';'      { $$ = mk_unpack(pc, @1, $2, $4, $6); }
	| LET '(' name ',' names ')' '=' expr ';'
	                                       { $$ = mk_unpack(pc, @1, $3, $5, $8); }
	| VAR name '=' expr ';'                { $$ = mk_decl(pc, AS_VAR, @1, $2, NULL, $4); }
	| VAR name ':' type '=' expr ';'       { $$ = mk_decl(pc, AS_VAR, @1, $2, $4, $6); }
	| postfix assign_op expr ';'           { $$ = mk_assign(pc, @1, $1, $2, $3); }
	| expr ';' {
		$$ = mk_stmt(pc, AS_EXPR, @1, NULL, NULL);
		$$->value = $1;
	}
	| if_stmt                              { $$ = $1; }
	| WHEN expr block {
		$$ = mk_stmt(pc, AS_IF, @1, &$3, NULL);
		$$->value = $2;
		$$->is_when = true;
	}
	| FOR name IN name '(' expr ')' block  { $$ = mk_for(pc, @1, $2, $4, NULL, $6, NULL, $8); }
	| FOR name IN name '(' expr ',' expr ')' block
	                                       { $$ = mk_for(pc, @1, $2, $4, $6, $8, NULL, $10); }
	| FOR name IN name '(' expr ',' expr ',' expr ')' block
	                                       { $$ = mk_for(pc, @1, $2, $4, $6, $8, $10, $12); }
	| WHILE expr block {
		$$ = mk_stmt(pc, AS_WHILE, @1, &$3, NULL);
		$$->value = $2;
	}
	| BREAK ';'                            { $$ = mk_stmt(pc, AS_BREAK, @1, NULL, NULL); }
	| RETURN expr ';'                      { $$ = mk_stmt(pc, AS_RETURN, @1, NULL, NULL); $$->value = $2; }
	| CONTINUE ';'                         { $$ = mk_stmt(pc, AS_CONTINUE, @1, NULL, NULL); }
	| block                                { $$ = mk_stmt(pc, AS_BLOCK, @1, &$1, NULL); }
	| error ';'                            { $$ = NULL; yyerrok; }
	| error block                          { $$ = NULL; yyerrok; }
	;

if_stmt
	: IF expr block {
		$$ = mk_stmt(pc, AS_IF, @1, &$3, NULL);
		$$->value = $2;
	}
	| IF expr block ELSE block {
		$$ = mk_stmt(pc, AS_IF, @1, &$3, &$5);
		$$->value = $2;
		$$->has_else = true;
	}
	| IF expr block ELSE if_stmt {
		Vec els = list1(pc, $5);
		$$ = mk_stmt(pc, AS_IF, @1, &$3, &els);
		$$->value = $2;
		$$->has_else = true;
	}
	;

assign_op
	: '='                                  { $$ = OP_COUNT; }
	| ADDEQ                                { $$ = OP_ADD; }
	| SUBEQ                                { $$ = OP_SUB; }
	| MULEQ                                { $$ = OP_MUL; }
	| DIVEQ                                { $$ = OP_DIV; }
	;

/* expr    = or_expr ;
 * or_expr = and_expr { "or" and_expr } ;  and_expr = not_expr { "and" not_expr } ;
 * not_expr = "not" not_expr | comparison ; */
expr
	: or_expr
	;

or_expr
	: and_expr
	| or_expr OR and_expr                  { $$ = mk_binary(pc, OP_OR, @2, $1, $3); }
	;

and_expr
	: not_expr
	| and_expr AND not_expr                { $$ = mk_binary(pc, OP_AND, @2, $1, $3); }
	;

not_expr
	: comparison
	| NOT not_expr                         { $$ = mk_unary(pc, OP_NOT, @$, $2); }
	;

/* comparison = bit_or [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) bit_or ] ;
 * Chains (a < b < c) parse, for a clear message, and are rejected. */
comparison
	: bit_or
	| cmp_chain
	;

cmp_chain
	: bit_or cmp_op bit_or                 { $$ = mk_binary(pc, $2, @2, $1, $3); }
	| cmp_chain cmp_op bit_or {
		error_at(pc->cc, @2, "comparison operators cannot be chained; combine the comparisons "
		         "with 'and' [§7.1]");
		$$ = mk_binary(pc, $2, @2, $1, $3);
	}
	;

cmp_op
	: EQ                                   { $$ = OP_EQ; }
	| NE                                   { $$ = OP_NE; }
	| '<'                                  { $$ = OP_LT; }
	| LE                                   { $$ = OP_LE; }
	| '>'                                  { $$ = OP_GT; }
	| GE                                   { $$ = OP_GE; }
	;

/* bit_or = bit_xor { "|" bit_xor } ;  bit_xor = bit_and { "^" bit_and } ;
 * bit_and = shift { "&" shift } ;  shift = arith { ( "<<" | ">>" ) arith } ; */
bit_or
	: bit_xor
	| bit_or '|' bit_xor                   { $$ = mk_binary(pc, OP_BITOR, @2, $1, $3); }
	;

bit_xor
	: bit_and
	| bit_xor '^' bit_and                  { $$ = mk_binary(pc, OP_BITXOR, @2, $1, $3); }
	;

bit_and
	: shift
	| bit_and '&' shift                    { $$ = mk_binary(pc, OP_BITAND, @2, $1, $3); }
	;

shift
	: arith
	| shift SHL arith                      { $$ = mk_binary(pc, OP_SHL, @2, $1, $3); }
	| shift SHR arith                      { $$ = mk_binary(pc, OP_SHR, @2, $1, $3); }
	;

/* arith = term { ( "+" | "-" ) term } ;
 * term  = unary { ( "*" | "/" | "//" | "%" | "@" ) unary } ; */
arith
	: term
	| arith '+' term                       { $$ = mk_binary(pc, OP_ADD, @2, $1, $3); }
	| arith '-' term                       { $$ = mk_binary(pc, OP_SUB, @2, $1, $3); }
	;

term
	: unary
	| term mul_op unary                    { $$ = mk_binary(pc, $2, @2, $1, $3); }
	;

mul_op
	: '*'                                  { $$ = OP_MUL; }
	| '/'                                  { $$ = OP_DIV; }
	| FLOORDIV                             { $$ = OP_FLOORDIV; }
	| '%'                                  { $$ = OP_MOD; }
	| '@'                                  { $$ = OP_MATMUL; }
	;

/* unary = ( "-" | "+" | "~" ) unary | power ;
 * power = postfix [ "**" unary ] ;   (right-assoc; -x**2 = -(x**2)) */
unary
	: power
	| '-' unary                            { $$ = mk_unary(pc, OP_NEG, @$, $2); }
	| '+' unary                            { $$ = mk_unary(pc, OP_PLUS, @$, $2); }
	| '~' unary                            { $$ = mk_unary(pc, OP_BITNOT, @$, $2); }
	;

power
	: postfix
	| postfix POW unary                    { $$ = mk_binary(pc, OP_POW, @2, $1, $3); }
	;

/* postfix = primary { "(" [ args ] ")" | "[" index "]" | "." IDENT } ;
 * args  = arg { "," arg } [ "," ] ;   arg = [ IDENT "=" ] expr ;
 * index = idx { "," idx } [ "," ] ;   idx = "..." | "None" | [ expr ] ":" [ expr ] | expr ; */
postfix
	: primary
	| postfix '(' opt_args ')'             { $$ = mk_call(pc, @$, $1, $3); }
	| postfix '[' index opt_comma ']'      { $$ = mk_index(pc, @$, $1, $3); }
	| postfix '.' IDENT                    { $$ = mk_field(pc, @$, $1, $3); }
	;

opt_args
	: %empty                               { $$ = (Vec){0}; }
	| args opt_comma                       { $$ = $1; }
	;

args
	: arg                                  { $$ = list1(pc, $1); }
	| args ',' arg                         { $$ = $1; list_push(pc, &$$, $3); }
	;

arg
	: expr                                 { $$ = mk_arg(pc, @1, NULL, $1); }
	| IDENT '=' expr                       { $$ = mk_arg(pc, @1, $1, $3); }
	;

index
	: idx                                  { $$ = list1(pc, $1); }
	| index ',' idx                        { $$ = $1; list_push(pc, &$$, $3); }
	;

/* idx = expr | "..." | [ expr ] ":" [ expr ] [ step ] ;
 * "None" is an expression (primary), so it needs no rule of its own here. */
idx
	: expr
	| ELLIPSIS                             { $$ = mk_leaf(pc, AE_ELLIPSIS, @1); }
	| ':'                                  { $$ = mk_slice(pc, @$, NULL, NULL, NULL); }
	| ':' expr                             { $$ = mk_slice(pc, @$, NULL, $2, NULL); }
	| expr ':'                             { $$ = mk_slice(pc, @$, $1, NULL, NULL); }
	| expr ':' expr                        { $$ = mk_slice(pc, @$, $1, $3, NULL); }
	| ':' step                             { $$ = mk_slice(pc, @$, NULL, NULL, $2); }
	| ':' expr step                        { $$ = mk_slice(pc, @$, NULL, $2, $3); }
	| expr ':' step                        { $$ = mk_slice(pc, @$, $1, NULL, $3); }
	| expr ':' expr step                   { $$ = mk_slice(pc, @$, $1, $3, $4); }
	;

/* step = ":" [ expr ] ;  (a slice's third part; lo:hi: has none) */
step
	: ':'                                  { $$ = NULL; }
	| ':' expr                             { $$ = $2; }
	;

/* primary = INT | FLOAT | "true" | "false" | "inf" | "nan" | "None" | IDENT | DTYPE | STRING
 *         | "(" expr ")" | "(" [ expr "," { expr "," } [ expr ] ] ")" ;  (tuples: () (a,) (a, b))
 *         | "[" expr { "," expr } [ "," ] "]" ;  (a list: a tuple, as concatenate([a, b]) takes) */
primary
	: INT                                  { $$ = mk_int(pc, $1, @1); }
	| FLOAT                                { $$ = mk_float(pc, $1, @1); }
	| TRUE                                 { $$ = mk_bool(pc, true, @1); }
	| FALSE                                { $$ = mk_bool(pc, false, @1); }
	| INF                                  { $$ = mk_float(pc, (double)INFINITY, @1); }
	| NAN                                  { $$ = mk_float(pc, (double)NAN, @1); }
	| NONE                                 { $$ = mk_leaf(pc, AE_NONE, @1); }
	| IDENT                                { $$ = mk_name(pc, $1, @1); }
	| DTYPE                                { $$ = mk_dtype(pc, $1, @1); }
	| STRING                               { $$ = mk_string(pc, $1.bad ? "" : $1.text, @1); }
	| '(' expr ')'                         { $$ = $2; }
	| '(' ')'                              { $$ = mk_tuple(pc, @$, (Vec){0}); }
	| '(' expr ',' ')'                     { $$ = mk_tuple(pc, @$, list1(pc, $2)); }
	| '[' tuple_items opt_comma ']'        { $$ = mk_tuple(pc, @$, $2); }
	| '(' expr ',' tuple_items opt_comma ')' {
		Vec v = list1(pc, $2);
		for (int i = 0; i < $4.len; i++)
			list_push(pc, &v, $4.items[i]);
		$$ = mk_tuple(pc, @$, v);
	}
	;

tuple_items
	: expr                                 { $$ = list1(pc, $1); }
	| tuple_items ',' expr                 { $$ = $1; list_push(pc, &$$, $3); }
	;

/* [ expr { "," expr } [","] ] */
opt_exprs
	: %empty                               { $$ = (Vec){0}; }
	| exprs opt_comma                      { $$ = $1; }
	;

exprs
	: expr                                 { $$ = list1(pc, $1); }
	| exprs ',' expr                       { $$ = $1; list_push(pc, &$$, $3); }
	;

%%

/* ---- include ----------------------------------------------------------- */

static void parse_source(Compiler *cc, Source *src, Vec *items, ParseCtx *parent, const char *canon);

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Canonical form of a path (for cycle detection), interned; the path itself
 * if it cannot be resolved. */
static const char *canonical(Compiler *cc, const char *path)
{
	char *real = realpath(path, NULL);
	const char *c = intern_cstr(cc->strings, real ? real : path);
	free(real);
	return c;
}

/* include "path";  -- the path is relative to the including file's
 * directory (or absolute).  The included file's items are spliced in at the
 * include's position. */
static void do_include(ParseCtx *pc, StrLit path, Loc loc)
{
	Compiler *cc = pc->cc;
	if (path.bad)
		return;
	if (path.len == 0 || strlen(path.text) != path.len) {
		error_at(cc, loc, "invalid include path [§3.2]");
		return;
	}
	if (pc->include_depth >= MAX_INCLUDE_DEPTH) {
		error_at(cc, loc, "includes nested too deeply (limit %d) [§3.2]", MAX_INCLUDE_DEPTH);
		return;
	}
	const char *full = path.text;
	if (path.text[0] != '/') {
		const char *from = pc->src->path;
		const char *slash = strrchr(from, '/');
		if (slash && strcmp(from, "-") != 0)
			full = arena_printf(cc->arena, "%.*s/%s", (int)(slash - from), from, path.text);
		/* not next to the including file: the -I directories, in order */
		for (int i = 0; !is_file(full) && i < cc->include_dirs.len; i++) {
			const char *dir = cc->include_dirs.items[i];
			const char *cand = arena_printf(cc->arena, "%s/%s", dir, path.text);
			if (is_file(cand))
				full = cand;
		}
	}
	const char *canon = canonical(cc, full);
	for (ParseCtx *p = pc; p; p = p->parent)
		if (p->canon == canon) {
			error_at(cc, loc, "include cycle: '%s' includes itself [§3.2]", path.text);
			return;
		}
	Source *src = source_load(cc, intern_cstr(cc->strings, full), loc);
	if (!src)
		return;
	ParseCtx *outer = pc;
	(void)parse_source(cc, src, outer->items, outer, canon);
}

/* ---- the lexer interface ----------------------------------------------- */

/* Tracks where the parse is, for the clause cited in syntax errors and for
 * the header rule below. */
static void track(ParseCtx *pc, int kind)
{
	/* a syntax error at this token is about the construct it follows */
	pc->err_section = pc->section;
	switch (kind) {
	case T_INCLUDE: pc->section = 32; pc->in_kernel = pc->in_header = false; break;
	case T_CONST: pc->section = 33; pc->in_kernel = pc->in_header = false; break;
	case T_KERNEL:
	case T_FN:
		pc->section = kind == T_KERNEL ? 34 : 37;
		pc->in_kernel = true;
		pc->in_header = pc->header_error = false;
		break;
	case ';':
		if (pc->lex.depth == 0 && !pc->in_kernel)
			pc->section = 31;
		break;
	case ')':
		/* the parameter list closed: the clauses follow */
		if (pc->in_kernel && (pc->section == 34 || pc->section == 37) && pc->lex.depth == 0)
			pc->in_header = true;
		break;
	case '{':
		if (pc->in_kernel && pc->lex.depth <= 1) {
			pc->section = 35;
			pc->in_header = false;
		}
		break;
	case '}':
		if (pc->in_kernel && pc->lex.depth == 0) {
			pc->section = 31;
			pc->in_kernel = false;
		}
		break;
	default: break;
	}
}

/* The parser's lexer: the lexer's tokens, plus one repair.  A kernel whose
 * header runs into the next item ('kernel', 'const', 'include') has no
 * body: report that (unless an error in the header was reported already)
 * and hand the parser an empty body "{ }", so the next item is parsed
 * normally instead of being skipped. */
static int yylex(YYSTYPE *val, Loc *loc, ParseCtx *pc)
{
	int kind;
	if (pc->npending > 0) {
		kind = pc->pending[--pc->npending];
		*loc = pc->pending_loc;
		pc->quiet = true;
		track(pc, kind);
		return kind;
	}
	pc->quiet = false;
	kind = lexer_next(&pc->lex, val, loc);
	if (pc->in_header && (kind == T_KERNEL || kind == T_FN || kind == T_CONST || kind == T_INCLUDE)) {
		if (!pc->header_error && !pc->lex.quiet && !pc->cc->diag.stop)
			error_at(pc->cc, *loc, "expected '{' before '%s' [§3.4]",
			         kind == T_KERNEL ? "kernel" : kind == T_FN ? "fn" : kind == T_CONST ? "const" : "include");
		pc->pending[0] = kind; /* returned last */
		pc->pending[1] = '}';
		pc->npending = 2;
		pc->pending_loc = *loc;
		pc->quiet = true;
		kind = '{';
	}
	track(pc, kind);
	return kind;
}

/* ---- syntax errors ----------------------------------------------------- */

/* The one-character token a symbol kind stands for, or 0. */
static int char_token(yysymbol_kind_t k)
{
	const char *n = yysymbol_name(k);
	return n[0] == '\'' && n[1] && n[2] == '\'' && n[3] == 0 ? n[1] : 0;
}

/* Tokens that can start an expression: "expected expression" stands for them. */
static bool starts_expr(yysymbol_kind_t k)
{
	switch (k) {
	case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_IDENT: case YYSYMBOL_DTYPE:
	case YYSYMBOL_TRUE: case YYSYMBOL_FALSE: case YYSYMBOL_NONE: case YYSYMBOL_INF:
	case YYSYMBOL_NAN: case YYSYMBOL_NOT: case YYSYMBOL_STRING:
		return true;
	default: {
		int c = char_token(k);
		return c && strchr("(-+~[", c) != NULL;
	}
	}
}

/* Tokens that may continue a complete expression (binary operators, postfix
 * brackets, assignment): after an expression they are always possible, so
 * listing them helps nobody ("expected ';' before 'x'" is what one wants). */
static bool continues_expr(yysymbol_kind_t k)
{
	switch (k) {
	case YYSYMBOL_OR: case YYSYMBOL_AND: case YYSYMBOL_EQ: case YYSYMBOL_NE: case YYSYMBOL_LE:
	case YYSYMBOL_GE: case YYSYMBOL_SHL: case YYSYMBOL_SHR: case YYSYMBOL_POW:
	case YYSYMBOL_FLOORDIV: case YYSYMBOL_ADDEQ: case YYSYMBOL_SUBEQ: case YYSYMBOL_MULEQ:
	case YYSYMBOL_DIVEQ:
		return true;
	default: {
		int c = char_token(k);
		return c && strchr("=<>|^&+-*/%@([.", c) != NULL;
	}
	}
}

/* How a token kind is named in messages: keywords and punctuators quoted as
 * written, the rest described. */
static const char *describe(ParseCtx *pc, yysymbol_kind_t k)
{
	switch (k) {
	case YYSYMBOL_YYEOF: return "end of file";
	case YYSYMBOL_IDENT: return "identifier";
	case YYSYMBOL_INT: return "integer literal";
	case YYSYMBOL_FLOAT: return "floating-point literal";
	case YYSYMBOL_STRING: return "string literal";
	case YYSYMBOL_DTYPE: return "dtype";
	default: break;
	}
	/* Bison names char tokens "'c'" and the others by their alias */
	const char *n = yysymbol_name(k);
	if (char_token(k))
		return n;
	return arena_printf(pc->cc->arena, "'%s'", n);
}

/* The unexpected token as the user wrote it. */
static const char *token_text(ParseCtx *pc)
{
	const Lexer *L = &pc->lex;
	if (L->last_len > 40)
		return arena_printf(pc->cc->arena, "'%.37s...'", L->last_text);
	return arena_printf(pc->cc->arena, "'%.*s'", (int)L->last_len, L->last_text);
}

static int yyreport_syntax_error(const yypcontext_t *ctx, ParseCtx *pc)
{
	if (pc->lex.quiet || pc->quiet || pc->cc->diag.stop)
		return 0;
	if (pc->in_header)
		pc->header_error = true;
	Arena *A = pc->cc->arena;
	yysymbol_kind_t got = yypcontext_token(ctx);
	Loc loc = *yypcontext_location(ctx);
	yysymbol_kind_t exp[YYNTOKENS];
	int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
	if (n < 0)
		return n;

	const char *where = got == YYSYMBOL_YYEOF ? "at end of file"
	                    : arena_printf(A, "before %s", token_text(pc));
	int section = pc->err_section ? pc->err_section : 31;
	/* A missing terminator or closer is shown at the end of the line that
	 * lacks it, not at the start of the next line (like gcc). */
	const Loc *prev = &pc->lex.before;
	bool missing = false;
	for (int i = 0; i < n; i++)
		missing |= char_token(exp[i]) == ';' || char_token(exp[i]) == ')' || char_token(exp[i]) == ']';
	if ((missing || got == YYSYMBOL_YYEOF) && prev->line > 0 && prev->line < loc.line && prev->file == loc.file) {
		loc = *prev;
		loc.col += loc.len;
		loc.len = 1;
	}

	/* Sort the expectations: operands (all of them: "expression"),
	 * operators (after a complete operand: not worth listing), the rest. */
	bool has_int = false, has_ident = false;
	for (int i = 0; i < n; i++) {
		has_int |= exp[i] == YYSYMBOL_INT;
		has_ident |= exp[i] == YYSYMBOL_IDENT;
	}
	bool operand = has_int && has_ident;
	/* A keyword where a name (not an expression) may stand, a parameter
	 * named `out` say: say so. */
	const char *kw_note = "";
	if (has_ident && !operand && got != YYSYMBOL_IDENT && got != YYSYMBOL_YYEOF && pc->lex.last_len > 0 &&
	    (isalpha((unsigned char)pc->lex.last_text[0]) || pc->lex.last_text[0] == '_'))
		kw_note = arena_printf(A, "; %s is a keyword (§2.3)", token_text(pc));
	bool after_operand = false, clause = false;
	for (int i = 0; i < n; i++) {
		after_operand |= char_token(exp[i]) == '*';
		clause |= exp[i] == YYSYMBOL_GRID;
	}
	int nrest = 0;
	yysymbol_kind_t rest[YYNTOKENS];
	for (int i = 0; i < n; i++) {
		if (exp[i] == YYSYMBOL_YYerror || exp[i] == YYSYMBOL_YYUNDEF)
			continue;
		if (exp[i] == YYSYMBOL_YYEOF && n > 1)
			continue; /* "expected end of file" helps nobody */
		if (operand && starts_expr(exp[i]))
			continue;
		if (after_operand && continues_expr(exp[i]))
			continue;
		if (clause && char_token(exp[i]) != '{')
			continue;
		rest[nrest++] = exp[i];
	}
	const char *list = NULL;
	if (operand) {
		list = "expression";
		section = 36;
		if (nrest > 2)
			nrest = 0;
	} else if (clause) {
		/* between a kernel's parameters and its body */
		list = "a clause";
	}
	if (nrest > 4)
		nrest = 0;
	for (int i = 0; i < nrest; i++) {
		const char *d = describe(pc, rest[i]);
		if (!list)
			list = d;
		else if (i == nrest - 1)
			list = arena_printf(A, "%s or %s", list, d);
		else
			list = arena_printf(A, "%s, %s", list, d);
	}
	if (list)
		error_at(pc->cc, loc, "expected %s %s%s [§%d.%d]", list, where, kw_note, section / 10, section % 10);
	else if (got == YYSYMBOL_YYEOF)
		error_at(pc->cc, loc, "unexpected end of file [§%d.%d]", section / 10, section % 10);
	else
		error_at(pc->cc, loc, "unexpected %s [§%d.%d]", token_text(pc), section / 10, section % 10);
	return 0;
}

/* Called by Bison for what yyreport_syntax_error does not cover: running
 * out of parser stack. */
static void yyerror(Loc *loc, ParseCtx *pc, const char *msg)
{
	(void)msg;
	if (pc->lex.quiet || pc->cc->diag.stop || pc->depth_reported)
		return;
	/* the parser's stack (YYMAXDEPTH) ran out: a chain like else-if or
	 * unary operators that long nests too deeply whatever the limit */
	error_at(pc->cc, *loc, "program nested too deeply for the parser [§2.8]");
	pc->depth_reported = true;
}

/* ---- entry points ------------------------------------------------------ */

/* A parser over src, its lexer at the start of the text, that parses what
 * `start` (FILE_START, EXPR_START) says (free with ctx_free). */
static ParseCtx *ctx_new(Compiler *cc, Source *src, int start)
{
	ParseCtx *pc = xmalloc(sizeof *pc);
	memset(pc, 0, sizeof *pc);
	pc->cc = cc;
	pc->src = src;
	int nest = cc->max_nesting > 0 ? cc->max_nesting : 256;
	pc->depth_limit = nest * 4;
	pc->range_name = intern_cstr(cc->strings, "range");
	pc->parallel_name = intern_cstr(cc->strings, "parallel");
	pc->arbitrary_name = intern_cstr(cc->strings, "arbitrary");
	pc->section = 31;
	pc->pending[0] = start;
	pc->npending = 1;
	pc->pending_loc = (Loc){src->path, 1, 1, 1};
	lexer_init(&pc->lex, cc, src);
	return pc;
}

static void ctx_free(ParseCtx *pc)
{
	lexer_free(&pc->lex);
	free(pc);
}

static void parse_source(Compiler *cc, Source *src, Vec *items, ParseCtx *parent, const char *canon)
{
	ParseCtx *pc = ctx_new(cc, src, T_FILE_START);
	pc->items = items;
	pc->parent = parent;
	pc->canon = canon;
	pc->include_depth = parent ? parent->include_depth + 1 : 0;
	(void)yyparse(pc);
	ctx_free(pc);
}

AstExpr *parse_expr_line(Compiler *cc, const Source *src, int line, int col)
{
	PKC_ASSERT(line >= 1 && line <= src->nlines && col >= 1);
	/* The lexer runs over a NUL-terminated copy of the line, so it stops at
	 * the line's end, and counts columns from the line's start. */
	const char *start = src->lines[line - 1];
	size_t n = line < src->nlines ? (size_t)(src->lines[line] - 1 - start) : (size_t)(src->text + src->size - start);
	PKC_ASSERT((size_t)col - 1 <= n);
	Source one = {.path = src->path, .text = arena_strndup(cc->arena, start, n), .size = n};
	ParseCtx *pc = ctx_new(cc, &one, T_EXPR_START);
	pc->lex.line = line;
	pc->lex.cur += col - 1;
	pc->lex.top_expr = true; /* '//' divides, as in a const's value (§2.2) */
	pc->section = 36; /* syntax errors cite §3.6, expressions */
	pc->pending_loc = (Loc){src->path, line, col, 1};
	int errors = cc->diag.nerrors;
	(void)yyparse(pc);
	AstExpr *e = cc->diag.nerrors == errors ? pc->expr : NULL;
	ctx_free(pc);
	return e;
}

AstFile *parse_file(Compiler *cc, Source *src)
{
	AstFile *f = arena_alloc(cc->arena, sizeof *f);
	Vec items = {0};
	const char *canon = strcmp(src->path, "-") == 0 ? src->path : canonical(cc, src->path);
	parse_source(cc, src, &items, NULL, canon);
	f->nitems = items.len;
	f->items = arena_alloc(cc->arena, (size_t)items.len * sizeof *f->items + 1);
	for (int i = 0; i < items.len; i++)
		f->items[i] = items.items[i];
	return f;
}
