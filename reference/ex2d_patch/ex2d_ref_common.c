/* SPDX-License-Identifier: MIT
 * ex2d_patch reference: what every stage file and the driver share (ex2d_ref_internal.h): the thread count,
 * a patch's slot of the workspace, and the argument checks of a batched stage. Kept apart from the driver
 * (ex2d_patch_ref.c), which calls the stages, so that no stage file calls back into the driver's file.
 */
#include "ex2d_patch_ref.h"
#include "ex2d_ref_internal.h"

int ex2d_ref_thread_count(int nthreads)
{
#ifdef _OPENMP
    return nthreads > 0 ? nthreads : omp_get_num_procs();
#else
    (void)nthreads;
    return 1;
#endif
}

ex2d_slot ex2d_ref_slot(const ex2d_params *p, const ex2d_workspace *ws, int b)
{
    const size_t i = (size_t)b;
    ex2d_slot s = {
        .icov = ws->icov + i * ws->icov_stride,
        .y = ws->y + i * ws->vec_stride,
        .fluxweight = ws->fluxweight + i * ws->vec_stride,
        .xflux = ws->xflux + i * ws->vec_stride,
        .cblk = ws->cblk + i * ws->blk_stride,
        .qblk = ws->qblk + i * ws->blk_stride,
        .model = ws->model + i * ws->model_stride,
        .xscr = ws->xscr + i * ws->xscr_stride,
        .ld = (size_t)p->max_nspecpad * (size_t)p->m,
    };
    return s;
}

int ex2d_ref_stage_args(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                        size_t ws_bytes, int max_batch, ex2d_workspace *carved)
{
    int rc = ex2d_check_args(p, in, patch_first, nbatch, max_batch, ws, ws_bytes);
    if (rc) return rc;
    if (nbatch < 1 || max_batch < 1) return EX2D_ERR_SIZE;
    if (nbatch > max_batch) return EX2D_ERR_RANGE;
    return ex2d_workspace_carve(p, max_batch, ws, carved);
}
