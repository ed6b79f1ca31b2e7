# SPDX-License-Identifier: MIT
# gw_add_kernel_emu(<k>): <k>_emu, the kernel's unchanged kernels/<k>/ sources built for the emulated device
# (docs/emu.md, "Compiling a kernel"): every .cu and .cuh of the folder through gw_emu_rewrite.cmake into
# <build>/emu/<k>/ (a .cu becomes <name>.cu.cpp, a .cuh keeps its name so that the .cu's #include finds the
# rewritten one), then the .cu compiled as GNU C++17 with gw_emu_device.h in front and lib/emu/include ahead of
# the toolkit's CUB; -ffp-contract=off, as nvcc's __dmul_rn/__dadd_rn promise no fused multiply-add.
set(GW_EMU_DIR ${CMAKE_CURRENT_LIST_DIR})

# The emu tier's ThreadSanitizer runs (docs/emu.md, "Races and memory errors"): <k>_emu_tsan twins of the
# kernels of GW_EMU_TSAN_KERNELS (tests/emu/emu_tsan_run.c runs them), their device code compiled with
# -fsanitize=thread. Not in a build that is itself sanitized (the asan
# preset): ThreadSanitizer cannot share a program with AddressSanitizer.
if(CMAKE_C_FLAGS MATCHES "-fsanitize=" OR CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
  set(GW_EMU_TSAN_TIER OFF)
else()
  set(GW_EMU_TSAN_TIER ON)
endif()
set(GW_EMU_TSAN_KERNELS grid_d4 grid_objects focus_stack)

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
    # volatile accesses as the relaxed atomics PTX makes them (gw_emu_fiber.c, __tsan_volatile_read*)
    target_compile_options(${target} PRIVATE -fsanitize=thread --param=tsan-distinguish-volatile=1)
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
