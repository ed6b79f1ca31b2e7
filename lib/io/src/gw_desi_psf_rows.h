/* SPDX-License-Identifier: MIT
 * Private to gw_desi_psf*.c: the state of one PSF read, and the table part of it (gw_desi_psf_rows.c): the
 * columns, the PARAM names, the coefficients.
 */
#ifndef GW_DESI_PSF_ROWS_H
#define GW_DESI_PSF_ROWS_H

#include <stddef.h>

#include "ex2d_psf.h"
#include "gw_desi_fits.h"

/* The parameters kept, as slots: X, Y, GHSIGX, GHSIGY, the 5 tail terms, then GH-i-j at 9 + i (gy + 1) + j. */
enum { PSF_SLOT_X = 0, PSF_SLOT_Y = 1, PSF_SLOT_SIGX = 2, PSF_SLOT_SIGY = 3, PSF_SLOT_TAIL = 4, PSF_SLOT_GH = 9,
       PSF_MAX_SLOTS = PSF_SLOT_GH + (EX2D_MAX_DEGREE + 1) * (EX2D_MAX_DEGREE + 1) };

typedef struct psf_ctx {
    const char *path;
    char *err;
    size_t err_size;
    gw_fits_in in;
    int ver;            /* PSFVER */
    char hdu[32];       /* the table HDU, as messages name it: "1" or "'PSF'" */
    int table_hdu;      /* its cfitsio number (1-based) */
    int psf_nfibre, fibre_min;
    double wmin, wmax;  /* PSFVER 3: the table's domain */
    int col_param, col_coeff, col_wmin, col_wmax;
    int param_width;    /* PARAM's characters */
    int ncoef;          /* COEFF per fibre */
    long long nrows;
    char **names;       /* [nrows], stripped */
    long long row_of[PSF_MAX_SLOTS]; /* 1-based table row of each slot, 0: not in the table */
    double *trace_data[2];           /* PSFVER 3: where XTRACE, YTRACE go inside the storage */
} psf_ctx;

/* The PARAM, COEFF (and PSFVER 2: WAVEMIN, WAVEMAX) columns and their shapes. */
int psf_read_columns(psf_ctx *c);
/* Every PARAM name: no duplicate, every needed parameter present (row_of filled). */
int psf_read_names(psf_ctx *c, const ex2d_psf *psf);
/* Allocates psf->storage for every slot (and the traces, whose ncoef psf->x/y hold), reads the table's
 * coefficients and domains into it, each checked. */
int psf_read_coefficients(psf_ctx *c, ex2d_psf *psf);
/* -1 with "<path>: HDU <hdu>: parameter <name>, fibre f (global g): coefficient k is nan" on the first
 * non-finite coefficient of prm. */
int psf_check_finite(psf_ctx *c, const char *hdu, const char *name, const ex2d_psf_param *prm);
void psf_ctx_free(psf_ctx *c);

#endif /* GW_DESI_PSF_ROWS_H */
