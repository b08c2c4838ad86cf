/* codegen.h - the host back end: tiled IR -> LLVM -> object code
 * (codegen_llvm_host.c, with the helpers of llvm/), and the C header
 * that declares the generated launch functions (header.c).
 * host/HOST-DESIGN.md describes the generated code. */
#ifndef PKC_CODEGEN_H
#define PKC_CODEGEN_H

#include "ir.h"

/* What codegen_host produces. */
typedef enum CodegenEmit {
	CG_EMIT_OBJ,  /* an ELF relocatable object (x86-64, PIC) */
	CG_EMIT_LLVM, /* the optimised LLVM module as text (.ll) */
	CG_EMIT_ASM   /* assembly text (.s) */
} CodegenEmit;

struct GpuOutput;

typedef struct CodegenOptions {
	int opt_level;   /* 0..3: -O0..-O3 (LLVM pass pipeline and code generator) */
	const char *cpu; /* -march=CPU; NULL = "x86-64"; "native" = the host's CPU and features */
	CodegenEmit emit;/* output kind */
	struct GpuOutput *gpu;       /* GPU targets (gpu.h): their images go into the object and each
	                                launch function launches them on CUDA streams; NULL: none.
	                                Its cubins may still be under way (gpu_output_wait). */
	bool no_host_variant;        /* no host target: launch functions only launch on GPUs */
} CodegenOptions;

/* Compiles every kernel of m (which must be tiled: after lower-refs and
 * tile-host) into one LLVM module and emits it as opt->emit says.  IR the
 * back end cannot handle is reported with error_at; LLVM failures (module
 * verification, emission) are internal errors (exit 70).  Returns false,
 * with out untouched, if an error was reported.  The output is a function of
 * the IR and the options only: compiling twice gives identical bytes. */
bool codegen_host(Compiler *cc, IrModule *m, const CodegenOptions *opt, CodegenOutput *out);
/* LLVM's x86 target, once (codegen_host calls it; the driver before a
 * thread of the CUDA back end runs LLVM beside it). */
void codegen_host_init(void);

/* Writes the C header declaring one launch function per kernel of m.
 * header_path is the header's own path (it names the include guard);
 * m->source, as given on the command line, is named in the banner.  Works
 * on the IR after sema or any later pass.  Returns false (after error_at)
 * for a kernel the header cannot declare (a name that is a C keyword). */
bool header_generate(Compiler *cc, const IrModule *m, const char *header_path, CodegenOutput *out);

/* Whether -march=CPU names an x86-64 processor LLVM knows ("native": the
 * host's). */
bool codegen_cpu_valid(const char *cpu);

/* ---- source text of kernel clauses (header.c) ------------------------------ */

/* The clauses of a kernel as written in the source, each a single line with
 * comments removed and runs of white space collapsed (arena strings; NULL
 * when the clause is absent or the source is not available). */
typedef struct KernelClauses {
	const char *grid;       /* "grid(cdiv(n, BLOCK))" */
	const char *semantics;  /* "semantics(parallel, arbitrary)" */
	const char **specs;     /* "spec x: [BLOCK] (i) -> (i)", in source order */
	int nspecs;
	const char **scratch;   /* "scratch acc: f32[BM, BN]" */
	int nscratch;
	const char *params;     /* "params(num_warps = 4)" */
	const char **requires;  /* the constraint text after 'requires': "n % 16 == 0" */
	Loc *require_locs;      /* where each constraint starts */
	const char **require_spans; /* source span of requires clause i: [spans[2i], spans[2i+1]) */
	int nrequires;
} KernelClauses;

/* Scans the kernel's header in its source file (found through k->loc). */
KernelClauses *kernel_clauses(Compiler *cc, const IrKernel *k);

/* The source text of requires constraint `index` of k (for the launch
 * stub's message): the matching clause of kernel_clauses, else the text at
 * k->require_locs[index], else "constraint <index+1>". */
const char *requires_text(Compiler *cc, const IrKernel *k, const KernelClauses *kc, int index);

#endif
