# Included by every top-level project() of this repository *before* project():
# the build machines have no GPU, so CMake's "native" architecture detection
# would fail. Hopper (sm_90) is the default; override with
# -DCMAKE_CUDA_ARCHITECTURES=80 (or a list such as "80;90").
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to build for")
endif()
