/* Driver of debug.pk: see there.  With the argument "fail", check() gets a
 * negative block in program 1, and the process is expected to abort. */
#include "exec_util.h"
#include "debug.h"

#include <string.h>

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "debug");
	float x[6] = {1.5f, 0, -2, 0, 3, 0}, o[6];
	EX_OK(show(ex_stream(), EX_DEV(x, 6), -7, -9000000000LL, 200, EX_DEV(o, 6)));
	float y[4] = {1, 1, 2, 2}, p[4];
	if (argc > 1 && !strcmp(argv[1], "fail"))
		y[2] = -1;
	EX_OK(check(ex_stream(), EX_DEV(y, 4), EX_DEV(p, 4)));
	printf("checked %d\n", 3);
	for (int i = 0; i < 4; i++)
		EX_EQ(p[i], y[i], "check o[%d]", i);
	return ex_done("debug");
}
