#!/usr/bin/env bash
# call 3 (attn5): A/B of base (main), pkc (program order), tree (+ tree reductions), mbar/mbare/mbarn
# (+ mbarrier cp.async pipeline, warpgroup turns after the wait / after the issue / none), with the
# peers; GPU tests and compute-sanitizer on the candidates; a short ncu.
C=.attn5-carry
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
for d in $C/b/*-d*; do
	if ! timeout 20 $d/bench_attention --reps 3 --warmup 1 --name "sanity $(basename $d)" >>$OUT/sanity.log 2>&1; then
		echo "SANITY FAILED (rc $?): $d" | tee -a $OUT/sanity.log; rm -rf $d
	fi
done
grep -o '"name": "[^"]*".*"check": "[A-Z]*"' $OUT/sanity.log | sed 's/"ms".*"check"/check/' | head -20
timeout 300 bench/gpu/attention.sh run $C/b $C/peers_attention.py >$OUT/bench.log 2>&1
sed -n '/^== d/,$p' $OUT/bench.log
for t in tree mbar mbare; do
	echo "== tests $t" | tee -a $OUT/tests.log
	timeout 150 test/gpu/run.sh run $C/gt-$t --only flash 2>&1 | grep -E "PASS|FAIL|passed" | cut -c1-150 | tee -a $OUT/tests.log
done
san() { # name command...
	echo "== $1" | tee -a $OUT/tests.log; shift
	timeout 90 compute-sanitizer --error-exitcode 9 "$@" 2>&1 | tail -n 2 | tee -a $OUT/tests.log
}
san "synccheck mbar sample" --tool synccheck $C/gt-mbar/samples/flash_attention --device cuda --b 1 --h 2
san "racecheck mbar sample" --tool racecheck $C/gt-mbar/samples/flash_attention --device cuda --b 1 --h 2
san "racecheck mbar kernels/flash_attention-d128" --tool racecheck python3 test/gpu-emu/run.py --run $C/gt-mbar/kernels/flash_attention-d128 --seed 7
san "racecheck mbare sample" --tool racecheck $C/gt-mbare/samples/flash_attention --device cuda --b 1 --h 2
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for v in tree-d128-full mbar-d128-full mbare-d128-full mbar-d64-full; do
	[ -d $C/b/$v ] || continue
	echo "== ncu $v" | tee -a $OUT/ncu.txt
	timeout 60 $NCU --clock-control none -k regex:'^flash_attention$' --launch-skip 3 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats $C/b/$v/bench_attention --reps 1 --warmup 3 2>&1 | grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" | tee -a $OUT/ncu.txt
done
