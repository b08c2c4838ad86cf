"""What the decode-step peer scripts share (peers_decode.py, peers_paged.py): timing a torch
call (triton's do_bench, median) or a JAX call (blocking on each result: JAX dispatches
asynchronously), and their JSON rows."""
import json
import time

from triton.testing import do_bench


class Rows:
    """Prints one JSON object per peer: "<name> <tag>", ms, rate (GB/s of nbytes), the fields."""

    def __init__(self, tag, nbytes, **fields):
        self.tag, self.nbytes, self.fields = tag, nbytes, fields

    def out(self, name, ms):
        row = {"name": f"{name} {self.tag}", "ms": round(ms, 4), "rate": round(self.nbytes / (ms * 1e-3) / 1e9, 1),
               "unit": "GB/s"}
        print(json.dumps({**row, **self.fields}), flush=True)

    def fail(self, name, e):
        print(json.dumps({"name": f"{name} {self.tag}", "error": repr(e)[:300]}), flush=True)


def tbench(f):
    return do_bench(f, warmup=25, rep=200, return_mode="median")


def jbench(f, iters=100):
    for _ in range(5):
        f().block_until_ready()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        f().block_until_ready()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e3
