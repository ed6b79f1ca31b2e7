/* SPDX-License-Identifier: MIT
 * specter's own evaluation of the DESI test PSF ($GW_DATA_DIR/desi/psf_golden.jsonl, docs/testing.md "Data
 * sets"), and the PSF table of its spots, shared by the CPU and GPU golden tests (docs/ex2d_patch.md, "Real
 * DESI PSFs"): every trace point within 1e-9 pixel, every spot's corner and size identical, every spot pixel
 * within 1e-12.
 */
#ifndef EX2D_PSF_GOLDEN_H
#define EX2D_PSF_GOLDEN_H

#include <stdint.h>

#include "ex2d_patch.h"
#include "ex2d_psf.h"

#define EX2D_GOLDEN_TRACE_TOL 1e-9 /* pixels */
#define EX2D_GOLDEN_SPOT_TOL 1e-12 /* per pixel of a spot normalised to 1 */

typedef struct ex2d_golden_spot {
    int fibre, x0, y0, ny, nx;
    double wave, x, y;
    double *pix; /* [ny][nx] */
} ex2d_golden_spot;

typedef struct ex2d_golden {
    ex2d_psf psf;         /* psf-gausshermite.fits, read by gw_desi_psf_read */
    int ntrace, nspot;
    double *trace;        /* [ntrace][4]: fibre, wave, x, y */
    ex2d_golden_spot *spots;
    /* The PSF table of the spots: one table spectrum, one bin per golden spot (nwave_tab = nspot). */
    ex2d_params params;
    double *sigx, *sigy, *dx, *dy, *c, *tail;
    int32_t *xc, *yc;
    ex2d_inputs inputs;   /* host view of the table (no image, no patches) */
} ex2d_golden;

/* Loads the PSF and the golden file (the test fails, or skips without GW_DATA_DIR, inside a *_data suite)
 * and builds the table. */
void ex2d_golden_load(ex2d_golden *g);
void ex2d_golden_free(ex2d_golden *g);

/* Every trace point against ex2d_psf_eval: the largest |dx|, |dy| in *max_diff; the test fails above the
 * tolerance. */
void ex2d_golden_check_trace(const ex2d_golden *g, double *max_diff);

/* Every spot's table corner against specter's box (exact), then spots[e] ([nspot][ny][nx], K1's output)
 * against its pixels; the largest difference in *max_diff. who names the side in the messages. */
void ex2d_golden_check_spots(const ex2d_golden *g, const double *spots, const char *who, double *max_diff);

#endif /* EX2D_PSF_GOLDEN_H */
