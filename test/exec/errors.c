/* Driver of errors.pk: see there.  Prints one line per failed launch:
 * "<call>: <status name>: <pk_last_error()>". */
#include "exec_util.h"
#include "errors.h"

static float x[64], o[64];
static int32_t calls[1];

/* req and extent on the arrays above (NULL: a NULL argument). */
static pk_status run_req(const float *xs, float *os, int32_t *cs, int32_t scale, int64_t n)
{
	return ex_sync(req(ex_stream(), EX_DEV(xs, 64), EX_DEV(os, 64), EX_DEV(cs, 1), scale, n));
}

static pk_status run_extent(int32_t *eo, int64_t g)
{
	return ex_sync(extent(ex_stream(), EX_DEV(eo, 4), g, 4));
}

/* Expects `want`, prints the message, and checks that nothing ran. */
static void expect_fail(const char *what, pk_status st, pk_status want)
{
	printf("%s: %s: %s\n", what, pk_status_name(st), pk_last_error());
	EX_EQ(st, want, "%s", what);
	EX_EQ(calls[0], 0, "%s: no program ran", what);
	for (int i = 0; i < 64; i++)
		EX_EQ(isnan(o[i]), 1, "%s: o[%d] untouched", what, i);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "errors");
	for (int i = 0; i < 64; i++)
		x[i] = (float)i;
	ex_poison(o, sizeof o);
	expect_fail("req(n=15)", run_req(x, o, calls, 3, 15), PK_ERR_SIZE_CONSTRAINT);
	expect_fail("req(scale=0)", run_req(x, o, calls, 0, 32), PK_ERR_SIZE_CONSTRAINT);
	expect_fail("req(scale=100)", run_req(x, o, calls, 100, 256), PK_ERR_SIZE_CONSTRAINT);
	expect_fail("req(n=16, scale=9)", run_req(x, o, calls, 9, 16), PK_ERR_SIZE_CONSTRAINT);
	expect_fail("req(n=15, scale=0)", run_req(x, o, calls, 0, 15), PK_ERR_SIZE_CONSTRAINT);
	expect_fail("req(n=-16)", run_req(x, o, calls, 0, -16), PK_ERR_INVALID_VALUE);
	expect_fail("req(x=NULL)", run_req(NULL, o, calls, 3, 16), PK_ERR_INVALID_VALUE);
	expect_fail("req(o=NULL)", run_req(x, NULL, calls, 3, 16), PK_ERR_INVALID_VALUE);
	expect_fail("req(calls=NULL)", run_req(x, o, NULL, 3, 16), PK_ERR_INVALID_VALUE);

	int32_t eo[4] = {7, 7, 7, 7};
	pk_status st = run_extent(eo, -3);
	printf("extent(g=-3): %s: %s\n", pk_status_name(st), pk_last_error());
	EX_EQ(st, PK_ERR_INVALID_VALUE, "extent(g=-3)");
	st = run_extent(eo, (int64_t)1 << 31);
	printf("extent(g=2^31): %s: %s\n", pk_status_name(st), pk_last_error());
	EX_EQ(st, PK_ERR_INVALID_VALUE, "extent(g=2^31)");
	EX_EQ(eo[0], 7, "extent: no program ran");

	/* A good launch after the errors. */
	EX_OK(req(ex_stream(), EX_DEV(x, 64), EX_DEV(o, 64), EX_DEV(calls, 1), 2, 64));
	EX_EQ(calls[0], 4, "req: 4 programs ran");
	for (int i = 0; i < 64; i++)
		EX_SAME(o[i], 2.0f * (float)i, "req o[%d]", i);
	/* An empty grid (extent 0) succeeds and runs no program (§5.3). */
	eo[0] = 7;
	EX_OK(extent(ex_stream(), EX_DEV(eo, 4), 0, 4));
	EX_EQ(eo[0], 7, "extent(g=0): no program ran");
	EX_OK(extent(ex_stream(), EX_DEV(eo, 4), 1, 4));
	EX_EQ(eo[0], 1, "extent(g=1)");
	return ex_done("errors");
}
