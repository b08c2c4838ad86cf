/* Driver of loops.pk: see there. */
#include "exec_util.h"
#include "loops.h"

static void check_ranges(int32_t lo, int32_t hi, int64_t big)
{
	int64_t o[8];
	ex_poison(o, sizeof o);
	EX_OK(ranges(ex_stream(), EX_DEV(o, 8), lo, hi, big));
	int64_t a = 0, b = 0, c = 0, d = 0, e = 7, f = 0, g = 0, h = 1;
	for (int i = 0; i < hi; i++)
		a += i;
	for (int i = lo; i < hi; i++)
		b = (int32_t)((uint32_t)b * 2u + (uint32_t)i);
	for (int i = lo; i < hi; i += 3)
		c = c * 10 + i;
	for (int i = hi; i > lo; i -= 2)
		d = d * 10 + i;
	for (int i = hi; i < lo; i++)
		e = 0;
	for (int64_t i = big - 3; i < big; i++)
		f += i;
	for (int i = 0; i < 3; i++)
		for (int j = i; j < 4; j++)
			g = g * 3 + (i + j) % 3;
	for (int i = -5; i < 5; i += 4)
		h = h * 7 + i;
	int64_t want[8] = {a, b, c, d, e, f, g, h};
	for (int k = 0; k < 8; k++)
		EX_EQ(o[k], want[k], "ranges lo=%d hi=%d loop %d", lo, hi, k);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "loops");
	su_rng r = su_rng_new(4);
	check_ranges(2, 11, 5000000000LL);
	check_ranges(-4, 6, -7);
	check_ranges(9, 3, 1); /* most loops run zero times */
	check_ranges(0, 0, 3);
	{
		int64_t n = 100;
		uint32_t x[100], o[100];
		for (int i = 0; i < n; i++)
			x[i] = (uint32_t)su_next(&r);
		for (int32_t iters = 0; iters <= 5; iters += 5) {
			ex_poison(o, sizeof o);
			EX_OK(powers(ex_stream(), EX_DEV(x, n), EX_DEV(o, n), iters, n));
			for (int i = 0; i < n; i++) {
				uint32_t acc = 1;
				for (int it = 0; it < iters; it++)
					acc = acc * x[i] + (uint32_t)it;
				EX_EQU(o[i], acc + (uint32_t)iters, "powers iters=%d %d", iters, i);
			}
		}
	}
	{
		int64_t n = 50;
		int64_t x[50];
		int32_t o[50];
		for (int i = 0; i < n; i++)
			x[i] = i == 0 ? 1 : su_int(&r, 1, 100000);
		ex_poison(o, sizeof o);
		EX_OK(collatz(ex_stream(), EX_DEV(x, n), EX_DEV(o, n), n));
		for (int i = 0; i < n; i++) {
			int64_t v = x[i];
			int steps = 0;
			while (v != 1) {
				v = v % 2 == 0 ? v / 2 : 3 * v + 1;
				steps++;
			}
			EX_EQ(o[i], steps, "collatz %lld", (long long)x[i]);
		}
	}
	{
		int64_t n = 70;
		float x[70], o[70];
		int32_t rounds[70];
		for (int i = 0; i < n; i++)
			x[i] = su_nonzero(&r, -0.9f, 0.9f) * (i < 32 ? 1.0f : (float)(i * i)); /* block 0 needs no round */
		ex_poison(o, sizeof o);
		ex_poison(rounds, sizeof rounds);
		EX_OK(halve(ex_stream(), EX_DEV(x, n), EX_DEV(o, n), EX_DEV(rounds, n), n));
		for (int b = 0; b * 32 < n; b++) {
			float m = 0;
			for (int i = b * 32; i < b * 32 + 32 && i < n; i++)
				m = fmaxf(m, fabsf(x[i]));
			int rr = 0;
			while (m >= 1.0f) {
				m *= 0.5f;
				rr++;
			}
			for (int i = b * 32; i < b * 32 + 32 && i < n; i++) {
				EX_SAME(o[i], ldexpf(x[i], -rr), "halve %d", i);
				EX_EQ(rounds[i], rr, "halve rounds %d", i);
			}
		}
	}
	{
		int64_t n = 40;
		int32_t x[40], cnt[1], o[1];
		for (int i = 0; i < n; i++)
			x[i] = (int32_t)su_int(&r, -50, 50);
		for (cnt[0] = 0; cnt[0] <= 45; cnt[0] += 15) {
			o[0] = -1;
			EX_OK(dyn_bounds(ex_stream(), EX_DEV(x, n), EX_DEV(cnt, 1), EX_DEV(o, 1), n));
			int32_t s = 0;
			for (int i = cnt[0]; i < n; i++)
				s += x[i];
			EX_EQ(o[0], s, "dyn_bounds from %d", cnt[0]);
		}
	}
	return ex_done("loops");
}
