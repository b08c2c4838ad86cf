/* einsum: runs Inputs/samples/einsum.pk on the host and dumps its inputs
 * and outputs for compare.py (test/pallas/einsum.test), which checks them
 * against the Pallas mirror.
 *   einsum [--seed S] --dump DIR */
#include "einsum.h"
#include "sample_util.h"

enum { M = 8, K = 16, N = 8, B = 2, H = 2, Q = 8, S = 8, D = 16 };

static float a[M * K], b[K * N], bt[N * K], at[K * M], v[K], q[B * H * Q * D], k[B * H * S * D], qt[B * Q * H * D],
	kt[B * S * H * D], vv[B * S * D];
static uint16_t qb[B * Q * D], kb[B * S * D];
static float o1[M * N], o2[M * N], o3[M * N], o4[N * M], o5[M], o6[B * H * Q * S], o7[B * H * Q * S],
	o8[B * H * Q * S], o9[B * Q * S], o10[B * Q * D], p1[M], p2[B * H * Q], p3[Q * H * D], p4[B * H * D], p5[K * K],
	p6[M * M], g1[B * S * N], g2[D * D], g3[K * K], g4[B * H * Q * N], g5[M * 2 * N], g6[2 * M * N];

/* The f32 parameters in the kernel's order: inputs (random) before outputs. */
static const struct {
	const char *name;
	float *data;
	bool in;
	int ndim;
	int64_t dims[4];
} f32s[] = {
	{"a", a, true, 2, {M, K}}, {"b", b, true, 2, {K, N}}, {"bt", bt, true, 2, {N, K}}, {"at", at, true, 2, {K, M}},
	{"v", v, true, 1, {K}}, {"q", q, true, 4, {B, H, Q, D}}, {"k", k, true, 4, {B, H, S, D}},
	{"qt", qt, true, 4, {B, Q, H, D}}, {"kt", kt, true, 4, {B, S, H, D}}, {"vv", vv, true, 3, {B, S, D}},
	{"o1", o1, false, 2, {M, N}}, {"o2", o2, false, 2, {M, N}}, {"o3", o3, false, 2, {M, N}},
	{"o4", o4, false, 2, {N, M}}, {"o5", o5, false, 1, {M}}, {"o6", o6, false, 4, {B, H, Q, S}},
	{"o7", o7, false, 4, {B, H, Q, S}}, {"o8", o8, false, 4, {B, H, Q, S}}, {"o9", o9, false, 3, {B, Q, S}},
	{"o10", o10, false, 3, {B, Q, D}}, {"p1", p1, false, 1, {M}}, {"p2", p2, false, 3, {B, H, Q}},
	{"p3", p3, false, 3, {Q, H, D}}, {"p4", p4, false, 3, {B, H, D}}, {"p5", p5, false, 2, {K, K}},
	{"p6", p6, false, 2, {M, M}}, {"g1", g1, false, 3, {B, S, N}}, {"g2", g2, false, 2, {D, D}},
	{"g3", g3, false, 2, {K, K}}, {"g4", g4, false, 4, {B, H, Q, N}}, {"g5", g5, false, 3, {M, 2, N}},
	{"g6", g6, false, 3, {2, M, N}},
};
enum { NF32 = sizeof f32s / sizeof f32s[0] };

static int64_t count(int i)
{
	int64_t n = 1;
	for (int d = 0; d < f32s[i].ndim; d++)
		n *= f32s[i].dims[d];
	return n;
}

int main(int argc, char **argv)
{
	su_opts o;
	int rc = su_parse(argc, argv, "einsum", NULL, 0, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	su_rng r = su_rng_new(o.seed);
	for (int i = 0; i < NF32; i++)
		for (int64_t j = 0; f32s[i].in && j < count(i); j++)
			f32s[i].data[j] = su_uniform(&r, -1.0f, 1.0f);
	for (int i = 0; i < B * Q * D; i++) {
		qb[i] = su_f32_to_bf16(su_uniform(&r, -1.0f, 1.0f));
		kb[i] = su_f32_to_bf16(su_uniform(&r, -1.0f, 1.0f)); /* S == Q */
	}
	if (su_check(einsum_forms(NULL, a, b, bt, at, v, q, k, qt, kt, qb, kb, vv, o1, o2, o3, o4, o5, o6, o7, o8, o9,
	                          o10, p1, p2, p3, p4, p5, p6, g1, g2, g3, g4, g5, g6),
	             "einsum_forms"))
		return 1;
	su_dump *d = su_dump_begin(&o);
	for (int i = 0; i < NF32; i++)
		su_dump_array(d, f32s[i].name, SU_F32, f32s[i].data, f32s[i].ndim, f32s[i].dims);
	SU_DUMP(d, "qb", SU_BF16, qb, B, Q, D);
	SU_DUMP(d, "kb", SU_BF16, kb, B, S, D);
	return su_dump_finish(d);
}
