# Device faults and load of the CLI host paths (docs/testing.md, "Device faults and load"), included by
# tests/CMakeLists.txt after ledger.cmake:
#   test_device_faults_gpu (gpu)   oversize requests (clear error, nothing leaked), a launch error named with
#                                  the kernel and the CUDA error, 4 host threads on their own streams, determinism
#   test_load_gpu (gpu;load)       the largest realistic problems: 4e6 ARC grids, 16 stacks of 2189x2189x17,
#                                  a full synthetic r frame (skipped under GW_UNDER_SANITIZER=1)
if(NOT TARGET grid_d4 OR NOT TARGET focus_stack OR NOT TARGET ex2d_patch OR NOT TARGET ex2d_synth
   OR NOT TARGET gw_trace_range)
  return() # no CUDA
endif()
find_package(Threads REQUIRED)
set(gw_robustness_sources
  ${PROJECT_SOURCE_DIR}/tools/gw_d4_gpu.c ${PROJECT_SOURCE_DIR}/tools/gw_d4_batch.c
  ${PROJECT_SOURCE_DIR}/tools/gw_focus_gpu.c ${PROJECT_SOURCE_DIR}/tools/gw_focus_host.c
  ${PROJECT_SOURCE_DIR}/tools/gw_ex2d_gpu.c ${PROJECT_SOURCE_DIR}/tools/gw_ex2d_host.c)
set(gw_robustness_libs grid_d4 grid_d4_ref focus_stack focus_stack_ref ex2d_patch ex2d_patch_ref ex2d_synth
  gw_witness_check gw_focus_synth gw_trace_range Threads::Threads)

gw_add_gpu_executable(NAME test_device_faults_gpu SOURCES test_device_faults_gpu.c ${gw_robustness_sources}
  LIBS ${gw_robustness_libs})
gw_add_gpu_test(NAME test_device_faults_gpu COMMAND $<TARGET_FILE:test_device_faults_gpu> TIMEOUT 900)

gw_add_gpu_executable(NAME test_load_gpu SOURCES test_load_gpu.c ${gw_robustness_sources}
  LIBS ${gw_robustness_libs})
gw_add_gpu_test(NAME test_load_gpu COMMAND $<TARGET_FILE:test_load_gpu> TIMEOUT 3600 LABELS load)
