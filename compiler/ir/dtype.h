/* dtype.h - the enums the AST and the IR share: the dtypes of lang-spec
 * §4.1 (one X-macro table: the IR's element types, which the parser also
 * names), parameter modes (§5.1, §5.2) and axis semantics (§5.4). */
#ifndef PKC_DTYPE_H
#define PKC_DTYPE_H

#define PK_DTYPES(X) \
	X(BOOL, "bool") \
	X(I8, "i8") X(I16, "i16") X(I32, "i32") X(I64, "i64") \
	X(U8, "u8") X(U16, "u16") X(U32, "u32") X(U64, "u64") \
	X(F16, "f16") X(BF16, "bf16") X(F32, "f32") X(F64, "f64")

typedef enum DType {
	DT_NONE = 0,
#define X(id, name) DT_##id,
	PK_DTYPES(X)
#undef X
	DT_COUNT
} DType;

typedef enum ParamMode {
	PM_SCALAR, /* no mode: a scalar passed by value */
	PM_IN,     /* in: read-only input array */
	PM_OUT,    /* out: output array */
	PM_INOUT,  /* inout: input aliased to an output (Pallas input_output_aliases) */
	PM_PREFETCH /* prefetch: a read-only integer array the index maps may read (Pallas scalar prefetch, §5.11) */
} ParamMode;

/* Whether an array of this mode is never written (in, prefetch). */
static inline int param_mode_readonly(ParamMode m) { return m == PM_IN || m == PM_PREFETCH; }

typedef enum AxisSemantics { AXIS_PARALLEL, AXIS_ARBITRARY } AxisSemantics;

#endif
