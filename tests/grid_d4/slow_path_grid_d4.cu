/* SPDX-License-Identifier: MIT
 * Planted fault for the bench guard (test builds only; never part of kernels/ or the shipped CLI).
 * gpuwitness_slow_path (tests/grid_d4/CMakeLists.txt) is gpuwitness linked with --wrap=grid_d4_launch, so
 * every call of grid_d4_launch reaches __wrap_grid_d4_launch, defined here: the same bytes, the same shapes, an
 * honest witness (one launch, every cell counted, its one block finished), but computed by a single GPU
 * thread, <<<1, 1>>>: the serial fallback a regression could slip in. The outputs and the witness check out,
 * so only `gpuwitness bench --min-speedup` / `--min-roofline` can catch it, and must.
 * The bench batches are valid, so the validation pre-pass is left out and the status record says "no error".
 */
#include <cuda_runtime_api.h>

#include "grid_d4.h"

/* out[i][j] = in[fr ? H-1-r : r][fc ? W-1-c : c] with (r, c) = swap ? (j, i) : (i, j), grid by grid. */
__global__ void slow_path_kernel(grid_d4_params p, const uint8_t *in, uint8_t *out, const uint64_t *offset,
                                 const uint16_t *height, const uint16_t *width, uint16_t *out_height,
                                 uint16_t *out_width, const uint8_t *ops, gw_witness *w)
{
    const unsigned long long t0 = gw_witness_clock(w);
    unsigned long long cells = 0;
    for (size_t k = 0; k < p.n_grids; k++) {
        const unsigned op = ops ? ops[k] : (unsigned)p.batch_op;
        const unsigned swap = (op >> 2) & 1u, fr = (op >> 1) & 1u, fc = op & 1u;
        const unsigned h = height[k], wd = width[k];
        const unsigned oh = swap ? wd : h, ow = swap ? h : wd;
        const uint8_t *src = in + offset[k];
        uint8_t *dst = out + offset[k];
        for (unsigned i = 0; i < oh; i++) {
            for (unsigned j = 0; j < ow; j++) {
                const unsigned r = swap ? j : i, c = swap ? i : j;
                dst[i * ow + j] = src[(fr ? h - 1 - r : r) * wd + (fc ? wd - 1 - c : c)];
            }
        }
        out_height[k] = (uint16_t)oh;
        out_width[k] = (uint16_t)ow;
        cells += (unsigned long long)h * wd;
    }
    gw_witness_block_done(w, cells, t0);
}

extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                                   const uint64_t *d_offset, const uint16_t *d_height,
                                                   const uint16_t *d_width, uint16_t *d_out_height,
                                                   uint16_t *d_out_width, const uint8_t *d_ops,
                                                   grid_d4_status_record *d_status, gw_witness *d_witness,
                                                   cudaStream_t stream)
{
    if (!p || (p->n_grids && (!d_in || !d_out || !d_offset || !d_height || !d_width || !d_out_height ||
                              !d_out_width || !d_status)))
        return cudaErrorInvalidValue;
    if (p->n_grids == 0) return cudaSuccess;
    /* All-ones bytes are GRID_D4_STATUS_NONE: no error. */
    const cudaError_t e = cudaMemsetAsync(d_status, 0xFF, sizeof *d_status, stream);
    if (e != cudaSuccess) return e;
    slow_path_kernel<<<1, 1, 0, stream>>>(*p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width,
                                          d_ops, d_witness);
    return cudaGetLastError();
}
