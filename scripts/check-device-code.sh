#!/usr/bin/env bash
# Compiles the device code of every kernel file (*.cu) for every architecture
# of the portable list (cmake/ConvDefaults.cmake: Turing to Blackwell), device
# code only and in parallel, and fails on a compile error, on any register
# spill (ptxas -v: "N bytes spill stores" or loads above 0 for any kernel
# instance on any architecture) or on any stack frame (local memory: an
# array indexed at run time, such as accumulators in a loop not unrolled). 9.0 is compiled as sm_90a, as CMake builds
# it. No GPU needed. Left out: instructor/tuning/tune_*.cu, the tuning
# harnesses, whose candidate shapes include some that spill (the tuning log
# records it as the reason they lost).
#   scripts/check-device-code.sh                 every .cu, every architecture
#   scripts/check-device-code.sh 75 90           only these architectures
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("$@")
if [ ${#archs[@]} -eq 0 ]; then
  # the portable list, as the preset portable (CONV_ALL_ARCHS) builds it
  read -r -a archs <<<"$(sed -n 's/^set(CONV_PORTABLE_ARCHS \(.*\))$/\1/p' cmake/ConvDefaults.cmake)"
fi
nvcc=${CUDACXX:-nvcc}
supported=$("$nvcc" --list-gpu-code 2>/dev/null | tr '\n' ' ')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

jobs=()
for arch in "${archs[@]}"; do
  if [ -n "$supported" ] && ! grep -qw "sm_${arch%a}" <<<"$supported"; then
    echo "sm_$arch: not supported by this nvcc, left out"
    continue
  fi
  [ "$arch" = 90 ] && arch=90a # as CMake builds it (cmake/ConvDefaults.cmake): with wgmma
  for cu in $(git ls-files '*.cu' | grep -v '/tune_'); do
    jobs+=("$arch $cu")
  done
done

compile() { # arch file outdir nvcc
  local arch=$1 cu=$2 dir=$3 nvcc=$4
  local log="$dir/$(echo "$cu" | tr '/' '_').sm_$arch.log"
  local includes=(-Icommon -I"$(dirname "$cu")")
  for d in [0-9][0-9]_*/; do includes+=(-I"${d%/}"); done
  if ! "$nvcc" -cubin -arch="sm_$arch" -O3 -lineinfo -DNDEBUG "${includes[@]}" -Xptxas -v \
      "$cu" -o /dev/null >"$log" 2>&1; then
    echo "ERROR $cu sm_$arch" >>"$log"
  fi
}
export -f compile
printf '%s\n' "${jobs[@]}" |
  xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} bash -c 'compile $1 $2 "$3" "$4"' _ {} "$out" "$nvcc"

status=0
kernels=0
for log in "$out"/*.log; do
  if grep -q "^ERROR " "$log"; then
    echo "FAILED to compile: $(grep '^ERROR ' "$log" | cut -d' ' -f2-)"
    grep -E "error" "$log" | head -5
    status=1
    continue
  fi
  # "Compiling entry function 'NAME' for 'sm_XX'" ... "N bytes spill stores, M bytes spill loads"
  while IFS='|' read -r fn arch stack stores loads; do
    kernels=$((kernels + 1))
    if [ "$stores" != 0 ] || [ "$loads" != 0 ]; then
      name=$(c++filt "$fn" 2>/dev/null || echo "$fn")
      echo "SPILL $arch: $name: $stores bytes spill stores, $loads bytes spill loads"
      status=1
    fi
    if [ "$stack" != 0 ]; then # an array indexed at run time lives in local memory
      name=$(c++filt "$fn" 2>/dev/null || echo "$fn")
      echo "STACK $arch: $name: $stack bytes stack frame (local memory)"
      status=1
    fi
  done < <(awk '/Compiling entry function/ { fn = $0; sub(/.*function \047/, "", fn); sub(/\047.*/, "", fn);
                                              arch = $0; sub(/.* for \047/, "", arch); sub(/\047.*/, "", arch) }
                /bytes spill stores/ && fn != "" { print fn "|" arch "|" $1 "|" $5 "|" $9; fn = "" }' "$log")
done
echo "device code: ${#archs[@]} architectures (${archs[*]}), $(git ls-files '*.cu' | grep -vc '/tune_') files," \
     "$kernels kernel instances checked; $([ $status = 0 ] && echo "no error, no spill, no stack" || echo FAILED)"
exit $status
