/* flash_attention_bwd: runs samples/flash_attention_bwd.pk (the attention
 * backward pass over [b, SEQ, h, HEAD_DIM] arrays) and checks dq, dk, dv
 * and delta against C (double).
 *   build/samples/flash_attention_bwd [--b N] [--h N] [--seed S] [--dump DIR] [-v]
 * It draws q, k, v and dout, computes the forward pass in double (o rounded
 * to DT and the base-2 lse rounded to f32 are the kernels' inputs, as the
 * forward kernel would give them), runs mha_preprocess_backward for delta,
 * then mha_backward, and compares with the exact gradients
 *   dv = pᵀ dout, ds = p ∘ (dout vᵀ − rowsum(o ∘ dout)) · scale,
 *   dq = ds k, dk = dsᵀ q.
 * --dump DIR writes mha_backward's arrays to DIR (test/pallas/compare.py
 * --kernel mha_backward) and mha_preprocess_backward's to DIR/preprocess
 * (--kernel mha_preprocess_backward).  Build it with the same values as C macros as pkc got with -D:
 *   pkc -DSEQ=256 -DHEAD_DIM=128 -DCAUSAL=true -DDT=bf16 -DSM_SCALE=0.125 -DBQ_DKV=64 ...
 *   cc  -DSEQ=256 -DHEAD_DIM=128 -DCAUSAL=1    -DBF16=1  -DSM_SCALE=0.125 -DBQ_DKV=64 ... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash_attention_bwd.h"
#include "sample_util.h"

#ifndef SEQ
#define SEQ 512
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef BF16
#define BF16 0
#endif
#ifndef SM_SCALE
#define SM_SCALE 1.0
#endif
/* The block sizes only go into the dump (the Pallas run uses the same). */
#ifndef BQ_DKV
#define BQ_DKV 32
#endif
#ifndef BK_DKV
#define BK_DKV 32
#endif
#ifndef BQ_DQ
#define BQ_DQ 32
#endif
#ifndef BK_DQ
#define BK_DQ 32
#endif

static uint16_t to_dt(float f) { return BF16 ? su_f32_to_bf16(f) : su_f32_to_f16(f); }
static double from_dt(uint16_t h) { return BF16 ? su_bf16_to_f32(h) : su_f16_to_f32(h); }

/* One head's arrays in double, [SEQ][HEAD_DIM] (and p [SEQ][SEQ]). */
typedef struct Head {
	double *q, *k, *v, *dout, *o, *p, *dq, *dk, *dv;
	double *lse2, *delta; /* [SEQ] */
} Head;

static double *row(double *a, int i) { return a + (size_t)i * HEAD_DIM; }

/* Element [bi, t, hi, d] of a [b, SEQ, h, HEAD_DIM] array. */
static size_t at(int64_t h, int64_t bi, int64_t hi, int t, int d)
{
	return (((size_t)bi * SEQ + (size_t)t) * (size_t)h + (size_t)hi) * HEAD_DIM + (size_t)d;
}

/* The forward pass of one head: p (softmax rows), o, the base-2 lse. */
static void ref_forward(Head *x)
{
	for (int i = 0; i < SEQ; i++) {
		int n = CAUSAL ? i + 1 : SEQ;
		double *p = x->p + (size_t)i * SEQ, mx = -INFINITY, l = 0;
		for (int j = 0; j < SEQ; j++) {
			double s = 0;
			for (int d = 0; d < HEAD_DIM; d++)
				s += row(x->q, i)[d] * row(x->k, j)[d];
			p[j] = j < n ? s * SM_SCALE : -INFINITY;
			mx = p[j] > mx ? p[j] : mx;
		}
		for (int j = 0; j < SEQ; j++)
			l += p[j] = exp(p[j] - mx);
		for (int d = 0; d < HEAD_DIM; d++)
			row(x->o, i)[d] = 0;
		for (int j = 0; j < n; j++) {
			p[j] /= l;
			for (int d = 0; d < HEAD_DIM; d++)
				row(x->o, i)[d] += p[j] * row(x->v, j)[d];
		}
		x->lse2[i] = (mx + log(l)) / log(2.0);
	}
}

/* The exact gradients of one head (x->o is the exact forward output). */
static void ref_backward(Head *x)
{
	memset(x->dq, 0, (size_t)SEQ * HEAD_DIM * sizeof *x->dq);
	memset(x->dk, 0, (size_t)SEQ * HEAD_DIM * sizeof *x->dk);
	memset(x->dv, 0, (size_t)SEQ * HEAD_DIM * sizeof *x->dv);
	for (int i = 0; i < SEQ; i++) {
		double delta = 0;
		for (int d = 0; d < HEAD_DIM; d++)
			delta += row(x->o, i)[d] * row(x->dout, i)[d];
		x->delta[i] = delta;
		for (int j = 0; j < SEQ; j++) {
			double p = x->p[(size_t)i * SEQ + j], dp = 0;
			if (p == 0)
				continue;
			for (int d = 0; d < HEAD_DIM; d++) {
				dp += row(x->dout, i)[d] * row(x->v, j)[d];
				row(x->dv, j)[d] += p * row(x->dout, i)[d];
			}
			double ds = p * (dp - delta) * SM_SCALE;
			for (int d = 0; d < HEAD_DIM; d++) {
				row(x->dq, i)[d] += ds * row(x->k, j)[d];
				row(x->dk, j)[d] += ds * row(x->q, i)[d];
			}
		}
	}
}

/* Records the consts the kernels were compiled with and ends dump d. */
static int dump_consts_finish(su_dump *d)
{
	su_dump_const(d, "DT", BF16 ? "bf16" : "f16");
	su_dump_const(d, "CAUSAL", CAUSAL ? "true" : "false");
	su_dump_const(d, "SEQ", SU_STR(SEQ));
	su_dump_const(d, "HEAD_DIM", SU_STR(HEAD_DIM));
	su_dump_const(d, "SM_SCALE", SU_STR(SM_SCALE));
	su_dump_const(d, "BQ_DKV", SU_STR(BQ_DKV));
	su_dump_const(d, "BK_DKV", SU_STR(BK_DKV));
	su_dump_const(d, "BQ_DQ", SU_STR(BQ_DQ));
	su_dump_const(d, "BK_DQ", SU_STR(BK_DQ));
	return su_dump_finish(d);
}

int main(int argc, char **argv)
{
	int64_t b = 2, h = 3;
	su_size sizes[] = {{"b", &b}, {"h", &h}};
	su_opts o;
	int rc = su_parse(argc, argv, "flash_attention_bwd", sizes, 2, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t count = (size_t)b * SEQ * h * HEAD_DIM, bytes = count * sizeof(uint16_t);
	size_t nrows = (size_t)b * h * SEQ, lbytes = nrows * sizeof(float);
	enum { Q, K, V, DOUT, O, DQ, DK, DV, NARR };
	static const char *names[NARR] = {"q", "k", "v", "dout", "o", "dq", "dk", "dv"};
	uint16_t *a[NARR];
	for (int i = 0; i < NARR; i++)
		a[i] = su_xmalloc(bytes ? bytes : 1);
	for (size_t i = 0; i < count; i++)
		for (int n = Q; n <= DOUT; n++)
			a[n][i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
	float *lse = su_xmalloc(lbytes ? lbytes : 1), *delta = su_xmalloc(lbytes ? lbytes : 1);

	/* The reference, head by head; o and lse become the kernels' inputs. */
	size_t hsz = (size_t)SEQ * HEAD_DIM * sizeof(double);
	Head x;
	double **mats[] = {&x.q, &x.k, &x.v, &x.dout, &x.o, &x.dq, &x.dk, &x.dv};
	for (int n = 0; n < NARR; n++)
		*mats[n] = su_xmalloc(hsz);
	x.p = su_xmalloc((size_t)SEQ * SEQ * sizeof(double));
	x.lse2 = su_xmalloc(SEQ * sizeof(double));
	x.delta = su_xmalloc(SEQ * sizeof(double));
	double *ref[NARR] = {0};
	double *ref_delta = su_xmalloc(nrows * sizeof(double));
	for (int n = O; n < NARR; n++)
		ref[n] = su_xmalloc(count * sizeof(double));
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t hi = 0; hi < h; hi++) {
			for (int t = 0; t < SEQ; t++)
				for (int d = 0; d < HEAD_DIM; d++)
					for (int n = Q; n <= DOUT; n++)
						row(*mats[n], t)[d] = from_dt(a[n][at(h, bi, hi, t, d)]);
			ref_forward(&x);
			ref_backward(&x);
			for (int t = 0; t < SEQ; t++) {
				size_t lr = ((size_t)bi * (size_t)h + (size_t)hi) * SEQ + (size_t)t;
				lse[lr] = (float)x.lse2[t];
				ref_delta[lr] = x.delta[t];
				for (int d = 0; d < HEAD_DIM; d++) {
					a[O][at(h, bi, hi, t, d)] = to_dt((float)row(x.o, t)[d]);
					for (int n = O; n < NARR; n++)
						ref[n][at(h, bi, hi, t, d)] = row(*mats[n], t)[d];
				}
			}
		}

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	uint16_t *dev[NARR];
	for (int n = Q; n <= O; n++)
		dev[n] = su_to_device(&c, a[n], bytes);
	for (int n = DQ; n < NARR; n++)
		dev[n] = su_alloc_poisoned(&c, bytes);
	float *dlse = su_to_device(&c, lse, lbytes), *ddelta = su_alloc_poisoned(&c, lbytes);
	for (int n = 0; n < NARR; n++)
		if (!dev[n])
			return 1;
	if (!dlse || !ddelta)
		return 1;
	su_launch_begin(&c);
	pk_status st = mha_preprocess_backward(c.stream, dev[O], dev[DOUT], ddelta, b, h);
	if (st == PK_SUCCESS)
		st = mha_backward(c.stream, dev[Q], dev[K], dev[V], dev[DOUT], dlse, ddelta, dev[DQ], dev[DK], dev[DV],
		                  b, h);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, "mha_backward") || su_from_device(&c, delta, ddelta, lbytes))
		return 1;
	for (int n = DQ; n < NARR; n++)
		if (su_from_device(&c, a[n], dev[n], bytes))
			return 1;

	/* delta is o ∘ dout rounded to DT and summed in DT (as jnp.sum of DT
	 * values), so DT's tolerance; the gradients go through p and ds
	 * rounded to DT before their dots. */
	su_err e[NARR] = {0}, ed = {0};
	for (size_t i = 0; i < nrows; i++)
		su_err_add(&ed, delta[i], ref_delta[i]);
	for (int n = DQ; n < NARR; n++)
		for (size_t i = 0; i < count; i++)
			su_err_add(&e[n], from_dt(a[n][i]), ref[n][i]);

	su_dump *d = su_dump_begin(&o);
	su_dtype dt = BF16 ? SU_BF16 : SU_F16;
	for (int n = Q; n < NARR; n++)
		if (n != O)
			su_dump_array(d, names[n], dt, a[n], 4, (const int64_t[]){b, SEQ, h, HEAD_DIM});
	SU_DUMP(d, "lse", SU_F32, lse, b, h, SEQ);
	SU_DUMP(d, "delta", SU_F32, delta, b, h, SEQ);
	rc = dump_consts_finish(d);
	char pre_dir[4096];
	su_opts pre = o;
	if (o.dump) {
		snprintf(pre_dir, sizeof pre_dir, "%s/preprocess", o.dump);
		pre.dump = pre_dir;
	}
	d = su_dump_begin(&pre);
	SU_DUMP(d, "o", dt, a[O], b, SEQ, h, HEAD_DIM);
	SU_DUMP(d, "dout", dt, a[DOUT], b, SEQ, h, HEAD_DIM);
	SU_DUMP(d, "delta", SU_F32, delta, b, h, SEQ);
	rc |= dump_consts_finish(d);

	const char *fmt = "b=%lld h=%lld SEQ=%d HEAD_DIM=%d causal=%d %s %s";
	const char *dtn = BF16 ? "bf16" : "f16";
	rc |= su_report(&c, &ed, SU_TOL_F16, fmt, (long long)b, (long long)h, SEQ, HEAD_DIM, CAUSAL, dtn, "delta");
	for (int n = DQ; n < NARR; n++)
		rc |= su_report(&c, &e[n], SU_TOL_F16, fmt, (long long)b, (long long)h, SEQ, HEAD_DIM, CAUSAL, dtn,
		                names[n]);
	for (int n = 0; n < NARR; n++) {
		su_free(&c, dev[n]);
		free(a[n]);
		free(*mats[n]);
		free(ref[n]);
	}
	su_free(&c, dlse);
	su_free(&c, ddelta);
	su_ctx_free(&c);
	free(lse);
	free(delta);
	free(ref_delta);
	free(x.p);
	free(x.lse2);
	free(x.delta);
	return rc;
}
