/* pk_mutator.c - a libFuzzer custom mutator for .pk text that keeps
 * programs mostly valid, so that mutants get past the front end and reach
 * the back ends (fuzz_pipeline.c).  It splits the input into tokens (a rough
 * copy of the lexer's rules: exactness does not matter here) and edits whole
 * tokens or lines:
 *
 *   a number          -> an interesting value (0, 1, -1, 2^31, 2^62, 4096, ...)
 *                        or a neighbour (n+1, n-1, 2n, n/2)
 *   a name            -> another name of the same file
 *   a dtype / builtin / keyword / keyword argument / operator
 *                     -> another of its class (exp -> sqrt, in -> inout, ...)
 *   an operand        -> (a op b), u(a), astype(a, dt) or -a; or swapped with
 *                        another of its kind
 *   a statement or clause line
 *                     -> deleted, duplicated, or swapped with another
 *   any token         -> (rarely) deleted, duplicated, or a word inserted
 *                        before it
 *
 * Edits that keep programs valid more often are picked more often (about a
 * third of the mutants of the seeds pass the front end).  1 to 4 edits per
 * call (mostly 1); 1 call in 6 goes to libFuzzer's own byte-level mutations
 * instead (LLVMFuzzerMutate, with -dict=pk.dict).  The cross-over adds a
 * kernel, const or include of one input to another, or replaces one. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                                 uint8_t *out, size_t max_out_size, unsigned int seed);

/* ---- word classes ------------------------------------------------------------ */

#define NELEMS(a) (int)(sizeof(a) / sizeof((a)[0]))

static const char *const numbers[] = {
	"0", "1", "-1", "2", "3", "4", "7", "8", "16", "31", "32", "64", "100", "127", "128", "255", "256", "512",
	"1000", "1023", "1024", "4096", "65535", "65536", "2147483647", "2147483648", "-2147483648", "4294967296",
	"4611686018427387904", "9223372036854775807", "0x10", "0b101", "1_000", "0.0", "-0.0", "0.5", "1.5",
	"1e-5", "1e30", "3.4e38", "1e-45", "1e308",
};

/* Replacements stay in their class: a mutant that swaps exp for sqrt is
 * still well typed, one that swaps exp for dot is not. */
static const char *const dtypes[] = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                                     "f16", "bf16", "f32", "f64"};
static const char *const unary[] = {"exp", "exp2", "log", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid",
                                    "erf", "sin", "cos", "floor", "ceil", "abs", "cumsum"};
static const char *const binary[] = {"minimum", "maximum", "pow", "floordiv", "cdiv", "dot", "reshape",
                                     "broadcast_to", "full", "astype"};
static const char *const reductions[] = {"sum", "max", "min", "argmax", "argmin", "cumsum", "transpose"};
static const char *const atomics[] = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
                                      "atomic_xor", "atomic_xchg"};
static const char *const makers[] = {"zeros", "ones", "iota", "program_id", "num_programs", "ds"};
static const char *const memory[] = {"load", "store", "where"};
static const char *const kwargs[] = {"axis", "keepdims", "dim", "dtype", "acc", "trans_a", "trans_b",
                                     "mask", "other", "num_warps", "num_stages"};
static const char *const modes[] = {"in", "out", "inout", "prefetch"};
static const char *const decls[] = {"let", "var", "const"};
static const char *const semantics[] = {"parallel", "arbitrary"};
static const char *const literals[] = {"true", "false", "None", "inf", "nan"};
static const char *const logic[] = {"and", "or"};
static const char *const control[] = {"if", "else", "when", "for", "while", "range", "not"};
static const char *const clauses[] = {"grid", "spec", "scratch", "params", "semantics", "requires"};
static const char *const operators[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^",
                                        "<", ">", "<=", ">=", "==", "!="};
static const char *const updates[] = {"+=", "-=", "*=", "/="};
static const char *const structure[] = {"kernel", "include"};
static const char *const brackets[] = {"(", ")", "[", "]", "{", "}", ",", ":", ";", "...", "->", ".", "~"};

typedef struct WordClass {
	const char *const *words;
	int n;
	bool swap; /* a word of the class may replace another (else only inserted) */
} WordClass;

#define CLASS(a, swap) {a, NELEMS(a), swap}
static const WordClass classes[] = {
	CLASS(dtypes, true), CLASS(unary, true), CLASS(binary, true), CLASS(reductions, true),
	CLASS(atomics, true), CLASS(makers, true), CLASS(memory, true), CLASS(kwargs, true), CLASS(modes, true),
	CLASS(decls, true), CLASS(semantics, true), CLASS(literals, true), CLASS(logic, true),
	CLASS(operators, true), CLASS(updates, true), CLASS(control, false), CLASS(clauses, false),
	CLASS(structure, false), CLASS(brackets, false),
};
enum { NCLASSES = NELEMS(classes) };
/* Indexes into classes[] of the words E_WRAP uses. */
enum { NCLASS_DTYPES = 0, NCLASS_UNARY = 1, NCLASS_DECLS = 9, NCLASS_LOGIC = 12, NCLASS_OPERATORS = 13,
       NCLASS_CLAUSES = 16 };

/* ---- random numbers (xorshift32) --------------------------------------------- */

typedef struct Rng {
	uint32_t s;
} Rng;

static uint32_t rnd(Rng *r, uint32_t n)
{
	uint32_t x = r->s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	r->s = x;
	return n ? x % n : 0;
}

/* ---- tokens ------------------------------------------------------------------ */

typedef enum TokKind { TK_IDENT, TK_NUMBER, TK_STRING, TK_PUNCT } TokKind;

typedef struct Tok {
	size_t start, end; /* [start, end) in the text */
	TokKind kind;
} Tok;

enum { MAX_TOKS = 4096 };

static bool is_alpha(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* The tokens of s (comments and white space skipped); "//" after an
 * operand on the same line is floor division, elsewhere a comment. */
static int tokenize(const uint8_t *s, size_t n, Tok *t)
{
	static const char *const multi[] = {"...", "->", "==", "!=", "<=", ">=", "<<", ">>", "**", "+=",
	                                    "-=", "*=", "/=", "//"};
	int nt = 0;
	bool operand_on_line = false;
	for (size_t i = 0; i < n && nt < MAX_TOKS;) {
		size_t b = i;
		int c = s[i];
		if (c == '\n') {
			operand_on_line = false;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r') {
			i++;
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '*') {
			for (i += 2; i + 1 < n && !(s[i] == '*' && s[i + 1] == '/'); i++)
				;
			i = i + 2 < n ? i + 2 : n;
			continue;
		}
		if (c == '/' && i + 1 < n && s[i + 1] == '/' && !operand_on_line) {
			while (i < n && s[i] != '\n')
				i++;
			continue;
		}
		TokKind k = TK_PUNCT;
		if (is_alpha(c)) {
			while (i < n && (is_alpha(s[i]) || is_digit(s[i])))
				i++;
			k = TK_IDENT;
		} else if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(s[i + 1]))) {
			/* digits, letters, '_', '.', and a sign after an exponent */
			for (i++; i < n; i++) {
				if (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '.')
					continue;
				if ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E') && s[b] != '0')
					continue;
				break;
			}
			k = TK_NUMBER;
		} else if (c == '"') {
			for (i++; i < n && s[i] != '"' && s[i] != '\n'; i++)
				if (s[i] == '\\')
					i++;
			i = i < n ? i + 1 : n;
			k = TK_STRING;
		} else {
			i++;
			for (int m = 0; m < NELEMS(multi); m++) {
				size_t len = strlen(multi[m]);
				if (b + len <= n && memcmp(s + b, multi[m], len) == 0) {
					i = b + len;
					break;
				}
			}
		}
		operand_on_line = k != TK_PUNCT || c == ')' || c == ']';
		t[nt++] = (Tok){b, i, k};
	}
	return nt;
}

static bool tok_is(const uint8_t *s, const Tok *t, const char *w)
{
	size_t len = strlen(w);
	return t->end - t->start == len && memcmp(s + t->start, w, len) == 0;
}

/* The word class of a token, or -1. */
static int class_of(const uint8_t *s, const Tok *t)
{
	for (int c = 0; c < NCLASSES; c++)
		for (int w = 0; w < classes[c].n; w++)
			if (tok_is(s, t, classes[c].words[w]))
				return c;
	return -1;
}

/* ---- edits ------------------------------------------------------------------- */

/* Builds the result of one edit in a scratch buffer of `cap` bytes. */
typedef struct Out {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
} Out;

static void put(Out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		o->overflow = true;
		return;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

static void put_str(Out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* s with [a, b) replaced by `with` (len bytes). */
static void splice(Out *o, const uint8_t *s, size_t n, size_t a, size_t b, const void *with, size_t len)
{
	put(o, s, a);
	put(o, with, len);
	put(o, s + b, n - b);
}

/* A number for token t: an interesting value, or a neighbour of t's value. */
static void new_number(Rng *r, const uint8_t *s, const Tok *t, char *buf, size_t cap)
{
	long long v = 0;
	bool plain = true;
	for (size_t i = t->start; i < t->end && plain; i++) {
		plain = is_digit(s[i]) && v < 1000000000000LL;
		v = v * 10 + (s[i] - '0');
	}
	if (plain && rnd(r, 3) == 0) {
		long long nv[] = {v + 1, v > 0 ? v - 1 : 0, v * 2, v / 2};
		snprintf(buf, cap, "%lld", nv[rnd(r, 4)]);
		return;
	}
	snprintf(buf, cap, "%s", numbers[rnd(r, NELEMS(numbers))]);
}

/* The tokens of one input, for the predicates that pick one. */
typedef struct Text {
	const uint8_t *s;
	size_t n;
	const Tok *t;
	int nt;
} Text;

typedef bool (*TokPred)(const Text *x, int i);

/* A random token i for which ok() holds (64 tries), or -1. */
static int pick(Rng *r, const Text *x, TokPred ok)
{
	for (int k = 0; k < 64; k++) {
		int i = (int)rnd(r, (uint32_t)x->nt);
		if (ok(x, i))
			return i;
	}
	return -1;
}

static bool tok_is_at(const Text *x, int i, const char *w)
{
	return i >= 0 && i < x->nt && tok_is(x->s, &x->t[i], w);
}

static bool is_number(const Text *x, int i)
{
	return x->t[i].kind == TK_NUMBER;
}

/* A name of the program (not a keyword, dtype or builtin). */
static bool is_name(const Text *x, int i)
{
	return x->t[i].kind == TK_IDENT && class_of(x->s, &x->t[i]) < 0;
}

/* A name or number inside an expression: not one being declared (before
 * ':' or '=', after let/var/const/kernel/spec/scratch). */
static bool is_operand(const Text *x, int i)
{
	if (!is_number(x, i) && !is_name(x, i))
		return false;
	if (tok_is_at(x, i + 1, ":") || tok_is_at(x, i + 1, "="))
		return false;
	static const char *const declarers[] = {"let", "var", "const", "kernel", "spec", "scratch"};
	for (int k = 0; k < NELEMS(declarers); k++)
		if (tok_is_at(x, i - 1, declarers[k]))
			return false;
	return true;
}

static bool is_swappable(const Text *x, int i)
{
	int c = class_of(x->s, &x->t[i]);
	return c >= 0 && classes[c].swap;
}

/* The line of token i, [*l0, *l1) with its newline, if it is a statement
 * (its first word let, var, a name, if, for or while) or a clause
 * (grid, spec ...) with balanced brackets: deleting, copying or moving one
 * keeps the program parseable more often than not.  *clause tells which. */
static bool movable_line(const Text *x, int i, size_t *l0, size_t *l1, bool *clause)
{
	const uint8_t *s = x->s;
	size_t a = x->t[i].start, b = x->t[i].end;
	while (a > 0 && s[a - 1] != '\n')
		a--;
	while (b < x->n && s[b] != '\n')
		b++;
	int depth = 0;
	for (size_t k = a; k < b; k++)
		depth += (s[k] == '(' || s[k] == '[' || s[k] == '{') - (s[k] == ')' || s[k] == ']' || s[k] == '}');
	while (i > 0 && x->t[i - 1].start >= a) /* the first token of the line */
		i--;
	int c = class_of(s, &x->t[i]);
	*l0 = a;
	*l1 = b < x->n ? b + 1 : x->n;
	*clause = c == NCLASS_CLAUSES;
	return depth == 0 && x->t[i].start >= a && x->t[i].start < b &&
	       (is_name(x, i) || tok_is_at(x, i, "let") || tok_is_at(x, i, "var") || tok_is_at(x, i, "if") ||
	        tok_is_at(x, i, "for") || tok_is_at(x, i, "while") || *clause);
}

typedef enum Edit { E_NUMBER, E_CLASS, E_NAME, E_WRAP, E_SWAP, E_LINE, E_DELETE, E_DUP, E_INSERT } Edit;

/* Weights (of 32): edits that keep a program valid more often come first. */
static const struct {
	Edit edit;
	int weight;
} edit_weights[] = {
	{E_NUMBER, 8}, {E_CLASS, 7}, {E_NAME, 3}, {E_WRAP, 4}, {E_SWAP, 2}, {E_LINE, 5},
	{E_DELETE, 1}, {E_DUP, 1},   {E_INSERT, 1},
};

static Edit pick_edit(Rng *r)
{
	int w = (int)rnd(r, 32);
	for (int i = 0; i < NELEMS(edit_weights); i++)
		if ((w -= edit_weights[i].weight) < 0)
			return edit_weights[i].edit;
	return E_NUMBER;
}

static const char *any_word(Rng *r, const WordClass *c)
{
	return c->words[rnd(r, (uint32_t)c->n)];
}

/* Copies [a, b) of s, adding a newline if it does not end in one. */
static void put_line(Out *o, const uint8_t *s, size_t a, size_t b)
{
	put(o, s + a, b - a);
	if (b == a || s[b - 1] != '\n')
		put_str(o, "\n");
}

/* Operand a of x becomes (a op b), u(a), astype(a, dt) or -a. */
static void wrap(Rng *r, const Text *x, const Tok *a, const Tok *b, Out *o)
{
	const uint8_t *s = x->s;
	put(o, s, a->start);
	switch (rnd(r, 4)) {
	case 0:
		put_str(o, "(");
		put(o, s + a->start, a->end - a->start);
		put_str(o, " ");
		put_str(o, any_word(r, &classes[rnd(r, 4) ? NCLASS_OPERATORS : NCLASS_LOGIC]));
		put_str(o, " ");
		put(o, s + b->start, b->end - b->start);
		put_str(o, ")");
		break;
	case 1:
		put_str(o, any_word(r, &classes[NCLASS_UNARY]));
		put_str(o, "(");
		put(o, s + a->start, a->end - a->start);
		put_str(o, ")");
		break;
	case 2:
		put_str(o, "astype(");
		put(o, s + a->start, a->end - a->start);
		put_str(o, ", ");
		put_str(o, any_word(r, &classes[NCLASS_DTYPES]));
		put_str(o, ")");
		break;
	default:
		put_str(o, "-");
		put(o, s + a->start, a->end - a->start);
		break;
	}
	put(o, s + a->end, x->n - a->end);
}

/* A movable line: deleted, duplicated, or swapped with another of its kind. */
static bool edit_line(Rng *r, const Text *x, Out *o)
{
	const uint8_t *s = x->s;
	size_t l0 = 0, l1 = 0, m0 = 0, m1 = 0;
	bool clause, clause2;
	int i = -1, j = -1;
	for (int k = 0; k < 32 && i < 0; k++) {
		int c = (int)rnd(r, (uint32_t)x->nt);
		if (movable_line(x, c, &l0, &l1, &clause))
			i = c;
	}
	if (i < 0)
		return false;
	for (int k = 0; k < 32 && j < 0; k++) {
		int c = (int)rnd(r, (uint32_t)x->nt);
		if (movable_line(x, c, &m0, &m1, &clause2) && clause2 == clause && m0 != l0)
			j = c;
	}
	uint32_t op = rnd(r, 3);
	if (op == 0) {
		put(o, s, l0);
		put(o, s + l1, x->n - l1);
	} else if (op == 1 || j < 0) { /* a copy after the line itself or after the other */
		size_t at = op == 1 || j < 0 ? l1 : m1;
		put(o, s, at);
		if (at > 0 && s[at - 1] != '\n')
			put_str(o, "\n");
		put_line(o, s, l0, l1);
		put(o, s + at, x->n - at);
	} else {
		if (m0 < l0) { /* the two lines in order */
			size_t t0 = l0, t1 = l1;
			l0 = m0, l1 = m1, m0 = t0, m1 = t1;
		}
		put(o, s, l0);
		put_line(o, s, m0, m1);
		put(o, s + l1, m0 - l1);
		put(o, s + l0, l1 - l0);
		put(o, s + m1, x->n - m1);
	}
	return true;
}

/* One random edit of s into o; false if it found nothing to do. */
static bool mutate_once(Rng *r, const uint8_t *s, size_t n, Out *o)
{
	static Tok toks[MAX_TOKS];
	Text x = {s, n, toks, tokenize(s, n, toks)};
	if (x.nt == 0)
		return false;
	int i = (int)rnd(r, (uint32_t)x.nt), j;
	const Tok *a = &toks[i];
	char buf[64];
	switch (pick_edit(r)) {
	case E_NUMBER: /* a number -> an interesting one */
		if ((i = pick(r, &x, is_number)) < 0)
			return false;
		new_number(r, s, &toks[i], buf, sizeof buf);
		splice(o, s, n, toks[i].start, toks[i].end, buf, strlen(buf));
		return true;
	case E_CLASS: /* a word of a class -> another of the class */
		if ((i = pick(r, &x, is_swappable)) < 0)
			return false;
		a = &toks[i];
		put(o, s, a->start);
		put_str(o, any_word(r, &classes[class_of(s, a)]));
		put(o, s + a->end, n - a->end);
		return true;
	case E_NAME: /* a name in an expression -> another name of the file */
		if ((i = pick(r, &x, is_operand)) < 0 || (j = pick(r, &x, is_name)) < 0 || !is_name(&x, i))
			return false;
		splice(o, s, n, toks[i].start, toks[i].end, s + toks[j].start, toks[j].end - toks[j].start);
		return true;
	case E_WRAP:
		if ((i = pick(r, &x, is_operand)) < 0 || (j = pick(r, &x, is_operand)) < 0)
			return false;
		wrap(r, &x, &toks[i], &toks[j], o);
		return true;
	case E_SWAP: { /* two operands of one kind trade places */
		if ((i = pick(r, &x, is_operand)) < 0 || (j = pick(r, &x, is_operand)) < 0 || i == j ||
		    toks[i].kind != toks[j].kind)
			return false;
		const Tok *p = &toks[i < j ? i : j], *q = &toks[i < j ? j : i];
		put(o, s, p->start);
		put(o, s + q->start, q->end - q->start);
		put(o, s + p->end, q->start - p->end);
		put(o, s + p->start, p->end - p->start);
		put(o, s + q->end, n - q->end);
		return true;
	}
	case E_LINE:
		return edit_line(r, &x, o);
	case E_DELETE:
		splice(o, s, n, a->start, a->end, "", 0);
		return true;
	case E_DUP:
		put(o, s, a->end);
		put_str(o, " ");
		put(o, s + a->start, n - a->start);
		return true;
	case E_INSERT: /* a word of any class before a token */
		put(o, s, a->start);
		put_str(o, any_word(r, &classes[rnd(r, NCLASSES)]));
		put_str(o, " ");
		put(o, s + a->start, n - a->start);
		return true;
	}
	return false;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	Rng r = {seed ? seed : 1};
	if (size == 0 || rnd(&r, 6) == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	static uint8_t scratch[1 << 16];
	size_t cap = max_size < sizeof scratch ? max_size : sizeof scratch;
	static const unsigned char nedits[8] = {1, 1, 1, 1, 2, 2, 3, 4};
	int edits = nedits[rnd(&r, 8)];
	bool changed = false;
	for (int e = 0; e < edits; e++) {
		Out o = {scratch, 0, cap, false};
		if (!mutate_once(&r, data, size, &o) || o.overflow)
			continue;
		memcpy(data, scratch, o.len);
		size = o.len;
		changed = true;
	}
	return changed ? size : LLVMFuzzerMutate(data, size, max_size);
}

/* The top-level items of s (a kernel with its body, a const, an include):
 * up to `max` spans [start, end) in items[]; returns how many. */
static int top_items(const uint8_t *s, size_t n, size_t (*items)[2], int max)
{
	static Tok toks[MAX_TOKS];
	int nt = tokenize(s, n, toks), count = 0, depth = 0;
	size_t start = 0;
	bool open = false;
	for (int i = 0; i < nt && count < max; i++) {
		const Tok *t = &toks[i];
		char c = t->end - t->start == 1 ? (char)s[t->start] : 0;
		if (depth == 0 && !open && t->kind == TK_IDENT &&
		    (tok_is(s, t, "kernel") || tok_is(s, t, "const") || tok_is(s, t, "include"))) {
			start = t->start;
			open = true;
		}
		depth += (c == '(' || c == '[' || c == '{') - (c == ')' || c == ']' || c == '}');
		if (open && depth == 0 && (c == '}' || c == ';' || t->kind == TK_STRING)) {
			items[count][0] = start;
			items[count++][1] = t->end;
			open = false;
		}
	}
	return count;
}

/* data1 with a kernel, const or include of data2 added after one of its own,
 * or in place of one. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
                                 uint8_t *out, size_t max_out_size, unsigned int seed)
{
	enum { MAX_ITEMS = 64 };
	static size_t it1[MAX_ITEMS][2], it2[MAX_ITEMS][2];
	Rng r = {seed ? seed : 1};
	int n1 = top_items(data1, size1, it1, MAX_ITEMS), n2 = top_items(data2, size2, it2, MAX_ITEMS);
	if (n1 == 0 || n2 == 0)
		return 0;
	const size_t *a = it1[rnd(&r, (uint32_t)n1)], *b = it2[rnd(&r, (uint32_t)n2)];
	bool replace = rnd(&r, 3) == 0;
	Out o = {out, 0, max_out_size, false};
	put(&o, data1, replace ? a[0] : a[1]);
	put_str(&o, replace ? "" : "\n\n");
	put(&o, data2 + b[0], b[1] - b[0]);
	put(&o, data1 + a[1], size1 - a[1]);
	return o.overflow ? 0 : o.len;
}
