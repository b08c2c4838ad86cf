"""gmm: the Pallas kernel that samples/gmm.pk mirrors.

Grouped matmul as megablox does it: the rows of lhs are tokens sorted by
group, and row block i is multiplied by rhs[group_of[i]].  group_of is the
scalar-prefetch operand of a PrefetchScalarGridSpec: the index maps receive
it after the grid indices, and the kernel receives it first.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BM, BN, K, N = 32, 128, 64, 256
TEST_SIZES = [{"m": 200, "g": 4, "nb": 7}, {"m": 64, "g": 3, "nb": 2}]


def gmm_kernel(group_of_ref, lhs_ref, rhs_ref, o_ref):
    o_ref[...] = jnp.dot(lhs_ref[...], rhs_ref[...], preferred_element_type=jnp.float32)


def run(inputs, sizes):
    m = sizes["m"]
    bm, bn, k, n = sizes.get("BM", BM), sizes.get("BN", BN), sizes.get("K", K), sizes.get("N", N)
    nb = pl.cdiv(m, bm)
    o = pl.pallas_call(
        gmm_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(nb, n // bn),
            in_specs=[
                pl.BlockSpec((bm, k), lambda i, j, group_of: (i, 0)),
                pl.BlockSpec((None, k, bn), lambda i, j, group_of: (group_of[i], 0, j)),
            ],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, group_of: (i, j)),
        ),
        interpret=True,
    )(jnp.asarray(inputs["group_of"]), jnp.asarray(inputs["lhs"]), jnp.asarray(inputs["rhs"]))
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    m, g = sizes["m"], sizes["g"]
    k, n = sizes.get("K", K), sizes.get("N", N)
    nb = -(-m // sizes.get("BM", BM))
    return {"group_of": np.sort(rng.integers(0, g, nb)).astype(np.int32),
            "lhs": rng.standard_normal((m, k)).astype(np.float32),
            "rhs": rng.standard_normal((g, k, n)).astype(np.float32)}


def reference(inputs, sizes):
    bm = sizes.get("BM", BM)
    rows = np.arange(sizes["m"]) // bm
    w = inputs["rhs"].astype(np.float64)[inputs["group_of"][rows]]
    o = np.einsum("mk,mkn->mn", inputs["lhs"].astype(np.float64), w)
    return {"o": o.astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-4, atol=1e-4)
    print("gmm: OK")
