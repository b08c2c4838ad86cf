"""matmul_kgrid: the Pallas kernel that samples/matmul_kgrid.pk mirrors.

The blocked matmul of the Pallas TPU matmul guide: grid (m / BM, n / BN,
k / BK) whose last axis is the reduction, marked "arbitrary" (sequential);
the z block (i, j) stays resident along it, is zeroed by pl.when at kk == 0
and accumulates x block (i, kk) @ y block (kk, j).
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BM, BN, BK = 32, 32, 32
TEST_SIZES = [{"m": 64, "k": 96, "n": 64}, {"m": 45, "k": 64, "n": 70}]


def matmul_kgrid_kernel(x_ref, y_ref, z_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        z_ref[...] = jnp.zeros_like(z_ref)

    z_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)


def run(inputs, sizes):
    m, k, n = sizes["m"], sizes["k"], sizes["n"]
    bm, bn, bk = sizes.get("BM", BM), sizes.get("BN", BN), sizes.get("BK", BK)
    if k % bk != 0:  # the .pk kernel's `requires k % BK == 0`
        raise ValueError("k % BK != 0")
    z = pl.pallas_call(
        matmul_kgrid_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid=(pl.cdiv(m, bm), pl.cdiv(n, bn), pl.cdiv(k, bk)),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
            pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"]))
    return {"z": np.asarray(z)}


def make_inputs(sizes, rng):
    m, k, n = sizes["m"], sizes["k"], sizes["n"]
    return {"x": rng.standard_normal((m, k)).astype(np.float32),
            "y": rng.standard_normal((k, n)).astype(np.float32)}


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
    print("matmul_kgrid: OK")
