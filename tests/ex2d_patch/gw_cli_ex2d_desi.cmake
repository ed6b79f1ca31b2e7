# SPDX-License-Identifier: MIT
# cmake -DGW=<gpuwitness> -DPULLS=<ex2d_frame_pulls> -DDEVICE=cpu|cuda -DWORKDIR=<dir> [-DMODES=noisy;clean]
#       [-DEMULATED=1] -P gw_cli_ex2d_desi.cmake
# First the PSF's own rules (fibres, wavelength domain, CCD: exit 2, nothing written). Then the real-PSF round
# trip through the files (docs/ex2d_patch.md, "Real DESI files"): `synth ex2d` projects the
# synthetic truth through $GW_DATA_DIR's DESI test PSF (fibres 0..9, 500 bins of 0.8 A from 6000 A; clean:
# fibres 0..4, 250 bins), `run ex2d` extracts it into a frame, ex2d_frame_pulls checks the pulls against the TRUTH HDU: with
# noise mean ~0 and std ~1, then --clean within 0.01 sigma. Without GW_DATA_DIR it prints GW_CLI_SKIPPED
# (fails under CI, as the data tests do); with DEVICE=cuda and no usable GPU the CLI exits 77 and this prints
# GW_CLI_SKIPPED after checking that nothing was written.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../cli/gw_cli_emulated.cmake)
foreach(v GW PULLS DEVICE WORKDIR)
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
if(NOT EXISTS "${psf}")
  message(FATAL_ERROR "GW_DATA_DIR=$ENV{GW_DATA_DIR} has no desi/psf-gausshermite.fits")
endif()
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
# noisy: two subbundles over 500 bins (20 patches, 4,840 inner bins); clean: one subbundle over 250 bins
set(range_noisy --fibres 0:10 --waves 6000:6399.2:0.8)
set(range_clean --fibres 0:5 --waves 6000:6199.2:0.8)
set(summary_noisy "fibres 0\\.\\.9, 500 bins 6000\\.\\.6399\\.2 A: 20 patch")
set(summary_clean "fibres 0\\.\\.4, 250 bins 6000\\.\\.6199\\.2 A: 5 patch")

# The PSF's own rules: exit 2, the option and the rule named, nothing written.
foreach(case
    "--fibres 20:10: fibres 20..29 must lie inside the PSF's FIBERMIN..FIBERMAX, 0..24|--fibres;20:10;--waves;6000:6100:0.8"
    "--waves 5000:5100:1 with --wavesize 50: the padded grid 4988..5162 A .12 bins below W0, 62 above W1. must lie inside the PSF's wavelength domain 5564..7805 A|--fibres;0:5;--waves;5000:5100:1"
    "a spot of the padded grid .12 bins below W0, 62 above W1. leaves the 4114 x 4128 CCD|--fibres;0:5;--waves;5575:5600:0.8")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 expect)
  list(SUBLIST parts 1 -1 args)
  execute_process(COMMAND ${GW} synth ex2d --psf ${psf} ${args} --out ${WORKDIR}/bad.fits
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${expect}" OR EXISTS "${WORKDIR}/bad.fits")
    message(FATAL_ERROR "synth ex2d ${args}: exit ${rc} (expected 2), stderr:\n${err}\nexpected: ${expect}, no file")
  endif()
endforeach()

if(NOT MODES) # -DMODES=clean: the clean round trip alone (gpuwitness-emu's, for CI's time)
  set(MODES noisy clean)
endif()
foreach(mode IN LISTS MODES)
  set(img "${WORKDIR}/${mode}-image.fits")
  set(frame "${WORKDIR}/${mode}-frame.fits")
  set(extra --seed 11)
  if(mode STREQUAL "clean")
    set(extra --clean)
  endif()
  execute_process(COMMAND ${GW} synth ex2d --psf ${psf} ${range_${mode}} ${extra} --out ${img}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("--- synth ex2d (${mode}): exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0 OR NOT EXISTS "${img}")
    message(FATAL_ERROR "synth ex2d failed")
  endif()
  execute_process(COMMAND ${GW} run ex2d --device ${DEVICE} --psf ${psf} --image ${img} ${range_${mode}}
    --out ${frame}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("--- run ex2d --device ${DEVICE} (${mode}): exit ${rc}\n${out}${err}")
  gw_cli_emulated_check("run ex2d (${mode})" "${out}")
  if(rc EQUAL 77 AND DEVICE MATCHES "^cuda")
    if(EXISTS "${frame}")
      message(FATAL_ERROR "exit 77 must write nothing, but ${frame} exists")
    endif()
    message("GW_CLI_SKIPPED: no usable GPU for --device ${DEVICE}")
    return()
  endif()
  if(NOT rc EQUAL 0 OR NOT EXISTS "${frame}")
    message(FATAL_ERROR "run ex2d: exit ${rc}, expected 0 and ${frame}")
  endif()
  if(DEVICE MATCHES "^cuda" AND NOT out MATCHES "K7 outputs +witness: .*witness checks out")
    message(FATAL_ERROR "no witness receipts on stdout")
  endif()
  if(NOT out MATCHES "${summary_${mode}}")
    message(FATAL_ERROR "the summary line does not name the extraction (fibres, bins, patches)")
  endif()
  execute_process(COMMAND ${PULLS} ${frame} ${img} ${mode} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("--- pulls (${mode}): exit ${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the frame's pulls against the truth fail (above)")
  endif()
endforeach()
