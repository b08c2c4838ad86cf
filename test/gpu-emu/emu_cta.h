/* emu_cta.h - pkc's CUDA kernels run on the CPU (emu_cta.c). */
#ifndef EMU_CTA_H
#define EMU_CTA_H

#include <stddef.h>
#include <stdint.h>

enum { PK_EMU_OK = 0, PK_EMU_NO_ENTRY = 1, PK_EMU_BAD_GEOMETRY = 2, PK_EMU_TOO_MUCH_SHARED = 3 };

/* The emulated kernel pk_emu_<kernel_name> (looked up in the process), or NULL. */
void *pk_emu_entry(const char *kernel_name);

/* Runs it on grid[0] CTAs of block[0] threads (a multiple of 32, at most
 * 1024; the other dimensions must be 1) with shared_bytes of dynamic shared
 * memory; params as for cuLaunchKernel.  Returns when every CTA is done:
 * PK_EMU_OK, or an error with a message in err. */
int pk_emu_run(const char *kernel_name, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
               void **params, char *err, size_t errlen);

#endif
