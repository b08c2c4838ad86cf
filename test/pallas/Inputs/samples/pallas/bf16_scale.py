"""bf16_scale: the Pallas mirror of bf16_scale.pk (compare-selftest.test)."""
import functools

import ml_dtypes
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

BLOCK = 128


def bf16_scale_kernel(x_ref, o_ref, *, s: float):
    o_ref[...] = (x_ref[...].astype(jnp.float32) * s).astype(jnp.bfloat16)


def run(inputs, sizes):
    n = sizes["n"]
    block = sizes.get("BLOCK", BLOCK)
    spec = pl.BlockSpec((block,), lambda i: (i,))
    o = pl.pallas_call(
        functools.partial(bf16_scale_kernel, s=float(inputs["s"])),
        out_shape=jax.ShapeDtypeStruct((n,), jnp.bfloat16),
        grid=(pl.cdiv(n, block),),
        in_specs=[spec],
        out_specs=spec,
        interpret=True,
    )(jnp.asarray(inputs["x"]))
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    return {"x": rng.standard_normal(sizes["n"]).astype(ml_dtypes.bfloat16),
            "s": np.float32(1.5)}


def reference(inputs, sizes):
    o = inputs["x"].astype(np.float32) * inputs["s"]
    return {"o": o.astype(ml_dtypes.bfloat16)}
