/* The out-of-tree program of install.test: adds two vectors with the
 * add_vectors kernel of samples/add_vectors.pk and, when built with
 * WITH_COPY (the CMake build), copies one with the kernel of copy.pk (which
 * includes width.pk).  Prints one result line per kernel. */
#include <math.h>
#include <stdio.h>

#include "add_vectors.h"
#ifdef WITH_COPY
#include "copy.h"
#endif

#define N 5000 /* not a multiple of the block size: a partial last block */

static int fail(const char *what, pk_status st)
{
	fprintf(stderr, "%s: %s: %s\n", what, pk_status_name(st), pk_last_error());
	return 1;
}

int main(void)
{
	pk_device *dev;
	pk_status st = pk_device_get(PK_DEVICE_HOST, 0, &dev);
	if (st != PK_SUCCESS)
		return fail("pk_device_get", st);
	float *x, *y, *o;
	if ((st = pk_malloc(dev, N * sizeof *x, (void **)&x)) != PK_SUCCESS ||
	    (st = pk_malloc(dev, N * sizeof *y, (void **)&y)) != PK_SUCCESS ||
	    (st = pk_malloc(dev, N * sizeof *o, (void **)&o)) != PK_SUCCESS)
		return fail("pk_malloc", st);
	for (int i = 0; i < N; i++) {
		x[i] = (float)i;
		y[i] = 0.5f * (float)i;
		o[i] = -1.0f;
	}
	if ((st = add_vectors(NULL, x, y, o, N)) != PK_SUCCESS)
		return fail("add_vectors", st);
	int bad = 0;
	double sum = 0;
	for (int i = 0; i < N; i++) {
		bad += o[i] != 1.5f * (float)i;
		sum += o[i];
	}
	printf("add_vectors: n=%d mismatches=%d sum=%.1f\n", N, bad, sum);

#ifdef WITH_COPY
	for (int i = 0; i < N; i++)
		o[i] = -1.0f;
	if ((st = copy(NULL, x, o, N)) != PK_SUCCESS)
		return fail("copy", st);
	int cbad = 0;
	for (int i = 0; i < N; i++)
		cbad += o[i] != x[i];
	printf("copy: n=%d mismatches=%d\n", N, cbad);
	bad += cbad;
#endif
	pk_free(dev, x);
	pk_free(dev, y);
	pk_free(dev, o);
	return bad != 0;
}
