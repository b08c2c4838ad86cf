/* no_kernel_test.c - a launch function on a device its kernel was not
 * compiled for returns PK_ERR_NO_KERNEL_FOR_DEVICE (pk_runtime.h), both
 * ways: a host-only object on a CUDA stream, a GPU-only one on the host.
 * Built against samples/add_one.pk compiled one way or the other (add_one.h
 * on the include path); argument "cuda": launch on a stream of CUDA device
 * 0 (the fake driver), "host": on the default host stream.  Prints the
 * status and the message. */
#include "add_one.h"
#include "pk_runtime.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	pk_stream *s = NULL;
	if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
		pk_device *d = NULL;
		if (pk_device_get(PK_DEVICE_CUDA, 0, &d) != PK_SUCCESS || pk_stream_create(d, &s) != PK_SUCCESS) {
			printf("no CUDA stream: %s\n", pk_last_error());
			return 1;
		}
	}
	/* (Host memory even for the CUDA stream: the launch must fail before it
	 * looks at the buffers.) */
	int32_t x[4] = {1, 2, 3, 4}, o[4] = {0};
	pk_status st = add_one(s, x, o, 4);
	printf("%s: %s\n", pk_status_name(st), pk_last_error());
	printf("o[0] = %d\n", (int)o[0]);
	return pk_stream_destroy(s) != PK_SUCCESS;
}
