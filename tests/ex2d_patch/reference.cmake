# SPDX-License-Identifier: MIT
# ex2d_patch CPU tests, included by tests/ex2d_patch/CMakeLists.txt (no CUDA needed):
#   test_ex2d_synth (cpu, + .memcheck)        synthetic frame: corner rule, PSF table, patch table, truth,
#                                             image, noise, config errors; K1 spot invariants and analytic spots
#   test_ex2d_patch_ref (cpu, + .memcheck)    the reference on tier S and small frames: dense == overlap bitwise,
#                                             the invariants, noiseless patch, masking, regularisation, statuses,
#                                             stitching, threads, every bad-input rule
#   test_ex2d_psf (cpu, + .data, .memcheck)   the real-PSF path: Legendre, corners, tail, frame rules; specter's trace
#                                             and spots (1e-9 px, 1e-12), the real-PSF round trip's pulls
#   test_ex2d_patch_tiers (cpu)               (test_ex2d_patch_ref.c, GW_EX2D_LARGE_TIERS) tiers M and L: dense == overlap on 518 unknowns, noiseless M, noisy
#                                             L chi, threaded == single-threaded; too slow for Valgrind
# -ffp-contract=off: the tests recompute sums in the reference's order and compare bits.
gw_add_cpu_test(NAME test_ex2d_synth SOURCES test_ex2d_synth.c LIBS ex2d_synth ex2d_patch_ref m
  LABEL cpu TIMEOUT 300 MEMCHECK)
gw_add_cpu_test(NAME test_ex2d_patch_ref SOURCES test_ex2d_patch_ref.c LIBS ex2d_synth ex2d_patch_ref m
  LABEL cpu TIMEOUT 300 MEMCHECK)
# The same source with GW_EX2D_LARGE_TIERS: the tier M and L tests instead of the small ones.
gw_add_cpu_test(NAME test_ex2d_patch_tiers SOURCES test_ex2d_patch_ref.c LIBS ex2d_synth ex2d_patch_ref m
  LABEL cpu TIMEOUT 600)
target_compile_definitions(test_ex2d_patch_tiers PRIVATE GW_EX2D_LARGE_TIERS _POSIX_C_SOURCE=200809L)
target_compile_definitions(test_ex2d_patch_ref PRIVATE
  GW_EX2D_PATCH_HEADER="${PROJECT_SOURCE_DIR}/kernels/ex2d_patch/ex2d_patch.h"
  GW_EX2D_PATCH_EXAMPLE="${CMAKE_CURRENT_SOURCE_DIR}/test_ex2d_patch_example.c")
foreach(t test_ex2d_synth test_ex2d_patch_ref test_ex2d_patch_tiers)
  target_compile_options(${t} PRIVATE -ffp-contract=off)
endforeach()
# Valgrind runs threads one at a time; passive waiting keeps libgomp's spinning barriers from burning that time.
foreach(t test_ex2d_synth.memcheck test_ex2d_patch_ref.memcheck)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "OMP_WAIT_POLICY=passive")
  endif()
endforeach()
# The real-PSF path (ex2d_psf.h): no-data rules, and against specter's values in $GW_DATA_DIR/desi (.data).
gw_add_cpu_test(NAME test_ex2d_psf SOURCES test_ex2d_psf.c ex2d_psf_golden.c
  LIBS ex2d_synth ex2d_patch_ref gw_desi PkgConfig::CJSON m LABEL cpu TIMEOUT 300 MEMCHECK DATA)
target_compile_options(test_ex2d_psf PRIVATE -ffp-contract=off)
