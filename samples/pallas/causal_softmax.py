"""causal_softmax: the Pallas kernel that samples/causal_softmax.pk mirrors.

The causal softmax of each [N, N] matrix of a batch in base 2 (scores times
log2(e), exp2, log2), masked with jnp.tril and jnp.finfo(jnp.float32).min,
and each row's log-sum-exp as a [N, 1] column; one program per matrix.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import math

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

N = 128
LOG2E = 1.0 / math.log(2.0)
TEST_SIZES = [{"b": 1}, {"b": 3}]


def causal_softmax_kernel(x_ref, o_ref, lse_ref):
    n = x_ref.shape[0]
    keep = jnp.tril(jnp.ones((n, n), dtype=bool))
    s = jnp.where(keep, x_ref[...] * LOG2E, jnp.finfo(jnp.float32).min)
    m = jnp.max(s, axis=1, keepdims=True)
    p = jnp.exp2(s - m)
    l = jnp.sum(p, axis=1, keepdims=True)
    o_ref[...] = p / l
    lse_ref[...] = (m + jnp.log2(l)) / LOG2E


def run(inputs, sizes):
    b, n = sizes["b"], sizes.get("N", N)
    o, lse = pl.pallas_call(
        causal_softmax_kernel,
        out_shape=(jax.ShapeDtypeStruct((b, n, n), jnp.float32), jax.ShapeDtypeStruct((b, n, 1), jnp.float32)),
        grid=(b,),
        in_specs=[pl.BlockSpec((None, n, n), lambda i: (i, 0, 0))],
        out_specs=(pl.BlockSpec((None, n, n), lambda i: (i, 0, 0)), pl.BlockSpec((None, n, 1), lambda i: (i, 0, 0))),
        interpret=True,
    )(jnp.asarray(inputs["x"]))
    return {"o": np.asarray(o), "lse": np.asarray(lse)}


def make_inputs(sizes, rng):
    n = sizes.get("N", N)
    return {"x": rng.uniform(-6, 6, (sizes["b"], n, n)).astype(np.float32)}


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    n = x.shape[1]
    s = np.where(np.tril(np.ones((n, n), dtype=bool)), x, -np.inf)
    m = s.max(axis=2, keepdims=True)
    e = np.exp(s - m)
    l = e.sum(axis=2, keepdims=True)
    return {"o": (e / l).astype(np.float32), "lse": (m + np.log(l)).astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run(inputs, sizes), reference(inputs, sizes)
        for name in ref:
            np.testing.assert_allclose(out[name], ref[name], rtol=2e-5, atol=1e-6)
    print("causal_softmax: OK")
