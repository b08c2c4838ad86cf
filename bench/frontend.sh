#!/usr/bin/env bash
# bench/frontend.sh [PKC] - times the front end: generates a 10,000-line
# .pk file and reports the median wall time of 10 runs of
# `pkc -fsyntax-only` (the whole process: load, parse, sema, verify).
set -euo pipefail
cd "$(dirname "$0")/.."
pkc=${1:-build/bin/pkc}
lines=${BENCH_LINES:-10000}
runs=${BENCH_RUNS:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 bench/gen_large_pk.py "$lines" >"$work/large.pk"
# The generated file must compile cleanly, or the timing means nothing
"$pkc" -fsyntax-only "$work/large.pk"

python3 - "$pkc" "$work/large.pk" "$runs" <<'PY'
import statistics, subprocess, sys, time
pkc, src, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
nlines = sum(1 for _ in open(src))
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run([pkc, "-fsyntax-only", src], check=True)
    times.append(time.perf_counter() - t0)
med = statistics.median(times)
print("frontend: %d lines, pkc -fsyntax-only, median of %d runs: %.1f ms (min %.1f, max %.1f); %.0f lines/s"
      % (nlines, runs, med * 1e3, min(times) * 1e3, max(times) * 1e3, nlines / med))
PY
