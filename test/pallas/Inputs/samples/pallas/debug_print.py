"""debug_print: the Pallas mirror of debug_print.pk (test/pallas/debug_print.test): pl.debug_print
of f32, i32, bool, f16 and bf16 blocks, of a summarised 64x128 block, of an operand's row and of
values in scientific form, in Pallas interpret mode.  Run as a script it prints what the kernel
prints (in the order jax.debug.print delivers it, which is not the program's)."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402


def debug_print_kernel(x_ref, o_ref):
    r = lax.broadcasted_iota(jnp.int32, (4, 5), 0)
    c = lax.broadcasted_iota(jnp.int32, (4, 5), 1)
    v = (r * 5 + c).astype(jnp.float32) * 0.14285714 - 1.0
    pl.debug_print("@v {}", v)
    pl.debug_print("@i {}", r * 37 - c * 1000)
    pl.debug_print("@b {}", (r * 5 + c) % 3 == 0)
    pl.debug_print("@h {}", v.astype(jnp.float16))
    pl.debug_print("@bf {}", v.astype(jnp.bfloat16))
    big = (lax.broadcasted_iota(jnp.int32, (64, 128), 0) * 128
           + lax.broadcasted_iota(jnp.int32, (64, 128), 1)).astype(jnp.float32) * 0.5
    pl.debug_print("@big {}", big)
    pl.debug_print("@row {}", x_ref[0, :])
    pl.debug_print("@sci {}", v * 1e-6)
    o_ref[...] = x_ref[...]


if __name__ == "__main__":
    x = (np.arange(4 * 40, dtype=np.float32) / np.float32(3)).reshape(4, 40)  # as Inputs/debug_print.c fills it
    out = pl.pallas_call(debug_print_kernel, out_shape=jax.ShapeDtypeStruct((4, 40), jnp.float32),
                         interpret=True)(x)
    jax.block_until_ready(out)
    jax.effects_barrier()
