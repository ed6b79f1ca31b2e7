# SPDX-License-Identifier: MIT
# grid_objects on the GPU (skipped, exit 77, without one; failed under GW_REQUIRE_GPU=1):
#   test_grid_objects_gpu (gpu)        every test group of go_cases.h through grid_objects_launch, plus the
#                                      launcher's own rows; .data: the golden vectors and every ARC grid
#   test_grid_objects_example (gpu)    the header's usage example, verbatim
#   test_bad_input_grid_objects_launch (host)  the launch order without a GPU (gw_fake_cuda)
#   canary_grid_objects_* (canary)     planted faults that the named guard must catch; unpadded_outputs runs
#                                      under compute-sanitizer's memcheck, registered where it exists
gw_add_gpu_executable(NAME test_grid_objects_gpu SOURCES test_grid_objects_gpu.c LIBS grid_objects
  grid_objects_test_support EMU)
gw_add_gpu_test(NAME test_grid_objects_gpu COMMAND $<TARGET_FILE:test_grid_objects_gpu> ${GW_NOT_DATA_FILTER}
  TIMEOUT 1800)
gw_add_gpu_test(NAME test_grid_objects_gpu.data COMMAND $<TARGET_FILE:test_grid_objects_gpu> ${GW_DATA_FILTER}
  TIMEOUT 600 LABELS data)
# Emulated: GW_GO_QUICK=1 takes the Valgrind gate's smaller batches and leaves out the 255 x 255 grids (the
# 64 x 64 spiral and the odd-buf_bytes grid still take the in-place path above 1024 cells); the large batch
# is 10000 grids. The lock-free union-find meets three scheduling seeds.
gw_add_emu_tier_test(NAME test_grid_objects_gpu.emu COMMAND $<TARGET_FILE:test_grid_objects_gpu_emu> ${GW_NOT_DATA_FILTER}
  TIMEOUT 600 SEEDS 1 2 3 ENV GW_GO_QUICK=1)
gw_add_emu_tier_test(NAME test_grid_objects_gpu.data.emu COMMAND $<TARGET_FILE:test_grid_objects_gpu_emu> ${GW_DATA_FILTER}
  TIMEOUT 600 LABELS data)

gw_add_gpu_executable(NAME test_grid_objects_example SOURCES test_grid_objects_example.c LIBS grid_objects EMU)
gw_add_gpu_test(NAME test_grid_objects_example COMMAND $<TARGET_FILE:test_grid_objects_example> TIMEOUT 120)
gw_add_emu_tier_test(NAME test_grid_objects_example.emu COMMAND $<TARGET_FILE:test_grid_objects_example_emu>)

gw_add_cpu_test(NAME test_bad_input_grid_objects_launch SOURCES test_bad_input_grid_objects_launch.c
  LIBS grid_objects grid_objects_ref gw_bad_input_util gw_fake_cuda LABEL host MEMCHECK)

# Each canary is the GPU test linked with one planted fault in grid_objects_launch (gw_wrap_launcher); it
# passes only when the run fails AND its output holds the words of the guard meant to catch it. The test
# they run makes several calls (stale_output needs a second) of grids with two objects or more.
set(gw_objects_canary_filter "grid_objects_gpu/matches_grid_objects_ref_byte_for_byte_on_arc_shaped_batches")
# name|expected guard words
set(gw_objects_canaries
  "cpu_fallback|no GPU code ran"
  "no_launch|poison|no GPU code ran"
  "partial_grid|partial execution"
  "stale_output|poison"
  "wrong_label|result differs"
  "unpadded_outputs|Invalid __global__ read of size 4")
foreach(entry IN LISTS gw_objects_canaries)
  string(REPLACE "|" ";" parts "${entry}")
  list(POP_FRONT parts name)
  string(REPLACE ";" "|" expect "${parts}")
  string(TOUPPER "GRID_OBJECTS_CANARY_${name}" define)
  set(tgt canary_grid_objects_${name})
  set(emu EMU) # the emulated twin, where it is registered (below)
  if(name STREQUAL "unpadded_outputs")
    set(emu "")
  endif()
  gw_add_gpu_executable(NAME ${tgt} SOURCES test_grid_objects_gpu.c grid_objects_canaries.cu
    LIBS grid_objects grid_objects_test_support DEFINES ${define} ${emu})
  gw_wrap_launcher(${tgt} grid_objects_launch)
  if(name STREQUAL "unpadded_outputs")
    # Outputs one entry short of the padding rule give right answers; only memcheck sees the 4-byte word of
    # the last 16-bit atomic run past them (the test: an odd buf_bytes ending in a grid labelled in place).
    if(GW_COMPUTE_SANITIZER)
      gw_add_canary(NAME ${tgt} EXPECT "${expect}" TIMEOUT 600
        COMMAND ${GW_COMPUTE_SANITIZER} --tool memcheck --error-exitcode 1 --target-processes all
                $<TARGET_FILE:${tgt}>
                --filter "grid_objects_gpu/an_odd_buf_bytes_keeps_every_16_bit_atomic_inside_the_padded_outputs")
    else()
      message(STATUS "compute-sanitizer not found: canary_grid_objects_unpadded_outputs is built but not registered")
    endif()
  else()
    gw_add_canary(NAME ${tgt} EXPECT "${expect}"
      COMMAND $<TARGET_FILE:${tgt}> --filter ${gw_objects_canary_filter} TIMEOUT 300)
    # on the emulated device: the same guard (unpadded_outputs is nvcc's code generation: GPU only, docs/emu.md)
    gw_add_emu_canary(NAME ${tgt}.emu EXPECT "${expect}" COMMAND $<TARGET_FILE:${tgt}_emu>
      --filter ${gw_objects_canary_filter} ENV GW_GO_QUICK=1)
  endif()
endforeach()
