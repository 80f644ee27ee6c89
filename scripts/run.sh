#!/usr/bin/env bash
# Builds everything (release preset) and runs the main program on the
# lecture's problem. Extra arguments go to the program (see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)"
exec build/release/bin/01_cpu_serial "$@"
