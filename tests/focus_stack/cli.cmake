# SPDX-License-Identifier: MIT
# `gpuwitness run focus_stack` and focus_stack in check, included by tests/focus_stack/CMakeLists.txt (with CUDA).

# The fixtures (gw_focus_fixture.c): made at test time by a setup test, so no binary file is checked in; every
# test that reads them requires the fixture.
add_executable(gw_focus_fixture gw_focus_fixture.c)
target_link_libraries(gw_focus_fixture PRIVATE gw_npy gw_tiff focus_stack_synth focus_stack_ref PkgConfig::TIFF
  gw_warnings)
set(gw_focus_fx "${GW_CLI_WORK}/focus_fixtures")
add_test(NAME cli_focus_fixtures COMMAND gw_focus_fixture gen ${gw_focus_fx})
set_tests_properties(cli_focus_fixtures PROPERTIES LABELS host TIMEOUT 120 FIXTURES_SETUP cli_focus_fixtures)

# --help, and the run help and top-level help point to it.
gw_cli_test(NAME cli_focus_help RC 0
  STDOUT "usage: gpuwitness run focus_stack .*--ksize 3.5.7.*INPUT.*--out-focus F.*exit status"
  ARGS run focus_stack --help)
gw_cli_test(NAME cli_focus_help_in_run_help RC 0 STDOUT "gpuwitness run focus_stack .--device D." ARGS run --help)
gw_cli_test(NAME cli_focus_help_in_top_help RC 0 STDOUT "kernels: .*focus_stack" ARGS --help)
gw_cli_test(NAME cli_focus_help_command RC 0 STDOUT "usage: gpuwitness run focus_stack" ARGS run focus_stack -h)

# Bad flags and outputs: exit 2, the flag and the rule named (parameter rules in focus_stack_status_str's
# words), nothing read or written: the input named here does not even exist.
foreach(case
    "ksize|--ksize 4: bad ksize: must be 3, 5 or 7|--ksize;4;--out-ff;ff.npy;stack.npy"
    "ksize_text|--ksize 'three': not an integer .bad ksize: must be 3, 5 or 7.|--ksize;three;--out-ff;ff.npy;stack.npy"
    "window_even|--window 4: bad window: must be 0, 1 or an odd number from 3 to 7567|--window;4;--out-ff;ff.npy;stack.npy"
    "window_large|--window 7569: bad window|--window=7569;--out-ff;ff.npy;stack.npy"
    "window_negative|--window -3: bad window|--window;-3;--out-ff;ff.npy;stack.npy"
    "window_text|--window '5x': not an integer|--window;5x;--out-ff;ff.npy;stack.npy"
    "measure|--measure 'laplace': must be log or lap|--measure;laplace;--out-ff;ff.npy;stack.npy"
    "border|--border 'reflect': must be zero, replicate or reflect101|--border;reflect;--out-ff;ff.npy;stack.npy"
    "unknown_option|unknown option '--size': options are --device, --ksize|--size;3;--out-ff;ff.npy;stack.npy"
    "missing_value|option '--ksize' needs a value|--out-ff;ff.npy;stack.npy;--ksize"
    "no_output|no output asked for: give at least one of --out-ff, --out-idx, --out-best, --out-focus|stack.npy"
    "extension|--out-ff 'ff.png': unknown extension: the name must end in .npy, .tif or .tiff|--out-ff;ff.png;stack.npy"
    "missing_input|missing INPUT: a .npy or TIFF Z stack|--out-idx;idx.npy;--out-ff;ff.npy"
    "two_inputs|one INPUT at a time: got 'stack.npy' and 'other.npy'|--out-ff;ff.npy;stack.npy;other.npy"
    "same_output|--out-ff 'x.npy' and --out-best 'x.npy' are the same file: each output needs its own file|--out-ff;x.npy;--out-best;x.npy;stack.npy"
    "same_output_other_spelling|--out-idx 'x.npy' and --out-focus './x.npy' are the same file|--out-idx;x.npy;--out-focus;./x.npy;stack.npy"
    "output_is_input|--out-idx 'stack.npy' is the input file 'stack.npy': refusing to overwrite an input|--out-idx;stack.npy;stack.npy"
    "out_dir_missing|--out-ff 'missing/ff.npy': directory 'missing' does not exist|--out-ff;missing/ff.npy;stack.npy"
    "bad_device|--device 'gpu': must be one of cuda, cuda:N, cpu, auto|--device;gpu;--out-ff;ff.npy;stack.npy")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  list(SUBLIST parts 2 -1 args)
  gw_cli_test(NAME cli_focus_usage_${name} RC 2 WORKDIR FILES none STDERR "${message}" ARGS run focus_stack ${args})
endforeach()

# Malformed inputs: exit 1, the file and the rule named, nothing written (the directory holds only the
# copied input afterwards).
set(gw_focus_bad "${gw_focus_fx}/bad")
foreach(case
    "bad_magic.npy|bad_magic.npy: neither a .npy file .*nor a TIFF"
    "not_a_stack.dat|not_a_stack.dat: neither a .npy file"
    "fortran.npy|fortran.npy: fortran_order is True: only C-order arrays are supported"
    "float64.npy|float64.npy: dtype '<f8' .float64.: expected '<u2' .uint16."
    "rank2.npy|rank2.npy: shape .3, 4. has rank 2: expected rank 3 or 4 ..Z..Y..X. or .N..Z..Y..X.."
    "truncated.npy|truncated.npy: truncated: the header describes 48 data bytes .shape .2, 3, 4., uint16., the file holds 47"
    "trailing.npy|trailing.npy: 2 trailing bytes after the data"
    "z256.npy|z256.npy: N=1 Z=256 Y=2 X=2: bad size: .*z at most 255"
    "u8.tif|u8.tif: page 0: 8 bits per sample: expected 16 .uint16 grayscale."
    "float.tif|float.tif: page 0: 32 bits per sample: expected 16"
    "rgb.tif|rgb.tif: page 0: 3 samples per pixel .RGB.: expected 1 .grayscale."
    "mismatched.tif|mismatched.tif: page 2 is 6x4 .width x height., page 0 is 5x4: all pages must have the same size")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 file)
  list(GET parts 1 message)
  string(REGEX REPLACE "[.]" "_" name "${file}")
  gw_cli_test(NAME cli_focus_bad_input_${name} RC 1 WORKDIR COPY ${gw_focus_bad}/${file} FILES ${file}
    STDERR "${message}.*nothing written"
    ARGS run focus_stack --device cpu --out-ff ff.npy --out-idx idx.tif ${file})
  set_tests_properties(cli_focus_bad_input_${name} PROPERTIES FIXTURES_REQUIRED cli_focus_fixtures)
endforeach()
gw_cli_test(NAME cli_focus_bad_input_missing_file RC 1 WORKDIR FILES none
  STDERR "nope.npy: cannot open: No such file or directory; nothing written"
  ARGS run focus_stack --device cpu --out-ff ff.npy nope.npy)

# The device policy (the no-GPU contract is only observable without a usable GPU; elsewhere it skips).
gw_cli_test(NAME cli_focus_cuda_no_gpu_skips RC 77 SKIP_RC 0 WORKDIR COPY ${gw_focus_fx}/stack.npy FILES stack.npy
  STDERR "no usable GPU for --device cuda: .*nothing written .exit 77"
  ARGS run focus_stack --device cuda --out-ff ff.npy stack.npy)
gw_cli_test(NAME cli_focus_require_gpu_fails RC 1 SKIP_RC 0 ENV GW_REQUIRE_GPU=1 WORKDIR
  COPY ${gw_focus_fx}/stack.npy FILES stack.npy STDERR "no usable GPU: .*GW_REQUIRE_GPU=1"
  ARGS run focus_stack --out-ff ff.npy stack.npy)
gw_cli_test(NAME cli_focus_auto_falls_back_loudly RC 0 SKIP_STDOUT "device: +cuda:" WORKDIR
  COPY ${gw_focus_fx}/stack.npy FILES ff.npy,stack.npy
  STDERR "no usable GPU: .+\\(cuda[A-Za-z]+\\); running focus_stack_ref on the CPU instead"
  STDOUT "N=1 Z=5 67x133.*device: +cpu .focus_stack_ref, no usable GPU.*wrote ff.npy"
  ARGS run focus_stack --out-ff ff.npy stack.npy)
gw_cli_test(NAME cli_focus_options_before_kernel RC 0 WORKDIR COPY ${gw_focus_fx}/stack.tif FILES idx.npy,stack.tif
  STDOUT "stack.tif .TIFF. N=1 Z=5 67x133.*ksize 5, lap, replicate border, no window.*wrote idx.npy"
  ARGS run --device cpu --ksize 5 focus-stack --measure=lap --border replicate --out-idx idx.npy stack.tif)
foreach(t cli_focus_cuda_no_gpu_skips cli_focus_require_gpu_fails cli_focus_auto_falls_back_loudly
          cli_focus_options_before_kernel)
  set_tests_properties(${t} PROPERTIES FIXTURES_REQUIRED cli_focus_fixtures)
endforeach()

# End to end on the CPU: every format, every output, against focus_stack_ref run by the fixture tool, and the
# known focus. The same script on the GPU is the gpu test below.
add_test(NAME cli_focus_run_cpu COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness>
  -DFIXTURE=$<TARGET_FILE:gw_focus_fixture> -DDEVICE=cpu -DWORKDIR=${GW_CLI_WORK}/cli_focus_run_cpu
  -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_focus_run.cmake)
set_tests_properties(cli_focus_run_cpu PROPERTIES LABELS host TIMEOUT 300
  ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:")

# check and doctor run focus_stack too (the CPU part here; the GPU part in cli_gpu_check / cli_gpu_doctor).
gw_cli_test(NAME cli_focus_check_cpu_small RC 0 TIMEOUT 300
  STDOUT "focus_stack .morphseq defaults, known-focus textured stack.*N=2 Z=5 136x130.*identical bytes.*known: +idx is the in-focus slice on all [1-9][0-9]* textured pixels and 0 on all [1-9][0-9]* flat pixels.*focus_stack .ksize 7 LoG, reflect101, window 9.*identical bytes.*check: ok on the CPU"
  ARGS check --device cpu --size small)

# GPU: exit 77 (Skipped) without a usable GPU, a failure under GW_REQUIRE_GPU=1 then.
gw_add_gpu_test(NAME cli_gpu_focus_run COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness>
  -DFIXTURE=$<TARGET_FILE:gw_focus_fixture> -DDEVICE=cuda -DWORKDIR=${GW_CLI_WORK}/cli_gpu_focus_run
  -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_focus_run.cmake TIMEOUT 300)
set_tests_properties(cli_gpu_focus_run PROPERTIES SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")
gw_add_gpu_test(NAME cli_gpu_focus_check_small COMMAND $<TARGET_FILE:gpuwitness> check --device cuda --size small
  TIMEOUT 300)

# The CLI's focus_stack host code under the Valgrind gate: a TIFF in, both formats out, and bad inputs.
set(gw_focus_vg "${GW_CLI_WORK}/memcheck_focus")
file(MAKE_DIRECTORY "${gw_focus_vg}")
gw_add_valgrind_gate(NAME cli_focus_run_cpu.memcheck COMMAND $<TARGET_FILE:gpuwitness> run focus_stack --device cpu
  --out-ff ${gw_focus_vg}/ff.tif --out-idx ${gw_focus_vg}/idx.npy --out-best ${gw_focus_vg}/best.npy
  --out-focus ${gw_focus_vg}/focus.tif ${gw_focus_fx}/stack.tif LABELS host TIMEOUT 600)
gw_add_valgrind_gate(NAME cli_focus_bad_tiff.memcheck COMMAND $<TARGET_FILE:gpuwitness> run focus_stack --device cpu
  --out-ff ${gw_focus_vg}/bad_ff.npy ${gw_focus_bad}/mismatched.tif LABELS host TIMEOUT 600 EXPECT_EXIT 1)
gw_add_valgrind_gate(NAME cli_focus_bad_npy.memcheck COMMAND $<TARGET_FILE:gpuwitness> run focus_stack --device cpu
  --out-ff ${gw_focus_vg}/bad_ff.npy ${gw_focus_bad}/truncated.npy LABELS host TIMEOUT 600 EXPECT_EXIT 1)
gw_add_valgrind_gate(NAME cli_focus_bad_flag.memcheck COMMAND $<TARGET_FILE:gpuwitness> run focus_stack --device cpu
  --ksize 4 --out-ff ${gw_focus_vg}/bad_ff.npy ${gw_focus_fx}/stack.npy LABELS host TIMEOUT 600 EXPECT_EXIT 2)
foreach(t cli_focus_run_cpu.memcheck cli_focus_bad_tiff.memcheck cli_focus_bad_npy.memcheck
          cli_focus_bad_flag.memcheck)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:" "GW_DEVICE=unset:")
    set_tests_properties(${t} PROPERTIES FIXTURES_REQUIRED cli_focus_fixtures)
  endif()
endforeach()
