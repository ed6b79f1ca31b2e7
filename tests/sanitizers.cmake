# Sanitizers and fuzzing, reached from the main suite (included by tests/CMakeLists.txt):
#   sanitizer_suite (sanitizer)  cmake --workflow --preset asan: the project built again in build-asan with
#                                AddressSanitizer + UndefinedBehaviorSanitizer, and its whole test suite run
#                                there except the Valgrind gates (see CMakePresets.json); fails when any
#                                test inside fails
#   fuzz_build, fuzz_<name> (fuzz)  libFuzzer harnesses, tests/fuzz/fuzz_tests.cmake
#   canary_sanitizer_* (canary)  in the ASan build only: planted faults that ASan, UBSan and LeakSanitizer
#                                must stop (the nested suite runs them)
# The asan configure preset sets GW_SANITIZER_SUITE=OFF, so the nested tree never registers sanitizer_suite
# again (and its test preset excludes the sanitizer and fuzz labels as well).
option(GW_SANITIZER_SUITE "Register sanitizer_suite, which builds and tests the asan preset in build-asan" ON)
if(GW_SANITIZER_SUITE)
  add_test(NAME sanitizer_suite COMMAND ${CMAKE_COMMAND} --workflow --preset asan
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # PROCESSORS 2: its build and ctest run two jobs each. GW_REQUIRE_GPU is dropped: the nested suite hides
  # the GPU (CUDA_VISIBLE_DEVICES is empty in the asan test preset), so its GPU tests skip everywhere.
  set_tests_properties(sanitizer_suite PROPERTIES LABELS sanitizer TIMEOUT 2400 PROCESSORS 2
    ENVIRONMENT_MODIFICATION "CRITERION_ALWAYS_SUCCEED=unset:;GW_REQUIRE_GPU=unset:")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_tests.cmake)

if(NOT CMAKE_C_FLAGS MATCHES "-fsanitize=[a-z,]*address")
  return()
endif()

# ---------------------------------------------------------------- in the ASan build (the asan preset)
# Canaries: each fault must fail its test through the sanitizer's own report (ctest/gw_run_canary.sh).
add_executable(canary_sanitizer canaries/sanitizer_canaries.c)
target_link_libraries(canary_sanitizer PRIVATE gw_test_main PkgConfig::CRITERION)
foreach(entry "heap_overflow|reads_one_byte_past_a_heap_buffer|AddressSanitizer: heap-buffer-overflow"
              "signed_overflow|overflows_a_signed_int|runtime error: signed integer overflow")
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 test)
  list(GET parts 2 expect)
  add_test(NAME canary_sanitizer_${name} COMMAND ${GW_BASH} ${GW_CTEST_DIR}/gw_run_canary.sh "${expect}"
    $<TARGET_FILE:canary_sanitizer> --filter canary_sanitizer/${test})
endforeach()
set_tests_properties(canary_sanitizer_heap_overflow canary_sanitizer_signed_overflow PROPERTIES LABELS canary
  WILL_FAIL TRUE TIMEOUT 120 ENVIRONMENT "CRITERION_JOBS=1" ENVIRONMENT_MODIFICATION "CRITERION_ALWAYS_SUCCEED=unset:")

# A sanitizer report fails the test that printed it, whatever its exit status. Needed for leaks: Criterion
# runs each test in a child process, and LeakSanitizer reports at that child's exit, after the result was
# sent; Criterion then still counts a pass and exits 0, even when the report aborts the child (seen with
# Criterion 2.4.1). Set on every test of this directory but the canaries, once all are registered.
set(GW_SANITIZER_REPORT_REGEX "ERROR: (Address|Leak)Sanitizer" ": runtime error: ")
function(gw_fail_on_sanitizer_reports)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} LABELS labels)
    if(NOT "canary" IN_LIST labels)
      set_property(TEST ${t} APPEND PROPERTY FAIL_REGULAR_EXPRESSION ${GW_SANITIZER_REPORT_REGEX})
    endif()
  endforeach()
endfunction()
cmake_language(DEFER CALL gw_fail_on_sanitizer_reports)
# Its canary: the Valgrind gate's canary, a passing test that leaks, must fail through that regex alone.
add_test(NAME canary_sanitizer_leak COMMAND canary_host_leak)
set_tests_properties(canary_sanitizer_leak PROPERTIES LABELS canary WILL_FAIL TRUE TIMEOUT 120
  FAIL_REGULAR_EXPRESSION "${GW_SANITIZER_REPORT_REGEX}" ENVIRONMENT "CRITERION_JOBS=1"
  ENVIRONMENT_MODIFICATION "CRITERION_ALWAYS_SUCCEED=unset:")

# RLIMIT_AS does not limit ASan's allocator, which serves small blocks from address space reserved at start,
# so test_focus_stack_ref cannot force its out-of-memory fallback here. GW_FS_QUICK=1 is its mode for a
# memory checker that ignores RLIMIT_AS (Valgrind): the fallback test is left out with a log line, and the
# rest runs on smaller shapes.
if(TEST test_focus_stack_ref)
  set_property(TEST test_focus_stack_ref APPEND PROPERTY ENVIRONMENT "GW_FS_QUICK=1")
endif()
