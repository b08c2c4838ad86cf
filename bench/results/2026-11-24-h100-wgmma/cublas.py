# cuBLAS (torch.matmul) at 8192^3 f16/bf16: median of 25 after 5 warm-ups, CUDA events.
import torch, statistics
n = 8192
for dt in (torch.float16, torch.bfloat16):
    a = torch.randn(n, n, device="cuda", dtype=dt); b = torch.randn(n, n, device="cuda", dtype=dt)
    for _ in range(5): torch.matmul(a, b)
    ts = []
    for _ in range(25):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); torch.matmul(a, b); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ms = statistics.median(ts)
    print(f"cublas {dt}: {ms:.4f} ms {2*n**3/ms/1e9:.1f} TFLOP/s")
