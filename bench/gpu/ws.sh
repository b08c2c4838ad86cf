#!/usr/bin/env bash
# bench/gpu/ws.sh build|run DIR - warp specialization (--gpu-warp-specialize,
# compiler/cuda/nvptx_ws.c) against pkc's default, side by side in one device
# command, with cuBLAS and cuDNN in the same command:
#   bench    bench_gpu's matmul (bench/gpu/bench_matmul.pk, 128 x 256 x 64,
#            8192^3 f16 and bf16)
#   user     user_matmul.sh configurations (WS_CONFIGS, default tri
#            128x256x64 8 warps and k64 128x128x64) in the spec and ds16
#            forms at 8192^3 and 4096^3 (WS_SHAPES), against cuBLAS
#            (cublas_shapes.py)
#   attn     samples/flash_attention.pk at b4 h16 s4096, d64 and d128, full
#            and causal, against torch SDPA's cuDNN and flash backends
#            (peers_attention_bwd.py --forward)
# Each pkc form runs twice, interleaved (off, ws, off, ws): the spread
# between its two runs is the noise.  Every command is under `timeout`, so
# a hang costs its limit (at most 150 s), never the lease; the whole run
# takes about 6 minutes on an H100.  The last lines are the table
# (ws_report.py): per row, both forms' best TFLOP/s, ws / off, and each
# over the peer.  Raw outputs under $OUT (default /tmp/out).
#
#   bench/gpu/ws.sh build build/ws      here (pkc, LLVM: about 4 minutes)
#   run(command="bench/gpu/ws.sh run build/ws", carry=["build/ws"], timeout_s=600)
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
B=${2:-}
[ -n "$mode" ] && [ -n "$B" ] || { echo "usage: $0 build|run DIR" >&2; exit 2; }
CONFIGS=${WS_CONFIGS:-"tri:128:256:64:8:3 k64:128:128:64:4:0"}
SHAPES=${WS_SHAPES:-"8192x8192x8192 4096x4096x4096"}
ATTN="d64-full:HEAD_DIM=64:CAUSAL=0 d64-causal:HEAD_DIM=64:CAUSAL=1 d128-full:HEAD_DIM=128:CAUSAL=0 d128-causal:HEAD_DIM=128:CAUSAL=1"

build_form() { # form pkc
	local f=$1 pkc=$2 d=$B/$1
	mkdir -p "$d/bench"
	for pk in bench/gpu/bench_*.pk; do
		"$pkc" --target=host,sm_90a "$pk" -o "$d/bench/$(basename "$pk" .pk).o" || return 1
	done
	cc -std=c11 -O2 -I"$d/bench" -Iruntime -Isamples/common bench/gpu/bench_gpu.c "$d"/bench/bench_*.o \
		samples/common/sample_util.c build/lib/libpkrt.a -lm -pthread -ldl -o "$d/bench_gpu" || return 1
	PKC=$pkc FORMS="spec ds16" KS="8192 4096" bench/gpu/user_matmul.sh build "$d/user" $CONFIGS || return 1
	rm -f "$d/user/pkc" # its copy of pkc: not for the device (64 MiB carry limit)
	PKC=$pkc ATTN_VARIANTS=$ATTN bench/gpu/attention.sh build "$d/attn" >/dev/null || return 1
	grep -h "note: kernel .* on sm_90a" "$d/user/pkc.log" | sed 's/^[^:]*:[0-9]*:[0-9]*: note: //' >"$d/resources.txt"
	grep -h "note: kernel 'flash_attention' on" "$d/attn/build.log" | sed 's/^[^:]*:[0-9]*:[0-9]*: note: //' \
		>>"$d/resources.txt"
}

case $mode in
build)
	mkdir -p "$B"
	pkc=$(pwd)/${PKC:-build/bin/pkc}
	printf '#!/bin/sh\nexec "%s" --gpu-warp-specialize "$@"\n' "$pkc" >"$B/pkc-ws"
	chmod +x "$B/pkc-ws"
	build_form off "$pkc" || { echo "ws.sh: the default build failed"; exit 1; }
	build_form ws "$(pwd)/$B/pkc-ws" || { echo "ws.sh: the --gpu-warp-specialize build failed"; exit 1; }
	for f in off ws; do echo "== $f"; cat "$B/$f/resources.txt"; done
	;;
run)
	export OUT=${OUT:-/tmp/out}
	mkdir -p "$OUT"
	nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
	echo "== cuBLAS ($(date -u +%T))"
	SHAPES=$SHAPES timeout 150 python3 bench/gpu/cublas_shapes.py >"$OUT/cublas.txt" 2>&1 || echo "cublas_shapes.py failed"
	echo "== cuDNN, torch flash ($(date -u +%T))"
	PYTHONUNBUFFERED=1 timeout 150 python3 bench/gpu/peers_attention_bwd.py --forward >"$OUT/peers_attn.jsonl" \
		2>"$OUT/peers_attn.err" || echo "peers_attention_bwd.py --forward failed: $(tail -n 2 "$OUT/peers_attn.err")"
	: >"$OUT/attn.jsonl"
	for round in 1 2; do
		for f in off ws; do
			echo "== $f, run $round ($(date -u +%T))"
			PK_DEVICE=cuda timeout 60 "$B/$f/bench_gpu" --only matmul-f16,matmul-bf16 >"$OUT/bench-$f-$round.txt" 2>&1 ||
				echo "bench_gpu ($f) failed or timed out: $(tail -n 2 "$OUT/bench-$f-$round.txt")"
			SHAPES=$SHAPES PK_DEVICE=cuda timeout 150 "$B/$f/user/matmul_user" --reps 20 >"$OUT/user-$f-$round.txt" 2>&1 ||
				echo "matmul_user ($f) failed or timed out: $(tail -n 2 "$OUT/user-$f-$round.txt")"
			for d in "$B/$f/attn"/pkc-d*; do
				timeout 60 "$d/bench_attention" --name "$f run$round" >>"$OUT/attn.jsonl" 2>>"$OUT/attn.err" ||
					echo "bench_attention $(basename "$d") ($f) failed or timed out"
			done
		done
	done
	python3 bench/gpu/ws_report.py "$OUT"
	;;
*)
	echo "usage: $0 build|run DIR" >&2
	exit 2
	;;
esac
