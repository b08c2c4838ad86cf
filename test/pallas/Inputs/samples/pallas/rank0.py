"""rank0: the Pallas mirror of rank0.pk (test/pallas/rank0.test): 0-d operands and outputs,
read and written as x_ref[()] and x_ref[...], in Pallas interpret mode."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def rank0_kernel(s_ref, x_ref, o_ref, total_ref, m_ref, e_ref):
    o_ref[...] = x_ref[...] * s_ref[()]
    total_ref[...] = jnp.sum(x_ref[...]) * s_ref[...] + 1.0
    m_ref[()] = jnp.max(x_ref[...])
    e_ref[...] = jnp.argmax(x_ref[3, :]).astype(jnp.int32)


def run(inputs, sizes):
    f32 = jnp.float32
    shapes = [jax.ShapeDtypeStruct((16, 8), f32), jax.ShapeDtypeStruct((), f32), jax.ShapeDtypeStruct((), f32),
              jax.ShapeDtypeStruct((), jnp.int32)]
    outs = pl.pallas_call(rank0_kernel, out_shape=shapes, interpret=True)(
        jnp.asarray(inputs["s"]), jnp.asarray(inputs["x"]))
    return {name: jax.device_get(v) for name, v in zip(("o", "total", "m", "e"), outs)}
