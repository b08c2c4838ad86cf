/* Driver of rank0.pk: see there. */
#include "exec_util.h"
#include "rank0.h"

static void check(su_rng *r, int64_t n)
{
	float *x = malloc(sizeof(float) * (size_t)n), *o = malloc(sizeof(float) * (size_t)n);
	int32_t *xi = malloc(sizeof(int32_t) * (size_t)n);
	float s = su_uniform(r, -2.0f, 2.0f), total = -1.0f;
	int32_t c = 7, want = 7;
	for (int64_t i = 0; i < n; i++) {
		x[i] = su_uniform(r, -4.0f, 4.0f);
		xi[i] = (int32_t)su_int(r, -5, 5);
		want += xi[i] > 0;
	}
	EX_OK(scale(ex_stream(), EX_DEV(&s, 1), EX_DEV(x, n), EX_DEV(o, n), EX_DEV(&total, 1), n));
	for (int64_t i = 0; i < n; i++)
		EX_SAME(o[i], x[i] * s, "scale o[%lld], n %lld", (long long)i, (long long)n);
	EX_SAME(total, s * 2.0f + 1.0f, "scale total, n %lld", (long long)n);
	EX_OK(count(ex_stream(), EX_DEV(xi, n), EX_DEV(&c, 1), n));
	EX_EQ(c, want, "count, n %lld", (long long)n);
	float last = -1.0f;
	EX_OK(shift(ex_stream(), EX_DEV(&s, 1), EX_DEV(x, n), EX_DEV(o, n), EX_DEV(&last, 1), n));
	for (int64_t i = 0; i < n; i++)
		EX_SAME(o[i], x[i] + s, "shift o[%lld], n %lld", (long long)i, (long long)n);
	EX_SAME(last, (float)((n + 255) / 256 - 1), "shift last, n %lld", (long long)n);
	free(x), free(o), free(xi);
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "rank0");
	su_rng r = su_rng_new(77);
	check(&r, 1001);
	check(&r, 256);
	check(&r, 1);
	return ex_done("rank0");
}
