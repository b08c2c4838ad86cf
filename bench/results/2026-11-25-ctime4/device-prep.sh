#!/bin/bash
# wip-ctime4's one device call: builds here everything it needs into $D
# (then copied to the carry /work/main/.ctime4-carry).  Three pkc builds:
#   new  = wip-ctime4 (static LLVM, shared divisions) with split-loops off
#          (PKC_NOSPLIT, an experiment build: /tmp/ct4/pkc-divns)
#   div  = wip-ctime4 (split-loops on)
#   base = /work/main/build/bin/pkc (9ffd235)
set -u
cd /work/wt-ctime4
D=/tmp/ct4/dev; rm -rf $D; mkdir -p $D
NEW=/tmp/ct4/pkc-divns; DIV=/tmp/ct4/pkc.div; BASE=/work/main/build/bin/pkc
export PYTHON=$PWD/build/pyenv/bin/python
ONLY='flash|causal_softmax|divisions|reductions|scratch|split'
for v in new div; do
  P=$NEW; [ $v = div ] && P=$DIV
  PKC=$P PK_GPU_ONLY="$ONLY" nice test/gpu/build.sh $D/gpu-$v > $D/gpu-$v-build.log 2>&1; echo "gpu $v build rc=$?"
done
# attention: new + base in one folder, div in another; d128 causal too
export ATTN_VARIANTS="d64-full:HEAD_DIM=64:CAUSAL=0 d64-causal:HEAD_DIM=64:CAUSAL=1 d128-full:HEAD_DIM=128:CAUSAL=0 d128-causal:HEAD_DIM=128:CAUSAL=1"
PKC=$NEW PKC_BASE=$BASE nice bench/gpu/attention.sh build $D/attn > $D/attn-build.log 2>&1; echo "attn build rc=$?"
PKC=$DIV nice bench/gpu/attention.sh build $D/attn-div > $D/attn-div-build.log 2>&1; echo "attn div build rc=$?"
# bench_gpu (matmul and the rest) for new and base
for v in new base; do
  P=$NEW; [ $v = base ] && P=$BASE
  mkdir -p $D/bn-$v/bench
  for pk in bench/gpu/bench_*.pk; do n=$(basename $pk .pk); $P --target=host,sm_90a $pk -o $D/bn-$v/bench/$n.o -H $D/bn-$v/bench/$n.h || echo "FAIL $v $pk"; done
  cc -std=c11 -O2 -Iruntime -Isamples/common -I$D/bn-$v/bench bench/gpu/bench_gpu.c $D/bn-$v/bench/bench_*.o samples/common/sample_util.c build/lib/libpkrt.a -lm -pthread -ldl -o $D/bn-$v/bench/bench_gpu || echo "FAIL cc bench $v"
done
# causal_softmax (128 divisions a thread: shared) timed on the GPU, new and base (cs_time.c)
for v in new base; do
  P=$NEW; [ $v = base ] && P=$BASE
  mkdir -p $D/cs-$v
  $P samples/causal_softmax.pk --target=host,sm_90a -o $D/cs-$v/cs.o -H $D/cs-$v/causal_softmax.h
  cc -O2 -I$D/cs-$v -Iruntime bench/results/2026-11-25-ctime4/cs_time.c $D/cs-$v/cs.o build/lib/libpkrt.a -lm -pthread -ldl -o $D/cs-$v/cs_time || echo "FAIL cs $v"
done
for v in new div base; do
  P=$NEW; [ $v = div ] && P=$DIV; [ $v = base ] && P=$BASE
  for d in "" "-DHEAD_DIM=128"; do $P --target=sm_90a --emit=ptx $d samples/flash_attention.pk -o $D/fa$d-$v.ptx; done
done
cp bench/results/2026-11-25-ctime4/device-command.sh $D/
find $D -name '*.o' -delete
find $D -type f -perm -u+x | while read f; do file $f | grep -q ELF && strip --strip-debug $f; done
du -sh $D
