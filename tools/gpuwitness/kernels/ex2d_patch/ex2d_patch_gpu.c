/* SPDX-License-Identifier: MIT
 * ex2d_patch on the GPU for the CLI: one witnessed extraction of a host frame. Every CUDA call is checked and
 * named in the error; every buffer is freed on every path. Copies: one upload per input array, one download
 * of the witness records, of each frame output and of info, and one 8-byte read of the validation verdict
 * per batch (it tells whether the next batch may run, and paces the progress line).
 */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ex2d_patch_ref.h"
#include "gw_cli_cuda.h"
#include "ex2d_patch_host.h"
#include "gw_trace_range.h"
#include "gw_witness_check.h"

/* A batch larger than this gains nothing (an H100 holds 132 SMs; 256 patches already fill it several times)
 * and only takes memory from other processes. */
#define MAX_BATCH_CAP 256
/* Free device memory left to others (and to the driver's own needs) when sizing the workspace. */
#define FREE_MEMORY_SHARE 0.8

typedef struct ex2d_dev {
    double *image, *ivar, *sigx, *sigy, *dx, *dy, *c, *spots, *tail; /* tail: a real PSF's only */
    int32_t *xc, *yc;
    ex2d_patch_desc *patches;
    ex2d_outputs out;
    void *ws;
    gw_witness *witness;
} ex2d_dev;

static void dev_free(ex2d_dev *d, cudaError_t *first, const char **what)
{
    void *bufs[] = {d->image, d->ivar, d->sigx, d->sigy, d->dx, d->dy, d->c, d->spots, d->tail, d->xc, d->yc,
                    d->patches, d->out.flux, d->out.ivar, d->out.rdiags, d->out.chi2pix, d->out.pixmask_fraction,
                    d->out.info, d->ws, d->witness};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) gw_cli_cuda_keep_first(cudaFree(bufs[i]), "cudaFree", first, what);
    memset(d, 0, sizeof *d);
}

/* K5 and K6 run on the core blocks of every patch that K4 factorised (status not NOT_POSDEF). */
static uint64_t factorised_blocks(const ex2d_frame *f, const ex2d_outputs *out, int npatch)
{
    uint64_t blocks = 0;
    for (int i = 0; i < npatch; i++)
        if (out->info[i].status != EX2D_PATCH_NOT_POSDEF) blocks += (uint64_t)f->patches[i].ncore;
    return blocks;
}

static void check_witness(const ex2d_frame *f, const ex2d_outputs *out, const gw_gpu_facts *facts,
                          gw_ex2d_gpu_result *res)
{
    uint64_t pairs = 0;
    for (int i = 0; i < f->npatch; i++) pairs += (uint64_t)ex2d_ref_count_pairs(&f->params, &f->inputs, i);
    const uint64_t batches = (uint64_t)res->batches, blocks = factorised_blocks(f, out, f->npatch);
    const struct {
        const char *name;
        uint64_t launches, items;
    } expect[EX2D_WITNESS_SLOTS] = {
        [EX2D_W_VALIDATE] = {"validate", batches, (uint64_t)f->npatch},
        [EX2D_W_SPOTS] = {"K1 spots", 1, (uint64_t)f->params.nspec_tab * (uint64_t)f->params.nwave_tab},
        [EX2D_W_NORMAL] = {"K3 normal", batches, pairs},
        [EX2D_W_CHOLESKY] = {"K4 cholesky", batches, (uint64_t)f->npatch},
        [EX2D_W_CBLOCKS] = {"K5 C blocks", batches, blocks},
        [EX2D_W_JACOBI] = {"K6 Jacobi", batches, blocks},
        [EX2D_W_OUTPUTS] = {"K7 outputs", batches,
                            (uint64_t)ex2d_ref_count_core_bins(&f->inputs, 0, f->npatch)},
    };
    size_t used = 0;
    res->witness_check[0] = '\0';
    for (int s = 0; s < EX2D_WITNESS_SLOTS; s++) {
        const gw_witness_expect e = {
            .launches = expect[s].launches,
            .items = expect[s].items,
            .device_arch = (unsigned)(facts->cc_major * 100 + facts->cc_minor * 10),
            .device_sms = (unsigned)facts->sm_count,
            .emulated = facts->emulated,
        };
        char found[1024];
        res->witness_violations += gw_witness_check(&res->witness[s], &e, found, sizeof found);
        char receipt[160];
        gw_witness_format(&res->witness[s], receipt, sizeof receipt);
        snprintf(res->witness_receipt[s], sizeof res->witness_receipt[s], "%-12s %s", expect[s].name, receipt);
        /* strtok_r: host paths run from several threads at once (tests/robustness/test_device_faults_gpu.c) */
        char *save = NULL;
        for (char *line = strtok_r(found, "\n", &save); line && used < sizeof res->witness_check;
             line = strtok_r(NULL, "\n", &save)) {
            const int n = snprintf(res->witness_check + used, sizeof res->witness_check - used, "%s: %s\n",
                                   expect[s].name, line);
            if (n > 0) used += (size_t)n;
        }
    }
}

/* Patches per batch: as many workspace slots as FREE_MEMORY_SHARE of the free memory holds, at most
 * MAX_BATCH_CAP, npatch or the caller's max_batch. 0 (err set) when not even one fits. */
static int choose_max_batch(const ex2d_frame *f, int requested, char *err, size_t err_size)
{
    size_t free_bytes = 0, total = 0;
    const cudaError_t e = cudaMemGetInfo(&free_bytes, &total);
    if (e != cudaSuccess) {
        gw_cli_cuda_fail(err, err_size, "cudaMemGetInfo", e);
        return 0;
    }
    const size_t one = ex2d_workspace_bytes(&f->params, 1), two = ex2d_workspace_bytes(&f->params, 2);
    const size_t per_slot = two - one, fixed = one - per_slot; /* the check word's aligned block */
    const size_t usable = (size_t)((double)free_bytes * FREE_MEMORY_SHARE);
    if (one == 0 || usable < one) {
        snprintf(err, err_size, "not enough device memory for one patch: the workspace needs %.1f MB per patch, "
                 "%.1f MB are free after the frame's inputs and outputs (%.0f %% of it usable)", (double)one / 1e6,
                 (double)free_bytes / 1e6, FREE_MEMORY_SHARE * 100);
        return 0;
    }
    size_t fit = (usable - fixed) / per_slot;
    int cap = requested > 0 ? requested : MAX_BATCH_CAP;
    if (cap > f->npatch) cap = f->npatch;
    return fit < (size_t)cap ? (int)fit : cap;
}

int gw_ex2d_gpu_run(int ordinal, const ex2d_frame *f, int max_batch, ex2d_outputs *out, gw_ex2d_gpu_result *res,
                    gw_ex2d_progress *pr, char *err, size_t err_size)
{
    memset(res, 0, sizeof *res);
    const ex2d_params *p = &f->params;
    const size_t npix = (size_t)p->npix_x * p->npix_y, ntab = (size_t)p->nspec_tab * p->nwave_tab;
    const size_t nc = ntab * (size_t)(p->gx + 1) * (size_t)(p->gy + 1);
    const size_t nspots = ntab * (size_t)(2 * p->hsizex + 1) * (size_t)(2 * p->hsizey + 1);
    const size_t nframe = gw_ex2d_frame_elems(f), nrdiag = gw_ex2d_rdiag_elems(f), npatch = (size_t)f->npatch;
    ex2d_dev d;
    memset(&d, 0, sizeof d);
    cudaStream_t stream = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    gw_gpu_facts facts;
    size_t ws_bytes = 0;
    const int range_depth = gw_range_depth();
    int rc = -1;

    gw_ex2d_out_poison(f, out, 0xA5);
    CUDA_TRY(cudaSetDevice(ordinal), "cudaSetDevice");
    if (gw_gpu_facts_get(ordinal, &facts, err, err_size)) goto fail;
    CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CUDA_TRY(cudaEventCreate(&ev[0]), "cudaEventCreate");
    CUDA_TRY(cudaEventCreate(&ev[1]), "cudaEventCreate");
    {
        /* The frame's inputs and outputs plus one patch's workspace. */
        const double tail = f->tail ? EX2D_TAIL_TERMS * (double)ntab : 0.0;
        const double fixed = 8.0 * (2.0 * (double)npix + 4.0 * (double)ntab + (double)nc + (double)nspots +
                                    4.0 * (double)nframe + (double)nrdiag + tail) +
                             4.0 * 2.0 * (double)ntab +
                             (double)npatch * (sizeof(ex2d_patch_desc) + sizeof(ex2d_patch_info)) +
                             EX2D_WITNESS_SLOTS * sizeof(gw_witness) + (double)ex2d_workspace_bytes(p, 1);
        if (gw_cli_cuda_check_fits("ex2d_patch (the frame with one patch's workspace)", fixed, err, err_size))
            goto fail;
    }
    CUDA_TRY(cudaMalloc((void **)&d.image, npix * sizeof(double)), "cudaMalloc(image)");
    CUDA_TRY(cudaMalloc((void **)&d.ivar, npix * sizeof(double)), "cudaMalloc(ivar)");
    CUDA_TRY(cudaMalloc((void **)&d.sigx, ntab * sizeof(double)), "cudaMalloc(psf_sigx)");
    CUDA_TRY(cudaMalloc((void **)&d.sigy, ntab * sizeof(double)), "cudaMalloc(psf_sigy)");
    CUDA_TRY(cudaMalloc((void **)&d.dx, ntab * sizeof(double)), "cudaMalloc(psf_dx)");
    CUDA_TRY(cudaMalloc((void **)&d.dy, ntab * sizeof(double)), "cudaMalloc(psf_dy)");
    CUDA_TRY(cudaMalloc((void **)&d.c, nc * sizeof(double)), "cudaMalloc(psf_c)");
    if (f->tail)
        CUDA_TRY(cudaMalloc((void **)&d.tail, ntab * EX2D_TAIL_TERMS * sizeof(double)), "cudaMalloc(psf_tail)");
    CUDA_TRY(cudaMalloc((void **)&d.xc, ntab * sizeof(int32_t)), "cudaMalloc(psf_xc)");
    CUDA_TRY(cudaMalloc((void **)&d.yc, ntab * sizeof(int32_t)), "cudaMalloc(psf_yc)");
    CUDA_TRY(cudaMalloc((void **)&d.patches, npatch * sizeof(ex2d_patch_desc)), "cudaMalloc(patches)");
    CUDA_TRY(cudaMalloc((void **)&d.spots, nspots * sizeof(double)), "cudaMalloc(spots)");
    CUDA_TRY(cudaMalloc((void **)&d.out.flux, nframe * sizeof(double)), "cudaMalloc(flux)");
    CUDA_TRY(cudaMalloc((void **)&d.out.ivar, nframe * sizeof(double)), "cudaMalloc(ivar out)");
    CUDA_TRY(cudaMalloc((void **)&d.out.chi2pix, nframe * sizeof(double)), "cudaMalloc(chi2pix)");
    CUDA_TRY(cudaMalloc((void **)&d.out.pixmask_fraction, nframe * sizeof(double)), "cudaMalloc(pixmask_fraction)");
    CUDA_TRY(cudaMalloc((void **)&d.out.rdiags, nrdiag * sizeof(double)), "cudaMalloc(rdiags)");
    CUDA_TRY(cudaMalloc((void **)&d.out.info, npatch * sizeof(ex2d_patch_info)), "cudaMalloc(info)");
    CUDA_TRY(cudaMalloc((void **)&d.witness, EX2D_WITNESS_SLOTS * sizeof(gw_witness)), "cudaMalloc(witness)");
    res->max_batch = choose_max_batch(f, max_batch, err, err_size);
    if (res->max_batch < 1) goto fail;
    ws_bytes = ex2d_workspace_bytes(p, res->max_batch);
    CUDA_TRY(cudaMalloc(&d.ws, ws_bytes), "cudaMalloc(workspace)");

    const ex2d_inputs d_in = {d.image, d.ivar, d.sigx, d.sigy, d.dx, d.dy, d.c, d.xc, d.yc, d.patches, f->npatch,
                              d.tail};
    const ex2d_inputs *h = &f->inputs;
    const double t0 = gw_cli_now_ms();
    gw_range_push("ex2d/upload");
    const struct {
        void *dst;
        const void *src;
        size_t bytes;
        const char *what;
    } up[] = {
        {d.image, h->image, npix * sizeof(double), "cudaMemcpyAsync(image, host to device)"},
        {d.ivar, h->ivar, npix * sizeof(double), "cudaMemcpyAsync(ivar, host to device)"},
        {d.sigx, h->psf_sigx, ntab * sizeof(double), "cudaMemcpyAsync(psf_sigx, host to device)"},
        {d.sigy, h->psf_sigy, ntab * sizeof(double), "cudaMemcpyAsync(psf_sigy, host to device)"},
        {d.dx, h->psf_dx, ntab * sizeof(double), "cudaMemcpyAsync(psf_dx, host to device)"},
        {d.dy, h->psf_dy, ntab * sizeof(double), "cudaMemcpyAsync(psf_dy, host to device)"},
        {d.c, h->psf_c, nc * sizeof(double), "cudaMemcpyAsync(psf_c, host to device)"},
        {d.xc, h->psf_xc, ntab * sizeof(int32_t), "cudaMemcpyAsync(psf_xc, host to device)"},
        {d.yc, h->psf_yc, ntab * sizeof(int32_t), "cudaMemcpyAsync(psf_yc, host to device)"},
        {d.patches, h->patches, npatch * sizeof(ex2d_patch_desc), "cudaMemcpyAsync(patches, host to device)"},
    };
    for (size_t i = 0; i < sizeof up / sizeof up[0]; i++)
        CUDA_TRY(cudaMemcpyAsync(up[i].dst, up[i].src, up[i].bytes, cudaMemcpyHostToDevice, stream), up[i].what);
    if (f->tail)
        CUDA_TRY(cudaMemcpyAsync(d.tail, f->tail, ntab * EX2D_TAIL_TERMS * sizeof(double), cudaMemcpyHostToDevice,
                                 stream),
                 "cudaMemcpyAsync(psf_tail, host to device)");
    gw_range_pop();
    gw_range_push("ex2d/poison");
    /* Poison before the launch: an output element no patch wrote stays NaN and cannot pass a comparison. */
    double *const outs[] = {d.out.flux, d.out.ivar, d.out.chi2pix, d.out.pixmask_fraction};
    for (size_t i = 0; i < 4; i++)
        CUDA_TRY(cudaMemsetAsync(outs[i], 0xFF, nframe * sizeof(double), stream), "cudaMemsetAsync(output poison)");
    CUDA_TRY(cudaMemsetAsync(d.out.rdiags, 0xFF, nrdiag * sizeof(double), stream), "cudaMemsetAsync(rdiags poison)");
    CUDA_TRY(cudaMemsetAsync(d.out.info, 0xFF, npatch * sizeof(ex2d_patch_info), stream),
             "cudaMemsetAsync(info poison)");
    CUDA_TRY(cudaMemsetAsync(d.witness, 0, EX2D_WITNESS_SLOTS * sizeof(gw_witness), stream),
             "cudaMemsetAsync(witness)");
    gw_range_pop();

    gw_range_push("ex2d/K1 spots");
    CUDA_TRY(cudaEventRecord(ev[0], stream), "cudaEventRecord");
    CUDA_TRY(ex2d_spots_launch(p, &d_in, 0, (int)ntab, d.spots, d.witness + EX2D_W_SPOTS, stream),
             "ex2d_spots_launch");
    gw_range_pop();
    for (int first = 0; first < f->npatch; first += res->max_batch) {
        const int count = f->npatch - first < res->max_batch ? f->npatch - first : res->max_batch;
        gw_range_push("ex2d/K3-K7 batch");
        const cudaError_t launched = ex2d_patches_launch(p, &d_in, d.spots, first, count, res->max_batch, d.ws,
                                                         ws_bytes, &d.out, d.witness, stream);
        if (launched != cudaSuccess) {
            /* the host-side rule that refused the call, when it was one */
            const int why = ex2d_check_args(p, &d_in, first, count, res->max_batch, d.ws, ws_bytes);
            snprintf(err, err_size, "ex2d_patches_launch (patches %d..%d, batch %d) failed: %s (%s)%s%s", first,
                     first + count - 1, res->max_batch, cudaGetErrorString(launched), cudaGetErrorName(launched),
                     why ? ": " : "", why ? ex2d_error_str(why) : "");
            goto fail;
        }
        res->batches++;
        /* the check word sits at the start of the workspace (ex2d_workspace_carve) */
        CUDA_TRY(cudaMemcpyAsync(&res->check, d.ws, sizeof res->check, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync(check word, device to host)");
        CUDA_TRY(cudaStreamSynchronize(stream), "ex2d_patches_launch on the stream (cudaStreamSynchronize)");
        gw_range_pop();
        gw_ex2d_progress_update(pr, first + count);
        if (res->check.code != EX2D_OK) break; /* validation rejected this batch: nothing was extracted */
    }
    CUDA_TRY(cudaEventRecord(ev[1], stream), "cudaEventRecord");

    gw_range_push("ex2d/download");
    const struct {
        void *dst;
        const void *src;
        size_t bytes;
        const char *what;
    } down[] = {
        {res->witness, d.witness, EX2D_WITNESS_SLOTS * sizeof(gw_witness), "cudaMemcpyAsync(witness, device to host)"},
        {out->flux, d.out.flux, nframe * sizeof(double), "cudaMemcpyAsync(flux, device to host)"},
        {out->ivar, d.out.ivar, nframe * sizeof(double), "cudaMemcpyAsync(ivar, device to host)"},
        {out->rdiags, d.out.rdiags, nrdiag * sizeof(double), "cudaMemcpyAsync(rdiags, device to host)"},
        {out->chi2pix, d.out.chi2pix, nframe * sizeof(double), "cudaMemcpyAsync(chi2pix, device to host)"},
        {out->pixmask_fraction, d.out.pixmask_fraction, nframe * sizeof(double),
         "cudaMemcpyAsync(pixmask_fraction, device to host)"},
        {out->info, d.out.info, npatch * sizeof(ex2d_patch_info), "cudaMemcpyAsync(info, device to host)"},
    };
    for (size_t i = 0; i < sizeof down / sizeof down[0]; i++)
        CUDA_TRY(cudaMemcpyAsync(down[i].dst, down[i].src, down[i].bytes, cudaMemcpyDeviceToHost, stream),
                 down[i].what);
    CUDA_TRY(cudaStreamSynchronize(stream), "ex2d download (cudaStreamSynchronize)");
    gw_range_pop();
    res->ms_end_to_end = gw_cli_now_ms() - t0;
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, ev[0], ev[1]), "cudaEventElapsedTime");
    res->ms_kernel = ms;
    if (res->check.code == EX2D_OK) check_witness(f, out, &facts, res);
    rc = 0;
fail:
    if (stream) cudaStreamSynchronize(stream); /* nothing may still be writing into host buffers */
    gw_range_pop_to(range_depth);
    {
        cudaError_t first = cudaSuccess;
        const char *what = NULL;
        dev_free(&d, &first, &what);
        for (int i = 0; i < 2; i++)
            if (ev[i]) gw_cli_cuda_keep_first(cudaEventDestroy(ev[i]), "cudaEventDestroy", &first, &what);
        if (stream) gw_cli_cuda_keep_first(cudaStreamDestroy(stream), "cudaStreamDestroy", &first, &what);
        if (first != cudaSuccess && rc == 0) {
            gw_cli_cuda_fail(err, err_size, what, first);
            rc = -1;
        }
    }
    return rc;
}

void gw_ex2d_print_witness(const gw_ex2d_gpu_result *res, const char *indent)
{
    for (int s = 0; s < EX2D_WITNESS_SLOTS; s++) printf("%s%s\n", indent, res->witness_receipt[s]);
    char findings[sizeof res->witness_check];
    memcpy(findings, res->witness_check, sizeof findings);
    char *save = NULL;
    for (char *line = strtok_r(findings, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        printf("%s  witness %s%s\n", indent, res->witness_violations ? "violation or warning: " : "", line);
}
