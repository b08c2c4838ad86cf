#!/bin/bash
# wip-ctime2's one device call: GPU tests of the new build (compute-sanitizer
# memcheck + racecheck), then old/new timing A/B of the matmul bench (peers
# with the new), attention (base = main's pkc, pkc = wip-ctime2) and user matmuls.
C=.ctime2-carry
set -u
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
date -u
( export OUT=$R/tests; mkdir -p $OUT; timeout 240 test/gpu/run.sh run $C/gpu --budget 180 \
    --only 'matmul|epilogue|attention|dot|wgmma|tma|sched|einsum|accum|softmax' ) > $R/tests.log 2>&1
echo "tests rc=$?"; tail -4 $R/tests.log; date -u
( export OUT=$R/mm-new; mkdir -p $OUT; timeout 150 bench/gpu/run.sh $C/bn-new $C/peers.py ) > $R/mm-new.log 2>&1; echo "mm-new rc=$?"
( export OUT=$R/mm-old; mkdir -p $OUT; timeout 60 bench/gpu/run.sh $C/bn-old ) > $R/mm-old.log 2>&1; echo "mm-old rc=$?"
date -u
( export OUT=$R/attn; mkdir -p $OUT; timeout 90 bench/gpu/attention.sh run $C/attn ) > $R/attn.log 2>&1; echo "attn rc=$?"
date -u
for v in new old new old; do
  ( timeout 40 bench/gpu/user_matmul.sh run $C/user-$v ) >> $R/user-$v.log 2>&1; echo "user-$v rc=$?"
done
date -u
tail -30 $R/attn.log
