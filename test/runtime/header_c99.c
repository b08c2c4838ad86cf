/* header_c99.c - pk_runtime.h must compile as warning-free, pedantic C99
 * (generated headers include it from user code of any C standard).
 * Built with: cc -std=c99 -Wall -Wextra -Werror -pedantic -c */
#include "pk_runtime.h"
#include "pk_runtime.h" /* the include guard works */

/* Uses every public type the way a generated launch function does. */
static void program(void *args, const int32_t *pid, const int32_t *nprog)
{
	(void)args;
	(void)pid;
	(void)nprog;
}

pk_status header_c99_launch(pk_stream *s);

pk_status header_c99_launch(pk_stream *s)
{
	int64_t grid[1];
	uint8_t parallel[1];
	pk_host_launch l;
	if (pk_device_kind_of(pk_stream_device(s)) != PK_DEVICE_HOST)
		return pk_set_error(PK_ERR_NO_KERNEL_FOR_DEVICE, "k: not compiled for %s", pk_device_name(pk_stream_device(s)));
	grid[0] = 4;
	parallel[0] = 1;
	l.kernel_name = "k";
	l.program = program;
	l.args = 0;
	l.ngrid = 1;
	l.grid = grid;
	l.parallel = parallel;
	return pk_launch_host(s, &l);
}
