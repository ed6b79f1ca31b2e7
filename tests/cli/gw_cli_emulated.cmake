# SPDX-License-Identifier: MIT
# gw_cli_emulated_check(<what> <stdout>), for the cmake -P drivers of the CLI's run tests: in a driver given
# -DEMULATED=1 (gpuwitness-emu, label emu: docs/emu.md, "The CLI") the command's stdout must say that the device
# was emulated, and no line of it may stand for a GPU (a "gpu:" line of times, "on the GPU"). Nothing otherwise.
function(gw_cli_emulated_check what text)
  if(NOT EMULATED)
    return()
  endif()
  if(NOT text MATCHES "\\[emulated on the CPU, not a GPU\\]")
    message(FATAL_ERROR "${what}: gpuwitness-emu's stdout never says that the device was emulated")
  endif()
  if(text MATCHES "(^|\n)  gpu: " OR text MATCHES "on the GPU")
    message(FATAL_ERROR "${what}: a line of gpuwitness-emu's stdout reports the emulated device as a GPU")
  endif()
endfunction()
