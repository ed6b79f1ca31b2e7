/* SPDX-License-Identifier: MIT
 * ex2d_frame_pulls FRAME.fits IMAGE.fits MODE: the end-to-end check of `gpuwitness synth ex2d` then `run ex2d`
 * (docs/ex2d_patch.md, "Real DESI files"). From the frame (FLUX, IVAR per Angstrom, RESOLUTION, WAVELENGTH,
 * SPECMIN) and the image's TRUTH HDU (the truth per bin of the padded grid, FIBERMIN, CRVAL1, CDELT1) it forms
 * chi = (flux - R f_true / dw) sqrt(ivar) over every bin whose R band lies inside the frame (R f_true needs
 * the truth at bins j - ndiag .. j + ndiag); each such bin must have ivar > 0 (nothing is masked, so a frame
 * of zeros cannot pass). MODE noisy: mean within 0.1 of 0 and std within 10 % of 1 over at least 2000 bins;
 * MODE clean: every |chi| <= 0.01 (the band keeps 2 ndiag + 1 diagonals of R; the rest is far below that).
 * Prints the statistics; exit 0 when they hold, 1 otherwise, 2 on a file it cannot read.
 */
#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail_fits(const char *path, const char *what, int status)
{
    char text[FLEN_STATUS];
    fits_get_errstatus(status, text);
    fprintf(stderr, "ex2d_frame_pulls: %s: %s: %s\n", path, what, text);
    return 2;
}

/* The image HDU named name of f into a new array of its naxes (up to 3), as doubles. */
static double *read_hdu(fitsfile *f, const char *path, const char *name, int *naxis, long naxes[3], int *status)
{
    if (fits_movnam_hdu(f, IMAGE_HDU, (char *)name, 0, status)) return NULL;
    naxes[0] = naxes[1] = naxes[2] = 1;
    if (fits_get_img_dim(f, naxis, status) || fits_get_img_size(f, 3, naxes, status)) return NULL;
    const long n = naxes[0] * naxes[1] * naxes[2];
    double *v = malloc((size_t)n * sizeof(double));
    long first[3] = {1, 1, 1};
    if (!v || fits_read_pix(f, TDOUBLE, first, n, NULL, v, NULL, status)) {
        free(v);
        if (!*status) fprintf(stderr, "ex2d_frame_pulls: %s: out of memory for %s\n", path, name);
        return NULL;
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "noisy") && strcmp(argv[3], "clean"))) {
        fprintf(stderr, "usage: ex2d_frame_pulls FRAME.fits IMAGE.fits noisy|clean\n");
        return 2;
    }
    const int clean = !strcmp(argv[3], "clean");
    int status = 0, naxis;
    long nf[3], ni[3], nr[3], nw[3], nt[3];
    fitsfile *fr = NULL, *im = NULL;
    if (fits_open_file(&fr, argv[1], READONLY, &status)) return fail_fits(argv[1], "open", status);
    double *flux = read_hdu(fr, argv[1], "FLUX", &naxis, nf, &status);
    double *ivar = read_hdu(fr, argv[1], "IVAR", &naxis, ni, &status);
    double *res = read_hdu(fr, argv[1], "RESOLUTION", &naxis, nr, &status);
    double *wave = read_hdu(fr, argv[1], "WAVELENGTH", &naxis, nw, &status);
    int specmin = 0;
    if (!status) fits_movnam_hdu(fr, IMAGE_HDU, "FLUX", 0, &status);
    if (!status) fits_read_key(fr, TINT, "SPECMIN", &specmin, NULL, &status);
    if (status) return fail_fits(argv[1], "FLUX, IVAR, RESOLUTION, WAVELENGTH or SPECMIN", status);
    if (fits_open_file(&im, argv[2], READONLY, &status)) return fail_fits(argv[2], "open", status);
    double *truth = read_hdu(im, argv[2], "TRUTH", &naxis, nt, &status);
    int tfib = 0;
    double crval = 0, cdelt = 0;
    if (!status) fits_read_key(im, TINT, "FIBERMIN", &tfib, NULL, &status);
    if (!status) fits_read_key(im, TDOUBLE, "CRVAL1", &crval, NULL, &status);
    if (!status) fits_read_key(im, TDOUBLE, "CDELT1", &cdelt, NULL, &status);
    if (status) return fail_fits(argv[2], "TRUTH with FIBERMIN, CRVAL1, CDELT1", status);
    const long nwave = nf[0], nspec = nf[1], nd = nr[1], ndiag = (nd - 1) / 2;
    if (ni[0] != nwave || ni[1] != nspec || nr[0] != nwave || nr[2] != nspec || nw[0] != nwave || nd % 2 != 1) {
        fprintf(stderr, "ex2d_frame_pulls: %s: the HDUs' shapes disagree\n", argv[1]);
        return 2;
    }
    const double dw = wave[1] - wave[0];
    double sum = 0, sum2 = 0, worst = 0;
    long count = 0, outside = 0, no_weight = 0;
    for (long s = 0; s < nspec; s++) {
        const long trow = specmin + s - tfib;
        for (long j = ndiag; j < nwave - ndiag; j++) {
            /* (R f)[j] = sum_d data[d][c] f[c], c = j + ndiag - d (scipy dia_matrix, offsets ndiag..-ndiag) */
            double rf = 0;
            for (long d = 0; d < nd; d++) {
                const long c = j + ndiag - d;
                const long tcol = lround((wave[c] - crval) / cdelt);
                if (trow < 0 || trow >= nt[1] || tcol < 0 || tcol >= nt[0]) {
                    outside++;
                    continue;
                }
                rf += res[(s * nd + d) * nwave + c] * truth[trow * nt[0] + tcol];
            }
            if (!(ivar[s * nwave + j] > 0)) no_weight++; /* chi would be 0 there: an empty frame must not pass */
            const double chi = (flux[s * nwave + j] - rf / dw) * sqrt(ivar[s * nwave + j]);
            sum += chi, sum2 += chi * chi, count++;
            if (!(fabs(chi) <= worst)) worst = fabs(chi);
        }
    }
    const double mean = sum / count, std = sqrt(sum2 / count - mean * mean);
    printf("ex2d_frame_pulls: %s over %ld bins (%ld spectra x %ld inner bins): chi mean %.4f, std %.4f, max |chi| "
           "%.3g\n", clean ? "clean" : "noisy", count, nspec, nwave - 2 * ndiag, mean, std, worst);
    int ok = outside == 0 && no_weight == 0 && count > 0;
    if (outside) fprintf(stderr, "ex2d_frame_pulls: %ld R terms fall outside the truth HDU\n", outside);
    if (no_weight) fprintf(stderr, "ex2d_frame_pulls: %ld bins have ivar <= 0 (none may: no pixel is masked)\n", no_weight);
    if (clean) ok = ok && worst <= 0.01;
    else ok = ok && count >= 2000 && fabs(mean) <= 0.1 && fabs(std - 1.0) <= 0.1;
    fits_close_file(fr, &status);
    fits_close_file(im, &status);
    free(flux), free(ivar), free(res), free(wave), free(truth);
    return ok ? 0 : 1;
}
