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
#   gw_add_emu_test(NAME n SOURCES host.c... CUDA_SOURCES k.cu... [LIBS l...] [INCLUDES dir...] [DEFINES d...]
#                   [ARGS a...] [SEEDS s...] [LABELS l...] [TIMEOUT s] [EXPECT regex])
#     The emu tier for your own kernel: CUDA_SOURCES compiled by the host compiler for gpuwitness' emulated
#     device (every CUDA thread a fiber on the CPU, real barriers and warp rendezvous; gpuwitness' docs/emu.md),
#     SOURCES with GW_EMU=1 defined, into the program n_emu, linked with LIBS and gw_emu instead of cudart (LIBS
#     must not bring cudart). Registered as n.emu under GW_EMU_SEED=1, and n.emu.seedS for every further seed:
#     label emu, exit 77 a failure (the emulated device is always there), GW_REQUIRE_GPU unset. It never stands
#     for a GPU run: its witness records say architecture 0, "emulated". Needs gpuwitness' lib/emu in the
#     project (add_subdirectory() of a copy, after find_package(CUDAToolkit), CXX among the languages).
#     DEFINES: compile definitions of both halves (a canary's planted fault). EXPECT: a canary on the emulated
#     device, caught only when the program fails through the guard whose words EXPECT matches (labels canary;emu).
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

function(gw_add_emu_test)
  cmake_parse_arguments(GW "" "NAME;TIMEOUT;EXPECT" "SOURCES;CUDA_SOURCES;LIBS;INCLUDES;DEFINES;ARGS;SEEDS;LABELS"
    ${ARGN})
  if(NOT COMMAND gw_add_emu_library OR NOT TARGET gw_emu)
    message(FATAL_ERROR "gw_add_emu_test(${GW_NAME}): gpuwitness' emulated device is not in this project: "
      "add_subdirectory() a copy of gpuwitness' lib/emu first")
  endif()
  if(NOT GW_SEEDS)
    set(GW_SEEDS 1)
  endif()
  gw_add_emu_library(${GW_NAME}_emu_cu SOURCES ${GW_CUDA_SOURCES} INCLUDES ${GW_INCLUDES})
  target_compile_definitions(${GW_NAME}_emu_cu PRIVATE ${GW_DEFINES})
  add_executable(${GW_NAME}_emu ${GW_SOURCES})
  target_compile_definitions(${GW_NAME}_emu PRIVATE GW_EMU=1 ${GW_DEFINES})
  target_include_directories(${GW_NAME}_emu PRIVATE ${GW_INCLUDES})
  target_link_libraries(${GW_NAME}_emu PRIVATE ${GW_NAME}_emu_cu ${GW_LIBS} gw_emu)
  list(GET GW_SEEDS 0 first)
  foreach(seed IN LISTS GW_SEEDS)
    set(name ${GW_NAME}.emu)
    if(NOT seed EQUAL first)
      set(name ${GW_NAME}.emu.seed${seed})
    endif()
    set(labels emu ${GW_LABELS})
    if(DEFINED GW_EXPECT) # gw_run_canary.sh: exit 1 when caught; GW_CANARY_NO_SKIP: an exit 77 is no catch here
      add_test(NAME ${name} COMMAND ${GW_BASH} ${GW_CTEST_DIR}/gw_run_canary.sh "${GW_EXPECT}"
        $<TARGET_FILE:${GW_NAME}_emu> ${GW_ARGS})
      list(PREPEND labels canary)
    else()
      add_test(NAME ${name} COMMAND $<TARGET_FILE:${GW_NAME}_emu> ${GW_ARGS})
    endif()
    _gw_common_properties(${name} "${GW_TIMEOUT}")
    set_tests_properties(${name} PROPERTIES LABELS "${labels}"
      ENVIRONMENT "CRITERION_JOBS=1;GW_EMU_SEED=${seed};GW_CANARY_NO_SKIP=1"
      ENVIRONMENT_MODIFICATION "CRITERION_ALWAYS_SUCCEED=unset:;GW_REQUIRE_GPU=unset:")
    if(DEFINED GW_EXPECT)
      set_tests_properties(${name} PROPERTIES WILL_FAIL TRUE)
    endif()
  endforeach()
endfunction()
