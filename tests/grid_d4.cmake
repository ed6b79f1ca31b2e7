# grid_d4 tests, included by tests/CMakeLists.txt:
#   test_grid_d4_ref (cpu, + .memcheck)   every §7 group on grid_d4_ref and grid_d4_ref_mt, the validator table
#   test_grid_d4_gpu (gpu)                the same groups through grid_d4_launch, plus the launcher's own rows
#   test_grid_d4_example (gpu)            the header's usage example, verbatim
#   gpu_skip_contract (host)              without a GPU: exit 77, and exit 1 under GW_REQUIRE_GPU=1
#   canary_grid_d4_* (canary)             planted faults that the named guard must catch
#   test_header_grid_d4_* (build only)    grid_d4.h and gw_witness.h compile alone as C11 and C++
pkg_check_modules(GW_D4_CJSON REQUIRED IMPORTED_TARGET libcjson)

# Fixtures and test groups shared by the CPU and GPU tests (pure C: no CUDA, no cudart).
add_library(grid_d4_test_support STATIC support/grid_d4_batch.c support/grid_d4_cases.c)
target_include_directories(grid_d4_test_support PUBLIC support)
target_compile_definitions(grid_d4_test_support PRIVATE GW_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data")
target_link_libraries(grid_d4_test_support
  PUBLIC PkgConfig::CRITERION grid_d4_ref gw_test_util
  PRIVATE gw_arc PkgConfig::GW_D4_CJSON gw_warnings)

# GW_D4_QUICK=1 under Valgrind: the 100000-grid batch becomes 10000 and the 1e6-grid overlap check 1e5 (same
# code paths; Valgrind is ~50x slower).
gw_add_cpu_test(NAME test_grid_d4_ref SOURCES test_grid_d4_ref.c LIBS grid_d4_test_support grid_d4_ref
  LABEL cpu TIMEOUT 600 MEMCHECK)
target_compile_definitions(test_grid_d4_ref PRIVATE
  GW_GRID_D4_HEADER="${PROJECT_SOURCE_DIR}/kernels/grid_d4/grid_d4.h"
  GW_GRID_D4_EXAMPLE="${CMAKE_CURRENT_SOURCE_DIR}/test_grid_d4_example.c")
if(TEST test_grid_d4_ref.memcheck)
  set_property(TEST test_grid_d4_ref.memcheck APPEND PROPERTY ENVIRONMENT "GW_D4_QUICK=1")
endif()

# Header compile tests: grid_d4.h and gw_witness.h each alone, as C11 and as C++.
foreach(header grid_d4 gw_witness)
  set(defines "")
  if(header STREQUAL "gw_witness")
    set(defines GW_HEADER_WITNESS)
  endif()
  foreach(src test_header_grid_d4.c test_header_grid_d4.cpp)
    string(REGEX REPLACE ".*\\.c$" "C" lang "${src}")
    string(REGEX REPLACE ".*\\.cpp$" "CXX" lang "${lang}")
    gw_add_header_test(NAME test_header_${header}_${lang} SOURCE ${src} DEFINES ${defines}
      INCLUDES ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/kernels/grid_d4)
  endforeach()
endforeach()

if(NOT TARGET grid_d4)
  return() # no CUDA compiler: the kernels, GPU tests and canaries are not built
endif()

# ---------------------------------------------------------------- GPU tests
gw_add_gpu_executable(NAME test_grid_d4_gpu SOURCES test_grid_d4_gpu.c
  LIBS grid_d4 grid_d4_test_support grid_d4_ref)
gw_add_gpu_test(NAME test_grid_d4_gpu COMMAND $<TARGET_FILE:test_grid_d4_gpu> TIMEOUT 1800)

gw_add_gpu_executable(NAME test_grid_d4_example SOURCES test_grid_d4_example.c LIBS grid_d4)
gw_add_gpu_test(NAME test_grid_d4_example COMMAND $<TARGET_FILE:test_grid_d4_example> TIMEOUT 120)

# The exit-code contract, observed on machines without a GPU (skipped where one is present).
# One cheap test is enough to observe the exit code, and keeps this quick where a GPU makes it run for real.
add_test(NAME gpu_skip_contract
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:test_grid_d4_gpu>
    "-DARGS=--filter;grid_d4_gpu/an_empty_batch_succeeds_writes_nothing_and_launches_nothing"
    -P ${PROJECT_SOURCE_DIR}/ctest/gw_skip_contract.cmake)
set_tests_properties(gpu_skip_contract PROPERTIES LABELS host SKIP_REGULAR_EXPRESSION "GPU present:" TIMEOUT 300
  ENVIRONMENT "CRITERION_JOBS=1")

# ---------------------------------------------------------------- canaries
# Each is the GPU test built with one planted fault; the wrapper passes only when the run fails AND its
# output holds the words of the guard meant to catch it. They run one test that makes 20 successful
# launches (2 layouts x 10 op sets): enough for every guard, including stale_output's second call.
set(gw_d4_canary_filter "grid_d4_gpu/small_shapes_interleaved_with_30x30_grids_are_exact_for_every_op")

# name;define;expected guard words
set(gw_d4_canaries
  "cpu_fallback|GRID_D4_CANARY_CPU_FALLBACK|no GPU code ran"
  "no_launch|GRID_D4_CANARY_NO_LAUNCH|poison|no GPU code ran"
  "partial_grid|GRID_D4_CANARY_PARTIAL_GRID|partial execution"
  "stale_output|GRID_D4_CANARY_STALE_OUTPUT|poison"
  "off_by_one|GRID_D4_CANARY_OFF_BY_ONE|result bytes differ"
  "oob_write|GRID_D4_CANARY_OOB_WRITE|Invalid __global__ write")
foreach(entry IN LISTS gw_d4_canaries)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 define)
  list(SUBLIST parts 2 -1 expect)
  string(REPLACE ";" "|" expect "${expect}")
  set(tgt canary_grid_d4_${name})
  gw_add_gpu_executable(NAME ${tgt} SOURCES test_grid_d4_gpu.c canaries/grid_d4_canaries.cu
    LIBS grid_d4 grid_d4_test_support grid_d4_ref)
  # The test source calls the canary; the canary source (CUDA, without the rename) calls the real launcher.
  target_compile_definitions(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:grid_d4_launch=canary_grid_d4_launch>
    $<$<COMPILE_LANGUAGE:CUDA>:${define}>)
  if(name STREQUAL "oob_write")
    # Only compute-sanitizer can see this fault, so the canary runs under it; registered where it exists.
    if(GW_COMPUTE_SANITIZER)
      gw_add_canary(NAME ${tgt} EXPECT "${expect}" TIMEOUT 600
        COMMAND ${GW_COMPUTE_SANITIZER} --tool memcheck --padding 512 --error-exitcode 1 --target-processes all
                $<TARGET_FILE:${tgt}> --filter ${gw_d4_canary_filter})
    else()
      message(STATUS "compute-sanitizer not found: canary_grid_d4_oob_write is built but not registered")
    endif()
  else()
    gw_add_canary(NAME ${tgt} EXPECT "${expect}"
      COMMAND $<TARGET_FILE:${tgt}> --filter ${gw_d4_canary_filter} TIMEOUT 300)
  endif()
endforeach()

# ptx_only: the real kernel built as compute_75 PTX only; on any newer GPU the driver JIT-compiles it and
# the witness records arch 750 on a device that is not sm_75.
add_library(grid_d4_ptx_only STATIC ${PROJECT_SOURCE_DIR}/kernels/grid_d4/grid_d4.cu)
set_target_properties(grid_d4_ptx_only PROPERTIES CUDA_ARCHITECTURES 75-virtual)
target_include_directories(grid_d4_ptx_only PUBLIC ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/kernels/grid_d4)
target_compile_options(grid_d4_ptx_only PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
target_link_libraries(grid_d4_ptx_only PUBLIC CUDA::cudart)
gw_add_gpu_executable(NAME canary_grid_d4_ptx_only SOURCES test_grid_d4_gpu.c
  LIBS grid_d4_ptx_only grid_d4_test_support grid_d4_ref)
gw_add_canary(NAME canary_grid_d4_ptx_only EXPECT "no native code for this GPU"
  COMMAND $<TARGET_FILE:canary_grid_d4_ptx_only> --filter ${gw_d4_canary_filter} TIMEOUT 300)
