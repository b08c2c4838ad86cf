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
	{
		int64_t np = 9;
		float t[2 * 9 * 4 * 16], o[2 * 4 * 4 * 16];
		int32_t tab[4] = {8, 0, 5, 5};
		for (int i = 0; i < 2 * np * 64; i++)
			t[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(pages(ex_stream(), EX_DEV(t, 2 * np * 64), EX_DEV(tab, 4), EX_DEV(o, 2 * 4 * 64), np));
		for (int h = 0; h < 2; h++)
			for (int e = 0; e < 4; e++)
				for (int k = 0; k < 64; k++)
					EX_SAME(o[(h * 4 + e) * 64 + k], t[(h * np + tab[e]) * 64 + k], "pages (%d, %d, %d)", h, e, k);
	}
	{
		int64_t m = 7, c = 30;
		int32_t c0 = 22, sel[8] = {6, 0, -1, 3, 7, 3, INT32_MAX, 1};
		float t[7 * 30], o[8 * 12];
		for (int i = 0; i < m * c; i++)
			t[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(row_slice(ex_stream(), EX_DEV(t, m * c), EX_DEV(sel, 8), c0, EX_DEV(o, 8 * 12), m, c));
		for (int e = 0; e < 8; e++)
			for (int j = 0; j < 12; j++) {
				bool in = sel[e] >= 0 && sel[e] < m && c0 + j < c;
				EX_SAME(o[e * 12 + j], in ? t[sel[e] * c + c0 + j] : -1.0f, "row_slice (%d, %d)", e, j);
			}
	}
	{
		float t[6 * 20], o[6 * 5];
		int32_t cols[5] = {19, 2, 2, 0, 11};
		for (int i = 0; i < 6 * 20; i++)
			t[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(columns(ex_stream(), EX_DEV(t, 6 * 20), EX_DEV(cols, 5), EX_DEV(o, 6 * 5)));
		for (int a = 0; a < 6; a++)
			for (int e = 0; e < 5; e++)
				EX_SAME(o[a * 5 + e], t[a * 20 + cols[e]], "columns (%d, %d)", a, e);
	}
	{
		float t[4 * 10 * 8], o[2 * 3 * 8];
		int32_t idx[3] = {9, 4, 0};
		for (int i = 0; i < 4 * 10 * 8; i++)
			t[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(middle(ex_stream(), EX_DEV(t, 4 * 10 * 8), EX_DEV(idx, 3), EX_DEV(o, 2 * 3 * 8)));
		for (int a = 0; a < 2; a++)
			for (int e = 0; e < 3; e++)
				for (int k = 0; k < 8; k++)
					EX_SAME(o[(a * 3 + e) * 8 + k], t[((a + 1) * 10 + idx[e]) * 8 + k], "middle (%d, %d, %d)", a, e, k);
	}
	{
		float x[8 * 16], o[8 * 16];
		int32_t perm[8];
		shuffle(perm, 8, &r);
		for (int i = 0; i < 8 * 16; i++)
			x[i] = su_nonzero(&r, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(scatter_rows(ex_stream(), EX_DEV(x, 8 * 16), EX_DEV(perm, 8), EX_DEV(o, 8 * 16)));
		for (int e = 0; e < 8; e++)
			for (int k = 0; k < 16; k++)
				EX_SAME(o[perm[e] * 16 + k], x[e * 16 + k], "scatter_rows (%d, %d)", e, k);
	}
	return ex_done("gather");
}
