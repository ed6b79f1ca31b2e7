# The driver-level ledger and traces (docs/ledger.md), included by tests/CMakeLists.txt after cli.cmake:
#   test_ledger_check (cpu, + .memcheck)  the budget check on hand-made activity records
#   test_trace_json (cpu, + .memcheck)    the Chrome trace writer, parsed back with cJSON, and the schedule
#   test_trace_range (host, + .memcheck)  the NVTX range helpers and the recording hook, without a device
#   test_ledger_gpu (gpu)                 CUPTI ledgers of the CLI host paths (skipped, never passed, when
#                                         CUPTI is unavailable), the host paths without CUPTI, gw_trace
#   test_ledger_ex2d_gpu (gpu)            the same for ex2d_patch's host path (tier L in 3 batches)
#   canary_ledger_* (canary)              cpu_fallback and roundtrip built into the host paths (grid_d4,
#                                         focus_stack, ex2d_patch): the ledger must catch them
#   cli_trace_* (host)                    gpuwitness trace: usage (exit 2), no GPU (77, nothing written), a
#                                         bad --out (1), and where a GPU is, a real trace read back
pkg_check_modules(GW_LEDGER_CJSON REQUIRED IMPORTED_TARGET libcjson)

gw_add_cpu_test(NAME test_ledger_check SOURCES test_ledger_check.c LIBS gw_ledger_check MEMCHECK)
gw_add_cpu_test(NAME test_trace_json SOURCES test_trace_json.c LIBS gw_trace_json PkgConfig::GW_LEDGER_CJSON
  MEMCHECK)

if(TARGET gw_trace_range) # NVTX3 comes with the CUDA toolkit; no cudart, no device
  gw_add_cpu_test(NAME test_trace_range SOURCES test_trace_range.c LIBS gw_trace_range LABEL host MEMCHECK)
endif()

if(NOT TARGET gw_ledger OR NOT TARGET grid_d4 OR NOT TARGET focus_stack)
  return() # no CUDA: no CUPTI, no kernels
endif()

# ---------------------------------------------------------------- GPU tests
# The host paths under test are the CLI's own files, compiled into each executable, so a canary build can
# compile them with the launcher renamed. A new kernel adds its host-path files here and one test.
set(gw_ledger_host_paths
  ${PROJECT_SOURCE_DIR}/tools/gw_d4_gpu.c ${PROJECT_SOURCE_DIR}/tools/gw_d4_batch.c
  ${PROJECT_SOURCE_DIR}/tools/gw_focus_gpu.c ${PROJECT_SOURCE_DIR}/tools/gw_focus_host.c)
set(gw_ledger_libs grid_d4 grid_d4_ref focus_stack focus_stack_ref gw_ledger gw_witness_check gw_focus_synth
  PkgConfig::GW_LEDGER_CJSON)

gw_add_gpu_executable(NAME test_ledger_gpu SOURCES test_ledger_gpu.c ${gw_ledger_host_paths} LIBS ${gw_ledger_libs})
gw_add_gpu_test(NAME test_ledger_gpu COMMAND $<TARGET_FILE:test_ledger_gpu> TIMEOUT 300)
set(gw_ledger_ex2d_host_path
  ${PROJECT_SOURCE_DIR}/tools/gw_ex2d_gpu.c ${PROJECT_SOURCE_DIR}/tools/gw_ex2d_host.c)
if(TARGET ex2d_patch AND TARGET ex2d_synth) # ex2d_patch's host path (tools/gw_ex2d_gpu.c), tier L in 3 batches
  gw_add_gpu_executable(NAME test_ledger_ex2d_gpu SOURCES test_ledger_ex2d_gpu.c ${gw_ledger_host_paths}
    ${gw_ledger_ex2d_host_path} LIBS ${gw_ledger_libs} ex2d_patch ex2d_patch_ref ex2d_synth)
  gw_add_gpu_test(NAME test_ledger_ex2d_gpu COMMAND $<TARGET_FILE:test_ledger_ex2d_gpu> TIMEOUT 300)
endif()

# ---------------------------------------------------------------- canaries
# name|kernel|planted fault (source, define)|the ledger's words that must appear. Each runs the kernel's
# ledger test only; the witness catches cpu_fallback too, but these must fail through the ledger. Per
# kernel: the ledger test's sources, its extra libraries, the launcher the host path calls (renamed in the
# C sources to canary_<launcher>, which the canary source defines) and the --filter of its ledger test.
set(gw_round_trip "round trip through the host")
set(gw_byte_budget "over the byte budget")
set(gw_ledger_canaries
  "grid_d4_cpu_fallback|grid_d4|grid_d4_canaries.cu|GRID_D4_CANARY_CPU_FALLBACK|${gw_round_trip}"
  "focus_stack_cpu_fallback|focus_stack|focus_stack_canaries.cu|FOCUS_STACK_CANARY_CPU_FALLBACK|${gw_round_trip}"
  "grid_d4_roundtrip|grid_d4|roundtrip_canaries.cu|GW_ROUNDTRIP_GRID_D4|${gw_byte_budget}"
  "focus_stack_roundtrip|focus_stack|roundtrip_canaries.cu|GW_ROUNDTRIP_FOCUS_STACK|${gw_byte_budget}")
set(gw_ledger_filter_grid_d4 "ledger/grid_d4_host_path_uploads_once_launches_both_kernels_and_downloads_once")
set(gw_ledger_filter_focus_stack
  "ledger/focus_stack_host_path_uploads_once_launches_the_fused_kernel_and_downloads_once")
foreach(kernel grid_d4 focus_stack)
  set(gw_ledger_test_${kernel} test_ledger_gpu.c)
  set(gw_ledger_extra_libs_${kernel})
  set(gw_ledger_launch_${kernel} ${kernel}_launch)
endforeach()
if(TARGET ex2d_patch AND TARGET ex2d_synth)
  # ex2d_patch: the planted launcher is ex2d_patches_launch (K1 stays real), run over tier L in 3 batches
  list(APPEND gw_ledger_canaries
    "ex2d_patch_cpu_fallback|ex2d_patch|ex2d_patch_canaries.cu|EX2D_PATCH_CANARY_CPU_FALLBACK|${gw_round_trip}"
    "ex2d_patch_roundtrip|ex2d_patch|roundtrip_canaries.cu|GW_ROUNDTRIP_EX2D_PATCH|${gw_byte_budget}")
  set(gw_ledger_test_ex2d_patch test_ledger_ex2d_gpu.c ${gw_ledger_ex2d_host_path})
  set(gw_ledger_extra_libs_ex2d_patch ex2d_patch ex2d_patch_ref ex2d_synth)
  set(gw_ledger_launch_ex2d_patch ex2d_patches_launch)
  set(gw_ledger_filter_ex2d_patch
    "ledger_ex2d/host_path_uploads_once_launches_each_stage_per_batch_and_downloads_once")
endif()
foreach(entry IN LISTS gw_ledger_canaries)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 kernel)
  list(GET parts 2 source)
  list(GET parts 3 define)
  list(GET parts 4 expect)
  set(tgt canary_ledger_${name})
  gw_add_gpu_executable(NAME ${tgt} SOURCES ${gw_ledger_test_${kernel}} ${gw_ledger_host_paths}
    canaries/${source} LIBS ${gw_ledger_libs} ${gw_ledger_extra_libs_${kernel}})
  # The C sources (the host paths) call the canary; the canary source (CUDA) calls the real launcher.
  set(launch ${gw_ledger_launch_${kernel}})
  target_compile_definitions(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:${launch}=canary_${launch}>
    $<$<COMPILE_LANGUAGE:CUDA>:${define}>)
  gw_add_canary(NAME ${tgt} EXPECT "${expect}"
    COMMAND $<TARGET_FILE:${tgt}> --filter ${gw_ledger_filter_${kernel}} TIMEOUT 300)
endforeach()

# ---------------------------------------------------------------- gpuwitness trace
if(NOT TARGET gpuwitness)
  return()
endif()
set(gw_trace_help_re "usage: gpuwitness trace KERNEL .--out FILE. .--wait N. .--warmup N. .--active N.")
string(APPEND gw_trace_help_re ".*KERNEL  grid-d4, focus-stack or ex2d.*exit status")
gw_cli_test(NAME cli_help_trace RC 0
  STDOUT "${gw_trace_help_re}"
  ARGS trace --help)
gw_cli_test(NAME cli_help_command_trace RC 0 STDOUT "usage: gpuwitness trace KERNEL" ARGS help trace)
gw_cli_test(NAME cli_trace_usage_missing_kernel RC 2
  STDERR "trace: missing KERNEL: one of grid-d4, focus-stack, ex2d" ARGS trace)
gw_cli_test(NAME cli_trace_usage_unknown_kernel RC 2
  STDERR "trace: unknown KERNEL 'frob': one of grid-d4, focus-stack, ex2d" ARGS trace frob)
gw_cli_test(NAME cli_trace_usage_ex2d_patch_is_not_a_cli_name RC 2
  STDERR "trace: unknown KERNEL 'ex2d_patch': one of grid-d4, focus-stack, ex2d" ARGS trace ex2d_patch)
gw_cli_test(NAME cli_trace_usage_two_kernels RC 2
  STDERR "unexpected argument 'focus-stack': trace takes one KERNEL .'grid-d4' given." ARGS trace grid-d4 focus-stack)
gw_cli_test(NAME cli_trace_usage_unknown_option RC 2
  STDERR "unknown option '--frob': options are --out, --wait, --warmup, --active, --device, --help"
  ARGS trace grid-d4 --frob)
gw_cli_test(NAME cli_trace_usage_bad_count RC 2 STDERR "--warmup 'x': must be a whole number from 0 to 10000"
  ARGS trace grid-d4 --warmup x)
gw_cli_test(NAME cli_trace_usage_negative_count RC 2 STDERR "--wait '-1': must be a whole number from 0 to 10000"
  ARGS trace grid-d4 --wait=-1)
gw_cli_test(NAME cli_trace_usage_no_active RC 2
  STDERR "--active 0: must be at least 1 .the iterations written to the trace." ARGS trace grid-d4 --active 0)
gw_cli_test(NAME cli_trace_usage_too_long RC 2 STDERR "--wait 6000 --warmup 1 --active 6000: at most 10000 iterations"
  ARGS trace grid-d4 --wait 6000 --active 6000)
gw_cli_test(NAME cli_trace_usage_missing_value RC 2 STDERR "option '--out' needs a value" ARGS trace grid-d4 --out)
gw_cli_test(NAME cli_trace_usage_empty_out RC 2 STDERR "option '--out' needs a non-empty value" ARGS trace grid-d4 --out=)
gw_cli_test(NAME cli_trace_usage_device_cpu RC 2 STDERR "--device cpu: a trace records GPU activity"
  ARGS trace grid-d4 --device cpu)
gw_cli_test(NAME cli_trace_usage_gw_device_cpu RC 2 ENV GW_DEVICE=cpu STDERR "GW_DEVICE cpu: a trace records GPU"
  ARGS trace focus-stack)
gw_cli_test(NAME cli_trace_usage_bad_device RC 2 WORKDIR FILES none
  STDERR "--device 'gpu': must be one of cuda, cuda:N, cpu, auto" ARGS trace grid-d4 --device gpu)
gw_cli_test(NAME cli_trace_bad_out_fails_before_any_work RC 1 STDERR "--out: .*missing-dir/t.json.*nothing written"
  WORKDIR FILES none ARGS trace grid-d4 --out missing-dir/t.json)
# Without a GPU: skipped (77) and nothing written; with GW_REQUIRE_GPU=1 a failure. Skipped where a GPU is.
gw_cli_test(NAME cli_trace_no_gpu_skips_and_writes_nothing RC 77 SKIP_RC 0 WORKDIR FILES none
  STDERR "trace: skipped: no usable GPU: .*nothing traced, trace.json not written" ARGS trace grid-d4)
gw_cli_test(NAME cli_trace_cuda_no_gpu_skips_and_writes_nothing RC 77 SKIP_RC 0 WORKDIR FILES none
  STDERR "trace: skipped: no usable GPU: .*nothing traced, t.json not written"
  ARGS trace focus-stack --device cuda:0 --out t.json)
gw_cli_test(NAME cli_trace_ex2d_no_gpu_skips_and_writes_nothing RC 77 SKIP_RC 0 WORKDIR FILES none
  STDERR "trace: skipped: no usable GPU: .*nothing traced, ex2d.json not written" ARGS trace ex2d --out ex2d.json)
gw_cli_test(NAME cli_trace_require_gpu_fails RC 1 SKIP_RC 0 ENV GW_REQUIRE_GPU=1 WORKDIR FILES none
  STDERR "no usable GPU" ARGS trace grid-d4)
gw_cli_test(NAME cli_trace_ex2d_require_gpu_fails RC 1 SKIP_RC 0 ENV GW_REQUIRE_GPU=1 WORKDIR FILES none
  STDERR "no usable GPU" ARGS trace ex2d)
# Where a GPU is: a real trace of each kernel, read back (tests/cli/gw_cli_trace.cmake). Labelled host, not
# gpu: ci/gpu.sh runs gpu-labelled commands under compute-sanitizer, which holds CUPTI (the trace would
# skip) and would wrap the cmake process that never calls CUDA. Skipped (77) without a GPU or CUPTI.
# ex2d: K1 and the six per-batch kernels once each (tier M is one batch); 10 uploads, the verdict read and 7
# downloads.
set(gw_trace_ex2d_kernels "ex2d_spots_kernel,ex2d_validate_kernel,ex2d_normal_kernel,ex2d_cholesky_kernel")
string(APPEND gw_trace_ex2d_kernels ",ex2d_cblocks_kernel,ex2d_jacobi_kernel,ex2d_outputs_kernel")
foreach(spec "grid-d4|grid_d4_validate_kernel,grid_d4_transform_kernel|10|grid_d4/upload"
             "focus-stack|focus_stack_fast_kernel|5|focus_stack/upload"
             "ex2d|${gw_trace_ex2d_kernels}|18|ex2d/upload")
  string(REPLACE "|" ";" parts "${spec}")
  list(GET parts 0 kernel)
  list(GET parts 1 kernels)
  list(GET parts 2 copies)
  list(GET parts 3 range)
  add_test(NAME cli_trace_${kernel}_writes_a_trace_that_reads_back
    COMMAND ${CMAKE_COMMAND} -DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/cli/cli_trace_${kernel} -DACTIVE=2
      -DKERNELS=${kernels} -DCOPIES=${copies} -DRANGE=${range}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/gw_cli_trace.cmake
      -- $<TARGET_FILE:gpuwitness> trace ${kernel} --out trace.json --wait 1 --warmup 1 --active 2)
  set_tests_properties(cli_trace_${kernel}_writes_a_trace_that_reads_back PROPERTIES LABELS host TIMEOUT 300
    SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")
endforeach()
