/* Driver of split_loops.pk: see there. */
#include "exec_util.h"
#include "split_loops.h"

enum { N = 200, BC = 16 };

/* r + off as the kernel computes it: i32, wrapping. */
static int32_t wrap_add(int32_t r, int32_t off)
{
	return (int32_t)((uint32_t)r + (uint32_t)off);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "split_loops");
	su_rng r = su_rng_new(14);
	static float x[N * BC], o[N];
	for (int i = 0; i < N * BC; i++)
		x[i] = su_uniform(&r, -1, 1);
	const int32_t offs[] = {0, 5, -7, 40, -300, 500, 1 << 29, -(1 << 29), 1 << 30, INT32_MAX - 100, INT32_MIN + 50};
	for (size_t t = 0; t < sizeof offs / sizeof *offs; t++) {
		int32_t off = offs[t];
		for (int suffix = 0; suffix < 2; suffix++) {
			for (int i = 0; i < N; i++)
				o[i] = NAN;
			if (suffix)
				EX_OK(suf(ex_stream(), EX_DEV(x, N * BC), EX_DEV(o, N), off, N));
			else
				EX_OK(tri(ex_stream(), EX_DEV(x, N * BC), EX_DEV(o, N), off, N));
			for (int row = 0; row < N; row++) {
				double want = 0;
				for (int c = 0; c < N; c++) {
					int32_t rr = wrap_add(row, off);
					if (suffix ? c > rr : rr >= c)
						want += x[c * BC];
				}
				EX_NEAR(o[row], want, 1e-4, "%s off %d row %d", suffix ? "suf" : "tri", off, row);
			}
		}
	}
	return ex_done("split_loops");
}
