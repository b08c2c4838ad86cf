#!/usr/bin/env python3
"""debug_format.py HARNESS - checks the runtime's pk_debug_print against NumPy's str() of arrays
(test/pallas/debug_format.test): random and chosen arrays of every dtype pkc prints (f16 and bf16
as ml_dtypes arrays, which jax.debug.print formats), ranks 1 to 4, small and summarised (more than
1000 elements), wrapped rows, inf/NaN, magnitudes that take scientific form, -0.0, 64-bit extremes,
fed to HARNESS (Inputs/debug_format.c).  Prints "N cases, M mismatches" and the first mismatches."""
import subprocess
import sys

import ml_dtypes
import numpy as np

CODES = {"bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "uint8": 6, "uint16": 7, "uint32": 8,
         "uint64": 9, "float16": 10, "bfloat16": 11, "float32": 12, "float64": 13}


def cases():
    rng = np.random.default_rng(0)
    out = []
    shapes = [(5,), (3, 4), (2, 3, 4), (40,), (8, 128), (64, 128), (2, 2, 2, 2), (1,), (4, 1), (7,), (33,),
              (3, 700), (1001,), (2, 1, 600)]
    for shape in shapes:
        n = int(np.prod(shape))
        normal = rng.standard_normal(shape)
        out += [normal.astype(np.float32), (normal * 1000).astype(np.float32), (normal * 1e-6).astype(np.float32),
                normal, normal.astype(np.float16), normal.astype(ml_dtypes.bfloat16),
                (np.arange(n).reshape(shape) / 7).astype(np.float32), np.arange(n).reshape(shape).astype(np.float32),
                rng.integers(-1000, 1000, shape).astype(np.int32), rng.integers(0, 200, shape).astype(np.uint8),
                rng.integers(-2**40, 2**40, shape).astype(np.int64), normal > 0]
    out += [np.array(v, dt) for v, dt in [
        ([1.0, np.inf, -np.inf, np.nan, 0.5], np.float32), ([np.nan, np.inf], np.float32), ([-np.inf, 2.0], np.float32),
        ([1e10, 1.0], np.float32), ([0.0, -0.0, 1.0], np.float32), ([1e-30, 1e30], np.float32),
        ([1e-300, 1e300], np.float64), ([65504, 6e-8, 1], np.float16), ([2**64 - 1, 5], np.uint64),
        ([-2**63, 2**63 - 1], np.int64), ([-128, 127], np.int8), ([-32768, 7], np.int16), ([4294967295], np.uint32)]]
    out += [np.zeros((3, 3), np.float32), np.array([[np.nan]], np.float32)]
    return out


def main():
    arrays = cases()
    lines = []
    for a in arrays:
        data = a.astype(np.float32) if a.dtype.name in ("float16", "bfloat16") else a
        data = data.astype(np.uint8) if a.dtype == np.bool_ else data
        raw = np.ascontiguousarray(data).tobytes()
        lines.append("%d %d %s %s" % (CODES[a.dtype.name], a.ndim, " ".join(map(str, a.shape)), " ".join(map(str, raw))))
    got = subprocess.run([sys.argv[1]], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout.split("@@\n")
    bad = 0
    for a, text in zip(arrays, got):
        if text != str(a) + "\n":
            bad += 1
            if bad <= 5:
                print("MISMATCH %s %s\n--- pk_debug_print\n%s--- numpy\n%s" % (a.dtype, a.shape, text, str(a) + "\n"))
    print("%d cases, %d mismatches" % (len(arrays), bad + abs(len(arrays) - len(got) + 1)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
