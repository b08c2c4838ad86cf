/* debug_format: for test/pallas/debug_format.test, prints values through
 * the runtime's pk_debug_print ("{}" each), read from stdin one per line:
 *   dtype rank extent... byte...
 * (dtype a pk_debug_dtype, the bytes those of the elements in the form
 * pk_debug_print takes); "@@" after each. */
#include "pk_runtime.h"

#include <stdio.h>
#include <stdlib.h>

/* Bytes of one element as pk_debug_print takes it. */
static size_t elem_bytes(int dt)
{
	switch (dt) {
	case PK_DEBUG_BOOL: case PK_DEBUG_I8: case PK_DEBUG_U8: return 1;
	case PK_DEBUG_I16: case PK_DEBUG_U16: return 2;
	case PK_DEBUG_I64: case PK_DEBUG_U64: case PK_DEBUG_F64: return 8;
	default: return 4; /* i32, u32, f16 and bf16 (as float), f32 */
	}
}

int main(void)
{
	int dt, rank;
	while (scanf("%d %d", &dt, &rank) == 2 && rank >= 0 && rank <= 8) {
		int64_t shape[8];
		size_t n = 1;
		for (int d = 0; d < rank; d++) {
			long long x;
			if (scanf("%lld", &x) != 1 || x < 0 || x > 1 << 20)
				return 2;
			shape[d] = x;
			n *= (size_t)x;
		}
		size_t bytes = n * elem_bytes(dt);
		unsigned char *buf = malloc(bytes + 1);
		if (!buf)
			return 2;
		for (size_t i = 0; i < bytes; i++) {
			unsigned v;
			if (scanf("%u", &v) != 1)
				return 2;
			buf[i] = (unsigned char)v;
		}
		pk_debug_value v = {dt, rank, shape, buf};
		pk_debug_print("{}", 1, &v);
		printf("@@\n");
		free(buf);
	}
	return 0;
}
