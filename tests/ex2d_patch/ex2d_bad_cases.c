/* SPDX-License-Identifier: MIT
 * The ex2d_patch bad-input rows (see ex2d_bad_cases.h), in ex2d_check_args's order (NULL, sizes, degree,
 * limits, range, numerics, workspace), then the stage rules that follow it (batch, stage pointers, a check
 * word left by a failed validation), K1's own rules, and the device-validation rules for the first and for
 * the later patch. A row breaking two rules expects the earlier one.
 */
#include "ex2d_bad_cases.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

/* ---------------------------------------------------------------- the arena */

static size_t pixels_of(const ex2d_params *p) { return (size_t)p->npix_x * (size_t)p->npix_y; }

void ex2d_arena_open(ex2d_arena *ar)
{
    memset(ar, 0, sizeof *ar);
    ex2d_frame_config cfg;
    cr_assert(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0);
    cfg.nwave = 20; /* two wavelength steps of 10: two patches */
    cfg.image_kind = EX2D_IMAGE_FRAME;
    cfg.nthreads = 1;
    const int rc = ex2d_frame_make(&cfg, &ar->f);
    cr_assert(rc == 0, "ex2d_frame_make: %s", ex2d_synth_error_str(rc));
    cr_assert(ar->f.npatch == 2, "the bad-input frame has %d patches, want 2", ar->f.npatch);
    const ex2d_params *p = &ar->f.params;
    ar->patches = malloc((size_t)ar->f.npatch * sizeof *ar->patches);
    ar->image = malloc(pixels_of(p) * sizeof(double));
    ar->ivar = malloc(pixels_of(p) * sizeof(double));
    ar->spots_doubles = (size_t)p->nspec_tab * p->nwave_tab * (2 * p->hsizex + 1) * (2 * p->hsizey + 1);
    ar->spots_out = malloc(ar->spots_doubles * sizeof(double));
    cr_assert(ar->patches && ar->image && ar->ivar && ar->spots_out, "out of memory");
    cr_assert(ex2d_ref_workspace_alloc(p, 2, &ar->ws, &ar->ws_bytes) == 0);
    cr_assert(ex2d_ref_outputs_alloc(p, ar->f.npatch, &ar->out) == 0);
}

void ex2d_arena_close(ex2d_arena *ar)
{
    free(ar->patches);
    free(ar->image);
    free(ar->ivar);
    free(ar->spots_out);
    free(ar->ws);
    ex2d_ref_outputs_free(&ar->out);
    ex2d_frame_free(&ar->f);
}

void ex2d_arena_reset(ex2d_arena *ar, ex2d_args *a)
{
    const ex2d_params *p = &ar->f.params;
    const size_t bins = (size_t)p->nspec_out * p->nwave_out;
    memcpy(ar->patches, ar->f.patches, (size_t)ar->f.npatch * sizeof *ar->patches);
    memcpy(ar->image, ar->f.image, pixels_of(p) * sizeof(double));
    memcpy(ar->ivar, ar->f.ivar, pixels_of(p) * sizeof(double));
    memset(ar->ws, 0xA5, ar->ws_bytes);
    memset(ar->spots_out, 0xA5, ar->spots_doubles * sizeof(double));
    memset(ar->out.flux, 0xA5, bins * sizeof(double));
    memset(ar->out.ivar, 0xA5, bins * sizeof(double));
    memset(ar->out.rdiags, 0xA5, bins * (size_t)(2 * p->ndiag + 1) * sizeof(double));
    memset(ar->out.chi2pix, 0xA5, bins * sizeof(double));
    memset(ar->out.pixmask_fraction, 0xA5, bins * sizeof(double));
    memset(ar->out.info, 0xA5, (size_t)ar->f.npatch * sizeof(ex2d_patch_info));
    memset(a, 0, sizeof *a);
    a->params = *p;
    a->p = &a->params;
    a->inputs = ar->f.inputs;
    a->inputs.image = ar->image, a->inputs.ivar = ar->ivar, a->inputs.patches = ar->patches;
    a->in = &a->inputs;
    a->patch_first = 0, a->npatch = ar->f.npatch, a->max_batch = 2;
    a->ws = ar->ws, a->ws_bytes = ar->ws_bytes;
    a->spots = ar->f.spots;
    a->info = ar->out.info;
    a->outputs = ar->out;
    a->out = &a->outputs;
    a->entry_first = 0, a->count = p->nspec_tab * p->nwave_tab;
    a->spots_out = ar->spots_out;
}

size_t ex2d_bad_rows_for(unsigned fn)
{
    size_t n = 0;
    for (size_t i = 0; i < ex2d_bad_case_count; i++) n += (ex2d_bad_cases[i].fns & fn) != 0;
    return n;
}

/* ---------------------------------------------------------------- breakers */

#define BREAKER(fn, ...)                                                                                               \
    static void fn(ex2d_args *a, ex2d_arena *ar)                                                                       \
    {                                                                                                                  \
        (void)a, (void)ar;                                                                                             \
        __VA_ARGS__;                                                                                                   \
    }

/* host pointers */
BREAKER(p_null, a->p = NULL)
BREAKER(p_null_and_m_0, a->p = NULL; a->params.m = 0)
BREAKER(in_null, a->in = NULL)
BREAKER(image_null, a->inputs.image = NULL)
BREAKER(ivar_null, a->inputs.ivar = NULL)
BREAKER(sigx_null, a->inputs.psf_sigx = NULL)
BREAKER(sigy_null, a->inputs.psf_sigy = NULL)
BREAKER(dx_null, a->inputs.psf_dx = NULL)
BREAKER(dy_null, a->inputs.psf_dy = NULL)
BREAKER(c_null, a->inputs.psf_c = NULL)
BREAKER(xc_null, a->inputs.psf_xc = NULL)
BREAKER(yc_null, a->inputs.psf_yc = NULL)
BREAKER(patches_null, a->inputs.patches = NULL)
BREAKER(image_null_and_gx_9, a->inputs.image = NULL; a->params.gx = 9)
BREAKER(image_null_and_npatch_minus_1, a->inputs.image = NULL; a->npatch = -1)
/* sizes */
BREAKER(nspec_tab_0, a->params.nspec_tab = 0)
BREAKER(nwave_tab_minus_1, a->params.nwave_tab = -1)
BREAKER(npix_x_0, a->params.npix_x = 0)
BREAKER(npix_y_int_min, a->params.npix_y = INT_MIN)
BREAKER(nspec_out_0, a->params.nspec_out = 0)
BREAKER(nwave_out_minus_5, a->params.nwave_out = -5)
BREAKER(m_0, a->params.m = 0)
BREAKER(max_nspecpad_0, a->params.max_nspecpad = 0)
BREAKER(max_ncore_0, a->params.max_ncore = 0)
BREAKER(max_box_pixels_0, a->params.max_box_pixels = 0)
BREAKER(hsizex_minus_1, a->params.hsizex = -1)
BREAKER(hsizey_minus_1, a->params.hsizey = -1)
BREAKER(wavepad_minus_1, a->params.wavepad = -1)
BREAKER(npatch_minus_1, a->npatch = -1)
BREAKER(max_batch_minus_1, a->max_batch = -1)
/* degree */
BREAKER(gx_minus_1, a->params.gx = -1)
BREAKER(gx_9, a->params.gx = 9)
BREAKER(gy_9, a->params.gy = 9)
BREAKER(gy_int_max, a->params.gy = INT_MAX)
BREAKER(gx_9_and_m_113, a->params.gx = 9; a->params.m = 113)
/* limits */
BREAKER(m_113, a->params.m = 113)
BREAKER(n_above_1024, a->params.max_nspecpad = EX2D_MAX_N / a->params.m + 1)
BREAKER(hsizex_16, a->params.hsizex = 16)
BREAKER(hsizey_16, a->params.hsizey = 16)
BREAKER(max_ncore_above_max_nspecpad, a->params.max_ncore = a->params.max_nspecpad + 1)
BREAKER(wavepad_half_m, a->params.wavepad = (a->params.m + 1) / 2)
BREAKER(wavepad_int_max, a->params.wavepad = INT_MAX) /* 2*wavepad overflowed int before (found by fuzz_ex2d) */
BREAKER(m_113_and_regularize_nan, a->params.m = 113; a->params.regularize = NAN)
/* range */
BREAKER(patch_first_minus_1, a->patch_first = -1)
BREAKER(patch_first_1, a->patch_first = 1)
BREAKER(npatch_3, a->npatch = 3)
BREAKER(in_npatch_0, a->inputs.npatch = 0)
BREAKER(patch_first_int_max, a->patch_first = INT_MAX)
BREAKER(npatch_int_max, a->npatch = INT_MAX)
BREAKER(patch_first_1_and_jacobi_tol_0, a->patch_first = 1; a->params.jacobi_tol = 0.0)
/* numerics */
BREAKER(regularize_negative, a->params.regularize = -1e-300)
BREAKER(regularize_nan, a->params.regularize = NAN)
BREAKER(regularize_inf, a->params.regularize = INFINITY)
BREAKER(psferr_negative, a->params.psferr = -0.5)
BREAKER(psferr_inf, a->params.psferr = INFINITY)
BREAKER(jacobi_tol_0, a->params.jacobi_tol = 0.0)
BREAKER(jacobi_tol_1, a->params.jacobi_tol = 1.0)
BREAKER(jacobi_tol_nan, a->params.jacobi_tol = NAN)
BREAKER(sweeps_0, a->params.jacobi_max_sweeps = 0)
BREAKER(sweeps_101, a->params.jacobi_max_sweeps = 101)
BREAKER(ndiag_minus_1, a->params.ndiag = -1)
BREAKER(ndiag_m, a->params.ndiag = a->params.m)
BREAKER(sweeps_0_and_ws_null, a->params.jacobi_max_sweeps = 0; a->ws = NULL)
/* workspace */
BREAKER(ws_null, a->ws = NULL)
BREAKER(ws_misaligned, a->ws = (char *)ar->ws + 8; a->ws_bytes = ar->ws_bytes - 8)
BREAKER(ws_one_short, a->ws_bytes = ar->ws_bytes - 1)
BREAKER(ws_bytes_0, a->ws_bytes = 0)
BREAKER(max_batch_3_ws_for_2, a->max_batch = 3)
/* the stages' own rules, after ex2d_check_args */
BREAKER(npatch_0, a->npatch = 0)
BREAKER(max_batch_0, a->max_batch = 0)
BREAKER(nbatch_above_max_batch, a->max_batch = 1)
BREAKER(spots_null, a->spots = NULL)
BREAKER(info_null, a->info = NULL)
BREAKER(out_null, a->out = NULL)
BREAKER(out_flux_null, a->outputs.flux = NULL)
BREAKER(out_ivar_null, a->outputs.ivar = NULL)
BREAKER(out_rdiags_null, a->outputs.rdiags = NULL)
BREAKER(out_chi2pix_null, a->outputs.chi2pix = NULL)
BREAKER(out_pixmask_null, a->outputs.pixmask_fraction = NULL)
BREAKER(out_info_null, a->outputs.info = NULL)
static void set_check(ex2d_arena *ar, int code, int patch)
{
    ex2d_check_word *w = ar->ws;
    w->code = code, w->patch = patch;
}
BREAKER(check_patch_table_0, set_check(ar, EX2D_ERR_PATCH_TABLE, 0))
BREAKER(check_box_1, set_check(ar, EX2D_ERR_BOX, 1))
BREAKER(check_footprint_0, set_check(ar, EX2D_ERR_FOOTPRINT, 0))
BREAKER(check_ivar_1, set_check(ar, EX2D_ERR_IVAR, 1))
BREAKER(check_image_0, set_check(ar, EX2D_ERR_IMAGE, 0))
/* K1 */
BREAKER(spots_out_null, a->spots_out = NULL)
BREAKER(count_0, a->count = 0)
BREAKER(entry_first_minus_1, a->entry_first = -1)
BREAKER(entry_first_1_all, a->entry_first = 1)
BREAKER(count_int_max, a->count = INT_MAX)
BREAKER(entry_first_int_max, a->entry_first = INT_MAX; a->count = 1)

/* ---------------------------------------------------------------- device-validation rules, per patch */

static ex2d_patch_desc *pd(ex2d_arena *ar, int i) { return &ar->patches[i]; }
static const ex2d_params *pp(ex2d_arena *ar) { return &ar->f.params; }

/* A pixel of patch i's box that no earlier patch's box holds, so the rule fires at patch i. */
static size_t pixel_of(ex2d_arena *ar, int i)
{
    const ex2d_patch_desc *d = pd(ar, i);
    for (int y = d->ymax - 1; y >= d->ymin; y--)
        for (int x = d->xmax - 1; x >= d->xmin; x--) {
            int earlier = 0;
            for (int j = 0; j < i; j++) {
                const ex2d_patch_desc *e = pd(ar, j);
                earlier |= x >= e->xmin && x < e->xmax && y >= e->ymin && y < e->ymax;
            }
            if (!earlier) return (size_t)y * pp(ar)->npix_x + x;
        }
    cr_assert_fail("patch %d's box lies inside the earlier boxes: no pixel for its row", i);
    return 0;
}

#define PER_PATCH(fn, body)                                                                                            \
    static void fn##_do(ex2d_args *a, ex2d_arena *ar, int i)                                                           \
    {                                                                                                                  \
        (void)a;                                                                                                       \
        ex2d_patch_desc *d = pd(ar, i);                                                                                \
        const ex2d_params *p = pp(ar);                                                                                 \
        (void)d, (void)p;                                                                                              \
        body;                                                                                                          \
    }                                                                                                                  \
    static void fn##_0(ex2d_args *a, ex2d_arena *ar) { fn##_do(a, ar, 0); }                                            \
    static void fn##_1(ex2d_args *a, ex2d_arena *ar) { fn##_do(a, ar, 1); }

PER_PATCH(spec_outside_table, d->spec_first = p->nspec_tab - d->nspecpad + 1)
PER_PATCH(wave_outside_table, d->wave_first = p->nwave_tab - p->m + 1)
PER_PATCH(wave_first_negative, d->wave_first = -1)
PER_PATCH(nspecpad_above_max, d->nspecpad = p->max_nspecpad + 1)
PER_PATCH(nspecpad_0, d->nspecpad = 0)
PER_PATCH(ncore_above_max, d->ncore = p->max_ncore + 1)
PER_PATCH(core_outside_patch, d->core_first = d->nspecpad - d->ncore + 1)
PER_PATCH(ncore_wave_0, d->ncore_wave = 0)
PER_PATCH(ncore_wave_above_m, d->ncore_wave = p->m - 2 * p->wavepad + 1)
PER_PATCH(out_spec_outside, d->out_spec_first = p->nspec_out - d->ncore + 1)
PER_PATCH(out_wave_negative, d->out_wave_first = -1)
PER_PATCH(out_wave_int_max, d->out_wave_first = INT32_MAX)
PER_PATCH(box_past_right, d->xmax = p->npix_x + 1)
PER_PATCH(box_ymin_negative, d->ymin = -1)
PER_PATCH(box_empty, d->xmax = d->xmin)
PER_PATCH(box_int_extremes, d->xmin = INT32_MIN; d->xmax = INT32_MAX)
PER_PATCH(footprint_left, d->xmin += 1)
PER_PATCH(footprint_top, d->ymax -= 1)
PER_PATCH(ivar_nan, ar->ivar[pixel_of(ar, i)] = NAN)
PER_PATCH(ivar_negative, ar->ivar[pixel_of(ar, i)] = -1e-300)
PER_PATCH(ivar_inf, ar->ivar[pixel_of(ar, i)] = INFINITY)
PER_PATCH(image_nan, ar->image[pixel_of(ar, i)] = NAN)
PER_PATCH(image_minus_inf, ar->image[pixel_of(ar, i)] = -INFINITY)
PER_PATCH(ivar_nan_and_image_inf, ar->ivar[pixel_of(ar, i)] = NAN; ar->image[pixel_of(ar, i)] = INFINITY)
PER_PATCH(image_nan_and_footprint, ar->image[pixel_of(ar, i)] = NAN; d->xmin += 1)
PER_PATCH(footprint_and_box_outside, d->xmin += 1; d->ymin = -1)
PER_PATCH(box_outside_and_spec_outside, d->ymin = -1; d->spec_first = p->nspec_tab)

static int box_pixels(const ex2d_patch_desc *d) { return (d->xmax - d->xmin) * (d->ymax - d->ymin); }
/* max_box_pixels one below patch 0's box; for patch 1, as large as both boxes and patch 1's box grown by a
 * row inside the image (its footprints stay inside, and BOX is tested before FOOTPRINT anyway). */
static void box_above_max_0(ex2d_args *a, ex2d_arena *ar) { a->params.max_box_pixels = box_pixels(pd(ar, 0)) - 1; }
static void box_above_max_1(ex2d_args *a, ex2d_arena *ar)
{
    ex2d_patch_desc *d = pd(ar, 1);
    const int b0 = box_pixels(pd(ar, 0)), b1 = box_pixels(d);
    a->params.max_box_pixels = b0 > b1 ? b0 : b1;
    if (d->ymin > 0)
        d->ymin--;
    else if (d->ymax < pp(ar)->npix_y)
        d->ymax++;
    else
        cr_assert_fail("patch 1's box spans the image: cannot grow it");
    cr_assert(box_pixels(d) > a->params.max_box_pixels);
}
/* Both patches broken: the lower index is reported. */
static void ivar_nan_0_and_spec_outside_1(ex2d_args *a, ex2d_arena *ar)
{
    ivar_nan_0(a, ar);
    spec_outside_table_1(a, ar);
}

/* ---------------------------------------------------------------- the table */

#define NULL_W "a required pointer is NULL"
#define SIZE_W "bad size|must be at least 1"
#define DEGREE_W "bad Gauss-Hermite degree|gx and gy must be 0..8"
#define LIMIT_W "above this build's limits"
#define RANGE_W "bad range|must lie inside [0, count)"
#define PARAM_W "bad numeric parameter"
#define WS_W "workspace NULL, misaligned (256 B) or smaller than ex2d_workspace_bytes(p, max_batch)"
#define TABLE_W "a patch's spectra or bins lie outside the PSF table|its core outside the frame outputs"
#define BOX_W "a patch pixel box is not wholly inside the image"
#define FOOT_W "a bin's spot footprint is not wholly inside its patch box"
#define IVAR_W "ivar is negative or not finite inside a patch box"
#define IMAGE_W "an image value is not finite inside a patch box"

/* K4..K6 take info; K3 and K7 take spots; K7 and the driver take the outputs */
#define FN_INFO (EX2D_FN_CHOLESKY | EX2D_FN_CBLOCKS | EX2D_FN_JACOBI)
#define FN_SPOTS_IN (EX2D_FN_NORMAL | EX2D_FN_OUTPUTS | EX2D_FN_PATCHES)
#define FN_OUT (EX2D_FN_OUTPUTS | EX2D_FN_PATCHES)
#define FN_BATCH (EX2D_FN_VALIDATE | EX2D_FN_STAGES | EX2D_FN_PATCHES)
#define FN_DEVICE (EX2D_FN_VALIDATE | EX2D_FN_PATCHES)

#define DEVICE_ROWS(fn, what, code, words)                                                                             \
    {what ", first patch", fn##_0, FN_DEVICE, code, 0, words},                                                        \
    {what ", later patch", fn##_1, FN_DEVICE, code, 1, words}

const ex2d_bad_case ex2d_bad_cases[] = {
    /* NULL */
    {"params NULL", p_null, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|params"},
    {"params NULL and m 0 (NULL first)", p_null_and_m_0, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|params"},
    {"inputs NULL", in_null, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|inputs"},
    {"image NULL", image_null, EX2D_FN_RANGED, EX2D_ERR_NULL, -1, NULL_W "|image"},
    {"ivar NULL", ivar_null, EX2D_FN_RANGED, EX2D_ERR_NULL, -1, NULL_W "|ivar"},
    {"psf_sigx NULL", sigx_null, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|the PSF table"},
    {"psf_sigy NULL", sigy_null, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|the PSF table"},
    {"psf_dx NULL", dx_null, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|the PSF table"},
    {"psf_dy NULL", dy_null, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|the PSF table"},
    {"psf_c NULL", c_null, EX2D_FN_PARAMS, EX2D_ERR_NULL, -1, NULL_W "|the PSF table"},
    {"psf_xc NULL", xc_null, EX2D_FN_RANGED, EX2D_ERR_NULL, -1, NULL_W "|the PSF table"},
    {"psf_yc NULL", yc_null, EX2D_FN_RANGED, EX2D_ERR_NULL, -1, NULL_W "|the PSF table"},
    {"patches NULL", patches_null, EX2D_FN_RANGED, EX2D_ERR_NULL, -1, NULL_W "|patches"},
    {"image NULL and gx 9 (NULL first)", image_null_and_gx_9, EX2D_FN_RANGED, EX2D_ERR_NULL, -1, NULL_W "|image"},
    /* sizes */
    {"image NULL and npatch -1 (no patch: inputs unchecked, the size fails)", image_null_and_npatch_minus_1,
     EX2D_FN_RANGED, EX2D_ERR_SIZE, -1, SIZE_W "|patches"},
    {"nspec_tab 0", nspec_tab_0, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|table"},
    {"nwave_tab -1", nwave_tab_minus_1, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|table"},
    {"npix_x 0", npix_x_0, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|image"},
    {"npix_y INT_MIN", npix_y_int_min, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|image"},
    {"nspec_out 0", nspec_out_0, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|frame outputs"},
    {"nwave_out -5", nwave_out_minus_5, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|frame outputs"},
    {"m 0", m_0, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|m"},
    {"max_nspecpad 0", max_nspecpad_0, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|patches"},
    {"max_ncore 0", max_ncore_0, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|patches"},
    {"max_box_pixels 0", max_box_pixels_0, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|patches"},
    {"hsizex -1", hsizex_minus_1, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|spot"},
    {"hsizey -1", hsizey_minus_1, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W "|spot"},
    {"wavepad -1", wavepad_minus_1, EX2D_FN_PARAMS, EX2D_ERR_SIZE, -1, SIZE_W},
    {"npatch -1", npatch_minus_1, EX2D_FN_RANGED, EX2D_ERR_SIZE, -1, SIZE_W "|patches"},
    {"max_batch -1", max_batch_minus_1, EX2D_FN_RANGED, EX2D_ERR_SIZE, -1, SIZE_W "|batch"},
    /* degree */
    {"gx -1", gx_minus_1, EX2D_FN_PARAMS, EX2D_ERR_DEGREE, -1, DEGREE_W},
    {"gx 9", gx_9, EX2D_FN_PARAMS, EX2D_ERR_DEGREE, -1, DEGREE_W},
    {"gy 9", gy_9, EX2D_FN_PARAMS, EX2D_ERR_DEGREE, -1, DEGREE_W},
    {"gy INT_MAX", gy_int_max, EX2D_FN_PARAMS, EX2D_ERR_DEGREE, -1, DEGREE_W},
    {"gx 9 and m 113 (degree first)", gx_9_and_m_113, EX2D_FN_PARAMS, EX2D_ERR_DEGREE, -1, DEGREE_W},
    /* limits */
    {"m 113", m_113, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1, LIMIT_W "|m <= 112"},
    {"max_nspecpad*m above 1024", n_above_1024, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1, LIMIT_W "|n = max_nspecpad*m <= 1024"},
    {"hsizex 16", hsizex_16, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1, LIMIT_W "|hsizex and hsizey <= 15"},
    {"hsizey 16", hsizey_16, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1, LIMIT_W "|hsizex and hsizey <= 15"},
    {"max_ncore above max_nspecpad", max_ncore_above_max_nspecpad, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1,
     LIMIT_W "|max_ncore <= max_nspecpad"},
    {"2*wavepad >= m", wavepad_half_m, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1, LIMIT_W "|2*wavepad < m"},
    {"wavepad INT_MAX", wavepad_int_max, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1, LIMIT_W "|2*wavepad < m"},
    {"m 113 and regularize NaN (limit first)", m_113_and_regularize_nan, EX2D_FN_PARAMS, EX2D_ERR_LIMIT, -1,
     LIMIT_W "|m <= 112"},
    /* range */
    {"patch_first -1", patch_first_minus_1, EX2D_FN_RANGED, EX2D_ERR_RANGE, -1, RANGE_W "|patch"},
    {"patch_first 1: [1, 3) past 2 patches", patch_first_1, EX2D_FN_RANGED, EX2D_ERR_RANGE, -1, RANGE_W},
    {"npatch 3 of 2", npatch_3, EX2D_FN_RANGED, EX2D_ERR_RANGE, -1, RANGE_W},
    {"inputs.npatch 0", in_npatch_0, EX2D_FN_RANGED, EX2D_ERR_RANGE, -1, RANGE_W},
    {"patch_first INT_MAX", patch_first_int_max, EX2D_FN_RANGED, EX2D_ERR_RANGE, -1, RANGE_W},
    {"npatch INT_MAX", npatch_int_max, EX2D_FN_RANGED, EX2D_ERR_RANGE, -1, RANGE_W},
    {"patch_first 1 and jacobi_tol 0 (range first)", patch_first_1_and_jacobi_tol_0, EX2D_FN_RANGED, EX2D_ERR_RANGE,
     -1, RANGE_W},
    /* numerics */
    {"regularize -1e-300", regularize_negative, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|regularize >= 0"},
    {"regularize NaN", regularize_nan, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|regularize >= 0|all finite"},
    {"regularize +Inf", regularize_inf, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|all finite"},
    {"psferr -0.5", psferr_negative, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|psferr >= 0"},
    {"psferr +Inf", psferr_inf, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|psferr >= 0|all finite"},
    {"jacobi_tol 0", jacobi_tol_0, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|0 < jacobi_tol < 1"},
    {"jacobi_tol 1", jacobi_tol_1, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|0 < jacobi_tol < 1"},
    {"jacobi_tol NaN", jacobi_tol_nan, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|0 < jacobi_tol < 1"},
    {"jacobi_max_sweeps 0", sweeps_0, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|jacobi_max_sweeps 1..100"},
    {"jacobi_max_sweeps 101", sweeps_101, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|jacobi_max_sweeps 1..100"},
    {"ndiag -1", ndiag_minus_1, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|ndiag 0..m-1"},
    {"ndiag m", ndiag_m, EX2D_FN_PARAMS, EX2D_ERR_PARAM, -1, PARAM_W "|ndiag 0..m-1"},
    {"jacobi_max_sweeps 0 and workspace NULL (numerics first)", sweeps_0_and_ws_null, EX2D_FN_RANGED, EX2D_ERR_PARAM,
     -1, PARAM_W "|jacobi_max_sweeps 1..100"},
    /* workspace */
    {"workspace NULL", ws_null, EX2D_FN_RANGED, EX2D_ERR_WORKSPACE, -1, WS_W},
    {"workspace misaligned by 8 B", ws_misaligned, EX2D_FN_RANGED, EX2D_ERR_WORKSPACE, -1, WS_W},
    {"workspace one byte short", ws_one_short, EX2D_FN_RANGED, EX2D_ERR_WORKSPACE, -1, WS_W},
    {"workspace of 0 bytes", ws_bytes_0, EX2D_FN_RANGED, EX2D_ERR_WORKSPACE, -1, WS_W},
    {"max_batch 3 with the workspace for 2", max_batch_3_ws_for_2, EX2D_FN_RANGED, EX2D_ERR_WORKSPACE, -1, WS_W},
    /* the batched functions' own rules */
    {"npatch (nbatch) 0", npatch_0, FN_BATCH, EX2D_ERR_SIZE, -1, SIZE_W "|patches"},
    {"max_batch 0", max_batch_0, FN_BATCH, EX2D_ERR_SIZE, -1, SIZE_W "|batch"},
    {"nbatch 2 above max_batch 1", nbatch_above_max_batch, EX2D_FN_STAGES, EX2D_ERR_RANGE, -1, RANGE_W},
    {"spots (input) NULL", spots_null, FN_SPOTS_IN, EX2D_ERR_NULL, -1, NULL_W},
    {"info NULL", info_null, FN_INFO, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"outputs NULL", out_null, FN_OUT, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"outputs.flux NULL", out_flux_null, FN_OUT, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"outputs.ivar NULL", out_ivar_null, FN_OUT, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"outputs.rdiags NULL", out_rdiags_null, FN_OUT, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"outputs.chi2pix NULL", out_chi2pix_null, FN_OUT, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"outputs.pixmask_fraction NULL", out_pixmask_null, FN_OUT, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"outputs.info NULL", out_info_null, FN_OUT, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"check word {PATCH_TABLE, 0} from a failed validation", check_patch_table_0, EX2D_FN_STAGES,
     EX2D_ERR_PATCH_TABLE, EX2D_CHECK_WORD_ROW, TABLE_W},
    {"check word {BOX, 1}", check_box_1, EX2D_FN_STAGES, EX2D_ERR_BOX, EX2D_CHECK_WORD_ROW, BOX_W},
    {"check word {FOOTPRINT, 0}", check_footprint_0, EX2D_FN_STAGES, EX2D_ERR_FOOTPRINT, EX2D_CHECK_WORD_ROW, FOOT_W},
    {"check word {IVAR, 1}", check_ivar_1, EX2D_FN_STAGES, EX2D_ERR_IVAR, EX2D_CHECK_WORD_ROW, IVAR_W},
    {"check word {IMAGE, 0}", check_image_0, EX2D_FN_STAGES, EX2D_ERR_IMAGE, EX2D_CHECK_WORD_ROW, IMAGE_W},
    /* K1 */
    {"spots (output) NULL", spots_out_null, EX2D_FN_SPOTS, EX2D_ERR_NULL, -1, NULL_W "|outputs"},
    {"count 0", count_0, EX2D_FN_SPOTS, EX2D_ERR_SIZE, -1, SIZE_W},
    {"entry_first -1", entry_first_minus_1, EX2D_FN_SPOTS, EX2D_ERR_RANGE, -1, RANGE_W "|table range"},
    {"entry_first 1 with every entry", entry_first_1_all, EX2D_FN_SPOTS, EX2D_ERR_RANGE, -1, RANGE_W "|table range"},
    {"count INT_MAX", count_int_max, EX2D_FN_SPOTS, EX2D_ERR_RANGE, -1, RANGE_W "|table range"},
    {"entry_first INT_MAX", entry_first_int_max, EX2D_FN_SPOTS, EX2D_ERR_RANGE, -1, RANGE_W "|table range"},
    /* device validation (the reference's ex2d_ref_validate and the driver) */
    DEVICE_ROWS(spec_outside_table, "spectra past the table", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(wave_outside_table, "bins past the table", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(wave_first_negative, "wave_first -1", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(nspecpad_above_max, "nspecpad above max_nspecpad", EX2D_ERR_PATCH_TABLE,
                TABLE_W "|larger than max_nspecpad x m"),
    DEVICE_ROWS(nspecpad_0, "nspecpad 0", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(ncore_above_max, "ncore above max_ncore", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(core_outside_patch, "core spectra past nspecpad", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(ncore_wave_0, "ncore_wave 0", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(ncore_wave_above_m, "ncore_wave above m - 2*wavepad", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(out_spec_outside, "core spectra past nspec_out", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(out_wave_negative, "out_wave_first -1", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(out_wave_int_max, "out_wave_first INT32_MAX (end overflows int)", EX2D_ERR_PATCH_TABLE, TABLE_W),
    DEVICE_ROWS(box_past_right, "box xmax past npix_x", EX2D_ERR_BOX, BOX_W),
    DEVICE_ROWS(box_ymin_negative, "box ymin -1", EX2D_ERR_BOX, BOX_W),
    DEVICE_ROWS(box_empty, "box xmax == xmin", EX2D_ERR_BOX, BOX_W),
    DEVICE_ROWS(box_int_extremes, "box x from INT32_MIN to INT32_MAX", EX2D_ERR_BOX, BOX_W),
    DEVICE_ROWS(box_above_max, "box above max_box_pixels", EX2D_ERR_BOX, "a patch pixel box"),
    DEVICE_ROWS(footprint_left, "box xmin + 1 cuts a footprint", EX2D_ERR_FOOTPRINT, FOOT_W),
    DEVICE_ROWS(footprint_top, "box ymax - 1 cuts a footprint", EX2D_ERR_FOOTPRINT, FOOT_W),
    DEVICE_ROWS(ivar_nan, "ivar NaN in the box", EX2D_ERR_IVAR, IVAR_W),
    DEVICE_ROWS(ivar_negative, "ivar -1e-300 in the box", EX2D_ERR_IVAR, IVAR_W),
    DEVICE_ROWS(ivar_inf, "ivar +Inf in the box", EX2D_ERR_IVAR, IVAR_W),
    DEVICE_ROWS(image_nan, "image NaN in the box", EX2D_ERR_IMAGE, IMAGE_W),
    DEVICE_ROWS(image_minus_inf, "image -Inf in the box", EX2D_ERR_IMAGE, IMAGE_W),
    DEVICE_ROWS(ivar_nan_and_image_inf, "ivar NaN and image +Inf (ivar first)", EX2D_ERR_IVAR, IVAR_W),
    DEVICE_ROWS(image_nan_and_footprint, "image NaN and a cut footprint (footprint first)", EX2D_ERR_FOOTPRINT, FOOT_W),
    DEVICE_ROWS(footprint_and_box_outside, "a cut footprint and ymin -1 (box first)", EX2D_ERR_BOX, BOX_W),
    DEVICE_ROWS(box_outside_and_spec_outside, "ymin -1 and spectra past the table (table first)", EX2D_ERR_PATCH_TABLE,
                TABLE_W),
    {"patch 0 ivar NaN and patch 1 spectra past the table (lowest patch first)", ivar_nan_0_and_spec_outside_1,
     FN_DEVICE, EX2D_ERR_IVAR, 0, IVAR_W},
};

const size_t ex2d_bad_case_count = sizeof ex2d_bad_cases / sizeof ex2d_bad_cases[0];
