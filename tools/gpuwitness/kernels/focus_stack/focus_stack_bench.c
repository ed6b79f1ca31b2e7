/* SPDX-License-Identifier: MIT
 * gpuwitness bench cases for focus_stack (docs/focus_stack.md, "Benchmark cases"): B1 (N=1, Z=17,
 * 2189x2189), B2 (N=4, Z=17, 2189x1152) and, in the full tier, B3 (N=16, Z=17, 2189x2189), at morphseq's
 * defaults with the idx and ff outputs (the targets' configuration); the smoke and small tiers keep N and
 * shrink the images. Inputs are the known-focus synthetic stacks of focus_stack_synth.h, so the reference's answer is
 * checked too. Per case: focus_stack_ref on one thread and on all, which must agree; on the GPU an
 * end-to-end loop (pinned input uploaded, launch, idx and ff downloaded), a kernel loop with the witness and
 * one without; outputs are poisoned before every repetition and compared with the reference after every loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "focus_stack_ref.h"
#include "gw_bench.h"
#include "gw_cli_cuda.h"
#include "focus_stack_host.h"
#include "gw_kernel.h"
#include "focus_stack_synth.h"
#include "gw_trace_range.h"

typedef struct fs_size {
    const char *id, *name; /* the case of docs/focus_stack.md, "Model": "b1" in case ids, "B1" for people */
    int n, z, y, x;
} fs_size;

/* The smoke and small images still hold whole 64x64 cells of the synthetic texture. */
static const fs_size smoke_sizes[] = {{"b1", "B1", 1, 5, 130, 130}, {"b2", "B2", 4, 5, 130, 68}};
static const fs_size small_sizes[] = {{"b1", "B1", 1, 17, 512, 512}, {"b2", "B2", 4, 17, 512, 270}};
static const fs_size realistic_sizes[] = {{"b1", "B1", 1, 17, 2189, 2189}, {"b2", "B2", 4, 17, 2189, 1152}};
static const fs_size full_sizes[] = {
    {"b1", "B1", 1, 17, 2189, 2189}, {"b2", "B2", 4, 17, 2189, 1152}, {"b3", "B3", 16, 17, 2189, 2189}};
static const gw_bench_cases sizes_by_tier[] = {
    [GW_BENCH_SMOKE] = GW_BENCH_CASES(smoke_sizes), [GW_BENCH_SMALL] = GW_BENCH_CASES(small_sizes),
    [GW_BENCH_REALISTIC] = GW_BENCH_CASES(realistic_sizes), [GW_BENCH_FULL] = GW_BENCH_CASES(full_sizes)};

static size_t pixels(focus_stack_params p)
{
    return (size_t)p.n * (size_t)p.y * (size_t)p.x;
}

/* ---- the CPU reference ---- */

typedef struct fs_cpu_args {
    focus_stack_params p;
    const uint16_t *in;
    gw_focus_out *out;
    int threads;
} fs_cpu_args;

static int fs_cpu_call(void *ctx)
{
    const fs_cpu_args *c = ctx;
    return focus_stack_ref(&c->p, c->in, c->out->idx, c->out->ff, NULL, NULL, c->threads);
}

/* Both reference runs, timed; the multithreaded one must give the same bytes and the known answer must
 * hold. The reference result stays in ref. */
static void fs_cpu(gw_bench_run *run, focus_stack_params p, const uint16_t *in, const focus_stack_synth *synth,
                   gw_focus_out *ref, gw_focus_out *mt, gw_bench_row *row)
{
    char msg[2048];
    gw_focus_out_poison(ref, p, 0xFF);
    gw_focus_out_poison(mt, p, 0xFF);
    row->cpu_mt_threads = gw_bench_cpu_threads();
    fs_cpu_args c1 = {p, in, ref, 1}, cm = {p, in, mt, row->cpu_mt_threads};
    gw_bench_progress(run, "focus_stack %s: focus_stack_ref, 1 thread, repetitions: %d", row->case_id, run->cpu_reps);
    int rc = gw_bench_cpu_time(run->cpu_reps, fs_cpu_call, &c1, &row->cpu_1t_ms);
    if (rc) {
        gw_bench_row_fail(row, "focus_stack_ref returned %d: %s", rc, focus_stack_status_str(rc));
        return;
    }
    gw_bench_progress(run, "focus_stack %s: focus_stack_ref, %d threads, repetitions: %d", row->case_id,
                      row->cpu_mt_threads, run->cpu_reps);
    rc = gw_bench_cpu_time(run->cpu_reps, fs_cpu_call, &cm, &row->cpu_mt_ms);
    if (rc) {
        gw_bench_row_fail(row, "focus_stack_ref (%d threads) returned %d: %s", row->cpu_mt_threads, rc,
                          focus_stack_status_str(rc));
        return;
    }
    if (gw_focus_out_compare(mt, ref, p, msg, sizeof msg)) {
        gw_bench_row_fail(row, "focus_stack_ref on %d threads differs from 1 thread: %s", row->cpu_mt_threads, msg);
        return;
    }
    focus_stack_synth_report report;
    if (focus_stack_synth_verify(synth, ref->idx, focus_stack_synth_margin(p.ksize, p.measure, p.window), &report))
        gw_bench_row_fail(row, "focus_stack_ref misses the known focus at %zu pixels; first (n %d, y %d, x %d): idx "
                          "%d, known %d", report.textured_wrong + report.flat_wrong, report.first_n, report.first_y,
                          report.first_x, report.first_got, report.first_want);
}

/* ---- --dump-inputs: the stack and the reference's idx and ff ---- */

static void fs_dump(gw_bench_run *run, focus_stack_params p, const uint16_t *in, const gw_focus_out *ref,
                    gw_bench_row *row)
{
    char dir[4096], err[768];
    int rc = gw_bench_dump_dir(run, row->kernel, row->case_id, dir, sizeof dir, err, sizeof err);
    if (rc == 1) return;
    cJSON *inputs = cJSON_CreateObject(), *reference = cJSON_CreateObject();
    if (rc == 0 && (!inputs || !reference)) {
        snprintf(err, sizeof err, "out of memory dumping %s", row->case_id);
        rc = -1;
    }
    const int64_t stack_shape[4] = {p.n, p.z, p.y, p.x}, image_shape[3] = {p.n, p.y, p.x};
    if (rc == 0) rc = gw_bench_dump_npy(dir, "", "in", GW_NPY_U2, 4, stack_shape, in, inputs, err, sizeof err);
    if (rc == 0)
        rc = gw_bench_dump_npy(dir, "ref_", "idx", GW_NPY_U1, 3, image_shape, ref->idx, reference, err, sizeof err);
    if (rc == 0)
        rc = gw_bench_dump_npy(dir, "ref_", "ff", GW_NPY_U2, 3, image_shape, ref->ff, reference, err, sizeof err);
    gw_bench_dump_finish(run, row, rc, inputs, reference, err);
}

/* ---- the GPU part ---- */

/* Device buffers (gw_focus_gpu, shared with `check`), pinned host buffers for the end-to-end loop, and the
 * state of the loop in progress. */
typedef struct fs_ctx {
    gw_focus_gpu g;
    focus_stack_params p;
    const gw_focus_out *ref; /* what every loop's idx and ff must equal */
    gw_bench_mode mode;
    uint8_t poison; /* of the last prepared repetition */
    int reps;
    uint16_t *h_in;
    gw_focus_out h_out; /* pinned idx and ff */
} fs_ctx;

static int fs_prepare(void *ctx, int rep, char *err, size_t err_size)
{
    fs_ctx *c = ctx;
    cudaStream_t s = (cudaStream_t)c->g.stream;
    const size_t px = pixels(c->p);
    /* idx 255 and 165 are never valid at these Z (at most 17); alternating them also alternates ff's poison. */
    c->poison = (rep & 1) ? 0xA5 : 0xFF;
    CUDA_TRY(cudaMemsetAsync(c->g.d_idx, c->poison, px, s), "cudaMemsetAsync(idx poison)");
    CUDA_TRY(cudaMemsetAsync(c->g.d_ff, c->poison, px * sizeof *c->g.d_ff, s), "cudaMemsetAsync(ff poison)");
    /* The witness adds up every timed repetition: it must show reps launches and reps times N*Y*X pixels. */
    if (rep == 0 && c->mode != GW_BENCH_KERNEL_NO_WITNESS)
        CUDA_TRY(cudaMemsetAsync(c->g.d_witness, 0, sizeof *c->g.d_witness, s), "cudaMemsetAsync(witness)");
    return 0;
fail:
    return -1;
}

static int fs_launch(void *ctx, char *err, size_t err_size)
{
    fs_ctx *c = ctx;
    gw_focus_gpu *g = &c->g;
    cudaStream_t s = (cudaStream_t)g->stream;
    const size_t px = pixels(c->p), voxels = px * (size_t)c->p.z;
    /* NVTX ranges per stage of the end-to-end loop, for --trace and Nsight; the kernel-only loops get none, so
     * nothing is added between their events and the launch. Closed on failure. */
    const int e2e = c->mode == GW_BENCH_END_TO_END, range_depth = gw_range_depth();
    if (e2e) {
        gw_range_push("focus_stack/upload");
        CUDA_TRY(cudaMemcpyAsync(g->d_in, c->h_in, voxels * sizeof *c->h_in, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(in, host to device)");
        gw_range_pop();
        gw_range_push("focus_stack/launch");
    }
    CUDA_TRY(focus_stack_launch(&c->p, g->d_in, g->d_idx, g->d_ff, NULL, NULL,
                                c->mode == GW_BENCH_KERNEL_NO_WITNESS ? NULL : g->d_witness, s),
             "focus_stack_launch");
    if (e2e) {
        gw_range_pop();
        gw_range_push("focus_stack/download");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.idx, g->d_idx, px, cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync(idx, device to host)");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.ff, g->d_ff, px * sizeof *c->h_out.ff, cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync(ff, device to host)");
        gw_range_pop();
    }
    return 0;
fail:
    gw_range_pop_to(range_depth);
    return -1;
}

/* Device buffers and pinned host buffers with the input copied in; the end-to-end loop, which runs first,
 * uploads it. 0, or -1 with err; fs_ctx_free releases what was made either way. */
static int fs_ctx_init(fs_ctx *c, gw_bench_run *run, focus_stack_params p, const uint16_t *in, char *err,
                       size_t err_size)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    const size_t px = pixels(p), voxels = px * (size_t)p.z;
    if (gw_focus_gpu_init(&c->g, run->gpu->ordinal, p, 0, 0, err, err_size)) return -1;
    CUDA_TRY(cudaMallocHost((void **)&c->h_in, voxels * sizeof *c->h_in), "cudaMallocHost(in)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.idx, px), "cudaMallocHost(idx)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.ff, px * sizeof *c->h_out.ff), "cudaMallocHost(ff)");
    memcpy(c->h_in, in, voxels * sizeof *in);
    return 0;
fail:
    return -1;
}

static int fs_ctx_free(fs_ctx *c, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    void *pinned[] = {c->h_in, c->h_out.idx, c->h_out.ff};
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++)
        if (pinned[i]) gw_cli_cuda_keep_first(cudaFreeHost(pinned[i]), "cudaFreeHost", &first, &what);
    int rc = gw_focus_gpu_free(&c->g, err, err_size);
    memset(c, 0, sizeof *c);
    if (first != cudaSuccess && rc == 0) {
        gw_cli_cuda_fail(err, err_size, what, first);
        rc = -1;
    }
    return rc;
}

/* After a loop: the last repetition's idx and ff against the reference, and the witness summed over the
 * timed repetitions. The kernel loops download here, into host buffers poisoned with the complement of
 * the device poison, so a failed download cannot look right. */
static void fs_verify(void *ctx, gw_bench_row *row, const char *loop_name)
{
    fs_ctx *c = ctx;
    char err[512], msg[2048];
    const size_t err_size = sizeof err;
    const size_t px = pixels(c->p);
    gw_witness w;
    if (c->mode != GW_BENCH_END_TO_END) {
        gw_focus_out_poison(&c->h_out, c->p, (uint8_t)~c->poison);
        CUDA_TRY(cudaMemcpy(c->h_out.idx, c->g.d_idx, px, cudaMemcpyDeviceToHost), "cudaMemcpy(idx, device to host)");
        CUDA_TRY(cudaMemcpy(c->h_out.ff, c->g.d_ff, px * sizeof *c->h_out.ff, cudaMemcpyDeviceToHost),
                 "cudaMemcpy(ff, device to host)");
    }
    const int diff = gw_focus_out_compare(&c->h_out, c->ref, c->p, msg, sizeof msg);
    row->validated = diff == 0 && row->validated != 0; /* 1: every comparison so far found equal bytes */
    if (diff) {
        gw_bench_row_fail(row, "%s: the output after the timed loop differs from focus_stack_ref: %s", loop_name, msg);
        return;
    }
    if (c->mode == GW_BENCH_KERNEL_NO_WITNESS) return;
    CUDA_TRY(cudaMemcpy(&w, c->g.d_witness, sizeof w, cudaMemcpyDeviceToHost), "cudaMemcpy(witness)");
    gw_bench_witness_verify(row, loop_name, &w, c->reps, px, &c->g.facts);
    return;
fail:
    gw_bench_row_fail(row, "%s: %s", loop_name, err);
}

static gw_bench_loop fs_start(void *ctx, gw_bench_mode mode, int reps)
{
    fs_ctx *c = ctx;
    c->mode = mode;
    c->reps = reps;
    if (mode == GW_BENCH_END_TO_END) gw_focus_out_poison(&c->h_out, c->p, 0x5A); /* proves a download happened */
    const gw_bench_loop loop = {.ctx = c, .stream = c->g.stream, .reps = reps, .prepare = fs_prepare,
                                .launch = fs_launch};
    return loop;
}

static void fs_gpu(gw_bench_run *run, fs_ctx *c, const gw_focus_out *ref, gw_bench_row *row)
{
    const gw_bench_case_gpu k = {.what = "focus_stack", .detail = "", .ctx = c, .start = fs_start, .verify = fs_verify};
    c->ref = ref;
    gw_bench_gpu_loops(run, &k, row);
}

/* ---- one case ---- */

static int fs_case(gw_bench_run *run, const void *tier_case)
{
    const fs_size *size = tier_case;
    const focus_stack_params p = {.n = size->n, .z = size->z, .y = size->y, .x = size->x, .ksize = 3};
    const size_t px = pixels(p), voxels = px * (size_t)p.z;
    gw_bench_row row;
    gw_bench_row_init(&row, "focus_stack", "focus_stack_launch", 1);
    snprintf(row.case_id, sizeof row.case_id, "%s-n%d-z%d-%dx%d", size->id, p.n, p.z, p.y, p.x);
    snprintf(row.label, sizeof row.label, "%s: N=%d, Z=%d, %dx%d, morphseq defaults, idx + ff", size->name, p.n, p.z,
             p.y, p.x);
    row.params = cJSON_CreateObject();
    cJSON_AddNumberToObject(row.params, "n", p.n);
    cJSON_AddNumberToObject(row.params, "z", p.z);
    cJSON_AddNumberToObject(row.params, "y", p.y);
    cJSON_AddNumberToObject(row.params, "x", p.x);
    cJSON_AddNumberToObject(row.params, "ksize", p.ksize);
    cJSON_AddStringToObject(row.params, "measure", "log_abs");
    cJSON_AddStringToObject(row.params, "border", "zero");
    cJSON_AddNumberToObject(row.params, "window", p.window);
    cJSON_AddStringToObject(row.params, "outputs", "idx, ff");
    cJSON_AddStringToObject(row.params, "input", "known-focus synthetic stack (focus_stack_synth)");
    row.work = (double)voxels;
    row.work_unit = "voxels";
    /* The input read once, idx (1 byte) and ff (2 bytes) written once (docs/focus_stack.md, "Model"). */
    row.bytes_moved = 2 * (uint64_t)voxels + 3 * (uint64_t)px;

    focus_stack_synth synth;
    gw_focus_out ref = {0}, mt = {0};
    memset(&synth, 0, sizeof synth);
    gw_bench_progress(run, "focus_stack %s: making the synthetic stack", row.case_id);
    uint16_t *in = malloc(voxels * sizeof *in);
    if (!in || focus_stack_synth_make(&synth, p.n, p.z, p.y, p.x, run->seed, in) || gw_focus_out_alloc(&ref, p, 0, 0) ||
        gw_focus_out_alloc(&mt, p, 0, 0)) {
        fprintf(stderr, "gpuwitness bench: out of memory for the %zu-voxel stack of %s\n", voxels, row.case_id);
        free(in);
        focus_stack_synth_free(&synth);
        gw_focus_out_free(&ref);
        cJSON_Delete(row.params);
        return -1;
    }
    fs_cpu(run, p, in, &synth, &ref, &mt, &row);
    gw_focus_out_free(&mt);
    focus_stack_synth_free(&synth);
    if (!row.error[0]) fs_dump(run, p, in, &ref, &row);
    if (run->gpu && !row.error[0]) {
        fs_ctx c;
        char err[512];
        gw_bench_progress(run, "focus_stack %s: device and pinned buffers", row.case_id);
        if (fs_ctx_init(&c, run, p, in, err, sizeof err)) gw_bench_row_fail(&row, "%s", err);
        else fs_gpu(run, &c, &ref, &row);
        if (fs_ctx_free(&c, err, sizeof err)) gw_bench_row_fail(&row, "%s", err);
        row.gpu_ran = !row.error[0];
    }
    free(in);
    gw_focus_out_free(&ref);
    return gw_bench_record(run, &row);
}

int gw_focus_stack_bench(gw_bench_run *run)
{
    return gw_bench_run_cases(run, sizes_by_tier, sizeof(fs_size), fs_case);
}
