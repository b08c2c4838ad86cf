/* llvm_util.h - private to the two LLVM back ends (host/ and cuda/): the
 * per-compilation LLVM state, the per-function emission state, and the
 * helpers (llvm_*.c) that turn scalar IR into LLVM IR.  Their public
 * interfaces are host/codegen.h and cuda/gpu.h.
 *
 * Value representation (HOST-DESIGN.md):
 *  - every IR scalar has a "compute" LLVM type: bool i1, integers iN,
 *    f16/bf16/f32 float, f64 double.  An f16/bf16 value is a float that is
 *    exactly representable in its dtype (every op rounds its result);
 *  - in user memory (operands, the args struct) bool is i8 and f16/bf16 are
 *    i16 bit patterns; per-program buffers (ALLOC) hold the compute form
 *    except that bool is still i8;
 *  - a Ref is a base pointer plus one i64 element stride per dimension
 *    (row-major). */
#ifndef PKC_LLVM_UTIL_H
#define PKC_LLVM_UTIL_H

#include "ir.h"

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h> /* LLVMTemporaryMDNode */
#include <llvm-c/Target.h>    /* data layout queries */
#include <llvm-c/TargetMachine.h>

/* Internal functions created on first use (see cg_helper). */
typedef enum CgHelper {
	H_F32_TO_F16,     /* i16 (float): IEEE binary16 bits, round to nearest even */
	H_F16_TO_F32,     /* float (i16): exact */
	H_F32_TO_BF16,    /* i16 (float): bfloat16 bits, round to nearest even */
	H_F64_TO_F32_ODD, /* float (double): round to odd, so a second rounding is exact */
	H_EXPF,           /* float (float): e^x, inline so loops of it vectorise */
	H_TANHF,          /* float (float): tanh x, likewise */
	H_COUNT
} CgHelper;

/* The bit pattern (i16) of an f16/bf16 value, as dtype dt (DT_F16 or DT_BF16). */
typedef struct CgHalf {
	LLVMValueRef bits;
	DType dt;
} CgHalf;

/* Per compilation: one context, one module, one builder. */
typedef struct Cg {
	Compiler *cc;           /* for diagnostics and the arena */
	const IrModule *m;      /* the module being compiled */
	LLVMContextRef ctx;     /* owns every type and constant below */
	LLVMTargetMachineRef tm;/* the (first) target's machine: the module's data layout */
	LLVMModuleRef mod;      /* the module every kernel goes into */
	LLVMBuilderRef b;       /* the instruction builder, positioned by the emitters */
	LLVMTypeRef t_void;     /* common types, created once */
	LLVMTypeRef t_i1, t_i8, t_i16, t_i32, t_i64;
	LLVMTypeRef t_f32, t_f64;
	LLVMTypeRef t_ptr;      /* the opaque pointer type (address space 0) */
	LLVMValueRef helpers[H_COUNT]; /* internal conversion functions, NULL until used */
	unsigned md_loop_kind;  /* metadata kind id of !llvm.loop */
	PtrMap half_bits;       /* f16/bf16 value (a float) -> CgHalf: its known bit pattern, so
	                           storing it needs no conversion */
	bool failed;            /* an error was reported: stop emitting */
	bool nvptx;             /* the CUDA back end (nvptx.h) uses these helpers: native f16/bf16
	                           conversions, libdevice (__nv_*) math, device-scope relaxed atomics */
	bool ptx_cas16;         /* 16-bit compare-exchange as inline PTX atom.cas.b16 (nvptx, unless
	                           the module is rewritten to run on the CPU) */
} Cg;

/* A Ref in a function: where element [0, ..., 0] is and how to step. */
typedef struct CgRef {
	LLVMValueRef base;     /* pointer to the first element */
	LLVMValueRef *strides; /* one i64 element stride per dimension (row-major) */
	int rank;              /* number of dimensions */
	DType dtype;           /* element dtype */
	LLVMTypeRef mem;       /* element type in memory */
	bool compute_form;     /* elements are stored in compute form (per-program buffers) */
} CgRef;

/* Per generated function: the mapping of IR values to LLVM values. */
typedef struct CgFn {
	Cg *g;                 /* the compilation */
	const IrKernel *k;     /* the kernel whose IR is emitted */
	LLVMValueRef fn;       /* the LLVM function being built */
	LLVMValueRef *vals;    /* per Value.id: its LLVM value (NULL until defined) */
	CgRef **refs;          /* per Value.id: the Ref it denotes (NULL unless a Ref) */
	LLVMValueRef pid;      /* program function: the pid array (i32 per axis); NULL in the launch stub */
	LLVMValueRef nprog;    /* program function: the nprog array; NULL in the launch stub */
	const char *where;     /* "body", "grid", "requires": for diagnostics */
} CgFn;

/* ---- llvm_module.c: one compilation's LLVM state ------------------------ */

/* LLVM's process-wide options (pkc's pass settings), once, before the
 * first pass of either back end runs. */
void cg_llvm_init(void);
/* The -O level (-O0..-O3) of an option value, clamped to 0..3. */
int cg_opt_level(int opt_level);
/* The code generator's level for that -O level. */
LLVMCodeGenOptLevel cg_codegen_level(int opt_level);
/* Sets g up for one module: cc and m, a context whose LLVM errors are
 * internal errors, the module (named after m's source) for `triple` with
 * tm's data layout, a builder and the common types.  g takes tm.  The
 * caller's fields (nvptx, ptx_cas16) are kept. */
void cg_open(Cg *g, Compiler *cc, const IrModule *m, const char *triple, LLVMTargetMachineRef tm);
/* Verifies the module: a broken one is an internal error. */
void cg_verify(Cg *g);
/* Disposes the builder, the module, the target machine and the context. */
void cg_close(Cg *g);

/* ---- llvm_scalar.c: types, constants, conversions, elementwise ops ------- */

LLVMTypeRef cg_type(Cg *g, DType dt);     /* compute type */
LLVMTypeRef cg_mem_type(Cg *g, DType dt); /* type in user memory */
LLVMValueRef cg_const(Cg *g, DType dt, int64_t ival, double fval);
/* Memory form <-> compute form (user memory: bool i8, f16/bf16 i16). */
LLVMValueRef cg_from_mem(Cg *g, DType dt, LLVMValueRef v);
LLVMValueRef cg_to_mem(Cg *g, DType dt, LLVMValueRef v);
/* Rounds a float holding an f16/bf16 computation to that dtype (identity for
 * other dtypes). */
LLVMValueRef cg_round(Cg *g, DType dt, LLVMValueRef v);
LLVMValueRef cg_cast(Cg *g, LLVMValueRef v, DType from, DType to);
/* IR_CAST (cg_cast) or IR_BITCAST (the same bits as another dtype of one width). */
LLVMValueRef cg_convert(Cg *g, Op op, LLVMValueRef v, DType from, DType to);
/* An elementwise op (F_ELEMWISE other than CAST) on compute-form operands.
 * dt is the operands' dtype (the condition's is bool for SELECT: pass the
 * dtype of the other two).  Returns NULL after error_at for a combination the
 * back end does not implement. */
LLVMValueRef cg_elementwise(Cg *g, Op op, DType dt, LLVMValueRef *a, Loc loc);
/* Calls an overloaded LLVM intrinsic ("llvm.smax") on the type of args[0]. */
LLVMValueRef cg_intrinsic(Cg *g, const char *name, LLVMTypeRef overload, LLVMValueRef *args, int nargs);
/* Calls (declaring on first use) an external C function such as tanhf. */
LLVMValueRef cg_call_extern(Cg *g, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int nparams,
                            bool vararg, LLVMValueRef *args, int nargs);
/* Adds the enum attribute `name` (with value val) to a function
 * (LLVMAttributeFunctionIndex), its return value or parameter index - 1. */
void cg_attr(Cg *g, LLVMValueRef fn, LLVMAttributeIndex index, const char *name, uint64_t val);
LLVMValueRef cg_i64(Cg *g, int64_t v);
LLVMValueRef cg_i32(Cg *g, int32_t v);
/* A new basic block at the end of the current function. */
LLVMBasicBlockRef cg_block(Cg *g, const char *name);
/* In a launch function: if (failed) return pk_set_error(st, fmt, args...);
 * the builder goes on after it. */
void cg_fail_if(Cg *g, LLVMValueRef failed, int st, const char *fmt, LLVMValueRef *args, int nargs);

/* ---- llvm_debug.c: debug_print, debug_check (§7.19) ---------------------- */

/* Prints fmt (its "{}" placeholders) with the n compute-form values of
 * dtypes dts and a newline: printf on the host, vprintf on the GPU. */
void cg_debug_print(Cg *g, const char *fmt, LLVMValueRef *vals, const DType *dts, int n);
/* The host's debug_print of scalars and blocks (§7.19) through the runtime's
 * pk_debug_print: blocks[j] is the type of a block whose buffer vals[j]
 * points at, NULL for a scalar value. */
void cg_debug_print_host(Cg *g, const char *fmt, LLVMValueRef *vals, const DType *dts, const Type *const *blocks,
                         int n);
/* Unless ok: prints "file:line:col: debug_check failed: msg" and stops -
 * the host process aborts (after flushing stdio), a GPU thread traps. */
void cg_debug_check(Cg *g, LLVMValueRef ok, const char *msg, Loc loc);

/* ---- llvm_region.c: regions, control flow, memory ------------------------ */

/* Emits region r at the builder's position with its arguments bound to args
 * (nargs values, or Refs set beforehand in f->refs) and stores the YIELD
 * operands in yields (the caller knows how many).  Returns false after
 * error_at. */
bool cg_region(CgFn *f, const Region *r, LLVMValueRef *args, LLVMValueRef *yields);

/* Per-program buffers: places every ALLOC of the body at the current
 * position (the entry block) and records its CgRef.  Local buffers of at
 * most 256 KiB in total are one alloca, larger ones one aligned_alloc whose
 * pointer is returned in *heap (NULL when none) for cg_free_buffers.
 * Scratch buffers are thread-local: they persist from one program to the
 * next on a thread. */
bool cg_alloc_buffers(CgFn *f, const Region *body, LLVMValueRef *heap);
void cg_free_buffers(CgFn *f, LLVMValueRef heap);

/* The trip count (i64) of `for iv in range(lo, hi, step)` over integer dtype
 * dt: computed in 64 bits so no overflow of iv can loop forever; step 0
 * runs no iterations. */
LLVMValueRef cg_for_trips(Cg *g, DType dt, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef step);

/* The atomic op `kind` (AtomicKind) on the element at p of dtype dt, stored
 * as mem (compute_form: a per-program buffer's compute form), with v (and
 * cmp for CAS) in compute form.  Returns the old value in compute form, or
 * NULL after error_at(loc) naming `kernel`.  Sequentially consistent on the
 * host; relaxed at device scope when g->nvptx (lang-spec §7.8 orders
 * nothing else). */
LLVMValueRef cg_atomic(Cg *g, int kind, DType dt, LLVMTypeRef mem, bool compute_form, LLVMValueRef p,
                       LLVMValueRef v, LLVMValueRef cmp, const char *kernel, Loc loc);

/* A CgRef for a Ref of type t at base, with dynamic dims given by size
 * values (sizes[i] is size symbol i of the kernel, i64). */
CgRef *cg_make_ref(CgFn *f, const Type *t, LLVMValueRef base, LLVMValueRef *sizes, bool compute_form, Loc loc);

#endif
