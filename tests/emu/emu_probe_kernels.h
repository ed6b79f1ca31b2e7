/* SPDX-License-Identifier: MIT
 * Launchers of tests/emu/emu_probe_kernels.cu, the emulated device's own test kernels (test_emu.c).
 */
#ifndef EMU_PROBE_KERNELS_H
#define EMU_PROBE_KERNELS_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t emu_neighbour(int *d_out, int blocks, int threads, cudaStream_t s);
cudaError_t emu_votes(int *d_out, int threads);
cudaError_t emu_warp(int *d_out, int threads);
cudaError_t emu_divergent_barrier(int *d_out);
cudaError_t emu_foreign_mask(int *d_out);
cudaError_t emu_missing_lane(int *d_out);
cudaError_t emu_cub(const double *d_values, const int *d_items, double *d_sum, int *d_scan, int *d_excl,
                    int *d_aggregate, int threads);
cudaError_t emu_tickets(unsigned *d_counter, unsigned *d_order, unsigned short *d_cas16, int blocks, int threads);
cudaError_t emu_dynamic_shared(double *d_out, int n, size_t shared_bytes);
cudaError_t emu_allow_dynamic_shared(int bytes);

#ifdef __cplusplus
}
#endif

#endif /* EMU_PROBE_KERNELS_H */
