/* SPDX-License-Identifier: MIT */
#include "ex2d_gpu_case.h"

#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gw_gpu_test.h"

/* Cases a test opened and has not closed: .fini closes them (a failed assertion skips the test's own close). */
enum { OPEN_MAX = 4 };
static ex2d_gpu_case *open_cases[OPEN_MAX];
static int cuda_used;

ex2d_frame_config ex2d_gc_tier_config(int tier)
{
    ex2d_frame_config cfg;
    cr_assert(ex2d_frame_config_tier(&cfg, tier) == 0, "ex2d_frame_config_tier(%d) failed", tier);
    cfg.nthreads = 0;
    return cfg;
}

static void *device_copy(const void *host, size_t bytes)
{
    void *d = NULL;
    GW_CUDA(cudaMalloc(&d, bytes));
    if (host) GW_CUDA(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

static size_t image_pixels(const ex2d_params *p) { return (size_t)p->npix_x * (size_t)p->npix_y; }

void ex2d_gc_open(ex2d_gpu_case *t, const ex2d_frame_config *cfg, int max_batch)
{
    memset(t, 0, sizeof *t);
    const int rc = ex2d_frame_make(cfg, &t->f);
    cr_assert(rc == 0, "ex2d_frame_make: %s", ex2d_synth_error_str(rc));
    int slot = 0;
    while (slot < OPEN_MAX && open_cases[slot]) slot++;
    cr_assert(slot < OPEN_MAX, "more than %d ex2d_gpu_case open at once", OPEN_MAX);
    open_cases[slot] = t;

    const ex2d_params *p = &t->f.params;
    t->max_batch = max_batch;
    t->entries = (size_t)p->nspec_tab * (size_t)p->nwave_tab;
    t->spot_pixels = (size_t)(2 * p->hsizex + 1) * (size_t)(2 * p->hsizey + 1);
    t->bins = (size_t)p->nspec_out * (size_t)p->nwave_out;
    t->ndiags = 2 * p->ndiag + 1;
    cr_assert(ex2d_ref_workspace_alloc(p, max_batch, &t->ref_ws, &t->ws_bytes) == 0);
    cr_assert(ex2d_workspace_carve(p, max_batch, t->ref_ws, &t->ref_w) == 0);
    cr_assert(ex2d_ref_outputs_alloc(p, t->f.npatch, &t->ref_out) == 0);
    size_t got_bytes = 0;
    cr_assert(ex2d_ref_workspace_alloc(p, max_batch, &t->got_ws, &got_bytes) == 0);
    cr_assert(ex2d_workspace_carve(p, max_batch, t->got_ws, &t->got_w) == 0);
    cr_assert(ex2d_ref_outputs_alloc(p, t->f.npatch, &t->got_out) == 0);
    t->got_spots = malloc(t->entries * t->spot_pixels * sizeof(double));
    cr_assert(t->got_spots);

    cuda_used = 1;
    /* A blocking stream: it also orders after work on the legacy default stream (the cudaMemcpy uploads). */
    GW_CUDA(cudaStreamCreate(&t->stream));
    const size_t entries = t->entries, coef = (size_t)(p->gx + 1) * (size_t)(p->gy + 1);
    t->d_image = device_copy(t->f.image, image_pixels(p) * sizeof(double));
    t->d_ivar = device_copy(t->f.ivar, image_pixels(p) * sizeof(double));
    t->d_sigx = device_copy(t->f.sigx, entries * sizeof(double));
    t->d_sigy = device_copy(t->f.sigy, entries * sizeof(double));
    t->d_dx = device_copy(t->f.dx, entries * sizeof(double));
    t->d_dy = device_copy(t->f.dy, entries * sizeof(double));
    t->d_c = device_copy(t->f.psf_c, entries * coef * sizeof(double));
    t->d_xc = device_copy(t->f.xc, entries * sizeof(int32_t));
    t->d_yc = device_copy(t->f.yc, entries * sizeof(int32_t));
    t->d_patches = device_copy(t->f.patches, (size_t)t->f.npatch * sizeof(ex2d_patch_desc));
    if (t->f.tail) t->d_tail = device_copy(t->f.tail, entries * EX2D_TAIL_TERMS * sizeof(double)); /* a real PSF */
    t->d_spots = device_copy(t->f.spots, entries * t->spot_pixels * sizeof(double));
    t->d_spots_k1 = device_copy(NULL, entries * t->spot_pixels * sizeof(double));
    ex2d_inputs in = {.image = t->d_image, .ivar = t->d_ivar, .psf_sigx = t->d_sigx, .psf_sigy = t->d_sigy,
                      .psf_dx = t->d_dx, .psf_dy = t->d_dy, .psf_c = t->d_c, .psf_xc = t->d_xc,
                      .psf_yc = t->d_yc, .patches = t->d_patches, .npatch = t->f.npatch, .psf_tail = t->d_tail};
    t->d_in = in;
    t->d_ws = device_copy(NULL, t->ws_bytes);
    cr_assert(ex2d_workspace_carve(p, max_batch, t->d_ws, &t->d_w) == 0, "cudaMalloc gave a misaligned workspace");
    ex2d_outputs out = {
        .flux = device_copy(NULL, t->bins * sizeof(double)),
        .ivar = device_copy(NULL, t->bins * sizeof(double)),
        .rdiags = device_copy(NULL, t->bins * (size_t)t->ndiags * sizeof(double)),
        .chi2pix = device_copy(NULL, t->bins * sizeof(double)),
        .pixmask_fraction = device_copy(NULL, t->bins * sizeof(double)),
        .info = device_copy(NULL, (size_t)t->f.npatch * sizeof(ex2d_patch_info)),
    };
    t->d_out = out;
    t->d_witness = device_copy(NULL, EX2D_WITNESS_SLOTS * sizeof(gw_witness));
    ex2d_gc_poison_all(t);
}

void ex2d_gc_close(ex2d_gpu_case *t)
{
    for (int i = 0; i < OPEN_MAX; i++)
        if (open_cases[i] == t) open_cases[i] = NULL;
    /* Errors are ignored: this also runs from .fini after a failed test. */
    void *device[] = {t->d_image, t->d_ivar, t->d_sigx, t->d_sigy, t->d_dx, t->d_dy, t->d_c, t->d_xc, t->d_yc,
                      t->d_patches, t->d_tail, t->d_spots, t->d_spots_k1, t->d_ws, t->d_out.flux, t->d_out.ivar,
                      t->d_out.rdiags, t->d_out.chi2pix, t->d_out.pixmask_fraction, t->d_out.info, t->d_witness};
    for (size_t i = 0; i < sizeof device / sizeof device[0]; i++) cudaFree(device[i]);
    if (t->stream) cudaStreamDestroy(t->stream);
    free(t->ref_ws);
    free(t->got_ws);
    free(t->got_spots);
    ex2d_ref_outputs_free(&t->ref_out);
    ex2d_ref_outputs_free(&t->got_out);
    ex2d_frame_free(&t->f);
    memset(t, 0, sizeof *t);
}

void ex2d_gc_fini(void)
{
    for (int i = 0; i < OPEN_MAX; i++)
        if (open_cases[i]) ex2d_gc_close(open_cases[i]);
    if (cuda_used) cudaDeviceReset();
}

void ex2d_gc_upload_inputs(ex2d_gpu_case *t)
{
    const ex2d_params *p = &t->f.params;
    GW_CUDA(cudaStreamSynchronize(t->stream));
    GW_CUDA(cudaMemcpy(t->d_image, t->f.image, image_pixels(p) * sizeof(double), cudaMemcpyHostToDevice));
    GW_CUDA(cudaMemcpy(t->d_ivar, t->f.ivar, image_pixels(p) * sizeof(double), cudaMemcpyHostToDevice));
    GW_CUDA(cudaMemcpy(t->d_patches, t->f.patches, (size_t)t->f.npatch * sizeof(ex2d_patch_desc),
                       cudaMemcpyHostToDevice));
}

void ex2d_gc_poison(ex2d_gpu_case *t, void *d_ptr, size_t bytes)
{
    GW_CUDA(cudaMemsetAsync(d_ptr, 0xFF, bytes, t->stream));
}

void ex2d_gc_reset_witness(ex2d_gpu_case *t)
{
    GW_CUDA(cudaMemsetAsync(t->d_witness, 0, EX2D_WITNESS_SLOTS * sizeof(gw_witness), t->stream));
}

void ex2d_gc_poison_all(ex2d_gpu_case *t)
{
    ex2d_gc_poison(t, (char *)t->d_ws + EX2D_WORKSPACE_ALIGN, t->ws_bytes - EX2D_WORKSPACE_ALIGN);
    ex2d_gc_poison(t, t->d_out.flux, t->bins * sizeof(double));
    ex2d_gc_poison(t, t->d_out.ivar, t->bins * sizeof(double));
    ex2d_gc_poison(t, t->d_out.rdiags, t->bins * (size_t)t->ndiags * sizeof(double));
    ex2d_gc_poison(t, t->d_out.chi2pix, t->bins * sizeof(double));
    ex2d_gc_poison(t, t->d_out.pixmask_fraction, t->bins * sizeof(double));
    ex2d_gc_poison(t, t->d_out.info, (size_t)t->f.npatch * sizeof(ex2d_patch_info));
    ex2d_gc_poison(t, t->d_spots_k1, t->entries * t->spot_pixels * sizeof(double));
    ex2d_gc_reset_witness(t);
}

void ex2d_gc_download(ex2d_gpu_case *t)
{
    GW_CUDA(cudaStreamSynchronize(t->stream));
    const cudaError_t last = cudaGetLastError();
    cr_assert(last == cudaSuccess, "a kernel failed: %s (%s)", cudaGetErrorName(last), cudaGetErrorString(last));
    GW_CUDA(cudaMemcpy(t->got_ws, t->d_ws, t->ws_bytes, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(t->got_out.flux, t->d_out.flux, t->bins * sizeof(double), cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(t->got_out.ivar, t->d_out.ivar, t->bins * sizeof(double), cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(t->got_out.rdiags, t->d_out.rdiags, t->bins * (size_t)t->ndiags * sizeof(double),
                       cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(t->got_out.chi2pix, t->d_out.chi2pix, t->bins * sizeof(double), cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(t->got_out.pixmask_fraction, t->d_out.pixmask_fraction, t->bins * sizeof(double),
                       cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(t->got_out.info, t->d_out.info, (size_t)t->f.npatch * sizeof(ex2d_patch_info),
                       cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(t->got_spots, t->d_spots_k1, t->entries * t->spot_pixels * sizeof(double),
                       cudaMemcpyDeviceToHost));
}

int ex2d_gc_witness(const ex2d_gpu_case *t, int slot, uint64_t launches, uint64_t items, char *msg,
                    size_t msg_size)
{
    return gw_check_witness(t->d_witness + slot, launches, items, msg, msg_size);
}

uint64_t ex2d_gc_pairs(const ex2d_gpu_case *t, int first, int count)
{
    uint64_t pairs = 0;
    for (int i = first; i < first + count; i++) {
        const int64_t n = ex2d_ref_count_pairs(&t->f.params, &t->f.inputs, i);
        cr_assert(n >= 0, "ex2d_ref_count_pairs(patch %d) failed", i);
        pairs += (uint64_t)n;
    }
    return pairs;
}

uint64_t ex2d_gc_factorised_blocks(const ex2d_gpu_case *t, int first, int count)
{
    uint64_t blocks = 0;
    for (int i = first; i < first + count; i++)
        if (t->ref_out.info[i].status != EX2D_PATCH_NOT_POSDEF) blocks += (uint64_t)t->f.patches[i].ncore;
    return blocks;
}

ex2d_gc_slot ex2d_gc_slot_of(const ex2d_gpu_case *t, const ex2d_workspace *w, int b)
{
    const size_t i = (size_t)b;
    ex2d_gc_slot s = {
        .icov = w->icov + i * w->icov_stride,
        .y = w->y + i * w->vec_stride,
        .fluxweight = w->fluxweight + i * w->vec_stride,
        .xflux = w->xflux + i * w->vec_stride,
        .cblk = w->cblk + i * w->blk_stride,
        .qblk = w->qblk + i * w->blk_stride,
        .model = w->model + i * w->model_stride,
        .ld = (size_t)t->f.params.max_nspecpad * (size_t)t->f.params.m,
    };
    return s;
}
