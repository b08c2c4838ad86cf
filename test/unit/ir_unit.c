/* ir_unit.c - unit tests of types.c, ir.c, irprint.c and verify.c.
 *
 *   cc -std=c11 -D_DEFAULT_SOURCE -Icompiler test/unit/ir_unit.c \
 *      build/obj/{util,types,ir,irprint,verify}.o -lm -o build/ir_unit
 *
 * Checks JAX type promotion against JAX's published table, type text and
 * broadcasting, builds small kernels by hand and compares their printed
 * text with the expected text below (and verifies them), then breaks IR in
 * many ways and checks that ir_verify rejects each with the right message.
 * Prints "ir_unit: N checks passed" and exits non-zero on any failure. */
#include "ir.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static Arena *A;
static const Loc L0 = {"t.pk", 1, 1, 1};

/* ---- type helpers ------------------------------------------------------------ */

static Type *S(DType dt) { return type_scalar(A, dt); }

static Type *vtype(bool ref, DType dt, int rank, va_list ap)
{
	int64_t dims[8];
	for (int i = 0; i < rank; i++)
		dims[i] = va_arg(ap, int64_t);
	return ref ? type_ref(A, dt, rank, dims, NULL, SPACE_GLOBAL) : type_tensor(A, dt, rank, dims);
}

/* T(f32, 2, (int64_t)16, (int64_t)8) is f32[16,8]. */
static Type *T(DType dt, int rank, ...)
{
	va_list ap;
	va_start(ap, rank);
	Type *t = vtype(false, dt, rank, ap);
	va_end(ap);
	return t;
}

static Type *R(DType dt, int rank, ...)
{
	va_list ap;
	va_start(ap, rank);
	Type *t = vtype(true, dt, rank, ap);
	va_end(ap);
	return t;
}

#define D(x) ((int64_t)(x))

/* ---- IR helpers ---------------------------------------------------------------- */

/* Appends op(args...) with one result of type t (none if t is NULL). */
static Inst *emit(IrKernel *k, Region *r, Op op, Type *t, int nargs, ...)
{
	Value *args[8];
	va_list ap;
	va_start(ap, nargs);
	for (int i = 0; i < nargs; i++)
		args[i] = va_arg(ap, Value *);
	va_end(ap);
	return ir_emit(A, k, r, op, L0, nargs, args, t);
}

static Value *emit1(IrKernel *k, Region *r, Op op, Type *t, int nargs, Value *a, Value *b)
{
	return emit(k, r, op, t, nargs, a, b)->results[0];
}

static Value *cint(IrKernel *k, Region *r, DType dt, int64_t v) { return ir_const_int(A, k, r, L0, S(dt), v); }

/* A load/store with the given indexers. */
static Inst *ref_access(IrKernel *k, Region *r, Op op, Type *t, int nidx, const Indexer *idx, int nargs, Value **args)
{
	Inst *i = ir_inst_new(A, k, op, L0, nargs, args, t ? 1 : 0, t ? &t : NULL);
	ir_set_indexers(A, i, nidx, idx);
	ir_append(r, i);
	return i;
}

static const Indexer FULL = {IDX_FULL, 0, false};
static const Indexer POINT = {IDX_POINT, 0, false};

/* A kernel shell: operands/scalars/sizes are added with the helpers
 * below; the launch order is set by finish(). */
static IrKernel *kernel_new(const char *name, int ngrid)
{
	IrKernel *k = arena_alloc(A, sizeof *k);
	k->name = name;
	k->loc = L0;
	k->ngrid = ngrid;
	k->semantics = arena_alloc(A, (size_t)(ngrid + 1) * sizeof *k->semantics);
	k->operands = arena_alloc(A, 8 * sizeof *k->operands);
	k->scalars = arena_alloc(A, 8 * sizeof *k->scalars);
	k->sizes = arena_alloc(A, 8 * sizeof *k->sizes);
	k->scratch = arena_alloc(A, 8 * sizeof *k->scratch);
	k->num_warps = 4;
	k->num_stages = 1;
	return k;
}

static IrOperand *add_operand(IrKernel *k, const char *name, ParamMode mode, Type *array)
{
	IrOperand *o = arena_alloc(A, sizeof *o);
	o->name = name;
	o->mode = mode;
	o->array = array;
	k->operands[k->noperands++] = o;
	return o;
}

static void set_spec(IrKernel *k, IrOperand *o, const int64_t *block, const bool *squeezed)
{
	int rank = o->array->rank;
	o->has_spec = true;
	o->block = arena_alloc(A, (size_t)rank * sizeof *o->block);
	o->squeezed = arena_alloc(A, (size_t)rank * sizeof *o->squeezed);
	memcpy(o->block, block, (size_t)rank * sizeof *o->block);
	if (squeezed)
		memcpy(o->squeezed, squeezed, (size_t)rank * sizeof *o->squeezed);
	Type *pid[4];
	for (int a = 0; a < k->ngrid; a++)
		pid[a] = S(DT_I32);
	o->index_map = ir_region_new(A, k, k->ngrid, pid);
}

static void add_scalar(IrKernel *k, const char *name, DType dt)
{
	IrScalar *s = arena_alloc(A, sizeof *s);
	s->name = name;
	s->dtype = dt;
	k->scalars[k->nscalars++] = s;
}

/* Launch order = operands, scalars, sizes; grid/requires args. */
static void finish_params(IrKernel *k)
{
	int n = k->noperands + k->nscalars + k->nsizes;
	k->order = arena_alloc(A, (size_t)(n + 1) * sizeof *k->order);
	k->order_index = arena_alloc(A, (size_t)(n + 1) * sizeof *k->order_index);
	int j = 0;
	for (int i = 0; i < k->noperands; i++, j++)
		k->order[j] = KP_OPERAND, k->order_index[j] = i;
	for (int i = 0; i < k->nscalars; i++, j++)
		k->order[j] = KP_SCALAR, k->order_index[j] = i;
	for (int i = 0; i < k->nsizes; i++, j++)
		k->order[j] = KP_SIZE, k->order_index[j] = i;
	k->norder = n;
}

/* A region over sizes then scalars (grid, requires). */
static Region *launch_region(IrKernel *k)
{
	Type *t[16];
	int n = 0;
	for (int i = 0; i < k->nsizes; i++)
		t[n++] = S(DT_I64);
	for (int i = 0; i < k->nscalars; i++)
		t[n++] = S(k->scalars[i]->dtype);
	Region *r = ir_region_new(A, k, n, t);
	for (int i = 0; i < k->nsizes; i++)
		r->args[i]->name = k->sizes[i];
	for (int i = 0; i < k->nscalars; i++)
		r->args[k->nsizes + i]->name = k->scalars[i]->name;
	return r;
}

/* Body args per ir.h: block views, scalars, sizes, scratch. */
static Region *body_region(IrKernel *k)
{
	Type *t[32];
	const char *names[32];
	int n = 0;
	for (int i = 0; i < k->noperands; i++) {
		IrOperand *o = k->operands[i];
		if (o->has_spec) {
			int64_t dims[8];
			int r = 0;
			for (int d = 0; d < o->array->rank; d++)
				if (!o->squeezed[d])
					dims[r++] = o->block[d];
			t[n] = type_ref(A, o->array->dtype, r, dims, NULL, SPACE_GLOBAL);
		} else {
			t[n] = o->array;
		}
		names[n++] = o->name;
	}
	for (int i = 0; i < k->nscalars; i++)
		t[n] = S(k->scalars[i]->dtype), names[n++] = k->scalars[i]->name;
	for (int i = 0; i < k->nsizes; i++)
		t[n] = S(DT_I64), names[n++] = k->sizes[i];
	for (int i = 0; i < k->nscratch; i++)
		t[n] = k->scratch[i]->type, names[n++] = k->scratch[i]->name;
	Region *r = ir_region_new(A, k, n, t);
	for (int i = 0; i < n; i++)
		r->args[i]->name = names[i];
	return r;
}

/* Text of ir_print_kernel (malloc'd). */
static char *print_kernel(const IrKernel *k)
{
	FILE *f = tmpfile();
	if (!f) {
		perror("tmpfile");
		exit(2);
	}
	ir_print_kernel(f, k);
	long n = ftell(f);
	rewind(f);
	char *s = xmalloc((size_t)n + 1);
	size_t got = fread(s, 1, (size_t)n, f);
	s[got] = '\0';
	fclose(f);
	return s;
}

static bool verify_kernel_ok(IrKernel *k)
{
	IrModule m = {.source = "t.pk", .kernels = &k, .nkernels = 1};
	return ir_verify(&m, "unit");
}

/* Runs ir_verify with stderr captured; returns its verdict, the message in *msg. */
static bool verify_capture(IrKernel *k, char **msg)
{
	fflush(stderr);
	FILE *f = tmpfile();
	int saved = dup(2);
	dup2(fileno(f), 2);
	bool ok = verify_kernel_ok(k);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	long n = ftell(f);
	rewind(f);
	*msg = xmalloc((size_t)n + 1);
	size_t got = fread(*msg, 1, (size_t)n, f);
	(*msg)[got] = '\0';
	fclose(f);
	return ok;
}

static void expect_text(const IrKernel *k, const char *want, const char *what)
{
	char *got = print_kernel(k);
	EXPECT(strcmp(got, want) == 0, "%s: printed IR differs.\n--- got:\n%s--- want:\n%s", what, got, want);
	/* Printing is deterministic. */
	char *again = print_kernel(k);
	EXPECT(strcmp(got, again) == 0, "%s: printing twice differs", what);
	free(again);
	free(got);
}

/* ---- promotion ------------------------------------------------------------------- */

typedef struct PromoCase {
	DType a;
	bool aw;
	DType b;
	bool bw;
	DType want;
	bool want_weak;
} PromoCase;

#define W true
#define C false
/* From JAX's type promotion table (jax.numpy.promote_types and the "Type
 * promotion semantics" page; i* / f* are weak int / weak float). */
static const PromoCase promo_cases[] = {
	{DT_BOOL, C, DT_BOOL, C, DT_BOOL, C},
	{DT_I8, C, DT_U8, C, DT_I16, C},
	{DT_U8, C, DT_I8, C, DT_I16, C},
	{DT_U16, C, DT_I16, C, DT_I32, C},
	{DT_U32, C, DT_I32, C, DT_I64, C},
	{DT_U32, C, DT_I8, C, DT_I64, C},
	{DT_U8, C, DT_U32, C, DT_U32, C},
	{DT_I8, C, DT_I64, C, DT_I64, C},
	{DT_U64, C, DT_I8, C, DT_F64, W}, /* JAX x64: u64 with any signed int -> weak float64 */
	{DT_I64, C, DT_U64, C, DT_F64, W}, /* our documented choice: f64, weak like JAX's f* */
	{DT_F16, C, DT_BF16, C, DT_F32, C},
	{DT_BF16, C, DT_F16, C, DT_F32, C},
	{DT_I32, C, DT_F16, C, DT_F16, C},
	{DT_I64, C, DT_BF16, C, DT_BF16, C},
	{DT_U8, C, DT_F16, C, DT_F16, C},
	{DT_F16, C, DT_F64, C, DT_F64, C},
	{DT_BOOL, C, DT_I8, C, DT_I8, C},
	{DT_BOOL, C, DT_F16, C, DT_F16, C},
	{DT_F32, C, DT_F32, C, DT_F32, C},
	/* weak operands */
	{DT_F32, W, DT_I32, C, DT_F32, W},   /* weak float + i32 = weak f32 (JAX: f*) */
	{DT_F32, W, DT_U8, C, DT_F32, W},
	{DT_F32, W, DT_BOOL, C, DT_F32, W},
	{DT_I32, W, DT_U8, C, DT_U8, C},     /* weak int + u8 = u8 */
	{DT_U8, C, DT_I32, W, DT_U8, C},
	{DT_I32, W, DT_I8, C, DT_I8, C},
	{DT_I32, W, DT_U64, C, DT_U64, C},
	{DT_I32, W, DT_F16, C, DT_F16, C},   /* weak int + f16 = f16 */
	{DT_I32, W, DT_BF16, C, DT_BF16, C},
	{DT_F32, W, DT_F16, C, DT_F16, C},   /* weak float + f16 = f16 */
	{DT_F32, W, DT_BF16, C, DT_BF16, C},
	{DT_F32, W, DT_F64, C, DT_F64, C},
	{DT_I32, W, DT_BOOL, C, DT_I32, W},  /* bool + weak int = weak int */
	{DT_I32, W, DT_I32, W, DT_I32, W},
	{DT_I32, W, DT_F32, W, DT_F32, W},
	{DT_F32, W, DT_F32, W, DT_F32, W},
	{DT_BOOL, W, DT_I8, C, DT_I8, C},    /* there is no weak bool */
	{DT_BOOL, W, DT_BOOL, W, DT_BOOL, C},
	{DT_NONE, C, DT_I8, C, DT_NONE, C},
};

static void test_promotion(void)
{
	for (size_t n = 0; n < sizeof promo_cases / sizeof *promo_cases; n++) {
		const PromoCase *c = &promo_cases[n];
		bool weak = !c->want_weak;
		DType got = promote_dtypes(c->a, c->aw, c->b, c->bw, &weak);
		EXPECT(got == c->want && weak == c->want_weak, "promote(%s%s, %s%s) = %s%s, want %s%s", dtype_str(c->a),
		       c->aw ? "*" : "", dtype_str(c->b), c->bw ? "*" : "", dtype_str(got), weak ? "*" : "",
		       dtype_str(c->want), c->want_weak ? "*" : "");
		/* Promotion is symmetric. */
		bool weak2;
		EXPECT(promote_dtypes(c->b, c->bw, c->a, c->aw, &weak2) == got && weak2 == weak,
		       "promote(%s, %s) is not symmetric", dtype_str(c->a), dtype_str(c->b));
	}
	/* Lattice laws over every pair of concrete dtypes: idempotent, and
	 * associative on a sample triple. */
	for (int a = DT_BOOL; a < DT_COUNT; a++)
		EXPECT(promote_dtypes(a, C, a, C, NULL) == (DType)a, "promote(%s, %s)", dtype_str(a), dtype_str(a));
	for (int a = DT_BOOL; a < DT_COUNT; a++)
		for (int b = DT_BOOL; b < DT_COUNT; b++)
			for (int c = DT_BOOL; c < DT_COUNT; c++) {
				DType ab = promote_dtypes(a, C, b, C, NULL), bc = promote_dtypes(b, C, c, C, NULL);
				/* i64+u64 = f64 is the one place the lattice leaves the
				 * dtypes (the weak f* node), skip triples through it. */
				if (dtype_is_float(ab) != (dtype_is_float(a) || dtype_is_float(b)) ||
				    dtype_is_float(bc) != (dtype_is_float(b) || dtype_is_float(c)))
					continue;
				EXPECT(promote_dtypes(ab, C, c, C, NULL) == promote_dtypes(a, C, bc, C, NULL),
				       "promotion is not associative on %s %s %s", dtype_str(a), dtype_str(b), dtype_str(c));
			}
}

/* ---- types ----------------------------------------------------------------------- */

static void test_types(void)
{
	/* Accumulators: only the 16-bit floats widen (integers keep their rules). */
	for (int dt = DT_BOOL; dt < DT_COUNT; dt++)
		EXPECT(dtype_accumulator(dt) == (dt == DT_F16 || dt == DT_BF16 ? DT_F32 : (DType)dt),
		       "dtype_accumulator(%s) = %s", dtype_str(dt), dtype_str(dtype_accumulator(dt)));
	EXPECT(strcmp(type_str(A, S(DT_I64)), "i64") == 0, "scalar text");
	EXPECT(strcmp(type_str(A, T(DT_F32, 2, D(16), D(8))), "f32[16,8]") == 0, "tensor text");
	const char *syms[] = {"n", NULL};
	int64_t dims[] = {DIM_DYNAMIC, 128};
	Type *r = type_ref(A, DT_F32, 2, dims, syms, SPACE_GLOBAL);
	EXPECT(strcmp(type_str(A, r), "ref<f32[n,128]>") == 0, "ref text: %s", type_str(A, r));
	int64_t d64[] = {64};
	EXPECT(strcmp(type_str(A, type_ref(A, DT_BF16, 1, d64, NULL, SPACE_SCRATCH)), "scratch<bf16[64]>") == 0,
	       "scratch text");
	EXPECT(strcmp(type_str(A, type_ref(A, DT_F32, 1, d64, NULL, SPACE_LOCAL)), "local<f32[64]>") == 0, "local text");
	EXPECT(type_equal(T(DT_F32, 1, D(4)), T(DT_F32, 1, D(4))), "type_equal");
	EXPECT(!type_equal(T(DT_F32, 1, D(4)), T(DT_F16, 1, D(4))), "type_equal dtype");
	EXPECT(!type_equal(T(DT_F32, 1, D(4)), R(DT_F32, 1, D(4))), "type_equal kind");
	EXPECT(type_same_shape(T(DT_F32, 1, D(4)), T(DT_I8, 1, D(4))), "same shape");
	EXPECT(type_numel(T(DT_F32, 2, D(4), D(5))) == 20 && type_numel(r) == -1 && type_numel(S(DT_I8)) == 1, "numel");
	EXPECT(type_with_dtype(A, r, DT_I8)->dtype == DT_I8 && type_with_dtype(A, r, DT_I8)->kind == TY_REF,
	       "type_with_dtype");

	for (int dt = DT_BOOL; dt < DT_COUNT; dt++) {
		const char *s = dtype_str(dt);
		EXPECT(dtype_from_name(s, strlen(s)) == (DType)dt, "dtype_from_name(%s)", s);
	}
	EXPECT(dtype_from_name("f3", 2) == DT_NONE && dtype_from_name("f32x", 4) == DT_NONE &&
	       dtype_from_name("f32x", 3) == DT_F32, "dtype_from_name lengths");
	EXPECT(dtype_is_float(DT_BF16) && !dtype_is_float(DT_I8) && dtype_is_int(DT_U8) && !dtype_is_int(DT_BOOL) &&
	       dtype_is_signed(DT_I8) && !dtype_is_signed(DT_U8) && dtype_is_unsigned(DT_U64), "dtype classes");
	EXPECT(dtype_bits(DT_BOOL) == 1 && dtype_bits(DT_BF16) == 16 && dtype_bits(DT_U64) == 64, "dtype_bits");

	/* broadcasting */
	int64_t a[] = {8, 1, 6, 1}, b[] = {7, 1, 5}, out[4];
	int rout;
	EXPECT(broadcast_shapes(4, a, 3, b, &rout, out) && rout == 4 && out[0] == 8 && out[1] == 7 && out[2] == 6 &&
	       out[3] == 5, "broadcast 8x1x6x1 7x1x5");
	int64_t c[] = {16}, d[] = {16, 1};
	EXPECT(broadcast_shapes(1, c, 2, d, &rout, out) && rout == 2 && out[0] == 16 && out[1] == 16,
	       "broadcast 16 / 16x1");
	int64_t e[] = {3}, f[] = {4};
	EXPECT(!broadcast_shapes(1, e, 1, f, &rout, out), "broadcast 3 vs 4 rejected");
	EXPECT(broadcast_shapes(0, NULL, 1, f, &rout, out) && rout == 1 && out[0] == 4, "broadcast scalar");
	EXPECT(broadcast_shapes(0, NULL, 0, NULL, &rout, out) && rout == 0, "broadcast scalars");
}

/* ---- well-formed kernels ------------------------------------------------------------ */

/* add_vectors as in lang-spec/README.md, appendix "IR text form". */
static IrKernel *build_add_vectors(void)
{
	IrKernel *k = kernel_new("add_vectors", 1);
	const char *nsym[] = {"n"};
	int64_t dyn[] = {DIM_DYNAMIC};
	Type *arr = type_ref(A, DT_F32, 1, dyn, nsym, SPACE_GLOBAL);
	int64_t blk[] = {1024};
	IrOperand *x = add_operand(k, "x", PM_IN, arr);
	IrOperand *y = add_operand(k, "y", PM_IN, arr);
	IrOperand *o = add_operand(k, "o", PM_OUT, arr);
	k->sizes[k->nsizes++] = "n";
	finish_params(k);

	k->grid = launch_region(k);
	Value *c = cint(k, k->grid, DT_I64, 1024);
	Value *cm1 = cint(k, k->grid, DT_I64, 1023);
	Value *s = emit1(k, k->grid, IR_ADD, S(DT_I64), 2, k->grid->args[0], cm1);
	Value *g = emit1(k, k->grid, IR_FLOORDIV, S(DT_I64), 2, s, c);
	ir_yield(A, k, k->grid, L0, 1, &g);

	IrOperand *ops[] = {x, y, o};
	for (int i = 0; i < 3; i++) {
		set_spec(k, ops[i], blk, NULL);
		ops[i]->index_map->args[0]->name = "i";
		ir_yield(A, k, ops[i]->index_map, L0, 1, ops[i]->index_map->args);
	}
	Region *b = k->body = body_region(k);
	Type *blkt = T(DT_F32, 1, D(1024));
	Value *lx = ref_access(k, b, IR_LOAD, blkt, 1, &FULL, 1, &b->args[0])->results[0];
	Value *ly = ref_access(k, b, IR_LOAD, blkt, 1, &FULL, 1, &b->args[1])->results[0];
	Value *sum = emit1(k, b, IR_ADD, blkt, 2, lx, ly);
	Value *st[] = {b->args[2], sum};
	ref_access(k, b, IR_STORE, NULL, 1, &FULL, 2, st);
	ir_yield(A, k, b, L0, 0, NULL);
	return k;
}

static const char add_vectors_text[] =
	"kernel @add_vectors(%x: in f32[n], %y: in f32[n], %o: out f32[n], %n: i64)\n"
	"  grid(%n: i64) {\n"
	"    %1 = const 1024 : i64\n"
	"    %2 = const 1023 : i64\n"
	"    %3 = add %n, %2 : i64\n"
	"    %4 = floordiv %3, %1 : i64\n"
	"    yield %4 : i64\n"
	"  }\n"
	"  semantics(parallel)\n"
	"  spec %x [1024] (%i: i32) {\n"
	"    yield %i : i32\n"
	"  }\n"
	"  spec %y [1024] (%i: i32) {\n"
	"    yield %i : i32\n"
	"  }\n"
	"  spec %o [1024] (%i: i32) {\n"
	"    yield %i : i32\n"
	"  }\n"
	"  params(num_warps = 4, num_stages = 1)\n"
	"  body(%x: ref<f32[1024]>, %y: ref<f32[1024]>, %o: ref<f32[1024]>, %n: i64) {\n"
	"    %12 = load %x[:] : f32[1024]\n"
	"    %13 = load %y[:] : f32[1024]\n"
	"    %14 = add %12, %13 : f32[1024]\n"
	"    store %o[:], %14\n"
	"    yield\n"
	"  }\n";

/* Control flow, accesses, attributes, constants and names. */
static IrKernel *build_control(void)
{
	IrKernel *k = kernel_new("control", 2);
	k->semantics[1] = AXIS_ARBITRARY;
	int64_t dims[] = {64, 8, 16};
	const char *syms[] = {NULL, "m", NULL};
	int64_t adims[] = {64, DIM_DYNAMIC, 16};
	IrOperand *x = add_operand(k, "x", PM_IN, type_ref(A, DT_F32, 3, adims, syms, SPACE_GLOBAL));
	IrOperand *o = add_operand(k, "o", PM_INOUT, R(DT_F32, 1, D(64)));
	(void)dims;
	add_scalar(k, "eps", DT_F32);
	k->sizes[k->nsizes++] = "m";
	IrScratch *sc = arena_alloc(A, sizeof *sc);
	sc->name = "acc";
	int64_t sdims[] = {16, 16};
	sc->type = type_ref(A, DT_F32, 2, sdims, NULL, SPACE_SCRATCH);
	k->scratch[k->nscratch++] = sc;
	finish_params(k);
	k->num_warps = 8;
	k->num_stages = 3;

	k->grid = launch_region(k);
	Value *g[] = {cint(k, k->grid, DT_I64, 4), k->grid->args[0]};
	ir_yield(A, k, k->grid, L0, 2, g);

	k->requires = launch_region(k);
	k->nrequires = 1;
	Value *z = cint(k, k->requires, DT_I64, 0);
	Value *ok = emit1(k, k->requires, IR_GT, S(DT_BOOL), 2, k->requires->args[0], z);
	ir_yield(A, k, k->requires, L0, 1, &ok);

	int64_t blk[] = {1, 8, 16};
	bool sq[] = {true, false, false};
	set_spec(k, x, blk, sq);
	Region *im = x->index_map;
	im->args[0]->name = "i";
	im->args[1]->name = "j";
	Value *zero = cint(k, im, DT_I32, 0);
	Value *ix[] = {im->args[0], im->args[1], zero};
	ir_yield(A, k, im, L0, 3, ix);

	Region *b = k->body = body_region(k);
	Value *xr = b->args[0], *orf = b->args[1], *eps = b->args[2], *acc = b->args[4];
	(void)o;
	Value *pid = ir_emit(A, k, b, IR_PROGRAM_ID, L0, 0, NULL, S(DT_I32))->results[0];
	b->last->ival = 1;
	Value *lo = cint(k, b, DT_I32, 0), *hi = cint(k, b, DT_I32, 8), *one = cint(k, b, DT_I32, 1);
	Value *init = ir_const_float(A, k, b, L0, T(DT_F32, 1, D(16)), 0.0);

	/* for i in range(0, 8): acc16 += x[i, :] * eps  (carried f32[16]) */
	Type *v16 = T(DT_F32, 1, D(16));
	Value *fargs[] = {lo, hi, one, init};
	Inst *loop = ir_inst_new(A, k, IR_FOR, L0, 4, fargs, 1, &v16);
	Type *bt[] = {S(DT_I32), v16};
	Region *lb = ir_add_region(A, k, loop, 2, bt);
	lb->args[0]->name = "i";
	lb->args[1]->name = "acc";
	Indexer pi[] = {POINT, FULL};
	Value *la[] = {xr, lb->args[0]};
	Value *row = ref_access(k, lb, IR_LOAD, v16, 2, pi, 2, la)->results[0];
	Value *e16 = emit1(k, lb, IR_BROADCAST, v16, 1, eps, NULL);
	Value *prod = emit1(k, lb, IR_MUL, v16, 2, row, e16);
	Value *nacc = emit1(k, lb, IR_ADD, v16, 2, lb->args[1], prod);
	/* a nested loop reusing the name i: printed %i.1 */
	Inst *inner = ir_inst_new(A, k, IR_FOR, L0, 3, fargs, 0, NULL);
	Type *it[] = {S(DT_I32)};
	Region *ib = ir_add_region(A, k, inner, 1, it);
	ib->args[0]->name = "i";
	ir_yield(A, k, ib, L0, 0, NULL);
	ir_append(lb, inner);
	ir_yield(A, k, lb, L0, 1, &nacc);
	ir_append(b, loop);
	Value *red = loop->results[0];

	/* a sibling loop may reuse %i */
	Inst *sib = ir_inst_new(A, k, IR_FOR, L0, 3, fargs, 0, NULL);
	Region *sb = ir_add_region(A, k, sib, 1, it);
	sb->args[0]->name = "i";
	ir_yield(A, k, sb, L0, 0, NULL);
	ir_append(b, sib);

	/* if pid == 0 { yield sum } else { yield -inf } */
	Value *c0 = emit1(k, b, IR_EQ, S(DT_BOOL), 2, pid, lo);
	Type *f32 = S(DT_F32);
	Inst *iff = ir_inst_new(A, k, IR_IF, L0, 1, &c0, 1, &f32);
	Region *then = ir_add_region(A, k, iff, 0, NULL);
	Region *els = ir_add_region(A, k, iff, 0, NULL);
	Inst *rs = ir_emit(A, k, then, IR_REDUCE_SUM, L0, 1, &red, f32);
	rs->ival = 0;
	ir_yield(A, k, then, L0, 1, rs->results);
	Value *ninf = ir_const_float(A, k, els, L0, f32, -INFINITY);
	ir_yield(A, k, els, L0, 1, &ninf);
	ir_append(b, iff);

	/* while n < 8 { n = n + 1 } */
	Type *i32 = S(DT_I32);
	Inst *wh = ir_inst_new(A, k, IR_WHILE, L0, 1, &lo, 1, &i32);
	Region *wc = ir_add_region(A, k, wh, 1, &i32);
	Region *wb = ir_add_region(A, k, wh, 1, &i32);
	wc->args[0]->name = "n";
	wb->args[0]->name = "n";
	Value *lt = emit1(k, wc, IR_LT, S(DT_BOOL), 2, wc->args[0], hi);
	ir_yield(A, k, wc, L0, 1, &lt);
	Value *inc = emit1(k, wb, IR_ADD, i32, 2, wb->args[0], one);
	ir_yield(A, k, wb, L0, 1, &inc);
	ir_append(b, wh);

	/* masked load with ds, other; gather; atomics; shape ops; float constants */
	Value *io = ir_emit(A, k, b, IR_IOTA, L0, 0, NULL, T(DT_I32, 1, D(16)))->results[0];
	Value *lim = emit1(k, b, IR_BROADCAST, T(DT_I32, 1, D(16)), 1, wh->results[0], NULL);
	Value *m = emit1(k, b, IR_LT, T(DT_BOOL, 1, D(16)), 2, io, lim);
	Value *oth = ir_const_float(A, k, b, L0, v16, (double)0.1f); /* f32-rounded, prints 0.1 */
	Indexer dsx = {IDX_SLICE, 16, false};
	Value *sa[] = {orf, pid, m, oth};
	Inst *ml = ref_access(k, b, IR_LOAD, v16, 1, &dsx, 4, sa);
	ml->has_mask = ml->has_other = true;
	Indexer gx = {IDX_GATHER, 0, false};
	Value *ga[] = {orf, io};
	Value *gv = ref_access(k, b, IR_LOAD, v16, 1, &gx, 2, ga)->results[0];
	Value *aa[] = {orf, pid, ir_const_float(A, k, b, L0, f32, 1e20), NULL};
	Inst *at = ref_access(k, b, IR_ATOMIC, f32, 1, &POINT, 3, aa);
	at->ival = ATOMIC_ADD;
	aa[3] = ir_const_float(A, k, b, L0, f32, -0.0);
	Value *cas_args[] = {orf, pid, aa[2], aa[3]};
	Inst *cas = ref_access(k, b, IR_ATOMIC, f32, 1, &POINT, 4, cas_args);
	cas->ival = ATOMIC_CAS;
	ir_const_float(A, k, b, L0, f32, NAN);
	ir_const_float(A, k, b, L0, S(DT_F64), 0.1);
	ir_const_float(A, k, b, L0, S(DT_F64), (double)0.1f); /* not 0.1 in f64 */
	ir_const_float(A, k, b, L0, S(DT_F32), 1e-5);          /* not a float: printed as a double */
	ir_const_float(A, k, b, L0, S(DT_F16), 65504.0);
	Value *sc_all[] = {acc};
	Value *tile = ref_access(k, b, IR_LOAD, T(DT_F32, 2, D(16), D(16)), 2, (Indexer[]){FULL, FULL}, 1, sc_all)->results[0];
	Inst *tr = ir_emit(A, k, b, IR_TRANSPOSE, L0, 1, &tile, T(DT_F32, 2, D(16), D(16)));
	ir_set_perm(A, tr, 2, (int64_t[]){1, 0});
	Value *dargs[] = {tile, tr->results[0]};
	Value *dv = ir_emit(A, k, b, IR_DOT, L0, 2, dargs, T(DT_F32, 2, D(16), D(16)))->results[0];
	Inst *cs = ir_emit(A, k, b, IR_CUMSUM, L0, 1, &dv, T(DT_F32, 2, D(16), D(16)));
	cs->ival = 1;
	Inst *am = ir_emit(A, k, b, IR_ARGMAX, L0, 1, &gv, S(DT_I32));
	am->ival = 0;
	Value *rsh = emit1(k, b, IR_RESHAPE, T(DT_F32, 1, D(256)), 1, cs->results[0], NULL);
	(void)rsh;
	Value *big = cint(k, b, DT_U64, -1);
	(void)big;
	Value *t = cint(k, b, DT_BOOL, 1);
	(void)t;
	Value *st[] = {orf, pid, ml->results[0], m};
	Inst *ms = ref_access(k, b, IR_STORE, NULL, 1, &dsx, 4, st);
	ms->has_mask = true;
	ir_yield(A, k, b, L0, 0, NULL);
	return k;
}

static const char control_text[] =
	"kernel @control(%x: in f32[64,m,16], %o: inout f32[64], %eps: f32, %m: i64)\n"
	"  grid(%m: i64, %eps: f32) {\n"
	"    %2 = const 4 : i64\n"
	"    yield %2, %m : i64, i64\n"
	"  }\n"
	"  semantics(parallel, arbitrary)\n"
	"  spec %x [None, 8, 16] (%i: i32, %j: i32) {\n"
	"    %9 = const 0 : i32\n"
	"    yield %i, %j, %9 : i32, i32, i32\n"
	"  }\n"
	"  scratch %acc: f32[16,16]\n"
	"  params(num_warps = 8, num_stages = 3)\n"
	"  requires(%m: i64, %eps: f32) {\n"
	"    %5 = const 0 : i64\n"
	"    %6 = gt %m, %5 : bool\n"
	"    yield %6 : bool\n"
	"  }\n"
	"  body(%x: ref<f32[8,16]>, %o: ref<f32[64]>, %eps: f32, %m: i64, %acc: scratch<f32[16,16]>) {\n"
	"    %15 = program_id {axis = 1} : i32\n"
	"    %16 = const 0 : i32\n"
	"    %17 = const 8 : i32\n"
	"    %18 = const 1 : i32\n"
	"    %19 = const 0.0 : f32[16]\n"
	"    %20 = for %16, %17, %18, %19 (%i: i32, %acc.1: f32[16]) {\n"
	"      %23 = load %x[%i, :] : f32[16]\n"
	"      %24 = broadcast %eps : f32[16]\n"
	"      %25 = mul %23, %24 : f32[16]\n"
	"      %26 = add %acc.1, %25 : f32[16]\n"
	"      for %16, %17, %18 (%i.1: i32) {\n"
	"        yield\n"
	"      }\n"
	"      yield %26 : f32[16]\n"
	"    } : f32[16]\n"
	"    for %16, %17, %18 (%i: i32) {\n"
	"      yield\n"
	"    }\n"
	"    %29 = eq %15, %16 : bool\n"
	"    %30 = if %29 {\n"
	"      %31 = reduce_sum {axis = 0} %20 : f32\n"
	"      yield %31 : f32\n"
	"    } else {\n"
	"      %32 = const -inf : f32\n"
	"      yield %32 : f32\n"
	"    } : f32\n"
	"    %33 = while %16 (%n: i32) {\n"
	"      %36 = lt %n, %17 : bool\n"
	"      yield %36 : bool\n"
	"    } do (%n: i32) {\n"
	"      %37 = add %n, %18 : i32\n"
	"      yield %37 : i32\n"
	"    } : i32\n"
	"    %38 = iota {dim = 0} : i32[16]\n"
	"    %39 = broadcast %33 : i32[16]\n"
	"    %40 = lt %38, %39 : bool[16]\n"
	"    %41 = const 0.1 : f32[16]\n"
	"    %42 = load {mask, other} %o[ds(%15, 16)], %40, %41 : f32[16]\n"
	"    %43 = load %o[gather(%38)] : f32[16]\n"
	"    %44 = const 1e+20 : f32\n"
	"    %45 = atomic {kind = add} %o[%15], %44 : f32\n"
	"    %46 = const -0.0 : f32\n"
	"    %47 = atomic {kind = cas} %o[%15], %44, %46 : f32\n"
	"    %48 = const nan : f32\n"
	"    %49 = const 0.1 : f64\n"
	"    %50 = const 0.10000000149011612 : f64\n"
	"    %51 = const 1e-05 : f32\n"
	"    %52 = const 65504.0 : f16\n"
	"    %53 = load %acc[:, :] : f32[16,16]\n"
	"    %54 = transpose {perm = [1, 0]} %53 : f32[16,16]\n"
	"    %55 = dot %53, %54 : f32[16,16]\n"
	"    %56 = cumsum {axis = 1} %55 : f32[16,16]\n"
	"    %57 = argmax {axis = 0} %43 : i32\n"
	"    %58 = reshape %56 : f32[256]\n"
	"    %59 = const 18446744073709551615 : u64\n"
	"    %60 = const true : bool\n"
	"    store {mask} %o[ds(%15, 16)], %42, %40\n"
	"    yield\n"
	"  }\n";

/* The add_vectors body after lower-refs: whole-array Refs, masked slices,
 * a scratch ALLOC. */
static IrKernel *build_lowered(void)
{
	IrKernel *k = kernel_new("lowered", 1);
	const char *nsym[] = {"n"};
	int64_t dyn[] = {DIM_DYNAMIC};
	Type *arr = type_ref(A, DT_F32, 1, dyn, nsym, SPACE_GLOBAL);
	IrOperand *x = add_operand(k, "x", PM_INOUT, arr);
	k->sizes[k->nsizes++] = "n";
	finish_params(k);
	k->refs_lowered = true;
	k->grid = launch_region(k);
	ir_yield(A, k, k->grid, L0, 1, k->grid->args);
	set_spec(k, x, (int64_t[]){256}, NULL);
	x->index_map->args[0]->name = "i";
	ir_yield(A, k, x->index_map, L0, 1, x->index_map->args);
	Region *b = k->body = ir_region_new(A, k, 2, (Type *[]){arr, S(DT_I64)});
	b->args[0]->name = "x";
	b->args[1]->name = "n";
	Value *pid = ir_emit(A, k, b, IR_PROGRAM_ID, L0, 0, NULL, S(DT_I32))->results[0];
	Value *p64 = emit1(k, b, IR_CAST, S(DT_I64), 1, pid, NULL);
	Value *off = emit1(k, b, IR_MUL, S(DT_I64), 2, p64, cint(k, b, DT_I64, 256));
	Value *buf = ir_emit(A, k, b, IR_ALLOC, L0, 0, NULL,
	                     type_ref(A, DT_F32, 1, (int64_t[]){256}, NULL, SPACE_SCRATCH))->results[0];
	Indexer ms = {IDX_SLICE, 256, true};
	Value *la[] = {b->args[0], off};
	Value *v = ref_access(k, b, IR_LOAD, T(DT_F32, 1, D(256)), 1, &ms, 2, la)->results[0];
	Value *sa[] = {buf, v};
	ref_access(k, b, IR_STORE, NULL, 1, &FULL, 2, sa);
	Value *sb[] = {b->args[0], off, v};
	ref_access(k, b, IR_STORE, NULL, 1, &ms, 3, sb);
	ir_yield(A, k, b, L0, 0, NULL);
	return k;
}

static const char lowered_text[] =
	"kernel @lowered(%x: inout f32[n], %n: i64)\n"
	"  grid(%n: i64) {\n"
	"    yield %n : i64\n"
	"  }\n"
	"  semantics(parallel)\n"
	"  spec %x [256] (%i: i32) {\n"
	"    yield %i : i32\n"
	"  }\n"
	"  params(num_warps = 4, num_stages = 1)\n"
	"  lowered(refs)\n"
	"  body(%x: ref<f32[n]>, %n: i64) {\n"
	"    %4 = program_id {axis = 0} : i32\n"
	"    %5 = cast %4 : i64\n"
	"    %6 = const 256 : i64\n"
	"    %7 = mul %5, %6 : i64\n"
	"    %8 = alloc : scratch<f32[256]>\n"
	"    %9 = load %x[masked(ds(%7, 256))] : f32[256]\n"
	"    store %8[:], %9\n"
	"    store %x[masked(ds(%7, 256))], %9\n"
	"    yield\n"
	"  }\n";

static void test_wellformed(void)
{
	IrKernel *lw = build_lowered();
	expect_text(lw, lowered_text, "lowered");
	EXPECT(verify_kernel_ok(lw), "lowered does not verify");
	lw->refs_lowered = false; /* the same IR is wrong before lower-refs */
	char *msg;
	EXPECT(!verify_capture(lw, &msg), "lowered verifies as unlowered");
	free(msg);

	IrKernel *k = build_add_vectors();
	expect_text(k, add_vectors_text, "add_vectors");
	EXPECT(verify_kernel_ok(k), "add_vectors does not verify");

	IrKernel *c = build_control();
	expect_text(c, control_text, "control");
	EXPECT(verify_kernel_ok(c), "control does not verify");

	/* ir_print_inst: one line, regions elided. */
	FILE *f = tmpfile();
	const Inst *loop = c->body->first->next->next->next->next->next;
	ir_print_inst(f, c, loop);
	rewind(f);
	char line[256] = "";
	if (!fgets(line, sizeof line, f))
		line[0] = '\0';
	fclose(f);
	EXPECT(strcmp(line, "%20 = for %16, %17, %18, %19 (%i: i32, %acc.1: f32[16]) {...} : f32[16]") == 0,
	       "ir_print_inst: %s", line);

	/* Module printing separates kernels with a blank line. */
	IrKernel *ks[] = {k, c};
	IrModule m = {.source = "t.pk", .kernels = ks, .nkernels = 2};
	f = tmpfile();
	ir_print_module(f, &m);
	long n = ftell(f);
	EXPECT(n == (long)(strlen(add_vectors_text) + 1 + strlen(control_text)), "module text length %ld", n);
	fclose(f);
	EXPECT(ir_verify(&m, "unit"), "module does not verify");

	/* ir_remove / ir_insert_before keep the list consistent. */
	Inst *first = k->body->first, *second = first->next;
	ir_remove(first);
	EXPECT(k->body->first == second && !second->prev && !first->parent, "ir_remove");
	ir_insert_before(second, first);
	EXPECT(k->body->first == first && first->next == second && second->prev == first && first->parent == k->body,
	       "ir_insert_before");
	EXPECT(verify_kernel_ok(k), "add_vectors after remove/insert");
	Inst *y = k->body->last;
	ir_remove(y);
	EXPECT(k->body->last == y->prev || k->body->last->next == NULL, "ir_remove last");
	ir_append(k->body, y);
	EXPECT(verify_kernel_ok(k), "add_vectors after re-append");

	/* op_info comes from ops.def */
	EXPECT(strcmp(op_info[IR_ADD].name, "add") == 0 && op_info[IR_ADD].min_args == 2 &&
	       (op_info[IR_EQ].flags & F_CMP) && op_info[IR_FOR].nresults == -1 && op_info[IR_YIELD].flags & F_TERM,
	       "op_info");
	EXPECT(strcmp(atomic_kind_names[ATOMIC_XCHG], "xchg") == 0, "atomic_kind_names");
}

/* ---- broken IR -------------------------------------------------------------------- */

/* A one-program kernel: x: in f32[16], o: out f32[16], no specs; the body
 * has args %x %o and nothing else.  Tests append and then yield. */
typedef struct Fx {
	IrKernel *k;
	Region *b;  /* body */
	Value *x;   /* ref<f32[16]> */
	Value *o;   /* ref<f32[16]> */
	Value *v;   /* load %x[:] : f32[16] (appended) */
} Fx;

static Fx fx_new(void)
{
	Fx f;
	f.k = kernel_new("broken", 0);
	add_operand(f.k, "x", PM_IN, R(DT_F32, 1, D(16)));
	add_operand(f.k, "o", PM_OUT, R(DT_F32, 1, D(16)));
	finish_params(f.k);
	f.k->grid = launch_region(f.k);
	ir_yield(A, f.k, f.k->grid, L0, 0, NULL);
	f.b = f.k->body = body_region(f.k);
	f.x = f.b->args[0];
	f.o = f.b->args[1];
	f.v = ref_access(f.k, f.b, IR_LOAD, T(DT_F32, 1, D(16)), 1, &FULL, 1, &f.x)->results[0];
	return f;
}

static void fx_store_yield(Fx *f, Value *v)
{
	Value *st[] = {f->o, v};
	ref_access(f->k, f->b, IR_STORE, NULL, 1, &FULL, 2, st);
	ir_yield(A, f->k, f->b, L0, 0, NULL);
}

static void expect_reject_k(IrKernel *k, const char *needle, const char *what)
{
	char *msg;
	bool ok = verify_capture(k, &msg);
	EXPECT(!ok, "%s: ir_verify accepted broken IR", what);
	EXPECT(strstr(msg, "pkc: internal error: IR verification failed after unit: broken: ") == msg,
	       "%s: message prefix: %s", what, msg);
	EXPECT(strstr(msg, needle) != NULL, "%s: message lacks '%s': %s", what, needle, msg);
	if (getenv("IR_UNIT_VERBOSE")) /* show every rejection message */
		printf("%-16s %s", what, msg);
	free(msg);
}

static void expect_reject(Fx *f, const char *needle, const char *what) { expect_reject_k(f->k, needle, what); }

/* A fixture whose x is f32[4, ...] of rank `rank`, loaded (and nothing
 * else) through indexers idx, each GATHER's operand an iota of type gt;
 * the load's result type rt. */
static Fx gather_fx(int rank, const Indexer *idx, Type *gt, Type *rt)
{
	Fx f = fx_new();
	Value *x = f.k->body->args[0];
	int64_t dims[3] = {4, 4, 4};
	x->type = type_ref(A, DT_F32, rank, dims, NULL, SPACE_GLOBAL);
	f.k->operands[0]->array = x->type;
	Value *args[4] = {x};
	int n = 1;
	for (int d = 0; d < rank; d++)
		if (idx[d].kind == IDX_GATHER)
			args[n++] = ir_emit(A, f.k, f.b, IR_IOTA, L0, 0, NULL, gt)->results[0];
	ref_access(f.k, f.b, IR_LOAD, rt, rank, idx, n, args);
	ir_remove(f.b->first); /* the fixture's load of x no longer fits */
	ir_yield(A, f.k, f.b, L0, 0, NULL);
	return f;
}

static void test_broken(void)
{
	Fx f;

	/* The fixture itself is fine. */
	f = fx_new();
	fx_store_yield(&f, f.v);
	EXPECT(verify_kernel_ok(f.k), "fixture does not verify");
	expect_text(f.k,
	            "kernel @broken(%x: in f32[16], %o: out f32[16])\n"
	            "  grid() {\n"
	            "    yield\n"
	            "  }\n"
	            "  params(num_warps = 4, num_stages = 1)\n"
	            "  body(%x: ref<f32[16]>, %o: ref<f32[16]>) {\n"
	            "    %2 = load %x[:] : f32[16]\n"
	            "    store %o[:], %2\n"
	            "    yield\n"
	            "  }\n",
	            "fixture");

	f = fx_new(); /* elementwise operand of the wrong shape */
	{
		Value *c = ir_const_float(A, f.k, f.b, L0, T(DT_F32, 1, D(8)), 1.0);
		fx_store_yield(&f, emit1(f.k, f.b, IR_ADD, T(DT_F32, 1, D(16)), 2, f.v, c));
	}
	expect_reject(&f, "broken: body: %4 = add %2, %3 : f32[16]: operand 1 has shape f32[8], the result f32[16]", "shape");

	f = fx_new(); /* dtype not promoted */
	{
		Value *c = ir_const_float(A, f.k, f.b, L0, T(DT_F16, 1, D(16)), 1.0);
		fx_store_yield(&f, emit1(f.k, f.b, IR_ADD, T(DT_F32, 1, D(16)), 2, f.v, c));
	}
	expect_reject(&f, "operand 1 has dtype f16, the result f32", "dtype");

	f = fx_new(); /* use before definition */
	{
		Value *c = ir_const_float(A, f.k, f.b, L0, T(DT_F32, 1, D(16)), 1.0);
		Value *s = emit1(f.k, f.b, IR_ADD, T(DT_F32, 1, D(16)), 2, f.v, c);
		Inst *ci = c->def;
		ir_remove(ci);
		ir_insert_before(s->def->prev, ci); /* before the load... */
		ir_remove(s->def);
		ir_insert_before(ci, s->def);       /* ...and the add before both */
		fx_store_yield(&f, s);
	}
	expect_reject(&f, "is used before its definition", "use before def");

	f = fx_new(); /* a value used outside its region */
	{
		Value *lo = cint(f.k, f.b, DT_I32, 0), *hi = cint(f.k, f.b, DT_I32, 4);
		Value *fa[] = {lo, hi, hi};
		Type *it = S(DT_I32);
		Inst *loop = ir_inst_new(A, f.k, IR_FOR, L0, 3, fa, 0, NULL);
		Region *lb = ir_add_region(A, f.k, loop, 1, &it);
		Value *inner = emit1(f.k, lb, IR_NEG, T(DT_F32, 1, D(16)), 1, f.v, NULL);
		ir_yield(A, f.k, lb, L0, 0, NULL);
		ir_append(f.b, loop);
		fx_store_yield(&f, inner);
	}
	expect_reject(&f, "is not visible here", "outside region");

	f = fx_new(); /* yield count mismatch in a for */
	{
		Value *lo = cint(f.k, f.b, DT_I32, 0), *hi = cint(f.k, f.b, DT_I32, 4);
		Value *fa[] = {lo, hi, hi, f.v};
		Type *rt = T(DT_F32, 1, D(16));
		Type *at[] = {S(DT_I32), rt};
		Inst *loop = ir_inst_new(A, f.k, IR_FOR, L0, 4, fa, 1, &rt);
		Region *lb = ir_add_region(A, f.k, loop, 2, at);
		ir_yield(A, f.k, lb, L0, 0, NULL);
		ir_append(f.b, loop);
		fx_store_yield(&f, loop->results[0]);
	}
	expect_reject(&f, "yield: yields 0 values, expected 1", "yield count");

	f = fx_new(); /* bad transpose permutation */
	{
		Value *t2 = emit1(f.k, f.b, IR_RESHAPE, T(DT_F32, 2, D(4), D(4)), 1, f.v, NULL);
		Inst *tr = ir_emit(A, f.k, f.b, IR_TRANSPOSE, L0, 1, &t2, T(DT_F32, 2, D(4), D(4)));
		ir_set_perm(A, tr, 2, (int64_t[]){0, 0});
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "%4 = transpose {perm = [0, 0]} %3 : f32[4,4]: perm is not a permutation of 0..1", "transpose perm");

	f = fx_new(); /* dot shape mismatch */
	{
		Value *a = emit1(f.k, f.b, IR_RESHAPE, T(DT_F32, 2, D(2), D(8)), 1, f.v, NULL);
		Value *b2 = emit1(f.k, f.b, IR_RESHAPE, T(DT_F32, 2, D(4), D(4)), 1, f.v, NULL);
		Value *da[] = {a, b2};
		ir_emit(A, f.k, f.b, IR_DOT, L0, 2, da, T(DT_F32, 2, D(2), D(4)));
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "contracting dims differ: f32[2,8] x f32[4,4]", "dot shape");

	f = fx_new(); /* reshape changes the element count */
	fx_store_yield(&f, emit1(f.k, f.b, IR_RESHAPE, T(DT_F32, 1, D(15)), 1, f.v, NULL));
	expect_reject(&f, "differ in element count", "reshape");

	f = fx_new(); /* region without a yield */
	fx_store_yield(&f, f.v);
	ir_remove(f.b->last);
	expect_reject(&f, "region does not end with a yield", "missing yield");

	f = fx_new(); /* yield that is not last */
	ir_yield(A, f.k, f.b, L0, 0, NULL);
	fx_store_yield(&f, f.v);
	expect_reject(&f, "yield is not the last instruction", "yield not last");

	f = fx_new(); /* comparison result not bool */
	fx_store_yield(&f, emit1(f.k, f.b, IR_LT, T(DT_F32, 1, D(16)), 2, f.v, f.v));
	expect_reject(&f, "comparison result is not bool", "cmp");

	f = fx_new(); /* math on integers */
	{
		Value *i = emit1(f.k, f.b, IR_CAST, T(DT_I32, 1, D(16)), 1, f.v, NULL);
		emit1(f.k, f.b, IR_EXP, T(DT_I32, 1, D(16)), 1, i, NULL);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "exp is not defined on i32", "math on int");

	f = fx_new(); /* division of bools (integers divide truncating: lax.div) */
	{
		Value *i = emit1(f.k, f.b, IR_CAST, T(DT_BOOL, 1, D(16)), 1, f.v, NULL);
		emit1(f.k, f.b, IR_DIV, T(DT_BOOL, 1, D(16)), 2, i, i);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "div is not defined on bool", "bool div");

	f = fx_new(); /* remainder of bools */
	{
		Value *i = emit1(f.k, f.b, IR_CAST, T(DT_BOOL, 1, D(16)), 1, f.v, NULL);
		emit1(f.k, f.b, IR_REM, T(DT_BOOL, 1, D(16)), 2, i, i);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "rem is not defined on bool", "bool rem");

	f = fx_new(); /* reduce axis out of range */
	{
		Inst *r = ir_emit(A, f.k, f.b, IR_REDUCE_MAX, L0, 1, &f.v, S(DT_F32));
		r->ival = 1;
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "axis 1 out of range for rank 1", "reduce axis");

	f = fx_new(); /* sums of 16-bit floats run in f32 (sema casts around them) */
	{
		Value *h = emit1(f.k, f.b, IR_CAST, T(DT_BF16, 1, D(16)), 1, f.v, NULL);
		ir_emit(A, f.k, f.b, IR_REDUCE_SUM, L0, 1, &h, S(DT_BF16));
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "reduce_sum {axis = 0} %3 : bf16: sums in bf16, not in its accumulator dtype f32", "bf16 sum");

	f = fx_new();
	{
		Value *h = emit1(f.k, f.b, IR_CAST, T(DT_F16, 1, D(16)), 1, f.v, NULL);
		ir_emit(A, f.k, f.b, IR_CUMSUM, L0, 1, &h, T(DT_F16, 1, D(16)));
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "sums in f16, not in its accumulator dtype f32", "f16 cumsum");

	f = fx_new();
	{
		Value *m = emit1(f.k, f.b, IR_RESHAPE, T(DT_F32, 2, D(4), D(4)), 1, f.v, NULL);
		Value *h = emit1(f.k, f.b, IR_CAST, T(DT_F16, 2, D(4), D(4)), 1, m, NULL);
		Value *da[] = {h, h};
		ir_emit(A, f.k, f.b, IR_DOT, L0, 2, da, T(DT_F16, 2, D(4), D(4)));
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "sums in f16, not in its accumulator dtype f32", "f16 dot");

	f = fx_new(); /* load result shape differs from the access */
	fx_store_yield(&f, ref_access(f.k, f.b, IR_LOAD, T(DT_F32, 1, D(8)), 1, &FULL, 1, &f.x)->results[0]);
	expect_reject(&f, "result is f32[8], the access f32[16]", "load shape");

	f = fx_new(); /* mask of the wrong dtype */
	{
		Value *st[] = {f.o, f.v, f.v};
		Inst *s = ref_access(f.k, f.b, IR_STORE, NULL, 1, &FULL, 3, st);
		s->has_mask = true;
		ir_yield(A, f.k, f.b, L0, 0, NULL);
	}
	expect_reject(&f, "mask is f32[16], expected bool[16]", "mask dtype");

	f = fx_new(); /* operand count does not match the indexers */
	fx_store_yield(&f, ref_access(f.k, f.b, IR_LOAD, T(DT_F32, 1, D(16)), 1, &POINT, 1, &f.x)->results[0]);
	expect_reject(&f, "1 operands, expected 2", "indexer operands");

	/* Gathers beside full dims (verify.c's access rule): each gather operand
	 * has the access's rank with extent 1 at the full dims; the gathers form
	 * one run.  gather_fx(&f, rank of x, indexers, gather type, expected
	 * access type) loads x through them. */
	f = gather_fx(2, (Indexer[]){{IDX_GATHER, 0, false}, FULL}, T(DT_I32, 2, D(4), D(1)), T(DT_F32, 2, D(4), D(4)));
	EXPECT(verify_kernel_ok(f.k), "rows gathered beside ':' do not verify");
	f = gather_fx(2, (Indexer[]){{IDX_GATHER, 0, false}, FULL}, T(DT_I32, 1, D(4)), T(DT_F32, 2, D(4), D(4)));
	expect_reject(&f, "gather operands of rank 1 leave no dim for the gathers beside 1 full", "gather rank");
	f = gather_fx(2, (Indexer[]){{IDX_GATHER, 0, false}, FULL}, T(DT_I32, 2, D(4), D(4)), T(DT_F32, 2, D(4), D(4)));
	expect_reject(&f, "gather index of dim 0 varies along the sliced access dim 1", "gather along a full dim");
	f = gather_fx(3, (Indexer[]){{IDX_GATHER, 0, false}, FULL, {IDX_GATHER, 0, false}}, T(DT_I32, 2, D(4), D(1)),
	              T(DT_F32, 2, D(4), D(4)));
	expect_reject(&f, "dim 1 is full or sliced between the gathers of dims 0 and 2", "gathers apart");

	f = fx_new(); /* if condition not bool */
	{
		Value *c = cint(f.k, f.b, DT_I32, 1);
		Inst *iff = ir_inst_new(A, f.k, IR_IF, L0, 1, &c, 0, NULL);
		ir_yield(A, f.k, ir_add_region(A, f.k, iff, 0, NULL), L0, 0, NULL);
		ir_yield(A, f.k, ir_add_region(A, f.k, iff, 0, NULL), L0, 0, NULL);
		ir_append(f.b, iff);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "condition is not a bool scalar", "if cond");

	f = fx_new(); /* if branches yield different types */
	{
		Value *c = cint(f.k, f.b, DT_BOOL, 1);
		Type *rt = S(DT_F32);
		Inst *iff = ir_inst_new(A, f.k, IR_IF, L0, 1, &c, 1, &rt);
		Region *t = ir_add_region(A, f.k, iff, 0, NULL), *e = ir_add_region(A, f.k, iff, 0, NULL);
		Value *a = ir_const_float(A, f.k, t, L0, S(DT_F32), 1.0);
		ir_yield(A, f.k, t, L0, 1, &a);
		Value *b2 = ir_const_float(A, f.k, e, L0, S(DT_F64), 1.0);
		ir_yield(A, f.k, e, L0, 1, &b2);
		ir_append(f.b, iff);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "yielded value 0 is f64, expected f32", "if yield type");

	f = fx_new(); /* for bounds of different types */
	{
		Value *lo = cint(f.k, f.b, DT_I32, 0), *hi = cint(f.k, f.b, DT_I64, 4);
		Value *fa[] = {lo, hi, lo};
		Type *it = S(DT_I32);
		Inst *loop = ir_inst_new(A, f.k, IR_FOR, L0, 3, fa, 0, NULL);
		ir_yield(A, f.k, ir_add_region(A, f.k, loop, 1, &it), L0, 0, NULL);
		ir_append(f.b, loop);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "lo, hi and step differ in type", "for bounds");

	f = fx_new(); /* while condition yields a non-bool */
	{
		Value *z = cint(f.k, f.b, DT_I32, 0);
		Type *it = S(DT_I32);
		Inst *wh = ir_inst_new(A, f.k, IR_WHILE, L0, 1, &z, 1, &it);
		Region *c = ir_add_region(A, f.k, wh, 1, &it), *b2 = ir_add_region(A, f.k, wh, 1, &it);
		ir_yield(A, f.k, c, L0, 1, c->args);
		ir_yield(A, f.k, b2, L0, 1, b2->args);
		ir_append(f.b, wh);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "expected a bool scalar", "while cond");

	f = fx_new(); /* broadcast that is not NumPy-compatible */
	fx_store_yield(&f, emit1(f.k, f.b, IR_BROADCAST, T(DT_F32, 2, D(4), D(8)), 1, f.v, NULL));
	expect_reject(&f, "f32[16] does not broadcast to f32[4,8]", "broadcast");

	f = fx_new(); /* atomic cas without its compare operand */
	{
		Value *i = cint(f.k, f.b, DT_I32, 0);
		Value *s = ir_const_float(A, f.k, f.b, L0, S(DT_F32), 1.0);
		Value *aa[] = {f.o, i, s};
		ref_access(f.k, f.b, IR_ATOMIC, S(DT_F32), 1, &POINT, 3, aa)->ival = ATOMIC_CAS;
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "3 operands, expected 4", "cas operands");

	f = fx_new(); /* alloc before lower-refs */
	ir_emit(A, f.k, f.b, IR_ALLOC, L0, 0, NULL, type_ref(A, DT_F32, 1, (int64_t[]){4}, NULL, SPACE_SCRATCH));
	fx_store_yield(&f, f.v);
	expect_reject(&f, "alloc before lower-refs", "alloc");

	f = fx_new(); /* program_id of an axis the grid lacks */
	ir_emit(A, f.k, f.b, IR_PROGRAM_ID, L0, 0, NULL, S(DT_I32));
	fx_store_yield(&f, f.v);
	expect_reject(&f, "grid axis 0 out of range [0, 0)", "program_id");

	f = fx_new(); /* arity */
	fx_store_yield(&f, emit(f.k, f.b, IR_ADD, T(DT_F32, 1, D(16)), 1, f.v)->results[0]);
	expect_reject(&f, "1 operands, add takes 2..2", "arity");

	f = fx_new(); /* a value of the grid region used in the body */
	{
		Value *g = cint(f.k, f.k->grid, DT_I32, 0);
		ir_remove(g->def);
		ir_insert_before(f.k->grid->last, g->def);
		Value *i = emit1(f.k, f.b, IR_NEG, S(DT_I32), 1, g, NULL);
		(void)i;
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "is not visible here", "cross-region use");

	f = fx_new(); /* grid yields the wrong number of extents */
	f.k->ngrid = 1;
	f.k->semantics = arena_alloc(A, sizeof *f.k->semantics);
	fx_store_yield(&f, f.v);
	expect_reject(&f, "broken: grid: yield: yields 0 values, expected 1", "grid yield");

	f = fx_new(); /* body argument dtype differs from the operand */
	f.b->args[1]->type = R(DT_F16, 1, D(16));
	fx_store_yield(&f, f.v);
	expect_reject(&f, "body: argument 1 (o) is ref<f16[16]>, expected a global Ref of f32", "body arg");

	f = fx_new(); /* after tiling, accesses are by point */
	f.k->tiled = true;
	fx_store_yield(&f, f.v);
	expect_reject(&f, "after tiling only unmasked point indexers remain", "tiled access");

	f = fx_new(); /* after tiling, values are scalars */
	f.k->tiled = true;
	ir_remove(f.b->first);
	ir_const_float(A, f.k, f.b, L0, T(DT_F32, 1, D(16)), 2.5);
	ir_yield(A, f.k, f.b, L0, 0, NULL);
	expect_reject(&f, "value %3: f32[16] is not a scalar after tiling", "tiled value");

	f = fx_new(); /* one result Value shared by two instructions */
	{
		Inst *neg = emit(f.k, f.b, IR_NEG, T(DT_F32, 1, D(16)), 1, f.v);
		Inst *neg2 = ir_inst_new(A, f.k, IR_NEG, L0, 1, &f.v, 1, (Type *[]){T(DT_F32, 1, D(16))});
		neg2->results[0] = neg->results[0];
		ir_append(f.b, neg2);
		fx_store_yield(&f, f.v);
	}
	expect_reject(&f, "does not point back to its instruction", "result shared by two instructions");
}

/* ---- scalar prefetch (§5.11): the verifier's rules for prefetch operands ------ */

/* kernel @broken(%ids: prefetch i32[4], %x: in f32[64], %o: out f32[64]) with
 * grid(4); x's index map is (i, ids) -> ids[i], o's is (i, ids) -> i; the
 * body copies x's block to o's.  Each test breaks one part before pf_finish. */
typedef struct PfFx {
	IrKernel *k;
	IrOperand *ids, *x, *o;
	Region *xmap; /* x's index map: pf_finish adds the read of ids[i] and the yield unless a test yields */
	Region *b;    /* the body, empty: pf_finish adds the copy */
} PfFx;

static Region *pf_map(IrKernel *k, Type *pf_arg)
{
	Type *at[] = {S(DT_I32), pf_arg};
	Region *r = ir_region_new(A, k, pf_arg ? 2 : 1, at);
	r->args[0]->name = "i";
	if (pf_arg)
		r->args[1]->name = "ids";
	return r;
}

static PfFx pf_new(void)
{
	PfFx f;
	f.k = kernel_new("broken", 1);
	f.ids = add_operand(f.k, "ids", PM_PREFETCH, R(DT_I32, 1, D(4)));
	f.x = add_operand(f.k, "x", PM_IN, R(DT_F32, 1, D(64)));
	f.o = add_operand(f.k, "o", PM_OUT, R(DT_F32, 1, D(64)));
	finish_params(f.k);
	f.k->grid = launch_region(f.k);
	Value *g = cint(f.k, f.k->grid, DT_I64, 4);
	ir_yield(A, f.k, f.k->grid, L0, 1, &g);
	IrOperand *blocked[] = {f.x, f.o};
	for (int j = 0; j < 2; j++) {
		set_spec(f.k, blocked[j], (int64_t[]){16}, NULL);
		blocked[j]->index_map = pf_map(f.k, f.ids->array);
	}
	f.xmap = f.x->index_map;
	f.b = f.k->body = body_region(f.k);
	return f;
}

/* ids[i] in x's map: a point load of the prefetch argument. */
static Value *pf_read(PfFx *f, Region *map)
{
	Value *la[] = {map->args[1], map->args[0]};
	return ref_access(f->k, map, IR_LOAD, S(DT_I32), 1, &POINT, 2, la)->results[0];
}

static void pf_finish(PfFx *f)
{
	if (!f->xmap->last || f->xmap->last->op != IR_YIELD) {
		Value *v = pf_read(f, f->xmap);
		ir_yield(A, f->k, f->xmap, L0, 1, &v);
	}
	ir_yield(A, f->k, f->o->index_map, L0, 1, f->o->index_map->args);
	Value *blk = ref_access(f->k, f->b, IR_LOAD, T(DT_F32, 1, D(16)), 1, &FULL, 1, &f->b->args[1])->results[0];
	Value *st[] = {f->b->args[2], blk};
	ref_access(f->k, f->b, IR_STORE, NULL, 1, &FULL, 2, st);
	ir_yield(A, f->k, f->b, L0, 0, NULL);
}

static void test_prefetch_broken(void)
{
	PfFx f;

	f = pf_new(); /* the fixture itself is fine */
	pf_finish(&f);
	EXPECT(verify_kernel_ok(f.k), "prefetch fixture does not verify");
	expect_text(f.k,
	            "kernel @broken(%ids: prefetch i32[4], %x: in f32[64], %o: out f32[64])\n"
	            "  grid() {\n"
	            "    %0 = const 4 : i64\n"
	            "    yield %0 : i64\n"
	            "  }\n"
	            "  semantics(parallel)\n"
	            "  spec %x [16] (%i: i32, %ids: ref<i32[4]>) {\n"
	            "    %10 = load %ids[%i] : i32\n"
	            "    yield %10 : i32\n"
	            "  }\n"
	            "  spec %o [16] (%i: i32, %ids: ref<i32[4]>) {\n"
	            "    yield %i : i32\n"
	            "  }\n"
	            "  params(num_warps = 4, num_stages = 1)\n"
	            "  body(%ids: ref<i32[4]>, %x: ref<f32[16]>, %o: ref<f32[16]>) {\n"
	            "    %11 = load %x[:] : f32[16]\n"
	            "    store %o[:], %11\n"
	            "    yield\n"
	            "  }\n",
	            "prefetch fixture");

	f = pf_new(); /* a map without the prefetch argument */
	f.x->index_map = f.xmap = pf_map(f.k, NULL);
	ir_yield(A, f.k, f.xmap, L0, 1, f.xmap->args);
	pf_finish(&f);
	expect_reject_k(f.k, "broken: spec x: index map takes 1 arguments for a grid of rank 1 and 1 prefetch arrays",
	              "prefetch map arity");

	f = pf_new(); /* the prefetch argument of another type */
	f.x->index_map = f.xmap = pf_map(f.k, R(DT_I32, 1, D(8)));
	pf_finish(&f);
	expect_reject_k(f.k, "argument 1 is ref<i32[8]>, expected prefetch array ids", "prefetch map arg type");

	f = pf_new(); /* a map writes its prefetch argument */
	{
		Value *st[] = {f.xmap->args[1], f.xmap->args[0], cint(f.k, f.xmap, DT_I32, 0)};
		ref_access(f.k, f.xmap, IR_STORE, NULL, 1, &POINT, 3, st);
		pf_finish(&f);
	}
	expect_reject_k(f.k, "an index map has no effects or regions", "prefetch map effect");

	f = pf_new(); /* a map reads a slice of it */
	{
		Indexer sl = {IDX_SLICE, 2, false};
		Value *la[] = {f.xmap->args[1], f.xmap->args[0]};
		Value *v = ref_access(f.k, f.xmap, IR_LOAD, T(DT_I32, 1, D(2)), 1, &sl, 2, la)->results[0];
		Value *s0 = emit1(f.k, f.xmap, IR_REDUCE_SUM, S(DT_I32), 1, v, NULL);
		ir_yield(A, f.k, f.xmap, L0, 1, &s0);
		pf_finish(&f);
	}
	expect_reject_k(f.k, "an index map's load reads one element", "prefetch map slice");

	f = pf_new(); /* a map reads it with a (scalar) gather index */
	{
		Indexer ga = {IDX_GATHER, 0, false};
		Value *la[] = {f.xmap->args[1], f.xmap->args[0]};
		Value *v = ref_access(f.k, f.xmap, IR_LOAD, S(DT_I32), 1, &ga, 2, la)->results[0];
		ir_yield(A, f.k, f.xmap, L0, 1, &v);
		pf_finish(&f);
	}
	expect_reject_k(f.k, "an index map's load indexes by points", "prefetch map gather");

	f = pf_new(); /* the body stores to the prefetch array */
	{
		Value *st[] = {f.b->args[0], cint(f.k, f.b, DT_I32, 1), cint(f.k, f.b, DT_I32, 7)};
		ref_access(f.k, f.b, IR_STORE, NULL, 1, &POINT, 3, st);
		pf_finish(&f);
	}
	expect_reject_k(f.k, "writes the prefetch array ids", "prefetch store");

	f = pf_new(); /* an atomic on it, inside a loop of the body */
	{
		Value *lo = cint(f.k, f.b, DT_I32, 0), *hi = cint(f.k, f.b, DT_I32, 4);
		Value *fa[] = {lo, hi, hi};
		Type *it = S(DT_I32);
		Inst *loop = ir_inst_new(A, f.k, IR_FOR, L0, 3, fa, 0, NULL);
		Region *lb = ir_add_region(A, f.k, loop, 1, &it);
		Value *aa[] = {f.b->args[0], lb->args[0], cint(f.k, lb, DT_I32, 1)};
		Inst *at = ref_access(f.k, lb, IR_ATOMIC, S(DT_I32), 1, &POINT, 3, aa);
		at->ival = ATOMIC_ADD;
		ir_yield(A, f.k, lb, L0, 0, NULL);
		ir_append(f.b, loop);
		pf_finish(&f);
	}
	expect_reject_k(f.k, "writes the prefetch array ids", "prefetch atomic in a loop");

	f = pf_new(); /* a prefetch operand with a spec */
	set_spec(f.k, f.ids, (int64_t[]){4}, NULL);
	ir_yield(A, f.k, f.ids->index_map, L0, 1, f.ids->index_map->args);
	pf_finish(&f);
	expect_reject_k(f.k, "prefetch operand ids has a spec or is not an integer array", "prefetch with a spec");

	f = pf_new(); /* a float prefetch array */
	f.ids->array = R(DT_F32, 1, D(4));
	pf_finish(&f);
	expect_reject_k(f.k, "prefetch operand ids has a spec or is not an integer array", "float prefetch");
}

int main(void)
{
	A = arena_new();
	test_promotion();
	test_types();
	test_wellformed();
	test_broken();
	test_prefetch_broken();
	arena_free(A);
	if (nfail) {
		printf("ir_unit: %d checks failed, %d passed\n", nfail, npass);
		return 1;
	}
	printf("ir_unit: %d checks passed\n", npass);
	return 0;
}
