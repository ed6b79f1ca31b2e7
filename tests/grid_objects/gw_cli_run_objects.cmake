# SPDX-License-Identifier: MIT
# cmake -DGW=gpuwitness -DDEVICE=cpu|cuda -DINPUT=objects_3x3.json -DEXPECTED=dir -DWORKDIR=dir -P gw_cli_run_objects.cmake
# `gpuwitness run grid_objects` on INPUT with three variants and both bg tie rules, each output compared as JSON
# (string(JSON EQUAL): same members and values, whatever the spacing) with a file worked out by hand from the
# rules of docs/grid_objects.md: objects_3x3.v3.json (diagonal, without bg: the header's example grid),
# objects_3x3.v4.json (univalued, 4-connected, with bg) and objects_3x3.v1-smallest.json (without bg, bg tie
# smallest: the test grid [1, 8, 1, 8] ties 1 and 8, which arc-dsl breaks as 8 and "smallest" as 1).
# With DEVICE=cuda and no usable GPU the command exits 77: this prints GW_CLI_SKIPPED (the test's skip
# expression), since a cmake -P script cannot exit 77 itself; under GW_REQUIRE_GPU=1 (kept for the cuda run,
# unset for the cpu run) the command exits 1 and this fails.
cmake_minimum_required(VERSION 3.25)
foreach(var GW DEVICE INPUT EXPECTED WORKDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "usage: cmake -DGW=gpuwitness -DDEVICE=cpu|cuda -DINPUT=task.json -DEXPECTED=dir "
                        "-DWORKDIR=dir -P gw_cli_run_objects.cmake")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(problems)
foreach(spec "3|arc-dsl|objects_3x3.v3.json" "4|arc-dsl|objects_3x3.v4.json" "1|smallest|objects_3x3.v1-smallest.json")
  string(REPLACE "|" ";" parts "${spec}")
  list(GET parts 0 variant)
  list(GET parts 1 tie)
  list(GET parts 2 expected)
  set(out "${WORKDIR}/v${variant}-${tie}.json")
  set(cmd "${GW}" run grid_objects --variant ${variant} --bg-tie ${tie} --device ${DEVICE} -o "${out}" "${INPUT}")
  set(env_unset --unset=GW_DEVICE)
  if(DEVICE STREQUAL "cpu")
    list(APPEND env_unset --unset=GW_REQUIRE_GPU)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_unset} ${cmd}
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  list(JOIN cmd " " shown)
  message("$ ${shown}\n--- exit ${rc}\n--- stdout:\n${stdout}--- stderr:\n${stderr}---")
  if(DEVICE STREQUAL "cuda" AND rc STREQUAL "77")
    if(EXISTS "${out}")
      message(FATAL_ERROR "exit 77 must write nothing, but ${out} exists")
    endif()
    message("GW_CLI_SKIPPED: no usable GPU")
    return()
  endif()
  if(NOT rc STREQUAL "0")
    list(APPEND problems "variant ${variant}, bg tie ${tie}: exit status ${rc}, expected 0")
    continue()
  endif()
  if(DEVICE STREQUAL "cuda" AND NOT stdout MATCHES "witness: launches=1 .*equal to grid_objects_ref, witness checks out")
    list(APPEND problems "variant ${variant}: stdout has no witness receipt and verdict")
  endif()
  file(READ "${out}" got)
  file(READ "${EXPECTED}/${expected}" want)
  string(JSON same ERROR_VARIABLE error EQUAL "${got}" "${want}")
  if(error)
    list(APPEND problems "variant ${variant}: ${out} is not JSON: ${error}")
  elseif(NOT same)
    list(APPEND problems "variant ${variant}, bg tie ${tie}: ${out} differs from ${expected}:\n  got  ${got}")
  endif()
endforeach()
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "FAILED:\n  ${text}")
endif()
message("ok: 3 variants equal the outputs worked out by hand")
