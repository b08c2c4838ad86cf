#!/usr/bin/env python3
"""Runs every kernel of a .pk file twice on random inputs -- the host
variant and the CUDA variant -- through the same launch function of the
fat object, and compares the outputs (floats within a tolerance for their
dtype: sums may be ordered differently; everything else exactly).

Emulated (default): the CUDA variant runs on the CPU (emu_rt.c, emu_cta.c), which
checks the CUDA back end's logic (layouts, reductions, masks, barriers, mma
fragments) without a GPU; PTX and ptxas are not involved.

  run.py --pkc build/bin/pkc samples/softmax.pk --size rows=37 [--scalar eps=1e-5]
         [--seed S] [--target sm_90a] [-v]

On a GPU: build here (the cubin and a shared object with libpkrt), run
there (python3 with numpy and a CUDA device; test/gpu/run.sh does both):

  run.py --pkc build/bin/pkc --build-only DIR --libpkrt build/lib/libpkrt.a file.pk [--size ...]
  run.py --run DIR [--seed S] [-v]

Every row of a case table (test/gpu/kernels.txt: "name|file.pk|arguments"),
emulated, the rows whose file contains SUBSTR (all without --match):

  run.py --pkc build/bin/pkc --cases test/gpu/kernels.txt [--match SUBSTR] [-j N]

--skip K1,K2 leaves out kernels whose outputs may differ between correct
runs (atomics whose order shows, scatters with repeated indices).

Exit status 0 when every output matches, 1 otherwise, 2 when a step
failed."""
import argparse
import ctypes
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLANG = "/usr/lib/llvm-22/bin/clang"

NP = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64}
CT = {"bool": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
      "i64": ctypes.c_int64, "u8": ctypes.c_uint8, "u16": ctypes.c_uint16, "u32": ctypes.c_uint32,
      "u64": ctypes.c_uint64, "f16": ctypes.c_uint16, "bf16": ctypes.c_uint16, "f32": ctypes.c_float,
      "f64": ctypes.c_double}
# Relative tolerances (of the output's norm) per dtype.
TOL = {"f16": 2e-2, "bf16": 5e-2, "f32": 1e-4, "f64": 1e-10}
# Random integers (small and non-negative: they are often indices).
INT_RANGE = [0, 7]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write("$ %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
        raise SystemExit(2)
    return r


def parse_kernels(ir):
    """(name, [(param, mode or None, dtype, [dims])]) from --emit=ir kernel lines."""
    out = []
    for m in re.finditer(r"^kernel @(\w+)\((.*)\)\s*$", ir, re.M):
        params = []
        for p in re.split(r",\s*(?=%)", m.group(2)):
            pm = re.match(r"%(\w+):\s*(?:(in|out|inout|prefetch)\s+)?(\w+)(?:\[(.*)\])?", p.strip())
            dims = [d.strip() for d in pm.group(4).split(",")] if pm.group(4) else []
            params.append((pm.group(1), pm.group(2), pm.group(3), dims))
        out.append((m.group(1), params))
    return out


def bf16_bits(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def random_array(rng, dt, shape, name):
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in ("f16", "f32", "f64"):
        return rng.uniform(-1, 1, shape).astype(NP[dt])
    if dt == "bf16":
        return bf16_bits(rng.uniform(-1, 1, shape))
    info = np.iinfo(NP[dt])
    lo, hi = max(info.min, INT_RANGE[0]), min(info.max, INT_RANGE[1])
    return rng.integers(lo, hi, shape, endpoint=True).astype(NP[dt])


def as_float(a, dt):
    return bf16_value(a) if dt == "bf16" else a.astype(np.float64)


class Cuda:
    """A CUDA device through libpkrt (linked into the kernels' object)."""

    def __init__(self, lib):
        self.lib = lib
        lib.pk_last_error.restype = ctypes.c_char_p
        self.dev = ctypes.c_void_p()
        self.check(lib.pk_device_get(1, 0, ctypes.byref(self.dev)), "pk_device_get(CUDA)")
        self.stream = ctypes.c_void_p()
        self.check(lib.pk_stream_create(self.dev, ctypes.byref(self.stream)), "pk_stream_create")

    def check(self, st, what):
        if st != 0:
            raise RuntimeError("%s: status %d: %s" % (what, st, self.lib.pk_last_error().decode()))

    def to_device(self, arr):
        p = ctypes.c_void_p()
        n = max(arr.nbytes, 1)
        self.check(self.lib.pk_malloc(self.dev, ctypes.c_size_t(n), ctypes.byref(p)), "pk_malloc")
        self.check(self.lib.pk_memcpy(self.stream, p, ctypes.c_void_p(arr.ctypes.data), ctypes.c_size_t(arr.nbytes), 0),
                   "pk_memcpy")
        return p

    def from_device(self, arr, p):
        self.check(self.lib.pk_memcpy(self.stream, ctypes.c_void_p(arr.ctypes.data), p, ctypes.c_size_t(arr.nbytes), 1),
                   "pk_memcpy")
        self.check(self.lib.pk_stream_synchronize(self.stream), "pk_stream_synchronize")
        self.check(self.lib.pk_free(self.dev, p), "pk_free")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pk", nargs="?")
    ap.add_argument("--pkc")
    ap.add_argument("--build-only", metavar="DIR", help="build for a real GPU into DIR, do not run")
    ap.add_argument("--libpkrt", help="libpkrt.a to link for --build-only")
    ap.add_argument("--run", metavar="DIR", help="run what --build-only built, on the CUDA device")
    ap.add_argument("--size", action="append", default=[], help="NAME=VALUE")
    ap.add_argument("--scalar", action="append", default=[], help="NAME=VALUE")
    ap.add_argument("--define", "-D", action="append", default=[], help="NAME=VALUE for pkc -D")
    ap.add_argument("--pkc-option", action="append", default=[], help="one more pkc option (--gpu-no-tma)")
    ap.add_argument("--seed", type=int, help="seed of the inputs (default 1; with --run: the one given at build)")
    ap.add_argument("--int-range", default="0,7", help="LO,HI of random integer inputs")
    ap.add_argument("--default-size", type=int, default=37, help="value of size symbols not given")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--skip", default="", help="kernels not to run (comma list)")
    ap.add_argument("--keep", help="keep the build in this directory")
    ap.add_argument("--cases", metavar="FILE", help="emulate every row of this case table")
    ap.add_argument("--match", default="", help="with --cases: only rows whose .pk path contains this")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2, help="with --cases: rows run at once")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    if a.run:
        with open(os.path.join(a.run, "args.json")) as f:
            saved = json.load(f)
        for k, v in saved.items():
            if k not in ("run", "v") and not (k == "seed" and a.seed is not None):
                setattr(a, k, v)
        if a.seed is None:
            a.seed = 1
        try:
            return check(a, a.run, os.path.join(a.run, "k.so"), open(os.path.join(a.run, "k.ir")).read(), cuda=True)
        except (RuntimeError, OSError) as e:
            print("%s: %s" % (os.path.basename(a.pk), e))
            return 2
    if a.cases:
        return run_cases(a)
    if not a.pk or not a.pkc:
        ap.error("a .pk file and --pkc are needed")
    if a.seed is None:
        a.seed = 1
    if a.build_only:
        tmp = a.build_only
        os.makedirs(tmp, exist_ok=True)
        defs = ["-D" + d for d in a.define] + a.pkc_option
        obj, so = os.path.join(tmp, "k.o"), os.path.join(tmp, "k.so")
        run([a.pkc] + defs + ["--target=host," + a.target, a.pk, "-o", obj, "-H", os.path.join(tmp, "k.h")])
        run(["cc", "-shared", "-o", so, obj, "-Wl,--whole-archive", a.libpkrt, "-Wl,--no-whole-archive",
             "-lpthread", "-lm", "-ldl"])
        with open(os.path.join(tmp, "k.ir"), "w") as f:
            f.write(run([a.pkc] + defs + ["--emit=ir", a.pk, "-o", "-"]).stdout)
        with open(os.path.join(tmp, "args.json"), "w") as f:
            json.dump({k: v for k, v in vars(a).items() if k in ("size", "scalar", "seed", "int_range", "default_size",
                                                                  "pk", "skip")}, f)
        return 0
    return emulate(a)


def read_cases(path):
    """(name, .pk path relative to the repository, [arguments]) per row of a case table."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, pk, args = line.split("|", 2)
                rows.append((name, pk, shlex.split(args)))
    return rows


def run_cases(a):
    import concurrent.futures
    rows = [r for r in read_cases(a.cases) if a.match in r[1]]

    def one(row):
        name, pk, args = row
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--pkc", a.pkc, os.path.join(ROOT, pk)] + args,
                           capture_output=True, text=True)
        return r.returncode, "%s: %s" % (name, (r.stdout + r.stderr).strip().replace("\n", "\n  "))

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        results = list(pool.map(one, rows))
    for _, line in results:
        print(line)
    bad = sum(1 for rc, _ in results if rc != 0)
    print("run.py: %d cases passed, %d failed" % (len(results) - bad, bad))
    return 1 if bad else 0


def emulate(a):
    defs = ["-D" + d for d in a.define] + a.pkc_option
    tmp = a.keep or tempfile.mkdtemp(prefix="pkc-emu-")
    os.makedirs(tmp, exist_ok=True)
    try:
        obj, emu_ll, emu_o, so = (os.path.join(tmp, n) for n in ("k.o", "k.emu.ll", "k.emu.o", "k.so"))
        env = dict(os.environ)
        run([a.pkc] + defs + ["--target=host," + a.target, "--ptxas=none", a.pk, "-o", obj, "-H",
             os.path.join(tmp, "k.h")])
        env["PKC_GPU_EMULATE"] = "1"
        run([a.pkc] + defs + ["--target=" + a.target, "--emit=nvvm", a.pk, "-o", emu_ll], env=env)
        run([CLANG, "-O1", "-fPIC", "-c", emu_ll, "-o", emu_o])
        run([CLANG, "-O1", "-fPIC", "-shared", "-o", so, obj, emu_o, os.path.join(HERE, "emu_rt.c"),
             os.path.join(HERE, "emu_cta.c"), os.path.join(ROOT, "runtime", "debug.c"),  # the host's debug_print
             "-I" + os.path.join(ROOT, "runtime"), "-lpthread", "-lm", "-ldl"])
        ir = run([a.pkc] + defs + ["--emit=ir", a.pk, "-o", "-"]).stdout
        return check(a, tmp, so, ir, cuda=False)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def check(a, tmp, so, ir, cuda):
    sizes = dict(kv.split("=", 1) for kv in a.size)
    scalars = dict(kv.split("=", 1) for kv in a.scalar)
    INT_RANGE[:] = [int(x) for x in a.int_range.split(",")]
    lib = ctypes.CDLL(so, mode=os.RTLD_GLOBAL)
    if cuda:
        gpu = Cuda(lib)
        cuda_stream = gpu.stream
        last_error = lib.pk_last_error
    else:
        gpu = None
        lib.pk_emu_last_error.restype = ctypes.c_char_p
        cuda_stream = ctypes.addressof(ctypes.c_char.in_dll(lib, "pk_emu_cuda_stream"))
        last_error = lib.pk_emu_last_error
    rng = np.random.default_rng(a.seed)
    skip = set(filter(None, a.skip.split(",")))
    bad = 0
    for name, params in parse_kernels(ir):
        if name in skip:
            print("%s: skipped (--skip)" % name)
            continue
        # Sizes first (their values give the shapes).
        vals = {}
        for p, mode, dt, dims in params:
            if mode is None and not dims and p in sizes:
                vals[p] = int(sizes[p])
        # Size symbols not given: any extent names one (37 by default).
        for p, mode, dt, dims in params:
            for d in dims:
                if not d.lstrip("-").isdigit() and d not in vals:
                    vals[d] = int(sizes.get(d, a.default_size))
        arrays, argtypes, args_proto = {}, [ctypes.c_void_p], []
        for p, mode, dt, dims in params:
            if mode:
                shape = tuple(int(vals.get(d, d)) if not d.lstrip("-").isdigit() else int(d) for d in dims)
                arrays[p] = (dt, mode, random_array(rng, dt, shape, p))
                argtypes.append(ctypes.c_void_p)
                args_proto.append(("array", p))
            elif p in vals:
                argtypes.append(ctypes.c_int64)
                args_proto.append(("size", vals[p]))
            else:
                v = float(scalars.get(p, "0.5")) if dt.startswith(("f", "bf")) else int(scalars.get(p, "3"))
                if dt == "f16":
                    v = int(np.float16(v).view(np.uint16))
                elif dt == "bf16":
                    v = int(bf16_bits(np.float32(v)))
                elif dt == "bool":
                    v = bool(v)
                argtypes.append(CT[dt])
                args_proto.append(("scalar", v))
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int
        results, statuses = [], []
        for stream in (None, cuda_stream):
            bufs = {p: np.ascontiguousarray(arr.copy()) for p, (dt, mode, arr) in arrays.items()}
            # Poison what the kernel writes: the two runs must agree on what they write.
            for p, (dt, mode, arr) in arrays.items():
                if mode == "out" and dt in ("f16", "f32", "f64"):
                    bufs[p][...] = np.nan
            call = [stream]
            dev = {}
            for kind, v in args_proto:
                if kind == "array" and gpu and stream is not None:
                    dev[v] = gpu.to_device(bufs[v])
                    call.append(dev[v])
                else:
                    call.append(bufs[v].ctypes.data if kind == "array" else v)
            st = fn(*call)
            if gpu and stream is not None:
                if st == 0:
                    st = lib.pk_stream_synchronize(stream)
                for v, p in dev.items():
                    gpu.from_device(bufs[v], p)
            statuses.append((st, last_error().decode()))
            results.append(bufs)
        if statuses[0][0] != 0 or statuses[1][0] != 0:
            if statuses[0][0] == statuses[1][0]:
                print("%s: skipped: both variants report status %d: %s" % (name, statuses[0][0], statuses[0][1]))
            else:
                print("%s: host status %d, cuda status %d: %s" % (name, statuses[0][0], statuses[1][0],
                                                                 statuses[1][1] or statuses[0][1]))
                bad += 1
            continue
        if os.environ.get("PK_GPU_DUMP"):
            for p, (dt, mode, arr) in arrays.items():
                np.save(os.path.join(os.environ["PK_GPU_DUMP"], "%s_%s_host.npy" % (name, p)), results[0][p])
                np.save(os.path.join(os.environ["PK_GPU_DUMP"], "%s_%s_cuda.npy" % (name, p)), results[1][p])
        for p, (dt, mode, arr) in arrays.items():
            if mode in ("in", "prefetch"):
                continue
            h, c = results[0][p], results[1][p]
            if dt in TOL:
                hf, cf = as_float(h, dt), as_float(c, dt)
                # Equal values (infinities included) and NaNs in the same
                # places agree; the error is relative to the largest finite
                # host value.
                same = (np.isnan(hf) & np.isnan(cf)) | (hf == cf)
                with np.errstate(invalid="ignore"):
                    diff = np.where(same, 0.0, np.abs(hf - cf))
                finite = np.isfinite(hf)
                scale = max(float(np.max(np.abs(hf[finite]))) if finite.any() else 1.0, 1e-30)
                err = float(np.max(diff) / scale) if diff.size else 0.0
                ok = err <= TOL[dt] and not np.any(np.isnan(diff))
                msg = "max rel err %.3g" % err
            else:
                ok = np.array_equal(h, c)
                msg = "%d of %d differ" % (int(np.sum(h != c)), h.size)
            if not ok or a.v:
                print("%s %s: %s %s" % (name, p, "ok" if ok else "MISMATCH", msg))
            if not ok:
                bad += 1
                if a.v:
                    idx = np.argwhere((h != c) if dt not in TOL else ((diff > TOL[dt] * scale) | np.isnan(diff)))[:8]
                    for i in idx:
                        t = tuple(i)
                        print("   at %s: host %r cuda %r" % (t, h[t], c[t]))
    print("%s: %s" % (os.path.basename(a.pk), "ok" if not bad else "%d mismatches" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
