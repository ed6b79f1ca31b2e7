/* SPDX-License-Identifier: MIT
 * The real-PSF path of ex2d_patch on the CPU (docs/ex2d_patch.md, "Real DESI PSFs"):
 *   ex2d_psf        Legendre evaluation, specter's corner rule, the tail term, ex2d_psf_check, and the frame
 *                   configuration rules with a PSF (no data needed: a small PSF made in memory);
 *   ex2d_psf_data   against specter's own evaluation of the DESI test PSF ($GW_DATA_DIR/desi): every trace
 *                   point within 1e-9 px, every spot corner identical and every spot pixel within 1e-12 on the
 *                   reference's K1, the tail shown to matter, and the round trip: a frame synthesised through
 *                   the real PSF with noise, extracted by the reference, gives pulls of mean ~0 and std ~1.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ex2d_patch_ref.h"
#include "ex2d_psf.h"
#include "ex2d_psf_golden.h"
#include "ex2d_synth.h"

/* ---------------------------------------------------------------- no data */

/* A PSF of 2 fibres with every parameter a series of ncoef coefficients, all zero but c[0] (constant). */
typedef struct small_psf {
    ex2d_psf psf;
    double coeff[120][2][3];
} small_psf;

static void small_psf_make(small_psf *s, double x0, double y_per_angstrom)
{
    memset(s, 0, sizeof(*s));
    ex2d_psf *p = &s->psf;
    *p = (ex2d_psf){.psfver = 2, .fibre_min = 0, .nfibre = 2, .npix_x = 200, .npix_y = 400, .hsizex = 4, .hsizey = 3,
                    .gx = 1, .gy = 1};
    int k = 0;
    ex2d_psf_param *all[4 + 4 + EX2D_TAIL_TERMS] = {&p->x, &p->y, &p->sigx, &p->sigy, &p->gh[0][0], &p->gh[0][1],
                                                     &p->gh[1][0], &p->gh[1][1]};
    for (int t = 0; t < EX2D_TAIL_TERMS; t++) all[8 + t] = &p->tail[t];
    for (; k < 8 + EX2D_TAIL_TERMS; k++) *all[k] = (ex2d_psf_param){5000.0, 6000.0, 3, &s->coeff[k][0][0]};
    for (int f = 0; f < 2; f++) {
        s->coeff[0][f][0] = x0 + 20.0 * f;             /* X */
        s->coeff[1][f][0] = 600.0, s->coeff[1][f][1] = 500.0 * y_per_angstrom; /* Y = 600 + (w - 5500) px/A */
        s->coeff[2][f][0] = s->coeff[3][f][0] = 1.0;   /* sigmas */
        s->coeff[4][f][0] = 1.0;                        /* GH-0-0 */
        s->coeff[8 + EX2D_TAIL_CORE][f][0] = s->coeff[8 + EX2D_TAIL_XSCALE][f][0] = 1.0;
        s->coeff[8 + EX2D_TAIL_YSCALE][f][0] = 1.0, s->coeff[8 + EX2D_TAIL_INDEX][f][0] = 2.0;
    }
}

Test(ex2d_psf, legendre_series_equal_the_polynomials_and_use_the_parameters_own_domain)
{
    const double c[3][3] = {{0, 0, 1}, {0, 1, 0}, {2, -1, 0.5}}; /* P2, P1, 2 - P1 + P2/2 */
    for (int f = 0; f < 3; f++) {
        const ex2d_psf_param prm = {100.0, 300.0, 3, &c[0][0]};
        for (double w = 100.0; w <= 300.0; w += 12.5) {
            const double u = (w - 100.0) / 100.0 - 1.0, p1 = u, p2 = 1.5 * u * u - 0.5;
            const double want = c[f][0] + c[f][1] * p1 + c[f][2] * p2;
            cr_expect(fabs(ex2d_psf_eval(&prm, f, w) - want) <= 1e-14, "fibre %d at %g: %.17g, want %.17g", f, w,
                      ex2d_psf_eval(&prm, f, w), want);
        }
    }
    /* Degree 7 against the explicit P_7 at the domain's ends and middle: P_k(1) = 1, P_k(-1) = (-1)^k, P_7(0) = 0. */
    const double p7[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    const ex2d_psf_param prm7 = {5564.0, 7805.0, 8, p7};
    cr_expect(fabs(ex2d_psf_eval(&prm7, 0, 7805.0) - 1.0) <= 1e-14);
    cr_expect(fabs(ex2d_psf_eval(&prm7, 0, 5564.0) + 1.0) <= 1e-14);
    cr_expect(fabs(ex2d_psf_eval(&prm7, 0, 0.5 * (5564.0 + 7805.0))) <= 1e-14);
}

Test(ex2d_psf, corners_follow_specters_truncation)
{
    int32_t corner;
    double offset;
    ex2d_psf_corner(172.63594479475123, 14, &corner, &offset); /* a golden spot: x0 = 159 */
    cr_expect(corner == 159 && fabs(offset - (172.63594479475123 - 173.0)) == 0.0, "corner %d offset %.17g", corner,
              offset);
    ex2d_psf_corner(20.5, 4, &corner, &offset); /* int(17.0) = 17: the centre pixel 21, offset -0.5 */
    cr_expect(corner == 17 && offset == -0.5, "corner %d offset %g", corner, offset);
    ex2d_psf_corner(20.49, 4, &corner, &offset);
    cr_expect(corner == 16 && fabs(offset - 0.49) < 1e-12, "corner %d offset %g", corner, offset);
    ex2d_psf_corner(2.2, 4, &corner, &offset); /* int(-1.3) = -1 (C truncation, not floor): refused by the frame */
    cr_expect(corner == -1, "corner %d", corner);
    ex2d_psf_corner(NAN, 4, &corner, &offset); /* never cast: the frame refuses INT32_MIN */
    cr_expect(corner == INT32_MIN && isnan(offset), "corner %d offset %g", corner, offset);
    ex2d_psf_corner(3e9, 4, &corner, &offset);
    cr_expect(corner == INT32_MIN, "corner %d", corner);
}

Test(ex2d_psf, the_tail_term_adds_specters_power_law_at_pixel_centres)
{
    /* One spot with GH-0-0 = 0 would be all tail: check a pixel against the formula by hand. */
    const ex2d_params p = {.nspec_tab = 1, .nwave_tab = 1, .gx = 0, .gy = 0, .hsizex = 2, .hsizey = 2, .npix_x = 1,
                           .npix_y = 1, .nspec_out = 1, .nwave_out = 1, .m = 5, .max_nspecpad = 1, .max_ncore = 1,
                           .max_box_pixels = 1, .psferr = 0.01, .jacobi_tol = 1e-14, .jacobi_max_sweeps = 30,
                           .ndiag = 2};
    const double sig = 1.0, dx = 0.25, dy = -0.125, c00 = 0.0;
    const double tail[EX2D_TAIL_TERMS] = {0.5, 1.5, 2.0, 0.5, 3.0};
    const int32_t xc = 0, yc = 0;
    const ex2d_inputs in = {.psf_sigx = &sig, .psf_sigy = &sig, .psf_dx = &dx, .psf_dy = &dy, .psf_c = &c00,
                            .psf_xc = &xc, .psf_yc = &yc, .psf_tail = tail};
    double spot[25], raw[25], sum = 0.0;
    cr_assert(ex2d_ref_spots(&p, &in, 0, 1, spot, 1) == 0);
    for (int iy = 0; iy < 5; iy++)
        for (int ix = 0; ix < 5; ix++) {
            const double rx = (ix - 2 - dx) * 2.0, ry = (iy - 2 - dy) * 0.5, r2 = rx * rx + ry * ry;
            raw[iy * 5 + ix] = 0.5 * r2 / pow(1.5 * 1.5 + r2, 1.0 + 1.5);
            sum += raw[iy * 5 + ix];
        }
    for (int q = 0; q < 25; q++)
        cr_expect(fabs(spot[q] - raw[q] / sum) <= 1e-15, "pixel %d: %.17g, want %.17g", q, spot[q], raw[q] / sum);
}

Test(ex2d_psf, check_names_the_broken_rule)
{
    small_psf s;
    small_psf_make(&s, 50.0, 1.0);
    cr_expect_null(ex2d_psf_check(&s.psf));
    s.psf.hsizex = 16;
    cr_expect(ex2d_psf_check(&s.psf) && strstr(ex2d_psf_check(&s.psf), "HSIZEX"));
    small_psf_make(&s, 50.0, 1.0);
    s.psf.gy = 9;
    cr_expect(ex2d_psf_check(&s.psf) && strstr(ex2d_psf_check(&s.psf), "GHDEGY"));
    small_psf_make(&s, 50.0, 1.0);
    s.coeff[5][1][2] = NAN;
    cr_expect(ex2d_psf_check(&s.psf) && strstr(ex2d_psf_check(&s.psf), "finite"));
    small_psf_make(&s, 50.0, 1.0);
    s.psf.tail[EX2D_TAIL_INDEX].wavemax = 5000.0;
    cr_expect(ex2d_psf_check(&s.psf) && strstr(ex2d_psf_check(&s.psf), "WAVEMIN < WAVEMAX"));
}

static ex2d_frame_config small_frame_config(const ex2d_psf *psf, double wave0, int nwave)
{
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    ex2d_frame_config_use_psf(&cfg, psf);
    cfg.fibre_first = 0, cfg.nfibre = 2, cfg.bundle_size = 2, cfg.subbundle_size = 2;
    cfg.wave_min = wave0, cfg.wave_step = 1.0, cfg.nwave_camera = nwave, cfg.wave_first = 0, cfg.nwave = nwave;
    cfg.nwavestep = 10, cfg.wavepad = 4, cfg.crop_to_boxes = 1, cfg.nthreads = 1;
    return cfg;
}

Test(ex2d_psf, a_frame_from_a_psf_takes_its_camera_and_refuses_wavelengths_outside_its_domain)
{
    small_psf s;
    small_psf_make(&s, 50.0, 1.0);
    ex2d_frame_config cfg = small_frame_config(&s.psf, 5100.0, 20);
    cr_expect_null(ex2d_frame_config_check(&cfg));
    ex2d_frame f;
    cr_assert(ex2d_frame_make(&cfg, &f) == 0);
    cr_expect(f.params.hsizex == 4 && f.params.gx == 1 && f.tail && f.inputs.psf_tail == f.tail);
    /* Every table entry is ex2d_psf_entry_at of its fibre and wavelength (table bin 0: 4 bins of padding below
     * 5100 A), its corner moved into the image window. */
    for (int e = 0; e < f.params.nspec_tab * f.params.nwave_tab; e++) {
        ex2d_psf_entry pe;
        const int s_tab = e / f.params.nwave_tab, w = e % f.params.nwave_tab;
        ex2d_psf_entry_at(&s.psf, f.tab_fibre_first + s_tab, 5100.0 + (f.tab_wave_first + w), &pe);
        cr_expect(f.xc[e] == pe.xc - f.image_x0 && f.yc[e] == pe.yc - f.image_y0 && f.dx[e] == pe.dx &&
                      f.dy[e] == pe.dy && f.tail[e * EX2D_TAIL_TERMS + EX2D_TAIL_INDEX] == 2.0,
                  "table entry %d", e);
    }
    ex2d_frame_free(&f);

    cfg = small_frame_config(&s.psf, 5990.0, 20); /* the padding runs past 6000 A */
    cr_expect(ex2d_frame_config_check(&cfg) && strstr(ex2d_frame_config_check(&cfg), "PSF's domain"));
    cr_expect(ex2d_frame_make(&cfg, &f) == EX2D_SYNTH_ERR_CONFIG);
    cfg = small_frame_config(&s.psf, 5100.0, 20);
    cfg.hsizex = 5;
    cr_expect(ex2d_frame_config_check(&cfg) && strstr(ex2d_frame_config_check(&cfg), "the PSF's"));
    small_psf_make(&s, 2.0, 1.0); /* fibre 0's spots start left of the CCD: corner int(-1.5) = -1 */
    cfg = small_frame_config(&s.psf, 5100.0, 20);
    cr_expect(ex2d_frame_make(&cfg, &f) == EX2D_SYNTH_ERR_GEOMETRY);
    small_psf_make(&s, 3.0, 1.0); /* int(-0.5) = 0: a corner on the CCD, but specter's box would be cut short */
    cfg = small_frame_config(&s.psf, 5100.0, 20);
    cr_expect(ex2d_frame_make(&cfg, &f) == EX2D_SYNTH_ERR_GEOMETRY);
    small_psf_make(&s, 50.0, 1.0);
    s.coeff[2][1][0] = -1.0; /* GHSIGX of fibre 1 negative */
    cfg = small_frame_config(&s.psf, 5100.0, 20);
    cr_expect(ex2d_frame_make(&cfg, &f) == EX2D_SYNTH_ERR_PSF);
}

/* ---------------------------------------------------------------- specter's values ($GW_DATA_DIR) */

Test(ex2d_psf_data, every_trace_point_is_within_1e_9_pixel_of_specters)
{
    ex2d_golden g;
    ex2d_golden_load(&g);
    double worst;
    ex2d_golden_check_trace(&g, &worst);
    cr_log_info("trace: %d points, largest |difference| from specter %.3g px", g.ntrace, worst);
    ex2d_golden_free(&g);
}

Test(ex2d_psf_data, every_spot_has_specters_corner_and_pixels_within_1e_12_on_the_reference)
{
    ex2d_golden g;
    ex2d_golden_load(&g);
    const size_t spot = (size_t)(2 * g.psf.hsizex + 1) * (2 * g.psf.hsizey + 1);
    double *spots = malloc((size_t)g.nspot * spot * sizeof(double));
    cr_assert(spots);
    cr_assert(ex2d_ref_spots(&g.params, &g.inputs, 0, g.nspot, spots, 1) == 0);
    double worst;
    ex2d_golden_check_spots(&g, spots, "ex2d_ref_spots", &worst);
    cr_log_info("spots: %d spots of %zu pixels, largest |difference| from specter %.3g", g.nspot, spot, worst);

    /* The comparison can fail: without the tail term the same spots miss specter's by far more than 1e-12. */
    ex2d_inputs no_tail = g.inputs;
    no_tail.psf_tail = NULL;
    cr_assert(ex2d_ref_spots(&g.params, &no_tail, 0, g.nspot, spots, 1) == 0);
    double off = 0.0;
    for (int e = 0; e < g.nspot; e++)
        for (size_t q = 0; q < spot; q++) off = fmax(off, fabs(spots[e * spot + q] - g.spots[e].pix[q]));
    cr_expect(off > 1e-6, "without the tail the spots still match specter's within %.3g", off);
    free(spots);
    ex2d_golden_free(&g);
}

Test(ex2d_psf_data, a_noisy_frame_through_the_real_psf_extracts_to_unit_pulls_on_the_reference)
{
    ex2d_golden g; /* only its PSF */
    ex2d_golden_load(&g);
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    ex2d_frame_config_use_psf(&cfg, &g.psf);
    /* fibres 0..4 (the first subbundle), 500 bins of 0.8 A from 6000 A: 10 patches, 2500 core bins */
    cfg.fibre_first = 0, cfg.nfibre = 5, cfg.wave_min = 6000.0, cfg.wave_step = 0.8;
    cfg.nwave_camera = 500, cfg.wave_first = 0, cfg.nwave = 500, cfg.crop_to_boxes = 1;
    ex2d_frame f;
    const int rc = ex2d_frame_make(&cfg, &f);
    cr_assert(rc == 0, "ex2d_frame_make: %s (%s)", ex2d_synth_error_str(rc), ex2d_frame_config_check(&cfg));
    const ex2d_params *p = &f.params;
    void *ws;
    size_t ws_bytes;
    ex2d_outputs out;
    cr_assert(ex2d_ref_workspace_alloc(p, f.npatch, &ws, &ws_bytes) == 0);
    cr_assert(ex2d_ref_outputs_alloc(p, f.npatch, &out) == 0);
    cr_assert(ex2d_ref_patches(p, &f.inputs, f.spots, 0, f.npatch, f.npatch, ws, ws_bytes, &out, 0) == 0);
    ex2d_workspace w;
    cr_assert(ex2d_workspace_carve(p, f.npatch, ws, &w) == 0);
    double sum = 0.0, sum2 = 0.0;
    size_t count = 0;
    for (int i = 0; i < f.npatch; i++) {
        const ex2d_patch_desc *d = &f.patches[i];
        cr_expect(out.info[i].status == 0 && out.info[i].clipped == 0, "patch %d status %d, clipped %d", i,
                  out.info[i].status, out.info[i].clipped);
        for (int c = 0; c < d->ncore; c++)
            for (int j = 0; j < d->ncore_wave; j++) {
                const size_t o = (size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j;
                const double chi = (out.flux[o] - ex2d_synth_r_truth(&f, w.qblk + (size_t)i * w.blk_stride, i, c, j)) * sqrt(out.ivar[o]);
                sum += chi, sum2 += chi * chi, count++;
            }
    }
    const double mean = sum / (double)count, std = sqrt(sum2 / (double)count - mean * mean);
    cr_log_info("real PSF round trip: %d patches, chi = (flux - R f_true) sqrt(ivar) over %zu core bins: mean %.4f, "
                "std %.4f", f.npatch, count, mean, std);
    cr_expect(count == 2500, "%zu core bins", count);
    cr_expect(fabs(mean) <= 0.1 && fabs(std - 1.0) <= 0.1, "pulls: mean %.4f, std %.4f", mean, std);
    free(ws);
    ex2d_ref_outputs_free(&out);
    ex2d_frame_free(&f);
    ex2d_golden_free(&g);
}
