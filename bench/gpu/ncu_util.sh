# shellcheck shell=bash
# bench/gpu/ncu_util.sh - sourced by the *_profile.sh scripts (on the GPU machine):
# Nsight Compute found once, and one profile run with its report and summary.
#
#   ncu_dir SUB   sets P to $OUT/SUB ($OUT default /tmp/out) and makes it
#   ncu_profile DIR NAME KERNEL_REGEX SKIP "SECTIONS" PATTERN CMD...
#       profiles launch SKIP + 1 of the kernels matching KERNEL_REGEX while CMD runs
#       (clocks not locked, at most 200 s), into DIR/NAME.ncu-rep, its details page into
#       DIR/NAME.details.txt, and prints "== NAME" and the details' lines matching PATTERN.
# shellcheck disable=SC2012
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
# shellcheck disable=SC2034 # used by the scripts that source this
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)

ncu_dir() {
	export OUT=${OUT:-/tmp/out}
	P=$OUT/$1
	mkdir -p "$P"
}

ncu_profile() {
	local dir=$1 name=$2 kernel=$3 skip=$4 secs=$5 pattern=$6
	shift 6
	# shellcheck disable=SC2086
	timeout 200 "$NCU" --clock-control none -k regex:"$kernel" --launch-skip "$skip" --launch-count 1 \
		$secs --import-source no -f -o "$dir/$name" "$@" >"$dir/$name.ncu.log" 2>&1
	"$NCU" -i "$dir/$name.ncu-rep" --page details >"$dir/$name.details.txt" 2>&1
	echo "== $name"
	grep -E "$pattern" "$dir/$name.details.txt" | head -40
}
