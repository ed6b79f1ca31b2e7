# SPDX-License-Identifier: MIT
# `gpuwitness run ex2d_patch` (its alias ex2d too) and ex2d_patch in check and doctor, included by
# tests/ex2d_patch/CMakeLists.txt (with CUDA); the ledger of its host path is tests/ledger/. CPU runs use tier S
# (one patch, milliseconds) or tier M (check --size small).

gw_cli_test(NAME cli_ex2d_help RC 0
  STDOUT "usage: gpuwitness run ex2d_patch .--tier S.M.L.XL.frame.*--out-dir DIR.*info.npy +int32 .npatch..4.*exit status"
  ARGS run ex2d_patch --help)
gw_cli_test(NAME cli_ex2d_help_alias RC 0 STDOUT "usage: gpuwitness run ex2d_patch" ARGS run ex2d --help)
gw_cli_test(NAME cli_ex2d_help_in_run_help RC 0 STDOUT "gpuwitness run ex2d_patch .--tier S.M.L.XL.frame." ARGS run --help)
gw_cli_test(NAME cli_ex2d_help_in_top_help RC 0 STDOUT "kernels: .*ex2d_patch" ARGS --help)

# Bad options and configurations: exit 2, the option and the rule named, nothing written.
foreach(case
    "tier|--tier 'Q': must be S, M, L, XL or frame|--tier;Q"
    "fibres_form|--fibres '5': must be FIRST:COUNT, whole numbers, FIRST >= 0 and COUNT >= 1|--fibres;5"
    "fibres_zero|--fibres '0:0': must be FIRST:COUNT|--fibres=0:0"
    "waves_negative|--waves '-1:3': must be FIRST:COUNT|--waves;-1:3"
    "fibres_outside|tier L with --fibres: fibres: .*fibre_first <= nfibre_camera - nfibre|--fibres;498:5"
    "waves_outside|tier S with --waves: wavelengths: .*wave_first <= nwave_camera - nwave|--tier;S;--waves;2320:10"
    "threads|--threads 'x': must be a whole number from 0 to 1024|--threads;x"
    "seed|--seed '-3': must be a whole number from 0 to|--seed;-3"
    "unknown_option|unknown option '--frob': options are --tier, --fibres, --waves, --device, --threads|--frob"
    "missing_value|option '--tier' needs a value|--tier"
    "extra_argument|unexpected argument 'frame.fits': the frame is synthetic|frame.fits"
    "bad_device|--device 'gpu': must be one of cuda, cuda:N, cpu, auto|--device;gpu")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  list(SUBLIST parts 2 -1 args)
  gw_cli_test(NAME cli_ex2d_usage_${name} RC 2 WORKDIR MKDIRS out FILES out STDERR "${message}"
    ARGS run ex2d_patch --device cpu --out-dir out ${args})
endforeach()
gw_cli_test(NAME cli_ex2d_usage_missing_out_dir RC 2 WORKDIR FILES none
  STDERR "missing --out-dir DIR: where flux.npy, ivar.npy, rdiags.npy and info.npy go" ARGS run ex2d --device cpu)
gw_cli_test(NAME cli_ex2d_usage_out_dir_not_a_dir RC 2 WORKDIR FILES none
  STDERR "--out-dir 'nope': not an existing directory" ARGS run ex2d --device cpu --tier S --out-dir nope)
# A directory nothing can be created in, even by root (/proc): exit 1 after the work, nothing written.
gw_cli_test(NAME cli_ex2d_unwritable_out_dir_fails RC 1
  STDERR "/proc/flux.npy: cannot create a temporary file.*nothing written"
  ARGS run ex2d --device cpu --tier S --out-dir /proc)

# The device policy (the no-GPU contract is only observable without a usable GPU; elsewhere it skips).
gw_cli_test(NAME cli_ex2d_cuda_no_gpu_skips RC 77 SKIP_RC 0 WORKDIR MKDIRS out FILES out
  STDERR "no usable GPU for --device cuda: .*nothing written .exit 77"
  ARGS run ex2d --device cuda --tier S --out-dir out)
gw_cli_test(NAME cli_ex2d_require_gpu_fails RC 1 SKIP_RC 0 ENV GW_REQUIRE_GPU=1 WORKDIR MKDIRS out FILES out
  STDERR "no usable GPU: .*GW_REQUIRE_GPU=1" ARGS run ex2d --tier S --out-dir out)

# End to end on the CPU (--device cpu, and auto falling back loudly), files and values read back.
foreach(device cpu auto)
  add_test(NAME cli_ex2d_run_${device} COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DDEVICE=${device}
    -DWORKDIR=${GW_CLI_WORK}/cli_ex2d_run_${device} -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_ex2d_run.cmake)
  set_tests_properties(cli_ex2d_run_${device} PROPERTIES LABELS host TIMEOUT 120
    ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:")
endforeach()

# check runs ex2d_patch too (the CPU part here; the GPU part in cli_gpu_ex2d_check_small and cli_gpu_check).
gw_cli_test(NAME cli_ex2d_check_cpu_small RC 0 TIMEOUT 300
  STDOUT "ex2d_patch .tier M: one noiseless 7 x 74 patch.*1 patch.es. of n <= 518.*identical bytes.*known: +noiseless: \
flux = R f_true.*check: ok on the CPU"
  ARGS check --device cpu --size small)

# GPU: exit 77 (Skipped) without a usable GPU, a failure under GW_REQUIRE_GPU=1 then.
gw_add_gpu_test(NAME cli_gpu_ex2d_run COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DDEVICE=cuda
  -DWORKDIR=${GW_CLI_WORK}/cli_gpu_ex2d_run -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_ex2d_run.cmake TIMEOUT 300)
set_tests_properties(cli_gpu_ex2d_run PROPERTIES SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")
gw_add_gpu_test(NAME cli_gpu_ex2d_check_small COMMAND $<TARGET_FILE:gpuwitness> check --device cuda --size small
  TIMEOUT 300)

# The CLI's ex2d host code under the Valgrind gate (tier S: one patch): a run, a failed write, a bad flag.
set(gw_ex2d_vg "${GW_CLI_WORK}/memcheck_ex2d")
file(MAKE_DIRECTORY "${gw_ex2d_vg}")
gw_add_valgrind_gate(NAME cli_ex2d_run_cpu.memcheck COMMAND $<TARGET_FILE:gpuwitness> run ex2d --device cpu --tier S
  --out-dir ${gw_ex2d_vg} LABELS host TIMEOUT 600)
gw_add_valgrind_gate(NAME cli_ex2d_unwritable.memcheck COMMAND $<TARGET_FILE:gpuwitness> run ex2d --device cpu
  --tier S --out-dir /proc LABELS host TIMEOUT 600 EXPECT_EXIT 1)
gw_add_valgrind_gate(NAME cli_ex2d_bad_flag.memcheck COMMAND $<TARGET_FILE:gpuwitness> run ex2d --device cpu
  --tier Q --out-dir ${gw_ex2d_vg} LABELS host TIMEOUT 600 EXPECT_EXIT 2)
foreach(t cli_ex2d_run_cpu.memcheck cli_ex2d_unwritable.memcheck cli_ex2d_bad_flag.memcheck)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:" "GW_DEVICE=unset:")
  endif()
endforeach()
