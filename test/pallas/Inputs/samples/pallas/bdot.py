"""bdot: the Pallas mirror of bdot.pk (test/pallas/bdot.test): batched dots
(dot_general with batch dimension 0) written as jnp.einsum, as attention
kernels do."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

B, M, K, N = 4, 16, 32, 8


def bdot_kernel(q_ref, k_ref, v_ref, qb_ref, kb_ref, s_ref, o_ref, sb_ref):
    q = q_ref[...]
    sc = jnp.einsum("bmk,bnk->bmn", q, k_ref[...])
    s_ref[...] = sc
    o_ref[...] = sc + jnp.einsum("bmk,bkn->bmn", q, v_ref[...])
    sb_ref[...] = jnp.einsum("bmk,bnk->bmn", qb_ref[...], kb_ref[...], preferred_element_type=jnp.float32)


def run(inputs, sizes):
    b, m, n = sizes.get("B", B), sizes.get("M", M), sizes.get("N", N)
    out = jax.ShapeDtypeStruct((b, m, n), jnp.float32)
    outs = pl.pallas_call(bdot_kernel, out_shape=[out, out, out], interpret=True)(
        *(jnp.asarray(inputs[p]) for p in ("q", "k", "v", "qb", "kb")))
    return {name: jax.device_get(x) for name, x in zip(("s", "o", "sb"), outs)}
