/* flash_attention: runs samples/flash_attention.pk (attention forward over
 * [b, SEQ, h, HEAD_DIM] arrays) and checks it against C (double).
 *   build/samples/flash_attention [--b N] [--h N] [--lse] [--seed S] [--dump DIR] [-v]
 * --lse runs flash_attention_lse, which also writes the base-2 log-sum-exp
 * of every row.  The kernel's variant is fixed when it is compiled; build
 * this file with the same values as C macros as pkc got with -D:
 *   pkc -DSEQ=256 -DHEAD_DIM=128 -DCAUSAL=true -DDT=bf16 -DSM_SCALE=0.125 ...
 *   cc  -DSEQ=256 -DHEAD_DIM=128 -DCAUSAL=1    -DBF16=1  -DSM_SCALE=0.125 ... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flash_attention.h"
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

static uint16_t to_dt(float f) { return BF16 ? su_f32_to_bf16(f) : su_f32_to_f16(f); }
static double from_dt(uint16_t h) { return BF16 ? su_bf16_to_f32(h) : su_f16_to_f32(h); }

/* Removes --lse from argv (su_parse knows only the common options). */
static int take_flag(int *argc, char **argv, const char *flag)
{
	for (int i = 1; i < *argc; i++)
		if (!strcmp(argv[i], flag)) {
			memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof *argv);
			(*argc)--;
			return 1;
		}
	return 0;
}

/* One row of the reference: o[HEAD_DIM] and the base-2 log-sum-exp of row
 * i of head (bi, hi); x(t, d) is element [bi, t, hi, d]. */
static double ref_row(const uint16_t *q, const uint16_t *k, const uint16_t *v, int64_t h, int64_t bi,
                      int64_t hi, int i, double *o, double *s)
{
	int64_t kv = (bi * SEQ * h + hi) * HEAD_DIM;
	return su_attention_row(q + kv + (int64_t)i * h * HEAD_DIM, k + kv, v + kv, h * HEAD_DIM, CAUSAL ? i + 1 : SEQ,
	                        HEAD_DIM, SM_SCALE, BF16, o, s) / log(2.0);
}

int main(int argc, char **argv)
{
	int64_t b = 2, h = 3;
	su_size sizes[] = {{"b", &b}, {"h", &h}};
	int with_lse = take_flag(&argc, argv, "--lse");
	const char *name = with_lse ? "flash_attention_lse" : "flash_attention";
	su_opts o;
	int rc = su_parse(argc, argv, name, sizes, 2, &o);
	if (rc)
		return rc == 1 ? 0 : rc;

	su_rng r = su_rng_new(o.seed);
	size_t count = (size_t)b * SEQ * h * HEAD_DIM, bytes = count * sizeof(uint16_t);
	size_t nrows = (size_t)b * h * SEQ, lbytes = nrows * sizeof(float);
	uint16_t *q = su_xmalloc(bytes), *k = su_xmalloc(bytes), *v = su_xmalloc(bytes), *out = su_xmalloc(bytes);
	float *lse = su_xmalloc(lbytes ? lbytes : 1);
	for (size_t i = 0; i < count; i++) {
		q[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
		k[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
		v[i] = to_dt(su_nonzero(&r, -1.0f, 1.0f));
	}

	su_ctx c;
	if (su_ctx_init(&c, &o))
		return 1;
	uint16_t *dq = su_to_device(&c, q, bytes), *dk = su_to_device(&c, k, bytes);
	uint16_t *dv = su_to_device(&c, v, bytes), *dout = su_alloc_poisoned(&c, bytes);
	float *dlse = with_lse ? su_alloc_poisoned(&c, lbytes) : NULL;
	if (!dq || !dk || !dv || !dout || (with_lse && !dlse))
		return 1;
	su_launch_begin(&c);
	pk_status st = with_lse ? flash_attention_lse(c.stream, dq, dk, dv, dout, dlse, b, h)
	                        : flash_attention(c.stream, dq, dk, dv, dout, b, h);
	if (st == PK_SUCCESS)
		st = su_launch_end(&c);
	if (su_check(st, name) || su_from_device(&c, out, dout, bytes) ||
	    (with_lse && su_from_device(&c, lse, dlse, lbytes)))
		return 1;

	/* The inputs are exact in DT, so the reference sees the same numbers. */
	su_err e = {0}, el = {0};
	double *orow = su_xmalloc(HEAD_DIM * sizeof *orow), *srow = su_xmalloc(SEQ * sizeof *srow);
	for (int64_t bi = 0; bi < b; bi++)
		for (int64_t hi = 0; hi < h; hi++)
			for (int i = 0; i < SEQ; i++) {
				double l2 = ref_row(q, k, v, h, bi, hi, i, orow, srow);
				for (int d = 0; d < HEAD_DIM; d++)
					su_err_add(&e, from_dt(out[((bi * SEQ + i) * h + hi) * HEAD_DIM + d]), orow[d]);
				if (with_lse)
					su_err_add(&el, lse[(bi * h + hi) * SEQ + i], l2);
			}

	su_dump *d = su_dump_begin(&o);
	su_dtype dt = BF16 ? SU_BF16 : SU_F16;
	SU_DUMP(d, "q", dt, q, b, SEQ, h, HEAD_DIM);
	SU_DUMP(d, "k", dt, k, b, SEQ, h, HEAD_DIM);
	SU_DUMP(d, "v", dt, v, b, SEQ, h, HEAD_DIM);
	SU_DUMP(d, "o", dt, out, b, SEQ, h, HEAD_DIM);
	if (with_lse)
		SU_DUMP(d, "lse", SU_F32, lse, b, h, SEQ);
	su_dump_const(d, "DT", BF16 ? "bf16" : "f16");
	su_dump_const(d, "CAUSAL", CAUSAL ? "true" : "false");
	su_dump_const(d, "SEQ", SU_STR(SEQ));
	su_dump_const(d, "HEAD_DIM", SU_STR(HEAD_DIM));
	su_dump_const(d, "SM_SCALE", SU_STR(SM_SCALE));
	rc = su_dump_finish(d);

	const char *fmt = "b=%lld h=%lld SEQ=%d HEAD_DIM=%d causal=%d %s";
	const char *dtn = BF16 ? "bf16" : "f16";
	if (with_lse) {
		/* lse is f32 math on exact inputs: it must agree as closely as an f32 result. */
		double rel = su_err_rel(&el);
		int ok = rel == rel && rel <= SU_TOL_F32 * 10;
		printf("%s: lse max_abs_err=%.3g rel_err=%.3g %s\n", name, el.max_abs, rel, ok ? "OK" : "FAILED");
		rc |= !ok;
	}
	rc |= su_report(&c, &e, SU_TOL_F16, fmt, (long long)b, (long long)h, SEQ, HEAD_DIM, CAUSAL, dtn);
	su_free(&c, dq);
	su_free(&c, dk);
	su_free(&c, dv);
	su_free(&c, dout);
	if (dlse)
		su_free(&c, dlse);
	su_ctx_free(&c);
	free(q);
	free(k);
	free(v);
	free(out);
	free(lse);
	free(orow);
	free(srow);
	return rc;
}
