/* emu_cta.c - runs CUDA kernels of pkc on the CPU, for tests without a GPU.
 *
 * `PKC_GPU_EMULATE=1 pkc --target=sm_90a --emit=nvvm k.pk` writes the
 * kernels' NVVM IR rewritten for the host (codegen_nvptx.c): thread ids,
 * barriers, warp shuffles and mma.sync become calls to the pk_emu_*
 * functions below, and each kernel gets an entry pk_emu_<kernel>(void
 * **params), params as cuLaunchKernel takes them.  pk_emu_run runs one
 * launch: every thread of a CTA is a POSIX thread; CTAs run one after
 * another, so shared memory is the module's own globals.
 *
 * Two users: emu_rt.c (a minimal pkc runtime, for run.py) and the fake CUDA
 * driver test/runtime/fake_cuda.c, which, built together with this file as
 * libcuda.so.1, runs the kernels libpkrt launches (test/gpu-emu/exec.py). */
#define _GNU_SOURCE
#include "emu_cta.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the emulated CTA --------------------------------------------------------------------- */

/* Dynamic shared memory (extern __shared__ of the kernels). */
_Alignas(16) char pk_dynamic_smem[256 * 1024];

static __thread int tid_x, ctaid_x;
static uint32_t nctaid_x; /* the launch's CTAs (set before its threads start) */
static pthread_barrier_t cta_barrier;
static pthread_barrier_t warp_barrier[32];
static uint32_t xchg[32][32][10]; /* per warp, per lane: values in a warp-wide exchange */

int pk_emu_tid_x(void)
{
	return tid_x;
}

int pk_emu_ctaid_x(void)
{
	return ctaid_x;
}

int pk_emu_nctaid_x(void)
{
	return (int)nctaid_x;
}

/* CUDA's vprintf(fmt, buf): buf holds the arguments one after the other at
 * their natural alignment.  Takes the conversions pkc's debug_print writes
 * (%d %u %lld %llu %g %s, and %%).  Each call writes its text at once, as
 * a record of CUDA's printf buffer does: emulated threads print concurrently. */
int pk_emu_vprintf(const char *fmt, const char *buf)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return -1;
	size_t off = 0;
	for (const char *c = fmt; *c; c++) {
		if (*c != '%') {
			fputc(*c, out);
			continue;
		}
		c++;
		int wide = c[0] == 'l' && c[1] == 'l';
		c += wide ? 2 : 0;
		size_t size = *c == '%' ? 0 : wide || *c == 'g' || *c == 's' ? 8 : 4;
		off = size ? (off + size - 1) / size * size : off;
		switch (wide ? 'l' : *c) {
		case '%': fprintf(out, "%%"); break;
		case 'd': { int32_t v; memcpy(&v, buf + off, 4); fprintf(out, "%d", v); break; }
		case 'u': { uint32_t v; memcpy(&v, buf + off, 4); fprintf(out, "%u", v); break; }
		case 'g': { double v; memcpy(&v, buf + off, 8); fprintf(out, "%g", v); break; }
		case 's': { const char *v; memcpy(&v, buf + off, 8); fprintf(out, "%s", v); break; }
		default: { /* %lld, %llu */
			int64_t v;
			memcpy(&v, buf + off, 8);
			if (*c == 'u')
				fprintf(out, "%llu", (unsigned long long)v);
			else
				fprintf(out, "%lld", (long long)v);
		}
		}
		off += size;
	}
	fclose(out);
	flockfile(stdout);
	fwrite(text, 1, len, stdout);
	funlockfile(stdout);
	free(text);
	return (int)len;
}

/* ex2.approx.ftz.f32: 2^x, subnormal inputs and results flushed to zero. */
float pk_emu_ex2_ftz(float x)
{
	float r = exp2f(fpclassify(x) == FP_SUBNORMAL ? 0.0f : x);
	return fpclassify(r) == FP_SUBNORMAL ? copysignf(0.0f, r) : r;
}

void pk_emu_barrier(int id)
{
	(void)id;
	pthread_barrier_wait(&cta_barrier);
}

static void warp_sync(void)
{
	pthread_barrier_wait(&warp_barrier[tid_x / 32]);
}

/* shfl.sync: every lane publishes its value, then reads its source's. */
static uint32_t shfl(uint32_t v, int src, int valid)
{
	int w = tid_x / 32, l = tid_x % 32;
	xchg[w][l][0] = v;
	warp_sync();
	uint32_t r = valid ? xchg[w][src][0] : v;
	warp_sync();
	return r;
}

#define SHFL(mode, T, SRC, VALID)                                                                \
	T pk_emu_shfl_##mode##_##T(int32_t mask, T v, int32_t b, int32_t c)                          \
	{                                                                                            \
		(void)mask;                                                                              \
		int lane = tid_x % 32, max_lane = c & 31;                                                \
		int src = (SRC), valid = (VALID);                                                        \
		union { T t; uint32_t u; } x = {v}, y;                                                   \
		y.u = shfl(x.u, src & 31, valid);                                                        \
		return y.t;                                                                              \
	}
typedef int32_t i32;
typedef float f32;
SHFL(bfly, i32, lane ^ b, (lane ^ b) <= max_lane)
SHFL(bfly, f32, lane ^ b, (lane ^ b) <= max_lane)
SHFL(idx, i32, b, (b & 31) <= max_lane)
SHFL(idx, f32, b, (b & 31) <= max_lane)
SHFL(up, i32, lane - b, lane - b >= max_lane)
SHFL(up, f32, lane - b, lane - b >= max_lane)

static float f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
	float f;
	if (e == 0)
		f = ldexpf((float)m, -24);
	else if (e == 31)
		f = m ? NAN : INFINITY;
	else
		f = ldexpf((float)(m | 1024), (int)e - 25);
	union { float f; uint32_t u; } x = {f};
	x.u |= s;
	return x.f;
}

static float bf16_to_f32(uint16_t h)
{
	union { uint32_t u; float f; } x = {(uint32_t)h << 16};
	return x.f;
}

/* mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: in = a0..a3, b0, b1,
 * c0..c3 (32 bits each, in 64-bit slots), out = d0..d3. */
static void mma(uint32_t *out, const uint64_t *in, float (*cvt)(uint16_t))
{
	int w = tid_x / 32, l = tid_x % 32;
	for (int j = 0; j < 6; j++)
		xchg[w][l][j] = (uint32_t)in[j];
	warp_sync();
	float A[16][16], B[16][8];
	for (int ln = 0; ln < 32; ln++) {
		int g = ln >> 2, t = ln & 3;
		const uint32_t *r = xchg[w][ln];
		for (int h = 0; h < 2; h++) {
			A[g][2 * t + h] = cvt((uint16_t)(r[0] >> 16 * h));
			A[g + 8][2 * t + h] = cvt((uint16_t)(r[1] >> 16 * h));
			A[g][2 * t + 8 + h] = cvt((uint16_t)(r[2] >> 16 * h));
			A[g + 8][2 * t + 8 + h] = cvt((uint16_t)(r[3] >> 16 * h));
			B[2 * t + h][g] = cvt((uint16_t)(r[4] >> 16 * h));
			B[2 * t + 8 + h][g] = cvt((uint16_t)(r[5] >> 16 * h));
		}
	}
	warp_sync();
	int g = l >> 2, t = l & 3;
	for (int j = 0; j < 4; j++) {
		int row = g + (j >= 2 ? 8 : 0), col = 2 * t + (j & 1);
		union { uint32_t u; float f; } c = {(uint32_t)in[6 + j]};
		float d = c.f;
		for (int k = 0; k < 16; k++)
			d += A[row][k] * B[k][col];
		c.f = d;
		out[j] = c.u;
	}
}

void pk_emu_mma_f16(uint32_t *out, const uint64_t *in)
{
	mma(out, in, f16_to_f32);
}

void pk_emu_mma_bf16(uint32_t *out, const uint64_t *in)
{
	mma(out, in, bf16_to_f32);
}

/* ldmatrix.sync.aligned.m8n8.x<n>[.trans].b16: lane 8i + j gives the
 * address of row j of matrix i; each lane gets, per matrix, the two 16-bit
 * elements (row lane/4, columns 2 (lane%4) + 0, 1), or transposed (rows
 * 2 (lane%4) + 0, 1 of column lane/4). */
static uint64_t row_addr[32][32];
static void ldmatrix(uint32_t *out, const uint64_t *in, int n, int trans)
{
	int w = tid_x / 32, l = tid_x % 32;
	row_addr[w][l] = in[0];
	warp_sync();
	for (int m = 0; m < n; m++) {
		uint16_t e[2];
		for (int h = 0; h < 2; h++) {
			int row = trans ? 2 * (l % 4) + h : l / 4, col = trans ? l / 4 : 2 * (l % 4) + h;
			memcpy(&e[h], (const char *)(uintptr_t)row_addr[w][8 * m + row] + 2 * col, 2);
		}
		out[m] = (uint32_t)e[0] | (uint32_t)e[1] << 16;
	}
	warp_sync();
}

void pk_emu_ldmatrix_x1_b16_p3(uint32_t *out, const uint64_t *in) { ldmatrix(out, in, 1, 0); }
void pk_emu_ldmatrix_x2_b16_p3(uint32_t *out, const uint64_t *in) { ldmatrix(out, in, 2, 0); }
void pk_emu_ldmatrix_x4_b16_p3(uint32_t *out, const uint64_t *in) { ldmatrix(out, in, 4, 0); }
void pk_emu_ldmatrix_x1_trans_b16_p3(uint32_t *out, const uint64_t *in) { ldmatrix(out, in, 1, 1); }
void pk_emu_ldmatrix_x2_trans_b16_p3(uint32_t *out, const uint64_t *in) { ldmatrix(out, in, 2, 1); }
void pk_emu_ldmatrix_x4_trans_b16_p3(uint32_t *out, const uint64_t *in) { ldmatrix(out, in, 4, 1); }

/* cp.async: copied at once (the waits have nothing to wait for), or, with
 * PK_EMU_CP_ASYNC=late in the environment, as late as the program lets
 * it: when a wait_group (or wait_all) completes its group, so that a wait
 * that leaves a needed group in flight reads what shared memory held
 * before (the source is read at the copy: kernels do not write what they
 * copy).  Bytes past src_size are zero. */
typedef struct PendingCopy {
	void *dst;
	unsigned char data[16];
	int group; /* the commit that closes its group: groups committed before it */
} PendingCopy;

static int cp_async_late;                  /* PK_EMU_CP_ASYNC=late (read at each launch) */
static __thread PendingCopy *pending;      /* this thread's copies not complete yet */
static __thread int npending, cappending;
static __thread int committed;             /* groups this thread committed */

void pk_emu_cp_async_16(void *dst, const void *src, int32_t src_size)
{
	unsigned char data[16] = {0};
	if (src_size > 0)
		memcpy(data, src, (size_t)(src_size < 16 ? src_size : 16));
	if (!cp_async_late) {
		memcpy(dst, data, 16);
		return;
	}
	if (npending == cappending) {
		cappending = cappending ? 2 * cappending : 64;
		pending = realloc(pending, (size_t)cappending * sizeof *pending);
		if (!pending)
			abort();
	}
	PendingCopy *c = &pending[npending++];
	c->dst = dst;
	memcpy(c->data, data, 16);
	c->group = committed;
}

void pk_emu_cp_async_commit(void)
{
	committed++;
}

/* Completes the copies of every group committed before the newest n. */
void pk_emu_cp_async_wait(int32_t n)
{
	int kept = 0;
	for (int i = 0; i < npending; i++) {
		if (pending[i].group < committed - n)
			memcpy(pending[i].dst, pending[i].data, 16);
		else
			pending[kept++] = pending[i];
	}
	npending = kept;
}

void pk_emu_cp_async_wait_all(void)
{
	pk_emu_cp_async_commit();
	pk_emu_cp_async_wait(0);
}

/* The float -> bfloat16 conversion the x86 code generator calls (older
 * libgcc lacks it); the result comes back in an SSE register (clang's __bf16). */
__bf16 __truncsfbf2(float f)
{
	union { float f; uint32_t u; } x = {f};
	union { uint16_t u; __bf16 b; } r;
	if ((x.u & 0x7fffffffu) > 0x7f800000u)
		r.u = (uint16_t)((x.u >> 16) | 0x40);
	else
		r.u = (uint16_t)((x.u + 0x7fffu + ((x.u >> 16) & 1)) >> 16);
	return r.b;
}

typedef struct cta_run {
	void (*entry)(void **);
	void **params;
	uint32_t nctas;
	int tid;
} cta_run;

static void *thread_main(void *p)
{
	cta_run *r = p;
	tid_x = r->tid;
	committed = npending = 0;
	for (uint32_t c = 0; c < r->nctas; c++) {
		ctaid_x = (int)c;
		r->entry(r->params);
		npending = 0; /* copies never waited for: lost with the CTA */
		/* The next CTA reuses the shared memory. */
		pthread_barrier_wait(&cta_barrier);
	}
	free(pending);
	pending = NULL;
	cappending = 0;
	return NULL;
}

void *pk_emu_entry(const char *kernel_name)
{
	char name[256];
	if (snprintf(name, sizeof name, "pk_emu_%s", kernel_name) >= (int)sizeof name)
		return NULL;
	return dlsym(RTLD_DEFAULT, name);
}

/* One launch at a time: the barriers and the exchange buffers are global. */
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;

int pk_emu_run(const char *kernel_name, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
               void **params, char *err, size_t errlen)
{
	void (*entry)(void **) = (void (*)(void **))pk_emu_entry(kernel_name);
	if (!entry) {
		snprintf(err, errlen, "emu: no pk_emu_%s", kernel_name);
		return PK_EMU_NO_ENTRY;
	}
	uint32_t n = block[0];
	if (n == 0 || n > 1024 || n % 32 || block[1] != 1 || block[2] != 1 || grid[1] != 1 || grid[2] != 1) {
		snprintf(err, errlen, "emu: bad launch geometry");
		return PK_EMU_BAD_GEOMETRY;
	}
	if (shared_bytes > sizeof pk_dynamic_smem) {
		snprintf(err, errlen, "emu: %u bytes of dynamic shared memory", shared_bytes);
		return PK_EMU_TOO_MUCH_SHARED;
	}
	pthread_mutex_lock(&launch_lock);
	const char *late = getenv("PK_EMU_CP_ASYNC");
	cp_async_late = late && strcmp(late, "late") == 0;
	pthread_barrier_init(&cta_barrier, NULL, n);
	nctaid_x = grid[0];
	for (uint32_t w = 0; w < n / 32; w++)
		pthread_barrier_init(&warp_barrier[w], NULL, 32);
	pthread_t *th = calloc(n, sizeof *th);
	cta_run *runs = calloc(n, sizeof *runs);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 4u << 20);
	for (uint32_t t = 0; t < n; t++) {
		runs[t] = (cta_run){entry, params, grid[0], (int)t};
		if (pthread_create(&th[t], &attr, thread_main, &runs[t]) != 0) {
			fprintf(stderr, "emu: cannot create thread %u\n", t);
			abort();
		}
	}
	for (uint32_t t = 0; t < n; t++)
		pthread_join(th[t], NULL);
	pthread_attr_destroy(&attr);
	pthread_barrier_destroy(&cta_barrier);
	for (uint32_t w = 0; w < n / 32; w++)
		pthread_barrier_destroy(&warp_barrier[w]);
	free(th);
	free(runs);
	pthread_mutex_unlock(&launch_lock);
	return PK_EMU_OK;
}
