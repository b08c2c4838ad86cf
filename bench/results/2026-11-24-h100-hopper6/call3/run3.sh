#!/usr/bin/env bash
# Device call 3 of helper hopper6 (issue 13): the branch (persistent CTAs where
# the schedule gives a CTA the SM alone, the copy engine's coordinates out of
# thread 0's branch) against main and "bp" (persistent CTAs only, efc5fa0; its
# first_ds kernels launch their __a16 variant on too few CTAs: ignore them),
# three rounds; run from the
# repository root of the device's copy of main, with .hopper6-carry carried
# (main's and the branch's user-matmul builds, the branch's GPU test build,
# attention built with both, the branch's test/gpu scripts in tree/).
set -u
export PATH=$PATH:/usr/local/cuda/bin
C=.hopper6-carry
export PK_GPU_ONLY='matmul|wgmma|tma|sched|epilogue|einsum'
R=$OUT/r; mkdir -p "$R"
cp "$C"/tree/test/gpu/kernels.txt test/gpu/kernels.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$R/smi.txt"
# SASS: HGMMA and the copy engine's issue (the ELECT loop of hopper4's note).
for b in main bp br; do
	cuobjdump -sass "$C/um-$b/user.cubin" >"$R/sass-$b.txt" 2>&1
done
python3 - "$R" <<'PY' >"$R/sass-summary.txt"
import re, sys
for b in ("main", "bp", "br"):
    text = open(f"{sys.argv[1]}/sass-{b}.txt").read()
    for fn in re.split(r"\n\s*Function : ", text)[1:]:
        name = fn.split("\n", 1)[0].strip()
        ops = {k: len(re.findall(k, fn)) for k in ("HGMMA", "UTMALDG", "ELECT", r"BRA\.U\.ANY", "LDL", "STL", "BAR.SYNC")}
        print(b, name, " ".join(f"{k}={v}" for k, v in ops.items()))
PY
PYTHONUNBUFFERED=1 timeout 200 python3 bench/gpu/cublas_shapes.py >"$R/cublas.log" 2>&1
for round in 1 2 3; do
	for b in main bp br; do
		PK_DEVICE=cuda timeout 120 "$C/um-$b/matmul_user" >"$R/user-$b$round.log" 2>&1
	done
done
OUT=$R/attn timeout 150 bench/gpu/attention.sh run "$C/attn" >"$R/attention.log" 2>&1
OUT=$R/gt timeout 200 test/gpu/run.sh run "$C/gpu" --budget 150 >"$R/gpu-tests.log" 2>&1
echo "gpu tests rc=$?" >>"$R/gpu-tests.log"
PK_CUDA_PERSISTENT_CTAS=3 OUT=$R/gt3 timeout 150 test/gpu/run.sh run "$C/gpu" --budget 100 \
	--only 'tma|sched|wgmma|matmul' >"$R/gpu-tests-3ctas.log" 2>&1
echo "gpu tests (3 CTAs) rc=$?" >>"$R/gpu-tests-3ctas.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r
