#!/bin/bash
# builds everything the one device call needs into /tmp/ctime2/dev (then copied to the carry)
set -u
cd /work/wt-ctime2
D=/tmp/ctime2/dev; rm -rf $D; mkdir -p $D
NEW=$PWD/build/bin/pkc; OLD=/tmp/ctime2/pkc.old
export PYTHON=$PWD/build/pyenv/bin/python
# GPU tests (new build): matmul / epilogue / attention / dots / wgmma rows, samples and exec
PKC=$NEW PK_GPU_ONLY='matmul|epilogue|attention|dot|wgmma|tma|sched|einsum|accum' test/gpu/build.sh $D/gpu > $D/gpu-build.log 2>&1; echo "gpu build rc=$?"
# bench_gpu for new and old
for v in new old; do
  P=$NEW; [ $v = old ] && P=$OLD
  mkdir -p $D/bn-$v/bench
  for pk in bench/gpu/bench_*.pk; do n=$(basename $pk .pk); $P --target=host,sm_90a $pk -o $D/bn-$v/bench/$n.o -H $D/bn-$v/bench/$n.h || echo "FAIL $v $pk"; done
  cc -std=c11 -O2 -Iruntime -Isamples/common -I$D/bn-$v/bench bench/gpu/bench_gpu.c $D/bn-$v/bench/bench_*.o samples/common/sample_util.c build/lib/libpkrt.a -lm -pthread -ldl -o $D/bn-$v/bench/bench_gpu || echo "FAIL cc bench $v"
done
# attention: new + base(old)
PKC=$NEW PKC_BASE=$OLD bench/gpu/attention.sh build $D/attn > $D/attn-build.log 2>&1; echo "attn build rc=$?"
# user matmuls
for v in new old; do
  P=$NEW; [ $v = old ] && P=$OLD
  PKC=$P FORMS="ds" bench/gpu/user_matmul.sh build $D/user-$v u128:128:128:64:4:0 tri:128:256:64:8:3 > $D/user-$v-build.log 2>&1; echo "user $v rc=$?"
done
cp /work/shared/anchors/peers.py /work/shared/anchors/peers_attention.py $D/ 2>/dev/null
find $D -name '*.o' -delete; find $D -name pkc -type f -delete
find $D -type f -perm -u+x | while read f; do file $f | grep -q ELF && strip --strip-debug $f; done
du -sh $D
