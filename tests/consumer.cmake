# Downstream use and runner plumbing, included by tests/CMakeLists.txt (tests/consumer/gw_consumer.cmake):
#   consumer_copied (consumer)       a project that copied grid_d4, gw_witness.h and GPUWitness.cmake and
#                                    guards its own kernel (docs/guard-your-kernel.md), built with CMake
#   consumer_nvcc (consumer)         grid_d4 built with the nvcc line of its header, verbatim
#   consumer_installed (consumer)    find_package(gpuwitness) against `cmake --install` of this build
#   ctest_resource_groups (host)     ctest --resource-spec-file hands GPU ids to GPU tests; gw_device reads them
if(NOT TARGET grid_d4)
  return() # no CUDA compiler: no kernels to copy or install
endif()

# The consumers build for this project's architectures (a list cannot cross add_test: commas); the nvcc
# route uses the -arch of grid_d4.h's line.
string(REPLACE ";" "," gw_consumer_archs "${CMAKE_CUDA_ARCHITECTURES}")
list(GET CUDAToolkit_INCLUDE_DIRS 0 gw_consumer_cuda_include)
foreach(mode copied nvcc installed)
  add_test(NAME consumer_${mode} COMMAND ${CMAKE_COMMAND} -DMODE=${mode} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer/${mode} -DBUILD_DIR=${PROJECT_BINARY_DIR}
    "-DGENERATOR=${CMAKE_GENERATOR}" -DC_COMPILER=${CMAKE_C_COMPILER} -DCUDA_COMPILER=${CMAKE_CUDA_COMPILER}
    -DCUDA_ARCHITECTURES=${gw_consumer_archs} -DCUDA_INCLUDE_DIR=${gw_consumer_cuda_include} -DWERROR=${GW_WERROR}
    "-DLINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
    -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/gw_consumer.cmake)
  set_tests_properties(consumer_${mode} PROPERTIES LABELS consumer TIMEOUT 300
    ENVIRONMENT_MODIFICATION "CRITERION_ALWAYS_SUCCEED=unset:")
endforeach()

# The probe is host code: it reads the allocation and asks gw_device, which needs no device to answer.
add_executable(gw_resource_probe consumer/gw_resource_probe.c)
target_link_libraries(gw_resource_probe PRIVATE gw_device gw_warnings)
add_test(NAME ctest_resource_groups COMMAND ${CMAKE_COMMAND} -DPROBE=$<TARGET_FILE:gw_resource_probe>
  -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer/resource_groups
  -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/gw_resource_groups.cmake)
set_tests_properties(ctest_resource_groups PROPERTIES LABELS host TIMEOUT 120)
