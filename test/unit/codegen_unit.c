/* codegen_unit.c - unit tests of the host back end (codegen_llvm_host.c,
 * llvm_*.c, header.c) on tiled IR built by hand: forms the front end
 * rarely produces (WHILE and IF with results, a FOR counting down, large
 * per-program buffers on the heap, atomics on a local buffer) and IR the
 * back end must refuse with a located error rather than crash.
 *
 *   make && cc -std=c11 -D_DEFAULT_SOURCE -Icompiler test/unit/codegen_unit.c \
 *      $(ls build/obj/[a-z]*.o build/obj/gen/[a-z]*.o | grep -v /main.o) \
 *      $(/usr/lib/llvm-22/bin/llvm-config --ldflags --libs) -lm -o build/codegen_unit
 *   build/codegen_unit
 *
 * Prints "codegen_unit: N checks passed" and exits non-zero on a failure. */
#include "codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int npass, nfail;

#define EXPECT(cond, ...)                                                   \
	do {                                                                \
		if (cond) {                                                 \
			npass++;                                            \
		} else {                                                    \
			nfail++;                                            \
			fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
		}                                                           \
	} while (0)

static Compiler CC;
static Arena *A;
static const Loc L0 = {"unit.pk", 1, 1, 1};

static Type *S(DType dt) { return type_scalar(A, dt); }

/* A kernel shell: one `out f32[n]` operand o, one i32 scalar s, size n;
 * grid (n) from a region; body args o, s, n.  Marked lowered and tiled. */
static IrKernel *shell(const char *name)
{
	IrKernel *k = arena_alloc(A, sizeof *k);
	k->name = name;
	k->loc = L0;
	IrOperand *o = arena_alloc(A, sizeof *o);
	o->name = "o";
	o->loc = L0;
	o->mode = PM_OUT;
	int64_t dyn = DIM_DYNAMIC;
	const char *sym = "n";
	o->array = type_ref(A, DT_F32, 1, &dyn, &sym, SPACE_GLOBAL);
	k->operands = arena_alloc(A, sizeof *k->operands);
	k->operands[0] = o;
	k->noperands = 1;
	IrScalar *s = arena_alloc(A, sizeof *s);
	s->name = "s";
	s->loc = L0;
	s->dtype = DT_I32;
	k->scalars = arena_alloc(A, sizeof *k->scalars);
	k->scalars[0] = s;
	k->nscalars = 1;
	k->sizes = arena_alloc(A, sizeof *k->sizes);
	k->sizes[0] = "n";
	k->size_locs = arena_alloc(A, sizeof *k->size_locs);
	k->size_locs[0] = L0;
	k->nsizes = 1;
	static KParamKind order[3] = {KP_OPERAND, KP_SCALAR, KP_SIZE};
	static int order_index[3] = {0, 0, 0};
	k->order = order;
	k->order_index = order_index;
	k->norder = 3;
	k->ngrid = 1;
	static AxisSemantics par[1] = {AXIS_PARALLEL};
	k->semantics = par;
	Type *gargs[2] = {S(DT_I64), S(DT_I32)};
	k->grid = ir_region_new(A, k, 2, gargs);
	ir_yield(A, k, k->grid, L0, 1, &k->grid->args[0]);
	Type *bargs[3] = {o->array, S(DT_I32), S(DT_I64)};
	k->body = ir_region_new(A, k, 3, bargs);
	k->num_warps = 4;
	k->num_stages = 1;
	k->refs_lowered = true;
	k->tiled = true;
	return k;
}

static Value *bin(IrKernel *k, Region *r, Op op, Value *a, Value *b, DType rt)
{
	Value *args[2] = {a, b};
	return ir_emit(A, k, r, op, L0, 2, args, S(rt))->results[0];
}

static Value *alloc(IrKernel *k, Region *r, DType dt, int rank, const int64_t *dims)
{
	return ir_emit(A, k, r, IR_ALLOC, L0, 0, NULL, type_ref(A, dt, rank, dims, NULL, SPACE_LOCAL))->results[0];
}

/* A point access: ref[idx...] (LOAD when v is NULL, else STORE of v). */
static Value *access(IrKernel *k, Region *r, Value *ref, int n, Value **idx, Value *v, DType dt)
{
	Value *args[8];
	args[0] = ref;
	for (int i = 0; i < n; i++)
		args[1 + i] = idx[i];
	if (v)
		args[1 + n] = v;
	Inst *i = ir_emit(A, k, r, v ? IR_STORE : IR_LOAD, L0, 1 + n + (v != NULL), args, v ? NULL : S(dt));
	Indexer pts[4];
	for (int d = 0; d < n; d++)
		pts[d] = (Indexer){.kind = IDX_POINT};
	ir_set_indexers(A, i, n, pts);
	return v ? NULL : i->results[0];
}

/* Compiles m to LLVM IR text at -O0; NULL when codegen refused it.  The
 * diagnostics go to *diags. */
static char *compile(IrModule *m, char **diags)
{
	size_t dlen = 0;
	FILE *ds = open_memstream(diags, &dlen);
	CC.diag.stream = ds;
	CC.diag.nerrors = 0;
	CodegenOptions opt = {.opt_level = 0, .emit = CG_EMIT_LLVM};
	CodegenOutput out = {0};
	bool ok = codegen_host(&CC, m, &opt, &out);
	fclose(ds);
	CC.diag.stream = stderr;
	return ok ? out.data : NULL;
}

static IrModule *module1(IrKernel *k)
{
	IrModule *m = arena_alloc(A, sizeof *m);
	m->source = "unit.pk";
	m->kernels = arena_alloc(A, sizeof *m->kernels);
	m->kernels[0] = k;
	m->nkernels = 1;
	return m;
}

/* WHILE and IF with results, a FOR counting down, 512 KiB of buffers (on
 * the heap), an atomic on a local buffer. */
static void test_control_flow_and_buffers(void)
{
	IrKernel *k = shell("cf");
	Region *b = k->body;
	Value *o = b->args[0], *s = b->args[1];
	int64_t big_dims[2] = {128, 1024}, small_dims[1] = {16};
	Value *big = alloc(k, b, DT_F32, 2, big_dims);
	Value *small = alloc(k, b, DT_I32, 1, small_dims);

	/* w = s; while w < 100: w = w * 2 */
	Inst *wh = ir_inst_new(A, k, IR_WHILE, L0, 1, &s, 1, (Type *[]){S(DT_I32)});
	ir_append(b, wh);
	Region *cond = ir_add_region(A, k, wh, 1, (Type *[]){S(DT_I32)});
	Region *body = ir_add_region(A, k, wh, 1, (Type *[]){S(DT_I32)});
	Value *c100 = ir_const_int(A, k, cond, L0, S(DT_I32), 100);
	Value *lt = bin(k, cond, IR_LT, cond->args[0], c100, DT_BOOL);
	ir_yield(A, k, cond, L0, 1, &lt);
	Value *two = ir_const_int(A, k, body, L0, S(DT_I32), 2);
	Value *dbl = bin(k, body, IR_MUL, body->args[0], two, DT_I32);
	ir_yield(A, k, body, L0, 1, &dbl);
	Value *w = wh->results[0];

	/* f = w > 50 ? 1.0 : 2.0 (an IF with a result) */
	Value *c50 = ir_const_int(A, k, b, L0, S(DT_I32), 50);
	Value *gt = bin(k, b, IR_GT, w, c50, DT_BOOL);
	Inst *iff = ir_inst_new(A, k, IR_IF, L0, 1, &gt, 1, (Type *[]){S(DT_F32)});
	ir_append(b, iff);
	Region *th = ir_add_region(A, k, iff, 0, NULL), *el = ir_add_region(A, k, iff, 0, NULL);
	Value *one = ir_const_float(A, k, th, L0, S(DT_F32), 1.0);
	ir_yield(A, k, th, L0, 1, &one);
	Value *twof = ir_const_float(A, k, el, L0, S(DT_F32), 2.0);
	ir_yield(A, k, el, L0, 1, &twof);

	/* for i in range(10, 0, -2): small[i] = i */
	Value *lo = ir_const_int(A, k, b, L0, S(DT_I32), 10);
	Value *hi = ir_const_int(A, k, b, L0, S(DT_I32), 0);
	Value *st = ir_const_int(A, k, b, L0, S(DT_I32), -2);
	Inst *fo = ir_inst_new(A, k, IR_FOR, L0, 3, (Value *[]){lo, hi, st}, 0, NULL);
	ir_append(b, fo);
	Region *fb = ir_add_region(A, k, fo, 1, (Type *[]){S(DT_I32)});
	access(k, fb, small, 1, &fb->args[0], fb->args[0], DT_I32);
	ir_yield(A, k, fb, L0, 0, NULL);

	/* big[0, 0] = f; o[0] = big[0, 0]; atomic_add(small[0], 1) */
	Value *z = ir_const_int(A, k, b, L0, S(DT_I64), 0);
	access(k, b, big, 2, (Value *[]){z, z}, iff->results[0], DT_F32);
	Value *ld = access(k, b, big, 2, (Value *[]){z, z}, NULL, DT_F32);
	access(k, b, o, 1, &z, ld, DT_F32);
	Value *onei = ir_const_int(A, k, b, L0, S(DT_I32), 1);
	Inst *at = ir_emit(A, k, b, IR_ATOMIC, L0, 3, (Value *[]){small, z, onei}, S(DT_I32));
	at->ival = ATOMIC_ADD;
	ir_set_indexers(A, at, 1, (Indexer[]){{.kind = IDX_POINT}});
	ir_yield(A, k, b, L0, 0, NULL);

	IrModule *m = module1(k);
	EXPECT(ir_verify(m, "unit"), "hand-built kernel does not verify");
	char *diags = NULL;
	char *ll = compile(m, &diags);
	EXPECT(ll != NULL, "codegen failed: %s", diags);
	if (!ll)
		return;
	EXPECT(strstr(ll, "define internal void @cf.program(ptr noalias readonly %args"), "no program function");
	EXPECT(strstr(ll, "call ptr @aligned_alloc(i64 64, i64 524352)"), "512 KiB of buffers not on the heap");
	EXPECT(strstr(ll, "call void @abort()"), "no out-of-memory check");
	EXPECT(strstr(ll, "call void @free(ptr"), "heap buffers not freed");
	/* No alloca in the program function (the launch stub has its own). */
	char *prog = strstr(ll, "define internal void @cf.program"), *end = prog ? strstr(prog, "\n}\n") : NULL;
	if (end)
		*end = '\0';
	EXPECT(prog && end && !strstr(prog, "alloca"), "buffers on the stack although too big");
	if (end)
		*end = '\n';
	EXPECT(strstr(ll, "while.cond:") && strstr(ll, "while.body:") && strstr(ll, "while.exit:"), "no while loop");
	EXPECT(strstr(ll, "phi float [ 1.000000e+00, %if.then ], [ 2.000000e+00, %if.else ]"), "no if result phi");
	/* range(10, 0, -2) has 5 iterations (constants fold: the count is 5). */
	EXPECT(strstr(ll, "icmp ult i64 %c, 5"), "wrong trip count for the for loop");
	EXPECT(strstr(ll, "atomicrmw add ptr"), "no atomic on the local buffer");
	EXPECT(strstr(ll, "define i32 @cf(ptr %stream, ptr %o, i32 %s, i64 %n)"), "bad launch stub signature");
	free(ll);
	free(diags);
}

/* Buffers within 256 KiB are one 64-byte-aligned alloca. */
static void test_stack_buffers(void)
{
	IrKernel *k = shell("stack");
	Region *b = k->body;
	int64_t dims[2] = {8, 100};
	Value *buf = alloc(k, b, DT_BOOL, 2, dims); /* bool: 1 byte each -> 800 -> 832 */
	Value *z = ir_const_int(A, k, b, L0, S(DT_I64), 0);
	Value *t = ir_const_int(A, k, b, L0, S(DT_BOOL), 1);
	access(k, b, buf, 2, (Value *[]){z, z}, t, DT_BOOL);
	ir_yield(A, k, b, L0, 0, NULL);
	char *diags = NULL;
	char *ll = compile(module1(k), &diags);
	EXPECT(ll && strstr(ll, "alloca [832 x i8], align 64"), "no aligned stack buffer:\n%s", ll ? ll : diags);
	EXPECT(ll && strstr(ll, "store i8 1, ptr"), "bool not stored as i8");
	EXPECT(ll && !strstr(ll, "aligned_alloc"), "small buffers on the heap");
	free(ll);
	free(diags);
}

/* IR the back end must refuse with an error at the instruction. */
static void test_errors(void)
{
	char *diags = NULL;

	/* program_id in the grid clause */
	IrKernel *k = shell("badgrid");
	Region *g = ir_region_new(A, k, 2, (Type *[]){S(DT_I64), S(DT_I32)});
	Loc here = {"unit.pk", 7, 3, 2};
	Inst *pid = ir_emit(A, k, g, IR_PROGRAM_ID, here, 0, NULL, S(DT_I32));
	Value *c = ir_emit(A, k, g, IR_CAST, L0, 1, &pid->results[0], S(DT_I64))->results[0];
	ir_yield(A, k, g, L0, 1, &c);
	k->grid = g;
	ir_yield(A, k, k->body, L0, 0, NULL);
	EXPECT(compile(module1(k), &diags) == NULL, "program_id in the grid accepted");
	EXPECT(diags && strstr(diags, "unit.pk:7:3: error: badgrid: program_id cannot be used in the grid clause"),
	       "wrong diagnostic: %s", diags);
	free(diags);

	/* a tensor op that tile-host should have removed */
	k = shell("untiled");
	int64_t d4[1] = {4};
	Loc there = {"unit.pk", 9, 5, 3};
	ir_emit(A, k, k->body, IR_IOTA, there, 0, NULL, type_tensor(A, DT_I32, 1, d4));
	ir_yield(A, k, k->body, L0, 0, NULL);
	EXPECT(compile(module1(k), &diags) == NULL, "a tensor value accepted");
	EXPECT(diags && strstr(diags, "unit.pk:9:5: error: untiled: a non-scalar value reached the host back end"),
	       "wrong diagnostic: %s", diags);
	free(diags);

	/* a kernel tile-host did not run on */
	k = shell("raw");
	k->tiled = false;
	ir_yield(A, k, k->body, L0, 0, NULL);
	EXPECT(compile(module1(k), &diags) == NULL, "an untiled kernel accepted");
	EXPECT(diags && strstr(diags, "needs tiled IR"), "wrong diagnostic: %s", diags);
	free(diags);
}

/* The header of the cf kernel compiles and names the source. */
static void test_header(void)
{
	IrKernel *k = shell("hdr");
	ir_yield(A, k, k->body, L0, 0, NULL);
	CodegenOutput h = {0};
	EXPECT(header_generate(&CC, module1(k), "out/hdr-api.h", &h), "header_generate failed");
	EXPECT(h.data && strstr(h.data, "from unit.pk.  DO NOT EDIT"), "no banner");
	EXPECT(h.data && strstr(h.data, "#ifndef HDR_API_H"), "bad guard");
	EXPECT(h.data && strstr(h.data, "pk_status hdr(pk_stream *stream, float *o, int32_t s, int64_t n);"),
	       "bad prototype:\n%s", h.data);
	codegen_output_free(&h);
}

int main(void)
{
	compiler_init(&CC);
	A = CC.arena;
	test_control_flow_and_buffers();
	test_stack_buffers();
	test_errors();
	test_header();
	compiler_free(&CC);
	if (nfail) {
		fprintf(stderr, "codegen_unit: %d of %d checks FAILED\n", nfail, npass + nfail);
		return 1;
	}
	printf("codegen_unit: %d checks passed\n", npass);
	return 0;
}
