/* few_trips_test.c - the launch stub of a kernel with few-trips variants
 * (nvptx_sched.c: nv_sched_few_trips) picks its entry from the size its K
 * loop's trip count follows.  Built against test/gpu-codegen/Inputs/few.pk
 * compiled for sm_90a with no ptxas (few.h on the include path), run on
 * the fake driver: few_f16 and few_cdiv_bf16 at each k given as an
 * argument, m 300 and n 272.  The fake driver takes no real image, so each
 * launch fails loading its module, and the message names the entry the
 * stub picked (after the checks of sizes and `requires`). */
#include "few.h"
#include "pk_runtime.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	pk_device *d = NULL;
	pk_stream *s = NULL;
	if (pk_device_get(PK_DEVICE_CUDA, 0, &d) != PK_SUCCESS || pk_stream_create(d, &s) != PK_SUCCESS) {
		printf("no CUDA stream: %s\n", pk_last_error());
		return 1;
	}
	const int64_t m = 300, n = 272, most_k = 4096;
	void *x = NULL, *y = NULL, *z = NULL;
	if (pk_malloc(d, (size_t)(m * most_k * 2), &x) != PK_SUCCESS ||
	    pk_malloc(d, (size_t)(most_k * n * 2), &y) != PK_SUCCESS || pk_malloc(d, (size_t)(m * n * 2), &z) != PK_SUCCESS) {
		printf("pk_malloc: %s\n", pk_last_error());
		return 1;
	}
	for (int a = 1; a < argc; a++) {
		int64_t k = atoll(argv[a]);
		if (k < 0 || k > most_k)
			return 2;
		printf("k = %lld\n", (long long)k);
		fflush(stdout);
		pk_status st = few_f16(s, x, y, z, m, k, n);
		printf("few_f16: %s: %s\n", pk_status_name(st), pk_last_error());
		fflush(stdout);
		st = few_cdiv_bf16(s, x, y, z, m, k, n);
		printf("few_cdiv_bf16: %s: %s\n", pk_status_name(st), pk_last_error());
		fflush(stdout);
	}
	pk_free(d, x);
	pk_free(d, y);
	pk_free(d, z);
	return pk_stream_destroy(s) != PK_SUCCESS;
}
