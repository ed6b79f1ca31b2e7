# SPDX-License-Identifier: MIT
# The test helpers, included once by tests/CMakeLists.txt before any test folder, so that no folder depends
# on another's being read first. Rules: docs/testing.md.
#
#   gw_add_cpu_test(NAME n SOURCES ... LIBS ... [LABEL cpu|host] [TIMEOUT s] [ARGS ...] [MEMCHECK] [DATA])
#       A Criterion executable on the test main (0 pass, 1 fail, 77 all skipped), one add_test; MEMCHECK also
#       registers n.memcheck, the same executable under the Valgrind gate. DATA: some of its suites, named
#       *_data, read GW_DATA_DIR; n runs the other suites (${GW_NOT_DATA_FILTER}) and n.data runs those
#       (${GW_DATA_FILTER}, label data), so that their skip without GW_DATA_DIR shows as Skipped; n.memcheck
#       then runs the other suites only.
#   gw_add_gpu_executable(NAME n SOURCES ... LIBS ... [LINK_OPTIONS ...])
#       A Criterion GPU executable (not registered: gw_add_gpu_test / gw_add_canary do that).
#   gw_add_header_test(NAME n SOURCE file.c|file.cpp INCLUDES dirs... [DEFINES defs...])
#       A compile-only check that a public header stands alone, as C11 or as C++11, pedantic.
#   gw_wrap_launcher(<target> <launcher>...)
#       Links <target> with -Wl,--wrap=<launcher>: its calls of <launcher> reach __wrap_<launcher>, which a
#       canary source defines (calling the real one as __real_<launcher>). How a canary plants a fault in a
#       host path that lives in a library: nothing is compiled twice.
#   gw_cli_test(NAME n RC code ... ARGS args...)
#       One gpuwitness command with its exit status and both streams checked (see the function).
# Variables: GW_DATA_FILTER and GW_NOT_DATA_FILTER (the Criterion filters of the *_data suites and of the
# others, for GPU executables registered twice the same way), GW_CLI_EXPECT (the driver of gw_cli_test), GW_CLI_WORK (a work folder per CLI test), GW_ASAN_BUILD
# (this is the AddressSanitizer build of the asan preset), GW_SANITIZER_REPORT_REGEX.

find_package(PkgConfig REQUIRED)
pkg_check_modules(CRITERION REQUIRED IMPORTED_TARGET GLOBAL criterion)

# In an AddressSanitizer build (the asan preset), a sanitizer report in a test's output fails the test
# (tests/sanitizers/CMakeLists.txt says why).
set(GW_ASAN_BUILD OFF)
if(CMAKE_C_FLAGS MATCHES "-fsanitize=[a-z,]*address")
  set(GW_ASAN_BUILD ON)
endif()
set(GW_SANITIZER_REPORT_REGEX "ERROR: (Address|Leak)Sanitizer" ": runtime error: ")

# Suites named *_data read third-party data from GW_DATA_DIR (docs/testing.md, "Data sets").
set(GW_DATA_FILTER "--filter=*_data/*")
set(GW_NOT_DATA_FILTER "--filter=!(*_data/*)")

# C++ for the header checks, when a compiler exists; without one the .cpp checks are left out.
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
endif()

function(gw_add_header_test)
  cmake_parse_arguments(T "" "NAME;SOURCE" "INCLUDES;DEFINES" ${ARGN})
  if(T_SOURCE MATCHES "\\.cpp$")
    if(NOT CMAKE_CXX_COMPILER)
      return()
    endif()
    add_library(${T_NAME} OBJECT ${T_SOURCE})
    set_target_properties(${T_NAME} PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  else()
    add_library(${T_NAME} OBJECT ${T_SOURCE})
    set_target_properties(${T_NAME} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  endif()
  target_include_directories(${T_NAME} PRIVATE ${T_INCLUDES})
  target_compile_definitions(${T_NAME} PRIVATE ${T_DEFINES})
  target_compile_options(${T_NAME} PRIVATE -Wall -Wextra -Wpedantic -pedantic-errors $<$<BOOL:${GW_WERROR}>:-Werror>)
  # cuda_runtime_api.h through CUDA::cudart, a SYSTEM include, so CUDA's own pedantic notes stay out.
  if(GW_HAVE_CUDA)
    target_link_libraries(${T_NAME} PRIVATE CUDA::cudart)
  endif()
endfunction()

function(gw_add_cpu_test)
  cmake_parse_arguments(T "MEMCHECK;DATA" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS;ARGS" ${ARGN})
  if(NOT T_LABEL)
    set(T_LABEL cpu)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE gw_test_main gw_test_util PkgConfig::CRITERION gw_warnings ${T_LIBS})
  set(names ${T_NAME})
  set(filter_${T_NAME} "")
  if(T_DATA)
    list(APPEND names ${T_NAME}.data)
    set(filter_${T_NAME} ${GW_NOT_DATA_FILTER})
    set(filter_${T_NAME}.data ${GW_DATA_FILTER})
  endif()
  foreach(name IN LISTS names)
    add_test(NAME ${name} COMMAND ${T_NAME} ${filter_${name}} ${T_ARGS})
    set_tests_properties(${name} PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE 77
      ENVIRONMENT_MODIFICATION "CRITERION_ALWAYS_SUCCEED=unset:")
    if(name MATCHES "\\.data$")
      set_property(TEST ${name} APPEND PROPERTY LABELS data)
    endif()
    if(GW_ASAN_BUILD)
      set_property(TEST ${name} APPEND PROPERTY FAIL_REGULAR_EXPRESSION ${GW_SANITIZER_REPORT_REGEX})
    endif()
  endforeach()
  if(T_MEMCHECK)
    # Without the data-set suites: skipped tests leave Criterion's own blocks behind under Valgrind, and the
    # ASan suite (sanitizer_suite) covers the data-set tests for memory errors instead.
    gw_add_valgrind_gate(NAME ${T_NAME}.memcheck COMMAND $<TARGET_FILE:${T_NAME}> ${filter_${T_NAME}} ${T_ARGS}
      LABELS ${T_LABEL} TIMEOUT 900)
  endif()
endfunction()

# gw_add_gpu_executable(NAME n SOURCES ... LIBS ... [DEFINES d...] [EMU]): the GPU test executable, its .cu
# sources compiled with DEFINES (a canary's planted fault); with EMU also n_emu, the same sources on the
# emulated device (docs/emu.md): the .cu sources through gw_add_emu_library with the same DEFINES, every library
# L of LIBS that has an L_emu twin replaced by it (the kernels), gw_gpu_test by gw_gpu_test_emu, and GW_EMU_DEVICE
# set, so that the host libraries link gw_emu (GW_CUDA_RUNTIME): no cudart.
function(gw_add_gpu_executable)
  cmake_parse_arguments(T "EMU" "NAME" "SOURCES;LIBS;DEFINES" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE gw_test_main gw_gpu_test gw_warnings ${T_LIBS})
  foreach(define IN LISTS T_DEFINES)
    target_compile_definitions(${T_NAME} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${define}>)
  endforeach()
  if(NOT T_EMU)
    return()
  endif()
  set(libs "")
  foreach(lib IN LISTS T_LIBS)
    if(TARGET ${lib}_emu)
      list(APPEND libs ${lib}_emu)
    else()
      list(APPEND libs ${lib})
    endif()
  endforeach()
  set(c_sources ${T_SOURCES})
  set(cu_sources ${T_SOURCES})
  list(FILTER c_sources EXCLUDE REGEX "\\.cu$")
  list(FILTER cu_sources INCLUDE REGEX "\\.cu$")
  add_executable(${T_NAME}_emu ${c_sources})
  target_compile_definitions(${T_NAME}_emu PRIVATE GW_EMU=1)
  set_target_properties(${T_NAME}_emu PROPERTIES GW_EMU_DEVICE ON) # gw_device and the host libraries: gw_emu
  if(cu_sources)
    gw_add_emu_library(${T_NAME}_emu_cu SOURCES ${cu_sources})
    target_compile_definitions(${T_NAME}_emu_cu PRIVATE ${T_DEFINES})
    target_link_libraries(${T_NAME}_emu_cu PRIVATE ${libs})
    list(PREPEND libs ${T_NAME}_emu_cu)
  endif()
  target_link_libraries(${T_NAME}_emu PRIVATE gw_test_main gw_gpu_test_emu gw_warnings ${libs})
endfunction()

# gw_add_emu_tier_test(NAME n COMMAND ... [TIMEOUT s] [SEEDS s...] [LABELS ...] [ENV A=1...]): a test of the emu tier
# (label emu) on the emulated device: never skipped for want of a GPU (the emulated device is always there;
# with label data, skipped without GW_DATA_DIR), GW_REQUIRE_GPU and GW_DEVICE unset (it proves logic, not a GPU:
# docs/emu.md), once per seed of GW_EMU_SEED (n, then n.seedS).
function(gw_add_emu_tier_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "COMMAND;SEEDS;LABELS;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(NOT T_SEEDS)
    set(T_SEEDS 1)
  endif()
  list(GET T_SEEDS 0 first)
  # In the asan build the tier runs once, for memory errors: no more seeds, and no data sets (sanitizer_suite's
  # time; the plain build runs both).
  if(GW_ASAN_BUILD)
    if("data" IN_LIST T_LABELS)
      return()
    endif()
    set(T_SEEDS ${first})
  endif()
  foreach(seed IN LISTS T_SEEDS)
    set(name ${T_NAME})
    if(NOT seed EQUAL first)
      set(name ${T_NAME}.seed${seed})
    endif()
    add_test(NAME ${name} COMMAND ${T_COMMAND})
    set_tests_properties(${name} PROPERTIES LABELS "emu;${T_LABELS}" TIMEOUT ${T_TIMEOUT}
      ENVIRONMENT "GW_EMU_SEED=${seed};CRITERION_JOBS=1;${T_ENV}"
      ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:;CRITERION_ALWAYS_SUCCEED=unset:")
    if("data" IN_LIST T_LABELS) # without GW_DATA_DIR a data-set suite skips (docs/testing.md, "Data sets")
      set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
    if(GW_ASAN_BUILD) # leaks are reported after Criterion counted the test (tests/sanitizers/CMakeLists.txt)
      set_property(TEST ${name} APPEND PROPERTY FAIL_REGULAR_EXPRESSION ${GW_SANITIZER_REPORT_REGEX})
    endif()
  endforeach()
endfunction()

# ThreadSanitizer's options for the emu tier's TSan runs: a report ends the process with exit 66.
set(GW_TSAN_OPTIONS "TSAN_OPTIONS=halt_on_error=1:exitcode=66")

# gw_add_emu_canary(NAME n EXPECT regex COMMAND ... [ASAN] [ENV A=1...] [LABELS ...]): a canary on the emulated
# device (labels canary;emu), caught only when the command fails through the guard named by EXPECT; an exit 77
# there is a failure, never a skip (GW_CANARY_NO_SKIP: the emulated device is always present). Registered in
# the plain build; with ASAN (a fault only the sanitizers see), in the asan build instead.
function(gw_add_emu_canary)
  cmake_parse_arguments(T "ASAN" "NAME;EXPECT" "COMMAND;ENV;LABELS" ${ARGN})
  if((T_ASAN AND NOT GW_ASAN_BUILD) OR (GW_ASAN_BUILD AND NOT T_ASAN))
    return()
  endif()
  add_test(NAME ${T_NAME} COMMAND ${GW_BASH} ${GW_CTEST_DIR}/gw_run_canary.sh "${T_EXPECT}" ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "canary;emu;${T_LABELS}" WILL_FAIL TRUE TIMEOUT 300
    ENVIRONMENT "GW_EMU_SEED=1;CRITERION_JOBS=1;GW_CANARY_NO_SKIP=1;${T_ENV}"
    ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:;CRITERION_ALWAYS_SUCCEED=unset:")
endfunction()

# gw_wrap_launcher(target launcher...): calls of each launcher reach __wrap_<launcher> (a canary's planted fault),
# in target and in its emulated twin target_emu where there is one.
function(gw_wrap_launcher target)
  foreach(launcher IN LISTS ARGN)
    target_link_options(${target} PRIVATE "LINKER:--wrap=${launcher}")
    if(TARGET ${target}_emu)
      target_link_options(${target}_emu PRIVATE "LINKER:--wrap=${launcher}")
    endif()
  endforeach()
endfunction()

set(GW_CLI_EXPECT "${CMAKE_CURRENT_LIST_DIR}/cli/gw_cli_expect.cmake")
set(GW_CLI_WORK "${CMAKE_CURRENT_BINARY_DIR}/cli")

# gw_cli_test(NAME n RC code [STDOUT re] [STDERR re] [REJECT_STDOUT re] [REJECT_STDERR re] [ENV A=1,B=2] [WORKDIR]
#             [COPY f,g] [MKDIRS d,e] [FILES a,b|none] [UNCHANGED f,g] [SKIP_RC code] [SKIP_STDOUT re] [LABELS l...]
#             [TIMEOUT s] [PROGRAM gpuwitness-emu] ARGS args...)
# One gpuwitness (or PROGRAM) command through tests/cli/gw_cli_expect.cmake, which checks the exit status and both
# streams (PASS_REGULAR_EXPRESSION alone would ignore the exit status). Labelled host: the binary links
# cudart but these tests never need a device. GW_REQUIRE_GPU and GW_DEVICE are unset for the command
# unless ENV sets them, so a GPU runner's GW_REQUIRE_GPU=1 does not change what a host test means.
# WORKDIR runs it in ${GW_CLI_WORK}/<n>. Regexes must keep [ and ] balanced (match a lone bracket with "."):
# CMake does not split a list inside brackets, so an unbalanced "\\[" swallows the arguments that follow it.
function(gw_cli_test)
  cmake_parse_arguments(T "WORKDIR"
    "NAME;RC;STDOUT;STDERR;REJECT_STDOUT;REJECT_STDERR;ENV;COPY;MKDIRS;FILES;UNCHANGED;SKIP_RC;SKIP_STDOUT;TIMEOUT;PROGRAM"
    "ARGS;LABELS" ${ARGN})
  if(NOT T_PROGRAM)
    set(T_PROGRAM gpuwitness)
  endif()
  set(defs -DEXPECT_RC=${T_RC})
  foreach(pair "STDOUT;EXPECT_STDOUT" "STDERR;EXPECT_STDERR" "REJECT_STDOUT;REJECT_STDOUT" "REJECT_STDERR;REJECT_STDERR" "ENV;ENV_SET"
               "COPY;COPY_FILES" "MKDIRS;MKDIRS" "FILES;EXPECT_FILES" "UNCHANGED;UNCHANGED" "SKIP_RC;SKIP_RC"
               "SKIP_STDOUT;SKIP_STDOUT")
    list(GET pair 0 key)
    list(GET pair 1 var)
    if(DEFINED T_${key})
      list(APPEND defs "-D${var}=${T_${key}}")
    endif()
  endforeach()
  if(T_WORKDIR)
    list(APPEND defs "-DWORKDIR=${GW_CLI_WORK}/${T_NAME}")
  endif()
  if(DEFINED T_SKIP_RC OR DEFINED T_SKIP_STDOUT)
    list(APPEND defs "-DSKIP_REASON=the no-GPU contract is only observable on a machine without a usable GPU")
  endif()
  if(NOT T_LABELS)
    set(T_LABELS host)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${CMAKE_COMMAND} ${defs} -P ${GW_CLI_EXPECT} -- $<TARGET_FILE:${T_PROGRAM}> ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")
  if(GW_ASAN_BUILD)
    set_property(TEST ${T_NAME} APPEND PROPERTY FAIL_REGULAR_EXPRESSION ${GW_SANITIZER_REPORT_REGEX})
  endif()
  if(T_PROGRAM STREQUAL "gpuwitness-emu") # device or pinned memory the command never freed (lib/emu)
    set_property(TEST ${T_NAME} APPEND PROPERTY FAIL_REGULAR_EXPRESSION "gw_emu: at exit, memory never freed")
  endif()
endfunction()
