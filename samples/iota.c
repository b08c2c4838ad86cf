/* iota: runs samples/iota.pk (o[i] = i, one program per element) and checks
 * every element.
 *   build/samples/iota [--n N] [--seed S] [--dump DIR] [-v] */
#include <stdio.h>
#include <stdlib.h>

#include "iota.h"
#include "sample_util.h"

int main(int argc, char **argv)
{
	int64_t n = 100003;
	su_size sizes[] = {{"n", &n}};
	su_opts o;
	int rc = su_parse(argc, argv, "iota", sizes, 1, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	/* No inputs: the seed only decides the poison pattern's complement, so
	 * that two seeds still run two different launches. */
	size_t bytes = (size_t)n * sizeof(int32_t);
	int32_t *out = su_xmalloc(bytes);

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	int32_t *dout = su_alloc_poisoned(&c, bytes);
	if (!dout)
		return 1;
	if (o.seed % 2 == 0 && su_check(pk_memset(c.stream, dout, 0x7F, bytes), "iota"))
		return 1;
	su_launch_begin(&c);
	pk_status st = iota(c.stream, dout, n);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "iota") || su_from_device(&c, out, dout, bytes))
		return 1;

	su_err e = {0};
	for (int64_t i = 0; i < n; i++)
		su_err_add(&e, out[i], (double)(int32_t)i);

	su_dump *d = su_dump_begin(&o);
	SU_DUMP(d, "o", SU_I32, out, n);
	rc = su_dump_finish(d);

	rc |= su_report(&c, &e, SU_TOL_EXACT, "n=%lld", (long long)n);
	su_free(&c, dout);
	su_ctx_free(&c);
	free(out);
	return rc;
}
