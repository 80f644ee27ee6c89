# Included by every top-level project() of this repository *before* project():
# chooses the CUDA architectures to build for when none are given, and says
# in one line what it chose and why; and makes every project() include
# cmake/ConvProject.cmake, the build code the steps share, as its last step.
#   1. -DCMAKE_CUDA_ARCHITECTURES=... (or the CUDAARCHS environment variable)
#      always wins, e.g. =86, ="80;90", =75-virtual (PTX only), =native.
#      (CMake's "86" means machine code and PTX for 8.6, "86-real" machine
#      code only, "86-virtual" PTX only.)
#   2. Otherwise, with -DCONV_ALL_ARCHS=ON (the preset "portable"): the
#      portable list below, machine code for each GPU generation since Turing
#      that the toolkit knows, plus PTX of the newest one, which the driver
#      compiles at run time for GPUs newer than the list.
#   3. Otherwise, when nvidia-smi sees a GPU at configure time: that GPU's
#      compute capability (what CMake's "native" would pick, resolved here so
#      that the programs can name it); for a GPU newer than the toolkit, the
#      portable list.
#   4. Otherwise (a machine without a GPU: CI, a laptop): the smallest build
#      that still runs every program and test there, PTX of the oldest
#      architecture (compute_75) alone. A GPU would JIT-compile it, but into
#      Turing's code paths only: step 08's TF32 and step 09's Hopper kernels
#      need a build for their GPU (1, 2 or 3).
include_guard(GLOBAL)

option(CONV_ALL_ARCHS "Build machine code for every GPU generation since Turing, not only for the GPU found (or, without one, PTX of compute_75)" OFF)

# Compute capability -> the GPUs students have:
#   75 Turing (T4, RTX 20xx)  80 A100, A30  86 RTX 30xx, A10, A40  89 RTX 40xx, L4, L40
#   90 H100, H200  100 B200  120 RTX 50xx
set(CONV_PORTABLE_ARCHS 75 80 86 89 90 100 120)
# Compute capability 9.0 is built as sm_90a: the same GPUs, plus the Hopper
# instructions (wgmma, setmaxnreg: step 09's 9a and 9b) that only
# arch-specific code may use.
function(conv_arch_code cc out)
  if(cc STREQUAL "90")
    set(${out} "90a" PARENT_SCOPE)
  else()
    set(${out} "${cc}" PARENT_SCOPE)
  endif()
endfunction()

function(conv_choose_cuda_architectures)
  # A list this file chose before under another CONV_ALL_ARCHS is chosen again.
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND CONV_CUDA_ARCHS_CHOSEN
     AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${CONV_CUDA_ARCHS_CHOSEN}"
     AND NOT "${CONV_ALL_ARCHS}" STREQUAL "${CONV_CUDA_ARCHS_ALL_SETTING}")
    unset(CMAKE_CUDA_ARCHITECTURES CACHE)
    unset(CMAKE_CUDA_ARCHITECTURES)
  endif()
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    set(given "${CMAKE_CUDA_ARCHITECTURES}")
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(given "$ENV{CUDAARCHS}")
    endif()
    if(CONV_CUDA_ARCHS_CHOSEN AND "${given}" STREQUAL "${CONV_CUDA_ARCHS_CHOSEN}")
      message(STATUS "CUDA architectures: ${given} (${CONV_CUDA_ARCHS_REASON})")
    else()
      message(STATUS "CUDA architectures: ${given} (given: CMAKE_CUDA_ARCHITECTURES or CUDAARCHS)")
    endif()
    return()
  endif()

  # The architectures this nvcc can generate code for.
  set(nvcc "${CMAKE_CUDA_COMPILER}")
  if(NOT nvcc AND DEFINED ENV{CUDACXX})
    set(nvcc "$ENV{CUDACXX}")
  endif()
  if(NOT nvcc)
    find_program(CONV_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin)
    set(nvcc "${CONV_NVCC}")
  endif()
  set(known "")
  if(nvcc)
    execute_process(COMMAND "${nvcc}" --list-gpu-code OUTPUT_VARIABLE codes ERROR_QUIET
                    RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "sm_[0-9]+" codes "${codes}")
      string(REPLACE "sm_" "" known "${codes}")
    endif()
  endif()

  # A GPU on this machine?
  set(archs "")
  find_program(CONV_NVIDIA_SMI nvidia-smi)
  if(CONV_NVIDIA_SMI AND NOT CONV_ALL_ARCHS)
    execute_process(COMMAND "${CONV_NVIDIA_SMI}" --query-gpu=name,compute_cap
                            --format=csv,noheader
                    OUTPUT_VARIABLE gpus ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      string(REGEX MATCHALL "[^\n]+" lines "${gpus}")
      foreach(line IN LISTS lines)
        if(line MATCHES "^(.*), *([0-9]+)\\.([0-9]+) *$")
          set(cc "${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
          set(name "${CMAKE_MATCH_1}")
          if(known AND NOT cc IN_LIST known)
            set(reason_new "the GPU ${name} (sm_${cc}) is newer than this toolkit's list")
            continue()
          endif()
          conv_arch_code(${cc} code)
          list(APPEND archs ${code})
          list(APPEND names "${name}")
        endif()
      endforeach()
    endif()
  endif()
  list(REMOVE_DUPLICATES archs)
  if(archs)
    list(REMOVE_DUPLICATES names)
    string(REPLACE ";" ", " names "${names}")
    set(reason "the GPU found at configure time: ${names}")
  elseif(CONV_ALL_ARCHS OR reason_new)
    foreach(a IN LISTS CONV_PORTABLE_ARCHS)
      if(NOT known OR a IN_LIST known)
        conv_arch_code(${a} code)
        list(APPEND archs ${code}-real)
        set(newest ${a})
      endif()
    endforeach()
    list(APPEND archs "${newest}-virtual")
    set(reason "CONV_ALL_ARCHS: machine code for every generation since Turing, PTX of sm_${newest} for newer GPUs")
    if(reason_new)
      set(reason "${reason_new}: machine code for every generation since Turing and PTX of sm_${newest}, which the driver compiles for it")
    endif()
  else()
    list(GET CONV_PORTABLE_ARCHS 0 oldest)
    set(archs "${oldest}-virtual")
    set(reason "no GPU found at configure time: PTX of compute_${oldest} alone, the quickest build that runs every program and test here (a GPU would JIT-compile it, without step 08's TF32 and step 09's Hopper kernels); -DCONV_ALL_ARCHS=ON or the preset portable builds every generation since Turing")
  endif()
  set(reason "${reason}; override with -DCMAKE_CUDA_ARCHITECTURES=...")
  set(CMAKE_CUDA_ARCHITECTURES "${archs}" CACHE STRING "CUDA architectures to build for")
  set(CONV_CUDA_ARCHS_CHOSEN "${archs}" CACHE INTERNAL "")
  set(CONV_CUDA_ARCHS_REASON "${reason}" CACHE INTERNAL "")
  set(CONV_CUDA_ARCHS_ALL_SETTING "${CONV_ALL_ARCHS}" CACHE INTERNAL "")
  message(STATUS "CUDA architectures: ${archs} (${reason})")
endfunction()

conv_choose_cuda_architectures()

# So that a CMakeLists.txt needs no second include after its project().
set(CMAKE_PROJECT_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/ConvProject.cmake")
