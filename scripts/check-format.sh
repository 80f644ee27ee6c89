#!/usr/bin/env bash
# Checks that every C and CUDA source follows .clang-format. With --fix,
# rewrites them instead. Exit status 1 lists the files that differ.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = "--fix" ] && fix=1
command -v clang-format >/dev/null || bash scripts/setup.sh --format
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh')
[ ${#files[@]} -gt 0 ] || exit 0
if [ "$fix" = 1 ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run scripts/check-format.sh --fix)"
    bad=1
  fi
done
exit $bad
