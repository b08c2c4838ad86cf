/* debug_print: runs Inputs/samples/debug_print.pk on the host
 * (test/pallas/debug_print.test), with x[i][j] = (40 i + j) / 3 as the
 * Pallas mirror's x; the kernel prints. */
#include "debug_print.h"

#include <stdio.h>

int main(void)
{
	static float x[4 * 40], o[4 * 40];
	for (int i = 0; i < 4 * 40; i++)
		x[i] = (float)i / 3.0f;
	pk_status st = debug_print_blocks(NULL, x, o);
	fflush(stdout);
	return st == PK_SUCCESS ? 0 : 1;
}
