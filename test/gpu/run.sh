#!/usr/bin/env bash
# run.sh - pkc's CUDA back end on a real GPU: every sample and execution
# test against the host results, on random inputs, and under
# compute-sanitizer (memcheck, racecheck).  See test/gpu/README.md.
#
#   test/gpu/run.sh build DIR            here (pkc and LLVM needed): the same
#                                        as test/gpu/build.sh DIR
#   test/gpu/run.sh run DIR [options]    on the GPU machine (python3 with numpy,
#                                        compute-sanitizer; no pkc, no LLVM)
#
# `run` runs, on CUDA device 0 (after DIR/probe, which must find the GPU):
#   kernels/<case>   every kernel of a .pk file twice through its launch
#                    function, host variant and CUDA variant, on random inputs
#                    (sizes from test/gpu/kernels.txt), outputs compared
#                    (test/gpu-emu/run.py --run)
#   samples/<name>   each sample program with --device cuda against its C
#                    reference, at its default sizes (non-divisible) and at
#                    a second size set (divisible)
#   exec/<name>      each execution test driver with --device cuda: its
#                    checks against C references
#   memcheck/<prog>, racecheck/<prog>   compute-sanitizer on every sample (at
#                    small sizes) and every execution test: zero errors
#   memcheck/kernels.<case>, racecheck/..., synccheck/...   compute-sanitizer
#                    on the kernels/ cases of sanitize_kernels (the copy-engine
#                    and mbarrier pipelines): zero errors, outputs compared
# A sample or execution test passes only if it ran on the CUDA device: its
# output names the device and PK_CUDA_TRACE=1 shows its launches.  Prints
# one line per case (with the output of the failed ones) and
# "N passed, N failed" last; exits 1 if any failed.
#
# Options of `run`:
#   --jobs N        cases run at once (default 4; $PK_GPU_JOBS)
#   --budget S      start no case after S seconds (default 480; $PK_GPU_BUDGET):
#                   the cases left count as failed, so the run ends in time
#   --no-sanitize   leave out compute-sanitizer
#   --only REGEX    only the cases whose name (e.g. exec/dot) matches
# $PK_GPU_SEED fixes the seed of the random inputs (default: a fresh one,
# printed).  With $OUT set (the device tool), every case's full log is
# written to $OUT/gpu-test/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
self=$here/run.sh
usage() {
	echo "usage: $0 build DIR | run DIR [--jobs N] [--budget S] [--no-sanitize] [--only REGEX]" >&2
	exit 2
}
mode=${1:-}
dir=${2:-}
if [ -z "$mode" ] || [ -z "$dir" ]; then usage; fi
shift 2

# Sample arguments: a second size set (divisible by the block sizes) and
# the small sizes for compute-sanitizer.
sample_args() { # name second|sanitize
	local line
	line=$(grep "^$1|" <<'SAMPLES'
add_one|--n 1048576|--n 1001
add_vectors|--n 4194304|--n 10007
bmm|--batch 2 --m 64 --n 96|--batch 2 --m 50 --n 33
causal_softmax|--b 64|--b 3
decode_attention|--b 8 --hkv 4|--b 2 --hkv 1
flash_attention|--b 2 --h 4 --lse|--b 1 --h 1
flash_attention_bwd|--b 1 --h 4|--b 1 --h 1
first_reach|--rows 4096 --thr 100|--rows 37
gmm|--m 4096 --g 8|--m 70 --g 3
histogram|--n 1048576|--n 3001
iota|--n 1048576|--n 1001
layernorm|--rows 64|--rows 37
matmul||
matmul_kgrid|--m 64 --k 64 --n 96|--m 40 --k 64 --n 50
matmul_relu|--m 128 --n 64|--m 70 --n 33
matmul_tiled|--m 64 --n 64|--m 70 --n 40
paged_attention|--b 8 --hkv 4|--b 2 --hkv 1
rmsnorm|--rows 64|--rows 13
softmax|--rows 64|--rows 7
SAMPLES
	)
	if [ "$2" = second ]; then cut -d'|' -f2 <<<"$line"; else cut -d'|' -f3 <<<"$line"; fi
}

# The kernels/ cases also run under compute-sanitizer, and with which tools:
# the copy-engine (TMA) and mbarrier pipelines of the wgmma loops, and the
# epilogue staged through their dead buffers; causal attention's two split
# loops in the longest-first program order (nvptx_sched.c: heavy_first);
# K loops run with other slices than written (nvptx_reblock.c); tensor-core
# dots of 96 and 192 columns (staged at their real extents); wgmma A loaded
# before its loop, kept in shared memory or staged (ptxas 13.0); 2-CTA
# clusters multicasting a tile into both CTAs' stages; mma.sync dots below
# 16 rows with k copied K-major (decode attention).
sanitize_kernels() {
	cat <<'KERNELS'
flash_attention-causal-d64|memcheck racecheck synccheck
flash_attention_bwd-b64|memcheck racecheck synccheck
invariant-a|memcheck racecheck synccheck
flash_attention-bq64-d128|memcheck racecheck synccheck
heavy_first|memcheck
tma|memcheck racecheck synccheck
tma-unaligned|memcheck racecheck synccheck
tma-exact|memcheck racecheck synccheck
tma-k1|memcheck racecheck synccheck
tma-long|memcheck racecheck synccheck
tma-rank|memcheck racecheck synccheck
tma-rank-unaligned|memcheck racecheck synccheck
flash_attention-tma-edges|memcheck racecheck synccheck
flash_attention-tma-edges-causal|memcheck racecheck synccheck
flash_attention-tma-edges-d128|memcheck racecheck synccheck
flash_attention-ring-d128|memcheck racecheck synccheck
flash_attention-ring-d128-notma|memcheck racecheck synccheck
flash_attention-ring-d128-causal|memcheck racecheck synccheck
flash_attention-ring-d128-pingpong|memcheck racecheck synccheck
turns|memcheck racecheck synccheck
turnsv-d128|memcheck racecheck synccheck
turnsv-d128-notma|memcheck racecheck synccheck
sched-wgmma|memcheck racecheck synccheck
wgmma-epilogue|memcheck racecheck synccheck
reblock|memcheck racecheck synccheck
reblock-odd|memcheck synccheck
few|memcheck racecheck synccheck
kgrid|memcheck racecheck synccheck
merge|memcheck racecheck synccheck
merge-wide-edge|memcheck racecheck synccheck
flash_attention-bq64-merge|memcheck racecheck synccheck
few-edge|memcheck racecheck synccheck
few-zero|memcheck racecheck synccheck
npow2|memcheck racecheck synccheck
npow2-odd|memcheck racecheck synccheck
flash_attention-d96|memcheck racecheck synccheck
flash_attention-causal-bf16-d96|memcheck racecheck synccheck
flash_attention-causal-bk96-d96|memcheck racecheck synccheck
flash_attention-tma-edges-d96|memcheck racecheck synccheck
cluster|memcheck racecheck synccheck
cluster-odd|memcheck racecheck synccheck
decode_attention|memcheck racecheck synccheck
decode_attention-g4-bf16-d64|memcheck racecheck synccheck
paged_attention|memcheck racecheck synccheck
paged_attention-g4-bf16-d64|memcheck racecheck synccheck
small_m|memcheck racecheck synccheck
gather_dots|memcheck racecheck synccheck
early_copies|memcheck racecheck synccheck
ahead|memcheck racecheck synccheck
scans|memcheck racecheck synccheck
KERNELS
}

# One case (called through xargs): runs it, writes WORK/<id>.log and .rc.
# Environment: B, SEED, DEADLINE, CS (compute-sanitizer), WORK.  No case
# runs past DEADLINE + 60 s.
run_case() { # kind name
	local kind=$1 name=$2 id=${1}-${2} t0 rc=0 out left
	local log=$WORK/$id.log
	t0=$(date +%s)
	if [ "$t0" -ge "$DEADLINE" ]; then
		echo "not run: the time budget (--budget) was used up" >"$log"
		echo "1 0" >"$WORK/$id.rc"
		return 0
	fi
	left=$((DEADLINE + 60 - t0))
	lim() { if [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi; }
	timed_out() { [ "$1" -eq 124 ] && echo "TIMEOUT: killed after the time limit" >>"$log"; }
	case $kind in
	kernels)
		# Rows named *merge*: the merged entries on their small grids
		# (PK_CUDA_SM_COUNT; *merge-wide*, whose stub weighs waves, two
		# CTAs at once: PK_CUDA_PERSISTENT_CTAS), and one launched unless
		# the row is *-odd.
		if [[ $name == *merge* ]]; then
			PK_CUDA_SM_COUNT=1 PK_CUDA_PERSISTENT_CTAS=$([[ $name == *merge-wide* ]] && echo 2) PK_CUDA_TRACE=1 timeout "$(lim 300)" python3 "$root/test/gpu-emu/run.py" \
				--run "$B/kernels/$name" --seed "$SEED" -v >"$log" 2>&1
			rc=$?
			timed_out $rc
			if [[ $name != *-odd ]] && ! grep -q '^pk-cuda: launch [A-Za-z0-9_]*__m[_a-z]* ' "$log"; then
				echo "no merged entry launched" >>"$log"
				rc=1
			fi
		else
			timeout "$(lim 300)" python3 "$root/test/gpu-emu/run.py" --run "$B/kernels/$name" --seed "$SEED" -v >"$log" 2>&1
			rc=$?
			timed_out $rc
		fi
		;;
	samples)
		# Default sizes with SEED, the second size set with SEED + 1.
		local second
		second=$(sample_args "$name" second)
		for sizes in default second; do
			local args="--seed $SEED" st
			[ $sizes = second ] && { [ -n "$second" ] || continue; args="--seed $((SEED + 1)) $second"; }
			echo "\$ $name --device cuda -v $args" >>"$log"
			# shellcheck disable=SC2086
			out=$(PK_CUDA_TRACE=1 timeout "$(lim 120)" "$B/samples/$name" --device cuda -v $args 2>&1)
			st=$?
			echo "$out" >>"$log"
			timed_out $st
			grep -q ' OK$' <<<"$out" || st=1
			grep -q 'device: .*(CUDA device' <<<"$out" || { echo "did not run on a CUDA device" >>"$log"; st=1; }
			grep -q '^pk-cuda: launch ' <<<"$out" || { echo "no CUDA launch (PK_CUDA_TRACE)" >>"$log"; st=1; }
			[ $st -ne 0 ] && rc=1
		done
		;;
	exec)
		out=$(PK_CUDA_TRACE=1 timeout "$(lim 120)" "$B/exec/$name" --device cuda 2>&1)
		rc=$?
		echo "$out" >"$log"
		timed_out $rc
		grep -q "^$name: [0-9]* checks OK$" <<<"$out" || rc=1
		grep -q "^$name: device: .*(CUDA device" <<<"$out" || { echo "did not run on a CUDA device" >>"$log"; rc=1; }
		grep -q '^pk-cuda: launch ' <<<"$out" || { echo "no CUDA launch (PK_CUDA_TRACE)" >>"$log"; rc=1; }
		;;
	memcheck | racecheck | synccheck)
		# name: samples.NAME, exec.NAME or kernels.CASE
		local prog=${name#*.} sub=${name%%.*} args=""
		[ "$sub" = samples ] && args="-v $(sample_args "$prog" sanitize)"
		if [ "$sub" = kernels ]; then
			PK_CUDA_SM_COUNT=$([[ $prog == *merge* ]] && echo 1) PK_CUDA_PERSISTENT_CTAS=$([[ $prog == *merge-wide* ]] && echo 2) \
			PK_CUDA_TRACE=1 timeout "$(lim 240)" "$CS" --tool "$kind" --error-exitcode 9 \
				python3 "$root/test/gpu-emu/run.py" --run "$B/kernels/$prog" --seed "$SEED" -v >"$log" 2>&1
		else
			# shellcheck disable=SC2086
			timeout "$(lim 240)" "$CS" --tool "$kind" --error-exitcode 9 \
				"$B/$sub/$prog" --device cuda $args >"$log" 2>&1
		fi
		rc=$?
		timed_out $rc
		grep -Eq '(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)' "$log" || rc=1
		if [ "$sub" = kernels ]; then
			grep -Eq '\.pk: ok$' "$log" || rc=1
			grep -q '^pk-cuda: launch ' "$log" || { echo "no CUDA launch (PK_CUDA_TRACE)" >>"$log"; rc=1; }
		else
			grep -Eq '( OK|checks OK)$' "$log" || rc=1
			grep -q 'device: .*(CUDA device' "$log" || { echo "did not run on a CUDA device" >>"$log"; rc=1; }
		fi
		;;
	esac
	echo "$rc $(($(date +%s) - t0))" >"$WORK/$id.rc"
}

case $mode in
build)
	[ $# -eq 0 ] || usage
	exec "$here/build.sh" "$dir"
	;;
_case)
	run_case "$dir" "$1"
	exit 0
	;;
run) ;;
*) usage ;;
esac

jobs=${PK_GPU_JOBS:-4}
budget=${PK_GPU_BUDGET:-480}
sanitize=1
only=.
while [ $# -gt 0 ]; do
	case $1 in
	--no-sanitize) sanitize=0; shift; continue ;;
	--jobs | --budget | --only) [ $# -ge 2 ] || usage ;;
	*) usage ;;
	esac
	case $1 in
	--jobs) jobs=$2 ;;
	--budget) budget=$2 ;;
	--only) only=$2 ;;
	esac
	shift 2
done
B=$(cd "$dir" 2>/dev/null && pwd) || B=$dir
cd "$root" || exit 1
start=$(date +%s)
SEED=${PK_GPU_SEED:-$((start % 1000000))}
export B SEED DEADLINE=$((start + budget)) WORK
if [ ! -x "$B/probe" ] || [ ! -d "$B/kernels" ]; then
	echo "run.sh: $B is not a complete build: run '$0 build $dir' here first"
	echo "0 passed, 1 failed"
	exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pkc-gpu.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# Binaries built elsewhere may not start here (another C library): relink
# them with libpkrt compiled here.
if [ -x "$B/samples/iota" ] && ! "$B/samples/iota" --help >/dev/null 2>&1; then
	echo "run.sh: the programs in $B do not start here; relinking (test/gpu/build.sh --relink)"
	"$here/build.sh" --relink "$B" >"$WORK/relink.log" 2>&1 || { cat "$WORK/relink.log"; exit 1; }
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 4
if ! "$B/probe" >"$WORK/probe.log" 2>&1; then
	cat "$WORK/probe.log"
	echo "run.sh: the GPU cannot be used through libpkrt: nothing run"
	echo "0 passed, 1 failed"
	exit 1
fi
grep -v '^probe: OK' "$WORK/probe.log"
CS=
if [ $sanitize = 1 ]; then
	for c in "$(command -v compute-sanitizer)" /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
		[ -n "$c" ] && [ -x "$c" ] && { CS=$c; break; }
	done
fi
export CS
echo "seed $SEED (PK_GPU_SEED=$SEED repeats this run); $jobs cases at once; budget ${budget}s"

# The cases, in order: each "kind name".
{
	for p in "$B"/exec/*; do [ -f "$p" ] && [ -x "$p" ] && echo "exec $(basename "$p")"; done
	for p in "$B"/samples/*; do [ -f "$p" ] && [ -x "$p" ] && echo "samples $(basename "$p")"; done
	for d in "$B"/kernels/*/; do echo "kernels $(basename "$d")"; done
	if [ -n "$CS" ]; then
		for tool in memcheck racecheck; do
			for p in "$B"/samples/* "$B"/exec/*; do
				[ -f "$p" ] && [ -x "$p" ] && echo "$tool $(basename "$(dirname "$p")").$(basename "$p")"
			done
		done
		sanitize_kernels | while IFS='|' read -r c tools; do
			for tool in $tools; do
				[ -d "$B/kernels/$c" ] && echo "$tool kernels.$c"
			done
		done
	fi
} | while read -r kind name; do
	grep -Eq -- "$only" <<<"$kind/$name" && echo "$kind $name"
done >"$WORK/cases"

xargs -P "$jobs" -L 1 "$self" _case <"$WORK/cases"

pass=0
fail=0
while read -r kind name; do
	id=$kind-$name
	read -r rc secs <"$WORK/$id.rc" 2>/dev/null || { rc=1; secs=0; echo "no result" >>"$WORK/$id.log"; }
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		# One line of the output: the check's verdict.
		case $kind in
		kernels) note=$(grep -E '\.pk: ok$' "$WORK/$id.log" | tail -n 1) ;;
		samples) note=$(grep -E ' OK$' "$WORK/$id.log" | tr '\n' ';' | sed "s/$name: //g; s/;$//") ;;
		exec) note=$(grep -E '^[a-z_]+: [0-9]+ checks OK$' "$WORK/$id.log" | sed "s/^$name: //") ;;
		*) note=$(grep -Eo '(ERROR|RACECHECK) SUMMARY: .*' "$WORK/$id.log" | tail -n 1) ;;
		esac
		echo "PASS $kind/$name (${secs}s) $note"
	else
		fail=$((fail + 1))
		echo "FAIL $kind/$name (${secs}s, status $rc)"
		grep -Ev '^pk-cuda: |: ok$|^=========\s*$' "$WORK/$id.log" | head -n 25 | sed 's/^/    /'
	fi
done <"$WORK/cases"
if [ $sanitize = 1 ] && [ -z "$CS" ]; then
	echo "FAIL sanitize: compute-sanitizer not found (PATH, /usr/local/cuda/bin)"
	fail=$((fail + 1))
fi
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT/gpu-test" && cp "$WORK"/*.log "$OUT/gpu-test/" 2>/dev/null
	echo "logs in \$OUT/gpu-test"
fi
echo "seed $SEED; $(($(date +%s) - start))s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
