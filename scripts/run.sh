#!/usr/bin/env bash
# Builds everything (release preset) and runs the main program, conv_bench,
# on the lecture's problem (N=1, C=6, 768x512, K=6, 6x6): every step beside
# step 01 on the CPU and cuDNN. Extra arguments go to conv_bench (see --help),
# e.g. scripts/run.sh --problem all.
# Configure's one line says which GPU architectures the build is for (the GPU
# found; without one, PTX of compute_75 alone: quick, and enough to run here).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== configure (cmake --preset release)"
cmake --preset release | grep -E "^-- (CUDA architectures|cuDNN)" || true
echo "== build (cmake --build --preset release): each line is one file of a step"
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)"
if [ $# -eq 0 ]; then
  set -- --problem lecture
fi
echo "== build/release/bin/conv_bench $*"
exec build/release/bin/conv_bench "$@"
