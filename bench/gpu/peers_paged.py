"""Paged-attention peers on a CUDA machine, for bench/gpu/decode.sh (KIND=paged): one query
token per sequence, grouped-query attention (G query heads per key/value head), f16, the cache in
pages of PAGE rows, each sequence's pages a shuffled choice from the pool (block tables), every
sequence full.  Pallas ops.gpu paged_attention (the op samples/paged_attention.pk mirrors;
k_splits and pages_per_compute_block as pkc's variant, its block_h of 16 rows: it pads a head
group of G < 16), XLA (the pages gathered with jnp.take, then jax.nn.dot_product_attention), and
for scale torch SDPA (enable_gqa; default backend and cuDNN) on the same step with a contiguous
cache (no paging: the same bytes read).  Prints one JSON object per line: name, ms (median), rate
(GB/s of the cache read: 2 * b * seq * hkv * d * 2 bytes).  JAX calls are timed by blocking on
each result (JAX dispatches asynchronously).
    python3 peers_paged.py [--batch B] [--hkv H] [--g G] [--seq S] [--dim D] [--splits N]
                           [--page P] [--pages-per-block N]"""
import argparse

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from peers_util import Rows, jbench, tbench

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--hkv", type=int, default=8)
ap.add_argument("--g", type=int, default=8)
ap.add_argument("--seq", type=int, default=4096)
ap.add_argument("--dim", type=int, default=128)
ap.add_argument("--splits", type=int, default=16)
ap.add_argument("--block-k", type=int, default=128, help="(decode.sh passes it to both peer scripts; unused)")
ap.add_argument("--page", type=int, default=16)
ap.add_argument("--pages-per-block", type=int, default=8)
a = ap.parse_args()
B, HKV, G, S, D, PAGE = a.batch, a.hkv, a.g, a.seq, a.dim, a.page
HQ, PPS = HKV * G, S // PAGE
BYTES = 2 * B * S * HKV * D * 2
R = Rows(f"paged g{G} d{D}", BYTES, b=B, hkv=HKV, g=G, seq=S, page=PAGE)


F = torch.nn.functional.scaled_dot_product_attention
q = torch.randn(B, HQ, 1, D, device="cuda", dtype=torch.float16)
k, v = (torch.randn(B, HKV, S, D, device="cuda", dtype=torch.float16) for _ in range(2))
try:
    R.out("torch sdpa contiguous", tbench(lambda: F(q, k, v, enable_gqa=True)))
except Exception as e:
    R.fail("torch sdpa contiguous", e)
try:
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        R.out("torch sdpa cudnn contiguous", tbench(lambda: F(q, k, v, enable_gqa=True)))
except Exception as e:
    R.fail("torch sdpa cudnn contiguous", e)
del q, k, v
try:
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.gpu import paged_attention as ppa
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    pages = B * PPS
    jq = jax.random.normal(keys[0], (B, HQ, D), jnp.float16)
    jk, jv = (jax.random.normal(kk, (HKV, pages, PAGE, D), jnp.float16) for kk in keys[1:])
    tables = jnp.asarray(np.random.default_rng(1).permutation(pages).reshape(B, PPS).astype(np.int32))
    lens = jnp.full((B,), S, jnp.int32)
    f = jax.jit(lambda x, y, z, t, n: ppa.paged_attention(x, y, z, t, n, k_splits=a.splits,
                                                          pages_per_compute_block=a.pages_per_block))
    R.out("pallas ops.gpu paged_attention", jbench(lambda: f(jq, jk, jv, tables, lens)))

    def xla(x, y, z, t):
        kk, vv = (jnp.take(p, t, axis=1).reshape(HKV, B, S, D).transpose(1, 2, 0, 3) for p in (y, z))
        return jax.nn.dot_product_attention(x[:, None], kk, vv, scale=1.0)
    g = jax.jit(xla)
    R.out("xla gather", jbench(lambda: g(jq, jk, jv, tables)))
except Exception as e:
    R.fail("jax", e)
