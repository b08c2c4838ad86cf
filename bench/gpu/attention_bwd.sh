#!/usr/bin/env bash
# bench/gpu/attention_bwd.sh - the attention backward benchmark:
# samples/flash_attention_bwd.pk (delta, then dq, dk, dv) at batch 4, heads 16,
# seq 4096 (d64 full, d64 causal, d128 full; f16), each with the Pallas op's
# default backward blocks (32) and with 64-row blocks, against the peers of
# bench/gpu/peers_attention_bwd.py (torch SDPA flash and cuDNN backward, JAX
# cuDNN attention's and Pallas ops.gpu mha's vjp), in one device command.
#
#   bench/gpu/attention_bwd.sh build DIR  here: pkc ($PKC, default build/bin/pkc)
#                                         --target=host,sm_90a per variant (the
#                                         forward kernel too, for o and lse;
#                                         --resource-usage into DIR/build.log),
#                                         bench_attention_bwd.c linked per variant
#   bench/gpu/attention_bwd.sh run DIR    on the GPU machine: each variant, the
#                                         peers, each variant again; the rows in
#                                         $OUT/attention_bwd.jsonl
set -u
cd "$(dirname "$0")/../.." || exit 1
MODE=${1:-}
B=${2:-build/gpu-attn-bwd}
# name:HEAD_DIM:CAUSAL:BLOCK (BLOCK: every backward block, -DBQ_DKV=.. and the other three)
VARIANTS=${ATTN_BWD_VARIANTS:-"d64-full:64:0:32 d64-full:64:0:64 d64-causal:64:1:64 d128-full:128:0:32 d128-full:128:0:64"}
SEQ=${SEQ:-4096}
PKC=${PKC:-build/bin/pkc}

build_one() { # variant
	local name hd causal blk dir flags
	IFS=: read -r name hd causal blk <<<"$1"
	dir=$B/b$blk-$name
	mkdir -p "$dir"
	flags="-DSEQ=$SEQ -DHEAD_DIM=$hd -DCAUSAL=$([ "$causal" = 1 ] && echo true || echo false)"
	echo "== $dir: $flags -DB*=$blk" >>"$B/build.log"
	# shellcheck disable=SC2086
	"$PKC" --target=host,sm_90a $flags samples/flash_attention.pk -o "$dir/fa.o" -H "$dir/flash_attention.h" \
		2>>"$B/build.log" || return 1
	# shellcheck disable=SC2086
	"$PKC" --target=host,sm_90a --resource-usage $flags -DBQ_DKV="$blk" -DBK_DKV="$blk" -DBQ_DQ="$blk" \
		-DBK_DQ="$blk" samples/flash_attention_bwd.pk -o "$dir/fab.o" -H "$dir/flash_attention_bwd.h" \
		>>"$B/build.log" 2>&1 || return 1
	cc -std=c11 -O2 -DSEQ="$SEQ" -DHEAD_DIM="$hd" -DCAUSAL="$causal" -I"$dir" -Iruntime -Isamples/common \
		bench/gpu/bench_attention_bwd.c "$dir/fa.o" "$dir/fab.o" samples/common/sample_util.c \
		build/lib/libpkrt.a -lm -pthread -ldl -o "$dir/bench_attention_bwd" >>"$B/build.log" 2>&1
}

case $MODE in
build)
	mkdir -p "$B"
	: >"$B/build.log"
	rc=0
	for v in $VARIANTS; do
		build_one "$v" || { echo "build failed: $v"; rc=1; }
	done
	cp bench/gpu/peers_attention_bwd.py "$B/"
	grep -E "note: kernel 'mha_backward'|^== " "$B/build.log"
	exit $rc
	;;
run)
	export OUT=${OUT:-/tmp/out}
	mkdir -p "$OUT"
	J=$OUT/attention_bwd.jsonl
	: >"$J"
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
	pkc_runs() { # round
		for d in "$B"/b*-d*; do
			[ -x "$d/bench_attention_bwd" ] || continue
			"$d/bench_attention_bwd" --name "pkc-$(basename "$d" | cut -d- -f1) run$1" | tee -a "$J"
		done
	}
	pkc_runs 1
	PYTHONUNBUFFERED=1 timeout 300 python3 "$B/peers_attention_bwd.py" --seq "$SEQ" 2>"$OUT/peers_bwd.err" |
		tee -a "$J"
	tail -n 3 "$OUT/peers_bwd.err"
	pkc_runs 2
	;;
*)
	echo "usage: bench/gpu/attention_bwd.sh build DIR | run DIR" >&2
	exit 2
	;;
esac
