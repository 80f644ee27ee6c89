#!/usr/bin/env bash
# The test suite from a fresh clone: installs what is missing
# (scripts/setup.sh), builds every step with the release preset and runs the
# tests. GPU tests skip where there is no usable GPU; ctest's last line says
# why (or which GPU they ran on). CONV_REQUIRE_GPU=1 makes a skip a failure.
#   scripts/test.sh                  what a student needs: every test but the
#                                    compute-sanitizer runs and the self-checks
#   scripts/test.sh --all            the same, then the instructor's self-checks
#                                    (label selfcheck: the exercise mutation
#                                    check, the docs fault planting), their
#                                    progress printed as they go
#   scripts/test.sh host-sanitize    the first under ASan + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
all=0
preset=release
for arg in "$@"; do
  case $arg in
  --all) all=1 ;;
  -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "test.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  *) preset=$arg ;;
  esac
done
if [ $all = 1 ] && [ "$preset" != release ]; then
  echo "test.sh: --all runs the release preset's tests and self-checks; give no preset with it" >&2
  exit 2
fi
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
echo "== configure (cmake --preset $preset)"
cmake --preset "$preset"
echo "== build (cmake --build --preset $preset)"
cmake --build --preset "$preset" -j "$jobs"
echo "== tests (ctest --preset $preset)"
ctest --preset "$preset" -j "$jobs"
if [ $all = 1 ]; then
  echo "== the instructor's self-checks (ctest --preset release-all -L selfcheck), as they run"
  ctest --preset release-all -L selfcheck -j "$jobs" --verbose
fi
