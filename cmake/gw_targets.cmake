# SPDX-License-Identifier: MIT
# The project's target helpers: every library of kernels/, reference/ and lib/ is made by one of these, so
# each kind of target is built, warned and installed one way.
#
#   gw_add_kernel(<name>)
#       kernels/<name>/<name>.cu as the static library <name> (alias gpuwitness::<name>): the one translation
#       unit of a kernel (stage files are #included by it), -lineinfo, the project's CUDA architectures,
#       include directories kernels/ (gw_witness.h) and kernels/<name>/, installed with <name>.h.
#   gw_add_reference(<target> SOURCES <.c>... [HEADERS <.h>...] [LINK <libs>...] [OPENMP] [STRICT_FP])
#       A plain-C library of the reference folder it is called from (reference/<kernel>/): no CUDA, the
#       folder and kernels/<kernel>/ as include directories (<kernel>_ref.h includes <kernel>.h), OpenMP when
#       asked and found, -ffp-contract=off with STRICT_FP (one rounding per operation, so the GPU's FMA-free
#       sums can match bit for bit), installed with HEADERS.
#   gw_add_library(<target> SOURCES <files>... [LINK <libs>...] [PRIVATE_LINK <libs>...])
#       A part of lib/: public headers in include/, sources in src/, installed and exported.

# Warning flags as a target, not a directory-wide string. CI sets CI=true: warnings become errors there, not
# on a user's newer compiler.
add_library(gw_warnings INTERFACE)
target_compile_options(gw_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes>
  $<$<AND:$<COMPILE_LANGUAGE:C>,$<BOOL:${GW_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall -Xcompiler=-Wextra>)
# A static library exports its private link items as $<LINK_ONLY:...>, so CMake 3.25 wants gw_warnings (flags
# only, nothing to link) in the export set; consumers get no flags from it. 3.26's $<BUILD_LOCAL_INTERFACE>
# would avoid this.
install(TARGETS gw_warnings EXPORT gpuwitnessTargets)

function(gw_add_kernel name)
  set(dir "${PROJECT_SOURCE_DIR}/kernels/${name}")
  add_library(${name} STATIC ${dir}/${name}.cu)
  add_library(gpuwitness::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/kernels> $<BUILD_INTERFACE:${dir}>)
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  target_link_libraries(${name} PUBLIC CUDA::cudart PRIVATE gw_warnings)
  file(GLOB headers ${dir}/*.h) # the contract and what it includes (ex2d_patch_args.h)
  gw_install(${name} HEADERS ${headers})
endfunction()

function(gw_add_reference target)
  cmake_parse_arguments(R "OPENMP;STRICT_FP" "" "SOURCES;HEADERS;LINK" ${ARGN})
  get_filename_component(kernel "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  add_library(${target} STATIC ${R_SOURCES})
  add_library(gpuwitness::${target} ALIAS ${target})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/kernels> $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/kernels/${kernel}>)
  target_link_libraries(${target} PUBLIC ${R_LINK} PRIVATE gw_warnings)
  if(R_OPENMP AND OpenMP_C_FOUND)
    target_link_libraries(${target} PRIVATE OpenMP::OpenMP_C)
  endif()
  if(R_STRICT_FP)
    target_compile_options(${target} PRIVATE -ffp-contract=off)
  endif()
  gw_install(${target} HEADERS ${R_HEADERS})
endfunction()

function(gw_add_library target)
  cmake_parse_arguments(L "" "" "SOURCES;LINK;PRIVATE_LINK" ${ARGN})
  add_library(${target} STATIC ${L_SOURCES})
  add_library(gpuwitness::${target} ALIAS ${target})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>)
  target_link_libraries(${target} PUBLIC ${L_LINK} PRIVATE ${L_PRIVATE_LINK} gw_warnings)
  set(headers "")
  foreach(src IN LISTS L_SOURCES)
    get_filename_component(stem "${src}" NAME_WE)
    if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/include/${stem}.h")
      list(APPEND headers "${CMAKE_CURRENT_SOURCE_DIR}/include/${stem}.h")
    endif()
  endforeach()
  gw_install(${target} HEADERS ${headers})
endfunction()
