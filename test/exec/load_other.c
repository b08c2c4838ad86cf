/* Driver of load_other.pk: see there. */
#include "exec_util.h"
#include "load_other.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "load_other");
	su_rng r = su_rng_new(43);
	for (int64_t n = 16; n <= 100; n += 21) {
		float x[100], o[1];
		double s = 0;
		for (int i = 0; i < n; i++)
			s += x[i] = (float)su_int(&r, -100, 100); /* integers: exact sums */
		ex_poison(o, sizeof o);
		EX_OK(total(ex_stream(), EX_DEV(x, n), EX_DEV(o, 1), n));
		EX_SAME(o[0], s, "total n=%lld", (long long)n);
	}
	for (int64_t rows = 4; rows <= 13; rows += 9) {
		int32_t x[13 * 8], o[8], want[8] = {0};
		for (int i = 0; i < rows * 8; i++) {
			x[i] = (int32_t)su_int(&r, -1000, 1000);
			want[i % 8] += x[i];
		}
		ex_poison(o, sizeof o);
		EX_OK(colsums(ex_stream(), EX_DEV(x, rows * 8), EX_DEV(o, 8), rows));
		for (int j = 0; j < 8; j++)
			EX_EQ(o[j], want[j], "colsums rows=%lld col %d", (long long)rows, j);
	}
	return ex_done("load_other");
}
