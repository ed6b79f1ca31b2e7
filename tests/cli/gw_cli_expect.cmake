# SPDX-License-Identifier: MIT
# cmake [-D...] -P gw_cli_expect.cmake -- COMMAND [ARGS...]
# Runs one gpuwitness command and checks its exit status and both output streams; CTest's
# PASS_REGULAR_EXPRESSION would ignore the exit status, so the verdict is taken here.
#   EXPECT_RC=n          required exit status
#   EXPECT_STDOUT=re     regex stdout must match;   REJECT_STDOUT=re  must not match
#   EXPECT_STDERR=re     regex stderr must match;   REJECT_STDERR=re  must not match
#   ENV_SET=A=1,B=2      environment for the command; GW_REQUIRE_GPU and GW_DEVICE are unset unless set here
#   WORKDIR=dir          emptied and used as the working directory
#   COPY_FILES=f1,f2     copied into WORKDIR before the run
#   MKDIRS=d1,d2         directories created in WORKDIR before the run
#   EXPECT_FILES=a,b     after the run WORKDIR holds exactly these paths, recursively, directories included
#                        ("none": nothing at all)
#   UNCHANGED=f1,f2      files in WORKDIR whose content must equal the copied originals (same base name)
#   SKIP_RC=n            when the command exits n, print GW_CLI_SKIPPED with the reason and stop: the
#                        no-GPU contract cannot be observed on a machine with a GPU (SKIP_REGULAR_EXPRESSION)
#   SKIP_STDOUT=re       the same when stdout matches re
#   SKIP_REASON=text
cmake_minimum_required(VERSION 3.25)

set(cmd)
set(after OFF)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after)
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after ON)
  endif()
endforeach()
if(NOT cmd)
  message(FATAL_ERROR "usage: cmake [-D...] -P gw_cli_expect.cmake -- COMMAND [ARGS...]")
endif()
if(NOT DEFINED EXPECT_RC)
  message(FATAL_ERROR "EXPECT_RC is required")
endif()

set(env_args --unset=GW_REQUIRE_GPU --unset=GW_DEVICE --unset=CRITERION_ALWAYS_SUCCEED)
if(ENV_SET)
  string(REPLACE "," ";" env_list "${ENV_SET}")
  list(APPEND env_args ${env_list})
endif()

set(wd_args)
if(WORKDIR)
  file(REMOVE_RECURSE "${WORKDIR}")
  file(MAKE_DIRECTORY "${WORKDIR}")
  set(wd_args WORKING_DIRECTORY "${WORKDIR}")
  if(COPY_FILES)
    string(REPLACE "," ";" copies "${COPY_FILES}")
    file(COPY ${copies} DESTINATION "${WORKDIR}")
  endif()
  if(MKDIRS)
    string(REPLACE "," ";" dirs "${MKDIRS}")
    foreach(d ${dirs})
      file(MAKE_DIRECTORY "${WORKDIR}/${d}")
    endforeach()
  endif()
endif()

list(JOIN cmd " " shown)
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_args} ${cmd} ${wd_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("$ ${shown}\n--- exit ${rc}\n--- stdout:\n${out}--- stderr:\n${err}---")

if((DEFINED SKIP_RC AND rc STREQUAL "${SKIP_RC}") OR (DEFINED SKIP_STDOUT AND out MATCHES "${SKIP_STDOUT}"))
  message("GW_CLI_SKIPPED: ${SKIP_REASON}")
  return()
endif()

set(problems)
if(NOT rc STREQUAL "${EXPECT_RC}")
  list(APPEND problems "exit status ${rc}, expected ${EXPECT_RC}")
endif()
foreach(stream stdout stderr)
  string(TOUPPER ${stream} up)
  if(stream STREQUAL "stdout")
    set(text "${out}")
  else()
    set(text "${err}")
  endif()
  if(DEFINED EXPECT_${up} AND NOT text MATCHES "${EXPECT_${up}}")
    list(APPEND problems "${stream} does not match '${EXPECT_${up}}'")
  endif()
  if(DEFINED REJECT_${up} AND text MATCHES "${REJECT_${up}}")
    list(APPEND problems "${stream} matches '${REJECT_${up}}', which it must not")
  endif()
endforeach()

if(WORKDIR AND DEFINED EXPECT_FILES)
  file(GLOB_RECURSE present LIST_DIRECTORIES true RELATIVE "${WORKDIR}" "${WORKDIR}/*")
  list(SORT present)
  if(EXPECT_FILES STREQUAL "none")
    set(expected)
  else()
    string(REPLACE "," ";" expected "${EXPECT_FILES}")
    list(SORT expected)
  endif()
  if(NOT "${present}" STREQUAL "${expected}")
    list(APPEND problems "the directory holds [${present}], expected [${expected}]")
  endif()
endif()
if(WORKDIR AND UNCHANGED)
  string(REPLACE "," ";" originals "${UNCHANGED}")
  foreach(original ${originals})
    get_filename_component(name "${original}" NAME)
    file(SHA256 "${original}" want) # not file(READ): it stops at a NUL byte, and .npy files have them
    if(EXISTS "${WORKDIR}/${name}")
      file(SHA256 "${WORKDIR}/${name}" got)
    else()
      set(got missing)
    endif()
    if(NOT got STREQUAL want)
      list(APPEND problems "${name} was modified")
    endif()
  endforeach()
endif()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "FAILED:\n  ${text}")
endif()
message("ok")
