#!/bin/bash
# run_semantics.sh PKC - runs the kernels of test/passes (and two samples)
# through lower-refs and tile-host and executes the tiled IR with
# tiled_interp.py against NumPy references.  Needs python3 with numpy, so
# it is not part of `make check`; run it by hand after changing the passes:
#   test/passes/Inputs/run_semantics.sh build/bin/pkc
set -u
PKC=${1:-build/bin/pkc}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$HERE/..
S=$HERE/../../../samples
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
run() { # run FILE KERNEL ARGS...
	local f=$1 k=$2
	shift 2
	if ! "$PKC" --emit=ir -o /dev/null --dump-after=tile-host "$f" > "$TMP/ir"; then
		echo "FAIL (compile) $k"; fail=1; return
	fi
	if python3 "$HERE/tiled_interp.py" "$TMP/ir" "$k" "$@" > "$TMP/out" 2>&1; then
		echo "ok   $k"
	else
		echo "FAIL $k"; cat "$TMP/out"; fail=1
	fi
}
run "$S/add_vectors.pk" add_vectors --grid 3 --arg x=rand:f32:2500 --arg y=rand:f32:2500 \
	--arg o=zeros:f32:2500 --arg n=val:i64:2500 --out o --expect "x+y"
# grid 4 for 3 rows: the last program's row is out of range (masked point)
run "$S/softmax.pk" softmax --grid 4 --arg x=rand:f32:3,1024 --arg o=zeros:f32:3,1024 --arg rows=val:i64:3 \
	--out o --expect "np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)"
run "$T/gather-masked.pk" mgather --grid 2 --arg x=rand:f32:20 --arg idx=iota:i32:32 --arg o=zeros:f32:32 \
	--arg n=val:i64:20 --out o --expect "np.array([x[(i//16)*16 + i] if (i//16)*16 + i < 20 else -7.0 for i in range(32)])"
run "$T/masked-load-other.pk" shifted --grid 3 --arg x=rand:f32:40 --arg o=zeros:f32:40 --arg s=val:i32:-6 \
	--arg n=val:i64:40 --out o \
	--expect "np.array([(x[b*16+j-10] + 1 if 0 <= b*16+j-10 < 40 else 0.0) if 4 <= j < 12 else 0.0 for b in range(3) for j in range(16)][:40])"
run "$T/reduce-axes.pk" red --arg x=rand:f32:64,32 --arg r0=zeros:f32:32 --arg r1=zeros:f32:64 --arg a1=zeros:i32:64 \
	--arg c0=zeros:f32:64,32 --out r0,r1,a1,c0 --expect "x.sum(0)" --expect "x.max(1)" --expect "x.argmax(1)" \
	--expect "x.cumsum(0)" --tol 1e-4
run "$T/reduce-int.pk" ints --arg x=rand:i32:4,8 --arg mx=zeros:i32:4 --arg mn=zeros:i32:8 --arg s=zeros:i32: \
	--arg am=zeros:i32:4 --arg cs=zeros:i32:4,8 --out mx,mn,s,am,cs --expect "x.max(1)" --expect "x.min(0)" \
	--expect "x.sum()" --expect "x.argmin(1)" --expect "x.cumsum(1)"
run "$T/dot-acc-transposed.pk" da --arg a=rand:f32:32,64 --arg b=rand:f32:16,64 --arg c=rand:f32:32,16 --out c \
	--expect "c + a @ b.T" --tol 1e-3
run "$T/while-tensor-carry.pk" wc --arg x=rand:f32:16 --arg o=zeros:f32:16 --out o \
	--expect "(lambda v: [v := v*0.5+1 for _ in range(10)][-1])(x)"
run "$T/for-tensor-carry.pk" fc --arg x=rand:f32:8,8 --arg o=zeros:f32:8,8 --out o \
	--expect "(lambda a: [a := a.T + x for _ in range(4)][-1])(np.zeros((8,8)))"
run "$T/for-tensor-carry.pk" swap --arg x=rand:f32:8 --arg y=rand:f32:8 --arg o=zeros:f32:8 --arg p=zeros:f32:8 \
	--out o,p --expect "y+2" --expect "x+1"
run "$T/lower-refs-forms.pk" lr --grid 3,3 --arg x=rand:f32:20,4,40 --arg w=rand:f32:8 --arg o=rand:f32:20,40 \
	--arg t=zeros:f32:20,40 --arg m=val:i64:20 --arg n=val:i64:40 --out o,t \
	--expect "o + x[:, 2, :] * np.tile(w, 3)[:20, None]" \
	--expect "(lambda t: [t.__setitem__((r, c), x[r, 2, c]) for bi in range(3) for bj in range(3) for r in [bi*8+3] for c in range(bj*16+2, bj*16+6) if r < 20 and c < 40] and t)(np.zeros((20, 40)))"
run "$T/effects.pk" ifsel --arg x=rand:f32:8 --arg o=zeros:f32:8 --arg c=val:i32:1 --out o --expect "x*2"
run "$T/effects.pk" ifsel --arg x=rand:f32:8 --arg o=zeros:f32:8 --arg c=val:i32:0 --out o --expect "x-1"
run "$T/effects.pk" inplace --arg o=rand:f32:16 --arg p=rand:f32:16 --out o,p --expect "o+1" \
	--expect "np.concatenate([p[:1], p[0:8]+1, p[9:]])"
run "$T/effects.pk" atom --arg h=zeros:i32:8 --arg f=zeros:f32:4 --arg c=zeros:i32:4 --out h,f,c \
	--expect "np.array([0,3,6,9,12,15,0,0])" --expect "np.ones(4)" --expect "np.arange(4)+10"
run "$T/attention-loop.pk" attn --arg q=rand:f32:16,8 --arg k=rand:f32:64,8 --arg v=rand:f32:64,8 --arg o=zeros:f32:16,8 \
	--out o --tol 1e-4 \
	--expect "(lambda s: (np.exp(s - s.max(1, keepdims=True)) / np.exp(s - s.max(1, keepdims=True)).sum(1, keepdims=True)) @ v)(q @ k.T)"
exit $fail
