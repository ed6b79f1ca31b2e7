# SPDX-License-Identifier: MIT
# cmake -DGW=<gpuwitness> -DBASH=<bash> -DGATE=<gw_valgrind_gate.sh> -DVALGRIND=<valgrind> -DWORKDIR=<dir>
#       -P gw_cli_ex2d_desi_memcheck.cmake
# The CLI's DESI-file path under the Valgrind gate (ctest/gw_valgrind_gate.sh): a `run ex2d` of fibres 0..1 over
# 38 bins (1 patch) of an image `synth ex2d` made beforehand (natively), a `synth ex2d` refused after the PSF
# was read (fibres outside it: exit 2), and a `run ex2d` whose --image is not an image (exit 1). Each must exit
# as expected with no Valgrind error and no leak. The PSF comes from $GW_DATA_DIR at test time: without it this
# prints GW_CLI_SKIPPED (and fails under CI, as the data tests do).
cmake_minimum_required(VERSION 3.25)
foreach(v GW BASH GATE VALGRIND WORKDIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "${v} is required")
  endif()
endforeach()
if(NOT DEFINED ENV{GW_DATA_DIR} OR "$ENV{GW_DATA_DIR}" STREQUAL "")
  if((DEFINED ENV{CI} AND NOT "$ENV{CI}" STREQUAL "" AND NOT "$ENV{CI}" STREQUAL "false") OR "$ENV{GW_REQUIRE_GPU}" STREQUAL "1")
    message(FATAL_ERROR "GW_DATA_DIR is not set: it must name the data folder holding desi/psf-gausshermite.fits")
  endif()
  message("GW_CLI_SKIPPED: GW_DATA_DIR is not set (the data folder holding desi/psf-gausshermite.fits)")
  return()
endif()
set(psf "$ENV{GW_DATA_DIR}/desi/psf-gausshermite.fits")
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(range --fibres 0:2 --waves 6000:6030:0.8)
execute_process(COMMAND ${GW} synth ex2d --psf ${psf} ${range} --out ${WORKDIR}/image.fits RESULT_VARIABLE rc
  OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "synth ex2d (outside the gate): exit ${rc}\n${out}${err}")
endif()

foreach(case
    "run|0|run;ex2d;--device;cpu;--threads;1;--psf;${psf};--image;${WORKDIR}/image.fits;--fibres;0:2;--waves;6000:6030:0.8;--out;${WORKDIR}/frame.fits"
    "synth_refused|2|synth;ex2d;--psf;${psf};--fibres;20:10;--waves;6000:6100:0.8;--out;${WORKDIR}/never.fits"
    "run_bad_image|1|run;ex2d;--device;cpu;--psf;${psf};--image;${psf};--fibres;0:2;--waves;6000:6030:0.8;--out;${WORKDIR}/never.fits")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 expect)
  list(SUBLIST parts 2 -1 args)
  execute_process(COMMAND ${BASH} ${GATE} ${VALGRIND} ${WORKDIR}/valgrind-${name} ${expect} ${GW} ${args}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("--- ${name} under the Valgrind gate (expected exit ${expect}): gate exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the Valgrind gate failed for ${name} (above)")
  endif()
endforeach()
if(EXISTS "${WORKDIR}/never.fits" OR NOT EXISTS "${WORKDIR}/frame.fits")
  message(FATAL_ERROR "a refused command wrote its output, or the run wrote none")
endif()
