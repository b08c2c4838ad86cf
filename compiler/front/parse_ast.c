/* parse_ast.c - the AST nodes parser.y's actions build: constructors that
 * bound the nesting depth of expressions and statements (the chains the
 * lexer's bracket limit does not bound: a+b+c..., - - x, else if ...), and
 * the file's items (consts, fns, kernels with their clauses). */
#include "parse.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

/* ---- locations --------------------------------------------------------- */

void loc_extend(Loc *a, Loc b)
{
	if (b.line != a->line || b.file != a->file || b.line == 0)
		return;
	long end = (long)b.col + b.len;
	if (end > (long)a->col + a->len && end - a->col <= INT_MAX)
		a->len = (int)(end - a->col);
}

/* ---- lists ------------------------------------------------------------- */

void list_push(ParseCtx *pc, Vec *v, void *item)
{
	vec_push(pc->cc->arena, v, item);
}

Vec list1(ParseCtx *pc, void *item)
{
	Vec v = {0};
	vec_push(pc->cc->arena, &v, item);
	return v;
}

/* ---- AST constructors with depth accounting ---------------------------- */

/* Every expression and statement the parser makes sits in a box with its
 * depth (the longest chain of nested nodes below it, itself included). */
typedef struct ExprBox {
	int depth;  /* nesting depth of the expression */
	AstExpr e;  /* the node handed out */
} ExprBox;

typedef struct StmtBox {
	int depth;  /* nesting depth of the statement */
	AstStmt s;  /* the node handed out */
} StmtBox;

static int expr_depth(const AstExpr *e)
{
	return e ? ((const ExprBox *)(const void *)((const char *)e - offsetof(ExprBox, e)))->depth : 0;
}

static int stmt_depth(const AstStmt *s)
{
	return s ? ((const StmtBox *)(const void *)((const char *)s - offsetof(StmtBox, s)))->depth : 0;
}

static void depth_error(ParseCtx *pc, Loc loc, const char *what)
{
	if (!pc->depth_reported)
		error_at(pc->cc, loc, "%s nested too deeply (limit %d) [§2.8]", what, pc->depth_limit);
	pc->depth_reported = true;
}

static AstExpr *new_expr(ParseCtx *pc, AstExprKind kind, Loc loc, int depth)
{
	ExprBox *b = arena_alloc(pc->cc->arena, sizeof *b);
	b->depth = depth;
	b->e.kind = kind;
	b->e.loc = loc;
	return &b->e;
}

/* A node of `depth` over children: past the limit, an error and a shallow
 * placeholder instead (so no later walk recurses too deep). */
static AstExpr *checked(ParseCtx *pc, AstExpr *e)
{
	if (expr_depth(e) <= pc->depth_limit)
		return e;
	depth_error(pc, e->loc, "expression");
	return new_expr(pc, AE_INT, e->loc, 1);
}

static int max2(int a, int b) { return a > b ? a : b; }

AstExpr *mk_leaf(ParseCtx *pc, AstExprKind kind, Loc loc)
{
	return new_expr(pc, kind, loc, 1);
}

AstExpr *mk_int(ParseCtx *pc, IntLit v, Loc loc)
{
	AstExpr *e = mk_leaf(pc, AE_INT, loc);
	e->ival = v.value;
	e->int_overflow = v.overflow;
	return e;
}

AstExpr *mk_float(ParseCtx *pc, double v, Loc loc)
{
	AstExpr *e = mk_leaf(pc, AE_FLOAT, loc);
	e->fval = v;
	return e;
}

AstExpr *mk_bool(ParseCtx *pc, bool v, Loc loc)
{
	AstExpr *e = mk_leaf(pc, AE_BOOL, loc);
	e->ival = v;
	return e;
}

AstExpr *mk_name(ParseCtx *pc, const char *name, Loc loc)
{
	AstExpr *e = mk_leaf(pc, AE_NAME, loc);
	e->name = name;
	return e;
}

AstExpr *mk_string(ParseCtx *pc, const char *text, Loc loc)
{
	AstExpr *e = mk_leaf(pc, AE_STRING, loc);
	e->name = text;
	return e;
}

AstExpr *mk_dtype(ParseCtx *pc, DType dt, Loc loc)
{
	AstExpr *e = mk_leaf(pc, AE_DTYPE, loc);
	e->dtype = dt;
	return e;
}

AstExpr *mk_unary(ParseCtx *pc, AstOp op, Loc loc, AstExpr *x)
{
	AstExpr *e = new_expr(pc, AE_UNARY, loc, expr_depth(x) + 1);
	e->op = op;
	e->lhs = x;
	return checked(pc, e);
}

AstExpr *mk_binary(ParseCtx *pc, AstOp op, Loc loc, AstExpr *l, AstExpr *r)
{
	AstExpr *e = new_expr(pc, AE_BINARY, loc, max2(expr_depth(l), expr_depth(r)) + 1);
	e->op = op;
	e->lhs = l;
	e->rhs = r;
	return checked(pc, e);
}

AstExpr *mk_call(ParseCtx *pc, Loc loc, AstExpr *callee, Vec args)
{
	int d = expr_depth(callee);
	AstExpr *e = new_expr(pc, AE_CALL, loc, 0);
	e->lhs = callee;
	e->nargs = args.len;
	e->args = arena_alloc(pc->cc->arena, (size_t)args.len * sizeof *e->args + 1);
	for (int i = 0; i < args.len; i++) {
		AstArg *a = args.items[i];
		e->args[i] = *a;
		d = max2(d, expr_depth(a->value));
	}
	((ExprBox *)(void *)((char *)e - offsetof(ExprBox, e)))->depth = d + 1;
	return checked(pc, e);
}

static AstExpr *mk_list_node(ParseCtx *pc, AstExprKind kind, Loc loc, AstExpr *base, Vec items)
{
	int d = expr_depth(base);
	for (int i = 0; i < items.len; i++)
		d = max2(d, expr_depth(items.items[i]));
	AstExpr *e = new_expr(pc, kind, loc, d + 1);
	e->lhs = base;
	LIST_TO(pc, e->items, e->nitems, items);
	return checked(pc, e);
}

AstExpr *mk_index(ParseCtx *pc, Loc loc, AstExpr *base, Vec idx)
{
	return mk_list_node(pc, AE_INDEX, loc, base, idx);
}

AstExpr *mk_tuple(ParseCtx *pc, Loc loc, Vec items)
{
	return mk_list_node(pc, AE_TUPLE, loc, NULL, items);
}

AstExpr *mk_slice(ParseCtx *pc, Loc loc, AstExpr *lo, AstExpr *hi, AstExpr *step)
{
	AstExpr *e = new_expr(pc, AE_SLICE, loc, max2(max2(expr_depth(lo), expr_depth(hi)), expr_depth(step)) + 1);
	e->lhs = lo;
	e->rhs = hi;
	e->step = step;
	return checked(pc, e);
}

AstExpr *mk_field(ParseCtx *pc, Loc loc, AstExpr *base, const char *name)
{
	AstExpr *e = new_expr(pc, AE_FIELD, loc, expr_depth(base) + 1);
	e->lhs = base;
	e->name = name;
	return checked(pc, e);
}

AstArg *mk_arg(ParseCtx *pc, Loc loc, const char *name, AstExpr *value)
{
	AstArg *a = arena_alloc(pc->cc->arena, sizeof *a);
	a->loc = loc;
	a->name = name;
	a->value = value;
	return a;
}

AstType *mk_type(ParseCtx *pc, Loc loc, DType dt, bool has_shape, Vec dims)
{
	AstType *t = arena_alloc(pc->cc->arena, sizeof *t);
	t->loc = loc;
	t->dtype = dt;
	t->has_shape = has_shape;
	LIST_TO(pc, t->dims, t->ndims, dims);
	return t;
}

NameLoc *mk_nameloc(ParseCtx *pc, const char *name, Loc loc)
{
	NameLoc *nl = arena_alloc(pc->cc->arena, sizeof *nl);
	nl->name = name;
	nl->loc = loc;
	return nl;
}

/* A statement with optional body and else lists; its depth is one more than
 * its deepest child statement's. */
AstStmt *mk_stmt(ParseCtx *pc, AstStmtKind kind, Loc loc, Vec *body, Vec *els)
{
	StmtBox *b = arena_alloc(pc->cc->arena, sizeof *b);
	AstStmt *s = &b->s;
	int d = 0;
	s->kind = kind;
	s->loc = loc;
	s->assign_op = OP_COUNT;
	if (body) {
		LIST_TO(pc, s->body, s->nbody, *body);
		for (int i = 0; i < body->len; i++)
			d = max2(d, stmt_depth(body->items[i]));
	}
	if (els) {
		LIST_TO(pc, s->els, s->nels, *els);
		for (int i = 0; i < els->len; i++)
			d = max2(d, stmt_depth(els->items[i]));
	}
	b->depth = d + 1;
	if (b->depth > pc->depth_limit) {
		/* drop the children: the statement stays, shallow */
		depth_error(pc, loc, "statement");
		s->nbody = s->nels = 0;
		b->depth = 1;
	}
	return s;
}

AstStmt *mk_decl(ParseCtx *pc, AstStmtKind kind, Loc loc, NameLoc name, AstType *type, AstExpr *value)
{
	AstStmt *s = mk_stmt(pc, kind, loc, NULL, NULL);
	s->name = name.name;
	s->name_loc = name.loc;
	s->type = type;
	s->value = value;
	return s;
}

AstStmt *mk_unpack(ParseCtx *pc, Loc loc, NameLoc first, Vec rest, AstExpr *value)
{
	AstStmt *s = mk_stmt(pc, AS_LET, loc, NULL, NULL);
	int n = rest.len + 1;
	s->names = arena_alloc(pc->cc->arena, (size_t)n * sizeof *s->names);
	s->name_locs = arena_alloc(pc->cc->arena, (size_t)n * sizeof *s->name_locs);
	s->names[0] = first.name;
	s->name_locs[0] = first.loc;
	for (int i = 1; i < n; i++) {
		NameLoc *nl = rest.items[i - 1];
		s->names[i] = nl->name;
		s->name_locs[i] = nl->loc;
	}
	s->nnames = n;
	s->value = value;
	return s;
}

AstStmt *mk_assign(ParseCtx *pc, Loc loc, AstExpr *target, AstOp op, AstExpr *value)
{
	if (target->kind != AE_NAME && target->kind != AE_INDEX) {
		error_at(pc->cc, target->loc, "cannot assign to this expression; the target of '%s' must be "
		         "a variable or an indexed Ref [§6.2]",
		         op == OP_COUNT ? "=" : arena_printf(pc->cc->arena, "%s=", ast_op_spelling[op]));
		AstStmt *s = mk_stmt(pc, AS_EXPR, loc, NULL, NULL);
		s->value = value;
		return s;
	}
	AstStmt *s = mk_stmt(pc, AS_ASSIGN, loc, NULL, NULL);
	s->target = target;
	s->assign_op = op;
	s->value = value;
	return s;
}

AstStmt *mk_for(ParseCtx *pc, Loc loc, NameLoc var, NameLoc range, AstExpr *lo, AstExpr *hi,
                AstExpr *step, Vec body)
{
	if (range.name != pc->range_name)
		error_at(pc->cc, range.loc, "expected 'range' after 'in', not '%s' [§3.5]", range.name);
	AstStmt *s = mk_stmt(pc, AS_FOR, loc, &body, NULL);
	s->name = var.name;
	s->name_loc = var.loc;
	s->lo = lo;
	s->hi = hi;
	s->step = step;
	return s;
}

/* ---- items ------------------------------------------------------------- */

static void push_item(ParseCtx *pc, bool is_kernel, void *node)
{
	AstItem *it = arena_alloc(pc->cc->arena, sizeof *it);
	it->is_kernel = is_kernel;
	if (is_kernel)
		it->kernel = node;
	else
		it->konst = node;
	vec_push(pc->cc->arena, pc->items, it);
}

void add_fn(ParseCtx *pc, NameLoc name, Vec params, AstType *ret, Vec body)
{
	AstFn *fn = arena_alloc(pc->cc->arena, sizeof *fn);
	fn->loc = name.loc;
	fn->name = name.name;
	LIST_TO(pc, fn->params, fn->nparams, params);
	fn->ret = ret;
	LIST_TO(pc, fn->body, fn->nbody, body);
	AstItem *it = arena_alloc(pc->cc->arena, sizeof *it);
	it->fn = fn;
	vec_push(pc->cc->arena, pc->items, it);
	pc->in_kernel = false;
}

void add_const(ParseCtx *pc, NameLoc name, DType dt, AstExpr *value)
{
	AstConst *c = arena_alloc(pc->cc->arena, sizeof *c);
	c->loc = name.loc;
	c->name = name.name;
	c->dtype = dt;
	c->value = value;
	push_item(pc, false, c);
}

void kernel_begin(ParseCtx *pc, Loc loc, const char *name, Vec params)
{
	AstKernel *k = arena_alloc(pc->cc->arena, sizeof *k);
	k->loc = loc;
	k->name = name;
	LIST_TO(pc, k->params, k->nparams, params);
	pc->kern = k;
	pc->grid = pc->specs = pc->scratch = pc->cparams = pc->requires = (Vec){0};
	pc->seen_params = false;
}

void kernel_end(ParseCtx *pc, Vec body)
{
	AstKernel *k = pc->kern;
	if (!k)
		return;
	LIST_TO(pc, k->grid, k->ngrid, pc->grid);
	LIST_TO(pc, k->specs, k->nspecs, pc->specs);
	LIST_TO(pc, k->scratch, k->nscratch, pc->scratch);
	LIST_TO(pc, k->cparams, k->ncparams, pc->cparams);
	LIST_TO(pc, k->requires, k->nrequires, pc->requires);
	LIST_TO(pc, k->body, k->nbody, body);
	if (!k->semantics) {
		k->semantics = arena_alloc(pc->cc->arena, 1);
		k->semantics_locs = arena_alloc(pc->cc->arena, 1);
	}
	push_item(pc, true, k);
	pc->kern = NULL;
}

/* grid, semantics and params may be written once per kernel. */
void clause_once(ParseCtx *pc, bool *seen, Loc loc, Loc first, const char *what)
{
	if (*seen) {
		error_at(pc->cc, loc, "duplicate '%s' clause [§3.4]", what);
		note_at(pc->cc, first, "first written here");
	}
	*seen = true;
}
