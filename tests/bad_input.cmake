# Bad-input tables (tests/bad_input/, docs/errors.md): for each public function a static table of broken
# calls, each checked for the exact code, a message naming the argument and the rule, untouched outputs,
# and no file written. Included by tests/CMakeLists.txt. Every C table also runs under the Valgrind gate.
# ex2d_patch has its pair the same way: ex2d_bad_cases.c (the rows, shared) with test_bad_input_ex2d.c (cpu)
# and test_bad_input_ex2d_launch.c (host).
set(gw_bi_dir "${CMAKE_CURRENT_SOURCE_DIR}/bad_input")

add_library(gw_bad_input_util STATIC bad_input/bad_input_util.c)
target_include_directories(gw_bad_input_util PUBLIC ${gw_bi_dir})
target_link_libraries(gw_bad_input_util PUBLIC PkgConfig::CRITERION PRIVATE gw_warnings)

# Kernel tables: the rows live in <kernel>_bad_cases.c, shared by the CPU test (validator and references)
# and the launcher test. Launchers check their arguments before any CUDA call, so their tables need no GPU:
# labelled host, they run on every CI machine.
add_library(grid_d4_bad_cases STATIC bad_input/grid_d4_bad_cases.c)
target_link_libraries(grid_d4_bad_cases PUBLIC grid_d4_ref gw_bad_input_util PRIVATE gw_warnings)
gw_add_cpu_test(NAME test_bad_input_grid_d4_ref SOURCES bad_input/test_bad_input_grid_d4_ref.c
  LIBS grid_d4_bad_cases MEMCHECK)

add_library(focus_stack_bad_cases STATIC bad_input/focus_stack_bad_cases.c)
target_link_libraries(focus_stack_bad_cases PUBLIC focus_stack_ref gw_bad_input_util PRIVATE gw_warnings)
gw_add_cpu_test(NAME test_bad_input_focus_stack_ref SOURCES bad_input/test_bad_input_focus_stack_ref.c
  LIBS focus_stack_bad_cases MEMCHECK)

add_library(ex2d_bad_cases STATIC bad_input/ex2d_bad_cases.c)
target_link_libraries(ex2d_bad_cases PUBLIC ex2d_patch_ref ex2d_synth gw_bad_input_util m PRIVATE gw_warnings)
gw_add_cpu_test(NAME test_bad_input_ex2d SOURCES bad_input/test_bad_input_ex2d.c LIBS ex2d_bad_cases LABEL cpu
  TIMEOUT 300 MEMCHECK)

if(TARGET grid_d4)
  gw_add_cpu_test(NAME test_bad_input_grid_d4_launch SOURCES bad_input/test_bad_input_grid_d4_launch.c
    LIBS grid_d4 grid_d4_bad_cases LABEL host MEMCHECK)
endif()
if(TARGET focus_stack)
  gw_add_cpu_test(NAME test_bad_input_focus_stack_launch SOURCES bad_input/test_bad_input_focus_stack_launch.c
    LIBS focus_stack focus_stack_bad_cases LABEL host MEMCHECK)
endif()
if(TARGET ex2d_patch)
  gw_add_cpu_test(NAME test_bad_input_ex2d_launch SOURCES bad_input/test_bad_input_ex2d_launch.c
    LIBS ex2d_patch ex2d_bad_cases LABEL host MEMCHECK)
endif()

# Host-side checks and readers: plain C, no CUDA.
gw_add_cpu_test(NAME test_bad_input_witness SOURCES bad_input/test_bad_input_witness.c
  LIBS gw_witness_check gw_bad_input_util MEMCHECK)
gw_add_cpu_test(NAME test_bad_input_arc SOURCES bad_input/test_bad_input_arc.c LIBS gw_arc gw_bad_input_util MEMCHECK)
gw_add_cpu_test(NAME test_bad_input_npy SOURCES bad_input/test_bad_input_npy.c LIBS gw_npy gw_bad_input_util MEMCHECK)
gw_add_cpu_test(NAME test_bad_input_tiff SOURCES bad_input/test_bad_input_tiff.c LIBS gw_tiff gw_bad_input_util MEMCHECK)

# The CLI's table (gw_bad_input_cli.sh): every row's exit code (2 usage, 1 bad file), its words on stderr,
# and an unchanged work directory; the .memcheck twin runs each row under the Valgrind gate. The bad files
# are made by the script in the build tree.
if(TARGET gpuwitness)
  add_test(NAME bad_input_cli COMMAND ${GW_BASH} ${gw_bi_dir}/gw_bad_input_cli.sh $<TARGET_FILE:gpuwitness>
    ${CMAKE_CURRENT_BINARY_DIR}/bad_input_cli)
  set_tests_properties(bad_input_cli PROPERTIES LABELS host TIMEOUT 300)
  if(GW_VALGRIND)
    add_test(NAME bad_input_cli.memcheck COMMAND ${GW_BASH} ${gw_bi_dir}/gw_bad_input_cli.sh
      $<TARGET_FILE:gpuwitness> ${CMAKE_CURRENT_BINARY_DIR}/bad_input_cli.memcheck ${GW_VALGRIND}
      ${GW_CTEST_DIR}/gw_valgrind_gate.sh)
    set_tests_properties(bad_input_cli.memcheck PROPERTIES LABELS "memcheck;host" TIMEOUT 900)
  endif()
endif()
