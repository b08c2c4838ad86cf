"""softmax: the Pallas kernel that samples/softmax.pk mirrors.

Row-wise softmax of a [rows, COLS] f32 matrix, one program per row; the row
dimension is squeezed out of the block (block shape (None, COLS)).
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

COLS = 1024
TEST_SIZES = [{"rows": 7}, {"rows": 64}]


def softmax_kernel(x_ref, o_ref):
    v = x_ref[...]
    e = jnp.exp(v - jnp.max(v, axis=0))
    o_ref[...] = e / jnp.sum(e, axis=0)


def run(inputs, sizes):
    rows = sizes["rows"]
    cols = sizes.get("COLS", COLS)
    spec = pl.BlockSpec((None, cols), lambda i: (i, 0))
    o = pl.pallas_call(
        softmax_kernel,
        out_shape=jax.ShapeDtypeStruct((rows, cols), jnp.float32),
        grid=(rows,),
        in_specs=[spec],
        out_specs=spec,
        interpret=True,
    )(jnp.asarray(inputs["x"]))
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    cols = sizes.get("COLS", COLS)
    return {"x": (3 * rng.standard_normal((sizes["rows"], cols))).astype(np.float32)}


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"o": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-5, atol=1e-7)
    print("softmax: OK")
