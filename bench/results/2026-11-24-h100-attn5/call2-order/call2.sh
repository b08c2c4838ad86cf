#!/usr/bin/env bash
# call 2 (attn5): A/B of the attention variants with the peers, GPU tests, sanitizers, a short ncu.
C=.attn5-carry
set -o pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
bench/gpu/attention.sh run $C/a5 $C/peers_attention.py 2>&1 | tee $OUT/bench.log
for t in pkc defer; do
	echo "== tests $t"; test/gpu/run.sh run $C/gt-$t --only flash 2>&1 | tail -n 12 | tee -a $OUT/tests.log
	compute-sanitizer --tool synccheck --error-exitcode 9 $C/gt-$t/samples/flash_attention --device cuda --b 1 --h 2 2>&1 | tail -n 3 | tee -a $OUT/tests.log
done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for v in base-d128-full pkc-d128-full pkc-d64-full pkc-d64-causal defer-d128-full; do
	echo "== ncu $v" | tee -a $OUT/ncu.txt
	timeout 90 $NCU --clock-control none -k regex:'^flash_attention$' --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats $C/a5/$v/bench_attention --reps 1 --warmup 3 2>&1 | grep -E "Duration|DRAM Throughput|L2 Hit Rate|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued" | tee -a $OUT/ncu.txt
done
