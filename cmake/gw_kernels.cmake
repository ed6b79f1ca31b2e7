# SPDX-License-Identifier: MIT
# GW_KERNELS: the kernels, in order, read from the one table of kernels
# (tools/gpuwitness/kernels/gw_kernel_table.h, a line GW_KERNEL(<name>) each). Every folder that has a part
# per kernel (kernels/, reference/, tests/, tools/gpuwitness/kernels/) adds <name>/ for each name here, so a
# new kernel is its own folders plus one line of that table (docs/adding-a-kernel.md).
set(GW_KERNEL_TABLE "${PROJECT_SOURCE_DIR}/tools/gpuwitness/kernels/gw_kernel_table.h")
set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${GW_KERNEL_TABLE}")
file(STRINGS "${GW_KERNEL_TABLE}" gw_kernel_lines REGEX "^GW_KERNEL\\([a-z0-9_]+\\)")
set(GW_KERNELS "")
foreach(line IN LISTS gw_kernel_lines)
  string(REGEX REPLACE "^GW_KERNEL\\(([a-z0-9_]+)\\).*" "\\1" name "${line}")
  list(APPEND GW_KERNELS ${name})
endforeach()
if(NOT GW_KERNELS)
  message(FATAL_ERROR "${GW_KERNEL_TABLE} lists no kernel (lines GW_KERNEL(name))")
endif()
# "grid_d4, focus_stack, ex2d_patch": the names as the CLI's messages list them, for the tests of those
# messages (so a new kernel changes no test outside its own folder).
string(REPLACE ";" ", " GW_KERNEL_NAMES "${GW_KERNELS}")

# gw_add_kernel_folders(): add_subdirectory(<name>) of the calling folder for every kernel; a missing folder
# is a configure error naming it.
function(gw_add_kernel_folders)
  foreach(k IN LISTS GW_KERNELS)
    if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${k}/CMakeLists.txt")
      message(FATAL_ERROR "kernel ${k} (listed in ${GW_KERNEL_TABLE}) has no ${CMAKE_CURRENT_SOURCE_DIR}/${k}/CMakeLists.txt: "
                          "see docs/adding-a-kernel.md")
    endif()
    add_subdirectory(${k})
  endforeach()
endfunction()
