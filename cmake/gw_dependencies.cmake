# SPDX-License-Identifier: MIT
# Every external package, found once, as an imported target visible to the whole build (GLOBAL), so that no
# folder finds a package again under another name:
#   CUDA::cudart, CUDA::cupti, CUDA::nvtx3   the CUDA toolkit (GW_HAVE_CUDA; the top CMakeLists finds it)
#   PkgConfig::CJSON                         cJSON (libcjson-dev): ARC JSON, bench JSON, test fixtures
#   PkgConfig::TIFF                          libtiff (libtiff-dev): 16-bit microscope stacks
#   OpenMP::OpenMP_C                         the references' threads, when the compiler has OpenMP
#   Threads::Threads                         the ledger's recorder and the load tests
#   PkgConfig::CRITERION                     Criterion (libcriterion-dev), tests only (cmake/gw_testing.cmake)
find_package(PkgConfig REQUIRED)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET GLOBAL libcjson)
pkg_check_modules(TIFF REQUIRED IMPORTED_TARGET GLOBAL libtiff-4)
find_package(OpenMP COMPONENTS C)
find_package(Threads REQUIRED)
