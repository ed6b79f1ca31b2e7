# SPDX-License-Identifier: MIT
# GPUWitness.cmake: register GPU tests, canaries and Valgrind gates the gpuwitness way.
# include() it from any project (it needs only CMake >= 3.25 and, for the gates, bash and valgrind).
#
#   gw_add_gpu_test(NAME n COMMAND exe [args...] [LABELS l...] [TIMEOUT s])
#     Labels gpu (+ yours), SKIP_RETURN_CODE 77 (no usable GPU: Skipped, never Passed), a timeout,
#     RESOURCE_GROUPS gpus:1 (used when ctest gets --resource-spec-file; the test then reads
#     CTEST_RESOURCE_GROUP_0_GPUS and selects that device), Criterion on one job, and
#     CRITERION_ALWAYS_SUCCEED removed from the environment.
#   gw_add_canary(NAME n EXPECT regex COMMAND exe [args...] [TIMEOUT s])
#     A planted fault that must be caught: WILL_FAIL, labels canary;gpu. The wrapper reports the canary
#     as caught only when the command fails AND its output matches EXPECT (the guard's own words), so a
#     canary that fails for another reason (a crash, a missing file) shows up as a failed test.
#   gw_add_valgrind_gate(NAME n COMMAND exe [args...] [LABELS l...] [TIMEOUT s] [EXPECT_EXIT code])
#     Runs the command under memcheck with --trace-children=yes (Criterion runs each test in a child
#     process, where Valgrind's own exit code never reaches CTest) and fails when any process's log has
#     a non-zero ERROR SUMMARY, or the command's exit status is not EXPECT_EXIT (default 0: error paths
#     of a CLI can be checked for leaks too).
include_guard(GLOBAL)

set(GW_CTEST_DIR "${CMAKE_CURRENT_LIST_DIR}")
find_program(GW_BASH bash)
find_program(GW_VALGRIND valgrind)
# compute-sanitizer ships with the toolkit, but not always on PATH or in bin/.
if(DEFINED CUDAToolkit_BIN_DIR)
  set(_gw_cs_hints ${CUDAToolkit_BIN_DIR} ${CUDAToolkit_BIN_DIR}/../compute-sanitizer)
endif()
find_program(GW_COMPUTE_SANITIZER compute-sanitizer HINTS ${_gw_cs_hints} /usr/local/cuda/bin
  /usr/local/cuda/compute-sanitizer)

function(_gw_common_properties name timeout)
  if(NOT timeout)
    set(timeout 600)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout}
    ENVIRONMENT "CRITERION_JOBS=1"
    ENVIRONMENT_MODIFICATION "CRITERION_ALWAYS_SUCCEED=unset:")
endfunction()

function(gw_add_gpu_test)
  cmake_parse_arguments(GW "" "NAME;TIMEOUT" "COMMAND;LABELS" ${ARGN})
  add_test(NAME ${GW_NAME} COMMAND ${GW_COMMAND})
  _gw_common_properties(${GW_NAME} "${GW_TIMEOUT}")
  set_tests_properties(${GW_NAME} PROPERTIES LABELS "gpu;${GW_LABELS}" SKIP_RETURN_CODE 77
    RESOURCE_GROUPS "gpus:1")
endfunction()

function(gw_add_canary)
  cmake_parse_arguments(GW "" "NAME;TIMEOUT;EXPECT" "COMMAND" ${ARGN})
  add_test(NAME ${GW_NAME} COMMAND ${GW_BASH} ${GW_CTEST_DIR}/gw_run_canary.sh "${GW_EXPECT}" ${GW_COMMAND})
  _gw_common_properties(${GW_NAME} "${GW_TIMEOUT}")
  set_tests_properties(${GW_NAME} PROPERTIES LABELS "canary;gpu" WILL_FAIL TRUE SKIP_RETURN_CODE 77
    RESOURCE_GROUPS "gpus:1")
endfunction()

function(gw_add_valgrind_gate)
  cmake_parse_arguments(GW "" "NAME;TIMEOUT;EXPECT_EXIT" "COMMAND;LABELS" ${ARGN})
  if(NOT DEFINED GW_EXPECT_EXIT)
    set(GW_EXPECT_EXIT 0)
  endif()
  if(NOT GW_VALGRIND)
    message(WARNING "valgrind not found: ${GW_NAME} is not registered")
    return()
  endif()
  add_test(NAME ${GW_NAME} COMMAND ${GW_BASH} ${GW_CTEST_DIR}/gw_valgrind_gate.sh
    "${GW_VALGRIND}" "${CMAKE_CURRENT_BINARY_DIR}/valgrind/${GW_NAME}" ${GW_EXPECT_EXIT} ${GW_COMMAND})
  _gw_common_properties(${GW_NAME} "${GW_TIMEOUT}")
  set_tests_properties(${GW_NAME} PROPERTIES LABELS "memcheck;${GW_LABELS}")
endfunction()
