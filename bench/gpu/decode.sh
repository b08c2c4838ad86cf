#!/usr/bin/env bash
# bench/gpu/decode.sh - the decode-attention benchmarks: samples/decode_attention.pk
# (one query token per sequence, grouped-query attention, f16, batch 32, 8
# key/value heads, a full cache of SEQ rows in SPLITS splits) against the peers of
# peers_decode.py (Pallas ops.gpu decode_attention.gqa, XLA, torch SDPA), in one
# device command; with KIND=paged, samples/paged_attention.pk (the same step over
# a cache in pages of PAGE rows, PAGES_PER_BLOCK an iteration, each sequence's
# pages shuffled through the pool) against peers_paged.py.
#
#   bench/gpu/decode.sh build DIR     here: pkc ($PKC, default build/bin/pkc)
#                                     --target=host,sm_90a per variant
#                                     (--resource-usage into DIR/build.log) and
#                                     bench_decode.c linked per variant;
#                                     PKC_BASE=path/to/pkc also builds them with
#                                     that pkc ("base")
#   bench/gpu/decode.sh run DIR [PEERS_PY]
#                                     on the GPU machine: each variant, the peers
#                                     with the variant's shape, each variant again;
#                                     the rows in $OUT/decode.jsonl
set -u
cd "$(dirname "$0")/../.." || exit 1
MODE=${1:-}
B=${2:-build/gpu-decode}
# name:G:HEAD_DIM (SEQ, SPLITS, BK below); DECODE_VARIANTS replaces them; DFLAGS
# (-DNAME=VALUE ...) goes to pkc and cc for every variant
VARIANTS=${DECODE_VARIANTS:-"g8-d128:8:128 g4-d128:4:128 g16-d128:16:128"}
SEQ=${SEQ:-4096}
SPLITS=${SPLITS:-16}
BK=${BK:-128}
BATCH=${BATCH:-32}
HKV=${HKV:-8}
KIND=${KIND:-decode}
PAGE=${PAGE:-16}
PAGES_PER_BLOCK=${PAGES_PER_BLOCK:-8}
case $KIND in
decode) SAMPLE=decode_attention EXTRA="-DSEQ=$SEQ -DBK=$BK" ;;
paged) SAMPLE=paged_attention EXTRA="-DPAGE=$PAGE -DPAGES_PER_SEQ=$((SEQ / PAGE)) -DPAGES_PER_BLOCK=$PAGES_PER_BLOCK" ;;
*) echo "decode.sh: KIND is decode or paged" >&2; exit 2 ;;
esac

build_one() { # tag pkc variant
	local tag=$1 pkc=$2 v=$3 name g hd dir
	IFS=: read -r name g hd <<<"$v"
	dir=$B/$tag-$name
	mkdir -p "$dir"
	local pflags="$EXTRA -DSPLITS=$SPLITS -DG=$g -DHEAD_DIM=$hd ${DFLAGS:-}"
	echo "== $tag $name: $pkc $pflags" >>"$B/build.log"
	# shellcheck disable=SC2086
	"$pkc" --target=host,sm_90a --resource-usage $pflags samples/$SAMPLE.pk \
		-o "$dir/da.o" -H "$dir/$SAMPLE.h" >>"$B/build.log" 2>&1 || return 1
	# shellcheck disable=SC2086
	"$pkc" --target=sm_90a --emit=cubin $pflags samples/$SAMPLE.pk -o "$dir/da.cubin" 2>>"$B/build.log"
	# shellcheck disable=SC2086
	cc -std=c11 -O2 $pflags -I"$dir" -Iruntime \
		-Isamples/common bench/gpu/bench_$KIND.c "$dir/da.o" samples/common/sample_util.c \
		build/lib/libpkrt.a -lm -pthread -ldl -o "$dir/bench_$KIND" >>"$B/build.log" 2>&1
}

case $MODE in
build)
	mkdir -p "$B"
	: >"$B/build.log"
	rc=0
	for v in $VARIANTS; do
		build_one pkc "${PKC:-build/bin/pkc}" "$v" || { echo "build failed: pkc $v"; rc=1; }
		[ -n "${PKC_BASE:-}" ] && { build_one base "$PKC_BASE" "$v" || { echo "build failed: base $v"; rc=1; }; }
	done
	grep -E "note: kernel|^== " "$B/build.log"
	exit $rc
	;;
run)
	PEERS=${3:-}
	export OUT=${OUT:-/tmp/out}
	mkdir -p "$OUT"
	J=$OUT/$KIND.jsonl
	: >"$J"
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
	for round in 1 2; do
		for d in "$B"/*-g*; do
			[ -x "$d/bench_$KIND" ] || continue
			n=$(basename "$d")
			"$d/bench_$KIND" --b "$BATCH" --h "$HKV" --name "${n%%-*} run$round" | tee -a "$J"
		done
		[ "$round" = 1 ] && [ -n "$PEERS" ] || continue
		for v in $VARIANTS; do
			IFS=: read -r _ g hd <<<"$v"
			PYTHONUNBUFFERED=1 timeout 300 python3 "$PEERS" --batch "$BATCH" --hkv "$HKV" --g "$g" --seq "$SEQ" \
				--dim "$hd" --splits "$SPLITS" --block-k "$BK" --page "$PAGE" --pages-per-block "$PAGES_PER_BLOCK" \
				2>>"$OUT/peers.err" | tee -a "$J"
		done
		tail -n 3 "$OUT/peers.err"
	done
	;;
*)
	echo "usage: bench/gpu/decode.sh build DIR | run DIR [PEERS_PY]" >&2
	exit 2
	;;
esac
