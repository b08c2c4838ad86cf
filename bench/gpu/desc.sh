#!/usr/bin/env bash
# bench/gpu/desc.sh build|run DIR [STEPS] - the wgmma loops with fewer
# instructions (descriptors as one field per stage plus constants, the stage
# ring carried when the stage count is no power of two; GPU-DESIGN.md): main's
# pkc ("base", PKC_BASE) against this one ("new", PKC), side by side in one
# device command, with the peers, and the GPU tests of the wgmma rows.
#
#   PKC_BASE=/path/to/main/pkc bench/gpu/desc.sh build DIR     here
#   bench/gpu/desc.sh run DIR [STEPS]                          on the GPU machine
#
# build (PKC default build/bin/pkc):
#   DIR/gpu        test/gpu/build.sh, the rows of $ONLY alone
#   DIR/attn       bench/gpu/attention.sh build: d64 and d128, full and causal,
#                  new (pkc-*) and base (base-*)
#   DIR/user-new, DIR/user-base   bench/gpu/user_matmul.sh build, its default
#                  configurations and forms, with CUBIN=1 (its driver and cubin kept)
#   DIR/peers_attention.py        from shared/anchors, when there
#   DIR/sass-census.txt           bench/gpu/sass_loops.py base -> new on every
#                  cubin (needs cuobjdump: $CUOBJDUMP or on PATH)
# run STEPS (default "tests attn user"; the tests take most of a device call:
# run them alone, then "attn user"), logs under $OUT (default /tmp/out):
#   tests   test/gpu/run.sh run DIR/gpu --only "$ONLY" (compute-sanitizer included)
#   attn    bench/gpu/attention.sh run DIR/attn: each build, the peers, each build again
#   user    cuBLAS on the shapes (PEERS=1), then new, base, new, base; the table of
#           bench/gpu/report_user.py (per kernel and shape, new / base, geomean)
#   census  DIR/sass-census.txt
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
D=${2:-}
[ -n "$mode" ] && [ -n "$D" ] || { echo "usage: $0 build|run DIR [STEPS]" >&2; exit 2; }
ONLY=${ONLY:-'wgmma|[/.]tma|flash|matmul|reblock|sched|bmm|heavy_first'}
VARIANTS="d64-full:HEAD_DIM=64:CAUSAL=0 d64-causal:HEAD_DIM=64:CAUSAL=1 d128-full:HEAD_DIM=128:CAUSAL=0 d128-causal:HEAD_DIM=128:CAUSAL=1"

census() { # the SASS loops of each cubin, base -> new
	local cuobjdump=${CUOBJDUMP:-cuobjdump} d n
	command -v "$cuobjdump" >/dev/null || { echo "census: no cuobjdump"; return; }
	for d in "$D"/attn/pkc-d*; do
		n=${d##*/pkc-}
		echo "== attention $n"
		"$cuobjdump" -sass "$D/attn/base-$n/fa.cubin" >"$D/base.sass" && "$cuobjdump" -sass "$d/fa.cubin" >"$D/new.sass" &&
			python3 bench/gpu/sass_loops.py "$D/base.sass" "$D/new.sass"
	done
	echo "== user matmuls"
	"$cuobjdump" -sass "$D/user-base/user.cubin" >"$D/base.sass" && "$cuobjdump" -sass "$D/user-new/user.cubin" >"$D/new.sass" &&
		python3 bench/gpu/sass_loops.py "$D/base.sass" "$D/new.sass"
	rm -f "$D/base.sass" "$D/new.sass"
}

case $mode in
build)
	: "${PKC_BASE:?PKC_BASE: the base pkc}"
	PKC=${PKC:-build/bin/pkc}
	mkdir -p "$D"
	rc=0
	PKC=$PKC PK_GPU_ONLY="$ONLY" test/gpu/build.sh "$D/gpu" || rc=1
	PKC=$PKC PKC_BASE=$PKC_BASE ATTN_VARIANTS=$VARIANTS bench/gpu/attention.sh build "$D/attn" >/dev/null || rc=1
	PKC=$PKC CUBIN=1 bench/gpu/user_matmul.sh build "$D/user-new" || rc=1
	PKC=$PKC_BASE CUBIN=1 bench/gpu/user_matmul.sh build "$D/user-base" || rc=1
	[ -f ../shared/anchors/peers_attention.py ] && cp ../shared/anchors/peers_attention.py "$D/"
	[ -f shared/anchors/peers_attention.py ] && cp shared/anchors/peers_attention.py "$D/"
	census >"$D/sass-census.txt" 2>&1
	# What the run needs: matmul_user (not the copy of pkc nor the object:
	# the directory travels by carry, at most 64 MiB).
	rm -f "$D"/user-*/pkc "$D"/user-*/user.o
	grep -E "^==|^flash_attention |^all" "$D/sass-census.txt"
	du -sh "$D"
	exit $rc
	;;
run)
	export OUT=${OUT:-/tmp/out}
	mkdir -p "$OUT"
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
	for s in ${3:-tests attn user}; do
		echo "== $s ($(date -u +%T))"
		case $s in
		tests)
			test/gpu/run.sh run "$D/gpu" --budget "${GPU_BUDGET:-480}" --only "$ONLY" >"$OUT/gpu-tests.log" 2>&1
			grep -vE "^PASS" "$OUT/gpu-tests.log" | tail -n 25
			;;
		attn)
			peers=$D/peers_attention.py
			[ -f "$peers" ] || peers=
			bench/gpu/attention.sh run "$D/attn" $peers >"$OUT/attn.log" 2>&1
			sed -n '/^== d/,$p' "$OUT/attn.log"
			;;
		user)
			PEERS=1 bench/gpu/user_matmul.sh run "$D/user-new" >"$OUT/user-new-1.log" 2>&1
			grep -iE "cublas|torch" "$OUT/user-new-1.log" | head -n 20
			bench/gpu/user_matmul.sh run "$D/user-base" >"$OUT/user-base-1.log" 2>&1
			bench/gpu/user_matmul.sh run "$D/user-new" >"$OUT/user-new-2.log" 2>&1
			bench/gpu/user_matmul.sh run "$D/user-base" >"$OUT/user-base-2.log" 2>&1
			python3 bench/gpu/report_user.py "$OUT/user-base-1.log,$OUT/user-base-2.log" \
				"$OUT/user-new-1.log,$OUT/user-new-2.log" | tee "$OUT/user-report.txt" | tail -n 3
			;;
		census)
			cat "$D/sass-census.txt"
			;;
		*)
			echo "unknown step $s"
			;;
		esac
	done
	;;
*)
	echo "usage: $0 build|run DIR [STEPS]" >&2
	exit 2
	;;
esac
