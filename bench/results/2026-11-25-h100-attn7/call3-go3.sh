#!/bin/bash
# attn7 call 3: final pkc vs base (forward, with peers; backward d128 b64), GPU tests with sanitizers, SASS
set -u
C=.attn7-carry
OUT=${OUT:-/tmp/out}
export OUT
t0=$(date +%s)
bench/gpu/attention.sh run $C/ab9 $C/peers_attention.py > $OUT/bench.log 2>&1
grep -E "^== |run[12]|sdpa|jax|pallas|best peer" $OUT/bench.log | grep -v '^{' | sed -E 's/ +check OK.*//'
echo "bench took $(( $(date +%s) - t0 )) s"
for r in 1 2; do for v in base pkc; do $C/bw9/$v/bench_attention_bwd --name "$v-b64 run$r" 2>&1 | tee -a $OUT/bwd.jsonl | cut -c1-150; done; done
cuobjdump -sass $C/ab9/pkc-d128-full/fa.cubin > $OUT/sass-pkc-d128.txt 2>&1
t1=$(date +%s)
$C/repo/test/gpu/run.sh run $C/gt9 --budget 170 --only '(flash_attention|tma)' > $OUT/tests.log 2>&1
grep -E "^(PASS|FAIL)|passed" $OUT/tests.log | sed -E 's/ \(.*//' | tail -60
echo "tests took $(( $(date +%s) - t1 )) s"
rm -rf $OUT/gpu-test
