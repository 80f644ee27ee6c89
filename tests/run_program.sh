#!/usr/bin/env bash
# A step program as a test: runs it on a small problem; it must exit 0 and
# print "verdict: OK" (every row verified). Where there is no usable GPU the
# program says "no CUDA device": that is reported as a skipped GPU test (the
# ctest entry's SKIP_REGULAR_EXPRESSION), unless CONV_REQUIRE_GPU=1.
#   tests/run_program.sh PROGRAM [ARGS...]
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ] && grep -q "no CUDA device" <<<"$out" && [ "${CONV_REQUIRE_GPU:-}" != 1 ]; then
  echo "GPU test skipped: no CUDA device"
  exit 0
fi
if [ $rc -ne 0 ] || ! grep -q "^verdict: OK" <<<"$out"; then
  echo "FAILED: exit status $rc, or no 'verdict: OK' line"
  exit 1
fi
