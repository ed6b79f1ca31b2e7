/* SPDX-License-Identifier: MIT
 * ex2d_patch reference, K7 (docs/ex2d_patch.md, "The model and the stages K1-K7"), for each core spectrum b of a
 * patch:
 *   s_i = sum_j Q_b[i][j],  R_b = diag(1/s) Q_b,  ivar_i = s_i^2,  flux_b = R_b xflux_b,
 *   Rdiags[s][d][j] = R_b[j' - ndiag + d][j'], j' = j + wavepad (0 outside the patch's m rows);
 * and over the patch box:
 *   model_p = sum_k A_pk xflux_k (k upwards),  totivar_p = 1/((psferr model_p + 1e-32)^2 + 1/ivar_p) if ivar_p > 0
 *   else 0,  chi_p = (img_p - model_p) sqrt(totivar_p),
 *   chi2pix_k = sum_p A_pk chi_p^2 / sum_p A_pk [totivar_p > 0] (0 if that is 0),
 *   pixmask_fraction_k = sum_p A_pk [ivar_p == 0]    for the core bins, over k's footprint in raster order;
 *   ivar_i = 0 for a bin whose footprint has no pixel with A_pk != 0 and ivar_p > 0 (its s_i^2 would be the
 *   regularisation's alone, not a measurement).
 * Each patch writes only its core into the frame arrays. A failed patch writes zeros for flux, ivar, Rdiags and
 * chi2pix (DESI retries it), pixmask_fraction as usual, and leaves its model slot alone.
 */
#include <math.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_ref_internal.h"

static void write_model(const ex2d_params *p, const ex2d_inputs *in, const double *spots, const ex2d_patch_desc *d,
                        const ex2d_slot *s)
{
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, n = d->nspecpad * p->m;
    const int box_x = d->xmax - d->xmin;
    memset(s->model, 0, (size_t)box_x * (d->ymax - d->ymin) * sizeof(double));
    for (int k = 0; k < n; k++) {
        const int64_t e = ex2d_ref_entry(p, d, k);
        const double *spot = spots + (size_t)e * nx * ny;
        const double f = s->xflux[k];
        for (int iy = 0; iy < ny; iy++) {
            double *row = s->model + (size_t)(in->psf_yc[e] + iy - d->ymin) * box_x + (in->psf_xc[e] - d->xmin);
            for (int ix = 0; ix < nx; ix++) row[ix] += spot[iy * nx + ix] * f;
        }
    }
}

/* chi2pix and pixmask_fraction of table entry e (the model slot must hold the patch model unless skip_chi);
 * returns 1 when a pixel of e's spot has weight (A != 0, ivar > 0). */
static int pixel_sums(const ex2d_params *p, const ex2d_inputs *in, const double *spots, const ex2d_patch_desc *d,
                      const ex2d_slot *s, int64_t e, int skip_chi, double *chi2pix, double *pixmask)
{
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, box_x = d->xmax - d->xmin;
    const double *spot = spots + (size_t)e * nx * ny;
    double chi_num = 0.0, chi_den = 0.0, masked = 0.0;
    int seen = 0;
    for (int iy = 0; iy < ny; iy++) {
        const int y = in->psf_yc[e] + iy;
        for (int ix = 0; ix < nx; ix++) {
            const int x = in->psf_xc[e] + ix;
            const double a = spot[iy * nx + ix];
            const double ivar = in->ivar[(size_t)y * p->npix_x + x];
            if (ivar == 0.0) masked += a;
            seen |= ivar > 0.0 && a != 0.0;
            if (skip_chi) continue;
            const double model = s->model[(size_t)(y - d->ymin) * box_x + (x - d->xmin)];
            const double err = p->psferr * model + 1e-32;
            const double totivar = ivar > 0.0 ? 1.0 / (err * err + 1.0 / ivar) : 0.0;
            const double chi = (in->image[(size_t)y * p->npix_x + x] - model) * sqrt(totivar);
            chi_num += a * (chi * chi);
            if (totivar > 0.0) chi_den += a;
        }
    }
    *pixmask = masked;
    *chi2pix = (skip_chi || chi_den == 0.0) ? 0.0 : chi_num / chi_den;
    return seen;
}

void ex2d_ref_patch_outputs(const ex2d_params *p, const ex2d_inputs *in, const double *spots,
                            const ex2d_patch_desc *d, const ex2d_slot *s, int status, const ex2d_outputs *out)
{
    const int m = p->m, ndiag = p->ndiag, ndiags = 2 * p->ndiag + 1;
    const int ok = status == EX2D_PATCH_OK;
    if (ok) write_model(p, in, spots, d, s);
    for (int c = 0; c < d->ncore; c++) {
        const int sp = d->core_first + c, out_s = d->out_spec_first + c;
        const double *q = s->qblk + (size_t)c * m * m;
        const double *xf = s->xflux + (size_t)sp * m;
        double rowsum[EX2D_MAX_M];
        if (ok)
            for (int i = 0; i < m; i++) {
                double acc = 0.0;
                for (int j = 0; j < m; j++) acc += q[i * m + j];
                rowsum[i] = acc;
            }
        for (int j = 0; j < d->ncore_wave; j++) {
            const int jp = j + p->wavepad;
            const size_t o = (size_t)out_s * p->nwave_out + d->out_wave_first + j;
            double flux = 0.0, ivar = 0.0;
            if (ok) {
                for (int i = 0; i < m; i++) flux += (q[jp * m + i] / rowsum[jp]) * xf[i];
                ivar = rowsum[jp] * rowsum[jp];
            }
            const int seen = pixel_sums(p, in, spots, d, s, ex2d_ref_entry(p, d, sp * m + jp), !ok, &out->chi2pix[o],
                                        &out->pixmask_fraction[o]);
            out->flux[o] = flux;
            out->ivar[o] = seen ? ivar : 0.0;
            for (int dd = 0; dd < ndiags; dd++) {
                const int row = jp - ndiag + dd;
                const double r = (ok && row >= 0 && row < m) ? q[row * m + jp] / rowsum[row] : 0.0;
                out->rdiags[((size_t)out_s * ndiags + dd) * p->nwave_out + d->out_wave_first + j] = r;
            }
        }
    }
}

int ex2d_ref_outputs(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch_first, int nbatch,
                     void *ws, size_t ws_bytes, int max_batch, const ex2d_outputs *out, int nthreads)
{
    ex2d_workspace w;
    int rc = ex2d_ref_stage_args(p, in, patch_first, nbatch, ws, ws_bytes, max_batch, &w);
    if (rc) return rc;
    if (!spots || !out || !out->flux || !out->ivar || !out->rdiags || !out->chi2pix || !out->pixmask_fraction ||
        !out->info)
        return EX2D_ERR_NULL;
    if (w.check->code) return w.check->code;
    const int threads = ex2d_ref_thread_count(nthreads);
    (void)threads;
    EX2D_OMP(omp parallel for num_threads(threads) schedule(dynamic, 1))
    for (int b = 0; b < nbatch; b++) {
        const ex2d_slot slot = ex2d_ref_slot(p, &w, b);
        const int patch = patch_first + b;
        ex2d_ref_patch_outputs(p, in, spots, &in->patches[patch], &slot, out->info[patch].status, out);
    }
    return EX2D_OK;
}
