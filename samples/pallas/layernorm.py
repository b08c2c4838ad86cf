"""layernorm: the Pallas kernel that samples/layernorm.pk mirrors.

Layer norm over the rows of a [rows, COLS] f32 matrix, one row per program
(row dimension squeezed), weight and bias vectors seen whole by every
program, eps a scalar closed over by the kernel.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

COLS = 256
TEST_SIZES = [{"rows": 5}, {"rows": 32}]


def layernorm_kernel(x_ref, w_ref, b_ref, o_ref, *, eps: float):
    v = x_ref[...]
    cols = v.shape[0]
    mean = jnp.sum(v) / cols
    d = v - mean
    variance = jnp.sum(d * d) / cols
    o_ref[...] = d * jax.lax.rsqrt(variance + eps) * w_ref[...] + b_ref[...]


def run(inputs, sizes):
    rows = sizes["rows"]
    cols = sizes.get("COLS", COLS)
    row_spec = pl.BlockSpec((None, cols), lambda i: (i, 0))
    vec_spec = pl.BlockSpec((cols,), lambda i: (0,))
    o = pl.pallas_call(
        functools.partial(layernorm_kernel, eps=float(inputs["eps"])),
        out_shape=jax.ShapeDtypeStruct((rows, cols), jnp.float32),
        grid=(rows,),
        in_specs=[row_spec, vec_spec, vec_spec],
        out_specs=row_spec,
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["w"]), jnp.asarray(inputs["b"]))
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    cols = sizes.get("COLS", COLS)
    return {"x": (2 + 3 * rng.standard_normal((sizes["rows"], cols))).astype(np.float32),
            "w": rng.standard_normal(cols).astype(np.float32),
            "b": rng.standard_normal(cols).astype(np.float32),
            "eps": np.float32(1e-5)}


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    o = (x - mean) / np.sqrt(var + float(inputs["eps"])) * inputs["w"] + inputs["b"]
    return {"o": o.astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-4, atol=1e-4)
    print("layernorm: OK")
