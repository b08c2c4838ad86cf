/* irprint.c - the stable text form of the IR (--emit=ir, --dump-after).
 * lang-spec/README.md, appendix "IR text form", is the reference; the output is byte-for-byte
 * deterministic (it depends only on the IR, never on addresses).
 *
 *   %5 = load {mask} %x[ds(%3, 16), :], %m : f32[16,128]
 *   %6 = const 0.1 : f32
 *   %9, %10 = for %0, %1, %2, %7, %8 (%i: i32, %acc: f32[16]) {
 *     ...
 *     yield %12, %13 : i32, f32[16]
 *   } : i32, f32[16]
 *   %11 = if %c {
 *     yield %4 : f32
 *   } else {
 *     yield %5 : f32
 *   } : f32
 *   %12 = while %0 (%x: i32) { ...cond... } do (%x: i32) { ...body... } : i32
 *
 * Results print as %<id>; region arguments as %<name> when they have one
 * (made unique among the names in scope with .1, .2, ...), else %<id>. */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which attribute an opcode prints in braces after its name. */
enum { A_NONE, A_AXIS, A_DIM, A_PERM, A_START, A_ATOMIC, A_ACCESS, A_PRECISION };

static const unsigned char op_attr[IR_OP_COUNT] = {
	[IR_PROGRAM_ID] = A_AXIS, [IR_NUM_PROGRAMS] = A_AXIS, [IR_CUMSUM] = A_AXIS, [IR_CONCAT] = A_AXIS,
	[IR_REVERSE] = A_AXIS,
	[IR_SLICE] = A_START,
	[IR_IOTA] = A_DIM, [IR_TRANSPOSE] = A_PERM, [IR_ATOMIC] = A_ATOMIC,
	[IR_LOAD] = A_ACCESS, [IR_STORE] = A_ACCESS, [IR_DOT] = A_PRECISION,
	/* F_REDUCE ops get A_AXIS from their flag (attr_of) */
};

static int attr_of(Op op)
{
	if ((unsigned)op >= IR_OP_COUNT)
		return A_NONE;
	return (op_info[op].flags & F_REDUCE) ? A_AXIS : op_attr[op];
}

/* Label before the second and later regions of an op ("} else {"). */
static const char *region_label(Op op)
{
	return op == IR_IF ? "else" : op == IR_WHILE ? "do" : "region";
}

static const char *const mode_name[] = {
	[PM_SCALAR] = "", [PM_IN] = "in", [PM_OUT] = "out", [PM_INOUT] = "inout", [PM_PREFETCH] = "prefetch",
};

static const char *const semantics_name[] = {
	[AXIS_PARALLEL] = "parallel", [AXIS_ARBITRARY] = "arbitrary",
};

/* Print state for one kernel. */
typedef struct Printer {
	FILE *out;           /* where the text goes */
	const IrKernel *k;   /* the kernel (may be NULL for ir_print_inst) */
	Arena *arena;        /* printed names */
	const char **names;  /* per Value.id: unique printed name of a named region arg, else NULL */
	int nnames;          /* entries in names (k->nvalues) */
	const char **scope;  /* names of region args in scope, for uniqueness (stack) */
	int nscope, capscope;/* used / allocated entries of scope */
	bool oneline;        /* ir_print_inst: regions elided as {...} */
} Printer;

/* ---- naming -------------------------------------------------------------- */

static bool in_scope(const Printer *p, const char *s)
{
	for (int i = 0; i < p->nscope; i++)
		if (strcmp(p->scope[i], s) == 0)
			return true;
	return false;
}

static void name_region(Printer *p, const Region *r);

/* Gives each named argument of r a name not in scope, then names the
 * regions nested in r.  Sibling regions may reuse a name; nested ones may
 * not, so every name denotes one value wherever it is visible. */
static void name_region(Printer *p, const Region *r)
{
	if (!r)
		return;
	int mark = p->nscope;
	for (int a = 0; a < r->nargs; a++) {
		const Value *v = r->args[a];
		if (!v || !v->name || v->id < 0 || v->id >= p->nnames)
			continue;
		const char *s = v->name;
		for (int n = 1; in_scope(p, s); n++)
			s = arena_printf(p->arena, "%s.%d", v->name, n);
		p->names[v->id] = s;
		if (p->nscope == p->capscope) {
			p->capscope = p->capscope ? 2 * p->capscope : 16;
			p->scope = xrealloc(p->scope, (size_t)p->capscope * sizeof *p->scope);
		}
		p->scope[p->nscope++] = s;
	}
	for (const Inst *i = r->first; i; i = i->next)
		for (int j = 0; j < i->nregions; j++)
			name_region(p, i->regions[j]);
	p->nscope = mark;
}

static void printer_init(Printer *p, FILE *out, const IrKernel *k)
{
	memset(p, 0, sizeof *p);
	p->out = out;
	p->k = k;
	p->arena = arena_new();
	if (!k)
		return;
	p->nnames = k->nvalues > 0 ? k->nvalues : 0;
	p->names = arena_alloc(p->arena, (size_t)p->nnames * sizeof *p->names + 1);
	/* Kernel-level regions are separate scopes. */
	name_region(p, k->grid);
	name_region(p, k->requires);
	for (int o = 0; o < k->noperands; o++)
		if (k->operands[o])
			name_region(p, k->operands[o]->index_map);
	name_region(p, k->body);
}

static void printer_done(Printer *p)
{
	free(p->scope);
	arena_free(p->arena);
}

/* ---- pieces ---------------------------------------------------------------- */

static void put_value(Printer *p, const Value *v)
{
	if (!v)
		fputs("%<null>", p->out);
	else if (v->id >= 0 && v->id < p->nnames && p->names[v->id])
		fprintf(p->out, "%%%s", p->names[v->id]);
	else
		fprintf(p->out, "%%%d", v->id);
}

static void put_type(Printer *p, const Type *t)
{
	type_fprint(p->out, t);
}

/* dtype[dims] of a Ref without its ref<...> wrapper (parameter lists). */
static void put_bare_type(Printer *p, const Type *t)
{
	if (!t) {
		put_type(p, t);
		return;
	}
	Type bare = *t;
	bare.kind = TY_VALUE;
	put_type(p, &bare);
}

/* Shortest %.Ng text of v that reads back as the same number: as the same
 * double, or - for an f32 constant that is exactly a float, as sema makes
 * them - as the same float (so 0.1f prints 0.1, not 0.10000000149011612).
 * Deterministic; inf, -inf and nan by name; always a '.' or an exponent so
 * it reads as a float. */
static void put_float(Printer *p, double v, DType dt)
{
	if (isnan(v)) {
		fputs("nan", p->out);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "inf" : "-inf", p->out);
		return;
	}
	bool as_float = dt == DT_F32 && (double)(float)v == v;
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, v);
		if (as_float ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, p->out);
	if (!strpbrk(buf, ".e"))
		fputs(".0", p->out);
}

static void put_const(Printer *p, const Inst *i)
{
	const Type *t = i->nresults > 0 && i->results[0] ? i->results[0]->type : NULL;
	DType dt = t ? t->dtype : DT_NONE;
	if (dtype_is_float(dt))
		put_float(p, i->fval, dt);
	else if (dt == DT_BOOL)
		fputs(i->ival ? "true" : "false", p->out);
	else if (dtype_is_unsigned(dt))
		fprintf(p->out, "%llu", (unsigned long long)i->ival);
	else
		fprintf(p->out, "%lld", (long long)i->ival);
}

/* " {axis = 1}", " {perm = [1, 0]}", " {kind = add, mask}", " {mask, other}" */
static void put_attrs(Printer *p, const Inst *i)
{
	int a = attr_of(i->op);
	int n = 0;
#define SEP() fputs(n++ ? ", " : " {", p->out)
	switch (a) {
	case A_AXIS:
		SEP();
		fprintf(p->out, "axis = %lld", (long long)i->ival);
		break;
	case A_DIM:
		SEP();
		fprintf(p->out, "dim = %lld", (long long)i->ival);
		break;
	case A_PERM:
	case A_START:
		SEP();
		fputs(a == A_PERM ? "perm = [" : "start = [", p->out);
		for (int j = 0; j < i->nperm; j++)
			fprintf(p->out, "%s%lld", j ? ", " : "", (long long)(i->perm ? i->perm[j] : 0));
		fputs("]", p->out);
		break;
	case A_ATOMIC:
		SEP();
		if (i->ival >= 0 && i->ival < ATOMIC_KIND_COUNT)
			fprintf(p->out, "kind = %s", atomic_kind_names[i->ival]);
		else
			fprintf(p->out, "kind = %lld", (long long)i->ival);
		break;
	case A_PRECISION: /* the default is not printed */
		if (i->ival > PREC_DEFAULT && i->ival < PREC_COUNT) {
			SEP();
			fprintf(p->out, "precision = %s", dot_precision_names[i->ival]);
		}
		break;
	default:
		break;
	}
	if (a == A_ATOMIC || a == A_ACCESS) {
		if (i->has_mask) {
			SEP();
			fputs("mask", p->out);
		}
		if (i->has_other) {
			SEP();
			fputs("other", p->out);
		}
	}
	if (i->str) { /* the text as a C string literal: quotes, backslashes and controls escaped */
		SEP();
		fputs(i->op == IR_DEBUG_PRINT ? "fmt = \"" : "msg = \"", p->out);
		for (const unsigned char *c = (const unsigned char *)i->str; *c; c++) {
			if (*c == '"' || *c == '\\')
				fprintf(p->out, "\\%c", *c);
			else if (*c < 0x20 || *c == 0x7f)
				fprintf(p->out, "\\x%02x", *c);
			else
				fputc(*c, p->out);
		}
		fputc('"', p->out);
	}
	if (i->op == IR_FOR && i->reassoc) {
		SEP();
		fputs("reassoc", p->out);
	}
	if (n)
		fputs("}", p->out);
#undef SEP
}

/* The operand at *next, advancing it; tolerates a short operand list so
 * that ill-formed IR can still be shown by the verifier. */
static void put_arg_at(Printer *p, const Inst *i, int *next)
{
	if (*next < i->nargs)
		put_value(p, i->args[*next]);
	else
		fputs("%<missing>", p->out);
	(*next)++;
}

/* "%x[:, %i, ds(%s, 16), gather(%g)]" then ", extra operands". */
static void put_access(Printer *p, const Inst *i)
{
	int next = 1;
	fputc(' ', p->out);
	put_arg_at(p, i, &(int){0});
	fputc('[', p->out);
	for (int d = 0; d < i->nidx && i->idx; d++) {
		const Indexer *x = &i->idx[d];
		if (d)
			fputs(", ", p->out);
		if (x->masked)
			fputs("masked(", p->out);
		switch (x->kind) {
		case IDX_FULL:
			fputc(':', p->out);
			break;
		case IDX_POINT:
			put_arg_at(p, i, &next);
			break;
		case IDX_SLICE:
			fputs("ds(", p->out);
			put_arg_at(p, i, &next);
			fprintf(p->out, ", %lld)", (long long)x->size);
			break;
		case IDX_GATHER:
			fputs("gather(", p->out);
			put_arg_at(p, i, &next);
			fputc(')', p->out);
			break;
		}
		if (x->masked)
			fputc(')', p->out);
	}
	fputc(']', p->out);
	for (; next < i->nargs; next++) {
		fputs(", ", p->out);
		put_value(p, i->args[next]);
	}
}

static void put_region_args(Printer *p, const Region *r)
{
	fputc('(', p->out);
	for (int a = 0; a < r->nargs; a++) {
		if (a)
			fputs(", ", p->out);
		put_value(p, r->args[a]);
		fputs(": ", p->out);
		put_type(p, r->args[a] ? r->args[a]->type : NULL);
	}
	fputc(')', p->out);
}

static void put_indent(Printer *p, int indent)
{
	fprintf(p->out, "%*s", indent, "");
}

static void put_inst(Printer *p, const Inst *i, int indent);

/* "{", the instructions at indent + 2, "}" at indent. */
static void put_block(Printer *p, const Region *r, int indent)
{
	if (p->oneline) {
		fputs("{...}", p->out);
		return;
	}
	fputs("{\n", p->out);
	for (const Inst *i = r ? r->first : NULL; i; i = i->next)
		put_inst(p, i, indent + 2);
	put_indent(p, indent);
	fputc('}', p->out);
}

/* A comma-separated list of the types of n values. */
static void put_types(Printer *p, Value *const *vals, int n)
{
	for (int j = 0; j < n; j++) {
		if (j)
			fputs(", ", p->out);
		put_type(p, vals && vals[j] ? vals[j]->type : NULL);
	}
}

/* One instruction; without a trailing newline in oneline mode. */
static void put_inst(Printer *p, const Inst *i, int indent)
{
	put_indent(p, indent);
	for (int r = 0; r < i->nresults; r++) {
		if (r)
			fputs(", ", p->out);
		put_value(p, i->results ? i->results[r] : NULL);
	}
	if (i->nresults > 0)
		fputs(" = ", p->out);
	fputs((unsigned)i->op < IR_OP_COUNT ? op_info[i->op].name : "<bad-op>", p->out);
	put_attrs(p, i);
	if (i->op == IR_CONST) {
		fputc(' ', p->out);
		put_const(p, i);
	} else if (i->op == IR_LOAD || i->op == IR_STORE || i->op == IR_ATOMIC) {
		put_access(p, i);
	} else {
		for (int a = 0; a < i->nargs; a++) {
			fputs(a ? ", " : " ", p->out);
			put_value(p, i->args[a]);
		}
	}
	for (int r = 0; r < i->nregions; r++) {
		const Region *reg = i->regions[r];
		fputc(' ', p->out);
		if (r)
			fprintf(p->out, "%s ", region_label(i->op));
		if (reg && reg->nargs) {
			put_region_args(p, reg);
			fputc(' ', p->out);
		}
		put_block(p, reg, indent);
	}
	if (i->nresults > 0) {
		fputs(" : ", p->out);
		put_types(p, i->results, i->nresults);
	} else if (i->op == IR_YIELD && i->nargs > 0) {
		fputs(" : ", p->out);
		put_types(p, i->args, i->nargs);
	}
	if (!p->oneline)
		fputc('\n', p->out);
}

/* "  name(args) {...}\n" for a kernel-level region. */
static void put_clause_region(Printer *p, const char *head, const Region *r)
{
	fprintf(p->out, "  %s", head);
	put_region_args(p, r);
	fputc(' ', p->out);
	put_block(p, r, 2);
	fputc('\n', p->out);
}

/* One launch parameter of the kernel header. */
static void put_param(Printer *p, KParamKind kind, int index)
{
	const IrKernel *k = p->k;
	switch (kind) {
	case KP_OPERAND: {
		const IrOperand *o = index >= 0 && index < k->noperands ? k->operands[index] : NULL;
		if (!o) {
			fputs("%<bad-operand>", p->out);
			return;
		}
		fprintf(p->out, "%%%s: %s ", o->name,
		        (unsigned)o->mode < sizeof mode_name / sizeof *mode_name ? mode_name[o->mode] : "?");
		put_bare_type(p, o->array);
		return;
	}
	case KP_SCALAR:
		if (index >= 0 && index < k->nscalars && k->scalars[index])
			fprintf(p->out, "%%%s: %s", k->scalars[index]->name, dtype_str(k->scalars[index]->dtype));
		else
			fputs("%<bad-scalar>", p->out);
		return;
	case KP_SIZE:
		if (index >= 0 && index < k->nsizes)
			fprintf(p->out, "%%%s: i64", k->sizes[index]);
		else
			fputs("%<bad-size>", p->out);
		return;
	}
}

static void put_kernel(Printer *p)
{
	const IrKernel *k = p->k;
	fprintf(p->out, "kernel @%s(", k->name ? k->name : "<anon>");
	int n = 0;
	if (k->norder > 0 && k->order && k->order_index) {
		for (int j = 0; j < k->norder; j++, n++) {
			fputs(n ? ", " : "", p->out);
			put_param(p, k->order[j], k->order_index[j]);
		}
	} else {
		/* No launch order recorded: operands, scalars, sizes. */
		static const KParamKind kinds[] = {KP_OPERAND, KP_SCALAR, KP_SIZE};
		int counts[] = {k->noperands, k->nscalars, k->nsizes};
		for (int c = 0; c < 3; c++)
			for (int j = 0; j < counts[c]; j++, n++) {
				fputs(n ? ", " : "", p->out);
				put_param(p, kinds[c], j);
			}
	}
	fputs(")\n", p->out);

	if (k->grid)
		put_clause_region(p, "grid", k->grid);
	if (k->ngrid > 0 && k->semantics) {
		fputs("  semantics(", p->out);
		for (int a = 0; a < k->ngrid; a++)
			fprintf(p->out, "%s%s", a ? ", " : "",
			        (unsigned)k->semantics[a] < 2 ? semantics_name[k->semantics[a]] : "?");
		fputs(")\n", p->out);
	}
	for (int o = 0; o < k->noperands; o++) {
		const IrOperand *op = k->operands[o];
		if (!op || !op->has_spec)
			continue;
		fprintf(p->out, "  spec %%%s [", op->name);
		int rank = op->array ? op->array->rank : 0;
		for (int d = 0; d < rank; d++) {
			fputs(d ? ", " : "", p->out);
			if (op->squeezed && op->squeezed[d])
				fputs("None", p->out);
			else
				fprintf(p->out, "%lld", (long long)(op->block ? op->block[d] : 0));
		}
		fputs("] ", p->out);
		if (op->index_map) {
			put_region_args(p, op->index_map);
			fputc(' ', p->out);
			put_block(p, op->index_map, 2);
		} else {
			fputs("<no index map>", p->out);
		}
		fputc('\n', p->out);
	}
	for (int s = 0; s < k->nscratch; s++) {
		const IrScratch *sc = k->scratch[s];
		if (!sc)
			continue;
		fprintf(p->out, "  scratch %%%s: ", sc->name);
		put_bare_type(p, sc->type);
		fputc('\n', p->out);
	}
	fprintf(p->out, "  params(num_warps = %d, num_stages = %d)\n", k->num_warps, k->num_stages);
	if (k->requires)
		put_clause_region(p, "requires", k->requires);
	if (k->refs_lowered || k->tiled)
		fprintf(p->out, "  lowered(%s%s%s)\n", k->refs_lowered ? "refs" : "",
		        k->refs_lowered && k->tiled ? ", " : "", k->tiled ? "tiled" : "");
	if (k->body)
		put_clause_region(p, "body", k->body);
}

/* ---- entry points ------------------------------------------------------------ */

void ir_print_kernel(FILE *out, const IrKernel *k)
{
	Printer p;
	printer_init(&p, out, k);
	put_kernel(&p);
	printer_done(&p);
}

void ir_print_module(FILE *out, const IrModule *m)
{
	for (int i = 0; i < m->nkernels; i++) {
		if (i)
			fputc('\n', out);
		ir_print_kernel(out, m->kernels[i]);
	}
}

void ir_print_inst(FILE *out, const IrKernel *k, const Inst *i)
{
	Printer p;
	printer_init(&p, out, k);
	p.oneline = true;
	put_inst(&p, i, 0);
	printer_done(&p);
}
