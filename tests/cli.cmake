# Tests of the ARC JSON reader/writer (tools/gw_arc) and the gpuwitness CLI. Included by tests/CMakeLists.txt.
# The project's own copy of the data: tests must not depend on anything outside the repository.
set(GW_ARC_TRAINING_DATA "${PROJECT_SOURCE_DIR}/tests/data/arc-agi-1-training")

gw_add_cpu_test(NAME test_gw_arc SOURCES test_gw_arc.c LIBS gw_arc MEMCHECK)
target_compile_definitions(test_gw_arc PRIVATE GW_ARC_TRAINING_DIR="${GW_ARC_TRAINING_DATA}")

if(NOT TARGET gpuwitness)
  return() # the CLI needs CUDA (tools/CMakeLists.txt)
endif()

set(gw_cli_dir "${CMAKE_CURRENT_SOURCE_DIR}/cli")
set(gw_cli_work "${CMAKE_CURRENT_BINARY_DIR}/cli")

# gw_cli_test(NAME n RC code [STDOUT re] [STDERR re] [REJECT_STDERR re] [ENV A=1,B=2] [WORKDIR] [COPY f,g]
#             [MKDIRS d,e] [FILES a,b|none] [UNCHANGED f,g] [SKIP_RC code] [SKIP_STDOUT re] [LABELS l...]
#             [TIMEOUT s] ARGS args...)
# One gpuwitness command through tests/cli/gw_cli_expect.cmake, which checks the exit status and both
# streams (PASS_REGULAR_EXPRESSION alone would ignore the exit status). Labelled host: the binary links
# cudart but these tests never need a device. GW_REQUIRE_GPU and GW_DEVICE are unset for the command
# unless ENV sets them, so a GPU runner's GW_REQUIRE_GPU=1 does not change what a host test means.
# Regexes must keep [ and ] balanced (match a lone bracket with "."): CMake does not split a list inside
# brackets, so an unbalanced "\\[" swallows the arguments that follow it.
function(gw_cli_test)
  cmake_parse_arguments(T "WORKDIR"
    "NAME;RC;STDOUT;STDERR;REJECT_STDERR;ENV;COPY;MKDIRS;FILES;UNCHANGED;SKIP_RC;SKIP_STDOUT;TIMEOUT"
    "ARGS;LABELS" ${ARGN})
  set(defs -DEXPECT_RC=${T_RC})
  foreach(pair "STDOUT;EXPECT_STDOUT" "STDERR;EXPECT_STDERR" "REJECT_STDERR;REJECT_STDERR" "ENV;ENV_SET"
               "COPY;COPY_FILES" "MKDIRS;MKDIRS" "FILES;EXPECT_FILES" "UNCHANGED;UNCHANGED" "SKIP_RC;SKIP_RC"
               "SKIP_STDOUT;SKIP_STDOUT")
    list(GET pair 0 key)
    list(GET pair 1 var)
    if(DEFINED T_${key})
      list(APPEND defs "-D${var}=${T_${key}}")
    endif()
  endforeach()
  if(T_WORKDIR)
    list(APPEND defs "-DWORKDIR=${gw_cli_work}/${T_NAME}")
  endif()
  if(DEFINED T_SKIP_RC OR DEFINED T_SKIP_STDOUT)
    list(APPEND defs "-DSKIP_REASON=the no-GPU contract is only observable on a machine without a usable GPU")
  endif()
  if(NOT T_LABELS)
    set(T_LABELS host)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_test(NAME ${T_NAME} COMMAND ${CMAKE_COMMAND} ${defs} -P ${gw_cli_dir}/gw_cli_expect.cmake
    -- $<TARGET_FILE:gpuwitness> ${T_ARGS})
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")
endfunction()

# --help everywhere, and usage errors: exit 2 naming the argument and the rule.
gw_cli_test(NAME cli_help RC 0 STDOUT "usage: gpuwitness \\[--help\\].*doctor.*check.*run.*exit status" ARGS --help)
gw_cli_test(NAME cli_help_doctor RC 0 STDOUT "usage: gpuwitness doctor.*exit status" ARGS doctor --help)
gw_cli_test(NAME cli_help_check RC 0 STDOUT "usage: gpuwitness check .--device.*77  GPU part skipped"
  ARGS check --help)
gw_cli_test(NAME cli_help_run RC 0 STDOUT "usage: gpuwitness run grid-d4 --op NAME.*rot90 \\(clockwise\\)"
  ARGS run --help)
gw_cli_test(NAME cli_help_command RC 0 STDOUT "usage: gpuwitness run grid-d4" ARGS help run)
gw_cli_test(NAME cli_version RC 0 STDOUT "^gpuwitness [0-9]+\\.[0-9]+\\.[0-9]+" ARGS --version)
gw_cli_test(NAME cli_usage_no_command RC 2 STDERR "missing COMMAND: one of doctor, check, run")
gw_cli_test(NAME cli_usage_unknown_command RC 2
  STDERR "unknown command 'frobnicate': commands are doctor, check, run" ARGS frobnicate)
gw_cli_test(NAME cli_usage_unknown_top_option RC 2 STDERR "unknown option '--frob'" ARGS --frob)
gw_cli_test(NAME cli_usage_doctor_argument RC 2 STDERR "doctor: unknown option '--fast'" ARGS doctor --fast)
gw_cli_test(NAME cli_usage_check_unknown_option RC 2
  STDERR "check: unknown option '--frob': options are --device, --size, --seed, --help" ARGS check --frob)
gw_cli_test(NAME cli_usage_check_bad_device RC 2 STDERR "--device 'gpu': must be one of cuda, cuda:N, cpu, auto"
  ARGS check --device gpu)
gw_cli_test(NAME cli_usage_check_bad_gw_device RC 2 ENV GW_DEVICE=cuda:x
  STDERR "GW_DEVICE 'cuda:x': the device ordinal after 'cuda:' must be a number" ARGS check)
gw_cli_test(NAME cli_usage_check_bad_size RC 2 STDERR "--size 'huge': must be small or realistic"
  ARGS check --size huge)
gw_cli_test(NAME cli_usage_check_missing_value RC 2 STDERR "option '--device' needs a value" ARGS check --device)

# check: the CPU part always runs; --device cpu passes and says the GPU was not exercised.
gw_cli_test(NAME cli_check_cpu RC 0 TIMEOUT 300
  STDOUT "grid_d4 .per-grid random ops.*100000 grids.*grid_d4_ref [0-9.]+ ms.*identical bytes.*check: ok on the CPU"
  STDERR "--device cpu: the GPU is not exercised" ARGS check --device cpu)
# The no-GPU contract (skipped where a GPU is usable: the command then exits 0).
gw_cli_test(NAME cli_check_auto_no_gpu_skips RC 77 SKIP_RC 0 TIMEOUT 300
  STDERR "GPU part skipped: no usable GPU: .+\\(cuda[A-Za-z]+\\)"
  STDOUT "identical bytes.*check: GPU part skipped \\(exit 77\\)" ARGS check --size small)
gw_cli_test(NAME cli_check_cuda_no_gpu_skips RC 77 SKIP_RC 0 TIMEOUT 300
  STDERR "GPU part skipped: no usable GPU for --device cuda: .+\\(cuda[A-Za-z]+\\)"
  ARGS check --device cuda --size small)
gw_cli_test(NAME cli_check_require_gpu_fails RC 1 SKIP_RC 0 ENV GW_REQUIRE_GPU=1 TIMEOUT 300
  STDERR "no usable GPU: .*GW_REQUIRE_GPU=1" ARGS check --size small)
gw_cli_test(NAME cli_check_cuda_require_gpu_fails RC 1 SKIP_RC 0 ENV GW_REQUIRE_GPU=1 TIMEOUT 300
  STDERR "--device 'cuda': no usable GPU: .*GW_REQUIRE_GPU=1" ARGS check --device cuda --size small)
gw_cli_test(NAME cli_check_cpu_conflicts_with_require_gpu RC 1 ENV GW_REQUIRE_GPU=1
  STDERR "--device=cpu conflicts with GW_REQUIRE_GPU=1" ARGS check --device cpu)
gw_cli_test(NAME cli_doctor_no_gpu_skips RC 77 SKIP_RC 0
  STDOUT "CUDA runtime: +[0-9]+\\.[0-9]+ \\([0-9]+\\).*CUDA driver: .*CUDA_VISIBLE_DEVICES: .*devices: +none: .*\\(cuda"
  ARGS doctor)
gw_cli_test(NAME cli_doctor_require_gpu_fails RC 1 SKIP_RC 0 ENV GW_REQUIRE_GPU=1
  STDERR "no usable GPU: .*GW_REQUIRE_GPU=1" ARGS doctor)

# run grid-d4 on the CPU: golden values for all 8 ops, and rot270(rot90(task)) == task on every file.
add_test(NAME cli_run_ops_cpu COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DDEVICE=cpu
  -DINPUT=${gw_cli_dir}/d4_2x3.json -DWORKDIR=${gw_cli_work}/cli_run_ops_cpu -P ${gw_cli_dir}/gw_cli_run_ops.cmake)
add_test(NAME cli_run_roundtrip_cpu COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DDEVICE=cpu
  -DDATA=${GW_ARC_TRAINING_DATA} -DWORKDIR=${gw_cli_work}/cli_run_roundtrip_cpu -P ${gw_cli_dir}/gw_cli_roundtrip.cmake)
set_tests_properties(cli_run_ops_cpu cli_run_roundtrip_cpu PROPERTIES LABELS host TIMEOUT 300
  ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:")

# run: bad input gives a clear error and writes nothing.
set(gw_cli_good "${GW_ARC_TRAINING_DATA}/007bbfb7.json")
gw_cli_test(NAME cli_run_bad_op RC 2 WORKDIR FILES none
  STDERR "--op 'rot45': unknown op; must be one of identity, rot90, rot180, rot270, hmirror, vmirror, dmirror, cmirror"
  ARGS run grid-d4 --op rot45 --device cpu -o out.json ${gw_cli_good})
gw_cli_test(NAME cli_run_missing_op RC 2 WORKDIR FILES none STDERR "missing --op"
  ARGS run grid-d4 --device cpu -o out.json ${gw_cli_good})
gw_cli_test(NAME cli_run_unknown_kernel RC 2 STDERR "unknown kernel 'grid-d8': the kernel is grid-d4"
  ARGS run grid-d8 --op rot90 -o out.json ${gw_cli_good})
gw_cli_test(NAME cli_run_unknown_option RC 2 STDERR "run: unknown option '--fast'"
  ARGS run grid-d4 --op rot90 --fast -o out.json ${gw_cli_good})
gw_cli_test(NAME cli_run_needs_output RC 2 STDERR "give exactly one of --out-dir DIR and -o FILE"
  ARGS run grid-d4 --op rot90 ${gw_cli_good})
gw_cli_test(NAME cli_run_o_takes_one_input RC 2 WORKDIR FILES none STDERR "-o 'out.json' takes one input, got 2"
  ARGS run grid-d4 --op rot90 -o out.json ${gw_cli_good} ${gw_cli_good})
gw_cli_test(NAME cli_run_missing_file RC 1 WORKDIR FILES none
  STDERR "nope.json: cannot open: No such file or directory.*nothing written"
  ARGS run grid-d4 --op rot90 --device cpu -o out.json nope.json)
gw_cli_test(NAME cli_run_truncated_json RC 1 WORKDIR COPY ${gw_cli_dir}/truncated.json FILES truncated.json
  STDERR "truncated.json: invalid JSON: unexpected end of input at line 1.*nothing written"
  ARGS run grid-d4 --op rot90 --device cpu -o out.json truncated.json)
# One bad file among good ones: nothing at all is written, not even the good file's result.
gw_cli_test(NAME cli_run_bad_value_writes_nothing RC 1 WORKDIR COPY ${gw_cli_dir}/bad_value.json MKDIRS out
  FILES bad_value.json,out STDERR "bad_value.json: train\\[1\\].output row 1 column 1: value 12 is outside 0..9"
  ARGS run grid-d4 --op rot90 --device cpu --out-dir out/ ${gw_cli_good} bad_value.json)
gw_cli_test(NAME cli_run_refuses_to_overwrite_input RC 2 WORKDIR COPY ${gw_cli_dir}/d4_2x3.json
  FILES d4_2x3.json UNCHANGED ${gw_cli_dir}/d4_2x3.json
  STDERR "output 'd4_2x3.json' is the input file 'd4_2x3.json': refusing to overwrite an input"
  ARGS run grid-d4 --op rot90 --device cpu -o d4_2x3.json d4_2x3.json)
gw_cli_test(NAME cli_run_refuses_to_overwrite_input_in_out_dir RC 2 WORKDIR COPY ${gw_cli_dir}/d4_2x3.json
  FILES d4_2x3.json UNCHANGED ${gw_cli_dir}/d4_2x3.json STDERR "refusing to overwrite an input"
  ARGS run grid-d4 --op rot90 --device cpu --out-dir . d4_2x3.json)
gw_cli_test(NAME cli_run_out_dir_must_exist RC 2 WORKDIR FILES none
  STDERR "--out-dir 'missing': not an existing directory" ARGS run grid-d4 --op rot90 --device cpu --out-dir missing
  ${gw_cli_good})
gw_cli_test(NAME cli_run_cuda_no_gpu_skips RC 77 SKIP_RC 0 WORKDIR FILES none
  STDERR "no usable GPU for --device cuda: .*nothing written"
  ARGS run grid-d4 --op rot90 --device cuda -o out.json ${gw_cli_good})
gw_cli_test(NAME cli_run_auto_falls_back_loudly RC 0 SKIP_STDOUT "rot90 on cuda:" WORKDIR FILES out.json
  STDERR "no usable GPU: .+\\(cuda[A-Za-z]+\\); running grid_d4_ref on the CPU instead"
  ARGS run grid-d4 --op rot90 -o out.json ${gw_cli_good})

# GPU tests: exit 77 (Skipped) without a usable GPU, a failure under GW_REQUIRE_GPU=1 then.
gw_add_gpu_test(NAME cli_gpu_check COMMAND $<TARGET_FILE:gpuwitness> check --device cuda TIMEOUT 600)
gw_add_gpu_test(NAME cli_gpu_doctor COMMAND $<TARGET_FILE:gpuwitness> doctor TIMEOUT 300)
gw_add_gpu_test(NAME cli_gpu_run_ops COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DDEVICE=cuda
  -DINPUT=${gw_cli_dir}/d4_2x3.json -DWORKDIR=${gw_cli_work}/cli_gpu_run_ops -P ${gw_cli_dir}/gw_cli_run_ops.cmake)
gw_add_gpu_test(NAME cli_gpu_run_roundtrip COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DDEVICE=cuda
  -DDATA=${GW_ARC_TRAINING_DATA} -DWORKDIR=${gw_cli_work}/cli_gpu_run_roundtrip -P ${gw_cli_dir}/gw_cli_roundtrip.cmake
  TIMEOUT 300)
# The cmake -P drivers cannot exit 77; they print GW_CLI_SKIPPED instead.
set_tests_properties(cli_gpu_run_ops cli_gpu_run_roundtrip PROPERTIES SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")

# The CLI's host code under the Valgrind gate: the CPU paths, and bad input, which must leak nothing either.
file(MAKE_DIRECTORY "${gw_cli_work}")
gw_add_valgrind_gate(NAME cli_check_cpu.memcheck COMMAND $<TARGET_FILE:gpuwitness> check --device cpu --size small
  LABELS host TIMEOUT 600)
gw_add_valgrind_gate(NAME cli_run_cpu.memcheck COMMAND $<TARGET_FILE:gpuwitness> run grid-d4 --op cmirror
  --device cpu -o ${gw_cli_work}/memcheck_run.json ${GW_ARC_TRAINING_DATA}/3631a71a.json LABELS host TIMEOUT 600)
gw_add_valgrind_gate(NAME cli_run_bad_input.memcheck COMMAND $<TARGET_FILE:gpuwitness> run grid-d4 --op rot90
  --device cpu --out-dir ${gw_cli_work}/memcheck_bad ${GW_ARC_TRAINING_DATA}/3631a71a.json ${gw_cli_dir}/bad_value.json
  LABELS host TIMEOUT 600 EXPECT_EXIT 1)
gw_add_valgrind_gate(NAME cli_run_truncated.memcheck COMMAND $<TARGET_FILE:gpuwitness> run grid-d4 --op rot90
  --device cpu -o ${gw_cli_work}/memcheck_truncated.json ${gw_cli_dir}/truncated.json LABELS host TIMEOUT 600
  EXPECT_EXIT 1)
file(MAKE_DIRECTORY "${gw_cli_work}/memcheck_bad")
foreach(t cli_check_cpu.memcheck cli_run_cpu.memcheck cli_run_bad_input.memcheck cli_run_truncated.memcheck)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:" "GW_DEVICE=unset:")
  endif()
endforeach()
