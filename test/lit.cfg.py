# lit configuration for the pkc test suite.  Run through `make check`
# (test/run_lit.py), or by hand:
#   /usr/lib/llvm-22/bin/lit -sv --param pkc=$PWD/build/bin/pkc test
#
# Substitutions:
#   %pkc      the compiler under test (lit param pkc=PATH; default build/bin/pkc)
#   %exit N   run the rest of the command and succeed only if it exits N:
#             %exit 1 %pkc -fsyntax-only %s 2>&1 | FileCheck %s
#   %python   the Python running lit
#   %samples  the samples/ directory
#   %build    the build directory (build/ or build/asan/): unit tests, libpkrt
#   %root     the repository root
#   %pyenv    the Python virtualenv with jax for the Pallas fidelity tests
#             (build/pyenv, `make pyenv`; lit param pyenv=DIR); the lit
#             feature `pallas` is set when %pyenv/bin/python exists
#   %cflags   flags for C programs linked with %build/lib/libpkrt.a: the
#             sanitizer flags when %build is a SANITIZE=1 build (build/asan)
# plus lit's own %s %S %t %T.  FileCheck, not and count come from LLVM 22.
import os
import sys

import lit.formats

config.name = "pkc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".pk", ".test"]
# Inputs/ hold files that tests read (includes...), not tests; fuzz/ holds
# the fuzzer's seeds; tools/ the helper scripts.
config.excludes = ["Inputs", "fuzz", "tools", "lit.cfg.py", "run_lit.py"]

test_root = os.path.dirname(os.path.abspath(__file__))
repo_root = os.path.dirname(test_root)
config.test_source_root = test_root

build_dir = lit_config.params.get("build_dir", os.path.join(repo_root, "build"))
config.test_exec_root = os.path.join(build_dir, "test")

pkc = lit_config.params.get("pkc", os.path.join(build_dir, "bin", "pkc"))
pkc = os.path.abspath(pkc)
if not os.path.exists(pkc):
    lit_config.warning("pkc binary %s does not exist (run make first)" % pkc)

llvm_bin = lit_config.params.get("llvm_bin", "/usr/lib/llvm-22/bin")

config.substitutions.append(("%pkc", pkc))
config.substitutions.append(("%exit", "bash %s" % os.path.join(test_root, "tools", "exit.sh")))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%samples", os.path.join(repo_root, "samples")))
# %build: the build directory (unit-test programs, libpkrt); %root: the repository.
config.substitutions.append(("%build", os.path.abspath(build_dir)))
config.substitutions.append(("%root", repo_root))

# %pyenv and the feature `pallas` (test/pallas/: pkc vs Pallas interpret mode).
# Always build/pyenv, also for a SANITIZE=1 build_dir.  `make check` makes it
# first and sets PKC_REQUIRE_PALLAS=1: then a missing env is an error rather
# than a silent UNSUPPORTED for every fidelity test.
pyenv = os.path.abspath(lit_config.params.get("pyenv", os.path.join(repo_root, "build", "pyenv")))
config.substitutions.append(("%pyenv", pyenv))
if os.path.exists(os.path.join(pyenv, "bin", "python")):
    config.available_features.add("pallas")
elif os.environ.get("PKC_REQUIRE_PALLAS") == "1":
    lit_config.fatal("%s/bin/python does not exist: the Pallas fidelity tests (test/pallas) "
                     "need it (run `make pyenv`)" % pyenv)
else:
    lit_config.warning("%s/bin/python does not exist: the Pallas fidelity tests (test/pallas) "
                       "are UNSUPPORTED; `make pyenv` makes it" % pyenv)
# compare.py sets them too: JAX on the CPU only; no __pycache__ in the tree.
config.environment["JAX_PLATFORMS"] = "cpu"
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
# %cflags: programs linked with a sanitized libpkrt need the same flags
# (the Makefile's SAN_FLAGS for SANITIZE=1, which builds into build/asan).
san_flags = "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
is_asan = os.path.basename(os.path.normpath(build_dir)) == "asan"
config.substitutions.append(("%cflags", lit_config.params.get("cflags", san_flags if is_asan else "")))

# FileCheck, not, count first on PATH; keep the rest of PATH for the shell
# tools tests use (cat, rm, test...).
config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])
# Diagnostics must not depend on the caller's terminal or locale.
config.environment["LC_ALL"] = "C"
config.environment.pop("NO_COLOR", None)
# Sanitized builds: fail loudly on the first error, report leaks and uses
# of a returned frame (an exit handler reading a GpuOutput of main's frame).
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
# GPU targets (compiler/cuda/GPU-DESIGN.md):
#   feature `ptxas`: the CUDA assembler, found as pkc finds it (PATH, then
#     /usr/local/cuda/bin); tests that assemble GPU code REQUIRE it, so they
#     are UNSUPPORTED (never silently passing) on a machine without it;
#     %ptxas runs it.
#   feature `gpu-emu` and %gpu-emu: test/gpu-emu/run.py, which runs the CUDA
#     variant of kernels emulated on the CPU against the host variant (needs
#     clang and numpy; no GPU).
import shutil
_ptxas = shutil.which("ptxas", path=os.environ.get("PATH", "")) or \
    ("/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
if _ptxas:
    config.available_features.add("ptxas")
config.substitutions.append(("%ptxas", _ptxas or "ptxas"))
import subprocess
_emu_python = None
for _py in [sys.executable, shutil.which("python3"), os.path.join(pyenv, "bin", "python")]:
    if _py and os.access(_py, os.X_OK) and subprocess.call([_py, "-c", "import numpy"], stdout=subprocess.DEVNULL,
                                                           stderr=subprocess.DEVNULL) == 0:
        _emu_python = _py
        break
if _emu_python and os.access(os.path.join(llvm_bin, "clang"), os.X_OK):
    config.available_features.add("gpu-emu")
config.substitutions.append(("%gpu-emu", "%s %s --pkc %s" % (_emu_python or sys.executable,
                                                            os.path.join(test_root, "gpu-emu", "run.py"), pkc)))
