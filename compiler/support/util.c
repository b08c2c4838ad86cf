/* util.c - memory (arenas, checked malloc), growable arrays, interned
 * strings and internal errors: the plumbing every phase uses. */
#include "pkc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- internal errors --------------------------------------------------- */

/* The calling thread's way out (internal_error_ends_thread); per thread. */
static _Thread_local void (*thread_end)(void *);
static _Thread_local void *thread_end_arg;

void internal_error_ends_thread(void (*fn)(void *), void *arg)
{
	thread_end = fn;
	thread_end_arg = arg;
}

_Noreturn void internal_error(const char *fmt, ...)
{
	va_list ap;
	/* Flush first so the message follows whatever was already printed. */
	fflush(stdout);
	fputs("pkc: internal error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (thread_end)
		thread_end(thread_end_arg);
	exit(EXIT_INTERNAL);
}

void *xmalloc(size_t n)
{
	/* malloc(0) may return NULL legitimately; ask for one byte instead. */
	void *p = malloc(n ? n : 1);
	if (!p)
		internal_error("out of memory allocating %zu bytes", n);
	return p;
}

char *xmemdup(const void *p, size_t n)
{
	char *d = xmalloc(n + 1);
	if (n)
		memcpy(d, p, n);
	d[n] = '\0';
	return d;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		internal_error("out of memory allocating %zu bytes", n);
	return q;
}

/* ---- arena ------------------------------------------------------------- */

/* Alignment good for any object (C11 max_align_t). */
#define ARENA_ALIGN (_Alignof(max_align_t))
/* Default chunk payload; larger requests get a chunk of their own. */
#define ARENA_CHUNK (64 * 1024)

/* One block of arena memory; the payload follows the header. */
typedef struct Chunk {
	struct Chunk *next; /* the previously filled chunk (a stack) */
	size_t size;        /* payload bytes */
	size_t used;        /* payload bytes handed out */
	max_align_t data[]; /* the payload, aligned for any type */
} Chunk;

struct Arena {
	Chunk *head;  /* chunk being filled (newest first) */
	Chunk *big;   /* chunks made for single large requests */
};

Arena *arena_new(void)
{
	Arena *a = xmalloc(sizeof *a);
	a->head = NULL;
	a->big = NULL;
	return a;
}

static void free_chunks(Chunk *c)
{
	while (c) {
		Chunk *next = c->next;
		free(c);
		c = next;
	}
}

void arena_free(Arena *a)
{
	if (!a)
		return;
	free_chunks(a->head);
	free_chunks(a->big);
	free(a);
}

static Chunk *chunk_new(size_t size)
{
	if (size > SIZE_MAX - sizeof(Chunk))
		internal_error("arena request of %zu bytes is too large", size);
	Chunk *c = xmalloc(sizeof(Chunk) + size);
	c->next = NULL;
	c->size = size;
	c->used = 0;
	return c;
}

void *arena_alloc(Arena *a, size_t size)
{
	if (size > SIZE_MAX - ARENA_ALIGN)
		internal_error("arena request of %zu bytes is too large", size);
	/* Round up so the next allocation stays aligned. */
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (need == 0)
		need = ARENA_ALIGN;
	char *p;
	if (need > ARENA_CHUNK / 4) {
		/* A big request gets its own chunk so it does not waste the
		 * remainder of the current one. */
		Chunk *c = chunk_new(need);
		c->next = a->big;
		a->big = c;
		c->used = need;
		p = (char *)c->data;
	} else {
		Chunk *c = a->head;
		if (!c || c->size - c->used < need) {
			c = chunk_new(ARENA_CHUNK);
			c->next = a->head;
			a->head = c;
		}
		p = (char *)c->data + c->used;
		c->used += need;
	}
	memset(p, 0, size);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		internal_error("arena_printf: bad format '%s'", fmt);
	char *p = arena_alloc(a, (size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	return p;
}

/* ---- vectors ----------------------------------------------------------- */

void vec_push(Arena *a, Vec *v, void *item)
{
	if (v->len == v->cap) {
		if (v->cap > (1 << 29))
			internal_error("vector of %d elements is too large", v->cap);
		int cap = v->cap ? v->cap * 2 : 8;
		void **items = arena_alloc(a, (size_t)cap * sizeof *items);
		if (v->len)
			memcpy(items, v->items, (size_t)v->len * sizeof *items);
		v->items = items;
		v->cap = cap;
	}
	v->items[v->len++] = item;
}

/* ---- interned strings -------------------------------------------------- */

/* One interned string; the bytes follow in the arena. */
typedef struct Entry {
	const char *str; /* NUL-terminated copy in the arena */
	size_t len;      /* its length (it may contain NULs only if the caller passed them) */
	uint64_t hash;   /* full hash, to skip most memcmps and to rehash */
} Entry;

struct Interner {
	Arena *arena;   /* where strings live */
	Entry *table;   /* open-addressing table, linear probing */
	size_t cap;     /* slots, a power of two */
	size_t count;   /* slots in use */
};

/* FNV-1a: simple and good enough for identifiers. */
static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* The table lives in the arena like everything else; growth abandons the
 * old table, and since tables double the waste is bounded by the final
 * table's size. */
static Entry *table_new(Arena *a, size_t cap)
{
	return arena_alloc(a, cap * sizeof(Entry));
}

Interner *interner_new(Arena *a)
{
	Interner *in = arena_alloc(a, sizeof *in);
	in->arena = a;
	in->cap = 256;
	in->count = 0;
	in->table = table_new(a, in->cap);
	return in;
}

static void interner_grow(Interner *in)
{
	size_t cap = in->cap * 2;
	Entry *t = table_new(in->arena, cap);
	for (size_t i = 0; i < in->cap; i++) {
		Entry *e = &in->table[i];
		if (!e->str)
			continue;
		size_t j = e->hash & (cap - 1);
		while (t[j].str)
			j = (j + 1) & (cap - 1);
		t[j] = *e;
	}
	in->table = t;
	in->cap = cap;
}

const char *intern(Interner *in, const char *s, size_t n)
{
	uint64_t h = hash_bytes(s, n);
	size_t i = h & (in->cap - 1);
	for (;;) {
		Entry *e = &in->table[i];
		if (!e->str)
			break;
		if (e->hash == h && e->len == n && memcmp(e->str, s, n) == 0)
			return e->str;
		i = (i + 1) & (in->cap - 1);
	}
	/* Keep the load factor under 1/2 so probes stay short. */
	if ((in->count + 1) * 2 > in->cap) {
		interner_grow(in);
		i = h & (in->cap - 1);
		while (in->table[i].str)
			i = (i + 1) & (in->cap - 1);
	}
	Entry *e = &in->table[i];
	e->str = arena_strndup(in->arena, s, n);
	e->len = n;
	e->hash = h;
	in->count++;
	return e->str;
}

const char *intern_cstr(Interner *in, const char *s)
{
	return intern(in, s, strlen(s));
}

/* ---- pointer maps -------------------------------------------------------- */

/* The slot of key, or the empty slot where it would go (m->cap > 0). */
static int ptrmap_find(const PtrMap *m, const void *key)
{
	size_t h = ((uintptr_t)key >> 3) * UINT64_C(0x9E3779B97F4A7C15) >> 7;
	int i = (int)(h & (size_t)(m->cap - 1));
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void **ptrmap_slot(Arena *a, PtrMap *m, const void *key, bool insert)
{
	if (insert && 2 * (m->n + 1) > m->cap) {
		PtrMap g = {.cap = m->cap ? 2 * m->cap : 16};
		g.keys = arena_alloc(a, sizeof(void *) * (size_t)g.cap);
		g.vals = arena_alloc(a, sizeof(void *) * (size_t)g.cap);
		for (int i = 0; i < m->cap; i++)
			if (m->keys[i])
				*ptrmap_slot(a, &g, m->keys[i], true) = m->vals[i];
		*m = g;
	}
	if (!m->cap)
		return NULL;
	int i = ptrmap_find(m, key);
	if (!m->keys[i]) {
		if (!insert)
			return NULL;
		m->keys[i] = key;
		m->n++;
	}
	return &m->vals[i];
}

void *ptrmap_get(const PtrMap *m, const void *key)
{
	if (!m->cap)
		return NULL;
	int i = ptrmap_find(m, key);
	return m->keys[i] ? m->vals[i] : NULL;
}

/* ---- growable strings -------------------------------------------------- */

void strbuf_put(StrBuf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void strbuf_puts(StrBuf *b, const char *s) { strbuf_put(b, s, strlen(s)); }

void strbuf_putc(StrBuf *b, char c) { strbuf_put(b, &c, 1); }

void strbuf_printf(StrBuf *b, const char *fmt, ...)
{
	/* Format straight into the buffer's spare room; grow and redo once if short. */
	for (int pass = 0; pass < 2; pass++) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = b->cap > b->len ? b->cap - b->len : 0;
		int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			internal_error("strbuf_printf: bad format '%s'", fmt);
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		strbuf_put(b, "", 0);               /* make sure data exists */
		size_t need = b->len + (size_t)n + 1, cap = b->cap;
		while (cap < need)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	internal_error("strbuf_printf: output changed size between passes");
}

void codegen_output_free(CodegenOutput *out)
{
	free(out->data);
	out->data = NULL;
	out->size = 0;
}

/* ---- reading whole files ------------------------------------------------ */

int read_stream(FILE *f, size_t limit, char **out, size_t *outsize)
{
	size_t cap = 64 * 1024, size = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (size == cap) {
			if (cap > limit) {
				free(buf);
				return EFBIG;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		size_t n = fread(buf + size, 1, cap - size, f);
		size += n;
		if (n == 0) {
			if (ferror(f)) {
				int e = errno ? errno : EIO;
				free(buf);
				return e;
			}
			break;
		}
	}
	if (size > limit) {
		free(buf);
		return EFBIG;
	}
	*out = buf;
	*outsize = size;
	return 0;
}

double time_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void time_note(const Compiler *cc, double start, const char *fmt, ...)
{
	if (!cc->time_report)
		return;
	double ms = time_ms() - start;
	char what[128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	fprintf(cc->time_out ? cc->time_out : stderr, "pkc: time: %-28s %8.2f ms\n", what, ms);
}
