# SPDX-License-Identifier: MIT
# gpuwitness-emu, the CLI over the emulated device (docs/emu.md, "The CLI"), label emu: doctor, check, run on
# the real inputs of every kernel (the ARC tasks, and the DESI PSF where GW_DATA_DIR has it: the clean round trip) and bench, end to
# end through upload, launch, witness, download and compare. Every result line must say that the device was
# emulated, and none may stand for a GPU (no "gpu:" line of times, no "on the GPU"). Not under the asan build's
# time: the emu tier's kernels already run there.
if(GW_ASAN_BUILD)
  return()
endif()
set(gw_emu_gpu_words "(^|\n)  gpu: |on the GPU|GPU usable|GPU part")

gw_cli_test(NAME cli_emu_doctor PROGRAM gpuwitness-emu RC 0 LABELS emu TIMEOUT 300 REJECT_STDOUT "${gw_emu_gpu_words}"
  STDOUT "CUDA driver: +not used: the emulated device stands in for it.*CUPTI: .*not used: the emulated device has \
no GPU activity to record.*device 0: gpuwitness emulated device.*device code: +EMULATED.*grid_d4: .*not a GPU.*focus_stack: .*not a GPU.*\
ex2d_patch: .*not a GPU.*grid_objects: .*not a GPU.*doctor: ok on the EMULATED device.*GPU path not executed"
  ARGS doctor)
gw_cli_test(NAME cli_emu_check_small PROGRAM gpuwitness-emu RC 0 LABELS emu TIMEOUT 300
  REJECT_STDOUT "${gw_emu_gpu_words}|ran on the GPU"
  STDOUT "grid_d4 .*emulated: .*not a GPU.*focus_stack .*emulated: .*not a GPU.*ex2d_patch .*emulated: .*not a GPU.*\
grid_objects .*emulated: .*not a GPU.*check: ok on the EMULATED device.*GPU path not executed"
  ARGS check --device cuda --size small)
# An emulated run never stands for a GPU: GW_REQUIRE_GPU=1 refuses it before any work.
gw_cli_test(NAME cli_emu_require_gpu_fails PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_REQUIRE_GPU=1
  STDERR "GW_REQUIRE_GPU=1, but this is gpuwitness-emu" ARGS check --size small)
gw_cli_test(NAME cli_emu_doctor_require_gpu_fails PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_REQUIRE_GPU=1
  STDOUT "doctor: FAILED: GW_REQUIRE_GPU=1 and this is gpuwitness-emu" ARGS doctor)
# bench: every loop with its poison, re-validation and witness; 1 repetition (a smoke run, said so), and the JSON
# says emulated for report.py's page. A guard on emulated times is refused.
gw_cli_test(NAME cli_emu_bench_smoke PROGRAM gpuwitness-emu RC 0 LABELS emu TIMEOUT 600 WORKDIR
  REJECT_STDOUT "${gw_emu_gpu_words}|FAILED"
  STDOUT "copy roofline .*not a GPU.*grid_d4 arc-n1000-rot90.*emulated: kernel.*cub::DeviceMemcpy::Batched.*\
focus_stack .*emulated: kernel.*ex2d_patch .*emulated: kernel.*grid_objects .*emulated: kernel.*\
EMULATED: the device code ran.*emulated kernel ms.*bench: ok on the EMULATED device"
  FILES b.json ARGS bench --size smoke --reps 1 --cpu-reps 1 --json b.json)
set_tests_properties(cli_emu_bench_smoke PROPERTIES FIXTURES_SETUP cli_emu_bench_json)
# Its JSON says emulated wherever a reader or a tool looks, and report.py's page of it carries the banner
# (tests/cli/gw_emu_bench_json.py; Debian's python3, where ci/setup installs matplotlib and Jinja2).
find_program(GW_REPORT_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(GW_REPORT_PYTHON)
  add_test(NAME cli_emu_bench_report COMMAND ${GW_REPORT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gw_emu_bench_json.py
    ${GW_CLI_WORK}/cli_emu_bench_smoke/b.json ${PROJECT_SOURCE_DIR}/bench/report.py ${GW_CLI_WORK}/cli_emu_bench_report)
  set_tests_properties(cli_emu_bench_report PROPERTIES LABELS emu TIMEOUT 120 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED cli_emu_bench_json)
endif()
gw_cli_test(NAME cli_emu_bench_trace_skips PROGRAM gpuwitness-emu RC 77 LABELS emu TIMEOUT 300 WORKDIR FILES none
  STDOUT "bench: trace skipped .exit 77.: gpuwitness-emu: CUPTI records a GPU's kernels and copies, and the emulated \
device has none. the benchmark itself ran" ARGS bench grid_d4 --size smoke --reps 2 --cpu-reps 1 --trace t.json)
gw_cli_test(NAME cli_emu_bench_guard_refused PROGRAM gpuwitness-emu RC 2 LABELS emu
  STDERR "--min-speedup and --min-roofline measure a GPU: gpuwitness-emu times the CPU" ARGS bench --min-speedup 2)

# trace: the traced work of each kernel runs (set-up, then the schedule's 4 iterations, each compared with the
# reference and witnessed); CUPTI has nothing to record on the emulated device, so nothing is written: exit 77.
foreach(kernel grid_d4 focus-stack ex2d grid-objects)
  gw_cli_test(NAME cli_emu_trace_${kernel} PROGRAM gpuwitness-emu RC 77 LABELS emu WORKDIR FILES none TIMEOUT 300
    REJECT_STDOUT "${gw_emu_gpu_words}"
    STDOUT "gpuwitness trace: .* on cuda:0 .emulated on the CPU, not a GPU.\n  4 iterations ran, each equal to the \
reference, its witness checked .emulated on the CPU, not a GPU."
    STDERR "skipped: gpuwitness-emu: CUPTI records a GPU's kernels and copies, and the emulated device has none. \
nothing traced, t.json not written" ARGS trace ${kernel} --out t.json)
endforeach()

# run: the kernels' own CLI drivers (tests/<kernel>/gw_cli_*.cmake) with EMULATED=1 (tests/cli/gw_cli_emulated.cmake).
set(gw_tests ${PROJECT_SOURCE_DIR}/tests)
set(gw_emu_run -DGW=$<TARGET_FILE:gpuwitness-emu> -DDEVICE=cuda -DEMULATED=1)
gw_add_emu_tier_test(NAME cli_emu_run_grid_d4_ops COMMAND ${CMAKE_COMMAND} ${gw_emu_run}
  -DINPUT=${gw_tests}/grid_d4/d4_2x3.json -DWORKDIR=${GW_CLI_WORK}/cli_emu_run_grid_d4_ops
  -P ${gw_tests}/grid_d4/gw_cli_run_ops.cmake)
gw_add_emu_tier_test(NAME cli_emu_run_grid_d4_arc_roundtrip LABELS data COMMAND ${CMAKE_COMMAND} ${gw_emu_run}
  -DWORKDIR=${GW_CLI_WORK}/cli_emu_run_grid_d4_arc_roundtrip -P ${gw_tests}/grid_d4/gw_cli_roundtrip.cmake)
gw_add_emu_tier_test(NAME cli_emu_run_grid_objects COMMAND ${CMAKE_COMMAND} ${gw_emu_run}
  -DINPUT=${gw_tests}/grid_objects/objects_3x3.json -DEXPECTED=${gw_tests}/grid_objects
  -DWORKDIR=${GW_CLI_WORK}/cli_emu_run_grid_objects -P ${gw_tests}/grid_objects/gw_cli_run_objects.cmake)
gw_add_emu_tier_test(NAME cli_emu_run_focus_stack COMMAND ${CMAKE_COMMAND} ${gw_emu_run}
  -DFIXTURE=$<TARGET_FILE:gw_focus_fixture> -DWORKDIR=${GW_CLI_WORK}/cli_emu_run_focus_stack
  -P ${gw_tests}/focus_stack/gw_cli_focus_run.cmake)
gw_add_emu_tier_test(NAME cli_emu_run_ex2d COMMAND ${CMAKE_COMMAND} ${gw_emu_run}
  -DWORKDIR=${GW_CLI_WORK}/cli_emu_run_ex2d -P ${gw_tests}/ex2d_patch/gw_cli_ex2d_run.cmake)
gw_add_emu_tier_test(NAME cli_emu_run_ex2d_desi LABELS data TIMEOUT 600 COMMAND ${CMAKE_COMMAND} ${gw_emu_run}
  -DPULLS=$<TARGET_FILE:ex2d_frame_pulls> -DMODES=clean -DWORKDIR=${GW_CLI_WORK}/cli_emu_run_ex2d_desi
  -P ${gw_tests}/ex2d_patch/gw_cli_ex2d_desi.cmake)
# The drivers print GW_CLI_SKIPPED for two reasons; here only a missing data set may skip (gpuwitness-emu always
# has its device, so an exit 77 is a failure).
set_tests_properties(cli_emu_run_grid_d4_arc_roundtrip cli_emu_run_ex2d_desi PROPERTIES
  SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED: GW_DATA_DIR is not set")
set_property(TEST cli_emu_run_grid_d4_ops cli_emu_run_grid_d4_arc_roundtrip cli_emu_run_grid_objects
  cli_emu_run_focus_stack cli_emu_run_ex2d cli_emu_run_ex2d_desi APPEND PROPERTY
  FAIL_REGULAR_EXPRESSION "GW_CLI_SKIPPED: no usable GPU;gw_emu: at exit, memory never freed")
include(emu_faults.cmake)
