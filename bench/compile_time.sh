#!/usr/bin/env bash
# bench/compile_time.sh [PKC] - how long pkc takes, as a build sees it: the
# median wall time of BENCH_RUNS (default 10) whole-process runs (start-up,
# LLVM initialisation, all passes, code generation at the default -O3,
# writing the object and the header) of
#   pkc samples/softmax.pk -o <tmp>/x.o          (target: < 50 ms)
# and, for scale, samples/add_vectors.pk and --emit=ir (no LLVM) of softmax;
# with ptxas (PATH or /usr/local/cuda/bin), the CUDA target:
#   pkc samples/matmul.pk --target=sm_90a -o <tmp>/m.o  (target: < 100 ms)
# and its parts: pkc with --ptxas=none, ptxas -O3 alone on matmul's PTX and
# on add_vectors' (ptxas' own floor), and one pkc -ftime-report of it;
# then bench/frontend.sh: pkc -fsyntax-only on a generated 10,000-line file.
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
fi
python3 - "$pkc" "$work" "$runs" "$ptxas" <<'PY'
import statistics, subprocess, sys, time
pkc, work, runs, ptxas = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
cases = [
    ("pkc samples/softmax.pk -o x.o", [pkc, "samples/softmax.pk", "-o", work + "/x.o"], 50),
    ("pkc samples/add_vectors.pk -o x.o", [pkc, "samples/add_vectors.pk", "-o", work + "/x.o"], None),
    ("pkc --emit=ir samples/softmax.pk -o x.ir", [pkc, "--emit=ir", "samples/softmax.pk", "-o", work + "/x.ir"], None),
]
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
    ]
else:
    print("(no ptxas: the CUDA case is left out)")
for name, cmd, target in cases:
    subprocess.run(cmd, check=True)  # warm the page cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    verdict = "" if target is None else ("  (target < %d ms: %s)" % (target, "met" if med * 1e3 < target else "NOT met"))
    print("%-46s median of %d runs: %6.1f ms (min %.1f, max %.1f)%s"
          % (name, runs, med * 1e3, min(times) * 1e3, max(times) * 1e3, verdict))
PY
if [ -n "$ptxas" ]; then
	echo "one run of pkc -ftime-report samples/matmul.pk --target=sm_90a:"
	if "$pkc" -ftime-report samples/matmul.pk --target=sm_90a -o "$work/m.o" 2>"$work/time.txt"; then
		sed 's/^/  /' "$work/time.txt"
	else
		echo "  (this pkc has no -ftime-report)"
	fi
fi
BENCH_RUNS=$runs bench/frontend.sh "$pkc"
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
