# SPDX-License-Identifier: MIT
# gpuwitness bench in CTest, included by tests/cli/CMakeLists.txt:
#   bench_<kernel>_smoke (bench)        each kernel's cases at the smoke sizes, 2 repetitions, JSON checked by
#                                       bench/gw_bench_smoke.cmake (CPU figures always; GPU figures where a GPU is)
#   bench_smoke_check_can_fail (bench)  the same check must catch a missing CPU figure
#   bench_usage_* (host;bench)          bad options: exit 2, the option and its rule named, nothing written
#   bench_*_no_gpu_* (host;bench)       the no-GPU contract (skipped where a GPU is usable), --trace's included
#   bench_trace_grid_d4_reads_back      --trace where a GPU is: the file read back (skipped without GPU or CUPTI)
#   bench_html_* (host;bench)           --html: the page of a CPU run (bench/report.py: needs python3-matplotlib
#                                       and python3-jinja2), and a missing python3 or module: exit 1, named, nothing
#                                       written (the page itself is checked in a browser: tests/report/)
#   bench_cpu.memcheck                  the CPU path and the dump under the Valgrind gate
# (canary_bench_slow_path, a serial grid_d4 that only the guard can catch, is in tests/grid_d4/.)

set(gw_bench_work "${CMAKE_CURRENT_BINARY_DIR}/bench")
set(gw_bench_smoke "${PROJECT_SOURCE_DIR}/bench/gw_bench_smoke.cmake")

# Smoke runs. They touch the GPU where there is one, so they take a GPU slot under --resource-spec-file
# (the device policy then selects that GPU); on GPU runners GW_REQUIRE_GPU=1 makes a skipped GPU part fail.
foreach(kernel IN LISTS GW_KERNELS)
  add_test(NAME bench_${kernel}_smoke COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DKERNEL=${kernel}
    -DWORKDIR=${gw_bench_work}/${kernel} -P ${gw_bench_smoke})
  set_tests_properties(bench_${kernel}_smoke PROPERTIES LABELS bench TIMEOUT 600 RESOURCE_GROUPS "gpus:1"
    ENVIRONMENT_MODIFICATION "GW_DEVICE=unset:;CRITERION_ALWAYS_SUCCEED=unset:")
endforeach()
add_test(NAME bench_smoke_check_can_fail COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DKERNEL=grid_d4
  -DWORKDIR=${gw_bench_work}/check_can_fail -DTAMPER=cpu_mt_ms -P ${gw_bench_smoke})
set_tests_properties(bench_smoke_check_can_fail PROPERTIES LABELS bench TIMEOUT 600 RESOURCE_GROUPS "gpus:1"
  ENVIRONMENT_MODIFICATION "GW_DEVICE=unset:;CRITERION_ALWAYS_SUCCEED=unset:")

# --help, and bad usage: exit 2 naming the option and the rule, before any work (no file written).
gw_cli_test(NAME bench_help RC 0 LABELS host bench
  STDOUT "usage: gpuwitness bench .KERNEL.*--min-speedup X.*--dump-inputs DIR.*exit status.*77  GPU part skipped"
  ARGS bench --help)
gw_cli_test(NAME bench_help_command RC 0 LABELS host bench STDOUT "usage: gpuwitness bench" ARGS help bench)
gw_cli_test(NAME bench_in_top_help RC 0 LABELS host bench STDOUT "  bench +time every kernel" ARGS --help)
foreach(case
    "unknown_option|unknown option '--frob': options are --size, --json, --min-speedup|--frob"
    "unknown_kernel|unknown kernel 'grid_d8': kernels are ${GW_KERNEL_NAMES}|grid_d8"
    "bad_size|--size 'huge': must be smoke, small, realistic or full|--size;huge"
    "bad_reps|--reps '0': must be an integer from 1 to 100000|--reps;0"
    "bad_cpu_reps|--cpu-reps 'many': must be an integer from 1 to 1000|--cpu-reps;many"
    "bad_min_speedup|--min-speedup '-3': must be a number greater than 0|--min-speedup;-3"
    "bad_min_roofline|--min-roofline '150': must be a percentage greater than 0 and at most 100|--min-roofline=150"
    "bad_seed|--seed '-1': must be a non-negative decimal integer|--seed;-1"
    "bad_device|--device 'gpu': must be one of cuda, cuda:N, cpu, auto|--device;gpu"
    "missing_value|option '--reps' needs a value|--reps"
    "guard_on_cpu|--min-roofline measure the GPU: they cannot be used with device cpu|--device;cpu;--min-roofline;50"
    "wait_without_trace|--wait: --wait, --warmup and --active choose the iterations of --trace: they need --trace|--wait;2"
    "trace_on_cpu|--trace with --device cpu: a trace records GPU activity|--device;cpu;--trace;t.json"
    "trace_negative_active|--active '-1': must be a whole number from 0 to 10000|--trace;t.json;--active=-1"
    "trace_garbage_warmup|--warmup 'x': must be a whole number from 0 to 10000|--trace;t.json;--warmup;x"
    "trace_no_active|--active 0: must be at least 1|--trace;t.json;--active;0")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  list(SUBLIST parts 2 -1 args)
  gw_cli_test(NAME bench_usage_${name} RC 2 WORKDIR FILES none LABELS host bench STDERR "${message}"
    ARGS bench --json out.json ${args})
endforeach()
gw_cli_test(NAME bench_usage_html_unwritable RC 2 WORKDIR FILES none LABELS host bench
  STDERR "--html 'missing/r.html': directory 'missing' does not exist" ARGS bench --size smoke --html missing/r.html)
gw_cli_test(NAME bench_usage_baseline_without_html RC 2 WORKDIR FILES none LABELS host bench
  STDERR "--baseline: compares in the HTML report: it needs --html FILE"
  ARGS bench --size smoke --baseline ${PROJECT_SOURCE_DIR}/tests/report/bench-cpu-smoke.json)
gw_cli_test(NAME bench_usage_baseline_missing RC 1 WORKDIR FILES none LABELS host bench
  STDERR "report.py: 'old.json': cannot read: No such file or directory" ARGS bench --size smoke --html r.html --baseline old.json)
gw_cli_test(NAME bench_usage_json_unwritable RC 2 WORKDIR FILES none LABELS host bench
  STDERR "--json 'missing/out.json': directory 'missing' does not exist" ARGS bench --size smoke --json missing/out.json)
gw_cli_test(NAME bench_usage_trace_gw_device_cpu RC 2 WORKDIR FILES none ENV GW_DEVICE=cpu LABELS host bench
  STDERR "--trace with GW_DEVICE cpu: a trace records GPU activity" ARGS bench --size smoke --trace t.json)
gw_cli_test(NAME bench_usage_trace_unwritable RC 2 WORKDIR FILES none LABELS host bench
  STDERR "--trace 'missing/t.json': directory 'missing' does not exist" ARGS bench --size smoke --trace missing/t.json)
gw_cli_test(NAME bench_usage_dump_not_a_directory RC 2 WORKDIR COPY ${PROJECT_SOURCE_DIR}/tests/grid_d4/d4_2x3.json FILES d4_2x3.json
  LABELS host bench STDERR "--dump-inputs 'd4_2x3.json': exists and is not a directory"
  ARGS bench --size smoke --dump-inputs d4_2x3.json)

# The no-GPU contract (skipped where a GPU is usable: the command then runs the GPU part).
gw_cli_test(NAME bench_guard_no_gpu_skips RC 77 SKIP_STDOUT "GPU part runs on cuda:" LABELS host bench
  STDERR "GPU part skipped .no usable GPU: .+\\(cuda[A-Za-z]+\\)"
  STDOUT "grid_d4 arc-n1000-rot90.*cpu: +1 thread [0-9.]+ ms.*GPU part skipped \\(exit 77\\)"
  ARGS bench grid_d4 --size smoke --reps 2 --min-speedup 10)
gw_cli_test(NAME bench_cuda_no_gpu_skips RC 77 SKIP_STDOUT "GPU part runs on cuda:" LABELS host bench
  STDERR "GPU part skipped .no usable GPU: .+\\(cuda[A-Za-z]+\\)" ARGS bench focus_stack --size smoke --reps 2
  --device cuda)
gw_cli_test(NAME bench_require_gpu_no_gpu_fails RC 1 SKIP_STDOUT "GPU part runs on cuda:" ENV GW_REQUIRE_GPU=1
  LABELS host bench STDERR "no usable GPU: .*GW_REQUIRE_GPU=1" ARGS bench --size smoke)

# --html: the page of a CPU run, with a comparison, through a staged file (only r.html and the JSON remain);
# without python3 or one of its modules bench fails before any work, naming it, and writes nothing.
gw_cli_test(NAME bench_html_cpu RC 0 WORKDIR FILES out.json,r.html LABELS host bench TIMEOUT 300
  STDOUT "bench: wrote r.html \\(HTML report\\).*bench: ok on the CPU only"
  ARGS bench grid_d4 --size smoke --reps 2 --cpu-reps 1 --device cpu --json out.json --html r.html
  --baseline ${PROJECT_SOURCE_DIR}/tests/report/bench-cpu-smoke.json)
gw_cli_test(NAME bench_html_missing_python RC 1 WORKDIR FILES none LABELS host bench ENV GW_PYTHON=/nonexistent/python3
  STDERR "--html needs python3 with matplotlib and jinja2 .*cannot run /nonexistent/python3.*nothing written"
  ARGS bench grid_d4 --size smoke --device cpu --json out.json --html r.html --dump-inputs in)
gw_cli_test(NAME bench_html_missing_jinja2 RC 1 WORKDIR FILES none LABELS host bench
  ENV PYTHONPATH=${PROJECT_SOURCE_DIR}/tests/report/shadow_jinja2
  STDERR "missing: jinja2 \\(Debian package python3-jinja2: hidden by the test.*nothing written"
  ARGS bench grid_d4 --size smoke --device cpu --json out.json --html r.html)

# --trace without a GPU: the benchmark's CPU part and its JSON still come, the trace is not written, exit 77.
gw_cli_test(NAME bench_trace_no_gpu_skips RC 77 SKIP_STDOUT "GPU part runs on cuda:" WORKDIR FILES out.json
  LABELS host bench STDERR "--trace skipped: no usable GPU: .*t.json not written"
  STDOUT "grid_d4 arc-n1000-rot90.*cpu: +1 thread [0-9.]+ ms.*trace skipped \\(exit 77\\)"
  ARGS bench grid_d4 --size smoke --reps 2 --cpu-reps 1 --json out.json --trace t.json --active 2)
# Where a GPU is: the trace of grid_d4's first smoke case (rot90: no ops array), read back by the script of
# `trace`: both kernels and the stage ranges once per active iteration, 4 uploads and 3 downloads each. Not
# labelled gpu, like cli_trace_*: ci/gpu.sh runs those under compute-sanitizer, which holds CUPTI (a skip).
add_test(NAME bench_trace_grid_d4_reads_back
  COMMAND ${CMAKE_COMMAND} -DWORKDIR=${gw_bench_work}/trace -DACTIVE=2
    -DKERNELS=grid_d4_validate_kernel,grid_d4_transform_kernel -DCOPIES=7 -DRANGE=grid_d4/launch
    -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_trace.cmake
    -- $<TARGET_FILE:gpuwitness> bench grid_d4 --size smoke --reps 2 --cpu-reps 1 --trace trace.json --wait 1
    --warmup 1 --active 2)
set_tests_properties(bench_trace_grid_d4_reads_back PROPERTIES LABELS bench TIMEOUT 600 RESOURCE_GROUPS "gpus:1"
  SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")

# The CPU path, the JSON and the dump leak nothing.
file(MAKE_DIRECTORY "${gw_bench_work}/memcheck")
gw_add_valgrind_gate(NAME bench_cpu.memcheck COMMAND $<TARGET_FILE:gpuwitness> bench --size smoke --reps 2
  --cpu-reps 1 --device cpu --json ${gw_bench_work}/memcheck/bench.json --dump-inputs ${gw_bench_work}/memcheck/in
  LABELS host bench TIMEOUT 900)
if(TEST bench_cpu.memcheck)
  set_property(TEST bench_cpu.memcheck APPEND PROPERTY ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:"
    "GW_DEVICE=unset:")
endif()
