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
    char said[64];
    if (gw_fits_move_named(in, path, name, IMAGE_HDU,
                           " (a preprocessed image has image HDUs IMAGE, IVAR and MASK)", err, err_size) != 0)
        return -1;
    naxes[0] = naxes[1] = 0;
    if (fits_get_img_dim(in->f, &naxis, &status) == 0 && naxis == 2) fits_get_img_sizell(in->f, 2, naxes, &status);
    if (status || naxis != 2) {
        set_err(err, err_size, "%s: HDU '%s': %d axes: expected 2 ([npix_y][npix_x])%s", path, name, naxis,
                gw_fits_said(status, said, sizeof said));
        return -1;
    }
    if (naxes[0] < 1 || naxes[1] < 1 || (unsigned long long)naxes[0] > GW_DESI_MAX_PIXELS / (unsigned long long)naxes[1]) {
        set_err(err, err_size, "%s: HDU '%s': %lld x %lld pixels: expected 1 to GW_DESI_MAX_PIXELS = %zu", path, name,
                (long long)naxes[1], (long long)naxes[0], GW_DESI_MAX_PIXELS);
        return -1;
    }
    return 0;
}

/* Reads the image HDU name into v[n] as doubles, with one cfitsio call for the whole HDU: cfitsio then
 * decompresses each tile once, whatever the tiling, where a read row by row decompresses every tile that a
 * row crosses, again for each row (a 4114 x 4128 MASK in one-column tiles took 76 s so, 0.4 s whole). Sets
 * masked[i] where pixel i of an integer HDU is undefined (FITS BLANK; ZBLANK or the tile's null value when
 * tile-compressed): cfitsio gives it as NaN, which no integer pixel can be. A float HDU is read as it is: its
 * NaN are values, checked by check_pixels. MASK must be an integer image. */
static int read_hdu(gw_fits_in *in, const char *path, const char *name, size_t n, double *v, unsigned char *masked,
                    char *err, size_t err_size)
{
    LONGLONG naxes[2];
    if (find_image(in, path, name, naxes, err, err_size) != 0) return -1;
    int status = 0, bitpix = 0, type = 0, anynul = 0;
    char said[64];
    if (fits_get_img_type(in->f, &bitpix, &status) || fits_get_img_equivtype(in->f, &type, &status)) {
        set_err(err, err_size, "%s: HDU '%s': unreadable BITPIX%s", path, name,
                gw_fits_said(status, said, sizeof said));
        return -1;
    }
    if (strcmp(name, "MASK") == 0 && (type == FLOAT_IMG || type == DOUBLE_IMG)) {
        set_err(err, err_size, "%s: HDU 'MASK': BITPIX %d: expected an integer image", path, type);
        return -1;
    }
    double undefined = NAN;
    if (fits_read_img(in->f, TDOUBLE, 1, (LONGLONG)n, bitpix > 0 ? &undefined : NULL, v, &anynul, &status)) {
        set_err(err, err_size, "%s: HDU '%s': unreadable data%s", path, name, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    if (bitpix > 0 && anynul)
        for (size_t i = 0; i < n; i++)
            if (isnan(v[i])) masked[i] = 1;
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

/* MASK, IVAR and IMAGE into img (shape checked), masked pixels' ivar set to 0. MASK goes first into the
 * image's buffer, which IMAGE then overwrites: 17 bytes a pixel at the peak (two doubles and a flag), not 25. */
static int read_pixels(gw_fits_in *in, const char *path, gw_desi_image *img, char *err, size_t err_size)
{
    const size_t n = (size_t)img->npix_x * (size_t)img->npix_y;
    img->image = malloc(n * sizeof *img->image);
    img->ivar = malloc(n * sizeof *img->ivar);
    unsigned char *masked = calloc(n, 1);
    int rc = -1;
    if (!img->image || !img->ivar || !masked) {
        set_err(err, err_size, "%s: out of memory for %d x %d pixels", path, img->npix_y, img->npix_x);
        goto done;
    }
    /* MASK as double: exact for every integer BITPIX up to 32 bits, and nonzero stays nonzero for 64 (cfitsio
     * has no TLONGLONG read of compressed images) */
    if (read_hdu(in, path, "MASK", n, img->image, masked, err, err_size) != 0) goto done;
    for (size_t i = 0; i < n; i++)
        if (img->image[i] != 0) masked[i] = 1;
    if (read_hdu(in, path, "IVAR", n, img->ivar, masked, err, err_size) != 0 ||
        read_hdu(in, path, "IMAGE", n, img->image, masked, err, err_size) != 0)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (masked[i]) {
            img->ivar[i] = 0;
            img->nmasked++;
        }
    rc = check_pixels(path, img, err, err_size);
done:
    free(masked);
    return rc;
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
    /* every shape before any pixel: a missing or misshapen HDU is said before a CCD is read */
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
        rc = read_pixels(&in, path, img, err, err_size);
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
