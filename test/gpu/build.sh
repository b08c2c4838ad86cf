#!/usr/bin/env bash
# test/gpu/build.sh [BUILD_DIR] - builds, on this machine (no GPU needed),
# everything test/gpu/run.sh and bench/gpu/run.sh run on the GPU machine:
#
#   BUILD_DIR/samples/<name>    samples/<name>.{pk,c}, the kernels compiled
#                               with --target=$PK_GPU_TARGETS (host,sm_90a)
#   BUILD_DIR/exec/<name>       test/exec/<name>.{pk,c}, likewise
#   BUILD_DIR/bench/bench_gpu   bench/gpu/bench_gpu.c with bench/gpu/bench_*.pk
#   BUILD_DIR/probe             test/gpu/probe.c (finds the GPU through libpkrt)
#   BUILD_DIR/build-status.tsv  kind, name, OK or FAILED, and why
#
# (default BUILD_DIR: build/gpu).  Each program keeps its object (<name>.o)
# so that `test/gpu/build.sh --relink BUILD_DIR` can link them again on the
# GPU machine if these binaries do not start there (another C library):
# --relink compiles libpkrt from runtime/*.c with the C compiler there and
# runs no pkc.  A kernel file pkc cannot compile for the GPU yet is recorded
# as FAILED, and the build goes on.
#
# Environment: PKC (default build/bin/pkc), PK_GPU_TARGETS (default
# host,sm_90a), CC (default cc), LIBPKRT (default build/lib/libpkrt.a).
set -u
cd "$(dirname "$0")/../.." || exit 1

relink=0
if [ "${1:-}" = "--relink" ]; then
	relink=1
	shift
fi
B=${1:-build/gpu}
PKC=${PKC:-build/bin/pkc}
TARGETS=${PK_GPU_TARGETS:-host,sm_90a}
CC=${CC:-cc}
CFLAGS="-std=c11 -O2 -g -Wall -Wextra -Wno-unused-function -Iruntime -Isamples/common -Itest/exec"
LIBS="-lm -pthread -ldl"
mkdir -p "$B/samples" "$B/exec" "$B/bench" "$B/lib"
STATUS=$B/build-status.tsv

if [ $relink = 1 ]; then
	# libpkrt from source with the compiler of this machine.
	LIB=$B/lib/libpkrt-relink.a
	rm -f "$LIB" "$B"/lib/*.o
	for f in runtime/*.c; do
		$CC -std=c11 -O2 -g -fPIC -pthread -c "$f" -o "$B/lib/$(basename "$f" .c).o" || exit 1
	done
	ar rcs "$LIB" "$B"/lib/*.o || exit 1
else
	LIB=${LIBPKRT:-build/lib/libpkrt.a}
	if [ ! -x "$PKC" ] || [ ! -f "$LIB" ]; then
		make --no-print-directory "$PKC" "$LIB" || exit 1
	fi
	: >"$STATUS"
fi

ok=0
bad=0
note() { # kind name status why
	[ $relink = 1 ] && return
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$STATUS"
	if [ "$3" = OK ]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "build.sh: $1 $2: $3: $4" >&2; fi
}

# pkc_compile PK OUT_O: the fat object and its header (OUT_O with .h).
pkc_compile() {
	[ $relink = 1 ] && return 0
	"$PKC" --target="$TARGETS" "$1" -o "$2" 2>"$2.pkc.log"
}

# One program: kind, name, .pk, .c, output dir.
build_one() {
	local kind=$1 name=$2 pk=$3 c=$4 dir=$5
	if ! pkc_compile "$pk" "$dir/$name.o"; then
		note "$kind" "$name" FAILED "pkc: $(grep -m1 -i error "$dir/$name.o.pkc.log" | cut -c1-160)"
		return
	fi
	[ -f "$dir/$name.o" ] || return
	if ! $CC $CFLAGS -I"$dir" "$c" "$dir/$name.o" samples/common/sample_util.c "$LIB" $LIBS \
		-o "$dir/$name" 2>"$dir/$name.cc.log"; then
		note "$kind" "$name" FAILED "cc: $(grep -m1 error "$dir/$name.cc.log" | cut -c1-160)"
		return
	fi
	note "$kind" "$name" OK ""
}

for pk in samples/*.pk; do
	name=$(basename "$pk" .pk)
	[ -f "samples/$name.c" ] && build_one sample "$name" "$pk" "samples/$name.c" "$B/samples"
done
for pk in test/exec/*.pk; do
	name=$(basename "$pk" .pk)
	[ -f "test/exec/$name.c" ] && build_one exec "$name" "$pk" "test/exec/$name.c" "$B/exec"
done

# The benchmark: four kernel files, one program.
bench_ok=1
for pk in bench/gpu/bench_*.pk; do
	name=$(basename "$pk" .pk)
	if ! pkc_compile "$pk" "$B/bench/$name.o"; then
		note bench "$name" FAILED "pkc: $(grep -m1 -i error "$B/bench/$name.o.pkc.log" | cut -c1-160)"
		bench_ok=0
	fi
done
if [ $bench_ok = 1 ]; then
	if $CC $CFLAGS -I"$B/bench" bench/gpu/bench_gpu.c "$B"/bench/bench_*.o samples/common/sample_util.c "$LIB" \
		$LIBS -o "$B/bench/bench_gpu" 2>"$B/bench/bench_gpu.cc.log"; then
		note bench bench_gpu OK ""
	else
		note bench bench_gpu FAILED "cc: $(grep -m1 error "$B/bench/bench_gpu.cc.log" | cut -c1-160)"
	fi
fi

if $CC $CFLAGS test/gpu/probe.c "$LIB" $LIBS -o "$B/probe" 2>"$B/probe.cc.log"; then
	note probe probe OK ""
else
	note probe probe FAILED "cc: $(grep -m1 error "$B/probe.cc.log")"
fi

if [ $relink = 1 ]; then
	echo "build.sh: relinked the programs in $B with $LIB"
else
	echo "build.sh: $ok built, $bad failed (targets $TARGETS) into $B; $(du -sh "$B" | cut -f1) in all"
	echo "build.sh: carry it to the GPU machine: run(command=\"test/gpu/run.sh $B\", carry=[\"$B\"])"
fi
[ $bad = 0 ]
