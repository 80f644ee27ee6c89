# Finds what the project builds against. Included once from ConvProject.cmake.
#   CUDA toolkit (required): CUDA::cudart, CUDA::cublas.
#   OpenMP for C (optional): step 01's parallel CPU version.
#   Criterion (optional): without it the tests are switched off with a message.
#   cuDNN (optional): without it the cuDNN reference reports itself unavailable.
include_guard(GLOBAL)

find_package(CUDAToolkit REQUIRED)
find_package(OpenMP COMPONENTS C)

# An imported target for a library found with find_path and find_library.
function(conv_import_library target library include_dir)
  if(NOT TARGET ${target})
    add_library(${target} UNKNOWN IMPORTED)
    set_target_properties(${target} PROPERTIES
      IMPORTED_LOCATION "${library}"
      INTERFACE_INCLUDE_DIRECTORIES "${include_dir}")
  endif()
endfunction()

# Criterion: plain find_path/find_library, because pkg-config is not on every
# machine (the GPU machine has none).
find_path(CRITERION_INCLUDE_DIR criterion/criterion.h)
find_library(CRITERION_LIBRARY NAMES criterion)
if(CRITERION_INCLUDE_DIR AND CRITERION_LIBRARY)
  set(CONV_HAVE_CRITERION ON)
  conv_import_library(Conv::criterion "${CRITERION_LIBRARY}" "${CRITERION_INCLUDE_DIR}")
else()
  set(CONV_HAVE_CRITERION OFF)
  message(STATUS "Criterion not found: tests are OFF "
                 "(install libcriterion-dev, or run scripts/setup.sh)")
endif()

# cuDNN has no CMake module. It lives beside the toolkit on the build machines
# and in the system folders on the GPU machine.
find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT
  PATH_SUFFIXES include)
find_library(CUDNN_LIBRARY cudnn
  HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_ROOT
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY AND EXISTS "${CUDNN_INCLUDE_DIR}/cudnn_version.h")
  file(STRINGS "${CUDNN_INCLUDE_DIR}/cudnn_version.h" _cudnn_major
       REGEX "^#define CUDNN_MAJOR [0-9]+")
  string(REGEX MATCH "[0-9]+" CONV_CUDNN_MAJOR "${_cudnn_major}")
endif()
if(CONV_CUDNN_MAJOR AND CONV_CUDNN_MAJOR GREATER_EQUAL 8)
  set(CONV_HAVE_CUDNN ON)
  message(STATUS "cuDNN ${CONV_CUDNN_MAJOR}: ${CUDNN_LIBRARY}")
  conv_import_library(Conv::cudnn "${CUDNN_LIBRARY}" "${CUDNN_INCLUDE_DIR}")
else()
  set(CONV_HAVE_CUDNN OFF)
  message(STATUS "cuDNN (>= 8) not found: the cuDNN reference reports itself unavailable")
endif()

# compute-sanitizer: the `sanitize` test label runs every GPU test binary under
# it; without the tool the label holds one test that says so (and fails when
# CONV_REQUIRE_GPU=1, so that a GPU machine cannot pass it by running nothing).
find_program(CONV_COMPUTE_SANITIZER compute-sanitizer
  HINTS "${CUDAToolkit_BIN_DIR}" "${CUDAToolkit_BIN_DIR}/../compute-sanitizer")
if(CONV_COMPUTE_SANITIZER)
  message(STATUS "compute-sanitizer: ${CONV_COMPUTE_SANITIZER} (the sanitize test label runs "
                 "the GPU tests under memcheck, racecheck, initcheck and synccheck)")
else()
  message(STATUS "compute-sanitizer not found: the sanitize test label holds only "
                 "sanitize.unavailable, which fails when CONV_REQUIRE_GPU=1")
endif()
