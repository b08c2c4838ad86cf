#!/usr/bin/env bash
# bench/host.sh [BUILD] - host add_vectors bandwidth against memcpy.
#
# Compiles samples/add_vectors.pk with BUILD/bin/pkc (default build/) and
# links bench/host_add_vectors.c (cc -O3, so its reference C loop is
# vectorised like pkc's code) with it and BUILD/lib/libpkrt.a, in
# BUILD/bench/, then runs it: the pkc kernel on the runtime's pool (every
# CPU this process may use) vs glibc memcpy on 1 and 2 threads and a plain
# C loop; n = 2^26 f32, median of BENCH_RUNS (default 15) runs after 3
# warm-up runs (host_add_vectors.c says what is counted).
#
# Then, to explain the figures: the kernel alone on one thread
# (PK_NUM_THREADS=1), with BLOCK=65536 instead of 1024 (64x fewer
# programs: the runtime's per-program cost), and with -march=native; and
# memcpy with non-temporal stores forced for every size (glibc uses them
# only for copies above glibc.cpu.x86_non_temporal_threshold, so a copy
# split over 2 threads may fall below it and pay for reading the
# destination first).
#
# The load average is printed before and after: other work on the machine
# (a build, a test run) distorts the figures.
# Environment: CC (default cc), BENCH_CFLAGS (extra compile and link flags:
# make bench SANITIZE=1 passes the sanitizer's), BENCH_RUNS, BENCH_LOG2N
# (default 26).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
pkc=$build/bin/pkc
cc=${CC:-cc}
runs=${BENCH_RUNS:-15}
log2n=${BENCH_LOG2N:-26}
out=$build/bench
mkdir -p "$out"

# variant NAME [pkc options...]: builds $out/NAME/host_add_vectors.
variant() {
	local name=$1
	shift
	mkdir -p "$out/$name"
	"$pkc" "$@" samples/add_vectors.pk -o "$out/$name/add_vectors.o"
	$cc -std=c11 -O3 -Wall -Wextra ${BENCH_CFLAGS:-} -I"$out/$name" -Iruntime bench/host_add_vectors.c \
		"$out/$name/add_vectors.o" "$build/lib/libpkrt.a" -lm -pthread -o "$out/$name/host_add_vectors"
}
# Other work on the machine (a build, a test run) distorts the figures: say so.
read -r load1 _ </proc/loadavg
if awk -v l="$load1" -v n="$(nproc)" 'BEGIN { exit !(l > n - 0.5) }'; then
	echo "warning: load average $load1 on $(nproc) CPUs: other work is running, the figures below are unreliable" >&2
fi
variant default
variant block64k -DBLOCK=65536
variant native -march=native

bin=$out/default/host_add_vectors
args=(--log2n "$log2n" --runs "$runs")
echo "== host add_vectors vs memcpy: $(date -u +%Y-%m-%d), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" "${args[@]}"
echo "== the same kernel: 1 thread, BLOCK=65536, -march=native; memcpy with non-temporal stores"
PK_NUM_THREADS=1 "$bin" "${args[@]}" --only pkc | sed 1d
"$out/block64k/host_add_vectors" "${args[@]}" --only pkc --tag " BLOCK=65536" | sed 1d
"$out/native/host_add_vectors" "${args[@]}" --only pkc --tag " -march=native" | sed 1d
GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=0x100000 "$bin" "${args[@]}" --only memcpy \
	--tag " (non-temporal stores)" | sed 1d
echo "== load average $(cut -d' ' -f1-3 /proc/loadavg)"
