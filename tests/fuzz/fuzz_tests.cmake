# The fuzz tests of the main suite (included by tests/sanitizers/CMakeLists.txt), label fuzz:
#   fuzz_build          fixture: configures and builds tests/fuzz with clang into <build>/fuzz (skipped, exit
#                       77, without clang or its libFuzzer runtime)
#   fuzz_<name>         runs harness <name> for GW_FUZZ_SECONDS over tests/fuzz/corpus/<name> (skipped when
#                       fuzz_build was); any crash, leak, UB report, timeout or out-of-memory fails it
#   fuzz_canary         (also label canary) fuzz_canary.c's planted crash must be found and fail the run
set(GW_FUZZ_SECONDS 30 CACHE STRING "Seconds each fuzz_<name> test fuzzes (libFuzzer -max_total_time)")
find_program(GW_FUZZ_CLANG NAMES clang clang-14 DOC "clang for the libFuzzer harnesses (tests/fuzz)")

set(gw_fuzz_src "${CMAKE_CURRENT_LIST_DIR}")
set(gw_fuzz_bin "${CMAKE_BINARY_DIR}/fuzz")
set(gw_fuzz_clang "${GW_FUZZ_CLANG}")
if(NOT GW_FUZZ_CLANG)
  set(gw_fuzz_clang "")
endif()

add_test(NAME fuzz_build COMMAND ${GW_BASH} ${gw_fuzz_src}/fuzz_build.sh ${CMAKE_COMMAND} "${gw_fuzz_clang}"
  ${gw_fuzz_src} ${gw_fuzz_bin})
set_tests_properties(fuzz_build PROPERTIES LABELS fuzz FIXTURES_SETUP gw_fuzz SKIP_RETURN_CODE 77 TIMEOUT 900
  PROCESSORS 2)

math(EXPR gw_fuzz_timeout "${GW_FUZZ_SECONDS} + 300") # loading and merging the corpus, and a slow machine
# Per-harness libFuzzer flags: the dictionaries of the text formats.
set(gw_fuzz_flags_arc -dict=${gw_fuzz_src}/arc.dict)
set(gw_fuzz_flags_npy -dict=${gw_fuzz_src}/npy.dict)
set(gw_fuzz_flags_run_grid_d4 -dict=${gw_fuzz_src}/arc.dict)
set(gw_fuzz_flags_run_focus_stack -dict=${gw_fuzz_src}/run_focus_stack.dict)
# The sanitizer settings are the harnesses' own: options exported in the caller's shell would change them.
set(gw_fuzz_env "ASAN_OPTIONS=unset:;UBSAN_OPTIONS=unset:;LSAN_OPTIONS=unset:")
foreach(name arc npy tiff fits grid_d4 focus_stack ex2d run_grid_d4 run_focus_stack)
  add_test(NAME fuzz_${name} COMMAND ${GW_BASH} ${gw_fuzz_src}/fuzz_run.sh ${gw_fuzz_bin} ${name}
    ${gw_fuzz_src}/corpus/${name} ${GW_FUZZ_SECONDS} ${gw_fuzz_flags_${name}})
  set_tests_properties(fuzz_${name} PROPERTIES LABELS fuzz FIXTURES_REQUIRED gw_fuzz SKIP_RETURN_CODE 77
    TIMEOUT ${gw_fuzz_timeout} ENVIRONMENT_MODIFICATION "${gw_fuzz_env}")
endforeach()

# The canary runs through the same script: passes only when the run fails with ASan's report.
add_test(NAME fuzz_canary COMMAND ${GW_BASH} ${GW_CTEST_DIR}/gw_run_canary.sh "ERROR: AddressSanitizer: heap-buffer"
  ${GW_BASH} ${gw_fuzz_src}/fuzz_run.sh ${gw_fuzz_bin} canary ${gw_fuzz_src}/corpus/canary ${GW_FUZZ_SECONDS})
set_tests_properties(fuzz_canary PROPERTIES LABELS "fuzz;canary" WILL_FAIL TRUE FIXTURES_REQUIRED gw_fuzz
  SKIP_RETURN_CODE 77 TIMEOUT ${gw_fuzz_timeout} ENVIRONMENT_MODIFICATION "${gw_fuzz_env}")
