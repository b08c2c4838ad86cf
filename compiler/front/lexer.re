/* lexer.re - the .pk lexer (lang-spec §2), generated with re2c.
 *
 * The Lexer struct and the token kinds live in parser.h (generated from
 * parser.y), so the parser and the lexer share one definition.
 *
 * Buffer discipline: the source text is NUL-terminated but may itself
 * contain NUL bytes, so the scanners use re2c's "sentinel with bounds
 * check" method (re2c:eof = 0): when the scanner reads a 0 byte it checks
 * cursor < limit; only at the real end of the text does the `$` rule run.
 * Nothing ever reads past text[size].
 *
 * Things the lexer does beyond splitting tokens:
 *  - encoding checks (§2.1): NUL bytes, invalid UTF-8 anywhere, non-ASCII
 *    outside comments and strings; at most one such error per line.  A name
 *    with non-ASCII letters in it is still returned as one identifier, so
 *    the parser is not disturbed by it;
 *  - bracket balance: it keeps a stack of open brackets (bounded by
 *    cc->max_nesting, §2.8; past it, one error and the rest of the file
 *    reads as end of file).  ';' closes any '(' or '[' left open inside the
 *    current '{' (they cannot hold a ';').  When an item keyword (kernel,
 *    const, include: never inside brackets) or the end of file arrives with
 *    brackets still open, it reports the innermost missing closer once and
 *    hands the parser the closers first, so that error recovery always
 *    resynchronises at the next item;
 *  - '//' is floor division right after an operand (identifier, literal,
 *    dtype, ')' or ']') on the same line, in an expression context: inside
 *    any bracket except a kernel's parameter list, or at the top level in a
 *    const's value or a requires clause.  Everywhere else it starts a
 *    comment (§2.2), so comments can trail parameter lists, clauses, ';',
 *    '{' and '}'.  (A comment right after a requires expression must be
 *    written on its own line or as a block comment.)
 *
 * Lexical errors are reported here; the token returned after one lets the
 * parse go on (a bad number is still a number, a stray character is
 * skipped).  Tokens that follow a lexer-reported problem are marked quiet
 * so the parser does not report its consequences again.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pkc.h"
#include "ast.h"
#include "parser.h"

/*!re2c
	re2c:define:YYCTYPE = "unsigned char";
	re2c:define:YYCURSOR = "L->cur";
	re2c:define:YYMARKER = "L->mar";
	re2c:define:YYLIMIT = "L->lim";
	re2c:yyfill:enable = 0;
	re2c:eof = 0;
	re2c:indent:string = "\t";

	// one well-formed UTF-8 sequence of 2 to 4 bytes (RFC 3629: no
	// overlongs, no surrogates, nothing above U+10FFFF)
	u8 = [\xc2-\xdf][\x80-\xbf]
	   | "\xe0"[\xa0-\xbf][\x80-\xbf]
	   | [\xe1-\xec\xee\xef][\x80-\xbf]{2}
	   | "\xed"[\x80-\x9f][\x80-\xbf]
	   | "\xf0"[\x90-\xbf][\x80-\xbf]{2}
	   | [\xf1-\xf3][\x80-\xbf]{3}
	   | "\xf4"[\x80-\x8f][\x80-\xbf]{2};

	dec   = [0-9] ("_"? [0-9])*;
	hex   = "0" [xX] ("_"? [0-9a-fA-F])+;
	bin   = "0" [bB] ("_"? [01])+;
	expo  = [eE] [+-]? dec;
	flt   = dec "." dec? expo? | "." dec expo? | dec expo;
	ident = [A-Za-z_][A-Za-z0-9_]*;
	// a name with non-ASCII characters in it (an error, lexed as a name)
	uident = ([A-Za-z0-9_] | u8)* u8 ([A-Za-z0-9_] | u8)*;
	// malformed numbers: a digit run glued to letters (0x, 1e, 12abc, 1_),
	// or a fraction glued to letters (1.5abc); valid numbers win ties
	badnum = [0-9][A-Za-z0-9_]* | (dec "." dec? | "." dec) [A-Za-z_][A-Za-z0-9_]*
	       | (dec "." dec? | "." dec | dec) [eE] [+-];
*/

/* ---- helpers ----------------------------------------------------------- */

/* The Loc of the bytes [s, e) on the current line. */
static Loc loc_of(const Lexer *L, const unsigned char *s, const unsigned char *e)
{
	Loc loc;
	loc.file = L->file;
	loc.line = L->line;
	ptrdiff_t col = s - L->bol + 1;
	ptrdiff_t len = e - s;
	loc.col = col > INT_MAX ? INT_MAX : (int)col;
	loc.len = len < 1 ? 1 : len > INT_MAX ? INT_MAX : (int)len;
	return loc;
}

/* Consumed a '\n' at L->cur[-1]. */
static void newline(Lexer *L)
{
	if (L->line < INT_MAX)
		L->line++;
	L->bol = L->cur;
}

/* Encoding errors (§2.1) are reported at most once per line, so binary
 * garbage yields a handful of errors, not one per byte. */
static bool enc_error_ok(Lexer *L)
{
	if (L->enc_err_line == L->line)
		return false;
	L->enc_err_line = L->line;
	return true;
}

static void err_nul(Lexer *L, const unsigned char *p)
{
	if (enc_error_ok(L))
		error_at(L->cc, loc_of(L, p, p + 1), "NUL byte in source file [§2.1]");
}

static void err_utf8(Lexer *L, const unsigned char *p)
{
	if (enc_error_ok(L))
		error_at(L->cc, loc_of(L, p, p + 1), "invalid UTF-8 byte 0x%02x [§2.1]", *p);
}

/* Decodes a well-formed UTF-8 sequence (already validated by `u8`). */
static unsigned decode_utf8(const unsigned char *s, const unsigned char *e)
{
	unsigned c = s[0];
	ptrdiff_t n = e - s;
	c &= n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07;
	for (ptrdiff_t i = 1; i < n; i++)
		c = (c << 6) | (s[i] & 0x3f);
	return c;
}

/* At most 40 bytes of a token's spelling, for messages. */
static const char *spelling(Lexer *L, const unsigned char *s, const unsigned char *e)
{
	ptrdiff_t n = e - s;
	if (n > 40)
		return arena_printf(L->cc->arena, "%.37s...", (const char *)s);
	return arena_strndup(L->cc->arena, (const char *)s, (size_t)n);
}

/* Appends a byte to the string literal being decoded. */
static void sbuf_put(Lexer *L, unsigned char c)
{
	if (L->slen + 1 >= L->scap) {
		L->scap = L->scap ? L->scap * 2 : 64;
		L->sbuf = xrealloc(L->sbuf, L->scap);
	}
	L->sbuf[L->slen++] = (char)c;
}

/* The value of an integer literal [s, e): decimal, 0x hex or 0b binary,
 * '_' separators.  Values above INT64_MAX set the overflow flag (sema
 * reports it, §2.4). */
static IntLit int_value(const unsigned char *s, const unsigned char *e)
{
	IntLit v = {0, false};
	unsigned base = 10;
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	else if (e - s > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		base = 2, s += 2;
	uint64_t acc = 0;
	for (; s < e; s++) {
		unsigned d;
		if (*s == '_')
			continue;
		else if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else
			d = (unsigned)(*s - 'A' + 10);
		if (acc > ((uint64_t)INT64_MAX - d) / base)
			v.overflow = true;
		else
			acc = acc * base + d;
	}
	v.value = v.overflow ? INT64_MAX : (int64_t)acc;
	return v;
}

/* The value of a float literal [s, e), via strtod on a NUL-terminated copy
 * without the '_' separators. */
static double float_value(Lexer *L, const unsigned char *s, const unsigned char *e)
{
	size_t n = (size_t)(e - s);
	char *copy = xmalloc(n + 1), *q = copy;
	for (const unsigned char *p = s; p < e; p++)
		if (*p != '_')
			*q++ = (char)*p;
	*q = 0;
	errno = 0;
	double d = strtod(copy, NULL);
	if (errno == ERANGE && (d > 1.0 || d < -1.0))
		error_at(L->cc, loc_of(L, s, e), "floating-point literal '%s' is out of range [§2.5]",
		         spelling(L, s, e));
	free(copy);
	return d;
}

static bool is_opener(int kind) { return kind == '(' || kind == '[' || kind == '{'; }

static int closer_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

/* Tokens after which '//' is the floor-division operator. */
static bool ends_operand(int kind)
{
	switch (kind) {
	case T_IDENT: case T_INT: case T_FLOAT: case T_DTYPE:
	case T_TRUE: case T_FALSE: case T_NONE: case T_INF: case T_NAN:
	case ')': case ']':
		return true;
	default:
		return false;
	}
}

/* Keeps what the '//' rule needs to know about the token being returned:
 * the last two kinds, the line, and whether the top level (outside any
 * bracket) is in an expression (a const's value, a requires clause). */
static void note_token(Lexer *L, int kind)
{
	L->prev2_kind = L->prev_kind;
	L->prev_kind = kind;
	L->prev_line = L->line;
	if (L->depth > 0)
		return;
	switch (kind) {
	case T_CONST: case T_REQUIRES:
		L->top_expr = true;
		break;
	case T_KERNEL: case T_FN: case T_INCLUDE: case T_GRID: case T_SPEC: case T_SCRATCH:
	case T_PARAMS: case T_SEMANTICS: case ';': case '}':
		L->top_expr = false;
		break;
	default:
		break;
	}
}

/* Is '//' here the floor-division operator?  Only right after an operand
 * on the same line, in an expression context: inside any bracket but a
 * kernel's parameter list, or at the top level in a const's value or a
 * requires clause.  Everywhere else it starts a comment (§2.2), so
 * comments may trail a parameter list, a clause, ';', '{' and '}'. */
static bool is_floordiv(const Lexer *L)
{
	if (!ends_operand(L->prev_kind) || L->prev_line != L->line)
		return false;
	return L->depth > 0 ? L->open_expr[L->depth - 1] : L->top_expr;
}

/* Records the token being returned, for the parser's messages. */
static void remember(Lexer *L, Loc loc, const char *text, ptrdiff_t len)
{
	L->before = L->last;
	L->last = loc;
	L->last_text = text;
	L->last_len = len;
}

/* Returns a token [L->tok, L->cur) of `kind`, maintaining the bracket stack.
 * May instead report the nesting limit and end the file. */
static int token(Lexer *L, int kind, Loc *loc)
{
	*loc = loc_of(L, L->tok, L->cur);
	L->quiet = false;
	if (is_opener(kind)) {
		if (L->depth >= L->max_depth) {
			error_at(L->cc, *loc, "brackets nested too deeply (limit %d) [§2.8]", L->max_depth);
			L->dead = true;
			L->quiet = true;
			return T_YYEOF;
		}
		L->opens[L->depth] = (char)kind;
		L->open_locs[L->depth] = *loc;
		/* a kernel's parameter list is the one bracket without expressions */
		L->open_expr[L->depth] = !(kind == '(' && L->prev_kind == T_IDENT &&
		                           (L->prev2_kind == T_KERNEL || L->prev2_kind == T_FN));
		L->depth++;
	} else if (kind == ';') {
		/* ';' is never inside '(' or '[': close those (the parser reports
		 * the missing closer) so that they do not linger to the end */
		while (L->depth > 0 && L->opens[L->depth - 1] != '{')
			L->depth--;
	} else if (kind == ')' || kind == ']' || kind == '}') {
		/* Pop to the matching opener if there is one; a closer that matches
		 * nothing is left for the parser to report. */
		for (int i = L->depth - 1; i >= 0; i--)
			if (closer_of(L->opens[i]) == kind) {
				L->depth = i;
				break;
			}
	}
	note_token(L, kind);
	remember(L, *loc, (const char *)L->tok, L->cur - L->tok);
	return kind;
}

/* An item keyword or the end of file arrived with brackets open: report the
 * innermost missing closer, then return the closers (innermost first) before
 * the held token, all marked quiet so the parser does not report the
 * consequences again. */
static int unwind(Lexer *L, int kind, Loc *loc)
{
	Loc here = loc_of(L, L->tok, L->cur);
	char open = L->opens[L->depth - 1];
	if (kind == T_YYEOF) {
		/* point just after the last token, like gcc */
		Loc at = here;
		if (L->last.line > 0 && L->last.line < here.line) {
			at = L->last;
			at.col += at.len;
			at.len = 1;
		}
		error_at(L->cc, at, "expected '%c' at end of file [§2.7]", closer_of(open));
	} else {
		error_at(L->cc, here, "expected '%c' before '%s' [§2.7]", closer_of(open),
		         spelling(L, L->tok, L->cur));
	}
	note_at(L->cc, L->open_locs[L->depth - 1], "to match this '%c'", open);
	L->held = true;
	L->held_kind = kind;
	L->held_loc = here;
	L->held_text = (const char *)L->tok;
	L->held_len = L->cur - L->tok;
	return lexer_next(L, NULL, loc);
}

/* ---- comments ---------------------------------------------------------- */

/* Skips the rest of a block comment that opened at `open`. Returns false
 * if the file ends first (reported; the rest of the file is gone). */
static bool skip_block_comment(Lexer *L, const unsigned char *open)
{
	Loc open_loc = loc_of(L, open, open + 2);
	for (;;) {
		const unsigned char *s = L->cur;
		/*!re2c
			"*" "/" { return true; }
			$       { error_at(L->cc, open_loc, "unterminated comment [§2.2]"); return false; }
			"\n"    { newline(L); continue; }
			"\x00"  { err_nul(L, s); continue; }
			u8      { continue; }
			[\x80-\xff] { err_utf8(L, s); continue; }
			[^\x00\n*\x80-\xff]+ { continue; }
			*       { continue; }
		*/
	}
}

/* Skips a line comment up to (not including) the newline. */
static void skip_line_comment(Lexer *L)
{
	for (;;) {
		const unsigned char *s = L->cur;
		/*!re2c
			$        { return; }
			"\n"     { L->cur = s; return; }
			"\x00"   { err_nul(L, s); continue; }
			u8       { continue; }
			[\x80-\xff] { err_utf8(L, s); continue; }
			[^\x00\n\x80-\xff]+ { continue; }
		*/
	}
}

/* ---- strings ----------------------------------------------------------- */

/* Scans the rest of a string literal opened at L->tok; the decoded text goes
 * to sbuf.  An unterminated string ends at the end of its line. */
static void scan_string(Lexer *L)
{
	L->slen = 0;
	for (;;) {
		const unsigned char *s = L->cur;
		/*!re2c
			"\"" { return; }
			"\\\"" { sbuf_put(L, '"'); continue; }
			"\\\\" { sbuf_put(L, '\\'); continue; }
			"\\n" { sbuf_put(L, '\n'); continue; }
			"\\t" { sbuf_put(L, '\t'); continue; }
			"\\" [\x20-\x7e] {
				error_at(L->cc, loc_of(L, s, L->cur), "unknown escape sequence '\\%c' [§2.6]", s[1]);
				continue;
			}
			"\\" { error_at(L->cc, loc_of(L, s, L->cur), "unknown escape sequence [§2.6]"); continue; }
			$ {
				error_at(L->cc, loc_of(L, L->tok, L->tok + 1), "missing terminating '\"' character [§2.6]");
				return;
			}
			"\n" {
				L->cur = s;
				error_at(L->cc, loc_of(L, L->tok, L->tok + 1), "missing terminating '\"' character [§2.6]");
				return;
			}
			"\x00" { err_nul(L, s); continue; }
			u8     { for (; s < L->cur; s++) sbuf_put(L, *s); continue; }
			[\x80-\xff] { err_utf8(L, s); continue; }
			[^\x00\n"\\\x80-\xff] { sbuf_put(L, *s); continue; }
		*/
	}
}

/* ---- the main scanner -------------------------------------------------- */

void lexer_init(Lexer *L, Compiler *cc, Source *src)
{
	memset(L, 0, sizeof *L);
	L->cc = cc;
	L->file = src->path;
	L->cur = (const unsigned char *)src->text;
	L->lim = L->cur + src->size;
	L->bol = L->cur;
	L->tok = L->cur;
	L->line = 1;
	L->prev_kind = L->prev2_kind = T_YYEOF;
	L->max_depth = cc->max_nesting > 0 ? cc->max_nesting : 256;
	L->opens = arena_alloc(cc->arena, (size_t)L->max_depth);
	L->open_locs = arena_alloc(cc->arena, (size_t)L->max_depth * sizeof(Loc));
	L->open_expr = arena_alloc(cc->arena, (size_t)L->max_depth * sizeof(bool));
}

void lexer_free(Lexer *L)
{
	free(L->sbuf);
	L->sbuf = NULL;
	L->scap = L->slen = 0;
}

#define TOK(k) return token(L, (k), loc)
#define KW(k) do { if (L->depth > 0) return unwind(L, (k), loc); TOK(k); } while (0)
#define DT(d) do { if (val) val->dtype = (d); TOK(T_DTYPE); } while (0)

int lexer_next(Lexer *L, YYSTYPE *val, Loc *loc)
{
	/* closers synthesized by unwind(), then the token they precede */
	if (L->held) {
		if (L->depth > 0) {
			char open = L->opens[--L->depth];
			*loc = L->held_loc;
			loc->len = 1;
			L->quiet = true;
			note_token(L, closer_of(open));
			remember(L, *loc, open == '(' ? ")" : open == '[' ? "]" : "}", 1);
			return closer_of(open);
		}
		L->held = false;
		*loc = L->held_loc;
		L->quiet = true;
		note_token(L, L->held_kind);
		remember(L, *loc, L->held_text, L->held_len);
		return L->held_kind;
	}
	for (;;) {
		if (L->dead || L->cc->diag.stop) {
			L->dead = true;
			*loc = loc_of(L, L->cur, L->cur);
			L->quiet = true;
			remember(L, *loc, "", 0);
			return T_YYEOF;
		}
		L->tok = L->cur;
		/*!re2c
		$ {
			if (L->depth > 0)
				return unwind(L, T_YYEOF, loc);
			*loc = loc_of(L, L->tok, L->tok);
			L->quiet = false;
			remember(L, *loc, "", 0);
			return T_YYEOF;
		}
		[ \t\r\f\v]+ { continue; }
		"\n"         { newline(L); continue; }
		"/*"         {
			if (!skip_block_comment(L, L->tok))
				L->dead = true;
			continue;
		}
		"//" {
			if (is_floordiv(L))
				TOK(T_FLOORDIV);
			skip_line_comment(L);
			continue;
		}

		"const"     { KW(T_CONST); }
		"kernel"    { KW(T_KERNEL); }
		"fn"        { KW(T_FN); }
		"return"    { TOK(T_RETURN); }
		"include"   { KW(T_INCLUDE); }
		"in"        { TOK(T_IN); }
		"out"       { TOK(T_OUT); }
		"inout"     { TOK(T_INOUT); }
		"prefetch"  { TOK(T_PREFETCH); }
		"let"       { TOK(T_LET); }
		"var"       { TOK(T_VAR); }
		"if"        { TOK(T_IF); }
		"else"      { TOK(T_ELSE); }
		"when"      { TOK(T_WHEN); }
		"for"       { TOK(T_FOR); }
		"while"     { TOK(T_WHILE); }
		"break"     { TOK(T_BREAK); }
		"continue"  { TOK(T_CONTINUE); }
		"grid"      { TOK(T_GRID); }
		"spec"      { TOK(T_SPEC); }
		"scratch"   { TOK(T_SCRATCH); }
		"params"    { TOK(T_PARAMS); }
		"semantics" { TOK(T_SEMANTICS); }
		"requires"  { TOK(T_REQUIRES); }
		"true"      { TOK(T_TRUE); }
		"false"     { TOK(T_FALSE); }
		"None"      { TOK(T_NONE); }
		"and"       { TOK(T_AND); }
		"or"        { TOK(T_OR); }
		"not"       { TOK(T_NOT); }
		"parallel"  { TOK(T_PARALLEL); }
		"arbitrary" { TOK(T_ARBITRARY); }
		"inf"       { TOK(T_INF); }
		"nan"       { TOK(T_NAN); }

		"bool" { DT(DT_BOOL); }
		"i8"   { DT(DT_I8); }
		"i16"  { DT(DT_I16); }
		"i32"  { DT(DT_I32); }
		"i64"  { DT(DT_I64); }
		"u8"   { DT(DT_U8); }
		"u16"  { DT(DT_U16); }
		"u32"  { DT(DT_U32); }
		"u64"  { DT(DT_U64); }
		"f16"  { DT(DT_F16); }
		"bf16" { DT(DT_BF16); }
		"f32"  { DT(DT_F32); }
		"f64"  { DT(DT_F64); }

		ident {
			if (val)
				val->name = intern(L->cc->strings, (const char *)L->tok, (size_t)(L->cur - L->tok));
			TOK(T_IDENT);
		}
		dec | hex | bin {
			if (val)
				val->ival = int_value(L->tok, L->cur);
			TOK(T_INT);
		}
		flt {
			double d = float_value(L, L->tok, L->cur);
			if (val)
				val->fval = d;
			TOK(T_FLOAT);
		}
		badnum {
			size_t n = (size_t)(L->cur - L->tok);
			bool prefixed = n >= 2 && L->tok[0] == '0' && strchr("xXbB", L->tok[1]);
			bool isfloat = memchr(L->tok, '.', n) || (!prefixed && (memchr(L->tok, 'e', n) || memchr(L->tok, 'E', n)));
			error_at(L->cc, loc_of(L, L->tok, L->cur), "invalid %s literal '%s' [§2.%d]",
			         isfloat ? "floating-point" : "integer", spelling(L, L->tok, L->cur),
			         isfloat ? 5 : 4);
			if (isfloat) {
				if (val)
					val->fval = 0.0;
				TOK(T_FLOAT);
			}
			if (val)
				val->ival = (IntLit){0, false};
			TOK(T_INT);
		}
		"\"" {
			int nerrors = L->cc->diag.nerrors;
			scan_string(L);
			if (val) {
				val->str.bad = L->cc->diag.nerrors != nerrors;
				val->str.text = arena_strndup(L->cc->arena, L->sbuf ? L->sbuf : "", L->slen);
				val->str.len = L->slen;
			}
			TOK(T_STRING);
		}

		"..." { TOK(T_ELLIPSIS); }
		"->"  { TOK(T_ARROW); }
		"=="  { TOK(T_EQ); }
		"!="  { TOK(T_NE); }
		"<="  { TOK(T_LE); }
		">="  { TOK(T_GE); }
		"<<"  { TOK(T_SHL); }
		">>"  { TOK(T_SHR); }
		"**"  { TOK(T_POW); }
		"+="  { TOK(T_ADDEQ); }
		"-="  { TOK(T_SUBEQ); }
		"*="  { TOK(T_MULEQ); }
		"/="  { TOK(T_DIVEQ); }
		[()[\]{},;:.=<>+\-*/%@&|^~] { TOK(*L->tok); }

		"!" {
			error_at(L->cc, loc_of(L, L->tok, L->cur), "stray '!' in program; logical negation is 'not' [§2.7]");
			continue;
		}
		"#" {
			/* a Python comment: say so once, and skip it like one */
			error_at(L->cc, loc_of(L, L->tok, L->cur), "'#' does not start a comment; comments are // or /* */ [§2.2]");
			skip_line_comment(L);
			continue;
		}
		[$?'\\`] {
			error_at(L->cc, loc_of(L, L->tok, L->cur), "stray '%c' in program [§2.7]", *L->tok);
			continue;
		}
		"\x00" { err_nul(L, L->tok); continue; }
		uident {
			/* Non-ASCII letters (or a stray no-break space) glued to a
			 * name: one error, and the whole run is an identifier, so the
			 * parse goes on undisturbed. */
			const unsigned char *u = L->tok;
			while (*u < 0x80)
				u++;
			const unsigned char *e = u + 1;
			while (e < L->cur && (*e & 0xc0) == 0x80)
				e++;
			if (enc_error_ok(L))
				error_at(L->cc, loc_of(L, u, e),
				         "non-ASCII character U+%04X outside a comment or string [§2.1]",
				         decode_utf8(u, e));
			if (val)
				val->name = intern(L->cc->strings, (const char *)L->tok, (size_t)(L->cur - L->tok));
			TOK(T_IDENT);
		}
		[\x80-\xff] { err_utf8(L, L->tok); continue; }
		* {
			error_at(L->cc, loc_of(L, L->tok, L->cur), "stray '\\x%02x' in program [§2.7]", *L->tok);
			continue;
		}
		*/
	}
}
