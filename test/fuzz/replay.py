#!/usr/bin/env python3
"""replay.py --pkc PKC FILE|DIR... - runs each .pk input through pkc on every
target and fails if any run crashes: an exit status other than 0 (compiled)
or 1 (a diagnostic), a signal, or more than --timeout seconds.

An input is compiled as the whole-pipeline fuzzer (fuzz_pipeline.c) compiles
it: its -D options come from its own text ("-DNAME=VALUE" or "-D NAME=VALUE",
the value up to the next white space and at most 40 characters, 16 names at
most), -O is 0 or 1 by the same hash of the input, and for mosaic-tpu every
size symbol pkc asks for ("give it with -D NAME=VALUE") gets 128.  It runs
for --target=host, host,sm_80, host,sm_86,sm_90a and sm_90a (with
--ptxas=none: PTX only, as the fuzzer) and for mosaic-tpu (MLIR text,
bytecode or the custom call, by the hash).  Used by the lit test of the
regression corpus test/fuzz/regress (test/cli/fuzz-regressions.test)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MAX_DEFINES = 16
MAX_DEFINE_VALUE = 40
SIZE_DEFAULT = b"128"
DEFINE = re.compile(rb"-D ?([A-Za-z_][A-Za-z0-9_]*)=([\x21-\x7e\x80-\xff]{1,%d})" % MAX_DEFINE_VALUE)
NEEDS_SIZE = re.compile(rb"give it with -D ([A-Za-z_][A-Za-z0-9_]*)=VALUE")
HOST_CUDA = ["host", "host,sm_80", "host,sm_86,sm_90a", "sm_90a"]
MOSAIC_EMIT = ["mlir", "mlir", "mlirbc", "tpu-custom-call"]


def fnv1a(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def defines(text):
    """The -D options of the text, as fuzz_pipeline.c's scan_defines finds them."""
    found = {}
    i = 0
    while len(found) < MAX_DEFINES:
        m = DEFINE.search(text, i)
        if not m:
            break
        found[m.group(1)] = m.group(2)  # a later one wins, as in pkc
        i = m.start() + 1
    return [b"-D" + k + b"=" + v for k, v in found.items()]


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return None, b"timed out"


def replay(pkc, path, tmp, timeout):
    """Yields (command, status, stderr) for every pkc run of one input."""
    with open(path, "rb") as f:
        text = f.read()
    h = fnv1a(text)
    opt = "-O1" if (h >> 6) % 4 == 0 else "-O0"
    dflags = defines(text)
    out = os.path.join(tmp, "out.o")
    for target in HOST_CUDA:
        cmd = [pkc, "--target=" + target, "--ptxas=none", opt] + dflags + [path, "-o", out]
        yield (cmd,) + run(cmd, timeout)
    mosaic = [pkc, "--target=mosaic-tpu", "--emit=" + MOSAIC_EMIT[(h >> 8) % 4]] + dflags
    cmd = mosaic + [path, "-o", os.path.join(tmp, "out.mlir")]
    status, err = run(cmd, timeout)
    sizes = [b"-D" + n + b"=" + SIZE_DEFAULT for n in dict.fromkeys(NEEDS_SIZE.findall(err))]
    if status == 1 and sizes:
        cmd = mosaic + sizes + [path, "-o", os.path.join(tmp, "out.mlir")]
        status, err = run(cmd, timeout)
    yield cmd, status, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pkc", required=True)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    files = []
    for p in args.inputs:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if not f.startswith("."))
        else:
            files.append(p)
    runs = failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            for cmd, status, err in replay(args.pkc, path, tmp, args.timeout):
                runs += 1
                if status in (0, 1):
                    continue
                failures += 1
                shown = " ".join(os.fsdecode(c) for c in cmd)
                print("replay: FAIL %s: exit %s: %s" % (path, status, shown))
                print("  " + err.decode("utf-8", "replace")[-2000:].replace("\n", "\n  "))
    print("replay: %d files, %d runs, %d crashed" % (len(files), runs, failures))
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
