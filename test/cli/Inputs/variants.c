/* Driver of variants.pk: both variants of axpb, linked into this program. */
#include "exec_util.h"
#include "variants_f32.h"
#include "variants_i32.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "variants");
	su_rng r = su_rng_new(15);
	enum { N = 1000 };
	static float xf[N], of[N];
	static int32_t xi[N], oi[N];
	for (int i = 0; i < N; i++) {
		xf[i] = su_uniform(&r, -4.0f, 4.0f);
		xi[i] = (int32_t)su_int(&r, -1000, 1000);
	}
	EX_OK(axpb_f32(ex_stream(), EX_DEV(xf, N), EX_DEV(of, N), 1.5f, N));
	EX_OK(int_axpb_b128(ex_stream(), EX_DEV(xi, N), EX_DEV(oi, N), -3, N));
	for (int i = 0; i < N; i++) {
		EX_SAME(of[i], xf[i] * 1.5f + 64.0f, "f32 variant, element %d", i);
		EX_EQ(oi[i], xi[i] * -3 + 128, "i32 variant, element %d", i);
	}
	return ex_done("variants");
}
