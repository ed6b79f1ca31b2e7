/* SPDX-License-Identifier: MIT
 * GAUSS-HERMITE PSFs, PSFVER 2 and 3 (gw_desi.h has the format and the rules). Order of work: the primary
 * header, the table HDU's keywords and columns, every PARAM name (duplicates, the needed ones), then the
 * sizes of everything to read, one allocation, and the coefficients straight into it, each checked finite.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_desi.h"
#include "gw_desi_fits.h"
#include "gw_desi_psf_rows.h"
#include "gw_io_err.h"

#define ERR(...) set_err(c->err, c->err_size, __VA_ARGS__)

/* The primary header: PSFTYPE and PSFVER. */
static int read_primary(psf_ctx *c)
{
    char v[FLEN_VALUE] = "";
    int status = 0;
    if (fits_read_key(c->in.f, TSTRING, "PSFTYPE", v, NULL, &status)) {
        fits_clear_errmsg();
        ERR("%s: HDU 0: keyword PSFTYPE missing (a GAUSS-HERMITE PSF says PSFTYPE = 'GAUSS-HERMITE')", c->path);
        return -1;
    }
    if (strcmp(v, "GAUSS-HERMITE") != 0) {
        ERR("%s: HDU 0: keyword PSFTYPE = '%s': expected 'GAUSS-HERMITE' (the only PSF type read here)", c->path, v);
        return -1;
    }
    /* PSFVER is a string in specex's files ('2'), a number in others: read as text, parsed here. */
    if (fits_read_key(c->in.f, TSTRING, "PSFVER", v, NULL, &status)) {
        fits_clear_errmsg();
        ERR("%s: HDU 0: keyword PSFVER missing (accepted: 2 and 3)", c->path);
        return -1;
    }
    char *end = NULL;
    const double ver = strtod(v, &end);
    while (end && *end == ' ') end++;
    if (end == v || !end || *end || (ver != 2 && ver != 3)) {
        ERR("%s: HDU 0: keyword PSFVER = '%s': accepted values are 2 and 3 (integer-valued, string or number)",
            c->path, v);
        return -1;
    }
    c->ver = (int)ver;
    return 0;
}

/* Moves to the table HDU and reads its keywords into psf. */
static int read_table_header(psf_ctx *c, ex2d_psf *psf)
{
    int status = 0, type = 0;
    if (c->ver == 2) {
        snprintf(c->hdu, sizeof c->hdu, "1");
        if (fits_movabs_hdu(c->in.f, 2, &type, &status) || type != BINARY_TBL) {
            char said[64];
            ERR("%s: HDU 1: %s (PSFVER 2 keeps the PSF table in HDU 1)%s", c->path,
                status ? "missing or unreadable" : "not a binary table", gw_fits_said(status, said, sizeof said));
            return -1;
        }
    } else {
        snprintf(c->hdu, sizeof c->hdu, "'PSF'");
        if (gw_fits_move_named(&c->in, c->path, "PSF", BINARY_TBL,
                               ": PSFVER 3 keeps the PSF table in a binary table named PSF", c->err, c->err_size) != 0)
            return -1;
    }
    fits_get_hdu_num(c->in.f, &c->table_hdu);
    char v[FLEN_VALUE] = "";
    if (fits_read_key(c->in.f, TSTRING, "PSFTYPE", v, NULL, &status) == 0 && strcmp(v, "GAUSS-HERMITE") != 0) {
        ERR("%s: HDU %s: keyword PSFTYPE = '%s': expected 'GAUSS-HERMITE'", c->path, c->hdu, v);
        return -1;
    }
    fits_clear_errmsg();
    int fmax = 0;
    const struct { const char *key; long lo, hi; const char *why; int *out; } keys[] = {
        {"FIBERMIN", 0, INT_MAX / 2, NULL, &psf->fibre_min},
        {"FIBERMAX", 0, INT_MAX / 2, NULL, &fmax},
        {"NPIX_X", 1, INT_MAX, " (CCD columns)", &psf->npix_x},
        {"NPIX_Y", 1, INT_MAX, " (CCD rows)", &psf->npix_y},
        {"HSIZEX", 0, EX2D_MAX_HALF_SIZE, " (EX2D_MAX_HALF_SIZE)", &psf->hsizex},
        {"HSIZEY", 0, EX2D_MAX_HALF_SIZE, " (EX2D_MAX_HALF_SIZE)", &psf->hsizey},
        {"GHDEGX", 0, EX2D_MAX_DEGREE, " (EX2D_MAX_DEGREE)", &psf->gx},
        {"GHDEGY", 0, EX2D_MAX_DEGREE, " (EX2D_MAX_DEGREE)", &psf->gy},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (gw_fits_key_int(c->in.f, c->path, c->hdu, keys[k].key, keys[k].lo, keys[k].hi, keys[k].why,
                            keys[k].out, c->err, c->err_size) != 0)
            return -1;
    if (fmax < psf->fibre_min) {
        ERR("%s: HDU %s: keywords FIBERMAX = %d < FIBERMIN = %d: expected FIBERMAX >= FIBERMIN", c->path, c->hdu,
            fmax, psf->fibre_min);
        return -1;
    }
    /* The CCD is the size of the image this PSF extracts from: refused here, before any work, if the image
     * reader would refuse that image. */
    if ((unsigned long long)psf->npix_x * (unsigned long long)psf->npix_y > GW_DESI_MAX_PIXELS) {
        ERR("%s: HDU %s: keywords NPIX_X x NPIX_Y = %d x %d = %llu pixels: more than GW_DESI_MAX_PIXELS = %zu, the "
            "largest image read (an image extracted with this PSF must be its CCD's size)", c->path, c->hdu,
            psf->npix_x, psf->npix_y, (unsigned long long)psf->npix_x * (unsigned long long)psf->npix_y,
            GW_DESI_MAX_PIXELS);
        return -1;
    }
    psf->nfibre = fmax - psf->fibre_min + 1;
    psf->psfver = c->ver;
    if (c->ver == 3) {
        if (gw_fits_key_double(c->in.f, c->path, c->hdu, "WAVEMIN", &c->wmin, c->err, c->err_size) != 0 ||
            gw_fits_key_double(c->in.f, c->path, c->hdu, "WAVEMAX", &c->wmax, c->err, c->err_size) != 0)
            return -1;
        if (!(c->wmin < c->wmax)) {
            ERR("%s: HDU %s: keywords WAVEMIN = %.17g >= WAVEMAX = %.17g: expected WAVEMIN < WAVEMAX", c->path, c->hdu,
                c->wmin, c->wmax);
            return -1;
        }
    }
    return 0;
}

/* A trace image HDU of PSFVER 3 ('XTRACE' or 'YTRACE'): its shape, domain, and (data != NULL) values. */
static int read_trace(psf_ctx *c, const char *name, ex2d_psf_param *prm, double *data)
{
    int status = 0, naxis = 0;
    char hdu[32], said[64];
    snprintf(hdu, sizeof hdu, "'%s'", name);
    char missing[64];
    snprintf(missing, sizeof missing, ": PSFVER 3 keeps the trace in an image named %s", name);
    if (gw_fits_move_named(&c->in, c->path, name, IMAGE_HDU, missing, c->err, c->err_size) != 0) return -1;
    LONGLONG naxes[2] = {0, 0};
    fits_get_img_dim(c->in.f, &naxis, &status);
    if (status == 0 && naxis == 2) fits_get_img_sizell(c->in.f, 2, naxes, &status);
    if (status || naxis != 2 || naxes[1] != c->psf_nfibre || naxes[0] < 1 || naxes[0] > EX2D_PSF_MAX_LEGENDRE) {
        ERR("%s: HDU %s: shape of rank %d [%lld][%lld]: expected [nfibre = %d][ncoef in 1..%d]%s", c->path, hdu, naxis,
            (long long)naxes[1], (long long)naxes[0], c->psf_nfibre, EX2D_PSF_MAX_LEGENDRE,
            gw_fits_said(status, said, sizeof said));
        return -1;
    }
    prm->ncoef = (int)naxes[0];
    if (gw_fits_key_double(c->in.f, c->path, hdu, "WAVEMIN", &prm->wavemin, c->err, c->err_size) != 0 ||
        gw_fits_key_double(c->in.f, c->path, hdu, "WAVEMAX", &prm->wavemax, c->err, c->err_size) != 0)
        return -1;
    if (!(prm->wavemin < prm->wavemax)) {
        ERR("%s: HDU %s: keywords WAVEMIN = %.17g >= WAVEMAX = %.17g: expected WAVEMIN < WAVEMAX", c->path, hdu,
            prm->wavemin, prm->wavemax);
        return -1;
    }
    if (!data) return 0;
    const LONGLONG n = naxes[0] * naxes[1];
    if (fits_read_img(c->in.f, TDOUBLE, 1, n, NULL, data, NULL, &status)) {
        ERR("%s: HDU %s: unreadable data%s", c->path, hdu, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    prm->coeff = data;
    return psf_check_finite(c, hdu, name[0] == 'X' ? "X" : "Y", prm);
}

int gw_desi_psf_read(const char *path, ex2d_psf *psf, char *err, size_t err_size)
{
    if (!path) {
        set_err(err, err_size, "gw_desi_psf_read: no path given");
        if (psf) memset(psf, 0, sizeof *psf);
        return -1;
    }
    if (!psf) {
        set_err(err, err_size, "%s: gw_desi_psf_read: the PSF psf is NULL", path);
        return -1;
    }
    memset(psf, 0, sizeof *psf);
    psf_ctx c = {.path = path, .err = err, .err_size = err_size};
    if (gw_fits_open_read(path, &c.in, err, err_size) != 0) return -1;
    int rc = read_primary(&c);
    if (rc == 0) rc = read_table_header(&c, psf);
    if (rc == 0) {
        c.psf_nfibre = psf->nfibre;
        c.fibre_min = psf->fibre_min;
    }
    if (rc == 0) rc = psf_read_columns(&c);
    if (rc == 0) rc = psf_read_names(&c, psf);
    if (rc == 0 && c.ver == 3) rc = read_trace(&c, "XTRACE", &psf->x, NULL);
    if (rc == 0 && c.ver == 3) rc = read_trace(&c, "YTRACE", &psf->y, NULL);
    if (rc == 0) rc = psf_read_coefficients(&c, psf);
    if (rc == 0 && c.ver == 3) rc = read_trace(&c, "XTRACE", &psf->x, c.trace_data[0]);
    if (rc == 0 && c.ver == 3) rc = read_trace(&c, "YTRACE", &psf->y, c.trace_data[1]);
    psf_ctx_free(&c);
    gw_fits_close_read(&c.in);
    if (rc != 0) {
        free(psf->storage);
        memset(psf, 0, sizeof *psf);
    }
    return rc;
}
