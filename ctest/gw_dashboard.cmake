# SPDX-License-Identifier: MIT
# CTest dashboard client: configure, build, test (the Valgrind gates included), JUnit, and an optional
# CDash submission, so that a fleet of GPU runners reports to one place (ctest/README.md).
#
#   ctest -S ctest/gw_dashboard.cmake [-D VAR=value ...] [-V]
#
# Variables (all optional):
#   GW_BUILD_DIR           build tree, reused between runs (default: <source>/build-dashboard)
#   GW_MODEL               Experimental (default), Continuous or Nightly: the CDash track
#   GW_SITE, GW_BUILD_NAME CDash site (default: host name) and build name (default: gpuwitness-<archs>-<gpu|nogpu>)
#   GW_GENERATOR           CMake generator (default: Unix Makefiles)
#   GW_CUDA_ARCHITECTURES  CMAKE_CUDA_ARCHITECTURES, e.g. 90-real (default: the project's explicit list)
#   GW_CONFIGURE_OPTIONS   more -D options for the configure step, as a CMake list
#   GW_BUILD_TARGET        build only this target (default: all)
#   GW_JOBS                build and test jobs (default: the number of processors)
#   GW_INCLUDE, GW_INCLUDE_LABEL, GW_EXCLUDE_LABEL   test selection, as ctest -R / -L / -LE
#                          (GW_EXCLUDE_LABEL defaults to memcheck under GW_REQUIRE_GPU=1: a loaded driver is
#                          Valgrind noise, and the gates belong on driverless runners)
#   GW_RESOURCE_SPEC       ctest --resource-spec-file: one GPU test per GPU slot on multi-GPU runners
#   GW_JUNIT               JUnit file (default: <build>/junit.xml)
#   GW_SUBMIT_URL          CDash submission URL (https://<cdash>/submit.php?project=gpuwitness): submit when set
#
# The environment decides the GPU policy, as for plain ctest: GPU runners export GW_REQUIRE_GPU=1, and then
# a gpu-labelled test that did not run (JUnit status="notrun") fails the dashboard. CRITERION_ALWAYS_SUCCEED
# is removed. Exit status: non-zero when the configure, the build or any test failed (after submitting).
#
# Why no ctest_memcheck: `ctest -T memcheck` exits 0 on defects and, under Criterion, checks only the runner
# process (docs/testing.md). The Valgrind gates (label memcheck) run in the test step instead and fail
# as tests.
cmake_minimum_required(VERSION 3.25)

get_filename_component(CTEST_SOURCE_DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
if(NOT GW_BUILD_DIR)
  set(GW_BUILD_DIR ${CTEST_SOURCE_DIRECTORY}/build-dashboard)
endif()
get_filename_component(CTEST_BINARY_DIRECTORY ${GW_BUILD_DIR} ABSOLUTE)
if(NOT GW_MODEL)
  set(GW_MODEL Experimental)
endif()
if(NOT GW_MODEL MATCHES "^(Experimental|Continuous|Nightly)$")
  message(FATAL_ERROR "GW_MODEL '${GW_MODEL}' must be Experimental, Continuous or Nightly")
endif()
if(NOT GW_JOBS)
  cmake_host_system_information(RESULT GW_JOBS QUERY NUMBER_OF_LOGICAL_CORES)
endif()
if(NOT GW_JOBS MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "GW_JOBS '${GW_JOBS}' must be a positive whole number")
endif()
if(GW_RESOURCE_SPEC AND NOT EXISTS ${GW_RESOURCE_SPEC})
  message(FATAL_ERROR "GW_RESOURCE_SPEC '${GW_RESOURCE_SPEC}': no such file")
endif()
set(require_gpu FALSE)
if("$ENV{GW_REQUIRE_GPU}" STREQUAL "1")
  set(require_gpu TRUE)
endif()
if(NOT DEFINED GW_EXCLUDE_LABEL AND require_gpu)
  set(GW_EXCLUDE_LABEL memcheck)
endif()
if(NOT GW_JUNIT)
  set(GW_JUNIT ${CTEST_BINARY_DIRECTORY}/junit.xml)
endif()

if(GW_SITE)
  set(CTEST_SITE ${GW_SITE})
else()
  cmake_host_system_information(RESULT CTEST_SITE QUERY HOSTNAME)
endif()
if(GW_BUILD_NAME)
  set(CTEST_BUILD_NAME ${GW_BUILD_NAME})
else()
  set(archs default-archs)
  if(GW_CUDA_ARCHITECTURES)
    string(REPLACE ";" "," archs "${GW_CUDA_ARCHITECTURES}")
  endif()
  if(require_gpu)
    set(CTEST_BUILD_NAME gpuwitness-${archs}-gpu)
  else()
    set(CTEST_BUILD_NAME gpuwitness-${archs}-nogpu)
  endif()
endif()
if(GW_GENERATOR)
  set(CTEST_CMAKE_GENERATOR ${GW_GENERATOR})
else()
  set(CTEST_CMAKE_GENERATOR "Unix Makefiles")
endif()
set(CTEST_BUILD_FLAGS -j${GW_JOBS})
if(GW_BUILD_TARGET)
  set(CTEST_BUILD_TARGET ${GW_BUILD_TARGET})
endif()
if(GW_SUBMIT_URL)
  set(CTEST_SUBMIT_URL ${GW_SUBMIT_URL})
endif()
unset(ENV{CRITERION_ALWAYS_SUCCEED}) # it forces Criterion's exit status to 0

set(options -DCMAKE_BUILD_TYPE=Release ${GW_CONFIGURE_OPTIONS})
if(GW_CUDA_ARCHITECTURES)
  list(APPEND options "-DCMAKE_CUDA_ARCHITECTURES=${GW_CUDA_ARCHITECTURES}")
endif()

ctest_start(${GW_MODEL})
ctest_configure(OPTIONS "${options}" RETURN_VALUE configure_rc)
set(failures "")
if(NOT configure_rc EQUAL 0)
  list(APPEND failures "configure (exit ${configure_rc})")
else()
  ctest_build(RETURN_VALUE build_rc NUMBER_ERRORS build_errors)
  if(NOT build_rc EQUAL 0 OR build_errors GREATER 0)
    list(APPEND failures "build (exit ${build_rc}, ${build_errors} errors)")
  else()
    set(test_args PARALLEL_LEVEL ${GW_JOBS} OUTPUT_JUNIT ${GW_JUNIT} RETURN_VALUE test_rc)
    foreach(pair "INCLUDE;GW_INCLUDE" "INCLUDE_LABEL;GW_INCLUDE_LABEL" "EXCLUDE_LABEL;GW_EXCLUDE_LABEL"
                 "RESOURCE_SPEC_FILE;GW_RESOURCE_SPEC")
      list(GET pair 0 keyword)
      list(GET pair 1 var)
      if(${var})
        list(APPEND test_args ${keyword} ${${var}})
      endif()
    endforeach()
    ctest_test(${test_args})
    if(NOT test_rc EQUAL 0)
      list(APPEND failures "tests: some failed or could not run (ctest_test result ${test_rc}; see ${GW_JUNIT})")
    endif()
    # A skip is never a pass on a GPU runner: every selected gpu-labelled test must have run.
    if(require_gpu AND NOT EXISTS ${GW_JUNIT})
      list(APPEND failures "no JUnit file: cannot prove that the GPU tests ran")
    elseif(require_gpu)
      file(READ ${GW_JUNIT} junit)
      string(REGEX MATCHALL "<testcase name=\"[^\"]*\"[^>]*status=\"notrun\"" not_run "${junit}")
      execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${CTEST_BINARY_DIRECTORY} -N -L gpu
        OUTPUT_VARIABLE gpu_listing)
      foreach(entry IN LISTS not_run)
        string(REGEX REPLACE "<testcase name=\"([^\"]*)\".*" "\\1" name "${entry}")
        if(gpu_listing MATCHES "Test +#[0-9]+: ${name}\n")
          list(APPEND failures "GW_REQUIRE_GPU=1 but the gpu test ${name} did not run")
        endif()
      endforeach()
    endif()
  endif()
endif()

if(GW_SUBMIT_URL)
  ctest_submit(RETURN_VALUE submit_rc)
  if(NOT submit_rc EQUAL 0)
    list(APPEND failures "CDash submission to ${GW_SUBMIT_URL}")
  endif()
endif()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "gpuwitness dashboard ${CTEST_BUILD_NAME} failed:\n  ${failures}")
endif()
message("gpuwitness dashboard ${CTEST_BUILD_NAME}: configure, build and tests passed; JUnit: ${GW_JUNIT}")
