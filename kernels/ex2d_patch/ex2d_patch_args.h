/* SPDX-License-Identifier: MIT
 * ex2d_patch's host code: the workspace layout, the argument rules and their messages, declared in
 * ex2d_patch.h, which includes this file at its end. Plain C: the CPU reference uses it where no CUDA toolkit
 * is installed. Not a header of its own: include ex2d_patch.h.
 */
#ifndef EX2D_PATCH_ARGS_H
#define EX2D_PATCH_ARGS_H

#ifdef __cplusplus
extern "C" {
#endif

static inline size_t ex2d_align_doubles(size_t count)
{
    const size_t per = EX2D_WORKSPACE_ALIGN / sizeof(double);
    return (count + per - 1) / per * per;
}

static inline size_t ex2d_workspace_bytes(const ex2d_params *p, int max_batch)
{
    if (!p || max_batch < 1 || p->m < 1 || p->max_nspecpad < 1 || p->max_ncore < 1 || p->max_box_pixels < 1 ||
        p->m > EX2D_MAX_M || (size_t)p->max_nspecpad * (size_t)p->m > EX2D_MAX_N || p->max_ncore > p->max_nspecpad)
        return 0;
    const size_t n = (size_t)p->max_nspecpad * (size_t)p->m;
    const size_t per_slot = ex2d_align_doubles(n * n) + 3 * ex2d_align_doubles(n) +
                            2 * ex2d_align_doubles((size_t)p->max_ncore * p->m * p->m) +
                            ex2d_align_doubles((size_t)p->max_box_pixels) +
                            ex2d_align_doubles((size_t)p->max_ncore * n * p->m);
    const size_t slots = (size_t)max_batch;
    if (per_slot > (SIZE_MAX - EX2D_WORKSPACE_ALIGN) / sizeof(double) / slots) return 0;
    return per_slot * slots * sizeof(double) + EX2D_WORKSPACE_ALIGN; /* + the check word */
}

static inline int ex2d_workspace_carve(const ex2d_params *p, int max_batch, void *base, ex2d_workspace *ws)
{
    if (!base || ((uintptr_t)base % EX2D_WORKSPACE_ALIGN) || ex2d_workspace_bytes(p, max_batch) == 0)
        return EX2D_ERR_WORKSPACE;
    const size_t n = (size_t)p->max_nspecpad * (size_t)p->m;
    const size_t slots = (size_t)max_batch;
    double *at = (double *)base;
    ws->check = (ex2d_check_word *)base;
    at += EX2D_WORKSPACE_ALIGN / sizeof(double);
    ws->icov_stride = ex2d_align_doubles(n * n);
    ws->vec_stride = ex2d_align_doubles(n);
    ws->blk_stride = ex2d_align_doubles((size_t)p->max_ncore * p->m * p->m);
    ws->model_stride = ex2d_align_doubles((size_t)p->max_box_pixels);
    ws->xscr_stride = ex2d_align_doubles((size_t)p->max_ncore * n * p->m);
    ws->icov = at;        at += ws->icov_stride * slots;
    ws->y = at;           at += ws->vec_stride * slots;
    ws->fluxweight = at;  at += ws->vec_stride * slots;
    ws->xflux = at;       at += ws->vec_stride * slots;
    ws->cblk = at;        at += ws->blk_stride * slots;
    ws->qblk = at;        at += ws->blk_stride * slots;
    ws->model = at;       at += ws->model_stride * slots;
    ws->xscr = at;
    ws->max_batch = max_batch;
    return EX2D_OK;
}

static inline void ex2d_params_set_numerics_default(ex2d_params *p)
{
    p->regularize = 0.0;
    p->psferr = 0.01;
    p->jacobi_tol = 1e-14;
    p->jacobi_max_sweeps = 30;
    p->ndiag = p->hsizey;
}

static inline int ex2d_check_args(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int npatch,
                                  int max_batch, const void *ws, size_t ws_bytes)
{
    if (!p) return EX2D_ERR_NULL;
    if (npatch > 0 && (!in || !in->image || !in->ivar || !in->psf_sigx || !in->psf_sigy || !in->psf_dx ||
                       !in->psf_dy || !in->psf_c || !in->psf_xc || !in->psf_yc || !in->patches))
        return EX2D_ERR_NULL;
    if (p->nspec_tab < 1 || p->nwave_tab < 1 || p->npix_x < 1 || p->npix_y < 1 || p->nspec_out < 1 ||
        p->nwave_out < 1 || p->m < 1 || p->max_nspecpad < 1 || p->max_ncore < 1 || p->max_box_pixels < 1 ||
        p->hsizex < 0 || p->hsizey < 0 || p->wavepad < 0 || npatch < 0 || max_batch < 0)
        return EX2D_ERR_SIZE;
    if (p->gx < 0 || p->gx > EX2D_MAX_DEGREE || p->gy < 0 || p->gy > EX2D_MAX_DEGREE) return EX2D_ERR_DEGREE;
    if (p->m > EX2D_MAX_M || p->max_nspecpad > EX2D_MAX_N / p->m || p->hsizex > EX2D_MAX_HALF_SIZE ||
        p->hsizey > EX2D_MAX_HALF_SIZE || p->max_ncore > p->max_nspecpad ||
        p->wavepad > (p->m - 1) / 2) /* 2*wavepad < m, without overflow */
        return EX2D_ERR_LIMIT;
    if (npatch > 0 && (in->npatch < 1 || patch_first < 0 || patch_first > in->npatch - npatch))
        return EX2D_ERR_RANGE;
    /* Written as negations so that NaN fails every rule. */
    if (!(p->regularize >= 0.0 && p->regularize < 1e300) || !(p->psferr >= 0.0 && p->psferr < 1e300) ||
        !(p->jacobi_tol > 0.0 && p->jacobi_tol < 1.0) || p->jacobi_max_sweeps < 1 || p->jacobi_max_sweeps > 100 ||
        p->ndiag < 0 || p->ndiag >= p->m)
        return EX2D_ERR_PARAM;
    if (max_batch > 0) {
        const size_t need = ex2d_workspace_bytes(p, max_batch);
        if (!ws || ((uintptr_t)ws % EX2D_WORKSPACE_ALIGN) || need == 0 || ws_bytes < need) return EX2D_ERR_WORKSPACE;
    }
    return EX2D_OK;
}

static inline const char *ex2d_error_str(int code)
{
    switch (code) {
    case EX2D_OK: return "ok";
    case EX2D_ERR_NULL: return "a required pointer is NULL (params, inputs, image, ivar, the PSF table, patches or outputs)";
    case EX2D_ERR_SIZE: return "bad size: every size (table, image, frame outputs, spot, m, batch, patches) must be at least 1";
    case EX2D_ERR_DEGREE: return "bad Gauss-Hermite degree: gx and gy must be 0..8";
    case EX2D_ERR_LIMIT: return "above this build's limits: n = max_nspecpad*m <= 1024, m <= 112, hsizex and hsizey <= 15, max_ncore <= max_nspecpad, 2*wavepad < m";
    case EX2D_ERR_RANGE: return "bad range: the patch or table range must lie inside [0, count)";
    case EX2D_ERR_PARAM: return "bad numeric parameter: regularize >= 0, psferr >= 0, 0 < jacobi_tol < 1, jacobi_max_sweeps 1..100, ndiag 0..m-1, all finite";
    case EX2D_ERR_WORKSPACE: return "workspace NULL, misaligned (256 B) or smaller than ex2d_workspace_bytes(p, max_batch)";
    case EX2D_ERR_PATCH_TABLE: return "a patch's spectra or bins lie outside the PSF table, its core outside the frame outputs, or it is larger than max_nspecpad x m";
    case EX2D_ERR_BOX: return "a patch pixel box is not wholly inside the image";
    case EX2D_ERR_FOOTPRINT: return "a bin's spot footprint is not wholly inside its patch box";
    case EX2D_ERR_IVAR: return "ivar is negative or not finite inside a patch box";
    case EX2D_ERR_IMAGE: return "an image value is not finite inside a patch box";
    }
    return "unknown ex2d_patch error";
}

static inline const char *ex2d_patch_status_str(int status)
{
    switch (status) {
    case EX2D_PATCH_OK: return "ok";
    case EX2D_PATCH_NOT_POSDEF: return "not positive definite: a Cholesky pivot was <= 0 or not finite";
    case EX2D_PATCH_NOT_CONVERGED: return "Jacobi not converged within jacobi_max_sweeps";
    case EX2D_PATCH_NOT_RUN: return "not run: the validation pass rejected the range";
    }
    return "unknown ex2d_patch status";
}

#ifdef __cplusplus
}
#endif

#endif /* EX2D_PATCH_ARGS_H */
