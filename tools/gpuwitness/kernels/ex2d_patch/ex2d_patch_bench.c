/* SPDX-License-Identifier: MIT
 * gpuwitness bench cases for ex2d_patch (docs/ex2d_patch.md, "Performance model and targets") on the synthetic
 * r-camera frames of reference/ex2d_patch/ex2d_synth.h: tier S (smoke), M (one 7 x 74 patch), L (one subbundle,
 * 47 patches) and the full frame XL (4,700 patches; realistic and full sizes), plus XL_BUNDLE (235 patches) at
 * the full size.
 * Per case:
 *   - host synthesis time (ex2d_frame_make: table, spots, image), reported in params, never in a timing;
 *   - the CPU reference, K1 (ex2d_ref_spots) then ex2d_ref_patches, on all threads and on one; for the full
 *     frame the single-threaded run covers bundle 0 only (the subset rule of docs/ex2d_patch.md, "Tiers"),
 *     labelled in params and scaled by the report (cpu_1t_work). Both must agree bit for bit where they
 *     overlap, and every frame output must be finite with every patch OK;
 *   - on the GPU, inputs resident: kernel-only time = ex2d_spots_launch (K1, every table entry) plus
 *     ex2d_patches_launch (validation, K3..K7) with the witness, and again without it; end-to-end time =
 *     upload of image, ivar, PSF table and patch table from pinned memory, the same launches, download of
 *     the frame outputs and info. The workspace is allocated once, max_batch from the free memory. Outputs
 *     and spots are poisoned before every repetition; after every loop the outputs are checked against the
 *     reference with the tolerances of docs/ex2d_patch.md, "Numerics and tolerances", and the seven witness
 *     records against the expected counts.
 * Figures: patches/s (work), a FLOP model (flop_model below), its GFLOP/s and percent of the FP64 rate
 * reference measured once per run (gw_bench_fp64.cu). roofline_percent (bytes / copy roofline) is reported
 * but is tiny for this compute-bound kernel; --min-roofline reads the FP64 percentage for these rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ex2d_patch.h"
#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"
#include "ex2d_patch_host.h"
#include "gw_bench.h"
#include "gw_kernel.h"
#include "gw_cli_cuda.h"
#include "gw_trace_range.h"
#include "gw_witness_check.h"

typedef struct ex2d_case {
    int tier;         /* ex2d_tier */
    const char *name; /* case id stem */
} ex2d_case;

static const ex2d_case smoke_cases[] = {{EX2D_TIER_S, "s"}};
static const ex2d_case small_cases[] = {{EX2D_TIER_S, "s"}, {EX2D_TIER_M, "m"}};
static const ex2d_case realistic_cases[] = {{EX2D_TIER_M, "m"}, {EX2D_TIER_L, "l"}, {EX2D_TIER_XL_FRAME, "xl-frame"}};
static const ex2d_case full_cases[] = {
    {EX2D_TIER_M, "m"}, {EX2D_TIER_L, "l"}, {EX2D_TIER_XL_BUNDLE, "xl-bundle"}, {EX2D_TIER_XL_FRAME, "xl-frame"}};
static const gw_bench_cases cases_by_tier[] = {
    [GW_BENCH_SMOKE] = GW_BENCH_CASES(smoke_cases), [GW_BENCH_SMALL] = GW_BENCH_CASES(small_cases),
    [GW_BENCH_REALISTIC] = GW_BENCH_CASES(realistic_cases), [GW_BENCH_FULL] = GW_BENCH_CASES(full_cases)};

/* CPU reference batch: enough patches per chunk to keep every thread busy, few enough to stay near 300 MB
 * of workspace at n = 518. */
#define EX2D_CPU_MAX_BATCH 64

static size_t frame_bins(const ex2d_params *p)
{
    return (size_t)p->nspec_out * (size_t)p->nwave_out;
}

static size_t rdiag_count(const ex2d_params *p)
{
    return frame_bins(p) * (size_t)(2 * p->ndiag + 1);
}

static size_t table_entries(const ex2d_params *p)
{
    return (size_t)p->nspec_tab * (size_t)p->nwave_tab;
}

/* ---- what one case needs to know about its patches: witness counts and the FLOP model ---- */

typedef struct ex2d_counts {
    uint64_t pairs;      /* overlapping bin pairs a <= b (K3's witness items) */
    uint64_t blocks;     /* core blocks: K5, K6 */
    uint64_t core_bins;  /* K7 */
    double flops;        /* the model, for the whole case */
} ex2d_counts;

/* FLOPs of one call in the dense-equivalent model of docs/benchmarks.md (the per-patch costs behind it:
 * docs/ex2d_patch.md, "Performance model and targets"; a model, not a count of executed instructions): K1 per
 * pixel sum_i Px_i (sum_j c_ij Py_j) and the normalisation; K3 three FLOPs per shared pixel of every overlapping
 * pair plus y and fluxweight; K4 n^3/3 + 2n^2; K5 per core block the forward substitution of m columns over the
 * r = n - b*m rows below the block and X^T X (m r^2 + m^2 r); K6 12 m^3 per sweep (6 m^3 multiply-adds) at the
 * mean of the reference's sweeps_min and sweeps_max, plus 2 m^3 for Q; K7 R and flux (3 m^2 per block), the
 * model, chi2pix and pixmask_fraction (6 per spot pixel and bin). */
static int ex2d_count(const ex2d_frame *f, const ex2d_patch_info *info, ex2d_counts *c)
{
    const ex2d_params *p = &f->params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, spot = nx * ny;
    const double m = p->m;
    memset(c, 0, sizeof *c);
    /* The corners of one patch's bins, gathered once: the pair loop below is n^2/2 per patch. */
    int32_t *xc = malloc((size_t)p->max_nspecpad * (size_t)p->m * sizeof *xc);
    int32_t *yc = malloc((size_t)p->max_nspecpad * (size_t)p->m * sizeof *yc);
    if (!xc || !yc) {
        free(xc);
        free(yc);
        return -1;
    }
    c->flops = (double)table_entries(p) * spot * ((p->gx + 1) * (2.0 * (p->gy + 1) + 2.0) + 2.0);
    for (int i = 0; i < f->npatch; i++) {
        const ex2d_patch_desc *d = &f->patches[i];
        const int n = d->nspecpad * p->m;
        for (int k = 0; k < n; k++) {
            const int64_t e = ex2d_ref_entry(p, d, k);
            xc[k] = f->xc[e];
            yc[k] = f->yc[e];
        }
        double shared = 0;
        for (int a = 0; a < n; a++) { /* the overlap rule of ex2d_ref_count_pairs */
            for (int b = a; b < n; b++) {
                const int dx = abs(xc[a] - xc[b]), dy = abs(yc[a] - yc[b]);
                if (dx >= nx || dy >= ny) continue;
                c->pairs++;
                shared += (double)(nx - dx) * (ny - dy);
            }
        }
        const double sweeps = 0.5 * (info[i].sweeps_min + info[i].sweeps_max);
        c->flops += 3 * shared + 4.0 * spot * n;
        c->flops += (double)n * n * n / 3 + 2.0 * n * n;
        for (int b = 0; b < d->ncore; b++) {
            const double r = n - (double)(d->core_first + b) * m;
            c->flops += m * r * r + m * m * r + (12 * sweeps + 2) * m * m * m + 3 * m * m;
        }
        c->flops += 6.0 * spot * n;
        c->blocks += (uint64_t)d->ncore;
        c->core_bins += (uint64_t)d->ncore * (uint64_t)d->ncore_wave;
    }
    free(xc);
    free(yc);
    return 0;
}

/* ---- the CPU reference ---- */

typedef struct ex2d_cpu_args {
    ex2d_frame *f;
    int patch_first, npatch;  /* the patches run */
    int entry_first, entries; /* the table entries whose spots they read */
    void *ws;
    size_t ws_bytes;
    int max_batch;
    const ex2d_outputs *out;
    int threads;
} ex2d_cpu_args;

/* K1 into the frame's own spots (the same function made them: the bytes do not change), then K3..K7. */
static int ex2d_cpu_call(void *ctx)
{
    const ex2d_cpu_args *c = ctx;
    const ex2d_params *p = &c->f->params;
    const int rc = ex2d_ref_spots(p, &c->f->inputs, c->entry_first, c->entries, c->f->spots, c->threads);
    if (rc) return rc;
    return ex2d_ref_patches(p, &c->f->inputs, c->f->spots, c->patch_first, c->npatch, c->max_batch, c->ws,
                            c->ws_bytes, c->out, c->threads);
}

static void outputs_poison(const ex2d_params *p, int npatch, const ex2d_outputs *o, int byte)
{
    const size_t bins = frame_bins(p);
    memset(o->flux, byte, bins * sizeof(double));
    memset(o->ivar, byte, bins * sizeof(double));
    memset(o->rdiags, byte, rdiag_count(p) * sizeof(double));
    memset(o->chi2pix, byte, bins * sizeof(double));
    memset(o->pixmask_fraction, byte, bins * sizeof(double));
    memset(o->info, byte, (size_t)npatch * sizeof(ex2d_patch_info));
}

/* The patches of bundle 0 (patches are subbundle-major, so they are a prefix), and the frame rows they
 * write. */
static int bundle0_patches(const ex2d_frame *f, int *rows)
{
    int k = 0;
    *rows = 0;
    while (k < f->npatch && f->patches[k].out_spec_first < f->cfg.bundle_size) {
        const ex2d_patch_desc *d = &f->patches[k++];
        if (d->out_spec_first + d->ncore > *rows) *rows = d->out_spec_first + d->ncore;
    }
    return k;
}

/* The first n_rows frame rows of a and b (all of them for n_rows = nspec_out) are equal bytes. */
static int outputs_equal(const ex2d_params *p, int n_rows, int npatch, const ex2d_outputs *a, const ex2d_outputs *b)
{
    const size_t bins = (size_t)n_rows * (size_t)p->nwave_out, rd = bins * (size_t)(2 * p->ndiag + 1);
    return !memcmp(a->flux, b->flux, bins * sizeof(double)) && !memcmp(a->ivar, b->ivar, bins * sizeof(double)) &&
           !memcmp(a->rdiags, b->rdiags, rd * sizeof(double)) &&
           !memcmp(a->chi2pix, b->chi2pix, bins * sizeof(double)) &&
           !memcmp(a->pixmask_fraction, b->pixmask_fraction, bins * sizeof(double)) &&
           !memcmp(a->info, b->info, (size_t)npatch * sizeof(ex2d_patch_info));
}

/* Cores tile the frame, so every element must have been written (the poison is NaN) and every patch OK. */
static int reference_complete(const ex2d_frame *f, const ex2d_outputs *o, char *msg, size_t msg_size)
{
    const ex2d_params *p = &f->params;
    const size_t bins = frame_bins(p);
    for (int i = 0; i < f->npatch; i++) {
        if (o->info[i].status != EX2D_PATCH_OK) {
            snprintf(msg, msg_size, "patch %d: %s", i, ex2d_patch_status_str(o->info[i].status));
            return -1;
        }
    }
    const struct {
        const char *name;
        const double *v;
        size_t count;
    } arrays[] = {{"flux", o->flux, bins}, {"ivar", o->ivar, bins}, {"rdiags", o->rdiags, rdiag_count(p)},
                  {"chi2pix", o->chi2pix, bins}, {"pixmask_fraction", o->pixmask_fraction, bins}};
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        for (size_t k = 0; k < arrays[a].count; k++) {
            if (!isfinite(arrays[a].v[k])) {
                snprintf(msg, msg_size, "%s[%zu] is %g: not written or not finite", arrays[a].name, k, arrays[a].v[k]);
                return -1;
            }
        }
    }
    return 0;
}

typedef struct ex2d_cpu {
    void *ws;
    size_t ws_bytes;
    int max_batch;
} ex2d_cpu;

/* Both reference runs, timed; the reference result stays in ref. */
static void ex2d_cpu_run(gw_bench_run *run, ex2d_frame *f, const ex2d_cpu *cpu, const ex2d_outputs *ref,
                         const ex2d_outputs *one, int subset, int cpu_reps, gw_bench_row *row)
{
    const ex2d_params *p = &f->params;
    char msg[512];
    row->cpu_mt_threads = gw_bench_cpu_threads();
    outputs_poison(p, f->npatch, ref, 0xFF);
    outputs_poison(p, f->npatch, one, 0xFF);
    ex2d_cpu_args mt = {f, 0, f->npatch, 0, (int)table_entries(p), cpu->ws, cpu->ws_bytes, cpu->max_batch, ref,
                        row->cpu_mt_threads};
    gw_bench_progress(run, "ex2d %s: K1 + ex2d_ref_patches, %d threads, repetitions: %d", row->case_id,
                      row->cpu_mt_threads, cpu_reps);
    int rc = gw_bench_cpu_time(cpu_reps, ex2d_cpu_call, &mt, &row->cpu_mt_ms);
    if (rc) {
        gw_bench_row_fail(row, "the CPU reference (%d threads) returned %d: %s", row->cpu_mt_threads, rc,
                          ex2d_error_str(rc));
        return;
    }
    if (reference_complete(f, ref, msg, sizeof msg)) {
        gw_bench_row_fail(row, "the CPU reference: %s", msg);
        return;
    }
    /* One thread: all patches, or bundle 0 of a full frame (its table spectra are a contiguous range). */
    ex2d_cpu_args st = mt;
    st.out = one;
    st.threads = 1;
    int rows = p->nspec_out;
    if (subset) {
        st.npatch = bundle0_patches(f, &rows);
        const ex2d_patch_desc *last = &f->patches[st.npatch - 1];
        st.entries = (last->spec_first + last->nspecpad) * p->nwave_tab;
        row->cpu_1t_work = st.npatch;
    }
    gw_bench_progress(run, "ex2d %s: K1 + ex2d_ref_patches, 1 thread, %d patches, repetitions: %d", row->case_id,
                      st.npatch, cpu_reps);
    rc = gw_bench_cpu_time(cpu_reps, ex2d_cpu_call, &st, &row->cpu_1t_ms);
    if (rc) {
        gw_bench_row_fail(row, "the CPU reference (1 thread) returned %d: %s", rc, ex2d_error_str(rc));
        return;
    }
    if (!outputs_equal(p, rows, st.npatch, one, ref))
        gw_bench_row_fail(row, "the CPU reference on 1 thread differs from %d threads", row->cpu_mt_threads);
}

/* ---- --dump-inputs: what a dense peer needs to build A per patch, and our outputs ---- */

static void ex2d_dump(gw_bench_run *run, const ex2d_frame *f, const ex2d_outputs *ref, gw_bench_row *row)
{
    const ex2d_params *p = &f->params;
    char dir[4096], err[768];
    int rc = gw_bench_dump_dir(run, row->kernel, row->case_id, dir, sizeof dir, err, sizeof err);
    if (rc == 1) return;
    cJSON *inputs = cJSON_CreateObject(), *reference = cJSON_CreateObject();
    if (rc == 0 && (!inputs || !reference)) {
        snprintf(err, sizeof err, "out of memory dumping %s", row->case_id);
        rc = -1;
    }
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, nd = 2 * p->ndiag + 1;
    const int64_t image[2] = {p->npix_y, p->npix_x}, table[2] = {p->nspec_tab, p->nwave_tab};
    const int64_t spots[3] = {(int64_t)table_entries(p), ny, nx};
    const int64_t patches[2] = {f->npatch, sizeof(ex2d_patch_desc) / sizeof(int32_t)};
    const int64_t frame[2] = {p->nspec_out, p->nwave_out}, rdiags[3] = {p->nspec_out, nd, p->nwave_out};
    const int64_t info[2] = {f->npatch, sizeof(ex2d_patch_info) / sizeof(int32_t)};
    const struct {
        const char *prefix, *key;
        gw_npy_dtype dtype;
        int ndim;
        const int64_t *shape;
        const void *data;
        cJSON *files;
    } arrays[] = {
        {"", "image", GW_NPY_F8, 2, image, f->image, inputs},
        {"", "ivar", GW_NPY_F8, 2, image, f->ivar, inputs},
        {"", "spots", GW_NPY_F8, 3, spots, f->spots, inputs},
        {"", "xc", GW_NPY_I4, 2, table, f->xc, inputs},
        {"", "yc", GW_NPY_I4, 2, table, f->yc, inputs},
        {"", "patches", GW_NPY_I4, 2, patches, f->patches, inputs},
        {"ref_", "flux", GW_NPY_F8, 2, frame, ref->flux, reference},
        {"ref_", "ivar", GW_NPY_F8, 2, frame, ref->ivar, reference},
        {"ref_", "rdiags", GW_NPY_F8, 3, rdiags, ref->rdiags, reference},
        {"ref_", "chi2pix", GW_NPY_F8, 2, frame, ref->chi2pix, reference},
        {"ref_", "pixmask_fraction", GW_NPY_F8, 2, frame, ref->pixmask_fraction, reference},
        {"ref_", "info", GW_NPY_I4, 2, info, ref->info, reference},
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0] && rc == 0; i++)
        rc = gw_bench_dump_npy(dir, arrays[i].prefix, arrays[i].key, arrays[i].dtype, arrays[i].ndim, arrays[i].shape,
                               arrays[i].data, arrays[i].files, err, sizeof err);
    gw_bench_dump_finish(run, row, rc, inputs, reference, err);
}

/* ---- the GPU part ---- */

/* One host array and its device copy: the inputs are uploaded and the outputs downloaded by the
 * end-to-end loop, from and to pinned memory. */
typedef struct ex2d_buf {
    const char *name;
    const void *host; /* the frame's array (inputs) */
    void *pinned, *dev;
    size_t bytes;
} ex2d_buf;

enum { IN_IMAGE, IN_IVAR, IN_SIGX, IN_SIGY, IN_DX, IN_DY, IN_C, IN_XC, IN_YC, IN_PATCHES, N_IN };
enum { OUT_FLUX, OUT_IVAR, OUT_RDIAGS, OUT_CHI2PIX, OUT_PIXMASK, OUT_INFO, N_OUT };

typedef struct ex2d_ctx {
    const ex2d_frame *f;
    ex2d_buf in[N_IN], out[N_OUT];
    ex2d_inputs d_in;
    ex2d_outputs d_out, h_out; /* h_out: the pinned output buffers */
    double *d_spots;
    void *d_ws;
    size_t ws_bytes;
    int max_batch;
    gw_witness *d_witness; /* EX2D_WITNESS_SLOTS records */
    cudaStream_t stream;
    const ex2d_outputs *ref;   /* what every loop's outputs must match (docs/ex2d_patch.md tolerances) */
    const ex2d_counts *counts; /* the witness counts of one call */
    gw_bench_mode mode;
    int reps;
    int device_arch, device_sms, emulated;
} ex2d_ctx;

static int ex2d_prepare(void *ctx, int rep, char *err, size_t err_size)
{
    ex2d_ctx *c = ctx;
    /* NaN or 1.4e306 in every double: either fails every output tolerance, and a status of -1 or 0x7f7f7f7f is
     * no status. The spots are poisoned too, so a K1 that did not run cannot hide behind the last one. */
    const int poison = (rep & 1) ? 0x7F : 0xFF;
    for (int k = 0; k < N_OUT; k++)
        CUDA_TRY(cudaMemsetAsync(c->out[k].dev, poison, c->out[k].bytes, c->stream), "cudaMemsetAsync(poison)");
    CUDA_TRY(cudaMemsetAsync(c->d_spots, poison, table_entries(&c->f->params) * (size_t)(2 * c->f->params.hsizex + 1) *
                                                     (size_t)(2 * c->f->params.hsizey + 1) * sizeof(double),
                             c->stream),
             "cudaMemsetAsync(spots poison)");
    /* The witness adds up every timed repetition. */
    if (rep == 0 && c->mode != GW_BENCH_KERNEL_NO_WITNESS)
        CUDA_TRY(cudaMemsetAsync(c->d_witness, 0, EX2D_WITNESS_SLOTS * sizeof *c->d_witness, c->stream),
                 "cudaMemsetAsync(witness)");
    return 0;
fail:
    return -1;
}

static int ex2d_launch(void *ctx, char *err, size_t err_size)
{
    ex2d_ctx *c = ctx;
    const ex2d_params *p = &c->f->params;
    gw_witness *w = c->mode == GW_BENCH_KERNEL_NO_WITNESS ? NULL : c->d_witness;
    /* NVTX ranges per stage of the end-to-end loop, for --trace and Nsight; the kernel-only loops get none, so
     * nothing is added between their events and the launches. Closed on failure. */
    const int e2e = c->mode == GW_BENCH_END_TO_END, range_depth = gw_range_depth();
    if (e2e) {
        gw_range_push("ex2d/upload");
        for (int k = 0; k < N_IN; k++)
            CUDA_TRY(cudaMemcpyAsync(c->in[k].dev, c->in[k].pinned, c->in[k].bytes, cudaMemcpyHostToDevice, c->stream),
                     "cudaMemcpyAsync(input, host to device)");
        gw_range_pop();
        gw_range_push("ex2d/launch");
    }
    cudaError_t e = ex2d_spots_launch(p, &c->d_in, 0, (int)table_entries(p), c->d_spots,
                                      w ? w + EX2D_W_SPOTS : NULL, c->stream);
    if (e == cudaSuccess)
        e = ex2d_patches_launch(p, &c->d_in, c->d_spots, 0, c->f->npatch, c->max_batch, c->d_ws, c->ws_bytes,
                                &c->d_out, w, c->stream);
    if (e != cudaSuccess) {
        const int why = ex2d_check_args(p, &c->d_in, 0, c->f->npatch, c->max_batch, c->d_ws, c->ws_bytes);
        snprintf(err, err_size, "ex2d launch failed: %s (%s); argument check: %s", cudaGetErrorString(e),
                 cudaGetErrorName(e), ex2d_error_str(why));
        goto fail;
    }
    if (e2e) {
        gw_range_pop();
        gw_range_push("ex2d/download");
        for (int k = 0; k < N_OUT; k++)
            CUDA_TRY(cudaMemcpyAsync(c->out[k].pinned, c->out[k].dev, c->out[k].bytes, cudaMemcpyDeviceToHost,
                                     c->stream),
                     "cudaMemcpyAsync(output, device to host)");
        gw_range_pop();
    }
    return 0;
fail:
    gw_range_pop_to(range_depth);
    return -1;
}

static void buf_set(ex2d_buf *b, const char *name, const void *host, size_t bytes)
{
    b->name = name;
    b->host = host;
    b->bytes = bytes;
}

/* The largest batch whose workspace fits in half the free memory (the rest stays for the driver and the
 * other buffers), at most every patch. */
static int choose_max_batch(const ex2d_params *p, int npatch, char *err, size_t err_size)
{
    size_t free_bytes = 0, total = 0;
    CUDA_TRY(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    const size_t slot = ex2d_workspace_bytes(p, 1);
    if (slot == 0) {
        snprintf(err, err_size, "ex2d_workspace_bytes: the params are outside this build's limits");
        return -1;
    }
    size_t fit = free_bytes / 2 / slot;
    if (fit > (size_t)npatch) fit = (size_t)npatch;
    if (fit < 1) {
        snprintf(err, err_size, "%zu MiB free: not enough for one patch's %zu MiB workspace", free_bytes >> 20,
                 slot >> 20);
        return -1;
    }
    return (int)fit;
fail:
    return -1;
}

static int ex2d_ctx_init(ex2d_ctx *c, gw_bench_run *run, const ex2d_frame *f, char *err, size_t err_size)
{
    const ex2d_params *p = &f->params;
    const size_t image = (size_t)p->npix_x * (size_t)p->npix_y * sizeof(double), tab = table_entries(p);
    const size_t bins = frame_bins(p) * sizeof(double);
    memset(c, 0, sizeof *c);
    c->f = f;
    c->device_arch = run->gpu->facts.cc_major * 100 + run->gpu->facts.cc_minor * 10;
    c->device_sms = run->gpu->facts.sm_count;
    c->emulated = run->gpu->facts.emulated;
    buf_set(&c->in[IN_IMAGE], "image", f->image, image);
    buf_set(&c->in[IN_IVAR], "ivar", f->ivar, image);
    buf_set(&c->in[IN_SIGX], "psf_sigx", f->sigx, tab * sizeof(double));
    buf_set(&c->in[IN_SIGY], "psf_sigy", f->sigy, tab * sizeof(double));
    buf_set(&c->in[IN_DX], "psf_dx", f->dx, tab * sizeof(double));
    buf_set(&c->in[IN_DY], "psf_dy", f->dy, tab * sizeof(double));
    buf_set(&c->in[IN_C], "psf_c", f->psf_c, tab * (size_t)((p->gx + 1) * (p->gy + 1)) * sizeof(double));
    buf_set(&c->in[IN_XC], "psf_xc", f->xc, tab * sizeof(int32_t));
    buf_set(&c->in[IN_YC], "psf_yc", f->yc, tab * sizeof(int32_t));
    buf_set(&c->in[IN_PATCHES], "patches", f->patches, (size_t)f->npatch * sizeof(ex2d_patch_desc));
    buf_set(&c->out[OUT_FLUX], "flux", NULL, bins);
    buf_set(&c->out[OUT_IVAR], "ivar", NULL, bins);
    buf_set(&c->out[OUT_RDIAGS], "rdiags", NULL, rdiag_count(p) * sizeof(double));
    buf_set(&c->out[OUT_CHI2PIX], "chi2pix", NULL, bins);
    buf_set(&c->out[OUT_PIXMASK], "pixmask_fraction", NULL, bins);
    buf_set(&c->out[OUT_INFO], "info", NULL, (size_t)f->npatch * sizeof(ex2d_patch_info));
    CUDA_TRY(cudaSetDevice(run->gpu->ordinal), "cudaSetDevice");
    CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    ex2d_buf *all[N_IN + N_OUT];
    for (int k = 0; k < N_IN; k++) all[k] = &c->in[k];
    for (int k = 0; k < N_OUT; k++) all[N_IN + k] = &c->out[k];
    for (int k = 0; k < N_IN + N_OUT; k++) {
        CUDA_TRY(cudaMalloc(&all[k]->dev, all[k]->bytes), "cudaMalloc(frame array)");
        CUDA_TRY(cudaMallocHost(&all[k]->pinned, all[k]->bytes), "cudaMallocHost(frame array)");
        if (all[k]->host) memcpy(all[k]->pinned, all[k]->host, all[k]->bytes);
    }
    const size_t spot_bytes = tab * (size_t)(2 * p->hsizex + 1) * (size_t)(2 * p->hsizey + 1) * sizeof(double);
    CUDA_TRY(cudaMalloc((void **)&c->d_spots, spot_bytes), "cudaMalloc(spots)");
    CUDA_TRY(cudaMalloc((void **)&c->d_witness, EX2D_WITNESS_SLOTS * sizeof *c->d_witness), "cudaMalloc(witness)");
    c->d_in = (ex2d_inputs){c->in[IN_IMAGE].dev, c->in[IN_IVAR].dev, c->in[IN_SIGX].dev, c->in[IN_SIGY].dev,
                            c->in[IN_DX].dev, c->in[IN_DY].dev, c->in[IN_C].dev, c->in[IN_XC].dev, c->in[IN_YC].dev,
                            c->in[IN_PATCHES].dev, f->npatch, NULL}; /* bench: the synthetic PSF, no tail */
    c->d_out = (ex2d_outputs){c->out[OUT_FLUX].dev, c->out[OUT_IVAR].dev, c->out[OUT_RDIAGS].dev,
                              c->out[OUT_CHI2PIX].dev, c->out[OUT_PIXMASK].dev, c->out[OUT_INFO].dev};
    c->h_out = (ex2d_outputs){c->out[OUT_FLUX].pinned, c->out[OUT_IVAR].pinned, c->out[OUT_RDIAGS].pinned,
                              c->out[OUT_CHI2PIX].pinned, c->out[OUT_PIXMASK].pinned, c->out[OUT_INFO].pinned};
    /* The workspace last, sized by what the other buffers left free; allocated once, outside every loop. */
    c->max_batch = choose_max_batch(p, f->npatch, err, err_size);
    if (c->max_batch < 1) return -1;
    c->ws_bytes = ex2d_workspace_bytes(p, c->max_batch);
    CUDA_TRY(cudaMalloc(&c->d_ws, c->ws_bytes), "cudaMalloc(workspace)");
    return 0;
fail:
    return -1;
}

static int ex2d_ctx_free(ex2d_ctx *c, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    if (c->stream) gw_cli_cuda_keep_first(cudaStreamSynchronize(c->stream), "cudaStreamSynchronize", &first, &what);
    for (int k = 0; k < N_IN + N_OUT; k++) {
        ex2d_buf *b = k < N_IN ? &c->in[k] : &c->out[k - N_IN];
        if (b->dev) gw_cli_cuda_keep_first(cudaFree(b->dev), "cudaFree(frame array)", &first, &what);
        if (b->pinned) gw_cli_cuda_keep_first(cudaFreeHost(b->pinned), "cudaFreeHost(frame array)", &first, &what);
    }
    if (c->d_spots) gw_cli_cuda_keep_first(cudaFree(c->d_spots), "cudaFree(spots)", &first, &what);
    if (c->d_witness) gw_cli_cuda_keep_first(cudaFree(c->d_witness), "cudaFree(witness)", &first, &what);
    if (c->d_ws) gw_cli_cuda_keep_first(cudaFree(c->d_ws), "cudaFree(workspace)", &first, &what);
    if (c->stream) gw_cli_cuda_keep_first(cudaStreamDestroy(c->stream), "cudaStreamDestroy", &first, &what);
    memset(c, 0, sizeof *c);
    if (first == cudaSuccess) return 0;
    gw_cli_cuda_fail(err, err_size, what, first);
    return -1;
}

/* Counts |got - ref| > atol + rtol |ref| (pull: |got - ref| sqrt(ivar_ref) > atol) and names the first; NaN
 * fails. Returns the count. */
static size_t compare(const char *name, const double *got, const double *ref, const double *ivar_ref, size_t count,
                      double atol, double rtol, char *msg, size_t msg_size)
{
    size_t bad = 0;
    for (size_t k = 0; k < count; k++) {
        const double diff = fabs(got[k] - ref[k]) * (ivar_ref ? sqrt(ivar_ref[k]) : 1.0);
        if (diff <= atol + rtol * fabs(ref[k])) continue;
        if (bad++ == 0)
            snprintf(msg, msg_size, "%s[%zu] = %.17g, reference %.17g (%s %.3g)", name, k, got[k], ref[k],
                     ivar_ref ? "pull" : "|diff|", diff);
    }
    return bad;
}

/* The tolerances of docs/ex2d_patch.md, "Numerics and tolerances", over the frame outputs, and every patch's
 * status. */
static int outputs_check(const ex2d_params *p, int npatch, const ex2d_outputs *got, const ex2d_outputs *ref, char *msg,
                         size_t msg_size)
{
    const size_t bins = frame_bins(p);
    size_t bad = 0;
    char first[512] = "";
    for (int i = 0; i < npatch; i++) {
        if (got->info[i].status == ref->info[i].status) continue;
        if (bad++ == 0)
            snprintf(first, sizeof first, "patch %d status %d, reference %d", i, got->info[i].status,
                     ref->info[i].status);
    }
    char m[512];
    const struct {
        const char *name;
        const double *got, *ref, *ivar;
        size_t count;
        double atol, rtol;
    } checks[] = {
        {"flux (pull)", got->flux, ref->flux, ref->ivar, bins, 1e-9, 0},
        {"ivar", got->ivar, ref->ivar, NULL, bins, 0, 1e-10},
        {"rdiags", got->rdiags, ref->rdiags, NULL, rdiag_count(p), 1e-10, 0},
        {"chi2pix", got->chi2pix, ref->chi2pix, NULL, bins, 1e-10, 1e-8},
        {"pixmask_fraction", got->pixmask_fraction, ref->pixmask_fraction, NULL, bins, 2e-12, 0},
    };
    for (size_t k = 0; k < sizeof checks / sizeof checks[0]; k++) {
        const size_t n = compare(checks[k].name, checks[k].got, checks[k].ref, checks[k].ivar, checks[k].count,
                                 checks[k].atol, checks[k].rtol, m, sizeof m);
        if (n && !first[0]) snprintf(first, sizeof first, "%s", m);
        bad += n;
    }
    if (bad) snprintf(msg, msg_size, "%zu values outside the tolerances of docs/ex2d_patch.md; first: %s", bad, first);
    return bad ? -1 : 0;
}

/* After a loop: the outputs against the reference (the kernel loops download here, into pinned buffers
 * filled with a third pattern first, so a failed download cannot look right), and the seven witness records
 * summed over the timed repetitions. */
static void ex2d_verify(void *ctx, gw_bench_row *row, const char *loop_name)
{
    ex2d_ctx *c = ctx;
    const ex2d_counts *n = c->counts;
    const ex2d_params *p = &c->f->params;
    char err[512], msg[2048];
    const size_t err_size = sizeof err;
    if (c->mode != GW_BENCH_END_TO_END) {
        for (int k = 0; k < N_OUT; k++) {
            memset(c->out[k].pinned, 0x5A, c->out[k].bytes);
            CUDA_TRY(cudaMemcpy(c->out[k].pinned, c->out[k].dev, c->out[k].bytes, cudaMemcpyDeviceToHost),
                     "cudaMemcpy(output, device to host)");
        }
    }
    const int diff = outputs_check(p, c->f->npatch, &c->h_out, c->ref, msg, sizeof msg);
    row->validated = diff == 0 && row->validated != 0;
    if (diff) {
        gw_bench_row_fail(row, "%s: the outputs after the timed loop differ from the CPU reference: %s", loop_name,
                          msg);
        return;
    }
    if (c->mode == GW_BENCH_KERNEL_NO_WITNESS) return;
    gw_witness w[EX2D_WITNESS_SLOTS];
    CUDA_TRY(cudaMemcpy(w, c->d_witness, sizeof w, cudaMemcpyDeviceToHost), "cudaMemcpy(witness)");
    const uint64_t reps = (uint64_t)c->reps, chunks = (uint64_t)((c->f->npatch + c->max_batch - 1) / c->max_batch);
    const struct {
        int slot;
        const char *stage;
        uint64_t launches, items;
    } expect[] = {
        {EX2D_W_SPOTS, "K1", 1, table_entries(p)},  {EX2D_W_VALIDATE, "validation", 1, (uint64_t)c->f->npatch},
        {EX2D_W_NORMAL, "K3", chunks, n->pairs},    {EX2D_W_CHOLESKY, "K4", chunks, (uint64_t)c->f->npatch},
        {EX2D_W_CBLOCKS, "K5", chunks, n->blocks},  {EX2D_W_JACOBI, "K6", chunks, n->blocks},
        {EX2D_W_OUTPUTS, "K7", chunks, n->core_bins},
    };
    size_t len = 0;
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        const gw_witness_expect e = {.launches = reps * expect[i].launches, .items = reps * expect[i].items,
                                     .device_arch = (unsigned)c->device_arch, .device_sms = (unsigned)c->device_sms,
                                     .emulated = c->emulated};
        if (gw_witness_check(&w[expect[i].slot], &e, msg, sizeof msg)) {
            msg[strcspn(msg, "\n")] = '\0';
            gw_bench_row_fail(row, "%s: the %s witness does not prove %d GPU runs: %s", loop_name, expect[i].stage,
                              c->reps, msg);
        }
    }
    /* The receipt of K1 and of K6, the stage that dominates the time. */
    len = (size_t)snprintf(row->witness, sizeof row->witness, "K1: ");
    gw_witness_format(&w[EX2D_W_SPOTS], row->witness + len, sizeof row->witness - len);
    len = strlen(row->witness);
    if (len + 8 < sizeof row->witness) {
        len += (size_t)snprintf(row->witness + len, sizeof row->witness - len, "; K6: ");
        gw_witness_format(&w[EX2D_W_JACOBI], row->witness + len, sizeof row->witness - len);
    }
    return;
fail:
    gw_bench_row_fail(row, "%s: %s", loop_name, err);
}

static gw_bench_loop ex2d_start(void *ctx, gw_bench_mode mode, int reps)
{
    ex2d_ctx *c = ctx;
    c->mode = mode;
    c->reps = reps;
    if (mode == GW_BENCH_END_TO_END)
        for (int k = 0; k < N_OUT; k++) memset(c->out[k].pinned, 0x5A, c->out[k].bytes);
    const gw_bench_loop loop = {.ctx = c, .stream = c->stream, .reps = reps, .prepare = ex2d_prepare,
                                .launch = ex2d_launch};
    return loop;
}

static void ex2d_gpu(gw_bench_run *run, ex2d_ctx *c, const ex2d_outputs *ref, const ex2d_counts *n,
                     gw_bench_row *row)
{
    char detail[32];
    snprintf(detail, sizeof detail, ", max_batch %d", c->max_batch);
    const gw_bench_case_gpu k = {.what = "ex2d", .detail = detail, .ctx = c, .start = ex2d_start,
                                 .verify = ex2d_verify};
    c->ref = ref;
    c->counts = n;
    gw_bench_gpu_loops(run, &k, row);
}

/* ---- one case ---- */

static void case_params(const ex2d_frame *f, const ex2d_case *k, double synth_ms, int cpu_reps, gw_bench_row *row)
{
    const ex2d_params *p = &f->params;
    cJSON *o = row->params = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tier", k->name);
    cJSON_AddNumberToObject(o, "patches", f->npatch);
    cJSON_AddNumberToObject(o, "fibres", f->cfg.nfibre);
    cJSON_AddNumberToObject(o, "wavelength_bins", f->cfg.nwave);
    cJSON_AddNumberToObject(o, "m", p->m);
    cJSON_AddNumberToObject(o, "n_max", p->max_nspecpad * p->m);
    cJSON_AddNumberToObject(o, "wavepad", p->wavepad);
    cJSON_AddNumberToObject(o, "ndiag", p->ndiag);
    cJSON_AddNumberToObject(o, "regularize", p->regularize);
    cJSON_AddNumberToObject(o, "psferr", p->psferr);
    cJSON_AddNumberToObject(o, "gx", p->gx);
    cJSON_AddNumberToObject(o, "gy", p->gy);
    cJSON_AddNumberToObject(o, "npix_x", p->npix_x);
    cJSON_AddNumberToObject(o, "npix_y", p->npix_y);
    cJSON_AddNumberToObject(o, "psf_table_entries", (double)table_entries(p));
    cJSON_AddNumberToObject(o, "noise_seed", (double)f->cfg.seed);
    cJSON_AddBoolToObject(o, "noise", f->cfg.add_noise);
    cJSON_AddNumberToObject(o, "host_synthesis_ms", synth_ms);
    cJSON_AddNumberToObject(o, "cpu_reps", cpu_reps);
    cJSON_AddNumberToObject(o, "cpu_max_batch", f->npatch < EX2D_CPU_MAX_BATCH ? f->npatch : EX2D_CPU_MAX_BATCH);
    cJSON_AddStringToObject(o, "kernel_time", "ex2d_spots_launch (every table entry) + ex2d_patches_launch, inputs "
                            "resident");
    cJSON_AddStringToObject(o, "flop_model", "dense-equivalent model of docs/benchmarks.md");
}

static int ex2d_run_case(gw_bench_run *run, const void *tier_case)
{
    const ex2d_case *k = tier_case;
    ex2d_frame_config cfg;
    ex2d_frame f;
    gw_bench_row row;
    gw_bench_row_init(&row, "ex2d_patch", "ex2d_spots_launch + ex2d_patches_launch", 1);
    memset(&f, 0, sizeof f);
    /* The tier's own configuration, noise seed included (the fixed default of docs/ex2d_patch.md,
     * "Truth, image and noise"): --seed is not used here. */
    if (ex2d_frame_config_tier(&cfg, k->tier)) {
        fprintf(stderr, "gpuwitness bench: ex2d tier %s: no such synthetic tier\n", k->name);
        return -1;
    }
    cfg.nthreads = 0;
    gw_bench_progress(run, "ex2d tier %s: synthesising the frame", k->name);
    const double t0 = gw_cli_now_ms();
    int rc = ex2d_frame_make(&cfg, &f);
    const double synth_ms = gw_cli_now_ms() - t0;
    if (rc) {
        fprintf(stderr, "gpuwitness bench: ex2d tier %s: ex2d_frame_make: %s\n", k->name, ex2d_synth_error_str(rc));
        return -1;
    }
    const ex2d_params *p = &f.params;
    const int subset = k->tier == EX2D_TIER_XL_FRAME;
    /* A full frame's reference takes minutes per call: one repetition there. */
    const int cpu_reps = subset || k->tier == EX2D_TIER_XL_BUNDLE ? 1 : run->cpu_reps;
    snprintf(row.case_id, sizeof row.case_id, "%s-%dpatches-n%d", k->name, f.npatch, p->max_nspecpad * p->m);
    snprintf(row.label, sizeof row.label, "tier %s: %d patch%s, %d core fibre%s x %d bins, n <= %d%s", k->name,
             f.npatch, f.npatch == 1 ? "" : "es", cfg.nfibre, cfg.nfibre == 1 ? "" : "s", cfg.nwave,
             p->max_nspecpad * p->m,
             subset ? "; CPU 1 thread on bundle 0" : "");
    case_params(&f, k, synth_ms, cpu_reps, &row);
    row.work = f.npatch;
    row.work_unit = "patches";
    /* Inputs read once (image, ivar, PSF table, patch table), frame outputs and info written once; the
     * spots are an intermediate. */
    const size_t tab = table_entries(p);
    row.bytes_moved = 2 * (uint64_t)p->npix_x * (uint64_t)p->npix_y * 8 +
                      tab * (4 * 8 + (uint64_t)(p->gx + 1) * (p->gy + 1) * 8 + 2 * 4) +
                      (uint64_t)f.npatch * (sizeof(ex2d_patch_desc) + sizeof(ex2d_patch_info)) +
                      (4 * frame_bins(p) + rdiag_count(p)) * 8;

    ex2d_outputs ref = {0}, one = {0};
    ex2d_cpu cpu = {NULL, 0, f.npatch < EX2D_CPU_MAX_BATCH ? f.npatch : EX2D_CPU_MAX_BATCH};
    if (ex2d_ref_outputs_alloc(p, f.npatch, &ref) || ex2d_ref_outputs_alloc(p, f.npatch, &one) ||
        ex2d_ref_workspace_alloc(p, cpu.max_batch, &cpu.ws, &cpu.ws_bytes)) {
        fprintf(stderr, "gpuwitness bench: out of memory for the ex2d tier %s reference\n", k->name);
        ex2d_ref_outputs_free(&ref);
        ex2d_ref_outputs_free(&one);
        ex2d_frame_free(&f);
        cJSON_Delete(row.params);
        return -1;
    }
    ex2d_cpu_run(run, &f, &cpu, &ref, &one, subset, cpu_reps, &row);
    free(cpu.ws);
    ex2d_ref_outputs_free(&one);
    ex2d_counts counts;
    memset(&counts, 0, sizeof counts);
    if (!row.error[0]) {
        if (ex2d_count(&f, ref.info, &counts)) gw_bench_row_fail(&row, "out of memory counting the work");
        row.flops = counts.flops;
        if (!row.error[0]) ex2d_dump(run, &f, &ref, &row);
    }
    if (run->gpu && !row.error[0]) {
        char err[512];
        if (run->fp64.gflops <= 0) {
            gw_bench_progress(run, "FP64 rate reference: FMA chains on every SM, repetitions: %d", run->reps);
            if (gw_bench_gpu_fp64_rate(run->gpu, run->reps, &run->fp64, err, sizeof err))
                gw_bench_row_fail(&row, "the FP64 rate reference: %s", err);
        }
        ex2d_ctx c;
        gw_bench_progress(run, "ex2d %s: device and pinned buffers", row.case_id);
        if (!row.error[0]) {
            if (ex2d_ctx_init(&c, run, &f, err, sizeof err)) gw_bench_row_fail(&row, "%s", err);
            else ex2d_gpu(run, &c, &ref, &counts, &row);
            if (c.max_batch > 0) cJSON_AddNumberToObject(row.params, "gpu_max_batch", c.max_batch);
            if (ex2d_ctx_free(&c, err, sizeof err)) gw_bench_row_fail(&row, "%s", err);
        }
        row.gpu_ran = !row.error[0];
    }
    ex2d_ref_outputs_free(&ref);
    ex2d_frame_free(&f);
    return gw_bench_record(run, &row);
}

int gw_ex2d_patch_bench(gw_bench_run *run)
{
    return gw_bench_run_cases(run, cases_by_tier, sizeof(ex2d_case), ex2d_run_case);
}
