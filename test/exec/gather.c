/* Driver of gather.pk: see there. */
#include "exec_util.h"
#include "gather.h"

static void shuffle(int32_t *p, int n, su_rng *r)
{
	for (int i = 0; i < n; i++)
		p[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)su_int(r, 0, i);
		int32_t t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "gather");
	su_rng r = su_rng_new(17);
	{
		int64_t m = 1000, n = 333;
		float t[1000], o[333];
		int32_t idx[333];
		for (int i = 0; i < m; i++)
			t[i] = su_nonzero(&r, -1, 1);
		for (int i = 0; i < n; i++)
			idx[i] = (int32_t)su_int(&r, 0, m - 1);
		ex_poison(o, sizeof o);
		EX_OK(lookup(ex_stream(), EX_DEV(t, m), EX_DEV(idx, n), EX_DEV(o, n), m, n));
		for (int i = 0; i < n; i++)
			EX_SAME(o[i], t[idx[i]], "lookup %d", i);
	}
	{
		int64_t m = 50;
		int32_t t[50 * 8], o[4 * 8];
		int64_t sel[4] = {49, 0, 17, 17};
		for (int i = 0; i < m * 8; i++)
			t[i] = (int32_t)su_next(&r);
		ex_poison(o, sizeof o);
		EX_OK(rows(ex_stream(), EX_DEV(t, m * 8), EX_DEV(sel, 4), EX_DEV(o, 4 * 8), m));
		for (int e = 0; e < 4; e++)
			for (int j = 0; j < 8; j++)
				EX_EQ(o[e * 8 + j], t[sel[e] * 8 + j], "rows (%d, %d)", e, j);
	}
	{
		float t[256], o[24];
		uint8_t ri[4] = {15, 3, 3, 0};
		int32_t ci[6];
		for (int i = 0; i < 256; i++)
			t[i] = su_nonzero(&r, -1, 1);
		for (int i = 0; i < 6; i++)
			ci[i] = (int32_t)su_int(&r, 0, 15);
		ex_poison(o, sizeof o);
		EX_OK(outer(ex_stream(), EX_DEV(t, 256), EX_DEV(ri, 4), EX_DEV(ci, 6), EX_DEV(o, 24)));
		for (int a = 0; a < 4; a++)
			for (int b = 0; b < 6; b++)
				EX_SAME(o[a * 6 + b], t[ri[a] * 16 + ci[b]], "outer (%d, %d)", a, b);
	}
	{
		int64_t m = 40, n = 100;
		int32_t t[40], idx[100], o[100];
		for (int i = 0; i < m; i++)
			t[i] = (int32_t)su_int(&r, 0, 1000);
		for (int i = 0; i < n; i++)
			idx[i] = (int32_t)su_int(&r, -10, m + 10);
		idx[0] = INT32_MIN;
		idx[1] = INT32_MAX;
		ex_poison(o, sizeof o);
		EX_OK(checked(ex_stream(), EX_DEV(t, m), EX_DEV(idx, n), EX_DEV(o, n), m, n));
		for (int i = 0; i < n; i++)
			EX_EQ(o[i], idx[i] >= 0 && idx[i] < m ? t[idx[i]] : -1, "checked idx %d", idx[i]);
	}
	{
		int64_t n = 44; /* the last block is partial */
		float x[44], o[44];
		int32_t perm[8] = {7, 0, 6, 1, 5, 2, 4, 3};
		for (int i = 0; i < n; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(permute_blocks(ex_stream(), EX_DEV(x, n), EX_DEV(perm, 8), EX_DEV(o, n), n));
		for (int i = 0; i < n; i++) {
			int b = i / 8, k = i % 8;
			if (b * 8 + perm[k] < n) /* lanes reading past the end are unspecified */
				EX_SAME(o[i], x[b * 8 + perm[k]], "permute_blocks %d", i);
		}
	}
	{
		float x[16], o[16];
		int32_t perm[16];
		shuffle(perm, 16, &r);
		for (int i = 0; i < 16; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(scatter_store(ex_stream(), EX_DEV(x, 16), EX_DEV(perm, 16), EX_DEV(o, 16)));
		for (int i = 0; i < 16; i++)
			EX_SAME(o[perm[i]], x[i], "scatter_store %d", i);
	}
	return ex_done("gather");
}
