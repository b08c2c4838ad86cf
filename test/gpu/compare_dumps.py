#!/usr/bin/env python3
"""compare_dumps.py HOST_DIR CUDA_DIR - compares the --dump output of one
sample program run on the host and on the GPU (same seed and sizes).

Every .npy under HOST_DIR must exist under CUDA_DIR with the same dtype and
shape.  Integer arrays must be equal; float arrays must agree to
||cuda - host|| / ||host|| <= tol (f32/f64 1e-4, f16 1e-2, bf16 -- stored as
uint16 bits and named under "bf16" in sizes.json -- 2e-2), with NaNs in the
same places.  Prints one line per array that differs and "match" or
"MISMATCH"; exit status 0 when everything matches, 1 otherwise, 2 on a
missing file or numpy.
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import numpy as np
    except ImportError:
        print("compare_dumps: numpy is not available", file=sys.stderr)
        return 2
    host, cuda = sys.argv[1], sys.argv[2]
    bf16 = set()
    try:
        with open(os.path.join(host, "sizes.json")) as f:
            bf16 = set(json.load(f).get("bf16", []))
    except (OSError, ValueError):
        pass
    bad, n = 0, 0
    for root, _, files in os.walk(host):
        for fn in sorted(files):
            if not fn.endswith(".npy"):
                continue
            rel = os.path.relpath(os.path.join(root, fn), host)
            name = rel[:-4]
            other = os.path.join(cuda, rel)
            n += 1
            if not os.path.exists(other):
                print(f"  {name}: missing in the GPU run")
                bad += 1
                continue
            a, b = np.load(os.path.join(host, rel)), np.load(other)
            if a.dtype != b.dtype or a.shape != b.shape:
                print(f"  {name}: host {a.dtype}{a.shape} vs GPU {b.dtype}{b.shape}")
                bad += 1
                continue
            if name in bf16 or name.split("/")[-1] in bf16:
                a = (a.astype(np.uint32) << 16).view(np.float32)
                b = (b.astype(np.uint32) << 16).view(np.float32)
                tol = 2e-2
            elif a.dtype.kind == "f":
                tol = 1e-2 if a.dtype.itemsize == 2 else 1e-4
            else:
                tol = None
            if tol is None:
                diff = int(np.count_nonzero(a != b))
                if diff:
                    i = int(np.flatnonzero(a.ravel() != b.ravel())[0])
                    print(f"  {name}: {diff} of {a.size} elements differ (first at flat {i}: host {a.ravel()[i]}, "
                          f"GPU {b.ravel()[i]})")
                    bad += 1
                continue
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            nan_a, nan_b = np.isnan(a64), np.isnan(b64)
            if not np.array_equal(nan_a, nan_b):
                print(f"  {name}: NaNs differ (host {int(nan_a.sum())}, GPU {int(nan_b.sum())})")
                bad += 1
                continue
            a64, b64 = np.where(nan_a, 0, a64), np.where(nan_b, 0, b64)
            inf = np.isinf(a64) | np.isinf(b64)
            if np.any(a64[inf] != b64[inf]):
                print(f"  {name}: infinities differ")
                bad += 1
                continue
            a64, b64 = np.where(inf, 0, a64), np.where(inf, 0, b64)
            ref = np.linalg.norm(a64)
            err = np.linalg.norm(b64 - a64) / (ref if ref > 0 else 1.0)
            if not err <= tol:
                i = int(np.argmax(np.abs(b64 - a64)))
                print(f"  {name}: rel diff {err:.3g} > {tol:g} (worst at flat {i}: host {a64.ravel()[i]}, "
                      f"GPU {b64.ravel()[i]})")
                bad += 1
    if n == 0:
        print(f"compare_dumps: no .npy files under {host}")
        return 2
    print("match" if not bad else f"MISMATCH ({bad} of {n} arrays)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
