"""consts: the Pallas mirror of consts.pk (test/pallas/consts.test): pl.next_power_of_2 and
math.sqrt/jnp.pi in static values, -jnp.inf and jnp.iinfo(jnp.int32).max as masked-reduction
identities, jnp.triu/jnp.tril, jnp.zeros_like and x_ref.shape, lax.div/lax.rem of negative
integers, in Pallas interpret mode."""
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl

M, N = 8, 100


def consts_kernel(x_ref, t_ref, o_ref, m_ref, c_ref, e_ref):
    scale = math.sqrt(2.0) * jnp.pi / 4.0
    v = x_ref[...]
    o_ref[...] = jnp.triu(v, 1) * scale + jnp.tril(v, -2) + jnp.zeros_like(v) + x_ref.shape[1] * 0.001
    keep = jnp.triu(jnp.ones(v.shape, jnp.bool_))
    m_ref[...] = jnp.max(jnp.where(keep, v, -jnp.inf), axis=1)
    w = t_ref[...]
    c_ref[...] = lax.div(w, jnp.int32(7)) * 16 + lax.rem(w, jnp.int32(7))
    e_ref[...] = jnp.min(jnp.where(keep, w, jnp.iinfo(jnp.int32).max), axis=1)


def run(inputs, sizes):
    m = sizes.get("M", M)
    b = pl.next_power_of_2(sizes.get("N", N))
    f, i = jnp.float32, jnp.int32
    shapes = [((m, b), f), ((m,), f), ((m, b), i), ((m,), i)]
    outs = pl.pallas_call(
        consts_kernel,
        out_shape=[jax.ShapeDtypeStruct(s, d) for s, d in shapes],
        interpret=True,
    )(jnp.asarray(inputs["x"]), jnp.asarray(inputs["t"]))
    return {name: np.asarray(o) for name, o in zip(("o", "m", "c", "e"), outs)}
