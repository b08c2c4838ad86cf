#!/usr/bin/env bash
# bench/gpu/decode_profile.sh DIR - on the GPU machine: Nsight Compute on pkc's decode
# attention split kernel (one launch of each variant built by `bench/gpu/decode.sh build DIR`,
# after warm-ups) and the SASS of each cubin; the summary lines are printed, everything lands
# in $OUT/prof/ and is packed as $OUT/decode-prof.tar.gz.  VARIANTS (default: every pkc-*
# directory) narrows it.
set -u
D=${1:-build/gpu-decode}
# shellcheck source=bench/gpu/ncu_util.sh
. "$(dirname "$0")/ncu_util.sh"
ncu_dir prof
SECS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy
      --section LaunchStats --section MemoryWorkloadAnalysis"
SUMMARY="Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Achieved Occupancy|Theoretical Occupancy|Registers Per|Waves Per SM|Warp Cycles Per Issued|Stall"
for d in ${VARIANTS:-$D/pkc-*}; do
	v=$(basename "$d")
	[ -x "$d/bench_decode" ] || continue
	"$CUOBJ" -sass "$d/da.cubin" >"$P/$v.sass" 2>&1
	ncu_profile "$P" "$v" '^decode_attention$' 3 "$SECS" "$SUMMARY" "$d/bench_decode" --reps 1 --warmup 3
done
tar -C "$OUT" -czf "$OUT/decode-prof.tar.gz" prof && rm -rf "$P"
