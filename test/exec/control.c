/* Driver of control.pk: see there. */
#include "exec_util.h"
#include "control.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "control");
	su_rng r = su_rng_new(8);
	{
		int64_t n = 200;
		float x[200], thr = 0.25f;
		int32_t o[200];
		for (int i = 0; i < n; i++)
			x[i] = su_nonzero(&r, -1, 1);
		x[0] = -0.25f;
		x[1] = 0.25f;
		x[2] = 0.5f;
		ex_poison(o, sizeof o);
		EX_OK(classify(ex_stream(), EX_DEV(x, n), EX_DEV(o, n), thr, n));
		for (int i = 0; i < n; i++) {
			float v = x[i];
			int c = v < -thr ? 0 : v < 0 ? 1 : v < thr ? 2 : 3;
			int d = v > 0.5f ? 200 : 100;
			EX_EQ(o[i], c * 1000 + d, "classify x=%g", v);
		}
	}
	{
		int64_t n = 9;
		int32_t o[9], total[2] = {5, 7};
		ex_poison(o, sizeof o);
		EX_OK(edges_when(ex_stream(), EX_DEV(o, n), EX_DEV(total, 2), n));
		for (int i = 0; i < n; i++)
			EX_EQ(o[i], (i == 0 ? -100 : i) + (i == n - 1 ? 1000 : 0), "edges_when %d", i);
		EX_EQ(total[0], 5 + 0 + 2 + 4 + 6 + 8, "edges_when even total");
		EX_EQ(total[1], 7 + 1 + 3 + 5 + 7, "edges_when odd total");
	}
	for (int t = 0; t < 4; t++) {
		int32_t x[16], o[4];
		bool flag = t & 1;
		int neg = t >= 2;
		int evens = 0, odds = 0, anyneg = 0;
		for (int k = 0; k < 16; k++) {
			x[k] = (int32_t)su_int(&r, neg ? -20 : 0, 20);
			if (x[k] % 2 == 0)
				evens += x[k];
			else
				odds++;
			anyneg |= x[k] < 0;
		}
		ex_poison(o, sizeof o);
		EX_OK(nested(ex_stream(), EX_DEV(x, 16), EX_DEV(o, 4), flag));
		EX_EQ(o[0], evens, "nested evens t=%d", t);
		EX_EQ(o[1], odds, "nested odds t=%d", t);
		EX_EQ(o[2], flag ? 16 : -1, "nested p t=%d", t);
		EX_EQ(o[3], anyneg && !flag, "nested anyneg t=%d", t);
	}
	return ex_done("control");
}
