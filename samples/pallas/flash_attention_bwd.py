"""flash_attention_bwd: the Pallas kernels that samples/flash_attention_bwd.pk mirrors.

The backward pass of jax.experimental.pallas.ops.gpu.attention (_mha_backward
with backward_pass_impl="triton"), written here for q, k, v, o, dout of shape
[batch, seq, heads, head_dim] and lse, delta of shape [batch, heads, seq]:
run_mha_preprocess_backward() (also run()) is the kernel
`mha_preprocess_backward` (delta = rowsum of o * dout, grid (seq // BQ, batch,
heads)); run_mha_backward() is the kernel
`mha_backward`, grid (batch, heads, seq // BK_DKV): p is recomputed from the
base-2 logits and lse; a fori_loop over BQ_DKV-row blocks of q accumulates
dk and dv of the program's BK_DKV keys (causal: from the diagonal block on),
a second over BK_DQ-row blocks of k accumulates dq of its BQ_DQ queries
(causal: up to the diagonal).
Consts (sizes may override them, as pkc -D does): DT, HEAD_DIM, SEQ, CAUSAL,
SM_SCALE, BQ, BQ_DKV, BK_DKV, BQ_DQ, BK_DQ.
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
            "BQ": 128, "BQ_DKV": 32, "BK_DKV": 32, "BQ_DQ": 32, "BK_DQ": 32}
TEST_SIZES = [{"b": 1, "h": 2, "SEQ": 128},
              {"b": 1, "h": 1, "SEQ": 128, "CAUSAL": True, "DT": "bf16", "HEAD_DIM": 128,
               "SM_SCALE": 0.125}]
MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)


def config(sizes):
    c = dict(DEFAULTS)
    c.update({k: sizes[k] for k in DEFAULTS if k in sizes})
    return c


def jdtype(name):
    return {"f16": jnp.float16, "bf16": jnp.bfloat16}[name]


def preprocess_kernel(o_ref, dout_ref, delta_ref):
    delta_ref[...] = jnp.sum(o_ref[...] * dout_ref[...], axis=1).astype(delta_ref.dtype)


def backward_kernel(q_ref, k_ref, v_ref, dout_ref, lse_ref, delta_ref, dq_ref, dk_ref, dv_ref, *,
                    seq, causal, sm_scale, bq_dkv, bk_dkv, bq_dq, bk_dq):
    qk_scale = math.log2(math.e) * sm_scale

    def scores(q, k, span_q, span_k):
        qk = jnp.dot(q, k.T, preferred_element_type=jnp.float32) * qk_scale
        if causal:
            qk = jnp.where(span_q[:, None] >= span_k[None, :], qk, MASK_VALUE)
        return qk

    def grad_scores(p, di, do, v):
        dp = jnp.dot(do, v.T, preferred_element_type=jnp.float32) - di[:, None]
        return p * dp * sm_scale

    # dk and dv of this program's block of keys.
    start_k = pl.program_id(2)
    k = k_ref[pl.ds(start_k * bk_dkv, bk_dkv), :]
    v = v_ref[pl.ds(start_k * bk_dkv, bk_dkv), :]
    span_k = start_k * bk_dkv + jnp.arange(bk_dkv)

    def dkdv_body(start_q, carry):
        dv, dk = carry
        rows = pl.ds(start_q * bq_dkv, bq_dkv)
        q = q_ref[rows, :]
        do = dout_ref[rows, :]
        qk = scores(q, k, start_q * bq_dkv + jnp.arange(bq_dkv), span_k)
        p = jnp.exp2(qk - lse_ref[rows][:, None])
        dv = dv + jnp.dot(p.astype(do.dtype).T, do, preferred_element_type=jnp.float32)
        ds = grad_scores(p, delta_ref[rows], do, v)
        dk = dk + jnp.dot(ds.astype(q.dtype).T, q, preferred_element_type=jnp.float32)
        return dv, dk

    first_q = lax.div(start_k * bk_dkv, bq_dkv) if causal else 0
    zeros = jnp.zeros((bk_dkv, dk_ref.shape[-1]), jnp.float32)
    dv, dk = lax.fori_loop(first_q, pl.cdiv(seq, bq_dkv), dkdv_body, (zeros, zeros))
    dv_ref[...] = dv.astype(dv_ref.dtype)
    dk_ref[...] = dk.astype(dk_ref.dtype)

    # dq of the block of queries with the same index.
    start_q = pl.program_id(2)
    rows = pl.ds(start_q * bq_dq, bq_dq)
    q = q_ref[rows, :]
    do = dout_ref[rows, :]
    lse = lse_ref[rows]
    di = delta_ref[rows]
    span_q = start_q * bq_dq + jnp.arange(bq_dq)

    def dq_body(start_k, dq):
        cols = pl.ds(start_k * bk_dq, bk_dq)
        k = k_ref[cols, :]
        qk = scores(q, k, span_q, start_k * bk_dq + jnp.arange(bk_dq))
        p = jnp.exp2(qk - lse[:, None])
        ds = grad_scores(p, di, do, v_ref[cols, :])
        return dq + jnp.dot(ds.astype(k.dtype), k, preferred_element_type=jnp.float32)

    last_k = pl.cdiv((start_q + 1) * bq_dq, bk_dq) if causal else pl.cdiv(seq, bk_dq)
    dq = lax.fori_loop(0, last_k, dq_body, jnp.zeros((bq_dq, dq_ref.shape[-1]), jnp.float32))
    dq_ref[...] = dq.astype(dq_ref.dtype)


def run_mha_preprocess_backward(inputs, sizes):
    c = config(sizes)
    seq, d, bq = c["SEQ"], c["HEAD_DIM"], c["BQ"]
    o, dout = (jnp.asarray(inputs[n]) for n in ("o", "dout"))
    b, _, h, _ = o.shape
    blk = pl.BlockSpec((None, bq, None, d), lambda i, j, hh: (j, i, hh, 0))
    delta = pl.pallas_call(
        preprocess_kernel,
        grid=(pl.cdiv(seq, bq), b, h),
        in_specs=[blk, blk],
        out_specs=pl.BlockSpec((None, None, bq), lambda i, j, hh: (j, hh, i)),
        out_shape=jax.ShapeDtypeStruct((b, h, seq), jnp.float32),
        interpret=True,
    )(o, dout)
    return {"delta": np.asarray(delta)}


run = run_mha_preprocess_backward


def run_mha_backward(inputs, sizes):
    c = config(sizes)
    seq, d = c["SEQ"], c["HEAD_DIM"]
    q, k, v, dout = (jnp.asarray(inputs[n]) for n in ("q", "k", "v", "dout"))
    lse, delta = (jnp.asarray(inputs[n]) for n in ("lse", "delta"))
    b, _, h, _ = q.shape
    kernel = functools.partial(backward_kernel, seq=seq, causal=bool(c["CAUSAL"]),
                               sm_scale=float(c["SM_SCALE"]), bq_dkv=c["BQ_DKV"],
                               bk_dkv=c["BK_DKV"], bq_dq=c["BQ_DQ"], bk_dq=c["BK_DQ"])
    whole = pl.BlockSpec((None, seq, None, d), lambda i, j, _: (i, 0, j, 0))
    rows = pl.BlockSpec((None, None, seq), lambda i, j, _: (i, j, 0))
    dq, dk, dv = pl.pallas_call(
        kernel,
        grid=(b, h, pl.cdiv(seq, c["BK_DKV"])),
        in_specs=[whole, whole, whole, whole, rows, rows],
        out_specs=[pl.BlockSpec((None, c["BQ_DQ"], None, d), lambda i, j, kk: (i, kk, j, 0)),
                   pl.BlockSpec((None, c["BK_DKV"], None, d), lambda i, j, kk: (i, kk, j, 0)),
                   pl.BlockSpec((None, c["BK_DKV"], None, d), lambda i, j, kk: (i, kk, j, 0))],
        out_shape=[jax.ShapeDtypeStruct(q.shape, q.dtype)] * 3,
        interpret=True,
    )(q, k, v, dout, lse, delta)
    return {"dq": np.asarray(dq), "dk": np.asarray(dk), "dv": np.asarray(dv)}


def _forward(q, k, v, c):
    """The forward pass in float64: p [b, h, i, j], o, and the base-2 lse."""
    s = np.einsum("bihd,bjhd->bhij", q, k) * c["SM_SCALE"]
    if c["CAUSAL"]:
        seq = c["SEQ"]
        s = np.where(np.tril(np.ones((seq, seq), bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    e = np.exp(s - mx)
    lsum = e.sum(axis=-1, keepdims=True)
    p = e / lsum
    o = np.einsum("bhij,bjhd->bihd", p, v)
    return p, o, ((mx + np.log(lsum)) / np.log(2.0))[..., 0]


def make_inputs(sizes, rng):
    """q, k, v, dout drawn; o and lse from the forward pass, as the forward kernel gives them."""
    c = config(sizes)
    dt = jdtype(c["DT"])
    shape = (sizes["b"], c["SEQ"], sizes["h"], c["HEAD_DIM"])
    ins = {n: np.asarray(jnp.asarray(rng.uniform(-1, 1, shape), dt)) for n in ("q", "k", "v", "dout")}
    _, o, lse = _forward(*(ins[n].astype(np.float64) for n in ("q", "k", "v")), c)
    ins["o"] = np.asarray(jnp.asarray(o, dt))
    ins["lse"] = lse.astype(np.float32)
    ins["delta"] = np.einsum("bihd,bihd->bhi", ins["o"].astype(np.float64),
                             ins["dout"].astype(np.float64)).astype(np.float32)
    return ins


def reference(inputs, sizes):
    """The exact gradients (float64) of o = softmax(s) v at q, k, v for dout."""
    c = config(sizes)
    q, k, v, do = (inputs[n].astype(np.float64) for n in ("q", "k", "v", "dout"))
    p, o, _ = _forward(q, k, v, c)
    delta = np.einsum("bihd,bihd->bhi", o, do)
    dp = np.einsum("bihd,bjhd->bhij", do, v)
    ds = p * (dp - delta[..., None]) * c["SM_SCALE"]
    return {"delta": delta,
            "dq": np.einsum("bhij,bjhd->bihd", ds, k),
            "dk": np.einsum("bhij,bihd->bjhd", ds, q),
            "dv": np.einsum("bhij,bihd->bjhd", p, do)}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        ref = reference(inputs, sizes)
        out = run(inputs, sizes)
        out.update(run_mha_backward(inputs, sizes))
        for name, want in ref.items():
            got = out[name].astype(np.float64)
            rel = np.linalg.norm(got - want) / np.linalg.norm(want)
            assert rel < 1e-2, (name, sizes, rel)
    print("flash_attention_bwd: OK")
