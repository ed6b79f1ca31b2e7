/* SPDX-License-Identifier: MIT
 * ex2d_psf: a DESI GAUSS-HERMITE PSF (specex's model, as desihub/specter evaluates it) held in memory, and its
 * evaluation into the PSF table that ex2d_patch's kernels take (docs/ex2d_patch.md, "Real DESI PSFs"). Plain
 * C11, no CUDA, no FITS: lib/io's gw_desi.h reads the file formats (PSFVER 2 and 3) into this struct.
 *
 * The model. Every parameter p of fibre f (0-based inside the file: global fibre fibre_min + f) at
 * wavelength w (Angstrom) is a Legendre series sum_k coeff[f][k] P_k(u), u = (w - wavemin) * (2 / (wavemax -
 * wavemin)) - 1 over that parameter's own domain. X, Y: the CCD column and row of the spot centre ((0, 0) is
 * the centre of the first pixel). The spot of (f, w): the pixel-integrated Gauss-Hermite core
 * sum_ij GH-i-j Px_i Py_j (i along columns, sigmas GHSIGX, GHSIGY), plus the tail
 * TAILAMP r2 / (TAILCORE^2 + r2)^(1 + TAILINDE/2), r2 = (dx TAILXSCA)^2 + (dy TAILYSCA)^2 at pixel centres,
 * clipped at 0 and normalised to 1, over columns int(X - HSIZEX + 0.5) .. that + 2 HSIZEX (C truncation),
 * rows likewise.
 */
#ifndef EX2D_PSF_H
#define EX2D_PSF_H

#include <stddef.h>
#include <stdint.h>

#include "ex2d_patch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EX2D_PSF_MAX_LEGENDRE 64 /* Legendre coefficients per parameter (DESI files use 6..9) */

/* One parameter: a Legendre series in wavelength per fibre. */
typedef struct ex2d_psf_param {
    double wavemin, wavemax; /* the series' domain, wavemin < wavemax */
    int ncoef;               /* 1..EX2D_PSF_MAX_LEGENDRE */
    const double *coeff;     /* [nfibre][ncoef], inside the PSF's storage */
} ex2d_psf_param;

typedef struct ex2d_psf {
    int psfver;              /* 2 or 3 (PSFVER) */
    int fibre_min, nfibre;   /* FIBERMIN, FIBERMAX - FIBERMIN + 1 */
    int npix_x, npix_y;      /* NPIX_X, NPIX_Y: CCD columns, rows */
    int hsizex, hsizey;      /* HSIZEX, HSIZEY: spots of (2 HSIZEY + 1) x (2 HSIZEX + 1) pixels */
    int gx, gy;              /* GHDEGX, GHDEGY */
    ex2d_psf_param x, y, sigx, sigy;
    ex2d_psf_param gh[EX2D_MAX_DEGREE + 1][EX2D_MAX_DEGREE + 1]; /* [i][j], i <= gx, j <= gy */
    ex2d_psf_param tail[EX2D_TAIL_TERMS]; /* in ex2d_patch.h's EX2D_TAIL_* order */
    double *storage;         /* every coeff array; owned (ex2d_psf_free) */
} ex2d_psf;

/* The Legendre series of parameter prm for fibre index f (0..nfibre-1, not checked) at wavelength wave. */
double ex2d_psf_eval(const ex2d_psf_param *prm, int f, double wave);

/* The wavelength range on which every parameter of psf is defined (the intersection of their domains). */
void ex2d_psf_wave_range(const ex2d_psf *psf, double *wave_lo, double *wave_hi);

/* NULL when psf is usable (sizes, degrees and half sizes inside this build's limits, every domain ordered,
 * every coefficient finite), else a message naming the rule (the file readers name the parameter). */
const char *ex2d_psf_check(const ex2d_psf *psf);

/* specter's spot corner: (int)(pos - hsize + 0.5), C truncation, then the offset of pos from the spot's
 * centre pixel, *offset = pos - (*corner + hsize). A pos that is not finite or beyond +-1e9 px gives
 * INT32_MIN and NaN, which every footprint check refuses. */
void ex2d_psf_corner(double pos, int hsize, int32_t *corner, double *offset);

/* One PSF table entry: what ex2d_patch's table holds for fibre index f at one wavelength. */
typedef struct ex2d_psf_entry {
    double x, y, sigx, sigy;  /* trace (CCD column, row) and core widths */
    int32_t xc, yc;           /* spot corner by ex2d_psf_corner */
    double dx, dy;            /* offsets of x, y from the spot's centre pixel */
    double c[(EX2D_MAX_DEGREE + 1) * (EX2D_MAX_DEGREE + 1)]; /* GH-i-j at [i*(gy+1) + j] */
    double tail[EX2D_TAIL_TERMS];
} ex2d_psf_entry;

/* Evaluates every parameter of fibre index f at wavelength wave (no range check) into *out. */
void ex2d_psf_entry_at(const ex2d_psf *psf, int f, double wave, ex2d_psf_entry *out);

/* Frees psf's storage and zeroes it (NULL: no effect). */
void ex2d_psf_free(ex2d_psf *psf);

#ifdef __cplusplus
}
#endif

#endif /* EX2D_PSF_H */
