/* pkc.h - definitions shared by every phase of the compiler: source
 * locations, arenas, interned strings, growable arrays, diagnostics and the
 * per-compilation context.  Each phase has its own header (ast.h, types.h,
 * ir.h); this one holds only what all of them need. */
#ifndef PKC_H
#define PKC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PKC_VERSION "0.1.0"

/* Exit statuses, gcc conventions. */
enum {
	EXIT_OK = 0,       /* compiled */
	EXIT_INPUT = 1,    /* an error in the input */
	EXIT_USAGE = 2,    /* bad command line */
	EXIT_INTERNAL = 70 /* a bug in pkc (EX_SOFTWARE) */
};

/* ---- source locations ------------------------------------------------ */

/* A position in a source file.  Every token, AST node and IR instruction
 * carries one, so every diagnostic can point at the source. */
typedef struct Loc {
	const char *file; /* interned path as given on the command line or include */
	int line;         /* 1-based line; 0 means "no location" */
	int col;          /* 1-based column, in bytes */
	int len;          /* bytes the construct spans on that line (>= 1), for the caret range */
} Loc;

/* One loaded source file.  Files live for the whole compilation. */
typedef struct Source {
	const char *path;   /* interned path */
	const char *text;   /* contents, NUL-terminated (the file may itself contain NULs) */
	size_t size;        /* bytes of text, excluding the terminator */
	const char **lines; /* start of each line, lines[0] = line 1 */
	int nlines;         /* number of lines */
	bool not_file;      /* <stdin>, <command line>, text from memory: not in the depfile */
} Source;

/* ---- memory ---------------------------------------------------------- */

/* A bump allocator.  Everything the phases allocate lives in the
 * compilation's arena (Compiler.arena) and is freed at once with it: no
 * individual frees, no ownership puzzles. */
typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);   /* zeroed, aligned for any type */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...);
void *xmalloc(size_t n);                     /* malloc or internal error */
void *xrealloc(void *p, size_t n);
char *xmemdup(const void *p, size_t n);      /* malloc'd copy of the n bytes with a NUL after them */

/* Growable array of pointers in an arena (old storage is abandoned to the
 * arena on growth; fine for compiler-sized data). */
typedef struct Vec {
	void **items; /* elements */
	int len;      /* elements in use */
	int cap;      /* elements allocated */
} Vec;

void vec_push(Arena *a, Vec *v, void *item);

/* A hash map keyed by pointers (interned names, IR values), open
 * addressing; arrays live in the arena and are abandoned on growth. */
typedef struct PtrMap {
	const void **keys; /* NULL = empty slot */
	void **vals;       /* value of each key */
	int cap;           /* slots (a power of 2, or 0) */
	int n;             /* keys present */
} PtrMap;

/* The value slot of key; with insert, created (NULL-valued) if absent,
 * else NULL when absent. */
void **ptrmap_slot(Arena *a, PtrMap *m, const void *key, bool insert);
/* The value of key, or NULL when absent. */
void *ptrmap_get(const PtrMap *m, const void *key);

/* A growable malloc'd byte string (diagnostics, headers, MLIR output):
 * always NUL-terminated once anything was added; free(b.data) when done. */
typedef struct StrBuf {
	char *data; /* the bytes, NUL-terminated (NULL while empty) */
	size_t len; /* bytes in use, excluding the terminator */
	size_t cap; /* bytes allocated */
} StrBuf;

void strbuf_put(StrBuf *b, const void *p, size_t n);
void strbuf_puts(StrBuf *b, const char *s);
void strbuf_putc(StrBuf *b, char c);
void strbuf_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Bytes produced by a back end (codegen_host, header_generate,
 * codegen_mosaic).  data is malloc'd (free it with codegen_output_free); it
 * is NUL-terminated for the text kinds, and size excludes the terminator. */
typedef struct CodegenOutput {
	char *data;  /* the bytes */
	size_t size; /* how many */
} CodegenOutput;

void codegen_output_free(CodegenOutput *out);

/* Does s begin with prefix? */
bool starts_with(const char *s, const char *prefix);

/* Reads all of f into a malloc'd buffer (its bytes may include NULs) of at
 * most `limit` bytes.  Returns 0, or an errno value (EFBIG past the limit). */
int read_stream(FILE *f, size_t limit, char **out, size_t *outsize);

/* Interned strings: equal names are equal pointers, so the compiler
 * compares identifiers with ==. */
typedef struct Interner Interner;

Interner *interner_new(Arena *a);
const char *intern(Interner *in, const char *s, size_t n);
const char *intern_cstr(Interner *in, const char *s);

/* ---- diagnostics ----------------------------------------------------- */

typedef enum DiagLevel { DIAG_NOTE, DIAG_WARNING, DIAG_ERROR } DiagLevel;

typedef enum DiagFormat { DIAG_TEXT, DIAG_JSON } DiagFormat;

/* Diagnostic engine: formats "file:line:col: error: message", the source
 * line and a caret under the range (text), or one JSON object per line. */
typedef struct Diag {
	DiagFormat format;    /* text or json */
	bool color;           /* ANSI colour (only when stderr is a terminal) */
	bool werror;          /* -Werror: warnings count as errors */
	int error_limit;      /* stop after this many errors (0 = no limit) */
	int nerrors;          /* errors reported so far */
	int nwarnings;        /* warnings reported so far */
	bool stop;            /* error limit reached: phases should stop */
	struct Compiler *cc;  /* to find source lines for the caret */
	void *stream;         /* FILE* diagnostics go to (stderr; NULL = discard, for the fuzzer) */
} Diag;

void diag_report(Diag *d, DiagLevel level, Loc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void diag_vreport(Diag *d, DiagLevel level, Loc loc, const char *fmt, va_list ap);
#define error_at(cc, loc, ...) diag_report(&(cc)->diag, DIAG_ERROR, (loc), __VA_ARGS__)
#define warning_at(cc, loc, ...) diag_report(&(cc)->diag, DIAG_WARNING, (loc), __VA_ARGS__)
#define note_at(cc, loc, ...) diag_report(&(cc)->diag, DIAG_NOTE, (loc), __VA_ARGS__)

/* A bug in pkc: prints "pkc: internal error: ..." and exits 70. */
_Noreturn void internal_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define PKC_ASSERT(c) ((c) ? (void)0 : internal_error("%s:%d: assertion '%s' failed", __FILE__, __LINE__, #c))
/* How the calling thread ends on an internal error, after the message:
 * fn(arg), which should not return (pthread_exit, say), instead of exit().
 * A thread other than the main one sets it: its exit() would run the exit
 * handlers and LLVM's destructors under the main thread's feet.  NULL:
 * exit(70) again. */
void internal_error_ends_thread(void (*fn)(void *), void *arg);

/* ---- the compilation ------------------------------------------------- */

/* A -D NAME=VALUE from the command line. */
typedef struct Define {
	const char *name;  /* interned NAME */
	const char *value; /* VALUE text, parsed as a .pk literal expression */
	bool used;         /* matched a const declaration */
} Define;

/* Everything one run of pkc over one input file owns. */
typedef struct Compiler {
	Arena *arena;       /* lives as long as the compilation */
	Interner *strings;  /* interned identifiers and paths */
	Diag diag;          /* the diagnostic engine */
	Vec sources;        /* Source*, every file read (main file first): the depfile lists them */
	Vec defines;        /* Define*, from -D */
	Vec include_dirs;   /* const char*, -I directories searched (in order) after the including file's own */
	int max_nesting;    /* bracket nesting limit of the lexer */
	bool time_report;   /* -ftime-report: phase times on stderr (time_note) */
	FILE *time_out;     /* where time_note writes (NULL: stderr): the GPU thread's notes wait in a
	                       buffer until it joins, so the report's order does not vary */
} Compiler;

/* Monotonic wall time in milliseconds. */
double time_ms(void);
/* With -ftime-report, "pkc: time: <what> <ms since start>" on stderr
 * (what: printf format and arguments). */
__attribute__((format(printf, 3, 4)))
void time_note(const Compiler *cc, double start, const char *fmt, ...);

void compiler_init(Compiler *cc);
void compiler_free(Compiler *cc);

/* ---- C names (c_names.c) --------------------------------------------- */

/* Does s name something C or C++, the C headers the generated header
 * includes, or the runtime (pk_*) define, or a reserved identifier? */
bool c_name_reserved(const char *s);
/* The generated code exports one C function per kernel, named after it:
 * reports (error_at loc) a name c_name_reserved or a C library function the
 * generated code calls (its definition would take that one's place). */
bool check_kernel_name(Compiler *cc, const char *name, Loc loc);

/* Reads a file (or "-" for stdin) into a Source and records it in cc->sources.
 * Returns NULL and reports an error at `from` (or without location) on failure. */
Source *source_load(Compiler *cc, const char *path, Loc from);
/* Wraps text already in memory (the fuzzer, tests) as a Source. */
Source *source_from_memory(Compiler *cc, const char *path, const char *data, size_t size);
/* Finds the Source a path was loaded as, for caret printing. */
const Source *source_find(const Compiler *cc, const char *path);

#endif
