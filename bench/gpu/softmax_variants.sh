#!/usr/bin/env bash
# bench/gpu/softmax_variants.sh build|run DIR - where bench_softmax's time
# goes on the GPU: bench_gpu built once per variant of bench/gpu/bench_softmax.pk
# (the body or num_warps rewritten by sed), each timed with `--only softmax`
# (and the copy, the bandwidth ceiling) in one device command.
#
# Variants: as-is (16 warps: e / sum), recip (e * (1 / sum): one division
# a row instead of one an element; not the same rounding, an experiment
# only), ex2 (exp2((v - max) * log2 e): the hardware's ex2.approx instead
# of exp's polynomial, as Triton's tl.exp), expsum (o = exp(v - max): no
# sum, no division), w8 / w4 / w32 (num_warps); $VARIANTS picks some.
#
#   bench/gpu/softmax_variants.sh build build/smx      here (needs pkc)
#   bench/gpu/softmax_variants.sh run build/smx        on the GPU machine
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
D=${2:-}
[ -n "$mode" ] && [ -n "$D" ] || { echo "usage: $0 build|run DIR" >&2; exit 2; }
VARIANTS=${VARIANTS:-"as-is recip ex2 expsum w8 w4 w32"}

variant() { # NAME: the .pk text on stdout
	local src=bench/gpu/bench_softmax.pk
	case $1 in
	as-is) cat "$src" ;;
	recip) sed 's|o\[...\] = e / sum(e, axis = 0);|o[...] = e * (1.0 / sum(e, axis = 0));|' "$src" ;;
	ex2) sed 's|let e = exp(v - max(v, axis = 0));|let e = exp2((v - max(v, axis = 0)) * 1.4426950408889634);|' "$src" ;;
	expsum) sed 's|o\[...\] = e / sum(e, axis = 0);|o[...] = e;|' "$src" ;;
	w8 | w4 | w32) sed "s|num_warps = 16|num_warps = ${1#w}|" "$src" ;;
	esac
}

case $mode in
build)
	PKC=${PKC:-build/bin/pkc}
	LIB=${LIBPKRT:-build/lib/libpkrt.a}
	rc=0
	for v in $VARIANTS; do
		mkdir -p "$D/$v"
		variant "$v" >"$D/$v/bench_softmax.pk"
		cmp -s "$D/$v/bench_softmax.pk" bench/gpu/bench_softmax.pk && [ "$v" != as-is ] &&
			{ echo "$v: the sed changed nothing"; rc=1; continue; }
		for pk in bench/gpu/bench_*.pk; do
			n=$(basename "$pk" .pk)
			[ "$n" = bench_softmax ] && pk=$D/$v/bench_softmax.pk
			"$PKC" --target=host,sm_90a "$pk" -o "$D/$v/$n.o" -H "$D/$v/$n.h" || rc=1
		done
		cc -std=c11 -O2 -Iruntime -Isamples/common -I"$D/$v" bench/gpu/bench_gpu.c "$D/$v"/bench_*.o \
			samples/common/sample_util.c "$LIB" -lm -pthread -ldl -o "$D/$v/bench_gpu" || rc=1
		rm -f "$D/$v"/*.o
	done
	exit $rc
	;;
run)
	for v in $VARIANTS; do
		echo "== $v"
		PK_DEVICE=cuda "$D/$v/bench_gpu" --only copy,softmax 2>&1 | grep -E "^(copy|softmax) "
	done
	;;
esac
