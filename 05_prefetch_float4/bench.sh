#!/usr/bin/env bash
# Step 05 on a GPU machine in one go: builds the step alone, runs its tests,
# the three benchmark problems of the issue (CSV for bench/results/), Nsight
# Compute on kernel 5b, then the compute-sanitizer tests. Logs go to $OUT.
#   OUT=/tmp/out bash 05_prefetch_float4/bench.sh [--no-ncu] [--no-sanitize]
# NCU_PROBLEMS (default "lecture layer1 layer2") and SAN_TOOLS (default
# "memcheck racecheck initcheck synccheck") choose what those stages do.
# Run from the repository root. Each stage has a time limit so that the
# summary at the end is always printed.
set -u
OUT=${OUT:-/tmp/out05}
LOGS=${LOGS:-$OUT} # build, test and sanitizer logs (CSVs and ncu reports go to $OUT)
B=${B:-/tmp/b05}
ncu_on=1
san_on=1
for a in "$@"; do
  case $a in
  --no-ncu) ncu_on=0 ;;
  --no-sanitize) san_on=0 ;;
  esac
done
mkdir -p "$OUT" "$LOGS"
prog=$B/bin/05_prefetch_float4

cmake -S 05_prefetch_float4 -B "$B" -DCMAKE_BUILD_TYPE=Release >"$LOGS/cmake.log" 2>&1
if ! cmake --build "$B" -j16 >"$LOGS/build.log" 2>&1; then
  echo "== build with steps 02 and 04 failed; building step 05 alone"
  grep -E "error" "$LOGS/build.log" | head -5
  cmake -S 05_prefetch_float4 -B "$B" -DCONV05_COMPARE_STEPS=OFF >>"$LOGS/cmake.log" 2>&1
  cmake --build "$B" -j16 >"$LOGS/build.log" 2>&1 || { tail -30 "$LOGS/build.log"; exit 1; }
fi
grep -E "warning|error" "$LOGS/build.log" | head -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv >"$LOGS/nvidia-smi.csv" 2>&1

CONV_REQUIRE_GPU=1 timeout 150 ctest --test-dir "$B" --output-on-failure -R test_05 -LE sanitize \
  >"$LOGS/ctest.log" 2>&1
echo "== ctest: $(grep -E 'tests passed|tests failed' "$LOGS/ctest.log")"
grep -E "FAIL|Assertion|Failed" "$LOGS/ctest.log" | head -20

bench() { # name, flags...
  local name=$1
  shift
  timeout 60 "$prog" "$@" --csv "$OUT/05_prefetch_float4_$name.csv" >"$LOGS/bench_$name.log" 2>&1
  echo "== $name (rc $?)"
  grep -E "^plan|version|cuDNN|step 0|5a|5b|verdict" "$LOGS/bench_$name.log"
}
bench lecture
bench layer1 --n 10000 --c 1 --h 86 --w 86 --k 4 --filter 7
bench layer2 --n 10000 --c 4 --h 40 --w 40 --k 16 --filter 7

if [ $ncu_on = 1 ]; then
  metrics=sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  metrics=$metrics,smsp__issue_active.avg.pct_of_peak_sustained_active
  metrics=$metrics,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  metrics=$metrics,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  metrics=$metrics,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_pipe_fma.sum
  metrics=$metrics,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
  metrics=$metrics,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio
  for name in ${NCU_PROBLEMS:-lecture layer1 layer2}; do
    case $name in
    layer1) flags="--n 10000 --c 1 --h 86 --w 86 --k 4 --filter 7" ;;
    layer2) flags="--n 10000 --c 4 --h 40 --w 40 --k 16 --filter 7" ;;
    *) flags="" ;;
    esac
    # shellcheck disable=SC2086
    timeout 70 ncu --set basic --section Occupancy --section WarpStateStats \
      --section MemoryWorkloadAnalysis --metrics "$metrics" -k regex:prefetch_5b \
      --launch-count 1 "$prog" --variant 5b --warmup 0 --repeat 1 $flags \
      >"$OUT/05_prefetch_float4_ncu_$name.txt" 2>&1
    echo "== ncu $name (rc $?)"
    grep -E "Duration|SM Frequency|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Thr|DRAM Thr|pipe_fma|issue_active|bank_conflicts|wavefronts|Warp Cycles Per Issued" \
      "$OUT/05_prefetch_float4_ncu_$name.txt" | head -20
    grep -E "issue_stalled" "$OUT/05_prefetch_float4_ncu_$name.txt" | awk '$NF > 0.1' | head -12
  done
fi

if [ $san_on = 1 ]; then
  for tool in ${SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
    CONV_REQUIRE_GPU=1 timeout 90 ctest --test-dir "$B" --output-on-failure \
      -R "test_05.*sanitize.$tool" >"$LOGS/sanitize_$tool.log" 2>&1
    echo "== sanitize $tool (rc $?): $(grep -E 'tests passed|tests failed' "$LOGS/sanitize_$tool.log")"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$LOGS/sanitize_$tool.log" | sort | uniq -c | head -5
    grep -A12 -E "^========= (Invalid|Program hit|Error|Race|Uninit|Barrier)" "$LOGS/sanitize_$tool.log" |
      head -40
  done
fi
