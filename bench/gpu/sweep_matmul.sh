#!/usr/bin/env bash
# bench/gpu/sweep_matmul.sh build|run DIR [VARIANT...] - tries matmul tile
# configurations on the GPU: each variant is bench/gpu/bench_matmul.pk's
# kernels with other constants (BM BN BK num_warps num_stages, and an
# optional GROUP: program ids grouped GROUP row blocks at a time, as
# Triton's GROUP_SIZE_M, for L2 reuse), linked into its own bench_gpu.
#
#   bench/gpu/sweep_matmul.sh build build/sweep      here (needs pkc)
#   bench/gpu/sweep_matmul.sh run build/sweep        on the GPU machine
#
# A variant is NAME:BM:BN:BK:WARPS:STAGES:GROUP (GROUP 1 = the grid of
# bench_matmul.pk).  `build` prints each variant's resource usage.
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
B=${2:-}
[ -n "$mode" ] && [ -n "$B" ] || { echo "usage: $0 build|run DIR [NAME:BM:BN:BK:WARPS:STAGES:GROUP...]" >&2; exit 2; }
shift 2
PKC=${PKC:-build/bin/pkc}
LIB=${LIBPKRT:-build/lib/libpkrt.a}
CC=${CC:-cc}
variants=${*:-"base:128:128:32:8:4:1 g8:128:128:32:8:4:8 k64s3:128:128:64:8:3:1 w4:128:128:32:4:4:1 w4s3:128:128:32:4:3:1 n256:128:256:32:8:3:1 m256:256:128:32:8:3:1 s5:128:128:32:8:5:1 n256k64:128:256:64:8:3:1 w4k64:128:128:64:4:3:1"}

# gen BM BN BK WARPS STAGES GROUP DTYPE: one kernel.
gen() {
	local bm=$1 bn=$2 bk=$3 w=$4 s=$5 g=$6 dt=$7
	if [ "$g" = 1 ]; then
		grid="grid(cdiv(m, $bm), cdiv(n, $bn))"
		ix="(i, j) -> (i, 0)"; iy="(i, j) -> (0, j)"; iz="(i, j) -> (i, j)"
	else
		grid="grid(cdiv(m, $((bm * g))), cdiv(n, $bn), $g)"
		ix="(a, j, g) -> (a * $g + g, 0)"; iy="(a, j, g) -> (0, j)"; iz="(a, j, g) -> (a * $g + g, j)"
	fi
	cat <<PK
kernel bench_matmul_$dt(x: in $dt[m, 8192], y: in $dt[8192, n], z: out $dt[m, n])
    $grid
    spec x: [$bm, 8192] $ix
    spec y: [8192, $bn] $iy
    spec z: [$bm, $bn] $iz
    requires n % 16 == 0
    params(num_warps = $w, num_stages = $s)
{
    var acc = zeros(($bm, $bn), f32);
    for k in range(cdiv(8192, $bk)) {
        acc += dot(x[:, ds(k * $bk, $bk)], y[ds(k * $bk, $bk), :], acc = f32);
    }
    z[...] = acc.astype($dt);
}
PK
}

case $mode in
build)
	mkdir -p "$B/common"
	for k in add softmax layernorm; do
		"$PKC" --target=host,sm_90a "bench/gpu/bench_$k.pk" -o "$B/common/bench_$k.o" || exit 1
	done
	for v in $variants; do
		IFS=: read -r name bm bn bk w s g <<<"$v"
		d=$B/$name
		mkdir -p "$d"
		{ gen "$bm" "$bn" "$bk" "$w" "$s" "$g" f16; gen "$bm" "$bn" "$bk" "$w" "$s" "$g" bf16; } >"$d/bench_matmul.pk"
		echo "$v" >"$d/variant"
		if ! "$PKC" --target=host,sm_90a --resource-usage "$d/bench_matmul.pk" -o "$d/bench_matmul.o" 2>"$d/pkc.log"; then
			echo "$name: pkc failed: $(grep -m1 error "$d/pkc.log")"
			continue
		fi
		echo "$name ($v): $(grep -o "on sm_90a: [^,]*, [^,]*" "$d/pkc.log" | head -1), $(grep -o '[0-9]* bytes spill stores' "$d/pkc.log" | head -1)"
		$CC -std=c11 -O2 -Iruntime -Isamples/common -I"$d" -I"$B/common" bench/gpu/bench_gpu.c "$d/bench_matmul.o" \
			"$B"/common/bench_*.o samples/common/sample_util.c "$LIB" -lm -pthread -ldl -o "$d/bench_gpu" || exit 1
	done
	;;
run)
	for d in "$B"/*/; do
		[ -x "$d/bench_gpu" ] || continue
		echo "== $(cat "$d/variant")"
		PK_DEVICE=cuda "$d/bench_gpu" --only matmul-f16,matmul-bf16 ${SWEEP_ARGS:-} 2>&1 | grep -E 'matmul|FAIL|error'
	done
	;;
*)
	echo "usage: $0 build|run DIR [variants]" >&2
	exit 2
	;;
esac
