/* SPDX-License-Identifier: MIT
 * ex2d_patch: DESI spectroperfectionism extraction of spectral patches, batched over patches, in FP64.
 *
 * What. The image p = A f + noise; column k of A is the Gauss-Hermite spot of bin k = (spectrum s, wavelength
 *   w) (Bolton & Schlegel 2010; desihub/specter, desihub/gpu_specter). Per patch of nspecpad spectra x m bins:
 *   K1 the spot of every PSF table entry; K3 the normal equations iCov, y (no FMA, bit for bit); K4 Cholesky
 *   and the solves (xflux); K5 the diagonal blocks C_bb of iCov^-1; K6 Q_b = C_bb^(-1/2) by cyclic Jacobi; K7
 *   flux, ivar, Rdiags, model, chi2pix and pixmask_fraction of the patch's core. Formulas, limits and how
 *   this differs from specter: docs/ex2d_patch.md.
 * Layout. Row-major FP64 unless said. image, ivar [npix_y][npix_x] (ivar 0 masks a pixel). The PSF table, entry
 *   e = s_tab*nwave_tab + w_tab: psf_sigx/sigy/dx/dy [nspec_tab][nwave_tab], psf_c [nspec_tab][nwave_tab][gx+1]
 *   [gy+1], psf_xc/psf_yc int32 spot corners, optional psf_tail [nspec_tab][nwave_tab][5]; spots [entries][2*hsizey+1][2*hsizex+1]; patches ex2d_patch_desc
 *   [npatch]; frame outputs flux, ivar, chi2pix, pixmask_fraction [nspec_out][nwave_out], rdiags [nspec_out]
 *   [2*ndiag+1][nwave_out], info [npatch]. Intermediates live in the caller's workspace (ex2d_workspace_carve).
 * Errors. ex2d_check_args() holds the host rules. A launcher returns, in this order and enqueuing nothing:
 *   cudaErrorInvalidValue when they or its own pointer and count rules fail; a CUDA error already pending
 *   (cudaPeekAtLastError), untouched; cudaErrorInvalidConfiguration when K6's shared memory exceeds this
 *   device's. Otherwise it enqueues its stages and returns their launches' result. The device validation
 *   pass stores the first bad patch of the range in the check word; the later stages then write nothing but
 *   info {EX2D_PATCH_NOT_RUN, 0, 0, 0} for every patch of the range. A patch whose factorisation or Jacobi
 *   fails gets its status in info[] and zeros for its core.
 * Stream. Launchers only enqueue work on `stream`, which must belong to the current device; they never
 *   allocate, synchronise or keep globals.
 * Tolerance against reference/ex2d_patch/ex2d_patch_ref.h: K3 bit-identical, flux pull 1e-9, ivar and Rdiags
 *   1e-10, chi2pix 1e-8 relative; every bound in docs/ex2d_patch.md.
 * Witness. One record per stage (ex2d_witness_slot); each stage's items: docs/ex2d_patch.md.
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

#include "gw_witness.h" /* the witness record, and the CUDA runtime headers where they exist */

#ifdef __cplusplus
extern "C" {
#endif

/* Limits of this build: they keep K4's and K6's per-patch work inside one block, and K1 at a thread per pixel. */
#define EX2D_MAX_DEGREE 8        /* Gauss-Hermite degrees gx, gy */
#define EX2D_MAX_N 1024          /* unknowns per patch, max_nspecpad * m */
#define EX2D_MAX_M 112           /* bins per patch spectrum */
#define EX2D_MAX_HALF_SIZE 15    /* hsizex, hsizey: spots of at most 31 x 31 pixels */
#define EX2D_WORKSPACE_ALIGN 256 /* bytes: the workspace base and every slot */

/* The PSF tail terms of one table entry, in ex2d_inputs.psf_tail (DESI's TAILAMP, TAILCORE, TAILXSCA, TAILYSCA,
 * TAILINDE). */
enum { EX2D_TAIL_AMP = 0, EX2D_TAIL_CORE = 1, EX2D_TAIL_XSCALE = 2, EX2D_TAIL_YSCALE = 3, EX2D_TAIL_INDEX = 4,
       EX2D_TAIL_TERMS = 5 };

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
    EX2D_W_VALIDATE = 0,  /* items: patches checked */
    EX2D_W_SPOTS = 1,     /* K1: spots */
    EX2D_W_NORMAL = 2,    /* K3: overlapping pairs a <= b */
    EX2D_W_CHOLESKY = 3,  /* K4: patches factorised */
    EX2D_W_CBLOCKS = 4,   /* K5: C blocks */
    EX2D_W_JACOBI = 5,    /* K6: blocks diagonalised */
    EX2D_W_OUTPUTS = 6,   /* K7: core bins written */
    EX2D_WITNESS_SLOTS = 7
} ex2d_witness_slot;

/* The frame's sizes and the extraction's numbers, the same for every patch and stage. */
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

/* The first validation failure of a range (code 0: none); patch is its global index, -1 when none. It is the
 * first thing in the workspace. */
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
    /* Optional: the PSF tail per table entry [nspec_tab][nwave_tab][EX2D_TAIL_TERMS]; K1 adds amp r2 / (core^2 + r2)^(1 + index/2), r2 = (dx xscale)^2 + (dy yscale)^2, at pixel centres
     * before clipping. NULL: no tail (the synthetic PSF). */
    const double *psf_tail;
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

/* ---- host helpers, plain C (defined in ex2d_patch_args.h, included at the end of this header) ---- */

/* count doubles rounded up to whole EX2D_WORKSPACE_ALIGN blocks. */
static inline size_t ex2d_align_doubles(size_t count);
/* The workspace bytes for max_batch patches at once (0 when params or max_batch are out of range). */
static inline size_t ex2d_workspace_bytes(const ex2d_params *p, int max_batch);
/* The workspace layout over base (EX2D_WORKSPACE_ALIGN-aligned, ex2d_workspace_bytes(p, max_batch) bytes):
 * 0, or EX2D_ERR_WORKSPACE when base is NULL or misaligned. Does not touch the memory. */
static inline int ex2d_workspace_carve(const ex2d_params *p, int max_batch, void *base, ex2d_workspace *ws);
/* Default numerics (regularize 0, psferr 0.01, jacobi_tol 1e-14, 30 sweeps, ndiag = hsizey) over p's sizes. */
static inline void ex2d_params_set_numerics_default(ex2d_params *p);
/* The host-side rules, in ex2d_error order; 0 when the call may proceed. Used by every launcher and by the
 * reference. in may be NULL only when npatch is 0 (a params-only check); with max_batch >= 1 the workspace
 * must be non-NULL, aligned and at least ex2d_workspace_bytes(p, max_batch) bytes. */
static inline int ex2d_check_args(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int npatch,
                                  int max_batch, const void *ws, size_t ws_bytes);
/* An ex2d_error in words, naming the rule. */
static inline const char *ex2d_error_str(int code);
/* An ex2d_patch_status in words. */
static inline const char *ex2d_patch_status_str(int status);

#ifdef GW_HAVE_CUDA_RUNTIME
/* ---- launchers (docs/architecture.md, "The launcher convention"): cudaError_t; const params *, device
 * pointers, the workspace, the witness, the stream last ---- */

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
/* K4 also writes info {EX2D_PATCH_NOT_RUN, 0, 0, 0} for each patch of the batch when ws->check is set. */
cudaError_t ex2d_cholesky_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                 void *d_ws, size_t ws_bytes, int max_batch, ex2d_patch_info *d_info,
                                 gw_witness *d_witness, cudaStream_t stream);
/* K5: the blocks C_b of every patch of the batch whose info is EX2D_PATCH_OK. */
cudaError_t ex2d_cblocks_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                void *d_ws, size_t ws_bytes, int max_batch, const ex2d_patch_info *d_info,
                                gw_witness *d_witness, cudaStream_t stream);
/* K6: Q_b from each C_b by Jacobi; info gets clipped, the sweeps and EX2D_PATCH_NOT_CONVERGED. */
cudaError_t ex2d_jacobi_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                               void *d_ws, size_t ws_bytes, int max_batch, ex2d_patch_info *d_info,
                               gw_witness *d_witness, cudaStream_t stream);
/* K7: flux, ivar, Rdiags, chi2pix and pixmask_fraction of each patch's core, into d_out. */
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

#include "ex2d_patch_args.h"

#endif /* EX2D_PATCH_H */
