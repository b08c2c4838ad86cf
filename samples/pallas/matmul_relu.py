"""matmul_relu: the Pallas kernel that samples/matmul_relu.pk mirrors.

The quickstart's matmul with a fused activation (activation=jax.nn.relu),
over a grid of (BM, BN) output blocks; m and n need not be multiples of the
block sizes (partial edge blocks).
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

BM, BN, K = 64, 64, 256
TEST_SIZES = [{"m": 128, "n": 192}, {"m": 100, "n": 70}]


def matmul_kernel(x_ref, y_ref, z_ref, *, activation):
    z_ref[...] = activation(x_ref[...] @ y_ref[...])


def run(inputs, sizes):
    m, n = sizes["m"], sizes["n"]
    bm, bn, k = sizes.get("BM", BM), sizes.get("BN", BN), sizes.get("K", K)
    z = pl.pallas_call(
        functools.partial(matmul_kernel, activation=jax.nn.relu),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(pl.cdiv(m, bm), pl.cdiv(n, bn)),
        in_specs=[
            pl.BlockSpec((bm, k), lambda i, j: (i, 0)),
            pl.BlockSpec((k, bn), lambda i, j: (0, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"]))
    return {"z": np.asarray(z)}


def make_inputs(sizes, rng):
    k = sizes.get("K", K)
    return {"x": rng.standard_normal((sizes["m"], k)).astype(np.float32),
            "y": rng.standard_normal((k, sizes["n"])).astype(np.float32)}


def reference(inputs, sizes):
    z = inputs["x"].astype(np.float64) @ inputs["y"].astype(np.float64)
    return {"z": np.maximum(z, 0.0).astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-4, atol=1e-4)
    print("matmul_relu: OK")
