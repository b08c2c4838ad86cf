#!/usr/bin/env python3
"""fake_dump.py SAMPLE DIR [--seed N] [--size NAME=N ...] [--break HOW] -
writes a dump in the format of `build/samples/SAMPLE --dump DIR`, with the
outputs computed by samples/pallas/SAMPLE.py's NumPy reference() instead of
pkc.  It lets compare.py be tested on its own (compare-selftest.test):

  --break none      a faithful dump (compare.py must pass it)
  --break perturb   one output element changed (must fail)
  --break nan       one output element NaN (must fail)
  --break dtype     the first output dumped as f64 / i64 (a bad dump)
  --break missing   the first output's .npy left out (a bad dump)
  --break zeros     every input and output zero (must fail: meaningless)
  --break shape     the first output one element short (a bad dump)
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in samples/pallas or here

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (sets JAX_PLATFORMS before jax loads)

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sample")
    ap.add_argument("dir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", action="append", default=[], metavar="NAME=N")
    ap.add_argument("--samples", default=os.path.join(compare.ROOT, "samples"),
                    help="the samples directory (SAMPLE.pk and pallas/SAMPLE.py)")
    ap.add_argument("--break", dest="brk", default="none",
                    choices=["none", "perturb", "nan", "dtype", "missing", "zeros", "shape"])
    args = ap.parse_args()

    samples = args.samples
    sig = compare.parse_signature(os.path.join(samples, args.sample + ".pk"), args.sample)
    mod = compare.load_module(os.path.join(samples, "pallas", args.sample + ".py"))
    sizes = {}
    for kv in args.size:
        k, v = kv.split("=")
        sizes[k] = int(v)
    rng = np.random.default_rng(args.seed)
    inputs = mod.make_inputs(sizes, rng)
    if args.brk == "zeros":
        inputs = {k: np.zeros_like(v) for k, v in inputs.items()}
    outs = mod.reference(inputs, sizes)
    outs = {k: np.array(v, copy=True) for k, v in outs.items()}
    first = [name for name, mode, _, _ in sig if mode in ("out", "inout")][0]
    o = outs[first].reshape(-1)
    if args.brk == "perturb":
        o[o.size // 2] += 1 if o.dtype.kind in "iub" else o.dtype.type(0.5 * (abs(float(o[o.size // 2])) + 1))
    elif args.brk == "nan":
        o[o.size // 2] = np.nan
    elif args.brk == "dtype":
        outs[first] = outs[first].astype(np.float64 if o.dtype.kind == "f" else np.int64)
    elif args.brk == "shape":
        outs[first] = outs[first].reshape(-1)[:-1]

    os.makedirs(args.dir, exist_ok=True)
    meta = {"sizes": sizes, "scalars": {}, "consts": {}, "bf16": []}

    def save(path, a, name, dt):
        if dt == "bf16":
            a = np.asarray(a).view("<u2")
            meta["bf16"].append(name)
        np.save(path, np.ascontiguousarray(a))

    for name, mode, dt, _ in sig:
        if mode == "scalar":
            meta["scalars"][name] = float(inputs[name])
        elif mode == "in":
            save(os.path.join(args.dir, name + ".npy"), inputs[name], name, dt)
        else:
            if mode == "inout":
                os.makedirs(os.path.join(args.dir, "in"), exist_ok=True)
                save(os.path.join(args.dir, "in", name + ".npy"), inputs[name], name, dt)
            if not (args.brk == "missing" and name == first):
                save(os.path.join(args.dir, name + ".npy"), outs[name], name, dt)
    meta["bf16"] = sorted(set(meta["bf16"]))
    with open(os.path.join(args.dir, "sizes.json"), "w") as f:
        json.dump(meta, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
