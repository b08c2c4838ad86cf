#!/usr/bin/env bash
# bench/gpu/attention.sh - the attention benchmark: samples/flash_attention.pk at
# batch 4, heads 16, seq 4096 (d64 full, d64 causal, d128 full; f16) against the
# peers of peers_attention.py (torch SDPA flash and cuDNN, JAX cuDNN, Pallas
# ops.gpu mha), in one device command.
#
#   bench/gpu/attention.sh build DIR      here: pkc ($PKC, default build/bin/pkc)
#                                         --target=host,sm_90a per variant
#                                         (--resource-usage and -ftime-report into
#                                         DIR/build.log), bench_attention.c linked
#                                         per variant, and its cubin (fa.cubin, for
#                                         cuobjdump -sass); PKC_BASE=path/to/pkc also
#                                         builds the variants with that pkc ("base")
#   bench/gpu/attention.sh run DIR [PEERS_PY]
#                                         on the GPU machine: each variant, the peers
#                                         (a copy of peers_attention.py inside the
#                                         repository), each variant again; the rows in
#                                         $OUT/attention.jsonl, the table of
#                                         bench/gpu/report_attention.py
set -u
cd "$(dirname "$0")/../.." || exit 1
MODE=${1:-}
B=${2:-build/gpu-attn}
# name:HEAD_DIM=n:CAUSAL=0|1[:NAME=value[,NAME=value...], more -D of the kernel file; DT=bf16
# also builds the C driver for bf16]; ATTN_VARIANTS replaces them
VARIANTS=${ATTN_VARIANTS:-"d64-full:HEAD_DIM=64:CAUSAL=0 d64-causal:HEAD_DIM=64:CAUSAL=1 d128-full:HEAD_DIM=128:CAUSAL=0"}
SEQ=${SEQ:-4096}

build_one() { # tag pkc variant
	local tag=$1 pkc=$2 v=$3 name hd causal extra dir
	IFS=: read -r name hd causal extra <<<"$v"
	hd=${hd#HEAD_DIM=}
	causal=${causal#CAUSAL=}
	dir=$B/$tag-$name
	mkdir -p "$dir"
	local pflags="-DSEQ=$SEQ -DHEAD_DIM=$hd -DCAUSAL=$([ "$causal" = 1 ] && echo true || echo false)${extra:+ -D${extra//,/ -D}}"
	local cflags=""
	[[ ,$extra, == *,DT=bf16,* ]] && cflags="-DBF16=1"
	echo "== $tag $name: $pkc $pflags" >>"$B/build.log"
	# shellcheck disable=SC2086
	"$pkc" --target=host,sm_90a --resource-usage -ftime-report $pflags samples/flash_attention.pk \
		-o "$dir/fa.o" -H "$dir/flash_attention.h" >>"$B/build.log" 2>&1 || return 1
	# shellcheck disable=SC2086
	"$pkc" --target=sm_90a --emit=ptx $pflags samples/flash_attention.pk -o "$dir/fa.ptx" 2>>"$B/build.log"
	# shellcheck disable=SC2086
	"$pkc" --target=sm_90a --emit=cubin $pflags samples/flash_attention.pk -o "$dir/fa.cubin" 2>>"$B/build.log"
	cc -std=c11 -O2 -DSEQ="$SEQ" -DHEAD_DIM="$hd" -DCAUSAL="$causal" $cflags -I"$dir" -Iruntime -Isamples/common \
		bench/gpu/bench_attention.c "$dir/fa.o" samples/common/sample_util.c build/lib/libpkrt.a \
		-lm -pthread -ldl -o "$dir/bench_attention" >>"$B/build.log" 2>&1
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
	grep -E "note: kernel 'flash_attention'|ptxas|^== " "$B/build.log"
	exit $rc
	;;
run)
	PEERS=${3:-}
	export OUT=${OUT:-/tmp/out}
	mkdir -p "$OUT"
	J=$OUT/attention.jsonl
	: >"$J"
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
	pkc_runs() { # round
		for d in "$B"/*-d*; do
			[ -x "$d/bench_attention" ] || continue
			# pkc-d64-full: "pkc"; pkc-d64w8-full (a variant's -D): "pkc-w8"
			local n tag extra
			n=$(basename "$d")
			tag=${n%%-*}
			extra=$(sed -E 's/^[a-z]+-d[0-9]+//; s/-(full|causal)$//' <<<"$n")
			"$d/bench_attention" --name "$tag${extra:+-$extra} run$1" | tee -a "$J"
		done
	}
	pkc_runs 1
	if [ -n "$PEERS" ]; then
		PYTHONUNBUFFERED=1 timeout 300 python3 "$PEERS" --seq "$SEQ" 2>"$OUT/peers.err" | tee -a "$J"
		tail -n 3 "$OUT/peers.err"
	fi
	pkc_runs 2
	python3 bench/gpu/report_attention.py "$J"
	;;
*)
	echo "usage: bench/gpu/attention.sh build DIR | run DIR [PEERS_PY]" >&2
	exit 2
	;;
esac
