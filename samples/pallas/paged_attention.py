"""paged_attention: the Pallas kernels that samples/paged_attention.pk mirrors.

jax.experimental.pallas.ops.gpu.paged_attention, written for the .pk's
interface: q [b, hkv * G, HEAD_DIM], k_pages and v_pages [hkv, pages, PAGE,
HEAD_DIM], block_tables [b, PAGES_PER_SEQ], lengths [b].  The op vmaps its
kernel over the batch; here the batch is a grid axis and lengths a
scalar-prefetch operand: grid (b, hkv, G // BLOCK_H, SPLITS), each program the
BLOCK_H query rows of a head-group block for one split of PAGES_PER_SEQ //
SPLITS pages.  Its body is the op's paged_attention_kernel: a fori_loop over
blocks of pages_per_compute_block pages gathered through the block table
(`k_pages_ref[block_tables]` reshaped to [block_k, HEAD_DIM]), the logits of
tokens at or past the length replaced by mask_value, the online softmax in
base 2; it writes the unnormalised output (in q's dtype), row sum and row
maximum.  run_paged_combine() is the op's final round in jnp
(paged_attention_unbatched after the pallas_call), which the .pk writes as its
second kernel.  Consts (sizes may override them, as pkc -D does): DT,
HEAD_DIM, G, BLOCK_H, PAGE, PAGES_PER_SEQ, SPLITS, PAGES_PER_BLOCK.
Interface (run / make_inputs / reference / TEST_SIZES): see add_vectors.py.
"""
import functools
import math

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

DEFAULTS = {"DT": "f16", "HEAD_DIM": 128, "G": 8, "BLOCK_H": None, "PAGE": 16, "PAGES_PER_SEQ": 64,
            "SPLITS": 8, "PAGES_PER_BLOCK": 8}
TEST_SIZES = [{"b": 3, "hkv": 2}, {"b": 2, "hkv": 3, "G": 4, "DT": "bf16", "HEAD_DIM": 64, "PAGE": 32,
                                   "PAGES_PER_SEQ": 16, "SPLITS": 4, "PAGES_PER_BLOCK": 2}]
MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)


def config(sizes):
    c = dict(DEFAULTS)
    c.update({k: sizes[k] for k in DEFAULTS if k in sizes})
    c["BLOCK_H"] = c["BLOCK_H"] or c["G"]
    return c


def jdtype(name):
    return {"f16": jnp.float16, "bf16": jnp.bfloat16}[name]


def split_kernel(lengths_ref, q_ref, k_pages_ref, v_pages_ref, block_tables_ref, o_ref, l_ref, m_ref, *,
                 pages_per_compute_block):
    prog_i, partition_idx = pl.program_id(0), pl.program_id(3)
    block_h, head_dim = q_ref.shape
    page_size = k_pages_ref.shape[-2]
    pages_per_partition = block_tables_ref.shape[0]
    block_k = pages_per_compute_block * page_size
    length = lengths_ref[prog_i]
    q = q_ref[...]

    def body(start_k, carry):
        o_prev, m_prev, l_prev = carry
        block_tables = block_tables_ref[pl.ds(start_k * pages_per_compute_block, pages_per_compute_block)]
        k = k_pages_ref[block_tables].reshape(block_k, head_dim)
        v = v_pages_ref[block_tables].reshape(block_k, head_dim)
        logits = jnp.dot(q, k.T, preferred_element_type=jnp.float32)
        curr_start_page_idx = partition_idx * pages_per_partition + start_k * pages_per_compute_block
        mask = jnp.arange(block_k) + curr_start_page_idx * page_size < length
        logits = jnp.where(lax.broadcast_in_dim(mask, (block_h, block_k), (1,)), logits, MASK_VALUE)
        log2e = math.log2(math.e)
        m_next = jnp.maximum(m_prev, logits.max(axis=-1))
        correction = jnp.exp2((m_prev - m_next) * log2e)
        s_curr = jnp.exp2((logits - m_next[:, None]) * log2e)
        l_next = correction * l_prev + s_curr.sum(axis=-1)
        o_next = correction[:, None] * o_prev + jnp.dot(s_curr.astype(v.dtype), v,
                                                        preferred_element_type=jnp.float32)
        return o_next, m_next, l_next

    m_i = jnp.zeros(block_h, jnp.float32) + jnp.finfo(jnp.float32).min
    l_i = jnp.zeros(block_h, jnp.float32)
    o = jnp.zeros((block_h, head_dim), jnp.float32)
    start_page_idx = partition_idx * pages_per_partition
    end_page_idx = jnp.minimum(pl.cdiv(length, page_size), start_page_idx + pages_per_partition)
    max_it = pl.cdiv(end_page_idx - start_page_idx, pages_per_compute_block)
    o, m_i, l_i = lax.cond(start_page_idx >= end_page_idx, lambda: (o, m_i, l_i),
                           lambda: lax.fori_loop(0, max_it, body, (o, m_i, l_i)))
    o_ref[...] = o.astype(o_ref.dtype)
    l_ref[...] = l_i
    m_ref[...] = m_i


def run(inputs, sizes):
    c = config(sizes)
    d, g, bh, splits, page = c["HEAD_DIM"], c["G"], c["BLOCK_H"], c["SPLITS"], c["PAGE"]
    ppp = c["PAGES_PER_SEQ"] // splits
    q, kp, vp, tables = (jnp.asarray(inputs[n]) for n in ("q", "k_pages", "v_pages", "block_tables"))
    b, hq = q.shape[0], q.shape[1]
    hkv, pages = kp.shape[0], kp.shape[1]
    hs = g // bh
    kernel = functools.partial(split_kernel, pages_per_compute_block=min(c["PAGES_PER_BLOCK"], ppp))
    kv = pl.BlockSpec((None, pages, page, d), lambda i, h, j, s, n: (h, 0, 0, 0))
    part = pl.BlockSpec((None, None, bh), lambda i, h, j, s, n: (i, s, h * hs + j))
    o, l, m = pl.pallas_call(
        kernel,
        out_shape=[jax.ShapeDtypeStruct((b, splits, hq, d), q.dtype),
                   jax.ShapeDtypeStruct((b, splits, hq), jnp.float32),
                   jax.ShapeDtypeStruct((b, splits, hq), jnp.float32)],
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(b, hkv, hs, splits),
            in_specs=[pl.BlockSpec((None, bh, d), lambda i, h, j, s, n: (i, h * hs + j, 0)), kv, kv,
                      pl.BlockSpec((None, ppp), lambda i, h, j, s, n: (i, s))],
            out_specs=[pl.BlockSpec((None, None, bh, d), lambda i, h, j, s, n: (i, s, h * hs + j, 0)),
                       part, part],
        ),
        interpret=True,
    )(jnp.asarray(inputs["lengths"]), q, kp, vp, tables)
    return {"o_part": np.asarray(o), "l_part": np.asarray(l), "m_part": np.asarray(m)}


def run_paged_combine(inputs, sizes):
    """The op's final round (paged_attention_unbatched after the pallas_call), splits on axis 1."""
    o, l, m = (jnp.asarray(inputs[n]) for n in ("o_part", "l_part", "m_part"))
    m_next = m.max(axis=1)
    correction = jnp.exp(m - m_next[:, None])
    o = o * correction[..., None].astype(o.dtype)
    l_next = (l * correction).sum(axis=1)
    eps = jnp.finfo(l_next.dtype).eps
    den = (l_next[..., None] + eps).astype(o.dtype)
    # The op divides in o's dtype: o.sum(axis=1) / den.  A sequence of length 0
    # has den = eps rounded to f16, a subnormal, which XLA on the CPU flushes to
    # zero (0 / 0 = NaN); dividing the same two numbers in f32 and rounding keeps
    # the op's result everywhere else and gives that sequence its 0.
    o = (o.sum(axis=1).astype(jnp.float32) / den.astype(jnp.float32)).astype(o.dtype)
    return {"o": np.asarray(o)}


def make_inputs(sizes, rng):
    c = config(sizes)
    b, hkv, d, page, pps = sizes["b"], sizes["hkv"], c["HEAD_DIM"], c["PAGE"], c["PAGES_PER_SEQ"]
    dt = jdtype(c["DT"])
    pages = b * pps + 3
    most = pps * page
    lens = np.concatenate([[0, most], rng.integers(1, most + 1, max(b - 2, 0))])[:b].astype(np.int32)
    tables = rng.permutation(pages)[:b * pps].reshape(b, pps).astype(np.int32)
    return {"lengths": lens, "block_tables": tables,
            "q": np.asarray(jnp.asarray(rng.uniform(-1, 1, (b, hkv * c["G"], d)), dt)),
            "k_pages": np.asarray(jnp.asarray(rng.uniform(-1, 1, (hkv, pages, page, d)), dt)),
            "v_pages": np.asarray(jnp.asarray(rng.uniform(-1, 1, (hkv, pages, page, d)), dt))}


def reference(inputs, sizes):
    """The whole step (both kernels): softmax over each sequence's first `length` tokens."""
    c = config(sizes)
    g, page = c["G"], c["PAGE"]
    q = inputs["q"].astype(np.float64)
    kp, vp = (inputs[n].astype(np.float64) for n in ("k_pages", "v_pages"))
    b, hq, d = q.shape
    out = np.zeros((b, hq, d))
    for bi in range(b):
        n = int(inputs["lengths"][bi])
        if n == 0:
            continue
        t = np.arange(n)
        pg = inputs["block_tables"][bi][t // page]
        k = np.repeat(kp[:, pg, t % page].transpose(1, 0, 2), g, axis=1)  # [n, hq, d]
        v = np.repeat(vp[:, pg, t % page].transpose(1, 0, 2), g, axis=1)
        s = np.einsum("hd,thd->ht", q[bi], k)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[bi] = np.einsum("ht,thd->hd", p / p.sum(axis=1, keepdims=True), v)
    return {"o": out}


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    for sizes in TEST_SIZES:
        inputs = make_inputs(sizes, rng)
        parts = run(inputs, sizes)
        out, ref = run_paged_combine(parts, sizes), reference(inputs, sizes)
        np.testing.assert_allclose(out["o"].astype(np.float64), ref["o"], rtol=2e-2, atol=2e-2)
    print("paged_attention: OK")
