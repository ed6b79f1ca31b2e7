# SPDX-License-Identifier: MIT
# `gpuwitness trace`, included by tests/cli/CMakeLists.txt: usage (exit 2), no GPU (77, nothing written), a bad
# --out (1), and where a GPU is, a real trace of each kernel read back.
set(gw_trace_help_re "usage: gpuwitness trace KERNEL .--out FILE. .--wait N. .--warmup N. .--active N.")
string(APPEND gw_trace_help_re ".*KERNEL is one of:.*grid_d4 .*focus_stack .*ex2d_patch .*exit status")
gw_cli_test(NAME cli_help_trace RC 0
  STDOUT "${gw_trace_help_re}"
  ARGS trace --help)
gw_cli_test(NAME cli_help_command_trace RC 0 STDOUT "usage: gpuwitness trace KERNEL" ARGS help trace)
gw_cli_test(NAME cli_trace_usage_missing_kernel RC 2
  STDERR "trace: missing KERNEL: one of ${GW_KERNEL_NAMES}" ARGS trace)
gw_cli_test(NAME cli_trace_usage_unknown_kernel RC 2
  STDERR "trace: unknown KERNEL 'frob': one of ${GW_KERNEL_NAMES}" ARGS trace frob)
# Every spelling of a kernel reaches its trace (here stopped by the device rule, before any work).
gw_cli_test(NAME cli_trace_accepts_the_hyphenated_name RC 2
  STDERR "--device cpu: a trace records GPU activity" ARGS trace ex2d-patch --device cpu)
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
             "ex2d|${gw_trace_ex2d_kernels}|18|ex2d/upload"
             "grid-objects|grid_objects_validate_kernel,grid_objects_label_kernel|15|grid_objects/upload")
  string(REPLACE "|" ";" parts "${spec}")
  list(GET parts 0 kernel)
  list(GET parts 1 kernels)
  list(GET parts 2 copies)
  list(GET parts 3 range)
  add_test(NAME cli_trace_${kernel}_writes_a_trace_that_reads_back
    COMMAND ${CMAKE_COMMAND} -DWORKDIR=${GW_CLI_WORK}/cli_trace_${kernel} -DACTIVE=2
      -DKERNELS=${kernels} -DCOPIES=${copies} -DRANGE=${range}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_trace.cmake
      -- $<TARGET_FILE:gpuwitness> trace ${kernel} --out trace.json --wait 1 --warmup 1 --active 2)
  set_tests_properties(cli_trace_${kernel}_writes_a_trace_that_reads_back PROPERTIES LABELS host TIMEOUT 300
    SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")
endforeach()
