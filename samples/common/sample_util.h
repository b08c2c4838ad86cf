/* sample_util.h - helpers shared by the sample programs (samples/<name>.c)
 * and the execution tests (test/exec/): a deterministic PRNG, f16/bf16
 * conversions, error norms, option parsing, device buffers and NumPy .npy
 * dumps.  Plain C11; link sample_util.c, libpkrt, -lm and -pthread.
 *
 * A sample program's skeleton:
 *
 *     int64_t n = 1000003;
 *     su_size sizes[] = {{"n", &n}};
 *     su_opts o;
 *     if (su_parse(argc, argv, "add_vectors", sizes, 1, &o)) return 2;
 *     su_rng r = su_rng_new(o.seed);
 *     ... fill inputs with su_uniform(&r, -1, 1) ...
 *     su_ctx c; if (su_ctx_init(&c, &o)) return 1;
 *     float *dx = su_to_device(&c, x, n * sizeof *x);      // NULL on error
 *     float *dout = su_alloc_poisoned(&c, n * sizeof *out);  // 0xFF bytes (NaN)
 *     su_launch_begin(&c);
 *     pk_status st = add_vectors(c.stream, dx, ..., n);
 *     if (st == PK_SUCCESS) st = su_launch_end(&c);
 *     if (su_check(st, "add_vectors")) return 1;           // prints pk_last_error()
 *     su_from_device(&c, out, dout, n * sizeof *out);
 *     su_err e = {0}; for (...) su_err_add(&e, out[i], ref[i]);
 *     su_dump *d = su_dump_begin(&o);                      // --dump DIR, else NULL
 *     SU_DUMP(d, "x", SU_F32, x, n); ...; su_dump_finish(d);
 *     return su_report(&c, &e, SU_TOL_F32, "n=%lld", (long long)n);
 */
#ifndef SAMPLE_UTIL_H
#define SAMPLE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pk_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- PRNG: splitmix64, deterministic for a seed ------------------------- */

typedef struct su_rng {
	uint64_t state;
} su_rng;

su_rng su_rng_new(uint64_t seed);
uint64_t su_next(su_rng *r);
/* Uniform in [lo, hi) (24 random bits). */
float su_uniform(su_rng *r, float lo, float hi);
/* Uniform in [lo, hi) as a double (53 random bits). */
double su_uniform_d(su_rng *r, double lo, double hi);
/* Uniform integer in [lo, hi] (inclusive; hi >= lo). */
int64_t su_int(su_rng *r, int64_t lo, int64_t hi);
/* A nonzero float in [lo, hi): redraws exact zeros, so inputs are never 0. */
float su_nonzero(su_rng *r, float lo, float hi);

/* ---- f16 / bf16 --------------------------------------------------------- */

/* Round to nearest even; overflow gives +-inf; NaN stays NaN (quiet). */
uint16_t su_f32_to_f16(float f);
float su_f16_to_f32(uint16_t h);
uint16_t su_f32_to_bf16(float f);
float su_bf16_to_f32(uint16_t b);
/* The float rounded through f16 / bf16 and back. */
float su_round_f16(float f);
float su_round_bf16(float f);

/* ---- attention reference ------------------------------------------------ */

/* One query row of attention in double: o[0..dim) = sum_j p_j v_j / sum_j p_j,
 * p_j = exp(s_j - max s), s_j = scale * (q . k_j), over n key rows of 16-bit
 * values (bf16 if `bf16`, else f16; k's and v's rows `stride` elements
 * apart).  o is zeros when n is 0.  Returns the row's natural log-sum-exp
 * log(sum_j exp(s_j)) (-inf when n is 0).  s: scratch of n doubles. */
double su_attention_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, int64_t stride, int n, int dim,
                        double scale, int bf16, double *o, double *s);

/* ---- error norms -------------------------------------------------------- */

/* Accumulates ||out - ref||_2, ||ref||_2 and max |out - ref| in double.
 * A NaN/inf in out (or ref) makes the error non-finite, so it never passes. */
typedef struct su_err {
	double diff2;   /* sum (out - ref)^2 */
	double ref2;    /* sum ref^2 */
	double max_abs; /* max |out - ref| */
	bool nonfinite; /* some out or ref was NaN/inf */
	size_t count;
	size_t first_bad; /* index of the first element with the largest error */
} su_err;

void su_err_add(su_err *e, double out, double ref);
/* ||out - ref|| / ||ref|| (NaN when something was not finite; the absolute
 * norm when ||ref|| is 0). */
double su_err_rel(const su_err *e);

#define SU_TOL_F32 1e-5
#define SU_TOL_F16 1e-2
#define SU_TOL_EXACT 0.0 /* integer outputs: every element must match */

/* ---- options -------------------------------------------------------------- */

/* One size symbol option: --<name> N (N >= 0). */
typedef struct su_size {
	const char *name;
	int64_t *value;
} su_size;

typedef struct su_opts {
	const char *prog;   /* the sample's name, for messages */
	uint64_t seed;      /* --seed N (default 1) */
	const char *dump;   /* --dump DIR (NULL: no dump) */
	int verbose;        /* -v / --verbose: print the device and the time */
	const char *device; /* --device host|cuda|auto (default: $PK_DEVICE, else auto) */
	const su_size *sizes;
	int nsizes;
} su_opts;

/* Parses argv: --seed N, --dump DIR, --device D, -v, --help and one
 * --<size> N per entry of `sizes` (also --<size>=N).  Returns 0 on success,
 * 1 after --help, 2 on a bad command line (a message on stderr). */
int su_parse(int argc, char **argv, const char *prog, const su_size *sizes, int nsizes, su_opts *o);

/* ---- devices, buffers, launches -------------------------------------------- */

typedef struct su_ctx {
	const su_opts *opts;
	pk_device *dev;
	pk_stream *stream; /* NULL: the default host stream */
	double t_launch;   /* seconds taken by the last su_launch_end */
	double t_start;
} su_ctx;

/* Picks the device (--device; auto: a CUDA device if this runtime has one,
 * else the host) and starts its thread pool.  0 on success, else prints
 * pk_last_error() and returns 1. */
int su_ctx_init(su_ctx *c, const su_opts *o);
void su_ctx_free(su_ctx *c);

/* Device buffers: a copy of host data, or `bytes` of 0xFF bytes (NaN for
 * floats, -1 for integers) so that elements the kernel does not write fail
 * the comparison.  NULL (and a message on stderr) on failure. */
void *su_to_device(su_ctx *c, const void *host, size_t bytes);
void *su_alloc_poisoned(su_ctx *c, size_t bytes);
int su_from_device(su_ctx *c, void *host, const void *dev, size_t bytes);
void su_free(su_ctx *c, void *dev);

/* Timing around a launch: su_launch_begin(c); st = kernel(...);
 * su_launch_end(c) synchronizes the stream and records c->t_launch. */
void su_launch_begin(su_ctx *c);
pk_status su_launch_end(su_ctx *c);

/* 0 if st is PK_SUCCESS, else prints "<what>: PK_ERR_...: <pk_last_error()>"
 * on stderr and returns 1. */
int su_check(pk_status st, const char *what);

/* Prints "<prog>: <sizes> max_abs_err=... rel_err=... OK|FAILED" and returns
 * the exit status: 0 when rel_err is finite and <= tol (tol 0: exact), else
 * 1.  With -v, first prints the device and the launch time. */
int su_report(const su_ctx *c, const su_err *e, double tol, const char *sizes_fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

double su_now(void); /* monotonic seconds */

/* Allocation that exits on failure (host memory for inputs and references). */
void *su_xmalloc(size_t bytes);

/* ---- dumps (--dump DIR) --------------------------------------------------- */

typedef enum su_dtype {
	SU_BOOL, SU_I8, SU_I16, SU_I32, SU_I64, SU_U8, SU_U16, SU_U32, SU_U64,
	SU_F16, SU_BF16, SU_F32, SU_F64
} su_dtype;

size_t su_dtype_size(su_dtype dt);

/* Writes a NumPy .npy (format 1.0, little-endian, C order) file; bf16 is
 * written as '<u2' bit patterns.  0 on success. */
int su_write_npy(const char *path, su_dtype dt, const void *data, int ndim, const int64_t *shape);

/* Collects a dump: DIR/<param>.npy for every array parameter and
 * DIR/sizes.json = {"sizes": {...}, "scalars": {...}, "consts": {...}, "bf16": [...]}.
 * For an inout parameter, su_dump_array writes the contents after the run
 * as DIR/<param>.npy and su_dump_initial its contents before the run as
 * DIR/in/<param>.npy.  A no-op when o->dump is NULL.  Errors are reported
 * on stderr and make su_dump_finish return 1. */
typedef struct su_dump su_dump;
su_dump *su_dump_begin(const su_opts *o);
void su_dump_array(su_dump *d, const char *param, su_dtype dt, const void *data, int ndim,
                   const int64_t *shape);
void su_dump_initial(su_dump *d, const char *param, su_dtype dt, const void *data, int ndim,
                     const int64_t *shape);
void su_dump_scalar(su_dump *d, const char *param, double value);
/* Records the value of a const the kernel was compiled with (-D), as its
 * .pk text ("128", "true", "bf16"), under "consts" in sizes.json. */
void su_dump_const(su_dump *d, const char *name, const char *value);
/* Writes sizes.json and frees d; returns 1 if anything failed. */
int su_dump_finish(su_dump *d);

/* A macro's value as a string: su_dump_const(d, "SEQ", SU_STR(SEQ)). */
#define SU_STR_(x) #x
#define SU_STR(x) SU_STR_(x)

/* Shape arguments without counting: SU_DUMP(d, "x", SU_F32, x, rows, COLS). */
#define SU_NDIM(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define SU_DUMP(d, param, dt, data, ...) \
	su_dump_array((d), (param), (dt), (data), SU_NDIM(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})
#define SU_DUMP_INITIAL(d, param, dt, data, ...) \
	su_dump_initial((d), (param), (dt), (data), SU_NDIM(__VA_ARGS__), (const int64_t[]){__VA_ARGS__})

#ifdef __cplusplus
}
#endif

#endif /* SAMPLE_UTIL_H */
