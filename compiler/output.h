/* output.h - how the driver writes its outputs (output.c): each through a
 * temporary file renamed into place, removed again when the run fails
 * (also on SIGINT/SIGTERM/SIGHUP); output names; make depfiles. */
#ifndef PKC_OUTPUT_H
#define PKC_OUTPUT_H

#include "pkc.h"

#include <stdio.h>

/* Writes an output's bytes to `out`; false if it could not. */
typedef bool (*OutputWriter)(void *ctx, FILE *out);

/* Installs the cleanup: at exit and on SIGINT/SIGTERM/SIGHUP, every
 * temporary file goes, and so do the outputs registered with
 * output_remove_on_failure unless output_succeeded was called. */
void output_init(void);
void output_succeeded(void);
/* Runs the cleanup now (main's last step; at exit it is a no-op then). */
void output_cleanup(void);

/* An earlier output at `path` is removed should the run fail, as gcc
 * does, unless it is not a regular file (-o /dev/null must survive). */
void output_remove_on_failure(const char *path);

/* Writes the output `path` with w: "-" is stdout; an existing path that is
 * not a regular file (/dev/null, a FIFO) is written directly; any other
 * through a temporary file in its directory, renamed over it.  keep_same:
 * when a regular file at `path` already holds exactly these bytes, it is
 * left alone, mtime and all (the generated header: C files that include
 * it are not recompiled).  Reports its errors; false on failure. */
bool output_write(Compiler *cc, const char *path, bool keep_same, OutputWriter w, void *ctx);

/* True if `path` exists and is not a regular file (a device, a FIFO):
 * no derived output (header, depfile) is named after it. */
bool output_is_special(const char *path);

/* Would `a` and `b` be the same file?  The same inode when both exist
 * (hard links, symbolic links, other spellings); when neither does, the
 * same name in the same directory (./t.o and t.o). */
bool output_same_file(const char *a, const char *b);

/* The file name with its extension (if any) replaced by `ext`, in the
 * directory part of `path` if keep_dir, else in the current directory. */
char *output_replace_ext(Arena *a, const char *path, const char *ext, bool keep_dir);

/* A make rule: the targets (each -MT verbatim, as gcc does; none: `target`,
 * escaped for make), then every source file read, once each, in order;
 * phony (-MP): an empty rule for each file but the main one, so that make
 * does not fail when one is deleted. */
void output_depfile(Compiler *cc, FILE *out, const Vec *mt_targets, const char *target, bool phony);

#endif
