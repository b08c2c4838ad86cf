#!/usr/bin/env bash
# bench/gpu/batch.sh pack|run ... - one device call for several steps: the
# GPU tests, attention and user matmuls of two builds, the benchmark with
# its peers, each bounded, logs under $OUT.
#
# Build directories of test/gpu/build.sh, attention.sh and user_matmul.sh
# carry ~60 MB of cubins and debug info, near the device tool's 64 MiB: pack
# strips the debug info, drops the objects (run.sh relinks only when a
# program does not start there) and compresses them into one file to carry.
#
#   bench/gpu/batch.sh pack build/bundle.tar.xz DIR...        here
#   bench/gpu/batch.sh run build/bundle.tar.xz STEP...         on the GPU machine
#
# STEP is NAME=SECONDS:COMMAND (run with bash, its output in $OUT/NAME.log,
# killed after SECONDS); the last lines of each log are echoed, so the
# device tool's reply holds a summary even when a later step runs long.
# Each command sees OUT=/tmp/batch/NAME for the files it writes; they come
# back packed in $OUT/raw.tar.xz (the tool returns at most 8 files).
set -u
cd "$(dirname "$0")/../.." || exit 1
mode=${1:-}
pack=${2:-}
[ -n "$mode" ] && [ -n "$pack" ] || { echo "usage: $0 pack|run FILE ..." >&2; exit 2; }
shift 2

case $mode in
pack)
	for d in "$@"; do
		find "$d" -name '*.o' -delete
		find "$d" -type f -perm -u+x | while read -r f; do
			file -b "$f" | grep -q '^ELF' && strip --strip-debug "$f"
		done
	done
	tar -cJf "$pack" "$@" && du -h "$pack"
	;;
run)
	export OUT=${OUT:-/tmp/out}
	mkdir -p "$OUT"
	tar -xJf "$pack" || exit 1
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu \
		--format=csv,noheader
	for step in "$@"; do
		name=${step%%=*}
		rest=${step#*=}
		secs=${rest%%:*}
		cmd=${rest#*:}
		echo "== $name ($(date -u +%T), at most ${secs}s): $cmd"
		mkdir -p "/tmp/batch/$name"
		OUT=/tmp/batch/$name timeout -k 10 "$secs" bash -c "$cmd" >"$OUT/$name.log" 2>&1
		echo "   exit $?"
		tail -n "${TAIL:-12}" "$OUT/$name.log"
	done
	tar -C /tmp/batch -cJf "$OUT/raw.tar.xz" .
	;;
*)
	echo "usage: $0 pack|run FILE ..." >&2
	exit 2
	;;
esac
