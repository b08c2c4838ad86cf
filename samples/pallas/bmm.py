"""bmm: the Pallas kernel that samples/bmm.pk mirrors.

Batched matmul on a 3-D grid (batch, m blocks, n blocks): what pallas_call
makes of the quickstart's jax.vmap(matmul), written out by hand: the batch
is the leading grid axis and a squeezed (None) block dimension.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

BM, BN, K = 32, 32, 64
TEST_SIZES = [{"batch": 3, "m": 64, "n": 32}, {"batch": 2, "m": 40, "n": 50}]


def bmm_kernel(x_ref, y_ref, z_ref):
    z_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


def run(inputs, sizes):
    batch, m, n = sizes["batch"], sizes["m"], sizes["n"]
    bm, bn, k = sizes.get("BM", BM), sizes.get("BN", BN), sizes.get("K", K)
    z = pl.pallas_call(
        bmm_kernel,
        out_shape=jax.ShapeDtypeStruct((batch, m, n), jnp.float32),
        grid=(batch, pl.cdiv(m, bm), pl.cdiv(n, bn)),
        in_specs=[
            pl.BlockSpec((None, bm, k), lambda b, i, j: (b, i, 0)),
            pl.BlockSpec((None, k, bn), lambda b, i, j: (b, 0, j)),
        ],
        out_specs=pl.BlockSpec((None, bm, bn), lambda b, i, j: (b, i, j)),
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"]))
    return {"z": np.asarray(z)}


def make_inputs(sizes, rng):
    batch, m, n, k = sizes["batch"], sizes["m"], sizes["n"], sizes.get("K", K)
    return {"x": rng.standard_normal((batch, m, k)).astype(np.float32),
            "y": rng.standard_normal((batch, k, n)).astype(np.float32)}


def reference(inputs, sizes):
    z = inputs["x"].astype(np.float64) @ inputs["y"].astype(np.float64)
    return {"z": z.astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-4, atol=1e-4)
    print("bmm: OK")
