/* SPDX-License-Identifier: MIT
 * The kernels of gpuwitness, one line each, in the order every command runs them. This list is the one
 * place a kernel is named: CMake reads it too (cmake/gw_kernels.cmake) and adds, for each name k, the
 * folders kernels/k, reference/k, tests/k and tools/gpuwitness/kernels/k. Adding a kernel:
 * docs/adding-a-kernel.md.
 */
GW_KERNEL(grid_d4)
GW_KERNEL(focus_stack)
GW_KERNEL(ex2d_patch)
GW_KERNEL(grid_objects)
