# SPDX-License-Identifier: MIT
# Install rules and the exported CMake package, so that another project can find_package(gpuwitness).
# Included by the top CMakeLists.txt before the subdirectories; each installed target then adds one line,
#   gw_install(<target> [HEADERS <public headers>...])
# next to its add_library()/add_executable(), with its include directories as $<BUILD_INTERFACE:...>.
#
# Layout (GNUInstallDirs), recorded in docs/install.md:
#   include/gpuwitness/     every public header, flat: <k>.h, <k>_ref.h, gw_witness.h, lib/'s headers
#   lib/                    one static library per kernel, per reference library, and per part of lib/
#   bin/gpuwitness          the CLI
#   lib/cmake/gpuwitness/   gpuwitnessConfig.cmake, its version file, the exported targets (gpuwitness::<t>),
#                           GPUWitness.cmake and the wrappers it runs
# The exported targets' include directory is include/gpuwitness itself, so `#include "grid_d4.h"` reads the
# same in a project that copied kernels/grid_d4/ and in one that links gpuwitness::grid_d4.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GW_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/gpuwitness)
set(GW_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpuwitness)

function(gw_install target)
  cmake_parse_arguments(GW "" "" "HEADERS" ${ARGN})
  install(TARGETS ${target} EXPORT gpuwitnessTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${GW_INSTALL_INCLUDEDIR})
  # An installed program keeps the directories of the libraries it links from outside the build (CUPTI and
  # cudart in the toolkit), which the loader does not search unless ld.so.conf lists them.
  set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  if(GW_HEADERS)
    install(FILES ${GW_HEADERS} DESTINATION ${GW_INSTALL_INCLUDEDIR})
  endif()
endfunction()

# The one header every kernel and reference includes.
install(FILES ${PROJECT_SOURCE_DIR}/kernels/gw_witness.h DESTINATION ${GW_INSTALL_INCLUDEDIR})


install(EXPORT gpuwitnessTargets NAMESPACE gpuwitness:: DESTINATION ${GW_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpuwitnessConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpuwitnessConfig.cmake INSTALL_DESTINATION ${GW_INSTALL_CMAKEDIR})
# 0.x: a minor release may change the C interfaces, so only the same major.minor is accepted.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpuwitnessConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpuwitnessConfig.cmake ${PROJECT_BINARY_DIR}/gpuwitnessConfigVersion.cmake
  DESTINATION ${GW_INSTALL_CMAKEDIR})
# GPUWitness.cmake finds its wrappers next to itself (CMAKE_CURRENT_LIST_DIR).
install(FILES
  ${PROJECT_SOURCE_DIR}/ctest/GPUWitness.cmake
  ${PROJECT_SOURCE_DIR}/ctest/gw_run_canary.sh
  ${PROJECT_SOURCE_DIR}/ctest/gw_valgrind_gate.sh
  ${PROJECT_SOURCE_DIR}/ctest/gw_valgrind.supp
  ${PROJECT_SOURCE_DIR}/ctest/gw_skip_contract.cmake
  ${PROJECT_SOURCE_DIR}/ctest/resource-spec.example.json
  DESTINATION ${GW_INSTALL_CMAKEDIR})
