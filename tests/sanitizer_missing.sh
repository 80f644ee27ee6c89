#!/usr/bin/env bash
# The `sanitize` label's only test where compute-sanitizer was not found at
# configure time: a skip with the reason, or, with CONV_REQUIRE_GPU=1 (a GPU
# machine, where nothing may silently not run), a failure.
if [ "${CONV_REQUIRE_GPU:-}" = 1 ]; then
  echo "FAILED: CONV_REQUIRE_GPU=1 but compute-sanitizer was not found when this build was"
  echo "configured, so no GPU test runs under it: install it (it comes with the CUDA toolkit)"
  echo "or put it on PATH, then configure again"
  exit 1
fi
echo "sanitizer tests skipped: compute-sanitizer was not found when this build was configured"
