/* emu_rt.c - a minimal pkc runtime (just what launch functions call) whose
 * CUDA launches run on the CPU (emu_cta.c), for test/gpu-emu/run.py.
 *
 * Linked with emu_cta.c, the emulated kernels (see there) and the fat
 * object of `pkc --target=host,sm_90a k.pk`, whose launch functions call
 * pk_launch_cuda on a CUDA stream, the same launch function runs the host
 * variant (stream NULL) or the emulated GPU kernel (stream
 * &pk_emu_cuda_stream): run.py compares the two.
 *
 * Errors, stream devices, pk_launch_host (sequential), pk_launch_cuda (and
 * pk_launch_cuda_persistent, on fewer CTAs), and
 * pk_cuda_tensor_map: the emulated kernels (no wgmma, so no copy
 * engine) never read the maps, which follow their parameters. */
#define _GNU_SOURCE
#include "emu_cta.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ---- the runtime API launch functions use --------------------------------------------- */

enum { PK_SUCCESS = 0, PK_ERR_INVALID_VALUE = 1, PK_ERR_LAUNCH_FAILED = 4, PK_ERR_INTERNAL = 9 };
enum { PK_DEVICE_HOST = 0, PK_DEVICE_CUDA = 1 };
#define PK_MAX_GRID 8

static char host_device, cuda_device; /* device tokens */
char pk_emu_cuda_stream;              /* a stream on the emulated CUDA device (its address) */
static char last_error[1024];

int pk_set_error(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt ? fmt : "error", ap);
	va_end(ap);
	return status;
}

const char *pk_emu_last_error(void)
{
	return last_error;
}

void *pk_stream_device(const void *s)
{
	return s == &pk_emu_cuda_stream ? &cuda_device : &host_device;
}

int pk_device_kind_of(const void *dev)
{
	return dev == &cuda_device ? PK_DEVICE_CUDA : PK_DEVICE_HOST;
}

typedef struct host_launch {
	const char *kernel_name;
	void (*program)(void *args, const int32_t *pid, const int32_t *nprog);
	void *args;
	int ngrid;
	const int64_t *grid;
	const uint8_t *parallel;
} host_launch;

int pk_launch_host(void *s, const host_launch *l)
{
	(void)s;
	int32_t pid[PK_MAX_GRID] = {0}, nprog[PK_MAX_GRID];
	for (int d = 0; d < PK_MAX_GRID; d++)
		nprog[d] = d < l->ngrid ? (int32_t)l->grid[d] : 1;
	for (int d = 0; d < l->ngrid; d++)
		if (l->grid[d] == 0)
			return PK_SUCCESS;
	/* Lexicographic order, the last axis fastest. */
	for (;;) {
		l->program(l->args, pid, nprog);
		int d = l->ngrid - 1;
		while (d >= 0 && ++pid[d] == nprog[d])
			pid[d--] = 0;
		if (d < 0)
			return PK_SUCCESS;
	}
}

typedef struct cuda_launch {
	const char *kernel_name;
	void *module;
	uint32_t grid[3], block[3];
	uint32_t shared_bytes;
	void **params;
} cuda_launch;

int pk_launch_cuda(void *s, const cuda_launch *l)
{
	(void)s;
	char err[512];
	/* Which entry the stub picked (tests of the variants check it). */
	if (getenv("PK_EMU_LAUNCHES"))
		fprintf(stderr, "pk_emu: launch %s grid %u block %u\n", l->kernel_name, l->grid[0], l->block[0]);
	switch (pk_emu_run(l->kernel_name, l->grid, l->block, l->shared_bytes, l->params, err, sizeof err)) {
	case PK_EMU_OK:
		return PK_SUCCESS;
	case PK_EMU_NO_ENTRY:
		return pk_set_error(PK_ERR_LAUNCH_FAILED, "%s", err);
	default:
		return pk_set_error(PK_ERR_INVALID_VALUE, "%s", err);
	}
}

/* The SMs merged programs' stubs weigh the grid against: PK_EMU_SMS, 1
 * unless set (so that the small grids of tests run the merged entries). */
uint32_t pk_cuda_sm_count(void *s)
{
	(void)s;
	const char *e = getenv("PK_EMU_SMS");
	return e && atoi(e) >= 0 ? (uint32_t)atoi(e) : 1;
}

/* Persistent kernels loop over grid[0] tasks: on PK_EMU_RESIDENT CTAs (3
 * unless set), so that CTAs run several tasks, not all the same number. */
static uint32_t emu_resident(void)
{
	const char *e = getenv("PK_EMU_RESIDENT");
	return e && atoi(e) > 0 ? (uint32_t)atoi(e) : 3;
}

/* The CTAs of a launch held at once, which persistent launches run and a
 * wide merge's stub weighs its waves with: PK_EMU_RESIDENT, for merged
 * entries (names ending in __m) PK_EMU_RESIDENT_MERGED where set. */
uint32_t pk_cuda_resident_ctas(void *s, const cuda_launch *l)
{
	(void)s;
	size_t n = strlen(l->kernel_name);
	const char *e = getenv("PK_EMU_RESIDENT_MERGED");
	if (n > 3 && strcmp(l->kernel_name + n - 3, "__m") == 0 && e && atoi(e) > 0)
		return (uint32_t)atoi(e);
	return emu_resident();
}

int pk_launch_cuda_persistent(void *s, const cuda_launch *l)
{
	uint32_t resident = pk_cuda_resident_ctas(s, l);
	cuda_launch p = *l;
	if (p.grid[0] > resident)
		p.grid[0] = resident;
	return pk_launch_cuda(s, &p);
}

int pk_cuda_tensor_map(void *map, const void *base, uint32_t elem_bytes, uint32_t rank, const uint64_t *dims,
                       uint32_t row_dim, uint32_t box_rows, uint32_t box_cols, uint32_t swizzle_bytes,
                       const char *kernel_name)
{
	(void)base, (void)elem_bytes, (void)rank, (void)dims, (void)row_dim, (void)box_rows, (void)box_cols;
	(void)swizzle_bytes, (void)kernel_name;
	memset(map, 0, 128);
	return PK_SUCCESS;
}
