"""Attention backward peers on a CUDA machine, for bench/gpu/attention_bwd.sh: torch SDPA's
backward (flash and cuDNN backends), the vjp of JAX's cuDNN attention and of Pallas ops.gpu mha
(its fused Triton backward, with the op's default backward blocks, 32, and with 64). f16, batch 4,
heads 16, seq 4096; head dims 64 (full and causal) and 128. Only the backward is timed: the
forward runs once outside the loop (torch: autograd.grad on a kept graph; JAX: the function
jax.vjp returns, jitted). Prints one JSON object per line: name, ms (median), rate (TFLOP/s,
2.5 * 4*b*h*s*s*d, halved for causal). JAX calls are timed by blocking on each result (JAX
dispatches asynchronously).
    python3 peers_attention_bwd.py [--seq S] [--batch B] [--heads H]"""
import argparse
import json
import time

import torch
from triton.testing import do_bench

ap = argparse.ArgumentParser()
ap.add_argument("--seq", type=int, default=4096)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--heads", type=int, default=16)
a = ap.parse_args()
B, H, S = a.batch, a.heads, a.seq
SHAPES = ((64, False), (64, True), (128, False))


def out(name, ms, flops):
    print(json.dumps({"name": name, "ms": round(ms, 4), "rate": round(flops / (ms * 1e-3) / 1e12, 2),
                      "unit": "TFLOP/s"}), flush=True)


def error(name, e):
    print(json.dumps({"name": name, "error": repr(e)[:300]}), flush=True)


def bwd_flops(d, causal):
    return 2.5 * 4 * B * H * S * S * d * (0.5 if causal else 1)


def jbench(f, iters=30):
    import jax
    for _ in range(3):
        jax.block_until_ready(f())
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        jax.block_until_ready(f())
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


from torch.nn.attention import sdpa_kernel, SDPBackend  # noqa: E402

F = torch.nn.functional.scaled_dot_product_attention
for D, causal in SHAPES:
    tag = f"d{D} {'causal' if causal else 'full'} bwd"
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
    do = torch.randn(B, H, S, D, device="cuda", dtype=torch.float16)
    for backend, nm in ((SDPBackend.FLASH_ATTENTION, "torch sdpa flash"), (SDPBackend.CUDNN_ATTENTION, "torch sdpa cudnn")):
        try:
            with sdpa_kernel([backend]):
                o = F(q, k, v, is_causal=causal)
                ms = do_bench(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True), warmup=10, rep=100,
                              return_mode="median")
            out(f"{nm} {tag}", ms, bwd_flops(D, causal))
        except Exception as e:
            error(f"{nm} {tag}", e)
try:
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.gpu import attention as pattn
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    for D, causal in SHAPES:
        tag = f"d{D} {'causal' if causal else 'full'} bwd"
        jq, jk, jv, jdo = (jax.random.normal(kk, (B, S, H, D), jnp.float16) for kk in keys)
        fns = [("jax cudnn", lambda x, y, z: jax.nn.dot_product_attention(x, y, z, is_causal=causal,
                                                                          implementation="cudnn"))]
        for blk in (32, 64):
            sizes = pattn.BlockSizes(block_q=128, block_k=64, block_q_dkv=blk, block_kv_dkv=blk, block_q_dq=blk,
                                     block_kv_dq=blk)
            fns.append((f"pallas ops.gpu mha b{blk}",
                        lambda x, y, z, s=sizes: pattn.mha(x, y, z, segment_ids=None, causal=causal, block_sizes=s)))
        for nm, f in fns:
            try:
                _, vjp = jax.vjp(f, jq, jk, jv)
                g = jax.jit(vjp)
                out(f"{nm} {tag}", jbench(lambda: g(jdo)), bwd_flops(D, causal))
            except Exception as e:
                error(f"{nm} {tag}", e)
except Exception as e:
    error("jax", e)
