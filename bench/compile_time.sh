#!/usr/bin/env bash
# bench/compile_time.sh [PKC] - how long pkc takes, as a build sees it:
# whole-process runs (start-up, LLVM initialisation, all passes, code
# generation at the default -O3, ptxas, writing the object and the header),
# each BENCH_RUNS (default 10) times after one warm-up run; per case the
# median and the minimum wall time, and the minimum CPU time (user + system
# of pkc and its ptxas children: above the wall time when ptxas runs beside
# pkc) of
#   pkc samples/softmax.pk -o <tmp>/x.o          (target: < 50 ms)
# and, for scale, samples/add_vectors.pk and --emit=ir (no LLVM) of softmax;
# with ptxas (PATH or /usr/local/cuda/bin), the CUDA target:
#   pkc samples/matmul.pk --target=sm_90a -o <tmp>/m.o  (target: < 100 ms)
#   pkc samples/flash_attention.pk --target=host,sm_90a -o <tmp>/f.o
#                                                  (target: < 150 ms, issue 14)
# and their parts: pkc with --ptxas=none, ptxas -O3 alone on their PTX and
# on add_vectors' (ptxas' own floor), flash_attention's host variant alone,
# and one pkc -ftime-report of each; then bench/frontend.sh: pkc
# -fsyntax-only on a generated 10,000-line file.  The machine's load
# average is printed before and after: other work distorts the figures
# (the minimum suffers least, and the verdicts are on it); run it as
# `nice -n 0 bench/compile_time.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
pkc=${1:-build/bin/pkc}
runs=${BENCH_RUNS:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Other work on the machine (a build, a test run) distorts the figures: say so.
read -r load1 _ </proc/loadavg
if awk -v l="$load1" -v n="$(nproc)" 'BEGIN { exit !(l > n - 0.5) }'; then
	echo "warning: load average $load1 on $(nproc) CPUs: other work is running, the figures below are unreliable" >&2
fi
echo "== pkc compile time: $(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
ptxas=$(command -v ptxas || true)
if [ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ]; then
	ptxas=/usr/local/cuda/bin/ptxas
fi
if [ -n "$ptxas" ]; then
	"$pkc" samples/matmul.pk --target=sm_90a --emit=ptx -o "$work/matmul.ptx"
	"$pkc" samples/add_vectors.pk --target=sm_90a --emit=ptx -o "$work/add.ptx"
	"$pkc" samples/flash_attention.pk --target=sm_90a --emit=ptx -o "$work/fa.ptx"
fi
python3 - "$pkc" "$work" "$runs" "$ptxas" <<'PY'
import os, statistics, subprocess, sys, time
pkc, work, runs, ptxas = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
cases = [
    ("pkc samples/softmax.pk -o x.o", [pkc, "samples/softmax.pk", "-o", work + "/x.o"], 50),
    ("pkc samples/add_vectors.pk -o x.o", [pkc, "samples/add_vectors.pk", "-o", work + "/x.o"], None),
    ("pkc --emit=ir samples/softmax.pk -o x.ir", [pkc, "--emit=ir", "samples/softmax.pk", "-o", work + "/x.ir"], None),
]
fa = [pkc, "samples/flash_attention.pk"]
if ptxas:
    cases += [
        ("pkc samples/matmul.pk --target=sm_90a -o m.o",
         [pkc, "samples/matmul.pk", "--target=sm_90a", "-o", work + "/m.o"], 100),
        ("  the same with --ptxas=none",
         [pkc, "samples/matmul.pk", "--target=sm_90a", "--ptxas=none", "-o", work + "/m.o"], None),
        ("  ptxas -O3 alone on its PTX",
         [ptxas, "-arch=sm_90a", "-O3", work + "/matmul.ptx", "-o", work + "/m.cubin"], None),
        ("  ptxas -O3 on add_vectors' PTX",
         [ptxas, "-arch=sm_90a", "-O3", work + "/add.ptx", "-o", work + "/a.cubin"], None),
        ("pkc samples/flash_attention.pk --target=host,sm_90a",
         fa + ["--target=host,sm_90a", "-o", work + "/f.o"], 150),
        ("  the same with --ptxas=none", fa + ["--target=host,sm_90a", "--ptxas=none", "-o", work + "/f.o"], None),
        ("  --target=sm_90a (no host variant)", fa + ["--target=sm_90a", "-o", work + "/f.o"], None),
        ("  --target=host (the host variant alone)", fa + ["--target=host", "-o", work + "/f.o"], None),
        ("  ptxas -O3 alone on its PTX",
         [ptxas, "-arch=sm_90a", "-O3", work + "/fa.ptx", "-o", work + "/f.cubin"], None),
    ]
else:
    print("(no ptxas: the CUDA cases are left out)")

def run(cmd):
    """Wall seconds and CPU seconds (user + system, its children included)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("failed (%d): %s" % (p.returncode, " ".join(cmd)))
    return wall, ru.ru_utime + ru.ru_stime

print("%-52s %9s %9s %9s  (ms, %d runs)" % ("", "median", "min wall", "min CPU", runs))
for name, cmd, target in cases:
    run(cmd)  # warm the page cache
    walls, cpus = zip(*(run(cmd) for _ in range(runs)))
    med = statistics.median(walls)
    verdict = "" if target is None else ("  (target < %d ms: %s)" % (target, "met" if min(walls) * 1e3 < target else "NOT met"))
    print("%-52s %9.1f %9.1f %9.1f%s" % (name, med * 1e3, min(walls) * 1e3, min(cpus) * 1e3, verdict))
PY
if [ -n "$ptxas" ]; then
	for args in "samples/matmul.pk --target=sm_90a" "samples/flash_attention.pk --target=host,sm_90a"; do
		echo "one run of pkc -ftime-report $args:"
		# shellcheck disable=SC2086 # two words on purpose
		"$pkc" -ftime-report $args -o "$work/t.o" 2>"$work/time.txt"
		grep -v ' 0\.[0-9][0-9] ms$' "$work/time.txt" | sed 's/^/  /'
	done
fi
BENCH_RUNS=$runs bench/frontend.sh "$pkc"
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
