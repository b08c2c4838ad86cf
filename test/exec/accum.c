/* Driver of accum.pk: see there.  argv[1]: the seed. */
#include "exec_util.h"
#include "accum.h"

enum { K = 4096, T = 16, R = 2 };

static su_rng rng;
static int ones; /* this round's inputs: all ones, or uniform in [0.5, 1) */

/* 16-bit floats as bits: bf = 1 for bf16, 0 for f16. */
static uint16_t to16(int bf, double v)
{
	return bf ? su_f32_to_bf16((float)v) : su_f32_to_f16((float)v);
}

static double of16(int bf, uint16_t h)
{
	return bf ? su_bf16_to_f32(h) : su_f16_to_f32(h);
}

/* n inputs of this round as bits h and values v. */
static void fill(int bf, uint16_t *h, double *v, int n)
{
	for (int i = 0; i < n; i++) {
		h[i] = to16(bf, ones ? 1.0 : su_uniform(&rng, 0.5f, 1.0f));
		v[i] = of16(bf, h[i]);
	}
}

/* got against the exact sum want: on ones exactly want rounded once; on
 * random inputs within one 16-bit ulp of want (f32 accumulation; a 16-bit
 * accumulator is off by far more). */
static void check(const char *what, int i, int bf, uint16_t got, double want)
{
	double g = of16(bf, got);
	int e;
	frexp(want, &e);
	bool ok = ones ? g == of16(bf, to16(bf, want)) : fabs(g - want) <= ldexp(1.0, e - (bf ? 8 : 11));
	ex_checks++;
	if (!ok && ex_note_failure())
		fprintf(stderr, "%s[%d] = %.9g, want %.9g (%s inputs)\n", what, i, g, want, ones ? "all-ones" : "random");
}

/* (x @ y)[i, j] of x: [m, K], y: [K, n], exactly (the products are exact in double). */
static double dot_ref(const double *x, const double *y, int i, int j, int n)
{
	double s = 0;
	for (int k = 0; k < K; k++)
		s += x[i * K + k] * y[k * n + j];
	return s;
}

static void run_dots(void)
{
	static uint16_t xb[T * K], yb[K * T], xh[T * K], yh[K * T], cb[T * T], zb[T * T], zh[T * T], za[T * T],
		zc[T * T];
	static double vxb[T * K], vyb[K * T], vxh[T * K], vyh[K * T], vcb[T * T];
	fill(1, xb, vxb, T * K);
	fill(1, yb, vyb, K * T);
	fill(0, xh, vxh, T * K);
	fill(0, yh, vyh, K * T);
	fill(1, cb, vcb, T * T);

	ex_poison(zb, sizeof zb);
	ex_poison(zh, sizeof zh);
	EX_OK(dot_row(ex_stream(), EX_DEV(xb, K), EX_DEV(yb, K), EX_DEV(xh, K), EX_DEV(yh, K), EX_DEV(zb, 1),
	              EX_DEV(zh, 1)));
	check("dot_row bf16", 0, 1, zb[0], dot_ref(vxb, vyb, 0, 0, 1));
	check("dot_row f16", 0, 0, zh[0], dot_ref(vxh, vyh, 0, 0, 1));

	ex_poison(zb, sizeof zb);
	ex_poison(zh, sizeof zh);
	ex_poison(za, sizeof za);
	ex_poison(zc, sizeof zc);
	EX_OK(dot_tile(ex_stream(), EX_DEV(xb, T * K), EX_DEV(yb, K * T), EX_DEV(xh, T * K), EX_DEV(yh, K * T),
	               EX_DEV(cb, T * T), EX_DEV(zb, T * T), EX_DEV(zh, T * T), EX_DEV(za, T * T), EX_DEV(zc, T * T)));
	for (int i = 0; i < T; i++)
		for (int j = 0; j < T; j++) {
			double b = dot_ref(vxb, vyb, i, j, T);
			check("dot_tile bf16", i * T + j, 1, zb[i * T + j], b);
			check("dot_tile f16", i * T + j, 0, zh[i * T + j], dot_ref(vxh, vyh, i, j, T));
			check("dot_tile acc = bf16", i * T + j, 1, za[i * T + j], b);
			check("dot_tile acc = cb", i * T + j, 1, zc[i * T + j], vcb[i * T + j] + b);
		}
}

static void run_sums(void)
{
	static uint16_t xb[R * K], xh[R * K], sb[R], sh[R], sall[1], keep[R];
	static double vxb[R * K], vxh[R * K];
	fill(1, xb, vxb, R * K);
	fill(0, xh, vxh, R * K);
	ex_poison(sb, sizeof sb);
	ex_poison(sh, sizeof sh);
	ex_poison(sall, sizeof sall);
	ex_poison(keep, sizeof keep);
	EX_OK(sums(ex_stream(), EX_DEV(xb, R * K), EX_DEV(xh, R * K), EX_DEV(sb, R), EX_DEV(sh, R), EX_DEV(sall, 1),
	           EX_DEV(keep, R)));
	double all = 0;
	for (int r = 0; r < R; r++) {
		double b = 0, h = 0;
		for (int k = 0; k < K; k++) {
			b += vxb[r * K + k];
			h += vxh[r * K + k];
		}
		all += b;
		check("sum bf16 axis 1", r, 1, sb[r], b);
		check("sum f16 axis -1", r, 0, sh[r], h);
		check("sum bf16 keepdims", r, 1, keep[r], b);
	}
	check("sum bf16 all axes", 0, 1, sall[0], all);
}

static void run_cumsums(void)
{
	static uint16_t xb[K], xh[K], x2[R * K], cb[K], ch[K], c2[R * K];
	static double vxb[K], vxh[K], vx2[R * K];
	fill(1, xb, vxb, K);
	fill(0, xh, vxh, K);
	fill(1, x2, vx2, R * K);
	ex_poison(cb, sizeof cb);
	ex_poison(ch, sizeof ch);
	ex_poison(c2, sizeof c2);
	EX_OK(cumsums(ex_stream(), EX_DEV(xb, K), EX_DEV(xh, K), EX_DEV(x2, R * K), EX_DEV(cb, K), EX_DEV(ch, K),
	              EX_DEV(c2, R * K)));
	double b = 0, h = 0, r2[R] = {0};
	for (int k = 0; k < K; k++) {
		b += vxb[k];
		h += vxh[k];
		check("cumsum bf16", k, 1, cb[k], b);
		check("cumsum f16", k, 0, ch[k], h);
		for (int r = 0; r < R; r++) {
			r2[r] += vx2[r * K + k];
			check("cumsum bf16 axis 1", r * K + k, 1, c2[r * K + k], r2[r]);
		}
	}
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "accum");
	rng = su_rng_new(argc > 1 ? strtoull(argv[1], NULL, 0) : 1);
	for (ones = 1; ones >= 0; ones--) {
		run_dots();
		run_sums();
		run_cumsums();
	}
	return ex_done("accum");
}
