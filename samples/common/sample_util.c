/* sample_util.c - see sample_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "sample_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- PRNG ------------------------------------------------------------------ */

su_rng su_rng_new(uint64_t seed)
{
	su_rng r;
	r.state = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	return r;
}

uint64_t su_next(su_rng *r)
{
	uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

float su_uniform(su_rng *r, float lo, float hi)
{
	float u = (float)(su_next(r) >> 40) * 0x1p-24f;
	float v = lo + (hi - lo) * u;
	return v < hi ? v : lo;
}

double su_uniform_d(su_rng *r, double lo, double hi)
{
	double u = (double)(su_next(r) >> 11) * 0x1p-53;
	return lo + (hi - lo) * u;
}

int64_t su_int(su_rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
	if (span == 0) /* the whole 64-bit range */
		return (int64_t)su_next(r);
	return (int64_t)((uint64_t)lo + su_next(r) % span);
}

float su_nonzero(su_rng *r, float lo, float hi)
{
	for (;;) {
		float v = su_uniform(r, lo, hi);
		if (v != 0.0f)
			return v;
	}
}

/* ---- f16 / bf16 -------------------------------------------------------------- */

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static float bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

uint16_t su_f32_to_f16(float f)
{
	uint32_t x = f32_bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
	x &= 0x7fffffffu;
	if (x > 0x7f800000u) /* NaN: quiet, keep some payload */
		return (uint16_t)(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
	if (x >= 0x477ff000u) /* >= 65520 rounds to inf (and inf itself) */
		return (uint16_t)(sign | 0x7c00u);
	if (x < 0x38800000u) { /* below 2^-14: an f16 subnormal (or 0) */
		/* Scaling by 2^24 is exact; nearbyint rounds to nearest even.
		 * 1024 (0x400) is the smallest normal, encoded correctly. */
		float m = nearbyintf(bits_f32(x) * 0x1p24f);
		return (uint16_t)(sign | (uint16_t)m);
	}
	uint32_t odd = (x >> 13) & 1u;
	x += 0xc8000fffu + odd; /* rebias the exponent by (15 - 127), round */
	return (uint16_t)(sign | (uint16_t)(x >> 13));
}

float su_f16_to_f32(uint16_t h)
{
	int exp = (h >> 10) & 0x1f;
	int mant = h & 0x3ff;
	float v;
	if (exp == 0)
		v = ldexpf((float)mant, -24);
	else if (exp == 31)
		v = mant ? NAN : INFINITY;
	else
		v = ldexpf((float)(mant | 0x400), exp - 25);
	return (h & 0x8000) ? -v : v;
}

uint16_t su_f32_to_bf16(float f)
{
	uint32_t x = f32_bits(f);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u);
	x += 0x7fffu + ((x >> 16) & 1u);
	return (uint16_t)(x >> 16);
}

float su_bf16_to_f32(uint16_t b)
{
	return bits_f32((uint32_t)b << 16);
}

float su_round_f16(float f)
{
	return su_f16_to_f32(su_f32_to_f16(f));
}

float su_round_bf16(float f)
{
	return su_bf16_to_f32(su_f32_to_bf16(f));
}

/* ---- attention reference ----------------------------------------------------- */

double su_attention_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, int64_t stride, int n, int dim,
                        double scale, int bf16, double *o, double *s)
{
	float (*from)(uint16_t) = bf16 ? su_bf16_to_f32 : su_f16_to_f32;
	double mx = -INFINITY, l = 0;
	for (int j = 0; j < n; j++) {
		double dotp = 0;
		for (int d = 0; d < dim; d++)
			dotp += (double)from(q[d]) * from(k[j * stride + d]);
		s[j] = dotp * scale;
		mx = s[j] > mx ? s[j] : mx;
	}
	for (int d = 0; d < dim; d++)
		o[d] = 0;
	for (int j = 0; j < n; j++) {
		double p = exp(s[j] - mx);
		l += p;
		for (int d = 0; d < dim; d++)
			o[d] += p * from(v[j * stride + d]);
	}
	for (int d = 0; d < dim && n > 0; d++)
		o[d] /= l;
	return n > 0 ? mx + log(l) : -INFINITY;
}

/* ---- errors ----------------------------------------------------------------- */

void su_err_add(su_err *e, double out, double ref)
{
	size_t i = e->count++;
	if (!isfinite(out) || !isfinite(ref)) {
		if (!e->nonfinite)
			e->first_bad = i;
		e->nonfinite = true;
		return;
	}
	double d = fabs(out - ref);
	e->diff2 += d * d;
	e->ref2 += ref * ref;
	if (d > e->max_abs && !e->nonfinite) {
		e->max_abs = d;
		e->first_bad = i;
	}
}

double su_err_rel(const su_err *e)
{
	if (e->nonfinite)
		return NAN;
	if (e->ref2 == 0.0)
		return sqrt(e->diff2);
	return sqrt(e->diff2) / sqrt(e->ref2);
}

/* ---- options ----------------------------------------------------------------- */

static int parse_int(const char *prog, const char *opt, const char *s, int64_t lo, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < lo) {
		fprintf(stderr, "%s: %s needs an integer >= %lld, not '%s'\n", prog, opt, (long long)lo, s);
		return 2;
	}
	*out = v;
	return 0;
}

static void usage(const su_opts *o, FILE *f)
{
	fprintf(f, "usage: %s [--seed N] [--dump DIR] [--device host|cuda|auto] [-v]", o->prog);
	for (int i = 0; i < o->nsizes; i++)
		fprintf(f, " [--%s N]", o->sizes[i].name);
	fprintf(f, "\n\nRuns the %s kernel on random inputs and checks it against a C reference.\n", o->prog);
	fprintf(f, "  --seed N      seed of the input generator (default 1)\n");
	fprintf(f, "  --dump DIR    write DIR/<param>.npy for every array and DIR/sizes.json\n");
	fprintf(f, "  --device D    host, cuda, or auto (default: $PK_DEVICE, else auto: a GPU if there is one)\n");
	fprintf(f, "  -v            print the device and the launch time\n");
	for (int i = 0; i < o->nsizes; i++)
		fprintf(f, "  --%-11s size symbol %s (default %lld)\n", o->sizes[i].name, o->sizes[i].name,
		        (long long)*o->sizes[i].value);
}

int su_parse(int argc, char **argv, const char *prog, const su_size *sizes, int nsizes, su_opts *o)
{
	memset(o, 0, sizeof *o);
	o->prog = prog;
	o->seed = 1;
	/* The default device comes from PK_DEVICE (host|cuda|auto), if set;
	 * --device overrides it. */
	const char *env = getenv("PK_DEVICE");
	o->device = "auto";
	if (env && *env) {
		if (strcmp(env, "host") && strcmp(env, "cuda") && strcmp(env, "auto")) {
			fprintf(stderr, "%s: PK_DEVICE must be host, cuda or auto, not '%s'\n", prog, env);
			return 2;
		}
		o->device = env;
	}
	o->sizes = sizes;
	o->nsizes = nsizes;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			o->verbose = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(o, stdout);
			return 1;
		}
		if (strncmp(a, "--", 2) != 0) {
			fprintf(stderr, "%s: unexpected argument '%s'\n", prog, a);
			usage(o, stderr);
			return 2;
		}
		/* --name VALUE or --name=VALUE */
		const char *name = a + 2;
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const char *val = eq ? eq + 1 : NULL;
#define IS(s) (len == strlen(s) && !strncmp(name, s, len))
		int known = IS("seed") || IS("dump") || IS("device");
		for (int k = 0; k < nsizes && !known; k++)
			known = IS(sizes[k].name);
		if (!known) {
			fprintf(stderr, "%s: unknown option '--%.*s'\n", prog, (int)len, name);
			usage(o, stderr);
			return 2;
		}
		if (!val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: %s needs a value\n", prog, a);
				return 2;
			}
			val = argv[++i];
		}
		if (IS("seed")) {
			int64_t v;
			if (parse_int(prog, "--seed", val, 0, &v))
				return 2;
			o->seed = (uint64_t)v;
		} else if (IS("dump")) {
			o->dump = val;
		} else if (IS("device")) {
			if (strcmp(val, "host") && strcmp(val, "cuda") && strcmp(val, "auto")) {
				fprintf(stderr, "%s: --device must be host, cuda or auto, not '%s'\n", prog, val);
				return 2;
			}
			o->device = val;
		} else {
			int k = 0;
			while (!IS(sizes[k].name))
				k++;
			char opt[64];
			snprintf(opt, sizeof opt, "--%s", sizes[k].name);
			if (parse_int(prog, opt, val, 0, sizes[k].value))
				return 2;
		}
#undef IS
	}
	return 0;
}

/* ---- devices and buffers ------------------------------------------------------- */

double su_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *su_xmalloc(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);
	if (!p) {
		fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
		exit(1);
	}
	return p;
}

int su_check(pk_status st, const char *what)
{
	if (st == PK_SUCCESS)
		return 0;
	fprintf(stderr, "%s: %s: %s\n", what, pk_status_name(st), pk_last_error());
	return 1;
}

int su_ctx_init(su_ctx *c, const su_opts *o)
{
	memset(c, 0, sizeof *c);
	c->opts = o;
	pk_device_kind kind = PK_DEVICE_HOST;
	if (strcmp(o->device, "host") != 0) {
		int n = 0;
		if (su_check(pk_device_count(PK_DEVICE_CUDA, &n), o->prog))
			return 1;
		if (n > 0)
			kind = PK_DEVICE_CUDA;
		else if (!strcmp(o->device, "cuda")) {
			fprintf(stderr, "%s: no CUDA device in this build/machine\n", o->prog);
			return 1;
		}
	}
	if (su_check(pk_device_get(kind, 0, &c->dev), o->prog))
		return 1;
	if (su_check(pk_stream_create(c->dev, &c->stream), o->prog))
		return 1;
	if (kind == PK_DEVICE_HOST)
		(void)pk_host_num_threads(); /* start the pool outside the timed launch */
	return 0;
}

void su_ctx_free(su_ctx *c)
{
	if (c->stream)
		su_check(pk_stream_destroy(c->stream), c->opts->prog);
	c->stream = NULL;
}

void *su_to_device(su_ctx *c, const void *host, size_t bytes)
{
	void *p = NULL;
	if (su_check(pk_malloc(c->dev, bytes, &p), c->opts->prog))
		return NULL;
	if (su_check(pk_memcpy(c->stream, p, host, bytes, PK_MEMCPY_HOST_TO_DEVICE), c->opts->prog)) {
		pk_free(c->dev, p);
		return NULL;
	}
	return p;
}

void *su_alloc_poisoned(su_ctx *c, size_t bytes)
{
	void *p = NULL;
	if (su_check(pk_malloc(c->dev, bytes, &p), c->opts->prog))
		return NULL;
	if (su_check(pk_memset(c->stream, p, 0xFF, bytes), c->opts->prog)) {
		pk_free(c->dev, p);
		return NULL;
	}
	return p;
}

int su_from_device(su_ctx *c, void *host, const void *dev, size_t bytes)
{
	if (su_check(pk_memcpy(c->stream, host, dev, bytes, PK_MEMCPY_DEVICE_TO_HOST), c->opts->prog))
		return 1;
	return su_check(pk_stream_synchronize(c->stream), c->opts->prog);
}

void su_free(su_ctx *c, void *dev)
{
	if (dev)
		pk_free(c->dev, dev);
}

void su_launch_begin(su_ctx *c)
{
	c->t_start = su_now();
}

pk_status su_launch_end(su_ctx *c)
{
	pk_status st = pk_stream_synchronize(c->stream);
	c->t_launch = su_now() - c->t_start;
	return st;
}

int su_report(const su_ctx *c, const su_err *e, double tol, const char *sizes_fmt, ...)
{
	const su_opts *o = c->opts;
	char sizes[512];
	va_list ap;
	va_start(ap, sizes_fmt);
	vsnprintf(sizes, sizeof sizes, sizes_fmt, ap);
	va_end(ap);
	double rel = su_err_rel(e);
	bool ok = tol == 0.0 ? (!e->nonfinite && e->diff2 == 0.0) : (isfinite(rel) && rel < tol);
	if (e->count == 0)
		ok = false; /* nothing compared is a bug in the sample */
	if (o->verbose) {
		printf("%s: device: %s\n", o->prog, pk_device_name(c->dev));
		printf("%s: launch time: %.3f ms\n", o->prog, c->t_launch * 1e3);
	}
	printf("%s: %s max_abs_err=%.3g rel_err=%.3g %s\n", o->prog, sizes, e->nonfinite ? NAN : e->max_abs,
	       rel, ok ? "OK" : "FAILED");
	fflush(stdout);
	if (!ok)
		fprintf(stderr, "%s: mismatch (tolerance %g%s); worst element at flat index %zu\n", o->prog, tol,
		        tol == 0.0 ? ": exact" : "", e->first_bad);
	return ok ? 0 : 1;
}

/* ---- .npy dumps ----------------------------------------------------------------- */

size_t su_dtype_size(su_dtype dt)
{
	switch (dt) {
	case SU_BOOL: case SU_I8: case SU_U8: return 1;
	case SU_I16: case SU_U16: case SU_F16: case SU_BF16: return 2;
	case SU_I32: case SU_U32: case SU_F32: return 4;
	case SU_I64: case SU_U64: case SU_F64: return 8;
	}
	return 0;
}

static const char *npy_descr(su_dtype dt)
{
	switch (dt) {
	case SU_BOOL: return "|b1";
	case SU_I8: return "|i1";
	case SU_U8: return "|u1";
	case SU_I16: return "<i2";
	case SU_U16: return "<u2";
	case SU_F16: return "<f2";
	case SU_BF16: return "<u2"; /* bit patterns; listed under "bf16" in sizes.json */
	case SU_I32: return "<i4";
	case SU_U32: return "<u4";
	case SU_F32: return "<f4";
	case SU_I64: return "<i8";
	case SU_U64: return "<u8";
	case SU_F64: return "<f8";
	}
	return "?";
}

int su_write_npy(const char *path, su_dtype dt, const void *data, int ndim, const int64_t *shape)
{
	char hdr[512];
	int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(dt));
	size_t count = 1;
	for (int i = 0; i < ndim; i++) {
		n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%lld,%s", (long long)shape[i],
		              i + 1 < ndim ? " " : "");
		count *= (size_t)shape[i];
	}
	if (ndim > 1)
		n--; /* NumPy writes (3, 4), but (3,) for one dimension */
	n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
	/* Pad with spaces and end with \n so the data starts 64-byte aligned. */
	size_t total = 10 + (size_t)n + 1;
	size_t pad = (64 - total % 64) % 64;
	size_t hlen = (size_t)n + pad + 1;
	FILE *f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
	                         (unsigned char)(hlen >> 8)};
	fwrite(pre, 1, sizeof pre, f);
	fwrite(hdr, 1, (size_t)n, f);
	for (size_t i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	/* x86-64 is little-endian: the bytes go out as they are. */
	size_t bytes = count * su_dtype_size(dt);
	if (bytes && fwrite(data, 1, bytes, f) != bytes) {
		fclose(f);
		fprintf(stderr, "cannot write %s\n", path);
		return 1;
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

#define SU_DUMP_MAX 32

struct su_dump {
	const su_opts *o;
	int failed;
	int nscalars, nbf16, nconsts;
	const char *scalar_names[SU_DUMP_MAX];
	const char *const_names[SU_DUMP_MAX], *const_values[SU_DUMP_MAX];
	double scalars[SU_DUMP_MAX];
	const char *bf16[SU_DUMP_MAX];
};

static int mkdir_p(const char *dir)
{
	char buf[4096];
	size_t len = strlen(dir);
	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	if (mkdir(buf, 0777) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

su_dump *su_dump_begin(const su_opts *o)
{
	if (!o->dump)
		return NULL;
	su_dump *d = su_xmalloc(sizeof *d);
	memset(d, 0, sizeof *d);
	d->o = o;
	if (mkdir_p(o->dump) != 0) {
		fprintf(stderr, "%s: cannot create %s: %s\n", o->prog, o->dump, strerror(errno));
		d->failed = 1;
	}
	return d;
}

static void dump_to(su_dump *d, const char *sub, const char *param, su_dtype dt, const void *data, int ndim,
                    const int64_t *shape)
{
	char path[4096];
	if (sub) {
		snprintf(path, sizeof path, "%s/%s", d->o->dump, sub);
		if (mkdir_p(path) != 0) {
			fprintf(stderr, "%s: cannot create %s: %s\n", d->o->prog, path, strerror(errno));
			d->failed = 1;
			return;
		}
		snprintf(path, sizeof path, "%s/%s/%s.npy", d->o->dump, sub, param);
	} else {
		snprintf(path, sizeof path, "%s/%s.npy", d->o->dump, param);
	}
	if (su_write_npy(path, dt, data, ndim, shape))
		d->failed = 1;
}

void su_dump_array(su_dump *d, const char *param, su_dtype dt, const void *data, int ndim,
                   const int64_t *shape)
{
	if (!d)
		return;
	dump_to(d, NULL, param, dt, data, ndim, shape);
	if (dt == SU_BF16 && d->nbf16 < SU_DUMP_MAX)
		d->bf16[d->nbf16++] = param;
}

void su_dump_initial(su_dump *d, const char *param, su_dtype dt, const void *data, int ndim,
                     const int64_t *shape)
{
	if (d)
		dump_to(d, "in", param, dt, data, ndim, shape);
}

void su_dump_scalar(su_dump *d, const char *param, double value)
{
	if (!d || d->nscalars >= SU_DUMP_MAX)
		return;
	d->scalar_names[d->nscalars] = param;
	d->scalars[d->nscalars++] = value;
}

void su_dump_const(su_dump *d, const char *name, const char *value)
{
	if (!d || d->nconsts >= SU_DUMP_MAX)
		return;
	d->const_names[d->nconsts] = name;
	d->const_values[d->nconsts++] = value;
}

static void json_number(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "Infinity" : "-Infinity", f);
	else
		fprintf(f, "%.17g", v);
}

int su_dump_finish(su_dump *d)
{
	if (!d)
		return 0;
	int failed = d->failed;
	char path[4096];
	snprintf(path, sizeof path, "%s/sizes.json", d->o->dump);
	FILE *f = failed ? NULL : fopen(path, "w");
	if (f) {
		fputs("{\"sizes\": {", f);
		for (int i = 0; i < d->o->nsizes; i++)
			fprintf(f, "%s\"%s\": %lld", i ? ", " : "", d->o->sizes[i].name,
			        (long long)*d->o->sizes[i].value);
		fputs("}, \"scalars\": {", f);
		for (int i = 0; i < d->nscalars; i++) {
			fprintf(f, "%s\"%s\": ", i ? ", " : "", d->scalar_names[i]);
			json_number(f, d->scalars[i]);
		}
		fputs("}, \"consts\": {", f);
		for (int i = 0; i < d->nconsts; i++)
			fprintf(f, "%s\"%s\": \"%s\"", i ? ", " : "", d->const_names[i], d->const_values[i]);
		fputs("}, \"bf16\": [", f);
		for (int i = 0; i < d->nbf16; i++)
			fprintf(f, "%s\"%s\"", i ? ", " : "", d->bf16[i]);
		fputs("]}\n", f);
		if (fclose(f) != 0)
			failed = 1;
	} else if (!failed) {
		fprintf(stderr, "%s: cannot write %s: %s\n", d->o->prog, path, strerror(errno));
		failed = 1;
	}
	free(d);
	return failed;
}
