# SPDX-License-Identifier: MIT
# Every external package, found once, as an imported target visible to the whole build (GLOBAL), so that no
# folder finds a package again under another name:
#   CUDA::cudart, CUDA::cupti, CUDA::nvtx3   the CUDA toolkit (GW_HAVE_CUDA; the top CMakeLists finds it)
#   PkgConfig::CJSON                         cJSON (libcjson-dev): ARC JSON, bench JSON, test fixtures
#   PkgConfig::TIFF                          libtiff (libtiff-dev): 16-bit microscope stacks
#   PkgConfig::CFITSIO                       cfitsio (libcfitsio-dev): DESI PSFs, images and frames (FITS)
#   PkgConfig::ZLIB                          zlib (zlib1g-dev): gw_desi inflates GZIP tiles before cfitsio does
#   OpenMP::OpenMP_C                         the references' threads, when the compiler has OpenMP
#   Threads::Threads                         the ledger's recorder and the load tests
#   PkgConfig::CRITERION                     Criterion (libcriterion-dev), tests only (cmake/gw_testing.cmake)
find_package(PkgConfig REQUIRED)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET GLOBAL libcjson)
pkg_check_modules(TIFF REQUIRED IMPORTED_TARGET GLOBAL libtiff-4)
pkg_check_modules(CFITSIO REQUIRED IMPORTED_TARGET GLOBAL cfitsio)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET GLOBAL zlib)
find_package(OpenMP COMPONENTS C)
find_package(Threads REQUIRED)

# NVIDIA's nvml.h, for the utilisation monitor (docs/monitor.md). Only the header: NVML itself is loaded at
# run time (dlopen of libnvidia-ml.so.1, from the driver), so nothing links against it. Looked for in the
# CUDA toolkit, then GW_NVML_INCLUDE_DIR, then where ci/setup puts the header of NVIDIA's
# nvidia-nvml-dev-cu12 wheel (${XDG_CACHE_HOME:-~/.cache}/gpuwitness/nvml/include). The header is never
# committed. Without it the monitor is compiled out and `--monitor` says so.
set(GW_NVML_INCLUDE_DIR "" CACHE PATH "folder holding NVIDIA's nvml.h (default: the toolkit, then ci/setup's cache)")
set(gw_nvml_cache "$ENV{XDG_CACHE_HOME}")
if(NOT gw_nvml_cache)
  set(gw_nvml_cache "$ENV{HOME}/.cache")
endif()
find_path(GW_NVML_HEADER_DIR nvml.h
  HINTS ${GW_NVML_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS} "${gw_nvml_cache}/gpuwitness/nvml/include"
  NO_DEFAULT_PATH)
if(GW_NVML_HEADER_DIR)
  set(GW_HAVE_NVML 1)
  message(STATUS "gpuwitness: the utilisation monitor is built (nvml.h in ${GW_NVML_HEADER_DIR})")
else()
  set(GW_HAVE_NVML 0)
  message(STATUS "gpuwitness: nvml.h not found (toolkit, GW_NVML_INCLUDE_DIR, ${gw_nvml_cache}/gpuwitness/nvml/"
    "include): the utilisation monitor is compiled out and --monitor says so; run ci/setup to fetch NVIDIA's header")
endif()
