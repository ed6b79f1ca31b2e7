# SPDX-License-Identifier: MIT
# `gpuwitness run grid_objects`, included by tests/grid_objects/CMakeLists.txt where CUDA is (the CLI needs it):
#   cli_run_grid_objects_cpu (host)          3 variants and both tie rules on objects_3x3.json, against outputs
#                                            worked out by hand (gw_cli_run_objects.cmake)
#   cli_gpu_run_grid_objects (gpu)           the same on the GPU, with the witness receipt (skips without a GPU)
#   cli_*grid_objects* (host)                help, bad usage (exit 2 naming the argument and the rule, nothing
#                                            written), the no-GPU contract, auto's loud fallback
#   cli_run_grid_objects_cpu.memcheck        the CPU path under the Valgrind gate
set(gw_go_task "${CMAKE_CURRENT_SOURCE_DIR}/objects_3x3.json")

foreach(device cpu cuda)
  set(name cli_run_grid_objects_cpu)
  if(device STREQUAL "cuda")
    set(name cli_gpu_run_grid_objects)
  endif()
  set(cmd ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DDEVICE=${device} -DINPUT=${gw_go_task}
    -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR} -DWORKDIR=${GW_CLI_WORK}/${name}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_run_objects.cmake)
  if(device STREQUAL "cpu")
    add_test(NAME ${name} COMMAND ${cmd})
    set_tests_properties(${name} PROPERTIES LABELS host TIMEOUT 120)
  else()
    gw_add_gpu_test(NAME ${name} COMMAND ${cmd} TIMEOUT 300)
    set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")
  endif()
endforeach()

gw_cli_test(NAME cli_help_run_grid_objects RC 0
  STDOUT "usage: gpuwitness run grid_objects --variant T .--bg-tie arc-dsl\\|smallest.*4\\*univalued \\+ 2\\*diagonal"
  ARGS run grid_objects --help)
gw_cli_test(NAME cli_run_grid_objects_hyphenated_name_is_accepted RC 0
  STDOUT "usage: gpuwitness run grid_objects --variant T" ARGS run grid-objects --help)
gw_cli_test(NAME cli_run_grid_objects_listed_in_run_help RC 0
  STDOUT "gpuwitness run grid_objects --variant T" ARGS run --help)
foreach(case "too_large|8|--variant '8': must be an integer 0..7 \\(arc-dsl's o_g numbering"
             "a_name|univalued|--variant 'univalued': must be an integer 0..7"
             "negative|-1|--variant '-1': must be an integer 0..7"
             "leading_space| 3|--variant ' 3': must be an integer 0..7")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 id)
  list(GET parts 1 value)
  list(GET parts 2 message)
  gw_cli_test(NAME cli_run_grid_objects_bad_variant_${id} RC 2 WORKDIR FILES none STDERR "${message}"
    ARGS run grid_objects --variant=${value} --device cpu -o out.json ${gw_go_task})
endforeach()
gw_cli_test(NAME cli_run_grid_objects_missing_variant RC 2 WORKDIR FILES none
  STDERR "grid_objects: missing --variant: it must be an integer 0..7" ARGS run grid_objects --device cpu -o out.json
  ${gw_go_task})
gw_cli_test(NAME cli_run_grid_objects_bad_bg_tie RC 2 WORKDIR FILES none
  STDERR "--bg-tie 'largest': must be arc-dsl or smallest"
  ARGS run grid_objects --variant 1 --bg-tie largest --device cpu -o out.json ${gw_go_task})
gw_cli_test(NAME cli_run_grid_objects_unknown_option RC 2 WORKDIR FILES none
  STDERR "unknown option '--op': options are --variant, --bg-tie, --device, --out-dir, -o, --help"
  ARGS run grid_objects --op rot90 -o out.json ${gw_go_task})
gw_cli_test(NAME cli_run_grid_objects_missing_file RC 1 WORKDIR FILES none
  STDERR "nope.json: cannot open: No such file or directory.*nothing written"
  ARGS run grid_objects --variant 0 --device cpu -o out.json nope.json)
# One bad file among good ones: nothing at all is written.
gw_cli_test(NAME cli_run_grid_objects_bad_value_writes_nothing RC 1 WORKDIR
  COPY ${PROJECT_SOURCE_DIR}/tests/grid_d4/bad_value.json MKDIRS out FILES bad_value.json,out
  STDERR "bad_value.json: train\\[1\\].output row 1 column 1: value 12 is outside 0..9"
  ARGS run grid_objects --variant 5 --device cpu --out-dir out/ ${gw_go_task} bad_value.json)
gw_cli_test(NAME cli_run_grid_objects_out_dir RC 0 WORKDIR MKDIRS out FILES out,out/objects_3x3.json
  STDOUT "wrote out/objects_3x3.json" ARGS run grid_objects --variant 7 --device cpu --out-dir out ${gw_go_task})
gw_cli_test(NAME cli_run_grid_objects_cuda_no_gpu_skips RC 77 SKIP_RC 0 WORKDIR FILES none
  STDERR "no usable GPU for --device cuda: .*nothing written"
  ARGS run grid_objects --variant 3 --device cuda -o out.json ${gw_go_task})
gw_cli_test(NAME cli_run_grid_objects_auto_falls_back_loudly RC 0 SKIP_STDOUT "on cuda:" WORKDIR FILES out.json
  STDERR "no usable GPU: .+\\(cuda[A-Za-z]+\\); running grid_objects_ref on the CPU instead"
  ARGS run grid_objects --variant 3 -o out.json ${gw_go_task})

# The CPU path leaks nothing (the Valgrind gate): every variant's code path over the hand-made task and
# grid_d4's 30x30 and ragged grids.
file(MAKE_DIRECTORY "${GW_CLI_WORK}/memcheck_grid_objects")
gw_add_valgrind_gate(NAME cli_run_grid_objects_cpu.memcheck COMMAND $<TARGET_FILE:gpuwitness> run grid_objects
  --variant 7 --bg-tie smallest --device cpu --out-dir ${GW_CLI_WORK}/memcheck_grid_objects ${gw_go_task}
  ${PROJECT_SOURCE_DIR}/tests/grid_d4/d4_30x30.json LABELS host TIMEOUT 600)
if(TEST cli_run_grid_objects_cpu.memcheck)
  set_property(TEST cli_run_grid_objects_cpu.memcheck APPEND PROPERTY ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:"
    "GW_DEVICE=unset:")
endif()
