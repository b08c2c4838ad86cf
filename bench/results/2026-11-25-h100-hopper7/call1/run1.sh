#!/usr/bin/env bash
# Device call 1 of helper hopper7 (issue 13): user matmuls of main ("main")
# and the branch wip-hopper7 ("br": the copy engine's pipelines release
# each buffer on an "empty" mbarrier, no CTA barrier per iteration),
# interleaved rounds, cuBLAS once; SASS of both; bench_gpu's matmul of
# both; the branch's GPU tests (tma/sched/wgmma/epilogue/persistent/flash
# rows, sanitizer rows included).  Run from the repository root of the
# device's copy of main, .hopper7-carry carried.
set -u
export PATH=$PATH:/usr/local/cuda/bin
C=.hopper7-carry
R=$OUT/r; mkdir -p "$R"
# The branch's test/gpu/run.sh (its sanitizer rows tma-k1, tma-long) over main's copy.
cp "$C/test-gpu-run.sh" test/gpu/run.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$R/smi.txt"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/gpu/cublas_shapes.py >"$R/cublas.log" 2>&1
for round in 1 2; do
	order="main br"; [ "$round" = 2 ] && order="br main"
	for b in $order; do
		PK_DEVICE=cuda timeout 60 "$C/um-$b/matmul_user" >"$R/user-$b$round.log" 2>&1
	done
done
for round in 1 2; do
	for b in main br; do
		echo "== $b $round" >>"$R/bench-matmul.log"
		PK_DEVICE=cuda timeout 60 "$C/bench-$b/bench_gpu" --only matmul >>"$R/bench-matmul.log" 2>&1
	done
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv >>"$R/smi.txt"
# SASS: per kernel, HGMMA, UTMALDG, BAR.SYNC, SYNCS (mbarrier ops), LDL, STL.
for b in main br; do
	for f in "$C"/sass-$b/*.cubin; do
		cuobjdump -sass "$f" | awk -v b=$b -v k="$(basename "$f" .cubin)" '
			/Function :/ { if (fn) print b, fn, h, u, s, y, l, t; fn=$3; h=u=s=y=l=t=0 }
			/HGMMA/ {h++} /UTMALDG/ {u++} /BAR.SYNC/ {s++} /SYNCS/ {y++} /LDL/ {l++} /STL/ {t++}
			END { if (fn) print b, fn, h, u, s, y, l, t }'
	done
done >"$R/sass-summary.txt" 2>&1
sed -i '1i build kernel HGMMA UTMALDG BAR.SYNC SYNCS LDL STL' "$R/sass-summary.txt"
OUT=$R/gt timeout 200 test/gpu/run.sh run "$C/gpu" --budget 170 --only 'tma|sched|wgmma|epilogue|persistent|flash' >"$R/gpu-tests.log" 2>&1
echo "gpu tests rc=$?" >>"$R/gpu-tests.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r
