#!/usr/bin/env bash
# Device call 3 of helper hopper7 (issue 13): user matmuls and bench_gpu's
# matmul of main and two variants of the release whose waits end on
# vote.sync.all (warp-uniform to ptxas: v3, the refill after the dot,
# stages - 1 ahead; v4, the refill at the top of the next iteration,
# stages - 2 ahead), interleaved rounds, cuBLAS once; SASS counts of the
# variants; the tma/sched/epilogue GPU rows of both with compute-sanitizer.
# Run from the repository root of the device's copy of main,
# .hopper7-carry carried.
set -u
export PATH=$PATH:/usr/local/cuda/bin
C=.hopper7-carry
R=$OUT/r; mkdir -p "$R"
cp "$C/test-gpu-run.sh" test/gpu/run.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$R/smi.txt"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu/cublas_shapes.py >"$R/cublas.log" 2>&1
for round in 1 2; do
	order="main v3 v4"; [ "$round" = 2 ] && order="v4 v3 main"
	for b in $order; do
		PK_DEVICE=cuda timeout 60 "$C/um-$b/matmul_user" >"$R/user-$b$round.log" 2>&1
	done
	for b in $order; do
		echo "== $b $round" >>"$R/bench-matmul.log"
		PK_DEVICE=cuda timeout 60 "$C/bench-$b/bench_gpu" --only matmul-f16,matmul-bf16 >>"$R/bench-matmul.log" 2>&1
	done
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv >>"$R/smi.txt"
for b in main v3 v4; do
	cuobjdump -sass "$C/sass/$b.cubin" | awk -v b=$b '
		/Function :/ { if (fn) print b, fn, h, u, s, y, r, v, l, t; fn=$3; h=u=s=y=r=v=l=t=0 }
		/HGMMA/ {h++} /UTMALDG/ {u++} /BAR.SYNC/ {s++} /SYNCS/ {y++} /R2UR/ {r++} /VOTE/ {v++} /LDL/ {l++} /STL/ {t++}
		END { if (fn) print b, fn, h, u, s, y, r, v, l, t }'
done >"$R/sass-summary.txt" 2>&1
sed -i '1i build kernel HGMMA UTMALDG BAR.SYNC SYNCS R2UR VOTE LDL STL' "$R/sass-summary.txt"
for v in v3 v4; do
	OUT=$R/gt-$v timeout 100 test/gpu/run.sh run "$C/gpu-$v" --budget 80 --only 'tma|sched-wgmma|wgmma-epilogue' >"$R/gpu-tests-$v.log" 2>&1
	echo "gpu tests rc=$?" >>"$R/gpu-tests-$v.log"
done
cd "$OUT" && rm -rf r/gt-* && tar czf r.tgz r && rm -rf r
