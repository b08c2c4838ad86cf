/* diag.c - the diagnostic engine.
 *
 * Text (gcc/clang style):
 *     file:line:col: error: message
 *     <the source line>
 *     <caret line: ^~~~ under the range>
 * JSON (--diagnostics-format=json): one object per line, nothing else.
 *
 * Source lines are printed safely: control bytes and invalid UTF-8 show
 * as <XX>, so a hostile input cannot send escape sequences to a terminal,
 * and very long lines are cut to a window around the column. */
#include "pkc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each diagnostic is formatted into one StrBuf (pkc.h) and written with a
 * single fwrite, so diagnostics never interleave. */

/* ---- UTF-8 ------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes available), or
 * 0 if the bytes there are not valid UTF-8 (overlong forms, surrogates and
 * code points above U+10FFFF are invalid). */
static int utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	int len;
	unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if ((size_t)len > n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

/* How the byte sequence at s renders in a text diagnostic: writes the
 * printable form to b (if b is not NULL), stores the display width in
 * *width and returns the bytes consumed (>= 1). */
static size_t render_char(StrBuf *b, const unsigned char *s, size_t n, int *width)
{
	unsigned char c = s[0];
	if (c == '\t') {
		if (b)
			strbuf_putc(b, '\t');
		*width = 1; /* the caret line copies the tab, so it lines up */
		return 1;
	}
	if (c >= 0x20 && c < 0x7F) {
		if (b)
			strbuf_putc(b, (char)c);
		*width = 1;
		return 1;
	}
	int len = c < 0x80 ? 0 : utf8_len(s, n);
	/* C1 controls (U+0080..U+009F) are valid UTF-8 but terminal escapes. */
	if (len > 1 && !(len == 2 && c == 0xC2 && s[1] < 0xA0)) {
		if (b)
			strbuf_put(b, (const char *)s, (size_t)len);
		*width = 1; /* good enough: wide CJK glyphs are rare in kernels */
		return (size_t)len;
	}
	char hex[8];
	snprintf(hex, sizeof hex, "<%02X>", c);
	if (b)
		strbuf_puts(b, hex);
	*width = 4;
	return 1;
}

/* Appends s[0..n) to b made safe for a terminal (message text may quote
 * source bytes). */
static void buf_add_safe(StrBuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		int w;
		if (p[i] == '\n') { /* multi-line messages are allowed */
			strbuf_putc(b, '\n');
			i++;
			continue;
		}
		i += render_char(b, p + i, n - i, &w);
	}
}

/* Appends s[0..n) as the inside of a JSON string. */
static void buf_add_json(StrBuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned char c = p[i];
		if (c == '"' || c == '\\') {
			strbuf_putc(b, '\\');
			strbuf_putc(b, (char)c);
			i++;
		} else if (c == '\n') {
			strbuf_puts(b, "\\n");
			i++;
		} else if (c == '\t') {
			strbuf_puts(b, "\\t");
			i++;
		} else if (c < 0x20 || c == 0x7F) {
			strbuf_printf(b, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			strbuf_putc(b, (char)c);
			i++;
		} else {
			int len = utf8_len(p + i, n - i);
			if (len == 0) {
				strbuf_puts(b, "\\ufffd");
				i++;
			} else {
				strbuf_put(b, s + i, (size_t)len);
				i += (size_t)len;
			}
		}
	}
}

/* ---- source excerpt ---------------------------------------------------- */

/* Lines longer than this are shown as a window around the column. */
#define LINE_WINDOW 200

/* Colours (only when Diag.color is set). */
#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_MAGENTA "\033[1;35m"
#define C_CYAN "\033[1;36m"
#define C_GREEN "\033[1;32m"

/* Appends the source line of loc and a caret line under [col, col+len). */
static void add_excerpt(Diag *d, StrBuf *b, Loc loc)
{
	if (!d->cc)
		return;
	const Source *src = source_find(d->cc, loc.file);
	if (!src || loc.line < 1 || loc.line > src->nlines)
		return;
	const char *line = src->lines[loc.line - 1];
	const char *text_end = src->text + src->size;
	const char *end = memchr(line, '\n', (size_t)(text_end - line));
	if (!end)
		end = text_end;
	if (end > line && end[-1] == '\r') /* CRLF files */
		end--;
	size_t linelen = (size_t)(end - line);

	/* The range, in bytes from the start of the line, clamped to it (a
	 * caret just past the end is allowed: "expected ';'" at end of line). */
	size_t col = loc.col > 0 ? (size_t)loc.col - 1 : 0;
	if (col > linelen)
		col = linelen;
	size_t len = loc.len > 0 ? (size_t)loc.len : 1;
	if (len > linelen - col)
		len = linelen - col > 0 ? linelen - col : 1;

	/* The window of the line that is shown. */
	size_t from = 0, to = linelen;
	if (linelen > LINE_WINDOW) {
		from = col > LINE_WINDOW / 2 ? col - LINE_WINDOW / 2 : 0;
		/* Do not start in the middle of a UTF-8 sequence. */
		while (from > 0 && ((unsigned char)line[from] & 0xC0) == 0x80)
			from--;
		to = from + LINE_WINDOW;
		if (to > linelen)
			to = linelen;
		while (to < linelen && ((unsigned char)line[to] & 0xC0) == 0x80)
			to++;
		if (col + len > to)
			len = to > col ? to - col : 1;
	}

	const unsigned char *u = (const unsigned char *)line;
	StrBuf caret = {0};
	if (from > 0) {
		strbuf_puts(b, "...");
		strbuf_puts(&caret, "   ");
	}
	size_t i = from;
	bool started = false;
	while (i < to) {
		int w;
		size_t k = render_char(b, u + i, to - i, &w);
		if (i < col) {
			/* Copy tabs so the caret lines up whatever the tab width. */
			if (u[i] == '\t')
				strbuf_putc(&caret, '\t');
			else
				for (int j = 0; j < w; j++)
					strbuf_putc(&caret, ' ');
		} else if (i < col + len) {
			for (int j = 0; j < w; j++) {
				strbuf_putc(&caret, started ? '~' : '^');
				started = true;
			}
		}
		i += k;
	}
	if (to < linelen)
		strbuf_puts(b, "...");
	if (!started) /* the caret is past the end of the line */
		strbuf_putc(&caret, '^');
	strbuf_putc(b, '\n');
	if (d->color)
		strbuf_puts(b, C_GREEN);
	strbuf_put(b, caret.data, caret.len);
	if (d->color)
		strbuf_puts(b, C_RESET);
	strbuf_putc(b, '\n');
	free(caret.data);
}

/* ---- reporting --------------------------------------------------------- */

static const char *level_name(DiagLevel level)
{
	switch (level) {
	case DIAG_NOTE: return "note";
	case DIAG_WARNING: return "warning";
	case DIAG_ERROR: return "error";
	}
	return "error";
}

static const char *level_color(DiagLevel level)
{
	switch (level) {
	case DIAG_NOTE: return C_CYAN;
	case DIAG_WARNING: return C_MAGENTA;
	case DIAG_ERROR: return C_RED;
	}
	return C_RED;
}

/* Formats and writes one diagnostic.  `level_text` is what is printed
 * ("error", "fatal error"; json_level is its JSON spelling); `suffix` is
 * appended to the message. */
static void emit(Diag *d, DiagLevel level, const char *level_text, const char *json_level,
                 Loc loc, const char *msg, const char *suffix)
{
	FILE *out = d->stream;
	if (!out)
		return;
	StrBuf b = {0};
	bool has_loc = loc.line > 0;
	if (d->format == DIAG_JSON) {
		strbuf_puts(&b, "{\"file\":");
		if (has_loc && loc.file) {
			strbuf_putc(&b, '"');
			buf_add_json(&b, loc.file, strlen(loc.file));
			strbuf_putc(&b, '"');
		} else
			strbuf_puts(&b, "null");
		strbuf_printf(&b, ",\"line\":%d,\"col\":%d,\"len\":%d,\"level\":\"",
		           has_loc ? loc.line : 0, has_loc ? loc.col : 0,
		           has_loc ? (loc.len > 0 ? loc.len : 1) : 0);
		strbuf_puts(&b, json_level);
		strbuf_puts(&b, "\",\"message\":\"");
		buf_add_json(&b, msg, strlen(msg));
		buf_add_json(&b, suffix, strlen(suffix));
		strbuf_puts(&b, "\"}\n");
	} else {
		if (d->color)
			strbuf_puts(&b, C_BOLD);
		if (!has_loc) {
			/* "fatal error: too many errors" is printed bare, as clang does. */
			if (strcmp(json_level, "fatal") != 0)
				strbuf_puts(&b, "pkc: ");
		} else {
			buf_add_safe(&b, loc.file ? loc.file : "<unknown>",
			             strlen(loc.file ? loc.file : "<unknown>"));
			strbuf_printf(&b, ":%d:%d: ", loc.line, loc.col > 0 ? loc.col : 1);
		}
		if (d->color)
			strbuf_puts(&b, level_color(level));
		strbuf_puts(&b, level_text);
		strbuf_puts(&b, ": ");
		if (d->color)
			strbuf_puts(&b, C_RESET C_BOLD);
		buf_add_safe(&b, msg, strlen(msg));
		strbuf_puts(&b, suffix);
		if (d->color)
			strbuf_puts(&b, C_RESET);
		strbuf_putc(&b, '\n');
		if (has_loc)
			add_excerpt(d, &b, loc);
	}
	fwrite(b.data, 1, b.len, out);
	fflush(out);
	free(b.data);
}

void diag_vreport(Diag *d, DiagLevel level, Loc loc, const char *fmt, va_list ap)
{
	if (d->stop)
		return;
	const char *suffix = "";
	if (level == DIAG_WARNING && d->werror) {
		level = DIAG_ERROR;
		suffix = " [-Werror]";
	}
	if (level == DIAG_ERROR && d->error_limit > 0 && d->nerrors >= d->error_limit) {
		/* clang behaviour: the limit's worth of errors is shown, and the
		 * next one stops the compilation. */
		d->stop = true;
		Loc none = {0};
		emit(d, DIAG_ERROR, "fatal error", "fatal", none,
		     "too many errors emitted, stopping now", " [-ferror-limit=]");
		return;
	}
	if (level == DIAG_ERROR)
		d->nerrors++;
	else if (level == DIAG_WARNING)
		d->nwarnings++;
	if (!d->stream)
		return; /* discarding: skip the formatting work */

	/* Format the message into a malloc'd buffer of the right size. */
	va_list ap2;
	va_copy(ap2, ap);
	char small[256];
	char *big = NULL;
	const char *msg = small;
	int n = vsnprintf(small, sizeof small, fmt, ap);
	if (n < 0) {
		msg = "(unformattable diagnostic)";
	} else if ((size_t)n >= sizeof small) {
		big = xmalloc((size_t)n + 1);
		vsnprintf(big, (size_t)n + 1, fmt, ap2);
		msg = big;
	}
	va_end(ap2);
	emit(d, level, level_name(level), level_name(level), loc, msg, suffix);
	free(big);
}

void diag_report(Diag *d, DiagLevel level, Loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(d, level, loc, fmt, ap);
	va_end(ap);
}
