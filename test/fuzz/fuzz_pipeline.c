/* fuzz_pipeline.c - libFuzzer target for the whole pipeline: every input
 * that passes the front end goes through the passes and back ends pkc runs
 * for one of
 *
 *   --target=host                 lower-refs -> tile-host -> llvm-host
 *   --target=host,sm_XX --ptxas=none
 *                                 lower-refs -> nvptx (PTX, no ptxas)
 *                                 -> tile-host -> llvm-host (fat object)
 *   --target=sm_90a --ptxas=none  the same without the host variant
 *
 * and then, from a second front-end run, --target=mosaic-tpu (the Mosaic
 * MLIR of the IR after sema).  It calls the entry points of main.c's pass
 * table in that table's order, with the verifier after every pass, and
 * also builds the C header; outputs stay in memory.  Built by `make fuzz`
 * with -fsanitize=fuzzer,address,undefined; the Mosaic sources are linked
 * in directly (with MLIR) instead of being dlopened as the plugin.
 *
 * The input is a .pk file.  Its -D options come from the text itself: each
 * "-DNAME=VALUE" or "-D NAME=VALUE" in it (a test's RUN line, say) is a -D
 * of the compilation; for Mosaic, a size symbol still without one gets
 * -D NAME=128.  The targets and the -O level (0 or 1) follow a hash of the
 * input, so a finding reproduces from its file alone; test/fuzz/replay.py
 * runs a file through pkc on every target the same way.
 *
 * Inputs the front end rejects are kept out of the corpus (the -1 of
 * LLVMFuzzerTestOneInput), so that mutations start from valid programs;
 * fuzz_frontend explores the front end's error paths.
 *
 * A finding is a crash, a sanitizer report, a leak, a timeout, or an exit
 * (internal_error, exit 70: a pkc bug). */
#include "pkc.h"
#include "ast.h"
#include "ir.h"
#include "front.h"
#include "passes.h"
#include "codegen.h"
#include "codegen_mosaic.h"
#include "gpu.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	MAX_INPUT = 16384,     /* longer inputs are skipped: bounded work per input */
	MAX_DEFINES = 16,      /* -D options taken from the text */
	MAX_DEFINE_VALUE = 40, /* characters of one -D value */
};
#define SIZE_DEFAULT "128"

static bool ident_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

static Define *find_define(Compiler *cc, const char *name)
{
	for (int i = 0; i < cc->defines.len; i++) {
		Define *d = cc->defines.items[i];
		if (d->name == name)
			return d;
	}
	return NULL;
}

/* -D NAME=VALUE; a later one of the same name wins, as in pkc. */
static void define(Compiler *cc, const char *name, const char *value, size_t vn)
{
	Define *d = find_define(cc, name);
	if (!d) {
		d = arena_alloc(cc->arena, sizeof *d);
		d->name = name;
		vec_push(cc->arena, &cc->defines, d);
	}
	d->value = arena_strndup(cc->arena, value, vn);
}

/* Every "-DNAME=VALUE" / "-D NAME=VALUE" of the text; VALUE runs to the
 * next white space, at most MAX_DEFINE_VALUE characters. */
static void scan_defines(Compiler *cc, const char *s, size_t size)
{
	for (size_t i = 0; i + 2 < size && cc->defines.len < MAX_DEFINES; i++) {
		if (s[i] != '-' || s[i + 1] != 'D')
			continue;
		size_t p = i + 2;
		if (s[p] == ' ')
			p++;
		size_t name = p;
		while (p < size && ident_char(s[p], p == name))
			p++;
		if (p == name || p >= size || s[p] != '=')
			continue;
		size_t value = ++p;
		while (p < size && p - value < MAX_DEFINE_VALUE && (unsigned char)s[p] > ' ' && s[p] != 0x7f)
			p++;
		if (p > value)
			define(cc, intern(cc->strings, s + name, value - 1 - name), s + value, p - value);
	}
}

/* ---- the pipeline ---------------------------------------------------------------- */

/* What main.c's run loop does after each pass: stop at reported errors; a
 * pass that failed silently, or IR that does not verify, is a pkc bug. */
static bool after(Compiler *cc, bool ok, const IrModule *m, const char *pass)
{
	if (cc->diag.nerrors > 0)
		return false;
	if (!ok)
		internal_error("pass '%s' failed without reporting an error", pass);
	if (m && !ir_verify(m, pass))
		internal_error("fuzz: the IR after %s does not verify", pass);
	return true;
}

/* parse and sema, diagnostics counted but not printed; NULL after errors. */
static IrModule *front_end(Compiler *cc, const uint8_t *data, size_t size)
{
	cc->diag.stream = NULL;
	scan_defines(cc, (const char *)data, size);
	Source *src = source_from_memory(cc, "fuzz.pk", (const char *)data, size);
	AstFile *ast = parse_file(cc, src);
	if (!after(cc, ast != NULL, NULL, "parse"))
		return NULL;
	IrModule *m = sema_file(cc, ast);
	return after(cc, m != NULL, m, "sema") ? m : NULL;
}

/* --target=host[,sm_XX] or sm_90a, by the hash h.  Returns whether the
 * front end accepted the input. */
static bool compile_host_cuda(const uint8_t *data, size_t size, unsigned h)
{
	/* GPU targets for 7 inputs in 8 (the 8th: the host-only object) */
	static const char *const gpu_sets[8][2] = {
		{NULL}, {"sm_80"}, {"sm_80"}, {"sm_90a"}, {"sm_90a"}, {"sm_90a"}, {"sm_86", "sm_90a"}, {"sm_86", "sm_90a"},
	};
	const char *const *set = gpu_sets[h % 8];
	const GpuTarget *gpus[2];
	int ngpu = 0;
	for (int i = 0; i < 2 && set[i]; i++)
		gpus[ngpu++] = gpu_target_find(set[i]);
	bool host = (h >> 3) % 8 != 0; /* 1 in 8 with GPU targets only */
	int olev = (h >> 6) % 4 == 0;  /* -O1 for 1 in 4, else -O0 */
	if (!host && !ngpu)
		host = true;

	Compiler cc;
	compiler_init(&cc);
	GpuOutput gpu = {0};
	CodegenOutput obj = {0}, header = {0};
	IrModule *m = front_end(&cc, data, size);
	bool accepted = m != NULL;
	if (m && after(&cc, pass_lower_refs(&cc, m), m, "lower-refs")) {
		/* --resource-usage for 1 in 4: the dot notes, and images made without the thread. */
		GpuOptions go = {.targets = gpus, .ntargets = ngpu, .opt_level = olev, .ptxas = "none",
		                 .emit = GPU_EMIT_IMAGES, .resource_usage = (h >> 8) % 4 == 0};
		if ((!ngpu || after(&cc, codegen_nvptx(&cc, m, &go, &gpu), m, "nvptx")) &&
		    after(&cc, pass_tile_host(&cc, m), m, "tile-host")) {
			CodegenOptions cg = {.opt_level = olev, .emit = CG_EMIT_OBJ, .gpu = ngpu ? &gpu : NULL,
			                     .no_host_variant = !host};
			if (after(&cc, codegen_host(&cc, m, &cg, &obj), m, "llvm-host"))
				after(&cc, header_generate(&cc, m, "fuzz.h", &header), NULL, "header");
		}
	}
	codegen_output_free(&header);
	codegen_output_free(&obj);
	gpu_output_free(&gpu);
	compiler_free(&cc);
	return accepted;
}

/* --target=mosaic-tpu with every size defined; the output kind by h. */
static void compile_mosaic(const uint8_t *data, size_t size, unsigned h)
{
	Compiler cc;
	compiler_init(&cc);
	IrModule *m = front_end(&cc, data, size);
	if (m) {
		for (int i = 0; i < m->nkernels; i++)
			for (int s = 0; s < m->kernels[i]->nsizes; s++)
				if (!find_define(&cc, m->kernels[i]->sizes[s]))
					define(&cc, m->kernels[i]->sizes[s], SIZE_DEFAULT, strlen(SIZE_DEFAULT));
		static const MosaicEmit kinds[4] = {MOSAIC_EMIT_MLIR, MOSAIC_EMIT_MLIR, MOSAIC_EMIT_MLIRBC,
		                                    MOSAIC_EMIT_CUSTOM_CALL};
		CodegenOutput out = {0};
		after(&cc, codegen_mosaic(&cc, m, kinds[(h >> 8) % 4], &out), NULL, "mosaic-tpu");
		codegen_output_free(&out);
	}
	compiler_free(&cc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return -1; /* not added to the corpus */
	unsigned h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	if (!compile_host_cuda(data, size, h))
		return -1; /* the front end's errors are fuzz_frontend's: keep the corpus valid */
	compile_mosaic(data, size, h);
	return 0;
}
