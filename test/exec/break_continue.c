/* Driver of break_continue.pk: see there. */
#include "exec_util.h"
#include "break_continue.h"

enum { C = 40 };

static void check_search(su_rng *r, int64_t rows, int32_t lim)
{
	int32_t *x = malloc(sizeof(int32_t) * (size_t)(rows * C));
	int32_t *f = malloc(sizeof(int32_t) * (size_t)rows), *odd = malloc(sizeof(int32_t) * (size_t)rows);
	int32_t *sk = malloc(sizeof(int32_t) * (size_t)rows);
	for (int64_t i = 0; i < rows * C; i++)
		x[i] = (int32_t)su_int(r, -30, 200);
	ex_poison(f, sizeof(int32_t) * (size_t)rows);
	EX_OK(search(ex_stream(), EX_DEV(x, rows * C), EX_DEV(f, rows), EX_DEV(odd, rows), EX_DEV(sk, rows), lim, rows));
	for (int64_t i = 0; i < rows; i++) {
		int32_t wf = -1, ws = 0, wk = 0;
		for (int j = 0; j < C; j++) {
			int32_t v = x[i * C + j];
			if (v < lim) {
				wf = j;
				break;
			}
			if (v % 2 == 0) {
				wk++;
				continue;
			}
			ws += v;
		}
		EX_EQ(f[i], wf, "search first, row %lld lim %d", (long long)i, lim);
		EX_EQ(odd[i], ws, "search odd sum, row %lld lim %d", (long long)i, lim);
		EX_EQ(sk[i], wk, "search skipped, row %lld lim %d", (long long)i, lim);
	}
	free(x), free(f), free(odd), free(sk);
}

static void check_nested(su_rng *r, int stop_row)
{
	int32_t x[8 * 16], o[8], done[1];
	for (int i = 0; i < 8 * 16; i++)
		x[i] = (int32_t)su_int(r, -3, 40);
	x[2 * 16] = 0; /* row 2 is skipped */
	if (stop_row >= 0)
		x[stop_row * 16] = 99;
	ex_poison(o, sizeof o);
	EX_OK(nested(ex_stream(), EX_DEV(x, 8 * 16), EX_DEV(o, 8), EX_DEV(done, 1)));
	int32_t want[8], wdone = 0;
	for (int i = 0; i < 8; i++)
		want[i] = -2;
	for (int i = 0; i < 8; i++) {
		if (x[i * 16] == 99)
			break;
		wdone++;
		if (x[i * 16] == 0) {
			want[i] = -1;
			continue;
		}
		int n = 0;
		for (int j = 0; j < 16; j++) {
			if (x[i * 16 + j] < 0)
				break;
			n++;
		}
		want[i] = n;
	}
	for (int i = 0; i < 8; i++)
		EX_EQ(o[i], want[i], "nested row %d (stop %d)", i, stop_row);
	EX_EQ(done[0], wdone, "nested rows done (stop %d)", stop_row);
}

static void check_grow(su_rng *r, float lim)
{
	float x[32], o[32];
	int32_t rounds[1];
	for (int i = 0; i < 32; i++)
		x[i] = (float)su_int(r, 0, 9);
	ex_poison(o, sizeof o);
	EX_OK(grow(ex_stream(), EX_DEV(x, 32), EX_DEV(o, 32), EX_DEV(rounds, 1), lim));
	float v[32];
	memcpy(v, x, sizeof v);
	int n = 0;
	while (n < 20) {
		n++;
		float s = 0, m = v[0];
		for (int i = 0; i < 32; i++)
			s += v[i], m = v[i] > m ? v[i] : m;
		if (s > lim)
			break;
		if ((int32_t)m % 2 == 1) {
			for (int i = 0; i < 32; i++)
				v[i] += 1.0f;
			continue;
		}
		for (int i = 0; i < 32; i++)
			v[i] *= 2.0f;
	}
	for (int i = 0; i < 32; i++)
		EX_SAME(o[i], v[i], "grow lim %g element %d", lim, i);
	EX_EQ(rounds[0], n, "grow lim %g rounds", lim);
}

static void check_down(su_rng *r)
{
	int32_t x[32], o[2];
	for (int i = 0; i < 32; i++)
		x[i] = (int32_t)su_int(r, 0, 9);
	EX_OK(down(ex_stream(), EX_DEV(x, 32), EX_DEV(o, 2)));
	int32_t last = 100, hits = 0;
	for (int i = 31; i > -1; i -= 3) {
		if (x[i] > 5)
			continue;
		hits++;
		last = i;
		if (hits == 4)
			break;
	}
	EX_EQ(o[0], last, "down last");
	EX_EQ(o[1], hits, "down hits");
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "break_continue");
	su_rng r = su_rng_new(68);
	check_search(&r, 37, -20);
	check_search(&r, 5, 1000); /* every row breaks at once */
	check_search(&r, 9, -1000); /* no row breaks */
	check_nested(&r, -1);
	check_nested(&r, 5);
	check_nested(&r, 0);
	check_grow(&r, 1e9f); /* 20 rounds */
	check_grow(&r, 2000.0f);
	check_grow(&r, 0.0f); /* breaks in the first round */
	for (int k = 0; k < 4; k++)
		check_down(&r);
	return ex_done("break_continue");
}
