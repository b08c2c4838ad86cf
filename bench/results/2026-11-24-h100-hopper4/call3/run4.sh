#!/bin/bash
# hopper4 (session 2) single call: cuBLAS; user matmuls under 8 schedule variants (w/vN, two rounds);
# GPU tests (kernels/ rows incl. sched-wgmma, tma*, wgmma*, matmul*) of 4 variants with sanitizers.
cd "$(dirname "$0")"
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
echo "== cublas $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 90 python3 cublas_shapes.py 2>&1 | tee $OUT/user.log
for r in 1 2; do
  vs="v0 v1 v2 v3 v4 v5 v6 v7 v8"; [ $r = 2 ] && vs="v8 v7 v6 v5 v4 v3 v2 v1 v0"
  for v in $vs; do
    echo "== $v round $r $(date -u +%T)" >> $OUT/user.log
    PK_DEVICE=cuda timeout 40 w/$v/matmul_user --reps 10 --warmup 3 >> $OUT/user.log 2>&1 || echo "$v exit $?" | tee -a $OUT/user.log
  done
done
echo "== cublas-again $(date -u +%T)" | tee -a $OUT/user.log
PYTHONUNBUFFERED=1 timeout 60 python3 cublas_shapes.py 2>&1 | sed 's/^cublas_/cublas2_/' >> $OUT/user.log
grep -c OK $OUT/user.log; grep -i "fail\|mismatch\|exit" $OUT/user.log | head
for g in gv1 gv3 gv5 gv7; do
  echo "== tests $g $(date -u +%T) (elapsed $(( $(date +%s) - T0 ))s)"
  mkdir -p $OUT/$g
  OUT=$OUT/$g timeout 100 tree/test/gpu/run.sh run g/$g --only 'kernels' --budget 90 > $OUT/$g/gpu-tests.log 2>&1
  grep -v "^    " $OUT/$g/gpu-tests.log | grep -v "^PASS" | tail -5
done
echo "done $(date -u +%T) elapsed $(( $(date +%s) - T0 ))s"
