# SPDX-License-Identifier: MIT
# ptxas's resource report of every kernel of the table, for sm_90: the figures (registers, stack frame,
# spills, static shared memory, barriers) that each kernel's page quotes in its resource-figures table and
# the test doc_resource_figures (ci/check_resource_figures.py) checks, so that no figure is copied by hand.
#
# Included (from tests/repo/CMakeLists.txt), it sets
#   GW_RESOURCE_DIR   <build>/resources
#   GW_RESOURCE_LOGS  <build>/resources/<kernel>.sm_90.ptxas.txt for each kernel of GW_KERNELS, in order
# and, when the build has CUDA, the target gw_resource_reports (part of ALL) that writes them: one nvcc run
# per kernel,
#   nvcc -arch=sm_90 -cubin -O3 -DNDEBUG -lineinfo -Xptxas -v --keep -I kernels -I kernels/<kernel> <kernel>.cu
# with stderr kept as <kernel>.sm_90.ptxas.txt and the PTX as <kernel>.sm_90.ptx (its .maxntid is the block
# size of each kernel's __launch_bounds__), next to <kernel>.sm_90.cubin. The flags that shape device code
# are the kernel libraries' (gw_add_kernel: -lineinfo, the include directories; nvcc adds CCCL itself; the
# Release configuration's -O3 -DNDEBUG), fixed here whatever the build type or CMAKE_CUDA_FLAGS, so the
# figures are those of the code the project ships. sm_90 is built whatever CMAKE_CUDA_ARCHITECTURES says.
# A failing nvcc fails the build and leaves no report. Each run reruns when a file of kernels/<kernel>/ or
# kernels/gw_witness.h changes. It costs about as much as building the four kernels for one architecture.
#
# Run as a script (cmake -D... -P this file), it is that one nvcc run for one kernel: NVCC, HOST_COMPILER
# (may be empty), KERNEL, SOURCE_DIR (the project), OUT_DIR, ARCH.

if(CMAKE_SCRIPT_MODE_FILE)
  set(stem "${OUT_DIR}/${KERNEL}.${ARCH}")
  set(keep "${stem}.keep")
  file(REMOVE "${stem}.ptxas.txt" "${stem}.ptx" "${stem}.cubin")
  file(REMOVE_RECURSE "${keep}")
  file(MAKE_DIRECTORY "${keep}")
  set(cmd "${NVCC}" -arch=${ARCH} -cubin -O3 -DNDEBUG -lineinfo -Xptxas -v --keep --keep-dir "${keep}"
    "-I${SOURCE_DIR}/kernels" "-I${SOURCE_DIR}/kernels/${KERNEL}" -o "${stem}.cubin"
    "${SOURCE_DIR}/kernels/${KERNEL}/${KERNEL}.cu")
  if(HOST_COMPILER)
    list(APPEND cmd -ccbin "${HOST_COMPILER}")
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    file(REMOVE_RECURSE "${stem}.cubin" "${keep}")
    list(JOIN cmd " " shown)
    message(FATAL_ERROR "${shown}\nfailed (${rc}):\n${out}${err}")
  endif()
  file(GLOB ptx "${keep}/*.ptx")
  list(LENGTH ptx n_ptx)
  if(NOT n_ptx EQUAL 1)
    message(FATAL_ERROR "nvcc --keep left ${n_ptx} PTX files in ${keep}, want 1: ${ptx}")
  endif()
  file(COPY_FILE "${ptx}" "${stem}.ptx")
  file(REMOVE_RECURSE "${keep}")
  # ptxas's report is its "info" lines; anything else (a warning) is shown in the build's output too
  string(REGEX REPLACE "(^|\n)(ptxas info[^\n]*|    [^\n]*)" "" other "${out}${err}")
  string(STRIP "${other}" other)
  if(other)
    message(NOTICE "${KERNEL}.cu (${ARCH}):\n${other}")
  endif()
  file(WRITE "${stem}.ptxas.txt" "${out}${err}")
  return()
endif()

set(GW_RESOURCE_DIR "${PROJECT_BINARY_DIR}/resources")
set(GW_RESOURCE_LOGS "")
foreach(k IN LISTS GW_KERNELS)
  list(APPEND GW_RESOURCE_LOGS "${GW_RESOURCE_DIR}/${k}.sm_90.ptxas.txt")
endforeach()
if(NOT GW_HAVE_CUDA)
  return()
endif()

foreach(k IN LISTS GW_KERNELS)
  set(stem "${GW_RESOURCE_DIR}/${k}.sm_90")
  # every file of the kernel's folder: the .cu and the stage files and headers it includes
  file(GLOB sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/kernels/${k}/*")
  add_custom_command(OUTPUT "${stem}.ptxas.txt" "${stem}.ptx" "${stem}.cubin"
    COMMAND "${CMAKE_COMMAND}" "-DNVCC=${CMAKE_CUDA_COMPILER}" "-DHOST_COMPILER=${CMAKE_CUDA_HOST_COMPILER}"
      "-DKERNEL=${k}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}" "-DOUT_DIR=${GW_RESOURCE_DIR}" -DARCH=sm_90
      -P "${CMAKE_CURRENT_LIST_FILE}"
    DEPENDS ${sources} "${PROJECT_SOURCE_DIR}/kernels/gw_witness.h" "${CMAKE_CURRENT_LIST_FILE}"
    COMMENT "ptxas -v of kernels/${k}/${k}.cu for sm_90 (the figures of docs/${k}.md)"
    VERBATIM)
endforeach()
add_custom_target(gw_resource_reports ALL DEPENDS ${GW_RESOURCE_LOGS})
