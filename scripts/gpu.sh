#!/usr/bin/env bash
# Everything one does on a machine with a GPU, for every step, in one script:
#
#   scripts/gpu.sh build                 configure and build (build/gpu, or $BUILD)
#   scripts/gpu.sh test                  every test but the sanitizers, a GPU required
#   scripts/gpu.sh sanitize              the GPU tests under compute-sanitizer
#   scripts/gpu.sh check [PREV]          test and sanitize at once, one summary line;
#                                        PREV: an interrupted check's log folder (same
#                                        tree), whose passed tests are not run again
#   scripts/gpu.sh sweep [COUNT] [SEED]  the randomized shape sweep (default 200 shapes)
#   scripts/gpu.sh bench [ARGS...]       conv_bench (default --problem all), CSV and JSON,
#                                        and PyTorch on the same shapes where it is installed
#   scripts/gpu.sh models                conv_bench --model resnet50 in NHWC and NCHW, PyTorch beside,
#                                        and in NHWC at batch 1
#   scripts/gpu.sh results STEP...       the measurements behind a lecture note's tables
#                                        (02 to 10, or all), as CSV files
#   scripts/gpu.sh ncu PROBLEM STEP KERNEL  Nsight Compute on one conv_bench row
#   scripts/gpu.sh tune                  step 06's tuning harness (6e/6f tile shapes; the
#                                        instructor's, instructor/tuning/)
#
# Parts can be chained: scripts/gpu.sh build test sanitize. Results (CSV, JSON)
# go to $RESULTS (default bench/results: the notes' tables are generated from
# there by scripts/doc_tables.py), profiler logs to $RESULTS/logs, the tuning
# harness's log to instructor/logs/06_tune_6e.txt, build and test logs to $LOGS
# (default build/gpu-logs). Environment:
#   BUILD    build folder (default build/gpu)
#   ARCHS    CMAKE_CUDA_ARCHITECTURES for the build (default: the GPU found)
#   CONV_SMEM_LIMIT_KB  run as a GPU with that much shared memory per block
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
BUILD=${BUILD:-$root/build/gpu}
RESULTS=${RESULTS:-$root/bench/results}
LOGS=${LOGS:-$root/build/gpu-logs}
mkdir -p "$LOGS" "$RESULTS/logs"
bin=$BUILD/bin
export CONV_REQUIRE_GPU=1 # on a GPU machine a skipped GPU test is a failure
status=0

say() { printf '== %s\n' "$*"; }

build() {
  local archs=()
  [ -n "${ARCHS:-}" ] && archs=(-DCMAKE_CUDA_ARCHITECTURES="$ARCHS")
  bash scripts/setup.sh >/dev/null || echo "gpu.sh: scripts/setup.sh could not install what is missing; building anyway"
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${archs[@]}" >"$LOGS/configure.log" 2>&1 &&
    cmake --build "$BUILD" -j "$(nproc)" >"$LOGS/build.log" 2>&1
  local rc=$?
  grep -E "CUDA architectures|compute-sanitizer" "$LOGS/configure.log"
  [ $rc = 0 ] || grep -E "error" "$LOGS/build.log" | head -20
  say "build rc=$rc"
  return $rc
}

run_ctest() { # log name, ctest arguments...
  local log=$LOGS/$1.log
  shift
  ctest --test-dir "$BUILD" --output-on-failure -j "${CTEST_PARALLEL_LEVEL:-4}" "$@" >"$log" 2>&1
  local rc=$?
  grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|\*\*\*Skipped|GPU tests" "$log" | tail -15
  return $rc
}

# The tree's fingerprint (its files, the build and log folders left out).
tree_id() {
  find . \( -path ./.git -o -path './build*' -o -path ./.device \) -prune -o -type f -print |
    LC_ALL=C sort | xargs md5sum | md5sum | cut -c1-12
}

# The names of the tests these ctest logs show Passed, or any other end.
ended_tests() { # Passed|other, logs...
  local want=$1
  shift
  cat "$@" 2>/dev/null | grep -E "Test +#[0-9]+: " |
    if [ "$want" = Passed ]; then grep -E " Passed "; else grep -vE " Passed "; fi |
    sed -E 's/.*Test +#[0-9]+: ([^ ]+) .*/\1/' | sort -u
}

# Both labels at once: the GPU tests share the GPU, the sanitizer's runs are
# reniced so that the CPU-only self-checks keep their cores. With PREV, the
# tests PREV's logs show Passed are left out, and the summary counts both runs.
check() { # PREV or ""
  local prev=$1 ex=() names label all missing bad rcs=""
  tree_id >"$LOGS/check-tree.txt"
  if [ -n "$prev" ]; then
    if [ "$(cd "$prev" && pwd)" = "$(cd "$LOGS" && pwd)" ]; then
      echo "gpu.sh: $prev is where this check writes its logs: move the earlier run's away first"
      return 1
    fi
    if ! cmp -s "$prev/check-tree.txt" "$LOGS/check-tree.txt"; then
      echo "gpu.sh: $prev/check-tree.txt is not this tree's fingerprint: run check alone"
      return 1
    fi
    names=$(ended_tests Passed "$prev"/check-*.log)
    [ -n "$names" ] && ex=(-E "$(sed -E 's/[][\.^$*+?(){}|]/\\&/g; s/.*/^&$/' <<<"$names" | paste -sd'|')")
  fi
  local j=${CTEST_PARALLEL_LEVEL:-$(nproc)}
  ctest --test-dir "$BUILD" --output-on-failure -j "$j" -LE sanitize "${ex[@]}" \
    >"$LOGS/check-tests.log" 2>&1 &
  nice -n 10 ctest --test-dir "$BUILD" --output-on-failure -j "$j" -L sanitize "${ex[@]}" \
    >"$LOGS/check-sanitize.log" 2>&1 &
  wait
  for label in tests sanitize; do
    local sel=(-LE sanitize)
    [ $label = sanitize ] && sel=(-L sanitize)
    all=$(ctest --test-dir "$BUILD" -N "${sel[@]}" | sed -nE 's/.*Test +#[0-9]+: ([^ ]+).*/\1/p' | sort -u)
    missing=$(comm -23 <(echo "$all") <(ended_tests Passed ${prev:+"$prev"/check-$label.log} "$LOGS/check-$label.log"))
    bad=$(ended_tests other ${prev:+"$prev"/check-$label.log} "$LOGS/check-$label.log")
    say "$label: $(( $(grep -c . <<<"$all") - $(grep -c . <<<"$missing") )) of $(grep -c . <<<"$all") passed${prev:+ (with $prev)}"
    if [ -n "$missing$bad" ]; then
      echo "not passed:" $(printf '%s\n' $missing $bad | sort -u)
      rcs="$rcs $label rc=1"
    else
      rcs="$rcs $label rc=0"
    fi
  done
  say "check:$rcs tree $(cat "$LOGS/check-tree.txt")"
  [[ $rcs != *rc=1* ]]
}

# PyTorch on the shapes conv_bench just ran (optional: without PyTorch it says
# so and nothing fails): torch_beside FILE CONV_BENCH_ARGS...
torch_beside() {
  local file=$1
  shift
  say "PyTorch beside it: scripts/torch_reference.py $* -> $RESULTS/$file"
  python3 scripts/torch_reference.py --bench "$bin/conv_bench" "$@" --csv "$RESULTS/$file" \
    >"$LOGS/${file%.csv}.log" 2>&1 || echo "gpu.sh: no PyTorch rows: $(tail -1 "$LOGS/${file%.csv}.log")"
}

# The measurements behind each note's tables: the file, then the arguments.
results() {
  local step=$1
  local lab="--n 128 --c 128 --h 100 --w 100 --k 128 --filter 3 --padding same"
  local cutlass="--n 8 --c 128 --h 224 --w 224 --k 128 --filter 3 --padding same"
  case $step in
  02) echo "02_lecture.csv 02_naive_gpu" ;;
  03) echo "03_width2p26_mask7.csv 03_tiled_1d"
      echo "03_width2p26_mask255.csv 03_tiled_1d --mask 255" ;;
  04) echo "04_lecture.csv 04_tiled_2d"
      echo "04_hpc101.csv 04_tiled_2d --n 1 --c 1 --k 1 --h 2000 --w 2000 --filter 13 --padding same"
      echo "04_layer1.csv 04_tiled_2d --n 10000 --c 1 --h 86 --w 86 --k 4 --filter 7" ;;
  05) echo "05_prefetch_float4_lecture.csv 05_prefetch_float4"
      echo "05_prefetch_float4_layer1.csv 05_prefetch_float4 --n 10000 --c 1 --h 86 --w 86 --k 4 --filter 7"
      echo "05_prefetch_float4_layer2.csv 05_prefetch_float4 --n 10000 --c 4 --h 40 --w 40 --k 16 --filter 7" ;;
  06) echo "06_gemm_4096.csv 06_gemm --m 4096 --n 4096 --k 4096"
      echo "06_gemm_lab.csv 06_gemm --m 1280000 --n 128 --k 1152"
      echo "06_lab_nhwc.csv 06_im2col_gemm --layout nhwc $lab"
      echo "06_lab_nchw.csv 06_im2col_gemm --layout nchw $lab"
      echo "06_cutlass_nhwc.csv 06_im2col_gemm --layout nhwc $cutlass" ;;
  07) echo "07_hpc101_nchw.csv 07_winograd --layout nchw $lab"
      echo "07_hpc101_nhwc.csv 07_winograd --layout nhwc $lab"
      echo "07_cutlass_nchw.csv 07_winograd --layout nchw $cutlass"
      echo "07_cutlass_nhwc.csv 07_winograd --layout nhwc $cutlass" ;;
  08) echo "08_hpc101_nhwc.csv 08_tensor_cores --layout nhwc $lab"
      echo "08_cutlass_nhwc.csv 08_tensor_cores --layout nhwc $cutlass"
      echo "08_gemm_4096.csv 08_gemm"
      echo "08_gemm_lab.csv 08_gemm --m 1280000 --n 128 --k 1152" ;;
  09) echo "09_hpc101_nhwc.csv 09_hopper --layout nhwc $lab"
      echo "09_cutlass_nhwc.csv 09_hopper --layout nhwc $cutlass"
      echo "09_gemm_4096.csv 09_gemm"
      echo "09_gemm_lab.csv 09_gemm --m 1280000 --n 128 --k 1152" ;;
  10) echo "10_cutlass_nhwc.csv 10_backward --problem cutlass-nhwc --pass all --repeat 5 --cudnn-budget 1000"
      echo "10_hpc101_nhwc.csv 10_backward --problem hpc101-nhwc --pass all --repeat 5 --cudnn-budget 1000" ;;
  esac
}

while [ $# -gt 0 ]; do
  part=$1
  shift
  case $part in
  build) build || exit 1 ;;
  test)
    say "tests (every label but sanitize)"
    run_ctest tests -LE sanitize || status=1 ;;
  sanitize)
    say "compute-sanitizer (memcheck, racecheck, initcheck, synccheck)"
    run_ctest sanitize -L sanitize || status=1 ;;
  check)
    prev=""
    [ -d "${1:-}" ] && { prev=$1; shift; }
    say "every test, sanitizers included, at once${prev:+, after $prev}"
    check "$prev" || status=1 ;;
  sweep)
    count=200 seed=1
    [[ ${1:-} =~ ^[0-9]+$ ]] && { count=$1; shift; }
    [[ ${1:-} =~ ^[0-9]+$ ]] && { seed=$1; shift; }
    say "sweep: $count shapes, seed $seed"
    CONV_SWEEP_COUNT=$count CONV_SWEEP_SEED=$seed "$BUILD/bench/test_sweep" --verbose \
      --filter "gpu_sweep/*" >"$LOGS/sweep_$seed.log" 2>&1 || status=1
    grep -E "sweep:|FAIL|Synthesis" "$LOGS/sweep_$seed.log" | tail -8 ;;
  bench)
    args=("$@")
    [ ${#args[@]} -eq 0 ] && args=(--problem all)
    set --
    say "conv_bench ${args[*]}"
    "$bin/conv_bench" "${args[@]}" --csv "$RESULTS/conv_bench_all.csv" \
      --json "$RESULTS/conv_bench_all.json" | tee "$LOGS/bench.log" || status=1
    torch_beside torch_all.csv "${args[@]}" ;;
  models)
    for layout in nhwc nchw; do
      say "conv_bench --model resnet50 --layout $layout"
      "$bin/conv_bench" --model resnet50 --layout "$layout" \
        --csv "$RESULTS/model_resnet50_$layout.csv" --json "$RESULTS/model_resnet50_$layout.json" \
        >"$LOGS/model_resnet50_$layout.log" 2>&1 || status=1
      sed -n '/== summary/,$p' "$LOGS/model_resnet50_$layout.log"
      torch_beside "torch_model_resnet50_$layout.csv" --model resnet50 --layout "$layout"
    done
    say "conv_bench --model resnet50 --n 1 --layout nhwc" # batch 1: the latency of inference
    "$bin/conv_bench" --model resnet50 --n 1 --layout nhwc --cudnn-budget 1000 \
      --csv "$RESULTS/model_resnet50_nhwc_n1.csv" --json "$RESULTS/model_resnet50_nhwc_n1.json" \
      >"$LOGS/model_resnet50_nhwc_n1.log" 2>&1 || status=1
    sed -n '/== summary/,$p' "$LOGS/model_resnet50_nhwc_n1.log" ;;
  results)
    steps=()
    while [ $# -gt 0 ] && [[ $1 =~ ^(0[2-9]|10|all)$ ]]; do steps+=("$1"); shift; done
    [ "${steps[*]}" = all ] && steps=(02 03 04 05 06 07 08 09 10)
    for step in "${steps[@]}"; do
      while read -r csv program args; do
        say "$program $args"
        # shellcheck disable=SC2086
        "$bin/$program" $args --csv "$RESULTS/$csv" >"$LOGS/${csv%.csv}.log" 2>&1 || status=1
        grep -vE "^(#|$)" "$LOGS/${csv%.csv}.log" | tail -14
      done < <(results "$step")
      if [ "$step" = 10 ]; then # PyTorch's gradients beside step 10's rows
        for problem in cutlass-nhwc hpc101-nhwc; do
          torch_beside "torch_10_${problem//-/_}.csv" --problem "$problem" --pass all
        done
      fi
    done ;;
  ncu)
    problem=$1 step=$2 kernel=$3
    shift 3
    bash scripts/ncu_row.sh "$problem" "$step" "$kernel" "$BUILD" |
      tee "$RESULTS/logs/ncu_${problem}_${step}_${kernel//[^A-Za-z0-9_]/_}.txt" || status=1 ;;
  tune)
    say "step 06 tuning harness"
    if [ ! -x "$bin/06_tune_6e" ]; then # a student tree has no instructor/
      echo "no $bin/06_tune_6e: this tree has no instructor/tuning/tune_6e.cu"
      status=1
    else
      "$bin/06_tune_6e" | tee -a "$root/instructor/logs/06_tune_6e.txt" || status=1
    fi ;;
  *)
    sed -n '2,27p' "$0"
    exit 2 ;;
  esac
done
exit $status
