# SPDX-License-Identifier: MIT
# cmake -DIN=kernels/k/k.cu -DOUT=build/emu/k/k.cu.cpp -P gw_emu_rewrite.cmake
# The emulated build's one step over a kernel's source (docs/emu.md, "Compiling a kernel"): the two CUDA
# constructs that C++ cannot spell, rewritten mechanically, and nothing else:
#   NAME<<<CONFIG>>>(             ->  gw_emu_launch_of(NAME, "NAME", CONFIG)(   (CONFIG: no '>' but in '->')
#   extern __shared__ T NAME[];   ->  T *const NAME = (T *)gw_emu_dynamic_shared();
# A #line directive keeps every diagnostic (the compiler's, AddressSanitizer's, ThreadSanitizer's, the
# emulator's own messages through __FILE__ and __LINE__) on the original file and line. A construct this step
# cannot rewrite is a build error that names it, never left for the compiler to misread.
file(READ "${IN}" text)
string(REGEX REPLACE "([A-Za-z_][A-Za-z0-9_]*)<<<(([^>]|->)*)>>>[ \t]*\\(" "gw_emu_launch_of(\\1, \"\\1\", \\2)(" text
       "${text}")
string(REGEX REPLACE "extern[ \t]+__shared__[ \t]+([A-Za-z_][A-Za-z0-9_ ]*[A-Za-z0-9_])[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\\[[ \t]*\\][ \t]*;"
       "\\1 *const \\2 = (\\1 *)gw_emu_dynamic_shared();" text "${text}")
foreach(left "<<<" "extern __shared__")
  string(FIND "${text}" "${left}" at)
  if(NOT at EQUAL -1)
    string(SUBSTRING "${text}" 0 ${at} before)
    string(REGEX MATCHALL "\n" lines "${before}")
    list(LENGTH lines line)
    math(EXPR line "${line} + 1")
    message(FATAL_ERROR "${IN}:${line}: '${left}' in a form gw_emu_rewrite.cmake does not rewrite (see its "
      "header: a launch configuration whose only '>' are in '->', a dynamic shared array 'extern __shared__ T name[];')")
  endif()
endforeach()
get_filename_component(source "${IN}" ABSOLUTE)
file(WRITE "${OUT}.tmp" "#line 1 \"${source}\"\n${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
