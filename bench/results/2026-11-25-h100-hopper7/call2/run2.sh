#!/usr/bin/env bash
# Device call 2 of helper hopper7 (issue 13): user matmuls and bench_gpu's
# matmul of main and two variants of the release (v1: one arrival per warp
# on the empty barrier, the refill after the dot, stages - 1 ahead; v2: the
# same arrivals, the refill at the top of the next iteration, stages - 2
# ahead), interleaved rounds, cuBLAS once; the tma/sched/epilogue GPU rows
# of both variants with compute-sanitizer.  Run from the repository root of
# the device's copy of main, .hopper7-carry carried.
set -u
export PATH=$PATH:/usr/local/cuda/bin
C=.hopper7-carry
R=$OUT/r; mkdir -p "$R"
cp "$C/test-gpu-run.sh" test/gpu/run.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$R/smi.txt"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu/cublas_shapes.py >"$R/cublas.log" 2>&1
for round in 1 2; do
	order="main v1 v2"; [ "$round" = 2 ] && order="v2 v1 main"
	for b in $order; do
		PK_DEVICE=cuda timeout 60 "$C/um-$b/matmul_user" >"$R/user-$b$round.log" 2>&1
	done
	for b in $order; do
		echo "== $b $round" >>"$R/bench-matmul.log"
		PK_DEVICE=cuda timeout 60 "$C/bench-$b/bench_gpu" --only matmul-f16,matmul-bf16 >>"$R/bench-matmul.log" 2>&1
	done
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv >>"$R/smi.txt"
for v in v1 v2; do
	OUT=$R/gt-$v timeout 100 test/gpu/run.sh run "$C/gpu-$v" --budget 80 --only 'tma|sched-wgmma|wgmma-epilogue' >"$R/gpu-tests-$v.log" 2>&1
	echo "gpu tests rc=$?" >>"$R/gpu-tests-$v.log"
done
cd "$OUT" && rm -rf r/gt-* && tar czf r.tgz r && rm -rf r
