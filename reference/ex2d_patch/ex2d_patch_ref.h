/* SPDX-License-Identifier: MIT
 * ex2d_patch_ref: CPU reference for kernels/ex2d_patch (contract in ex2d_patch.h, definition in
 * docs/ex2d_patch.md, "The model and the stages K1-K7"). Same shape as the launchers: the same params, an ex2d_inputs holding HOST pointers,
 * the same workspace layout (ex2d_workspace_carve over a host buffer aligned to 256 B), the same ex2d_outputs
 * and ex2d_patch_info, ex2d_check_args first, the same check word; no witness and no stream, plus nthreads
 * last (1: one thread; 0 or less: every core; N: N threads; OpenMP over patches when built with it). Every
 * patch is computed by one thread in a fixed order, so nthreads changes no bit.
 * Returns an ex2d_error (0 = ok), or EX2D_REF_ERR_ALLOC. Plain C11 loops, FP64, no LAPACK, built with
 * -ffp-contract=off (one rounding per multiply and per add).
 *
 * Conventions that the GPU must share (tests compare the workspace slots):
 *   - slot b of a batch = patch patch_first + b; nbatch <= max_batch (else EX2D_ERR_RANGE); nbatch, npatch,
 *     count and max_batch >= 1 (else EX2D_ERR_SIZE); every output pointer non-NULL (else EX2D_ERR_NULL).
 *   - icov: row-major with leading dimension n_max = max_nspecpad*m: element [a][b] at a*n_max + b, a, b < n of
 *     the patch. After K3 both triangles hold iCov (regularised). K4 writes L into the lower triangle and the
 *     diagonal; the strict upper triangle keeps iCov.
 *   - y, fluxweight, xflux: [k], k = s*m + w < n. fluxweight is the raw sum (before regularisation).
 *   - cblk, qblk: block c (core spectrum core_first + c, c < ncore) at c*m*m, row-major m x m. K5 keeps
 *     X_b = L^-1 E_b in xscr block c (c*n_max*m, row i = global row core*m + i, m columns).
 *   - model: box raster order, (y - ymin)*(xmax - xmin) + (x - xmin).
 *   - K3 regularisation: minweight = 1e-4 * max_k fluxweight_k; alpha_k = minweight - fluxweight_k when
 *     fluxweight_k < minweight, else regularize; icov[k][k] = icov[k][k] + (alpha_k*alpha_k + 1e-15), in that
 *     order of roundings.
 *   - K6: cyclic row-by-row Jacobi; a sweep rotates every pair (p < q) with |a_pq| > tau*sqrt(a_pp*a_qq); after
 *     each sweep, converged when every off-diagonal satisfies |a_pq| <= tau*sqrt(a_pp*a_qq). sweeps = sweeps
 *     run (a block that starts diagonal counts 1). Eigenvalues u < 1e-14*max(u) are raised to 1e-14*max(u)
 *     and counted in info.clipped. More than jacobi_max_sweeps: EX2D_PATCH_NOT_CONVERGED.
 *   - K7 Rdiags[s][d][j] = R_s[j' - ndiag + d][j'], j' = j + wavepad; where j' - ndiag + d falls outside
 *     0..m-1 (only when ndiag > wavepad) the entry is 0: R has no such row inside the patch.
 *   - info: K4 writes {status (OK or NOT_POSDEF), 0, 0, 0}; K6 writes clipped, sweeps_min, sweeps_max and
 *     NOT_CONVERGED. A failed patch (status != OK) skips K5 and K6, and K7 writes flux = ivar = Rdiags =
 *     chi2pix = 0 for its core, pixmask_fraction as usual (it needs no solution), and leaves its model slot
 *     alone.
 *   - Validation (ex2d_ref_validate): patches in index order, rules in enum order (PATCH_TABLE, BOX,
 *     FOOTPRINT, IVAR, IMAGE); check = {first failing rule of the lowest failing patch, that patch}, else
 *     {0, -1}. PATCH_TABLE: spectra, bins and core inside the table and the frame outputs, nspecpad <=
 *     max_nspecpad, ncore <= max_ncore, 1 <= ncore_wave <= m - 2*wavepad. BOX: 0 <= xmin < xmax <= npix_x,
 *     likewise y, and box pixels <= max_box_pixels. A stage that finds check.code != 0 returns that code
 *     and writes nothing, except ex2d_ref_cholesky (K4), which writes info {EX2D_PATCH_NOT_RUN, 0, 0, 0} for
 *     each patch of its batch; ex2d_ref_patches writes it for every patch of a rejected range (as the GPU).
 */
#ifndef EX2D_PATCH_REF_H
#define EX2D_PATCH_REF_H

#include <stddef.h>
#include <stdint.h>

#include "ex2d_patch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EX2D_REF_ERR_ALLOC 100 /* out of host memory (K6's 2 m x m scratch, or an *_alloc helper) */

/* PSF table entry of bin k = s*m + w of patch d (no range check). */
static inline int64_t ex2d_ref_entry(const ex2d_params *p, const ex2d_patch_desc *d, int k)
{
    const int s = k / p->m, w = k % p->m;
    return (int64_t)(d->spec_first + s) * p->nwave_tab + d->wave_first + w;
}

/* Validation of patches [patch_first, patch_first+npatch) (the device validation pass): sets the check word
 * at the start of ws and returns its code. */
int ex2d_ref_validate(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int npatch, void *ws,
                      size_t ws_bytes, int max_batch, int nthreads);

/* K1: spots of table entries [entry_first, entry_first+count) into spots (indexed by entry, ny*nx each). */
int ex2d_ref_spots(const ex2d_params *p, const ex2d_inputs *in, int entry_first, int count, double *spots,
                   int nthreads);

/* K3..K7 on the batch [patch_first, patch_first+nbatch), slot b = patch patch_first + b. */
int ex2d_ref_normal(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch_first, int nbatch,
                    void *ws, size_t ws_bytes, int max_batch, int nthreads);
int ex2d_ref_cholesky(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                      size_t ws_bytes, int max_batch, ex2d_patch_info *info, int nthreads);
int ex2d_ref_cblocks(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                     size_t ws_bytes, int max_batch, const ex2d_patch_info *info, int nthreads);
int ex2d_ref_jacobi(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                    size_t ws_bytes, int max_batch, ex2d_patch_info *info, int nthreads);
int ex2d_ref_outputs(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch_first, int nbatch,
                     void *ws, size_t ws_bytes, int max_batch, const ex2d_outputs *out, int nthreads);

/* Validation, then K3..K7 over [patch_first, patch_first+npatch) in chunks of max_batch. Returns the first
 * error (argument, validation or allocation); nothing is written to out when the arguments or validation fail. */
int ex2d_ref_patches(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch_first, int npatch,
                     int max_batch, void *ws, size_t ws_bytes, const ex2d_outputs *out, int nthreads);

/* Dense path for small patches (tiers S, M). a: A[npix_box][n] of patch `patch` (box raster order, column k =
 * bin k's spot at its corner, zero elsewhere). icov [n][n] (leading dimension n), y, fluxweight [n]: the raster
 * order A^T W A, A^T W img and the column sums of W A, regularised as K3: bitwise equal to the overlap form. */
int ex2d_ref_dense_a(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch, double *a);
int ex2d_ref_dense_normal(const ex2d_params *p, const ex2d_inputs *in, const double *a, int patch, double *icov,
                          double *y, double *fluxweight);

/* Counts for the witness items (no validation beyond a NULL/range check; -1 on bad arguments). */
int64_t ex2d_ref_count_pairs(const ex2d_params *p, const ex2d_inputs *in, int patch); /* overlapping a <= b */
int64_t ex2d_ref_count_core_blocks(const ex2d_inputs *in, int patch_first, int npatch); /* sum of ncore */
int64_t ex2d_ref_count_core_bins(const ex2d_inputs *in, int patch_first, int npatch);   /* ncore*ncore_wave */

/* Helpers for callers of the reference (tests, CLI): a 256-B-aligned host workspace of
 * ex2d_workspace_bytes(p, max_batch) bytes (free it with free()), and frame outputs sized by p and npatch
 * (free with ex2d_ref_outputs_free). Return 0, EX2D_ERR_NULL, EX2D_ERR_WORKSPACE / EX2D_ERR_SIZE or
 * EX2D_REF_ERR_ALLOC; on failure nothing is kept. */
int ex2d_ref_workspace_alloc(const ex2d_params *p, int max_batch, void **ws, size_t *ws_bytes);
int ex2d_ref_outputs_alloc(const ex2d_params *p, int npatch, ex2d_outputs *out);
void ex2d_ref_outputs_free(ex2d_outputs *out);

#ifdef __cplusplus
}
#endif

#endif /* EX2D_PATCH_REF_H */
