#!/usr/bin/env bash
# Regenerates every measured number in docs/ from the benchmark CSVs: the
# figures of docs/performance.md (from one `conv_bench --problem all` CSV) and
# every results table of every note and lab note (docs/lab/), and the numbers
# of the instructor's answers (instructor/answers/, where the tree has them: a
# student tree does not). Nothing in docs/ is typed by hand.
#   scripts/regenerate_docs.sh [bench/results/conv_bench_all.csv]
# The CSV comes from the GPU machine:
#   build/release/bin/conv_bench --problem all --csv conv_bench_all.csv --json conv_bench_all.json
set -euo pipefail
cd "$(dirname "$0")/.."
csv=${1:-bench/results/conv_bench_all.csv}
if [ -f "$csv" ]; then
  bash scripts/setup.sh --plots >/dev/null
  python3 scripts/plot_bench.py "$csv" docs/figures
  for model in bench/results/model_*.csv; do # the ResNet-50 runs, where measured
    [ -f "$model" ] && python3 scripts/plot_bench.py "$model" docs/figures
  done
  # the performance page is the template with its tables filled below
  cp bench/performance_template.md docs/performance.md
fi
shopt -s nullglob # no instructor/answers/*.md in a student tree
python3 scripts/doc_tables.py docs/*.md docs/lab/*.md instructor/answers/*.md
