/* SPDX-License-Identifier: MIT
 * CPU tests of the synthetic ex2d_patch frame (reference/ex2d_patch/ex2d_synth.h; docs/ex2d_patch.md,
 * "The synthetic frame") and of the reference's K1 spots (docs/ex2d_patch.md, "The model and the stages K1-K7",
 * "Invariants" and "Analytic cases"): corner rule, PSF table values, patch decomposition, truth, image, noise,
 * configuration errors. Small frames only (this executable also runs under Valgrind).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"

static const double pi = 3.14159265358979323846;

/* Fibres [first, first+n) x bins [wave_first, wave_first+nwave) of the default r camera, frame image, noise. */
static ex2d_frame_config small_config(int first, int n, int wave_first, int nwave)
{
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    cfg.fibre_first = first, cfg.nfibre = n, cfg.wave_first = wave_first, cfg.nwave = nwave;
    cfg.crop_to_boxes = 1;
    cfg.nthreads = 1;
    return cfg;
}

static void make(const ex2d_frame_config *cfg, ex2d_frame *f)
{
    const int rc = ex2d_frame_make(cfg, f);
    cr_assert(rc == EX2D_SYNTH_OK, "ex2d_frame_make: %d %s (%s)", rc, ex2d_synth_error_str(rc),
              ex2d_frame_config_check(cfg) ? ex2d_frame_config_check(cfg) : "config ok");
}

static size_t entries(const ex2d_frame *f) { return (size_t)f->params.nspec_tab * f->params.nwave_tab; }

/* ---------------------------------------------------------------- corner rule */

Test(ex2d_synth, corner_rule_sends_half_integers_up_and_keeps_the_offset_in_range)
{
    static const struct {
        double pos;
        int centre;
        double offset;
    } cases[] = {
        {10.5, 11, -0.5},   {10.25, 10, 0.25}, {11.0, 11, 0.0}, {0.5, 1, -0.5}, {1.5, 2, -0.5},
        {2047.5, 2048, -0.5}, {0.0, 0, 0.0},
        /* pos + 0.5 rounds to 1.0 in double; the exact floor(pos + 0.5) is 0 */
        {0.49999999999999994, 0, 0.49999999999999994},
        /* just below 2048 - 0.5: pos + 0.5 crosses a binade and can round to 2048 */
        {2047.4999999999998, 2047, 0.4999999999997726},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int32_t corner = -99;
        double offset = -99.0;
        ex2d_synth_corner(cases[i].pos, 8, &corner, &offset);
        cr_expect(corner == cases[i].centre - 8, "pos %.17g: corner %d, want %d", cases[i].pos, corner,
                  cases[i].centre - 8);
        cr_expect(offset == cases[i].offset, "pos %.17g: offset %.17g, want %.17g", cases[i].pos, offset,
                  cases[i].offset);
        cr_expect(offset >= -0.5 && offset < 0.5, "pos %.17g: offset %.17g outside [-0.5, 0.5)", cases[i].pos, offset);
        cr_expect(offset == cases[i].pos - (corner + 8), "pos %.17g: corner and offset disagree", cases[i].pos);
    }
}

Test(ex2d_synth, every_table_corner_follows_the_rule_in_image_coordinates)
{
    ex2d_frame_config cfg = small_config(20, 10, 0, 100);
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    for (size_t e = 0; e < entries(&f); e++) {
        const double cx = floor(f.trace_x[e]) + (f.trace_x[e] - floor(f.trace_x[e]) >= 0.5);
        const double cy = floor(f.trace_y[e]) + (f.trace_y[e] - floor(f.trace_y[e]) >= 0.5);
        cr_assert(f.xc[e] + p->hsizex + f.image_x0 == cx && f.dx[e] == f.trace_x[e] - cx, "entry %zu: x corner", e);
        cr_assert(f.yc[e] + p->hsizey + f.image_y0 == cy && f.dy[e] == f.trace_y[e] - cy, "entry %zu: y corner", e);
        cr_assert(f.dx[e] >= -0.5 && f.dx[e] < 0.5 && f.dy[e] >= -0.5 && f.dy[e] < 0.5, "entry %zu: offset range", e);
    }
    ex2d_frame_free(&f);
}

/* ---------------------------------------------------------------- PSF table values */

Test(ex2d_synth, table_holds_the_spec_values_at_known_points)
{
    /* Fibre 0 is a bundle edge: table spectrum 0 is fibre 0 and table bin wavepad is camera bin 0 (t = -1). */
    ex2d_frame_config cfg = small_config(0, 3, 0, 10);
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    cr_assert(f.tab_fibre_first == 0 && f.tab_wave_first == -12 && p->nspec_tab == 4 && p->nwave_tab == 10 + 24 + 50);
    size_t e = 12; /* fibre 0, camera bin 0 */
    cr_expect(fabs(f.trace_x[e] - (60.0 - 3.0 * 1980.0 / 2040.0 + 0.5)) < 1e-12, "X %.17g", f.trace_x[e]);
    cr_expect(fabs(f.trace_y[e] - (40.0 - 0.5 + 8.0)) < 1e-12, "Y %.17g", f.trace_y[e]);
    cr_expect(fabs(f.sigx[e] - 1.0) < 1e-15 && fabs(f.sigy[e] - 1.02) < 1e-15, "sigma %.17g %.17g", f.sigx[e],
              f.sigy[e]);
    /* c_ij at t = -1 (i = x degree), [5][5] */
    const double want_c[5][5] = {{1.0, 0.0, 0.05, 0.0, 0.008},
                                 {0.005, -0.02, 0.0, 0.0, 0.0},
                                 {0.02, 0.0, 0.005, 0.0, 0.0},
                                 {0.01, 0.0, 0.0, 0.0, 0.0},
                                 {0.01, 0.0, 0.0, 0.0, 0.0}};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            cr_expect(fabs(f.psf_c[e * 25 + i * 5 + j] - want_c[i][j]) < 1e-15, "c%d%d = %.17g, want %.17g", i, j,
                      f.psf_c[e * 25 + i * 5 + j], want_c[i][j]);
    /* Fibre 3, camera bin 41 (a line bin): lambda = 5792.8, t = 2*32.8/1860 - 1 */
    e = (size_t)3 * p->nwave_tab + 12 + 41;
    const double t = 2.0 * 32.8 / 1860.0 - 1.0, xc = 60.0 + 7.3 * 3;
    cr_expect(fabs(f.trace_x[e] - (xc + 3 * t * t * (xc - 2040.0) / 2040.0 - 0.5 * t)) < 1e-11, "X %.17g",
              f.trace_x[e]);
    cr_expect(fabs(f.trace_y[e] - (40.0 + 1.85 * 32.8 + 0.002 * (3 - 250) + 8 * t * t)) < 1e-11, "Y %.17g",
              f.trace_y[e]);
    cr_expect(fabs(f.sigx[e] - (1.05 + 0.05 * t)) < 1e-15 && fabs(f.sigy[e] - (1.10 + 0.08 * t)) < 1e-15);
    cr_expect(fabs(f.f_true[e] - (100.0 + 50.0 * sin(5792.8 / 37.0 + 3) + 2000.0)) < 1e-9, "f_true %.17g",
              f.f_true[e]);
    ex2d_frame_free(&f);

    /* The bundle gap: fibre 25 sits 7.3 + 12 px right of where fibre 24's pitch would put it. */
    cfg = small_config(24, 2, 1000, 10);
    make(&cfg, &f);
    const size_t e24 = (size_t)(24 - f.tab_fibre_first) * f.params.nwave_tab + 20;
    const size_t e25 = e24 + (size_t)f.params.nwave_tab;
    const double t1 = 2.0 * (0.8 * (1000 - 12 + 20)) / 1860.0 - 1.0;
    cr_expect(fabs((f.trace_x[e25] - f.trace_x[e24]) - 19.3 * (1.0 + 3 * t1 * t1 / 2040.0)) < 1e-10,
              "fibre 24 -> 25 step %.17g", f.trace_x[e25] - f.trace_x[e24]);
    ex2d_frame_free(&f);
}

Test(ex2d_synth, truth_has_lines_only_on_camera_bins_from_zero)
{
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    const double base41 = 100.0 + 50.0 * sin((5760.0 + 0.8 * 41) / 37.0 + 7);
    cr_expect(fabs(ex2d_synth_f_true(&cfg, 7, 41) - (base41 + 2000.0)) < 1e-9);
    cr_expect(fabs(ex2d_synth_f_true(&cfg, 7, 41 + 97) - 2000.0 -
                   (100.0 + 50.0 * sin((5760.0 + 0.8 * 138) / 37.0 + 7))) < 1e-9);
    /* -56 is 41 mod 97 mathematically, but a padding bin: no line */
    cr_expect(fabs(ex2d_synth_f_true(&cfg, 7, -56) - (100.0 + 50.0 * sin((5760.0 - 0.8 * 56) / 37.0 + 7))) < 1e-9);
    cr_expect(fabs(ex2d_synth_f_true(&cfg, 7, 42) - (100.0 + 50.0 * sin((5760.0 + 0.8 * 42) / 37.0 + 7))) < 1e-9);
}

/* ---------------------------------------------------------------- patch decomposition */

Test(ex2d_synth, patch_counts_follow_20_bundles_5_subbundles_and_50_bin_steps)
{
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    cr_expect(ex2d_synth_count_patches(&cfg) == 20 * 5 * 47, "full r frame: %d", ex2d_synth_count_patches(&cfg));
    static const int want[] = {1, 1, 47, 235, 4700};
    for (int tier = EX2D_TIER_S; tier <= EX2D_TIER_XL_FRAME; tier++) {
        cr_assert(ex2d_frame_config_tier(&cfg, tier) == 0);
        cr_expect(ex2d_synth_count_patches(&cfg) == want[tier], "tier %d: %d patches", tier,
                  ex2d_synth_count_patches(&cfg));
        cr_expect(ex2d_frame_config_check(&cfg) == NULL, "tier %d: %s", tier, ex2d_frame_config_check(&cfg));
    }
    cfg.nwave = 2325; /* 47 steps still; one bin fewer */
    cr_expect(ex2d_synth_count_patches(&cfg) == 4700);
    cfg.nwave = 2350 + 1;
    cr_expect(ex2d_synth_count_patches(&cfg) == 4800);
}

Test(ex2d_synth, cores_tile_the_frame_once_and_boxes_are_the_padded_footprint_boxes)
{
    /* Two bundles, three wavelength steps (the last one 20 bins): 30 patches. */
    ex2d_frame_config cfg = small_config(0, 50, 100, 120);
    cfg.add_noise = 0;
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    cr_assert(f.npatch == 30 && p->m == 74 && p->max_nspecpad == 7 && p->max_ncore == 5);
    cr_assert(p->nspec_out == 50 && p->nwave_out == 120 && f.tab_fibre_first == 0 && p->nspec_tab == 50);
    int *cover = calloc((size_t)p->nspec_out * p->nwave_out, sizeof(int));
    cr_assert(cover);
    for (int i = 0; i < f.npatch; i++) {
        const ex2d_patch_desc *d = &f.patches[i];
        const int sub = (i / 3) % 5, step = i % 3, edge = sub == 0 || sub == 4;
        cr_expect(d->nspecpad == (edge ? 6 : 7) && d->nspecpad * p->m == (edge ? 444 : 518), "patch %d nspecpad %d",
                  i, d->nspecpad);
        cr_expect(d->ncore == 5 && d->core_first == (sub == 0 ? 0 : 1), "patch %d core %d+%d", i, d->core_first,
                  d->ncore);
        cr_expect(d->spec_first + d->core_first == d->out_spec_first + f.tab_fibre_first - cfg.fibre_first);
        cr_expect(d->wave_first == step * 50 && d->ncore_wave == (step == 2 ? 20 : 50) &&
                      d->out_wave_first == step * 50,
                  "patch %d wave %d %d %d", i, d->wave_first, d->ncore_wave, d->out_wave_first);
        for (int s = 0; s < d->ncore; s++)
            for (int w = 0; w < d->ncore_wave; w++)
                cover[(size_t)(d->out_spec_first + s) * p->nwave_out + d->out_wave_first + w]++;
        /* The box is exactly the bounding box of the patch's footprints. */
        int x0 = INT32_MAX, x1 = INT32_MIN, y0 = INT32_MAX, y1 = INT32_MIN;
        for (int s = 0; s < d->nspecpad; s++)
            for (int w = 0; w < p->m; w++) {
                const size_t e = (size_t)(d->spec_first + s) * p->nwave_tab + d->wave_first + w;
                x0 = f.xc[e] < x0 ? f.xc[e] : x0;
                x1 = f.xc[e] + nx > x1 ? f.xc[e] + nx : x1;
                y0 = f.yc[e] < y0 ? f.yc[e] : y0;
                y1 = f.yc[e] + ny > y1 ? f.yc[e] + ny : y1;
            }
        cr_expect(d->xmin == x0 && d->xmax == x1 && d->ymin == y0 && d->ymax == y1, "patch %d box", i);
        cr_expect(d->xmin >= 0 && d->xmax <= p->npix_x && d->ymin >= 0 && d->ymax <= p->npix_y, "patch %d in image", i);
        if (d->nspecpad == 7) /* about 118 rows x 61 columns (docs/ex2d_patch.md, "Patches") */
            cr_expect(d->ymax - d->ymin >= 110 && d->ymax - d->ymin <= 126 && d->xmax - d->xmin >= 55 &&
                          d->xmax - d->xmin <= 66,
                      "patch %d box %d x %d", i, d->ymax - d->ymin, d->xmax - d->xmin);
    }
    for (size_t i = 0; i < (size_t)p->nspec_out * p->nwave_out; i++)
        cr_expect(cover[i] == 1, "frame element (%zu, %zu) covered %d times", i / p->nwave_out, i % p->nwave_out,
                  cover[i]);
    free(cover);
    cr_expect(p->max_box_pixels >= 7000 && p->max_box_pixels <= 8000, "max_box_pixels %d", p->max_box_pixels);
    ex2d_frame_free(&f);
}

Test(ex2d_synth, tier_s_and_m_are_single_patches_of_the_spec_size)
{
    static const struct {
        int tier, n, m, nspecpad;
    } want[] = {{EX2D_TIER_S, 54, 18, 3}, {EX2D_TIER_M, 518, 74, 7}};
    for (int i = 0; i < 2; i++) {
        ex2d_frame_config cfg;
        cr_assert(ex2d_frame_config_tier(&cfg, want[i].tier) == 0);
        ex2d_frame f;
        make(&cfg, &f);
        const ex2d_patch_desc *d = &f.patches[0];
        cr_expect(f.npatch == 1 && f.params.m == want[i].m && d->nspecpad == want[i].nspecpad &&
                      d->nspecpad * f.params.m == want[i].n,
                  "tier %d: %d patches, m %d, nspecpad %d", want[i].tier, f.npatch, f.params.m, d->nspecpad);
        /* Patch image: the image is the patch box itself */
        cr_expect(d->xmin == 0 && d->ymin == 0 && d->xmax == f.params.npix_x && d->ymax == f.params.npix_y);
        ex2d_frame_free(&f);
    }
}

/* ---------------------------------------------------------------- image, ivar, noise */

Test(ex2d_synth, splitmix64_gives_the_published_sequence)
{
    uint64_t state = 0;
    cr_expect(ex2d_splitmix64_next(&state) == 0xe220a8397b1dcdafULL);
    cr_expect(ex2d_splitmix64_next(&state) == 0x6e789e6aa1b965f4ULL);
    cr_expect(ex2d_splitmix64_next(&state) == 0x06c45d188009454fULL);
    cr_expect(state == 3 * 0x9e3779b97f4a7c15ULL);
    cr_expect(ex2d_unit_double(0) == 0.0);
    cr_expect(ex2d_unit_double(UINT64_MAX) == 1.0 - 0x1.0p-53);
    cr_expect(ex2d_unit_double(1ULL << 63) == 0.5);
}

Test(ex2d_synth, box_muller_uses_u1_then_u2_and_gives_unit_normals)
{
    uint64_t a = 12345, b = 12345;
    const double u1 = ex2d_unit_double(ex2d_splitmix64_next(&b));
    const double u2 = ex2d_unit_double(ex2d_splitmix64_next(&b));
    cr_expect(ex2d_normal_draw(&a) == sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * pi * u2));
    cr_expect(a == b, "one draw consumes two splitmix64 outputs");
    double sum = 0.0, sum2 = 0.0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        const double z = ex2d_normal_draw(&a);
        sum += z;
        sum2 += z * z;
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    cr_expect(fabs(mean) < 0.01 && fabs(var - 1.0) < 0.015, "mean %g, variance %g over %d draws", mean, var, n);
}

Test(ex2d_synth, frame_image_is_the_sum_of_every_table_spot_plus_seeded_noise)
{
    ex2d_frame_config cfg = small_config(12, 1, 600, 10);
    cfg.subbundle_size = 1, cfg.nwavestep = 10, cfg.wavepad = 4;
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    const size_t npix = (size_t)p->npix_x * p->npix_y, spot = (size_t)(2 * p->hsizex + 1) * (2 * p->hsizey + 1);
    double *model = calloc(npix, sizeof(double));
    cr_assert(model);
    for (size_t e = 0; e < entries(&f); e++)
        for (int iy = 0; iy < 2 * p->hsizey + 1; iy++)
            for (int ix = 0; ix < 2 * p->hsizex + 1; ix++) {
                const int x = f.xc[e] + ix, y = f.yc[e] + iy;
                if (x >= 0 && x < p->npix_x && y >= 0 && y < p->npix_y)
                    model[(size_t)y * p->npix_x + x] += f.f_true[e] * f.spots[e * spot + iy * (2 * p->hsizex + 1) + ix];
            }
    uint64_t state = cfg.seed;
    for (size_t i = 0; i < npix; i++) {
        cr_assert(model[i] == f.model[i], "model pixel %zu: %.17g, want %.17g", i, f.model[i], model[i]);
        const double var = 9.0 + model[i];
        cr_assert(f.ivar[i] == 1.0 / var, "ivar pixel %zu", i);
        cr_assert(f.image[i] == model[i] + sqrt(var) * ex2d_normal_draw(&state), "image pixel %zu", i);
    }
    free(model);
    ex2d_frame_free(&f);
}

Test(ex2d_synth, patch_image_is_a_times_f_true_and_masked_columns_get_zero_ivar)
{
    ex2d_frame_config cfg;
    cr_assert(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0);
    cfg.nmasked_cols = 2;
    cfg.masked_cols[0] = 140; /* CCD x inside the box (fibre 11's trace) */
    cfg.masked_cols[1] = 9000; /* off the CCD: no effect */
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    const ex2d_patch_desc *d = &f.patches[0];
    const int n = d->nspecpad * p->m, npix = p->npix_x * p->npix_y;
    double *a = malloc((size_t)npix * n * sizeof(double));
    cr_assert(a);
    cr_assert(ex2d_ref_dense_a(p, &f.inputs, f.spots, 0, a) == 0);
    for (int i = 0; i < npix; i++) {
        double v = 0.0;
        for (int k = 0; k < n; k++) v += a[(size_t)i * n + k] * f.f_true[ex2d_ref_entry(p, d, k)];
        cr_assert(fabs(v - f.image[i]) <= 1e-12 * fabs(v), "pixel %d: image %.17g, A f_true %.17g", i, f.image[i], v);
        const int masked = i % p->npix_x + f.image_x0 == 140;
        cr_assert(f.ivar[i] == (masked ? 0.0 : 1.0), "pixel %d: ivar %g", i, f.ivar[i]);
        cr_assert(isfinite(f.image[i]));
    }
    free(a);
    ex2d_frame_free(&f);
}

/* ---------------------------------------------------------------- K1 spots */

Test(ex2d_synth, spots_are_non_negative_sum_to_one_and_centre_within_0_7_px)
{
    ex2d_frame_config cfg = small_config(12, 1, 0, 2326); /* 3 fibres x 2400 bins: every t of the camera */
    cfg.subbundle_size = 1;
    cfg.add_noise = 0;
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    for (size_t e = 0; e < entries(&f); e++) {
        const double *s = f.spots + e * nx * ny;
        double sum = 0.0, cx = 0.0, cy = 0.0;
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) {
                const double v = s[iy * nx + ix];
                cr_assert(v >= 0.0 && !signbit(v), "entry %zu pixel (%d, %d): %g", e, iy, ix, v);
                sum += v;
                cx += v * (ix - p->hsizex);
                cy += v * (iy - p->hsizey);
            }
        cr_assert(fabs(sum - 1.0) <= 1e-14, "entry %zu: sum - 1 = %g", e, sum - 1.0);
        cr_assert(cx >= -0.7 && cx < 0.7 && cy >= -0.7 && cy < 0.7, "entry %zu: centroid (%g, %g)", e, cx, cy);
    }
    ex2d_frame_free(&f);
}

Test(ex2d_synth, pure_gaussian_spot_is_the_product_of_erf_differences)
{
    ex2d_frame_config cfg = small_config(12, 1, 600, 10);
    cfg.subbundle_size = 1, cfg.nwavestep = 10, cfg.wavepad = 4, cfg.gx = 0, cfg.gy = 0;
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    for (size_t e = 0; e < entries(&f); e++) {
        double px[2 * EX2D_MAX_HALF_SIZE + 1], py[2 * EX2D_MAX_HALF_SIZE + 1], sum = 0.0;
        for (int q = 0; q < nx; q++) {
            const double lo = (q - p->hsizex - 0.5 - f.dx[e]) / f.sigx[e],
                         hi = (q - p->hsizex + 0.5 - f.dx[e]) / f.sigx[e];
            px[q] = 0.5 * (erf(hi / sqrt(2.0)) - erf(lo / sqrt(2.0)));
        }
        for (int q = 0; q < ny; q++) {
            const double lo = (q - p->hsizey - 0.5 - f.dy[e]) / f.sigy[e],
                         hi = (q - p->hsizey + 0.5 - f.dy[e]) / f.sigy[e];
            py[q] = 0.5 * (erf(hi / sqrt(2.0)) - erf(lo / sqrt(2.0)));
        }
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) sum += py[iy] * px[ix];
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) {
                const double want = py[iy] * px[ix] / sum, got = f.spots[e * nx * ny + iy * nx + ix];
                cr_assert(fabs(got - want) <= 1e-15, "entry %zu (%d, %d): %.17g, want %.17g", e, iy, ix, got, want);
            }
    }
    ex2d_frame_free(&f);
}

/* He_g(u) G(u) by the recurrence, for the quadrature below. */
static double he_gauss(int g, double u)
{
    double h0 = 1.0, h1 = u;
    if (g == 0) h1 = 1.0;
    for (int k = 2; k <= g; k++) {
        const double h2 = u * h1 - (k - 1) * h0;
        h0 = h1;
        h1 = h2;
    }
    return h1 * exp(-0.5 * u * u) / sqrt(2.0 * pi);
}

Test(ex2d_synth, gauss_hermite_spot_matches_a_quadrature_of_the_expansion)
{
    /* 10-point Gauss-Legendre per pixel and axis of sum_ij c_ij He_i(u) He_j(v) G(u) G(v), clipped at 0 and
     * normalised: an independent check of the P_g = He_{g-1} G differences. */
    static const double node[5] = {0.1488743389816312, 0.4333953941292472, 0.6794095682990244, 0.8650633666889845,
                                   0.9739065285171717};
    static const double weight[5] = {0.2955242247147529, 0.2692667193099963, 0.2190863625159820, 0.1494513491505806,
                                     0.0666713443086881};
    ex2d_frame_config cfg = small_config(12, 1, 600, 10);
    cfg.subbundle_size = 1, cfg.nwavestep = 10, cfg.wavepad = 4;
    ex2d_frame f;
    make(&cfg, &f);
    const ex2d_params *p = &f.params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, nc = (p->gx + 1) * (p->gy + 1);
    for (size_t e = 0; e < entries(&f); e += 7) {
        /* He_g G at the 10 nodes of every pixel, per axis: hx[ix][a][g], hy[iy][b][g] */
        double hx[2 * EX2D_MAX_HALF_SIZE + 1][10][EX2D_MAX_DEGREE + 1],
            hy[2 * EX2D_MAX_HALF_SIZE + 1][10][EX2D_MAX_DEGREE + 1];
        const double half_x = 0.5 / f.sigx[e], half_y = 0.5 / f.sigy[e]; /* half a pixel in u */
        for (int q = 0; q < nx; q++)
            for (int a = 0; a < 10; a++)
                for (int g = 0; g <= p->gx; g++)
                    hx[q][a][g] = he_gauss(g, (q - p->hsizex - f.dx[e]) / f.sigx[e] +
                                                  half_x * (a < 5 ? -node[a] : node[a - 5]));
        for (int q = 0; q < ny; q++)
            for (int b = 0; b < 10; b++)
                for (int g = 0; g <= p->gy; g++)
                    hy[q][b][g] = he_gauss(g, (q - p->hsizey - f.dy[e]) / f.sigy[e] +
                                                  half_y * (b < 5 ? -node[b] : node[b - 5]));
        double want[(2 * EX2D_MAX_HALF_SIZE + 1) * (2 * EX2D_MAX_HALF_SIZE + 1)], sum = 0.0;
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) {
                double v = 0.0;
                for (int a = 0; a < 10; a++)
                    for (int b = 0; b < 10; b++) {
                        double g = 0.0;
                        for (int i = 0; i <= p->gx; i++)
                            for (int j = 0; j <= p->gy; j++)
                                g += f.psf_c[e * nc + i * (p->gy + 1) + j] * hx[ix][a][i] * hy[iy][b][j];
                        v += weight[a % 5] * weight[b % 5] * half_x * half_y * g;
                    }
                want[iy * nx + ix] = v > 0.0 ? v : 0.0;
                sum += want[iy * nx + ix];
            }
        for (int q = 0; q < nx * ny; q++)
            cr_assert(fabs(f.spots[e * nx * ny + q] - want[q] / sum) <= 1e-12, "entry %zu pixel %d: %.17g, want %.17g",
                      e, q, f.spots[e * nx * ny + q], want[q] / sum);
    }
    ex2d_frame_free(&f);
}

Test(ex2d_synth, degrees_above_the_last_coefficient_add_only_exact_zeros)
{
    ex2d_frame_config cfg = small_config(12, 1, 600, 10);
    cfg.subbundle_size = 1, cfg.nwavestep = 10, cfg.wavepad = 4;
    ex2d_frame f4, f8;
    make(&cfg, &f4);
    cfg.gx = 8, cfg.gy = 8;
    make(&cfg, &f8);
    const size_t bytes = entries(&f4) * (2 * f4.params.hsizex + 1) * (2 * f4.params.hsizey + 1) * sizeof(double);
    cr_expect(memcmp(f4.spots, f8.spots, bytes) == 0, "gx = gy = 8 must give the gx = gy = 4 spots bit for bit");
    ex2d_frame_free(&f4);
    ex2d_frame_free(&f8);
}

/* ---------------------------------------------------------------- errors */

Test(ex2d_synth, bad_configurations_are_refused_by_name_and_leave_the_frame_alone)
{
    static const struct {
        const char *field;
        int what;
    } cases[] = {{"fibres", 0}, {"fibres", 1}, {"wavelengths", 2}, {"hsizex", 3}, {"gx", 4},
                 {"subbundle_size", 5}, {"nwavestep", 6}, {"read_noise", 7}, {"image_kind", 8},
                 {"EX2D_IMAGE_PATCH", 9}, {"nmasked_cols", 10}, {"sigx0", 11}, {"add_noise", 12}, {"hsizey", 13},
                 {"line_phase", 14}, {"wave_step", 15}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ex2d_frame_config cfg;
        cr_assert(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0);
        switch (cases[i].what) {
        case 0: cfg.nfibre = 0; break;
        case 1: cfg.fibre_first = 499, cfg.nfibre = 2; break;
        case 2: cfg.wave_first = 2320, cfg.nwave = 10; break;
        case 3: cfg.hsizex = 16; break;
        case 4: cfg.gx = 9; break;
        case 5: cfg.subbundle_size = 26; break;
        case 6: cfg.nwavestep = 0; break;
        case 7: cfg.read_noise = 0.0; break;
        case 8: cfg.image_kind = 2; break;
        case 9: cfg.nwave = 20; break; /* two patches with a patch image */
        case 10: cfg.nmasked_cols = 9; break;
        case 11: cfg.sigx0 = 0.0, cfg.sigx1 = 0.0; break;
        case 12: cfg.add_noise = 2; break;
        case 13: cfg.wavepad = 0, cfg.nwavestep = 5; break; /* m = 5 = hsizey */
        case 14: cfg.line_phase = 97; break;
        default: cfg.wave_step = NAN; break;
        }
        const char *msg = ex2d_frame_config_check(&cfg);
        cr_assert(msg != NULL && strstr(msg, cases[i].field), "case %zu: message '%s' should name %s", i,
                  msg ? msg : "(none)", cases[i].field);
        ex2d_frame f, untouched;
        memset(&f, 0x5a, sizeof(f));
        memcpy(&untouched, &f, sizeof(f));
        cr_expect(ex2d_frame_make(&cfg, &f) == EX2D_SYNTH_ERR_CONFIG, "case %zu", i);
        cr_expect(memcmp(&f, &untouched, sizeof(f)) == 0, "case %zu: the frame was written", i);
    }
    ex2d_frame f;
    cr_expect(ex2d_frame_make(NULL, &f) == EX2D_SYNTH_ERR_NULL);
    ex2d_frame_config cfg;
    cr_assert(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0);
    cr_expect(ex2d_frame_make(&cfg, NULL) == EX2D_SYNTH_ERR_NULL);
    cr_expect(ex2d_frame_config_tier(&cfg, 5) == EX2D_SYNTH_ERR_TIER && ex2d_frame_config_tier(NULL, 0) != 0);
    /* A trace off the CCD's left edge */
    cfg.trace_x0 = 0.0, cfg.fibre_first = 0, cfg.image_kind = EX2D_IMAGE_FRAME;
    memset(&f, 0x5a, sizeof(f));
    cr_expect(ex2d_frame_make(&cfg, &f) == EX2D_SYNTH_ERR_GEOMETRY);
    cr_expect(f.params.m == (int)0x5a5a5a5a, "the frame was written on failure");
    for (int code = 1; code <= 5; code++) cr_expect(strlen(ex2d_synth_error_str(code)) > 10);
}

Test(ex2d_synth, tier_names_parse_case_insensitively)
{
    int tier = -1;
    cr_expect(ex2d_tier_parse("s", &tier) == 0 && tier == EX2D_TIER_S);
    cr_expect(ex2d_tier_parse("M", &tier) == 0 && tier == EX2D_TIER_M);
    cr_expect(ex2d_tier_parse("l", &tier) == 0 && tier == EX2D_TIER_L);
    cr_expect(ex2d_tier_parse("xl-bundle", &tier) == 0 && tier == EX2D_TIER_XL_BUNDLE);
    cr_expect(ex2d_tier_parse("XL", &tier) == 0 && tier == EX2D_TIER_XL_FRAME);
    cr_expect(ex2d_tier_parse("XLL", &tier) == EX2D_SYNTH_ERR_TIER &&
              ex2d_tier_parse("", &tier) == EX2D_SYNTH_ERR_TIER);
    cr_expect(ex2d_tier_parse(NULL, &tier) == EX2D_SYNTH_ERR_NULL);
}

Test(ex2d_synth, frame_free_zeroes_and_tolerates_a_second_call)
{
    ex2d_frame_config cfg;
    cr_assert(ex2d_frame_config_tier(&cfg, EX2D_TIER_S) == 0);
    ex2d_frame f;
    make(&cfg, &f);
    ex2d_frame_free(&f);
    cr_expect(f.spots == NULL && f.patches == NULL && f.npatch == 0);
    ex2d_frame_free(&f);
    ex2d_frame_free(NULL);
}
