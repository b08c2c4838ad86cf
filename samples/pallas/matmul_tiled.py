"""matmul_tiled: the Pallas kernel that samples/matmul_tiled.pk mirrors.

Blocked matmul with an in-kernel loop over K: each program owns a (BM, BN)
block of z, gets full-K row/column blocks of x and y, and accumulates f32
products of (BM, BK) x (BK, BN) slices in a lax.fori_loop carry.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

BM, BN, BK, K = 32, 32, 32, 256
TEST_SIZES = [{"m": 64, "n": 96}, {"m": 50, "n": 33}]


def matmul_tiled_kernel(x_ref, y_ref, z_ref, *, bk: int):
    bm, bn = z_ref.shape
    k = x_ref.shape[1]

    def body(kk, acc):
        x = x_ref[:, pl.ds(kk * bk, bk)]
        y = y_ref[pl.ds(kk * bk, bk), :]
        return acc + jnp.dot(x, y, preferred_element_type=jnp.float32)

    acc = jax.lax.fori_loop(0, pl.cdiv(k, bk), body, jnp.zeros((bm, bn), jnp.float32))
    z_ref[...] = acc


def run(inputs, sizes):
    m, n = sizes["m"], sizes["n"]
    bm, bn, bk, k = (sizes.get(c, d) for c, d in (("BM", BM), ("BN", BN), ("BK", BK), ("K", K)))
    assert k % bk == 0  # the .pk kernel's `requires K % BK == 0`
    z = pl.pallas_call(
        functools.partial(matmul_tiled_kernel, bk=bk),
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
    return {"x": rng.standard_normal((sizes["m"], k)).astype(np.float16),
            "y": rng.standard_normal((k, sizes["n"])).astype(np.float16)}


def reference(inputs, sizes):
    z = inputs["x"].astype(np.float64) @ inputs["y"].astype(np.float64)
    return {"z": z.astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-4, atol=1e-3)
    print("matmul_tiled: OK")
