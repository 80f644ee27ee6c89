#!/usr/bin/env bash
# Times the README's commands as a newcomer meets them, each in a fresh copy of
# this tree (nothing built): scripts/run.sh (configure, build, the lecture
# problem), then scripts/test.sh after it, RUNS times each (default 2; a new
# copy each time, the median kept), then scripts/test.sh --all once in a new
# copy (build, tests and the instructor's self-checks). scripts/setup.sh runs
# once first, untimed. Writes bench/results/timings_NAME.csv, which README.md
# quotes through value markers (scripts/doc_tables.py), and prints each time.
#   scripts/time-commands.sh cpu        on a 2-core machine without a GPU
#   scripts/time-commands.sh gpu 1      on a GPU machine, one run each
#   NO_ALL=1 scripts/time-commands.sh gpu 1   without the scripts/test.sh --all run
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
name=${1:-}
runs=${2:-2}
if ! [[ $name =~ ^[a-z0-9_]+$ ]]; then
  echo "time-commands.sh: name the machine (cpu, gpu): bench/results/timings_NAME.csv" >&2
  exit 2
fi
if ! [[ $runs =~ ^[1-9]$ ]]; then
  echo "time-commands.sh: RUNS must be 1 to 9, not '$runs'" >&2
  exit 2
fi
out=$root/bench/results/timings_$name.csv
work=$(mktemp -d "${TMPDIR:-/tmp}/conv-timing.XXXXXX")
trap 'rm -rf "$work"' EXIT
logs=$root/build/timing-logs
mkdir -p "$logs"
bash scripts/setup.sh

# A fresh copy of the tree: the files git would clone, plus untracked ones it
# does not ignore (or, outside a git checkout, everything but build folders).
fresh() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard |
      tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$work/tree"
  else
    tar --exclude='./build*' --exclude='./.device' --exclude='./.whl' -cf - . |
      tar -xf - -C "$work/tree"
  fi
}

# seconds one command takes in the fresh copy; its output to a log
timed() { # label, command...
  local label=$1 log
  shift
  log=$logs/$label.log
  local t0 t1
  t0=$(date +%s.%N)
  if ! (cd "$work/tree" && "$@") >"$log" 2>&1; then
    echo "time-commands.sh: '$*' failed; the end of $log:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }'
}

declare -a run_s test_s
for i in $(seq "$runs"); do
  fresh
  run_s+=("$(timed "run-$i" bash scripts/run.sh)")
  test_s+=("$(timed "test-$i" bash scripts/test.sh)")
  echo "run $i of $runs: scripts/run.sh ${run_s[-1]} s, then scripts/test.sh ${test_s[-1]} s"
done
all_s=""
if [ "${NO_ALL:-0}" != 1 ]; then
  fresh
  all_s=$(timed all bash scripts/test.sh --all)
  echo "scripts/test.sh --all in a fresh copy: $all_s s"
fi

# what, median, min, max of the numbers given
stats() {
  printf '%s\n' "${@:2}" | sort -n | awk -v what="$1" '{ v[NR] = $1 }
    END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
          printf "%s,%.1f,%.1f,%.1f,%d", what, m, v[1], v[NR], NR }'
}
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
{
  echo "# host: $(nproc) cores, ${cpu:-unknown CPU}, $( [ -n "$gpu" ] && echo "GPU $gpu" || echo "no GPU")"
  [ -n "$gpu" ] && echo "# gpu: $gpu"
  echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# command: scripts/time-commands.sh $name $runs"
  echo "what,median_s,min_s,max_s,runs,command"
  echo "$(stats run "${run_s[@]}"),\"scripts/run.sh\""
  echo "$(stats test "${test_s[@]}"),\"scripts/test.sh\""
  [ -n "$all_s" ] && echo "$(stats test-all "$all_s"),\"scripts/test.sh --all\""
} >"$out"
echo "wrote $out (logs in $logs)"
cat "$out"
