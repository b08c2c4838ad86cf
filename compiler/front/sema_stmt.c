/* sema_stmt.c - statements (§6) of kernel and fn bodies, turning mutable
 * vars into SSA: a var assigned inside an if/for/while becomes a result of
 * that op (and a carried region argument of a loop); break and continue
 * become flags, so the IR's loops stay structured. */
#include "sema.h"

#include <string.h>

static void sema_block(Sema *s, AstStmt **v, int n)
{
	Scope sc = {.parent = s->scope};
	s->scope = &sc;
	sema_stmts(s, v, n);
	s->scope = sc.parent;
}

/* break and continue (§6.8) keep the IR's loops structured on every
 * target: a loop whose body breaks carries a hidden bool var, its break
 * flag (false before the loop), and one that continues has a continue flag
 * (false at the start of each iteration).  The statements set them; the
 * statements after one that may set them run under
 * `if not (break or continue)`; a while loop's condition becomes
 * `cond and not break`, and a for loop's body runs under `if not break`
 * (its remaining iterations do nothing).  Vars stay SSA through the IFs. */
typedef struct LoopCtx {
	const char *brk_name;  /* name of the break flag, NULL when the body has no break */
	const char *cont_name; /* name of the continue flag, NULL when it has no continue */
	Binding *brk, *cont;   /* the flags, once declared */
	struct LoopCtx *outer; /* the enclosing loop */
} LoopCtx;

/* The names declared inside the statements being scanned, in scope at
 * the current point: a stack (for leaving blocks) and a count per name. */
typedef struct Locals {
	Vec stack;    /* declared names, innermost last */
	PtrMap count; /* name -> how many times it is on the stack (as intptr_t) */
	int loops;    /* loops entered below the scan's root: their break and continue are their own */
} Locals;

static void locals_push(Sema *s, Locals *l, const char *name)
{
	vec_push(s->a, &l->stack, (void *)name);
	void **c = ptrmap_slot(s->a, &l->count, name, true);
	*c = (void *)((intptr_t)*c + 1);
}

static void locals_pop_to(Locals *l, int mark)
{
	while (l->stack.len > mark) {
		void **c = ptrmap_slot(NULL, &l->count, l->stack.items[--l->stack.len], false);
		*c = (void *)((intptr_t)*c - 1);
	}
}

static bool locals_has(Locals *l, const char *name)
{
	void **c = ptrmap_slot(NULL, &l->count, name, false);
	return c && (intptr_t)*c > 0;
}

/* The assigned outer names, in order of first assignment. */
typedef struct NameSet {
	Vec names; /* in order */
	PtrMap set; /* membership */
} NameSet;

static void note_assigned(Sema *s, Locals *locals, NameSet *out, const char *name)
{
	if (name && !locals_has(locals, name) && !ptrmap_slot(NULL, &out->set, name, false)) {
		*ptrmap_slot(s->a, &out->set, name, true) = (void *)name;
		vec_push(s->a, &out->names, (void *)name);
	}
}

/* Collects the names assigned (`x = ...`, `x += ...`) in statements that
 * refer to a declaration outside them: `locals` holds the names declared
 * inside, in scope at each point.  Names resolve lexically, so this is
 * exactly the set of outer vars the statements may change.  A break or
 * continue of the loop being built assigns its flag (§6.8). */
static void scan_assigned(Sema *s, AstStmt **v, int n, Locals *locals, NameSet *out)
{
	int mark = locals->stack.len;
	for (int i = 0; i < n; i++) {
		AstStmt *st = v[i];
		switch (st->kind) {
		case AS_LET:
		case AS_VAR:
			for (int k = 0; k < st->nnames; k++)
				locals_push(s, locals, st->names[k]);
			if (!st->nnames)
				locals_push(s, locals, st->name);
			break;
		case AS_ASSIGN:
			note_assigned(s, locals, out, st->target->kind == AE_NAME ? st->target->name : NULL);
			break;
		case AS_BREAK:
		case AS_CONTINUE:
			if (s->loop && locals->loops == 0)
				note_assigned(s, locals, out, st->kind == AS_BREAK ? s->loop->brk_name : s->loop->cont_name);
			break;
		case AS_IF:
			scan_assigned(s, st->body, st->nbody, locals, out);
			scan_assigned(s, st->els, st->nels, locals, out);
			break;
		case AS_FOR: {
			int m = locals->stack.len;
			locals_push(s, locals, st->name);
			locals->loops++;
			scan_assigned(s, st->body, st->nbody, locals, out);
			locals->loops--;
			locals_pop_to(locals, m);
			break;
		}
		case AS_WHILE:
			locals->loops++;
			scan_assigned(s, st->body, st->nbody, locals, out);
			locals->loops--;
			break;
		case AS_BLOCK:
			scan_assigned(s, st->body, st->nbody, locals, out);
			break;
		case AS_EXPR:
		case AS_RETURN:
		case AS_COUNT:
			break;
		}
	}
	locals_pop_to(locals, mark);
}

/* The vars in scope that statements (one or two lists) assign: the values
 * an if/for/while produces. */
typedef struct Carried {
	Binding **vars; /* the var bindings */
	Value **saved;  /* their values before the construct */
	Type **types;   /* their types */
	int n;          /* count */
} Carried;

static Carried carried_vars(Sema *s, AstStmt **a, int na, AstStmt **b, int nb)
{
	Locals locals = {0};
	NameSet out = {0};
	scan_assigned(s, a, na, &locals, &out);
	scan_assigned(s, b, nb, &locals, &out);
	Vec names = out.names;
	Carried c = {0};
	c.vars = arena_alloc(s->a, sizeof(Binding *) * (size_t)(names.len + 1));
	c.saved = vals(s, names.len);
	c.types = arena_alloc(s->a, sizeof(Type *) * (size_t)(names.len + 1));
	for (int i = 0; i < names.len; i++) {
		Binding *bd = lookup(s, names.items[i]);
		if (bd && bd->kind == B_VAR && bd->type) {
			c.vars[c.n] = bd;
			c.saved[c.n] = bd->cur;
			c.types[c.n] = bd->type;
			c.n++;
		}
	}
	return c;
}

static void carried_set(Carried *c, Value **v)
{
	for (int i = 0; i < c->n; i++)
		c->vars[i]->cur = v ? v[i] : c->saved[i];
}

/* Ends the current region with a yield of the carried vars' values. */
static void yield_carried(Sema *s, Carried *c, Loc loc)
{
	Value **v = vals(s, c->n);
	for (int i = 0; i < c->n; i++)
		v[i] = c->vars[i]->cur;
	ir_yield(s->a, s->k, s->region, loc, c->n, v);
}

/* A region that is not part of the IR, for statements whose construct
 * had an error: they are still checked. */
static Region *detached_region(Sema *s)
{
	return ir_region_new(s->a, s->k, 0, NULL);
}

/* let a, b, ... = e (§6.1): each name binds one item of the tuple e
 * (split(), a shape, a fn's tuple result), as a let of that item would. */
static void sema_unpack(Sema *s, AstStmt *st)
{
	Ex e = sema_expr(s, st->value);
	if (e.kind != EX_TUPLE && e.kind != EX_ERROR) {
		error_at(s->cc, st->value->loc, "let with %d names unpacks a tuple (split(), x.shape, a tuple a fn returns), "
		         "found %s [§6.1]", st->nnames, ex_type_str(s, &e));
		e = ex_error(e.loc);
	} else if (e.kind == EX_TUPLE && e.nitems != st->nnames) {
		error_at(s->cc, st->value->loc, "let with %d names unpacks a tuple of %d items, found %d [§6.1]", st->nnames,
		         st->nnames, e.nitems);
		e = ex_error(e.loc);
	}
	for (int i = 0; i < st->nnames; i++) {
		Ex item = e.kind == EX_TUPLE ? rvalue(s, e.items[i]) : ex_error(st->name_locs[i]);
		if (!check_new_name(s, s->scope, st->names[i], st->name_locs[i]))
			continue;
		Binding *b = bind(s, s->scope, B_LET, st->names[i], st->name_locs[i]);
		b->ex = item;
		if (item.kind == EX_VALUE && !item.v->name)
			item.v->name = st->names[i];
	}
}

static void sema_let(Sema *s, AstStmt *st)
{
	if (st->nnames) {
		sema_unpack(s, st);
		return;
	}
	Ex e = sema_expr(s, st->value);
	/* A view x.at[i] binds as itself (§6.1, §7.5): the name is an alias of
	 * the place, read or written where it is used, never a copy. */
	bool view = e.kind == EX_ACCESS && e.acc->view;
	if (view && st->type) {
		error_at(s->cc, st->type->loc, "let '%s' binds a view of a Ref (x.at[...]), which has no value type: "
		         "drop the annotation [§6.1]", st->name);
		e = ex_error(e.loc);
	} else if (!view) {
		e = rvalue(s, e);
	}
	if (st->type && e.kind != EX_ERROR) {
		Type *t = static_type(s, st->type, "§6.1");
		const char *what = arena_printf(s->a, "let '%s'", st->name);
		if (!t) {
			e = ex_error(st->value->loc);
		} else if (e.kind == EX_CONST && t->rank == 0) {
			/* An annotated scalar constant stays a constant. */
			if (!implicitly_converts(e.c.dtype, e.c.weak, t->dtype)) {
				error_at(s->cc, e.loc, "%s: expected dtype %s, found %s; convert with astype(..., %s) [§6.1]", what,
				         dtype_str(t->dtype), dtype_str(e.c.dtype), dtype_str(t->dtype));
				e = ex_error(e.loc);
			} else if (const_convert(s, &e.c, t->dtype, false, e.loc)) {
				e.c.weak = false;
			} else {
				e = ex_error(e.loc);
			}
		} else {
			Value *v = coerce_value(s, e, t, what, "§6.1");
			e = v ? ex_value(v, false, e.loc) : ex_error(e.loc);
		}
	}
	if (!check_new_name(s, s->scope, st->name, st->name_loc))
		return;
	Binding *b = bind(s, s->scope, B_LET, st->name, st->name_loc);
	b->ex = e;
	if (e.kind == EX_VALUE && !e.v->name)
		e.v->name = st->name;
}

static void sema_var(Sema *s, AstStmt *st)
{
	Ex e = rvalue(s, sema_expr(s, st->value));
	Type *t = NULL;
	Value *v = NULL;
	if (st->type) {
		t = static_type(s, st->type, "§6.2");
		if (t && e.kind != EX_ERROR)
			v = coerce_value(s, e, t, arena_printf(s->a, "var '%s'", st->name), "§6.2");
	} else if (e.kind != EX_ERROR) {
		v = as_value(s, e);
		t = v->type;
	}
	if (!check_new_name(s, s->scope, st->name, st->name_loc))
		return;
	Binding *b = bind(s, s->scope, B_VAR, st->name, st->name_loc);
	b->cur = v;
	b->type = v ? t : NULL;
}

/* x = v, x op= v for a var x. */
static void assign_var(Sema *s, AstStmt *st)
{
	AstExpr *tg = st->target;
	Binding *b = lookup(s, tg->name);
	Ex rhs = sema_expr(s, st->value);
	if (!b) {
		report_unknown_name(s, tg->name, tg->loc, "identifier", NULL, 0);
		return;
	}
	if (b->kind != B_VAR) {
		const char *why = b->kind == B_LET      ? "it is declared with let; declare it with var to assign it"
		                  : b->kind == B_LOOP    ? "it is a loop variable"
		                  : b->kind == B_CONST   ? "it is a constant"
		                  : b->kind == B_OPERAND || b->kind == B_SCRATCH
		                      ? "it is a Ref; store into it with x[...] = v"
		                      : "it is a kernel parameter";
		error_at(s->cc, tg->loc, "cannot assign to '%s': %s [§6.2]", b->name, why);
		if (b->loc.line)
			note_at(s->cc, b->loc, "'%s' is declared here", b->name);
		return;
	}
	if (!b->type)
		return;
	if (st->assign_op != OP_COUNT)
		rhs = sema_binary_ast(s, st->assign_op, tg->loc, ex_value(b->cur, false, tg->loc), rhs);
	Value *v = coerce_value(s, rhs, b->type, arena_printf(s->a, "assignment to '%s'", b->name), "§6.2");
	if (v)
		b->cur = v;
}

/* ref[...] = v, ref[...] op= v (§6.3). */
static void assign_ref(Sema *s, AstStmt *st)
{
	AstExpr *tg = unit_index(s, st->target);
	Ex base = sema_expr(s, tg->lhs);
	if (base.kind == EX_ERROR) {
		sema_expr(s, st->value);
		return;
	}
	bool view = base.kind == EX_ACCESS && base.acc->view; /* x.at[i][...] = v */
	if (base.kind != EX_REF && !view) {
		error_at(s->cc, tg->loc, "cannot assign to an element of %s; only Refs can be stored into [§6.3]",
		         ex_type_str(s, &base));
		sema_expr(s, st->value);
		return;
	}
	Ex whole = view ? sema_view_index(s, base, tg) : base;
	Access *acc = !view ? build_access(s, base, tg) : whole.kind == EX_ACCESS ? whole.acc : NULL;
	const char *verb = st->assign_op == OP_COUNT ? "store to" : "update";
	if (!acc || !access_ready(s, acc, verb) || !access_writable(s, acc, tg->lhs->loc, verb)) {
		sema_expr(s, st->value);
		return;
	}
	Ex v = sema_expr(s, st->value);
	if (st->assign_op != OP_COUNT) {
		Value *old = emit_load(s, acc, NULL, NULL, tg->loc);
		v = sema_binary_ast(s, st->assign_op, tg->loc, ex_value(old, false, tg->loc), v);
	}
	const char *what = arena_printf(s->a, "%s '%s'", verb, base.b ? base.b->name : "ref");
	Value *val = coerce_value(s, v, acc->type, what, "§6.3");
	if (val)
		emit_store(s, acc, val, NULL, tg->loc);
}

static void sema_assign(Sema *s, AstStmt *st)
{
	if (st->target->kind == AE_NAME)
		assign_var(s, st);
	else if (st->target->kind == AE_INDEX)
		assign_ref(s, st);
	else {
		error_at(s->cc, st->target->loc, "cannot assign to this expression; the target must be a var or a Ref index [§6.2]");
		sema_expr(s, st->value);
	}
}

/* Only store(), swap(), atomics and debug calls may be statements (§6.7). */
static void sema_expr_stmt(Sema *s, AstStmt *st)
{
	Ex e = sema_expr(s, st->value);
	if (e.kind != EX_ERROR && !call_is_effect(st->value))
		error_at(s->cc, st->value->loc, "statement has no effect: only store(), swap(), atomics and debug calls can be expression statements [§6.7]");
}

/* Checks a branch that a constant condition rules out: its statements
 * are type-checked in a detached region, starting from the vars' values
 * before the if, and leave the vars as they were. */
static void dead_branch(Sema *s, AstStmt **v, int n, Carried *c)
{
	Value **now = vals(s, c->n);
	for (int i = 0; i < c->n; i++)
		now[i] = c->vars[i]->cur;
	carried_set(c, NULL);
	Region *parent = s->region;
	s->region = detached_region(s);
	sema_block(s, v, n);
	s->region = parent;
	carried_set(c, now);
}

/* An IF on cond (NULL after an error: the branches are still checked)
 * running the body of `st` and, when it is an if, its else branch; the
 * carried vars become the IF's results. */
static void emit_if(Sema *s, Value *cond, Loc loc, AstStmt *st, Carried *c)
{
	Region *parent = s->region;
	Inst *iff = NULL;
	Region *then_r, *else_r;
	if (cond) {
		Value *arg[1] = {cond};
		iff = emit_inst(s, IR_IF, loc, 1, arg, c->n, c->types);
		then_r = ir_add_region(s->a, s->k, iff, 0, NULL);
		else_r = ir_add_region(s->a, s->k, iff, 0, NULL);
	} else {
		then_r = detached_region(s);
		else_r = detached_region(s);
	}
	s->region = then_r;
	sema_block(s, st->body, st->nbody);
	yield_carried(s, c, loc);
	carried_set(c, NULL);
	s->region = else_r;
	if (st->kind == AS_IF)
		sema_block(s, st->els, st->nels);
	yield_carried(s, c, loc);
	s->region = parent;
	carried_set(c, iff ? iff->results : NULL);
	for (int i = 0; iff && i < c->n; i++)
		iff->results[i]->name = c->vars[i]->name;
}

/* if/when: vars assigned in a branch become results of the IF.  A
 * constant condition selects its branch at compile time (the other one is
 * still checked): `if BLOCK > 64 { ... }` specializes the kernel. */
static void sema_if(Sema *s, AstStmt *st)
{
	const char *what = st->is_when ? "the condition of 'when'" : "the condition of 'if'";
	Ex ce = rvalue(s, sema_expr(s, st->value));
	Carried c = carried_vars(s, st->body, st->nbody, st->els, st->nels);
	if (ce.kind == EX_CONST && ce.c.dtype == DT_BOOL) {
		if (ce.c.i) {
			sema_block(s, st->body, st->nbody);
			dead_branch(s, st->els, st->nels, &c);
		} else {
			dead_branch(s, st->body, st->nbody, &c);
			sema_block(s, st->els, st->nels);
		}
		return;
	}
	emit_if(s, condition(s, ce, what, "§6.4"), st->loc, st, &c);
}

/* Whether statements hold a break (kind AS_BREAK), a continue
 * (AS_CONTINUE) or either (AS_COUNT) of the loop around them: a nested
 * loop's are its own. */
static bool has_exit(AstStmt *const *v, int n, AstStmtKind kind)
{
	for (int i = 0; i < n; i++) {
		const AstStmt *st = v[i];
		if ((st->kind == AS_BREAK || st->kind == AS_CONTINUE) && (kind == AS_COUNT || st->kind == kind))
			return true;
		if ((st->kind == AS_IF || st->kind == AS_BLOCK) &&
		    (has_exit(st->body, st->nbody, kind) || has_exit(st->els, st->nels, kind)))
			return true;
	}
	return false;
}

/* A hidden bool var, false from here on (a break or continue flag). */
static Binding *flag_var(Sema *s, const char *name, Loc loc)
{
	Binding *b = bind(s, s->scope, B_VAR, name, loc);
	b->hidden = true;
	b->type = type_scalar(s->a, DT_BOOL);
	b->cur = emit_const(s, const_bool(false), b->type, loc);
	return b;
}

/* Enters the loop `st`: declares its break flag here, before the loop, so
 * that the loop carries it.  Names with a '.' cannot clash with user names. */
static void loop_begin(Sema *s, LoopCtx *l, AstStmt *st)
{
	int id = ++s->nloops;
	*l = (LoopCtx){.outer = s->loop};
	if (has_exit(st->body, st->nbody, AS_BREAK)) {
		l->brk_name = intern_cstr(s->cc->strings, arena_printf(s->a, "break.%d", id));
		l->brk = flag_var(s, l->brk_name, st->loc);
	}
	if (has_exit(st->body, st->nbody, AS_CONTINUE))
		l->cont_name = intern_cstr(s->cc->strings, arena_printf(s->a, "continue.%d", id));
	s->loop = l;
}

/* not (break or continue) of the innermost loop, now. */
static Value *loop_goes_on(Sema *s, Loc loc)
{
	LoopCtx *l = s->loop;
	Type *bt = type_scalar(s->a, DT_BOOL);
	Value *stop = l->brk ? l->brk->cur : NULL;
	if (l->cont)
		stop = stop ? emit(s, IR_OR, loc, bt, 2, stop, l->cont->cur) : l->cont->cur;
	return emit(s, IR_NOT, loc, bt, 1, stop);
}

/* Runs statements under `if not (break or continue)`. */
static void guarded(Sema *s, AstStmt **v, int n, Loc loc)
{
	AstStmt block = {.kind = AS_BLOCK, .loc = loc, .body = v, .nbody = n};
	Carried c = carried_vars(s, v, n, NULL, 0);
	emit_if(s, loop_goes_on(s, loc), loc, &block, &c);
}

/* A loop's body, in its own scope: the continue flag, then the statements
 * (those of a for loop that breaks under `if not break`). */
static void loop_body(Sema *s, AstStmt *st)
{
	LoopCtx *l = s->loop;
	if (l->cont_name)
		l->cont = flag_var(s, l->cont_name, st->loc);
	if (st->kind == AS_FOR && l->brk)
		guarded(s, st->body, st->nbody, st->loc);
	else
		sema_stmts(s, st->body, st->nbody);
}

/* break; continue;  set the flag of the innermost loop. */
static void sema_break(Sema *s, AstStmt *st)
{
	const char *what = st->kind == AS_BREAK ? "break" : "continue";
	if (!s->loop) {
		error_at(s->cc, st->loc, "'%s' outside a loop; it ends the innermost for or while loop [§6.8]", what);
		return;
	}
	Binding *b = st->kind == AS_BREAK ? s->loop->brk : s->loop->cont;
	PKC_ASSERT(b);
	b->cur = emit_const(s, const_bool(true), b->type, st->loc);
}

/* An integer scalar loop bound. */
static bool loop_bound(Sema *s, AstExpr *e, Ex *out, ConstVal dflt, Loc loc)
{
	Ex x = e ? sema_value_expr(s, e) : ex_const(dflt, loc);
	*out = x;
	if (x.kind == EX_ERROR)
		return false;
	if (!dtype_is_int(ex_dtype(&x)) || ex_rank(&x) != 0) {
		error_at(s->cc, x.loc, "range() bounds must be integer scalars, found %s [§6.5]", ex_type_str(s, &x));
		return false;
	}
	return true;
}

static void sema_for(Sema *s, AstStmt *st)
{
	Ex b[3];
	bool ok = loop_bound(s, st->lo, &b[0], const_int(0, DT_I32, true), st->loc);
	ok &= loop_bound(s, st->hi, &b[1], const_int(0, DT_I32, true), st->loc);
	ok &= loop_bound(s, st->step, &b[2], const_int(1, DT_I32, true), st->loc);
	if (ok && (b[2].kind != EX_CONST || b[2].c.i == 0)) {
		error_at(s->cc, b[2].loc, "the step of range() must be a non-zero constant integer, found %s [§6.5]",
		         b[2].kind == EX_CONST ? "0" : "a runtime value");
		ok = false;
	}
	DType dt = DT_I32;
	if (ok) {
		bool w1, w2;
		DType t = promote_dtypes(ex_dtype(&b[0]), ex_weak(&b[0]), ex_dtype(&b[1]), ex_weak(&b[1]), &w1);
		dt = promote_dtypes(t, w1, ex_dtype(&b[2]), ex_weak(&b[2]), &w2);
		if (!dtype_is_int(dt)) { /* i64 with u64: no integer holds both */
			error_at(s->cc, st->loc, "range() bounds %s, %s and %s have no common integer type [§6.5]",
			         ex_type_str(s, &b[0]), ex_type_str(s, &b[1]), ex_type_str(s, &b[2]));
			ok = false;
		}
	}
	LoopCtx lc;
	loop_begin(s, &lc, st);
	Carried c = carried_vars(s, st->body, st->nbody, NULL, 0);
	Region *parent = s->region, *r;
	Inst *f = NULL;
	Type *ivt = type_scalar(s->a, dt);
	Type **rtypes = arena_alloc(s->a, sizeof(Type *) * (size_t)(c.n + 1));
	rtypes[0] = ivt;
	memcpy(rtypes + 1, c.types, sizeof(Type *) * (size_t)c.n);
	if (ok) {
		Value **args = vals(s, 3 + c.n);
		for (int i = 0; i < 3; i++)
			args[i] = to_value(s, b[i], ivt);
		memcpy(args + 3, c.saved, sizeof(Value *) * (size_t)c.n);
		f = emit_inst(s, IR_FOR, st->loc, 3 + c.n, args, c.n, c.types);
		r = ir_add_region(s->a, s->k, f, 1 + c.n, rtypes);
	} else {
		r = ir_region_new(s->a, s->k, 1 + c.n, rtypes);
	}
	name_arg(r, 0, st->name);
	for (int i = 0; i < c.n; i++)
		name_arg(r, 1 + i, c.vars[i]->name);
	carried_set(&c, r->args + 1);
	s->region = r;
	Scope sc = {.parent = s->scope};
	s->scope = &sc;
	if (check_new_name(s, s->scope, st->name, st->name_loc)) {
		Binding *iv = bind(s, &sc, B_LOOP, st->name, st->name_loc);
		iv->ex = ok ? ex_value(r->args[0], false, st->name_loc) : ex_error(st->name_loc);
	}
	loop_body(s, st);
	yield_carried(s, &c, st->loc);
	s->loop = lc.outer;
	s->scope = sc.parent;
	s->region = parent;
	carried_set(&c, f ? f->results : NULL);
	for (int i = 0; f && i < c.n; i++)
		f->results[i]->name = c.vars[i]->name;
}

static void sema_while(Sema *s, AstStmt *st)
{
	LoopCtx lc;
	loop_begin(s, &lc, st);
	Carried c = carried_vars(s, st->body, st->nbody, NULL, 0);
	Region *parent = s->region;
	Inst *w = emit_inst(s, IR_WHILE, st->loc, c.n, c.saved, c.n, c.types);
	Region *cr = ir_add_region(s->a, s->k, w, c.n, c.types);
	Region *br = ir_add_region(s->a, s->k, w, c.n, c.types);
	for (int i = 0; i < c.n; i++) {
		name_arg(cr, i, c.vars[i]->name);
		name_arg(br, i, c.vars[i]->name);
	}
	carried_set(&c, cr->args);
	s->region = cr;
	Value *cond = condition(s, sema_expr(s, st->value), "the condition of 'while'", "§6.6");
	if (cond && lc.brk) {
		Type *bt = type_scalar(s->a, DT_BOOL);
		cond = emit(s, IR_AND, st->value->loc, bt, 2, cond, emit(s, IR_NOT, st->loc, bt, 1, lc.brk->cur));
	}
	if (cond)
		ir_yield(s->a, s->k, cr, st->value->loc, 1, &cond);
	carried_set(&c, br->args);
	s->region = br;
	Scope sc = {.parent = s->scope};
	s->scope = &sc;
	loop_body(s, st);
	s->scope = sc.parent;
	yield_carried(s, &c, st->loc);
	s->loop = lc.outer;
	s->region = parent;
	carried_set(&c, w->results);
	for (int i = 0; i < c.n; i++)
		w->results[i]->name = c.vars[i]->name;
}

static void sema_stmt(Sema *s, AstStmt *st)
{
	switch (st->kind) {
	case AS_LET: sema_let(s, st); break;
	case AS_VAR: sema_var(s, st); break;
	case AS_ASSIGN: sema_assign(s, st); break;
	case AS_EXPR: sema_expr_stmt(s, st); break;
	case AS_IF: sema_if(s, st); break;
	case AS_FOR: sema_for(s, st); break;
	case AS_WHILE: sema_while(s, st); break;
	case AS_BLOCK: sema_block(s, st->body, st->nbody); break;
	case AS_BREAK:
	case AS_CONTINUE: sema_break(s, st); break;
	case AS_RETURN: /* call_fn handles the one return a fn ends with */
		error_at(s->cc, st->loc, "'return' is only allowed as the last statement of a fn body [§3.7]");
		sema_expr(s, st->value);
		break;
	case AS_COUNT: internal_error("sema: statement kind %d", (int)st->kind);
	}
}

void sema_stmts(Sema *s, AstStmt **v, int n)
{
	for (int i = 0; i < n && !s->cc->diag.stop; i++) {
		sema_stmt(s, v[i]);
		if (i + 1 < n && s->loop && has_exit(&v[i], 1, AS_COUNT)) { /* the rest may not run (§6.8) */
			guarded(s, v + i + 1, n - i - 1, v[i + 1]->loc);
			return;
		}
	}
}
