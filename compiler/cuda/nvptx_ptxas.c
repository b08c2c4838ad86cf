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
#include <signal.h>
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

/* The kernel named `name` ("softmax"), for the location of a note. */
static Loc kernel_loc(Nv *nv, const char *name, size_t n)
{
	for (int i = 0; i < nv->m->nkernels; i++)
		if (strlen(nv->m->kernels[i]->name) == n && strncmp(nv->m->kernels[i]->name, name, n) == 0)
			return nv->m->kernels[i]->loc;
	/* A variant (aligned, few trips): its kernel's. */
	for (int j = nv->m->nkernels; nv->kinfo && j < NV_ENTRY_SLOTS * nv->m->nkernels; j++) {
		const char *kn = nv->kinfo[j].name;
		if (kn && strlen(kn) == n && strncmp(kn, name, n) == 0)
			return nv->m->kernels[j % nv->m->nkernels]->loc;
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
			/* Every entry: the kernels, then their variants. */
			for (int i = 0; nv->kinfo && i < NV_ENTRY_SLOTS * nv->m->nkernels; i++) {
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
static void ptxas_failed(Compiler *cc, const char *ptxas, const GpuTarget *t, const char *isa, int rc,
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
	if (log && strstr(log, "Unsupported .version"))
		note_at(cc, none, "this ptxas is too old for the PTX ISA %s that pkc writes: give a newer one with "
		        "--ptxas=PATH (CUDA 12.0 or later), or --ptxas=none to embed PTX only", isa);
	else
		note_at(cc, none, "with a working ptxas of CUDA 12.0 or later this is a bug in pkc: please report it");
}

/* A ptxas run under way: its child and its temporary files (the PTX it
 * reads, the cubin and the log it writes), removed when it is finished or
 * abandoned, and by the exit handler if pkc exits first (an internal error). */
struct PtxasRun {
	const GpuTarget *t;
	const char *ptxas;
	char *in, *out, *log; /* malloc'd paths */
	pid_t pid;            /* 0: not started */
	char isa[16];         /* the PTX's .version, for a failure's note */
	char arch[24], olev[8];
	bool verbose;
	int split;            /* its kernels, for -split-compile; 0: leave it out */
	double start;         /* for -ftime-report */
	PtxasRun *next;       /* the live runs */
};

static PtxasRun *live_runs;

static void run_remove_files(PtxasRun *r)
{
	char *paths[3] = {r->in, r->out, r->log};
	for (int i = 0; i < 3; i++)
		if (paths[i]) {
			unlink(paths[i]);
			free(paths[i]);
		}
	r->in = r->out = r->log = NULL;
}

/* Ends run r: reaps (kill: first kills) its child, removes its files, frees it. */
static int run_end(PtxasRun *r, bool kill_child)
{
	int status = -1;
	if (r->pid > 0) {
		if (kill_child)
			kill(r->pid, SIGKILL);
		while (waitpid(r->pid, &status, 0) < 0)
			if (errno != EINTR) {
				status = -1;
				break;
			}
	}
	for (PtxasRun **p = &live_runs; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	run_remove_files(r);
	free(r);
	return status;
}

static void end_live_runs(void)
{
	while (live_runs)
		run_end(live_runs, true);
}

/* How many kernels (.entry) the PTX holds. */
static int ptx_entries(const char *ptx)
{
	int n = 0;
	for (const char *p = ptx; (p = strstr(p, ".entry ")) != NULL; p++)
		n++;
	return n;
}

/* Starts r's ptxas, its output and messages to the file at r->log (lfd,
 * closed here; -1: opened again, emptied).  With several kernels it asks
 * ptxas for -split-compile: ptxas then assembles them in threads; the
 * cubin's code is the same byte for byte, only the command line that ptxas
 * records in its .note.nv.tkinfo says so (flash_attention's two kernels:
 * ptxas alone took 263 ms, now 162 on two idle CPUs). */
static bool run_spawn(PtxasRun *r, int lfd)
{
	if (lfd < 0 && (lfd = open(r->log, O_WRONLY | O_TRUNC)) < 0)
		return false;
	char split[16];
	snprintf(split, sizeof split, "%d", r->split);
	char *argv[12];
	int a = 0;
	argv[a++] = (char *)r->ptxas;
	argv[a++] = r->arch;
	argv[a++] = r->olev;
	if (r->verbose)
		argv[a++] = "-v";
	if (r->split) {
		argv[a++] = "-split-compile";
		argv[a++] = split;
	}
	argv[a++] = "-o";
	argv[a++] = r->out;
	argv[a++] = r->in;
	argv[a] = NULL;
	/* Its output goes to a file, not a pipe: a child that says much never
	 * waits for pkc to read it. */
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, lfd, 1);
	posix_spawn_file_actions_adddup2(&fa, lfd, 2);
	posix_spawn_file_actions_addclose(&fa, lfd);
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(lfd);
	if (rc != 0)
		return false;
	r->pid = pid;
	return true;
}

void nv_ptxas_prepare(void)
{
	static bool handler;
	if (!handler)
		handler = atexit(end_live_runs) == 0;
}

PtxasRun *nv_ptxas_start(Compiler *cc, const char *ptxas, const GpuTarget *t, int opt_level, bool verbose,
                         const char *ptx, size_t n)
{
	nv_ptxas_prepare();
	Loc none = {0};
	PtxasRun *r = xmalloc(sizeof *r);
	memset(r, 0, sizeof *r);
	r->t = t;
	r->ptxas = ptxas;
	r->next = live_runs;
	live_runs = r;
	snprintf(r->isa, sizeof r->isa, "?");
	const char *v = strstr(ptx, ".version "); /* the PTX is NUL-terminated (compile_target) */
	if (v)
		sscanf(v + strlen(".version "), "%15s", r->isa);
	int ifd = -1, ofd = -1, lfd = -1;
	r->in = temp_file(".ptx", &ifd);
	r->out = r->in ? temp_file(".cubin", &ofd) : NULL;
	r->log = r->out ? temp_file(".log", &lfd) : NULL;
	if (!r->log) {
		error_at(cc, none, "cannot create a temporary file for ptxas: %s", strerror(errno));
		goto fail;
	}
	close(ofd);
	ofd = -1;
	bool ok = write_all(ifd, ptx, n);
	ok = close(ifd) == 0 && ok;
	ifd = -1;
	if (!ok) {
		error_at(cc, none, "cannot write the temporary file '%s': %s", r->in, strerror(errno));
		goto fail;
	}
	snprintf(r->arch, sizeof r->arch, "-arch=%s", t->name);
	snprintf(r->olev, sizeof r->olev, "-O%d", opt_level);
	r->verbose = verbose;
	int kernels = ptx_entries(ptx);
	r->split = kernels > 1 ? kernels : 0;
	r->start = time_ms();
	bool started = run_spawn(r, lfd);
	lfd = -1;
	if (!started) {
		error_at(cc, none, "cannot run '%s'", ptxas);
		goto fail;
	}
	return r;
fail:
	if (ifd >= 0)
		close(ifd);
	if (ofd >= 0)
		close(ofd);
	if (lfd >= 0)
		close(lfd);
	run_end(r, false);
	return NULL;
}

void nv_ptxas_abandon(PtxasRun *r)
{
	if (r)
		run_end(r, true);
}

bool nv_ptxas_finish(Compiler *cc, PtxasRun *r, char **cubin, size_t *size, char **log)
{
	Loc none = {0};
	const GpuTarget *t = r->t;
	const char *ptxas = r->ptxas;
	char isa[sizeof r->isa];
	memcpy(isa, r->isa, sizeof isa);
	*cubin = NULL;
	int rc;
	for (;;) {
		*log = NULL;
		int status;
		while (waitpid(r->pid, &status, 0) < 0)
			if (errno != EINTR) {
				status = -1;
				break;
			}
		r->pid = 0;
		size_t lsize;
		*log = read_file(r->log, &lsize);
		if (*log) { /* text: NUL-terminated */
			*log = xrealloc(*log, lsize + 1);
			(*log)[lsize] = '\0';
		}
		rc = status == -1 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status)
		     : 256 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		/* A ptxas that does not know -split-compile: once more without it. */
		if (rc <= 0 || !r->split || !*log || !strstr(*log, "split-compile"))
			break;
		free(*log);
		r->split = 0;
		if (!run_spawn(r, -1)) {
			*log = NULL;
			rc = -1;
			break;
		}
	}
	time_note(cc, r->start, "%s: ptxas", t->name);
	if (rc == 0)
		*cubin = read_file(r->out, size);
	run_end(r, false);
	if (rc != 0) {
		if (rc < 0)
			error_at(cc, none, "cannot run '%s'", ptxas);
		else
			ptxas_failed(cc, ptxas, t, isa, rc, *log);
		return false;
	}
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

int nv_ptxas_release(Nv *nv)
{
	if (nv->ptxas_release >= 0)
		return nv->ptxas_release;
	nv->ptxas_release = 0;
	const char *ptxas = nv_find_ptxas(nv->cc, nv->opt->ptxas);
	int fd[2];
	if (!ptxas || pipe(fd) != 0)
		return 0;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	char *argv[] = {(char *)ptxas, "--version", NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, ptxas, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	/* Read to the end, keeping what fits, so that it never waits on a
	 * full pipe. */
	char buf[1024], sink[256];
	size_t n = 0;
	for (ssize_t r = 1; rc == 0 && r != 0;) {
		bool room = n < sizeof buf - 1;
		r = read(fd[0], room ? buf + n : sink, room ? sizeof buf - 1 - n : sizeof sink);
		if (r < 0 && errno != EINTR)
			break;
		if (r > 0 && room)
			n += (size_t)r;
	}
	close(fd[0]);
	int status;
	while (rc == 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[n] = '\0';
	const char *p = strstr(buf, "release ");
	int major, minor;
	if (p && sscanf(p + 8, "%d.%d", &major, &minor) == 2 && major > 0 && major < 1000 && minor >= 0 && minor < 100)
		nv->ptxas_release = major * 100 + minor;
	return nv->ptxas_release;
}

/* ptxas itself: PATH, or --ptxas=; the error when there is none. */
const char *nv_ptxas_path(Nv *nv, bool required)
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
	}
	return ptxas;
}

bool nv_ptxas_compile(Nv *nv, const GpuTarget *t, const char *ptx, size_t n, char **cubin, size_t *size,
                      bool required)
{
	const char *ptxas = nv_ptxas_path(nv, required);
	PtxasRun *r = ptxas ? nv_ptxas_start(nv->cc, ptxas, t, cg_opt_level(nv->opt->opt_level),
	                                     nv->opt->resource_usage, ptx, n) : NULL;
	if (!r)
		return false;
	char *log;
	bool ok = nv_ptxas_finish(nv->cc, r, cubin, size, &log);
	if (ok && nv->opt->resource_usage && log)
		resource_notes(nv, t, log);
	free(log);
	return ok;
}
