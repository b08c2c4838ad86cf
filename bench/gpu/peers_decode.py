"""Decode-attention peers on a CUDA machine, for bench/gpu/decode.sh: one query token per
sequence against a full key/value cache, grouped-query attention (G query heads per key/value
head), f16.  Pallas ops.gpu decode_attention.gqa (the op samples/decode_attention.pk mirrors,
k_splits and block_k as pkc's variant), XLA (jax.nn.dot_product_attention, default
implementation) and torch SDPA (enable_gqa; its default backend choice, and flash and cuDNN
alone where they take the shape).  Prints one JSON object per line: name, ms (median), rate
(GB/s of the cache read: 2 * b * seq * hkv * d * 2 bytes).  JAX calls are timed by blocking on
each result (JAX dispatches asynchronously).
    python3 peers_decode.py [--batch B] [--hkv H] [--g G] [--seq S] [--dim D] [--splits N] [--block-k K]"""
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
ap.add_argument("--block-k", type=int, default=128)
ap.add_argument("--page", type=int, default=16, help="(decode.sh passes it to both peer scripts; unused)")
ap.add_argument("--pages-per-block", type=int, default=8, help="(unused here)")
a = ap.parse_args()
B, HKV, G, S, D = a.batch, a.hkv, a.g, a.seq, a.dim
HQ = HKV * G
BYTES = 2 * B * S * HKV * D * 2
R = Rows(f"decode g{G} d{D}", BYTES, b=B, hkv=HKV, g=G, seq=S)


F = torch.nn.functional.scaled_dot_product_attention
q = torch.randn(B, HQ, 1, D, device="cuda", dtype=torch.float16)
k, v = (torch.randn(B, HKV, S, D, device="cuda", dtype=torch.float16) for _ in range(2))
try:
    R.out("torch sdpa", tbench(lambda: F(q, k, v, enable_gqa=True)))
except Exception as e:
    R.fail("torch sdpa", e)
for backend, nm in ((SDPBackend.FLASH_ATTENTION, "torch sdpa flash"), (SDPBackend.CUDNN_ATTENTION, "torch sdpa cudnn"),
                    (SDPBackend.EFFICIENT_ATTENTION, "torch sdpa efficient")):
    try:
        with sdpa_kernel([backend]):
            R.out(nm, tbench(lambda: F(q, k, v, enable_gqa=True)))
    except Exception as e:
        R.fail(nm, e)
try:
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.gpu import decode_attention as pdec
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    jq = jax.random.normal(keys[0], (B, HQ, D), jnp.float16)
    jk, jv = (jax.random.normal(kk, (B, S, HKV, D), jnp.float16) for kk in keys[1:])
    lens = jnp.full((B,), S, jnp.int32)
    f = jax.jit(lambda x, y, z, n: pdec.gqa(x, y, z, kv_seq_len=n, sm_scale=1.0, k_splits=a.splits,
                                            block_k=a.block_k))
    R.out("pallas ops.gpu gqa", jbench(lambda: f(jq, jk, jv, lens)))
    g = jax.jit(lambda x, y, z: jax.nn.dot_product_attention(x[:, None], y, z, scale=1.0))
    R.out("xla", jbench(lambda: g(jq, jk, jv)))
except Exception as e:
    R.fail("jax", e)
