"""accum: the Pallas mirror of accum.pk (test/pallas/accum.test).

jnp.dot of 16-bit floats (preferred_element_type None or bf16) and jnp.sum
accumulate in f32 and round once.  jnp.cumsum does not: on the CPU it is
XLA's reduce-window scan in the 16-bit dtype, whose prefix sums carry more
rounding than pkc's f32 ones (lang-spec §8.1); on positive inputs the two
agree well within the 1e-2 tolerance, a sequential 16-bit sum does not.
"""
import ml_dtypes
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

M, K, N = 8, 4096, 16


def accum_kernel(xb_ref, yb_ref, xh_ref, yh_ref, zb_ref, zh_ref, za_ref, sb_ref, sh_ref, cb_ref, ch_ref):
    b, h = xb_ref[...], xh_ref[...]
    zb_ref[...] = b @ yb_ref[...]
    zh_ref[...] = jnp.dot(h, yh_ref[...])
    za_ref[...] = jnp.dot(b, yb_ref[...], preferred_element_type=jnp.bfloat16)
    sb_ref[...] = jnp.sum(b, axis=1)
    sh_ref[...] = jnp.sum(h, axis=1)
    cb_ref[...] = jnp.cumsum(b, axis=1)
    ch_ref[...] = jnp.cumsum(h, axis=1)


def run(inputs, sizes):
    m, k, n = sizes.get("M", M), sizes.get("K", K), sizes.get("N", N)
    bf, h = jnp.bfloat16, jnp.float16
    shapes = [((m, n), bf), ((m, n), h), ((m, n), bf), ((m,), bf), ((m,), h), ((m, k), bf), ((m, k), h)]
    outs = pl.pallas_call(
        accum_kernel,
        out_shape=[jax.ShapeDtypeStruct(s, d) for s, d in shapes],
        interpret=True,
    )(*(jnp.asarray(inputs[p]) for p in ("xb", "yb", "xh", "yh")))
    return {name: np.asarray(o) for name, o in zip(("zb", "zh", "za", "sb", "sh", "cb", "ch"), outs)}


def make_inputs(sizes, rng):
    m, k, n = sizes.get("M", M), sizes.get("K", K), sizes.get("N", N)
    u = lambda shape, dt: rng.uniform(0.5, 1.0, shape).astype(dt)
    return {"xb": u((m, k), ml_dtypes.bfloat16), "yb": u((k, n), ml_dtypes.bfloat16),
            "xh": u((m, k), np.float16), "yh": u((k, n), np.float16)}


def reference(inputs, sizes):
    """Sums in f32, rounded once."""
    f = {p: inputs[p].astype(np.float32) for p in ("xb", "yb", "xh", "yh")}
    bf = ml_dtypes.bfloat16
    return {"zb": (f["xb"] @ f["yb"]).astype(bf), "zh": (f["xh"] @ f["yh"]).astype(np.float16),
            "za": (f["xb"] @ f["yb"]).astype(bf), "sb": f["xb"].sum(axis=1).astype(bf),
            "sh": f["xh"].sum(axis=1).astype(np.float16), "cb": np.cumsum(f["xb"], axis=1).astype(bf),
            "ch": np.cumsum(f["xh"], axis=1).astype(np.float16)}
