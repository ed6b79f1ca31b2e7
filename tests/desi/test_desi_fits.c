/* SPDX-License-Identifier: MIT
 * gw_desi (lib/io/include/gw_desi.h) on good files: the real DESI PSF ($GW_DATA_DIR/desi/psf-gausshermite.fits,
 * suite desi_fits_data) with values read from it independently, its PSFVER 3 form made here at test time
 * (bit-identical coefficients and domains), synthetic PSFs of both versions (every coefficient where the
 * format puts it; PSFVER 3's trace domain from XTRACE's own header), preprocessed images (MASK zeroes ivar,
 * IMAGE as the primary, undefined integer pixels masked, GZIP tiles of every form cfitsio writes, a CCD whose
 * MASK is in one-column tiles read in about the time of cfitsio's whole-HDU reads), and the writers read back
 * with cfitsio: compressed images bit for bit, frames with their HDU names, keywords and values.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <fitsio.h>

#include "bad_input_util.h"
#include "desi_fits_make.h"
#include "desi_test_util.h"
#include "gw_desi.h"
#include "gw_test_util.h"

static char *work;
static char path_a[512], path_b[512];

static void setup(void)
{
    work = bi_make_dir("desi_fits");
    snprintf(path_a, sizeof path_a, "%s/a.fits", work);
    snprintf(path_b, sizeof path_b, "%s/b.fits", work);
}

static void teardown(void)
{
    if (work)
        gw_remove_dir(work);
    free(work);
    work = NULL;
}

static void read_ok(const char *path, ex2d_psf *psf)
{
    char err[512] = "";
    cr_assert_eq(gw_desi_psf_read(path, psf, err, sizeof err), 0, "%s", err);
}

/* ---------------------------------------------------------------- the real PSF */

/* No .init here: a test of this suite makes its directory only once gw_data_path has found the data, because
 * a skip ends the test without its .fini and would leave the directory behind. */
TestSuite(desi_fits_data, .fini = teardown);

Test(desi_fits_data, real_psf_v2_values)
{
    char path[1024];
    gw_data_path("desi/psf-gausshermite.fits", "the DESI GAUSS-HERMITE PSF of specter's tests", path, sizeof path);
    ex2d_psf psf;
    read_ok(path, &psf);
    cr_expect_eq(psf.psfver, 2);
    cr_expect_eq(psf.nfibre, 25);
    cr_expect_eq(psf.fibre_min, 0);
    cr_expect_eq(psf.npix_x, 4114);
    cr_expect_eq(psf.npix_y, 4128);
    cr_expect(psf.hsizex == 14 && psf.hsizey == 8 && psf.gx == 8 && psf.gy == 8);
    ex2d_psf_param *p[DESI_MAX_PARAMS];
    char names[DESI_MAX_PARAMS][16];
    const int n = desi_params(&psf, p, names);
    for (int i = 0; i < n; i++)
        cr_expect(p[i]->wavemin == 5564 && p[i]->wavemax == 7805 && p[i]->ncoef == 8 && p[i]->coeff,
                  "%s: domain (%g, %g), ncoef %d", names[i], p[i]->wavemin, p[i]->wavemax, p[i]->ncoef);
    cr_expect_eq(psf.x.coeff[0], 169.78680580914516);
    for (int f = 0; f < 25; f++) cr_expect_eq(psf.gh[0][0].coeff[f * 8], 1.0, "GH-0-0 of fibre %d", f);
    cr_expect_eq(psf.tail[EX2D_TAIL_AMP].coeff[0], 3.693087942395101e-06);
    desi_psf_free(&psf);
}

Test(desi_fits_data, real_psf_as_v3_reads_bit_identical)
{
    char path[1024];
    gw_data_path("desi/psf-gausshermite.fits", "the DESI GAUSS-HERMITE PSF of specter's tests", path, sizeof path);
    setup();
    desi_convert_v2_to_v3(path, path_a);
    ex2d_psf v2, v3;
    read_ok(path, &v2);
    read_ok(path_a, &v3);
    cr_expect_eq(v3.psfver, 3);
    cr_expect(v2.nfibre == v3.nfibre && v2.fibre_min == v3.fibre_min && v2.npix_x == v3.npix_x &&
              v2.npix_y == v3.npix_y && v2.hsizex == v3.hsizex && v2.hsizey == v3.hsizey && v2.gx == v3.gx &&
              v2.gy == v3.gy);
    ex2d_psf_param *a[DESI_MAX_PARAMS], *b[DESI_MAX_PARAMS];
    char names[DESI_MAX_PARAMS][16];
    const int n = desi_params(&v2, a, names);
    cr_assert_eq(desi_params(&v3, b, names), n);
    for (int i = 0; i < n; i++) {
        cr_expect(a[i]->wavemin == b[i]->wavemin && a[i]->wavemax == b[i]->wavemax && a[i]->ncoef == b[i]->ncoef,
                  "%s: domain or ncoef differs", names[i]);
        cr_expect(memcmp(a[i]->coeff, b[i]->coeff, (size_t)v2.nfibre * (size_t)a[i]->ncoef * sizeof(double)) == 0,
                  "%s: coefficients differ", names[i]);
    }
    desi_psf_free(&v2);
    desi_psf_free(&v3);
}

/* ---------------------------------------------------------------- synthetic PSFs */

TestSuite(desi_psf, .init = setup, .fini = teardown);

/* Every coefficient of psf is desi_syn_coef of its table row, for the synthetic file's layout. */
static void expect_synthetic(ex2d_psf *psf, int ver)
{
    cr_expect(psf->psfver == ver && psf->fibre_min == 10 && psf->nfibre == 2 && psf->npix_x == 100 &&
              psf->npix_y == 200 && psf->hsizex == 3 && psf->hsizey == 4 && psf->gx == 1 && psf->gy == 1);
    ex2d_psf_param *p[DESI_MAX_PARAMS];
    char names[DESI_MAX_PARAMS][16];
    const int n = desi_params(psf, p, names);
    cr_assert_eq(n, 13);
    for (int i = 0; i < n; i++) {
        int row = -1;
        for (int r = 0; desi_psf_rows[r]; r++)
            if (strcmp(desi_psf_rows[r], names[i]) == 0) row = r;
        cr_assert(row >= 0 && p[i]->ncoef == DESI_SYN_NCOEF, "%s", names[i]);
        for (int f = 0; f < 2; f++)
            for (int k = 0; k < 2; k++)
                cr_expect_eq(p[i]->coeff[f * 2 + k], desi_syn_coef(row, f, k), "%s [%d][%d]", names[i], f, k);
        const int trace = ver == 3 && row <= 1;
        cr_expect(p[i]->wavemin == (trace ? 4000 : 5000) && p[i]->wavemax == (trace ? 7000 : 6000),
                  "%s: domain (%g, %g)", names[i], p[i]->wavemin, p[i]->wavemax);
    }
}

Test(desi_psf, synthetic_v2_every_coefficient_in_place)
{
    desi_write_psf(path_a, &(desi_psf_opts){.ver = 2});
    ex2d_psf psf;
    read_ok(path_a, &psf);
    expect_synthetic(&psf, 2);
    desi_psf_free(&psf);
}

Test(desi_psf, synthetic_v3_traces_from_their_images)
{
    desi_write_psf(path_a, &(desi_psf_opts){.ver = 3});
    ex2d_psf psf;
    read_ok(path_a, &psf);
    expect_synthetic(&psf, 3);
    desi_psf_free(&psf);
}

Test(desi_psf, v3_trace_domain_is_the_trace_headers)
{
    desi_write_psf(path_a, &(desi_psf_opts){.ver = 3, .trace_wmin = 3600.5, .trace_wmax = 9824.25});
    ex2d_psf psf;
    read_ok(path_a, &psf);
    cr_expect(psf.x.wavemin == 3600.5 && psf.x.wavemax == 9824.25, "X domain (%g, %g)", psf.x.wavemin,
              psf.x.wavemax);
    cr_expect(psf.y.wavemin == 4000 && psf.y.wavemax == 7000);
    cr_expect(psf.sigx.wavemin == 5000 && psf.sigx.wavemax == 6000);
    desi_psf_free(&psf);
}

Test(desi_psf, psfver_as_a_number_and_as_2_0)
{
    desi_write_psf(path_a, &(desi_psf_opts){.ver = 2, .bad_key = "PSFVER", .bad_value = "2"});
    ex2d_psf psf;
    read_ok(path_a, &psf);
    desi_psf_free(&psf);
    desi_write_psf(path_a, &(desi_psf_opts){.ver = 2, .bad_key = "PSFVER", .bad_value = "'2.0'"});
    read_ok(path_a, &psf);
    desi_psf_free(&psf);
}

/* ---------------------------------------------------------------- images */

TestSuite(desi_image, .init = setup, .fini = teardown);

Test(desi_image, mask_zeroes_ivar_and_values_read)
{
    desi_write_image(path_a, &(desi_img_opts){.mask_pixel = 1});
    gw_desi_image img;
    char err[512] = "";
    cr_assert_eq(gw_desi_image_read(path_a, &img, err, sizeof err), 0, "%s", err);
    cr_assert(img.npix_x == 6 && img.npix_y == 4);
    cr_expect_eq(img.nmasked, 1);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++) {
            cr_expect_eq(img.image[r * 6 + c], (double)(float)desi_img_value(r, c));
            cr_expect_eq(img.ivar[r * 6 + c], r == 3 && c == 0 ? 0.0 : desi_img_ivar(r, c));
        }
    gw_desi_image_free(&img);
}

Test(desi_image, a_masked_pixel_may_hold_nan_and_reads_as_0_with_ivar_0)
{
    desi_write_image(path_a, &(desi_img_opts){.mask_pixel = 1, .nan_under_mask = 1});
    gw_desi_image img;
    char err[512] = "";
    cr_assert_eq(gw_desi_image_read(path_a, &img, err, sizeof err), 0, "%s", err);
    cr_expect(img.nmasked == 1 && img.image[3 * 6] == 0.0 && img.ivar[3 * 6] == 0.0);
    gw_desi_image_free(&img);
    /* the same NaNs without the mask: IVAR must be finite where MASK is 0 */
    desi_write_image(path_a, &(desi_img_opts){.nan_under_mask = 1});
    cr_expect_eq(gw_desi_image_read(path_a, &img, err, sizeof err), -1);
    cr_expect(strstr(err, "HDU 'IVAR': pixel (row 3, column 0) is nan") != NULL, "%s", err);
}

Test(desi_image, image_as_the_primary_hdu)
{
    desi_write_image(path_a, &(desi_img_opts){.image_primary = 1});
    gw_desi_image img;
    char err[512] = "";
    cr_assert_eq(gw_desi_image_read(path_a, &img, err, sizeof err), 0, "%s", err);
    cr_expect(img.npix_x == 6 && img.npix_y == 4 && img.nmasked == 0);
    gw_desi_image_free(&img);
}

/* An integer HDU's undefined pixels (FITS BLANK, or ZBLANK in a tile-compressed HDU) are masked in each of
 * IMAGE, IVAR and MASK: ivar 0, counted in nmasked beside the MASK pixel, an undefined IMAGE value read as 0. */
Test(desi_image, undefined_pixels_of_integer_hdus_are_masked)
{
    static const char *const hdus[3] = {"IMAGE", "IVAR", "MASK"}, *const forms[3] = {"plain", "RICE_1 with BLANK",
                                                                                       "RICE_1 with ZBLANK"};
    for (int h = 0; h < 3; h++)
        for (int form = 0; form < 3; form++) {
            desi_write_image(path_a, &(desi_img_opts){.blank_hdu = hdus[h], .compress = form > 0, .zblank = form == 2,
                                                      .mask_pixel = 1});
            gw_desi_image img;
            char err[512] = "";
            cr_assert_eq(gw_desi_image_read(path_a, &img, err, sizeof err), 0, "%s", err);
            cr_expect_eq(img.nmasked, 2, "%s %s: nmasked %zu", hdus[h], forms[form], img.nmasked);
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 6; c++) {
                    const int undefined = r == 1 && c == 2, masked = undefined || (r == 3 && c == 0);
                    double image = (double)(float)desi_img_value(r, c);
                    if (h == 0) image = undefined ? 0 : floor(desi_img_value(r, c)); /* int32 IMAGE */
                    cr_expect_eq(img.image[r * 6 + c], image, "%s %s: IMAGE (%d, %d)", hdus[h], forms[form], r, c);
                    cr_expect_eq(img.ivar[r * 6 + c], masked ? 0.0 : desi_img_ivar(r, c), "%s %s: IVAR (%d, %d)",
                                 hdus[h], forms[form], r, c);
                }
            gw_desi_image_free(&img);
        }
}

/* Every GZIP tile is inflated once at open, before cfitsio reads it (gw_desi_fits.c): tiles cut by the
 * image's edges, GZIP_1 on every HDU (MASK's int32 too), and quantized floats (int32 tiles in IVAR's ZBITPIX
 * -64, where lossless ones hold the doubles cfitsio was given, in IMAGE's -32 too) all read as written. */
Test(desi_image, gzip_tiles_of_every_form_read)
{
    static const struct {
        const char *name;
        desi_img_opts o;
    } forms[] = {
        {"GZIP_1, a row per tile", {.compress = 1, .gzip_1 = 1, .mask_pixel = 1}},
        {"GZIP_1, 4 x 3 tiles", {.compress = 1, .gzip_1 = 1, .tile_x = 4, .tile_y = 3, .mask_pixel = 1}},
        {"GZIP_2 and RICE_1, 4 x 3 tiles", {.compress = 1, .tile_x = 4, .tile_y = 3, .mask_pixel = 1}},
        {"GZIP_2, quantized", {.compress = 1, .quantize = 1, .mask_pixel = 1}},
    };
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        desi_write_image(path_a, &forms[f].o);
        gw_desi_image img;
        char err[512] = "";
        cr_assert_eq(gw_desi_image_read(path_a, &img, err, sizeof err), 0, "%s: %s", forms[f].name, err);
        cr_assert(img.npix_x == 6 && img.npix_y == 4 && img.nmasked == 1, "%s", forms[f].name);
        const double tol = forms[f].o.quantize ? 0.01 : 0; /* steps of 0.01, dithered: within half of one */
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 6; c++) {
                const double image = (double)(float)desi_img_value(r, c),
                             ivar = r == 3 && c == 0 ? 0 : desi_img_ivar(r, c);
                cr_expect(fabs(img.image[r * 6 + c] - image) <= tol, "%s: IMAGE (%d, %d) %.17g", forms[f].name, r, c,
                          img.image[r * 6 + c]);
                cr_expect(fabs(img.ivar[r * 6 + c] - ivar) <= tol, "%s: IVAR (%d, %d) %.17g", forms[f].name, r, c,
                          img.ivar[r * 6 + c]);
            }
        gw_desi_image_free(&img);
    }
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A CCD-sized image whose MASK is tile-compressed in one-column tiles reads within 5 times cfitsio's own
 * whole-HDU reads of its three HDUs, plus 1 s (a MASK read row by row decompresses every tile once per row:
 * 76 s for this file, where the three whole reads take about 1 s). Under Valgrind a small image and no time
 * bound: that run is for memory errors. */
Test(desi_image, one_column_tiles_read_in_about_the_time_of_whole_hdu_reads)
{
    const int small = RUNNING_ON_VALGRIND, nx = small ? 64 : 4114, ny = small ? 48 : 4128;
    const size_t n = (size_t)nx * (size_t)ny;
    desi_write_image(path_a, &(desi_img_opts){.nx = nx, .ny = ny, .compress = 1, .mask_column_tiles = 1,
                                              .mask_pixel = 1});
    double t = seconds();
    fitsfile *f = NULL;
    int status = 0;
    double *v = malloc(n * sizeof *v);
    cr_assert(v);
    fits_open_diskfile(&f, path_a, READONLY, &status);
    static const char *const names[3] = {"IMAGE", "IVAR", "MASK"};
    for (int h = 0; h < 3; h++) {
        fits_movnam_hdu(f, IMAGE_HDU, (char *)names[h], 0, &status);
        fits_read_img(f, TDOUBLE, 1, (LONGLONG)n, NULL, v, NULL, &status);
    }
    fits_close_file(f, &status);
    free(v);
    cr_assert_eq(status, 0);
    const double whole = seconds() - t;
    gw_desi_image img;
    char err[512] = "";
    t = seconds();
    cr_assert_eq(gw_desi_image_read(path_a, &img, err, sizeof err), 0, "%s", err);
    const double read = seconds() - t;
    cr_log_info("%d x %d, MASK in one-column tiles: gw_desi_image_read %.3f s, whole-HDU reads %.3f s", nx, ny, read,
                whole);
    cr_expect(small || read <= 5 * whole + 1, "gw_desi_image_read took %.3f s, cfitsio's whole-HDU reads %.3f s",
              read, whole);
    cr_expect_eq(img.nmasked, 1);
    cr_expect(img.ivar[3 * (size_t)nx] == 0 && img.ivar[n - 1] == desi_img_ivar(ny - 1, nx - 1) &&
              img.image[n - 1] == (double)(float)desi_img_value(ny - 1, nx - 1));
    gw_desi_image_free(&img);
}

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next_u64(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* Any finite double: random bits, retried while not finite. */
static double any_double(void)
{
    for (;;) {
        uint64_t u = next_u64();
        double d;
        memcpy(&d, &u, sizeof d);
        if (isfinite(d)) return d;
    }
}

Test(desi_image, compressed_write_round_trips_bit_for_bit)
{
    enum { NX = 257, NY = 131 };
    double *image = calloc(NX * NY, sizeof *image), *ivar = calloc(NX * NY, sizeof *ivar);
    int32_t *mask = calloc(NX * NY, sizeof *mask);
    cr_assert(image && ivar && mask);
    for (int i = 0; i < NX * NY; i += 7) { /* mostly zero, as a frame's image is, with every bit pattern in it */
        image[i] = any_double();
        ivar[i] = fabs(any_double());
    }
    image[1] = -0.0, image[2] = 5e-324, image[3] = -1.7976931348623157e308, ivar[4] = 4.9406564584124654e-324;
    mask[10] = 1, mask[NX * NY - 1] = INT32_MIN;
    double truth[6] = {1, 2, 3, 4, 5, 6.5};
    gw_desi_image_out out = {.npix_x = NX, .npix_y = NY, .image = image, .ivar = ivar, .mask = mask, .truth = truth,
                             .truth_nspec = 2, .truth_nwave = 3, .truth_fibre_first = 20, .truth_wave0 = 5500.5,
                             .truth_dwave = 0.8, .comment = "made by test_desi_fits"};
    char err[512] = "";
    cr_assert_eq(gw_desi_image_write(path_a, &out, err, sizeof err), 0, "%s", err);
    cr_expect_eq(gw_count_dir_entries(work), 1, "only the target is left in the directory");
    gw_desi_image img;
    cr_assert_eq(gw_desi_image_read(path_a, &img, err, sizeof err), 0, "%s", err);
    cr_assert(img.npix_x == NX && img.npix_y == NY);
    cr_expect(memcmp(img.image, image, sizeof(double) * NX * NY) == 0, "IMAGE is not bit-identical");
    ivar[10] = 0, ivar[NX * NY - 1] = 0; /* what the mask does */
    cr_expect(memcmp(img.ivar, ivar, sizeof(double) * NX * NY) == 0, "IVAR is not bit-identical");
    cr_expect_eq(img.nmasked, 2);
    gw_desi_image_free(&img);
    /* the HDUs with cfitsio: compressed, named, MASK as written, TRUTH's keywords */
    fitsfile *f = NULL;
    int status = 0, nhdu = 0;
    fits_open_file(&f, path_a, READONLY, &status);
    fits_get_num_hdus(f, &nhdu, &status);
    cr_assert_eq(status, 0);
    cr_expect_eq(nhdu, 5);
    static const char *const names[] = {"IMAGE", "IVAR", "MASK"};
    for (int h = 0; h < 3; h++) {
        fits_movabs_hdu(f, h + 2, NULL, &status);
        char extname[FLEN_VALUE] = "";
        fits_read_key(f, TSTRING, "EXTNAME", extname, NULL, &status);
        cr_expect_str_eq(extname, names[h]);
        cr_expect(fits_is_compressed_image(f, &status), "%s is not tile-compressed", names[h]);
    }
    int32_t *m = malloc(sizeof *m * NX * NY);
    cr_assert(m);
    fits_read_img(f, TINT, 1, NX * NY, NULL, m, NULL, &status);
    cr_expect(status == 0 && memcmp(m, mask, sizeof *m * NX * NY) == 0, "MASK differs");
    fits_movnam_hdu(f, IMAGE_HDU, "TRUTH", 0, &status);
    int fibre = 0;
    double crval = 0, cdelt = 0, t[6] = {0};
    fits_read_key(f, TINT, "FIBERMIN", &fibre, NULL, &status);
    fits_read_key(f, TDOUBLE, "CRVAL1", &crval, NULL, &status);
    fits_read_key(f, TDOUBLE, "CDELT1", &cdelt, NULL, &status);
    fits_read_img(f, TDOUBLE, 1, 6, NULL, t, NULL, &status);
    cr_expect(status == 0 && fibre == 20 && crval == 5500.5 && cdelt == 0.8 && memcmp(t, truth, sizeof t) == 0);
    fits_close_file(f, &status);
    free(m), free(image), free(ivar), free(mask);
}

/* ---------------------------------------------------------------- frames */

Test(desi_image, frame_reads_back_with_desispec_layout)
{
    enum { NS = 3, NW = 5, ND = 1, NDG = 2 * ND + 1 };
    double wave[NW], flux[NS * NW], ivar[NS * NW], rd[NS * NDG * NW], chi[NS * NW];
    uint32_t mask[NS * NW];
    for (int w = 0; w < NW; w++) wave[w] = 5000 + 0.8 * w;
    for (int i = 0; i < NS * NW; i++) flux[i] = any_double(), ivar[i] = fabs(any_double()), chi[i] = i * 0.5,
                                      mask[i] = (uint32_t)i * 0x11111111u;
    for (int i = 0; i < NS * NDG * NW; i++) rd[i] = any_double();
    mask[0] = 0xFFFFFFFFu;
    gw_desi_frame fr = {.nspec = NS, .nwave = NW, .ndiag = ND, .fibre_first = 25, .wave = wave, .flux = flux,
                        .ivar = ivar, .mask = mask, .rdiags = rd, .chi2pix = chi, .bunit = "electron/Angstrom",
                        .comment = "test"};
    char err[512] = "";
    cr_assert_eq(gw_desi_frame_write(path_b, &fr, err, sizeof err), 0, "%s", err);
    fitsfile *f = NULL;
    int status = 0, nhdu = 0;
    fits_open_file(&f, path_b, READONLY, &status);
    fits_get_num_hdus(f, &nhdu, &status);
    cr_assert_eq(status, 0);
    cr_assert_eq(nhdu, 6);
    static const char *const names[] = {"FLUX", "IVAR", "MASK", "WAVELENGTH", "RESOLUTION", "CHI2PIX"};
    const void *data[] = {flux, ivar, mask, wave, rd, chi};
    const long n[] = {NS * NW, NS * NW, NS * NW, NW, NS * NDG * NW, NS * NW};
    for (int h = 0; h < 6; h++) {
        fits_movabs_hdu(f, h + 1, NULL, &status);
        char extname[FLEN_VALUE] = "";
        int bitpix = 0, naxis = 0;
        long naxes[3] = {0, 0, 0};
        fits_read_key(f, TSTRING, "EXTNAME", extname, NULL, &status);
        fits_get_img_param(f, 3, &bitpix, &naxis, naxes, &status);
        cr_expect_str_eq(extname, names[h]);
        int datasum_ok = 0, hdu_ok = 0;
        fits_verify_chksum(f, &datasum_ok, &hdu_ok, &status);
        cr_expect(datasum_ok == 1 && hdu_ok == 1, "%s: CHECKSUM/DATASUM %d %d", names[h], datasum_ok, hdu_ok);
        if (h == 3) cr_expect(naxis == 1 && naxes[0] == NW);
        else if (h == 4) cr_expect(naxis == 3 && naxes[0] == NW && naxes[1] == NDG && naxes[2] == NS);
        else cr_expect(naxis == 2 && naxes[0] == NW && naxes[1] == NS, "%s shape", names[h]);
        cr_expect_eq(bitpix, h == 2 ? LONG_IMG : DOUBLE_IMG, "%s BITPIX", names[h]);
        uint64_t buf[NS * NDG * NW];
        fits_read_img(f, h == 2 ? TUINT : TDOUBLE, 1, n[h], NULL, buf, NULL, &status);
        cr_expect(status == 0 && memcmp(buf, data[h], (size_t)n[h] * (h == 2 ? 4 : 8)) == 0, "%s values", names[h]);
    }
    fits_movabs_hdu(f, 1, NULL, &status);
    int nspec = 0, specmin = 0, specmax = 0, fibermin = 0, ndiag = -1;
    char bunit[FLEN_VALUE] = "";
    fits_read_key(f, TINT, "NSPEC", &nspec, NULL, &status);
    fits_read_key(f, TINT, "SPECMIN", &specmin, NULL, &status);
    fits_read_key(f, TINT, "SPECMAX", &specmax, NULL, &status);
    fits_read_key(f, TINT, "FIBERMIN", &fibermin, NULL, &status);
    fits_read_key(f, TINT, "NDIAG", &ndiag, NULL, &status);
    fits_read_key(f, TSTRING, "BUNIT", bunit, NULL, &status);
    cr_expect(status == 0 && nspec == NS && specmin == 25 && specmax == 27 && fibermin == 25 && ndiag == ND);
    cr_expect_str_eq(bunit, "electron/Angstrom");
    fits_movnam_hdu(f, IMAGE_HDU, "MASK", 0, &status);
    double bzero = 0;
    fits_read_key(f, TDOUBLE, "BZERO", &bzero, NULL, &status);
    cr_expect(status == 0 && bzero == 2147483648.0, "MASK is uint32 through BZERO 2^31");
    fits_movnam_hdu(f, IMAGE_HDU, "WAVELENGTH", 0, &status);
    fits_read_key(f, TSTRING, "BUNIT", bunit, NULL, &status);
    cr_expect_str_eq(bunit, "Angstrom");
    fits_close_file(f, &status);
    cr_expect_eq(status, 0);
}
