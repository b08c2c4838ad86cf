/* ast.c - the AST's name tables and its printer (--emit=ast).
 *
 * The printed form is an indented S-expression, stable across versions so
 * tests can use it as a golden: one item, clause or statement per line,
 * expressions on one line, no source locations.  Its grammar:
 *
 *   (const NAME [DTYPE] EXPR)
 *   (kernel NAME
 *     (param NAME [in|out|inout] DTYPE [(dims EXPR...)])...
 *     [(grid EXPR...)] [(semantics parallel|arbitrary...)]
 *     (spec NAME (block EXPR...) (pids NAME...) (index EXPR...))...
 *     (scratch NAME DTYPE [(dims EXPR...)])... [(params (KEY EXPR)...)]
 *     (requires EXPR)...
 *     (body STMT...))
 *   STMT: (let|var NAME [(type DTYPE [(dims ...)])] EXPR)  (assign OP TARGET EXPR)
 *         (expr EXPR)  (if|when EXPR (then STMT...) [(else STMT...)])
 *         (for NAME (range LO HI STEP) (body STMT...))  (while EXPR (body STMT...))
 *         (block STMT...)
 *   EXPR: (int N) (float X) (bool true|false) (none) (ellipsis) (name N) (dtype D)
 *         (unary OP E) (binary OP L R) (call CALLEE ARG...) with ARG = E | (kw NAME E)
 *         (index BASE IDX...) (slice LO HI) (field BASE NAME) (tuple E...)
 *   A missing optional operand (slice bound, range lo/step) prints as _.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "types.h" /* dtype_str */

const char *const ast_op_spelling[OP_COUNT] = {
#define X(id, s) [OP_##id] = s,
	AST_OPS(X)
#undef X
};

static const char *op_str(AstOp op)
{
	return (int)op >= 0 && op < OP_COUNT ? ast_op_spelling[op] : "?";
}

static const char *name_str(const char *s)
{
	return s ? s : "?";
}

/* A double in the shortest form that reads back exactly, laid out like
 * Python's repr: fixed notation for exponents -4..15 (2500.0, 0.001),
 * scientific otherwise (1e-05, 1e+300). */
static void print_float(FILE *out, double d)
{
	if (isnan(d)) {
		fputs("nan", out);
		return;
	}
	if (isinf(d)) {
		fputs(d > 0 ? "inf" : "-inf", out);
		return;
	}
	char buf[64];
	int prec = 0;
	for (; prec < 17; prec++) {
		snprintf(buf, sizeof buf, "%.*e", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	int exp10 = atoi(strchr(buf, 'e') + 1);
	if (exp10 < -4 || exp10 >= 16) {
		fputs(buf, out);
		return;
	}
	int decimals = prec - exp10;
	snprintf(buf, sizeof buf, "%.*f", decimals > 0 ? decimals : 0, d);
	fputs(buf, out);
	if (decimals <= 0)
		fputs(".0", out);
}

static void print_expr(FILE *out, const AstExpr *e);

static void print_opt(FILE *out, const AstExpr *e)
{
	if (e)
		print_expr(out, e);
	else
		fputc('_', out);
}

static void print_exprs(FILE *out, AstExpr *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		fputc(' ', out);
		print_opt(out, v[i]);
	}
}

static void print_expr(FILE *out, const AstExpr *e)
{
	switch (e->kind) {
	case AE_INT:
		if (e->int_overflow)
			fputs("(int overflow)", out);
		else
			fprintf(out, "(int %lld)", (long long)e->ival);
		return;
	case AE_FLOAT:
		fputs("(float ", out);
		print_float(out, e->fval);
		fputc(')', out);
		return;
	case AE_BOOL:
		fprintf(out, "(bool %s)", e->ival ? "true" : "false");
		return;
	case AE_NONE:
		fputs("(none)", out);
		return;
	case AE_ELLIPSIS:
		fputs("(ellipsis)", out);
		return;
	case AE_NAME:
		fprintf(out, "(name %s)", name_str(e->name));
		return;
	case AE_DTYPE:
		fprintf(out, "(dtype %s)", dtype_str(e->dtype));
		return;
	case AE_STRING: /* the text as written would need escaping: its length says enough */
		fprintf(out, "(string %zu)", strlen(e->name));
		return;
	case AE_UNARY:
		fprintf(out, "(unary %s ", op_str(e->op));
		print_opt(out, e->lhs);
		fputc(')', out);
		return;
	case AE_BINARY:
		fprintf(out, "(binary %s ", op_str(e->op));
		print_opt(out, e->lhs);
		fputc(' ', out);
		print_opt(out, e->rhs);
		fputc(')', out);
		return;
	case AE_CALL:
		fputs("(call ", out);
		print_opt(out, e->lhs);
		for (int i = 0; i < e->nargs; i++) {
			fputc(' ', out);
			if (e->args[i].name) {
				fprintf(out, "(kw %s ", e->args[i].name);
				print_opt(out, e->args[i].value);
				fputc(')', out);
			} else {
				print_opt(out, e->args[i].value);
			}
		}
		fputc(')', out);
		return;
	case AE_INDEX:
		fputs("(index ", out);
		print_opt(out, e->lhs);
		print_exprs(out, e->items, e->nitems);
		fputc(')', out);
		return;
	case AE_SLICE:
		fputs("(slice ", out);
		print_opt(out, e->lhs);
		fputc(' ', out);
		print_opt(out, e->rhs);
		if (e->step) {
			fputc(' ', out);
			print_opt(out, e->step);
		}
		fputc(')', out);
		return;
	case AE_FIELD:
		fputs("(field ", out);
		print_opt(out, e->lhs);
		fprintf(out, " %s)", name_str(e->name));
		return;
	case AE_TUPLE:
		fputs("(tuple", out);
		print_exprs(out, e->items, e->nitems);
		fputc(')', out);
		return;
	case AE_COUNT:
		break;
	}
	fputs("(?)", out);
}

/* "DTYPE" or "DTYPE (dims ...)" */
static void print_type(FILE *out, const AstType *t)
{
	fputs(t->dtype_name ? t->dtype_name : dtype_str(t->dtype), out);
	if (t->any_shape) {
		fputs(" (dims ...)", out);
	} else if (t->has_shape) {
		fputs(" (dims", out);
		print_exprs(out, t->dims, t->ndims);
		fputc(')', out);
	}
}

static void indent(FILE *out, int n)
{
	fputc('\n', out);
	for (int i = 0; i < n; i++)
		fputs("  ", out);
}

static void print_stmt(FILE *out, const AstStmt *s, int ind);

/* "(tag" then each statement on its own line, then ")". */
static void print_stmts(FILE *out, const char *tag, AstStmt *const *v, int n, int ind)
{
	indent(out, ind);
	fprintf(out, "(%s", tag);
	for (int i = 0; i < n; i++)
		print_stmt(out, v[i], ind + 1);
	fputc(')', out);
}

static void print_stmt(FILE *out, const AstStmt *s, int ind)
{
	indent(out, ind);
	switch (s->kind) {
	case AS_LET:
	case AS_VAR:
		if (s->nnames) {
			fputs("(let (", out);
			for (int i = 0; i < s->nnames; i++)
				fprintf(out, "%s%s", i ? " " : "", name_str(s->names[i]));
			fputs(") ", out);
		} else {
			fprintf(out, "(%s %s ", s->kind == AS_LET ? "let" : "var", name_str(s->name));
		}
		if (s->type) {
			fputs("(type ", out);
			print_type(out, s->type);
			fputs(") ", out);
		}
		print_opt(out, s->value);
		fputc(')', out);
		return;
	case AS_ASSIGN:
		if (s->assign_op == OP_COUNT)
			fputs("(assign = ", out);
		else
			fprintf(out, "(assign %s= ", op_str(s->assign_op));
		print_opt(out, s->target);
		fputc(' ', out);
		print_opt(out, s->value);
		fputc(')', out);
		return;
	case AS_EXPR:
		fputs("(expr ", out);
		print_opt(out, s->value);
		fputc(')', out);
		return;
	case AS_IF:
		fprintf(out, "(%s ", s->is_when ? "when" : "if");
		print_opt(out, s->value);
		print_stmts(out, "then", s->body, s->nbody, ind + 1);
		if (s->has_else)
			print_stmts(out, "else", s->els, s->nels, ind + 1);
		fputc(')', out);
		return;
	case AS_FOR:
		fprintf(out, "(for %s (range ", name_str(s->name));
		print_opt(out, s->lo);
		fputc(' ', out);
		print_opt(out, s->hi);
		fputc(' ', out);
		print_opt(out, s->step);
		fputc(')', out);
		print_stmts(out, "body", s->body, s->nbody, ind + 1);
		fputc(')', out);
		return;
	case AS_WHILE:
		fputs("(while ", out);
		print_opt(out, s->value);
		print_stmts(out, "body", s->body, s->nbody, ind + 1);
		fputc(')', out);
		return;
	case AS_BREAK:
		fputs("(break)", out);
		return;
	case AS_CONTINUE:
		fputs("(continue)", out);
		return;
	case AS_RETURN:
		fputs("(return ", out);
		print_opt(out, s->value);
		fputc(')', out);
		return;
	case AS_BLOCK:
		fputs("(block", out);
		for (int i = 0; i < s->nbody; i++)
			print_stmt(out, s->body[i], ind + 1);
		fputc(')', out);
		return;
	case AS_COUNT:
		break;
	}
	fputs("(?)", out);
}

static void print_kernel(FILE *out, const AstKernel *k)
{
	static const char *const modes[] = {"", " in", " out", " inout", " prefetch"};
	fprintf(out, "(kernel %s", name_str(k->name));
	for (int i = 0; i < k->nparams; i++) {
		const AstParam *p = k->params[i];
		indent(out, 1);
		fprintf(out, "(param %s%s ", name_str(p->name),
		        p->mode >= PM_SCALAR && p->mode <= PM_PREFETCH ? modes[p->mode] : " ?");
		print_type(out, p->type);
		fputc(')', out);
	}
	if (k->has_grid) {
		indent(out, 1);
		fputs("(grid", out);
		print_exprs(out, k->grid, k->ngrid);
		fputc(')', out);
	}
	if (k->has_semantics) {
		indent(out, 1);
		fputs("(semantics", out);
		for (int i = 0; i < k->nsemantics; i++)
			fputs(k->semantics[i] == AXIS_PARALLEL ? " parallel" : " arbitrary", out);
		fputc(')', out);
	}
	for (int i = 0; i < k->nspecs; i++) {
		const AstSpec *s = k->specs[i];
		indent(out, 1);
		fprintf(out, "(spec %s (block", name_str(s->operand));
		print_exprs(out, s->block, s->nblock);
		fputs(") (pids", out);
		for (int j = 0; j < s->npids; j++)
			fprintf(out, " %s", name_str(s->pids[j]));
		fputs(") (index", out);
		print_exprs(out, s->index, s->nindex);
		fputs("))", out);
	}
	for (int i = 0; i < k->nscratch; i++) {
		indent(out, 1);
		fprintf(out, "(scratch %s ", name_str(k->scratch[i]->name));
		print_type(out, k->scratch[i]->type);
		fputc(')', out);
	}
	if (k->ncparams > 0) {
		indent(out, 1);
		fputs("(params", out);
		for (int i = 0; i < k->ncparams; i++) {
			fprintf(out, " (%s ", name_str(k->cparams[i]->key));
			print_opt(out, k->cparams[i]->value);
			fputc(')', out);
		}
		fputc(')', out);
	}
	for (int i = 0; i < k->nrequires; i++) {
		indent(out, 1);
		fputs("(requires ", out);
		print_opt(out, k->requires[i]);
		fputc(')', out);
	}
	print_stmts(out, "body", k->body, k->nbody, 1);
	fputs(")\n", out);
}

static void print_fn(FILE *out, const AstFn *fn)
{
	fprintf(out, "(fn %s", name_str(fn->name));
	for (int i = 0; i < fn->nparams; i++) {
		indent(out, 1);
		fprintf(out, "(param %s ", name_str(fn->params[i]->name));
		print_type(out, fn->params[i]->type);
		fputc(')', out);
	}
	if (fn->ret) {
		indent(out, 1);
		fputs("(result ", out);
		print_type(out, fn->ret);
		fputc(')', out);
	}
	print_stmts(out, "body", fn->body, fn->nbody, 1);
	fputs(")\n", out);
}

void ast_print(FILE *out, const AstFile *f)
{
	for (int i = 0; i < f->nitems; i++) {
		const AstItem *it = f->items[i];
		if (it->fn) {
			print_fn(out, it->fn);
		} else if (it->is_kernel) {
			print_kernel(out, it->kernel);
		} else {
			const AstConst *c = it->konst;
			fprintf(out, "(const %s ", name_str(c->name));
			if (c->dtype != DT_NONE)
				fprintf(out, "%s ", dtype_str(c->dtype));
			print_opt(out, c->value);
			fputs(")\n", out);
		}
	}
}
