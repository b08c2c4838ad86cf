/* Driver of atomics.pk: see there. */
#include "exec_util.h"
#include "atomics.h"

int main(int argc, char **argv)
{
	ex_init(&argc, argv, "atomics");
	su_rng r = su_rng_new(13);
	{
		int64_t n = 20000;
		int64_t *x = malloc(sizeof(int64_t) * (size_t)n), total[1] = {17};
		int32_t *tickets = malloc(sizeof(int32_t) * (size_t)n), count[1] = {0};
		float ftotal[1] = {0.5f};
		pk_f16 htotal[1] = {su_f32_to_f16(3.0f)};
		int64_t want = 17;
		double fwant = 0.5;
		for (int64_t i = 0; i < n; i++) {
			x[i] = su_int(&r, -1000000000, 1000000000);
			want += x[i];
			fwant += (double)(((x[i] % 8) + 8) % 8); /* Python modulo */
		}
		ex_poison(tickets, sizeof(int32_t) * (size_t)n);
		EX_OK(add_one_elem(ex_stream(), EX_DEV(x, n), EX_DEV(total, 1), EX_DEV(count, 1), EX_DEV(tickets, n),
		                   EX_DEV(ftotal, 1), EX_DEV(htotal, 1), n));
		EX_EQ(total[0], want, "the sum of %lld atomic adds", (long long)n);
		EX_EQ(count[0], n, "the count");
		EX_SAME(ftotal[0], fwant, "f32 atomic adds");
		/* 3 + 1 + 1 + ... in f16 climbs to 2048 and stays there (2048 + 1
		 * rounds to even), whatever the order. */
		int64_t ones = n / 2;
		EX_SAME(su_f16_to_f32(htotal[0]), 3 + ones < 2048 ? 3 + ones : 2048, "f16 atomic adds");
		char *seen = calloc((size_t)n, 1);
		for (int64_t i = 0; i < n; i++) {
			int32_t t = tickets[i];
			int ok = t >= 0 && t < n && !seen[t];
			EX_EQ(ok, 1, "ticket %d of program %lld is unique and in range", t, (long long)i);
			if (ok)
				seen[t] = 1;
		}
		free(seen);
		free(x);
		free(tickets);
	}
	{
		int64_t n = 100003;
		int32_t *x = malloc(sizeof(int32_t) * (size_t)n), bins[16];
		float fbins[16];
		int32_t want[16];
		double fwant[16];
		for (int b = 0; b < 16; b++) {
			bins[b] = want[b] = b * 3;
			fbins[b] = 0.25f;
			fwant[b] = 0.25;
		}
		for (int64_t i = 0; i < n; i++) {
			x[i] = (int32_t)su_int(&r, 0, 1000);
			want[x[i] & 15]++;
			if (!(x[i] & 16))
				fwant[x[i] & 15] += 0.5;
		}
		EX_OK(scatter(ex_stream(), EX_DEV(x, n), EX_DEV(bins, 16), EX_DEV(fbins, 16), n));
		for (int b = 0; b < 16; b++) {
			EX_EQ(bins[b], want[b], "scatter bin %d", b);
			EX_SAME(fbins[b], fwant[b], "masked f32 scatter bin %d", b);
		}
		free(x);
	}
	{
		int64_t n = 5000;
		int32_t *x = malloc(sizeof(int32_t) * (size_t)n);
		uint32_t *u = malloc(sizeof(uint32_t) * (size_t)n);
		float *f = malloc(sizeof(float) * (size_t)n);
		int32_t imax[1] = {INT32_MIN}, imin[1] = {INT32_MAX};
		uint32_t umax[1] = {0}, umin[1] = {UINT32_MAX};
		float fmax[1] = {-INFINITY}, fmin[1] = {INFINITY};
		int32_t wimax = INT32_MIN, wimin = INT32_MAX;
		uint32_t wumax = 0, wumin = UINT32_MAX;
		float wfmax = -INFINITY, wfmin = INFINITY;
		for (int64_t i = 0; i < n; i++) {
			x[i] = (int32_t)su_next(&r);
			u[i] = (uint32_t)su_next(&r); /* above 2^31: unsigned order matters */
			f[i] = su_nonzero(&r, -1e6f, 1e6f);
			wimax = x[i] > wimax ? x[i] : wimax;
			wimin = x[i] < wimin ? x[i] : wimin;
			wumax = u[i] > wumax ? u[i] : wumax;
			wumin = u[i] < wumin ? u[i] : wumin;
			wfmax = fmaxf(wfmax, f[i]);
			wfmin = fminf(wfmin, f[i]);
		}
		EX_OK(extremes(ex_stream(), EX_DEV(x, n), EX_DEV(u, n), EX_DEV(f, n), EX_DEV(imax, 1), EX_DEV(imin, 1),
		               EX_DEV(umax, 1), EX_DEV(umin, 1), EX_DEV(fmax, 1), EX_DEV(fmin, 1), n));
		EX_EQ(imax[0], wimax, "atomic_max i32");
		EX_EQ(imin[0], wimin, "atomic_min i32");
		EX_EQU(umax[0], wumax, "atomic_max u32");
		EX_EQU(umin[0], wumin, "atomic_min u32");
		EX_SAME(fmax[0], wfmax, "atomic_max f32");
		EX_SAME(fmin[0], wfmin, "atomic_min f32");
		free(x);
		free(u);
		free(f);
	}
	{
		for (int64_t n = 20; n <= 1000; n += 980) {
			uint32_t ors[1] = {0x100u}, ands[1] = {0xFFFFFFFFu};
			int64_t xors[1] = {5};
			EX_OK(bits(ex_stream(), EX_DEV(ors, 1), EX_DEV(ands, 1), EX_DEV(xors, 1), (int32_t)n));
			uint32_t wor = 0x100u, wand = 0xFFFFFFFFu;
			uint64_t wxor = 5;
			for (int64_t i = 0; i < n; i++) {
				wor |= 1u << (i % 32);
				wand &= ~(1u << (i % 32));
				wxor ^= 1ull << (i % 64);
			}
			EX_EQU(ors[0], wor, "atomic_or n=%lld", (long long)n);
			EX_EQU(ands[0], wand, "atomic_and n=%lld", (long long)n);
			EX_EQU((uint64_t)xors[0], wxor, "atomic_xor n=%lld", (long long)n);
		}
	}
	{
		int64_t n = 3000;
		int32_t slot[1] = {-5}, lock[1] = {0}, wins[1] = {0};
		int32_t *got = malloc(sizeof(int32_t) * (size_t)n), *olds = malloc(sizeof(int32_t) * (size_t)n);
		ex_poison(got, sizeof(int32_t) * (size_t)n);
		ex_poison(olds, sizeof(int32_t) * (size_t)n);
		EX_OK(swaps(ex_stream(), EX_DEV(slot, 1), EX_DEV(got, n), EX_DEV(lock, 1), EX_DEV(wins, 1),
		            EX_DEV(olds, n), n));
		/* {got[*], slot} is {-5, 0, ..., n-1}, each once */
		char *seen = calloc((size_t)n + 1, 1);
		for (int64_t i = 0; i <= n; i++) {
			int32_t v = i < n ? got[i] : slot[0];
			int ok = v >= -5 && v < n && (v == -5 || v >= 0) && !seen[v < 0 ? n : v];
			EX_EQ(ok, 1, "xchg value %d seen once", v);
			if (ok)
				seen[v < 0 ? n : v] = 1;
		}
		EX_EQ(wins[0], 1, "exactly one cas wins");
		int winner = lock[0] - 1;
		EX_EQ(winner >= 0 && winner < n, 1, "the lock holds a program id + 1");
		for (int64_t i = 0; i < n; i++)
			EX_EQ(olds[i], i == winner ? 0 : lock[0], "cas old value of program %lld", (long long)i);
		free(seen);
		free(got);
		free(olds);
	}
	return ex_done("atomics");
}
