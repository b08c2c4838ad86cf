/* llvm_scalar.c - scalar code for the host back end: LLVM types of dtypes,
 * constants, the f16/bf16 conversions (inline bit manipulation, no
 * compiler-rt helpers), casts and every elementwise op with the semantics
 * lang-spec §7 gives them (Python // and % for ints and floats, integer
 * division by zero = 0, shifts past the width, NaN-propagating min/max). */
#include "llvm_util.h"

#include <math.h>
#include <string.h>

/* ---- types and small constants ------------------------------------------- */

LLVMTypeRef cg_type(Cg *g, DType dt)
{
	switch (dt) {
	case DT_BOOL: return g->t_i1;
	case DT_I8: case DT_U8: return g->t_i8;
	case DT_I16: case DT_U16: return g->t_i16;
	case DT_I32: case DT_U32: return g->t_i32;
	case DT_I64: case DT_U64: return g->t_i64;
	case DT_F16: case DT_BF16: case DT_F32: return g->t_f32;
	case DT_F64: return g->t_f64;
	default: internal_error("codegen: no LLVM type for dtype %d", (int)dt);
	}
}

LLVMTypeRef cg_mem_type(Cg *g, DType dt)
{
	switch (dt) {
	case DT_BOOL: return g->t_i8;
	case DT_F16: case DT_BF16: return g->t_i16;
	default: return cg_type(g, dt);
	}
}

LLVMValueRef cg_i64(Cg *g, int64_t v) { return LLVMConstInt(g->t_i64, (unsigned long long)v, 1); }
LLVMValueRef cg_i32(Cg *g, int32_t v) { return LLVMConstInt(g->t_i32, (unsigned long long)(int64_t)v, 1); }
static LLVMValueRef u32c(Cg *g, uint32_t v) { return LLVMConstInt(g->t_i32, v, 0); }

LLVMBasicBlockRef cg_block(Cg *g, const char *name)
{
	LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(g->b));
	return LLVMAppendBasicBlockInContext(g->ctx, fn, name);
}

static bool is_half(DType dt) { return dt == DT_F16 || dt == DT_BF16; }

/* x rounded to the nearest f16 (mant_bits 10, min_exp -14, max 65504) or
 * bf16 (7, -126, 0x1.fep127) value, ties to even: constants are rounded at
 * compile time with the same result the generated code gives. */
static double round_half_const(DType dt, double x)
{
	int mant = dt == DT_F16 ? 10 : 7;
	int min_exp = dt == DT_F16 ? -14 : -126;
	double max = dt == DT_F16 ? 65504.0 : ldexp(255.0, 120);
	if (isnan(x) || isinf(x) || x == 0)
		return x;
	double a = fabs(x);
	int e;
	frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
	int ex = e - 1 < min_exp ? min_exp : e - 1;
	double q = ldexp(1.0, ex - mant); /* the spacing of representable values near a */
	double r = nearbyint(a / q) * q;   /* exact scaling; nearbyint rounds ties to even */
	if (r > max)
		r = INFINITY;
	return copysign(r, x);
}

LLVMValueRef cg_const(Cg *g, DType dt, int64_t ival, double fval)
{
	if (dt == DT_BOOL)
		return LLVMConstInt(g->t_i1, ival != 0, 0);
	if (dtype_is_int(dt))
		return LLVMConstInt(cg_type(g, dt), (unsigned long long)ival, 0);
	if (is_half(dt))
		fval = round_half_const(dt, fval);
	return LLVMConstReal(cg_type(g, dt), fval);
}

/* ---- intrinsics and external calls --------------------------------------- */

LLVMValueRef cg_intrinsic(Cg *g, const char *name, LLVMTypeRef overload, LLVMValueRef *args, int nargs)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	if (!id)
		internal_error("codegen: unknown LLVM intrinsic %s", name);
	LLVMTypeRef ov[2] = {overload, NULL};
	size_t nov = overload ? 1 : 0;
	/* The saturating conversions are overloaded on result and operand. */
	if (strncmp(name, "llvm.fpto", 9) == 0) {
		ov[1] = LLVMTypeOf(args[0]);
		nov = 2;
	}
	LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, ov, nov);
	LLVMTypeRef fty = LLVMIntrinsicGetType(g->ctx, id, ov, nov);
	return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)nargs, "");
}

void cg_attr(Cg *g, LLVMValueRef fn, LLVMAttributeIndex index, const char *name, uint64_t val)
{
	unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
	PKC_ASSERT(kind != 0);
	LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(g->ctx, kind, val));
}

static void fn_attr(Cg *g, LLVMValueRef fn, const char *name, uint64_t val)
{
	cg_attr(g, fn, LLVMAttributeFunctionIndex, name, val);
}

LLVMValueRef cg_call_extern(Cg *g, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int nparams,
                            bool vararg, LLVMValueRef *args, int nargs)
{
	LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)nparams, vararg);
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
	if (!fn) {
		fn = LLVMAddFunction(g->mod, name, fty);
		fn_attr(g, fn, "nounwind", 0);
	}
	return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)nargs, "");
}

/* if (failed) return pk_set_error(st, fmt, args...); and go on after it. */
void cg_fail_if(Cg *g, LLVMValueRef failed, int st, const char *fmt, LLVMValueRef *args, int nargs)
{
	LLVMBuilderRef b = g->b;
	LLVMBasicBlockRef err = cg_block(g, "error"), ok = cg_block(g, "ok");
	LLVMBuildCondBr(b, failed, err, ok);
	LLVMPositionBuilderAtEnd(b, err);
	LLVMValueRef *all = arena_alloc(g->cc->arena, (size_t)(nargs + 2) * sizeof *all);
	all[0] = cg_i32(g, (int32_t)st);
	all[1] = LLVMBuildGlobalString(b, fmt, "");
	for (int i = 0; i < nargs; i++)
		all[2 + i] = args[i];
	LLVMTypeRef params[2] = {g->t_i32, g->t_ptr};
	bool fresh = !LLVMGetNamedFunction(g->mod, "pk_set_error");
	LLVMValueRef r = cg_call_extern(g, "pk_set_error", g->t_i32, params, 2, true, all, nargs + 2);
	if (fresh)
		fn_attr(g, LLVMGetNamedFunction(g->mod, "pk_set_error"), "cold", 0);
	LLVMBuildRet(b, r);
	LLVMPositionBuilderAtEnd(b, ok);
}

/* A libm function of one float argument (math functions without an LLVM
 * intrinsic: log1pf, tanhf, erff; the double version for f64).  They are
 * pure for us (no errno is ever read), so LLVM may hoist and vectorise them. */
static LLVMValueRef libm1(Cg *g, const char *fname, LLVMValueRef x)
{
	LLVMTypeRef t = LLVMTypeOf(x);
	bool f32 = t == g->t_f32;
	const char *name = arena_printf(g->cc->arena, "%s%s%s", g->nvptx ? "__nv_" : "", fname, f32 ? "f" : "");
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
	LLVMTypeRef fty = LLVMFunctionType(t, &t, 1, 0);
	if (!fn) {
		fn = LLVMAddFunction(g->mod, name, fty);
		fn_attr(g, fn, "nounwind", 0);
		fn_attr(g, fn, "willreturn", 0);
		fn_attr(g, fn, "memory", 0); /* memory(none) */
	}
	return LLVMBuildCall2(g->b, fty, fn, &x, 1, "");
}

/* A math function: the LLVM intrinsic `intrinsic` on the host; on the GPU,
 * which lowers few of them exactly, libdevice's __nv_<fname>[f] (linked into
 * the module by the CUDA back end). */
static LLVMValueRef math_fn(Cg *g, const char *intrinsic, const char *fname, LLVMValueRef *a, int n)
{
	LLVMTypeRef t = LLVMTypeOf(a[0]);
	if (!g->nvptx)
		return cg_intrinsic(g, intrinsic, t, a, n);
	if (n == 1)
		return libm1(g, fname, a[0]);
	const char *name = arena_printf(g->cc->arena, "__nv_%s%s", fname, t == g->t_f32 ? "f" : "");
	LLVMTypeRef params[2] = {t, t};
	LLVMTypeRef fty = LLVMFunctionType(t, params, (unsigned)n, 0);
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
	if (!fn) {
		fn = LLVMAddFunction(g->mod, name, fty);
		fn_attr(g, fn, "nounwind", 0);
		fn_attr(g, fn, "willreturn", 0);
		fn_attr(g, fn, "memory", 0);
	}
	return LLVMBuildCall2(g->b, fty, fn, a, (unsigned)n, "");
}

/* ---- f16 / bf16 conversions ------------------------------------------------ */

static LLVMValueRef fc(Cg *g, double v) { return LLVMConstReal(g->t_f32, v); }

/* e^x in float on the GPU: 2^h · 2^w, h = x log2 e rounded to float and
 * w the rest (h's rounding error by one FMA, log2 e's low part by another),
 * |w| <= 2^-17.  2^h is one MUFU.EX2 (ex2.approx: 2 ulp, inf from h = 128
 * on, results below 2^-126 flushed, which §4.1 allows), and 2^w = 1 + w ln 2
 * to within 2^-36, applied by one FMA: within 2.5 ulp in 9 instructions,
 * where the reduction to |r| <= ln 2 / 2 and two scalings by 2^k took 20
 * (softmax was compute-bound on the H200, bench/RESULTS.md).  Beyond
 * |x| = ln FLT_MAX the FMAs would make NaN of inf and 0 times inf; 2^h alone
 * is right there (inf or 0; inf and NaN pass through). */
static LLVMValueRef build_expf_gpu(Cg *g, LLVMValueRef x)
{
	LLVMBuilderRef b = g->b;
	const double log2e = 1.44269504088896340736;
	LLVMValueRef l_hi = fc(g, (float)log2e), l_lo = fc(g, log2e - (double)(float)log2e);
	LLVMValueRef h = LLVMBuildFMul(b, x, l_hi, "h");
	LLVMValueRef p = cg_intrinsic(g, "llvm.nvvm.ex2.approx.ftz", g->t_f32, &h, 1);
	LLVMValueRef a1[3] = {x, l_hi, LLVMBuildFNeg(b, h, "")};
	LLVMValueRef w = cg_intrinsic(g, "llvm.fma", g->t_f32, a1, 3);
	LLVMValueRef a2[3] = {x, l_lo, w};
	w = cg_intrinsic(g, "llvm.fma", g->t_f32, a2, 3);
	LLVMValueRef a3[3] = {p, LLVMBuildFMul(b, w, fc(g, 0.69314718055994530942), ""), p};
	LLVMValueRef r = cg_intrinsic(g, "llvm.fma", g->t_f32, a3, 3);
	LLVMValueRef ax = cg_intrinsic(g, "llvm.fabs", g->t_f32, &x, 1);
	return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, ax, fc(g, 88.72283172607421875), ""), p, r, "");
}

/* e^x in float, after Cephes expf: x = k ln 2 + r with k = rint(x log2 e)
 * (Cody-Waite: ln 2 in two parts), e^r by a degree-7 polynomial on
 * |r| <= ln 2 / 2, then times 2^k in two steps so that results near
 * overflow and in the subnormal range come out right.  Within 2 ulp of the
 * correctly rounded result (lang-spec §4.1); inf, 0 and NaN as expf.
 * Branch-free straight line code, so a loop of it vectorises (libm's expf
 * would stay a scalar call per element).  The GPU's: build_expf_gpu. */
static LLVMValueRef build_expf(Cg *g, LLVMValueRef x)
{
	if (g->nvptx)
		return build_expf_gpu(g, x);
	LLVMBuilderRef b = g->b;
	/* Clamp (NaN passes through): beyond these the result is inf or 0. */
	LLVMValueRef xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, fc(g, 89.0), ""), fc(g, 89.0), x, "");
	xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, xc, fc(g, -104.0), ""), fc(g, -104.0), xc, "");
	/* k = rint(x log2 e) by the 1.5 * 2^23 trick; its integer value is in
	 * the low bits of the sum (no fptosi: NaN must not become poison). */
	LLVMValueRef magic = fc(g, 12582912.0);
	LLVMValueRef tm = LLVMBuildFAdd(b, LLVMBuildFMul(b, xc, fc(g, 1.44269504088896341), ""), magic, "");
	LLVMValueRef kf = LLVMBuildFSub(b, tm, magic, "k");
	LLVMValueRef ki = LLVMBuildSub(b, LLVMBuildBitCast(b, tm, g->t_i32, ""), u32c(g, 0x4b400000u), "");
	LLVMValueRef r = LLVMBuildFSub(b, xc, LLVMBuildFMul(b, kf, fc(g, 0.693359375), ""), "");
	r = LLVMBuildFAdd(b, r, LLVMBuildFMul(b, kf, fc(g, 2.12194440e-4), ""), "r");
	static const double pc[6] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
	                             1.6666665459e-1, 5.0000001201e-1};
	LLVMValueRef p = fc(g, pc[0]);
	for (int i = 1; i < 6; i++)
		p = LLVMBuildFAdd(b, LLVMBuildFMul(b, p, r, ""), fc(g, pc[i]), "");
	p = LLVMBuildFMul(b, p, LLVMBuildFMul(b, r, r, ""), "");
	p = LLVMBuildFAdd(b, LLVMBuildFAdd(b, p, r, ""), fc(g, 1.0), "");
	/* p * 2^k1 * 2^k2, k1 + k2 = k, each factor a normal float. */
	LLVMValueRef k1 = LLVMBuildAShr(b, ki, u32c(g, 1), "");
	LLVMValueRef k2 = LLVMBuildSub(b, ki, k1, "");
	LLVMValueRef s1 = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, k1, u32c(g, 127), ""), u32c(g, 23), ""),
	                                   g->t_f32, "");
	LLVMValueRef s2 = LLVMBuildBitCast(b, LLVMBuildShl(b, LLVMBuildAdd(b, k2, u32c(g, 127), ""), u32c(g, 23), ""),
	                                   g->t_f32, "");
	LLVMValueRef res = LLVMBuildFMul(b, LLVMBuildFMul(b, p, s1, ""), s2, "");
	/* Above ln(FLT_MAX) (the float 0x42b17217 is the last finite one). */
	return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, fc(g, 88.72283172607421875), ""),
	                       fc(g, INFINITY), res, "");
}

/* Builds helper h (an internal, always-inlined function) with a private
 * builder, so the main builder's position is untouched. */
/* f32 -> IEEE binary16 bits (i16), round to nearest even: after F.
 * Giesen's float_to_half_fast3_rtne, with NaN payloads kept (quietened) as
 * F16C hardware does. */
static LLVMValueRef build_f32_to_f16(Cg *g, LLVMValueRef x)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef u = LLVMBuildBitCast(b, x, g->t_i32, "u");
	LLVMValueRef sign = LLVMBuildAnd(b, u, u32c(g, 0x80000000u), "sign");
	LLVMValueRef a = LLVMBuildXor(b, u, sign, "abs");
	LLVMValueRef is_nan = LLVMBuildICmp(b, LLVMIntUGT, a, u32c(g, 0x7f800000u), "isnan");
	LLVMValueRef ovf = LLVMBuildICmp(b, LLVMIntUGE, a, u32c(g, 0x47800000u), "ovf"); /* >= 65536 */
	LLVMValueRef mant = LLVMBuildLShr(b, a, u32c(g, 13), "");
	LLVMValueRef nan_r = LLVMBuildOr(b, LLVMBuildAnd(b, mant, u32c(g, 0x3ff), ""), u32c(g, 0x7e00), "nan");
	/* Below 2^-14 the result is subnormal: adding 0.5 lines the value up
	 * with the f16 subnormal spacing (2^-24) and rounds it in hardware. */
	LLVMValueRef den = LLVMBuildICmp(b, LLVMIntULT, a, u32c(g, 0x38800000u), "den");
	LLVMValueRef fd = LLVMBuildFAdd(b, LLVMBuildBitCast(b, a, g->t_f32, ""), LLVMConstReal(g->t_f32, 0.5), "");
	LLVMValueRef den_r = LLVMBuildSub(b, LLVMBuildBitCast(b, fd, g->t_i32, ""), u32c(g, 0x3f000000u), "");
	/* Normal: rebias the exponent and round to nearest even on bit 13. */
	LLVMValueRef odd = LLVMBuildAnd(b, mant, u32c(g, 1), "odd");
	LLVMValueRef nrm = LLVMBuildAdd(b, LLVMBuildAdd(b, a, u32c(g, 0xc8000fffu), ""), odd, "");
	nrm = LLVMBuildLShr(b, nrm, u32c(g, 13), "nrm");
	LLVMValueRef r = LLVMBuildSelect(b, den, den_r, nrm, "");
	r = LLVMBuildSelect(b, ovf, u32c(g, 0x7c00), r, "");
	r = LLVMBuildSelect(b, is_nan, nan_r, r, "");
	r = LLVMBuildOr(b, r, LLVMBuildLShr(b, sign, u32c(g, 16), ""), "");
	r = LLVMBuildTrunc(b, r, g->t_i16, "");
	return r;
}

/* IEEE binary16 bits (i16) -> f32, exact: F. Giesen's half_to_float. */
static LLVMValueRef build_f16_to_f32(Cg *g, LLVMValueRef x)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef h32 = LLVMBuildZExt(b, x, g->t_i32, "");
	LLVMValueRef o = LLVMBuildShl(b, LLVMBuildAnd(b, h32, u32c(g, 0x7fff), ""), u32c(g, 13), "");
	LLVMValueRef e = LLVMBuildAnd(b, o, u32c(g, 0x0f800000u), "exp");
	o = LLVMBuildAdd(b, o, u32c(g, 0x38000000u), ""); /* rebias 15 -> 127 */
	LLVMValueRef infnan = LLVMBuildICmp(b, LLVMIntEQ, e, u32c(g, 0x0f800000u), "");
	LLVMValueRef o_inf = LLVMBuildAdd(b, o, u32c(g, 0x38000000u), "");
	LLVMValueRef zden = LLVMBuildICmp(b, LLVMIntEQ, e, u32c(g, 0), "");
	/* Zero and subnormals: renormalise through a float subtraction (exact). */
	LLVMValueRef fd = LLVMBuildFSub(b, LLVMBuildBitCast(b, LLVMBuildAdd(b, o, u32c(g, 0x00800000u), ""),
	                                                  g->t_f32, ""),
	                                LLVMConstReal(g->t_f32, ldexp(1.0, -14)), "");
	LLVMValueRef o_den = LLVMBuildBitCast(b, fd, g->t_i32, "");
	LLVMValueRef r = LLVMBuildSelect(b, infnan, o_inf, o, "");
	r = LLVMBuildSelect(b, zden, o_den, r, "");
	r = LLVMBuildOr(b, r, LLVMBuildShl(b, LLVMBuildAnd(b, h32, u32c(g, 0x8000), ""), u32c(g, 16), ""), "");
	r = LLVMBuildBitCast(b, r, g->t_f32, "");
	return r;
}

/* f32 -> bfloat16 bits (i16), round to nearest even. */
static LLVMValueRef build_f32_to_bf16(Cg *g, LLVMValueRef x)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef u = LLVMBuildBitCast(b, x, g->t_i32, "u");
	LLVMValueRef a = LLVMBuildAnd(b, u, u32c(g, 0x7fffffffu), "");
	LLVMValueRef is_nan = LLVMBuildICmp(b, LLVMIntUGT, a, u32c(g, 0x7f800000u), "isnan");
	LLVMValueRef hi = LLVMBuildLShr(b, u, u32c(g, 16), "");
	LLVMValueRef nan_r = LLVMBuildOr(b, hi, u32c(g, 0x40), ""); /* quiet */
	LLVMValueRef odd = LLVMBuildAnd(b, hi, u32c(g, 1), "");
	LLVMValueRef rne = LLVMBuildAdd(b, LLVMBuildAdd(b, u, u32c(g, 0x7fff), ""), odd, "");
	rne = LLVMBuildLShr(b, rne, u32c(g, 16), "");
	LLVMValueRef r = LLVMBuildSelect(b, is_nan, nan_r, rne, "");
	r = LLVMBuildTrunc(b, r, g->t_i16, "");
	return r;
}

/* tanh x (f32), as Cephes tanhf: an odd polynomial below |x| = 0.625, else
 * 1 - 2 / (e^2|x| + 1) with the sign of x (both computed, one selected, so
 * the loop stays branch-free). */
static LLVMValueRef build_tanhf(Cg *g, LLVMValueRef x)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef ax = cg_intrinsic(g, "llvm.fabs", g->t_f32, &x, 1);
	LLVMValueRef e = build_expf(g, LLVMBuildFMul(b, ax, fc(g, 2.0), ""));
	LLVMValueRef big = LLVMBuildFSub(b, fc(g, 1.0), LLVMBuildFDiv(b, fc(g, 2.0), LLVMBuildFAdd(b, e, fc(g, 1.0), ""), ""), "");
	LLVMValueRef cs[2] = {big, x};
	big = cg_intrinsic(g, "llvm.copysign", g->t_f32, cs, 2);
	LLVMValueRef z = LLVMBuildFMul(b, x, x, "");
	static const double tc[5] = {-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
	                             -3.33332819422e-1};
	LLVMValueRef p = fc(g, tc[0]);
	for (int i = 1; i < 5; i++)
		p = LLVMBuildFAdd(b, LLVMBuildFMul(b, p, z, ""), fc(g, tc[i]), "");
	LLVMValueRef small = LLVMBuildFAdd(b, LLVMBuildFMul(b, LLVMBuildFMul(b, p, z, ""), x, ""), x, "");
	return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, ax, fc(g, 0.625), ""), small, big, "");
}

/* f64 -> f32 rounded to odd: truncate toward zero, then set the last bit
 * if the conversion was inexact.  Rounding that to f16/bf16 (>= 2 bits
 * shorter) is the correctly rounded result of the double. */
static LLVMValueRef build_f64_to_f32_odd(Cg *g, LLVMValueRef x)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef t = LLVMBuildFPTrunc(b, x, g->t_f32, "t");
	LLVMValueRef back = LLVMBuildFPExt(b, t, g->t_f64, "");
	LLVMValueRef exact = LLVMBuildFCmp(b, LLVMRealUEQ, back, x, "exact"); /* NaN counts as exact */
	LLVMValueRef tb = LLVMBuildBitCast(b, t, g->t_i32, "");
	LLVMValueRef absb = cg_intrinsic(g, "llvm.fabs", g->t_f64, &back, 1);
	LLVMValueRef absx = cg_intrinsic(g, "llvm.fabs", g->t_f64, &x, 1);
	LLVMValueRef up = LLVMBuildFCmp(b, LLVMRealOGT, absb, absx, "roundedup");
	LLVMValueRef tz = LLVMBuildSelect(b, up, LLVMBuildSub(b, tb, u32c(g, 1), ""), tb, "");
	LLVMValueRef odd = LLVMBuildOr(b, tz, u32c(g, 1), "");
	return LLVMBuildBitCast(b, LLVMBuildSelect(b, exact, tb, odd, ""), g->t_f32, "");
}

static LLVMValueRef build_helper(Cg *g, CgHelper h)
{
	static const char *const names[H_COUNT] = {
		[H_F32_TO_F16] = "pk.f32.to.f16", [H_F16_TO_F32] = "pk.f16.to.f32",
		[H_F32_TO_BF16] = "pk.f32.to.bf16", [H_F64_TO_F32_ODD] = "pk.f64.to.f32.odd",
		[H_EXPF] = "pk.expf", [H_TANHF] = "pk.tanhf",
	};
	LLVMTypeRef ret, param;
	switch (h) {
	case H_F32_TO_F16: case H_F32_TO_BF16: ret = g->t_i16; param = g->t_f32; break;
	case H_F16_TO_F32: ret = g->t_f32; param = g->t_i16; break;
	case H_EXPF: case H_TANHF: ret = g->t_f32; param = g->t_f32; break;
	default: ret = g->t_f32; param = g->t_f64; break;
	}
	LLVMTypeRef fty = LLVMFunctionType(ret, &param, 1, 0);
	LLVMValueRef fn = LLVMAddFunction(g->mod, names[h], fty);
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	fn_attr(g, fn, "alwaysinline", 0);
	fn_attr(g, fn, "nounwind", 0);
	fn_attr(g, fn, "willreturn", 0);
	fn_attr(g, fn, "memory", 0);

	LLVMBuilderRef saved = g->b;
	g->b = LLVMCreateBuilderInContext(g->ctx);
	LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));
	LLVMBuilderRef b = g->b;
	LLVMValueRef x = LLVMGetParam(fn, 0);
	LLVMValueRef r;
	switch (h) {
	case H_F32_TO_F16: r = build_f32_to_f16(g, x); break;
	case H_F16_TO_F32: r = build_f16_to_f32(g, x); break;
	case H_F32_TO_BF16: r = build_f32_to_bf16(g, x); break;
	case H_EXPF: r = build_expf(g, x); break;
	case H_TANHF: r = build_tanhf(g, x); break;
	default: r = build_f64_to_f32_odd(g, x); break;
	}
	LLVMBuildRet(b, r);
	LLVMDisposeBuilder(b);
	g->b = saved;
	return fn;
}

static LLVMValueRef call_helper(Cg *g, CgHelper h, LLVMValueRef x)
{
	if (!g->helpers[h])
		g->helpers[h] = build_helper(g, h);
	LLVMValueRef fn = g->helpers[h];
	return LLVMBuildCall2(g->b, LLVMGlobalGetValueType(fn), fn, &x, 1, "");
}

/* The bit pattern of every f16/bf16 value made from bits (a load, a
 * rounding) is remembered, so that storing the value again costs nothing.
 * (The bits are defined just before the value, so they dominate its uses.) */
static void half_remember(Cg *g, DType dt, LLVMValueRef v, LLVMValueRef bits)
{
	CgHalf *h = arena_alloc(g->cc->arena, sizeof *h);
	*h = (CgHalf){bits, dt};
	*ptrmap_slot(g->cc->arena, &g->half_bits, v, true) = h;
}

/* The bits of v as a dt, if known (a float made from f16 bits is not a
 * bf16). */
static LLVMValueRef half_known(Cg *g, DType dt, LLVMValueRef v)
{
	const CgHalf *h = ptrmap_get(&g->half_bits, v);
	return h && h->dt == dt ? h->bits : NULL;
}

/* The LLVM type of a 16-bit float dtype (the CUDA back end's conversions). */
static LLVMTypeRef half_type(Cg *g, DType dt)
{
	return dt == DT_F16 ? LLVMHalfTypeInContext(g->ctx) : LLVMBFloatTypeInContext(g->ctx);
}

/* float -> f16/bf16 bits (round to nearest even).  The GPU converts in
 * hardware (cvt.rn.f16.f32 / cvt.rn.bf16.f32). */
static LLVMValueRef half_bits(Cg *g, DType dt, LLVMValueRef f32)
{
	LLVMValueRef known = half_known(g, dt, f32);
	if (known)
		return known;
	if (g->nvptx)
		return LLVMBuildBitCast(g->b, LLVMBuildFPTrunc(g->b, f32, half_type(g, dt), ""), g->t_i16, "");
	return call_helper(g, dt == DT_F16 ? H_F32_TO_F16 : H_F32_TO_BF16, f32);
}

/* f16/bf16 bits -> float (exact). */
static LLVMValueRef half_value(Cg *g, DType dt, LLVMValueRef bits)
{
	LLVMValueRef v;
	if (g->nvptx) {
		v = LLVMBuildFPExt(g->b, LLVMBuildBitCast(g->b, bits, half_type(g, dt), ""), g->t_f32, "");
	} else if (dt == DT_F16) {
		v = call_helper(g, H_F16_TO_F32, bits);
	} else {
		LLVMValueRef w = LLVMBuildShl(g->b, LLVMBuildZExt(g->b, bits, g->t_i32, ""), u32c(g, 16), "");
		v = LLVMBuildBitCast(g->b, w, g->t_f32, "");
	}
	if (!LLVMIsConstant(v))
		half_remember(g, dt, v, bits);
	return v;
}

LLVMValueRef cg_round(Cg *g, DType dt, LLVMValueRef v)
{
	if (!is_half(dt))
		return v;
	return half_value(g, dt, half_bits(g, dt, v));
}

/* A double rounded (once) to f16/bf16, as a float. */
static LLVMValueRef round_half_f64(Cg *g, DType dt, LLVMValueRef f64)
{
	return cg_round(g, dt, call_helper(g, H_F64_TO_F32_ODD, f64));
}

LLVMValueRef cg_from_mem(Cg *g, DType dt, LLVMValueRef v)
{
	if (dt == DT_BOOL)
		return LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstInt(g->t_i8, 0, 0), "");
	if (is_half(dt))
		return half_value(g, dt, v);
	return v;
}

LLVMValueRef cg_to_mem(Cg *g, DType dt, LLVMValueRef v)
{
	if (dt == DT_BOOL)
		return LLVMBuildZExt(g->b, v, g->t_i8, "");
	if (is_half(dt))
		return half_bits(g, dt, v);
	return v;
}

/* The bits of v (dtype from) as dtype to, of the same width (§7.14): through
 * their memory forms, which hold f16/bf16 as i16 bits. */
LLVMValueRef cg_bitcast(Cg *g, LLVMValueRef v, DType from, DType to)
{
	LLVMValueRef m = cg_to_mem(g, from, v);
	LLVMTypeRef mt = cg_mem_type(g, to);
	if (LLVMTypeOf(m) != mt)
		m = LLVMBuildBitCast(g->b, m, mt, "");
	return cg_from_mem(g, to, m);
}

/* A conversion op: IR_CAST (values) or IR_BITCAST (bits). */
LLVMValueRef cg_convert(Cg *g, Op op, LLVMValueRef v, DType from, DType to)
{
	return op == IR_BITCAST ? cg_bitcast(g, v, from, to) : cg_cast(g, v, from, to);
}

/* ---- casts ----------------------------------------------------------------- */

/* A 64-bit integer as a double rounded to odd (|x| >= 2^53 keeps a sticky
 * bit), so that rounding it again to f16/bf16 is a single correct rounding. */
static LLVMValueRef i64_to_f64_odd(Cg *g, LLVMValueRef x, bool is_signed)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef zero = cg_i64(g, 0);
	LLVMValueRef neg = is_signed ? LLVMBuildICmp(b, LLVMIntSLT, x, zero, "") : NULL;
	LLVMValueRef m = is_signed ? LLVMBuildSelect(b, neg, LLVMBuildSub(b, zero, x, ""), x, "") : x;
	LLVMValueRef args[2] = {m, LLVMConstInt(g->t_i1, 0, 0)};
	LLVMValueRef lz = cg_intrinsic(g, "llvm.ctlz", g->t_i64, args, 2);
	LLVMValueRef big = LLVMBuildICmp(b, LLVMIntULT, lz, cg_i64(g, 11), "");
	LLVMValueRef sh = LLVMBuildSelect(b, big, LLVMBuildSub(b, cg_i64(g, 11), lz, ""), zero, "");
	LLVMValueRef mask = LLVMBuildSub(b, LLVMBuildShl(b, cg_i64(g, 1), sh, ""), cg_i64(g, 1), "");
	LLVMValueRef sticky = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, m, mask, ""), zero, "");
	LLVMValueRef m2 = LLVMBuildOr(b, LLVMBuildLShr(b, m, sh, ""), LLVMBuildZExt(b, sticky, g->t_i64, ""), "");
	LLVMValueRef f = LLVMBuildUIToFP(b, m2, g->t_f64, ""); /* exact: m2 < 2^53 */
	LLVMValueRef scale = LLVMBuildShl(b, LLVMBuildAdd(b, sh, cg_i64(g, 1023), ""), cg_i64(g, 52), "");
	f = LLVMBuildFMul(b, f, LLVMBuildBitCast(b, scale, g->t_f64, ""), ""); /* * 2^sh, exact */
	return is_signed ? LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, f, ""), f, "") : f;
}

LLVMValueRef cg_cast(Cg *g, LLVMValueRef v, DType from, DType to)
{
	LLVMBuilderRef b = g->b;
	if (from == to)
		return v;
	LLVMTypeRef tt = cg_type(g, to);
	if (to == DT_BOOL) {
		if (dtype_is_float(from))
			return LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstReal(LLVMTypeOf(v), 0.0), ""); /* NaN is true */
		return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
	}
	if (from == DT_BOOL)
		return dtype_is_float(to) ? LLVMBuildUIToFP(b, v, tt, "") : LLVMBuildZExt(b, v, tt, "");
	if (dtype_is_int(from) && dtype_is_int(to)) {
		int fb = dtype_bits(from), tb = dtype_bits(to);
		if (fb == tb)
			return v;
		if (fb > tb)
			return LLVMBuildTrunc(b, v, tt, "");
		return dtype_is_signed(from) ? LLVMBuildSExt(b, v, tt, "") : LLVMBuildZExt(b, v, tt, "");
	}
	if (dtype_is_int(from)) { /* to a float */
		bool s = dtype_is_signed(from);
		if (!is_half(to))
			return s ? LLVMBuildSIToFP(b, v, tt, "") : LLVMBuildUIToFP(b, v, tt, "");
		int fb = dtype_bits(from);
		if (fb <= 16) /* exact in float */
			return cg_round(g, to, s ? LLVMBuildSIToFP(b, v, g->t_f32, "") : LLVMBuildUIToFP(b, v, g->t_f32, ""));
		LLVMValueRef d = fb <= 32 ? (s ? LLVMBuildSIToFP(b, v, g->t_f64, "") : LLVMBuildUIToFP(b, v, g->t_f64, ""))
		                          : i64_to_f64_odd(g, v, s);
		return round_half_f64(g, to, d);
	}
	if (dtype_is_int(to)) { /* from a float: saturating, NaN -> 0 (no undefined behaviour) */
		return cg_intrinsic(g, dtype_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tt, &v, 1);
	}
	/* float -> float */
	if (to == DT_F64)
		return LLVMBuildFPExt(b, v, g->t_f64, "");
	if (from == DT_F64)
		return to == DT_F32 ? LLVMBuildFPTrunc(b, v, g->t_f32, "") : round_half_f64(g, to, v);
	return cg_round(g, to, v); /* between f16, bf16 and f32 (all held as float) */
}

/* ---- elementwise ops -------------------------------------------------------- */

/* Python floor division and modulo of integers.  Division by zero gives 0
 * (no trap), and so does x % -1; INT_MIN // -1 wraps to INT_MIN. */
static LLVMValueRef int_floordiv_mod(Cg *g, bool is_mod, bool is_signed, LLVMValueRef a, LLVMValueRef b2)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = LLVMTypeOf(a);
	LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
	LLVMValueRef bz = LLVMBuildICmp(b, LLVMIntEQ, b2, zero, "divzero");
	if (!is_signed) {
		LLVMValueRef d = LLVMBuildSelect(b, bz, one, b2, "");
		LLVMValueRef r = is_mod ? LLVMBuildURem(b, a, d, "") : LLVMBuildUDiv(b, a, d, "");
		return LLVMBuildSelect(b, bz, zero, r, "");
	}
	/* b = -1 would trap (INT_MIN / -1): divide by 1 and fix up below. */
	LLVMValueRef bm1 = LLVMBuildICmp(b, LLVMIntEQ, b2, LLVMConstAllOnes(t), "");
	LLVMValueRef d = LLVMBuildSelect(b, LLVMBuildOr(b, bz, bm1, ""), one, b2, "");
	LLVMValueRef q = LLVMBuildSDiv(b, a, d, "");
	LLVMValueRef r = LLVMBuildSRem(b, a, d, "");
	/* C truncates; Python floors: adjust when the remainder's sign differs
	 * from the divisor's. */
	LLVMValueRef adj = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntNE, r, zero, ""),
	                                LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, d, ""), zero, ""), "");
	if (is_mod) {
		r = LLVMBuildAdd(b, r, LLVMBuildSelect(b, adj, d, zero, ""), "");
		return LLVMBuildSelect(b, LLVMBuildOr(b, bz, bm1, ""), zero, r, "");
	}
	q = LLVMBuildSub(b, q, LLVMBuildZExt(b, adj, t, ""), "");
	q = LLVMBuildSelect(b, bm1, LLVMBuildSub(b, zero, a, ""), q, "");
	return LLVMBuildSelect(b, bz, zero, q, "");
}

/* Truncating integer division and remainder (lax.div, lax.rem, C's / and
 * %) with XLA's values where C traps: x / 0 is -1 (all ones), x rem 0 is x,
 * INT_MIN / -1 wraps to INT_MIN with remainder 0. */
static LLVMValueRef int_div_rem(Cg *g, bool is_rem, bool is_signed, LLVMValueRef a, LLVMValueRef b2)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = LLVMTypeOf(a);
	LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
	LLVMValueRef bz = LLVMBuildICmp(b, LLVMIntEQ, b2, zero, "divzero");
	LLVMValueRef bad = bz, bm1 = NULL;
	if (is_signed) {
		bm1 = LLVMBuildICmp(b, LLVMIntEQ, b2, LLVMConstAllOnes(t), "");
		bad = LLVMBuildOr(b, bz, bm1, "");
	}
	LLVMValueRef d = LLVMBuildSelect(b, bad, one, b2, "");
	LLVMValueRef r = is_rem ? (is_signed ? LLVMBuildSRem(b, a, d, "") : LLVMBuildURem(b, a, d, ""))
	                        : (is_signed ? LLVMBuildSDiv(b, a, d, "") : LLVMBuildUDiv(b, a, d, ""));
	if (bm1) /* x / -1 = -x (wraps), x rem -1 = 0 */
		r = LLVMBuildSelect(b, bm1, is_rem ? zero : LLVMBuildSub(b, zero, a, ""), r, "");
	return LLVMBuildSelect(b, bz, is_rem ? a : LLVMConstAllOnes(t), r, "");
}

/* Python's float // and % (CPython's float_divmod, which NumPy's
 * floor_divide and remainder follow too): the remainder takes the sign of
 * the divisor, zero results get Python's signs, and x // 0 is x / 0
 * (+-inf or nan) as in NumPy. */
static LLVMValueRef float_floordiv_mod(Cg *g, bool is_mod, LLVMValueRef a, LLVMValueRef d)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = LLVMTypeOf(a);
	LLVMValueRef zero = LLVMConstReal(t, 0.0), one = LLVMConstReal(t, 1.0);
	LLVMValueRef ad[2] = {a, d};
	/* NVPTX lowers frem approximately: the GPU uses libdevice's fmod. */
	LLVMValueRef mod = g->nvptx ? math_fn(g, NULL, "fmod", ad, 2) : LLVMBuildFRem(b, a, d, "");
	LLVMValueRef div = LLVMBuildFDiv(b, LLVMBuildFSub(b, a, mod, ""), d, "");
	LLVMValueRef modnz = LLVMBuildFCmp(b, LLVMRealUNE, mod, zero, "");
	LLVMValueRef adj = LLVMBuildAnd(b, modnz,
	                                LLVMBuildXor(b, LLVMBuildFCmp(b, LLVMRealOLT, d, zero, ""),
	                                             LLVMBuildFCmp(b, LLVMRealOLT, mod, zero, ""), ""), "");
	if (is_mod) {
		LLVMValueRef m1 = LLVMBuildSelect(b, adj, LLVMBuildFAdd(b, mod, d, ""), mod, "");
		LLVMValueRef cs[2] = {zero, d};
		return LLVMBuildSelect(b, modnz, m1, cg_intrinsic(g, "llvm.copysign", t, cs, 2), "");
	}
	div = LLVMBuildSelect(b, adj, LLVMBuildFSub(b, div, one, ""), div, "");
	/* Snap to the nearest integer: div is within an ulp or so of it. */
	LLVMValueRef fl = cg_intrinsic(g, "llvm.floor", t, &div, 1);
	LLVMValueRef up = LLVMBuildFCmp(b, LLVMRealOGT, LLVMBuildFSub(b, div, fl, ""), LLVMConstReal(t, 0.5), "");
	fl = LLVMBuildSelect(b, up, LLVMBuildFAdd(b, fl, one, ""), fl, "");
	LLVMValueRef q = LLVMBuildFDiv(b, a, d, "");
	LLVMValueRef cs[2] = {zero, q};
	LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNE, div, zero, ""), fl,
	                                 cg_intrinsic(g, "llvm.copysign", t, cs, 2), "");
	return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, d, zero, ""), q, r, "");
}

/* The internal function pk.ipow.{i,u}N(base, exp): exponentiation by
 * squaring, wrapping like repeated multiplication.  A negative exponent
 * gives the truncated result: 1 for base 1, +-1 for base -1, else 0. */
static LLVMValueRef ipow_fn(Cg *g, LLVMTypeRef t, bool is_signed)
{
	const char *name = arena_printf(g->cc->arena, "pk.ipow.%c%u", is_signed ? 'i' : 'u', LLVMGetIntTypeWidth(t));
	LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
	if (fn)
		return fn;
	LLVMTypeRef params[2] = {t, t};
	fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(t, params, 2, 0));
	LLVMSetLinkage(fn, LLVMInternalLinkage);
	fn_attr(g, fn, "nounwind", 0);
	fn_attr(g, fn, "willreturn", 0);
	fn_attr(g, fn, "memory", 0);

	LLVMBuilderRef saved = g->b;
	LLVMBuilderRef b = g->b = LLVMCreateBuilderInContext(g->ctx);
	LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g->ctx, fn, "entry");
	LLVMBasicBlockRef negb = LLVMAppendBasicBlockInContext(g->ctx, fn, "negexp");
	LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->ctx, fn, "loop");
	LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, fn, "body");
	LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, fn, "done");
	LLVMValueRef base = LLVMGetParam(fn, 0), e = LLVMGetParam(fn, 1);
	LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);

	LLVMPositionBuilderAtEnd(b, entry);
	if (is_signed)
		LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, e, zero, ""), negb, loop);
	else
		LLVMBuildBr(b, loop);

	LLVMPositionBuilderAtEnd(b, negb);
	LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, e, one, ""), zero, "");
	LLVMValueRef m1 = LLVMBuildSelect(b, odd, LLVMConstAllOnes(t), one, "");
	LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, base, LLVMConstAllOnes(t), ""), m1, zero, "");
	r = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, base, one, ""), one, r, "");
	LLVMBuildRet(b, r);

	LLVMPositionBuilderAtEnd(b, loop);
	LLVMValueRef acc = LLVMBuildPhi(b, t, "acc");
	LLVMValueRef bs = LLVMBuildPhi(b, t, "base");
	LLVMValueRef ex = LLVMBuildPhi(b, t, "exp");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, ex, zero, ""), done, body);

	LLVMPositionBuilderAtEnd(b, body);
	LLVMValueRef bit = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, ex, one, ""), zero, "");
	LLVMValueRef acc2 = LLVMBuildSelect(b, bit, LLVMBuildMul(b, acc, bs, ""), acc, "");
	LLVMValueRef bs2 = LLVMBuildMul(b, bs, bs, "");
	LLVMValueRef ex2 = LLVMBuildLShr(b, ex, one, "");
	LLVMBuildBr(b, loop);

	LLVMValueRef in_acc[2] = {one, acc2}, in_bs[2] = {base, bs2}, in_ex[2] = {e, ex2};
	LLVMBasicBlockRef from[2] = {entry, body};
	LLVMAddIncoming(acc, in_acc, from, 2);
	LLVMAddIncoming(bs, in_bs, from, 2);
	LLVMAddIncoming(ex, in_ex, from, 2);

	LLVMPositionBuilderAtEnd(b, done);
	LLVMBuildRet(b, acc);
	LLVMDisposeBuilder(b);
	g->b = saved;
	return fn;
}

/* Shifts: amounts outside [0, width) shift everything out (0, or the sign
 * for an arithmetic right shift) instead of being undefined. */
static LLVMValueRef shift(Cg *g, bool left, bool arith, LLVMValueRef a, LLVMValueRef n)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = LLVMTypeOf(a);
	unsigned w = LLVMGetIntTypeWidth(t);
	LLVMValueRef in_range = LLVMBuildICmp(b, LLVMIntULT, n, LLVMConstInt(t, w, 0), "");
	if (arith) {
		LLVMValueRef amt = LLVMBuildSelect(b, in_range, n, LLVMConstInt(t, w - 1, 0), "");
		return LLVMBuildAShr(b, a, amt, "");
	}
	LLVMValueRef amt = LLVMBuildSelect(b, in_range, n, LLVMConstInt(t, 0, 0), "");
	LLVMValueRef r = left ? LLVMBuildShl(b, a, amt, "") : LLVMBuildLShr(b, a, amt, "");
	return LLVMBuildSelect(b, in_range, r, LLVMConstInt(t, 0, 0), "");
}

static LLVMValueRef unsupported(Cg *g, Op op, DType dt, Loc loc)
{
	error_at(g->cc, loc, "the %s back end does not support '%s' on %s", g->nvptx ? "CUDA" : "host",
	         op_info[op].name, dtype_str(dt));
	g->failed = true;
	return NULL;
}

/* On the GPU, f32/f64 `a * b + c` may contract into an FMA (§4.1):
 * exp2(s * c - m) is one FFMA and one MUFU.EX2.  f16/bf16 keep each op
 * rounded to its dtype (LLVM would otherwise fuse the narrowed ops). */
static LLVMValueRef contractable(Cg *g, DType dt, LLVMValueRef v)
{
	if (g->nvptx && (dt == DT_F32 || dt == DT_F64) && LLVMIsAInstruction(v))
		LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
	return v;
}

/* Float ops.  Results of f16/bf16 computations are rounded by the caller. */
static LLVMValueRef float_op(Cg *g, Op op, DType dt, LLVMValueRef *a, Loc loc)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = LLVMTypeOf(a[0]);
	LLVMValueRef one = LLVMConstReal(t, 1.0);
	switch (op) {
	case IR_ADD: return contractable(g, dt, LLVMBuildFAdd(b, a[0], a[1], ""));
	case IR_SUB: return contractable(g, dt, LLVMBuildFSub(b, a[0], a[1], ""));
	case IR_MUL: return contractable(g, dt, LLVMBuildFMul(b, a[0], a[1], ""));
	case IR_DIV: return LLVMBuildFDiv(b, a[0], a[1], "");
	case IR_FLOORDIV: return float_floordiv_mod(g, false, a[0], a[1]);
	case IR_MOD: return float_floordiv_mod(g, true, a[0], a[1]);
	case IR_REM: /* NVPTX lowers frem approximately: the GPU uses libdevice's fmod */
		return g->nvptx ? math_fn(g, NULL, "fmod", a, 2) : LLVMBuildFRem(b, a[0], a[1], "");
	case IR_POW: return math_fn(g, "llvm.pow", "pow", a, 2);
	case IR_MIN: return cg_intrinsic(g, "llvm.minimum", t, a, 2); /* NaN-propagating, as jnp.minimum */
	case IR_MAX: return cg_intrinsic(g, "llvm.maximum", t, a, 2);
	case IR_NEG: return LLVMBuildFNeg(b, a[0], "");
	case IR_ABS: return cg_intrinsic(g, "llvm.fabs", t, a, 1);
	case IR_EXP: return t == g->t_f32 ? call_helper(g, H_EXPF, a[0]) : math_fn(g, "llvm.exp", "exp", a, 1);
	case IR_EXP2: /* on the GPU, ex2.approx.ftz (2 ulp; §4.1 leaves subnormal results unspecified):
	               * one MUFU.EX2, where libdevice's IEEE exp2f scales around it */
		return g->nvptx && t == g->t_f32 ? cg_intrinsic(g, "llvm.nvvm.ex2.approx.ftz", t, a, 1)
		                                 : math_fn(g, "llvm.exp2", "exp2", a, 1);
	case IR_LOG: return math_fn(g, "llvm.log", "log", a, 1);
	case IR_SQRT: return cg_intrinsic(g, "llvm.sqrt", t, a, 1);
	case IR_SIN: return math_fn(g, "llvm.sin", "sin", a, 1);
	case IR_COS: return math_fn(g, "llvm.cos", "cos", a, 1);
	case IR_FLOOR: return cg_intrinsic(g, "llvm.floor", t, a, 1);
	case IR_CEIL: return cg_intrinsic(g, "llvm.ceil", t, a, 1);
	case IR_LOG1P: return libm1(g, "log1p", a[0]);
	case IR_TANH: return t == g->t_f32 ? call_helper(g, H_TANHF, a[0]) : libm1(g, "tanh", a[0]);
	case IR_ERF: return libm1(g, "erf", a[0]);
	case IR_TAN: case IR_ATAN: case IR_ASIN: case IR_ACOS: case IR_SINH: case IR_COSH: case IR_ASINH:
	case IR_ACOSH: case IR_ATANH: case IR_EXPM1: case IR_CBRT: /* libm's (libdevice's) of the op's name */
		return libm1(g, op_info[op].name, a[0]);
	case IR_ROUND: return cg_intrinsic(g, "llvm.roundeven", t, a, 1); /* half to even; cvt.rni on the GPU */
	case IR_ATAN2: return math_fn(g, "llvm.atan2", "atan2", a, 2);
	case IR_RSQRT: return LLVMBuildFDiv(b, one, cg_intrinsic(g, "llvm.sqrt", t, a, 1), "");
	case IR_SIGMOID: {
		LLVMValueRef nx = LLVMBuildFNeg(b, a[0], "");
		LLVMValueRef e = t == g->t_f32 ? call_helper(g, H_EXPF, nx) : math_fn(g, "llvm.exp", "exp", &nx, 1);
		return LLVMBuildFDiv(b, one, LLVMBuildFAdd(b, one, e, ""), "");
	}
	case IR_EQ: return LLVMBuildFCmp(b, LLVMRealOEQ, a[0], a[1], "");
	case IR_NE: return LLVMBuildFCmp(b, LLVMRealUNE, a[0], a[1], ""); /* nan != nan */
	case IR_LT: return LLVMBuildFCmp(b, LLVMRealOLT, a[0], a[1], "");
	case IR_LE: return LLVMBuildFCmp(b, LLVMRealOLE, a[0], a[1], "");
	case IR_GT: return LLVMBuildFCmp(b, LLVMRealOGT, a[0], a[1], "");
	case IR_GE: return LLVMBuildFCmp(b, LLVMRealOGE, a[0], a[1], "");
	default: return unsupported(g, op, dt, loc);
	}
}

/* Integer and bool ops (bool: i1, unsigned order, add = or, mul = and). */
static LLVMValueRef int_op(Cg *g, Op op, DType dt, LLVMValueRef *a, Loc loc)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef t = LLVMTypeOf(a[0]);
	bool s = dtype_is_signed(dt);
	bool is_bool = dt == DT_BOOL;
	switch (op) {
	case IR_ADD: return is_bool ? LLVMBuildOr(b, a[0], a[1], "") : LLVMBuildAdd(b, a[0], a[1], "");
	case IR_MUL: return is_bool ? LLVMBuildAnd(b, a[0], a[1], "") : LLVMBuildMul(b, a[0], a[1], "");
	case IR_SUB: return is_bool ? unsupported(g, op, dt, loc) : LLVMBuildSub(b, a[0], a[1], "");
	case IR_FLOORDIV: case IR_MOD:
		if (is_bool)
			return unsupported(g, op, dt, loc);
		return int_floordiv_mod(g, op == IR_MOD, s, a[0], a[1]);
	case IR_DIV: case IR_REM:
		if (is_bool)
			return unsupported(g, op, dt, loc);
		return int_div_rem(g, op == IR_REM, s, a[0], a[1]);
	case IR_POW: {
		if (is_bool)
			return unsupported(g, op, dt, loc);
		LLVMValueRef fn = ipow_fn(g, t, s);
		return LLVMBuildCall2(b, LLVMGlobalGetValueType(fn), fn, a, 2, "");
	}
	case IR_MIN: return cg_intrinsic(g, s ? "llvm.smin" : "llvm.umin", t, a, 2);
	case IR_MAX: return cg_intrinsic(g, s ? "llvm.smax" : "llvm.umax", t, a, 2);
	case IR_AND: return LLVMBuildAnd(b, a[0], a[1], "");
	case IR_OR: return LLVMBuildOr(b, a[0], a[1], "");
	case IR_XOR: return LLVMBuildXor(b, a[0], a[1], "");
	case IR_SHL: return is_bool ? unsupported(g, op, dt, loc) : shift(g, true, false, a[0], a[1]);
	case IR_SHR: return is_bool ? unsupported(g, op, dt, loc) : shift(g, false, s, a[0], a[1]);
	case IR_EQ: return LLVMBuildICmp(b, LLVMIntEQ, a[0], a[1], "");
	case IR_NE: return LLVMBuildICmp(b, LLVMIntNE, a[0], a[1], "");
	case IR_LT: return LLVMBuildICmp(b, s ? LLVMIntSLT : LLVMIntULT, a[0], a[1], "");
	case IR_LE: return LLVMBuildICmp(b, s ? LLVMIntSLE : LLVMIntULE, a[0], a[1], "");
	case IR_GT: return LLVMBuildICmp(b, s ? LLVMIntSGT : LLVMIntUGT, a[0], a[1], "");
	case IR_GE: return LLVMBuildICmp(b, s ? LLVMIntSGE : LLVMIntUGE, a[0], a[1], "");
	case IR_NEG: return is_bool ? unsupported(g, op, dt, loc) : LLVMBuildSub(b, LLVMConstInt(t, 0, 0), a[0], "");
	case IR_NOT: return LLVMBuildXor(b, a[0], LLVMConstAllOnes(t), "");
	case IR_POPCNT: return cg_intrinsic(g, "llvm.ctpop", t, a, 1);
	case IR_CLZ: { /* defined at 0: the width */
		LLVMValueRef args[2] = {a[0], LLVMConstInt(g->t_i1, 0, 0)};
		return cg_intrinsic(g, "llvm.ctlz", t, args, 2);
	}
	case IR_ABS: {
		if (!s)
			return a[0];
		LLVMValueRef args[2] = {a[0], LLVMConstInt(g->t_i1, 0, 0)}; /* abs(INT_MIN) = INT_MIN */
		return cg_intrinsic(g, "llvm.abs", t, args, 2);
	}
	default: return unsupported(g, op, dt, loc);
	}
}

/* Ops whose float result needs no rounding to f16/bf16 (exact for values
 * of the dtype). */
static bool exact_op(Op op)
{
	switch (op) {
	case IR_MIN: case IR_MAX: case IR_NEG: case IR_ABS: case IR_FLOOR: case IR_CEIL: case IR_SELECT:
	case IR_ROUND:
		return true;
	default:
		return (op_info[op].flags & F_CMP) != 0;
	}
}

LLVMValueRef cg_elementwise(Cg *g, Op op, DType dt, LLVMValueRef *a, Loc loc)
{
	if (op == IR_SELECT)
		return LLVMBuildSelect(g->b, a[0], a[1], a[2], "");
	if (dtype_is_float(dt)) {
		LLVMValueRef r = float_op(g, op, dt, a, loc);
		return r && !exact_op(op) ? cg_round(g, dt, r) : r;
	}
	if (op_info[op].flags & F_MATH)
		return unsupported(g, op, dt, loc);
	return int_op(g, op, dt, a, loc);
}
