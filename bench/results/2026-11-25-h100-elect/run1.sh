#!/usr/bin/env bash
# Device call of helper elect (issue 13): user matmuls of main ("main") and
# the branch wip-elect ("br": warp 0 + elect.sync issue the copy engine's
# copies), interleaved rounds, cuBLAS once; then the branch's GPU tests
# (tma/sched/wgmma/epilogue/persistent/flash rows, sanitizer rows included).
# Run from the repository root of the device's copy of main, .elect-carry carried.
set -u
export PATH=$PATH:/usr/local/cuda/bin
C=.elect-carry
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$R/smi.txt"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu/cublas_shapes.py >"$R/cublas.log" 2>&1
for round in 1 2 3; do
	order="main br"; [ "$round" = 2 ] && order="br main"
	for b in $order; do
		PK_DEVICE=cuda timeout 60 "$C/um-$b/matmul_user" >"$R/user-$b$round.log" 2>&1
	done
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv >>"$R/smi.txt"
OUT=$R/gt timeout 170 test/gpu/run.sh run "$C/gpu" --budget 150 --only 'tma|sched|wgmma|epilogue|persistent|flash' >"$R/gpu-tests.log" 2>&1
echo "gpu tests rc=$?" >>"$R/gpu-tests.log"
PK_CUDA_PERSISTENT_CTAS=3 OUT=$R/gt3 timeout 90 test/gpu/run.sh run "$C/gpu" --budget 70 --no-sanitize \
	--only 'tma|sched|wgmma|epilogue|persistent' >"$R/gpu-tests-3ctas.log" 2>&1
echo "gpu tests (3 CTAs) rc=$?" >>"$R/gpu-tests-3ctas.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r
