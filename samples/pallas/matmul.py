"""matmul: the Pallas kernel that samples/matmul.pk mirrors.

The quickstart's matmul: a 2x2 grid, each program computes one
(M // 2, N // 2) block of z from a row block of x and a column block of y.
Here x and y are f16 and the product is accumulated and returned in f32.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

M, K, N = 256, 256, 256
TEST_SIZES = [{}]


def matmul_kernel(x_ref, y_ref, z_ref):
    z_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


def run(inputs, sizes):
    m, k, n = sizes.get("M", M), sizes.get("K", K), sizes.get("N", N)
    z = pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(2, 2),
        in_specs=[
            pl.BlockSpec((m // 2, k), lambda i, j: (i, 0)),
            pl.BlockSpec((k, n // 2), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec((m // 2, n // 2), lambda i, j: (i, j)),
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"]))
    return {"z": np.asarray(z)}


def make_inputs(sizes, rng):
    m, k, n = sizes.get("M", M), sizes.get("K", K), sizes.get("N", N)
    return {"x": rng.standard_normal((m, k)).astype(np.float16),
            "y": rng.standard_normal((k, n)).astype(np.float16)}


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    y = inputs["y"].astype(np.float64)
    return {"z": (x @ y).astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-4, atol=1e-3)
    print("matmul: OK")
