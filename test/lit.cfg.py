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

# FileCheck, not, count first on PATH; keep the rest of PATH for the shell
# tools tests use (cat, rm, test...).
config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])
# Diagnostics must not depend on the caller's terminal or locale.
config.environment["LC_ALL"] = "C"
config.environment.pop("NO_COLOR", None)
# Sanitized builds: fail loudly on the first error, report leaks.
config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
