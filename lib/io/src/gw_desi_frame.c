/* SPDX-License-Identifier: MIT
 * DESI frame files in desispec's write_frame layout (gw_desi.h lists the HDUs and keywords), float64.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_desi.h"
#include "gw_desi_fits.h"
#include "gw_io_err.h"

static int check_frame(const char *path, const gw_desi_frame *fr, char *err, size_t err_size)
{
    if (!fr) {
        set_err(err, err_size, "%s: gw_desi_frame_write: the frame fr is NULL", path);
        return -1;
    }
    const char *null = !fr->wave ? "wave" : !fr->flux ? "flux" : !fr->ivar ? "ivar" : !fr->rdiags ? "rdiags" : NULL;
    if (null) {
        set_err(err, err_size, "%s: gw_desi_frame_write: fr->%s is NULL", path, null);
        return -1;
    }
    /* sizes whose products fit in int64 for cfitsio and in size_t for the checks */
    if (fr->nspec < 1 || fr->nwave < 1 || fr->ndiag < 0 || fr->ndiag > 1000 || fr->fibre_first < 0 ||
        fr->fibre_first > INT32_MAX - fr->nspec) {
        set_err(err, err_size, "%s: gw_desi_frame_write: nspec %d, nwave %d, ndiag %d, fibre_first %d: expected nspec, "
                "nwave >= 1, ndiag in 0..1000, fibre_first >= 0", path, fr->nspec, fr->nwave, fr->ndiag,
                fr->fibre_first);
        return -1;
    }
    const size_t ns = (size_t)fr->nspec, nw = (size_t)fr->nwave, nd = 2 * (size_t)fr->ndiag + 1;
    if (gw_fits_check_values(path, "wave", fr->wave, nw, nw, 0, err, err_size) != 0) return -1;
    for (size_t w = 1; w < nw; w++)
        if (!(fr->wave[w] > fr->wave[w - 1])) {
            set_err(err, err_size, "%s: wave[%zu] = %g <= wave[%zu] = %g: expected increasing wavelengths", path, w,
                    fr->wave[w], w - 1, fr->wave[w - 1]);
            return -1;
        }
    if (gw_fits_check_values(path, "flux", fr->flux, ns * nw, nw, 0, err, err_size) != 0 ||
        gw_fits_check_values(path, "ivar", fr->ivar, ns * nw, nw, 1, err, err_size) != 0 ||
        gw_fits_check_values(path, "rdiags", fr->rdiags, ns * nd * nw, nw, 0, err, err_size) != 0 ||
        (fr->chi2pix && gw_fits_check_values(path, "chi2pix", fr->chi2pix, ns * nw, nw, 0, err, err_size) != 0))
        return -1;
    return 0;
}

int gw_desi_frame_write(const char *path, const gw_desi_frame *fr, char *err, size_t err_size)
{
    if (!path) {
        set_err(err, err_size, "gw_desi_frame_write: no path given");
        return -1;
    }
    if (check_frame(path, fr, err, err_size) != 0) return -1;
    gw_fits_out out;
    if (gw_fits_begin_write(&out, path, err, err_size) != 0) return -1;
    int status = 0;
    char said[64];
    fitsfile *f = out.f;
    const LONGLONG img[2] = {fr->nwave, fr->nspec}, wav[1] = {fr->nwave},
                   res[3] = {fr->nwave, 2 * (LONGLONG)fr->ndiag + 1, fr->nspec};
    int nspec = fr->nspec, nwave = fr->nwave, ndiag = fr->ndiag, fmin = fr->fibre_first,
        fmax = fr->fibre_first + fr->nspec - 1;
    double wmin = fr->wave[0], wmax = fr->wave[fr->nwave - 1];
    gw_fits_put_image(f, "FLUX", DOUBLE_IMG, 2, img, TDOUBLE, fr->flux, &status);
    if (fr->bunit) fits_update_key(f, TSTRING, "BUNIT", (char *)fr->bunit, "flux unit", &status);
    fits_update_key(f, TINT, "NSPEC", &nspec, "Number of spectra", &status);
    fits_update_key(f, TINT, "NWAVE", &nwave, "Number of wavelengths", &status);
    fits_update_key(f, TINT, "FIBERMIN", &fmin, "global fibre of spectrum 0", &status);
    fits_update_key(f, TINT, "SPECMIN", &fmin, "first spectrum (= FIBERMIN)", &status);
    fits_update_key(f, TINT, "SPECMAX", &fmax, "last spectrum, inclusive", &status);
    fits_update_key(f, TDOUBLE, "WAVEMIN", &wmin, "First wavelength [Angstroms]", &status);
    fits_update_key(f, TDOUBLE, "WAVEMAX", &wmax, "Last wavelength [Angstroms]", &status);
    fits_update_key(f, TINT, "NDIAG", &ndiag, "RESOLUTION holds 2*NDIAG+1 diagonals", &status);
    if (fr->comment && status == 0) fits_write_comment(f, fr->comment, &status);
    gw_fits_put_image(f, "IVAR", DOUBLE_IMG, 2, img, TDOUBLE, fr->ivar, &status);
    gw_fits_put_image(f, "MASK", ULONG_IMG, 2, img, TUINT, fr->mask, &status); /* BZERO 2^31, as astropy's uint32 */
    gw_fits_put_image(f, "WAVELENGTH", DOUBLE_IMG, 1, wav, TDOUBLE, fr->wave, &status);
    fits_update_key(f, TSTRING, "BUNIT", "Angstrom", NULL, &status);
    gw_fits_put_image(f, "RESOLUTION", DOUBLE_IMG, 3, res, TDOUBLE, fr->rdiags, &status);
    fits_update_key(f, TINT, "NDIAG", &ndiag, "diagonals ndiag..-ndiag (scipy dia_matrix offsets)", &status);
    if (fr->chi2pix) gw_fits_put_image(f, "CHI2PIX", DOUBLE_IMG, 2, img, TDOUBLE, fr->chi2pix, &status);
    if (status) {
        set_err(err, err_size, "%s: cfitsio could not write the frame%s", path, gw_fits_said(status, said, sizeof said));
        gw_fits_abort_write(&out);
        return -1;
    }
    return gw_fits_commit_write(&out, path, err, err_size);
}
