# focus_stack tests, included by tests/CMakeLists.txt:
#   test_focus_stack_ref (cpu, + .memcheck)  the §6 groups 1-7 and 9 on focus_stack_ref, n_threads, the
#                                            scratch-free fallback, the oracle's anchors in the spec
#   test_focus_stack_gpu (gpu)               the same groups through focus_stack_launch, byte for byte against
#                                            focus_stack_ref, witness after every call; the launcher's own rows
#   test_focus_stack_example (gpu)           the header's usage example, verbatim
#   canary_focus_stack_* (canary)            planted faults that the named guard must catch
#   test_header_focus_stack_* (build only)   focus_stack.h compiles alone as C11 and C++
# Fixtures and test groups shared by the CPU and GPU tests (pure C: no CUDA, no cudart).
add_library(focus_stack_test_support STATIC support/focus_stack_fixture.c support/focus_stack_cases.c)
target_include_directories(focus_stack_test_support PUBLIC support)
target_link_libraries(focus_stack_test_support PUBLIC PkgConfig::CRITERION focus_stack_ref gw_test_util PRIVATE gw_warnings m)

# GW_FS_QUICK=1 under Valgrind: smaller T1 shapes, fewer large windows and semantic windows, no 16-thread run,
# no RLIMIT_AS test (same code paths; Valgrind is ~50x slower and does not apply RLIMIT_AS to the program).
gw_add_cpu_test(NAME test_focus_stack_ref SOURCES test_focus_stack_ref.c
  LIBS focus_stack_test_support focus_stack_ref LABEL cpu TIMEOUT 300 MEMCHECK)
target_compile_definitions(test_focus_stack_ref PRIVATE
  GW_FOCUS_STACK_HEADER="${PROJECT_SOURCE_DIR}/kernels/focus_stack/focus_stack.h"
  GW_FOCUS_STACK_EXAMPLE="${CMAKE_CURRENT_SOURCE_DIR}/test_focus_stack_example.c")
# OMP_WAIT_POLICY=passive: Valgrind runs threads one at a time, and libgomp's spinning barriers would burn
# that time (no effect on any output).
if(TEST test_focus_stack_ref.memcheck)
  set_property(TEST test_focus_stack_ref.memcheck APPEND PROPERTY ENVIRONMENT "GW_FS_QUICK=1;OMP_WAIT_POLICY=passive")
endif()

# Header compile tests: focus_stack.h alone, as C11 and as C++.
gw_add_header_test(NAME test_header_focus_stack_C SOURCE test_header_focus_stack.c
  INCLUDES ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/kernels/focus_stack)
gw_add_header_test(NAME test_header_focus_stack_CXX SOURCE test_header_focus_stack.cpp
  INCLUDES ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/kernels/focus_stack)

if(NOT TARGET focus_stack)
  return() # no CUDA compiler: the kernel, GPU tests and canaries are not built
endif()

# ---------------------------------------------------------------- GPU tests
gw_add_gpu_executable(NAME test_focus_stack_gpu SOURCES test_focus_stack_gpu.c
  LIBS focus_stack focus_stack_test_support focus_stack_ref)
gw_add_gpu_test(NAME test_focus_stack_gpu COMMAND $<TARGET_FILE:test_focus_stack_gpu> TIMEOUT 1800)

gw_add_gpu_executable(NAME test_focus_stack_example SOURCES test_focus_stack_example.c LIBS focus_stack)
gw_add_gpu_test(NAME test_focus_stack_example COMMAND $<TARGET_FILE:test_focus_stack_example> TIMEOUT 120)

# ---------------------------------------------------------------- canaries
# Each is the GPU test built with one planted fault; the wrapper passes only when the run fails AND its
# output holds the words of the guard meant to catch it. They run one test that makes 180 successful launches
# on 2 stacks (enough for stale_output's second call and for partial_grid's half of the stacks).
set(gw_fs_canary_filter "focus_stack_gpu/all_parameter_combinations_match_the_reference")

# name|define|expected guard words
set(gw_fs_canaries
  "cpu_fallback|FOCUS_STACK_CANARY_CPU_FALLBACK|no GPU code ran"
  "no_launch|FOCUS_STACK_CANARY_NO_LAUNCH|poison|no GPU code ran"
  "partial_grid|FOCUS_STACK_CANARY_PARTIAL_GRID|partial execution"
  "stale_output|FOCUS_STACK_CANARY_STALE_OUTPUT|poison"
  "off_by_one|FOCUS_STACK_CANARY_OFF_BY_ONE|ff values differ"
  "oob_write|FOCUS_STACK_CANARY_OOB_WRITE|Invalid __global__ write")
foreach(entry IN LISTS gw_fs_canaries)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 define)
  list(SUBLIST parts 2 -1 expect)
  string(REPLACE ";" "|" expect "${expect}")
  set(tgt canary_focus_stack_${name})
  gw_add_gpu_executable(NAME ${tgt} SOURCES test_focus_stack_gpu.c canaries/focus_stack_canaries.cu
    LIBS focus_stack focus_stack_test_support focus_stack_ref)
  # The test source calls the canary; the canary source (CUDA, without the rename) calls the real launcher.
  target_compile_definitions(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:focus_stack_launch=canary_focus_stack_launch>
    $<$<COMPILE_LANGUAGE:CUDA>:${define}>)
  target_include_directories(${tgt} PRIVATE ${PROJECT_SOURCE_DIR}/reference)
  if(name STREQUAL "oob_write")
    # Only compute-sanitizer can see this fault, so the canary runs under it; registered where it exists.
    if(GW_COMPUTE_SANITIZER)
      gw_add_canary(NAME ${tgt} EXPECT "${expect}" TIMEOUT 600
        COMMAND ${GW_COMPUTE_SANITIZER} --tool memcheck --padding 512 --error-exitcode 1 --target-processes all
                $<TARGET_FILE:${tgt}> --filter ${gw_fs_canary_filter})
    else()
      message(STATUS "compute-sanitizer not found: canary_focus_stack_oob_write is built but not registered")
    endif()
  else()
    gw_add_canary(NAME ${tgt} EXPECT "${expect}"
      COMMAND $<TARGET_FILE:${tgt}> --filter ${gw_fs_canary_filter} TIMEOUT 300)
  endif()
endforeach()
