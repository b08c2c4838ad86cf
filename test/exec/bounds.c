/* Driver of bounds.pk: see there.  Every array lives between guard zones
 * filled with a pattern that no kernel writes; after each launch the zones
 * must be intact. */
#include "exec_util.h"
#include "bounds.h"

enum { GUARD = 64 };

/* A buffer of n int32 with GUARD words of 0x5A5A5A5A on each side. */
static int32_t *guarded(int32_t *storage, int64_t n)
{
	for (int64_t i = 0; i < n + 2 * GUARD; i++)
		storage[i] = 0x5A5A5A5A;
	return storage + GUARD;
}

static void check_guards(const int32_t *p, int64_t n, const char *what)
{
	for (int i = 1; i <= GUARD; i++) {
		EX_EQ(p[-i], 0x5A5A5A5A, "%s: guard before, word -%d", what, i);
		EX_EQ(p[n - 1 + i], 0x5A5A5A5A, "%s: guard after, word %d", what, i);
	}
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "bounds");
	su_rng r = su_rng_new(11);
	{
		int64_t n = 13;
		int32_t xs[13 + 2 * GUARD], os[13 + 2 * GUARD];
		int32_t *x = guarded(xs, n), *o = guarded(os, n);
		for (int i = 0; i < n; i++)
			x[i] = (int32_t)su_int(&r, -100, 100);
		EX_OK(tail(ex_stream(), EX_GUARDED(x, n, GUARD), EX_GUARDED(o, n, GUARD), n));
		for (int i = (int)n - 4; i < n; i++)
			EX_EQ(o[i], x[i] + 1, "tail o[%d]", i);
		check_guards(x, n, "tail x");
		check_guards(o, n, "tail o");
	}
	{
		int64_t n = 10;
		int32_t xs[10 + 2 * GUARD], ps[10 + 2 * GUARD], o[8];
		int32_t idx[8] = {3, -1, 10, 0, 1000000, -2147483647 - 1, 9, 2147483647};
		int32_t *x = guarded(xs, n), *p = guarded(ps, n);
		for (int i = 0; i < n; i++)
			x[i] = (int32_t)su_int(&r, -100, 100);
		EX_OK(wild(ex_stream(), EX_GUARDED(x, n, GUARD), EX_DEV(idx, 8), EX_DEV(o, 8), EX_GUARDED(p, n, GUARD),
		           n));
		for (int i = 0; i < 8; i++) {
			int ok = idx[i] >= 0 && idx[i] < n;
			EX_EQ(o[i], ok ? x[idx[i]] : 0, "wild o[%d] (index %d)", i, idx[i]);
			if (ok)
				EX_EQ(p[idx[i]], i, "wild p[%d]", idx[i]);
		}
		check_guards(x, n, "wild x");
		check_guards(p, n, "wild p");
	}
	{
		float xs[64 + 2 * GUARD], os[64 + 2 * GUARD];
		for (int i = 0; i < 64 + 2 * GUARD; i++)
			xs[i] = os[i] = 1234.5f;
		float *x = xs + GUARD, *o = os + GUARD;
		for (int i = 0; i < 64; i++)
			x[i] = su_nonzero(&r, -1, 1);
		EX_OK(shift(ex_stream(), EX_GUARDED(x, 64, GUARD), EX_GUARDED(o, 64, GUARD)));
		for (int i = 16; i < 64; i++)
			EX_SAME(o[i], x[i] + 1.0f, "shift o[%d]", i);
		for (int i = 1; i <= GUARD; i++)
			EX_SAME(o[63 + i], 1234.5f, "shift: guard after o, word %d", i);
	}
	{
		for (int32_t j = -3; j <= 6; j += 3) {
			int32_t os[4 + 2 * GUARD];
			int32_t *o = guarded(os, 4);
			EX_OK(scratchy(ex_stream(), EX_GUARDED(o, 4, GUARD), j));
			for (int i = 0; i < 4; i++)
				EX_EQ(o[i], i == j ? 7 : 0, "scratchy j=%d o[%d]", j, i);
			check_guards(o, 4, "scratchy o");
		}
	}
	return ex_done("bounds");
}
