/* SPDX-License-Identifier: MIT
 * The PSF table of a GAUSS-HERMITE PSF (gw_desi_psf_rows.h): columns, PARAM names, coefficients.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_desi_psf_rows.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_io_err.h"

#define ERR(...) set_err(c->err, c->err_size, __VA_ARGS__)

/* A PSF table holds one row per parameter (91 in a specex file): more is not a PSF, and a header that claims
 * millions of zero-width rows must not size an allocation. */
#define PSF_MAX_ROWS 10000
#define PSF_MAX_PARAM_WIDTH 1024

static const char *const tail_names[EX2D_TAIL_TERMS] = {"TAILAMP", "TAILCORE", "TAILXSCA", "TAILYSCA", "TAILINDE"};

static int find_col(psf_ctx *c, const char *name, int *col, int *type, long long *repeat)
{
    int status = 0;
    LONGLONG rep = 0, width = 0;
    char said[64];
    if (fits_get_colnum(c->in.f, CASEINSEN, (char *)name, col, &status)) {
        if (status == COL_NOT_UNIQUE) ERR("%s: HDU %s: column %s appears twice", c->path, c->hdu, name);
        else ERR("%s: HDU %s: column %s missing", c->path, c->hdu, name);
        fits_clear_errmsg();
        return -1;
    }
    if (fits_get_coltypell(c->in.f, *col, type, &rep, &width, &status)) {
        ERR("%s: HDU %s: column %s: unreadable type%s", c->path, c->hdu, name, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    *repeat = rep;
    if (*type < 0) {
        ERR("%s: HDU %s: column %s: a variable-length array: expected fixed-size cells", c->path, c->hdu, name);
        return -1;
    }
    return 0;
}

static int is_numeric(int type)
{
    return type != TSTRING && type != TLOGICAL && type != TBIT && type != TCOMPLEX && type != TDBLCOMPLEX;
}

int psf_read_columns(psf_ctx *c)
{
    int type = 0, status = 0;
    long long repeat = 0;
    char said[64];
    LONGLONG nrows = 0;
    if (fits_get_num_rowsll(c->in.f, &nrows, &status) || nrows < 1 || nrows > PSF_MAX_ROWS) {
        ERR("%s: HDU %s: %lld rows: expected 1..%d (one per parameter)%s", c->path, c->hdu, (long long)nrows,
            PSF_MAX_ROWS, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    c->nrows = nrows;
    if (find_col(c, "PARAM", &c->col_param, &type, &repeat) != 0) return -1;
    if (type != TSTRING || repeat < 1 || repeat > PSF_MAX_PARAM_WIDTH) {
        ERR("%s: HDU %s: column PARAM: expected a string column of 1..%d characters", c->path, c->hdu,
            PSF_MAX_PARAM_WIDTH);
        return -1;
    }
    c->param_width = (int)repeat;
    if (find_col(c, "COEFF", &c->col_coeff, &type, &repeat) != 0) return -1;
    if (!is_numeric(type)) {
        ERR("%s: HDU %s: column COEFF: not numeric (type code %d)", c->path, c->hdu, type);
        return -1;
    }
    int naxis = 0;
    LONGLONG naxes[2] = {0, 0};
    if (fits_read_tdimll(c->in.f, c->col_coeff, 2, &naxis, naxes, &status)) {
        ERR("%s: HDU %s: column COEFF: bad TDIM%s", c->path, c->hdu, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    const long long nf = c->psf_nfibre;
    long long ncoef = -1;
    if (naxis == 2 && naxes[1] == nf) ncoef = naxes[0];
    else if (naxis == 1 && repeat % nf == 0) ncoef = repeat / nf;
    if (ncoef < 1 || ncoef > EX2D_PSF_MAX_LEGENDRE) {
        ERR("%s: HDU %s: column COEFF: each row holds %lld values (TDIM of rank %d: %lld x %lld), expected "
            "nfibre*ncoef with TDIM (ncoef, nfibre), nfibre = %lld (FIBERMAX - FIBERMIN + 1), ncoef in 1..%d",
            c->path, c->hdu, repeat, naxis, (long long)naxes[0], naxis > 1 ? (long long)naxes[1] : 1LL, nf,
            EX2D_PSF_MAX_LEGENDRE);
        return -1;
    }
    c->ncoef = (int)ncoef;
    if (c->ver == 2) {
        if (find_col(c, "WAVEMIN", &c->col_wmin, &type, &repeat) != 0) return -1;
        if (!is_numeric(type) || repeat != 1) {
            ERR("%s: HDU %s: column WAVEMIN: expected one number per row", c->path, c->hdu);
            return -1;
        }
        if (find_col(c, "WAVEMAX", &c->col_wmax, &type, &repeat) != 0) return -1;
        if (!is_numeric(type) || repeat != 1) {
            ERR("%s: HDU %s: column WAVEMAX: expected one number per row", c->path, c->hdu);
            return -1;
        }
    }
    return 0;
}

/* The slot of a PARAM name, or -1 for a parameter not kept. */
static int slot_of(const char *name, int ver, int gx, int gy)
{
    if (strcmp(name, "X") == 0) return ver == 2 ? PSF_SLOT_X : -1; /* PSFVER 3: XTRACE is the trace */
    if (strcmp(name, "Y") == 0) return ver == 2 ? PSF_SLOT_Y : -1;
    if (strcmp(name, "GHSIGX") == 0) return PSF_SLOT_SIGX;
    if (strcmp(name, "GHSIGY") == 0) return PSF_SLOT_SIGY;
    for (int k = 0; k < EX2D_TAIL_TERMS; k++)
        if (strcmp(name, tail_names[k]) == 0) return PSF_SLOT_TAIL + k;
    if (strncmp(name, "GH-", 3) != 0) return -1;
    const char *p = name + 3;
    int i = 0, j = 0, n = 0;
    while (isdigit((unsigned char)*p) && n < 3) i = 10 * i + (*p++ - '0'), n++;
    if (n == 0 || n == 3 || *p++ != '-') return -1;
    n = 0;
    while (isdigit((unsigned char)*p) && n < 3) j = 10 * j + (*p++ - '0'), n++;
    if (n == 0 || n == 3 || *p) return -1;
    if (i > gx || j > gy) return -1; /* beyond the degrees: unused, as in specter */
    return PSF_SLOT_GH + i * (gy + 1) + j;
}

static void slot_name(int slot, int gy, char *buf, size_t size)
{
    if (slot == PSF_SLOT_X) snprintf(buf, size, "X");
    else if (slot == PSF_SLOT_Y) snprintf(buf, size, "Y");
    else if (slot == PSF_SLOT_SIGX) snprintf(buf, size, "GHSIGX");
    else if (slot == PSF_SLOT_SIGY) snprintf(buf, size, "GHSIGY");
    else if (slot < PSF_SLOT_GH) snprintf(buf, size, "%s", tail_names[slot - PSF_SLOT_TAIL]);
    else snprintf(buf, size, "GH-%d-%d", (slot - PSF_SLOT_GH) / (gy + 1), (slot - PSF_SLOT_GH) % (gy + 1));
}

typedef struct named_row {
    const char *name;
    long long row; /* 0-based */
} named_row;

static int by_name(const void *a, const void *b)
{
    const named_row *x = a, *y = b;
    const int d = strcmp(x->name, y->name);
    return d ? d : (x->row > y->row) - (x->row < y->row);
}

static char *strip(char *s)
{
    while (*s == ' ') s++;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ') s[--n] = '\0';
    return s;
}

int psf_read_names(psf_ctx *c, const ex2d_psf *psf)
{
    const size_t n = (size_t)c->nrows, w = (size_t)c->param_width + 1;
    c->names = malloc(n * sizeof *c->names + n * w);
    named_row *order = malloc(n * sizeof *order);
    int status = 0, anynul = 0, rc = -1;
    char said[64];
    if (!c->names || !order) {
        ERR("%s: out of memory", c->path);
        goto done;
    }
    char *text = (char *)(c->names + n);
    for (size_t r = 0; r < n; r++) c->names[r] = text + r * w;
    if (fits_read_col_str(c->in.f, c->col_param, 1, 1, (LONGLONG)n, "", c->names, &anynul, &status)) {
        ERR("%s: HDU %s: column PARAM: unreadable%s", c->path, c->hdu, gw_fits_said(status, said, sizeof said));
        goto done;
    }
    for (size_t r = 0; r < n; r++) {
        c->names[r] = strip(c->names[r]);
        order[r] = (named_row){c->names[r], (long long)r};
    }
    qsort(order, n, sizeof *order, by_name);
    for (size_t r = 1; r < n; r++)
        if (strcmp(order[r - 1].name, order[r].name) == 0) {
            ERR("%s: HDU %s: duplicate PARAM '%s' (rows %lld and %lld)", c->path, c->hdu, order[r].name,
                order[r - 1].row + 1, order[r].row + 1);
            goto done;
        }
    memset(c->row_of, 0, sizeof c->row_of);
    for (size_t r = 0; r < n; r++) {
        const int s = slot_of(c->names[r], c->ver, psf->gx, psf->gy);
        if (s >= 0) c->row_of[s] = (long long)r + 1;
    }
    const int nslots = PSF_SLOT_GH + (psf->gx + 1) * (psf->gy + 1);
    for (int s = c->ver == 2 ? 0 : PSF_SLOT_SIGX; s < nslots; s++) {
        if (c->row_of[s]) continue;
        char name[32];
        slot_name(s, psf->gy, name, sizeof name);
        if (s >= PSF_SLOT_GH)
            ERR("%s: HDU %s: parameter %s missing (GHDEGX = %d, GHDEGY = %d need GH-i-j for i in 0..%d, j in 0..%d)",
                c->path, c->hdu, name, psf->gx, psf->gy, psf->gx, psf->gy);
        else
            ERR("%s: HDU %s: parameter %s missing (a GAUSS-HERMITE PSF needs X, Y, GHSIGX, GHSIGY, GH-i-j, TAILAMP, "
                "TAILCORE, TAILXSCA, TAILYSCA, TAILINDE)", c->path, c->hdu, name);
        goto done;
    }
    rc = 0;
done:
    free(order);
    return rc;
}

static ex2d_psf_param *slot_param(ex2d_psf *psf, int slot)
{
    switch (slot) {
    case PSF_SLOT_X: return &psf->x;
    case PSF_SLOT_Y: return &psf->y;
    case PSF_SLOT_SIGX: return &psf->sigx;
    case PSF_SLOT_SIGY: return &psf->sigy;
    default: break;
    }
    if (slot < PSF_SLOT_GH) return &psf->tail[slot - PSF_SLOT_TAIL];
    return &psf->gh[(slot - PSF_SLOT_GH) / (psf->gy + 1)][(slot - PSF_SLOT_GH) % (psf->gy + 1)];
}

int psf_check_finite(psf_ctx *c, const char *hdu, const char *name, const ex2d_psf_param *prm)
{
    for (int f = 0; f < c->psf_nfibre; f++)
        for (int k = 0; k < prm->ncoef; k++) {
            const double v = prm->coeff[(size_t)f * (size_t)prm->ncoef + (size_t)k];
            if (isfinite(v)) continue;
            ERR("%s: HDU %s: parameter %s, fibre %d (global %d): coefficient %d is %g: expected finite", c->path, hdu,
                name, f, c->fibre_min + f, k, v);
            return -1;
        }
    return 0;
}

/* PSFVER 2: the row's WAVEMIN and WAVEMAX columns; 3: the table header's. */
static int read_domain(psf_ctx *c, long long row, const char *name, ex2d_psf_param *prm)
{
    prm->wavemin = c->wmin;
    prm->wavemax = c->wmax;
    if (c->ver != 2) return 0;
    int status = 0;
    char said[64];
    fits_read_col(c->in.f, TDOUBLE, c->col_wmin, row, 1, 1, NULL, &prm->wavemin, NULL, &status);
    fits_read_col(c->in.f, TDOUBLE, c->col_wmax, row, 1, 1, NULL, &prm->wavemax, NULL, &status);
    if (status) {
        ERR("%s: HDU %s: parameter %s: WAVEMIN, WAVEMAX unreadable%s", c->path, c->hdu, name,
            gw_fits_said(status, said, sizeof said));
        return -1;
    }
    if (!isfinite(prm->wavemin) || !isfinite(prm->wavemax) || !(prm->wavemin < prm->wavemax)) {
        ERR("%s: HDU %s: parameter %s (row %lld): WAVEMIN = %.17g, WAVEMAX = %.17g: expected finite, WAVEMIN < "
            "WAVEMAX", c->path, c->hdu, name, row, prm->wavemin, prm->wavemax);
        return -1;
    }
    return 0;
}

int psf_read_coefficients(psf_ctx *c, ex2d_psf *psf)
{
    const int nslots = PSF_SLOT_GH + (psf->gx + 1) * (psf->gy + 1);
    const size_t per = (size_t)c->psf_nfibre * (size_t)c->ncoef;
    const int first = c->ver == 2 ? 0 : PSF_SLOT_SIGX;
    size_t total = (size_t)(nslots - first) * per;
    if (c->ver == 3) total += (size_t)c->psf_nfibre * (size_t)(psf->x.ncoef + psf->y.ncoef);
    psf->storage = malloc(total * sizeof *psf->storage);
    if (!psf->storage) {
        ERR("%s: out of memory for %zu coefficients", c->path, total);
        return -1;
    }
    int status = 0;
    char said[64];
    if (fits_movabs_hdu(c->in.f, c->table_hdu, NULL, &status)) {
        ERR("%s: HDU %s: unreadable%s", c->path, c->hdu, gw_fits_said(status, said, sizeof said));
        return -1;
    }
    double *next = psf->storage;
    for (int s = first; s < nslots; s++, next += per) {
        ex2d_psf_param *prm = slot_param(psf, s);
        const long long row = c->row_of[s];
        const char *name = c->names[row - 1];
        prm->ncoef = c->ncoef;
        prm->coeff = next;
        if (fits_read_col(c->in.f, TDOUBLE, c->col_coeff, row, 1, (LONGLONG)per, NULL, next, NULL, &status)) {
            ERR("%s: HDU %s: column COEFF: row '%s' unreadable%s", c->path, c->hdu, name,
                gw_fits_said(status, said, sizeof said));
            return -1;
        }
        if (read_domain(c, row, name, prm) != 0 || psf_check_finite(c, c->hdu, name, prm) != 0) return -1;
    }
    if (c->ver == 3) {
        c->trace_data[0] = next;
        c->trace_data[1] = next + (size_t)c->psf_nfibre * (size_t)psf->x.ncoef;
    }
    return 0;
}

void psf_ctx_free(psf_ctx *c)
{
    free(c->names);
    c->names = NULL;
}
