#!/usr/bin/env bash
# Installs what the project needs and the machine lacks, from the distribution
# only (nothing is downloaded at build time):
#   Criterion (libcriterion-dev)  the test framework; without it tests are off
#   with --plots: matplotlib for scripts/plot_bench.py and scripts/figures.py
#                 (pip, from PyPI)
# The CUDA toolkit (nvcc, cuBLAS, cuDNN) is a prerequisite, not installed here.
# Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail

if [ "${1:-}" = "--plots" ]; then
  python3 -c "import matplotlib" 2>/dev/null ||
    python3 -m pip install --quiet matplotlib
  python3 -c "import matplotlib; print('setup: matplotlib', matplotlib.__version__)"
fi

need=()
have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/local/include/$1" ]; }
have_header criterion/criterion.h || need+=(libcriterion-dev)
command -v cmake >/dev/null || need+=(cmake)
if [ "${1:-}" = "--format" ]; then
  command -v clang-format >/dev/null || need+=(clang-format)
fi

if [ ${#need[@]} -eq 0 ]; then
  echo "setup: everything needed is installed"
  exit 0
fi
echo "setup: installing ${need[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
