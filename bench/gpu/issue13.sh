#!/usr/bin/env bash
# bench/gpu/issue13.sh DIR [STEPS] - one device command for the Hopper
# matmul work (issue 13), on the GPU machine, over a directory built here:
#   DIR/gpu    test/gpu/build.sh's build    DIR/user   bench/gpu/user_matmul.sh build
#   DIR/peers.py  (optional) a copy of /work/shared/anchors/peers.py
# STEPS (default "sass tests user"), in order:
#   sass    cuobjdump -sass of DIR/user/user.cubin: per kernel HGMMA, HMMA,
#           LDL/STL counts (spills in local memory), UTMALDG (copy engine)
#   tests   test/gpu/run.sh run DIR/gpu --only "$GPU_ONLY" (default: the dot
#           and matmul cases, memcheck/racecheck of the matmul samples)
#   user    cuBLAS on the shapes, then every user-written matmul (PEERS=1),
#           then those of DIR/user2 if built (other configurations)
#   bench   bench/gpu/run.sh DIR/gpu DIR/peers.py (pkc, peers, pkc again)
#   sweep   bench/gpu/sweep_matmul.sh run DIR/sweep
#   sanitize  compute-sanitizer memcheck and synccheck on the kernels/
#           cases of SAN_CASES (default: the copy-engine ones, tma*)
# Logs go to $OUT (default /tmp/out).
set -u
cd "$(dirname "$0")/../.." || exit 1
D=${1:?usage: $0 DIR [STEPS]}
steps=${2:-"sass tests user"}
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
for s in $steps; do
	echo "== $s ($(date -u +%T))"
	case $s in
	sass)
		cuobjdump -sass "$D/user/user.cubin" >"$OUT/user.sass" 2>&1
		awk '/Function :/ { f = $3 } /HGMMA/ { h[f]++ } /HMMA/ && !/HGMMA/ { m[f]++ } /LDL|STL/ { l[f]++ }
		     /UTMALDG/ { t[f]++ } /Function :/ { all[$3] = 1 }
		     END { for (f in all) printf "%-26s HGMMA %4d  HMMA %4d  LDL/STL %4d  UTMALDG %3d\n", f, h[f], m[f], l[f], t[f] }' \
			"$OUT/user.sass" | sort >"$OUT/sass-summary.txt"
		rm -f "$OUT/user.sass"
		awk '{ n++; h += $3; m += $5; l += $7; if ($3 == 0) z++ } END { printf "%d kernels: HGMMA in all but %d; HMMA %d; LDL/STL %d\n", n, z, m, l }' \
			"$OUT/sass-summary.txt"
		grep -v 'LDL/STL    0' "$OUT/sass-summary.txt" | head -n 20
		echo "kernels with the copy engine (UTMALDG): $(grep -vc 'UTMALDG   0' "$OUT/sass-summary.txt")"
		;;
	tests)
		test/gpu/run.sh run "$D/gpu" --budget "${GPU_BUDGET:-200}" \
			--only "${GPU_ONLY:-wgmma|sched|dots|matmul|bmm|exec/dot|exec-dot|exec/accum|exec-accum}" 2>&1 |
			tee "$OUT/gpu-tests.log" | grep -v '^PASS'
		;;
	user)
		PEERS=1 bench/gpu/user_matmul.sh run "$D/user" 2>&1 | tee "$OUT/user.log"
		if [ -d "$D/user2" ]; then
			bench/gpu/user_matmul.sh run "$D/user2" 2>&1 | tee "$OUT/user2.log"
		fi
		;;
	bench)
		bench/gpu/run.sh "$D/gpu" "$D/peers.py" 2>&1 | tail -n 30
		;;
	sweep)
		bench/gpu/sweep_matmul.sh run "$D/sweep" 2>&1 | tee "$OUT/sweep.log"
		;;
	sanitize)
		for c in ${SAN_CASES:-tma tma-unaligned tma-exact}; do
			for tool in memcheck synccheck; do
				log=$OUT/san-$tool-$c.log
				timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 python3 test/gpu-emu/run.py \
					--run "$D/gpu/kernels/$c" --seed 7 -v >"$log" 2>&1
				echo "$tool $c: exit $? $(grep -E 'ERROR SUMMARY|MISMATCH|status|tma.pk:' "$log" | tail -n 3 | tr '\n' ' ')"
			done
		done
		;;
	esac
done
