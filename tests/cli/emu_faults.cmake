# SPDX-License-Identifier: MIT
# The CLI's GPU glue under planted faults (docs/emu.md, "Planted faults"), label emu: gpuwitness-emu with
# GW_EMU_FAULT set, so that the emulated device fails one call the way a GPU can. Each kind of GPU failure branch of
# tools/gpuwitness/kernels/<k>/*_gpu.c and *_host.c (once per kernel) must give its message, exit 1 and
# write nothing: an allocation that fails (malloc:N), a launch that faults (launch:N), a launch that runs half
# of its blocks (partial:N: the witness must say so), a result that arrives changed (copy:N: the comparison
# with the reference must say so; focus_stack's own consistency check, an index that is no slice, comes first).
# N counts the process's calls of that kind from 1, so each case names the call it hits (its kernel, or the copy
# of the output). The bench's timing loops (gw_bench_gpu.c) the same, with 2 repetitions: a half repetition that
# is not the last one can only be seen by the witness.
# gw_fault_case(CASE var...): CASE's |-separated fields, in order, into the variables named (a missing one: "").
function(gw_fault_case case)
  string(REPLACE "|" ";" fields "${case}")
  list(LENGTH fields count)
  set(i 0)
  foreach(var IN LISTS ARGN)
    set(value "")
    if(i LESS count)
      list(GET fields ${i} value)
    endif()
    set(${var} "${value}" PARENT_SCOPE)
    math(EXPR i "${i} + 1")
  endforeach()
endfunction()

set(gw_d4_task ${PROJECT_SOURCE_DIR}/tests/grid_d4/d4_2x3.json)
set(gw_go_task ${PROJECT_SOURCE_DIR}/tests/grid_objects/objects_3x3.json)
set(gw_fs_stack ${GW_CLI_WORK}/focus_fixtures/stack.npy) # made by cli_focus_fixtures (tests/focus_stack/cli.cmake)

# name|fault|stderr words|stdout words (regexes, the last optional; no semicolon, which would split the list)
set(gw_fault_cases
  "grid_d4_malloc|malloc:1|cudaMalloc.in. failed: out of memory .cudaErrorMemoryAllocation.. nothing written"
  "grid_d4_launch|launch:2|kernel grid_d4_transform_kernel: planted fault.*grid_d4 on the stream .cudaStreamSynchronize. failed: unspecified launch failure.*nothing written"
  "grid_d4_partial|partial:2|runs 0 of its 1 blocks.*witness violation: no GPU code ran: 0 launches recorded.*nothing written"
  "grid_d4_copy|copy:3|the GPU result differs from grid_d4_ref. nothing written"
  "grid_objects_malloc|malloc:1|cudaMalloc.in. failed: out of memory .cudaErrorMemoryAllocation.. nothing written"
  "grid_objects_launch|launch:2|kernel grid_objects_label_kernel: planted fault.*grid_objects on the stream .cudaStreamSynchronize. failed: unspecified launch failure.*nothing written"
  "grid_objects_partial|partial:2|runs 1 of its 3 blocks.*witness violation: .*the witness does not prove the GPU computed this. nothing written"
  "grid_objects_copy|copy:3|the GPU result differs from grid_objects_ref. nothing written"
  "focus_stack_malloc|malloc:1|cudaMalloc.in. failed: out of memory .cudaErrorMemoryAllocation.. nothing written"
  "focus_stack_launch|launch:1|kernel focus_stack_fast_kernel: planted fault.*focus_stack on the stream .cudaStreamSynchronize. failed: unspecified launch failure.*nothing written"
  "focus_stack_partial|partial:1|runs 4 of its 9 blocks.*witness violation: partial execution: 4200 of 8911 items produced by the device code.*nothing written"
  "focus_stack_copy|copy:2|the GPU result is inconsistent: idx 255 at .n=0, y=0, x=0. is not a slice.*nothing written"
  "ex2d_malloc|malloc:1|cudaMalloc.image. failed: out of memory .cudaErrorMemoryAllocation.. nothing written"
  "ex2d_launch|launch:1|kernel ex2d_spots_kernel: planted fault.*ex2d_patches_launch on the stream .cudaStreamSynchronize. failed: unspecified launch failure.*nothing written"
  "ex2d_partial|partial:1|runs 42 of its 84 blocks.*the witness does not prove the GPU computed this. nothing written|K1 spots: partial execution: 42 of 84 items produced by the device code"
  "ex2d_copy|copy:3|the GPU result differs from ex2d_ref: 1 flux mismatch.*nothing written")
foreach(case IN LISTS gw_fault_cases)
  gw_fault_case("${case}" name fault words stdout)
  if(NOT stdout)
    set(stdout ".")
  endif()
  set(test cli_emu_fault_run_${name})
  if(name MATCHES "^grid_d4")
    gw_cli_test(NAME ${test} PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=${fault} STDERR "${words}"
      STDOUT "${stdout}"
      WORKDIR COPY ${gw_d4_task} FILES d4_2x3.json UNCHANGED ${gw_d4_task}
      ARGS run grid_d4 --op rot90 --device cuda -o out.json d4_2x3.json)
  elseif(name MATCHES "^grid_objects")
    gw_cli_test(NAME ${test} PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=${fault} STDERR "${words}"
      STDOUT "${stdout}"
      WORKDIR COPY ${gw_go_task} FILES objects_3x3.json UNCHANGED ${gw_go_task}
      ARGS run grid_objects --variant 0 --device cuda -o out.json objects_3x3.json)
  elseif(name MATCHES "^focus_stack")
    gw_cli_test(NAME ${test} PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=${fault} STDERR "${words}"
      STDOUT "${stdout}"
      WORKDIR COPY ${gw_fs_stack} FILES stack.npy UNCHANGED ${gw_fs_stack}
      ARGS run focus_stack --device cuda --out-ff ff.npy --out-idx idx.npy stack.npy)
    set_tests_properties(${test} PROPERTIES FIXTURES_REQUIRED cli_focus_fixtures)
  else()
    gw_cli_test(NAME ${test} PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=${fault} STDERR "${words}"
      STDOUT "${stdout}"
      WORKDIR MKDIRS out FILES out ARGS run ex2d --device cuda --tier S --waves 620:10 --out-dir out)
  endif()
endforeach()

# check: its GPU path (the same host code, called twice with two poisons) under a half grid_d4 launch.
gw_cli_test(NAME cli_emu_fault_check_partial PROGRAM gpuwitness-emu RC 1 LABELS emu TIMEOUT 300
  ENV GW_EMU_FAULT=partial:2 STDERR "kernel grid_d4_transform_kernel runs 16 of its 32 blocks"
  STDOUT "result:   FAILED: call 1 .outputs poisoned with 0xFF. differs from grid_d4_ref.*check: FAILED"
  ARGS check --size small)

# check's GPU path of each kernel (tools/gpuwitness/kernels/<k>/<k>_check.c) under a launch fault on its first
# launch, which is sticky: its call names it once (not again as the frees' error), and every later run fails too;
# and under a half launch, which the comparison and the witness both name. Launches of check --size small:
# grid_d4 1-8 (validation, transform), focus_stack 9-12, ex2d_patch 13-26, grid_objects 27-.
# name|fault|stdout words
set(gw_check_fault_cases
  "launch_grid_d4|launch:2|grid_d4 .*result:   FAILED: call 1: grid_d4 on the stream .cudaStreamSynchronize. failed: unspecified launch failure"
  "launch_focus_stack|launch:9|focus_stack .*result:   FAILED: call 1: focus_stack on the stream .cudaStreamSynchronize. failed: unspecified launch failure"
  "launch_ex2d|launch:13|ex2d_patch .*result:   FAILED: call 1: ex2d_patches_launch on the stream .cudaStreamSynchronize. failed: unspecified launch failure"
  "launch_grid_objects|launch:27|grid_objects .*result:   FAILED: call 1: grid_objects on the stream .cudaStreamSynchronize. failed: unspecified launch failure"
  "partial_focus_stack|partial:9|result:   FAILED: call 1 .all outputs, outputs poisoned with 0xFF. differs from focus_stack_ref.*call 1: the witness does not prove GPU execution"
  "partial_ex2d|partial:13|result:   FAILED: call 1 .1 batch.es. of up to 1. differs from ex2d_ref: 250 flux mismatch.*call 1: the witness does not prove GPU execution"
  "partial_grid_objects|partial:28|result:   FAILED: call 1: 128499 output entries still hold the poison 0xFE.*call 1: the witness does not prove GPU execution")
foreach(case IN LISTS gw_check_fault_cases)
  gw_fault_case("${case}" name fault words)
  gw_cli_test(NAME cli_emu_fault_check_${name} PROGRAM gpuwitness-emu RC 1 LABELS emu TIMEOUT 300
    ENV GW_EMU_FAULT=${fault} STDOUT "${words}.*check: FAILED" REJECT_STDOUT "cudaFree failed" ARGS check --size small)
endforeach()

# doctor's smoke calls (the same <k>_check.c): a launch fault in grid_d4's transform, named once.
gw_cli_test(NAME cli_emu_fault_doctor_launch PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=launch:2
  STDOUT "grid_d4: +FAILED: grid_d4 on the stream .cudaStreamSynchronize. failed: unspecified launch failure.*\
doctor: FAILED" REJECT_STDOUT "cudaFree failed" ARGS doctor)

# bench's timing loops, grid_d4 with 2 repetitions: launches 1-6 are the end-to-end loop's warm-up calls (a
# validation kernel and the transform each), 7-10 its repetitions, 11-16 the kernel loop's warm-up, 17-20 its
# repetitions; a half repetition that is not the last is invisible to the output check, and the witness says it.
# name|fault|stdout words
set(gw_bench_fault_cases
  "e2e_partial|partial:8|end-to-end loop: the witness does not prove 2 GPU runs: partial execution"
  "kernel_partial|partial:18|kernel loop: the witness does not prove 2 GPU runs: partial execution"
  "warmup_launch|launch:12|kernel loop: the warm-up calls .cudaStreamSynchronize. failed: unspecified launch failure"
  "output_copy|copy:20|the output after the timed loop differs from grid_d4_ref")
foreach(case IN LISTS gw_bench_fault_cases)
  gw_fault_case("${case}" name fault words)
  gw_cli_test(NAME cli_emu_fault_bench_${name} PROGRAM gpuwitness-emu RC 1 LABELS emu TIMEOUT 300
    ENV GW_EMU_FAULT=${fault} STDOUT "${words}.*bench: FAILED" WORKDIR FILES none
    ARGS bench grid_d4 --size smoke --reps 2 --cpu-reps 1)
endforeach()
# The other kernels' bench verification (<k>_bench.c): a half launch in the first repetition of the kernel loop.
# focus_stack: launches 1-5 are its end-to-end loop (3 warm-ups, 2 repetitions), 6-8 the kernel
# loop's warm-ups, 9 its first repetition. ex2d_patch: 1-5 the FP64 rate reference, then 7 kernels a call: 6-40 the
# end-to-end loop, 41-61 the kernel loop's warm-ups, 62 the first repetition's K1 (spots).
gw_cli_test(NAME cli_emu_fault_bench_focus_stack_kernel_partial PROGRAM gpuwitness-emu RC 1 LABELS emu TIMEOUT 300
  ENV GW_EMU_FAULT=partial:9 WORKDIR FILES none
  STDOUT "kernel loop: the witness does not prove 2 GPU runs: partial execution: 22140 of 33800 items.*bench: FAILED"
  ARGS bench focus_stack --size smoke --reps 2 --cpu-reps 1)
gw_cli_test(NAME cli_emu_fault_bench_ex2d_kernel_partial PROGRAM gpuwitness-emu RC 1 LABELS emu TIMEOUT 300
  ENV GW_EMU_FAULT=partial:62 WORKDIR FILES none
  STDOUT "kernel loop: the K1 witness does not prove 2 GPU runs: partial execution: 126 of 168 items.*bench: FAILED"
  ARGS bench ex2d_patch --size smoke --reps 2 --cpu-reps 1)
gw_cli_test(NAME cli_emu_fault_bench_malloc PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=malloc:1
  STDERR "cudaMalloc.L2 flush buffer. failed: out of memory" WORKDIR FILES none
  ARGS bench grid_d4 --size smoke --reps 2 --cpu-reps 1)
# trace's work: a half transform in its second iteration (launch 4; each iteration launches the validation
# kernel, then the transform): the comparison, which comes before the witness, says so.
gw_cli_test(NAME cli_emu_fault_trace_partial PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=partial:4
  WORKDIR FILES none STDERR "iteration 1: differs from grid_d4_ref: .*still hold the poison 0xFF: the call did not \
write them"
  STDOUT "trace: FAILED .see stderr.. t.json not written" ARGS trace grid_d4 --out t.json)
# An allocation of check's and of bench's own (the first pinned buffer of grid_d4's cases; allocations 1-12 are
# the L2 flush buffer, the roofline's two and the shared device buffers): each named, nothing leaked. Every
# allocation of both was failed in turn once by hand (docs/emu.md, "Planted faults").
gw_cli_test(NAME cli_emu_fault_check_malloc PROGRAM gpuwitness-emu RC 1 LABELS emu TIMEOUT 300
  ENV GW_EMU_FAULT=malloc:1
  STDOUT "result: +FAILED: cudaMalloc.in. failed: out of memory .cudaErrorMemoryAllocation..*check: FAILED"
  ARGS check --size small)
gw_cli_test(NAME cli_emu_fault_bench_pinned PROGRAM gpuwitness-emu RC 1 LABELS emu TIMEOUT 300
  ENV GW_EMU_FAULT=malloc:13
  STDOUT "FAILED: +cudaMallocHost.in. failed: out of memory .cudaErrorMemoryAllocation..*bench: FAILED" WORKDIR
  FILES none ARGS bench grid_d4 --size smoke --reps 2 --cpu-reps 1)
# A misspelt fault fails every call, loudly, rather than running without one.
gw_cli_test(NAME cli_emu_fault_misspelt PROGRAM gpuwitness-emu RC 1 LABELS emu ENV GW_EMU_FAULT=malloc:0
  STDERR "GW_EMU_FAULT 'malloc:0': must be malloc:N, launch:N, partial:N or copy:N" WORKDIR COPY ${gw_d4_task}
  FILES d4_2x3.json ARGS run grid_d4 --op rot90 --device cuda -o out.json d4_2x3.json)

# Every device and pinned allocation of each kernel's `run` (and of trace's work), failed in turn (tests/cli/gw_emu_malloc_sweep.sh):
# each must give exit 1, the command's own "out of memory" message, nothing written and nothing leaked, under
# Valgrind memcheck (host memory, streams and events) and the emulator's count of device memory never freed.
set(gw_sweep_vg "${GW_VALGRIND}")
if(NOT GW_VALGRIND)
  set(gw_sweep_vg -) # the emulator's own count still applies; Valgrind is a CI dependency (README)
endif()
# name|inputs|directories|arguments (comma-separated)
set(gw_sweep_cases
  "grid_d4|${gw_d4_task}|-|run,grid_d4,--op,rot90,--device,cuda,-o,out.json,d4_2x3.json"
  "grid_objects|${gw_go_task}|-|run,grid_objects,--variant,0,--device,cuda,-o,out.json,objects_3x3.json"
  "focus_stack|${gw_fs_stack}|-|run,focus_stack,--device,cuda,--out-ff,ff.npy,--out-idx,idx.npy,stack.npy"
  "ex2d|-|out|run,ex2d,--device,cuda,--tier,S,--waves,620:10,--out-dir,out"
  "trace_grid_d4|-|-|trace,grid_d4,--out,t.json")
foreach(case IN LISTS gw_sweep_cases)
  gw_fault_case("${case}" name inputs dirs args)
  string(REPLACE "," ";" args "${args}")
  add_test(NAME cli_emu_malloc_sweep_run_${name} COMMAND ${GW_BASH} ${CMAKE_CURRENT_LIST_DIR}/gw_emu_malloc_sweep.sh
    ${GW_CLI_WORK}/cli_emu_malloc_sweep_run_${name} ${inputs} ${dirs} ${gw_sweep_vg} -- $<TARGET_FILE:gpuwitness-emu>
    ${args})
  set_tests_properties(cli_emu_malloc_sweep_run_${name} PROPERTIES LABELS emu TIMEOUT 300
    ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:;GW_EMU_FAULT=unset:")
  if(name MATCHES "^trace") # the fault-free run skips: the work ran, and CUPTI has nothing to record
    set_tests_properties(cli_emu_malloc_sweep_run_${name} PROPERTIES ENVIRONMENT GW_SWEEP_PASS_RC=77)
  endif()
  if(name STREQUAL "focus_stack")
    set_tests_properties(cli_emu_malloc_sweep_run_${name} PROPERTIES FIXTURES_REQUIRED cli_focus_fixtures)
  endif()
endforeach()
