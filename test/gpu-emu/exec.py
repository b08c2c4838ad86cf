#!/usr/bin/env python3
"""Runs the execution tests (test/exec/<name>.{pk,c}) on the CUDA device
path without a GPU: each driver is built as for the GPU (the fat object of
`pkc --target=host,sm_90a`, libpkrt) and run with --device cuda, so its
arrays go through libpkrt's CUDA buffers, copies, streams and launches
(runtime/cuda.c), against the fake CUDA driver (test/runtime/fake_cuda.c)
built with the CPU emulation of the kernels (emu_cta.c) as libcuda.so.1.
The kernels that run are the emulated CUDA kernels
(`PKC_GPU_EMULATE=1 pkc --emit=nvvm`, see emu_cta.c).  Every launch must
reach the CUDA device, on device memory: a host launch (a NULL stream left
in a driver) aborts the program (pk_launch_host is wrapped), and the driver
fails a launch whose pointer arguments are not device memory (a host array
not passed through EX_DEV), checked against the PTX of the entry, and one
that writes outside the device buffers (guard zones around each).

  exec.py --pkc build/bin/pkc --build build --out DIR [--cflags FLAGS]
          [--filecheck FileCheck] [-j N] [name ...]

Prints per test its output lines and the number of CUDA launches, then
"exec.py: N passed, N failed"; exit status 1 if any failed.  With
--filecheck, the output must also match the CHECK lines of <name>.pk."""
import argparse
import concurrent.futures
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLANG = "/usr/lib/llvm-22/bin/clang"

# Linked into every program: a host launch in a CUDA run is a driver bug.
NO_HOST_LAUNCH = r'''
#include <stdio.h>
#include <stdlib.h>
struct pk_host_launch;
int __wrap_pk_launch_host(void *s, const struct pk_host_launch *l)
{
	(void)s;
	fprintf(stderr, "exec.py: a host launch (pk_launch_host of %s) in a CUDA run\n", *(const char *const *)l);
	abort();
}
'''


def sh(cmd, log, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        log.append("$ %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.returncode == 0


def one(a, name, driver_dir):
    """Builds and runs test/exec/<name>: (ok, lines to print)."""
    d = os.path.join(a.out, name)
    os.makedirs(d, exist_ok=True)
    pk, c = os.path.join(ROOT, "test", "exec", name + ".pk"), os.path.join(ROOT, "test", "exec", name + ".c")
    obj, ll, emu_o, exe = (os.path.join(d, name + s) for s in (".o", ".emu.ll", ".emu.o", ""))
    log = []
    env = dict(os.environ, PKC_GPU_EMULATE="1")
    cflags = a.cflags.split()
    # PTX only (no ptxas): the driver checks the kernels' pointer arguments against the PTX.
    ok = (sh([a.pkc, "--target=host,sm_90a", "--ptxas=none", pk, "-o", obj, "-H", os.path.join(d, name + ".h")],
             log) and
          sh([a.pkc, "--target=sm_90a", "--emit=nvvm", pk, "-o", ll], log, env) and
          sh([CLANG, "-O1", "-fPIC", "-c", ll, "-o", emu_o], log) and
          sh(["cc", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"] + cflags +
             ["-I" + d, "-I" + os.path.join(ROOT, "runtime"), "-I" + os.path.join(ROOT, "samples", "common"),
              "-I" + os.path.join(ROOT, "test", "exec"), c, obj, emu_o, os.path.join(driver_dir, "no_host_launch.c"),
              os.path.join(ROOT, "samples", "common", "sample_util.c"),
              os.path.join(a.build, "lib", "libpkrt.a"), os.path.join(driver_dir, "libcuda.so.1"),
              "-Wl,-rpath," + driver_dir, "-Wl,--wrap=pk_launch_host", "-rdynamic", "-lm", "-pthread", "-ldl",
              "-o", exe], log))
    if not ok:
        return False, ["%s: build FAILED" % name] + log
    env = dict(os.environ, PK_CUDA_TRACE="1")
    env.pop("PK_DEVICE", None)
    try:
        r = subprocess.run([exe, "--device", "cuda"], capture_output=True, text=True, env=env, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return False, ["%s: TIMEOUT after %d s" % (name, a.timeout)]
    with open(exe + ".out", "w") as f:
        f.write(r.stdout)
    launches = sum(1 for line in r.stderr.splitlines() if line.startswith("pk-cuda: launch "))
    lines = r.stdout.splitlines()
    ok = (r.returncode == 0 and launches > 0 and any(": device: " in line and "(CUDA device" in line for line in lines)
          and lines and lines[-1].endswith("checks OK"))
    out = [line for line in lines if line.startswith(name + ": ")][:1] + lines[-1:]
    out.append("%s: %d launches on the CUDA device" % (name, launches))
    if ok and a.filecheck:
        fc = subprocess.run([a.filecheck, pk, "--input-file", exe + ".out"], capture_output=True, text=True)
        if fc.returncode != 0:
            ok = False
            out.append("%s: FileCheck %s failed:\n%s" % (name, pk, fc.stderr))
    if not ok:
        out.append("%s: FAILED (exit status %d)" % (name, r.returncode))
        out += [line for line in r.stderr.splitlines() if not line.startswith("pk-cuda: ")][:30]
        out += lines[:-1][:30]
    return ok, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pkc", required=True)
    ap.add_argument("--build", required=True, help="the build directory with lib/libpkrt.a")
    ap.add_argument("--out", required=True, help="where the programs go")
    ap.add_argument("--cflags", default="", help="extra C flags (the sanitizer flags of the build)")
    ap.add_argument("--filecheck", help="FileCheck: check the outputs against <name>.pk's CHECK lines")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per program")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    names = a.names or sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "test", "exec"))
                              if f.endswith(".pk") and os.path.exists(os.path.join(ROOT, "test", "exec", f[:-3] + ".c")))
    # The driver: the fake CUDA driver with the emulator (never sanitized:
    # it stands in for the real driver).
    driver_dir = os.path.join(os.path.abspath(a.out), "emucuda")
    os.makedirs(driver_dir, exist_ok=True)
    with open(os.path.join(driver_dir, "no_host_launch.c"), "w") as f:
        f.write(NO_HOST_LAUNCH)
    log = []
    if not sh([CLANG, "-std=c11", "-O1", "-g", "-fPIC", "-shared", "-pthread", "-Wl,-soname,libcuda.so.1",
               os.path.join(ROOT, "test", "runtime", "fake_cuda.c"), os.path.join(HERE, "emu_cta.c"),
               "-o", os.path.join(driver_dir, "libcuda.so.1"), "-lm", "-ldl"], log):
        print("".join(log) + "exec.py: the emulating driver did not build\nexec.py: 0 passed, %d failed" % len(names))
        return 1
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        results = list(pool.map(lambda n: one(a, n, driver_dir), names))
    for ok, lines in results:
        print("\n".join(lines))
        passed, failed = passed + ok, failed + (not ok)
    print("exec.py: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
