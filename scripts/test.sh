#!/usr/bin/env bash
# The whole test suite from a fresh clone: installs what is missing
# (scripts/setup.sh), builds every step with the release preset and runs every
# test. GPU tests skip with "no CUDA device" where there is none (the reason is
# printed below the results); CONV_REQUIRE_GPU=1 makes that a failure.
#   scripts/test.sh                  release build, all tests but the sanitize label
#   scripts/test.sh host-sanitize    the same under ASan + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"

# Verbose into a log (so that skip reasons are kept), a readable summary out.
log="build/$preset/test-output.log"
set +e
ctest --preset "$preset" -j "$jobs" -V >"$log" 2>&1
rc=$?
set -e
grep -E "^ *[0-9]+/[0-9]+ Test +#" "$log" || true
# The full output of every failed test (ctest -V prefixes its lines with "N: ").
for n in $(grep -E "^ *[0-9]+/[0-9]+ Test +#[0-9]+:.*(Failed|Exception|Timeout|Not Run)" "$log" |
  sed -E 's/.*Test +#([0-9]+):.*/\1/'); do
  echo "---- output of test #$n"
  grep -E "^$n: " "$log" | tail -60
done
reasons=$(grep -oE "GPU test skipped: no CUDA device[^\"]*" "$log" | sed -E 's/[[:space:]]+$//' | sort -u)
[ -z "$reasons" ] || printf 'skip reason: %s\n' "$reasons" | sed -E 's/ \(\w+::\w+\).*//' | sort -u
sed -n '/tests passed/,$p' "$log"
exit $rc
