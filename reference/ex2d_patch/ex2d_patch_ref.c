/* SPDX-License-Identifier: MIT
 * ex2d_patch reference: the validation pass, the batched stage wrappers, the driver and the allocation helpers
 * (contract in ex2d_patch_ref.h). The stages themselves are in ex2d_ref_spots.c (K1), ex2d_ref_normal.c (K3),
 * ex2d_ref_solve.c (K4-K6) and ex2d_ref_outputs.c (K7); what they share with the driver (thread count, slots,
 * argument checks) is in ex2d_ref_common.c.
 * Threads run over the patches of a batch; each patch is computed by one thread in a fixed order into its own
 * slot and its own core of the frame arrays, so no bit depends on nthreads.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_ref_internal.h"

/* ---------------------------------------------------------------- validation (docs/ex2d_patch.md, "Device validation rules") */

static int patch_table_ok(const ex2d_params *p, const ex2d_patch_desc *d)
{
    const int64_t spec_end = (int64_t)d->spec_first + d->nspecpad, wave_end = (int64_t)d->wave_first + p->m;
    const int64_t core_end = (int64_t)d->core_first + d->ncore;
    const int64_t out_s_end = (int64_t)d->out_spec_first + d->ncore;
    const int64_t out_w_end = (int64_t)d->out_wave_first + d->ncore_wave;
    return d->nspecpad >= 1 && d->nspecpad <= p->max_nspecpad && d->spec_first >= 0 && spec_end <= p->nspec_tab &&
           d->wave_first >= 0 && wave_end <= p->nwave_tab && d->ncore >= 1 && d->ncore <= p->max_ncore &&
           d->core_first >= 0 && core_end <= d->nspecpad && d->ncore_wave >= 1 &&
           d->ncore_wave <= p->m - 2 * p->wavepad && d->out_spec_first >= 0 && out_s_end <= p->nspec_out &&
           d->out_wave_first >= 0 && out_w_end <= p->nwave_out;
}

static int box_ok(const ex2d_params *p, const ex2d_patch_desc *d)
{
    if (d->xmin < 0 || d->xmin >= d->xmax || d->xmax > p->npix_x || d->ymin < 0 || d->ymin >= d->ymax ||
        d->ymax > p->npix_y)
        return 0;
    return (int64_t)(d->xmax - d->xmin) * (d->ymax - d->ymin) <= p->max_box_pixels;
}

/* The first failing rule of one patch, in enum order, or 0. */
static int validate_patch(const ex2d_params *p, const ex2d_inputs *in, const ex2d_patch_desc *d)
{
    if (!patch_table_ok(p, d)) return EX2D_ERR_PATCH_TABLE;
    if (!box_ok(p, d)) return EX2D_ERR_BOX;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    for (int k = 0; k < d->nspecpad * p->m; k++) {
        const int64_t e = ex2d_ref_entry(p, d, k);
        if (in->psf_xc[e] < d->xmin || (int64_t)in->psf_xc[e] + nx > d->xmax || in->psf_yc[e] < d->ymin ||
            (int64_t)in->psf_yc[e] + ny > d->ymax)
            return EX2D_ERR_FOOTPRINT;
    }
    int ivar_bad = 0, image_bad = 0;
    for (int y = d->ymin; y < d->ymax; y++)
        for (int x = d->xmin; x < d->xmax; x++) {
            const size_t i = (size_t)y * p->npix_x + x;
            if (!(in->ivar[i] >= 0.0 && in->ivar[i] <= DBL_MAX)) ivar_bad = 1; /* NaN fails both */
            if (!isfinite(in->image[i])) image_bad = 1;
        }
    return ivar_bad ? EX2D_ERR_IVAR : image_bad ? EX2D_ERR_IMAGE : EX2D_OK;
}

int ex2d_ref_validate(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int npatch, void *ws,
                      size_t ws_bytes, int max_batch, int nthreads)
{
    /* Like the batched stages, except that the range may be longer than one batch: the pass covers all of it. */
    ex2d_workspace w;
    int rc = ex2d_check_args(p, in, patch_first, npatch, max_batch, ws, ws_bytes);
    if (rc) return rc;
    if (npatch < 1 || max_batch < 1) return EX2D_ERR_SIZE;
    rc = ex2d_workspace_carve(p, max_batch, ws, &w);
    if (rc) return rc;
    const int threads = ex2d_ref_thread_count(nthreads);
    (void)threads;
    int first_bad = npatch;
    EX2D_OMP(omp parallel for num_threads(threads) schedule(dynamic, 16) reduction(min : first_bad))
    for (int i = 0; i < npatch; i++)
        if (validate_patch(p, in, &in->patches[patch_first + i]) && i < first_bad) first_bad = i;
    if (first_bad < npatch) {
        w.check->code = validate_patch(p, in, &in->patches[patch_first + first_bad]);
        w.check->patch = patch_first + first_bad;
    } else {
        w.check->code = EX2D_OK;
        w.check->patch = -1;
    }
    return w.check->code;
}

/* ---------------------------------------------------------------- K4-K6 over a batch */

int ex2d_ref_cholesky(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                      size_t ws_bytes, int max_batch, ex2d_patch_info *info, int nthreads)
{
    ex2d_workspace w;
    int rc = ex2d_ref_stage_args(p, in, patch_first, nbatch, ws, ws_bytes, max_batch, &w);
    if (rc) return rc;
    if (!info) return EX2D_ERR_NULL;
    if (w.check->code) { /* a rejected range: like the GPU's K4, say so in every info of the batch */
        const ex2d_patch_info not_run = {EX2D_PATCH_NOT_RUN, 0, 0, 0};
        for (int b = 0; b < nbatch; b++) info[patch_first + b] = not_run;
        return w.check->code;
    }
    const int threads = ex2d_ref_thread_count(nthreads);
    (void)threads;
    EX2D_OMP(omp parallel for num_threads(threads) schedule(dynamic, 1))
    for (int b = 0; b < nbatch; b++) {
        const ex2d_slot slot = ex2d_ref_slot(p, &w, b);
        const int patch = patch_first + b;
        const ex2d_patch_info result = {ex2d_ref_patch_cholesky(p, &in->patches[patch], &slot), 0, 0, 0};
        info[patch] = result;
    }
    return EX2D_OK;
}

int ex2d_ref_cblocks(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                     size_t ws_bytes, int max_batch, const ex2d_patch_info *info, int nthreads)
{
    ex2d_workspace w;
    int rc = ex2d_ref_stage_args(p, in, patch_first, nbatch, ws, ws_bytes, max_batch, &w);
    if (rc) return rc;
    if (!info) return EX2D_ERR_NULL;
    if (w.check->code) return w.check->code;
    const int threads = ex2d_ref_thread_count(nthreads);
    (void)threads;
    EX2D_OMP(omp parallel for num_threads(threads) schedule(dynamic, 1))
    for (int b = 0; b < nbatch; b++) {
        const int patch = patch_first + b;
        if (info[patch].status != EX2D_PATCH_OK) continue;
        const ex2d_slot slot = ex2d_ref_slot(p, &w, b);
        ex2d_ref_patch_cblocks(p, &in->patches[patch], &slot);
    }
    return EX2D_OK;
}

int ex2d_ref_jacobi(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                    size_t ws_bytes, int max_batch, ex2d_patch_info *info, int nthreads)
{
    ex2d_workspace w;
    int rc = ex2d_ref_stage_args(p, in, patch_first, nbatch, ws, ws_bytes, max_batch, &w);
    if (rc) return rc;
    if (!info) return EX2D_ERR_NULL;
    if (w.check->code) return w.check->code;
    const int threads = ex2d_ref_thread_count(nthreads);
    (void)threads;
    int err = EX2D_OK;
    EX2D_OMP(omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(max : err))
    for (int b = 0; b < nbatch; b++) {
        const int patch = patch_first + b;
        if (info[patch].status != EX2D_PATCH_OK) continue;
        const ex2d_slot slot = ex2d_ref_slot(p, &w, b);
        const int r = ex2d_ref_patch_jacobi(p, &in->patches[patch], &slot, &info[patch]);
        if (r > err) err = r;
    }
    return err;
}

/* ---------------------------------------------------------------- driver */

int ex2d_ref_patches(const ex2d_params *p, const ex2d_inputs *in, const double *spots, int patch_first, int npatch,
                     int max_batch, void *ws, size_t ws_bytes, const ex2d_outputs *out, int nthreads)
{
    int rc = ex2d_check_args(p, in, patch_first, npatch, max_batch, ws, ws_bytes);
    if (rc) return rc;
    if (npatch < 1 || max_batch < 1) return EX2D_ERR_SIZE;
    if (!spots || !out || !out->flux || !out->ivar || !out->rdiags || !out->chi2pix || !out->pixmask_fraction ||
        !out->info)
        return EX2D_ERR_NULL;
    rc = ex2d_ref_validate(p, in, patch_first, npatch, ws, ws_bytes, max_batch, nthreads);
    if (rc) { /* a rejected range: nothing is extracted, and every info of the range says so (as on the GPU) */
        const ex2d_patch_info not_run = {EX2D_PATCH_NOT_RUN, 0, 0, 0};
        for (int i = 0; i < npatch; i++) out->info[patch_first + i] = not_run;
        return rc;
    }
    for (int first = patch_first; first < patch_first + npatch; first += max_batch) {
        const int left = patch_first + npatch - first, nb = left < max_batch ? left : max_batch;
        rc = ex2d_ref_normal(p, in, spots, first, nb, ws, ws_bytes, max_batch, nthreads);
        if (!rc) rc = ex2d_ref_cholesky(p, in, first, nb, ws, ws_bytes, max_batch, out->info, nthreads);
        if (!rc) rc = ex2d_ref_cblocks(p, in, first, nb, ws, ws_bytes, max_batch, out->info, nthreads);
        if (!rc) rc = ex2d_ref_jacobi(p, in, first, nb, ws, ws_bytes, max_batch, out->info, nthreads);
        if (!rc) rc = ex2d_ref_outputs(p, in, spots, first, nb, ws, ws_bytes, max_batch, out, nthreads);
        if (rc) return rc;
    }
    return EX2D_OK;
}

/* ---------------------------------------------------------------- allocation helpers */

int ex2d_ref_workspace_alloc(const ex2d_params *p, int max_batch, void **ws, size_t *ws_bytes)
{
    if (!p || !ws || !ws_bytes) return EX2D_ERR_NULL;
    const size_t bytes = ex2d_workspace_bytes(p, max_batch);
    if (bytes == 0) return EX2D_ERR_WORKSPACE;
    /* aligned_alloc wants a multiple of the alignment; ex2d_workspace_bytes is one (slots are padded). */
    void *base = aligned_alloc(EX2D_WORKSPACE_ALIGN, bytes);
    if (!base) return EX2D_REF_ERR_ALLOC;
    *ws = base;
    *ws_bytes = bytes;
    return EX2D_OK;
}

int ex2d_ref_outputs_alloc(const ex2d_params *p, int npatch, ex2d_outputs *out)
{
    if (!p || !out) return EX2D_ERR_NULL;
    if (p->nspec_out < 1 || p->nwave_out < 1 || p->ndiag < 0 || npatch < 1) return EX2D_ERR_SIZE;
    const size_t bins = (size_t)p->nspec_out * (size_t)p->nwave_out;
    ex2d_outputs o = {
        .flux = malloc(bins * sizeof(double)),
        .ivar = malloc(bins * sizeof(double)),
        .rdiags = malloc(bins * (size_t)(2 * p->ndiag + 1) * sizeof(double)),
        .chi2pix = malloc(bins * sizeof(double)),
        .pixmask_fraction = malloc(bins * sizeof(double)),
        .info = malloc((size_t)npatch * sizeof(ex2d_patch_info)),
    };
    if (!o.flux || !o.ivar || !o.rdiags || !o.chi2pix || !o.pixmask_fraction || !o.info) {
        ex2d_ref_outputs_free(&o);
        return EX2D_REF_ERR_ALLOC;
    }
    *out = o;
    return EX2D_OK;
}

void ex2d_ref_outputs_free(ex2d_outputs *out)
{
    if (!out) return;
    free(out->flux);
    free(out->ivar);
    free(out->rdiags);
    free(out->chi2pix);
    free(out->pixmask_fraction);
    free(out->info);
    memset(out, 0, sizeof(*out));
}
