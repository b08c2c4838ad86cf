"""rmsnorm: the Pallas kernel that samples/rmsnorm.pk mirrors.

RMS norm over the rows of a [rows, COLS] f16 matrix, BR rows per program,
computed in f32 and rounded to f16; rows need not be a multiple of BR.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

COLS, BR = 512, 8
TEST_SIZES = [{"rows": 16}, {"rows": 13}]


def rmsnorm_kernel(x_ref, w_ref, o_ref, *, eps: float):
    v = x_ref[...].astype(jnp.float32)
    ms = jnp.sum(v * v, axis=1, keepdims=True) / v.shape[1]
    y = v * jax.lax.rsqrt(ms + eps) * w_ref[...].astype(jnp.float32)
    o_ref[...] = y.astype(jnp.float16)


def run(inputs, sizes):
    rows = sizes["rows"]
    cols, br = sizes.get("COLS", COLS), sizes.get("BR", BR)
    row_spec = pl.BlockSpec((br, cols), lambda i: (i, 0))
    o = pl.pallas_call(
        functools.partial(rmsnorm_kernel, eps=float(inputs["eps"])),
        out_shape=jax.ShapeDtypeStruct((rows, cols), jnp.float16),
        grid=(pl.cdiv(rows, br),),
        in_specs=[row_spec, pl.BlockSpec((cols,), lambda i: (0,))],
        out_specs=row_spec,
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["w"]))
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    cols = sizes.get("COLS", COLS)
    return {"x": rng.standard_normal((sizes["rows"], cols)).astype(np.float16),
            "w": (1 + 0.1 * rng.standard_normal(cols)).astype(np.float16),
            "eps": np.float32(1e-6)}


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    ms = (x * x).mean(axis=1, keepdims=True)
    o = x / np.sqrt(ms + float(inputs["eps"])) * inputs["w"].astype(np.float64)
    return {"o": o.astype(np.float16)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name].astype(np.float32), ref[name].astype(np.float32),
                                       rtol=2e-3, atol=2e-3)
    print("rmsnorm: OK")
