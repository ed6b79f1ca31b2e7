# ex2d_patch GPU tests, included by tests/CMakeLists.txt (the CPU tests are in ex2d_patch_ref.cmake):
#   test_ex2d_patch_gpu (gpu)               every stage and the pipeline against the CPU reference on tiers S, M,
#                                           L (§8.3), the §8.4 invariants, the §8.5 analytic cases, per-patch
#                                           failures, determinism, bad input (host and device rules); poison
#                                           before and the witness after every call
#   test_ex2d_patch_example (gpu)           the header's usage example, verbatim, plus a witnessed repeat
#   canary_ex2d_patch_* (canary)            planted faults that the named guard must catch
#   test_header_ex2d_patch_* (build only)   ex2d_patch.h compiles alone as C11 and C++

# Header compile tests: ex2d_patch.h alone, as C11 and as C++ (no CUDA needed).
gw_add_header_test(NAME test_header_ex2d_patch_C SOURCE test_header_ex2d_patch.c
  INCLUDES ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/kernels/ex2d_patch)
gw_add_header_test(NAME test_header_ex2d_patch_CXX SOURCE test_header_ex2d_patch.cpp
  INCLUDES ${PROJECT_SOURCE_DIR}/kernels ${PROJECT_SOURCE_DIR}/kernels/ex2d_patch)

if(NOT TARGET ex2d_patch OR NOT TARGET gw_gpu_test OR NOT TARGET ex2d_synth)
  return() # no CUDA compiler: the kernel, GPU tests and canaries are not built
endif()

# The GPU tests' fixture (device copies of a synthetic frame, poison, download) and comparisons.
add_library(ex2d_gpu_test_support STATIC support/ex2d_compare.c support/ex2d_gpu_case.c support/ex2d_gpu_checks.c)
target_include_directories(ex2d_gpu_test_support PUBLIC support)
target_link_libraries(ex2d_gpu_test_support PUBLIC gw_gpu_test ex2d_synth ex2d_patch_ref ex2d_patch
  PRIVATE gw_warnings m)

# ---------------------------------------------------------------- GPU tests
gw_add_gpu_executable(NAME test_ex2d_patch_gpu SOURCES test_ex2d_patch_gpu.c
  LIBS ex2d_patch ex2d_gpu_test_support ex2d_patch_ref ex2d_synth m)
gw_add_gpu_test(NAME test_ex2d_patch_gpu COMMAND $<TARGET_FILE:test_ex2d_patch_gpu> TIMEOUT 1800)

gw_add_gpu_executable(NAME test_ex2d_patch_example SOURCES test_ex2d_patch_example.c
  LIBS ex2d_patch ex2d_gpu_test_support)
gw_add_gpu_test(NAME test_ex2d_patch_example COMMAND $<TARGET_FILE:test_ex2d_patch_example> TIMEOUT 300)

# ---------------------------------------------------------------- canaries
# Each is the GPU test built with one planted fault in ex2d_patches_launch; the wrapper passes only when the run
# fails AND its output holds the words of the guard meant to catch it. They run one test that makes two
# pipeline calls over tier L in five chunks (enough for stale_output's second call and partial_grid's half).
set(gw_ex2d_canary_filter
  "ex2d_patch_gpu/pipeline_on_tier_l_in_chunks_matches_the_reference_and_repeats_bit_for_bit")

# name|define|expected guard words
set(gw_ex2d_canaries
  "cpu_fallback|EX2D_PATCH_CANARY_CPU_FALLBACK|no GPU code ran"
  "no_launch|EX2D_PATCH_CANARY_NO_LAUNCH|poison|no GPU code ran"
  "partial_grid|EX2D_PATCH_CANARY_PARTIAL_GRID|partial execution"
  "stale_output|EX2D_PATCH_CANARY_STALE_OUTPUT|poison")
foreach(entry IN LISTS gw_ex2d_canaries)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 define)
  list(SUBLIST parts 2 -1 expect)
  string(REPLACE ";" "|" expect "${expect}")
  set(tgt canary_ex2d_patch_${name})
  gw_add_gpu_executable(NAME ${tgt} SOURCES test_ex2d_patch_gpu.c canaries/ex2d_patch_canaries.cu
    LIBS ex2d_patch ex2d_gpu_test_support ex2d_patch_ref ex2d_synth m)
  # The test source calls the canary; the canary source (CUDA, without the rename) calls the real launcher.
  target_compile_definitions(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:ex2d_patches_launch=canary_ex2d_patches_launch>
    $<$<COMPILE_LANGUAGE:CUDA>:${define}>)
  gw_add_canary(NAME ${tgt} EXPECT "${expect}"
    COMMAND $<TARGET_FILE:${tgt}> --filter ${gw_ex2d_canary_filter} TIMEOUT 600)
endforeach()
