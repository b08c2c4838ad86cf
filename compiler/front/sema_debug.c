/* sema_debug.c - debug_print(fmt, values...) and debug_check(cond, msg)
 * (lang-spec §7.19), Pallas' pl.debug_print and pl.debug_check.  Their text
 * is a string literal, which no other expression takes, so they read their
 * arguments from the AST themselves rather than through the builtin table's
 * argument handling (sema_builtins.c lists them so that names, suggestions
 * and `pl.` prefixes work as for every builtin). */
#include "sema.h"

#include <string.h>

/* Checks fmt's placeholders: each '{' opens a "{}" (no format specs, no
 * field numbers, no escapes), and there is one per value.  Reports at loc. */
static bool check_format(Sema *s, const char *fmt, int nvalues, Loc loc)
{
	int holes = 0;
	for (const char *c = fmt; *c; c++) {
		if (*c == '{' && c[1] == '}') {
			holes++;
			c++;
		} else if (*c == '{' || *c == '}') {
			error_at(s->cc, loc, "debug_print() formats take only '{}' placeholders (no format specs, field "
			         "numbers or escapes): found a lone '%c' [§7.19]", *c);
			return false;
		}
	}
	if (holes != nvalues) {
		error_at(s->cc, loc, "debug_print() format has %d '{}' placeholder%s for %d value%s: write one '{}' per "
		         "value [§7.19]", holes, holes == 1 ? "" : "s", nvalues, nvalues == 1 ? "" : "s");
		return false;
	}
	return true;
}

/* The text of a string literal argument, or NULL after reporting. */
static const char *string_arg(Sema *s, const AstArg *arg, const char *name, const char *role)
{
	if (arg->value->kind == AE_STRING)
		return arg->value->name;
	error_at(s->cc, arg->value->loc, "the %s of %s() must be a string literal [§7.19]", role, name);
	return NULL;
}

static Ex debug_print(Sema *s, AstExpr *call)
{
	if (call->nargs < 1) {
		error_at(s->cc, call->loc, "debug_print() takes a format string and the values it prints: "
		         "debug_print(\"x = {}\", x) [§7.19]");
		return ex_error(call->loc);
	}
	const char *fmt = string_arg(s, &call->args[0], "debug_print", "format");
	bool ok = fmt != NULL;
	int n = call->nargs - 1;
	Value **vs = vals(s, n);
	for (int j = 0; j < n; j++) {
		Ex e = sema_value_expr(s, call->args[1 + j].value);
		if (e.kind == EX_ERROR) {
			ok = false;
			continue;
		}
		vs[j] = as_value(s, e); /* a scalar or a block (§7.19) */
	}
	if (!ok || !check_format(s, fmt, n, call->args[0].value->loc))
		return ex_error(call->loc);
	emit_inst(s, IR_DEBUG_PRINT, call->loc, n, vs, 0, NULL)->str = fmt;
	return ex_void(call->loc);
}

static Ex debug_check(Sema *s, AstExpr *call)
{
	if (call->nargs != 2) {
		error_at(s->cc, call->loc, "debug_check() takes a condition and a message: debug_check(x > 0, \"x must be "
		         "positive\"), %d argument%s given [§7.19]", call->nargs, call->nargs == 1 ? "" : "s");
		eval_args(s, call);
		return ex_error(call->loc);
	}
	Value *c = condition(s, sema_expr(s, call->args[0].value), "the condition of debug_check()", "§7.19");
	const char *msg = string_arg(s, &call->args[1], "debug_check", "message");
	if (!c || !msg)
		return ex_error(call->loc);
	emit_inst(s, IR_DEBUG_CHECK, call->loc, 1, &c, 0, NULL)->str = msg;
	return ex_void(call->loc);
}

Ex sema_debug_call(Sema *s, AstExpr *call, Op op)
{
	const char *name = op == IR_DEBUG_PRINT ? "debug_print" : "debug_check";
	for (int j = 0; j < call->nargs; j++)
		if (call->args[j].name) {
			error_at(s->cc, call->args[j].loc, "%s() takes no keyword arguments, found '%s' [§7.19]", name,
			         call->args[j].name);
			return ex_error(call->loc);
		}
	return op == IR_DEBUG_PRINT ? debug_print(s, call) : debug_check(s, call);
}
