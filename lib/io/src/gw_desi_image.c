/* SPDX-License-Identifier: MIT
 * DESI preprocessed CCD images (gw_desi.h): read IMAGE, IVAR, MASK; write them tile-compressed (lossless),
 * with an optional TRUTH HDU.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_desi.h"
#include "gw_desi_fits.h"
#include "gw_io_err.h"

/* Moves to the image HDU named name, and checks that it is 2-D and not too large. */
static int find_image(gw_fits_in *in, const char *path, const char *name, LONGLONG naxes[2], char *err,
                      size_t err_size)
{
    int status = 0, naxis = 0;
    char hdu[32], said[64];
    snprintf(hdu, sizeof hdu, "'%s'", name);
    if (fits_movnam_hdu(in->f, IMAGE_HDU, (char *)name, 0, &status)) {
        set_err(err, err_size, "%s: HDU '%s' missing (a preprocessed image has image HDUs IMAGE, IVAR and MASK)%s",
                path, name, gw_fits_said(status == BAD_HDU_NUM ? 0 : status, said, sizeof said));
        return -1;
    }
    if (gw_fits_check_extent(in, path, hdu, err, err_size) != 0) return -1;
    naxes[0] = naxes[1] = 0;
    if (fits_get_img_dim(in->f, &naxis, &status) == 0 && naxis == 2) fits_get_img_sizell(in->f, 2, naxes, &status);
    if (status || naxis != 2) {
        set_err(err, err_size, "%s: HDU %s: %d axes: expected 2 ([npix_y][npix_x])%s", path, hdu, naxis,
                gw_fits_said(status, said, sizeof said));
        return -1;
    }
    if (naxes[0] < 1 || naxes[1] < 1 || (unsigned long long)naxes[0] > GW_DESI_MAX_PIXELS / (unsigned long long)naxes[1]) {
        set_err(err, err_size, "%s: HDU %s: %lld x %lld pixels: expected 1 to GW_DESI_MAX_PIXELS = %zu", path, hdu,
                (long long)naxes[1], (long long)naxes[0], GW_DESI_MAX_PIXELS);
        return -1;
    }
    return 0;
}

/* Reads the current (checked) image HDU as doubles and checks every value. */
static int read_values(gw_fits_in *in, const char *path, const char *name, size_t n, double **out,
                       char *err, size_t err_size)
{
    int status = 0;
    char said[64];
    double *v = malloc(n * sizeof *v);
    if (!v) {
        set_err(err, err_size, "%s: out of memory for HDU '%s' (%zu pixels)", path, name, n);
        return -1;
    }
    *out = v;
    if (fits_read_img(in->f, TDOUBLE, 1, (LONGLONG)n, NULL, v, NULL, &status)) {
        set_err(err, err_size, "%s: HDU '%s': unreadable data%s", path, name, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    return 0;
}

/* After the mask: a pixel of ivar 0 carries no weight, so a value there that is not finite (a dead or
 * saturated pixel some pipelines store as NaN) is read as 0. Elsewhere IMAGE must be finite and IVAR finite
 * and >= 0. */
static int check_pixels(const char *path, gw_desi_image *img, char *err, size_t err_size)
{
    const size_t nx = (size_t)img->npix_x, n = nx * (size_t)img->npix_y;
    for (size_t i = 0; i < n; i++) {
        const double iv = img->ivar[i];
        if (!(isfinite(iv) && iv >= 0)) {
            set_err(err, err_size, "%s: HDU 'IVAR': pixel (row %zu, column %zu) is %g: ivar must be finite and >= 0 "
                    "where MASK is 0", path, i / nx, i % nx, iv);
            return -1;
        }
        if (isfinite(img->image[i])) continue;
        if (iv == 0) {
            img->image[i] = 0;
            continue;
        }
        set_err(err, err_size, "%s: HDU 'IMAGE': pixel (row %zu, column %zu) is %g: expected finite where ivar > 0",
                path, i / nx, i % nx, img->image[i]);
        return -1;
    }
    return 0;
}

/* MASK (the current HDU) row by row: a nonzero pixel zeroes ivar. */
static int apply_mask(gw_fits_in *in, const char *path, gw_desi_image *img, char *err, size_t err_size)
{
    int status = 0, type = 0;
    char said[64];
    fits_get_img_equivtype(in->f, &type, &status);
    if (status || type == FLOAT_IMG || type == DOUBLE_IMG) {
        set_err(err, err_size, "%s: HDU 'MASK': BITPIX %d: expected an integer image%s", path, type,
                gw_fits_said(status, said, sizeof said));
        return -1;
    }
    const size_t nx = (size_t)img->npix_x;
    /* read as double: exact for every integer BITPIX up to 32 bits, and nonzero stays nonzero for 64 (cfitsio
     * has no TLONGLONG read of compressed images) */
    double *row = malloc(nx * sizeof *row);
    if (!row) {
        set_err(err, err_size, "%s: out of memory", path);
        return -1;
    }
    for (size_t y = 0; y < (size_t)img->npix_y && status == 0; y++) {
        if (fits_read_img(in->f, TDOUBLE, (LONGLONG)(y * nx + 1), (LONGLONG)nx, NULL, row, NULL, &status)) break;
        for (size_t x = 0; x < nx; x++)
            if (row[x] != 0) {
                img->ivar[y * nx + x] = 0;
                img->nmasked++;
            }
    }
    free(row);
    if (status) {
        set_err(err, err_size, "%s: HDU 'MASK': unreadable data%s", path, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    return 0;
}

int gw_desi_image_read(const char *path, gw_desi_image *img, char *err, size_t err_size)
{
    if (img) memset(img, 0, sizeof *img);
    if (!path || !img) {
        if (path) set_err(err, err_size, "%s: gw_desi_image_read: the image img is NULL", path);
        else set_err(err, err_size, "gw_desi_image_read: no path given");
        return -1;
    }
    gw_fits_in in;
    if (gw_fits_open_read(path, &in, err, err_size) != 0) return -1;
    static const char *const names[3] = {"IMAGE", "IVAR", "MASK"};
    LONGLONG shape[3][2];
    int rc = 0;
    for (int h = 0; h < 3 && rc == 0; h++) {
        rc = find_image(&in, path, names[h], shape[h], err, err_size);
        if (rc == 0 && h > 0 && (shape[h][0] != shape[0][0] || shape[h][1] != shape[0][1])) {
            set_err(err, err_size, "%s: HDU '%s': shape [%lld][%lld], HDU 'IMAGE' [%lld][%lld]: expected the same shape",
                    path, names[h], (long long)shape[h][1], (long long)shape[h][0], (long long)shape[0][1],
                    (long long)shape[0][0]);
            rc = -1;
        }
    }
    if (rc == 0) {
        img->npix_x = (int)shape[0][0];
        img->npix_y = (int)shape[0][1];
        const size_t n = (size_t)img->npix_x * (size_t)img->npix_y;
        double **dst[2] = {&img->image, &img->ivar};
        for (int h = 0; h < 2 && rc == 0; h++) {
            rc = find_image(&in, path, names[h], shape[h], err, err_size);
            if (rc == 0) rc = read_values(&in, path, names[h], n, dst[h], err, err_size);
        }
        if (rc == 0) rc = find_image(&in, path, "MASK", shape[2], err, err_size);
        if (rc == 0) rc = apply_mask(&in, path, img, err, err_size);
        if (rc == 0) rc = check_pixels(path, img, err, err_size);
    }
    gw_fits_close_read(&in);
    if (rc != 0) gw_desi_image_free(img);
    return rc;
}

void gw_desi_image_free(gw_desi_image *img)
{
    if (!img) return;
    free(img->image);
    free(img->ivar);
    memset(img, 0, sizeof *img);
}

static int check_image_out(const char *path, const gw_desi_image_out *im, char *err, size_t err_size)
{
    if (!im || !im->image || !im->ivar) {
        set_err(err, err_size, "%s: gw_desi_image_write: %s is NULL", path, !im ? "im" : !im->image ? "im->image" : "im->ivar");
        return -1;
    }
    if (im->npix_x < 1 || im->npix_y < 1 ||
        (size_t)im->npix_x > GW_DESI_MAX_PIXELS / (size_t)im->npix_y) {
        set_err(err, err_size, "%s: gw_desi_image_write: %d x %d pixels: expected 1 to GW_DESI_MAX_PIXELS = %zu", path,
                im->npix_y, im->npix_x, GW_DESI_MAX_PIXELS);
        return -1;
    }
    const size_t n = (size_t)im->npix_x * (size_t)im->npix_y;
    if (gw_fits_check_values(path, "image", im->image, n, (size_t)im->npix_x, 0, err, err_size) != 0 ||
        gw_fits_check_values(path, "ivar", im->ivar, n, (size_t)im->npix_x, 1, err, err_size) != 0)
        return -1;
    if (!im->truth) return 0;
    if (im->truth_nspec < 1 || im->truth_nwave < 1 || im->truth_fibre_first < 0 || !isfinite(im->truth_wave0) ||
        !(isfinite(im->truth_dwave) && im->truth_dwave > 0)) {
        set_err(err, err_size, "%s: gw_desi_image_write: truth of %d x %d from fibre %d, wave0 %g, dwave %g: expected "
                "sizes >= 1, fibre >= 0, finite wave0, dwave > 0", path, im->truth_nspec, im->truth_nwave,
                im->truth_fibre_first, im->truth_wave0, im->truth_dwave);
        return -1;
    }
    return gw_fits_check_values(path, "truth", im->truth, (size_t)im->truth_nspec * (size_t)im->truth_nwave,
                        (size_t)im->truth_nwave, 0, err, err_size);
}

int gw_desi_image_write(const char *path, const gw_desi_image_out *im, char *err, size_t err_size)
{
    if (!path) {
        set_err(err, err_size, "gw_desi_image_write: no path given");
        return -1;
    }
    if (check_image_out(path, im, err, err_size) != 0) return -1;
    gw_fits_out out;
    if (gw_fits_begin_write(&out, path, err, err_size) != 0) return -1;
    int status = 0;
    char said[64];
    const LONGLONG naxes[2] = {im->npix_x, im->npix_y};
    gw_fits_put_image(out.f, NULL, BYTE_IMG, 0, NULL, TBYTE, NULL, &status); /* the empty primary */
    if (im->comment && status == 0) fits_write_comment(out.f, im->comment, &status);
    /* GZIP_2 without quantization: the float64 bytes, shuffled, deflated; nothing rounded. */
    if (status == 0) fits_set_compression_type(out.f, GZIP_2, &status);
    if (status == 0) fits_set_quantize_level(out.f, 0.0f, &status);
    gw_fits_put_image(out.f, "IMAGE", DOUBLE_IMG, 2, naxes, TDOUBLE, im->image, &status);
    gw_fits_put_image(out.f, "IVAR", DOUBLE_IMG, 2, naxes, TDOUBLE, im->ivar, &status);
    if (status == 0) fits_set_compression_type(out.f, RICE_1, &status);
    gw_fits_put_image(out.f, "MASK", LONG_IMG, 2, naxes, TINT, im->mask, &status);
    if (im->truth && status == 0) {
        /* 0, not NOCOMPRESS (-1): cfitsio compresses whenever the requested type is nonzero */
        fits_set_compression_type(out.f, 0, &status);
        const LONGLONG tax[2] = {im->truth_nwave, im->truth_nspec};
        gw_fits_put_image(out.f, "TRUTH", DOUBLE_IMG, 2, tax, TDOUBLE, im->truth, &status);
        int fibre = im->truth_fibre_first, nspec = im->truth_nspec, nwave = im->truth_nwave;
        double wave0 = im->truth_wave0, dwave = im->truth_dwave, crpix = 1;
        fits_update_key(out.f, TINT, "FIBERMIN", &fibre, "global fibre of row 0", &status);
        fits_update_key(out.f, TINT, "NSPEC", &nspec, "spectra (rows)", &status);
        fits_update_key(out.f, TINT, "NWAVE", &nwave, "wavelengths (columns)", &status);
        fits_update_key(out.f, TDOUBLE, "CRVAL1", &wave0, "[Angstrom] wavelength of column 0", &status);
        fits_update_key(out.f, TDOUBLE, "CDELT1", &dwave, "[Angstrom] wavelength step", &status);
        fits_update_key(out.f, TDOUBLE, "CRPIX1", &crpix, "column 0 is pixel 1 (FITS)", &status);
        fits_update_key(out.f, TSTRING, "CTYPE1", "WAVE", NULL, &status);
        fits_update_key(out.f, TSTRING, "CUNIT1", "Angstrom", NULL, &status);
    }
    if (status) {
        set_err(err, err_size, "%s: cfitsio could not write the image%s", path, gw_fits_said(status, said, sizeof said));
        gw_fits_abort_write(&out);
        return -1;
    }
    return gw_fits_commit_write(&out, path, err, err_size);
}
