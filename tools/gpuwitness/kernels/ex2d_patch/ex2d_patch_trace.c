/* SPDX-License-Identifier: MIT
 * ex2d_patch in `gpuwitness trace`: tier M (one noiseless 7 x 74 patch) through the host path
 * (ex2d_patch_host.h), with the ledger budget of one call written out from what the call does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_host.h"
#include "ex2d_patch_ref.h"
#include "gw_kernel.h"
#include "gw_trace_range.h"


typedef struct ex2d_state {
    ex2d_frame f;
    ex2d_outputs ref, got;
    int ordinal;
} ex2d_state;

/* Every patch in one ex2d_patches_launch call: the budget below counts one validation verdict read and
 * one launch of each of K3..K7, so a call that split the patches (free memory too small) is refused
 * rather than reported as a ledger violation. */
enum { EX2D_BATCHES = 1 };

static int ex2d_iterate(gw_trace_work *w, char *err, size_t err_size)
{
    ex2d_state *s = w->state;
    gw_ex2d_gpu_result res;
    char msg[2048];
    if (gw_ex2d_gpu_run(s->ordinal, &s->f, s->f.npatch, &s->got, &res, NULL, err, err_size)) return -1;
    if (res.check.code != EX2D_OK) {
        snprintf(err, err_size, "the device validation rejected patch %d: %s", res.check.patch,
                 ex2d_error_str(res.check.code));
        return -1;
    }
    if (res.batches != EX2D_BATCHES) {
        snprintf(err, err_size, "%d batches of up to %d patches (free device memory), the budget is for %d",
                 res.batches, res.max_batch, EX2D_BATCHES);
        return -1;
    }
    gw_range_push("ex2d/compare");
    const size_t diff = gw_ex2d_compare(&s->f, &s->got, &s->ref, 0, msg, sizeof msg);
    gw_range_pop();
    if (diff) {
        snprintf(err, err_size, "differs from ex2d_ref_patches: %s", msg);
        return -1;
    }
    if (res.witness_violations) {
        snprintf(err, err_size, "the witness does not prove GPU execution: %s", res.witness_check);
        return -1;
    }
    return 0;
}

static void ex2d_release(gw_trace_work *w)
{
    ex2d_state *s = w->state;
    ex2d_ref_outputs_free(&s->got);
    ex2d_ref_outputs_free(&s->ref);
    ex2d_frame_free(&s->f);
    free(s);
}

int gw_ex2d_patch_trace(gw_trace_work *w, int ordinal, char *err, size_t err_size)
{
    ex2d_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    w->state = s;
    w->iterate = ex2d_iterate;
    w->release = ex2d_release;
    s->ordinal = ordinal;
    /* check --size small's problem: tier M, one noiseless patch */
    ex2d_frame_config cfg;
    ex2d_frame_config_tier(&cfg, EX2D_TIER_M);
    cfg.nthreads = 0;
    const int made = ex2d_frame_make(&cfg, &s->f);
    if (made) {
        snprintf(err, err_size, "synthesising tier M: %s", ex2d_synth_error_str(made));
        return -1;
    }
    const ex2d_frame *f = &s->f;
    const ex2d_params *p = &f->params;
    if (ex2d_ref_outputs_alloc(p, f->npatch, &s->ref) || ex2d_ref_outputs_alloc(p, f->npatch, &s->got)) goto oom;
    snprintf(w->description, sizeof w->description, "ex2d_patch: tier M, fibres %d..%d x bins %d..%d, %d patch(es) "
             "of n <= %d, image %dx%d, noiseless", cfg.fibre_first, cfg.fibre_first + cfg.nfibre - 1,
             cfg.wave_first, cfg.wave_first + cfg.nwave - 1, f->npatch, p->max_nspecpad * p->m, p->npix_x,
             p->npix_y);

    gw_ex2d_out_poison(f, &s->ref, 0xFF);
    double ms = 0;
    gw_range_push("ex2d/reference");
    const int rc = gw_ex2d_cpu_run(f, 0, &s->ref, NULL, &ms, err, err_size);
    gw_range_pop();
    if (rc) return -1;
    int first = -1;
    if (gw_ex2d_failed_patches(f, &s->ref, &first)) {
        snprintf(err, err_size, "ex2d_ref_patches: patch %d: %s", first,
                 ex2d_patch_status_str(s->ref.info[first].status));
        return -1;
    }

    /* gw_ex2d_gpu_run (as tests/ledger/test_ledger_ex2d_gpu.c budgets it): K1 once, the validation and K3..K7 once
     * per batch; one upload of each input array; per batch an 8-byte read of the validation verdict; one
     * download of the witness records, of each frame output and of info. Memsets are not copies. */
    const uint64_t npix = (uint64_t)p->npix_x * p->npix_y, ntab = (uint64_t)p->nspec_tab * p->nwave_tab;
    const uint64_t nc = ntab * (uint64_t)(p->gx + 1) * (uint64_t)(p->gy + 1);
    const uint64_t nframe = gw_ex2d_frame_elems(f), nrdiag = gw_ex2d_rdiag_elems(f), npatch = (uint64_t)f->npatch;
    static const char *const stages[] = {"ex2d_validate_kernel", "ex2d_normal_kernel", "ex2d_cholesky_kernel",
                                         "ex2d_cblocks_kernel", "ex2d_jacobi_kernel", "ex2d_outputs_kernel"};
    gw_trace_work_add_kernel(w, "ex2d_spots_kernel", 1);
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) gw_trace_work_add_kernel(w, stages[i], EX2D_BATCHES);
    gw_trace_work_add_copy(w, GW_COPY_HTOD, npix * sizeof(double), "image");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, npix * sizeof(double), "ivar");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_sigx");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_sigy");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_dx");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, ntab * sizeof(double), "psf_dy");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, nc * sizeof(double), "psf_c");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, ntab * sizeof(int32_t), "psf_xc");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, ntab * sizeof(int32_t), "psf_yc");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, npatch * sizeof(ex2d_patch_desc), "patches");
    for (int b = 0; b < EX2D_BATCHES; b++) gw_trace_work_add_copy(w, GW_COPY_DTOH, sizeof(ex2d_check_word), "check word");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, EX2D_WITNESS_SLOTS * sizeof(gw_witness), "witness");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "flux");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "ivar");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, nrdiag * sizeof(double), "rdiags");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "chi2pix");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, nframe * sizeof(double), "pixmask_fraction");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, npatch * sizeof(ex2d_patch_info), "info");
    return 0;
oom:
    snprintf(err, err_size, "out of memory building the ex2d_patch problem");
    return -1;
}

