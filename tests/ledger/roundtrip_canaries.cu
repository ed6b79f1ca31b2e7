/* SPDX-License-Identifier: MIT
 * The roundtrip canary (docs/witness.md): a correct launch with an extra device-to-host and host-to-device
 * copy of the input around it, as a "GPU" function that takes its data to the host for a look or a CPU
 * pre-pass would. The result is right and the witness is clean, so only the ledger's byte budget can catch
 * it ("over the byte budget", tests/ledger/CMakeLists.txt). Test builds only, never part of kernels/: the
 * canary executable is linked with --wrap=<kernel>_launch (gw_wrap_launcher), so the host path's call lands
 * in __wrap_<kernel>_launch here, which calls the library's launcher as __real_<kernel>_launch. One kernel
 * per build:
 *
 *   GW_ROUNDTRIP_GRID_D4       the cell buffer (buf_bytes) down and up, then grid_d4_launch
 *   GW_ROUNDTRIP_FOCUS_STACK   the stack (n*z*y*x uint16) down and up, then focus_stack_launch
 *   GW_ROUNDTRIP_EX2D_PATCH    the image (npix_x*npix_y doubles) down and up before every batch, then
 *                              ex2d_patches_launch (K1, ex2d_spots_launch, is left alone)
 */
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "focus_stack.h"
#include "grid_d4.h"
#if defined(GW_ROUNDTRIP_EX2D_PATCH) /* only its canary build links ex2d_patch and has its include path */
#include "ex2d_patch.h"
#endif

/* Copies bytes at d to the host and back, in stream order: the data is unchanged, the bus is not. */
static cudaError_t round_trip(const void *d, size_t bytes, cudaStream_t stream)
{
    void *h = malloc(bytes ? bytes : 1);
    if (!h) return cudaErrorMemoryAllocation;
    cudaError_t err = cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) err = cudaMemcpyAsync(const_cast<void *>(d), h, bytes, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream); /* h is freed next */
    free(h);
    return err;
}

#if defined(GW_ROUNDTRIP_GRID_D4)

extern "C" cudaError_t __real_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream);
extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream)
{
    if (p && p->n_grids && d_in) {
        const cudaError_t err = round_trip(d_in, (size_t)p->buf_bytes, stream);
        if (err != cudaSuccess) return err;
    }
    return __real_grid_d4_launch(p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops, d_status,
                          d_witness, stream);
}

#elif defined(GW_ROUNDTRIP_FOCUS_STACK)

extern "C" cudaError_t __real_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream);
extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream)
{
    if (focus_stack_check(p, d_in, d_idx, d_ff) == FOCUS_STACK_OK) {
        const cudaError_t err = round_trip(d_in, (size_t)p->n * p->z * p->y * p->x * sizeof *d_in, stream);
        if (err != cudaSuccess) return err;
    }
    return __real_focus_stack_launch(p, d_in, d_idx, d_ff, d_best, d_focus, d_witness, stream);
}

#elif defined(GW_ROUNDTRIP_EX2D_PATCH)

extern "C" cudaError_t __real_ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in,
                                                  const double *d_spots, int patch_first, int npatch, int max_batch,
                                                  void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out,
                                                  gw_witness *d_witness, cudaStream_t stream);
extern "C" cudaError_t __wrap_ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in,
                                                  const double *d_spots, int patch_first, int npatch, int max_batch,
                                                  void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out,
                                                  gw_witness *d_witness, cudaStream_t stream)
{
    /* only calls the real launcher accepts: its rejections stay exactly as they are */
    if (ex2d_check_args(p, d_in, patch_first, npatch, max_batch, d_ws, ws_bytes) == EX2D_OK && npatch >= 1) {
        const cudaError_t err = round_trip(d_in->image, (size_t)p->npix_x * p->npix_y * sizeof(double), stream);
        if (err != cudaSuccess) return err;
    }
    return __real_ex2d_patches_launch(p, d_in, d_spots, patch_first, npatch, max_batch, d_ws, ws_bytes, d_out, d_witness,
                               stream);
}

#else
#error "define GW_ROUNDTRIP_GRID_D4, GW_ROUNDTRIP_FOCUS_STACK or GW_ROUNDTRIP_EX2D_PATCH"
#endif
