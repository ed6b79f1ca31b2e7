/* SPDX-License-Identifier: MIT
 * ex2d_patch reference, K3 (docs/ex2d_patch.md, "The model and the stages K1-K7") in the overlap form, the dense
 * form for small patches, and the pair count of the witness.
 *   iCov[a][b] = sum_p (S_a(p) w_p) S_b(p) over the shared footprint, raster order, mirrored; 0 without overlap
 *   y_a = sum_p (S_a(p) w_p) img_p,  fluxweight_a = sum_p S_a(p) w_p   over a's footprint, raster order
 *   then iCov_kk += alpha_k^2 + 1e-15 (ex2d_ref_regularise).
 * Accumulators start at +0.0 and the file is built with -ffp-contract=off: one rounding per multiply and per
 * add, in the order written, so the GPU (__dmul_rn/__dadd_rn in K3, no FMA) gets the same bits from the same spots.
 * The dense form sums over every box pixel in raster order; the extra terms are exact zeros (+-0), which
 * leave a sum that started at +0.0 unchanged, so both forms agree bit for bit.
 */
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_ref_internal.h"

void ex2d_ref_regularise(const ex2d_params *p, int n, const double *fluxweight, double *icov, size_t ld)
{
    double max_weight = 0.0;
    for (int k = 0; k < n; k++)
        if (fluxweight[k] > max_weight) max_weight = fluxweight[k];
    const double minweight = 1e-4 * max_weight;
    for (int k = 0; k < n; k++) {
        const double alpha = fluxweight[k] < minweight ? minweight - fluxweight[k] : p->regularize;
        icov[(size_t)k * ld + k] = icov[(size_t)k * ld + k] + (alpha * alpha + 1e-15);
    }
}

static int max_int(int a, int b) { return a > b ? a : b; }
static int min_int(int a, int b) { return a < b ? a : b; }

void ex2d_ref_patch_normal(const ex2d_params *p, const ex2d_inputs *in, const double *spots,
                           const ex2d_patch_desc *d, const ex2d_slot *s)
{
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, n = d->nspecpad * p->m;
    const size_t spot_size = (size_t)nx * ny, ld = s->ld;
    for (int a = 0; a < n; a++) {
        const int64_t ea = ex2d_ref_entry(p, d, a);
        const int xa = in->psf_xc[ea], ya = in->psf_yc[ea];
        const double *sa = spots + (size_t)ea * spot_size;
        double y_acc = 0.0, w_acc = 0.0;
        for (int iy = 0; iy < ny; iy++) {
            const size_t row = (size_t)(ya + iy) * p->npix_x + xa;
            for (int ix = 0; ix < nx; ix++) {
                const double sw = sa[iy * nx + ix] * in->ivar[row + ix];
                y_acc += sw * in->image[row + ix];
                w_acc += sw;
            }
        }
        s->y[a] = y_acc;
        s->fluxweight[a] = w_acc;
        for (int b = a; b < n; b++) {
            const int64_t eb = ex2d_ref_entry(p, d, b);
            const int xb = in->psf_xc[eb], yb = in->psf_yc[eb];
            double acc = 0.0;
            if (xa - xb < nx && xb - xa < nx && ya - yb < ny && yb - ya < ny) {
                const double *sb = spots + (size_t)eb * spot_size;
                const int x0 = max_int(xa, xb), x1 = min_int(xa, xb) + nx;
                const int y0 = max_int(ya, yb), y1 = min_int(ya, yb) + ny;
                for (int y = y0; y < y1; y++)
                    for (int x = x0; x < x1; x++) {
                        const double w = in->ivar[(size_t)y * p->npix_x + x];
                        acc += (sa[(y - ya) * nx + (x - xa)] * w) * sb[(y - yb) * nx + (x - xb)];
                    }
            }
            s->icov[(size_t)a * ld + b] = acc;
            s->icov[(size_t)b * ld + a] = acc;
        }
    }
    ex2d_ref_regularise(p, n, s->fluxweight, s->icov, ld);
}

int ex2d_ref_normal(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch_first, int nbatch,
                    void *ws, size_t ws_bytes, int max_batch, int nthreads)
{
    ex2d_workspace w;
    int rc = ex2d_ref_stage_args(p, in, patch_first, nbatch, ws, ws_bytes, max_batch, &w);
    if (rc) return rc;
    if (!spots) return EX2D_ERR_NULL;
    if (w.check->code) return w.check->code;
    const int threads = ex2d_ref_thread_count(nthreads);
    (void)threads;
    EX2D_OMP(omp parallel for num_threads(threads) schedule(dynamic, 1))
    for (int b = 0; b < nbatch; b++) {
        const ex2d_slot slot = ex2d_ref_slot(p, &w, b);
        ex2d_ref_patch_normal(p, in, spots, &in->patches[patch_first + b], &slot);
    }
    return EX2D_OK;
}

/* ---------------------------------------------------------------- dense form (tiers S, M) */

static int dense_args(const ex2d_params *p, const ex2d_inputs *in, int patch)
{
    int rc = ex2d_check_args(p, in, patch, 1, 0, NULL, 0);
    if (rc) return rc;
    /* The dense path takes one patch that the caller has validated (ex2d_ref_validate); its own check is
     * the part that keeps its indexing in bounds. */
    const ex2d_patch_desc *d = &in->patches[patch];
    if (d->nspecpad < 1 || d->nspecpad > p->max_nspecpad || d->spec_first < 0 ||
        d->spec_first > p->nspec_tab - d->nspecpad || d->wave_first < 0 || d->wave_first > p->nwave_tab - p->m)
        return EX2D_ERR_PATCH_TABLE;
    if (d->xmin < 0 || d->xmin >= d->xmax || d->xmax > p->npix_x || d->ymin < 0 || d->ymin >= d->ymax ||
        d->ymax > p->npix_y)
        return EX2D_ERR_BOX;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    for (int k = 0; k < d->nspecpad * p->m; k++) {
        const int64_t e = ex2d_ref_entry(p, d, k);
        if (in->psf_xc[e] < d->xmin || in->psf_xc[e] > d->xmax - nx || in->psf_yc[e] < d->ymin ||
            in->psf_yc[e] > d->ymax - ny)
            return EX2D_ERR_FOOTPRINT;
    }
    return EX2D_OK;
}

int ex2d_ref_dense_a(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch, double *a)
{
    int rc = dense_args(p, in, patch);
    if (rc) return rc;
    if (!spots || !a) return EX2D_ERR_NULL;
    const ex2d_patch_desc *d = &in->patches[patch];
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, n = d->nspecpad * p->m;
    const int box_x = d->xmax - d->xmin, box_y = d->ymax - d->ymin;
    memset(a, 0, (size_t)box_x * box_y * n * sizeof(double));
    for (int k = 0; k < n; k++) {
        const int64_t e = ex2d_ref_entry(p, d, k);
        const double *spot = spots + (size_t)e * nx * ny;
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) {
                const size_t pix = (size_t)(in->psf_yc[e] + iy - d->ymin) * box_x + (in->psf_xc[e] + ix - d->xmin);
                a[pix * n + k] = spot[iy * nx + ix];
            }
    }
    return EX2D_OK;
}

int ex2d_ref_dense_normal(const ex2d_params *p, const ex2d_inputs *in, const double *a, int patch, double *icov,
                          double *y, double *fluxweight)
{
    int rc = dense_args(p, in, patch);
    if (rc) return rc;
    if (!a || !icov || !y || !fluxweight) return EX2D_ERR_NULL;
    const ex2d_patch_desc *d = &in->patches[patch];
    const int n = d->nspecpad * p->m, box_x = d->xmax - d->xmin, box_y = d->ymax - d->ymin;
    memset(icov, 0, (size_t)n * n * sizeof(double));
    memset(y, 0, (size_t)n * sizeof(double));
    memset(fluxweight, 0, (size_t)n * sizeof(double));
    /* Pixel-outer so that A is read row by row; every accumulator still sums its terms in raster order. */
    for (int py = 0; py < box_y; py++)
        for (int px = 0; px < box_x; px++) {
            const size_t img = (size_t)(d->ymin + py) * p->npix_x + d->xmin + px;
            const double w = in->ivar[img], v = in->image[img];
            const double *row = a + ((size_t)py * box_x + px) * n;
            for (int ka = 0; ka < n; ka++) {
                const double aw = row[ka] * w;
                y[ka] += aw * v;
                fluxweight[ka] += aw;
                double *out = icov + (size_t)ka * n;
                for (int kb = ka; kb < n; kb++) out[kb] += aw * row[kb];
            }
        }
    for (int ka = 0; ka < n; ka++)
        for (int kb = ka + 1; kb < n; kb++) icov[(size_t)kb * n + ka] = icov[(size_t)ka * n + kb];
    ex2d_ref_regularise(p, n, fluxweight, icov, (size_t)n);
    return EX2D_OK;
}

/* ---------------------------------------------------------------- witness counts */

int64_t ex2d_ref_count_pairs(const ex2d_params *p, const ex2d_inputs *in, int patch)
{
    if (!p || !in || !in->patches || !in->psf_xc || !in->psf_yc || patch < 0 || patch >= in->npatch) return -1;
    const ex2d_patch_desc *d = &in->patches[patch];
    if (d->spec_first < 0 || d->nspecpad < 1 || d->spec_first > p->nspec_tab - d->nspecpad || d->wave_first < 0 ||
        p->m < 1 || d->wave_first > p->nwave_tab - p->m)
        return -1;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, n = d->nspecpad * p->m;
    int64_t pairs = 0;
    for (int a = 0; a < n; a++) {
        const int64_t ea = ex2d_ref_entry(p, d, a);
        for (int b = a; b < n; b++) {
            const int64_t eb = ex2d_ref_entry(p, d, b);
            const int ddx = in->psf_xc[ea] - in->psf_xc[eb], ddy = in->psf_yc[ea] - in->psf_yc[eb];
            if (ddx < nx && -ddx < nx && ddy < ny && -ddy < ny) pairs++;
        }
    }
    return pairs;
}

int64_t ex2d_ref_count_core_blocks(const ex2d_inputs *in, int patch_first, int npatch)
{
    if (!in || !in->patches || patch_first < 0 || npatch < 0 || patch_first > in->npatch - npatch) return -1;
    int64_t blocks = 0;
    for (int i = 0; i < npatch; i++) blocks += in->patches[patch_first + i].ncore;
    return blocks;
}

int64_t ex2d_ref_count_core_bins(const ex2d_inputs *in, int patch_first, int npatch)
{
    if (!in || !in->patches || patch_first < 0 || npatch < 0 || patch_first > in->npatch - npatch) return -1;
    int64_t bins = 0;
    for (int i = 0; i < npatch; i++) {
        const ex2d_patch_desc *d = &in->patches[patch_first + i];
        bins += (int64_t)d->ncore * d->ncore_wave;
    }
    return bins;
}
