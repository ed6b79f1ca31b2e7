# SPDX-License-Identifier: MIT
# gw_add_kernel_emu(<k>): <k>_emu, the kernel's unchanged kernels/<k>/ sources built for the emulated device
# (docs/emu.md, "Compiling a kernel"): every .cu and .cuh of the folder through gw_emu_rewrite.cmake into
# <build>/emu/<k>/ (a .cu becomes <name>.cu.cpp, a .cuh keeps its name so that the .cu's #include finds the
# rewritten one), then the .cu compiled as GNU C++17 with gw_emu_device.h in front and lib/emu/include ahead of
# the toolkit's CUB; -ffp-contract=off, as nvcc's __dmul_rn/__dadd_rn promise no fused multiply-add.
set(GW_EMU_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE INTERNAL "gpuwitness' lib/emu, for gw_add_emu_library() in any directory")

# Host code compiled once for two programs (docs/emu.md, "The CLI"): GW_CUDA_RUNTIME is the CUDA runtime of the
# program that links a host library, cudart, or gw_emu where that program's GW_EMU_DEVICE property is true
# (gpuwitness-emu); gw_device_code(<var> <lib>) likewise names a library of device code, or its emulated twin
# <lib>_emu. Installed targets keep cudart.
set(GW_CUDA_RUNTIME "$<BUILD_INTERFACE:$<IF:$<BOOL:$<TARGET_PROPERTY:GW_EMU_DEVICE>>,gw_emu,CUDA::cudart>>"
  "$<INSTALL_INTERFACE:CUDA::cudart>")
function(gw_device_code var lib)
  set(${var} "$<IF:$<BOOL:$<TARGET_PROPERTY:GW_EMU_DEVICE>>,${lib}_emu,${lib}>" PARENT_SCOPE)
endfunction()

# The emu tier's ThreadSanitizer runs (docs/emu.md, "Races and memory errors"): <k>_emu_tsan twins of the
# kernels of GW_EMU_TSAN_KERNELS (tests/emu/emu_tsan_run.c runs them), their device code compiled with
# -fsanitize=thread. Not in a build that is itself sanitized (the asan preset: ThreadSanitizer cannot share a
# program with AddressSanitizer), nor where the compiler lacks it.
set(GW_EMU_TSAN_TIER OFF)
if(NOT CMAKE_C_FLAGS MATCHES "-fsanitize=" AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=thread --param=tsan-distinguish-volatile=1")
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
  check_cxx_source_compiles("int v; int main() { return v; }" GW_HAVE_TSAN)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(GW_HAVE_TSAN)
    set(GW_EMU_TSAN_TIER ON)
  elseif(GW_WERROR) # CI (CMakeLists.txt): a check must not vanish with a runtime library
    message(FATAL_ERROR "the C++ compiler cannot build and link with -fsanitize=thread: CI runs the emu tier's "
      "ThreadSanitizer runs (docs/emu.md); install gcc's libtsan")
  else()
    message(STATUS "no ThreadSanitizer in the C++ compiler: the emu tier's TSan runs are not built")
  endif()
endif()
set(GW_EMU_TSAN_KERNELS grid_d4 grid_objects focus_stack ex2d_patch)

# gw_add_emu_library(<target> SOURCES <.cu/.cuh>... [INCLUDES <dirs>...] [TSAN]): the sources rewritten into
# <build>/emu/<target>/ and the .cu compiled for the emulated device, as described above; TSAN: with
# -fsanitize=thread, and every program that links the library is linked with it.
function(gw_add_emu_library target)
  cmake_parse_arguments(E "TSAN" "" "SOURCES;INCLUDES" ${ARGN})
  set(out_dir ${PROJECT_BINARY_DIR}/emu/${target})
  set(outputs "")
  set(units "")
  foreach(src IN LISTS E_SOURCES)
    get_filename_component(src ${src} ABSOLUTE)
    get_filename_component(name ${src} NAME)
    if(name MATCHES "\\.cu$")
      set(out ${out_dir}/${name}.cpp)
      list(APPEND units ${out})
    else()
      set(out ${out_dir}/${name})
    endif()
    add_custom_command(OUTPUT ${out} COMMAND ${CMAKE_COMMAND} -DIN=${src} -DOUT=${out} -P ${GW_EMU_DIR}/gw_emu_rewrite.cmake
      DEPENDS ${src} ${GW_EMU_DIR}/gw_emu_rewrite.cmake COMMENT "gw_emu: rewriting ${name} for ${target}" VERBATIM)
    list(APPEND outputs ${out})
  endforeach()
  add_library(${target} STATIC ${units})
  target_sources(${target} PRIVATE ${outputs}) # the rewritten .cuh are made before the units compile
  set_source_files_properties(${units} PROPERTIES LANGUAGE CXX)
  target_include_directories(${target} BEFORE PRIVATE ${GW_EMU_DIR}/include)
  target_include_directories(${target} PUBLIC ${E_INCLUDES})
  target_include_directories(${target} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS}/cccl)
  target_compile_options(${target} PRIVATE -std=gnu++17 -include gw_emu_device.h -ffp-contract=off
    -Wno-unknown-pragmas)
  target_link_libraries(${target} PUBLIC gw_emu)
  if(E_TSAN)
    # volatile accesses as the relaxed atomics PTX makes them (gw_emu_fiber.c, __tsan_volatile_read*); -g: reports
    # name the kernel source line
    target_compile_options(${target} PRIVATE -fsanitize=thread --param=tsan-distinguish-volatile=1 -g)
    target_link_options(${target} INTERFACE -fsanitize=thread)
  endif()
endfunction()

function(gw_add_kernel_emu k)
  set(src_dir ${PROJECT_SOURCE_DIR}/kernels/${k})
  file(GLOB sources CONFIGURE_DEPENDS ${src_dir}/*.cu ${src_dir}/*.cuh)
  gw_add_emu_library(${k}_emu SOURCES ${sources} INCLUDES ${PROJECT_SOURCE_DIR}/kernels ${src_dir})
  if(GW_EMU_TSAN_TIER AND k IN_LIST GW_EMU_TSAN_KERNELS)
    gw_add_emu_library(${k}_emu_tsan SOURCES ${sources} INCLUDES ${PROJECT_SOURCE_DIR}/kernels ${src_dir} TSAN)
  endif()
endfunction()
