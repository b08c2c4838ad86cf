/* Driver of scalars.pk: see there. */
#include "exec_util.h"
#include "scalars.h"

static void one(int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t f, int64_t g, uint64_t h, float p,
                float q, float r, double s, bool t)
{
	int64_t oi[8];
	uint64_t ou[2];
	double of[4];
	pk_f16 oh[1];
	pk_bf16 ob[1];
	bool ot[2];
	pk_f16 ph = su_f32_to_f16(p);
	pk_bf16 qb = su_f32_to_bf16(q);
	EX_OK(echo(ex_stream(), a, b, c, d, e, f, g, h, ph, qb, r, s, t, EX_DEV(oi, 8), EX_DEV(ou, 2), EX_DEV(of, 4),
	           EX_DEV(oh, 1), EX_DEV(ob, 1), EX_DEV(ot, 2)));
	EX_EQ(oi[0], a, "i8");
	EX_EQ(oi[1], b, "u8");
	EX_EQ(oi[2], c, "i16");
	EX_EQ(oi[3], d, "u16");
	EX_EQ(oi[4], e, "i32");
	EX_EQ(oi[5], f, "u32");
	EX_EQ(oi[6], g, "i64");
	EX_EQ(oi[7], (int64_t)a * b + (int64_t)c * d, "i8 * u8 + i16 * u16");
	EX_EQU(ou[0], h, "u64");
	EX_EQU(ou[1], h >> 1, "u64 >> 1 (logical)");
	EX_SAME(of[0], su_f16_to_f32(ph), "f16");
	EX_SAME(of[1], su_bf16_to_f32(qb), "bf16");
	EX_SAME(of[2], r, "f32");
	EX_SAME(of[3], s, "f64");
	EX_EQ(oh[0], ph, "f16 bits");
	EX_EQ(ob[0], qb, "bf16 bits");
	EX_EQ(ot[0], t, "bool");
	EX_EQ(ot[1], !t, "not bool");
}

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "scalars");
	one(-5, 250, -30000, 65000, -2000000000, 4000000000u, -9000000000000000000LL, 18000000000000000000ull, -1.5f,
	    3.25f, 1e-20f, -1e300, true);
	one(127, 0, 32767, 0, INT32_MAX, 0, INT64_MAX, 0, 65504.0f, -0.0f, -INFINITY, 0.1, false);
	one(-128, 255, -32768, 65535, INT32_MIN, UINT32_MAX, INT64_MIN, UINT64_MAX, 0x1p-24f, 1e38f, 3.0f, -0.0,
	    true);
	{
		int32_t o[20];
		int64_t n = 20;
		ex_poison(o, sizeof o);
		EX_OK(fill(ex_stream(), EX_DEV(o, n), 9, -7, n)); /* 10 programs */
		for (int i = 0; i < n; i++)
			EX_EQ(o[i], i < 10 ? -7 * (i + 1) : -1, "fill %d", i);
		pk_status st = ex_sync(fill(ex_stream(), EX_DEV(o, n), -1, 3, n));
		EX_EQ(st, PK_ERR_SIZE_CONSTRAINT, "fill with k = -1: %s", pk_last_error());
	}
	return ex_done("scalars");
}
