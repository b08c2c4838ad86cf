#!/usr/bin/env bash
# bench/gpu/user_matmul.sh build|run DIR [CONFIG...] - matmuls written the
# way users write them (issue 13), timed on the GPU against cuBLAS in the
# same command: each CONFIG is NAME:BM:BN:BK:WARPS[:STAGES[:relu]] (STAGES
# 0 or left out: no num_stages, the default; relu: z = max(acc, 0) fused
# before the cast), built in two forms, f16 and bf16:
#   spec  BlockSpecs [BM, K] / [K, BN] with K a constant (one kernel per K
#         of the shapes), `ds` slices of them in the K loop;
#   ds    whole arrays of run-time size, `ds` on them (run-time K), and
#   ds16  the same with `requires` proving 16-byte rows (as Triton's
#         divisibility specialisation);
#   whole BlockSpecs [BM, K] / [K, BN] as in spec and one dot over the
#         whole K, no loop (the Pallas quickstart's form, samples/matmul.pk;
#         BK unused), not in the default FORMS;
#   wholeu the same without `requires n % 16 == 0` (any N: odd N runs the
#         entry of unaligned rows), not in the default FORMS.
# The driver (bench/gpu/matmul_user.c) runs every kernel on the shapes
# M x N x K 8192^3, 4096^3, 8192x8192x1024, 16384x1024x4096 (spec kernels
# on those of their K), checks 1024 sampled elements against a double
# reference, and prints TFLOP/s (median of --reps launches); with
# PEERS=1 run also times cuBLAS (bench/gpu/cublas_shapes.py) first.
# FORMS (default "spec ds ds16") and KS (the spec kernels' K, default
# "8192 4096 1024") narrow the build.  SHAPES="MxNxK ..." at run time
# replaces the shapes (driver and cuBLAS alike).  CUBIN=1 also writes
# DIR/user.cubin (sm_90a alone) for cuobjdump -sass on the GPU machine.
#
#   bench/gpu/user_matmul.sh build build/user     here (needs pkc)
#   bench/gpu/user_matmul.sh run build/user       on the GPU machine
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
B=${2:-}
[ -n "$mode" ] && [ -n "$B" ] || { echo "usage: $0 build|run DIR [NAME:BM:BN:BK:WARPS:STAGES...]" >&2; exit 2; }
shift 2
PKC=${PKC:-build/bin/pkc}
LIB=${LIBPKRT:-build/lib/libpkrt.a}
CC=${CC:-cc}
configs=${*:-"first:128:128:32:4:0 tri:128:256:64:8:3 k64:128:128:64:4:0 k128:128:128:128:4:0 bench:128:128:32:4:4 n256:64:256:32:4:4"}
KS=${KS:-"8192 4096 1024"}   # the K of the spec kernels
FORMS=${FORMS:-"spec ds ds16"}

# spec NAME BM BN BK W S DT K / whole NAME BM BN W S DT K / ds NAME BM BN
# BK W S DT REQ: one kernel, its epilogue from $epi.
epilogue() { if [ "$epi" = relu ]; then echo "max(acc, 0.0).astype($1)"; else echo "acc.astype($1)"; fi; }
params() { if [ "$2" = 0 ]; then echo "params(num_warps = $1)"; else echo "params(num_warps = $1, num_stages = $2)"; fi; }
# The head of a kernel of BlockSpecs [BM, K] / [K, BN]: NAME FORM DT K BM BN W S.
spec_head() {
	local nm=$1 form=$2 dt=$3 K=$4 bm=$5 bn=$6 w=$7 s=$8 req="requires n % 16 == 0"
	[ "$form" = wholeu ] && req=""
	cat <<PK
kernel ${nm}_${form}${K}_$dt(x: in $dt[m, $K], y: in $dt[$K, n], z: out $dt[m, n])
    grid(cdiv(m, $bm), cdiv(n, $bn))
    spec x: [$bm, $K] (i, j) -> (i, 0)
    spec y: [$K, $bn] (i, j) -> (0, j)
    spec z: [$bm, $bn] (i, j) -> (i, j)
    $req
    $(params "$w" "$s")
PK
}
spec() {
	local nm=$1 bm=$2 bn=$3 bk=$4 w=$5 s=$6 dt=$7 K=$8
	spec_head "$nm" spec "$dt" "$K" "$bm" "$bn" "$w" "$s"
	cat <<PK
{
    var acc = zeros(($bm, $bn), f32);
    for kk in range(cdiv($K, $bk)) {
        acc += dot(x[:, ds(kk * $bk, $bk)], y[ds(kk * $bk, $bk), :], acc = f32);
    }
    z[...] = $(epilogue "$dt");
}
PK
}
whole() {
	local nm=$1 bm=$2 bn=$3 w=$4 s=$5 dt=$6 K=$7 form=${8:-whole}
	spec_head "$nm" "$form" "$dt" "$K" "$bm" "$bn" "$w" "$s"
	cat <<PK
{
    let acc = dot(x[...], y[...], acc = f32);
    z[...] = $(epilogue "$dt");
}
PK
}
ds() {
	local nm=$1 bm=$2 bn=$3 bk=$4 w=$5 s=$6 dt=$7 req=$8 form=ds
	[ -n "$req" ] && form=ds16
	cat <<PK
kernel ${nm}_${form}_$dt(x: in $dt[m, k], y: in $dt[k, n], z: out $dt[m, n])
    grid(cdiv(m, $bm), cdiv(n, $bn))
    requires k % $bk == 0
    $req
    $(params "$w" "$s")
{
    let i = program_id(0);
    let j = program_id(1);
    var acc = zeros(($bm, $bn), f32);
    for kk in range(k // $bk) {
        acc += dot(x[ds(i * $bm, $bm), ds(kk * $bk, $bk)], y[ds(kk * $bk, $bk), ds(j * $bn, $bn)], acc = f32);
    }
    z[ds(i * $bm, $bm), ds(j * $bn, $bn)] = $(epilogue "$dt");
}
PK
}

case $mode in
build)
	mkdir -p "$B"
	pk=$B/user.pk list=$B/user_list.h
	: >"$pk"
	: >"$list"
	for c in $configs; do
		IFS=: read -r nm bm bn bk w s epi <<<"$c"
		s=${s:-0}
		for dt in f16 bf16; do
			bf=0; [ "$dt" = bf16 ] && bf=1
			for K in $KS; do
				[[ " $FORMS " == *" spec "* ]] || break
				spec "$nm" "$bm" "$bn" "$bk" "$w" "$s" "$dt" "$K" >>"$pk"
				echo "UM_SPEC(${nm}_spec${K}_$dt, \"$c\", $bf, $K)" >>"$list"
			done
			for form in whole wholeu; do
				for K in $KS; do
					[[ " $FORMS " == *" $form "* ]] || break
					whole "$nm" "$bm" "$bn" "$w" "$s" "$dt" "$K" "$form" >>"$pk"
					echo "UM_SPEC(${nm}_$form${K}_$dt, \"$c\", $bf, $K)" >>"$list"
				done
			done
			if [[ " $FORMS " == *" ds "* ]]; then
				ds "$nm" "$bm" "$bn" "$bk" "$w" "$s" "$dt" "" >>"$pk"
				echo "UM_DS(${nm}_ds_$dt, \"$c\", $bf)" >>"$list"
			fi
			if [[ " $FORMS " == *" ds16 "* ]]; then
				ds "$nm" "$bm" "$bn" "$bk" "$w" "$s" "$dt" "requires n % 16 == 0 and k % 16 == 0" >>"$pk"
				echo "UM_DS(${nm}_ds16_$dt, \"$c\", $bf)" >>"$list"
			fi
		done
	done
	t0=$(date +%s.%N)
	"$PKC" --target=host,sm_90a --resource-usage "$pk" -o "$B/user.o" -H "$B/user.h" 2>"$B/pkc.log" || { cat "$B/pkc.log"; exit 1; }
	echo "pkc: $(grep -c "on sm_90a" "$B/pkc.log") kernels in $(echo "$(date +%s.%N) - $t0" | bc) s"
	grep -o "kernel '[^']*' on sm_90a: [0-9]* registers, [0-9]* bytes shared[^,]*, [0-9]* bytes stack, [0-9]* bytes spill stores" "$B/pkc.log" |
		sed "s/ on sm_90a:/:/" | sort >"$B/resources.txt"
	$CC -std=c11 -O2 -Iruntime -Isamples/common -I"$B" bench/gpu/matmul_user.c "$B/user.o" samples/common/sample_util.c \
		"$LIB" -lm -pthread -ldl -o "$B/matmul_user" || exit 1
	if [ "${CUBIN:-0}" = 1 ]; then
		"$PKC" --target=sm_90a --emit=cubin "$pk" -o "$B/user.cubin" 2>/dev/null || echo "user.cubin: pkc failed"
	fi
	cp "$PKC" "$B/pkc" 2>/dev/null || true
	;;
run)
	if [ "${PEERS:-0}" = 1 ]; then
		PYTHONUNBUFFERED=1 timeout 240 python3 bench/gpu/cublas_shapes.py || echo "cublas_shapes.py failed"
	fi
	PK_DEVICE=cuda "$B/matmul_user" ${USER_ARGS:-}
	;;
*)
	echo "usage: $0 build|run DIR [configs]" >&2
	exit 2
	;;
esac
