/* nvptx_ptxas.c - the CUDA toolkit pieces the CUDA back end uses: finding
 * ptxas and libdevice, and running ptxas on PTX (no shell: posix_spawn,
 * temporary files removed afterwards; nothing of them reaches the output). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* mkstemps */
#endif
#include "nvptx.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_CUDA "/usr/local/cuda"

static bool executable(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

const char *nv_find_ptxas(Compiler *cc, const char *path)
{
	if (path && strcmp(path, "none") == 0)
		return NULL;
	if (path)
		return executable(path) ? path : NULL;
	const char *env = getenv("PATH");
	if (env) {
		const char *p = env;
		while (*p) {
			const char *colon = strchr(p, ':');
			size_t n = colon ? (size_t)(colon - p) : strlen(p);
			const char *cand = n ? arena_printf(cc->arena, "%.*s/ptxas", (int)n, p) : "ptxas";
			if (n && executable(cand))
				return cand;
			p += n + (colon != NULL);
		}
	}
	return executable(DEFAULT_CUDA "/bin/ptxas") ? DEFAULT_CUDA "/bin/ptxas" : NULL;
}

const char *nv_find_libdevice(Compiler *cc, const char *ptxas_option)
{
	const char *rel = "nvvm/libdevice/libdevice.10.bc";
	/* <cuda>/bin/ptxas -> <cuda>/nvvm/libdevice/libdevice.10.bc */
	const char *ptxas = nv_find_ptxas(cc, ptxas_option);
	if (ptxas) {
		char *real = realpath(ptxas, NULL);
		if (real) {
			char *slash = strrchr(real, '/');
			if (slash) {
				*slash = '\0';
				slash = strrchr(real, '/');
			}
			const char *cand = slash ? arena_printf(cc->arena, "%.*s/%s", (int)(slash - real), real, rel) : NULL;
			free(real);
			if (cand && access(cand, R_OK) == 0)
				return cand;
		}
	}
	const char *home[2] = {getenv("CUDA_HOME"), DEFAULT_CUDA};
	for (int h = 0; h < 2; h++) {
		if (!home[h] || !*home[h])
			continue;
		const char *cand = arena_printf(cc->arena, "%s/%s", home[h], rel);
		if (access(cand, R_OK) == 0)
			return cand;
	}
	return NULL;
}

/* A temporary file "<dir>/pkc-XXXXXX<suffix>" (its path malloc'd), or NULL. */
static char *temp_file(const char *suffix, int *fd)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	size_t n = strlen(dir) + strlen("/pkc-XXXXXX") + strlen(suffix) + 1;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/pkc-XXXXXX%s", dir, suffix);
	*fd = mkstemps(p, (int)strlen(suffix));
	if (*fd < 0) {
		free(p);
		return NULL;
	}
	return p;
}

static bool write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* The file at path, malloc'd (NULL if it cannot be read). */
static char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	int err = read_stream(f, (size_t)1 << 40, &buf, size);
	fclose(f);
	return err ? NULL : buf;
}

/* Runs argv with stdout and stderr into a malloc'd string; returns the
 * exit status, 256 + the signal that killed it, or -1: could not run. */
static int run_capture(char *const argv[], char **output)
{
	int pipefd[2];
	*output = NULL;
	if (pipe(pipefd) != 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	posix_spawn_file_actions_addclose(&fa, pipefd[1]);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (rc != 0) {
		close(pipefd[0]);
		return -1;
	}
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = read(pipefd[0], buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	close(pipefd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			free(buf);
			return -1;
		}
	*output = buf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 256 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The kernel named `name` ("softmax"), for the location of a note. */
static Loc kernel_loc(Nv *nv, const char *name, size_t n)
{
	for (int i = 0; i < nv->m->nkernels; i++)
		if (strlen(nv->m->kernels[i]->name) == n && strncmp(nv->m->kernels[i]->name, name, n) == 0)
			return nv->m->kernels[i]->loc;
	/* An aligned variant: its kernel's. */
	for (int i = 0; nv->kinfo && i < nv->m->nkernels; i++) {
		const char *kn = nv->kinfo[nv->m->nkernels + i].name;
		if (kn && strlen(kn) == n && strncmp(kn, name, n) == 0)
			return nv->m->kernels[i]->loc;
	}
	return (Loc){0};
}

static long long number_before(const char *line, const char *what)
{
	const char *p = strstr(line, what);
	if (!p)
		return -1;
	while (p > line && p[-1] == ' ')
		p--;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoll(p, NULL, 10);
}

/* ptxas -v: "Function properties for K" / "N bytes stack frame, N bytes
 * spill stores, N bytes spill loads" / "Used N registers, ... N bytes
 * smem ..." per entry: one note per kernel. */
static void resource_notes(Nv *nv, const GpuTarget *t, const char *log)
{
	const char *name = NULL;
	size_t nlen = 0;
	long long stack = 0, sst = 0, sld = 0;
	for (const char *line = log; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *l = arena_strndup(nv->cc->arena, line, len);
		const char *fp = strstr(l, "Function properties for ");
		if (fp) {
			name = fp + strlen("Function properties for ");
			nlen = strlen(name);
		} else if (strstr(l, "bytes stack frame")) {
			stack = number_before(l, " bytes stack frame");
			sst = number_before(l, " bytes spill stores");
			sld = number_before(l, " bytes spill loads");
		} else if (strstr(l, "Used ") && strstr(l, " registers") && name) {
			long long regs = number_before(l, " registers");
			long long smem = number_before(l, " bytes smem");
			uint32_t dyn = 0;
			/* Every entry: the kernels, then their aligned variants. */
			for (int i = 0; nv->kinfo && i < 2 * nv->m->nkernels; i++) {
				const char *kn = nv->kinfo[i].name;
				if (kn && strlen(kn) == nlen && strncmp(kn, name, nlen) == 0)
					dyn = nv->kinfo[i].dynamic_smem;
			}
			note_at(nv->cc, kernel_loc(nv, name, nlen),
			        "kernel '%.*s' on %s: %lld registers, %lld bytes shared memory%s, %lld bytes stack, "
			        "%lld bytes spill stores, %lld bytes spill loads", (int)nlen, name, t->name, regs,
			        (smem < 0 ? 0 : smem) + (long long)dyn, dyn ? " (dynamic)" : "", stack, sst, sld);
			name = NULL;
			stack = sst = sld = 0;
		}
		line = end ? end + 1 : NULL;
	}
}

/* ptxas exited with status rc (run_capture): the user's toolchain refused pkc's PTX.
 * Most often the ptxas is older than the PTX ISA pkc writes (".version
 * 8.0" needs CUDA 12.0); else the PTX is wrong, which is pkc's bug, but the
 * tool is the user's choice, so this is an error (exit 1) that names it
 * and shows what it said, not an internal error. */
static void ptxas_failed(Compiler *cc, const char *ptxas, const GpuTarget *t, const char *ptx, int rc,
                         const char *log)
{
	Loc none = {0};
	const char *why = rc >= 256 ? "was killed by signal" : "failed with exit status";
	error_at(cc, none, "'%s' %s %d assembling the PTX for %s", ptxas, why, rc >= 256 ? rc - 256 : rc, t->name);
	int lines = 0;
	for (const char *l = log ? log : ""; *l && lines < 10;) {
		const char *end = strchr(l, '\n');
		int len = end ? (int)(end - l) : (int)strlen(l);
		if (len > 0) {
			note_at(cc, none, "ptxas: %.*s", len, l);
			lines++;
		}
		l += len + (end != NULL);
	}
	/* The PTX is NUL-terminated (compile_target). */
	char isa[16] = "?";
	const char *v = strstr(ptx, ".version ");
	if (v)
		sscanf(v + strlen(".version "), "%15s", isa);
	if (log && strstr(log, "Unsupported .version"))
		note_at(cc, none, "this ptxas is too old for the PTX ISA %s that pkc writes: give a newer one with "
		        "--ptxas=PATH (CUDA 12.0 or later), or --ptxas=none to embed PTX only", isa);
	else
		note_at(cc, none, "with a working ptxas of CUDA 12.0 or later this is a bug in pkc: please report it");
}

bool nv_ptxas_compile(Nv *nv, const GpuTarget *t, const char *ptx, size_t n, char **cubin, size_t *size,
                      bool required)
{
	Compiler *cc = nv->cc;
	Loc none = {0};
	const char *ptxas = nv_find_ptxas(cc, nv->opt->ptxas);
	if (!ptxas) {
		if (nv->opt->ptxas && strcmp(nv->opt->ptxas, "none") == 0)
			error_at(cc, none, "--emit=cubin needs ptxas (--ptxas=none)");
		else if (nv->opt->ptxas)
			error_at(cc, none, "--ptxas=%s: not an executable file", nv->opt->ptxas);
		else if (required)
			error_at(cc, none, "ptxas not found (on PATH or in %s/bin; give it with --ptxas=PATH)", DEFAULT_CUDA);
		return false;
	}
	int ifd, ofd;
	char *in = temp_file(".ptx", &ifd);
	if (!in) {
		error_at(cc, none, "cannot create a temporary file for ptxas: %s", strerror(errno));
		return false;
	}
	char *out = temp_file(".cubin", &ofd);
	if (!out) {
		error_at(cc, none, "cannot create a temporary file for ptxas: %s", strerror(errno));
		close(ifd);
		unlink(in);
		free(in);
		return false;
	}
	close(ofd);
	bool ok = write_all(ifd, ptx, n);
	ok = close(ifd) == 0 && ok;
	if (!ok) {
		error_at(cc, none, "cannot write the temporary file '%s': %s", in, strerror(errno));
		unlink(in);
		unlink(out);
		free(in);
		free(out);
		return false;
	}
	int o = cg_opt_level(nv->opt->opt_level);
	char *arch = arena_printf(cc->arena, "-arch=%s", t->name);
	char *olev = arena_printf(cc->arena, "-O%d", o);
	char *argv[10];
	int a = 0;
	argv[a++] = (char *)ptxas;
	argv[a++] = arch;
	argv[a++] = olev;
	if (nv->opt->resource_usage)
		argv[a++] = "-v";
	argv[a++] = "-o";
	argv[a++] = out;
	argv[a++] = in;
	argv[a] = NULL;
	char *log = NULL;
	int rc = run_capture(argv, &log);
	unlink(in);
	free(in);
	if (rc != 0) {
		unlink(out);
		free(out);
		if (rc < 0)
			error_at(cc, none, "cannot run '%s'", ptxas);
		else
			ptxas_failed(cc, ptxas, t, ptx, rc, log);
		free(log);
		return false;
	}
	if (nv->opt->resource_usage && log)
		resource_notes(nv, t, log);
	free(log);
	*cubin = read_file(out, size);
	unlink(out);
	free(out);
	if (!*cubin) {
		error_at(cc, none, "cannot read the cubin '%s' wrote for %s", ptxas, t->name);
		return false;
	}
	/* A ptxas that exits 0 without assembling anything (or a stand-in
	 * such as /bin/true) must not give an object without code. */
	if (*size < 4 || memcmp(*cubin, "\177ELF", 4) != 0) {
		error_at(cc, none, "'%s' wrote %s for %s, not a cubin (an ELF file): is it ptxas?", ptxas,
		         *size ? "a file" : "an empty file", t->name);
		free(*cubin);
		*cubin = NULL;
		return false;
	}
	return true;
}
