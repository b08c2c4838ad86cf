#!/usr/bin/env bash
# test/gpu/build.sh [BUILD_DIR] - builds, on this machine (pkc and LLVM; no
# GPU needed), everything test/gpu/run.sh and bench/gpu/run.sh run on the
# GPU machine (`test/gpu/run.sh build BUILD_DIR` is the same):
#
#   BUILD_DIR/samples/<name>    samples/<name>.{pk,c}, the kernels compiled
#                               with --target=$PK_GPU_TARGETS (host,sm_90a)
#   BUILD_DIR/exec/<name>       test/exec/<name>.{pk,c}, likewise
#   BUILD_DIR/kernels/<case>/   each row of test/gpu/kernels.txt: the fat
#                               object as a shared library with libpkrt, its
#                               IR and the sizes (test/gpu-emu/run.py
#                               --build-only), for run.py --run
#   BUILD_DIR/bench/bench_gpu   bench/gpu/bench_gpu.c with bench/gpu/bench_*.pk
#   BUILD_DIR/probe             test/gpu/probe.c (finds the GPU through libpkrt)
#   BUILD_DIR/build-status.tsv  kind, name, OK or FAILED, and why
#
# (default BUILD_DIR: build/gpu).  Each program keeps its object (<name>.o,
# kernels/<case>/k.o) so that `test/gpu/build.sh --relink BUILD_DIR` can
# link them again on the GPU machine if these binaries do not start there
# (another C library): --relink compiles libpkrt from runtime/*.c with the C
# compiler there and runs no pkc.  A kernel file pkc cannot compile for the
# GPU yet is recorded as FAILED, and the build goes on.
#
# Environment: PKC (default build/bin/pkc), PK_GPU_TARGETS (default
# host,sm_90a), CC (default cc), LIBPKRT (default build/lib/libpkrt.a),
# PYTHON (default python3, with numpy: run.py), PK_GPU_ONLY (a regex: only
# the programs and cases whose kind/name, e.g. kernels/flash_attention,
# matches, and no benchmark).
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
mkdir -p "$B/samples" "$B/exec" "$B/kernels" "$B/bench" "$B/lib"
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

# Whether kind/name is built (PK_GPU_ONLY).
wanted() {
	[ -z "${PK_GPU_ONLY:-}" ] || grep -Eq -- "$PK_GPU_ONLY" <<<"$1/$2"
}

# One program: kind, name, .pk, .c, output dir.
build_one() {
	local kind=$1 name=$2 pk=$3 c=$4 dir=$5
	wanted "$kind" "$name" || return
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

# The host-vs-CUDA cases of run.py: one directory per row of kernels.txt.
if [ $relink = 1 ]; then
	for d in "$B"/kernels/*/; do
		[ -f "$d/k.o" ] || continue
		$CC -shared -o "$d/k.so" "$d/k.o" -Wl,--whole-archive "$LIB" -Wl,--no-whole-archive $LIBS || exit 1
	done
else
	while IFS='|' read -r name pk args; do
		case $name in '' | '#'*) continue ;; esac
		wanted kernels "$name" || continue
		rm -rf "${B:?}/kernels/$name"
		# shellcheck disable=SC2086
		if ${PYTHON:-python3} test/gpu-emu/run.py --pkc "$PKC" --target "${TARGETS#host,}" --libpkrt "$LIB" \
			--build-only "$B/kernels/$name" "$pk" $args >"$B/kernels/$name.log" 2>&1 </dev/null; then
			note kernels "$name" OK ""
		else
			note kernels "$name" FAILED "run.py: $(grep -m1 -i error "$B/kernels/$name.log" | cut -c1-160)"
		fi
	done <test/gpu/kernels.txt
fi

# The benchmark: four kernel files, one program.
bench_ok=1
[ -n "${PK_GPU_ONLY:-}" ] && bench_ok=0
for pk in bench/gpu/bench_*.pk; do
	name=$(basename "$pk" .pk)
	[ -n "${PK_GPU_ONLY:-}" ] && break
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
	echo "build.sh: on the GPU machine: test/gpu/run.sh run $B (carry $B)"
fi
[ $bad = 0 ]
