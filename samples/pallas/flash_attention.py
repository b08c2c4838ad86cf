"""flash_attention: the Pallas kernel that samples/flash_attention.pk mirrors.

The forward kernel of jax.experimental.pallas.ops.gpu.attention (mha with
return_residuals for the lse variant), written here for q, k, v of shape
[batch, seq, heads, head_dim]: grid (seq // BQ, batch, heads), q and o in
blocks of BQ rows, k and v whole along seq, a fori_loop over BK-row blocks
of k and v with the online softmax in base 2; causal attention stops the
loop at cdiv(start_q * BQ + BQ, BK) and masks with span_q >= span_k.
Consts (sizes may override them, as pkc -D does): DT, HEAD_DIM, SEQ,
CAUSAL, SM_SCALE, BQ, BK.  run() is the kernel `flash_attention`,
run_flash_attention_lse() the kernel that also returns lse [b, h, seq].
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools
import math

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

DEFAULTS = {"DT": "f16", "HEAD_DIM": 64, "SEQ": 512, "CAUSAL": False, "SM_SCALE": 1.0,
            "BQ": 128, "BK": 64}
TEST_SIZES = [{"b": 1, "h": 2, "SEQ": 256},
              {"b": 1, "h": 1, "SEQ": 256, "CAUSAL": True, "DT": "bf16", "HEAD_DIM": 128}]
MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)


def config(sizes):
    c = dict(DEFAULTS)
    c.update({k: sizes[k] for k in DEFAULTS if k in sizes})
    return c


def jdtype(name):
    return {"f16": jnp.float16, "bf16": jnp.bfloat16}[name]


def attention_kernel(q_ref, k_ref, v_ref, o_ref, *lse_ref, seq, bq, bk, causal, sm_scale):
    start_q = pl.program_id(0)
    q = q_ref[...]
    m_i = jnp.zeros(bq, jnp.float32) - float("inf")
    l_i = jnp.zeros(bq, jnp.float32)
    o = jnp.zeros(q.shape, jnp.float32)

    def body(start_k, carry):
        o_prev, m_prev, l_prev = carry
        k = k_ref[pl.ds(start_k * bk, bk), :]
        qk = jnp.dot(q, k.T, preferred_element_type=jnp.float32) * (math.log2(math.e) * sm_scale)
        if causal:
            span_q = start_q * bq + jnp.arange(bq)
            span_k = start_k * bk + jnp.arange(bk)
            qk = jnp.where(span_q[:, None] >= span_k[None, :], qk, MASK_VALUE)
        m_next = jnp.maximum(m_prev, jnp.max(qk, axis=-1))
        correction = jnp.exp2(m_prev - m_next)
        s = jnp.exp2(qk - m_next[:, None])
        l_next = correction * l_prev + s.sum(axis=-1)
        v = v_ref[pl.ds(start_k * bk, bk), :]
        o_next = correction[:, None] * o_prev + jnp.dot(s.astype(v.dtype), v,
                                                        preferred_element_type=jnp.float32)
        return o_next, m_next, l_next

    upper = lax.div(bq * (start_q + 1) + bk - 1, bk) if causal else pl.cdiv(seq, bk)
    o, m_i, l_i = lax.fori_loop(0, upper, body, (o, m_i, l_i))
    o_ref[...] = (o / l_i[:, None]).astype(o_ref.dtype)
    if lse_ref:
        lse_ref[0][...] = m_i + jnp.log2(l_i)


def _call(inputs, sizes, with_lse):
    c = config(sizes)
    seq, d, bq, bk = c["SEQ"], c["HEAD_DIM"], c["BQ"], c["BK"]
    q, k, v = (jnp.asarray(inputs[n]) for n in ("q", "k", "v"))
    b, _, h, _ = q.shape
    kernel = functools.partial(attention_kernel, seq=seq, bq=bq, bk=bk, causal=bool(c["CAUSAL"]),
                               sm_scale=float(c["SM_SCALE"]))
    blk_q = pl.BlockSpec((None, bq, None, d), lambda i, j, hh: (j, i, hh, 0))
    blk_kv = pl.BlockSpec((None, seq, None, d), lambda i, j, hh: (j, 0, hh, 0))
    out_shape = [jax.ShapeDtypeStruct(q.shape, q.dtype)]
    out_specs = [blk_q]
    if with_lse:
        out_shape.append(jax.ShapeDtypeStruct((b, h, seq), jnp.float32))
        out_specs.append(pl.BlockSpec((None, None, bq), lambda i, j, hh: (j, hh, i)))
    outs = pl.pallas_call(
        kernel,
        grid=(pl.cdiv(seq, bq), b, h),
        in_specs=[blk_q, blk_kv, blk_kv],
        out_specs=out_specs,
        out_shape=out_shape,
        interpret=True,
    )(q, k, v)
    res = {"o": np.asarray(outs[0])}
    if with_lse:
        res["lse"] = np.asarray(outs[1])
    return res


def run(inputs, sizes):
    return _call(inputs, sizes, False)


def run_flash_attention_lse(inputs, sizes):
    return _call(inputs, sizes, True)


def make_inputs(sizes, rng):
    c = config(sizes)
    shape = (sizes["b"], c["SEQ"], sizes["h"], c["HEAD_DIM"])
    return {n: np.asarray(jnp.asarray(rng.uniform(-1, 1, shape), jdtype(c["DT"])))
            for n in ("q", "k", "v")}


def reference(inputs, sizes):
    c = config(sizes)
    q, k, v = (inputs[n].astype(np.float64) for n in ("q", "k", "v"))
    s = np.einsum("bihd,bjhd->bhij", q, k) * c["SM_SCALE"]
    if c["CAUSAL"]:
        seq = c["SEQ"]
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    p = np.exp(s - mx)
    lsum = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhij,bjhd->bihd", p / lsum, v)
    lse = ((mx + np.log(lsum)) / np.log(2.0))[..., 0]
    return {"o": o, "lse": lse.astype(np.float32)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        out, ref = run_flash_attention_lse(inputs, sizes), reference(inputs, sizes)
        np.testing.assert_allclose(out["o"].astype(np.float64), ref["o"], rtol=0, atol=2e-2)
        np.testing.assert_allclose(out["lse"], ref["lse"], rtol=1e-5, atol=1e-4)
    print("flash_attention: OK")
