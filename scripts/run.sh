#!/usr/bin/env bash
# Builds everything (release preset) and runs the main program, conv_bench,
# on the lecture's problem (N=1, C=6, 768x512, K=6, 6x6): every step beside
# step 01 on the CPU and cuDNN. Extra arguments go to conv_bench (see --help),
# e.g. scripts/run.sh --problem all.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)"
if [ $# -eq 0 ]; then
  set -- --problem lecture
fi
exec build/release/bin/conv_bench "$@"
