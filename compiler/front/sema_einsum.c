/* sema_einsum.c - einsum(subscripts, a, b [, acc = T] [, precision = P])
 * (lang-spec §7.13), jnp.einsum of two operands whose letters are batch,
 * contracted, row (first operand only) or column (second only) axes.  The
 * common forms - one contracted letter, at most one row and one column
 * ("mk,kn->mn", "bqd,bkd->bqk", "bhqd,bhkd->bhqk") - are einsum_dot, which
 * leaves last-two-axis swaps to dot's trans flags; the others
 * ("bmk,kn->bmn", "mkl,kln->mn", "m,n->mn") are einsum_general, which
 * merges each group into one axis.  The subscripts are parsed
 * (parse_subscripts), classified (classify), and the product is a dot of
 * §7.13 with transposes, batch dims and reshapes around it - so every
 * target takes it as it takes dot.  Like debug_print, its first argument
 * is a string literal, so it reads its call from the AST. */
#include "sema.h"

#include <string.h>

enum { EIN_MAX = 52 }; /* letters a-z, A-Z: an operand names each at most once */

/* The parsed subscripts "in0,in1->out". */
typedef struct Subscripts {
	char in[2][EIN_MAX + 1];
	char out[EIN_MAX + 1];
} Subscripts;

/* Copies the letters of one term of str (up to a ',' or '-' or the end)
 * into term; reports anything else.  Returns the rest, or NULL. */
static const char *parse_term(Sema *s, const char *str, char *term, bool out, Loc loc)
{
	int n = 0;
	for (; *str && *str != ',' && *str != '-'; str++) {
		char c = *str;
		if (c == ' ')
			continue;
		if (c == '.') {
			error_at(s->cc, loc, "einsum(): '...' (ellipsis) is not supported: name every axis [§7.13]");
			return NULL;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
			error_at(s->cc, loc, "einsum(): '%c' in the subscripts: an axis is one letter a-z or A-Z [§7.13]", c);
			return NULL;
		}
		if (memchr(term, c, (size_t)n)) {
			if (out)
				error_at(s->cc, loc, "einsum(): output axis '%c' appears twice [§7.13]", c);
			else
				error_at(s->cc, loc, "einsum(): '%c' appears twice in one operand (a diagonal): not supported [§7.13]", c);
			return NULL;
		}
		term[n++] = c;
	}
	term[n] = 0;
	return str;
}

/* Parses "in0,in1->out": two operand terms and an explicit output. */
static bool parse_subscripts(Sema *s, const char *str, Loc loc, Subscripts *sub)
{
	memset(sub, 0, sizeof *sub);
	const char *p = parse_term(s, str, sub->in[0], false, loc);
	if (!p)
		return false;
	if (*p != ',') {
		error_at(s->cc, loc, "einsum(): the subscripts must name two operands, \"in0,in1->out\", found \"%s\" [§7.13]",
		         str);
		return false;
	}
	if (!(p = parse_term(s, p + 1, sub->in[1], false, loc)))
		return false;
	if (*p == ',') {
		error_at(s->cc, loc, "einsum() takes two operands: found a third term in \"%s\" [§7.13]", str);
		return false;
	}
	if (p[0] != '-' || p[1] != '>') {
		error_at(s->cc, loc, "einsum(): write the output's subscripts after '->' (\"%s->...\") [§7.13]", str);
		return false;
	}
	if (!(p = parse_term(s, p + 2, sub->out, true, loc)))
		return false;
	if (*p) {
		error_at(s->cc, loc, "einsum(): unexpected '%c' after the output's subscripts in \"%s\" [§7.13]", *p, str);
		return false;
	}
	return true;
}

/* The roles of the letters: batch letters (in both operands and the
 * output, in the output's order), the contracted letters ks (in both
 * operands, not in the output; in in0's order), the row letters ms (in0
 * and the output only) and column letters ns (in1 and the output only),
 * in the output's order.  k, m, n: the one letter of each group when it
 * has at most one (0 when none), the common forms einsum_dot takes. */
typedef struct Roles {
	char batch[EIN_MAX + 1];
	char ks[EIN_MAX + 1], ms[EIN_MAX + 1], ns[EIN_MAX + 1];
	char k, m, n;
	bool general; /* several row, column or contracted letters, or none contracted */
} Roles;

static bool classify(Sema *s, const Subscripts *sub, Loc loc, Roles *r)
{
	memset(r, 0, sizeof *r);
	int nb = 0, nk = 0, nm = 0, nn = 0;
	for (const char *c = sub->out; *c; c++) {
		bool in0 = strchr(sub->in[0], *c), in1 = strchr(sub->in[1], *c);
		if (in0 && in1)
			r->batch[nb++] = *c;
		else if (in0)
			r->ms[nm++] = *c;
		else if (in1)
			r->ns[nn++] = *c;
		else {
			error_at(s->cc, loc, "einsum(): output axis '%c' is in neither operand [§7.13]", *c);
			return false;
		}
	}
	for (int i = 0; i < 2; i++)
		for (const char *c = sub->in[i]; *c; c++) {
			if (strchr(sub->out, *c))
				continue;
			if (!strchr(sub->in[1 - i], *c)) {
				error_at(s->cc, loc, "einsum(): axis '%c' is only in operand %d and not in the output (a sum over it): "
				         "sum() it first [§7.13]", *c, i);
				return false;
			}
			if (i == 0)
				r->ks[nk++] = *c;
		}
	r->k = nk == 1 ? r->ks[0] : 0;
	r->m = nm == 1 ? r->ms[0] : 0;
	r->n = nn == 1 ? r->ns[0] : 0;
	r->general = nk != 1 || nm > 1 || nn > 1;
	return true;
}

/* Where letter c is in term (it is there). */
static int64_t axis_of(const char *term, char c)
{
	return (int64_t)(strchr(term, c) - term);
}

/* Operand x with subscripts term, arranged as [batch..., lead, trail] (lead
 * or trail may be 0: that axis is absent and gets extent 1).  A swap of the
 * last two axes is left to dot's trans flag (*trans); any other order is a
 * transpose here. */
static Ex arrange(Sema *s, Ex x, const char *term, const Roles *r, char lead, char trail, bool *trans, Loc loc)
{
	int nb = (int)strlen(r->batch), rank = ex_rank(&x);
	if (rank != (int)strlen(term)) {
		error_at(s->cc, x.loc, "einsum(): the subscripts \"%s\" name %d axes, and the operand is %s [§7.13]", term,
		         (int)strlen(term), ex_type_str(s, &x));
		return ex_error(loc);
	}
	int64_t perm[EIN_MAX];
	int n = 0;
	for (int i = 0; i < nb; i++)
		perm[n++] = axis_of(term, r->batch[i]);
	if (lead)
		perm[n++] = axis_of(term, lead);
	if (trail)
		perm[n++] = axis_of(term, trail);
	*trans = false;
	bool ident = true, swapped = lead && trail;
	for (int i = 0; i < n; i++) {
		ident &= perm[i] == i;
		swapped &= perm[i] == (i < nb ? i : i == nb ? nb + 1 : nb);
	}
	if (swapped)
		*trans = true;
	else if (!ident)
		x = sema_transpose(s, loc, x, perm, n);
	if (x.kind == EX_ERROR || (lead && trail))
		return x;
	int64_t dims[EIN_MAX + 1];
	const int64_t *d = ex_dims(&x);
	memcpy(dims, d, sizeof(int64_t) * (size_t)nb);
	dims[nb] = lead ? d[nb] : 1;
	dims[nb + 1] = trail ? d[nb] : 1;
	return ex_value(reshape_value(s, as_value(s, x), nb + 2, dims, loc), ex_weak(&x), loc);
}

/* The dot's result res with axes named by the letters `have` (reshaped to
 * dims first when `reshape`), arranged in the output's order. */
static Ex to_output(Sema *s, Loc loc, Ex res, const char *have, const int64_t *dims, bool reshape, const char *out)
{
	int nh = (int)strlen(have);
	if (reshape)
		res = ex_value(reshape_value(s, as_value(s, res), nh, dims, loc), false, loc);
	if (strcmp(have, out) == 0)
		return res;
	int64_t perm[EIN_MAX];
	for (int i = 0; i < nh; i++)
		perm[i] = axis_of(have, out[i]);
	return sema_transpose(s, loc, res, perm, nh);
}

/* The product of a and b by the subscripts: dot(A, B) of A [batch..., m, k]
 * and B [batch..., k, n], with the operands swapped when the output has n
 * before m; the result reshaped (an absent m or n) and transposed (batch
 * axes not leading) to the output's order. */
static Ex einsum_dot(Sema *s, Loc loc, const Subscripts *sub, const Roles *r, Ex a, Ex b, const DotOpts *opts)
{
	const char *ta = sub->in[0], *tb = sub->in[1];
	char m = r->m, n = r->n;
	if (m && n && axis_of(sub->out, n) < axis_of(sub->out, m)) { /* out = ..n..m..: (b^T a^T)^T */
		Ex e = a;
		a = b, b = e;
		ta = sub->in[1], tb = sub->in[0];
		m = r->n, n = r->m;
	}
	bool tra, trb;
	Ex x = arrange(s, a, ta, r, m, r->k, &tra, loc);
	Ex y = arrange(s, b, tb, r, r->k, n, &trb, loc);
	if (x.kind == EX_ERROR || y.kind == EX_ERROR)
		return ex_error(loc);
	DotOpts o = *opts;
	o.ta = tra, o.tb = trb;
	Ex res = sema_dot(s, loc, x, y, &o);
	if (res.kind == EX_ERROR)
		return res;
	/* res is [batch..., m or 1, n or 1]: its letters, then the output's order. */
	int nb = (int)strlen(r->batch);
	char have[EIN_MAX + 1];
	memcpy(have, r->batch, (size_t)nb);
	int nh = nb;
	int64_t dims[EIN_MAX + 1];
	memcpy(dims, ex_dims(&res), sizeof(int64_t) * (size_t)nb);
	if (m)
		have[nh] = m, dims[nh++] = ex_dims(&res)[nb];
	if (n)
		have[nh] = n, dims[nh++] = ex_dims(&res)[nb + 1];
	have[nh] = 0;
	return to_output(s, loc, res, have, dims, !m || !n, sub->out);
}

/* Operand x with subscripts term as [batch..., G1, G2]: its axes ordered
 * batch, then the letters of g1, then those of g2, each group merged into
 * one axis (extent 1 when empty). */
static Ex merge_groups(Sema *s, Ex x, const char *term, const char *batch, const char *g1, const char *g2, Loc loc)
{
	int rank = ex_rank(&x), nb = (int)strlen(batch);
	if (rank != (int)strlen(term)) {
		error_at(s->cc, x.loc, "einsum(): the subscripts \"%s\" name %d axes, and the operand is %s [§7.13]", term,
		         (int)strlen(term), ex_type_str(s, &x));
		return ex_error(loc);
	}
	const int64_t *d = ex_dims(&x);
	int64_t perm[EIN_MAX], dims[EIN_MAX + 1], g[2] = {1, 1};
	int n = 0;
	bool ident = true;
	for (int i = 0; i < nb; i++)
		perm[n++] = axis_of(term, batch[i]), dims[i] = d[perm[i]];
	const char *groups[2] = {g1, g2};
	for (int k = 0; k < 2; k++)
		for (const char *c = groups[k]; *c; c++) {
			perm[n++] = axis_of(term, *c);
			g[k] *= d[perm[n - 1]]; /* a value's elements fit (§10.2) */
		}
	for (int i = 0; i < n; i++)
		ident &= perm[i] == i;
	if (!ident)
		x = sema_transpose(s, loc, x, perm, n);
	if (x.kind == EX_ERROR)
		return x;
	dims[nb] = g[0], dims[nb + 1] = g[1];
	return ex_value(reshape_value(s, as_value(s, x), nb + 2, dims, loc), ex_weak(&x), loc);
}

/* The forms einsum_dot does not take - several row, column or contracted
 * letters, or none contracted (an outer product): each group merged into
 * one axis, the dot of §7.13 of [batch..., M, K] and [batch..., K, N], and
 * its result split back into [batch..., ms..., ns...] and arranged in the
 * output's order. */
static Ex einsum_general(Sema *s, Loc loc, const Subscripts *sub, const Roles *r, Ex a, Ex b, const DotOpts *opts)
{
	const int64_t *ad = ex_dims(&a), *bd = ex_dims(&b);
	Ex x = merge_groups(s, a, sub->in[0], r->batch, r->ms, r->ks, loc);
	if (x.kind == EX_ERROR)
		return x;
	Ex y = merge_groups(s, b, sub->in[1], r->batch, r->ks, r->ns, loc);
	if (y.kind == EX_ERROR)
		return y;
	for (const char *c = r->ks; *c; c++)
		if (ad[axis_of(sub->in[0], *c)] != bd[axis_of(sub->in[1], *c)]) {
			error_at(s->cc, loc, "einsum(): contracted axis '%c' has extent %lld in the first operand and %lld in the "
			         "second [§7.13]", *c, (long long)ad[axis_of(sub->in[0], *c)],
			         (long long)bd[axis_of(sub->in[1], *c)]);
			return ex_error(loc);
		}
	Ex res = sema_dot(s, loc, x, y, opts);
	if (res.kind == EX_ERROR)
		return res;
	int nb = (int)strlen(r->batch), nh = nb;
	char have[EIN_MAX + 1];
	int64_t dims[EIN_MAX + 1];
	memcpy(have, r->batch, (size_t)nb);
	memcpy(dims, ex_dims(&res), sizeof(int64_t) * (size_t)nb);
	for (const char *c = r->ms; *c; c++)
		have[nh] = *c, dims[nh++] = ad[axis_of(sub->in[0], *c)];
	for (const char *c = r->ns; *c; c++)
		have[nh] = *c, dims[nh++] = bd[axis_of(sub->in[1], *c)];
	have[nh] = 0;
	return to_output(s, loc, res, have, dims, true, sub->out);
}

Ex sema_einsum_of(Sema *s, Loc loc, const char *subscripts, Ex a, Ex b, const DotOpts *o)
{
	Subscripts sub;
	Roles r;
	if (!parse_subscripts(s, subscripts, loc, &sub) || !classify(s, &sub, loc, &r))
		return ex_error(loc);
	return (r.general ? einsum_general : einsum_dot)(s, loc, &sub, &r, a, b, o);
}

Ex sema_einsum(Sema *s, AstExpr *call)
{
	int npos = 0;
	const AstArg *acc = NULL, *precision = NULL;
	bool ok = true;
	for (int j = 0; j < call->nargs; j++) {
		const AstArg *arg = &call->args[j];
		if (!arg->name) {
			npos++;
		} else if (strcmp(arg->name, "acc") == 0 || strcmp(arg->name, "preferred_element_type") == 0) {
			/* jnp.einsum's preferred_element_type= is acc=. */
			if (acc) {
				error_at(s->cc, arg->loc, "einsum() takes one acc= (or preferred_element_type=, the same option) "
				         "[§7.13]");
				ok = false;
			}
			acc = arg;
		} else if (strcmp(arg->name, "precision") == 0 && !precision) {
			precision = arg;
		} else {
			error_at(s->cc, arg->loc, "einsum() takes the keywords acc= (a dtype; preferred_element_type= is the same) "
			         "and precision= once each, found '%s' [§7.13]", arg->name);
			ok = false;
		}
	}
	if (npos != 3 || call->args[0].name) {
		error_at(s->cc, call->loc, "einsum() takes the subscripts and two operands: einsum(\"mk,kn->mn\", a, b), %d "
		         "positional argument%s given [§7.13]", npos, npos == 1 ? "" : "s");
		eval_args(s, call);
		return ex_error(call->loc);
	}
	const AstExpr *str = call->args[0].value;
	if (str->kind != AE_STRING) {
		error_at(s->cc, str->loc, "the subscripts of einsum() must be a string literal such as \"mk,kn->mn\" [§7.13]");
		ok = false;
	}
	Ex a = sema_value_expr(s, call->args[1].value), b = sema_value_expr(s, call->args[2].value);
	DType acc_dt = DT_NONE;
	if (acc) {
		Ex e = sema_expr(s, acc->value);
		if (e.kind == EX_DTYPE)
			acc_dt = e.dt;
		else if (e.kind != EX_ERROR)
			error_at(s->cc, e.loc, "acc= of einsum() must be a dtype such as f32 (jnp's preferred_element_type), found %s "
			         "[§7.13]", ex_type_str(s, &e));
		ok &= e.kind == EX_DTYPE;
	}
	DotOpts o = {.acc_dt = acc_dt};
	if (precision) {
		Ex e = sema_precision_arg(s, precision->value);
		ok &= e.kind != EX_ERROR;
		o.precision = e.kind == EX_ERROR ? PREC_DEFAULT : (DotPrecision)e.c.i;
	}
	Subscripts sub;
	Roles r;
	if (!ok || !parse_subscripts(s, str->name, str->loc, &sub) || !classify(s, &sub, str->loc, &r) ||
	    a.kind == EX_ERROR || b.kind == EX_ERROR)
		return ex_error(call->loc);
	return (r.general ? einsum_general : einsum_dot)(s, call->loc, &sub, &r, a, b, &o);
}
