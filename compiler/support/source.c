/* source.c - loading source files (or stdin) into memory with a line table,
 * and the per-compilation context. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "pkc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void compiler_init(Compiler *cc)
{
	memset(cc, 0, sizeof *cc);
	cc->arena = arena_new();
	cc->strings = interner_new(cc->arena);
	cc->diag.format = DIAG_TEXT;
	cc->diag.color = false;
	cc->diag.werror = false;
	cc->diag.error_limit = 20;
	cc->diag.cc = cc;
	cc->diag.stream = stderr;
	cc->max_nesting = 256;
}

void compiler_free(Compiler *cc)
{
	/* Everything (sources, strings, AST, IR) lives in the arena. */
	arena_free(cc->arena);
	memset(cc, 0, sizeof *cc);
}

/* Builds the line table of src: lines[i] is the first byte of line i+1.
 * A final line without a newline counts, and so does the empty line after
 * a trailing newline, so a location at end of file always has a line. */
static void build_lines(Compiler *cc, Source *src)
{
	int n = 1;
	for (size_t i = 0; i < src->size; i++)
		if (src->text[i] == '\n')
			n++;
	src->lines = arena_alloc(cc->arena, (size_t)n * sizeof *src->lines);
	src->nlines = n;
	int k = 0;
	src->lines[k++] = src->text;
	for (size_t i = 0; i < src->size; i++)
		if (src->text[i] == '\n')
			src->lines[k++] = src->text + i + 1;
}

/* Wraps `size` bytes (already NUL-terminated at data[size], in the arena)
 * as a Source and records it. */
static Source *source_new(Compiler *cc, const char *path, const char *data, size_t size)
{
	Source *src = arena_alloc(cc->arena, sizeof *src);
	src->path = intern_cstr(cc->strings, path);
	src->text = data;
	src->size = size;
	build_lines(cc, src);
	vec_push(cc->arena, &cc->sources, src);
	return src;
}

Source *source_from_memory(Compiler *cc, const char *path, const char *data, size_t size)
{
	/* Copy so the text is NUL-terminated and outlives the caller's buffer. */
	char *text = arena_strndup(cc->arena, data, size);
	Source *src = source_new(cc, path, text, size);
	src->not_file = true;
	return src;
}

/* Line and column are ints, so a file must stay below INT_MAX bytes. */
#define SOURCE_MAX ((size_t)INT_MAX - 1)

Source *source_load(Compiler *cc, const char *path, Loc from)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	int err = 0;
	char *buf = NULL;
	size_t size = 0;
	if (!f) {
		err = errno;
	} else {
		/* fopen succeeds on a directory on Linux; say so plainly. */
		struct stat st;
		if (!is_stdin && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
			err = EISDIR;
		else {
			errno = 0;
			err = read_stream(f, SOURCE_MAX, &buf, &size);
		}
		if (!is_stdin)
			fclose(f);
	}
	if (err) {
		error_at(cc, from, "cannot open '%s': %s", path, strerror(err));
		return NULL;
	}
	char *text = arena_strndup(cc->arena, buf, size);
	free(buf);
	/* gcc calls standard input "<stdin>" in diagnostics. */
	Source *src = source_new(cc, is_stdin ? "<stdin>" : path, text, size);
	src->not_file = is_stdin;
	return src;
}

const Source *source_find(const Compiler *cc, const char *path)
{
	if (!path)
		return NULL;
	/* Paths are interned, but compare contents too in case a caller built
	 * a Loc from an un-interned string. */
	for (int i = 0; i < cc->sources.len; i++) {
		const Source *s = cc->sources.items[i];
		if (s->path == path || strcmp(s->path, path) == 0)
			return s;
	}
	return NULL;
}
