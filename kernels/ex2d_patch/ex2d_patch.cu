/* SPDX-License-Identifier: MIT
 * ex2d_patch: spectroperfectionism patch extraction, FP64, batched over patches. Contract: ex2d_patch.h;
 * the stages' formulas: docs/ex2d_patch.md. This file holds the shared enums and helpers and the launchers;
 * each stage's kernel is in its own file, #included below (ex2d_k0_validate.cuh .. ex2d_k7_outputs.cuh), so
 * the kernel still builds with one nvcc line.
 *
 * Shapes (one launch per stage and batch; every block records the witness once, items in brackets):
 *   validate  one 256-thread block per patch: the descriptor rules, then every bin's footprint and every box
 *             pixel (__syncthreads_or); thread 0 atomicMin's (patch << 32 | code) into the check word
 *             [1 per patch checked].
 *   K1        one 128-thread block per table entry: edge terms (erf, He_g G) by one thread per edge, the
 *             Px / Py tables in shared memory, a thread per pixel (<= 8 each), cub::BlockReduce sum [1 per spot].
 *   K3        one 256-thread block per patch. Pass 1: a thread per bin sums y and fluxweight over the bin's
 *             footprint; cub::BlockReduce max gives minweight. Pass 2: a thread per pair a <= b of the n x n
 *             square: overlapping pairs sum (S_a w) S_b over the shared footprint in raster order with
 *             __dmul_rn / __dadd_rn (never contracted into an FMA: bit-identical to the CPU reference built
 *             with -ffp-contract=off), the others write +0.0; the diagonal adds (alpha^2 + 1e-15); [a][b] and
 *             [b][a] get the same bits [overlapping pairs a <= b].
 *   K4        one 256-thread block per patch, L in place in the icov slot. The envelope (first non-zero column
 *             per row, one warp ballot scan per row) bounds all work; the fill of a Cholesky factor stays
 *             inside it, so skipping what lies outside is exact. Left-looking by columns: a warp per row
 *             forms the dot product with the pivot row (staged in shared memory, shuffle reduction), then the
 *             pivot is tested and the column divided. Then L z = y and L^T x = z, a column per step, in
 *             shared memory [1 per patch processed, whatever its status].
 *   K5        one 256-thread block per (patch, core block c), b = core_first + c: X = L^-1 E_b from row b*m
 *             into the xscr slot, one thread per column (independent triangular systems, so no barrier; all
 *             lanes walk the same k range, so L's row is a broadcast and X's rows are coalesced); then
 *             C_bb = X^T X over 32-row chunks staged in shared memory, a thread per upper-triangle entry
 *             (<= 25 accumulators), mirrored [1 per C block of a patch whose status is OK].
 *   K6        one 256-thread block per (patch, c): cyclic Jacobi with the round-robin (circle) ordering, m/2
 *             disjoint rotations per step: parameters, row rotations, column rotations (A and V), the 2 x 2
 *             blocks set exactly (a_pq = 0), four barriers per step. A pair rotates when |a_pq| >
 *             tol sqrt(a_pp a_qq); after each sweep every pair is tested (__syncthreads_or). Eigenvalues below
 *             1e-14 max are raised to it and counted (__syncthreads_count), Q = V diag(u^-1/2) V^T, upper
 *             triangle mirrored. A and V live in 16 m^2 B of opt-in dynamic shared memory [1 per block
 *             diagonalised; none for NOT_POSDEF patches].
 *   K7        one 256-thread block per patch: row sums of each core Q, the model gathered per box pixel (bins
 *             of spectra whose corner range can reach the pixel), then a thread per core bin: flux, ivar,
 *             Rdiags, chi2pix and pixmask_fraction over its footprint [ncore * ncore_wave per patch].
 * Every stage after validation reads the check word first and writes nothing when it is set (its blocks
 * still record, with 0 items), except that K4 then writes info {EX2D_PATCH_NOT_RUN, 0, 0, 0} for each patch of
 * its batch. Otherwise info: K4 writes {status, 0, 0, 0}; K6 blocks of one patch combine theirs with
 * atomics (clipped: add; sweeps_min: CAS, 0 meaning unset; sweeps_max and NOT_CONVERGED: max; the status
 * word read by one thread with an atomic), so the result does not depend on block order. No other atomics
 * touch results: every output element has one writer, and every sum has a fixed order, so two runs give the
 * same bits.
 *
 * Sizes: n <= 1024 and m <= 112 (ex2d_check_args) bound every shared array; all global offsets are size_t.
 * Memory: K6 needs 16 m^2 B of dynamic shared memory next to its 4,048 B of static shared memory; the
 * launchers return cudaErrorInvalidConfiguration, before launching anything, where the device's
 * cudaDevAttrMaxSharedMemoryPerBlockOptin cannot give it: sm_75 64 KB, so m <= 61 there; sm_80 163 KB;
 * sm_86 and sm_89 99 KB; sm_90 227 KB (m = 74, DESI's patches, needs 87,616 B). The kernel is opted in to the
 * device's whole maximum once it fits (jacobi_shared_bytes says why). A global-memory path would need two
 * more m x m scratch blocks per (patch, block) in the workspace, for the one architecture that lacks the
 * shared memory.
 *
 * Resources per kernel (registers, stack frame, spills, static shared memory, blocks per SM on sm_90): the
 * table in docs/ex2d_patch.md, "The GPU kernels", which comes from ptxas -v of the build and is checked by the
 * test doc_resource_figures. (K6 computes cos with rsqrt: 1/sqrt's slow path cost 48 B of spills.)
 */
#include "ex2d_patch.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

enum {
    VALIDATE_THREADS = 256,
    SPOT_THREADS = 128,
    SPOT_MAX_SIDE = 2 * EX2D_MAX_HALF_SIZE + 1, /* 31 pixels */
    SPOT_PER_THREAD = (SPOT_MAX_SIDE * SPOT_MAX_SIDE + SPOT_THREADS - 1) / SPOT_THREADS, /* 8 */
    SPOT_Y_EDGE_THREAD = 64, /* y edges by the third warp, x edges by the first: both at once */
    NORMAL_THREADS = 256,
    CHOL_THREADS = 256,
    CHOL_WARPS = CHOL_THREADS / 32,
    CHOL_SCAN_ITEMS = EX2D_MAX_N / CHOL_THREADS,
    CBLK_THREADS = 256,
    CBLK_CHUNK = 32, /* rows of X per staged chunk: 32 x 112 doubles = 28 KB */
    CBLK_PAIRS = (EX2D_MAX_M * (EX2D_MAX_M + 1) / 2 + CBLK_THREADS - 1) / CBLK_THREADS, /* 25 */
    JACOBI_THREADS = 256,
    JACOBI_MAX_PAIRS = (EX2D_MAX_M + 1) / 2,
    OUTPUT_THREADS = 256,
};

static_assert(EX2D_MAX_N % CHOL_THREADS == 0, "the envelope scan holds EX2D_MAX_N / CHOL_THREADS items per thread");
static_assert(CBLK_THREADS >= EX2D_MAX_M, "K5 solves one column of X per thread");
static_assert(JACOBI_THREADS >= EX2D_MAX_M, "K6 clips one eigenvalue per thread");
static_assert(2 * EX2D_MAX_HALF_SIZE + 2 <= 32 && SPOT_Y_EDGE_THREAD + 32 <= SPOT_THREADS,
              "K1 computes the nx + 1 x edges and the ny + 1 y edges in two separate warps");

#define FULL_MASK 0xffffffffu

/* ---------------------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------------------- */

/* Set by the validation pass when any patch of the range failed: every later stage then writes nothing. */
static __device__ __forceinline__ bool check_failed(const ex2d_check_word *check) { return check->code != 0; }

/* Table entry of bin k = s*m + w of patch d (the validation pass proved it inside the table). */
static __device__ __forceinline__ long long bin_entry(const ex2d_params *p, const ex2d_patch_desc *d, int k)
{
    const int s = k / p->m, w = k - s * p->m;
    return (long long)(d->spec_first + s) * p->nwave_tab + d->wave_first + w;
}

/* Butterfly sum: every lane ends with the same bits, in a fixed order. */
static __device__ __forceinline__ double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

/* The first column holding a non-zero in row i of the lower triangle, or i when there is none; called by a
 * whole warp. A Cholesky factor has no fill left of it, so it bounds all work on the row. */
static __device__ int row_first_nonzero(const double *row, int i, int lane)
{
    for (int j0 = 0; j0 < i; j0 += 32) {
        const int j = j0 + lane;
        const unsigned nonzero = __ballot_sync(FULL_MASK, j < i && row[j] != 0.0);
        if (nonzero) return j0 + __ffs((int)nonzero) - 1;
    }
    return i;
}

/* ---------------------------------------------------------------------------------------------------------
 * The stages, one file each (K2 has none: A stays implicit)
 * ------------------------------------------------------------------------------------------------------- */

#include "ex2d_k0_validate.cuh"
#include "ex2d_k1_spots.cuh"
#include "ex2d_k3_normal.cuh"
#include "ex2d_k4_cholesky.cuh"
#include "ex2d_k5_cblocks.cuh"
#include "ex2d_k6_jacobi.cuh"
#include "ex2d_k7_outputs.cuh"

/* ---------------------------------------------------------------------------------------------------------
 * Launchers
 * ------------------------------------------------------------------------------------------------------- */

/* The host rules every batched stage shares (ex2d_patch.h, Errors): ex2d_check_args, nbatch and max_batch
 * at least 1, nbatch <= max_batch, and a carvable workspace. */
static bool batch_args_ok(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch, void *d_ws,
                          size_t ws_bytes, int max_batch, ex2d_workspace *ws)
{
    return ex2d_check_args(p, d_in, patch_first, nbatch, max_batch, d_ws, ws_bytes) == EX2D_OK && nbatch >= 1 &&
           max_batch >= 1 && nbatch <= max_batch && ex2d_workspace_carve(p, max_batch, d_ws, ws) == EX2D_OK;
}

static bool outputs_ok(const ex2d_outputs *d_out)
{
    return d_out && d_out->flux && d_out->ivar && d_out->rdiags && d_out->chi2pix && d_out->pixmask_fraction &&
           d_out->info;
}

/* K5 and K6 run one block per (patch, core block): the grid must fit gridDim.x. */
static bool block_grid_ok(const ex2d_params *p, int nbatch)
{
    return (long long)nbatch * p->max_ncore <= INT_MAX;
}

/* K6 keeps A and V in 16 m^2 B of dynamic shared memory: cudaErrorInvalidConfiguration when this device cannot
 * give one block that much next to K6's static shared memory. Otherwise the kernel is opted in to the
 * device's whole opt-in maximum, not to this call's need: the attribute is per kernel and device, so a value
 * that depended on m would let two host threads with different m reset it under each other's launch; the
 * maximum is the same for every caller. *bytes gets this call's need. */
static cudaError_t jacobi_shared_bytes(const ex2d_params *p, size_t *bytes)
{
    *bytes = (size_t)16 * (size_t)p->m * (size_t)p->m;
    int device = 0, optin = 0;
    cudaFuncAttributes attr;
    cudaError_t rc = cudaGetDevice(&device);
    if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (rc == cudaSuccess) rc = cudaFuncGetAttributes(&attr, (const void *)ex2d_jacobi_kernel);
    if (rc != cudaSuccess) return rc;
    if (*bytes + attr.sharedSizeBytes > (size_t)optin) return cudaErrorInvalidConfiguration;
    return cudaFuncSetAttribute((const void *)ex2d_jacobi_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                optin - (int)attr.sharedSizeBytes);
}

/* The launches themselves, on checked arguments. Every launcher below, once its arguments passed and before
 * it enqueues anything, returns an error already pending (cudaPeekAtLastError, which does not clear it): it
 * belongs to an earlier call, must not be taken for this launch's, and must not leave a pipeline
 * half-enqueued. */
static cudaError_t run_validate(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int npatch,
                                const ex2d_workspace *ws, gw_witness *d_witness, cudaStream_t stream)
{
    /* {code 0, patch -1}: the "nothing found" state that atomicMin starts from */
    cudaError_t rc = cudaMemsetAsync(&ws->check->code, 0, sizeof ws->check->code, stream);
    if (rc == cudaSuccess) rc = cudaMemsetAsync(&ws->check->patch, 0xFF, sizeof ws->check->patch, stream);
    if (rc != cudaSuccess) return rc;
    ex2d_validate_kernel<<<npatch, VALIDATE_THREADS, 0, stream>>>(*p, *d_in, patch_first, ws->check, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_normal(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots, int patch_first,
                              int nbatch, const ex2d_workspace *ws, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_normal_kernel<<<nbatch, NORMAL_THREADS, 0, stream>>>(*p, *d_in, d_spots, patch_first, *ws, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_cholesky(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                const ex2d_workspace *ws, ex2d_patch_info *d_info, gw_witness *d_witness,
                                cudaStream_t stream)
{
    ex2d_cholesky_kernel<<<nbatch, CHOL_THREADS, 0, stream>>>(*p, d_in->patches, patch_first, *ws, d_info, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_cblocks(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                               const ex2d_workspace *ws, const ex2d_patch_info *d_info, gw_witness *d_witness,
                               cudaStream_t stream)
{
    ex2d_cblocks_kernel<<<nbatch * p->max_ncore, CBLK_THREADS, 0, stream>>>(*p, d_in->patches, patch_first, *ws,
                                                                            d_info, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_jacobi(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                              const ex2d_workspace *ws, size_t shared_bytes, ex2d_patch_info *d_info,
                              gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_jacobi_kernel<<<nbatch * p->max_ncore, JACOBI_THREADS, shared_bytes, stream>>>(*p, d_in->patches, patch_first,
                                                                                        *ws, d_info, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_outputs(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots, int patch_first,
                               int nbatch, const ex2d_workspace *ws, const ex2d_outputs *d_out, gw_witness *d_witness,
                               cudaStream_t stream)
{
    ex2d_outputs_kernel<<<nbatch, OUTPUT_THREADS, 0, stream>>>(*p, *d_in, d_spots, patch_first, *ws, *d_out,
                                                              d_witness);
    return cudaGetLastError();
}

extern "C" cudaError_t ex2d_validate_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int npatch,
                                            void *d_ws, size_t ws_bytes, int max_batch, gw_witness *d_witness,
                                            cudaStream_t stream)
{
    ex2d_workspace ws;
    if (ex2d_check_args(p, d_in, patch_first, npatch, max_batch, d_ws, ws_bytes) != EX2D_OK || npatch < 1 ||
        max_batch < 1 || ex2d_workspace_carve(p, max_batch, d_ws, &ws) != EX2D_OK)
        return cudaErrorInvalidValue;
    const cudaError_t rc = cudaPeekAtLastError();
    if (rc != cudaSuccess) return rc;
    return run_validate(p, d_in, patch_first, npatch, &ws, d_witness, stream);
}

extern "C" cudaError_t ex2d_spots_launch(const ex2d_params *p, const ex2d_inputs *d_in, int entry_first, int count,
                                         double *d_spots, gw_witness *d_witness, cudaStream_t stream)
{
    if (ex2d_check_args(p, NULL, 0, 0, 0, NULL, 0) != EX2D_OK || !d_in || !d_in->psf_sigx || !d_in->psf_sigy ||
        !d_in->psf_dx || !d_in->psf_dy || !d_in->psf_c || !d_spots || count < 1 || entry_first < 0 ||
        (long long)entry_first + count > (long long)p->nspec_tab * p->nwave_tab)
        return cudaErrorInvalidValue;
    const cudaError_t rc = cudaPeekAtLastError();
    if (rc != cudaSuccess) return rc;
    ex2d_spots_kernel<<<count, SPOT_THREADS, 0, stream>>>(*p, *d_in, entry_first, d_spots, d_witness);
    return cudaGetLastError();
}

extern "C" cudaError_t ex2d_normal_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                          int patch_first, int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                          gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_spots)
        return cudaErrorInvalidValue;
    const cudaError_t rc = cudaPeekAtLastError();
    if (rc != cudaSuccess) return rc;
    return run_normal(p, d_in, d_spots, patch_first, nbatch, &ws, d_witness, stream);
}

extern "C" cudaError_t ex2d_cholesky_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first,
                                            int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                            ex2d_patch_info *d_info, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_info)
        return cudaErrorInvalidValue;
    const cudaError_t rc = cudaPeekAtLastError();
    if (rc != cudaSuccess) return rc;
    return run_cholesky(p, d_in, patch_first, nbatch, &ws, d_info, d_witness, stream);
}

extern "C" cudaError_t ex2d_cblocks_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first,
                                           int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                           const ex2d_patch_info *d_info, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_info ||
        !block_grid_ok(p, nbatch))
        return cudaErrorInvalidValue;
    const cudaError_t rc = cudaPeekAtLastError();
    if (rc != cudaSuccess) return rc;
    return run_cblocks(p, d_in, patch_first, nbatch, &ws, d_info, d_witness, stream);
}

extern "C" cudaError_t ex2d_jacobi_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                          void *d_ws, size_t ws_bytes, int max_batch, ex2d_patch_info *d_info,
                                          gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_info ||
        !block_grid_ok(p, nbatch))
        return cudaErrorInvalidValue;
    cudaError_t rc = cudaPeekAtLastError();
    size_t shared_bytes = 0;
    if (rc == cudaSuccess) rc = jacobi_shared_bytes(p, &shared_bytes);
    if (rc != cudaSuccess) return rc;
    return run_jacobi(p, d_in, patch_first, nbatch, &ws, shared_bytes, d_info, d_witness, stream);
}

extern "C" cudaError_t ex2d_outputs_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                           int patch_first, int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                           const ex2d_outputs *d_out, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_spots ||
        !outputs_ok(d_out))
        return cudaErrorInvalidValue;
    const cudaError_t rc = cudaPeekAtLastError();
    if (rc != cudaSuccess) return rc;
    return run_outputs(p, d_in, d_spots, patch_first, nbatch, &ws, d_out, d_witness, stream);
}

extern "C" cudaError_t ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                           int patch_first, int npatch, int max_batch, void *d_ws, size_t ws_bytes,
                                           const ex2d_outputs *d_out, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (ex2d_check_args(p, d_in, patch_first, npatch, max_batch, d_ws, ws_bytes) != EX2D_OK || npatch < 1 ||
        max_batch < 1 || ex2d_workspace_carve(p, max_batch, d_ws, &ws) != EX2D_OK || !d_spots ||
        !outputs_ok(d_out) || !block_grid_ok(p, max_batch < npatch ? max_batch : npatch))
        return cudaErrorInvalidValue;
    cudaError_t rc = cudaPeekAtLastError();
    size_t shared_bytes = 0;
    if (rc == cudaSuccess) rc = jacobi_shared_bytes(p, &shared_bytes); /* before any launch: all or nothing */
    if (rc != cudaSuccess) return rc;

    gw_witness *w = d_witness; /* NULL: no recording; else one record per stage */
    rc = run_validate(p, d_in, patch_first, npatch, &ws, w ? w + EX2D_W_VALIDATE : NULL, stream);
    for (int first = patch_first; rc == cudaSuccess && first - patch_first < npatch; first += max_batch) {
        const int left = npatch - (first - patch_first), nbatch = left < max_batch ? left : max_batch;
        rc = run_normal(p, d_in, d_spots, first, nbatch, &ws, w ? w + EX2D_W_NORMAL : NULL, stream);
        if (rc == cudaSuccess)
            rc = run_cholesky(p, d_in, first, nbatch, &ws, d_out->info, w ? w + EX2D_W_CHOLESKY : NULL, stream);
        if (rc == cudaSuccess)
            rc = run_cblocks(p, d_in, first, nbatch, &ws, d_out->info, w ? w + EX2D_W_CBLOCKS : NULL, stream);
        if (rc == cudaSuccess)
            rc = run_jacobi(p, d_in, first, nbatch, &ws, shared_bytes, d_out->info, w ? w + EX2D_W_JACOBI : NULL,
                            stream);
        if (rc == cudaSuccess)
            rc = run_outputs(p, d_in, d_spots, first, nbatch, &ws, d_out, w ? w + EX2D_W_OUTPUTS : NULL, stream);
    }
    return rc;
}
