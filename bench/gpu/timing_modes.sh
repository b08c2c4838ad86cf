#!/usr/bin/env bash
# bench/gpu/timing_modes.sh DIR... - on the GPU machine: every benchmark
# program built under DIR (bench_decode, bench_paged, bench_attention,
# bench_attention_bwd of the decode.sh, attention.sh and attention_bwd.sh
# build directories, matmul_user of user_matmul.sh, bench_gpu)
# timed both ways bench_time.h knows, two rounds interleaved:
#   queued  the default: the timed launches queued back to back, as
#           triton.testing.do_bench times the peers
#   sync    PK_BENCH_SYNC_EACH=1: the stream waited for after each timed
#           launch, so that the host's time to issue the next one counts
#           (how figures were timed before 2026-11-30's nineteenth session)
# Rows go to stdout prefixed with the round, the mode and the directory;
# MODES narrows the modes, ROUNDS sets the rounds (2), ARGS adds options to
# every program (e.g. "--only softmax,layernorm" for bench_gpu).
set -u
[ $# -ge 1 ] || { echo "usage: $0 DIR..." >&2; exit 2; }
cd "$(dirname "$0")/../.." || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
for round in $(seq 1 "${ROUNDS:-2}"); do
	for d in "$@"; do
		for p in "$d"/bench_decode "$d"/bench_paged "$d"/bench_attention "$d"/bench_attention_bwd \
			"$d"/matmul_user "$d"/bench_gpu; do
			[ -x "$p" ] || continue
			for m in ${MODES:-queued sync}; do
				case $m in
				queued) sync=0 ;;
				sync) sync=1 ;;
				*) echo "timing_modes.sh: the modes are queued and sync" >&2; exit 2 ;;
				esac
				# shellcheck disable=SC2086
				PK_BENCH_SYNC_EACH=$sync "$p" ${ARGS:-} 2>&1 | sed "s|^|round $round $m $d: |"
			done
		done
	done
done
