#!/bin/bash
# wip-ctime4's one device call (run from the repository root of /work/main's
# copy, the carry in .ctime4-carry): GPU tests of new (split-loops off) on
# the touched kernels, with compute-sanitizer; the attention benchmark
# new/base then div; bench_gpu new and base
# (matmul); causal_softmax new/base alternating.
C=.ctime4-carry
set -u
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
date -u
for v in new; do
  ( export OUT=$R/tests-$v; mkdir -p $OUT; timeout 110 test/gpu/run.sh run $C/gpu-$v --budget 85 ) > $R/tests-$v.log 2>&1
  echo "tests $v rc=$?"; tail -2 $R/tests-$v.log
done
date -u
for r in 1; do
  ( export OUT=$R/attn$r; mkdir -p $OUT; timeout 120 bench/gpu/attention.sh run $C/attn ) > $R/attn$r.log 2>&1; echo "attn$r rc=$?"
  ( export OUT=$R/attn-div$r; mkdir -p $OUT; timeout 60 bench/gpu/attention.sh run $C/attn-div ) > $R/attn-div$r.log 2>&1; echo "attn-div$r rc=$?"
done
date -u
for v in new base; do
  ( export OUT=$R/bn-$v; mkdir -p $OUT; timeout 40 $C/bn-$v/bench/bench_gpu --only matmul-f16,matmul-bf16 --json $R/bn-$v.json ) > $R/bn-$v.log 2>&1; echo "bn-$v rc=$?"; tail -4 $R/bn-$v.log
done
for r in 1 2 3; do for v in new base; do timeout 20 $C/cs-$v/cs_time cs-$v; done; done | tee $R/cs.jsonl
date -u
grep -h "pkc\|base" $R/attn1.log | tail -12
