#!/usr/bin/env bash
# bench/gpu/run.sh [BUILD_DIR] [PEERS_PY] - the GPU benchmark, on the GPU
# machine: pkc's kernels (BUILD_DIR/bench/bench_gpu, built here by
# test/gpu/build.sh; default BUILD_DIR build/gpu) timed with pk events, then
# the peers (PEERS_PY: a copy of /work/shared/anchors/peers.py inside the
# repository, since the device tool copies only the repository; optional),
# then pkc's kernels once more (the spread between the two pkc runs is the
# noise), and the table of bench/gpu/report.py: GB/s or TFLOP/s, ratios to
# the device-to-device copy and to each peer.
#
#   test/gpu/build.sh build/gpu
#   cp /work/shared/anchors/peers.py build/gpu/peers.py     (build/ is ignored: it travels by carry)
#   run(command="bench/gpu/run.sh build/gpu build/gpu/peers.py",
#       carry=["build/gpu"], timeout_s=600)
#
# Writes pkc_bench.json, pkc_bench2.json, peers.json and bench.log under
# $OUT (default /tmp/out).  BENCH_ARGS adds options for bench_gpu (e.g.
# "--reps 50").
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build/gpu}
PEERS=${2:-}
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$OUT/bench.log
: >"$LOG"
BIN=$B/bench/bench_gpu

if [ ! -x "$BIN" ]; then
	echo "bench/gpu/run.sh: $BIN is missing: run test/gpu/build.sh $B here first"
	exit 1
fi
if ! "$BIN" --help >/dev/null 2>&1; then
	echo "bench/gpu/run.sh: $BIN does not start here; relinking"
	test/gpu/build.sh --relink "$B" >>"$LOG" 2>&1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1 |
	tee -a "$LOG"

echo "== pkc, run 1" | tee -a "$LOG"
# shellcheck disable=SC2086
PK_DEVICE=cuda "$BIN" --json "$OUT/pkc_bench.json" ${BENCH_ARGS:-} 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}

if [ -n "$PEERS" ]; then
	if [ -f "$PEERS" ]; then
		echo "== peers: python3 $PEERS (output in $LOG)" | tee -a "$LOG"
		PYTHONUNBUFFERED=1 timeout 420 python3 "$PEERS" >>"$LOG" 2>&1 || echo "peers.py failed (see $LOG)"
		grep -E '^\s+(copy|add|softmax|layernorm|matmul-|compile-)' "$LOG" | tail -n 25
	else
		echo "bench/gpu/run.sh: $PEERS does not exist (copy peers.py into the repository first)"
	fi
	echo "== pkc, run 2" | tee -a "$LOG"
	# shellcheck disable=SC2086
	PK_DEVICE=cuda "$BIN" --json "$OUT/pkc_bench2.json" ${BENCH_ARGS:-} >>"$LOG" 2>&1
fi

python3 bench/gpu/report.py "$OUT/pkc_bench.json" \
	$([ -f "$OUT/pkc_bench2.json" ] && echo "$OUT/pkc_bench2.json") \
	$([ -f "$OUT/peers.json" ] && echo "$OUT/peers.json") | tee -a "$LOG"
exit "$rc"
