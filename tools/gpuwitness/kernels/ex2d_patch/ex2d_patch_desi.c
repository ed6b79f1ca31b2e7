/* SPDX-License-Identifier: MIT
 * ex2d_patch on DESI files (docs/ex2d_patch.md, "Real DESI files"):
 *   gpuwitness run ex2d --psf PSF.fits --image IMAGE.fits --fibres F:C --waves W0:W1:DW [...] --out FRAME.fits
 *   gpuwitness synth ex2d --psf PSF.fits --fibres F:C --waves W0:W1:DW --seed N [--clean] --out IMAGE.fits
 * Both build the frame's PSF table from the real PSF (ex2d_frame_make with ex2d_frame_config_use_psf) over the
 * image window that the patches need; run then puts the file's pixels in that window and extracts, synth
 * projects the synthetic truth through the PSF and adds noise. Everything is checked before anything is
 * written, and each file is staged and renamed only when complete (lib/io's gw_desi.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_host.h"
#include "gw_cli_files.h"
#include "ex2d_patch_ref.h"
#include "gw_desi.h"
#include "gw_kernel.h"

#define MAX_WAVES 100000 /* bins per extraction: far above a DESI camera's ~2900 */

/* desispec's specmask bits (desispec.maskbits) that an extraction sets. */
enum { SPECMASK_SOMEBADPIX = 1u << 0, SPECMASK_ALLBADPIX = 1u << 1, SPECMASK_BAD2DFIT = 1u << 7 };

typedef struct desi_opts {
    const char *cmd; /* "gpuwitness run ex2d" or "gpuwitness synth ex2d", for messages */
    const char *psf, *image, *out, *device;
    int fibre_first, nfibre; /* global fibre numbers */
    double wave0, wave1, dwave;
    int nwave;
    int synth; /* 1: synth ex2d, 0: run ex2d */
    int bundle_size, wavesize, threads, clean, ndecorr;
    double regularize;
    uint64_t seed;
} desi_opts;

static const char run_help[] =
    "usage: gpuwitness run ex2d --psf PSF.fits --image IMAGE.fits --fibres F:C --waves W0:W1:DW --out FRAME.fits\n"
    "                           [--bundle-size 25] [--wavesize 50] [--regularize R] [--device D] [--threads N]\n"
    "\n"
    "Extracts fibres F..F+C-1 (global fibre numbers, inside the PSF's FIBERMIN..FIBERMAX) of a DESI preprocessed\n"
    "image (HDUs IMAGE, IVAR, MASK; a nonzero MASK zeroes the pixel's ivar) with a GAUSS-HERMITE PSF (PSFVER 2\n"
    "or 3) on the wavelength grid W0, W0+DW, ... up to W1 (Angstrom), by spectroperfectionism\n"
    "(docs/ex2d_patch.md). Patches: subbundles of 5 fibres inside bundles of --bundle-size, --wavesize bins\n"
    "each plus 12 bins of padding on each side; every spot of the padded grid must lie on the CCD.\n"
    "FRAME.fits is a DESI frame: FLUX and IVAR per Angstrom (float64), MASK (desispec's specmask bits),\n"
    "WAVELENGTH, RESOLUTION [nspec][2*HSIZEY+1][nwave], CHI2PIX; written to a temporary name and renamed when\n"
    "complete. --ndecorr (noise decorrelation) is not supported: docs/ex2d_patch.md says why.\n"
    "exit status: 0 written; 1 bad file, extraction failed or write error; 2 bad usage; 77 --device cuda\n"
    "without a usable GPU. Nothing is written on any error.\n";

static const char synth_help[] =
    "usage: gpuwitness synth ex2d --psf PSF.fits --fibres F:C --waves W0:W1:DW --out IMAGE.fits\n"
    "                             [--seed N] [--clean] [--bundle-size 25] [--wavesize 50] [--threads N]\n"
    "\n"
    "Writes a DESI preprocessed image (HDUs IMAGE, IVAR, MASK over the PSF's whole CCD, tile-compressed\n"
    "losslessly, float64) of fibres F..F+C-1 on the grid W0:W1:DW projected through the PSF: the synthetic\n"
    "truth f = 100 + 50 sin(lambda/37 + fibre) plus lines every 97 bins, for every bin of the padded grid that\n"
    "run ex2d with the same options models, read noise 3, ivar = 1/(9 + model), noise from splitmix64 (--seed,\n"
    "default 0x5eed2d) unless --clean. The truth goes into HDU TRUTH [fibre][bin] with FIBERMIN, CRVAL1 and\n"
    "CDELT1. Pixels outside the patches' window are 0 with ivar 0.\n";

/* "F:C" (gw_cli_parse_range): the first global fibre and the count. */
static int parse_fibres(const desi_opts *o, const char *text, int *first, int *count)
{
    if (gw_cli_parse_range(text, first, count) == 0) return 0;
    fprintf(stderr, "%s: --fibres '%s': must be F:C, the first global fibre and the count, whole numbers, F >= 0 and "
            "C >= 1\n", o->cmd, text);
    return -1;
}

/* "W0:W1:DW" in Angstrom: finite, 0 < W0 < W1, DW > 0, at most MAX_WAVES bins, and DW at least 8 times the
 * spacing of doubles at W1, so that W0 + k DW gives a distinct, increasing wavelength for every bin (the frame
 * and the PSF's Legendre argument need them apart). Whether the grid lies inside the PSF's domain is known only
 * once the PSF is read (make_frame). */
static int parse_waves(desi_opts *o, const char *text)
{
    double v[3];
    const char *at = text;
    int ok = 1;
    for (int i = 0; i < 3 && ok; i++) {
        char *end = NULL;
        errno = 0;
        v[i] = strtod(at, &end);
        ok = !errno && end != at && isfinite(v[i]) && *end == (i < 2 ? ':' : '\0');
        at = end + (i < 2);
    }
    if (!ok || !(v[0] > 0.0 && v[1] > v[0] && v[2] > 0.0)) {
        fprintf(stderr, "%s: --waves '%s': must be W0:W1:DW in Angstrom, three finite numbers, 0 < W0 < W1 and DW > "
                "0\n", o->cmd, text);
        return -1;
    }
    const double spacing = nextafter(v[1], INFINITY) - v[1];
    if (v[2] < 8.0 * spacing) {
        fprintf(stderr, "%s: --waves '%s': the step DW = %g A is below 8 times the spacing of doubles at W1 (%g A): "
                "the bins' wavelengths would not be distinct; DW must be at least %g A\n", o->cmd, text, v[2], spacing,
                8.0 * spacing);
        return -1;
    }
    const double bins = floor((v[1] - v[0]) / v[2] * (1.0 + 1e-12)) + 1.0;
    if (!(bins <= MAX_WAVES)) {
        /* the count in digits while it is a count, not 300 digits of a step near zero */
        fprintf(stderr, "%s: --waves '%s': %.*g bins, at most %d\n", o->cmd, text, bins < 1e15 ? 15 : 3, bins,
                MAX_WAVES);
        return -1;
    }
    o->wave0 = v[0], o->wave1 = v[1], o->dwave = v[2], o->nwave = (int)bins;
    return 0;
}

static int parse_int(const desi_opts *o, const char *flag, const char *text, unsigned long long lo,
                     unsigned long long hi, unsigned long long *value)
{
    if (gw_cli_parse_u64(text, hi, value) || *value < lo) {
        fprintf(stderr, "%s: %s '%s': must be a whole number from %llu to %llu\n", o->cmd, flag, text, lo, hi);
        return -1;
    }
    return 0;
}

/* The options of both commands, over their defaults; synth refuses run's own (--image, --regularize, --device,
 * --ndecorr) and run refuses --clean and --seed. --help prints the command's text and sets *done.
 * GW_EXIT_OK, or GW_EXIT_USAGE with the rule printed. */
static int parse_options(int argc, char **argv, int synth, desi_opts *o, int *done)
{
    const char *sub = synth ? "synth ex2d" : "run ex2d";
    *o = (desi_opts){.cmd = synth ? "gpuwitness synth ex2d" : "gpuwitness run ex2d", .synth = synth,
                     .bundle_size = 25, .wavesize = 50, .seed = 0x5eed2dULL};
    *done = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(synth ? synth_help : run_help, stdout);
            *done = 1;
            return GW_EXIT_OK;
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        unsigned long long n = 0;
        int m = 0, bad = 0;
        if (a[0] != '-' || !a[1]) {
            fprintf(stderr, "%s: unexpected argument '%s': the files are given by --psf%s and --out\n", o->cmd, a,
                    synth ? "" : ", --image");
            return GW_EXIT_USAGE;
        }
        if (!strcmp(a, "--clean") && synth) {
            o->clean = 1;
            continue;
        }
        if (!strcmp(a, "--ndecorr") && !synth) {
            o->ndecorr = 1;
            continue;
        }
#define OPT(name) (!m && (m = gw_cli_option(argc, argv, &i, sub, name, &v)) > 0)
        if (OPT("--psf")) o->psf = v;
        else if (OPT("--out")) o->out = v;
        else if (OPT("--fibres")) bad = parse_fibres(o, v, &o->fibre_first, &o->nfibre);
        else if (OPT("--waves")) bad = parse_waves(o, v);
        else if (OPT("--bundle-size")) bad = parse_int(o, "--bundle-size", v, 1, 500, &n), o->bundle_size = (int)n;
        else if (OPT("--wavesize")) bad = parse_int(o, "--wavesize", v, 1, EX2D_MAX_M - 24, &n), o->wavesize = (int)n;
        else if (OPT("--threads")) bad = parse_int(o, "--threads", v, 0, 1024, &n), o->threads = (int)n;
        else if (synth && OPT("--seed")) bad = parse_int(o, "--seed", v, 0, UINT64_MAX, &n), o->seed = n;
        else if (!synth && OPT("--image")) o->image = v;
        else if (!synth && OPT("--device")) o->device = v;
        else if (!synth && OPT("--regularize")) {
            char *end = NULL;
            o->regularize = strtod(v, &end);
            /* its square is added to the normal matrix's diagonal: beyond 1e150 that square overflows the sums */
            if (end == v || *end || !(o->regularize >= 0.0 && o->regularize <= 1e150)) {
                fprintf(stderr, "%s: --regularize '%s': must be a number from 0 to 1e150 (its square is added to the "
                        "normal matrix)\n", o->cmd, v);
                bad = 1;
            }
        } else if (!m) {
            fprintf(stderr, "%s: unknown option '%s': options are --psf, %s--fibres, --waves, --out, --bundle-size, "
                    "--wavesize, --threads, %s, --help\n", o->cmd, a, synth ? "" : "--image, ",
                    synth ? "--seed, --clean" : "--regularize, --device");
            return GW_EXIT_USAGE;
        }
#undef OPT
        if (m < 0 || bad) return GW_EXIT_USAGE;
    }
    const char *missing = !o->psf ? "--psf PSF.fits" : !synth && !o->image ? "--image IMAGE.fits"
                          : !o->nfibre ? "--fibres F:C" : !o->nwave ? "--waves W0:W1:DW"
                          : !o->out ? (synth ? "--out IMAGE.fits" : "--out FRAME.fits") : NULL;
    if (missing) {
        fprintf(stderr, "%s: missing %s (%s --help)\n", o->cmd, missing, o->cmd);
        return GW_EXIT_USAGE;
    }
    /* the output rule (gw_cli_files.h) before any file is read: --out may not replace --psf or --image */
    const gw_cli_file out = {"--out", o->out, NULL};
    const gw_cli_file ins[2] = {{"--psf", o->psf, NULL}, {"--image", o->image, NULL}};
    if (gw_cli_check_outputs(o->cmd, &out, 1, ins, synth ? 1 : 2)) return GW_EXIT_USAGE;
    if (o->ndecorr) {
        fprintf(stderr, "%s: --ndecorr: noise decorrelation (Q = iCov^(1/2) over a whole patch) is not supported; "
                "ex2d_patch decorrelates per spectrum (signal), DESI's default (docs/ex2d_patch.md, \"Scope\")\n",
                o->cmd);
        return GW_EXIT_USAGE;
    }
    return GW_EXIT_OK;
}

/* The frame's model is its synthetic spectra through the PSF, without noise: a value that is not finite there
 * is a spot the PSF cannot give (a width so small that the pixel integrals degenerate, sums that overflow, or
 * a spot that sums to 0 and cannot be normalised to 1). The PSF is at fault, and both commands say so now
 * rather than blame their output or extract a frame of zeros at the end. GW_EXIT_OK, or GW_EXIT_FAIL. */
static int psf_spots_usable(const desi_opts *o, const ex2d_frame *f)
{
    const size_t npix = (size_t)f->params.npix_x * f->params.npix_y;
    for (size_t i = 0; i < npix; i++)
        if (!isfinite(f->model[i])) {
            fprintf(stderr, "%s: --psf %s: the PSF's spots are not finite at pixel (row %zu, column %zu) of the CCD: "
                    "its coefficients give no usable spot there (a width too small, sums that overflow, or a spot "
                    "that sums to 0 and cannot be normalised); nothing written\n", o->cmd, o->psf,
                    i / f->params.npix_x + (size_t)f->image_y0,
                    i % f->params.npix_x + (size_t)f->image_x0);
            return GW_EXIT_FAIL;
        }
    return GW_EXIT_OK;
}

/* The frame of o over psf: its configuration checked and the frame built, with each failure in the words of
 * the option it comes from. GW_EXIT_OK, GW_EXIT_USAGE, or GW_EXIT_FAIL (out of memory, or a width or value
 * of the PSF that is not usable at a table wavelength). */
static int make_frame(const desi_opts *o, const ex2d_psf *psf, ex2d_frame *f)
{
    const int last_fibre = psf->fibre_min + psf->nfibre - 1;
    if (o->fibre_first < psf->fibre_min || o->fibre_first > last_fibre - o->nfibre + 1) {
        fprintf(stderr, "%s: --fibres %d:%d: fibres %d..%d must lie inside the PSF's FIBERMIN..FIBERMAX, %d..%d\n",
                o->cmd, o->fibre_first, o->nfibre, o->fibre_first, o->fibre_first + o->nfibre - 1, psf->fibre_min,
                last_fibre);
        return GW_EXIT_USAGE;
    }
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    ex2d_frame_config_use_psf(&cfg, psf);
    cfg.fibre_first = o->fibre_first - psf->fibre_min, cfg.nfibre = o->nfibre;
    cfg.wave_min = o->wave0, cfg.wave_step = o->dwave, cfg.nwave_camera = cfg.nwave = o->nwave, cfg.wave_first = 0;
    cfg.bundle_size = o->bundle_size;
    cfg.subbundle_size = o->bundle_size < cfg.subbundle_size ? o->bundle_size : cfg.subbundle_size;
    cfg.nwavestep = o->wavesize;
    /* run replaces the synthesised pixels with the file's: no noise to draw there */
    cfg.crop_to_boxes = 1, cfg.add_noise = o->synth && !o->clean, cfg.seed = o->seed, cfg.nthreads = o->threads;
    /* the padded grid inside the PSF's domain first: the configuration's own rules would otherwise speak of
     * internal quantities (wave_span) for wavelengths that are merely far outside it */
    double lo, hi;
    ex2d_psf_wave_range(psf, &lo, &hi);
    const double need_lo = o->wave0 - cfg.wavepad * o->dwave;
    const double need_hi = o->wave0 + (o->nwave - 1 + cfg.wavepad + cfg.nwavestep) * o->dwave;
    if (!(need_lo >= lo && need_hi <= hi)) {
        fprintf(stderr, "%s: --waves %g:%g:%g with --wavesize %d: the padded grid %g..%g A (%d bins below W0, %d "
                "above W1) must lie inside the PSF's wavelength domain %g..%g A\n", o->cmd, o->wave0, o->wave1,
                o->dwave, o->wavesize, need_lo, need_hi, cfg.wavepad, cfg.wavepad + cfg.nwavestep, lo, hi);
        return GW_EXIT_USAGE;
    }
    const char *why = ex2d_frame_config_check(&cfg);
    if (why) {
        fprintf(stderr, "%s: --waves %g:%g:%g with --wavesize %d: %s (the PSF: %g..%g A)\n", o->cmd, o->wave0,
                o->wave1, o->dwave, o->wavesize, why, lo, hi);
        return GW_EXIT_USAGE;
    }
    const int rc = ex2d_frame_make(&cfg, f);
    if (rc == EX2D_SYNTH_ERR_GEOMETRY) {
        fprintf(stderr, "%s: --fibres %d:%d --waves %g:%g:%g: a spot of the padded grid (%d bins below W0, %d above "
                "W1) leaves the %d x %d CCD, or a patch exceeds this build's limits; choose wavelengths further "
                "inside the CCD\n", o->cmd, o->fibre_first, o->nfibre, o->wave0, o->wave1, o->dwave, cfg.wavepad,
                cfg.wavepad + cfg.nwavestep, psf->npix_x, psf->npix_y);
        return GW_EXIT_USAGE;
    }
    if (rc) {
        fprintf(stderr, "%s: %s: %s; nothing written\n", o->cmd, rc == EX2D_SYNTH_ERR_PSF ? o->psf : "building the frame",
                ex2d_synth_error_str(rc));
        return GW_EXIT_FAIL; /* out of memory, or the PSF file's values */
    }
    return psf_spots_usable(o, f);
}

static int read_psf(const desi_opts *o, ex2d_psf *psf)
{
    char err[1024];
    if (gw_desi_psf_read(o->psf, psf, err, sizeof err)) {
        fprintf(stderr, "%s: --psf: %s; nothing written\n", o->cmd, err);
        return GW_EXIT_FAIL;
    }
    const char *why = ex2d_psf_check(psf);
    if (why) {
        fprintf(stderr, "%s: --psf %s: %s; nothing written\n", o->cmd, o->psf, why);
        ex2d_psf_free(psf);
        return GW_EXIT_FAIL;
    }
    return GW_EXIT_OK;
}

/* ---- run ---- */

/* The file's pixels into the frame's window. */
static int place_image(const desi_opts *o, const ex2d_psf *psf, const gw_desi_image *img, ex2d_frame *f)
{
    if (img->npix_x != psf->npix_x || img->npix_y != psf->npix_y) {
        fprintf(stderr, "%s: --image %s: %d x %d pixels (columns x rows), the PSF's CCD is %d x %d; nothing "
                "written\n", o->cmd, o->image, img->npix_x, img->npix_y, psf->npix_x, psf->npix_y);
        return GW_EXIT_FAIL;
    }
    const ex2d_params *p = &f->params;
    for (int y = 0; y < p->npix_y; y++) {
        const size_t from = (size_t)(y + f->image_y0) * img->npix_x + f->image_x0, to = (size_t)y * p->npix_x;
        memcpy(f->image + to, img->image + from, (size_t)p->npix_x * sizeof(double));
        memcpy(f->ivar + to, img->ivar + from, (size_t)p->npix_x * sizeof(double));
    }
    return GW_EXIT_OK;
}

/* The frame file: per-Angstrom flux and ivar, desispec's mask bits, the wavelength grid. */
static int write_frame(const desi_opts *o, const ex2d_frame *f, const ex2d_outputs *r, const unsigned char *failed)
{
    const ex2d_params *p = &f->params;
    const size_t bins = (size_t)p->nspec_out * p->nwave_out;
    double *flux = malloc(bins * sizeof(double)), *ivar = malloc(bins * sizeof(double));
    double *wave = malloc((size_t)p->nwave_out * sizeof(double));
    uint32_t *mask = malloc(bins * sizeof(uint32_t));
    int rc = GW_EXIT_FAIL;
    if (!flux || !ivar || !wave || !mask) {
        fprintf(stderr, "%s: out of memory for the frame; nothing written\n", o->cmd);
        goto done;
    }
    for (int w = 0; w < p->nwave_out; w++) wave[w] = o->wave0 + o->dwave * w;
    for (size_t k = 0; k < bins; k++) {
        flux[k] = r->flux[k] / o->dwave;
        ivar[k] = r->ivar[k] * o->dwave * o->dwave;
        mask[k] = 0;
        if (r->pixmask_fraction[k] > 0.5) mask[k] |= SPECMASK_SOMEBADPIX;
        if (r->pixmask_fraction[k] >= 1.0 || ivar[k] == 0.0) mask[k] |= SPECMASK_ALLBADPIX;
        if (r->chi2pix[k] > 100.0) mask[k] |= SPECMASK_BAD2DFIT;
    }
    for (int i = 0; i < f->npatch; i++) /* a failed patch: its core is 0 */
        if (failed[i]) {
            const ex2d_patch_desc *d = &f->patches[i];
            for (int s = 0; s < d->ncore; s++)
                for (int w = 0; w < d->ncore_wave; w++)
                    mask[(size_t)(d->out_spec_first + s) * p->nwave_out + d->out_wave_first + w] |= SPECMASK_BAD2DFIT;
        }
    const gw_desi_frame fr = {.nspec = p->nspec_out, .nwave = p->nwave_out, .ndiag = p->ndiag,
                              .fibre_first = o->fibre_first, .wave = wave, .flux = flux, .ivar = ivar, .mask = mask,
                              .rdiags = r->rdiags, .chi2pix = r->chi2pix, .bunit = "electron/Angstrom",
                              .comment = "extracted by gpuwitness run ex2d (spectroperfectionism, docs/ex2d_patch.md)"};
    char err[1024];
    if (gw_desi_frame_write(o->out, &fr, err, sizeof err)) {
        fprintf(stderr, "%s: --out: %s\n", o->cmd, err);
        goto done;
    }
    printf("  wrote %s (%d fibres x %d bins)\n", o->out, p->nspec_out, p->nwave_out);
    rc = GW_EXIT_OK;
done:
    free(flux), free(ivar), free(wave), free(mask);
    return rc;
}

/* The extraction of f (the image in its window) on dev, then the frame file. */
static int extract_and_write(const desi_opts *o, const ex2d_psf *psf, const ex2d_frame *f,
                             const gw_device_choice *dev, size_t nmasked)
{
    const ex2d_params *p = &f->params;
    printf("%s: fibres %d..%d, %d bins %g..%g A: %d patch(es), n <= %d, spots %d x %d, window %d x %d at (%d, %d), "
           "%zu masked pixels\n", o->cmd, o->fibre_first, o->fibre_first + o->nfibre - 1, o->nwave, o->wave0,
           o->wave0 + o->dwave * (o->nwave - 1), f->npatch, p->max_nspecpad * p->m, 2 * psf->hsizey + 1,
           2 * psf->hsizex + 1, p->npix_x, p->npix_y, f->image_x0, f->image_y0, nmasked);
    ex2d_outputs out;
    if (ex2d_ref_outputs_alloc(p, f->npatch, &out)) {
        fprintf(stderr, "%s: out of memory for the outputs; nothing written\n", o->cmd);
        return GW_EXIT_FAIL;
    }
    int rc = gw_ex2d_extract(o->cmd, f, dev, o->threads, &out);
    unsigned char *failed = rc == GW_EXIT_OK ? malloc((size_t)f->npatch) : NULL;
    if (rc == GW_EXIT_OK && !failed) {
        fprintf(stderr, "%s: out of memory; nothing written\n", o->cmd);
        rc = GW_EXIT_FAIL;
    }
    if (rc == GW_EXIT_OK)
        rc = gw_ex2d_judge_patches(o->cmd, "their core is 0 with IVAR 0 and MASK BAD2DFIT", f, &out, o->regularize,
                                   failed)
                 ? GW_EXIT_FAIL
                 : write_frame(o, f, &out, failed);
    free(failed);
    ex2d_ref_outputs_free(&out);
    return rc;
}

int gw_ex2d_run_desi(int argc, char **argv)
{
    desi_opts o;
    int done;
    int rc = parse_options(argc, argv, 0, &o, &done);
    if (rc != GW_EXIT_OK || done) return rc;
    gw_device_choice dev;
    rc = gw_cli_select_device("run", o.device, &dev);
    if (rc == GW_EXIT_SKIP) {
        fprintf(stderr, "%s: no usable GPU for --device %s: %s; nothing written (exit 77)\n", o.cmd,
                gw_cli_effective_device(o.device), dev.reason);
        return rc;
    }
    if (rc != GW_EXIT_OK) return rc;
    ex2d_psf psf;
    if ((rc = read_psf(&o, &psf)) != GW_EXIT_OK) return rc;
    ex2d_frame f;
    rc = make_frame(&o, &psf, &f); /* the fibres and wavelengths are refused before the image is read */
    if (rc == GW_EXIT_OK) {
        gw_desi_image img;
        char err[1024];
        if (gw_desi_image_read(o.image, &img, err, sizeof err)) {
            fprintf(stderr, "%s: --image: %s; nothing written\n", o.cmd, err);
            rc = GW_EXIT_FAIL;
        } else {
            rc = place_image(&o, &psf, &img, &f);
            const size_t nmasked = img.nmasked;
            gw_desi_image_free(&img); /* the frame holds its window */
            f.params.regularize = o.regularize;
            if (rc == GW_EXIT_OK && dev.fell_back)
                fprintf(stderr, "%s: no usable GPU: %s; running ex2d_ref on the CPU instead (auto)\n", o.cmd,
                        dev.reason);
            if (rc == GW_EXIT_OK) rc = extract_and_write(&o, &psf, &f, &dev, nmasked);
        }
        ex2d_frame_free(&f);
    }
    ex2d_psf_free(&psf);
    return rc;
}

/* ---- synth ---- */

static int write_image(const desi_opts *o, const ex2d_psf *psf, const ex2d_frame *f)
{
    const size_t npix = (size_t)psf->npix_x * psf->npix_y;
    double *image = calloc(npix, sizeof(double)), *ivar = calloc(npix, sizeof(double));
    int rc = GW_EXIT_FAIL;
    if (!image || !ivar) {
        fprintf(stderr, "%s: out of memory for the %d x %d image; nothing written\n", o->cmd, psf->npix_x,
                psf->npix_y);
        goto done;
    }
    const ex2d_params *p = &f->params;
    for (int y = 0; y < p->npix_y; y++) {
        const size_t to = (size_t)(y + f->image_y0) * psf->npix_x + f->image_x0, from = (size_t)y * p->npix_x;
        memcpy(image + to, f->image + from, (size_t)p->npix_x * sizeof(double));
        memcpy(ivar + to, f->ivar + from, (size_t)p->npix_x * sizeof(double));
    }
    char comment[200], err[1024];
    snprintf(comment, sizeof comment, "synthesised by gpuwitness synth ex2d: fibres %d:%d, waves %.17g:%.17g:%.17g, "
             "seed %llu%s", o->fibre_first, o->nfibre, o->wave0, o->wave1, o->dwave, (unsigned long long)o->seed,
             o->clean ? ", clean" : "");
    const gw_desi_image_out im = {
        .npix_x = psf->npix_x, .npix_y = psf->npix_y, .image = image, .ivar = ivar, .mask = NULL,
        .truth = f->f_true, .truth_nspec = p->nspec_tab, .truth_nwave = p->nwave_tab,
        .truth_fibre_first = psf->fibre_min + f->tab_fibre_first,
        .truth_wave0 = o->wave0 + o->dwave * f->tab_wave_first, .truth_dwave = o->dwave, .comment = comment,
    };
    if (gw_desi_image_write(o->out, &im, err, sizeof err)) {
        fprintf(stderr, "%s: --out: %s\n", o->cmd, err);
        goto done;
    }
    printf("  wrote %s (%d x %d pixels; truth of %d fibres x %d bins)\n", o->out, psf->npix_x, psf->npix_y,
           p->nspec_tab, p->nwave_tab);
    rc = GW_EXIT_OK;
done:
    free(image), free(ivar);
    return rc;
}

int gw_ex2d_patch_synth(int argc, char **argv)
{
    desi_opts o;
    int done;
    int rc = parse_options(argc, argv, 1, &o, &done);
    if (rc != GW_EXIT_OK || done) return rc;
    ex2d_psf psf;
    if ((rc = read_psf(&o, &psf)) != GW_EXIT_OK) return rc;
    ex2d_frame f;
    const double t0 = gw_cli_now_ms();
    rc = make_frame(&o, &psf, &f);
    if (rc == GW_EXIT_OK) {
        printf("%s: fibres %d..%d, %d bins %g..%g A, %s, seed %llu: window %d x %d at (%d, %d), made in %.0f ms\n",
               o.cmd, o.fibre_first, o.fibre_first + o.nfibre - 1, o.nwave, o.wave0, o.wave0 + o.dwave * (o.nwave - 1),
               o.clean ? "no noise" : "noise", (unsigned long long)o.seed, f.params.npix_x, f.params.npix_y,
               f.image_x0, f.image_y0, gw_cli_now_ms() - t0);
        rc = write_image(&o, &psf, &f);
        ex2d_frame_free(&f);
    }
    ex2d_psf_free(&psf);
    return rc;
}
