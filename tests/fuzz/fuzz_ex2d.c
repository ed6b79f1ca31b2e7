/* SPDX-License-Identifier: MIT
 * ex2d_check_args, then ex2d_ref_validate (the CPU form of the device validation pass) on a fuzzed patch
 * table over the small fixed tier-S frame of reference/ex2d_patch/ex2d_synth.h. Decoded from the input (every value
 * relative to the frame's own, so an all-zero input is the valid call): the params, regularize/psferr/
 * jacobi_tol from a list of edge values, patch_first, npatch, max_batch, 0..4 patch descriptors, a few
 * NaN/Inf/negative pokes into ivar or image, one input pointer set to NULL or none, and the workspace
 * (exact, NULL, misaligned or one byte short). The sizes the validator indexes by (nspec_tab, nwave_tab,
 * npix_x, npix_y) are never above the frame's, and psf_xc, psf_yc, image, ivar and the patch table are
 * copied into exact-size allocations, so any read outside the declared sizes is an ASan report.
 * A rejected call must give ex2d_ref_validate the same code and leave the poisoned workspace alone; an
 * accepted one must set the check word to an independent reading of the rules (ex2d_patch_ref.h,
 * Validation: patches in order, rules in enum order) and write nothing else.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"
#include "fuzz_bytes.h"
#include "fuzz_check.h"

enum { max_patches = 4, max_ws_bytes = 16 << 20, poison = 0x5A };

static ex2d_frame frame;

/* base + a signed byte, or after a marker byte (0xF0..0xFF) any int32. */
static int take_rel(fuzz_bytes *b, int base)
{
    const unsigned v = (unsigned)fuzz_take(b, 1);
    if (v >= 0xF0) return (int)(int32_t)(uint32_t)fuzz_take(b, 4);
    return (int)((int64_t)base + (int8_t)v > INT32_MAX ? INT32_MAX : base + (int8_t)v);
}

/* A size the arrays are indexed by: never above the frame's. */
static int take_size(fuzz_bytes *b, int base)
{
    const int v = take_rel(b, base);
    return v > base ? base : v;
}

static double take_double(fuzz_bytes *b, double base)
{
    static const double edge[] = {0.0, -0.0, 1e-300, -1e-300, NAN, INFINITY, -INFINITY, 1.0, 1e300, 0.5, DBL_MIN};
    const unsigned v = (unsigned)fuzz_take(b, 1);
    return v == 0 ? base : edge[(v - 1) % (sizeof edge / sizeof edge[0])];
}

static void *alloc_or_die(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    FUZZ_REQUIRE(p != NULL, "out of memory");
    return p;
}

/* The validation rules read independently from ex2d_patch_ref.h, in 64 bits throughout. */
static int expected_patch(const ex2d_params *p, const ex2d_inputs *in, const ex2d_patch_desc *d)
{
    const int64_t m = p->m;
    if (d->nspecpad < 1 || d->nspecpad > p->max_nspecpad || d->spec_first < 0 ||
        (int64_t)d->spec_first + d->nspecpad > p->nspec_tab || d->wave_first < 0 ||
        (int64_t)d->wave_first + m > p->nwave_tab || d->ncore < 1 || d->ncore > p->max_ncore || d->core_first < 0 ||
        (int64_t)d->core_first + d->ncore > d->nspecpad || d->ncore_wave < 1 ||
        d->ncore_wave > m - 2 * (int64_t)p->wavepad || d->out_spec_first < 0 ||
        (int64_t)d->out_spec_first + d->ncore > p->nspec_out || d->out_wave_first < 0 ||
        (int64_t)d->out_wave_first + d->ncore_wave > p->nwave_out)
        return EX2D_ERR_PATCH_TABLE;
    if (d->xmin < 0 || d->xmax <= d->xmin || d->xmax > p->npix_x || d->ymin < 0 || d->ymax <= d->ymin ||
        d->ymax > p->npix_y || ((int64_t)d->xmax - d->xmin) * ((int64_t)d->ymax - d->ymin) > p->max_box_pixels)
        return EX2D_ERR_BOX;
    for (int64_t s = 0; s < d->nspecpad; s++)
        for (int64_t w = 0; w < m; w++) {
            const int64_t e = (d->spec_first + s) * p->nwave_tab + d->wave_first + w;
            const int64_t xc = in->psf_xc[e], yc = in->psf_yc[e];
            if (xc < d->xmin || xc + 2 * p->hsizex + 1 > d->xmax || yc < d->ymin || yc + 2 * p->hsizey + 1 > d->ymax)
                return EX2D_ERR_FOOTPRINT;
        }
    int bad_ivar = 0, bad_image = 0;
    for (int64_t y = d->ymin; y < d->ymax; y++)
        for (int64_t x = d->xmin; x < d->xmax; x++) {
            const double iv = in->ivar[y * p->npix_x + x], im = in->image[y * p->npix_x + x];
            if (isnan(iv) || isinf(iv) || iv < 0.0) bad_ivar = 1;
            if (isnan(im) || isinf(im)) bad_image = 1;
        }
    return bad_ivar ? EX2D_ERR_IVAR : bad_image ? EX2D_ERR_IMAGE : EX2D_OK;
}

static void expect_untouched(const unsigned char *ws, size_t bytes, size_t from, const char *what)
{
    for (size_t i = from; i < bytes; i++)
        FUZZ_REQUIRE(ws[i] == poison, "%s wrote workspace byte %zu", what, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!frame.patches) {
        ex2d_frame_config cfg;
        FUZZ_REQUIRE(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0, "tier S preset");
        cfg.nthreads = 1;
        const int rc = ex2d_frame_make(&cfg, &frame);
        FUZZ_REQUIRE(rc == 0, "ex2d_frame_make: %s", ex2d_synth_error_str(rc));
    }
    const ex2d_params *fp = &frame.params;
    fuzz_bytes b = {data, size};
    const unsigned control = (unsigned)fuzz_take(&b, 1);
    const int ws_mode = (int)(control & 3);     /* 0 exact, 1 NULL, 2 misaligned, 3 one byte short */
    const int null_field = (int)(control >> 2) - 1; /* 0..9 an input pointer, 10 in itself, else none */

    ex2d_params p;
    p.nspec_tab = take_size(&b, fp->nspec_tab);
    p.nwave_tab = take_size(&b, fp->nwave_tab);
    p.gx = take_rel(&b, fp->gx);
    p.gy = take_rel(&b, fp->gy);
    p.hsizex = take_rel(&b, fp->hsizex);
    p.hsizey = take_rel(&b, fp->hsizey);
    p.npix_x = take_size(&b, fp->npix_x);
    p.npix_y = take_size(&b, fp->npix_y);
    p.nspec_out = take_rel(&b, fp->nspec_out);
    p.nwave_out = take_rel(&b, fp->nwave_out);
    p.m = take_rel(&b, fp->m);
    p.wavepad = take_rel(&b, fp->wavepad);
    p.max_nspecpad = take_rel(&b, fp->max_nspecpad);
    p.max_ncore = take_rel(&b, fp->max_ncore);
    p.max_box_pixels = take_rel(&b, fp->max_box_pixels);
    p.ndiag = take_rel(&b, fp->ndiag);
    p.regularize = take_double(&b, fp->regularize);
    p.psferr = take_double(&b, fp->psferr);
    p.jacobi_tol = take_double(&b, fp->jacobi_tol);
    p.jacobi_max_sweeps = take_rel(&b, fp->jacobi_max_sweeps);

    const int ntab = (int)((fuzz_take(&b, 1) + 1) % (max_patches + 1)); /* 0 gives 1 patch */
    const int patch_first = take_rel(&b, 0), npatch = take_rel(&b, ntab), max_batch = take_rel(&b, 1);
    ex2d_patch_desc *patches = alloc_or_die((size_t)ntab * sizeof *patches);
    for (int i = 0; i < ntab; i++) {
        const ex2d_patch_desc *d0 = &frame.patches[0];
        patches[i] = (ex2d_patch_desc){
            take_rel(&b, d0->spec_first), take_rel(&b, d0->nspecpad),       take_rel(&b, d0->core_first),
            take_rel(&b, d0->ncore),      take_rel(&b, d0->wave_first),     take_rel(&b, d0->ncore_wave),
            take_rel(&b, d0->out_spec_first), take_rel(&b, d0->out_wave_first), take_rel(&b, d0->xmin),
            take_rel(&b, d0->xmax),       take_rel(&b, d0->ymin),           take_rel(&b, d0->ymax),
        };
    }

    /* Exact-size copies of what the validator indexes, at the declared (fuzzed, never larger) sizes. */
    const size_t entries = p.nspec_tab > 0 && p.nwave_tab > 0 ? (size_t)p.nspec_tab * p.nwave_tab : 0;
    const size_t pixels = p.npix_x > 0 && p.npix_y > 0 ? (size_t)p.npix_x * p.npix_y : 0;
    int32_t *xc = alloc_or_die(entries * 4), *yc = alloc_or_die(entries * 4);
    for (size_t e = 0; e < entries; e++) xc[e] = frame.xc[e], yc[e] = frame.yc[e];
    double *image = alloc_or_die(pixels * 8), *ivar = alloc_or_die(pixels * 8);
    for (size_t i = 0; i < pixels; i++) image[i] = frame.image[i], ivar[i] = frame.ivar[i];
    static const double bad_value[] = {NAN, INFINITY, -INFINITY, -1e-300, -0.0, DBL_MAX, -DBL_MIN, 1e308};
    for (int k = (int)(fuzz_take(&b, 1) % 4); k > 0 && pixels; k--) {
        const size_t at = (size_t)fuzz_take(&b, 2) % pixels;
        const unsigned what = (unsigned)fuzz_take(&b, 1);
        (what & 1 ? image : ivar)[at] = bad_value[(what >> 1) % 8];
    }

    ex2d_inputs in = frame.inputs;
    in.image = image, in.ivar = ivar, in.psf_xc = xc, in.psf_yc = yc, in.patches = patches, in.npatch = ntab;
    const void **field[] = {(const void **)&in.image,  (const void **)&in.ivar,  (const void **)&in.psf_sigx,
                            (const void **)&in.psf_sigy, (const void **)&in.psf_dx, (const void **)&in.psf_dy,
                            (const void **)&in.psf_c, (const void **)&in.psf_xc, (const void **)&in.psf_yc,
                            (const void **)&in.patches};
    if (null_field >= 0 && null_field < 10) *field[null_field] = NULL;
    const ex2d_inputs *inp = null_field == 10 ? NULL : &in;

    const size_t need = ex2d_workspace_bytes(&p, max_batch);
    const size_t alloc_bytes = need > 0 && need <= max_ws_bytes ? need + EX2D_WORKSPACE_ALIGN : EX2D_WORKSPACE_ALIGN;
    unsigned char *ws_mem = aligned_alloc(EX2D_WORKSPACE_ALIGN, alloc_bytes);
    FUZZ_REQUIRE(ws_mem != NULL, "out of memory");
    memset(ws_mem, poison, alloc_bytes);
    void *ws = ws_mem;
    size_t ws_bytes = need <= max_ws_bytes ? need : 0;
    if (ws_mode == 1) ws = NULL;
    if (ws_mode == 2) ws = ws_mem + 8;
    if (ws_mode == 3 && ws_bytes) ws_bytes--;

    const int rc = ex2d_check_args(&p, inp, patch_first, npatch, max_batch, ws, ws_bytes);
    FUZZ_REQUIRE(rc >= EX2D_OK && rc <= EX2D_ERR_WORKSPACE, "ex2d_check_args returned %d", rc);
    const int got = ex2d_ref_validate(&p, inp, patch_first, npatch, ws, ws_bytes, max_batch, 1);
    if (rc != EX2D_OK || npatch < 1 || max_batch < 1) {
        const int want = rc != EX2D_OK ? rc : EX2D_ERR_SIZE;
        FUZZ_REQUIRE(got == want, "ex2d_ref_validate returned %d for a call it must refuse with %d", got, want);
        expect_untouched(ws_mem, alloc_bytes, 0, "a refused ex2d_ref_validate");
    } else {
        ex2d_check_word want = {EX2D_OK, -1};
        for (int i = 0; i < npatch; i++) {
            const int code = expected_patch(&p, &in, &patches[patch_first + i]);
            if (code) {
                want = (ex2d_check_word){code, patch_first + i};
                break;
            }
        }
        const ex2d_check_word *check = ws;
        FUZZ_REQUIRE(got == want.code && check->code == want.code && check->patch == want.patch,
                     "ex2d_ref_validate returned %d, check {%d, %d}; the rules give {%d, %d}", got, check->code,
                     check->patch, want.code, want.patch);
        expect_untouched(ws_mem, alloc_bytes, sizeof(ex2d_check_word), "ex2d_ref_validate (beyond the check word)");
    }
    free(ws_mem);
    free(patches);
    free(xc);
    free(yc);
    free(image);
    free(ivar);
    return 0;
}
