/* SPDX-License-Identifier: MIT
 * ex2d_synth: the synthetic r-camera frame shared by the ex2d_patch CPU reference, the GPU tests, the CLI and
 * the benchmarks (docs/ex2d_patch.md, "The synthetic frame"). Plain C11 host code; no CUDA.
 *
 * What it builds, for a frame configuration (core fibres x core wavelength bins):
 *   - the PSF parameter table on the padded grid: every table spectrum (the core fibres plus one neighbour on
 *     each side inside the same bundle) x every table bin (core bins with wavepad below and wavepad + nwavestep
 *     above), with X, Y, sigx, sigy, c_ij of docs/ex2d_patch.md, "PSF model and trace", and the corners by
 *     its "Corner rule": i0 = floor(X + 0.5), xc = i0 - hsizex, dx = X - i0 (likewise y). Entry
 *     e = s_tab*nwave_tab + w_tab.
 *   - the K1 spots of every entry (ex2d_ref_spots), which the image is made of;
 *   - the patch table ("Patches" there): subbundles of subbundle_size core fibres inside bundles of
 *     bundle_size, one neighbour of padding on each side except at bundle edges; wavelength steps of nwavestep
 *     core bins with wavepad on each side, m = nwavestep + 2*wavepad; box = the full padded box of the patch's
 *     footprints.
 *     Patches are ordered subbundle-major: the patches of one subbundle are consecutive, by wavelength.
 *   - the params (sizes from the table and patches, numerics from ex2d_params_set_numerics_default);
 *   - f_true, the image, ivar, and an ex2d_inputs view of the host arrays.
 *
 * Image window. With crop_to_boxes the image is the bounding box of all patch boxes (a window of the CCD whose
 * pixel (0, 0) is CCD pixel (image_x0, image_y0)); otherwise the whole CCD (image_x0 = image_y0 = 0). Corners
 * xc, yc in the table are image coordinates; X and Y are kept in CCD coordinates.
 *
 * Image kinds. EX2D_IMAGE_FRAME: the noiseless model is sum over every table entry of f_true*spot (only fibres
 * of the table shine; for a full frame that is all 500). EX2D_IMAGE_PATCH (single-patch tiers S, M): the model is
 * A_patch f_true over the patch's own bins, so the extraction model is exact (docs/ex2d_patch.md,
 * "Truth, image and noise").
 * ivar: EX2D_IVAR_MODEL gives 1/(read_noise^2 + model), EX2D_IVAR_ONE gives 1. With add_noise, every image
 * pixel in raster order gets sqrt(read_noise^2 + model)*z, z from one splitmix64 stream (seed) and Box-Muller
 * (two draws per pixel: u1 then u2). Masked columns (CCD x) get ivar = 0 on every image row; the image there
 * keeps its (finite) value.
 *
 * Tiers (docs/ex2d_patch.md, "Tiers"), by ex2d_frame_config_tier():
 *   S   fibre 12 (bundle 0, subbundle size 1, pads 11 and 13), 10 core bins from camera bin 600,
 *       nwavestep 10, wavepad 4: one patch, n = 3*18 = 54. Patch image, no noise, ivar 1.
 *   M   fibres 5..9 (pads 4, 10), 50 bins from camera bin 600: one 7 x 74 patch, n = 518. Patch image, no noise,
 *       ivar 1.
 *   L   fibres 5..9, all 2326 bins: one subbundle, 47 patches (n = 518). Frame image, noise, model ivar.
 *   XL_BUNDLE  fibres 0..24, all bins: 235 patches (n = 444 and 518). Frame image, noise, model ivar.
 *   XL_FRAME   fibres 0..499, all bins, whole CCD: 4,700 patches. Frame image, noise, model ivar.
 *
 * Errors: functions return 0 or an ex2d_synth_error (ex2d_synth_error_str() names the argument and the rule).
 * ex2d_frame_make writes nothing into *f unless it succeeds, and frees all it allocated when it fails.
 */
#ifndef EX2D_SYNTH_H
#define EX2D_SYNTH_H

#include <stdint.h>

#include "ex2d_patch.h"
#include "ex2d_psf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EX2D_SYNTH_MAX_MASKED_COLS 8

typedef enum ex2d_synth_error {
    EX2D_SYNTH_OK = 0,
    EX2D_SYNTH_ERR_NULL = 1,     /* cfg, f or an output pointer is NULL */
    EX2D_SYNTH_ERR_CONFIG = 2,   /* a configuration value out of range (the message lists the rules) */
    EX2D_SYNTH_ERR_GEOMETRY = 3, /* a spot footprint leaves the CCD, or a patch exceeds this build's limits */
    EX2D_SYNTH_ERR_ALLOC = 4,    /* out of memory (nothing is kept) */
    EX2D_SYNTH_ERR_TIER = 5,     /* unknown tier */
    EX2D_SYNTH_ERR_PSF = 6       /* the real PSF gives a width <= 0 or a value that is not finite */
} ex2d_synth_error;

typedef enum ex2d_tier {
    EX2D_TIER_S = 0,
    EX2D_TIER_M = 1,
    EX2D_TIER_L = 2,
    EX2D_TIER_XL_BUNDLE = 3,
    EX2D_TIER_XL_FRAME = 4
} ex2d_tier;

typedef enum ex2d_image_kind {
    EX2D_IMAGE_FRAME = 0, /* sum of f_true*spot over every table entry */
    EX2D_IMAGE_PATCH = 1  /* A_patch f_true of the single patch (the frame must have exactly one patch) */
} ex2d_image_kind;

typedef enum ex2d_ivar_kind {
    EX2D_IVAR_MODEL = 0, /* 1/(read_noise^2 + noiseless model) */
    EX2D_IVAR_ONE = 1    /* 1 everywhere (noiseless analytic tests: docs/ex2d_patch.md, "Analytic cases") */
} ex2d_ivar_kind;

typedef struct ex2d_frame_config {
    /* What is extracted: core fibres [fibre_first, fibre_first + nfibre) of the camera's nfibre_camera, core
     * bins [wave_first, wave_first + nwave) of its nwave_camera. */
    int fibre_first, nfibre;
    int wave_first, nwave;
    int nfibre_camera, nwave_camera; /* 500, 2326 */
    /* r camera (docs/ex2d_patch.md, "PSF model and trace"): lambda_w = wave_min + wave_step*w,
     * t = 2(lambda - wave_min)/wave_span - 1 */
    double wave_min, wave_step, wave_span;        /* 5760, 0.8, 1860 */
    int ccd_npix_x, ccd_npix_y;                   /* 4114, 4128 */
    double trace_x0, fibre_pitch, bundle_gap;     /* Xc_i = x0 + pitch*i + gap*(i/bundle_size): 60, 7.3, 12 */
    double trace_y0, y_per_angstrom;              /* Y = y0 + 1.85(lambda - wave_min) + ...: 40, 1.85 */
    double sigx0, sigx1, sigy0, sigy1;            /* sigx = sigx0 + sigx1*t: 1.05, 0.05; sigy: 1.10, 0.08 */
    int hsizex, hsizey;                           /* 8, 5 */
    int gx, gy;                                   /* Gauss-Hermite degrees, 0..8 (4, 4) */
    /* Decomposition (docs/ex2d_patch.md, "Patches") */
    int bundle_size, subbundle_size;              /* 25, 5 */
    int nwavestep, wavepad;                       /* 50, 12 */
    /* Truth: 100 + 50 sin(lambda/37 + fibre), + line_amp on camera bins w >= 0 with w % line_period ==
     * line_phase (line_period 0: no lines) */
    double line_amp;                              /* 2000 */
    int line_period, line_phase;                  /* 97, 41 */
    /* Image */
    int image_kind;                               /* ex2d_image_kind */
    int ivar_kind;                                /* ex2d_ivar_kind */
    int add_noise;                                /* 0 or 1 */
    double read_noise;                            /* 3 */
    uint64_t seed;                                /* splitmix64 state before the first draw */
    int crop_to_boxes;                            /* 1: image = bounding box of the patch boxes; 0: whole CCD */
    int nmasked_cols;                             /* 0..EX2D_SYNTH_MAX_MASKED_COLS */
    int masked_cols[EX2D_SYNTH_MAX_MASKED_COLS];  /* CCD x of each masked column (outside the image: no effect) */
    int nthreads;                                 /* threads for the spots (ex2d_ref_spots: 0 = every core) */
    /* NULL: the synthetic PSF above. Otherwise a real PSF (set with ex2d_frame_config_use_psf): the trace,
     * widths, Gauss-Hermite coefficients and tail come from it, fibres are counted from its FIBERMIN (fibre 0
     * of the camera is the PSF's first), bundles start there, lambda_w = wave_min + wave_step*w, and the
     * corners follow specter's rule (ex2d_psf_corner). Not owned. */
    const ex2d_psf *psf;
} ex2d_frame_config;

/* One owning struct: ex2d_frame_free releases everything. Table arrays are [nspec_tab][nwave_tab]. */
typedef struct ex2d_frame {
    ex2d_frame_config cfg;
    ex2d_params params;          /* sizes filled, numerics at their defaults */
    int tab_fibre_first;         /* global fibre of table spectrum 0 */
    int tab_wave_first;          /* camera bin of table bin 0 (wave_first - wavepad; may be negative) */
    int image_x0, image_y0;      /* CCD pixel of image pixel (0, 0) */
    int npatch;
    double *trace_x, *trace_y;   /* X, Y (CCD coordinates) */
    double *sigx, *sigy, *dx, *dy;
    double *psf_c;               /* [nspec_tab][nwave_tab][gx+1][gy+1], i = x degree */
    double *tail;                /* [nspec_tab][nwave_tab][EX2D_TAIL_TERMS] with a real PSF, else NULL */
    int32_t *xc, *yc;            /* spot lower-left corners, image coordinates */
    double *spots;               /* [nspec_tab*nwave_tab][ny][nx], ex2d_ref_spots of every entry */
    double *f_true;              /* truth flux of every table entry */
    double *model;               /* [npix_y][npix_x] noiseless image */
    double *image, *ivar;        /* [npix_y][npix_x] */
    ex2d_patch_desc *patches;    /* [npatch] */
    ex2d_inputs inputs;          /* host view: image, ivar, the PSF table and the patches above */
} ex2d_frame;

/* The full r frame (all 500 fibres, all 2326 bins) with the constants of docs/ex2d_patch.md,
 * "PSF model and trace"; frame image with noise, model ivar, seed 0x5eed2d, no masked columns, crop_to_boxes 0. */
void ex2d_frame_config_default(ex2d_frame_config *cfg);

/* The defaults, then the tier's preset (see the top of this file). Returns 0, EX2D_SYNTH_ERR_NULL or
 * EX2D_SYNTH_ERR_TIER. */
int ex2d_frame_config_tier(ex2d_frame_config *cfg, int tier);

/* "S", "M", "L", "XL_BUNDLE"/"XL-BUNDLE", "XL_FRAME"/"XL-FRAME"/"XL" (case-insensitive) -> tier. Returns 0 or
 * EX2D_SYNTH_ERR_TIER (EX2D_SYNTH_ERR_NULL for NULL). */
int ex2d_tier_parse(const char *name, int *tier);

/* Points cfg at psf and takes the camera from it: nfibre_camera, the CCD size, hsizex, hsizey, gx and gy.
 * wave_min and wave_step (the extraction grid), nwave_camera, the fibres, bins and decomposition stay the
 * caller's. */
void ex2d_frame_config_use_psf(ex2d_frame_config *cfg, const ex2d_psf *psf);

/* NULL when cfg is usable, else a message naming the field and the rule it breaks. */
const char *ex2d_frame_config_check(const ex2d_frame_config *cfg);

/* Patches the configuration decomposes into (subbundles x wavelength steps; no check of cfg beyond what the
 * count needs: -1 when nfibre, nwave, bundle_size, subbundle_size or nwavestep is < 1). */
int ex2d_synth_count_patches(const ex2d_frame_config *cfg);

/* Builds the frame. Returns 0 or an ex2d_synth_error; on failure *f is left as it was. */
int ex2d_frame_make(const ex2d_frame_config *cfg, ex2d_frame *f);

/* Frees every array of f and zeroes it (NULL or an already freed frame: no effect). */
void ex2d_frame_free(ex2d_frame *f);

/* The corner rule (docs/ex2d_patch.md, "Corner rule"): *corner = floor(pos + 0.5) - hsize,
 * *offset = pos - floor(pos + 0.5), in [-0.5, 0.5), with floor(pos + 0.5) taken in exact arithmetic (the
 * rounded sum pos + 0.5 can reach the next integer just below a half-integer). Exposed so tests can check
 * half-integers. */
void ex2d_synth_corner(double pos, int hsize, int32_t *corner, double *offset);

/* splitmix64 (Steele, Lea, Flood 2014): advances *state by 0x9e3779b97f4a7c15 and returns the mixed value. */
uint64_t ex2d_splitmix64_next(uint64_t *state);

/* u = (x >> 11) * 2^-53, in [0, 1). */
double ex2d_unit_double(uint64_t x);

/* One standard normal draw: u1, u2 from two splitmix64 draws, z = sqrt(-2 ln(1 - u1)) cos(2 pi u2). */
double ex2d_normal_draw(uint64_t *state);

/* Truth flux of global fibre `fibre` at camera bin w (any integer, padding included). */
double ex2d_synth_f_true(const ex2d_frame_config *cfg, int fibre, int w);

/* The truth as patch `patch`'s extraction sees it: (R f_true) at its core bin (c, j), with R = diag(1/s) Q from
 * the patch's Q blocks qblk (block c at c*m*m, as the workspace holds them) and s their row sums. The oracle
 * that an extracted flux is compared with (docs/ex2d_patch.md, "Analytic cases"). */
double ex2d_synth_r_truth(const ex2d_frame *f, const double *qblk, int patch, int c, int j);

const char *ex2d_synth_error_str(int code);

#ifdef __cplusplus
}
#endif

#endif /* EX2D_SYNTH_H */
