/* SPDX-License-Identifier: MIT
 * ex2d_psf: evaluation of a GAUSS-HERMITE PSF (contract in ex2d_psf.h; the model in docs/ex2d_patch.md,
 * "Real DESI PSFs").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_psf.h"

/* Clenshaw's recurrence for sum_k c_k P_k(u), with the Legendre recurrence
 * (k+1) P_(k+1) = (2k+1) u P_k - k P_(k-1): b_k = c_k + alpha_k b_(k+1) + beta_(k+1) b_(k+2),
 * alpha_k = (2k+1) u / (k+1), beta_k = -k / (k+1); the sum is c_0 + u b_1 - b_2 / 2. Stable for |u| <= 1. */
double ex2d_psf_eval(const ex2d_psf_param *prm, int f, double wave)
{
    const double *c = prm->coeff + (size_t)f * (size_t)prm->ncoef;
    /* u as specter's TraceSet computes it, (w - wmin) * (2 / (wmax - wmin)) - 1, so both round alike */
    const double u = (wave - prm->wavemin) * (2.0 / (prm->wavemax - prm->wavemin)) - 1.0;
    double b1 = 0.0, b2 = 0.0;
    for (int k = prm->ncoef - 1; k >= 1; k--) {
        const double b0 = c[k] + (2.0 * k + 1.0) / (k + 1.0) * u * b1 - (k + 1.0) / (k + 2.0) * b2;
        b2 = b1;
        b1 = b0;
    }
    return c[0] + u * b1 - 0.5 * b2;
}

/* Every parameter of psf that the table uses, in a fixed order; returns how many (at most 4 + 81 + 5). The
 * file readers name a bad parameter; the checks here only guard the evaluation. */
static int used_params(const ex2d_psf *psf, const ex2d_psf_param **out)
{
    int n = 0;
    out[n++] = &psf->x, out[n++] = &psf->y, out[n++] = &psf->sigx, out[n++] = &psf->sigy;
    for (int i = 0; i <= psf->gx && i <= EX2D_MAX_DEGREE; i++)
        for (int j = 0; j <= psf->gy && j <= EX2D_MAX_DEGREE; j++) out[n++] = &psf->gh[i][j];
    for (int t = 0; t < EX2D_TAIL_TERMS; t++) out[n++] = &psf->tail[t];
    return n;
}

#define MAX_USED (4 + (EX2D_MAX_DEGREE + 1) * (EX2D_MAX_DEGREE + 1) + EX2D_TAIL_TERMS)

void ex2d_psf_wave_range(const ex2d_psf *psf, double *wave_lo, double *wave_hi)
{
    const ex2d_psf_param *prm[MAX_USED];
    const int n = used_params(psf, prm);
    double lo = -INFINITY, hi = INFINITY;
    for (int i = 0; i < n; i++) {
        if (prm[i]->wavemin > lo) lo = prm[i]->wavemin;
        if (prm[i]->wavemax < hi) hi = prm[i]->wavemax;
    }
    *wave_lo = lo, *wave_hi = hi;
}

const char *ex2d_psf_check(const ex2d_psf *psf)
{
    if (!psf) return "psf is NULL";
    if (psf->nfibre < 1 || psf->fibre_min < 0) return "FIBERMIN >= 0 and FIBERMAX >= FIBERMIN";
    if (psf->npix_x < 1 || psf->npix_y < 1) return "NPIX_X and NPIX_Y must be >= 1";
    if (psf->hsizex < 0 || psf->hsizex > EX2D_MAX_HALF_SIZE || psf->hsizey < 0 || psf->hsizey > EX2D_MAX_HALF_SIZE)
        return "HSIZEX and HSIZEY must be 0..15 (this build's spots: at most 31 x 31 pixels)";
    if (psf->gx < 0 || psf->gx > EX2D_MAX_DEGREE || psf->gy < 0 || psf->gy > EX2D_MAX_DEGREE)
        return "GHDEGX and GHDEGY must be 0..8";
    const ex2d_psf_param *prm[MAX_USED];
    const int n = used_params(psf, prm);
    for (int i = 0; i < n; i++) {
        const ex2d_psf_param *p = prm[i];
        /* written as negations so that NaN fails */
        if (!p->coeff || p->ncoef < 1 || p->ncoef > EX2D_PSF_MAX_LEGENDRE) return "a parameter has no coefficients";
        if (!(p->wavemin < p->wavemax) || !isfinite(p->wavemin) || !isfinite(p->wavemax))
            return "every parameter's domain needs finite WAVEMIN < WAVEMAX";
        for (size_t k = 0; k < (size_t)psf->nfibre * (size_t)p->ncoef; k++)
            if (!isfinite(p->coeff[k])) return "every Legendre coefficient must be finite";
    }
    return NULL;
}

void ex2d_psf_corner(double pos, int hsize, int32_t *corner, double *offset)
{
    /* A position that no int32 corner holds (or NaN) must not reach the cast, which would be undefined. */
    if (!(fabs(pos) < 1e9)) {
        *corner = INT32_MIN, *offset = NAN;
        return;
    }
    /* specter: xccd starts at int(x - hsizex + 0.5), evaluated left to right in doubles */
    *corner = (int32_t)((pos - (double)hsize) + 0.5);
    *offset = pos - (double)(*corner + hsize);
}

void ex2d_psf_entry_at(const ex2d_psf *psf, int f, double wave, ex2d_psf_entry *out)
{
    out->x = ex2d_psf_eval(&psf->x, f, wave);
    out->y = ex2d_psf_eval(&psf->y, f, wave);
    out->sigx = ex2d_psf_eval(&psf->sigx, f, wave);
    out->sigy = ex2d_psf_eval(&psf->sigy, f, wave);
    for (int i = 0; i <= psf->gx; i++)
        for (int j = 0; j <= psf->gy; j++) out->c[i * (psf->gy + 1) + j] = ex2d_psf_eval(&psf->gh[i][j], f, wave);
    for (int t = 0; t < EX2D_TAIL_TERMS; t++) out->tail[t] = ex2d_psf_eval(&psf->tail[t], f, wave);
    ex2d_psf_corner(out->x, psf->hsizex, &out->xc, &out->dx);
    ex2d_psf_corner(out->y, psf->hsizey, &out->yc, &out->dy);
}

void ex2d_psf_free(ex2d_psf *psf)
{
    if (!psf) return;
    free(psf->storage);
    memset(psf, 0, sizeof(*psf));
}
