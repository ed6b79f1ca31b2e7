/* SPDX-License-Identifier: MIT
 * Bad-input tables of ex2d_patch's CPU side. The rows of ex2d_bad_cases.c go through every public function
 * their `fns` names: ex2d_check_args, ex2d_ref_validate, ex2d_ref_spots, ex2d_ref_normal .. ex2d_ref_outputs
 * and ex2d_ref_patches. A row passes when the function returns the row's code, ex2d_error_str() of it holds
 * the row's words, and no byte of the inputs, the outputs or the workspace (all pre-filled: outputs and
 * workspace with the sentinel 0xA5) changed, except that a device-validation row must leave exactly the
 * check word {code, patch}, and that a rejected range is marked: ex2d_ref_patches after a failed validation,
 * and ex2d_ref_cholesky (K4) on a failed validation's check word, write info {EX2D_PATCH_NOT_RUN, 0, 0, 0}
 * for every patch of their range and nothing else. This file's own tables: ex2d_workspace_bytes / ex2d_workspace_carve, and the
 * synthetic frame's ex2d_frame_config_check / ex2d_frame_make / ex2d_frame_config_tier / ex2d_tier_parse.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "bad_input_util.h"
#include "ex2d_bad_cases.h"

#define WS_WORDS_FOR_CARVE "workspace NULL, misaligned (256 B) or smaller than ex2d_workspace_bytes(p, max_batch)"

/* ---------------------------------------------------------------- the shared rows */

static int call(unsigned fn, const ex2d_args *a)
{
    switch (fn) {
    case EX2D_FN_CHECK:
        return ex2d_check_args(a->p, a->in, a->patch_first, a->npatch, a->max_batch, a->ws, a->ws_bytes);
    case EX2D_FN_VALIDATE:
        return ex2d_ref_validate(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, 1);
    case EX2D_FN_SPOTS: return ex2d_ref_spots(a->p, a->in, a->entry_first, a->count, a->spots_out, 1);
    case EX2D_FN_NORMAL:
        return ex2d_ref_normal(a->p, a->in, a->spots, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, 1);
    case EX2D_FN_CHOLESKY:
        return ex2d_ref_cholesky(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, a->info, 1);
    case EX2D_FN_CBLOCKS:
        return ex2d_ref_cblocks(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, a->info, 1);
    case EX2D_FN_JACOBI:
        return ex2d_ref_jacobi(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, a->info, 1);
    case EX2D_FN_OUTPUTS:
        return ex2d_ref_outputs(a->p, a->in, a->spots, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch,
                                a->out, 1);
    case EX2D_FN_PATCHES:
        return ex2d_ref_patches(a->p, a->in, a->spots, a->patch_first, a->npatch, a->max_batch, a->ws, a->ws_bytes,
                                a->out, 1);
    }
    cr_assert_fail("no function %u", fn);
    return -1;
}

/* Every buffer of the arena: inputs (as broken by the row), outputs, spots, workspace (from `from`). */
typedef struct snap {
    bi_bytes b[11];
} snap;

static void snap_take(snap *s, const ex2d_arena *ar, size_t ws_from)
{
    const ex2d_params *p = &ar->f.params;
    const size_t bins = (size_t)p->nspec_out * p->nwave_out, pixels = (size_t)p->npix_x * p->npix_y;
    bi_bytes_take(&s->b[0], ar->patches, (size_t)ar->f.npatch * sizeof *ar->patches);
    bi_bytes_take(&s->b[1], ar->image, pixels * sizeof(double));
    bi_bytes_take(&s->b[2], ar->ivar, pixels * sizeof(double));
    bi_bytes_take(&s->b[3], (char *)ar->ws + ws_from, ar->ws_bytes - ws_from);
    bi_bytes_take(&s->b[4], ar->spots_out, ar->spots_doubles * sizeof(double));
    bi_bytes_take(&s->b[5], ar->out.flux, bins * sizeof(double));
    bi_bytes_take(&s->b[6], ar->out.ivar, bins * sizeof(double));
    bi_bytes_take(&s->b[7], ar->out.rdiags, bins * (size_t)(2 * p->ndiag + 1) * sizeof(double));
    bi_bytes_take(&s->b[8], ar->out.chi2pix, bins * sizeof(double));
    bi_bytes_take(&s->b[9], ar->out.pixmask_fraction, bins * sizeof(double));
    bi_bytes_take(&s->b[10], ar->out.info, (size_t)ar->f.npatch * sizeof(ex2d_patch_info));
}

/* Every buffer unchanged, except that info reads {EX2D_PATCH_NOT_RUN, 0, 0, 0} for the patches of [first,
 * first + n) when the call `marks` a rejected range. */
static void snap_expect(snap *s, const char *row, int marks, int first, int n)
{
    static const char *what[] = {"the patch table", "the image", "ivar", "the workspace", "the K1 spots output",
                                 "flux", "ivar (output)", "rdiags", "chi2pix", "pixmask_fraction",
                                 "info (EX2D_PATCH_NOT_RUN for the rejected range, unchanged elsewhere)"};
    ex2d_patch_info *want = (ex2d_patch_info *)s->b[10].copy; /* info as it was: the range becomes NOT_RUN */
    for (int k = first; marks && k < first + n; k++) want[k] = (ex2d_patch_info){EX2D_PATCH_NOT_RUN, 0, 0, 0};
    for (int i = 0; i < 11; i++) bi_bytes_expect_unchanged(&s->b[i], row, what[i]);
}

static void expect_rows(unsigned fn, const char *fn_name)
{
    ex2d_arena ar;
    ex2d_arena_open(&ar);
    size_t rows = 0;
    for (size_t i = 0; i < ex2d_bad_case_count; i++) {
        const ex2d_bad_case *c = &ex2d_bad_cases[i];
        if (!(c->fns & fn)) continue;
        rows++;
        ex2d_args a;
        ex2d_arena_reset(&ar, &a);
        c->breaks(&a, &ar);
        char row[200];
        snprintf(row, sizeof row, "%s, row \"%s\"", fn_name, c->name);
        const int device_rule = c->patch >= 0; /* the check word is the validation pass's output */
        snap s;
        snap_take(&s, &ar, device_rule ? sizeof(ex2d_check_word) : 0);
        const int rc = call(fn, &a);
        cr_expect_eq(rc, c->code, "%s: returned %d (%s), want %d (%s)", row, rc, ex2d_error_str(rc), c->code,
                     ex2d_error_str(c->code));
        bi_expect_words(row, ex2d_error_str(rc), c->words);
        if (device_rule) {
            const ex2d_check_word *w = ar.ws;
            cr_expect(w->code == c->code && w->patch == c->patch, "%s: check word {%d, %d}, want {%d, %d}", row,
                      w->code, w->patch, c->code, c->patch);
        }
        const int marked = (fn == EX2D_FN_PATCHES && device_rule) ||
                           (fn == EX2D_FN_CHOLESKY && c->patch == EX2D_CHECK_WORD_ROW);
        snap_expect(&s, row, marked, a.patch_first, a.npatch);
    }
    cr_expect_gt(rows, 0, "%s: no rows", fn_name);
    cr_log_info("%s: %zu bad inputs rejected", fn_name, rows);
    ex2d_arena_close(&ar);
}

Test(ex2d_check_args, returns_the_first_broken_host_rule) { expect_rows(EX2D_FN_CHECK, "ex2d_check_args"); }
Test(ex2d_ref_validate, sets_the_check_word_of_the_first_bad_patch_and_writes_nothing_else)
{
    expect_rows(EX2D_FN_VALIDATE, "ex2d_ref_validate");
}
Test(ex2d_ref_spots, rejects_and_writes_no_spot) { expect_rows(EX2D_FN_SPOTS, "ex2d_ref_spots"); }
Test(ex2d_ref_normal, rejects_and_writes_nothing) { expect_rows(EX2D_FN_NORMAL, "ex2d_ref_normal"); }
Test(ex2d_ref_cholesky, rejects_and_writes_nothing_but_not_run_after_a_failed_validation) { expect_rows(EX2D_FN_CHOLESKY, "ex2d_ref_cholesky"); }
Test(ex2d_ref_cblocks, rejects_and_writes_nothing) { expect_rows(EX2D_FN_CBLOCKS, "ex2d_ref_cblocks"); }
Test(ex2d_ref_jacobi, rejects_and_writes_nothing) { expect_rows(EX2D_FN_JACOBI, "ex2d_ref_jacobi"); }
Test(ex2d_ref_outputs, rejects_and_writes_nothing) { expect_rows(EX2D_FN_OUTPUTS, "ex2d_ref_outputs"); }
Test(ex2d_ref_patches, rejects_writes_no_output_and_marks_a_rejected_range_not_run) { expect_rows(EX2D_FN_PATCHES, "ex2d_ref_patches"); }

/* A row can only fail because of what it breaks: the unbroken call passes every function, and every
 * device-validation row passes the host check (it is caught by the validation pass, not before). */
Test(ex2d_bad_input, the_valid_call_passes_every_function)
{
    ex2d_arena ar;
    ex2d_arena_open(&ar);
    ex2d_args a;
    static const unsigned fns[] = {EX2D_FN_CHECK,    EX2D_FN_VALIDATE, EX2D_FN_SPOTS,   EX2D_FN_NORMAL,
                                   EX2D_FN_CHOLESKY, EX2D_FN_CBLOCKS,  EX2D_FN_JACOBI,  EX2D_FN_OUTPUTS,
                                   EX2D_FN_PATCHES};
    ex2d_arena_reset(&ar, &a);
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        const int rc = call(fns[i], &a); /* in pipeline order: each stage finds its inputs in the workspace */
        cr_expect_eq(rc, EX2D_OK, "function %u refused the valid call: %s", fns[i], ex2d_error_str(rc));
    }
    const ex2d_check_word *w = ar.ws;
    cr_expect(w->code == 0 && w->patch == -1, "check word {%d, %d} after a valid run", w->code, w->patch);
    for (size_t i = 0; i < ex2d_bad_case_count; i++) {
        const ex2d_bad_case *c = &ex2d_bad_cases[i];
        if (c->patch < 0) continue;
        ex2d_arena_reset(&ar, &a);
        c->breaks(&a, &ar);
        const int rc = call(EX2D_FN_CHECK, &a);
        cr_expect_eq(rc, EX2D_OK, "row \"%s\": ex2d_check_args refused a device-validation row: %s", c->name,
                     ex2d_error_str(rc));
    }
    ex2d_arena_close(&ar);
}

Test(ex2d_error_str, out_of_range_codes_get_a_fixed_word)
{
    static const int codes[] = {-1, 13, EX2D_REF_ERR_ALLOC, INT_MIN};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        cr_expect_str_eq(ex2d_error_str(codes[i]), "unknown ex2d_patch error", "ex2d_error_str(%d)", codes[i]);
        cr_expect_str_eq(ex2d_patch_status_str(codes[i]), "unknown ex2d_patch status", "ex2d_patch_status_str(%d)",
                         codes[i]);
    }
}

/* ---------------------------------------------------------------- ex2d_workspace_bytes / _carve */

typedef struct ws_case {
    const char *name;
    void (*breaks)(ex2d_params *p, int *max_batch);
    int base_offset; /* bytes added to the aligned base; -1: base NULL */
    int params_null;
} ws_case;

#define WS_BREAKER(fn, ...)                                                                                            \
    static void fn(ex2d_params *p, int *max_batch)                                                                     \
    {                                                                                                                  \
        (void)p, (void)max_batch;                                                                                      \
        __VA_ARGS__;                                                                                                   \
    }
WS_BREAKER(ws_none, (void)0)
WS_BREAKER(ws_max_batch_0, *max_batch = 0)
WS_BREAKER(ws_max_batch_minus_1, *max_batch = -1)
WS_BREAKER(ws_m_0, p->m = 0)
WS_BREAKER(ws_m_113, p->m = 113)
WS_BREAKER(ws_max_nspecpad_0, p->max_nspecpad = 0)
WS_BREAKER(ws_n_above_1024, p->max_nspecpad = EX2D_MAX_N / p->m + 1)
WS_BREAKER(ws_max_ncore_0, p->max_ncore = 0)
WS_BREAKER(ws_max_ncore_above, p->max_ncore = p->max_nspecpad + 1)
WS_BREAKER(ws_max_box_pixels_0, p->max_box_pixels = 0)
WS_BREAKER(ws_overflow, p->m = 1; p->max_nspecpad = EX2D_MAX_N; p->max_ncore = EX2D_MAX_N;
           p->max_box_pixels = INT_MAX; *max_batch = INT_MAX)

static const ws_case ws_cases[] = {
    {"params NULL", ws_none, 0, 1},
    {"max_batch 0", ws_max_batch_0, 0, 0},
    {"max_batch -1", ws_max_batch_minus_1, 0, 0},
    {"m 0", ws_m_0, 0, 0},
    {"m 113", ws_m_113, 0, 0},
    {"max_nspecpad 0", ws_max_nspecpad_0, 0, 0},
    {"max_nspecpad*m above 1024", ws_n_above_1024, 0, 0},
    {"max_ncore 0", ws_max_ncore_0, 0, 0},
    {"max_ncore above max_nspecpad", ws_max_ncore_above, 0, 0},
    {"max_box_pixels 0", ws_max_box_pixels_0, 0, 0},
    {"bytes overflow size_t (max_box_pixels and max_batch INT_MAX)", ws_overflow, 0, 0},
    {"base NULL", ws_none, -1, 0},
    {"base misaligned by 8 B", ws_none, 8, 0},
    {"base misaligned by 128 B", ws_none, 128, 0},
};

Test(ex2d_workspace_carve, refuses_bad_params_and_bases_and_fills_nothing)
{
    ex2d_arena ar;
    ex2d_arena_open(&ar);
    const size_t n = sizeof ws_cases / sizeof ws_cases[0];
    for (size_t i = 0; i < n; i++) {
        const ws_case *c = &ws_cases[i];
        ex2d_params p = ar.f.params;
        int max_batch = 2;
        c->breaks(&p, &max_batch);
        const ex2d_params *pp = c->params_null ? NULL : &p;
        const int base_row = c->base_offset != 0;
        const size_t bytes = ex2d_workspace_bytes(pp, max_batch);
        if (base_row)
            cr_expect_eq(bytes, ar.ws_bytes, "row \"%s\": the params are fine, yet bytes = %zu", c->name, bytes);
        else
            cr_expect_eq(bytes, 0, "row \"%s\": ex2d_workspace_bytes = %zu, want 0", c->name, bytes);
        void *base = c->base_offset < 0 ? NULL : (char *)ar.ws + c->base_offset;
        ex2d_workspace w;
        memset(&w, 0xA5, sizeof w);
        bi_bytes before;
        bi_bytes_take(&before, &w, sizeof w);
        const int rc = ex2d_workspace_carve(pp, max_batch, base, &w);
        char row[160];
        snprintf(row, sizeof row, "ex2d_workspace_carve, row \"%s\"", c->name);
        cr_expect_eq(rc, EX2D_ERR_WORKSPACE, "%s: returned %d, want EX2D_ERR_WORKSPACE", row, rc);
        bi_expect_words(row, ex2d_error_str(rc), WS_WORDS_FOR_CARVE);
        bi_bytes_expect_unchanged(&before, row, "the ex2d_workspace struct");
    }
    cr_log_info("ex2d_workspace_bytes: %d, ex2d_workspace_carve: %zu bad inputs rejected", 11, n);
    ex2d_arena_close(&ar);
}

/* ---------------------------------------------------------------- the synthetic frame's configuration */

typedef struct cfg_case {
    const char *name;
    void (*breaks)(ex2d_frame_config *cfg);
    int code;          /* ex2d_frame_make's ex2d_synth_error */
    const char *words; /* in ex2d_frame_config_check's message (CONFIG) or ex2d_synth_error_str (others) */
} cfg_case;

#define CFG_BREAKER(fn, ...)                                                                                           \
    static void fn(ex2d_frame_config *c) { __VA_ARGS__; }
CFG_BREAKER(c_nfibre_camera_0, c->nfibre_camera = 0)
CFG_BREAKER(c_nwave_camera_0, c->nwave_camera = 0)
CFG_BREAKER(c_nfibre_0, c->nfibre = 0)
CFG_BREAKER(c_fibre_first_past, c->fibre_first = c->nfibre_camera)
CFG_BREAKER(c_fibre_first_minus_1, c->fibre_first = -1)
CFG_BREAKER(c_nwave_int_max, c->nwave = INT_MAX)
CFG_BREAKER(c_wave_first_past, c->wave_first = c->nwave_camera - c->nwave + 1)
CFG_BREAKER(c_wave_step_0, c->wave_step = 0.0)
CFG_BREAKER(c_wave_span_nan, c->wave_span = NAN)
CFG_BREAKER(c_wave_min_inf, c->wave_min = INFINITY)
CFG_BREAKER(c_ccd_npix_y_0, c->ccd_npix_y = 0)
CFG_BREAKER(c_trace_x0_nan, c->trace_x0 = NAN)
CFG_BREAKER(c_y_per_angstrom_inf, c->y_per_angstrom = -INFINITY)
CFG_BREAKER(c_hsizex_16, c->hsizex = 16)
CFG_BREAKER(c_hsizey_minus_1, c->hsizey = -1)
CFG_BREAKER(c_gx_9, c->gx = 9)
CFG_BREAKER(c_gy_minus_1, c->gy = -1)
CFG_BREAKER(c_bundle_size_0, c->bundle_size = 0)
CFG_BREAKER(c_subbundle_above_bundle, c->subbundle_size = c->bundle_size + 1)
CFG_BREAKER(c_nwavestep_0, c->nwavestep = 0)
CFG_BREAKER(c_wavepad_minus_1, c->wavepad = -1)
CFG_BREAKER(c_m_113, c->nwavestep = EX2D_MAX_M + 1 - 2 * c->wavepad)
CFG_BREAKER(c_wavepad_int_max, c->wavepad = INT_MAX)
CFG_BREAKER(c_m_not_above_hsizey, c->nwavestep = 1; c->wavepad = 2)
CFG_BREAKER(c_sigx0_negative, c->sigx0 = -2.0)
CFG_BREAKER(c_sigy1_huge, c->sigy1 = 1e6; c->sigy0 = 0.0)
CFG_BREAKER(c_line_amp_nan, c->line_amp = NAN)
CFG_BREAKER(c_line_phase_eq_period, c->line_phase = c->line_period)
CFG_BREAKER(c_line_period_minus_1, c->line_period = -1)
CFG_BREAKER(c_image_kind_2, c->image_kind = 2)
CFG_BREAKER(c_ivar_kind_minus_1, c->ivar_kind = -1)
CFG_BREAKER(c_add_noise_2, c->add_noise = 2)
CFG_BREAKER(c_crop_minus_1, c->crop_to_boxes = -1)
CFG_BREAKER(c_read_noise_0, c->read_noise = 0.0)
CFG_BREAKER(c_read_noise_nan, c->read_noise = NAN)
CFG_BREAKER(c_nmasked_9, c->nmasked_cols = EX2D_SYNTH_MAX_MASKED_COLS + 1)
CFG_BREAKER(c_nmasked_minus_1, c->nmasked_cols = -1)
CFG_BREAKER(c_patch_image_two_patches, c->nwave = 20)
CFG_BREAKER(c_trace_off_ccd, c->trace_x0 = -1000.0)

#define FIB_W "fibres: nfibre >= 1 and 0 <= fibre_first <= nfibre_camera - nfibre"
#define WAV_W "wavelengths: nwave >= 1 and 0 <= wave_first <= nwave_camera - nwave"
#define M_W "nwavestep >= 1, wavepad >= 0 and m = nwavestep + 2*wavepad <= 112 (EX2D_MAX_M)"
#define LINE_W "line_amp finite, line_period >= 0, 0 <= line_phase < line_period"
#define C EX2D_SYNTH_ERR_CONFIG
static const cfg_case cfg_cases[] = {
    {"nfibre_camera 0", c_nfibre_camera_0, C, "nfibre_camera must be >= 1"},
    {"nwave_camera 0", c_nwave_camera_0, C, "nwave_camera must be >= 1"},
    {"nfibre 0", c_nfibre_0, C, FIB_W},
    {"fibre_first = nfibre_camera", c_fibre_first_past, C, FIB_W},
    {"fibre_first -1", c_fibre_first_minus_1, C, FIB_W},
    {"nwave INT_MAX", c_nwave_int_max, C, WAV_W},
    {"wave_first one past the camera", c_wave_first_past, C, WAV_W},
    {"wave_step 0", c_wave_step_0, C, "wave_step and wave_span > 0 and finite"},
    {"wave_span NaN", c_wave_span_nan, C, "wave_step and wave_span > 0 and finite"},
    {"wave_min +Inf", c_wave_min_inf, C, "wave_min must be finite"},
    {"ccd_npix_y 0", c_ccd_npix_y_0, C, "ccd_npix_x and ccd_npix_y must be >= 1"},
    {"trace_x0 NaN", c_trace_x0_nan, C, "trace_x0, fibre_pitch, bundle_gap, trace_y0 and y_per_angstrom must be finite"},
    {"y_per_angstrom -Inf", c_y_per_angstrom_inf, C, "y_per_angstrom must be finite"},
    {"hsizex 16", c_hsizex_16, C, "hsizex and hsizey must be 0..15 (EX2D_MAX_HALF_SIZE)"},
    {"hsizey -1", c_hsizey_minus_1, C, "hsizex and hsizey must be 0..15"},
    {"gx 9", c_gx_9, C, "gx and gy must be 0..8 (EX2D_MAX_DEGREE)"},
    {"gy -1", c_gy_minus_1, C, "gx and gy must be 0..8"},
    {"bundle_size 0", c_bundle_size_0, C, "bundle_size >= 1 and 1 <= subbundle_size <= bundle_size"},
    {"subbundle_size above bundle_size", c_subbundle_above_bundle, C, "1 <= subbundle_size <= bundle_size"},
    {"nwavestep 0", c_nwavestep_0, C, M_W},
    {"wavepad -1", c_wavepad_minus_1, C, M_W},
    {"m = 113", c_m_113, C, M_W},
    {"wavepad INT_MAX (2*wavepad overflowed int before the fix)", c_wavepad_int_max, C, M_W},
    {"m = 5 not above hsizey 5", c_m_not_above_hsizey, C, "m = nwavestep + 2*wavepad must exceed hsizey"},
    {"sigx0 -2: width negative", c_sigx0_negative, C, "sigx0 + sigx1*t and sigy0 + sigy1*t must be > 0"},
    {"sigy0 0, sigy1 1e6: width negative at t < 0", c_sigy1_huge, C, "sigy0 + sigy1*t must be > 0 over the table's wavelengths"},
    {"line_amp NaN", c_line_amp_nan, C, LINE_W},
    {"line_phase = line_period", c_line_phase_eq_period, C, LINE_W},
    {"line_period -1", c_line_period_minus_1, C, LINE_W},
    {"image_kind 2", c_image_kind_2, C, "image_kind must be EX2D_IMAGE_FRAME or EX2D_IMAGE_PATCH"},
    {"ivar_kind -1", c_ivar_kind_minus_1, C, "ivar_kind must be EX2D_IVAR_MODEL or EX2D_IVAR_ONE"},
    {"add_noise 2", c_add_noise_2, C, "add_noise and crop_to_boxes must be 0 or 1"},
    {"crop_to_boxes -1", c_crop_minus_1, C, "add_noise and crop_to_boxes must be 0 or 1"},
    {"read_noise 0", c_read_noise_0, C, "read_noise must be > 0 and finite"},
    {"read_noise NaN", c_read_noise_nan, C, "read_noise must be > 0 and finite"},
    {"nmasked_cols 9", c_nmasked_9, C, "nmasked_cols must be 0..8 (EX2D_SYNTH_MAX_MASKED_COLS)"},
    {"nmasked_cols -1", c_nmasked_minus_1, C, "nmasked_cols must be 0..8"},
    {"patch image with two patches", c_patch_image_two_patches, C,
     "image_kind EX2D_IMAGE_PATCH needs a frame of exactly one patch"},
    {"trace 1000 px left of the CCD", c_trace_off_ccd, EX2D_SYNTH_ERR_GEOMETRY, "a spot footprint leaves the CCD"},
};
#undef C

Test(ex2d_frame_make, bad_configs_are_named_and_leave_the_frame_alone)
{
    const size_t n = sizeof cfg_cases / sizeof cfg_cases[0];
    for (size_t i = 0; i < n; i++) {
        const cfg_case *c = &cfg_cases[i];
        ex2d_frame_config cfg;
        cr_assert(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0);
        cfg.nthreads = 1;
        cr_expect_null(ex2d_frame_config_check(&cfg), "tier S itself is refused");
        c->breaks(&cfg);
        char row[160];
        snprintf(row, sizeof row, "ex2d_frame_config_check / ex2d_frame_make, row \"%s\"", c->name);
        const char *why = ex2d_frame_config_check(&cfg);
        if (c->code == EX2D_SYNTH_ERR_CONFIG)
            bi_expect_words(row, why, c->words);
        else
            cr_expect_null(why, "%s: ex2d_frame_config_check refused it (%s), want a %s from ex2d_frame_make", row,
                           why, ex2d_synth_error_str(c->code));
        ex2d_frame f;
        memset(&f, 0xA5, sizeof f);
        bi_bytes before;
        bi_bytes_take(&before, &f, sizeof f);
        const int rc = ex2d_frame_make(&cfg, &f);
        cr_expect_eq(rc, c->code, "%s: ex2d_frame_make returned %d (%s), want %d", row, rc, ex2d_synth_error_str(rc),
                     c->code);
        bi_expect_words(row, ex2d_synth_error_str(rc),
                        c->code == EX2D_SYNTH_ERR_CONFIG ? "bad frame configuration|ex2d_frame_config_check"
                                                         : c->words);
        bi_bytes_expect_unchanged(&before, row, "the ex2d_frame");
    }
    cr_log_info("ex2d_frame_config_check / ex2d_frame_make: %zu bad configurations rejected", n);
}

Test(ex2d_frame_make, null_arguments_and_unknown_tiers_are_refused)
{
    ex2d_frame_config cfg;
    cr_assert(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0);
    ex2d_frame f;
    memset(&f, 0xA5, sizeof f);
    bi_bytes before;
    bi_bytes_take(&before, &f, sizeof f);
    cr_expect_eq(ex2d_frame_make(NULL, &f), EX2D_SYNTH_ERR_NULL);
    bi_bytes_expect_unchanged(&before, "ex2d_frame_make(NULL, f)", "the ex2d_frame");
    cr_expect_eq(ex2d_frame_make(&cfg, NULL), EX2D_SYNTH_ERR_NULL);
    bi_expect_words("ex2d_frame_make NULL", ex2d_synth_error_str(EX2D_SYNTH_ERR_NULL),
                    "a required pointer|is NULL");
    bi_expect_words("ex2d_frame_config_check(NULL)", ex2d_frame_config_check(NULL), "cfg is NULL");

    static const int tiers[] = {-1, EX2D_TIER_XL_FRAME + 1, INT_MAX};
    for (size_t i = 0; i < sizeof tiers / sizeof tiers[0]; i++) {
        ex2d_frame_config c;
        memset(&c, 0xA5, sizeof c);
        bi_bytes_take(&before, &c, sizeof c);
        const int rc = ex2d_frame_config_tier(&c, tiers[i]);
        cr_expect_eq(rc, EX2D_SYNTH_ERR_TIER, "ex2d_frame_config_tier(%d): %d", tiers[i], rc);
        bi_expect_words("ex2d_frame_config_tier", ex2d_synth_error_str(rc), "unknown tier|S, M, L, XL_BUNDLE or XL_FRAME");
        bi_bytes_expect_unchanged(&before, "ex2d_frame_config_tier", "the config");
    }
    cr_expect_eq(ex2d_frame_config_tier(NULL, EX2D_TIER_S), EX2D_SYNTH_ERR_NULL);
    static const char *names[] = {"", "XL-FRAMES", " S", "S ", "XXL", "frame", "0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int tier = 12345;
        cr_expect_eq(ex2d_tier_parse(names[i], &tier), EX2D_SYNTH_ERR_TIER, "ex2d_tier_parse(\"%s\")", names[i]);
        cr_expect_eq(tier, 12345, "ex2d_tier_parse(\"%s\") wrote the tier", names[i]);
    }
    int tier = 12345;
    cr_expect_eq(ex2d_tier_parse(NULL, &tier), EX2D_SYNTH_ERR_NULL);
    cr_expect_eq(ex2d_tier_parse("S", NULL), EX2D_SYNTH_ERR_NULL);
    cr_expect_eq(tier, 12345);
    cr_expect_str_eq(ex2d_synth_error_str(-1), "unknown ex2d_synth error");
}
