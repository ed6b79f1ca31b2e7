/* SPDX-License-Identifier: MIT
 * ex2d_patch: DESI spectroperfectionism extraction of spectral patches, batched over patches, in FP64.
 *
 * What it computes (specs/ex2d_patch.md; Bolton & Schlegel 2010; desihub/specter, desihub/gpu_specter):
 *   The image p = A f + noise; column k of A is the Gauss-Hermite spot of bin k = (spectrum s, wavelength w).
 *   Per patch (nspecpad spectra x m bins, n = nspecpad*m, k = s*m + w, pixels = the patch box in raster order):
 *   K1 spots     spot[e][iy][ix] = sum_ij c_ij Py_j[iy] Px_i[ix], negatives set to 0, divided by its sum
 *                (Px_0 = erf differences over pixel edges, Px_g = He_{g-1} G differences); per table entry e.
 *   K2           A is implicit: bin k's spot at its integer corner (xc, yc). No dense A on the GPU.
 *   K3 normal    iCov[a][b] = sum_p (S_a(p) w_p) S_b(p) over the shared footprint in raster order (no FMA),
 *                y_a = sum (S_a w_p) img_p, fluxweight_a = sum S_a w_p; iCov_kk += alpha_k^2 + 1e-15 with
 *                alpha_k = minweight - fluxweight_k if fluxweight_k < minweight (= 1e-4 max fluxweight),
 *                else regularize.
 *   K4 cholesky  iCov = L L^T (L overwrites iCov), L z = y, L^T xflux = z.
 *   K5 C blocks  C_bb = X_b^T X_b, X_b = L^-1 E_b (the diagonal blocks of iCov^-1), core spectra only.
 *   K6 Q blocks  Q_b = C_bb^(-1/2) by cyclic Jacobi; eigenvalues clipped at 1e-14 max (counted).
 *   K7 outputs   s_i = sum_j Q_b[i][j]; R_b = diag(1/s) Q_b; ivar = s^2; flux = R_b xflux_b; Rdiags;
 *                model = A xflux; chi2pix; pixmask_fraction. Each patch writes only its core into the frame.
 *
 * Data. One PSF table for the frame, built on the host (reference/ex2d_patch/ex2d_synth.h) and uploaded as is, so the
 *   CPU reference and the GPU read the same corners (a corner is a floor(): recomputing it differently by one
 *   ulp moves a whole spot). Table entry e = s_tab*nwave_tab + w_tab. Arrays are row-major FP64 unless said.
 *     image, ivar     [npix_y][npix_x]          ivar = 0 marks a masked pixel
 *     psf_sigx/sigy/dx/dy [nspec_tab][nwave_tab]; psf_c [nspec_tab][nwave_tab][gx+1][gy+1] (i = x degree)
 *     psf_xc, psf_yc  int32 [nspec_tab][nwave_tab] spot lower-left corners; spot = ny x nx pixels,
 *                     ny = 2*hsizey+1, nx = 2*hsizex+1
 *     spots           [nspec_tab*nwave_tab][ny][nx]   (K1 output, input of K3 and K7)
 *     patches         ex2d_patch_desc [npatch]  (reference/ex2d_patch/ex2d_synth.h builds them)
 *     frame outputs   flux, ivar, chi2pix, pixmask_fraction [nspec_out][nwave_out];
 *                     rdiags [nspec_out][2*ndiag+1][nwave_out]; info ex2d_patch_info [npatch]
 *   Intermediates live in the caller's workspace, one slot per patch of a batch, at the offsets that
 *   ex2d_workspace_carve() gives: iCov/L, y, fluxweight, xflux, C_bb, Q_b, model. Tests read them there.
 *   The workspace also holds K5's scratch X_b = L^-1 E_b (max_ncore blocks of n_max x m per slot): a block
 *   needs all rows of X_b from b*m down, and iCov's bandwidth, hence X_b's, is not bounded by the params.
 *
 * Launchers: device pointers, a host params struct, the workspace, cudaStream_t last; they return cudaError_t
 *   and never allocate, synchronise or keep globals. ex2d_patches_launch() runs validation and K3..K7 over a
 *   range of patches in chunks of max_batch; the per-stage launchers exist for tests and custom pipelines.
 * Errors: ex2d_check_args() runs on the host first (the launchers return cudaErrorInvalidValue and launch
 *   nothing when it fails; call it to get the reason; likewise for a NULL output or info pointer, a count,
 *   npatch, nbatch or max_batch below 1, or nbatch > max_batch). K6 keeps A and V in 16*m^2 B of opt-in
 *   shared memory (plus 4 KB static): where that exceeds the device's cudaDevAttrMaxSharedMemoryPerBlockOptin
 *   (sm_75: 64 KB, m <= 61; sm_86/89: 99 KB; sm_80: 163 KB; sm_90: 227 KB), ex2d_jacobi_launch and
 *   ex2d_patches_launch return cudaErrorInvalidConfiguration and launch nothing. The device validation pass
 *   (ex2d_validate_launch) checks every patch of the range and stores the first failure in ws.check; every
 *   later stage reads it and writes nothing when it is set. A patch whose factorisation or Jacobi fails gets
 *   its status in info[] and writes flux = ivar = Rdiags = chi2pix = 0 for its core, pixmask_fraction as
 *   usual, and leaves its model slot alone (DESI retries it with regularize = 1e-4).
 * Tolerance (against reference/ex2d_patch/ex2d_patch_ref.h, same inputs): spots 1e-14; K3 bit-identical (no FMA in
 *   that stage: __dmul_rn/__dadd_rn); xflux 1e-10 rel.; flux pull 1e-9; ivar rtol 1e-10; C_bb, Q_b 1e-10 of the
 *   block max; Rdiags 1e-10; model 1e-10 max(model); chi2pix rtol 1e-8 atol 1e-10; pixmask_fraction 2e-12.
 * Witness: one record per stage (ex2d_witness_slot). items: K1 spots; validate patches checked; K3
 *   overlapping pairs a <= b; K4 patches factorised (status written, OK or NOT_POSDEF); K5 C blocks and K6
 *   blocks diagonalised (core blocks of the patches K4 left OK); K7 core bins written (failed patches too).
 *   Stages after a failed validation record their blocks with 0 items. Jacobi sweeps per block are reported
 *   in info[] (1..jacobi_max_sweeps).
 *
 * Example (tests/ex2d_patch/test_ex2d_patch_example.c compiles and runs it):
 * example-begin
 *     // p, the host PSF table and patches come from reference/ex2d_patch/ex2d_synth.h (or your own PSF evaluation);
 *     // d_in holds the same arrays uploaded (device pointers), d_out the frame outputs
 *     size_t ws_bytes = ex2d_workspace_bytes(&p, 47);      // 47 patches per batch: one subbundle
 *     // cudaMalloc(&d_ws, ws_bytes) once, outside any loop; d_spots: nspec_tab*nwave_tab*ny*nx doubles
 *     cudaError_t rc = ex2d_spots_launch(&p, &d_in, 0, p.nspec_tab * p.nwave_tab, d_spots, NULL, stream);
 *     if (rc == cudaSuccess)
 *         rc = ex2d_patches_launch(&p, &d_in, d_spots, 0, d_in.npatch, 47, d_ws, ws_bytes, &d_out, NULL, stream);
 *     // rc == cudaSuccess; after cudaStreamSynchronize the frame outputs hold the extraction, and the
 *     // check word at the start of the workspace is {0, -1}; info[i].status is EX2D_PATCH_OK per patch
 * example-end
 *
 * Build: nvcc -O3 -lineinfo -arch=sm_90 -I.. -c ex2d_patch.cu    (the directory above holds gw_witness.h)
 */
#ifndef EX2D_PATCH_H
#define EX2D_PATCH_H

#include <stddef.h>
#include <stdint.h>

/* The types, the argument check and the workspace layout are plain C; the launchers need the CUDA runtime
 * headers. The CPU reference includes this header without them. */
#if defined(__CUDACC__)
#define EX2D_PATCH_HAVE_CUDA_RUNTIME 1
#elif defined(__has_include) /* nested: a compiler without __has_include must not parse the call */
#if __has_include(<cuda_runtime_api.h>)
#define EX2D_PATCH_HAVE_CUDA_RUNTIME 1
#endif
#endif
#ifdef EX2D_PATCH_HAVE_CUDA_RUNTIME
#include <cuda_runtime_api.h>
#endif

#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of this build. n <= 1024 and m <= 112 keep K4's and K6's per-patch work inside one block; the spot
 * half sizes keep K1 at one thread per pixel (<= 31 x 31). */
#define EX2D_MAX_DEGREE 8
#define EX2D_MAX_N 1024
#define EX2D_MAX_M 112
#define EX2D_MAX_HALF_SIZE 15
#define EX2D_WORKSPACE_ALIGN 256

/* Per-patch outcome, in info[].status. The CPU reference returns the same codes. */
typedef enum ex2d_patch_status {
    EX2D_PATCH_OK = 0,
    EX2D_PATCH_NOT_POSDEF = 1,      /* a Cholesky pivot <= 0 or not finite */
    EX2D_PATCH_NOT_CONVERGED = 2,   /* a Jacobi block not converged in jacobi_max_sweeps */
    EX2D_PATCH_NOT_RUN = 3          /* validation failed: the patch was not extracted */
} ex2d_patch_status;

/* Argument and validation errors: ex2d_check_args() (host) and the device validation pass (ws.check). */
typedef enum ex2d_error {
    EX2D_OK = 0,
    EX2D_ERR_NULL = 1,          /* host: a required pointer is NULL */
    EX2D_ERR_SIZE = 2,          /* host: a size is 0 or negative */
    EX2D_ERR_DEGREE = 3,        /* host: gx or gy outside 0..8 */
    EX2D_ERR_LIMIT = 4,         /* host: n, m or the spot above this build's limits */
    EX2D_ERR_RANGE = 5,         /* host: a patch or table range outside [0, count) */
    EX2D_ERR_PARAM = 6,         /* host: regularize, psferr, jacobi_tol, jacobi_max_sweeps, ndiag out of range */
    EX2D_ERR_WORKSPACE = 7,     /* host: workspace NULL or smaller than ex2d_workspace_bytes() */
    EX2D_ERR_PATCH_TABLE = 8,   /* device: a patch's spectra or bins outside the PSF table, or its core
                                   outside the frame outputs, or nspecpad*m above max_nspecpad*m */
    EX2D_ERR_BOX = 9,           /* device: a patch box not wholly inside the image */
    EX2D_ERR_FOOTPRINT = 10,    /* device: a bin's spot footprint not wholly inside its patch box */
    EX2D_ERR_IVAR = 11,         /* device: ivar negative or not finite inside a patch box */
    EX2D_ERR_IMAGE = 12         /* device: image value not finite inside a patch box */
} ex2d_error;

/* The witness slot of each stage (ex2d_patches_launch takes an array of EX2D_WITNESS_SLOTS records). */
typedef enum ex2d_witness_slot {
    EX2D_W_VALIDATE = 0,
    EX2D_W_SPOTS = 1,
    EX2D_W_NORMAL = 2,
    EX2D_W_CHOLESKY = 3,
    EX2D_W_CBLOCKS = 4,
    EX2D_W_JACOBI = 5,
    EX2D_W_OUTPUTS = 6,
    EX2D_WITNESS_SLOTS = 7
} ex2d_witness_slot;

typedef struct ex2d_params {
    int nspec_tab, nwave_tab;   /* PSF table: padded spectra x padded wavelength bins */
    int gx, gy;                 /* Gauss-Hermite degrees in x and y, 0..8 */
    int hsizex, hsizey;         /* spot half sizes (8, 5): nx = 2*hsizex+1, ny = 2*hsizey+1 */
    int npix_x, npix_y;         /* image columns, rows */
    int nspec_out, nwave_out;   /* frame outputs [nspec_out][nwave_out] */
    int m;                      /* bins per patch spectrum, padding included (nwavestep + 2*wavepad = 74) */
    int wavepad;                /* padding bins on each side of a patch's core bins (12) */
    int max_nspecpad;           /* most spectra in any patch (7): n <= max_nspecpad*m */
    int max_ncore;              /* most core spectra in any patch (5): C and Q blocks per patch */
    int max_box_pixels;         /* largest patch box, pixels (model workspace) */
    int ndiag;                  /* Rdiags half width (hsizey = 5): 2*ndiag+1 diagonals */
    double regularize;          /* K3 alpha for well-weighted bins (0, specter's default) */
    double psferr;              /* K7 model error fraction (0.01) */
    double jacobi_tol;          /* K6 stop: every |a_pq| <= tol*sqrt(a_pp*a_qq) after a sweep (1e-14) */
    int jacobi_max_sweeps;      /* K6 limit (30) */
} ex2d_params;

/* One patch (all int32, so the table uploads as is). Bins k = s*m + w, s = 0..nspecpad-1, w = 0..m-1 map to
 * table entry (spec_first + s)*nwave_tab + wave_first + w. The core is spectra core_first..core_first+ncore-1
 * and bins wavepad..wavepad+ncore_wave-1; core (s, w) writes frame element
 * (out_spec_first + s - core_first, out_wave_first + w - wavepad). */
typedef struct ex2d_patch_desc {
    int32_t spec_first, nspecpad, core_first, ncore;
    int32_t wave_first, ncore_wave;
    int32_t out_spec_first, out_wave_first;
    int32_t xmin, xmax, ymin, ymax; /* pixel box [ymin, ymax) x [xmin, xmax) */
} ex2d_patch_desc;

/* Per-patch result. clipped: eigenvalues clipped in K6 (0 when well conditioned). sweeps_min/max: Jacobi
 * sweeps over the patch's blocks. */
typedef struct ex2d_patch_info {
    int32_t status, clipped, sweeps_min, sweeps_max;
} ex2d_patch_info;

/* The first validation failure of a range (code 0: none); patch is its global index, -1 when none. */
typedef struct ex2d_check_word {
    int32_t code, patch;
} ex2d_check_word;

/* Frame inputs (device pointers for the launchers, host pointers for the reference). */
typedef struct ex2d_inputs {
    const double *image, *ivar;
    const double *psf_sigx, *psf_sigy, *psf_dx, *psf_dy, *psf_c;
    const int32_t *psf_xc, *psf_yc;
    const ex2d_patch_desc *patches;
    int npatch;
} ex2d_inputs;

/* Frame outputs; each patch writes only its core. info is indexed by global patch index. */
typedef struct ex2d_outputs {
    double *flux, *ivar, *rdiags, *chi2pix, *pixmask_fraction;
    ex2d_patch_info *info;
} ex2d_outputs;

/* The workspace, carved from one buffer: slot b of a batch holds one patch's intermediates at
 * [b * stride]. icov is n_max x n_max (L overwrites it, lower triangle; the upper triangle keeps iCov);
 * cblk and qblk hold max_ncore blocks of m x m; xscr is K5's scratch, max_ncore blocks of n_max x m. */
typedef struct ex2d_workspace {
    double *icov, *y, *fluxweight, *xflux, *cblk, *qblk, *model, *xscr;
    size_t icov_stride, vec_stride, blk_stride, model_stride, xscr_stride; /* doubles between batch slots */
    ex2d_check_word *check;
    int max_batch;
} ex2d_workspace;

static inline size_t ex2d_align_doubles(size_t count)
{
    const size_t per = EX2D_WORKSPACE_ALIGN / sizeof(double);
    return (count + per - 1) / per * per;
}

/* The workspace bytes for max_batch patches at once (0 when params or max_batch are out of range). */
static inline size_t ex2d_workspace_bytes(const ex2d_params *p, int max_batch)
{
    if (!p || max_batch < 1 || p->m < 1 || p->max_nspecpad < 1 || p->max_ncore < 1 || p->max_box_pixels < 1 ||
        p->m > EX2D_MAX_M || (size_t)p->max_nspecpad * (size_t)p->m > EX2D_MAX_N || p->max_ncore > p->max_nspecpad)
        return 0;
    const size_t n = (size_t)p->max_nspecpad * (size_t)p->m;
    const size_t per_slot = ex2d_align_doubles(n * n) + 3 * ex2d_align_doubles(n) +
                            2 * ex2d_align_doubles((size_t)p->max_ncore * p->m * p->m) +
                            ex2d_align_doubles((size_t)p->max_box_pixels) +
                            ex2d_align_doubles((size_t)p->max_ncore * n * p->m);
    const size_t slots = (size_t)max_batch;
    if (per_slot > (SIZE_MAX - EX2D_WORKSPACE_ALIGN) / sizeof(double) / slots) return 0;
    return per_slot * slots * sizeof(double) + EX2D_WORKSPACE_ALIGN; /* + the check word */
}

/* The workspace layout over base (EX2D_WORKSPACE_ALIGN-aligned, ex2d_workspace_bytes(p, max_batch) bytes).
 * Returns 0, or EX2D_ERR_WORKSPACE when base is NULL or misaligned. Does not touch the memory. */
static inline int ex2d_workspace_carve(const ex2d_params *p, int max_batch, void *base, ex2d_workspace *ws)
{
    if (!base || ((uintptr_t)base % EX2D_WORKSPACE_ALIGN) || ex2d_workspace_bytes(p, max_batch) == 0)
        return EX2D_ERR_WORKSPACE;
    const size_t n = (size_t)p->max_nspecpad * (size_t)p->m;
    const size_t slots = (size_t)max_batch;
    double *at = (double *)base;
    ws->check = (ex2d_check_word *)base;
    at += EX2D_WORKSPACE_ALIGN / sizeof(double);
    ws->icov_stride = ex2d_align_doubles(n * n);
    ws->vec_stride = ex2d_align_doubles(n);
    ws->blk_stride = ex2d_align_doubles((size_t)p->max_ncore * p->m * p->m);
    ws->model_stride = ex2d_align_doubles((size_t)p->max_box_pixels);
    ws->xscr_stride = ex2d_align_doubles((size_t)p->max_ncore * n * p->m);
    ws->icov = at;        at += ws->icov_stride * slots;
    ws->y = at;           at += ws->vec_stride * slots;
    ws->fluxweight = at;  at += ws->vec_stride * slots;
    ws->xflux = at;       at += ws->vec_stride * slots;
    ws->cblk = at;        at += ws->blk_stride * slots;
    ws->qblk = at;        at += ws->blk_stride * slots;
    ws->model = at;       at += ws->model_stride * slots;
    ws->xscr = at;
    ws->max_batch = max_batch;
    return EX2D_OK;
}

/* Default numerics (regularize 0, psferr 0.01, jacobi_tol 1e-14, 30 sweeps, ndiag = hsizey) over the given
 * sizes; the caller fills the sizes (reference/ex2d_patch/ex2d_synth.h does it from a synthetic frame). */
static inline void ex2d_params_set_numerics_default(ex2d_params *p)
{
    p->regularize = 0.0;
    p->psferr = 0.01;
    p->jacobi_tol = 1e-14;
    p->jacobi_max_sweeps = 30;
    p->ndiag = p->hsizey;
}

/* The host-side rules (section 7 of the spec) in enum order; 0 when the call may proceed. Used by every
 * launcher and by the reference. in may be NULL only when npatch is 0 (a params-only check); patch_first and
 * npatch select a patch range inside in->npatch; with max_batch >= 1 the workspace must be non-NULL, aligned
 * and at least ex2d_workspace_bytes(p, max_batch) bytes (max_batch 0: no workspace involved). */
static inline int ex2d_check_args(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int npatch,
                                  int max_batch, const void *ws, size_t ws_bytes)
{
    if (!p) return EX2D_ERR_NULL;
    if (npatch > 0 && (!in || !in->image || !in->ivar || !in->psf_sigx || !in->psf_sigy || !in->psf_dx ||
                       !in->psf_dy || !in->psf_c || !in->psf_xc || !in->psf_yc || !in->patches))
        return EX2D_ERR_NULL;
    if (p->nspec_tab < 1 || p->nwave_tab < 1 || p->npix_x < 1 || p->npix_y < 1 || p->nspec_out < 1 ||
        p->nwave_out < 1 || p->m < 1 || p->max_nspecpad < 1 || p->max_ncore < 1 || p->max_box_pixels < 1 ||
        p->hsizex < 0 || p->hsizey < 0 || p->wavepad < 0 || npatch < 0 || max_batch < 0)
        return EX2D_ERR_SIZE;
    if (p->gx < 0 || p->gx > EX2D_MAX_DEGREE || p->gy < 0 || p->gy > EX2D_MAX_DEGREE) return EX2D_ERR_DEGREE;
    if (p->m > EX2D_MAX_M || p->max_nspecpad > EX2D_MAX_N / p->m || p->hsizex > EX2D_MAX_HALF_SIZE ||
        p->hsizey > EX2D_MAX_HALF_SIZE || p->max_ncore > p->max_nspecpad || p->wavepad > (p->m - 1) / 2) /* 2*wavepad < m, without overflow */
        return EX2D_ERR_LIMIT;
    if (npatch > 0 && (in->npatch < 1 || patch_first < 0 || patch_first > in->npatch - npatch))
        return EX2D_ERR_RANGE;
    /* Written as negations so that NaN fails every rule. */
    if (!(p->regularize >= 0.0 && p->regularize < 1e300) || !(p->psferr >= 0.0 && p->psferr < 1e300) ||
        !(p->jacobi_tol > 0.0 && p->jacobi_tol < 1.0) || p->jacobi_max_sweeps < 1 || p->jacobi_max_sweeps > 100 ||
        p->ndiag < 0 || p->ndiag >= p->m)
        return EX2D_ERR_PARAM;
    if (max_batch > 0) {
        const size_t need = ex2d_workspace_bytes(p, max_batch);
        if (!ws || ((uintptr_t)ws % EX2D_WORKSPACE_ALIGN) || need == 0 || ws_bytes < need) return EX2D_ERR_WORKSPACE;
    }
    return EX2D_OK;
}

static inline const char *ex2d_error_str(int code)
{
    switch (code) {
    case EX2D_OK: return "ok";
    case EX2D_ERR_NULL: return "a required pointer is NULL (params, inputs, image, ivar, the PSF table, patches or outputs)";
    case EX2D_ERR_SIZE: return "bad size: every size (table, image, frame outputs, spot, m, batch, patches) must be at least 1";
    case EX2D_ERR_DEGREE: return "bad Gauss-Hermite degree: gx and gy must be 0..8";
    case EX2D_ERR_LIMIT: return "above this build's limits: n = max_nspecpad*m <= 1024, m <= 112, hsizex and hsizey <= 15, max_ncore <= max_nspecpad, 2*wavepad < m";
    case EX2D_ERR_RANGE: return "bad range: the patch or table range must lie inside [0, count)";
    case EX2D_ERR_PARAM: return "bad numeric parameter: regularize >= 0, psferr >= 0, 0 < jacobi_tol < 1, jacobi_max_sweeps 1..100, ndiag 0..m-1, all finite";
    case EX2D_ERR_WORKSPACE: return "workspace NULL, misaligned (256 B) or smaller than ex2d_workspace_bytes(p, max_batch)";
    case EX2D_ERR_PATCH_TABLE: return "a patch's spectra or bins lie outside the PSF table, its core outside the frame outputs, or it is larger than max_nspecpad x m";
    case EX2D_ERR_BOX: return "a patch pixel box is not wholly inside the image";
    case EX2D_ERR_FOOTPRINT: return "a bin's spot footprint is not wholly inside its patch box";
    case EX2D_ERR_IVAR: return "ivar is negative or not finite inside a patch box";
    case EX2D_ERR_IMAGE: return "an image value is not finite inside a patch box";
    }
    return "unknown ex2d_patch error";
}

static inline const char *ex2d_patch_status_str(int status)
{
    switch (status) {
    case EX2D_PATCH_OK: return "ok";
    case EX2D_PATCH_NOT_POSDEF: return "not positive definite: a Cholesky pivot was <= 0 or not finite (retry with regularize = 1e-4)";
    case EX2D_PATCH_NOT_CONVERGED: return "Jacobi not converged within jacobi_max_sweeps";
    case EX2D_PATCH_NOT_RUN: return "not run: the validation pass rejected the range";
    }
    return "unknown ex2d_patch status";
}

#ifdef EX2D_PATCH_HAVE_CUDA_RUNTIME
/* Device validation of patches [patch_first, patch_first+npatch): sets ws->check (code, patch) to the first
 * failure by patch index, or (0, -1). d_ws is the carved workspace base. */
cudaError_t ex2d_validate_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int npatch,
                                 void *d_ws, size_t ws_bytes, int max_batch, gw_witness *d_witness,
                                 cudaStream_t stream);

/* K1: spots of table entries [entry_first, entry_first+count) into d_spots (indexed by entry). */
cudaError_t ex2d_spots_launch(const ex2d_params *p, const ex2d_inputs *d_in, int entry_first, int count,
                              double *d_spots, gw_witness *d_witness, cudaStream_t stream);

/* K3..K7 on the batch of patches [patch_first, patch_first+nbatch), nbatch <= max_batch, slot b = patch
 * patch_first + b. Each reads ws->check and writes nothing when it is set. */
cudaError_t ex2d_normal_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                               int patch_first, int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                               gw_witness *d_witness, cudaStream_t stream);
cudaError_t ex2d_cholesky_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                 void *d_ws, size_t ws_bytes, int max_batch, ex2d_patch_info *d_info,
                                 gw_witness *d_witness, cudaStream_t stream);
cudaError_t ex2d_cblocks_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                void *d_ws, size_t ws_bytes, int max_batch, const ex2d_patch_info *d_info,
                                gw_witness *d_witness, cudaStream_t stream);
cudaError_t ex2d_jacobi_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                               void *d_ws, size_t ws_bytes, int max_batch, ex2d_patch_info *d_info,
                               gw_witness *d_witness, cudaStream_t stream);
cudaError_t ex2d_outputs_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                int patch_first, int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                const ex2d_outputs *d_out, gw_witness *d_witness, cudaStream_t stream);

/* Validation, then K3..K7 over patches [patch_first, patch_first+npatch) in chunks of max_batch.
 * d_witness: NULL, or EX2D_WITNESS_SLOTS records (the EX2D_W_SPOTS slot is left alone). */
cudaError_t ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                int patch_first, int npatch, int max_batch, void *d_ws, size_t ws_bytes,
                                const ex2d_outputs *d_out, gw_witness *d_witness, cudaStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* EX2D_PATCH_H */
