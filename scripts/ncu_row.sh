#!/usr/bin/env bash
# Profiles one kernel of one conv_bench row with Nsight Compute and prints the
# metrics the lecture notes discuss.
#   scripts/ncu_row.sh PROBLEM STEP KERNEL_REGEX [BUILD_DIR]
#   scripts/ncu_row.sh lecture 02 conv2d_naive_kernel
#   scripts/ncu_row.sh conv1d 03 conv1d_tiled_s1
# PROBLEM is a conv_bench --problem name, STEP a --steps entry (01..10,
# cudnn), KERNEL_REGEX selects the kernel (ncu -k regex:...). The first
# launch after one warm-up run is profiled. Needs ncu (CUDA toolkit) and a GPU;
# profiling counters usually need root or the driver's permission.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,11p' "$0"; exit 2; }
problem=$1 step=$2 kernel=$3
build=${4:-$(cd "$(dirname "$0")/.." && pwd)/build/release}
bench="$build/bin/conv_bench"
[ -x "$bench" ] || { echo "ncu_row: $bench not built (scripts/run.sh builds it)" >&2; exit 2; }
metrics=(
  gpu__time_duration.sum
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  dram__bytes_read.sum
  dram__bytes_write.sum
  lts__t_sector_hit_rate.pct
  l1tex__t_sector_hit_rate.pct
  sm__warps_active.avg.pct_of_peak_sustained_active
  launch__registers_per_thread
  launch__occupancy_limit_registers
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
  smsp__issue_active.avg.pct_of_peak_sustained_active
)
joined=$(IFS=,; echo "${metrics[*]}")
ncu --kernel-name "regex:$kernel" --launch-skip 1 --launch-count 1 --metrics "$joined" \
  "$bench" --problem "$problem" --steps "$step" --warmup 1 --repeat 1 \
  | sed -n '/==PROF==/d;/Section:/,$p'
