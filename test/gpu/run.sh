#!/bin/sh
# run.sh - execution tests of the CUDA back end on a real GPU.
#
#   test/gpu/run.sh build DIR   here: compiles every case (pkc --target=host,sm_90a, linked with
#                               libpkrt) into DIR; needs `make` done (PKC, LIBPKRT override)
#   test/gpu/run.sh run DIR     on the GPU machine: runs every case on CUDA device 0
#                               (python3 with numpy there; no pkc, no LLVM needed)
#
# Cases: each sample program (samples/*.c: the kernel on the GPU against its
# C reference), and each kernel of the samples and of test/gpu-emu/Inputs
# run twice through its launch function -- host variant, CUDA variant --
# with the outputs compared (test/gpu-emu/run.py --run).  Prints one line
# per case and "N passed, N failed" last; exits 1 if any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:-}
dir=${2:-}
if [ -z "$mode" ] || [ -z "$dir" ]; then
	echo "usage: $0 build|run DIR" >&2
	exit 2
fi
PKC=${PKC:-$root/build/bin/pkc}
LIBPKRT=${LIBPKRT:-$root/build/lib/libpkrt.a}
TARGET=${TARGET:-host,sm_90a}

# name | .pk | run.py arguments (sizes, scalars, integer range)
cases() {
	cat <<'CASES'
add_one|samples/add_one.pk|--size n=1000001
add_vectors|samples/add_vectors.pk|--size n=10000019
bmm|samples/bmm.pk|--size batch=3 --size m=100 --size n=70
histogram|samples/histogram.pk|--size n=1000003 --int-range=-10,80
layernorm|samples/layernorm.pk|--size rows=1001 --scalar eps=1e-5
matmul|samples/matmul.pk|
matmul_kgrid|samples/matmul_kgrid.pk|--size m=200 --size n=150 --size k=256
matmul_relu|samples/matmul_relu.pk|--size m=300 --size n=200
matmul_tiled|samples/matmul_tiled.pk|--size m=300 --size n=200
rmsnorm|samples/rmsnorm.pk|--size rows=1001 --scalar eps=1e-5
softmax|samples/softmax.pk|--size rows=1001
elementwise|test/gpu-emu/Inputs/elementwise.pk|--size n=100003 --int-range=-50,50
reductions|test/gpu-emu/Inputs/reductions.pk|--size r=1001 --int-range=-50,50
shapes|test/gpu-emu/Inputs/shapes.pk|
memory|test/gpu-emu/Inputs/memory.pk|--size n=100003 --size m=1001 --int-range=0,15
atomics|test/gpu-emu/Inputs/atomics.pk|--size n=100003 --int-range=0,15
control|test/gpu-emu/Inputs/control.pk|--scalar flag=3
scratch|test/gpu-emu/Inputs/scratch.pk|--size m=1001
dots|test/gpu-emu/Inputs/dots.pk|--size m=300 --size n=208 --int-range=-20,20
grid|test/gpu-emu/Inputs/grid.pk|--size a=30 --size b=50
CASES
}

pass=0
fail=0
report() { # name, status
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "PASS $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi
}

case $mode in
build)
	mkdir -p "$dir/kernels" "$dir/samples"
	cp "$root/test/gpu-emu/run.py" "$dir/run.py"
	cases | while IFS='|' read -r name pk args; do
		# shellcheck disable=SC2086
		python3 "$root/test/gpu-emu/run.py" --pkc "$PKC" --target "${TARGET#host,}" --libpkrt "$LIBPKRT" \
			--build-only "$dir/kernels/$name" "$root/$pk" $args || echo "build failed: $name" >&2
	done
	# The sample programs, against their C references.
	for c in "$root"/samples/*.c; do
		s=$(basename "$c" .c)
		[ -f "$root/samples/$s.pk" ] || continue
		"$PKC" --target="$TARGET" "$root/samples/$s.pk" -o "$dir/samples/$s.o" -H "$dir/samples/$s.h" &&
		cc -std=c11 -O2 -I"$dir/samples" -I"$root/runtime" -I"$root/samples/common" -o "$dir/samples/$s" "$c" \
			"$dir/samples/$s.o" "$root/samples/common/sample_util.c" "$LIBPKRT" -lm -pthread -ldl ||
			echo "build failed: sample $s" >&2
	done
	echo "built into $dir: run '$0 run $dir' on the GPU machine"
	;;
run)
	nvidia-smi -L 2>/dev/null | head -n 1
	for d in "$dir"/kernels/*/; do
		name=$(basename "$d")
		out=$(python3 "$dir/run.py" --run "$d" -v 2>&1)
		st=$?
		echo "$out" | grep -v ': ok' | sed "s/^/  $name: /"
		report "kernels/$name" $st
	done
	for p in "$dir"/samples/*; do
		case $p in *.o | *.h) continue ;; esac
		[ -x "$p" ] || continue
		s=$(basename "$p")
		out=$("$p" --device auto -v 2>&1)
		st=$?
		echo "$out" | sed "s/^/  $s: /"
		echo "$out" | grep -q 'OK$' || st=1
		echo "$out" | grep -qi 'cuda\|nvidia\|sm_' || { echo "  $s: did not run on a CUDA device"; st=1; }
		report "samples/$s" $st
	done
	# compute-sanitizer: memcheck and racecheck on every sample program, at
	# small sizes (the tools slow kernels down 10-100x); zero errors required.
	if command -v compute-sanitizer >/dev/null 2>&1; then
		for p in "$dir"/samples/*; do
			case $p in *.o | *.h) continue ;; esac
			[ -x "$p" ] || continue
			s=$(basename "$p")
			for tool in memcheck racecheck; do
				out=$(timeout "${SANITIZE_TIMEOUT:-40}" compute-sanitizer --tool "$tool" --error-exitcode 9 "$p" --device auto 2>&1)
				st=$?
				echo "$out" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|OK$|FAILED' | sed "s/^/  $s $tool: /"
				report "sanitize/$tool/$s" $st
			done
		done
	else
		echo "compute-sanitizer not found: sanitizer runs skipped"
		fail=$((fail + 1))
	fi
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	;;
*)
	echo "usage: $0 build|run DIR" >&2
	exit 2
	;;
esac
