/* main.c - the pkc driver: command line, the pipeline of passes, output
 * files and depfiles.  Conventions follow gcc/clang:
 *
 *   pkc file.pk [-o out] [--target=host,sm_90a|mosaic-tpu] [--emit=KIND] [-fsyntax-only] ...
 *
 * Exit status: 0 compiled, 1 error in the input, 2 bad command line,
 * 70 internal error.  Outputs are written to a temporary file next to the
 * final one and renamed into place on success; on failure neither the
 * temporary file nor any earlier output of the same name is left behind,
 * so a build system never sees a half-written or stale output. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "pkc.h"
#include "front.h"
#include "ir.h"
#include "passes.h"
#include "codegen.h"
#include "codegen_mosaic.h"
#include "gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the compilation job ----------------------------------------------- */

typedef struct EmitKind EmitKind;

/* What --target= selects: the back end, hence the passes after sema and
 * the output kinds.  Adding a target is adding a row to `targets` (and
 * its bit to the passes and emit kinds it uses). */
typedef enum TargetBit {
	TGT_HOST = 1u << 0,       /* x86-64 object code and a C launch function (the default) */
	TGT_MOSAIC_TPU = 1u << 1, /* a Mosaic TPU kernel (MLIR) as JAX Pallas builds it */
	TGT_CUDA = 1u << 2,       /* GPU targets sm_80...: cubins in the host object (GPU-DESIGN.md) */
	TGT_ALL = ~0u             /* the front end: every target */
} TargetBit;

typedef struct Target {
	const char *name;  /* --target=NAME */
	TargetBit bit;     /* its bit in Pass.targets and EmitKind.targets */
	const char *emit;  /* the default --emit */
} Target;

static const Target targets[] = {
	{"host", TGT_HOST, "obj"},
	{"mosaic-tpu", TGT_MOSAIC_TPU, "mlir"},
};
enum { NTARGETS = sizeof targets / sizeof targets[0] };
/* --target= with GPU targets only (sm_80...): the object has launch
 * functions but no host variant. */
static const Target cuda_target = {"cuda", TGT_CUDA, "obj"};

/* The options of this run and what the pipeline has built so far. */
typedef struct Job {
	Compiler *cc;           /* the compilation context */
	const char *input;      /* input path ("-" = stdin) */
	const char *output;     /* output path ("-" = stdout); NULL with -fsyntax-only */
	const EmitKind *emit;   /* what to write (--emit, else the target's default) */
	const Target *target;   /* --target= (the host row when the list has host) */
	unsigned tbits;         /* TargetBits of every target in the --target= list */
	const GpuTarget **gpu_targets; /* the GPU targets of --target=, in order */
	int ngpu;
	const char *ptxas;      /* --ptxas=PATH */
	bool resource_usage;    /* --resource-usage */
	GpuEmit gpu_emit;       /* what nvptx produces, from --emit */
	GpuOutput gpu;          /* after nvptx: the GPU images (or --emit=ptx/cubin/nvvm text) */
	bool syntax_only;       /* -fsyntax-only: check, write nothing but a depfile */
	bool depfile;           /* -MD (or -MF): write a depfile */
	const char *depfile_path; /* -MF, or derived from the output */
	Vec dep_targets;        /* const char*, from -MT (empty: the output) */
	bool *dump_after;       /* per pass: --dump-after=PASS given */
	int color;              /* -1 auto, 0 -fno-color-diagnostics, 1 -fcolor-diagnostics */
	Source *src;            /* the main source file */
	AstFile *ast;           /* after parse */
	IrModule *ir;           /* after sema; rewritten by later passes */
	bool sema_done;         /* sema ran (so -D names have been matched) */
	CodegenOptions cg;      /* -O, -march=; the output kind follows --emit */
	MosaicEmit mosaic;      /* --target=mosaic-tpu: the output kind, from --emit */
	const char *header_path; /* -H, or derived from the output (obj only); NULL: no header */
	CodegenOutput code;     /* after llvm-host: the object, assembly or LLVM IR; after mosaic-tpu: the MLIR */
} Job;

/* ---- passes ------------------------------------------------------------ */

/* One step of the pipeline: a front-end step that builds the job's AST or
 * IR (run), or an IR-to-IR pass over the module (ir, the passes.h
 * signature).  A pass returns false when it reported errors; whenever an
 * IR module exists afterwards, the driver verifies it (ir_verify names the
 * pass in the failure) and dumps it if --dump-after asked. */
typedef struct Pass {
	const char *name;                        /* for --dump-after=NAME */
	const char *help;                        /* one line for --dump-after=help */
	bool (*run)(Job *j);                     /* front-end step, or NULL */
	bool (*ir)(Compiler *cc, IrModule *m);   /* IR pass, or NULL */
	unsigned targets;                        /* TargetBits of the pipelines it is part of */
} Pass;

static bool pass_parse(Job *j)
{
	j->ast = parse_file(j->cc, j->src);
	return j->ast != NULL;
}

static bool pass_sema(Job *j)
{
	j->ir = sema_file(j->cc, j->ast);
	j->sema_done = true;
	return j->ir != NULL;
}

/* The host back end: tiled IR -> LLVM -> object code (or assembly, or
 * LLVM IR: j->cg.emit, set from --emit), kept in memory until the output
 * is written. */
static bool pass_llvm_host(Job *j)
{
	return codegen_host(j->cc, j->ir, &j->cg, &j->code);
}

/* The CUDA back end (gpu.h): the IR after lower-refs -> PTX per GPU
 * target -> cubins (ptxas), kept for llvm-host to embed, or the PTX/cubin
 * /NVVM text itself with --emit=ptx/cubin/nvvm. */
static bool pass_nvptx(Job *j)
{
	GpuOptions o = {j->gpu_targets, j->ngpu, j->cg.opt_level, j->ptxas, j->resource_usage, j->gpu_emit};
	return codegen_nvptx(j->cc, j->ir, &o, &j->gpu);
}

/* The host object: with GPU targets, their images and a CUDA path in each
 * launch function; without host, no host variant. */
static bool pass_llvm_host_fat(Job *j)
{
	j->cg.gpu = j->tbits & TGT_CUDA ? &j->gpu : NULL;
	j->cg.no_host_variant = !(j->tbits & TGT_HOST);
	return pass_llvm_host(j);
}

/* The Mosaic TPU back end: the IR after sema -> an MLIR module, kept in
 * memory (text, bytecode or the custom-call JSON, as --emit says).
 *
 * The back end lives in a plugin, lib/pkc/libpkc_mosaic.so, so that pkc
 * itself does not load libMLIR (about 13 ms of start-up on every run).  It
 * is dlopened on first use: from $PKC_MOSAIC_PLUGIN if set, else from
 * <dir of /proc/self/exe>/../lib/pkc/ (build/bin -> build/lib/pkc in the
 * tree, PREFIX/bin -> PREFIX/lib/pkc installed).  pkc is linked with
 * -rdynamic: the plugin calls back into the driver's objects. */
typedef bool (*CodegenMosaicFn)(Compiler *, IrModule *, MosaicEmit, CodegenOutput *);

static CodegenMosaicFn load_mosaic_plugin(Compiler *cc)
{
	static CodegenMosaicFn fn;
	if (fn)
		return fn;
	char path[PATH_MAX + 64];
	const char *env = getenv("PKC_MOSAIC_PLUGIN");
	if (env && *env) {
		snprintf(path, sizeof path, "%s", env);
	} else {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n < 0)
			n = 0;
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(exe, sizeof exe, ".");
		snprintf(path, sizeof path, "%s/../lib/pkc/libpkc_mosaic.so", exe);
	}
	Loc none = {0};
	/* RTLD_LAZY: binding the plugin's thousands of calls into libMLIR up
	 * front (RTLD_NOW) costs ~12 ms per mosaic-tpu run. */
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		error_at(cc, none, "--target=mosaic-tpu needs the Mosaic plugin: %s", dlerror());
		return NULL;
	}
	void *sym = dlsym(h, "codegen_mosaic");
	if (!sym) {
		error_at(cc, none, "--target=mosaic-tpu needs the Mosaic plugin: %s", dlerror());
		dlclose(h);
		return NULL;
	}
	/* POSIX: a data pointer from dlsym converts to a function pointer. */
	memcpy(&fn, &sym, sizeof fn);
	return fn;
}

/* The stub for codegen_mosaic (codegen_mosaic.h): the plugin's, once loaded. */
static bool pass_mosaic_tpu(Job *j)
{
	CodegenMosaicFn fn = load_mosaic_plugin(j->cc);
	if (!fn)
		return false;
	return fn(j->cc, j->ir, j->mosaic, &j->code);
}

/* The pipelines, in order: a pass runs when it belongs to the target's.
 * Adding a pass is adding a row, e.g.
 *	{"lower-refs", "...", NULL, pass_lower_refs, TGT_HOST}, */
static const Pass passes[] = {
	{"parse", "parse the source and its includes into an AST", pass_parse, NULL, TGT_ALL},
	{"sema", "check types and shapes, build the typed IR", pass_sema, NULL, TGT_ALL},
	{"lower-refs", "address whole arrays: inline index maps, masked edge blocks, scratch allocs", NULL, pass_lower_refs,
	 TGT_HOST | TGT_CUDA},
	{"nvptx", "compile the IR for the GPU targets (PTX with LLVM, cubins with ptxas)", pass_nvptx, NULL, TGT_CUDA},
	{"tile-host", "tensors to loop nests of scalar code over local buffers (with fusion)", NULL, pass_tile_host,
	 TGT_HOST | TGT_CUDA},
	{"llvm-host", "compile the tiled IR with LLVM (object, assembly or LLVM IR)", pass_llvm_host_fat, NULL,
	 TGT_HOST | TGT_CUDA},
	{"mosaic-tpu", "build the Mosaic TPU kernel (MLIR) from the IR after sema", pass_mosaic_tpu, NULL,
	 TGT_MOSAIC_TPU},
};
enum { NPASSES = sizeof passes / sizeof passes[0] };

/* -fsyntax-only runs the front end: up to and including this pass. */
#define LAST_FRONTEND_PASS "sema"

static int pass_index(const char *name)
{
	for (int i = 0; i < NPASSES; i++)
		if (strcmp(passes[i].name, name) == 0)
			return i;
	return -1;
}

/* ---- emit kinds -------------------------------------------------------- */

static bool write_ast(Job *j, FILE *out)
{
	ast_print(out, j->ast);
	return true;
}

static bool write_ir(Job *j, FILE *out)
{
	ir_print_module(out, j->ir);
	return true;
}

static bool write_code(Job *j, FILE *out)
{
	return fwrite(j->code.data, 1, j->code.size, out) == j->code.size;
}

/* --emit=ptx/cubin/nvvm: the GPU back end's text (or cubin). */
static bool write_gpu(Job *j, FILE *out)
{
	return fwrite(j->gpu.text, 1, j->gpu.text_size, out) == j->gpu.text_size;
}

/* The C header declaring the launch functions (-H). */
static bool write_header(Job *j, FILE *out)
{
	CodegenOutput h = {0};
	if (!header_generate(j->cc, j->ir, j->header_path, &h))
		return false;
	bool ok = fwrite(h.data, 1, h.size, out) == h.size;
	codegen_output_free(&h);
	return ok;
}

/* One --emit=NAME.  Adding an output format is adding a row. */
struct EmitKind {
	const char *name;      /* --emit=NAME */
	const char *ext;       /* extension of the default output name */
	const char *last_pass; /* the pipeline runs through this pass (NULL: all) */
	bool (*write)(Job *j, FILE *out); /* writes the output; NULL: not implemented yet */
	const char *what;      /* for the "not implemented" error */
	unsigned targets;      /* TargetBits it is available for */
};

static const EmitKind emit_kinds[] = {
	{"obj", "o", NULL, write_code, "object code generation", TGT_HOST | TGT_CUDA}, /* the host default (and a header) */
	{"llvm", "ll", NULL, write_code, "LLVM IR", TGT_HOST | TGT_CUDA},
	{"asm", "s", NULL, write_code, "assembly", TGT_HOST | TGT_CUDA},
	{"ptx", "ptx", "nvptx", write_gpu, "PTX", TGT_CUDA},
	{"cubin", "cubin", "nvptx", write_gpu, "cubin", TGT_CUDA},
	{"nvvm", "nvvm.ll", "nvptx", write_gpu, "NVVM IR", TGT_CUDA},
	{"mlir", "mlir", NULL, write_code, "MLIR text", TGT_MOSAIC_TPU}, /* the mosaic-tpu default */
	{"mlirbc", "mlirbc", NULL, write_code, "MLIR bytecode", TGT_MOSAIC_TPU},
	{"tpu-custom-call", "json", NULL, write_code, "tpu_custom_call JSON", TGT_MOSAIC_TPU},
	{"ast", "ast", "parse", write_ast, "AST dump", TGT_ALL},
	{"ir", "ir", "sema", write_ir, "IR dump", TGT_ALL}, /* the stable IR form: after sema */
};
enum { NEMIT = sizeof emit_kinds / sizeof emit_kinds[0] };

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

/* Stops tracking a path (it was renamed into place). */
static void cleanup_forget(const char *path)
{
	for (int i = 0; i < ncleanup; i++)
		if (cleanup_paths[i] && strcmp(cleanup_paths[i], path) == 0) {
			free(cleanup_paths[i]);
			cleanup_paths[i] = NULL;
		}
}

static void cleanup_run(void)
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

/* Registers an earlier output at `path` for removal on failure, as gcc
 * does, unless it is not a regular file (-o /dev/null must survive). */
static void remove_on_failure(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return;
	cleanup_add(path);
}

/* ---- writing outputs --------------------------------------------------- */

/* Content producer for write_output. */
typedef bool (*Writer)(Job *j, FILE *out);

static bool close_checked(Job *j, FILE *f, const char *path)
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
		error_at(j->cc, none, "cannot write '%s': %s", path, strerror(err));
	}
	return ok;
}

/* Writes one output file: "-" is stdout; a regular path is written to a
 * temporary file in the same directory, then renamed over `path`; a path
 * that exists and is not a regular file (/dev/null, a fifo) is written
 * directly. */
static bool write_output(Job *j, const char *path, Writer w)
{
	Loc none = {0};
	if (strcmp(path, "-") == 0) {
		bool ok = w(j, stdout);
		return close_checked(j, stdout, "<stdout>") && ok;
	}
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		FILE *f = fopen(path, "wb");
		if (!f) {
			error_at(j->cc, none, "cannot open '%s' for writing: %s", path, strerror(errno));
			return false;
		}
		bool ok = w(j, f);
		return close_checked(j, f, path) && ok;
	}

	/* .<name>.tmpXXXXXX next to the output, so rename stays within one
	 * file system and is atomic. */
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dirlen;
	char *tmp = arena_printf(j->cc->arena, "%.*s.%s.tmpXXXXXX", (int)dirlen, path, base);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		error_at(j->cc, none, "cannot open '%s' for writing: %s", path, strerror(errno));
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
		error_at(j->cc, none, "cannot open '%s' for writing: %s", path, strerror(e));
		return false;
	}
	bool ok = w(j, f);
	ok = close_checked(j, f, path) && ok;
	if (!ok)
		return false; /* the temporary file goes at exit */
	if (rename(tmp, path) != 0) {
		error_at(j->cc, none, "cannot write '%s': %s", path, strerror(errno));
		return false;
	}
	cleanup_forget(tmp);
	return true;
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

/* The file name with its extension (if any) replaced by `ext`, in the
 * directory part of `path` if keep_dir, else in the current directory. */
static char *replace_ext(Arena *a, const char *path, const char *ext, bool keep_dir)
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

/* The output name gcc -c would pick: the input's basename with the
 * extension replaced, in the current directory. */
static char *default_output(Job *j, const char *ext)
{
	const char *in = strcmp(j->input, "-") == 0 ? "stdin" : j->input;
	return replace_ext(j->cc->arena, in, ext, false);
}

static bool write_depfile_body(Job *j, FILE *out)
{
	Compiler *cc = j->cc;
	if (j->dep_targets.len > 0) {
		/* -MT targets are used verbatim, as gcc does. */
		for (int i = 0; i < j->dep_targets.len; i++)
			fprintf(out, "%s%s", i ? " " : "", (const char *)j->dep_targets.items[i]);
	} else {
		const char *target = j->output && strcmp(j->output, "-") != 0
		                     ? j->output : default_output(j, j->emit->ext);
		put_make_path(out, target);
	}
	fputc(':', out);
	/* Every file read, once each, in order; stdin is not a file. */
	int n = 0;
	for (int i = 0; i < cc->sources.len; i++) {
		const Source *s = cc->sources.items[i];
		bool seen = strcmp(s->path, "<stdin>") == 0;
		for (int k = 0; k < i && !seen; k++)
			seen = ((const Source *)cc->sources.items[k])->path == s->path;
		if (seen)
			continue;
		fputs(n++ ? " \\\n  " : " ", out);
		put_make_path(out, s->path);
	}
	fputc('\n', out);
	return true;
}

/* ---- command line ------------------------------------------------------ */

static void print_help(void)
{
	fputs(
	"usage: pkc [options] file.pk\n"
	"\n"
	"Compiles a .pk kernel file (\"-\" reads standard input).\n"
	"\n"
	"options:\n"
	"  -o FILE                      write the output to FILE (\"-\": standard output)\n"
	"  --target=TARGET              host (default: x86-64 object code) or mosaic-tpu (a Mosaic TPU\n"
	"                               kernel as JAX Pallas builds it; sizes must be given with -D);\n"
	"                               or a comma list of host and GPU targets sm_80, sm_86, sm_89,\n"
	"                               sm_90, sm_90a: one object with every variant (host,sm_90a)\n"
	"  --emit=KIND                  what to write: for host obj (default), llvm, asm; for mosaic-tpu\n"
	"                               mlir (default), mlirbc, tpu-custom-call (JSON); for one GPU\n"
	"                               target ptx, cubin, nvvm (its NVVM IR); for any: ast, ir\n"
	"  --ptxas=PATH                 the CUDA assembler (default: ptxas on PATH, then\n"
	"                               /usr/local/cuda/bin/ptxas; without one, or with --ptxas=none,\n"
	"                               the object embeds PTX only)\n"
	"  --resource-usage             report registers, shared memory and spills per GPU kernel\n"
	"  -H FILE                      write the C header declaring the kernels to FILE\n"
	"                               (default with --emit=obj: the object's name with .h)\n"
	"  -O0, -O1, -O2, -O3           optimisation level of the generated code (default -O3)\n"
	"  -march=CPU                   generate code for CPU (default x86-64; native: this machine)\n"
	"  -fsyntax-only                check the input (parse and sema), write nothing\n"
	"  -ftime-report                print the wall time of each phase to stderr\n"
	"  -D NAME=VALUE, -DNAME=VALUE  override const NAME with VALUE (-D NAME means 1); with\n"
	"                               --target=mosaic-tpu also the value of size symbol NAME\n"
	"  -I DIR, -IDIR                search DIR for include files\n"
	"  -MD                          also write a make depfile (default: output with .d)\n"
	"  -MF FILE                     write the depfile to FILE (implies -MD)\n"
	"  -MT TARGET                   the depfile's target (default: the output file)\n"
	"  -Werror                      make warnings errors\n"
	"  -ferror-limit=N              stop after N errors (default 20, 0: no limit)\n"
	"  --diagnostics-format=FMT     text (default) or json (one object per line)\n"
	"  -fcolor-diagnostics          colour diagnostics\n"
	"  -fno-color-diagnostics       do not colour diagnostics (default when stderr is not a terminal)\n"
	"  --dump-after=PASS            print the IR (or AST) after PASS to stdout (stderr with -o -);\n"
	"                               --dump-after=help lists passes, --dump-after=all dumps after each\n"
	"  --version                    print the version and exit\n"
	"  --help                       print this help and exit\n",
	stdout);
}

static void print_version(void)
{
	printf("pkc version %s\n", PKC_VERSION);
}

static void print_passes(void)
{
	for (int i = 0; i < NPASSES; i++)
		printf("%-12s %s\n", passes[i].name, passes[i].help);
}

static bool is_identifier(const char *s, size_t n)
{
	if (n == 0 || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* -D NAME[=VALUE]; a later -D of the same name wins. */
static bool add_define(Compiler *cc, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	Loc none = {0};
	if (!is_identifier(arg, n)) {
		error_at(cc, none, "invalid name '%.*s' in -D (expected an identifier)", (int)n, arg);
		return false;
	}
	const char *name = intern(cc->strings, arg, n);
	const char *value = eq ? arena_strndup(cc->arena, eq + 1, strlen(eq + 1)) : "1";
	for (int i = 0; i < cc->defines.len; i++) {
		Define *d = cc->defines.items[i];
		if (d->name == name) {
			d->value = value;
			return true;
		}
	}
	Define *d = arena_alloc(cc->arena, sizeof *d);
	d->name = name;
	d->value = value;
	vec_push(cc->arena, &cc->defines, d);
	return true;
}

/* Returns the value of an option that takes one: "-oFILE" (joined) or
 * "-o FILE" (next argument).  NULL (with an error) if it is missing. */
static const char *option_value(Compiler *cc, int argc, char **argv, int *i, const char *opt)
{
	size_t n = strlen(opt);
	if (argv[*i][n] != '\0')
		return argv[*i] + n;
	if (*i + 1 >= argc) {
		Loc none = {0};
		error_at(cc, none, "argument to '%s' is missing (expected 1 value)", opt);
		return NULL;
	}
	return argv[++*i];
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Outcome of parse_args besides "go on and compile". */
enum { ARGS_OK = -1 };

/* Parses argv into j and j->cc.  Returns ARGS_OK, or an exit status
 * (0 after --help/--version, EXIT_USAGE after an error). */
static int parse_args(Job *j, int argc, char **argv)
{
	Compiler *cc = j->cc;
	Loc none = {0};
	bool only_inputs = false; /* after "--" */
	const char *emit_arg = NULL; /* the last --emit= */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v;
		if (only_inputs || a[0] != '-' || strcmp(a, "-") == 0) {
			if (j->input) {
				error_at(cc, none, "more than one input file ('%s', '%s'); pkc compiles one file at a time",
				         j->input, a);
				return EXIT_USAGE;
			}
			j->input = a;
		} else if (strcmp(a, "--") == 0) {
			only_inputs = true;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-help") == 0) {
			print_help();
			return EXIT_OK;
		} else if (strcmp(a, "--version") == 0) {
			print_version();
			return EXIT_OK;
		} else if (starts_with(a, "-o")) {
			if (!(v = option_value(cc, argc, argv, &i, "-o")))
				return EXIT_USAGE;
			j->output = v;
		} else if (strcmp(a, "-O0") == 0 || strcmp(a, "-O1") == 0 || strcmp(a, "-O2") == 0 ||
		           strcmp(a, "-O3") == 0) {
			j->cg.opt_level = a[2] - '0';
		} else if (starts_with(a, "-march=")) {
			const char *cpu = a + strlen("-march=");
			if (!codegen_cpu_valid(cpu)) {
				error_at(cc, none, "unknown CPU '%s' in '%s' (expected an x86-64 processor such as x86-64, "
				         "x86-64-v3, skylake-avx512, znver4, or native)", cpu, a);
				return EXIT_USAGE;
			}
			j->cg.cpu = cpu;
		} else if (starts_with(a, "-H")) {
			if (!(v = option_value(cc, argc, argv, &i, "-H")))
				return EXIT_USAGE;
			j->header_path = v;
		} else if (strcmp(a, "-fsyntax-only") == 0) {
			j->syntax_only = true;
		} else if (strcmp(a, "-ftime-report") == 0) {
			cc->time_report = true;
		} else if (starts_with(a, "--emit=")) {
			emit_arg = a; /* checked once the target is known */
		} else if (starts_with(a, "--target=")) {
			/* A comma list: host and GPU targets combine; mosaic-tpu stands alone. */
			const char *t = a + strlen("--target=");
			j->target = NULL;
			j->tbits = 0;
			j->ngpu = 0;
			j->gpu_targets = arena_alloc(cc->arena, (strlen(t) + 1) * sizeof *j->gpu_targets);
			for (const char *p = t;;) {
				const char *comma = strchr(p, ',');
				size_t n = comma ? (size_t)(comma - p) : strlen(p);
				const char *item = arena_strndup(cc->arena, p, n);
				const Target *row = NULL;
				for (int e = 0; e < NTARGETS; e++)
					if (strcmp(targets[e].name, item) == 0)
						row = &targets[e];
				const GpuTarget *gt = row ? NULL : gpu_target_find(item);
				if (!row && !gt) {
					const char *list = "";
					for (int e = 0; e < NTARGETS; e++)
						list = arena_printf(cc->arena, "%s%s%s", list, e ? ", " : "", targets[e].name);
					error_at(cc, none, "invalid value '%s' in '%s' (expected one of: %s, %s)", item, a, list,
					         gpu_target_list());
					return EXIT_USAGE;
				}
				bool dup = row ? (j->tbits & row->bit) != 0 : false;
				for (int g = 0; gt && g < j->ngpu; g++)
					dup |= j->gpu_targets[g] == gt;
				if (dup) {
					error_at(cc, none, "target '%s' appears twice in '%s'", item, a);
					return EXIT_USAGE;
				}
				if (row) {
					j->tbits |= row->bit;
					j->target = row;
				} else {
					j->tbits |= TGT_CUDA;
					j->gpu_targets[j->ngpu++] = gt;
				}
				if (!comma)
					break;
				p = comma + 1;
			}
			if ((j->tbits & TGT_MOSAIC_TPU) && j->tbits != TGT_MOSAIC_TPU) {
				error_at(cc, none, "--target=mosaic-tpu cannot be combined with other targets in '%s'", a);
				return EXIT_USAGE;
			}
			if (!j->target)
				j->target = &cuda_target;
		} else if (starts_with(a, "--ptxas=")) {
			j->ptxas = a + strlen("--ptxas=");
		} else if (strcmp(a, "--resource-usage") == 0) {
			j->resource_usage = true;
		} else if (starts_with(a, "-D")) {
			if (!(v = option_value(cc, argc, argv, &i, "-D")) || !add_define(cc, v))
				return EXIT_USAGE;
		} else if (starts_with(a, "-I")) {
			if (!(v = option_value(cc, argc, argv, &i, "-I")))
				return EXIT_USAGE;
			vec_push(cc->arena, &cc->include_dirs, arena_strndup(cc->arena, v, strlen(v)));
		} else if (strcmp(a, "-MD") == 0) {
			j->depfile = true;
		} else if (starts_with(a, "-MF")) {
			if (!(v = option_value(cc, argc, argv, &i, "-MF")))
				return EXIT_USAGE;
			j->depfile = true;
			j->depfile_path = v;
		} else if (starts_with(a, "-MT")) {
			if (!(v = option_value(cc, argc, argv, &i, "-MT")))
				return EXIT_USAGE;
			vec_push(cc->arena, &j->dep_targets, (void *)v);
		} else if (strcmp(a, "-Werror") == 0) {
			cc->diag.werror = true;
		} else if (starts_with(a, "-ferror-limit=")) {
			const char *s = a + strlen("-ferror-limit=");
			char *end;
			errno = 0;
			long n = strtol(s, &end, 10);
			if (!*s || *end || errno || n < 0 || n > 1000000) {
				error_at(cc, none, "invalid value '%s' in '%s' (expected a non-negative integer)", s, a);
				return EXIT_USAGE;
			}
			cc->diag.error_limit = (int)n;
		} else if (starts_with(a, "--diagnostics-format=")) {
			const char *f = a + strlen("--diagnostics-format=");
			if (strcmp(f, "text") == 0)
				cc->diag.format = DIAG_TEXT;
			else if (strcmp(f, "json") == 0)
				cc->diag.format = DIAG_JSON;
			else {
				error_at(cc, none, "invalid value '%s' in '%s' (expected text or json)", f, a);
				return EXIT_USAGE;
			}
		} else if (strcmp(a, "-fcolor-diagnostics") == 0) {
			j->color = 1;
		} else if (strcmp(a, "-fno-color-diagnostics") == 0) {
			j->color = 0;
		} else if (starts_with(a, "--dump-after=")) {
			const char *p = a + strlen("--dump-after=");
			if (strcmp(p, "help") == 0) {
				print_passes();
				return EXIT_OK;
			}
			if (strcmp(p, "all") == 0) {
				for (int k = 0; k < NPASSES; k++)
					j->dump_after[k] = true;
				continue;
			}
			int k = pass_index(p);
			if (k < 0) {
				error_at(cc, none, "unknown pass '%s' in '%s' (--dump-after=help lists them)", p, a);
				return EXIT_USAGE;
			}
			j->dump_after[k] = true;
		} else {
			error_at(cc, none, "unknown argument: '%s'", a);
			return EXIT_USAGE;
		}
	}
	/* The output kind: the target's default, or one the target has. */
	const char *kind = emit_arg ? emit_arg + strlen("--emit=") : j->target->emit;
	for (int e = 0; e < NEMIT && !j->emit; e++)
		if (strcmp(emit_kinds[e].name, kind) == 0)
			j->emit = &emit_kinds[e];
	if (!j->emit || !(j->emit->targets & j->tbits)) {
		const char *list = "";
		for (int e = 0; e < NEMIT; e++)
			if (emit_kinds[e].targets & j->tbits)
				list = arena_printf(cc->arena, "%s%s%s", list, *list ? ", " : "", emit_kinds[e].name);
		if (!j->emit)
			error_at(cc, none, "invalid value '%s' in '%s' (expected one of: %s)", kind, emit_arg, list);
		else
			error_at(cc, none, "--emit=%s is not available for --target=%s (expected one of: %s)", kind,
			         j->target->name, list);
		return EXIT_USAGE;
	}
	if (j->emit->write == write_gpu && j->ngpu != 1) {
		error_at(cc, none, "--emit=%s writes the code of one GPU target; --target= names %d", j->emit->name, j->ngpu);
		return EXIT_USAGE;
	}
	if (!j->input) {
		error_at(cc, none, "no input files");
		return EXIT_USAGE;
	}
	if (j->header_path && !(j->tbits & (TGT_HOST | TGT_CUDA))) {
		error_at(cc, none, "-H is only available for --target=host (--target=%s has no C launch functions)",
		         j->target->name);
		return EXIT_USAGE;
	}
	return ARGS_OK;
}

/* ---- the pipeline ------------------------------------------------------ */

static void dump(Job *j, const Pass *p)
{
	/* stdout, unless the output itself goes there. */
	FILE *out = j->output && strcmp(j->output, "-") == 0 ? stderr : stdout;
	fprintf(out, "// dump after %s\n", p->name);
	if (j->ir)
		ir_print_module(out, j->ir);
	else if (j->ast)
		ast_print(out, j->ast);
	fflush(out);
}

/* Same file (not just same name)?  Used to refuse to overwrite the input. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Runs the job; returns the exit status. */
static int run(Job *j)
{
	Compiler *cc = j->cc;
	Loc none = {0};

	/* Which passes run: through the emit kind's last pass (the front end
	 * with -fsyntax-only), and at least through any pass to be dumped. */
	int last = NPASSES - 1;
	if (j->syntax_only)
		last = pass_index(LAST_FRONTEND_PASS);
	else if (j->emit->last_pass)
		last = pass_index(j->emit->last_pass);
	PKC_ASSERT(last >= 0);
	for (int k = last + 1; k < NPASSES; k++)
		if (j->dump_after[k])
			last = k;

	/* Output names, and the old outputs to remove should we fail. */
	if (!j->syntax_only && !j->output)
		j->output = default_output(j, j->emit->ext);
	if (j->depfile && !j->depfile_path) {
		if (j->output && strcmp(j->output, "-") != 0)
			j->depfile_path = replace_ext(cc->arena, j->output, "d", true);
		else
			j->depfile_path = default_output(j, "d");
	}
	/* The header: with -H, or next to an object file. */
	bool codegen = j->emit->write == write_code && !j->syntax_only && (j->tbits & (TGT_HOST | TGT_CUDA));
	j->cg.emit = strcmp(j->emit->name, "llvm") == 0 ? CG_EMIT_LLVM
	             : strcmp(j->emit->name, "asm") == 0 ? CG_EMIT_ASM : CG_EMIT_OBJ;
	j->gpu_emit = strcmp(j->emit->name, "ptx") == 0     ? GPU_EMIT_PTX
	              : strcmp(j->emit->name, "cubin") == 0 ? GPU_EMIT_CUBIN
	              : strcmp(j->emit->name, "nvvm") == 0  ? GPU_EMIT_NVVM
	                                                    : GPU_EMIT_IMAGES;
	j->mosaic = strcmp(j->emit->name, "mlirbc") == 0            ? MOSAIC_EMIT_MLIRBC
	            : strcmp(j->emit->name, "tpu-custom-call") == 0 ? MOSAIC_EMIT_CUSTOM_CALL
	                                                           : MOSAIC_EMIT_MLIR;
	if (!codegen)
		j->header_path = NULL;
	else if (!j->header_path && strcmp(j->emit->name, "obj") == 0 && strcmp(j->output, "-") != 0)
		j->header_path = replace_ext(cc->arena, j->output, "h", true);
	if (j->header_path && strcmp(j->header_path, j->output) == 0) {
		error_at(cc, none, "the header and the output are the same file '%s' (use -H to name the header)",
		         j->output);
		return EXIT_USAGE;
	}
	const char *outs[3] = {j->syntax_only ? NULL : j->output, j->depfile ? j->depfile_path : NULL,
	                       j->header_path};
	for (int k = 0; k < 3; k++) {
		if (!outs[k] || strcmp(outs[k], "-") == 0)
			continue;
		if (strcmp(j->input, "-") != 0 && same_file(j->input, outs[k])) {
			error_at(cc, none, "input file '%s' is the same as output file '%s'", j->input, outs[k]);
			return EXIT_INPUT;
		}
		remove_on_failure(outs[k]);
	}

	j->src = source_load(cc, j->input, none);
	if (!j->src)
		return EXIT_INPUT;

	for (int k = 0; k <= last; k++) {
		const Pass *p = &passes[k];
		if (!(p->targets & j->tbits))
			continue;
		PKC_ASSERT(p->run || (p->ir && j->ir));
		double t0 = time_ms();
		bool ok = p->run ? p->run(j) : p->ir(cc, j->ir);
		time_note(cc, t0, "pass %s", p->name);
		if (cc->diag.nerrors > 0)
			return EXIT_INPUT;
		if (!ok)
			internal_error("pass '%s' failed without reporting an error", p->name);
		if (j->ir && !ir_verify(j->ir, p->name))
			return EXIT_INTERNAL;
		if (j->dump_after[k])
			dump(j, p);
	}

	/* -D names that matched no const are likely typos. */
	if (j->sema_done)
		for (int i = 0; i < cc->defines.len; i++) {
			const Define *d = cc->defines.items[i];
			if (!d->used)
				warning_at(cc, none, "-D%s does not match any const declaration", d->name);
		}
	if (cc->diag.nerrors > 0)
		return EXIT_INPUT;

	if (!j->syntax_only) {
		if (!j->emit->write) {
			error_at(cc, none, "--emit=%s: %s is not implemented yet", j->emit->name, j->emit->what);
			return EXIT_INPUT;
		}
		double t0 = time_ms();
		if (!write_output(j, j->output, j->emit->write))
			return EXIT_INPUT;
		if (j->header_path && !write_output(j, j->header_path, write_header))
			return EXIT_INPUT;
		time_note(cc, t0, "writing the output");
	}
	if (j->depfile && !write_output(j, j->depfile_path, write_depfile_body))
		return EXIT_INPUT;
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	Compiler cc;
	compiler_init(&cc);
	Job job = {0};
	job.cc = &cc;
	job.target = &targets[0];
	job.tbits = TGT_HOST;
	job.cg.opt_level = 3;
	job.color = -1;
	job.dump_after = arena_alloc(cc.arena, NPASSES * sizeof *job.dump_after);

	/* Know the diagnostics format before the first usage error, wherever
	 * the option is on the command line. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--diagnostics-format=json") == 0)
			cc.diag.format = DIAG_JSON;
		else if (strcmp(argv[i], "--diagnostics-format=text") == 0)
			cc.diag.format = DIAG_TEXT;
	}

	atexit(cleanup_run);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	int status = parse_args(&job, argc, argv);
	if (status == ARGS_OK) {
		if (job.color >= 0)
			cc.diag.color = job.color;
		else {
			/* Auto: only on a terminal, and never for a dumb one or when
			 * NO_COLOR (no-color.org) is set. */
			const char *term = getenv("TERM");
			cc.diag.color = isatty(STDERR_FILENO) && !(term && strcmp(term, "dumb") == 0) &&
			                !getenv("NO_COLOR");
		}
		if (cc.diag.format == DIAG_JSON)
			cc.diag.color = false;
		status = run(&job);
	}
	if (status == EXIT_OK)
		succeeded = 1;
	cleanup_run();
	codegen_output_free(&job.code);
	gpu_output_free(&job.gpu);
	compiler_free(&cc);
	return status;
}
