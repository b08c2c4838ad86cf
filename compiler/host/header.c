/* header.c - the C header pkc writes next to the object (-H file.h): one
 * launch function prototype per kernel, with a comment giving the kernel's
 * signature, grid, BlockSpecs and requires clauses as written in the
 * source.  It compiles as C99 (-Wall -Wextra -pedantic) and as C++.
 *
 * Also here: recovering clause text from the source (the launch stub's
 * "requires ... failed" message uses it too). */
#include "codegen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- clause text from the source ------------------------------------------------- */

static bool is_ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

/* Skips white space and comments; says whether there were any.  With
 * floordiv set (the previous token ends an operand in an expression), a
 * '//' on the same line is the floor-division operator, not a comment:
 * the lexer's rule (lexer.re). */
static const char *skip_space(const char *p, const char *end, bool floordiv, bool *any)
{
	*any = false;
	bool newline = false;
	while (p < end) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
			newline |= *p == '\n';
			p++;
		} else if (p + 1 < end && p[0] == '/' && p[1] == '/') {
			if (floordiv && !newline)
				break;
			while (p < end && *p != '\n')
				p++;
		} else if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			const char *q = p + 2;
			while (q + 1 < end && !(q[0] == '*' && q[1] == '/')) {
				newline |= *q == '\n';
				q++;
			}
			p = q + 1 < end ? q + 2 : end;
		} else {
			break;
		}
		*any = true;
	}
	return p;
}

/* The end of the token at p: an identifier, a string, or one character
 * (the text is rebuilt token by token, so finer splitting is harmless). */
static const char *token_end(const char *p, const char *end)
{
	if (is_ident_start(*p)) {
		while (p < end && is_ident_char(*p))
			p++;
		return p;
	}
	if (*p == '"') {
		p++;
		while (p < end && *p != '"' && *p != '\n')
			p += (*p == '\\' && p + 1 < end) ? 2 : 1;
		return p < end && *p == '"' ? p + 1 : p;
	}
	return p + 1;
}

static bool tok_is(const char *p, const char *q, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(q - p) == n && memcmp(p, word, n) == 0;
}

/* The keywords that start a kernel clause (lang-spec §3.4). */
typedef enum ClauseWord { CL_GRID, CL_SEMANTICS, CL_SPEC, CL_SCRATCH, CL_PARAMS, CL_REQUIRES, CL_COUNT } ClauseWord;
static const char *const clause_words[CL_COUNT] = {
	[CL_GRID] = "grid", [CL_SEMANTICS] = "semantics", [CL_SPEC] = "spec",
	[CL_SCRATCH] = "scratch", [CL_PARAMS] = "params", [CL_REQUIRES] = "requires",
};

/* A clause being collected: its text is rebuilt token by token, one
 * space wherever the source had white space or a comment. */
typedef struct Clause {
	ClauseWord word;     /* which clause */
	StrBuf text;            /* normalised text */
	const char *begin;   /* source span: the keyword ... */
	const char *end;     /* ... to the end of its last token */
	const char *body;    /* the first token after the keyword */
} Clause;

static Loc loc_of(const Source *src, const char *p)
{
	Loc l = {.file = src->path, .line = 1, .col = 1, .len = 1};
	int lo = 0, hi = src->nlines - 1;
	while (lo < hi) { /* the last line starting at or before p */
		int mid = (lo + hi + 1) / 2;
		if (src->lines[mid] <= p)
			lo = mid;
		else
			hi = mid - 1;
	}
	l.line = lo + 1;
	l.col = (int)(p - src->lines[lo]) + 1;
	return l;
}

static const char *loc_ptr(const Source *src, Loc l)
{
	if (l.line < 1 || l.line > src->nlines || l.col < 1)
		return NULL;
	const char *p = src->lines[l.line - 1] + (l.col - 1);
	return p <= src->text + src->size ? p : NULL;
}

static const char *finish(Arena *a, StrBuf *b)
{
	const char *s = arena_strndup(a, b->data ? b->data : "", b->len);
	free(b->data);
	memset(b, 0, sizeof *b);
	return s;
}

KernelClauses *kernel_clauses(Compiler *cc, const IrKernel *k)
{
	Arena *a = cc->arena;
	KernelClauses *kc = arena_alloc(a, sizeof *kc);
	const Source *src = k->loc.file ? source_find(cc, k->loc.file) : NULL;
	const char *p = src ? loc_ptr(src, k->loc) : NULL;
	if (!p)
		return kc;
	const char *end = src->text + src->size;
	Vec clauses = {0};
	Clause *cur = NULL;
	int depth = 0;
	bool in_params = false, seen_params = false;
	p = token_end(p, end); /* the kernel's name */
	char last = 0; /* last character of the previous token */
	for (;;) {
		bool space;
		/* '//' after an operand is floor division inside brackets (but not
		 * in the parameter list) and at the top level of a requires clause. */
		bool operand = is_ident_char(last) || last == '.' || last == ')' || last == ']';
		bool expr = depth > 0 ? !in_params : cur && cur->word == CL_REQUIRES;
		p = skip_space(p, end, operand && expr, &space);
		if (p >= end)
			break;
		const char *q = token_end(p, end);
		last = q[-1];
		if (depth == 0 && *p == '{' && seen_params)
			break;
		if (depth == 0 && !in_params && !seen_params && *p == '(')
			in_params = true;
		if (depth == 0 && !in_params && is_ident_start(*p)) {
			for (int w = 0; w < CL_COUNT; w++)
				if (tok_is(p, q, clause_words[w])) {
					cur = arena_alloc(a, sizeof *cur);
					cur->word = (ClauseWord)w;
					cur->begin = p;
					vec_push(a, &clauses, cur);
					space = false;
				}
		}
		if (*p == '(' || *p == '[')
			depth++;
		else if ((*p == ')' || *p == ']') && depth > 0 && --depth == 0 && in_params) {
			in_params = false;
			seen_params = true;
			p = q;
			continue;
		}
		if (cur && !in_params) {
			if (!cur->body && cur->begin != p)
				cur->body = p;
			strbuf_printf(&cur->text, "%s%.*s", space && cur->text.len ? " " : "", (int)(q - p), p);
			cur->end = q;
		}
		p = q;
	}

	int n = clauses.len;
	kc->specs = arena_alloc(a, (size_t)(n + 1) * sizeof *kc->specs);
	kc->scratch = arena_alloc(a, (size_t)(n + 1) * sizeof *kc->scratch);
	kc->requires = arena_alloc(a, (size_t)(n + 1) * sizeof *kc->requires);
	kc->require_locs = arena_alloc(a, (size_t)(n + 1) * sizeof *kc->require_locs);
	kc->require_spans = arena_alloc(a, (size_t)(2 * n + 1) * sizeof *kc->require_spans);
	for (int c = 0; c < n; c++) {
		Clause *cl = clauses.items[c];
		const char *text = finish(a, &cl->text);
		switch (cl->word) {
		case CL_GRID: kc->grid = text; break;
		case CL_SEMANTICS: kc->semantics = text; break;
		case CL_SPEC: kc->specs[kc->nspecs++] = text; break;
		case CL_SCRATCH: kc->scratch[kc->nscratch++] = text; break;
		case CL_PARAMS: kc->params = text; break;
		default:
			if (!cl->body)
				break;
			/* The constraint without the keyword: "requires n % 16 == 0". */
			text += strlen("requires");
			if (*text == ' ')
				text++;
			kc->requires[kc->nrequires] = text;
			kc->require_locs[kc->nrequires] = loc_of(src, cl->body);
			kc->require_spans[2 * kc->nrequires] = cl->begin;
			kc->require_spans[2 * kc->nrequires + 1] = cl->end;
			kc->nrequires++;
			break;
		}
	}
	return kc;
}

const char *requires_text(Compiler *cc, const IrKernel *k, const KernelClauses *kc, int index)
{
	Loc l = k->require_locs ? k->require_locs[index] : (Loc){0};
	const Source *src = l.file ? source_find(cc, l.file) : NULL;
	const char *p = src ? loc_ptr(src, l) : NULL;
	/* The clause whose source span holds the constraint's location... */
	if (kc && p)
		for (int c = 0; c < kc->nrequires; c++)
			if (kc->require_spans[2 * c] <= p && p < kc->require_spans[2 * c + 1])
				return kc->requires[c];
	/* ...else the one in the same position... */
	if (kc && kc->nrequires == k->nrequires)
		return kc->requires[index];
	/* ...else whatever the location spans. */
	if (p && l.len > 0 && p + l.len <= src->text + src->size)
		return arena_strndup(cc->arena, p, (size_t)l.len);
	return arena_printf(cc->arena, "constraint %d", index + 1);
}

/* ---- names ------------------------------------------------------------------------- */

/* A parameter's name in the prototype: the source name, with '_' appended
 * while it is reserved or already taken (names are only documentation
 * there, so this never changes the ABI). */
static const char *param_name(Arena *a, const char *name, const char **taken, int ntaken)
{
	const char *s = name;
	for (;;) {
		bool clash = c_name_reserved(s) || strcmp(s, "stream") == 0;
		for (int i = 0; i < ntaken && !clash; i++)
			clash = strcmp(s, taken[i]) == 0;
		if (!clash)
			return s;
		/* A reserved prefix needs a new prefix; anything else a suffix. */
		bool prefix = s[0] == '_' || s[0] == 'I' || s[0] == 'U' || starts_with(s, "pk_") || starts_with(s, "PK_");
		s = prefix ? arena_printf(a, "p%s%s", s[0] == '_' ? "" : "_", s) : arena_printf(a, "%s_", s);
	}
}

/* ---- the header ----------------------------------------------------------------------- */

static const char *c_type(DType dt)
{
	switch (dt) {
	case DT_BOOL: return "bool";
	case DT_I8: return "int8_t";
	case DT_I16: return "int16_t";
	case DT_I32: return "int32_t";
	case DT_I64: return "int64_t";
	case DT_U8: return "uint8_t";
	case DT_U16: return "uint16_t";
	case DT_U32: return "uint32_t";
	case DT_U64: return "uint64_t";
	case DT_F16: return "pk_f16";
	case DT_BF16: return "pk_bf16";
	case DT_F32: return "float";
	case DT_F64: return "double";
	default: internal_error("header: no C type for dtype %d", (int)dt);
	}
}

/* Text safe inside a C comment: no comment terminator, no control bytes. */
static const char *comment_safe(Arena *a, const char *s)
{
	size_t n = strlen(s);
	char *out = arena_alloc(a, 2 * n + 1), *q = out;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		*q++ = c < 0x20 || c == 0x7f ? '?' : (char)c;
		if (c == '*' && p[1] == '/')
			*q++ = ' ';
		if (c == '/' && p[1] == '*')
			*q++ = ' ';
	}
	*q = '\0';
	return out;
}

/* "f32[n, 128]" for an operand's whole array. */
static const char *array_str(Arena *a, const IrOperand *op)
{
	const Type *t = op->array;
	const char *s = arena_printf(a, "%s[", dtype_str(t->dtype));
	for (int d = 0; d < t->rank; d++) {
		const char *dim = t->dims[d] >= 0 ? arena_printf(a, "%lld", (long long)t->dims[d])
		                  : t->syms && t->syms[d] ? t->syms[d] : "?";
		s = arena_printf(a, "%s%s%s", s, d ? ", " : "", dim);
	}
	return arena_printf(a, "%s]", s);
}

static void kernel_doc(Compiler *cc, StrBuf *b, const IrKernel *k)
{
	Arena *a = cc->arena;
	KernelClauses *kc = kernel_clauses(cc, k);
	const char *sig = arena_printf(a, "%s(", k->name);
	for (int j = 0, n = 0; j < k->norder; j++) {
		int x = k->order_index[j];
		if (k->order[j] == KP_OPERAND) {
			const IrOperand *op = k->operands[x];
			const char *mode = op->mode == PM_IN ? "in" : op->mode == PM_OUT ? "out" : op->mode == PM_INOUT ? "inout" : "prefetch";
			sig = arena_printf(a, "%s%s%s: %s %s", sig, n++ ? ", " : "", op->name, mode, array_str(a, op));
		} else if (k->order[j] == KP_SCALAR) {
			sig = arena_printf(a, "%s%s%s: %s", sig, n++ ? ", " : "", k->scalars[x]->name,
			                   dtype_str(k->scalars[x]->dtype));
		}
	}
	strbuf_printf(b, "/* %s)\n", comment_safe(a, sig));
	if (kc->grid)
		strbuf_printf(b, " *   %s\n", comment_safe(a, kc->grid));
	else if (k->ngrid == 0)
		strbuf_printf(b, " *   (no grid: a single program)\n");
	if (kc->semantics)
		strbuf_printf(b, " *   %s\n", comment_safe(a, kc->semantics));
	for (int i = 0; i < kc->nspecs; i++)
		strbuf_printf(b, " *   %s\n", comment_safe(a, kc->specs[i]));
	for (int i = 0; i < kc->nscratch; i++)
		strbuf_printf(b, " *   %s\n", comment_safe(a, kc->scratch[i]));
	if (kc->params)
		strbuf_printf(b, " *   %s\n", comment_safe(a, kc->params));
	for (int i = 0; i < k->nrequires; i++)
		strbuf_printf(b, " *   requires %s\n", comment_safe(a, requires_text(cc, k, kc, i)));
	if (k->nsizes > 0) {
		strbuf_printf(b, " * Size%s", k->nsizes > 1 ? "s" : "");
		for (int s = 0; s < k->nsizes; s++)
			strbuf_printf(b, "%s%s", s ? ", " : " ", k->sizes[s]);
		strbuf_printf(b, ": the extents of the arrays' dimensions of that name (int64_t, >= 0).\n");
	}
	strbuf_printf(b, " */\n");
}

static void kernel_prototype(Compiler *cc, StrBuf *b, const IrKernel *k)
{
	Arena *a = cc->arena;
	const char **taken = arena_alloc(a, (size_t)(k->norder + 1) * sizeof *taken);
	strbuf_printf(b, "pk_status %s(pk_stream *stream", k->name);
	for (int j = 0; j < k->norder; j++) {
		int x = k->order_index[j];
		const char *name, *type;
		switch (k->order[j]) {
		case KP_OPERAND: {
			const IrOperand *op = k->operands[x];
			name = op->name;
			type = arena_printf(a, "%s%s *", param_mode_readonly(op->mode) ? "const " : "", c_type(op->array->dtype));
			break;
		}
		case KP_SCALAR:
			name = k->scalars[x]->name;
			type = arena_printf(a, "%s ", c_type(k->scalars[x]->dtype));
			break;
		default:
			name = k->sizes[x];
			type = "int64_t ";
			break;
		}
		taken[j] = param_name(a, name, taken, j);
		strbuf_printf(b, ", %s%s", type, taken[j]);
	}
	strbuf_printf(b, ");\n");
}

/* "_INT_B128" for --name-prefix=int_ --name-suffix=_b128 (runs of '_'
 * made one), so that variants' include guards differ; "" without them. */
static const char *name_affix(Arena *a, const IrModule *m)
{
	if (!m->name_prefix && !m->name_suffix)
		return "";
	const char *raw = arena_printf(a, "_%s_%s", m->name_prefix ? m->name_prefix : "", m->name_suffix ? m->name_suffix : "");
	char *out = arena_alloc(a, strlen(raw) + 1), *o = out;
	for (const char *p = raw; *p; p++)
		if (*p != '_' || (o > out && o[-1] != '_'))
			*o++ = *p;
	if (o > out + 1 && o[-1] == '_')
		o--;
	*o = '\0';
	return out[0] == '_' ? out : arena_printf(a, "_%s", out);
}

static bool uses_half(const IrKernel *k)
{
	for (int o = 0; o < k->noperands; o++)
		if (k->operands[o]->array->dtype == DT_F16 || k->operands[o]->array->dtype == DT_BF16)
			return true;
	for (int s = 0; s < k->nscalars; s++)
		if (k->scalars[s]->dtype == DT_F16 || k->scalars[s]->dtype == DT_BF16)
			return true;
	return false;
}

bool header_generate(Compiler *cc, const IrModule *m, const char *header_path, CodegenOutput *out)
{
	Arena *a = cc->arena;
	for (int i = 0; i < m->nkernels; i++)
		if (!check_kernel_name(cc, m->kernels[i]->name, m->kernels[i]->loc))
			return false;

	/* Include guard from the header's file name: FOO_BAR_H. */
	const char *slash = strrchr(header_path, '/');
	const char *base = slash ? slash + 1 : header_path;
	char *guard = arena_printf(a, "%s%s%s", is_ident_start(base[0]) && base[0] != '_' ? "" : "PK_", base,
	                           name_affix(a, m));
	for (char *p = guard; *p; p++)
		*p = (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : is_ident_char(*p) ? *p : '_';
	if (strcmp(guard, "PK_") == 0 || starts_with(guard, "PK_RUNTIME_H"))
		guard = arena_printf(a, "PKC_GENERATED_%s", guard);

	const char *src = m->source ? m->source : "<stdin>";
	bool half = false;
	for (int i = 0; i < m->nkernels; i++)
		half |= uses_half(m->kernels[i]);

	StrBuf b = {0};
	strbuf_printf(&b, "/* Generated by pkc %s from %s.  DO NOT EDIT:\n", PKC_VERSION, comment_safe(a, src));
	strbuf_printf(&b, " * edit the .pk file and recompile.\n"
	            " *\n"
	            " * One launch function per kernel.  Each runs the kernel's whole grid on\n"
	            " * `stream` (NULL: the default host stream) and returns when it is done.\n"
	            " * Arrays are dense, row-major, and must not be NULL; f16/bf16 values are\n"
	            " * passed as their bit patterns.  Returns PK_SUCCESS, PK_ERR_INVALID_VALUE\n"
	            " * (a NULL array, a negative size), PK_ERR_SIZE_CONSTRAINT (a requires\n"
	            " * clause does not hold) or an error of the launch; pk_last_error() has\n"
	            " * the details.  Link with libpkrt and libm. */\n");
	strbuf_printf(&b, "#ifndef %s\n#define %s\n\n", guard, guard);
	strbuf_printf(&b, "#include <stdint.h>\n#ifndef __cplusplus\n#include <stdbool.h>\n#endif\n#include <pk_runtime.h>\n\n");
	if (half)
		strbuf_printf(&b, "#ifndef PK_F16_TYPES_DEFINED\n#define PK_F16_TYPES_DEFINED\n"
		            "typedef uint16_t pk_f16;  /* IEEE 754 binary16, as its bits */\n"
		            "typedef uint16_t pk_bf16; /* bfloat16, as its bits */\n#endif\n\n");
	strbuf_printf(&b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
	for (int i = 0; i < m->nkernels; i++) {
		strbuf_printf(&b, "\n");
		kernel_doc(cc, &b, m->kernels[i]);
		kernel_prototype(cc, &b, m->kernels[i]);
	}
	strbuf_printf(&b, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */\n", guard);
	out->data = b.data;
	out->size = b.len;
	return true;
}
