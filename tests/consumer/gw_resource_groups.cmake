# SPDX-License-Identifier: MIT
# cmake -DPROBE=<gw_resource_probe> -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P gw_resource_groups.cmake
# How multi-GPU runners schedule GPU tests (ctest/README.md), checked without a GPU: a tiny project
# registers the probe twice with gw_add_gpu_test (RESOURCE_GROUPS gpus:1), and ctest runs it with
#   two slots on one GPU (id 1)  both tests get CTEST_RESOURCE_GROUP_0_GPUS=id:1,slots:1, gw_device reads
#                                id 1 (not its default 0), and the two run at the same time
#   one slot on that GPU         the same ids, one test after the other
#   no spec file                 RESOURCE_GROUPS is ignored: no allocation, gw_device falls back to 0
#   a spec with no GPU           the tests do not run and ctest fails (a runner must list its GPUs)
# The GPU itself is not needed: the probe reports gw_device's choice without failing on it.
cmake_minimum_required(VERSION 3.25)
foreach(var PROBE SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gw_resource_groups.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(hold_ms 1000)
file(WRITE ${WORK_DIR}/src/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(gw_resource_groups NONE)
enable_testing()
include(\"${SOURCE_DIR}/ctest/GPUWitness.cmake\")
foreach(name slot_a slot_b)
  gw_add_gpu_test(NAME \${name} COMMAND \"${PROBE}\" \"${WORK_DIR}/out/\${name}.txt\" ${hold_ms} TIMEOUT 60)
endforeach()
")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the tiny project failed (exit ${rc}):\n${out}")
endif()
# This test's own environment must not leak an allocation into the runs below.
foreach(var CTEST_RESOURCE_GROUP_COUNT CTEST_RESOURCE_GROUP_0 CTEST_RESOURCE_GROUP_0_GPUS)
  unset(ENV{${var}})
endforeach()

# run_ctest(<scenario> <spec json or "">): runs both tests with -j2; sets rc, out, and for each test the
# probe's report as report_slot_a / report_slot_b ("" when the test did not run).
function(run_ctest scenario spec)
  set(args --test-dir ${WORK_DIR}/build -j 2 --no-tests=error --output-on-failure)
  if(spec)
    file(WRITE ${WORK_DIR}/${scenario}.json "${spec}")
    list(APPEND args --resource-spec-file ${WORK_DIR}/${scenario}.json)
  endif()
  file(REMOVE_RECURSE ${WORK_DIR}/out)
  file(MAKE_DIRECTORY ${WORK_DIR}/out)
  execute_process(COMMAND ${CMAKE_CTEST_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(rc ${rc} PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  foreach(name slot_a slot_b)
    set(report "")
    if(EXISTS ${WORK_DIR}/out/${name}.txt)
      file(READ ${WORK_DIR}/out/${name}.txt report)
    endif()
    set(report_${name} "${report}" PARENT_SCOPE)
  endforeach()
endfunction()

function(expect scenario name report regex)
  if(NOT report MATCHES "${regex}")
    message(FATAL_ERROR "${scenario}: ${name} reported no /${regex}/:\n${report}")
  endif()
endfunction()

# Each test got GPU id 1 and gw_device read it; gw_device_resolve then chose device 1 or, on a machine
# without a GPU (or with only device 0), said why it could not.
function(expect_gpu_1 scenario)
  foreach(name slot_a slot_b)
    set(report "${report_${name}}")
    expect(${scenario} ${name} "${report}" "CTEST_RESOURCE_GROUP_COUNT=1\n")
    expect(${scenario} ${name} "${report}" "CTEST_RESOURCE_GROUP_0=gpus\n")
    expect(${scenario} ${name} "${report}" "CTEST_RESOURCE_GROUP_0_GPUS=id:1,slots:1\n")
    expect(${scenario} ${name} "${report}" "gw_ctest_gpu_id=1\n")
    expect(${scenario} ${name} "${report}"
      "gw_device_resolve\\(cuda\\)=(ordinal 1|error: .*(device 1 does not exist|no usable GPU))")
  endforeach()
endfunction()

# 1 when the two tests held their slots at the same time.
function(held_together result)
  foreach(name slot_a slot_b)
    if(NOT report_${name} MATCHES "held_ms=([0-9]+)\\.\\.([0-9]+)")
      message(FATAL_ERROR "${name} reported no held_ms:\n${report_${name}}")
    endif()
    set(start_${name} ${CMAKE_MATCH_1})
    set(stop_${name} ${CMAKE_MATCH_2})
  endforeach()
  if(start_slot_a LESS stop_slot_b AND start_slot_b LESS stop_slot_a)
    set(${result} 1 PARENT_SCOPE)
  else()
    set(${result} 0 PARENT_SCOPE)
  endif()
endfunction()

set(head "{\"version\": {\"major\": 1, \"minor\": 0}, \"local\": [{\"gpus\": [")

run_ctest(two_slots "${head}{\"id\": \"1\", \"slots\": 2}]}]}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "two_slots: ctest exited ${rc}:\n${out}")
endif()
expect_gpu_1(two_slots)
held_together(together)
if(NOT together)
  message(FATAL_ERROR "two_slots: the tests ran one after the other although the GPU has two slots:\n"
    "${report_slot_a}${report_slot_b}")
endif()
message(STATUS "two slots on GPU 1: both tests got id:1, gw_device read id 1, and they ran together")

run_ctest(one_slot "${head}{\"id\": \"1\", \"slots\": 1}]}]}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "one_slot: ctest exited ${rc}:\n${out}")
endif()
expect_gpu_1(one_slot)
held_together(together)
if(together)
  message(FATAL_ERROR "one_slot: the tests shared the GPU's only slot:\n${report_slot_a}${report_slot_b}")
endif()
message(STATUS "one slot on GPU 1: both tests got id:1, one after the other")

run_ctest(no_spec "")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "no_spec: ctest exited ${rc}:\n${out}")
endif()
foreach(name slot_a slot_b)
  expect(no_spec ${name} "${report_${name}}" "CTEST_RESOURCE_GROUP_0_GPUS=\\(unset\\)\n")
  expect(no_spec ${name} "${report_${name}}" "gw_ctest_gpu_id=-1\n")
endforeach()
message(STATUS "no spec file: no allocation, gw_device keeps its default device")

run_ctest(no_gpus "${head}]}]}")
if(rc EQUAL 0 OR NOT out MATCHES "Insufficient resources" OR NOT "${report_slot_a}${report_slot_b}" STREQUAL "")
  message(FATAL_ERROR "no_gpus: want both tests not run for insufficient resources and ctest failing; "
    "exit ${rc}:\n${out}")
endif()
message(STATUS "a spec with no GPU: the tests did not run and ctest failed (exit ${rc})")
