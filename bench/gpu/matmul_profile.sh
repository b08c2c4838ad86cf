#!/usr/bin/env bash
# bench/gpu/matmul_profile.sh DIR NAME... - on the GPU machine: Nsight Compute on user
# matmuls built by `bench/gpu/user_matmul.sh build DIR` (one launch of each kernel NAME,
# e.g. n96_ds_f16, at SHAPES, default 8192^3, after warm-ups) and the figures that say
# what bounds it: tensor pipe, issue, shared-memory bank conflicts, L2 and DRAM traffic,
# stall reasons.  Reports land in $OUT/mprof/, packed as $OUT/mprof.tar.gz.
set -u
D=${1:?usage: $0 DIR NAME...}
shift
export SHAPES=${SHAPES:-8192x8192x8192}
# shellcheck source=bench/gpu/ncu_util.sh
. "$(dirname "$0")/ncu_util.sh"
ncu_dir mprof
SECS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
      --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis
      --metrics sm__pipe_tensor_op_hgmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,lts__t_bytes.sum,dram__bytes.sum"
for name in "$@"; do
	ncu_profile "$P" "$name" "^$name" 2 "$SECS" \
		"Duration|Compute \(SM\) Throughput|Issue Slots Busy|Registers Per|Block Size|Grid Size|Achieved Occupancy|hgmma|bank_conflicts|lts__t_bytes|dram__bytes|L2 Hit Rate|Warp Cycles Per Issued|Stall" \
		"$D/matmul_user" --only "$name" --reps 1 --warmup 2
done
tar -C "$OUT" -czf "$OUT/mprof.tar.gz" mprof && rm -rf "$P"
