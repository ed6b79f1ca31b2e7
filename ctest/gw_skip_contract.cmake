# cmake -DEXE=<gpu test executable> [-DARGS=<arguments;...>] -P gw_skip_contract.cmake
# Proves the exit-code contract on a machine without a GPU: the GPU executable must exit 77 (Skipped),
# and with GW_REQUIRE_GPU=1 it must exit 1 and name the missing GPU. On a machine with a GPU the contract
# cannot be observed this way; the test then reports itself skipped (SKIP_REGULAR_EXPRESSION).
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=GW_REQUIRE_GPU --unset=CRITERION_ALWAYS_SUCCEED ${EXE} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message("GPU present: ${EXE} ran its tests; the no-GPU contract is checked on machines without one")
  return()
endif()
if(NOT rc EQUAL 77)
  message(FATAL_ERROR "without a GPU ${EXE} must exit 77 (skip), got ${rc}:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env GW_REQUIRE_GPU=1 --unset=CRITERION_ALWAYS_SUCCEED ${EXE} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "with GW_REQUIRE_GPU=1 and no GPU ${EXE} must exit 1, got ${rc}:\n${out}")
endif()
if(NOT out MATCHES "no usable GPU: .*GW_REQUIRE_GPU=1")
  message(FATAL_ERROR "with GW_REQUIRE_GPU=1 the failure must name the missing GPU; output was:\n${out}")
endif()
message("contract holds: exit 77 without a GPU, exit 1 naming the missing GPU under GW_REQUIRE_GPU=1")
