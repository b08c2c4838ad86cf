"""decode_attention: the Pallas kernels that samples/decode_attention.pk mirrors.

jax.experimental.pallas.ops.gpu.decode_attention (gqa with kv_seq_len), written
for the .pk's interface: q [b, hkv * G, HEAD_DIM], k and v [b, SEQ, hkv, HEAD_DIM],
kv_len [b].  The op vmaps its kernel over batch and key/value heads; here they are
grid axes, with kv_len a scalar-prefetch operand: grid (b, hkv, SPLITS), each
program one split of SPLIT = SEQ // SPLITS cache rows for the G query rows of its
head group.  Its body is the op's attn_forward_kernel: a fori_loop over blocks
of min(BK, SPLIT) rows up to the sequence's kv_len, masked by adding
0.7 * finfo(f32).min, the online softmax in base e; it writes the unnormalised
output (in q's dtype), row sum and row maximum.  run_decode_combine() is the op's
final round in jnp (decode_attn_unbatched after the pallas_call), which the .pk
writes as its second kernel.  Consts (sizes may override them, as pkc -D does):
DT, HEAD_DIM, G, SEQ, SPLITS, BK, SM_SCALE.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

DEFAULTS = {"DT": "f16", "HEAD_DIM": 128, "G": 8, "SEQ": 1024, "SPLITS": 8, "BK": 128, "SM_SCALE": 1.0}
TEST_SIZES = [{"b": 3, "hkv": 2}, {"b": 2, "hkv": 3, "G": 4, "DT": "bf16", "HEAD_DIM": 64, "SEQ": 512}]


def config(sizes):
    c = dict(DEFAULTS)
    c.update({k: sizes[k] for k in DEFAULTS if k in sizes})
    return c


def jdtype(name):
    return {"f16": jnp.float16, "bf16": jnp.bfloat16}[name]


def split_kernel(kv_len_ref, q_ref, k_ref, v_ref, o_ref, l_ref, m_ref, *, split, block_k, sm_scale):
    prog_i, prog_j = pl.program_id(0), pl.program_id(2)
    q = q_ref[...]
    g, d = q.shape
    start_idx = split * prog_j
    kv_seq_len = jnp.minimum((prog_j + 1) * split, kv_len_ref[prog_i])

    def body(start_k, carry):
        o_prev, m_prev, l_prev = carry
        k = k_ref[pl.ds(start_k * block_k, block_k), :]
        qk = jnp.dot(q, k.T, preferred_element_type=jnp.float32)
        if sm_scale != 1.0:
            qk *= sm_scale
        indices = prog_j * split + start_k * block_k + jnp.arange(block_k)
        mask = ((indices >= start_idx) & (indices < kv_seq_len))[None, :]
        qk += (~mask) * (0.7 * jnp.finfo(qk.dtype).min)
        m_next = jnp.maximum(m_prev, qk.max(axis=-1))
        correction = jnp.exp(m_prev - m_next)
        s_curr = jnp.exp(qk - m_next[:, None])
        l_next = correction * l_prev + s_curr.sum(axis=-1)
        v = v_ref[pl.ds(start_k * block_k, block_k), :]
        o_next = correction[:, None] * o_prev + jnp.dot(s_curr.astype(v.dtype), v,
                                                        preferred_element_type=jnp.float32)
        return o_next, m_next, l_next

    m_i = jnp.zeros(g, jnp.float32) + jnp.finfo(jnp.float32).min
    l_i = jnp.zeros(g, jnp.float32)
    o = jnp.zeros((g, d), jnp.float32)
    max_it = jnp.minimum(pl.cdiv(kv_seq_len - prog_j * split, block_k), split // block_k)
    o, m_i, l_i = lax.cond(start_idx >= kv_seq_len, lambda: (o, m_i, l_i),
                           lambda: lax.fori_loop(0, max_it, body, (o, m_i, l_i)))
    o_ref[...] = o.astype(o_ref.dtype)
    l_ref[...] = l_i
    m_ref[...] = m_i


def run(inputs, sizes):
    c = config(sizes)
    seq, d, g, splits = c["SEQ"], c["HEAD_DIM"], c["G"], c["SPLITS"]
    split = seq // splits
    q, k, v = (jnp.asarray(inputs[n]) for n in ("q", "k", "v"))
    b, hkv = k.shape[0], k.shape[2]
    kernel = functools.partial(split_kernel, split=split, block_k=min(c["BK"], split),
                               sm_scale=float(c["SM_SCALE"]))
    kv = pl.BlockSpec((None, split, None, d), lambda i, j, s, n: (i, s, j, 0))
    part = pl.BlockSpec((None, None, None, g), lambda i, j, s, n: (i, j, s, 0))
    o, l, m = pl.pallas_call(
        kernel,
        out_shape=[jax.ShapeDtypeStruct((b, hkv, splits, g, d), q.dtype),
                   jax.ShapeDtypeStruct((b, hkv, splits, g), jnp.float32),
                   jax.ShapeDtypeStruct((b, hkv, splits, g), jnp.float32)],
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(b, hkv, splits),
            in_specs=[pl.BlockSpec((None, g, d), lambda i, j, s, n: (i, j, 0)), kv, kv],
            out_specs=[pl.BlockSpec((None, None, None, g, d), lambda i, j, s, n: (i, j, s, 0, 0)), part, part],
        ),
        interpret=True,
    )(jnp.asarray(inputs["kv_len"]), q, k, v)
    return {"o_part": np.asarray(o), "l_part": np.asarray(l), "m_part": np.asarray(m)}


def run_decode_combine(inputs, sizes):
    """The op's final round (decode_attn_unbatched), per (sequence, key/value head)."""
    o, l, m = (jnp.asarray(inputs[n]) for n in ("o_part", "l_part", "m_part"))
    m_next = m.max(axis=2)
    correction = jnp.exp(m - m_next[:, :, None])
    o = o * correction[..., None].astype(o.dtype)
    l_next = (l * correction).sum(axis=2)
    eps = jnp.finfo(l_next.dtype).eps
    o = o.sum(axis=2)
    dt = o.dtype
    o /= (l_next[..., None].astype(o.dtype) + eps)  # eps is an f32 scalar: o becomes f32
    b, hkv, g, d = o.shape
    # The op returns that f32; the .pk's o has q's dtype.
    return {"o": np.asarray(o.reshape(b, hkv * g, d).astype(dt))}


def make_inputs(sizes, rng):
    c = config(sizes)
    b, hkv, seq, d = sizes["b"], sizes["hkv"], c["SEQ"], c["HEAD_DIM"]
    dt = jdtype(c["DT"])
    lens = np.concatenate([[0, seq], rng.integers(1, seq + 1, max(b - 2, 0))])[:b].astype(np.int32)
    return {"kv_len": lens,
            "q": np.asarray(jnp.asarray(rng.uniform(-1, 1, (b, hkv * c["G"], d)), dt)),
            "k": np.asarray(jnp.asarray(rng.uniform(-1, 1, (b, seq, hkv, d)), dt)),
            "v": np.asarray(jnp.asarray(rng.uniform(-1, 1, (b, seq, hkv, d)), dt))}


def reference(inputs, sizes):
    """The whole step (both kernels): softmax over each sequence's first kv_len rows."""
    c = config(sizes)
    g = c["G"]
    q, k, v = (inputs[n].astype(np.float64) for n in ("q", "k", "v"))
    b, hq, d = q.shape
    out = np.zeros((b, hq, d))
    for bi in range(b):
        n = int(inputs["kv_len"][bi])
        if n == 0:
            continue
        kk = np.repeat(k[bi, :n], g, axis=1)  # [n, hq, d]
        vv = np.repeat(v[bi, :n], g, axis=1)
        s = np.einsum("hd,thd->ht", q[bi], kk) * c["SM_SCALE"]
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[bi] = np.einsum("ht,thd->hd", p / p.sum(axis=1, keepdims=True), vv)
    return {"o": out}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        parts = run(inputs, sizes)
        out, ref = run_decode_combine(parts, sizes), reference(inputs, sizes)
        np.testing.assert_allclose(out["o"].astype(np.float64), ref["o"], rtol=2e-2, atol=2e-2)
    print("decode_attention: OK")
