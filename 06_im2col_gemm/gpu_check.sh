#!/usr/bin/env bash
# Step 06 on the GPU machine in one go: build standalone, benchmarks (CSV into
# $OUT), tests, compute-sanitizer, and ncu on 6e/6f. Run from the repository root:
#   OUT=/tmp/out bash 06_im2col_gemm/gpu_check.sh [bench|test|sanitize|ncu|stalls|tune|pick ...]
# The device tool brings back at most 8 files: the CSVs come back one by one,
# every log inside $OUT/06_logs.tar.gz.
set -u
FINAL_OUT=${OUT:-/tmp/out06}
OUT=/tmp/06_logs
B=${B:-/tmp/b06}
mkdir -p "$OUT" "$FINAL_OUT"
trap 'cp "$OUT"/*.csv "$FINAL_OUT"/ 2>/dev/null; tar czf "$FINAL_OUT/06_logs.tar.gz" -C /tmp 06_logs' EXIT
parts=${*:-bench test ncu sanitize}
cmake -S 06_im2col_gemm -B "$B" -DCMAKE_BUILD_TYPE=Release >"$OUT/cmake.log" 2>&1 &&
  cmake --build "$B" -j16 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
bin=$B/bin/06_im2col_gemm
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv >"$OUT/smi.txt" 2>&1
lab="--n 128 --c 128 --h 100 --w 100 --k 128 --filter 3 --padding same"
cutlass="--n 8 --c 128 --h 224 --w 224 --k 128 --filter 3 --padding same"
for part in $parts; do
  case $part in
  bench)
    $bin --mode gemm --m 4096 --n 4096 --k 4096 --csv "$OUT/06_gemm_4096.csv" >"$OUT/gemm_4096.log" 2>&1
    $bin --mode gemm --m 1280000 --n 128 --k 1152 --csv "$OUT/06_gemm_lab.csv" >"$OUT/gemm_lab.log" 2>&1
    $bin --layout nhwc $lab --csv "$OUT/06_lab_nhwc.csv" >"$OUT/lab_nhwc.log" 2>&1
    $bin --layout nchw $lab --csv "$OUT/06_lab_nchw.csv" >"$OUT/lab_nchw.log" 2>&1
    $bin --layout nhwc $cutlass --csv "$OUT/06_cutlass_nhwc.csv" >"$OUT/cutlass_nhwc.log" 2>&1
    for f in gemm_4096 gemm_lab lab_nhwc lab_nchw cutlass_nhwc; do echo "== $f"; grep -v "^#" "$OUT/$f.log" | tail -16; done
    ;;
  test)
    CONV_REQUIRE_GPU=1 timeout 200 ctest --test-dir "$B" --output-on-failure -LE sanitize -R test_06 \
      >"$OUT/ctest.log" 2>&1
    : >"$OUT/gpu_tests_verbose.log"
    for t in im2col gemm conv; do
      "$B/test_06_$t" --jobs=1 --verbose --filter "gpu_*/*" >>"$OUT/gpu_tests_verbose.log" 2>&1
    done
    tail -6 "$OUT/ctest.log"
    ;;
  sanitize)
    for tool in memcheck racecheck initcheck synccheck; do
      t=${SAN_TIMEOUT:-90}; [ $tool = racecheck ] && t=${RACE_TIMEOUT:-240}
      CONV_REQUIRE_GPU=1 timeout -k 5 $t ctest --test-dir "$B" --output-on-failure -R "test_06.*sanitize.$tool" \
        >"$OUT/san_$tool.log" 2>&1
      echo "$tool rc=$?: $(grep -E 'tests passed|tests failed' "$OUT/san_$tool.log")"
    done
    ;;
  tune)
    cmake --build "$B" -j16 --target 06_tune_6e >"$OUT/tune_build.log" 2>&1 &&
      "$B/bin/06_tune_6e" 2>&1 | tee "$OUT/tune.log"
    ;;
  pick)
    # Rebuild 6e/6f with the shape whose worst GEMM ratio to cuBLAS in tune.log
    # is the highest (all its sampled checks OK); the default when none is.
    best=$(awk '/% of cuBLAS/ { n = $1; v = $6; sub("%", "", v);
                  if (!(n in mn) || v + 0 < mn[n]) mn[n] = v + 0;
                  if ($0 !~ / OK \(/ || $0 !~ /no error/) bad[n] = 1 }
                END { bv = -1; for (n in mn) if (!(n in bad) && mn[n] > bv) { bv = mn[n]; b = n }
                      print b }' "$OUT/tune.log" 2>/dev/null)
    set -- $(echo "${best:-bm64_tm8_bk16_minb3_wr4}" |
      sed -E 's/bm([0-9]+)_tm([0-9]+)_bk([0-9]+)_minb([0-9]+)_wr([0-9]+)/\1 \2 \3 \4 \5/')
    echo "chosen 6e shape: ${best:-default} -> DBUF_BM=$1 DBUF_TM=$2 DBUF_BK=$3 DBUF_MINB=$4 DBUF_WR=$5" | tee "$OUT/chosen.txt"
    cmake -S 06_im2col_gemm -B "$B" -DCMAKE_CUDA_FLAGS="-DDBUF_BM=$1 -DDBUF_TM=$2 -DDBUF_BK=$3 -DDBUF_MINB=$4 -DDBUF_WR=$5" \
      >>"$OUT/cmake.log" 2>&1 && cmake --build "$B" -j16 >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    ;;
  racecheck)
    : >"$OUT/san_racecheck_verbose.log"
    for t in im2col gemm conv; do
      CONV_REQUIRE_GPU=1 CONV_UNDER_SANITIZER=racecheck timeout -k 5 "${SAN_TIMEOUT:-90}" \
        compute-sanitizer --tool racecheck --target-processes all --error-exitcode 1 "$B/test_06_$t" --jobs=1 --verbose \
        --filter "gpu_*/*" >>"$OUT/san_racecheck_verbose.log" 2>&1
      echo "racecheck test_06_$t rc=$?"
    done
    grep -E "PASS|FAIL|Synthesis|ERROR" "$OUT/san_racecheck_verbose.log" | tail -40
    ;;
  stalls)
    # Issue, FMA-pipe, shared-memory and stall metrics of 6e and of cuBLAS's
    # kernel at 4096^3 (bench/results/06_ncu_stalls_*_4096.txt).
    m="launch__registers_per_thread,launch__block_size,launch__grid_size,launch__shared_mem_per_block_static"
    m="$m,launch__shared_mem_per_block_dynamic,gpu__time_duration.sum,smsp__cycles_active.avg,smsp__inst_executed.sum"
    m="$m,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
    m="$m,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,sm__cycles_elapsed.avg.per_second"
    m="$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
    for r in barrier short_scoreboard long_scoreboard mio_throttle math_pipe_throttle not_selected selected wait \
      dispatch_stall no_instruction lg_throttle branch_resolving misc; do
      m="$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
    done
    for v in 6e cublas; do
      kernel="gemm_6e"; [ $v = cublas ] && kernel="xmma|sgemm" # the program runs cuBLAS first either way
      timeout 120 ncu --kernel-name regex:"$kernel" --launch-count 1 --metrics "$m" \
        $bin --mode gemm --gemm $v --m 4096 --n 4096 --k 4096 --warmup 0 --repeat 1 \
        >"$OUT/06_ncu_stalls_${v}_4096.txt" 2>&1
      grep -E "issue_active|pipe_fma|stalled_(dispatch|wait|short)" "$OUT/06_ncu_stalls_${v}_4096.txt"
    done
    ;;
  ncu)
    sections="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
    timeout 120 ncu --kernel-name regex:"gemm_6e" --launch-skip 2 --launch-count 1 $sections \
      $bin --mode gemm --gemm 6e --m 4096 --n 4096 --k 4096 --warmup 2 --repeat 1 >"$OUT/06_ncu_6e_4096.txt" 2>&1
    timeout 120 ncu --kernel-name regex:"conv2d_implicit_gemm" --launch-skip 2 --launch-count 1 $sections \
      $bin --layout nhwc $lab --gemm 6f --warmup 2 --repeat 1 >"$OUT/06_ncu_6f_lab.txt" 2>&1
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Executed Ipc A|Bank" \
      "$OUT/06_ncu_6e_4096.txt" "$OUT/06_ncu_6f_lab.txt" | head -30
    ;;
  esac
done
