#!/usr/bin/env bash
# The whole test suite from a fresh clone: installs what is missing
# (scripts/setup.sh), builds every step with the release preset and runs every
# test. GPU tests skip where there is no usable GPU; ctest's last line says
# why (or which GPU they ran on). CONV_REQUIRE_GPU=1 makes a skip a failure.
#   scripts/test.sh                  release build, all tests but the sanitize label
#   scripts/test.sh host-sanitize    the same under ASan + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
