# SPDX-License-Identifier: MIT
# cmake -DGW=<gpuwitness> -DFIXTURE=<gw_focus_fixture> -DDEVICE=cpu|cuda -DWORKDIR=<dir> -P gw_cli_focus_run.cmake
# `gpuwitness run focus-stack` end to end: fixtures made by gw_focus_fixture (a known-focus stack as .npy
# [Z][Y][X], .npy [1][Z][Y][X] and multi-page TIFF; a random batch [2][4][23][31]), run through every input
# and output format, and every output compared value for value with what focus_stack_ref gave the fixture
# tool; the known-focus answer is checked on the CLI's idx independently of the reference. With DEVICE=cuda
# and no usable GPU the CLI exits 77 and this prints GW_CLI_SKIPPED (SKIP_REGULAR_EXPRESSION), after
# checking that nothing was written; under GW_REQUIRE_GPU=1 it exits 1 and this fails.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../cli/gw_cli_emulated.cmake)
foreach(v GW FIXTURE DEVICE WORKDIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "${v} is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}/out")
set(fx "${WORKDIR}/fx")
set(out "${WORKDIR}/out")

execute_process(COMMAND ${FIXTURE} gen ${fx} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gw_focus_fixture gen failed (${rc}):\n${o}${e}")
endif()

set(failures)

# run(<label> args...): one CLI call that must succeed; a skip (77 on cuda) ends the script.
function(run label)
  execute_process(COMMAND ${GW} run focus-stack --device ${DEVICE} ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  message("--- ${label}: exit ${rc}\n${stdout}${stderr}")
  gw_cli_emulated_check("${label}" "${stdout}")
  if(rc EQUAL 77 AND DEVICE MATCHES "^cuda")
    file(GLOB written "${out}/*")
    if(written)
      message(FATAL_ERROR "exit 77 must write nothing, but found ${written}")
    endif()
    message("GW_CLI_SKIPPED: no usable GPU for --device ${DEVICE}")
    set(skipped TRUE PARENT_SCOPE)
    return()
  endif()
  if(NOT rc EQUAL 0)
    set(failures ${failures} "${label}: exit ${rc}" PARENT_SCOPE)
  elseif(DEVICE MATCHES "^cuda" AND NOT stdout MATCHES "witness: launches=1 .*bit-exact with focus_stack_ref")
    set(failures ${failures} "${label}: no witness receipt and reference comparison on stdout" PARENT_SCOPE)
  endif()
endfunction()

# same(<a> <b>): the two files hold the same values.
function(same a b)
  execute_process(COMMAND ${FIXTURE} compare ${a} ${b} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  message("${o}${e}")
  if(NOT rc EQUAL 0)
    set(failures ${failures} "${a} differs from ${b}" PARENT_SCOPE)
  endif()
endfunction()

function(known idx)
  execute_process(COMMAND ${FIXTURE} known ${idx} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  message("${o}${e}")
  if(NOT rc EQUAL 0)
    set(failures ${failures} "${idx}: not the known focus" PARENT_SCOPE)
  endif()
endfunction()

# .npy in, .npy out, morphseq defaults
run("npy to npy" --out-ff ${out}/a_ff.npy --out-idx ${out}/a_idx.npy --out-best ${out}/a_best.npy ${fx}/stack.npy)
if(skipped)
  return()
endif()
same(${out}/a_ff.npy ${fx}/expect_ff.npy)
same(${out}/a_idx.npy ${fx}/expect_idx.npy)
same(${out}/a_best.npy ${fx}/expect_best.npy)
known(${out}/a_idx.npy)

# TIFF in, TIFF out: the same stack must give the same values
run("tiff to tiff" --out-ff ${out}/b_ff.tif --out-idx ${out}/b_idx.tif --out-best ${out}/b_best.tiff ${fx}/stack.tif)
same(${out}/b_ff.tif ${fx}/expect_ff.npy)
same(${out}/b_idx.tif ${fx}/expect_idx.npy)
same(${out}/b_best.tiff ${fx}/expect_best.npy)
known(${out}/b_idx.tif)

# crossed formats, and an upper-case extension
run("npy to tiff" --out-ff ${out}/c_ff.TIF ${fx}/stack.npy)
run("tiff to npy" --out-idx ${out}/d_idx.npy ${fx}/stack.tif)
same(${out}/c_ff.TIF ${fx}/expect_ff.npy)
same(${out}/d_idx.npy ${fx}/expect_idx.npy)

# a 4-D input keeps its batch axis in the outputs
run("npy [N][Z][Y][X]" --out-ff ${out}/e_ff.npy ${fx}/stack4.npy)
same(${out}/e_ff.npy ${fx}/expect_ff.npy)
file(READ ${out}/e_ff.npy e_head OFFSET 10 LIMIT 118)
if(NOT e_head MATCHES "'descr': '<u2', 'fortran_order': False, 'shape': \\(1, 67, 133\\)")
  list(APPEND failures "e_ff.npy: header is not uint16 (1, 67, 133): ${e_head}")
endif()
file(READ ${out}/a_ff.npy a_head OFFSET 10 LIMIT 118)
if(NOT a_head MATCHES "'shape': \\(67, 133\\)")
  list(APPEND failures "a_ff.npy: header is not (67, 133): ${a_head}")
endif()

# a batch of two random stacks at non-default parameters, all four outputs (focus per slice)
run("batch, ksize 5 lap reflect101 window 3" --ksize 5 --measure lap --border reflect101 --window 3
  --out-ff ${out}/f_ff.npy --out-idx ${out}/f_idx.tif --out-best ${out}/f_best.npy --out-focus ${out}/f_focus.npy
  ${fx}/batch.npy)
same(${out}/f_ff.npy ${fx}/expect_batch_ff.npy)
same(${out}/f_idx.tif ${fx}/expect_batch_idx.npy)
same(${out}/f_best.npy ${fx}/expect_batch_best.npy)
same(${out}/f_focus.npy ${fx}/expect_batch_focus.npy)
file(READ ${out}/f_focus.npy f_head OFFSET 10 LIMIT 118)
if(NOT f_head MATCHES "'descr': '<f4', 'fortran_order': False, 'shape': \\(2, 4, 23, 31\\)")
  list(APPEND failures "f_focus.npy: header is not float32 (2, 4, 23, 31): ${f_head}")
endif()

# the defaults spelled out give the same result as no flags, and an existing output is replaced
run("explicit defaults" --ksize 3 --measure log --border zero --window 1 --out-ff ${out}/a_ff.npy ${fx}/stack.npy)
same(${out}/a_ff.npy ${fx}/expect_ff.npy)

file(GLOB leftovers "${out}/.gw-*" "${out}/*.tmp*") # staged files are ".gw-<pid>-<n>.tmp" (lib/io gw_outfile)
if(leftovers)
  list(APPEND failures "temporary files left behind: ${leftovers}")
endif()
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "FAILED:\n  ${text}")
endif()
message("ok: run focus-stack on --device ${DEVICE}: every format and output equals focus_stack_ref's, idx is the "
        "known focus")
