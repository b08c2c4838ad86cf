#!/usr/bin/env bash
# bench/gpu/attention_profile.sh DIR - on the GPU machine: Nsight Compute on pkc's flash
# attention (one launch of each variant built by `bench/gpu/attention.sh build DIR`, after
# warm-ups), the SASS of each cubin, and (PEER=1) torch SDPA's cuDNN kernel at d128 for
# comparison (sequence length PEER_SEQ, default 4096).  Everything lands in $OUT/prof/ and is
# packed as $OUT/prof.tar.gz.
set -u
D=${1:-build/gpu-attn}
# shellcheck source=bench/gpu/ncu_util.sh
. "$(dirname "$0")/ncu_util.sh"
ncu_dir prof
SECS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
      --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats
      --section MemoryWorkloadAnalysis --section SourceCounters"
for v in ${VARIANTS:-pkc-d128-full pkc-d64-full}; do
	[ -x "$D/$v/bench_attention" ] || continue
	"$CUOBJ" -sass "$D/$v/fa.cubin" >"$P/$v.sass" 2>&1
	"$CUOBJ" -res-usage "$D/$v/fa.cubin" >"$P/$v.res" 2>&1
	ncu_profile "$P" "$v" '^flash_attention$' 3 "$SECS" \
		"Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc A|No Eligible|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued" \
		"$D/$v/bench_attention" --reps 1 --warmup 3
	"$NCU" -i "$P/$v.ncu-rep" --page source --csv --print-source sass >"$P/$v.source.csv" 2>&1
done
if [ "${PEER:-0}" = 1 ]; then
	cat >"$P/cudnn.py" <<'PY'
import os
import torch
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(4, 16, int(os.environ.get("PEER_SEQ", 4096)), 128, device="cuda", dtype=torch.float16) for _ in range(3))
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for _ in range(5):
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
PY
	# shellcheck disable=SC2086
	timeout 200 "$NCU" --clock-control none --launch-skip 3 --launch-count 1 $SECS --import-source no \
		-f -o "$P/cudnn-d128-${PEER_SEQ:-4096}" python3 "$P/cudnn.py" >"$P/cudnn.ncu.log" 2>&1
	"$NCU" -i "$P/cudnn-d128-${PEER_SEQ:-4096}.ncu-rep" --page details >"$P/cudnn-d128-${PEER_SEQ:-4096}.details.txt" 2>&1
	grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc A|No Eligible|Achieved Occupancy|Registers Per|Warp Cycles Per Issued" "$P/cudnn-d128-${PEER_SEQ:-4096}.details.txt" | head -20
fi
tar -C "$OUT" -czf "$OUT/prof.tar.gz" prof && rm -rf "$P"
