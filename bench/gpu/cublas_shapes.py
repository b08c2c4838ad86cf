# cuBLAS (torch.matmul) on the shapes of bench/gpu/matmul_user.c (or those
# of SHAPES="MxNxK ...", as the driver reads it), f16 and bf16: median of 25 launches after 5 warm-ups, CUDA events; printed as
# the driver prints its rows, so both sit in one table.
import os
import statistics
import torch

shapes = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 8192, 1024), (16384, 1024, 4096)]
if os.environ.get("SHAPES"):
    shapes = [tuple(int(v) for v in s.split("x")) for s in os.environ["SHAPES"].split()]
for m, n, k in shapes:
    for dt, name in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        for _ in range(5):
            torch.matmul(a, b)
        ts = []
        for _ in range(25):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            torch.matmul(a, b)
            e.record()
            torch.cuda.synchronize()
            ts.append(s.elapsed_time(e))
        ms = statistics.median(ts)
        print(f"{'cublas_' + name:<22} {'torch.matmul':<24} {f'{m}x{n}x{k} {name}':<22} {ms:9.4f} {2*m*n*k/ms/1e9:9.1f}")
