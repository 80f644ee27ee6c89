#!/usr/bin/env bash
# The Python package's tests with whichever runner this machine has: pytest
# if installed, else unittest. Without PyTorch, a CUDA device or
# libconvsteps.so they skip with the reason; with CONV_REQUIRE_GPU=1 that is
# a failure. CONVSTEPS_LIBRARY names the library if it is not in build/.
# Exit status: the runner's; 77 when the tests passed but those on the GPU
# were skipped for one of those reasons (ctest's SKIP_RETURN_CODE: the test
# python.convsteps then reads "Skipped", as the other GPU tests do).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python3}"
rc=0
if "$py" -c "import pytest" 2>/dev/null; then
    "$py" -m pytest -q -rs "$here/tests" "$@" || rc=$?
else
    "$py" -m unittest discover -v -s "$here/tests" "$@" || rc=$?
fi
if [ "$rc" -ne 0 ]; then
    exit "$rc"
fi
# The tests' own reason for skipping (test_convsteps.missing()), if any.
why="$(cd "$here/tests" && "$py" -c "import test_convsteps; print(test_convsteps.missing() or '')")"
if [ -n "$why" ]; then
    if [ "${CONV_REQUIRE_GPU:-}" = 1 ]; then
        echo "python tests: CONV_REQUIRE_GPU=1 but $why" >&2
        exit 1
    fi
    echo "python tests skipped on the GPU: $why"
    exit 77
fi
