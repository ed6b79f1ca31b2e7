# SPDX-License-Identifier: MIT
# grid_objects CPU tests:
#   test_grid_objects_ref (cpu, + .data, + .memcheck)  every test group of go_cases.h on grid_objects_ref and
#                                                      grid_objects_ref_mt, the validator table, the example
#
# Fixtures and test groups shared by the CPU and GPU tests (pure C: no CUDA, no cudart). The ARC grids come
# through grid_d4's fixture (d4_batch_arc: the 400 training tasks through gw_arc).
add_library(grid_objects_test_support STATIC go_fixture.c go_cases.c go_sha256.c)
target_include_directories(grid_objects_test_support PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(grid_objects_test_support PUBLIC PkgConfig::CRITERION grid_objects_ref grid_objects_batch
  grid_d4_ref grid_d4_batch gw_test_util PRIVATE grid_d4_test_support PkgConfig::CJSON gw_warnings)

# GW_GO_QUICK=1 under Valgrind: smaller batches (the 100000-grid one becomes 1000) and no 255 x 255 grids (same code paths; Valgrind is ~50x slower).
gw_add_cpu_test(NAME test_grid_objects_ref SOURCES test_grid_objects_ref.c LIBS grid_objects_test_support
  LABEL cpu TIMEOUT 600 DATA)
# The Valgrind gate runs every suite but the data sets and grid_objects_ref_mt: each Criterion test is a
# process of its own under Valgrind (about a second of start-up each), and the _mt suite repeats the same
# groups through one OpenMP loop that Valgrind serialises anyway; the single-thread suite keeps a test that
# compares grid_objects_ref_mt with grid_objects_ref.
gw_add_valgrind_gate(NAME test_grid_objects_ref.memcheck COMMAND $<TARGET_FILE:test_grid_objects_ref>
  "--filter=!(*_data/*|grid_objects_ref_mt/*)" LABELS cpu TIMEOUT 900)
target_compile_definitions(test_grid_objects_ref PRIVATE
  GW_GRID_OBJECTS_HEADER="${PROJECT_SOURCE_DIR}/kernels/grid_objects/grid_objects.h"
  GW_GRID_OBJECTS_EXAMPLE="${CMAKE_CURRENT_SOURCE_DIR}/test_grid_objects_example.c")
if(TEST test_grid_objects_ref.memcheck)
  # OMP_WAIT_POLICY=passive: libgomp's idle threads spin between the many small parallel loops, which
  # Valgrind, serialising threads, turns into most of the run (measured here: the memcheck run took 90 s without it, 54 s with it).
  set_property(TEST test_grid_objects_ref.memcheck APPEND PROPERTY ENVIRONMENT "GW_GO_QUICK=1" "OMP_WAIT_POLICY=passive")
endif()
