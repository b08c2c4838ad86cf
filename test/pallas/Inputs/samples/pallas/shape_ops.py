"""shape_ops: the Pallas mirror of shape_ops.pk (test/pallas/shape_ops.test).

Value indexing (static points and slices, a data-dependent point that JAX
clamps after counting a negative one from the end), jnp.concatenate,
jnp.stack, jnp.tile, jnp.repeat, jnp.expand_dims, jnp.squeeze, and Ref views
x_ref.at[...].  The scalar
k is closed over (a static index here, a run-time one in pkc).
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

M, N, H = 8, 256, 128


def shape_ops_kernel(x_ref, y_ref, cat_ref, til_ref, rep_ref, pt_ref, row_ref, st_ref, sq_ref, *, k, m, h):
    v = x_ref[...]
    a = v[:, :h]
    b = v[:, h:]
    cat_ref[...] = jnp.concatenate([b, a], axis=1)
    til_ref[...] = jnp.tile(v[0:1, 0:h], (m, 2))
    rep_ref[...] = jnp.repeat(v[:, 0:h], 2, axis=1)
    pt_ref[...] = x_ref.at[:, 0:h][...] * v[0, 0] + b[m - 1, -1] + v[k, 3] + x_ref.at[1, h:][...]
    w = y_ref[...]
    j = w[0, 0] & 7
    row_ref[...] = jnp.stack([v[j], v[j - 12]])
    st_ref[...] = jnp.stack([w[:, 0:h], w[:, h:]], axis=0)
    sq_ref[...] = jnp.squeeze(jnp.expand_dims(a, 0), axis=0) - v[1:2, 2:h + 2]


def run(inputs, sizes):
    m, n, h = sizes.get("M", M), sizes.get("N", N), sizes.get("H", H)
    f, i = jnp.float32, jnp.int32
    shapes = [((m, n), f), ((m, n), f), ((m, n), f), ((m, h), f), ((2, n), f), ((2, m, h), i), ((m, h), f)]
    kernel = functools.partial(shape_ops_kernel, k=int(inputs["k"]), m=m, h=h)
    outs = pl.pallas_call(
        kernel,
        out_shape=[jax.ShapeDtypeStruct(s, d) for s, d in shapes],
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["y"]))
    return {name: np.asarray(o) for name, o in zip(("cat", "til", "rep", "pt", "row", "st", "sq"), outs)}


def make_inputs(sizes, rng):
    m, n = sizes.get("M", M), sizes.get("N", N)
    return {"x": rng.uniform(-2, 2, (m, n)).astype(np.float32),
            "y": rng.integers(-1000, 1001, (m, n)).astype(np.int32), "k": np.int32(5)}
