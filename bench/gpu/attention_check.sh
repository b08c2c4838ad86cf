#!/usr/bin/env bash
# bench/gpu/attention_check.sh CARRY - the attention work's one device command
# (issue 14), run from the repository root on the GPU machine, with CARRY
# holding what was built here:
#   CARRY/bench                 bench/gpu/attention.sh build CARRY/bench
#   CARRY/peers_attention.py    the peers (../shared/anchors/peers_attention.py)
#   CARRY/gpu                   test/gpu/build.sh CARRY/gpu (optional)
# It times every variant against the peers (bench/gpu/attention.sh run), prints
# the instruction mix of each variant's cubin (cuobjdump -sass; the SASS of
# flash_attention in $OUT/<variant>.sass), then runs the GPU tests (test/gpu/run.sh, with
# compute-sanitizer) in what is left of $BUDGET seconds (default 470), and
# compute-sanitizer memcheck, racecheck and synccheck on each kernels/ case of
# CARRY/gpu (host against CUDA through test/gpu-emu/run.py; $OUT/sanitize.log).
set -u
cd "$(dirname "$0")/../.." || exit 1
C=${1:?usage: bench/gpu/attention_check.sh CARRY}
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
start=$(date +%s)
bench/gpu/attention.sh run "$C/bench" "$C/peers_attention.py" >"$OUT/bench.log" 2>&1
tail -n 30 "$OUT/bench.log"
for d in "$C"/bench/*-d*; do
	[ -f "$d/fa.cubin" ] || continue
	n=$(basename "$d")
	# The SASS of the first kernel, flash_attention, and its opcodes (modifiers dropped).
	cuobjdump -sass "$d/fa.cubin" 2>&1 | awk '/Function : flash_attention$/{f=1} /Function : flash_attention_/{f=0} f' >"$OUT/$n.sass"
	echo "== $n: $(cat "$OUT/$n.sass" |
		grep -oE '^ +/\*[0-9a-f]{4}\*/ +(@!?U?P[0-9T] +)?[A-Z0-9]+' | awk '{print $NF}' |
		sort | uniq -c | sort -rn | head -n 22 | awk '{printf "%s %s, ", $2, $1}')"
done
left=$((${BUDGET:-470} - ($(date +%s) - start)))
if [ -d "$C/gpu" ] && [ "$left" -gt 30 ]; then
	test/gpu/run.sh run "$C/gpu" --budget "$((left - 20))" >"$OUT/gpu-tests.log" 2>&1
	grep -E "^FAIL" "$OUT/gpu-tests.log" | head -n 20
	tail -n 1 "$OUT/gpu-tests.log"
fi
if [ -d "$C/gpu/kernels" ]; then
	for d in "$C"/gpu/kernels/*/; do
		for tool in memcheck racecheck synccheck; do
			left=$((${BUDGET:-470} - ($(date +%s) - start)))
			[ "$left" -gt 20 ] || break 2
			echo "== $(basename "$d") $tool"
			timeout "$((left - 10))" compute-sanitizer --tool "$tool" --error-exitcode 9 \
				python3 test/gpu-emu/run.py --run "$d" --seed 1 2>&1 | grep -E '\.pk: |SUMMARY|error:' | tail -n 3
		done
	done >"$OUT/sanitize.log"
	grep -c "SUMMARY: 0 " "$OUT/sanitize.log" | sed 's/$/ sanitizer runs clean/'
	grep -vE "^==|SUMMARY: 0 |\.pk: ok$" "$OUT/sanitize.log" | head -n 5
fi
