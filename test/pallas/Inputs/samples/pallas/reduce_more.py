"""reduce_more: the Pallas mirror of reduce_more.pk (test/pallas/reduce_more.test).

jnp.mean and jnp.prod of 16-bit floats compute in f32 and round once;
jnp.mean of int32 is f32 (jax_enable_x64 off); jnp.any, jnp.all, jnp.log2;
jnp.sum and jnp.mean with dtype=.
"""
import ml_dtypes
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

M, K, P = 8, 4096, 64


def reduce_more_kernel(xb_ref, xh_ref, xi_ref, pf_ref, ph_ref, mb_ref, mh_ref, mi_ref, qf_ref, qh_ref, lg_ref, ab_ref,
                       sd_ref, si_ref, md_ref):
    mb_ref[...] = jnp.mean(xb_ref[...], axis=1)
    mh_ref[...] = jnp.mean(xh_ref[...], axis=1)
    mi_ref[...] = jnp.mean(xi_ref[...], axis=1)
    qf_ref[...] = jnp.prod(pf_ref[...], axis=1)
    qh_ref[...] = jnp.prod(ph_ref[...], axis=1)
    lg_ref[...] = jnp.log2(pf_ref[...])
    head = xi_ref[:, 0:8]
    ab_ref[...] = (jnp.any(head > 900, axis=1).astype(jnp.int32)
                   + 2 * jnp.all(head > -900, axis=1).astype(jnp.int32))
    sd_ref[...] = jnp.sum(xh_ref[...], axis=1, dtype=jnp.float32)
    si_ref[...] = jnp.sum(xi_ref[...], axis=1, dtype=jnp.float32)
    md_ref[...] = jnp.mean(xh_ref[...], axis=1, dtype=jnp.float32)


def run(inputs, sizes):
    m, p = sizes.get("M", M), sizes.get("P", P)
    bf, h, f, i = jnp.bfloat16, jnp.float16, jnp.float32, jnp.int32
    shapes = [((m,), bf), ((m,), h), ((m,), f), ((m,), f), ((m,), h), ((m, p), f), ((m,), i), ((m,), f), ((m,), f),
              ((m,), f)]
    outs = pl.pallas_call(
        reduce_more_kernel,
        out_shape=[jax.ShapeDtypeStruct(s, d) for s, d in shapes],
        interpret=True,
    )(*(jnp.asarray(inputs[q]) for q in ("xb", "xh", "xi", "pf", "ph")))
    return {name: np.asarray(o) for name, o in zip(("mb", "mh", "mi", "qf", "qh", "lg", "ab", "sd", "si", "md"), outs)}


def make_inputs(sizes, rng):
    m, k, p = sizes.get("M", M), sizes.get("K", K), sizes.get("P", P)
    row = np.arange(m)[:, None]
    return {"xb": (rng.uniform(100, 101, (m, k)) + 8 * row).astype(ml_dtypes.bfloat16),
            "xh": (rng.uniform(500, 501, (m, k)) + 4 * row).astype(np.float16),
            "xi": rng.integers(-1000, 1001, (m, k)).astype(np.int32),
            "pf": rng.uniform(0.8, 1.25, (m, p)).astype(np.float32),
            "ph": rng.uniform(0.9, 1.1, (m, p)).astype(np.float16)}


def reference(inputs, sizes):
    f = {q: inputs[q].astype(np.float64) for q in inputs}
    head = inputs["xi"][:, 0:8]
    return {"mb": f["xb"].mean(axis=1).astype(ml_dtypes.bfloat16), "mh": f["xh"].mean(axis=1).astype(np.float16),
            "mi": f["xi"].mean(axis=1).astype(np.float32), "qf": f["pf"].prod(axis=1).astype(np.float32),
            "qh": f["ph"].prod(axis=1).astype(np.float16), "lg": np.log2(f["pf"]).astype(np.float32),
            "ab": ((head > 900).any(axis=1) + 2 * (head > -900).all(axis=1)).astype(np.int32),
            "sd": f["xh"].sum(axis=1).astype(np.float32), "si": f["xi"].sum(axis=1).astype(np.float32),
            "md": f["xh"].mean(axis=1).astype(np.float32)}
