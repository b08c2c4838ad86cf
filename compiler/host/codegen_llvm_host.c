/* codegen_llvm_host.c - the host back end: one LLVM module per compilation
 * holding, per kernel,
 *   - the program function  static void <k>.program(void *args,
 *         const int32_t *pid, const int32_t *nprog)
 *     compiled from the kernel's tiled body (llvm_region.c), and
 *   - the exported launch stub  pk_status <k>(pk_stream *s, <params>)
 *     that checks its arguments, evaluates `requires` and the grid, fills
 *     the args struct and calls pk_launch_host (runtime/pk_runtime.h);
 * then the new pass manager's default<On> pipeline, verification, and
 * emission of an object file, assembly or LLVM IR text to memory.
 * host/HOST-DESIGN.md is the design. */
#include "codegen.h"
#include "fatobj.h"
#include "pk_runtime.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host target: x86-64 Linux, position independent so objects link
 * into PIE executables and shared objects alike. */
#define HOST_TRIPLE "x86_64-pc-linux-gnu"
#define DEFAULT_CPU "x86-64"

/* The LLVM type of pk_host_launch below mirrors the C struct: check it. */
#if defined(__x86_64__) && defined(__linux__)
_Static_assert(offsetof(pk_host_launch, ngrid) == 24 && offsetof(pk_host_launch, grid) == 32 &&
               offsetof(pk_host_launch, parallel) == 40 && sizeof(pk_host_launch) == 48,
               "pk_host_launch layout changed: update launch_struct_type");
#endif

/* ---- target ------------------------------------------------------------------ */

/* x86 processors LLVM 22 knows that can run 64-bit code (llc -mcpu=help,
 * minus the 32-bit-only ones), so a typo in -march= is an error rather
 * than an LLVM warning and a generic processor. */
static const char *const x86_64_cpus[] = {
	"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "generic",
	"alderlake", "amdfam10", "arrowlake", "arrowlake-s", "arrowlake_s", "athlon-fx", "athlon64",
	"athlon64-sse3", "atom", "atom_sse4_2", "atom_sse4_2_movbe", "barcelona", "bdver1", "bdver2", "bdver3",
	"bdver4", "bonnell", "broadwell", "btver1", "btver2", "cannonlake", "cascadelake", "clearwaterforest",
	"cooperlake", "core-avx-i", "core-avx2", "core2", "core_2_duo_sse4_1", "core_2_duo_ssse3",
	"core_2nd_gen_avx", "core_3rd_gen_avx", "core_4th_gen_avx", "core_4th_gen_avx_tsx", "core_5th_gen_avx",
	"core_5th_gen_avx_tsx", "core_aes_pclmulqdq", "core_i7_sse4_2", "corei7", "corei7-avx", "diamondrapids",
	"emeraldrapids", "goldmont", "goldmont-plus", "goldmont_plus", "gracemont", "grandridge", "graniterapids",
	"graniterapids-d", "graniterapids_d", "haswell", "icelake-client", "icelake-server", "icelake_client",
	"icelake_server", "ivybridge", "k8", "k8-sse3", "knl", "knm", "lunarlake", "meteorlake", "mic_avx512",
	"nehalem", "nocona", "novalake", "opteron", "opteron-sse3", "pantherlake", "penryn", "raptorlake",
	"rocketlake", "sandybridge", "sapphirerapids", "sierraforest", "silvermont", "skx", "skylake",
	"skylake-avx512", "skylake_avx512", "slm", "tigerlake", "tremont", "westmere", "wildcatlake", "znver1",
	"znver2", "znver3", "znver4", "znver5",
};

bool codegen_cpu_valid(const char *cpu)
{
	if (strcmp(cpu, "native") == 0)
		return true;
	for (size_t i = 0; i < sizeof x86_64_cpus / sizeof x86_64_cpus[0]; i++)
		if (strcmp(cpu, x86_64_cpus[i]) == 0)
			return true;
	return false;
}

void codegen_host_init(void)
{
	static bool done;
	if (done)
		return;
	LLVMInitializeX86TargetInfo();
	LLVMInitializeX86Target();
	LLVMInitializeX86TargetMC();
	LLVMInitializeX86AsmPrinter();
	cg_llvm_init();
	done = true;
}

static LLVMTargetMachineRef create_target_machine(const CodegenOptions *opt)
{
	char *err = NULL;
	LLVMTargetRef target;
	if (LLVMGetTargetFromTriple(HOST_TRIPLE, &target, &err)) {
		internal_error("LLVM has no x86-64 target: %s", err ? err : "?");
	}
	const char *cpu = opt->cpu ? opt->cpu : DEFAULT_CPU;
	char *host_cpu = NULL, *host_features = NULL;
	const char *features = "";
	if (strcmp(cpu, "native") == 0) {
		host_cpu = LLVMGetHostCPUName();
		host_features = LLVMGetHostCPUFeatures();
		cpu = host_cpu;
		features = host_features;
	}
	LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, HOST_TRIPLE, cpu, features,
	                                                  cg_codegen_level(opt->opt_level), LLVMRelocPIC,
	                                                  LLVMCodeModelDefault);
	if (host_cpu)
		LLVMDisposeMessage(host_cpu);
	if (host_features)
		LLVMDisposeMessage(host_features);
	if (!tm)
		internal_error("cannot create an LLVM target machine for %s", HOST_TRIPLE);
	return tm;
}

/* ---- kernel-level helpers ------------------------------------------------------ */

/* The type of a scalar parameter in the C ABI of the launch stub: bool is
 * i1 (zero-extended), f16/bf16 their uint16_t bit pattern. */
static LLVMTypeRef abi_type(Cg *g, DType dt)
{
	if (dt == DT_F16 || dt == DT_BF16)
		return g->t_i16;
	return cg_type(g, dt);
}

static void param_attr(Cg *g, LLVMValueRef fn, unsigned index, const char *name)
{
	cg_attr(g, fn, index, name, 0);
}

static void fn_attr(Cg *g, LLVMValueRef fn, const char *name, uint64_t val)
{
	cg_attr(g, fn, LLVMAttributeFunctionIndex, name, val);
}

/* The args struct: one field per launch parameter, in launch order (operand
 * pointers, scalars in memory form, sizes as i64). */
static LLVMTypeRef args_struct_type(Cg *g, const IrKernel *k)
{
	LLVMTypeRef *fields = arena_alloc(g->cc->arena, (size_t)(k->norder + 1) * sizeof *fields);
	for (int j = 0; j < k->norder; j++) {
		switch (k->order[j]) {
		case KP_OPERAND: fields[j] = g->t_ptr; break;
		case KP_SCALAR: fields[j] = cg_mem_type(g, k->scalars[k->order_index[j]]->dtype); break;
		case KP_SIZE: fields[j] = g->t_i64; break;
		}
	}
	return LLVMStructTypeInContext(g->ctx, fields, (unsigned)k->norder, 0);
}

/* pk_host_launch (runtime/pk_runtime.h). */
static LLVMTypeRef launch_struct_type(Cg *g)
{
	LLVMTypeRef f[6] = {g->t_ptr, g->t_ptr, g->t_ptr, g->t_i32, g->t_ptr, g->t_ptr};
	return LLVMStructTypeInContext(g->ctx, f, 6, 0);
}

/* Position in k->order of parameter (kind, index). */
static int order_pos(const IrKernel *k, KParamKind kind, int index)
{
	for (int j = 0; j < k->norder; j++)
		if (k->order[j] == kind && k->order_index[j] == index)
			return j;
	internal_error("codegen: kernel %s: launch parameter %d of kind %d is not in the launch order", k->name,
	               index, (int)kind);
}

static CgFn *new_fn(Cg *g, const IrKernel *k, LLVMValueRef fn, const char *where)
{
	CgFn *f = arena_alloc(g->cc->arena, sizeof *f);
	f->g = g;
	f->k = k;
	f->fn = fn;
	f->where = where;
	f->vals = arena_alloc(g->cc->arena, (size_t)(k->nvalues + 1) * sizeof *f->vals);
	f->refs = arena_alloc(g->cc->arena, (size_t)(k->nvalues + 1) * sizeof *f->refs);
	return f;
}

/* ---- the program function --------------------------------------------------------- */

static LLVMValueRef emit_program(Cg *g, const IrKernel *k, LLVMTypeRef args_ty)
{
	LLVMTypeRef params[3] = {g->t_ptr, g->t_ptr, g->t_ptr};
	const char *name = arena_printf(g->cc->arena, "%s.program", k->name);
	LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->t_void, params, 3, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	fn_attr(g, fn, "nounwind", 0);
	fn_attr(g, fn, "uwtable", 2); /* async unwind tables: profilers and debuggers can walk the stack */
	static const char *const pnames[3] = {"args", "pid", "nprog"};
	for (unsigned p = 0; p < 3; p++) {
		LLVMSetValueName2(LLVMGetParam(fn, p), pnames[p], strlen(pnames[p]));
		/* All three are read-only for the whole call and written by no one
		 * else meanwhile. */
		param_attr(g, fn, p + 1, "noalias");
		param_attr(g, fn, p + 1, "readonly");
	}

	CgFn *f = new_fn(g, k, fn, "body");
	f->pid = LLVMGetParam(fn, 1);
	f->nprog = LLVMGetParam(fn, 2);
	LLVMBuilderRef b = g->b;
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));

	const Region *body = k->body;
	int nargs = k->noperands + k->nscalars + k->nsizes;
	if (body->nargs != nargs) {
		error_at(g->cc, k->loc, "%s: the kernel body has %d arguments, expected %d (lower-refs did not run?)",
		         k->name, body->nargs, nargs);
		g->failed = true;
		return NULL;
	}
	LLVMValueRef heap;
	if (!cg_alloc_buffers(f, body, &heap))
		return NULL;

	/* Launch parameters from the args struct. */
	LLVMValueRef argp = LLVMGetParam(fn, 0);
	LLVMValueRef *field = arena_alloc(g->cc->arena, (size_t)(k->norder + 1) * sizeof *field);
	for (int j = 0; j < k->norder; j++) {
		LLVMTypeRef ft = LLVMStructGetTypeAtIndex(args_ty, (unsigned)j);
		LLVMValueRef p = LLVMBuildStructGEP2(b, args_ty, argp, (unsigned)j, "");
		field[j] = LLVMBuildLoad2(b, ft, p, "");
	}
	LLVMValueRef *sizes = arena_alloc(g->cc->arena, (size_t)(k->nsizes + 1) * sizeof *sizes);
	for (int s = 0; s < k->nsizes; s++) {
		sizes[s] = field[order_pos(k, KP_SIZE, s)];
		LLVMSetValueName2(sizes[s], k->sizes[s], strlen(k->sizes[s]));
	}
	LLVMValueRef *args = arena_alloc(g->cc->arena, (size_t)(nargs + 1) * sizeof *args);
	for (int o = 0; o < k->noperands; o++) {
		const Value *v = body->args[o];
		LLVMValueRef base = field[order_pos(k, KP_OPERAND, o)];
		LLVMSetValueName2(base, k->operands[o]->name, strlen(k->operands[o]->name));
		if (v->type->kind != TY_REF) {
			error_at(g->cc, k->operands[o]->loc, "%s: body argument %d is not a Ref", k->name, o);
			g->failed = true;
			return NULL;
		}
		CgRef *r = cg_make_ref(f, v->type, base, sizes, false, k->operands[o]->loc);
		if (!r)
			return NULL;
		f->refs[v->id] = r;
	}
	for (int s = 0; s < k->nscalars; s++) {
		LLVMValueRef x = field[order_pos(k, KP_SCALAR, s)];
		args[k->noperands + s] = cg_from_mem(g, k->scalars[s]->dtype, x);
	}
	for (int s = 0; s < k->nsizes; s++)
		args[k->noperands + k->nscalars + s] = sizes[s];

	LLVMValueRef none[1];
	if (!cg_region(f, body, args, none))
		return NULL;
	cg_free_buffers(f, heap);
	LLVMBuildRetVoid(b);
	return fn;
}

/* ---- the launch stub ------------------------------------------------------------------- */

/* s as literal text in a printf format: '%' doubled. */
static const char *fmt_escape(Arena *a, const char *s)
{
	size_t n = 0;
	for (const char *p = s; *p; p++)
		n += *p == '%' ? 2 : 1;
	char *out = arena_alloc(a, n + 1), *q = out;
	for (const char *p = s; *p; p++) {
		if (*p == '%')
			*q++ = '%';
		*q++ = *p;
	}
	*q = '\0';
	return out;
}

/* Marks in `used` the arguments of region `top` that v depends on. */
static void mark_deps(const Value *v, const Region *top, bool *used, bool *seen)
{
	if (seen[v->id])
		return;
	seen[v->id] = true;
	if (!v->def) {
		if (v->region == top)
			used[v->index] = true;
		return;
	}
	for (int a = 0; a < v->def->nargs; a++)
		mark_deps(v->def->args[a], top, used, seen);
	for (int r = 0; r < v->def->nregions; r++)
		for (const Inst *i = v->def->regions[r]->first; i; i = i->next)
			for (int a = 0; a < i->nargs; a++)
				mark_deps(i->args[a], top, used, seen);
}

/* The message of a failed requires constraint:
 *   "<k>: requires <text> failed (n = 10, eps = 0.5)"
 * naming the sizes and scalars the constraint reads, with their values. */
static const char *requires_message(Cg *g, const IrKernel *k, const KernelClauses *kc, int index,
                                    LLVMValueRef *region_args, LLVMValueRef **vargs, int *nvargs)
{
	Arena *a = g->cc->arena;
	const Region *r = k->requires;
	bool *used = arena_alloc(a, (size_t)(r->nargs + 1) * sizeof *used);
	bool *seen = arena_alloc(a, (size_t)(k->nvalues + 1) * sizeof *seen);
	mark_deps(r->last->args[index], r, used, seen);
	const char *msg = arena_printf(a, "%s: requires %s failed", k->name,
	                               fmt_escape(a, requires_text(g->cc, k, kc, index)));
	LLVMValueRef *vs = arena_alloc(a, (size_t)(r->nargs + 1) * sizeof *vs);
	int n = 0;
	const char *sep = " (";
	for (int j = 0; j < r->nargs; j++) {
		if (!used[j])
			continue;
		LLVMValueRef v = region_args[j];
		const char *name, *conv;
		if (j < k->nsizes) {
			name = k->sizes[j];
			conv = "%lld";
		} else {
			const IrScalar *s = k->scalars[j - k->nsizes];
			name = s->name;
			if (s->dtype == DT_BOOL) {
				conv = "%s";
				v = LLVMBuildSelect(g->b, v, LLVMBuildGlobalString(g->b, "true", ""),
				                    LLVMBuildGlobalString(g->b, "false", ""), "");
			} else if (dtype_is_float(s->dtype)) {
				conv = "%g";
				if (s->dtype != DT_F64)
					v = LLVMBuildFPExt(g->b, v, g->t_f64, "");
			} else {
				bool sg = dtype_is_signed(s->dtype);
				conv = sg ? "%lld" : "%llu";
				if (dtype_bits(s->dtype) < 64)
					v = sg ? LLVMBuildSExt(g->b, v, g->t_i64, "") : LLVMBuildZExt(g->b, v, g->t_i64, "");
			}
		}
		msg = arena_printf(a, "%s%s%s = %s", msg, sep, name, conv);
		sep = ", ";
		vs[n++] = v;
	}
	if (n)
		msg = arena_printf(a, "%s)", msg);
	*vargs = vs;
	*nvargs = n;
	return msg;
}

/* The launch function's prototype: pk_status <k>(pk_stream *s, params in
 * launch order), with the C ABI's attributes; its parameters in *param. */
static LLVMValueRef stub_function(Cg *g, const IrKernel *k, LLVMValueRef **param_out)
{
	Arena *a = g->cc->arena;
	LLVMTypeRef *pt = arena_alloc(a, (size_t)(k->norder + 2) * sizeof *pt);
	pt[0] = g->t_ptr;
	for (int j = 0; j < k->norder; j++) {
		int x = k->order_index[j];
		pt[1 + j] = k->order[j] == KP_OPERAND ? g->t_ptr
		            : k->order[j] == KP_SCALAR ? abi_type(g, k->scalars[x]->dtype) : g->t_i64;
	}
	LLVMValueRef fn = LLVMAddFunction(g->mod, k->name, LLVMFunctionType(g->t_i32, pt, (unsigned)k->norder + 1, 0));
	fn_attr(g, fn, "nounwind", 0);
	fn_attr(g, fn, "uwtable", 2);
	LLVMSetValueName2(LLVMGetParam(fn, 0), "stream", 6);
	LLVMValueRef *param = arena_alloc(a, (size_t)(k->norder + 1) * sizeof *param);
	for (int j = 0; j < k->norder; j++) {
		int x = k->order_index[j];
		param[j] = LLVMGetParam(fn, (unsigned)j + 1);
		const char *name = k->order[j] == KP_OPERAND ? k->operands[x]->name
		                   : k->order[j] == KP_SCALAR ? k->scalars[x]->name : k->sizes[x];
		LLVMSetValueName2(param[j], name, strlen(name));
		if (k->order[j] == KP_SCALAR) {
			/* The C ABI extends small integers to 32 bits in the caller. */
			DType dt = k->scalars[x]->dtype;
			if (dt == DT_BOOL || dtype_is_unsigned(dt) || dt == DT_F16 || dt == DT_BF16) {
				if (dtype_bits(dt) < 32)
					param_attr(g, fn, (unsigned)j + 2, "zeroext");
			} else if (dtype_is_signed(dt) && dtype_bits(dt) < 32) {
				param_attr(g, fn, (unsigned)j + 2, "signext");
			}
		}
	}
	*param_out = param;
	return fn;
}

/* The argument checks (operands not NULL, sizes not negative); returns the
 * arguments of the grid and requires regions: the sizes, then the scalars
 * (in compute form). */
static LLVMValueRef *check_args(Cg *g, const IrKernel *k, LLVMValueRef *param)
{
	Arena *a = g->cc->arena;
	LLVMBuilderRef b = g->b;
	for (int o = 0; o < k->noperands; o++) {
		LLVMValueRef p = param[order_pos(k, KP_OPERAND, o)];
		const char *msg = arena_printf(a, "%s: array argument '%s' is NULL", k->name, k->operands[o]->name);
		cg_fail_if(g, LLVMBuildIsNull(b, p, ""), PK_ERR_INVALID_VALUE, fmt_escape(a, msg), NULL, 0);
	}
	LLVMValueRef *sizes = arena_alloc(a, (size_t)(k->nsizes + 1) * sizeof *sizes);
	for (int s = 0; s < k->nsizes; s++) {
		sizes[s] = param[order_pos(k, KP_SIZE, s)];
		const char *msg = arena_printf(a, "%s: size %s = %%lld is negative", k->name, k->sizes[s]);
		cg_fail_if(g, LLVMBuildICmp(b, LLVMIntSLT, sizes[s], cg_i64(g, 0), ""), PK_ERR_INVALID_VALUE, msg,
		        &sizes[s], 1);
	}
	int nrargs = k->nsizes + k->nscalars;
	LLVMValueRef *rargs = arena_alloc(a, (size_t)(nrargs + 1) * sizeof *rargs);
	for (int s = 0; s < k->nsizes; s++)
		rargs[s] = sizes[s];
	for (int s = 0; s < k->nscalars; s++) {
		LLVMValueRef x = param[order_pos(k, KP_SCALAR, s)];
		DType dt = k->scalars[s]->dtype;
		rargs[k->nsizes + s] = dt == DT_BOOL ? x : cg_from_mem(g, dt, x);
	}
	return rargs;
}

/* Each requires constraint, evaluated from rargs: if false, the launch
 * function returns PK_ERR_SIZE_CONSTRAINT with the constraint's text.
 * false after an error. */
static bool check_requires(CgFn *f, LLVMValueRef *rargs)
{
	Cg *g = f->g;
	const IrKernel *k = f->k;
	Arena *a = g->cc->arena;
	if (!k->requires || k->nrequires == 0)
		return true;
	if (k->requires->nargs != k->nsizes + k->nscalars || !k->requires->last ||
	    k->requires->last->nargs != k->nrequires) {
		error_at(g->cc, k->loc, "%s: malformed requires region", k->name);
		g->failed = true;
		return false;
	}
	f->where = "requires clause";
	KernelClauses *kc = kernel_clauses(g->cc, k);
	LLVMValueRef *ok = arena_alloc(a, (size_t)(k->nrequires + 1) * sizeof *ok);
	if (!cg_region(f, k->requires, rargs, ok))
		return false;
	for (int c = 0; c < k->nrequires; c++) {
		LLVMValueRef *vargs;
		int nvargs;
		const char *msg = requires_message(g, k, kc, c, rargs, &vargs, &nvargs);
		cg_fail_if(g, LLVMBuildNot(g->b, ok[c], ""), PK_ERR_SIZE_CONSTRAINT, msg, vargs, nvargs);
	}
	return true;
}

/* The grid's extents, evaluated from rargs, stored as i64 into grid.
 * false after an error. */
static bool eval_grid(CgFn *f, LLVMValueRef *rargs, LLVMValueRef grid)
{
	Cg *g = f->g;
	const IrKernel *k = f->k;
	if (k->ngrid == 0)
		return true;
	if (!k->grid || k->grid->nargs != k->nsizes + k->nscalars || !k->grid->last ||
	    k->grid->last->nargs != k->ngrid) {
		error_at(g->cc, k->loc, "%s: malformed grid region", k->name);
		g->failed = true;
		return false;
	}
	f->where = "grid clause";
	LLVMValueRef *ext = arena_alloc(g->cc->arena, (size_t)(k->ngrid + 1) * sizeof *ext);
	if (!cg_region(f, k->grid, rargs, ext))
		return false;
	LLVMTypeRef gt = LLVMArrayType2(g->t_i64, (uint64_t)k->ngrid);
	for (int d = 0; d < k->ngrid; d++) {
		DType dt = k->grid->last->args[d]->type->dtype;
		LLVMValueRef e = cg_cast(g, ext[d], dt, DT_I64);
		LLVMValueRef idx[2] = {cg_i64(g, 0), cg_i64(g, d)};
		LLVMBuildStore(g->b, e, LLVMBuildInBoundsGEP2(g->b, gt, grid, idx, 2, ""));
	}
	return true;
}

/* The host launch: fills the args struct (argbuf) from the parameters and
 * the pk_host_launch (launch) and returns pk_launch_host's status. */
static void host_launch(Cg *g, const IrKernel *k, LLVMValueRef fn, LLVMValueRef *param, LLVMTypeRef args_ty,
                        LLVMValueRef argbuf, LLVMTypeRef launch_ty, LLVMValueRef launch, LLVMValueRef program,
                        LLVMValueRef grid)
{
	Arena *a = g->cc->arena;
	LLVMBuilderRef b = g->b;
	for (int j = 0; j < k->norder; j++) {
		LLVMValueRef v = param[j];
		if (k->order[j] == KP_SCALAR && k->scalars[k->order_index[j]]->dtype == DT_BOOL)
			v = LLVMBuildZExt(b, v, g->t_i8, "");
		LLVMBuildStore(b, v, LLVMBuildStructGEP2(b, args_ty, argbuf, (unsigned)j, ""));
	}
	LLVMValueRef parallel = LLVMConstNull(g->t_ptr);
	if (k->ngrid > 0) {
		LLVMValueRef *bits = arena_alloc(a, (size_t)k->ngrid * sizeof *bits);
		for (int d = 0; d < k->ngrid; d++)
			bits[d] = LLVMConstInt(g->t_i8, k->semantics && k->semantics[d] == AXIS_ARBITRARY ? 0 : 1, 0);
		LLVMValueRef init = LLVMConstArray2(g->t_i8, bits, (uint64_t)k->ngrid);
		parallel = LLVMAddGlobal(g->mod, LLVMTypeOf(init), arena_printf(a, "%s.parallel", k->name));
		LLVMSetInitializer(parallel, init);
		LLVMSetGlobalConstant(parallel, 1);
		LLVMSetLinkage(parallel, LLVMPrivateLinkage);
		LLVMSetUnnamedAddress(parallel, LLVMGlobalUnnamedAddr);
	}
	LLVMValueRef fields[6] = {
		LLVMBuildGlobalString(b, k->name, ""), program, argbuf, cg_i32(g, k->ngrid),
		grid ? grid : LLVMConstNull(g->t_ptr), parallel,
	};
	for (unsigned j = 0; j < 6; j++)
		LLVMBuildStore(b, fields[j], LLVMBuildStructGEP2(b, launch_ty, launch, j, ""));
	LLVMValueRef cargs[2] = {LLVMGetParam(fn, 0), launch};
	LLVMTypeRef cparams[2] = {g->t_ptr, g->t_ptr};
	LLVMBuildRet(b, cg_call_extern(g, "pk_launch_host", g->t_i32, cparams, 2, false, cargs, 2));
}

/* The launch function of k: argument checks, requires, the grid, then the
 * CUDA dispatch (with GPU targets) and the host launch of program. */
static LLVMValueRef emit_stub(Cg *g, const IrKernel *k, LLVMTypeRef args_ty, LLVMValueRef program,
                              const CodegenOptions *opt, LLVMValueRef cuda_module, int kidx)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef *param;
	LLVMValueRef fn = stub_function(g, k, &param);
	CgFn *f = new_fn(g, k, fn, "launch function");
	LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));
	LLVMTypeRef launch_ty = launch_struct_type(g);
	LLVMValueRef argbuf = LLVMBuildAlloca(b, args_ty, "args");
	LLVMValueRef launch = LLVMBuildAlloca(b, launch_ty, "launch");
	LLVMValueRef grid = k->ngrid ? LLVMBuildAlloca(b, LLVMArrayType2(g->t_i64, (uint64_t)k->ngrid), "grid") : NULL;

	LLVMValueRef *rargs = check_args(g, k, param);
	if (!check_requires(f, rargs) || !eval_grid(f, rargs, grid))
		return NULL;

	/* GPU variants (nvptx_fatobj.c): a CUDA stream launches the kernel's
	 * cubin; without a host variant, other devices get an error. */
	if (opt->gpu) {
		cg_cuda_dispatch(g, k, &opt->gpu->kernels[kidx], cuda_module, LLVMGetParam(fn, 0), param, grid,
		                 !opt->no_host_variant);
		if (opt->no_host_variant)
			return fn;
	}
	host_launch(g, k, fn, param, args_ty, argbuf, launch_ty, launch, program, grid);
	return fn;
}

/* ---- the module -------------------------------------------------------------------- */

static bool check_kernel(Compiler *cc, const IrKernel *k)
{
	if (!k->refs_lowered || !k->tiled) {
		error_at(cc, k->loc, "%s: the host back end needs tiled IR (lower-refs and tile-host did not run)",
		         k->name);
		return false;
	}
	if (k->ngrid > PK_MAX_GRID) {
		error_at(cc, k->loc, "%s: the grid has %d axes; the host runtime supports at most %d [§5.3]", k->name,
		         k->ngrid, PK_MAX_GRID);
		return false;
	}
	return true;
}

/* The cubins of the ptxas runs still under way. */
static bool wait_for_ptxas(Cg *g, GpuOutput *gpu)
{
	double t0 = time_ms();
	bool ok = gpu_output_wait(g->cc, gpu);
	time_note(g->cc, t0, "host: waiting for ptxas");
	return ok;
}

static void emit_code(Cg *g, LLVMCodeGenFileType ft, CodegenOutput *out)
{
	LLVMMemoryBufferRef buf = NULL;
	char *e = NULL;
	double t0 = time_ms();
	if (LLVMTargetMachineEmitToMemoryBuffer(g->tm, g->mod, ft, &e, &buf))
		internal_error("LLVM code generation failed: %s", e ? e : "?");
	time_note(g->cc, t0, "host: x86 code generation");
	out->size = LLVMGetBufferSize(buf);
	out->data = xmemdup(LLVMGetBufferStart(buf), out->size);
	LLVMDisposeMemoryBuffer(buf);
}

bool codegen_host(Compiler *cc, IrModule *m, const CodegenOptions *opt, CodegenOutput *out)
{
	codegen_host_init();
	int nerr = cc->diag.nerrors;
	bool usable = true;
	for (int i = 0; i < m->nkernels; i++) {
		usable &= check_kernel_name(cc, m->kernels[i]->name, m->kernels[i]->loc);
		usable &= check_kernel(cc, m->kernels[i]);
	}
	if (!usable)
		return false;

	Cg g = {0};
	cg_open(&g, cc, m, HOST_TRIPLE, create_target_machine(opt));
	LLVMTargetMachineRef tm = g.tm;
	LLVMAddModuleFlag(g.mod, LLVMModuleFlagBehaviorError, "PIC Level", 9,
	                  LLVMValueAsMetadata(LLVMConstInt(g.t_i32, 2, 0)));

	LLVMValueRef cuda_module = opt->gpu ? cg_cuda_module(&g, opt->gpu) : NULL;
	for (int i = 0; i < m->nkernels && !g.failed; i++) {
		const IrKernel *k = m->kernels[i];
		LLVMTypeRef args_ty = args_struct_type(&g, k);
		LLVMValueRef program = opt->no_host_variant ? NULL : emit_program(&g, k, args_ty);
		if ((program || opt->no_host_variant) && !g.failed)
			emit_stub(&g, k, args_ty, program, opt, cuda_module, i);
	}

	bool ok = !g.failed && cc->diag.nerrors == nerr;
	if (ok) {
		cg_verify(&g);

		int o = cg_opt_level(opt->opt_level);
		LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
		LLVMPassBuilderOptionsSetLoopVectorization(po, o >= 2);
		LLVMPassBuilderOptionsSetSLPVectorization(po, o >= 2);
		/* No interleaving: tile-host already splits long reductions into 8
		 * independent partial accumulators, which is what interleaving adds;
		 * measured on softmax/layernorm/matmul_tiled/add_vectors it changed no
		 * run time but cost 7 ms of the 54 ms compile (bench/RESULTS.md). */
		LLVMPassBuilderOptionsSetLoopInterleaving(po, 0);
		LLVMPassBuilderOptionsSetLoopUnrolling(po, o >= 2);
		static const char *const pipelines[4] = {"default<O0>", "default<O1>", "default<O2>", "default<O3>"};
		const char *pipeline = pipelines[o];
		double t0 = time_ms();
		LLVMErrorRef err = LLVMRunPasses(g.mod, pipeline, tm, po);
		time_note(cc, t0, "host: LLVM passes");
		LLVMDisposePassBuilderOptions(po);
		if (err) {
			char *e = LLVMGetErrorMessage(err);
			internal_error("LLVM pass pipeline %s failed: %s", pipeline, e);
		}
		/* ptxas ran meanwhile: its cubins now take their places (an
		 * object's code is generated first, and they go into it after). */
		if (opt->gpu && opt->emit != CG_EMIT_OBJ && (ok = wait_for_ptxas(&g, opt->gpu)))
			cg_cuda_images(&g, opt->gpu);
	}
	if (ok) {
		if (opt->emit == CG_EMIT_LLVM) {
			char *text = LLVMPrintModuleToString(g.mod);
			out->size = strlen(text);
			out->data = xmemdup(text, out->size);
			LLVMDisposeMessage(text);
		} else {
			emit_code(&g, opt->emit == CG_EMIT_ASM ? LLVMAssemblyFile : LLVMObjectFile, out);
			if (opt->gpu && opt->emit == CG_EMIT_OBJ) {
				ok = wait_for_ptxas(&g, opt->gpu);
				/* An object laid out otherwise (another ELF writer): the
				 * cubins into the module and its code once more (a correct
				 * object, though code generation has already changed the IR). */
				if (ok && !cg_cuda_splice(&g, opt->gpu, out)) {
					codegen_output_free(out);
					cg_cuda_images(&g, opt->gpu);
					emit_code(&g, LLVMObjectFile, out);
				}
			}
		}
	}

	cg_close(&g);
	return ok;
}
