/* main.c - the pkc driver: command line, the pipeline of passes, and which
 * outputs a run writes (output.c writes them).  Conventions follow gcc/clang:
 *
 *   pkc file.pk [-o out] [--target=host,sm_90a|mosaic-tpu] [--emit=KIND] [-fsyntax-only] ...
 *
 * Exit status: 0 compiled, 1 error in the input, 2 bad command line,
 * 70 internal error.  Outputs appear only when the whole run succeeds
 * (output.h).  The driver is three tables: targets, passes and emit kinds
 * (the pipeline), and options (the command line and --help). */
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
#include "output.h"

#include <llvm-c/Core.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
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

/* Which outputs a -f*-prefix-map= rewrites the source's path in. */
typedef enum MapKind {
	MAP_DEBUG = 1u << 0, /* -fdebug-prefix-map: the module's source name (LLVM IR, NVVM IR) */
	MAP_MACRO = 1u << 1, /* -fmacro-prefix-map: text pkc generates (the header's banner) */
} MapKind;

typedef struct PrefixMap {
	const char *old, *new_;
	unsigned kinds;        /* MapKinds */
} PrefixMap;

/* The options of this run and what the pipeline has built so far. */
typedef struct Job {
	Compiler *cc;           /* the compilation context */
	const char *input;      /* input path ("-" = stdin) */
	bool only_inputs;       /* after "--": every argument is an input */
	const char *output;     /* output path ("-" = stdout); NULL with -fsyntax-only or -M */
	const EmitKind *emit;   /* what to write (--emit, else the target's default) */
	const char *emit_arg;   /* the last --emit= (checked once the target is known) */
	const Target *target;   /* --target= (the host row when the list has host) */
	unsigned tbits;         /* TargetBits of every target in the --target= list */
	const GpuTarget **gpu_targets; /* the GPU targets of --target=, in order */
	int ngpu;
	const char *ptxas;      /* --ptxas=PATH */
	bool resource_usage;    /* --resource-usage */
	bool gpu_mma_sync;      /* --gpu-mma-sync */
	bool gpu_no_tma;        /* --gpu-no-tma */
	bool gpu_no_reblock;    /* --gpu-no-reblock */
	bool gpu_no_persistent; /* --gpu-no-persistent */
	bool gpu_no_cluster;    /* --gpu-no-cluster */
	bool gpu_no_pingpong;   /* --gpu-no-pingpong */
	bool gpu_pingpong;      /* --gpu-pingpong */
	bool gpu_no_early;      /* --gpu-no-early-copies */
	bool gpu_no_ahead;      /* --gpu-no-copies-ahead */
	bool gpu_no_few_trips;  /* --gpu-no-few-trips */
	bool gpu_no_kgrid_loop; /* --gpu-no-kgrid-loop */
	bool gpu_no_merge;      /* --gpu-no-merge-blocks */
	GpuEmit gpu_emit;       /* what nvptx produces, from --emit */
	GpuOutput gpu;          /* after nvptx: the GPU images (or --emit=ptx/cubin/nvvm text) */
	bool syntax_only;       /* -fsyntax-only: check, write nothing but a depfile */
	bool deps_only;         /* -M: parse, write the make rule and nothing else */
	bool depfile;           /* -MD (or -MF): write a depfile */
	bool dep_phony;         /* -MP: a phony rule per include */
	const char *depfile_path; /* -MF, or derived from the output */
	Vec dep_targets;        /* const char*, from -MT (empty: the output) */
	Vec prefix_maps;        /* PrefixMap*, -f*-prefix-map=, in order (the last match wins) */
	bool *dump_after;       /* per pass: --dump-after=PASS given */
	int color;              /* -1 auto, 0 -fno-color-diagnostics, 1 -fcolor-diagnostics */
	Source *src;            /* the main source file */
	AstFile *ast;           /* after parse */
	IrModule *ir;           /* after sema; rewritten by later passes */
	bool sema_done;         /* sema ran (so -D names have been matched) */
	CodegenOptions cg;      /* -O, -march=; the output kind follows --emit */
	MosaicEmit mosaic;      /* --target=mosaic-tpu: the output kind, from --emit */
	const char *header_path; /* -H, or derived from the output (obj only); NULL: no header */
	const char *name_prefix; /* --name-prefix=: put before every kernel's name (NULL: none) */
	const char *name_suffix; /* --name-suffix=: put after it */
	CodegenOutput code;     /* after llvm-host: the object, assembly or LLVM IR; after mosaic-tpu: the MLIR */
} Job;

/* The main source's path as the outputs of `kind` record it: rewritten by
 * the last -f*-prefix-map= whose OLD starts it (gcc's rule), so that
 * outputs can be byte-identical wherever the tree is. */
static const char *mapped_path(Job *j, const char *path, MapKind kind)
{
	for (int i = j->prefix_maps.len - 1; i >= 0; i--) {
		const PrefixMap *m = j->prefix_maps.items[i];
		size_t n = strlen(m->old);
		if ((m->kinds & kind) && strncmp(path, m->old, n) == 0)
			return arena_printf(j->cc->arena, "%s%s", m->new_, path + n);
	}
	return path;
}

/* Names the source in the IR module (IrModule.source, which only outputs
 * read) as the outputs of `kind` record it. */
static void name_source(Job *j, MapKind kind)
{
	if (j->src && j->ir)
		j->ir->source = mapped_path(j, j->src->path, kind);
}

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
	if (j->ir && (j->name_prefix || j->name_suffix)) {
		/* Variants of one kernel (-D) in one program: every symbol and
		 * the header's guard follow the kernel names. */
		j->ir->name_prefix = j->name_prefix ? j->name_prefix : "";
		j->ir->name_suffix = j->name_suffix ? j->name_suffix : "";
		for (int i = 0; i < j->ir->nkernels; i++) {
			IrKernel *k = j->ir->kernels[i];
			k->name = arena_printf(j->cc->arena, "%s%s%s", j->ir->name_prefix, k->name, j->ir->name_suffix);
		}
	}
	return j->ir != NULL;
}

/* The host back end: tiled IR -> LLVM -> object code (or assembly, or
 * LLVM IR: j->cg.emit, set from --emit), kept in memory until the output
 * is written. */
static bool pass_llvm_host(Job *j)
{
	name_source(j, MAP_DEBUG);
	return codegen_host(j->cc, j->ir, &j->cg, &j->code);
}

/* The CUDA back end (gpu.h): the IR after lower-refs -> PTX per GPU
 * target -> cubins (ptxas), kept for llvm-host to embed, or the PTX/cubin
 * /NVVM text itself with --emit=ptx/cubin/nvvm. */
static bool pass_nvptx(Job *j)
{
	GpuOptions o = {j->gpu_targets, j->ngpu, j->cg.opt_level, j->ptxas, j->resource_usage, j->gpu_emit,
	                 j->gpu_mma_sync, j->gpu_no_tma, j->gpu_no_persistent, j->gpu_no_reblock,
	                 j->gpu_no_cluster, j->gpu_no_pingpong, j->gpu_pingpong, j->gpu_no_early,
	                 j->gpu_no_ahead, j->gpu_no_few_trips, j->gpu_no_kgrid_loop, j->gpu_no_merge};
	name_source(j, MAP_DEBUG);
	/* Its images are made in a thread beside the host back end: LLVM's
	 * targets are registered before, not while it runs. */
	if (j->gpu_emit == GPU_EMIT_IMAGES)
		codegen_host_init();
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
 * itself does not load libMLIR (about 13 ms of start-up on every run), and
 * so that pkc builds without MLIR (make MOSAIC=0: no plugin, and the
 * target says so).  It is dlopened on first use: from $PKC_MOSAIC_PLUGIN
 * if set, else from <dir of /proc/self/exe>/../lib/pkc/ (build/bin ->
 * build/lib/pkc in the tree, PREFIX/bin -> PREFIX/lib/pkc installed).
 * pkc is linked with -rdynamic: the plugin calls back into the driver's
 * objects. */
typedef bool (*CodegenMosaicFn)(Compiler *, IrModule *, MosaicEmit, CodegenOutput *);

/* The plugin's path (from_env: it came from $PKC_MOSAIC_PLUGIN). */
static const char *mosaic_plugin_path(Arena *a, bool *from_env)
{
	const char *env = getenv("PKC_MOSAIC_PLUGIN");
	*from_env = env && *env;
	if (*from_env)
		return env;
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
	return arena_printf(a, "%s/../lib/pkc/libpkc_mosaic.so", exe);
}

/* The plugin's entry point, loaded once; NULL if it cannot be (with an
 * error when cc is not NULL). */
static CodegenMosaicFn load_mosaic_plugin(Compiler *cc, Arena *a)
{
	static CodegenMosaicFn fn;
	if (fn)
		return fn;
	Loc none = {0};
	bool from_env;
	const char *path = mosaic_plugin_path(a, &from_env);
	struct stat st;
	if (stat(path, &st) != 0 && errno == ENOENT) {
		if (cc && from_env)
			error_at(cc, none, "--target=mosaic-tpu: PKC_MOSAIC_PLUGIN names '%s', which does not exist", path);
		else if (cc)
			error_at(cc, none, "this pkc was built without the Mosaic TPU target (--target=mosaic-tpu needs "
			         "the plugin '%s'; `make` builds it unless MOSAIC=0)", path);
		return NULL;
	}
	/* RTLD_LAZY: binding the plugin's thousands of calls into libMLIR up
	 * front (RTLD_NOW) costs ~12 ms per mosaic-tpu run. */
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	void *sym = h ? dlsym(h, "codegen_mosaic") : NULL;
	if (!sym) {
		if (cc)
			error_at(cc, none, "--target=mosaic-tpu needs the Mosaic plugin: %s", dlerror());
		if (h)
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
	CodegenMosaicFn fn = load_mosaic_plugin(j->cc, j->cc->arena);
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
	{"split-loops", "split loops where an iota mask is uniformly true (causal attention's off-diagonal blocks)", NULL,
	 pass_split_loops, TGT_HOST | TGT_CUDA},
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
	name_source(j, MAP_MACRO);
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

/* ---- command line ------------------------------------------------------ */

/* Outcome of an option handler or parse_args besides "go on". */
enum { ARGS_OK = -1 };

/* How an option takes its value. */
typedef enum OptArg {
	ARG_NONE,     /* -fsyntax-only: the name alone */
	ARG_JOINED,   /* --emit=KIND, -O3: the value follows the name in the same argument */
	ARG_SEPARATE, /* -o FILE or -oFILE */
} OptArg;

/* One command-line option: parse_args, print_help and the "did you mean"
 * of an unknown option all read this table.  Adding an option is adding a
 * row and its handler. */
typedef struct Option Option;
struct Option {
	const char *name;  /* as typed: "-fsyntax-only", "--emit=", "-o" */
	OptArg arg;
	/* value: NULL for ARG_NONE; arg: the whole argument, for messages.
	 * Returns ARGS_OK, or the exit status (EXIT_OK after --help). */
	int (*handle)(Job *j, const Option *o, const char *value, const char *arg);
	size_t field;      /* for opt_flag and opt_value: offsetof the Job field they set */
	const char *usage; /* --help's left column; NULL: an alias, not listed */
	const char *help;  /* --help's right column; '\n' starts a continuation line */
};
/* The common handlers: a bool field set true, a string field set to the value. */
#define FLAG(f) opt_flag, offsetof(Job, f)
#define VALUE(f) opt_value, offsetof(Job, f)
#define HANDLER(h) h, 0

static void print_help(void);
static void print_version(void);

static int opt_flag(Job *j, const Option *o, const char *v, const char *a)
{
	*(bool *)((char *)j + o->field) = true;
	return ARGS_OK;
}

static int opt_value(Job *j, const Option *o, const char *v, const char *a)
{
	*(const char **)((char *)j + o->field) = v;
	return ARGS_OK;
}

static int opt_help(Job *j, const Option *o, const char *v, const char *a)
{
	print_help();
	return EXIT_OK;
}

static int opt_version(Job *j, const Option *o, const char *v, const char *a)
{
	print_version();
	return EXIT_OK;
}

static int opt_opt_level(Job *j, const Option *o, const char *v, const char *a)
{
	if (!(v[0] >= '0' && v[0] <= '3' && v[1] == '\0')) {
		error_at(j->cc, (Loc){0}, "invalid value '%s' in '%s' (expected -O0, -O1, -O2 or -O3)", v, a);
		return EXIT_USAGE;
	}
	j->cg.opt_level = v[0] - '0';
	return ARGS_OK;
}

static int opt_march(Job *j, const Option *o, const char *cpu, const char *a)
{
	if (!codegen_cpu_valid(cpu)) {
		error_at(j->cc, (Loc){0}, "unknown CPU '%s' in '%s' (expected an x86-64 processor such as x86-64, "
		         "x86-64-v3, skylake-avx512, znver4, or native)", cpu, a);
		return EXIT_USAGE;
	}
	j->cg.cpu = cpu;
	return ARGS_OK;
}

static int opt_time_report(Job *j, const Option *o, const char *v, const char *a)
{
	j->cc->time_report = true;
	return ARGS_OK;
}

static int opt_emit(Job *j, const Option *o, const char *v, const char *a)
{
	j->emit_arg = a; /* checked once the target is known */
	return ARGS_OK;
}

/* --target=LIST: a comma list; host and GPU targets combine, mosaic-tpu
 * stands alone. */
static int opt_target(Job *j, const Option *o, const char *t, const char *a)
{
	Compiler *cc = j->cc;
	Loc none = {0};
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
	return ARGS_OK;
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


static int opt_define(Job *j, const Option *o, const char *v, const char *a)
{
	return add_define(j->cc, v) ? ARGS_OK : EXIT_USAGE;
}

static int opt_include_dir(Job *j, const Option *o, const char *v, const char *a)
{
	vec_push(j->cc->arena, &j->cc->include_dirs, arena_strndup(j->cc->arena, v, strlen(v)));
	return ARGS_OK;
}

static int opt_depfile_path(Job *j, const Option *o, const char *v, const char *a)
{
	j->depfile = true;
	j->depfile_path = v;
	return ARGS_OK;
}

static int opt_dep_target(Job *j, const Option *o, const char *v, const char *a)
{
	vec_push(j->cc->arena, &j->dep_targets, (void *)v);
	return ARGS_OK;
}

/* -ffile-prefix-map=OLD=NEW (both kinds), -fdebug-prefix-map=,
 * -fmacro-prefix-map= (one each). */
static int opt_prefix_map(Job *j, const Option *o, const char *v, const char *a)
{
	const char *eq = strchr(v, '=');
	if (!eq) {
		error_at(j->cc, (Loc){0}, "invalid value '%s' in '%s' (expected OLD=NEW)", v, a);
		return EXIT_USAGE;
	}
	PrefixMap *m = arena_alloc(j->cc->arena, sizeof *m);
	m->old = arena_strndup(j->cc->arena, v, (size_t)(eq - v));
	m->new_ = eq + 1;
	m->kinds = a[2] == 'd' ? MAP_DEBUG : a[2] == 'm' ? MAP_MACRO : MAP_DEBUG | MAP_MACRO;
	vec_push(j->cc->arena, &j->prefix_maps, m);
	return ARGS_OK;
}

/* --name-prefix=, --name-suffix=: identifier characters (a prefix not
 * starting with a digit), so that the names stay C identifiers. */
static int opt_name_affix(Job *j, const Option *o, const char *v, const char *a)
{
	bool ok = *v && !(o->name[7] == 'p' && *v >= '0' && *v <= '9');
	for (const char *p = v; ok && *p; p++)
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
	if (!ok) {
		error_at(j->cc, (Loc){0}, "invalid value '%s' in '%s' (expected letters, digits and '_'%s)", v, a,
		         o->name[7] == 'p' ? ", not starting with a digit" : "");
		return EXIT_USAGE;
	}
	*(o->name[7] == 'p' ? &j->name_prefix : &j->name_suffix) = v;
	return ARGS_OK;
}

static int opt_werror(Job *j, const Option *o, const char *v, const char *a)
{
	j->cc->diag.werror = true;
	return ARGS_OK;
}

static int opt_error_limit(Job *j, const Option *o, const char *s, const char *a)
{
	char *end;
	errno = 0;
	long n = strtol(s, &end, 10);
	if (!*s || *end || errno || n < 0 || n > 1000000) {
		error_at(j->cc, (Loc){0}, "invalid value '%s' in '%s' (expected a non-negative integer)", s, a);
		return EXIT_USAGE;
	}
	j->cc->diag.error_limit = (int)n;
	return ARGS_OK;
}

/* --diagnostics-format=, and gcc's spelling -fdiagnostics-format=. */
static int opt_diagnostics_format(Job *j, const Option *o, const char *f, const char *a)
{
	if (strcmp(f, "text") == 0)
		j->cc->diag.format = DIAG_TEXT;
	else if (strcmp(f, "json") == 0)
		j->cc->diag.format = DIAG_JSON;
	else {
		error_at(j->cc, (Loc){0}, "invalid value '%s' in '%s' (expected text or json)", f, a);
		return EXIT_USAGE;
	}
	return ARGS_OK;
}

static int opt_color(Job *j, const Option *o, const char *v, const char *a)
{
	j->color = a[2] != 'n'; /* -fcolor-... or -fno-color-... */
	return ARGS_OK;
}

static void print_passes(void)
{
	for (int i = 0; i < NPASSES; i++)
		printf("%-12s %s\n", passes[i].name, passes[i].help);
}

static int opt_dump_after(Job *j, const Option *o, const char *p, const char *a)
{
	if (strcmp(p, "help") == 0) {
		print_passes();
		return EXIT_OK;
	}
	if (strcmp(p, "all") == 0) {
		for (int k = 0; k < NPASSES; k++)
			j->dump_after[k] = true;
		return ARGS_OK;
	}
	int k = pass_index(p);
	if (k < 0) {
		error_at(j->cc, (Loc){0}, "unknown pass '%s' in '%s' (--dump-after=help lists them)", p, a);
		return EXIT_USAGE;
	}
	j->dump_after[k] = true;
	return ARGS_OK;
}

static const Option options[] = {
	{"-o", ARG_SEPARATE, VALUE(output), "-o FILE", "write the output to FILE (\"-\": standard output)"},
	{"--target=", ARG_JOINED, HANDLER(opt_target), "--target=TARGET",
	 "host (default: x86-64 object code) or mosaic-tpu (a Mosaic TPU\n"
	 "kernel as JAX Pallas builds it; sizes must be given with -D);\n"
	 "or a comma list of host and GPU targets sm_80, sm_86, sm_89,\n"
	 "sm_90, sm_90a: one object with every variant (host,sm_90a)"},
	{"--emit=", ARG_JOINED, HANDLER(opt_emit), "--emit=KIND",
	 "what to write: for host obj (default), llvm, asm; for mosaic-tpu\n"
	 "mlir (default), mlirbc, tpu-custom-call (JSON); for one GPU\n"
	 "target ptx, cubin, nvvm (its NVVM IR); for any: ast, ir"},
	{"--ptxas=", ARG_JOINED, VALUE(ptxas), "--ptxas=PATH",
	 "the CUDA assembler (default: ptxas on PATH, then\n"
	 "/usr/local/cuda/bin/ptxas; without one, or with --ptxas=none,\n"
	 "the object embeds PTX only)"},
	{"--resource-usage", ARG_NONE, FLAG(resource_usage), "--resource-usage",
	 "report registers, shared memory and spills per GPU kernel\n"
	 "(ptxas's figures), and the unit each dot takes"},
	{"--gpu-mma-sync", ARG_NONE, FLAG(gpu_mma_sync), "--gpu-mma-sync",
	 "tensor-core dots with mma.sync on sm_90a too (by default\n"
	 "Hopper wgmma where the block fits, when every GPU target is sm_90a)"},
	{"--gpu-no-tma", ARG_NONE, FLAG(gpu_no_tma), "--gpu-no-tma",
	 "wgmma pipelines copy their operands with cp.async (by default\n"
	 "the Hopper copy engine, cp.async.bulk.tensor, where it can)"},
	{"--gpu-no-reblock", ARG_NONE, FLAG(gpu_no_reblock), "--gpu-no-reblock",
	 "K loops of wgmma dots keep the BK they are written with, and\n"
	 "dots over a whole K stay one dot (by default, on sm_90a, K\n"
	 "slices of 64 in a loop where the rows are aligned; on every\n"
	 "GPU target, whole-K dots as K loops where they are not)"},
	{"--gpu-no-persistent", ARG_NONE, FLAG(gpu_no_persistent), "--gpu-no-persistent",
	 "one CTA per task for kernels with tensor-core dots (by default\n"
	 "on sm_90 targets, persistent CTAs, as many as the GPU holds\n"
	 "at once, each running every task gridDim.x apart)"},
	{"--gpu-no-cluster", ARG_NONE, FLAG(gpu_no_cluster), "--gpu-no-cluster",
	 "no thread-block clusters (by default, on sm_90a, a persistent\n"
	 "matmul runs neighbouring programs on the two CTAs of a cluster,\n"
	 "which copy the operand tile both read once, multicast,\n"
	 "for tiles of lines under 128 bytes)"},
	{"--gpu-no-pingpong", ARG_NONE, FLAG(gpu_no_pingpong), "--gpu-no-pingpong",
	 "the two warpgroups of a loop of chained tensor-core dots run\n"
	 "in step behind a CTA barrier (by default, on sm_90a, they run\n"
	 "apart: with the copy engine they take turns at issuing their\n"
	 "dots, FA3's ping-pong)"},
	{"--gpu-pingpong", ARG_NONE, FLAG(gpu_pingpong), "--gpu-pingpong",
	 "let them run apart: the default (kept for scripts that ask\n"
	 "for it; with a ptxas older than CUDA 13.3, whose registers\n"
	 "for a loop-invariant operand can go wrong, that operand is\n"
	 "in shared memory either way)"},
	{"--gpu-no-early-copies", ARG_NONE, FLAG(gpu_no_early), "--gpu-no-early-copies",
	 "every mma.sync dot copies its operands where it runs (by\n"
	 "default the first of a region also copies the operands later\n"
	 "dots of the region read from `in` arrays, so that they arrive\n"
	 "together: decode attention's k and v)"},
	{"--gpu-no-copies-ahead", ARG_NONE, FLAG(gpu_no_ahead), "--gpu-no-copies-ahead",
	 "the first mma.sync dot of a loop's body copies its operands\n"
	 "when it runs (by default, where they are `in` arrays whose\n"
	 "indices any iteration can compute, it copies the next\n"
	 "iteration's once it has read its own: decode attention's k)"},
	{"--gpu-no-few-trips", ARG_NONE, FLAG(gpu_no_few_trips), "--gpu-no-few-trips",
	 "no few-trips variants (by default, on sm_90a, a kernel whose K\n"
	 "loop runs a trip count of a size symbol, k // 64 say, also\n"
	 "gets an entry for at most 16 iterations, on fewer warps and\n"
	 "three CTAs an SM, which the launch stub picks from the size)"},
	{"--gpu-no-kgrid-loop", ARG_NONE, FLAG(gpu_no_kgrid_loop), "--gpu-no-kgrid-loop",
	 "an arbitrary grid axis stays a loop around the body (by default\n"
	 "a body that accumulates into scratch over it, as the Pallas TPU\n"
	 "guide's matmul with K on the grid, runs as that axis' loop with\n"
	 "the accumulator in registers: a K loop like any other)"},
	{"--gpu-no-merge-blocks", ARG_NONE, FLAG(gpu_no_merge), "--gpu-no-merge-blocks",
	 "one program a CTA (by default, on sm_90a, a kernel whose\n"
	 "tensor-core dots have blocks of fewer than 128 rows or columns\n"
	 "also gets an entry running 2 to 8 programs of that grid axis in\n"
	 "a CTA as one larger block, which the launch stub picks when\n"
	 "their number divides the axis' extent and the grid fills the GPU)"},
	{"-H", ARG_SEPARATE, VALUE(header_path), "-H FILE",
	 "write the C header declaring the kernels to FILE\n"
	 "(default with --emit=obj: the object's name with .h); it is\n"
	 "rewritten only when its contents change"},
	{"--name-suffix=", ARG_JOINED, HANDLER(opt_name_affix), "--name-suffix=SUFFIX",
	 "append SUFFIX to every kernel's name (its C launch function,\n"
	 "its symbols, the TPU kernel) and to the header's include guard,\n"
	 "so that variants of one kernel (-D) link into one program"},
	{"--name-prefix=", ARG_JOINED, HANDLER(opt_name_affix), "--name-prefix=PREFIX",
	 "put PREFIX before every kernel's name (as --name-suffix=)"},
	{"-O", ARG_JOINED, HANDLER(opt_opt_level), "-O0, -O1, -O2, -O3",
	 "optimisation level of the generated code (default -O3)"},
	{"-march=", ARG_JOINED, HANDLER(opt_march), "-march=CPU",
	 "generate code for CPU (default x86-64; native: this machine)"},
	{"-fsyntax-only", ARG_NONE, FLAG(syntax_only), "-fsyntax-only", "check the input (parse and sema), write nothing"},
	{"-ftime-report", ARG_NONE, HANDLER(opt_time_report), "-ftime-report", "print the wall time of each phase to stderr"},
	{"-D", ARG_SEPARATE, HANDLER(opt_define), "-D NAME=VALUE, -DNAME=VALUE",
	 "override const NAME with VALUE (-D NAME means 1); with\n"
	 "--target=mosaic-tpu also the value of size symbol NAME"},
	{"-I", ARG_SEPARATE, HANDLER(opt_include_dir), "-I DIR, -IDIR", "search DIR for include files"},
	{"-M", ARG_NONE, FLAG(deps_only), "-M, -MM",
	 "write the make rule of the input's dependencies (to -MF FILE,\n"
	 "-o FILE or standard output) and nothing else"},
	{"-MM", ARG_NONE, FLAG(deps_only), NULL, NULL},
	{"-MD", ARG_NONE, FLAG(depfile), "-MD, -MMD", "also write a make depfile (default: output with .d)"},
	{"-MMD", ARG_NONE, FLAG(depfile), NULL, NULL},
	{"-MF", ARG_SEPARATE, HANDLER(opt_depfile_path), "-MF FILE", "write the depfile to FILE (implies -MD)"},
	{"-MT", ARG_SEPARATE, HANDLER(opt_dep_target), "-MT TARGET", "the depfile's target (default: the output file)"},
	{"-MP", ARG_NONE, FLAG(dep_phony), "-MP",
	 "add a phony target for each include (deleting one then does not\n"
	 "break make)"},
	{"-ffile-prefix-map=", ARG_JOINED, HANDLER(opt_prefix_map), "-ffile-prefix-map=OLD=NEW",
	 "write the source path starting with OLD as NEW in the outputs;\n"
	 "-fdebug-prefix-map= only in LLVM/NVVM IR, -fmacro-prefix-map=\n"
	 "only in the header"},
	{"-fdebug-prefix-map=", ARG_JOINED, HANDLER(opt_prefix_map), NULL, NULL},
	{"-fmacro-prefix-map=", ARG_JOINED, HANDLER(opt_prefix_map), NULL, NULL},
	{"-Werror", ARG_NONE, HANDLER(opt_werror), "-Werror", "make warnings errors"},
	{"-ferror-limit=", ARG_JOINED, HANDLER(opt_error_limit), "-ferror-limit=N",
	 "stop after N errors (default 20, 0: no limit)"},
	{"--diagnostics-format=", ARG_JOINED, HANDLER(opt_diagnostics_format), "--diagnostics-format=FMT",
	 "text (default) or json (one object per line); also\n"
	 "-fdiagnostics-format=FMT"},
	{"-fdiagnostics-format=", ARG_JOINED, HANDLER(opt_diagnostics_format), NULL, NULL},
	{"-fcolor-diagnostics", ARG_NONE, HANDLER(opt_color), "-fcolor-diagnostics", "colour diagnostics"},
	{"-fno-color-diagnostics", ARG_NONE, HANDLER(opt_color), "-fno-color-diagnostics",
	 "do not colour diagnostics (default when stderr is not a terminal)"},
	{"--dump-after=", ARG_JOINED, HANDLER(opt_dump_after), "--dump-after=PASS",
	 "print the IR (or AST) after PASS to stdout (stderr with -o -);\n"
	 "--dump-after=help lists passes, --dump-after=all dumps after each"},
	{"--", ARG_NONE, FLAG(only_inputs), "--", "every later argument is an input file"},
	{"--version", ARG_NONE, HANDLER(opt_version), "--version", "print the version, LLVM's and the targets, and exit"},
	{"--help", ARG_NONE, HANDLER(opt_help), "--help", "print this help and exit"},
	{"-help", ARG_NONE, HANDLER(opt_help), NULL, NULL},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };

/* The option `a` is: an exact ARG_NONE name, else the longest name that
 * starts it; NULL if none. */
static const Option *find_option(const char *a)
{
	const Option *best = NULL;
	for (int i = 0; i < NOPTIONS; i++) {
		const Option *o = &options[i];
		if (o->arg == ARG_NONE) {
			if (strcmp(a, o->name) == 0)
				return o;
		} else if (starts_with(a, o->name) && (!best || strlen(o->name) > strlen(best->name))) {
			best = o;
		}
	}
	return best;
}

/* Edit distance of a[0..na) and b[0..nb) (insertions, deletions,
 * substitutions and swaps of neighbours), or INT_MAX when b is too long
 * to be an option name or a much longer than b (the distance is at least
 * na - nb: never a suggestion, and a huge argument costs no time). */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	enum { MAXN = 64 };
	if (nb >= MAXN || na > 2 * nb)
		return INT_MAX;
	int row[3][MAXN]; /* rows i-2, i-1, i (mod 3) */
	for (size_t k = 0; k <= nb; k++)
		row[0][k] = (int)k;
	for (size_t i = 1; i <= na; i++) {
		int *cur = row[i % 3], *prev = row[(i - 1) % 3], *prev2 = row[(i + 1) % 3];
		cur[0] = (int)i;
		for (size_t k = 1; k <= nb; k++) {
			int d = prev[k - 1] + (a[i - 1] != b[k - 1]);
			if (prev[k] + 1 < d)
				d = prev[k] + 1;
			if (cur[k - 1] + 1 < d)
				d = cur[k - 1] + 1;
			if (i > 1 && k > 1 && a[i - 1] == b[k - 2] && a[i - 2] == b[k - 1] && prev2[k - 2] + 1 < d)
				d = prev2[k - 2] + 1;
			cur[k] = d;
		}
	}
	return row[na % 3][nb];
}

/* For an unknown option: the option it is most likely a misspelling of
 * (with its value: --emti=ir -> --emit=ir), or NULL when none is close
 * (at most one edit per three characters of the name). */
static const char *suggest_option(Arena *arena, const char *a)
{
	const char *eq = strchr(a, '=');
	const Option *best = NULL;
	int bestd = INT_MAX;
	for (int i = 0; i < NOPTIONS; i++) {
		const Option *o = &options[i];
		size_t n = strlen(o->name);
		bool with_value = o->arg == ARG_JOINED && o->name[n - 1] == '=';
		if (o->arg != ARG_NONE && !with_value)
			continue; /* -o, -D, -O...: whatever follows is their value */
		size_t na = with_value && eq ? (size_t)(eq - a) + 1 : strlen(a);
		int d = edit_distance(a, na, o->name, n);
		if (d < bestd) {
			bestd = d;
			best = o;
		}
	}
	if (!best || bestd == 0 || (size_t)bestd * 3 > strlen(best->name))
		return NULL;
	bool with_value = best->arg == ARG_JOINED && eq;
	return with_value ? arena_printf(arena, "%s%s", best->name, eq + 1) : best->name;
}

/* Parses argv into j and j->cc.  Returns ARGS_OK, or an exit status
 * (0 after --help/--version, EXIT_USAGE after an error). */
static int parse_args(Job *j, int argc, char **argv)
{
	Compiler *cc = j->cc;
	Loc none = {0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (j->only_inputs || a[0] != '-' || strcmp(a, "-") == 0) {
			if (j->input) {
				error_at(cc, none, "more than one input file ('%s', '%s'); pkc compiles one file at a time",
				         j->input, a);
				return EXIT_USAGE;
			}
			j->input = a;
			continue;
		}
		const Option *o = find_option(a);
		if (!o) {
			const char *guess = suggest_option(cc->arena, a);
			if (guess)
				error_at(cc, none, "unknown argument: '%s'; did you mean '%s'?", a, guess);
			else
				error_at(cc, none, "unknown argument: '%s'", a);
			return EXIT_USAGE;
		}
		const char *v = NULL;
		size_t n = strlen(o->name);
		if (o->arg == ARG_JOINED || (o->arg == ARG_SEPARATE && a[n] != '\0')) {
			v = a + n;
		} else if (o->arg == ARG_SEPARATE) {
			if (i + 1 >= argc) {
				error_at(cc, none, "argument to '%s' is missing (expected 1 value)", o->name);
				return EXIT_USAGE;
			}
			v = argv[++i];
		}
		int status = o->handle(j, o, v, a);
		if (status != ARGS_OK)
			return status;
	}
	/* The output kind: the target's default, or one the target has. */
	const char *kind = j->emit_arg ? j->emit_arg + strlen("--emit=") : j->target->emit;
	for (int e = 0; e < NEMIT && !j->emit; e++)
		if (strcmp(emit_kinds[e].name, kind) == 0)
			j->emit = &emit_kinds[e];
	if (!j->emit || !(j->emit->targets & j->tbits)) {
		const char *list = "";
		for (int e = 0; e < NEMIT; e++)
			if (emit_kinds[e].targets & j->tbits)
				list = arena_printf(cc->arena, "%s%s%s", list, *list ? ", " : "", emit_kinds[e].name);
		if (!j->emit)
			error_at(cc, none, "invalid value '%s' in '%s' (expected one of: %s)", kind, j->emit_arg, list);
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

/* --help: the options table, usage on the left, help on the right. */
static void print_help(void)
{
	enum { COL = 31 };
	fputs("usage: pkc [options] file.pk\n"
	      "\n"
	      "Compiles a .pk kernel file (\"-\" reads standard input).\n"
	      "\n"
	      "options:\n",
	      stdout);
	for (int i = 0; i < NOPTIONS; i++) {
		const Option *o = &options[i];
		if (!o->usage)
			continue;
		int w = printf("  %s", o->usage);
		if (w + 1 > COL) {
			putchar('\n');
			w = 0;
		}
		for (const char *h = o->help; *h;) {
			const char *nl = strchr(h, '\n');
			int n = nl ? (int)(nl - h) : (int)strlen(h);
			printf("%*s%.*s\n", COL - w, "", n, h);
			w = 0;
			h += n + (nl != NULL);
		}
	}
}

/* --version: pkc's, the LLVM it runs with, and the targets this build
 * has (mosaic-tpu only when its plugin loads). */
static void print_version(void)
{
	unsigned major, minor, patch;
	LLVMGetVersion(&major, &minor, &patch);
	printf("pkc version %s\n", PKC_VERSION);
	printf("LLVM version %u.%u.%u\n", major, minor, patch);
	Arena *a = arena_new();
	printf("targets: host (x86-64), %s%s\n", gpu_target_list(), load_mosaic_plugin(NULL, a) ? ", mosaic-tpu" : "");
	arena_free(a);
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

/* The output name gcc -c would pick: the input's basename with the
 * extension replaced, in the current directory. */
static char *default_output(Job *j, const char *ext)
{
	const char *in = strcmp(j->input, "-") == 0 ? "stdin" : j->input;
	return output_replace_ext(j->cc->arena, in, ext, false);
}

static bool write_depfile(Job *j, FILE *out)
{
	const char *target = j->output && strcmp(j->output, "-") != 0 ? j->output : default_output(j, j->emit->ext);
	output_depfile(j->cc, out, &j->dep_targets, target, j->dep_phony);
	return true;
}

/* A Job writer for output_write. */
typedef struct JobWriter {
	Job *j;
	bool (*write)(Job *j, FILE *out);
} JobWriter;

static bool job_writer(void *ctx, FILE *out)
{
	JobWriter *w = ctx;
	return w->write(w->j, out);
}

static bool write_job_output(Job *j, const char *path, bool keep_same, bool (*write)(Job *j, FILE *out))
{
	JobWriter w = {j, write};
	return output_write(j->cc, path, keep_same, job_writer, &w);
}

/* Decides the outputs' names, checks that no two are one file (nor the
 * input), and registers the old ones for removal should the run fail.
 * Returns ARGS_OK or an exit status. */
static int plan_outputs(Job *j)
{
	Compiler *cc = j->cc;
	Loc none = {0};
	/* -M: the rule goes where -MF, else -o, says (else stdout), and its
	 * target is the output a compilation would write. */
	if (j->deps_only) {
		j->depfile_path = j->depfile_path ? j->depfile_path : j->output ? j->output : "-";
		j->depfile = true;
		j->output = NULL;
	}
	bool writes = !j->syntax_only && !j->deps_only;
	if (writes && !j->output)
		j->output = default_output(j, j->emit->ext);
	/* Derived names (the header, the depfile) come from a named output,
	 * never from a device or FIFO: -o /dev/null writes no /dev/null.h. */
	bool named = j->output && strcmp(j->output, "-") != 0;
	bool special = named && output_is_special(j->output);
	if (j->depfile && !j->depfile_path) {
		if (special)
			j->depfile = false;
		else
			j->depfile_path = named ? output_replace_ext(cc->arena, j->output, "d", true) : default_output(j, "d");
	}
	/* The header: with -H, or next to an object file. */
	bool codegen = j->emit->write == write_code && writes && (j->tbits & (TGT_HOST | TGT_CUDA));
	if (!codegen)
		j->header_path = NULL;
	else if (!j->header_path && strcmp(j->emit->name, "obj") == 0 && named && !special)
		j->header_path = output_replace_ext(cc->arena, j->output, "h", true);

	const char *outs[3] = {writes ? j->output : NULL, j->depfile ? j->depfile_path : NULL, j->header_path};
	const char *what[3] = {"output", "depfile", "header"};
	for (int k = 0; k < 3; k++) {
		if (!outs[k] || strcmp(outs[k], "-") == 0)
			continue;
		if (strcmp(j->input, "-") != 0 && output_same_file(j->input, outs[k])) {
			error_at(cc, none, "input file '%s' is the same as output file '%s'", j->input, outs[k]);
			return EXIT_INPUT;
		}
		/* Two outputs in one file: the second would replace the first.
		 * Devices and FIFOs (-MF /dev/null -o /dev/null) may be shared. */
		for (int l = 0; l < k; l++)
			if (outs[l] && strcmp(outs[l], "-") != 0 && !output_is_special(outs[k]) &&
			    output_same_file(outs[l], outs[k])) {
				error_at(cc, none, "the %s '%s' and the %s '%s' are the same file%s", what[l], outs[l], what[k],
				         outs[k], k == 2 ? " (use -H to name the header)" : "");
				return EXIT_INPUT;
			}
	}
	/* Only once the names are good: a refused command line removes nothing. */
	for (int k = 0; k < 3; k++)
		if (outs[k] && strcmp(outs[k], "-") != 0)
			output_remove_on_failure(outs[k]);
	return ARGS_OK;
}

/* Runs the job; returns the exit status. */
static int run(Job *j)
{
	Compiler *cc = j->cc;
	Loc none = {0};

	/* Which passes run: through the emit kind's last pass (the front end
	 * with -fsyntax-only, the parser with -M), and at least through any
	 * pass to be dumped. */
	int last = NPASSES - 1;
	if (j->deps_only)
		last = pass_index("parse");
	else if (j->syntax_only)
		last = pass_index(LAST_FRONTEND_PASS);
	else if (j->emit->last_pass)
		last = pass_index(j->emit->last_pass);
	PKC_ASSERT(last >= 0);
	for (int k = last + 1; k < NPASSES; k++)
		if (j->dump_after[k])
			last = k;

	j->cg.emit = strcmp(j->emit->name, "llvm") == 0 ? CG_EMIT_LLVM
	             : strcmp(j->emit->name, "asm") == 0 ? CG_EMIT_ASM : CG_EMIT_OBJ;
	j->gpu_emit = strcmp(j->emit->name, "ptx") == 0     ? GPU_EMIT_PTX
	              : strcmp(j->emit->name, "cubin") == 0 ? GPU_EMIT_CUBIN
	              : strcmp(j->emit->name, "nvvm") == 0  ? GPU_EMIT_NVVM
	                                                    : GPU_EMIT_IMAGES;
	j->mosaic = strcmp(j->emit->name, "mlirbc") == 0            ? MOSAIC_EMIT_MLIRBC
	            : strcmp(j->emit->name, "tpu-custom-call") == 0 ? MOSAIC_EMIT_CUSTOM_CALL
	                                                           : MOSAIC_EMIT_MLIR;
	int status = plan_outputs(j);
	if (status != ARGS_OK)
		return status;

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

	if (!j->syntax_only && !j->deps_only) {
		if (!j->emit->write) {
			error_at(cc, none, "--emit=%s: %s is not implemented yet", j->emit->name, j->emit->what);
			return EXIT_INPUT;
		}
		double t0 = time_ms();
		if (!write_job_output(j, j->output, false, j->emit->write))
			return EXIT_INPUT;
		if (j->header_path && !write_job_output(j, j->header_path, true, write_header))
			return EXIT_INPUT;
		time_note(cc, t0, "writing the output");
	}
	if (j->depfile && !write_job_output(j, j->depfile_path, false, write_depfile))
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
	 * the option is on the command line (a bad value is reported later). */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const Option *o = find_option(argv[i]);
		if (o && o->handle == opt_diagnostics_format) {
			const char *f = argv[i] + strlen(o->name);
			cc.diag.format = strcmp(f, "json") == 0 ? DIAG_JSON : strcmp(f, "text") == 0 ? DIAG_TEXT : cc.diag.format;
		}
	}

	output_init();
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
		output_succeeded();
	output_cleanup();
	codegen_output_free(&job.code);
	gpu_output_free(&job.gpu);
	compiler_free(&cc);
	return status;
}
