#!/usr/bin/env bash
# bench/gpu/decode_profile.sh DIR - on the GPU machine: Nsight Compute on pkc's decode
# attention split kernel (one launch of each variant built by `bench/gpu/decode.sh build DIR`,
# after warm-ups) and the SASS of each cubin; the summary lines are printed, everything lands
# in $OUT/prof/ and is packed as $OUT/decode-prof.tar.gz.  VARIANTS (default: every pkc-*
# directory) narrows it.
set -u
D=${1:-build/gpu-decode}
export OUT=${OUT:-/tmp/out}
P=$OUT/prof
mkdir -p "$P"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
SECS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy
      --section LaunchStats --section MemoryWorkloadAnalysis"
for d in ${VARIANTS:-$D/pkc-*}; do
	v=$(basename "$d")
	[ -x "$d/bench_decode" ] || continue
	"$CUOBJ" -sass "$d/da.cubin" >"$P/$v.sass" 2>&1
	# shellcheck disable=SC2086
	timeout 120 "$NCU" --clock-control none -k regex:'^decode_attention$' --launch-skip 3 --launch-count 1 \
		$SECS -f -o "$P/$v" "$d/bench_decode" --reps 1 --warmup 3 >"$P/$v.ncu.log" 2>&1
	"$NCU" -i "$P/$v.ncu-rep" --page details >"$P/$v.details.txt" 2>&1
	echo "== $v"
	grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Achieved Occupancy|Theoretical Occupancy|Registers Per|Waves Per SM|Warp Cycles Per Issued|Stall" \
		"$P/$v.details.txt" | head -30
done
tar -C "$OUT" -czf "$OUT/decode-prof.tar.gz" prof && rm -rf "$P"
