#!/usr/bin/env bash
# The Python package's tests with whichever runner this machine has: pytest
# if installed, else unittest. Without PyTorch, a CUDA device or
# libconvsteps.so they skip with the reason; with CONV_REQUIRE_GPU=1 that is
# a failure. CONVSTEPS_LIBRARY names the library if it is not in build/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-python3}"
if "$py" -c "import pytest" 2>/dev/null; then
    exec "$py" -m pytest -q -rs "$here/tests" "$@"
fi
exec "$py" -m unittest discover -v -s "$here/tests" "$@"
