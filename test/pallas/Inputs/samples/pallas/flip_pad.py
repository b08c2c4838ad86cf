"""flip_pad: the Pallas mirror of flip_pad.pk (test/pallas/flip_pad.test): jnp.flip, jnp.pad (mode
"constant"), jnp.diagonal, in Pallas interpret mode."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

OUTS = {"f": ((8, 16), jnp.float32), "fa": ((8, 16), jnp.float32), "p": ((11, 20), jnp.float32),
        "d": ((8,), jnp.float32), "db": ((4, 7), jnp.float32)}


def flip_pad_kernel(x_ref, b_ref, f_ref, fa_ref, p_ref, d_ref, db_ref):
    v = x_ref[...]
    f_ref[...] = jnp.flip(v, 1) + jnp.flip(v, axis=0)
    fa_ref[...] = jnp.flip(v, axis=None)
    p_ref[...] = jnp.pad(v, ((1, 2), (4, 0)), constant_values=-2.0)
    d_ref[...] = jnp.diagonal(v, 3)
    db_ref[...] = jnp.diagonal(b_ref[...], -1, axis1=1, axis2=2)


def run(inputs, sizes):
    outs = pl.pallas_call(flip_pad_kernel, out_shape=[jax.ShapeDtypeStruct(*o) for o in OUTS.values()],
                          interpret=True)(*(jnp.asarray(inputs[p]) for p in ("x", "b")))
    return {name: jax.device_get(o) for name, o in zip(OUTS, outs)}
