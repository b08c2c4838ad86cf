/* debug.c - pk_debug_print: debug_print of scalars and blocks on the host
 * (lang-spec §7.19).  A block prints as NumPy's str() of the array with its
 * default options, which is what Pallas interpret mode prints
 * (jax.debug.print formats with it): nested brackets, elements separated by
 * spaces and padded to one width, rows wrapped at 75 columns, arrays of more
 * than 1000 elements summarised to their 3 first and last items per axis
 * with "...".  Floats print as NumPy's "maxprec" mode does: the shortest
 * digits that give the element's value back in its dtype (at most 8 after
 * the point), positional unless the magnitudes call for scientific form;
 * bf16 (ml_dtypes' type, which NumPy formats with each element's str())
 * prints each element as %g, unpadded.
 * The line is built in memory and written at once. */
#define _POSIX_C_SOURCE 200809L /* flockfile */
#include "pk_runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINE_WIDTH = 75, THRESHOLD = 1000, EDGE = 3, PRECISION = 8 };

/* A growing string; on allocation failure it stops growing (`failed`). */
typedef struct Buf {
	char *s;
	size_t len, cap;
	int failed;
} Buf;

static void put(Buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->failed = 1;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void puts_(Buf *b, const char *s) { put(b, s, strlen(s)); }

static void spaces(Buf *b, int n)
{
	for (; n > 0; n--)
		put(b, " ", 1);
}

/* ---- elements ------------------------------------------------------------------ */

static int is_float(int dt) { return dt >= PK_DEBUG_F16 && dt <= PK_DEBUG_F64; }

static size_t elem_size(int dt)
{
	switch (dt) {
	case PK_DEBUG_BOOL: case PK_DEBUG_I8: case PK_DEBUG_U8: return 1;
	case PK_DEBUG_I16: case PK_DEBUG_U16: return 2;
	case PK_DEBUG_I32: case PK_DEBUG_U32: case PK_DEBUG_F16: case PK_DEBUG_BF16: case PK_DEBUG_F32: return 4;
	default: return 8;
	}
}

static double get_f(int dt, const void *p)
{
	if (dt == PK_DEBUG_F64) {
		double d;
		memcpy(&d, p, sizeof d);
		return d;
	}
	float f;
	memcpy(&f, p, sizeof f);
	return f;
}

static int64_t get_i(int dt, const void *p)
{
	switch (dt) {
	case PK_DEBUG_BOOL: case PK_DEBUG_U8: return *(const uint8_t *)p;
	case PK_DEBUG_I8: return *(const int8_t *)p;
	case PK_DEBUG_I16: { int16_t v; memcpy(&v, p, 2); return v; }
	case PK_DEBUG_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case PK_DEBUG_I32: { int32_t v; memcpy(&v, p, 4); return v; }
	case PK_DEBUG_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
	default: { int64_t v; memcpy(&v, p, 8); return v; }
	}
}

/* An integer element's decimal text. */
static void int_text(int dt, const void *p, char *out, size_t n)
{
	if (dt == PK_DEBUG_U64)
		snprintf(out, n, "%llu", (unsigned long long)get_i(dt, p));
	else
		snprintf(out, n, "%lld", (long long)get_i(dt, p));
}

/* 16-bit floats as bits, rounded to nearest even (no libm: libpkrt.so
 * links only libdl). */
static uint16_t f16_bits(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000, m = x & 0x7fffff;
	int32_t e = (int32_t)((x >> 23) & 0xff) - 127 + 15;
	if (((x >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0));
	if (e >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	int shift = 13;
	if (e <= 0) { /* a subnormal result: the implicit bit joins the fraction */
		if (e < -10)
			return (uint16_t)sign;
		m |= 0x800000;
		shift = 14 - e;
		e = 0;
	}
	uint32_t h = sign | ((uint32_t)e << 10) | (m >> shift), rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
	return (uint16_t)(h + (rest > half || (rest == half && (h & 1)))); /* a carry moves into the exponent */
}

static uint16_t bf16_bits(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static int finite(double x) { return x - x == 0; }

/* Whether text s reads back as x in dtype dt. */
static int reads_back(int dt, const char *s, double x)
{
	double y = strtod(s, NULL);
	switch (dt) {
	case PK_DEBUG_F64: return y == x;
	case PK_DEBUG_F32: return (float)y == (float)x;
	case PK_DEBUG_F16: return f16_bits((float)y) == f16_bits((float)x);
	default: return bf16_bits((float)y) == bf16_bits((float)x);
	}
}

/* The fewest digits after the point with which x prints as itself,
 * positional (%f) or scientific (%e); when that takes more than PRECISION,
 * x rounded to PRECISION digits less its trailing zeros (NumPy's unique
 * digits with precision 8 and trim '.'). */
static int shortest(int dt, double x, int sci)
{
	char s[64];
	for (int p = 0; p < PRECISION; p++) {
		snprintf(s, sizeof s, sci ? "%.*e" : "%.*f", p, x);
		if (reads_back(dt, s, x))
			return p;
	}
	snprintf(s, sizeof s, sci ? "%.*e" : "%.*f", PRECISION, x);
	char *end = sci ? strchr(s, 'e') : s + strlen(s);
	int p = PRECISION;
	while (p > 0 && end[-1] == '0')
		end--, p--;
	return p;
}

/* ---- the block's shape, and which of its elements print ------------------------- */

typedef struct Block {
	int dt;
	int rank;
	const int64_t *shape;
	const char *data;
	int summary; /* more than THRESHOLD elements: EDGE items of each end per axis */
} Block;

/* Whether item i of an axis of extent n prints (summarised blocks skip the middle). */
static int shown(const Block *a, int64_t n, int64_t i) { return !a->summary || n <= 2 * EDGE || i < EDGE || i >= n - EDGE; }

/* How a block's elements print: NumPy's FloatingFormat / IntegerFormat /
 * BoolFormat, fitted to the elements that print. */
typedef struct Fmt {
	int sci;       /* floats: scientific form */
	int prec;      /* floats: digits after the point (the most any element needs) */
	int exp_size;  /* floats, scientific: digits of the exponent */
	int pad_left;  /* floats: width before the point; integers: the width */
	int pad_right; /* floats: width after the point */
	int any_nonfinite, neg_inf;
	double max_abs, min_abs; /* over finite non-zero elements (max_abs < 0: none) */
} Fmt;

typedef void (*Visit)(const Block *a, const void *elem, Fmt *f, int pass);

/* Calls v on every element that prints, in order. */
static void each(const Block *a, int axis, size_t off, Visit v, Fmt *f, int pass)
{
	if (axis == a->rank) {
		v(a, a->data + off * elem_size(a->dt), f, pass);
		return;
	}
	size_t stride = 1;
	for (int d = axis + 1; d < a->rank; d++)
		stride *= (size_t)a->shape[d];
	for (int64_t i = 0; i < a->shape[axis]; i++)
		if (shown(a, a->shape[axis], i))
			each(a, axis + 1, off + (size_t)i * stride, v, f, pass);
}

/* Pass 0: magnitudes; pass 1: digits and widths (NumPy's fillFormat). */
static void measure(const Block *a, const void *p, Fmt *f, int pass)
{
	char s[64];
	if (!is_float(a->dt)) {
		if (a->dt != PK_DEBUG_BOOL) {
			int_text(a->dt, p, s, sizeof s);
			if ((int)strlen(s) > f->pad_left)
				f->pad_left = (int)strlen(s);
		}
		return;
	}
	double x = get_f(a->dt, p);
	if (!finite(x)) {
		f->any_nonfinite = 1;
		f->neg_inf |= x < 0;
		return;
	}
	if (pass == 0) {
		if (x != 0) {
			double m = x < 0 ? -x : x;
			if (f->max_abs < 0 || m > f->max_abs)
				f->max_abs = m;
			if (f->max_abs < 0 || f->min_abs == 0 || m < f->min_abs)
				f->min_abs = m;
		}
		return;
	}
	int p_ = shortest(a->dt, x, f->sci);
	if (p_ > f->prec)
		f->prec = p_;
	snprintf(s, sizeof s, f->sci ? "%.*e" : "%.*f", p_, x);
	int left = (int)(strchr(s, '.') ? strchr(s, '.') - s : (f->sci ? strchr(s, 'e') - s : (long)strlen(s)));
	if (left > f->pad_left)
		f->pad_left = left;
	if (f->sci) {
		int e = (int)strlen(strchr(s, 'e') + 2); /* after "e+" */
		if (e > f->exp_size)
			f->exp_size = e;
	}
}

static Fmt fit(const Block *a)
{
	Fmt f = {.max_abs = -1};
	each(a, 0, 0, measure, &f, 0);
	f.sci = f.max_abs >= 0 && (f.max_abs >= 1e8 || f.min_abs < 1e-4 || f.max_abs / f.min_abs > 1e3);
	each(a, 0, 0, measure, &f, 1);
	if (is_float(a->dt)) {
		f.pad_right = f.sci ? f.exp_size + 2 + f.prec : f.prec;
		if (f.any_nonfinite) { /* "nan", "-inf" right-aligned in the same width */
			int off = f.pad_right + 1;
			if (3 + f.neg_inf - off > f.pad_left)
				f.pad_left = 3 + f.neg_inf - off;
		}
	}
	return f;
}

/* One element's text, padded as NumPy pads it. */
static void elem_text(const Block *a, const Fmt *f, const void *p, Buf *out)
{
	char s[96];
	if (a->dt == PK_DEBUG_BOOL) {
		puts_(out, get_i(a->dt, p) ? " True" : "False");
		return;
	}
	if (!is_float(a->dt)) {
		int_text(a->dt, p, s, sizeof s);
		spaces(out, f->pad_left - (int)strlen(s));
		puts_(out, s);
		return;
	}
	double x = get_f(a->dt, p);
	if (a->dt == PK_DEBUG_BF16) { /* ml_dtypes' bfloat16 is not a NumPy float: each element is its str() */
		snprintf(s, sizeof s, "%g", x);
		puts_(out, s);
		return;
	}
	if (!finite(x)) {
		const char *t = x != x ? "nan" : x < 0 ? "-inf" : "inf";
		spaces(out, f->pad_left + f->pad_right + 1 - (int)strlen(t));
		puts_(out, t);
		return;
	}
	if (f->sci) { /* every element with prec digits; the exponent with exp_size digits */
		snprintf(s, sizeof s, "%#.*e", f->prec, x);
		char *e = strchr(s, 'e');
		int left = (int)(strchr(s, '.') - s);
		spaces(out, f->pad_left - left);
		put(out, s, (size_t)(e - s) + 2); /* mantissa, "e" and the sign */
		int digits = (int)strlen(e + 2);
		for (int k = digits; k < f->exp_size; k++)
			put(out, "0", 1);
		puts_(out, e + 2);
		return;
	}
	/* Positional: its own shortest digits, the point kept, spaces after. */
	int prec = shortest(a->dt, x, 0);
	snprintf(s, sizeof s, "%#.*f", prec, x);
	int left = (int)(strchr(s, '.') - s);
	spaces(out, f->pad_left - left);
	puts_(out, s);
	spaces(out, f->pad_right - prec);
}

/* ---- layout: NumPy's _formatArray with separator ' ' and prefix "" ------------------ */

/* NumPy's _extendLine: a word that does not fit starts a new line, unless
 * the line holds only its indent. */
static void extend_line(Buf *s, Buf *line, const char *word, size_t wlen, int width, const char *indent)
{
	size_t ilen = strlen(indent);
	if (line->len + wlen > (size_t)width && line->len > ilen) {
		size_t n = line->len;
		while (n > 0 && line->s[n - 1] == ' ')
			n--;
		put(s, line->s, n);
		put(s, "\n", 1);
		line->len = 0;
		put(line, indent, ilen);
	}
	put(line, word, wlen);
}

/* Appends the text of the sub-array at `off` (axes axis..rank-1) to out. */
static void format(const Block *a, const Fmt *f, int axis, size_t off, const char *indent, int width, Buf *out)
{
	size_t stride = 1;
	for (int d = axis + 1; d < a->rank; d++)
		stride *= (size_t)a->shape[d];
	int64_t n = a->shape[axis];
	int summary = a->summary && n > 2 * EDGE;
	size_t ilen = strlen(indent);
	char *next = malloc(ilen + 2);
	if (!next) {
		puts_(out, "?");
		return;
	}
	memcpy(next, indent, ilen);
	memcpy(next + ilen, " ", 2);
	Buf s = {0};
	if (axis == a->rank - 1) {
		Buf line = {0}, word = {0};
		put(&line, indent, ilen); /* the first line has the indent too; it becomes the '[' */
		for (int64_t i = 0; i < n; i++) {
			if (summary && i == EDGE) {
				extend_line(&s, &line, "...", 3, width - 1, indent);
				put(&line, " ", 1);
				i = n - EDGE - 1;
				continue;
			}
			word.len = 0;
			elem_text(a, f, a->data + (off + (size_t)i) * elem_size(a->dt), &word);
			/* the last element may reach the ']' column, the others leave room for a separator */
			extend_line(&s, &line, word.s ? word.s : "", word.len, width - 1, indent);
			if (i < n - 1)
				put(&line, " ", 1);
		}
		put(&s, line.s ? line.s : "", line.len);
		free(line.s);
		free(word.s);
	} else {
		for (int64_t i = 0; i < n; i++) {
			if (summary && i == EDGE) {
				put(&s, indent, ilen);
				puts_(&s, "...");
				for (int k = 0; k < a->rank - axis - 1; k++)
					put(&s, "\n", 1);
				i = n - EDGE - 1;
				continue;
			}
			put(&s, indent, ilen);
			format(a, f, axis + 1, off + (size_t)i * stride, next, width - 1, &s);
			if (i < n - 1)
				for (int k = 0; k < a->rank - axis - 1; k++)
					put(&s, "\n", 1);
		}
	}
	put(out, "[", 1);
	if (s.len > ilen)
		put(out, s.s + ilen, s.len - ilen);
	put(out, "]", 1);
	free(s.s);
	free(next);
	out->failed |= s.failed;
}

static void print_block(const pk_debug_value *v, Buf *out)
{
	Block a = {v->dtype, v->rank, v->shape, v->data, 0};
	int64_t numel = 1;
	for (int d = 0; d < a.rank; d++) {
		if (a.shape[d] == 0) {
			puts_(out, "[]");
			return;
		}
		numel = numel > INT64_MAX / a.shape[d] ? INT64_MAX : numel * a.shape[d];
	}
	a.summary = numel > THRESHOLD;
	Fmt f = fit(&a);
	format(&a, &f, 0, 0, " ", LINE_WIDTH, out);
}

static void print_scalar(const pk_debug_value *v, Buf *out)
{
	char s[64];
	if (is_float(v->dtype))
		snprintf(s, sizeof s, "%g", get_f(v->dtype, v->data));
	else
		int_text(v->dtype, v->data, s, sizeof s);
	puts_(out, s);
}

void pk_debug_print(const char *fmt, int32_t n, const pk_debug_value *values)
{
	Buf out = {0};
	int k = 0;
	for (const char *c = fmt ? fmt : ""; *c; c++) {
		if (c[0] == '{' && c[1] == '}') {
			const pk_debug_value *v = k < n ? &values[k++] : NULL;
			if (!v || v->dtype < PK_DEBUG_BOOL || v->dtype > PK_DEBUG_F64 || v->rank < 0 || !v->data ||
			    (v->rank > 0 && !v->shape))
				puts_(&out, "?");
			else if (v->rank == 0)
				print_scalar(v, &out);
			else
				print_block(v, &out);
			c++;
		} else {
			put(&out, c, 1);
		}
	}
	put(&out, "\n", 1);
	if (!out.failed) {
		flockfile(stdout);
		fwrite(out.s, 1, out.len, stdout);
		funlockfile(stdout);
	}
	free(out.s);
}
