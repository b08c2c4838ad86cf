/* sema_scope.c - names (§5.10): scopes and their bindings, lookup, the
 * value of a const at a use, and the "unknown name; did you mean" and
 * use-before-declaration errors. */
#include "sema.h"

#include <string.h>

/* ---- scopes -------------------------------------------------------------- */

/* Scopes stay lists while small; a large one (thousands of lets) gets an
 * index so lookups stay O(1). */
enum { SCOPE_INDEX_MIN = 16 };

Binding *lookup_in(Scope *sc, const char *name)
{
	if (sc->index.cap)
		return ptrmap_get(&sc->index, name);
	for (Binding *b = sc->first; b; b = b->next)
		if (b->name == name)
			return b;
	return NULL;
}

Binding *lookup(Sema *s, const char *name)
{
	for (Scope *sc = s->scope; sc; sc = sc->parent) {
		Binding *b = lookup_in(sc, name);
		if (b)
			return b;
	}
	return NULL;
}

Binding *bind(Sema *s, Scope *sc, BindKind kind, const char *name, Loc loc)
{
	Binding *b = arena_alloc(s->a, sizeof *b);
	b->kind = kind;
	b->name = name;
	b->loc = loc;
	b->next = sc->first;
	sc->first = b;
	sc->n++;
	if (sc->n == SCOPE_INDEX_MIN) { /* index the whole list, oldest first */
		Binding **all = arena_alloc(s->a, sizeof(Binding *) * SCOPE_INDEX_MIN);
		int i = SCOPE_INDEX_MIN;
		for (Binding *x = sc->first; x; x = x->next)
			all[--i] = x;
		for (i = 0; i < SCOPE_INDEX_MIN; i++)
			*ptrmap_slot(s->a, &sc->index, all[i]->name, true) = all[i];
	} else if (sc->index.cap) {
		*ptrmap_slot(s->a, &sc->index, name, true) = b;
	}
	return b;
}

static const char *const bind_kind_desc[] = {
	[B_CONST] = "a constant", [B_SIZE] = "a size symbol", [B_SCALAR] = "a scalar parameter",
	[B_OPERAND] = "an array parameter", [B_SCRATCH] = "a scratch buffer", [B_PID] = "a program id",
	[B_LET] = "a let binding", [B_VAR] = "a var", [B_LOOP] = "a loop variable", [B_FN] = "a fn",
};

const char *binding_desc(const Binding *b)
{
	return bind_kind_desc[b->kind];
}

Ex const_binding_value(Sema *s, Binding *b, Loc use)
{
	(void)s;
	Ex e = b->ex;
	e.loc = use;
	return e;
}

/* ---- unknown names ------------------------------------------------------- */

/* Levenshtein distance, for "did you mean" (names are short). */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 1000;
	int row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *closest_name(const char *name, const char *const *cands, int n)
{
	const char *best = NULL;
	int bestd = 1000, len = (int)strlen(name);
	int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	for (int i = 0; i < n; i++) {
		if (!cands[i] || strcmp(cands[i], name) == 0)
			continue;
		int d = edit_distance(name, cands[i]);
		if (d <= limit && d < len && d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	return best;
}

bool used_before_declaration(Sema *s, const char *name, Loc loc)
{
	const AstConst *kc = ptrmap_get(&s->all_consts, name);
	if (!kc)
		return false;
	error_at(s->cc, loc, "constant '%s' is used before its declaration; a const is visible from its declaration on [§5.10]",
	         name);
	note_at(s->cc, kc->loc, "'%s' is declared here", name);
	return true;
}

void report_unknown_name(Sema *s, const char *name, Loc loc, const char *what, const char *const *extra,
                         int nextra)
{
	if (used_before_declaration(s, name, loc))
		return;
	Vec cands = {0};
	for (Scope *sc = s->scope; sc; sc = sc->parent)
		for (Binding *b = sc->first; b; b = b->next)
			if (!b->hidden)
				vec_push(s->a, &cands, (void *)b->name);
	for (int i = 0; i < nextra; i++)
		vec_push(s->a, &cands, (void *)extra[i]);
	const char *best = closest_name(name, (const char *const *)cands.items, cands.len);
	if (best)
		error_at(s->cc, loc, "unknown %s '%s'; did you mean '%s'? [§5.10]", what, name, best);
	else
		error_at(s->cc, loc, "unknown %s '%s' [§5.10]", what, name);
}

/* The names a declaration may not take (§5.10): builtins (and range) but
 * the hideable ones, and anything declared in the scopes from `sc`
 * outwards (no shadowing). */
bool check_new_name(Sema *s, Scope *sc, const char *name, Loc loc)
{
	if (is_reserved_name(name)) {
		error_at(s->cc, loc, "'%s' is the name of a builtin and cannot be declared [§5.10]", name);
		return false;
	}
	for (; sc; sc = sc->parent) {
		Binding *prev = lookup_in(sc, name);
		if (prev) {
			error_at(s->cc, loc, "'%s' is already declared (as %s); names cannot be redeclared or shadowed [§5.10]",
			         name, binding_desc(prev));
			if (prev->loc.line)
				note_at(s->cc, prev->loc, "'%s' is declared here", name);
			return false;
		}
	}
	return true;
}
