# Everything the steps share at build time, written once. Every project() of
# this repository includes this file as its last step (CMAKE_PROJECT_INCLUDE,
# set by ConvDefaults.cmake, which each CMakeLists.txt includes before its
# project()); the include guard makes the second and later includes no-ops.
#
#   conv_add_step(...)     adds the current folder's library, program and tests.
#   conv_add_program(...)  adds one more program (bin/<name>) to a step.
include_guard(GLOBAL)

get_filename_component(CONV_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS OFF)
# Position-independent code everywhere, so that the steps' static libraries
# can be linked into the shared library libconvsteps.so (library/).
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

option(CONV_HOST_SANITIZE "Build the C code with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)

include("${CMAKE_CURRENT_LIST_DIR}/ConvDependencies.cmake")

# ctest looks for tests in the top build folder, so testing is enabled here,
# in the scope of whichever project included this file first.
if(CONV_HAVE_CRITERION)
  enable_testing()
  if(NOT CONV_COMPUTE_SANITIZER)
    add_test(NAME sanitize.unavailable COMMAND bash "${CONV_ROOT}/tests/sanitizer_missing.sh")
    set_tests_properties(sanitize.unavailable PROPERTIES LABELS "sanitize"
      SKIP_REGULAR_EXPRESSION "sanitizer tests skipped:")
  endif()
endif()

# Warnings, line info for the profilers, and the optional host sanitizers.
# No --use_fast_math anywhere: results are compared against a double reference.
function(conv_target_defaults target)
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo -Xcompiler=-Wall>)
  if(CONV_HOST_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:C>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all>)
    target_link_options(${target} PRIVATE
      $<$<LINK_LANGUAGE:C>:-fsanitize=address,undefined>)
  endif()
endfunction()

# An executable of C (and CUDA) sources linked with `libraries`, conv_common
# and libm, with the warnings of conv_target_defaults.
function(conv_add_executable name)
  cmake_parse_arguments(ARG "" "" "LIBRARIES" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES} conv_common m)
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
  conv_target_defaults(${name})
endfunction()

# conv_add_program(<name> <sources>... [LIBRARIES <libraries>...])
# A program in bin/ of the build folder (conv_add_executable).
function(conv_add_program name)
  conv_add_executable(${name} ${ARGN})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
endfunction()

# Registers the ctest entries of one Criterion binary built from source.
#   <name>.cpu                  suites not named gpu_*, in parallel
#   <name>.gpu                  suites gpu_*, one at a time; skipped without a device
#                               (only if the source has such a suite)
#   <name>.sanitize.<tool>.<suite>.<test>
#                               each test of the gpu suites under compute-sanitizer
#                               (4 tools), one entry per test so that ctest -j
#                               spreads the slow ones (racecheck runs some for
#                               minutes); except gpu_reference: that suite checks NVIDIA's
#                               cuDNN and cuBLAS, closed code whose algorithm
#                               search alone takes minutes under the sanitizers
#                               (seen: 90 s for one small cuDNN plan under
#                               initcheck on an H100). The project's own kernels
#                               never sit in that suite.
# Criterion forks a child per test, hence --target-processes all. API errors
# are not reported by the sanitizer (--report-api-errors no): the code checks
# every CUDA call itself, and tests provoke some on purpose (out of memory).
function(conv_register_tests name source label has_gpu)
  set(skip_regex "GPU test skipped: ")
  add_test(NAME ${name}.cpu COMMAND ${name} --filter "!(gpu_*)/*")
  set_tests_properties(${name}.cpu PROPERTIES LABELS "cpu;${label}" TIMEOUT 1800)
  # An entry that selects no test would pass (or, under compute-sanitizer,
  # fail) without testing anything: the suites are read from the source.
  file(STRINGS "${source}" gpu_suites REGEX "^(Test\\(|ParameterizedTest\\([^,]*, *)gpu_")
  set(own_suites ${gpu_suites})
  list(FILTER own_suites EXCLUDE REGEX "^(Test\\(|ParameterizedTest\\([^,]*, *)gpu_reference,")
  if(gpu_suites AND NOT has_gpu)
    message(FATAL_ERROR "${source} has gpu_* suites, but its step registers no GPU tests")
  endif()
  if(NOT gpu_suites)
    return()
  endif()
  # COST: ctest -j starts the GPU entries, each minutes long, before the
  # quick CPU ones, so that the last to finish is not a long one started late.
  add_test(NAME ${name}.gpu COMMAND ${name} --jobs=1 --verbose --filter "gpu_*/*")
  set_tests_properties(${name}.gpu PROPERTIES LABELS "gpu;${label}" TIMEOUT 1800 COST 100
    SKIP_REGULAR_EXPRESSION "${skip_regex}")
  if(CONV_COMPUTE_SANITIZER AND own_suites)
    foreach(line IN LISTS own_suites)
      string(REGEX MATCH "(gpu_[A-Za-z0-9_]+), *([A-Za-z0-9_]+)" pair "${line}")
      if(NOT pair)
        message(FATAL_ERROR "${source}: cannot read the suite and test of: ${line}")
      endif()
      set(suite "${CMAKE_MATCH_1}")
      set(test "${CMAKE_MATCH_2}")
      foreach(tool racecheck memcheck initcheck synccheck)
        # racecheck is the slowest tool: a higher COST makes ctest -j start it first.
        set(cost 1)
        if(tool STREQUAL "racecheck")
          set(cost 10)
        endif()
        add_test(NAME ${name}.sanitize.${tool}.${suite}.${test}
          COMMAND ${CONV_COMPUTE_SANITIZER} --tool ${tool} --target-processes all
                  --report-api-errors no --error-exitcode 1 $<TARGET_FILE:${name}> --jobs=1
                  --verbose --filter "${suite}/${test}")
        set_tests_properties(${name}.sanitize.${tool}.${suite}.${test} PROPERTIES
          LABELS "sanitize;${label}" TIMEOUT 900 COST ${cost}
          ENVIRONMENT "CONV_UNDER_SANITIZER=${tool}"
          SKIP_REGULAR_EXPRESSION "${skip_regex}")
      endforeach()
    endforeach()
  endif()
endfunction()

# Adds a Criterion test binary built from one file of tests/.
function(conv_add_test_binary source label has_gpu)
  if(NOT CONV_HAVE_CRITERION)
    return()
  endif()
  get_filename_component(name "${source}" NAME_WE)
  conv_add_executable(${name} "${source}" "${CONV_ROOT}/tests/conv_test_support.c"
                      "${CONV_ROOT}/tests/conv_test_files.c" LIBRARIES ${ARGN} Conv::criterion)
  target_include_directories(${name} PRIVATE "${CONV_ROOT}/tests")
  conv_register_tests(${name} "${source}" "${label}" ${has_gpu})
endfunction()

# conv_add_program_test(<program> <label> <gpu: ON|OFF|""> <args>...)
# The program on a small problem as a test (tests/run_program.sh): exit 0 and
# "verdict: OK"; for a GPU program a GPU test (it skips without a device) and
# a second test that it says "no CUDA device" in one line without one.
function(conv_add_program_test program label gpu)
  if(NOT CONV_HAVE_CRITERION)
    return()
  endif()
  set(kind cpu)
  if(gpu)
    set(kind gpu)
  endif()
  add_test(NAME ${program}.program
    COMMAND bash "${CONV_ROOT}/tests/run_program.sh" $<TARGET_FILE:${program}> ${ARGN})
  set_tests_properties(${program}.program PROPERTIES
    LABELS "${kind};${label};program" TIMEOUT 600
    SKIP_REGULAR_EXPRESSION "GPU test skipped: ")
  if(gpu) # without a device: one line and exit status 1, on any machine
    add_test(NAME ${program}.no_device
      COMMAND bash "${CONV_ROOT}/tests/expect_no_device.sh" $<TARGET_FILE:${program}> ${ARGN})
    set_tests_properties(${program}.no_device PROPERTIES
      LABELS "cpu;${label};program" TIMEOUT 120)
  endif()
endfunction()

# conv_add_step(                            for the folder of the calling CMakeLists.txt
#     [LABEL <label>]                         (default: stepNN from the folder's number,
#                                             e.g. step02 for 02_naive_gpu; else the
#                                             folder's name)
#     [SOURCES <kernel and launcher files>]   -> library conv_<folder>
#     [PROGRAM_SOURCES <main.c ...>]          -> program bin/<folder> (default: the
#                                             folder's main.c, where it has one)
#     [PROGRAM_NAME <name>]                   (instead of the folder's name)
#     [LIBRARY_NAME <name>]                   (instead of conv_<folder>)
#     [TESTS <tests/test_*.c>...] [CPU_TESTS] -> a Criterion binary and its ctest
#                                             entries per file (default: the step's
#                                             tests/test_<folder>.c, where it exists);
#                                             GPU tests (they skip without a device)
#                                             unless CPU_TESTS says they need none
#     [DEPENDS <other step folders>]          libraries the step links
#     [PROGRAM_TEST <args>...]                the program on a small problem as a
#                                             test (tests/run_program.sh): exit 0
#                                             and "verdict: OK"; a GPU test (it
#                                             skips without a device), or with
#                                             CPU_TESTS a CPU test. A GPU
#                                             program's test adds --repeat 2
#                                             --cudnn-budget 200: two timed runs,
#                                             and 200 ms for cuDNN's engine search
#     [GEMM_PROGRAM <source>])                the step's GEMM alone, a second
#                                             program bin/<NN>_gemm, tested (GPU) on
#                                             a product whose sizes are multiples of
#                                             no tile: --m 70 --n 65 --k 37
# A step added only as another step's dependency (CONV_DEPENDENCY_ONLY) builds
# its library and nothing else.
function(conv_add_step)
  cmake_parse_arguments(ARG "CPU_TESTS" "LABEL;PROGRAM_NAME;LIBRARY_NAME;GEMM_PROGRAM"
                        "SOURCES;PROGRAM_SOURCES;DEPENDS;PROGRAM_TEST;TESTS" ${ARGN})
  get_filename_component(folder "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  if(NOT ARG_LABEL)
    set(ARG_LABEL ${folder})
    if(folder MATCHES "^([0-9][0-9])_")
      set(ARG_LABEL step${CMAKE_MATCH_1})
    endif()
  endif()
  if(NOT ARG_PROGRAM_NAME)
    set(ARG_PROGRAM_NAME ${folder})
  endif()
  if(NOT ARG_PROGRAM_SOURCES AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/main.c")
    set(ARG_PROGRAM_SOURCES main.c)
  endif()
  if(NOT ARG_TESTS AND EXISTS "${CONV_ROOT}/tests/test_${folder}.c")
    set(ARG_TESTS tests/test_${folder}.c)
  endif()
  set(dep_libs "")
  foreach(dep IN LISTS ARG_DEPENDS)
    if(NOT TARGET conv_${dep})
      set(CONV_DEPENDENCY_ONLY ON)
      add_subdirectory("${CONV_ROOT}/${dep}" "${CMAKE_BINARY_DIR}/${dep}")
      unset(CONV_DEPENDENCY_ONLY)
    endif()
    list(APPEND dep_libs conv_${dep})
  endforeach()

  set(lib conv_${folder})
  if(ARG_LIBRARY_NAME)
    set(lib ${ARG_LIBRARY_NAME})
  endif()
  if(ARG_SOURCES)
    add_library(${lib} STATIC ${ARG_SOURCES})
    target_include_directories(${lib} PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}")
    target_link_libraries(${lib} PUBLIC conv_common ${dep_libs})
    conv_target_defaults(${lib})
  else()
    add_library(${lib} INTERFACE)
    target_link_libraries(${lib} INTERFACE conv_common ${dep_libs})
  endif()
  if(CONV_DEPENDENCY_ONLY)
    return()
  endif()

  if(ARG_PROGRAM_SOURCES)
    conv_add_program(${ARG_PROGRAM_NAME} ${ARG_PROGRAM_SOURCES} LIBRARIES ${lib} ${dep_libs})
  endif()
  set(has_gpu ON)
  if(ARG_CPU_TESTS)
    set(has_gpu OFF)
  endif()
  foreach(test IN LISTS ARG_TESTS)
    conv_add_test_binary("${CONV_ROOT}/${test}" "${ARG_LABEL}" ${has_gpu} ${lib} ${dep_libs})
  endforeach()
  if(ARG_PROGRAM_TEST AND ARG_PROGRAM_SOURCES)
    if(has_gpu)
      list(APPEND ARG_PROGRAM_TEST --repeat 2 --cudnn-budget 200)
    endif()
    conv_add_program_test(${ARG_PROGRAM_NAME} ${ARG_LABEL} ${has_gpu} ${ARG_PROGRAM_TEST})
  endif()
  if(ARG_GEMM_PROGRAM)
    string(REGEX MATCH "^[0-9]+" number "${folder}")
    conv_add_program(${number}_gemm ${ARG_GEMM_PROGRAM} LIBRARIES ${lib})
    conv_add_program_test(${number}_gemm ${ARG_LABEL} ON --m 70 --n 65 --k 37 --repeat 2)
  endif()
endfunction()

# The common library is built once per build tree, whichever step asks first.
if(NOT TARGET conv_common)
  add_subdirectory("${CONV_ROOT}/common" "${CMAKE_BINARY_DIR}/common")
endif()

# After every ctest run, one line says which GPU the GPU tests ran on, or why
# they skip here (ctest's own "***Skipped" names no reason).
if(CONV_HAVE_CRITERION AND TARGET conv_device_report)
  file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/CTestCustom.cmake"
       CONTENT "set(CTEST_CUSTOM_POST_TEST \"$<TARGET_FILE:conv_device_report>\")\n")
endif()
