/* output.c - writing the driver's outputs (output.h): a temporary file
 * next to the final one, renamed into place on success; on failure neither
 * the temporary file nor any earlier output of the same name is left
 * behind, so a build system never sees a half-written or stale output.
 * Also output names and make depfiles. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "output.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- cleanup of outputs on failure ------------------------------------- */

/* Paths to remove if pkc exits without success (also on internal_error,
 * which calls exit, and on SIGINT/SIGTERM).  Temporary files are always
 * removed; stale outputs only when they are regular files. */
enum { MAX_CLEANUP = 8 };
static char *cleanup_paths[MAX_CLEANUP];  /* malloc'd paths */
static int ncleanup;                      /* entries in use */
static volatile sig_atomic_t succeeded;   /* set once every output is in place */

static void cleanup_add(const char *path)
{
	if (ncleanup == MAX_CLEANUP)
		internal_error("too many files to clean up");
	size_t n = strlen(path) + 1;
	char *p = xmalloc(n);
	memcpy(p, path, n);
	cleanup_paths[ncleanup++] = p;
}

/* Stops tracking a path (it was renamed into place, or removed). */
static void cleanup_forget(const char *path)
{
	for (int i = 0; i < ncleanup; i++)
		if (cleanup_paths[i] && strcmp(cleanup_paths[i], path) == 0) {
			free(cleanup_paths[i]);
			cleanup_paths[i] = NULL;
		}
}

void output_cleanup(void)
{
	for (int i = 0; i < ncleanup; i++) {
		if (cleanup_paths[i] && !succeeded)
			unlink(cleanup_paths[i]);
		free(cleanup_paths[i]);
		cleanup_paths[i] = NULL;
	}
	ncleanup = 0;
}

static void on_signal(int sig)
{
	/* unlink is async-signal-safe; the paths are not freed here. */
	for (int i = 0; i < ncleanup; i++)
		if (cleanup_paths[i])
			unlink(cleanup_paths[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

void output_init(void)
{
	atexit(output_cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
}

void output_succeeded(void)
{
	succeeded = 1;
}

void output_remove_on_failure(const char *path)
{
	if (output_is_special(path))
		return;
	cleanup_add(path);
}

/* ---- writing outputs --------------------------------------------------- */

bool output_is_special(const char *path)
{
	struct stat st;
	return strcmp(path, "-") != 0 && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

static bool close_checked(Compiler *cc, FILE *f, const char *path)
{
	bool ok = !ferror(f);
	int err = ok ? 0 : EIO;
	if (fflush(f) != 0 && ok) {
		ok = false;
		err = errno;
	}
	if (f != stdout && fclose(f) != 0 && ok) {
		ok = false;
		err = errno;
	}
	if (!ok) {
		Loc none = {0};
		error_at(cc, none, "cannot write '%s': %s", path, strerror(err));
	}
	return ok;
}

/* Do the regular files a and b hold the same bytes? */
static bool same_contents(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) != 0 || stat(b, &sb) != 0 || !S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) ||
	    sa.st_size != sb.st_size)
		return false;
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	bool same = fa && fb;
	char ba[8192], bb[8192];
	while (same) {
		size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
		same = na == nb && memcmp(ba, bb, na) == 0 && !ferror(fa) && !ferror(fb);
		if (na == 0)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

bool output_write(Compiler *cc, const char *path, bool keep_same, OutputWriter w, void *ctx)
{
	Loc none = {0};
	if (strcmp(path, "-") == 0) {
		bool ok = w(ctx, stdout);
		return close_checked(cc, stdout, "<stdout>") && ok;
	}
	if (output_is_special(path)) {
		FILE *f = fopen(path, "wb");
		if (!f) {
			error_at(cc, none, "cannot open '%s' for writing: %s", path, strerror(errno));
			return false;
		}
		bool ok = w(ctx, f);
		return close_checked(cc, f, path) && ok;
	}

	/* .<name>.tmpXXXXXX next to the output, so rename stays within one
	 * file system and is atomic. */
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dirlen;
	char *tmp = arena_printf(cc->arena, "%.*s.%s.tmpXXXXXX", (int)dirlen, path, base);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		error_at(cc, none, "cannot open '%s' for writing: %s", path, strerror(errno));
		return false;
	}
	cleanup_add(tmp);
	/* mkstemp creates 0600; give the output the usual 0666 & ~umask. */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		/* Not fatal: the output is still correct, just less readable. */
	}
	FILE *f = fdopen(fd, "wb");
	if (!f) {
		int e = errno;
		close(fd);
		error_at(cc, none, "cannot open '%s' for writing: %s", path, strerror(e));
		return false;
	}
	bool ok = w(ctx, f);
	ok = close_checked(cc, f, path) && ok;
	if (!ok)
		return false; /* the temporary file goes at exit */
	if (keep_same && same_contents(tmp, path)) {
		unlink(tmp);
		cleanup_forget(tmp);
		return true;
	}
	if (rename(tmp, path) != 0) {
		error_at(cc, none, "cannot write '%s': %s", path, strerror(errno));
		return false;
	}
	cleanup_forget(tmp);
	return true;
}

/* ---- names ------------------------------------------------------------- */

/* stat of the directory that holds `path` (a name in it, not following a
 * final symbolic link). */
static bool stat_dir_of(const char *path, struct stat *st)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return stat(".", st) == 0;
	if (slash == path)
		return stat("/", st) == 0;
	char *dir = xmalloc((size_t)(slash - path) + 1);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	bool ok = stat(dir, st) == 0;
	free(dir);
	return ok;
}

bool output_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
	if (ea || eb)
		return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
	na = na ? na + 1 : a;
	nb = nb ? nb + 1 : b;
	return strcmp(na, nb) == 0 && stat_dir_of(a, &sa) && stat_dir_of(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

char *output_replace_ext(Arena *a, const char *path, const char *ext, bool keep_dir)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *start = keep_dir ? path : base;
	const char *dot = strrchr(base, '.');
	/* ".hidden" has no extension; neither has a name ending in '.'... it has
	 * an empty one, which gets replaced like any other. */
	size_t n = dot && dot != base ? (size_t)(dot - start) : strlen(start);
	return arena_printf(a, "%.*s.%s", (int)n, start, ext);
}

/* ---- depfiles ---------------------------------------------------------- */

/* Writes a path escaped for make: spaces and '#' get a backslash, '$'
 * doubles. */
static void put_make_path(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '#')
			fputc('\\', out);
		else if (*s == '$')
			fputc('$', out);
		fputc(*s, out);
	}
}

void output_depfile(Compiler *cc, FILE *out, const Vec *mt_targets, const char *target, bool phony)
{
	if (mt_targets->len > 0) {
		for (int i = 0; i < mt_targets->len; i++)
			fprintf(out, "%s%s", i ? " " : "", (const char *)mt_targets->items[i]);
	} else {
		put_make_path(out, target);
	}
	fputc(':', out);
	/* Every file read, once each, in order; stdin and -D values are not files. */
	Vec deps = {0};
	for (int i = 0; i < cc->sources.len; i++) {
		const Source *s = cc->sources.items[i];
		bool seen = s->not_file;
		for (int k = 0; k < deps.len && !seen; k++)
			seen = deps.items[k] == s->path;
		if (seen)
			continue;
		fputs(deps.len ? " \\\n  " : " ", out);
		put_make_path(out, s->path);
		vec_push(cc->arena, &deps, (void *)s->path);
	}
	fputc('\n', out);
	/* gcc -MP: "inc.pk:" for each file but the main one. */
	bool main_listed = cc->sources.len > 0 && deps.len > 0 &&
	                   deps.items[0] == ((const Source *)cc->sources.items[0])->path;
	for (int k = main_listed ? 1 : 0; phony && k < deps.len; k++) {
		put_make_path(out, deps.items[k]);
		fputs(":\n", out);
	}
}
