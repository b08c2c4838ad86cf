/* Driver of edges.pk: see there.  Outputs live inside larger buffers whose
 * guard zones (before and after) must stay untouched. */
#include "exec_util.h"
#include "edges.h"

enum { G = 64, BR = 8, BC = 16, C = 40 };
static const uint8_t GUARD = 0x5A;

static void *guarded(size_t bytes)
{
	uint8_t *p = malloc(bytes + 2 * G);
	memset(p, GUARD, G);
	memset(p + G, 0xFF, bytes);
	memset(p + G + bytes, GUARD, G);
	return p + G;
}

static void check_guards(void *q, size_t bytes, const char *what)
{
	uint8_t *p = (uint8_t *)q - G;
	for (int i = 0; i < G; i++) {
		EX_EQ(p[i], GUARD, "%s: guard byte %d before the output was written", what, i);
		EX_EQ(p[G + bytes + i], GUARD, "%s: guard byte %d after the output was written", what, i);
	}
	free(p);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "edges");
	su_rng rng = su_rng_new(5);
	static const int64_t shapes[][2] = {{13, 37}, {16, 32}, {1, 1}, {7, 15}, {9, 17}};
	for (int t = 0; t < 5; t++) {
		int64_t r = shapes[t][0], c = shapes[t][1];
		size_t bytes = (size_t)(r * c) * sizeof(float);
		float *x = malloc(bytes), *o = guarded(bytes);
		for (int64_t i = 0; i < r * c; i++)
			x[i] = su_nonzero(&rng, -1, 1);
		EX_OK(copy2d(ex_stream(), EX_DEV(x, r * c), ex_buf_guarded(o, bytes, G), r, c));
		for (int64_t i = 0; i < r * c; i++)
			EX_SAME(o[i], x[i] + 1.0f, "copy2d %lldx%lld e=%lld", (long long)r, (long long)c, (long long)i);
		check_guards(o, bytes, "copy2d");
		free(x);
	}
	for (int64_t r = 1; r <= 20; r += 19) {
		float *x = malloc((size_t)(r * C) * sizeof(float)), *o = guarded((size_t)r * sizeof(float));
		for (int64_t i = 0; i < r * C; i++)
			x[i] = su_nonzero(&rng, -1, 1);
		EX_OK(rowsum(ex_stream(), EX_DEV(x, r * C), ex_buf_guarded(o, (size_t)r * sizeof(float), G), r));
		for (int64_t i = 0; i < r; i++) {
			double s = 0;
			for (int j = 0; j < C; j++)
				s += x[i * C + j];
			EX_NEAR(o[i], s, 1e-5, "rowsum r=%lld row %lld", (long long)r, (long long)i);
		}
		check_guards(o, (size_t)r * sizeof(float), "rowsum");
		free(x);
	}
	for (int64_t r = 1; r <= 45; r += 22) {
		float *x = malloc((size_t)(r * BC) * sizeof(float)), o[BC];
		for (int64_t i = 0; i < r * BC; i++)
			x[i] = su_nonzero(&rng, -1, 1);
		ex_poison(o, sizeof o);
		EX_OK(colsum(ex_stream(), EX_DEV(x, r * BC), EX_DEV(o, BC), r));
		for (int j = 0; j < BC; j++) {
			double s = 0;
			for (int64_t i = 0; i < r; i++)
				s += x[i * BC + j];
			EX_NEAR(o[j], s, 1e-5, "colsum r=%lld col %d", (long long)r, j);
		}
		free(x);
	}
	{
		int64_t n = 21, m = 70; /* x ends inside block 1; blocks 2..4 of x are out of bounds */
		float x[21];
		float *o = guarded((size_t)m * sizeof(float));
		for (int i = 0; i < n; i++)
			x[i] = su_nonzero(&rng, -1, 1);
		EX_OK(pad(ex_stream(), EX_DEV(x, n), ex_buf_guarded(o, (size_t)m * sizeof(float), G), n, m));
		for (int i = 0; i < m; i++)
			EX_SAME(o[i], i < n ? x[i] : 7.5f, "pad e=%d", i);
		check_guards(o, (size_t)m * sizeof(float), "pad");
	}
	{
		int64_t n = 3, m = 19;
		int64_t x[3 * 4];
		int64_t *o = guarded((size_t)(m * 4) * sizeof(int64_t));
		for (int i = 0; i < n * 4; i++)
			x[i] = su_int(&rng, -1000000000000LL, 1000000000000LL);
		EX_OK(pad2(ex_stream(), EX_DEV(x, n * 4), ex_buf_guarded(o, (size_t)(m * 4) * sizeof(int64_t), G), n,
		           m));
		for (int i = 0; i < m * 4; i++)
			EX_EQ(o[i], i < n * 4 ? x[i] * 2 : -6, "pad2 e=%d", i);
		check_guards(o, (size_t)(m * 4) * sizeof(int64_t), "pad2");
	}
	return ex_done("edges");
}
