/* SPDX-License-Identifier: MIT
 * gpuwitness bench cases for grid_d4 (docs/grid_d4.md, "Benchmark cases"). For each size of the tier,
 * batches of grids with shapes drawn from the ARC-AGI-1 training tasks, and batches of 30x30 grids, both
 * with 16-byte aligned offsets (the target layout), each with batch op rot90, random per-grid ops and
 * identity (the kernel's own overhead). Per case: grid_d4_ref on one thread and grid_d4_ref_mt on all, which
 * must agree; on the GPU an end-to-end loop (upload, launch, download), a kernel loop with the witness and
 * one without; outputs are poisoned before every repetition and compared with the reference after every
 * loop. Beside each size's rot90 case, the two copy baselines of the same section: cudaMemcpyAsync of the
 * P-byte payload and cub::DeviceMemcpy::Batched of the same ragged buffers (the identity-op roofline).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "grid_d4_batch.h"
#include "grid_d4_host.h"
#include "grid_d4_ref.h"
#include "gw_bench.h"
#include "gw_cli_cuda.h"
#include "gw_kernel.h"
#include "gw_trace_range.h"

typedef struct d4_size {
    const char *shapes; /* "arc": ARC-AGI-1 training shapes; "30x30": every grid 30x30 */
    size_t n_grids;
} d4_size;

static const d4_size smoke_sizes[] = {{"arc", 1000}, {"30x30", 100}};
static const d4_size small_sizes[] = {{"arc", 10000}, {"arc", 100000}, {"30x30", 10000}};
static const d4_size realistic_sizes[] = {{"arc", 10000}, {"arc", 100000}, {"arc", 1000000}, {"30x30", 100000}};
static const d4_size full_sizes[] = {{"arc", 10000},   {"arc", 100000},   {"arc", 1000000},
                                     {"arc", 4000000}, {"30x30", 100000}, {"30x30", 1000000}};
static const gw_bench_cases sizes_by_tier[] = {
    [GW_BENCH_SMOKE] = GW_BENCH_CASES(smoke_sizes), [GW_BENCH_SMALL] = GW_BENCH_CASES(small_sizes),
    [GW_BENCH_REALISTIC] = GW_BENCH_CASES(realistic_sizes), [GW_BENCH_FULL] = GW_BENCH_CASES(full_sizes)};

typedef struct d4_variant {
    const char *id, *label;
    int per_grid_ops, batch_op;
} d4_variant;

/* rot90 first: the copy baselines run on its batch. */
static const d4_variant variants[] = {
    {"rot90", "batch op rot90", 0, GRID_D4_ROT90},
    {"random-ops", "random per-grid ops", 1, 0},
    {"identity", "batch op identity (the kernel's own overhead)", 0, GRID_D4_IDENTITY},
};

static const char *const op_names[8] = {"identity", "vmirror", "hmirror", "rot180",
                                        "dmirror",  "rot270",  "rot90",   "cmirror"};

/* n grids of 30x30, 16-byte aligned (a stride of 912 bytes), cells 0..9. 0 or -1 (out of memory). */
static int batch_30x30(grid_d4_batch *b, size_t n, uint64_t seed, int per_grid_ops, int batch_op)
{
    uint16_t *side = malloc((n + 1) * sizeof *side);
    if (!side) return -1;
    for (size_t k = 0; k < n; k++) side[k] = 30;
    const int rc = grid_d4_batch_make(b, n, side, side, GRID_D4_ALIGNED16, seed, "30x30 grids");
    free(side);
    if (rc) return -1;
    grid_d4_batch_fill_random(b, 9, seed + 1);
    if (!per_grid_ops) grid_d4_batch_set_op(b, batch_op);
    else if (grid_d4_batch_set_ops_random(b, seed + 2)) {
        grid_d4_batch_free(b);
        return -1;
    }
    return 0;
}

/* ---- the CPU reference ---- */

typedef struct d4_cpu_args {
    const grid_d4_batch *b;
    grid_d4_result *out;
    int mt;
} d4_cpu_args;

static int d4_cpu_call(void *ctx)
{
    const d4_cpu_args *c = ctx;
    const grid_d4_params p = grid_d4_batch_params(c->b);
    const grid_d4_batch *b = c->b;
    return (c->mt ? grid_d4_ref_mt : grid_d4_ref)(&p, b->in, c->out->out, b->offset, b->height, b->width,
                                                    c->out->out_height, c->out->out_width, b->ops);
}

/* Both references, timed; mt must give the same bytes. The reference result stays in ref. */
static void d4_cpu(gw_bench_run *run, const grid_d4_batch *b, grid_d4_result *ref, grid_d4_result *mt,
                   gw_bench_row *row)
{
    char msg[512];
    grid_d4_result_poison(ref, 0xFF);
    grid_d4_result_poison(mt, 0xFF);
    d4_cpu_args c1 = {b, ref, 0}, cm = {b, mt, 1};
    gw_bench_progress(run, "grid_d4 %s: grid_d4_ref, 1 thread, repetitions: %d", row->case_id, run->cpu_reps);
    int rc = gw_bench_cpu_time(run->cpu_reps, d4_cpu_call, &c1, &row->cpu_1t_ms);
    if (rc) {
        gw_bench_row_fail(row, "grid_d4_ref returned %d: %s", rc, grid_d4_status_str((grid_d4_status)rc));
        return;
    }
    row->cpu_mt_threads = gw_bench_cpu_threads();
    gw_bench_progress(run, "grid_d4 %s: grid_d4_ref_mt, %d threads, repetitions: %d", row->case_id, row->cpu_mt_threads,
                      run->cpu_reps);
    rc = gw_bench_cpu_time(run->cpu_reps, d4_cpu_call, &cm, &row->cpu_mt_ms);
    if (rc) {
        gw_bench_row_fail(row, "grid_d4_ref_mt returned %d: %s", rc, grid_d4_status_str((grid_d4_status)rc));
        return;
    }
    if (grid_d4_result_compare(b, mt, ref, msg, sizeof msg))
        gw_bench_row_fail(row, "grid_d4_ref_mt differs from grid_d4_ref: %s", msg);
}

/* ---- --dump-inputs: packed grids (no gaps), shapes, per-grid ops, and the reference's packed result ---- */

static void pack(const grid_d4_batch *b, const uint8_t *cells, uint8_t *packed)
{
    size_t at = 0;
    for (size_t k = 0; k < b->n; k++) {
        const size_t size = (size_t)b->height[k] * b->width[k];
        memcpy(packed + at, cells + b->offset[k], size);
        at += size;
    }
}

static void d4_dump(gw_bench_run *run, const grid_d4_batch *b, const grid_d4_result *ref, gw_bench_row *row)
{
    char dir[4096], err[768];
    int rc = gw_bench_dump_dir(run, row->kernel, row->case_id, dir, sizeof dir, err, sizeof err);
    if (rc == 1) return;
    const size_t n = b->n;
    const uint64_t n_cells = grid_d4_batch_cells(b);
    uint8_t *cells = malloc((size_t)n_cells + 1), *ref_cells = malloc((size_t)n_cells + 1), *ops = malloc(n + 1);
    cJSON *inputs = cJSON_CreateObject(), *reference = cJSON_CreateObject();
    if (rc == 0 && (!cells || !ref_cells || !ops || !inputs || !reference)) {
        snprintf(err, sizeof err, "out of memory dumping %s", row->case_id);
        rc = -1;
    }
    if (rc == 0) {
        for (size_t k = 0; k < n; k++) ops[k] = b->ops ? b->ops[k] : (uint8_t)b->batch_op;
        pack(b, b->in, cells);
        pack(b, ref->out, ref_cells);
    }
    const int64_t cells_shape[1] = {(int64_t)n_cells}, grid_shape[1] = {(int64_t)n};
    const struct {
        const char *prefix, *key;
        gw_npy_dtype dtype;
        const int64_t *shape;
        const void *data;
        cJSON *files;
    } arrays[] = {
        {"", "cells", GW_NPY_U1, cells_shape, cells, inputs},
        {"", "height", GW_NPY_U2, grid_shape, b->height, inputs},
        {"", "width", GW_NPY_U2, grid_shape, b->width, inputs},
        {"", "ops", GW_NPY_U1, grid_shape, ops, inputs},
        {"ref_", "cells", GW_NPY_U1, cells_shape, ref_cells, reference},
        {"ref_", "height", GW_NPY_U2, grid_shape, ref->out_height, reference},
        {"ref_", "width", GW_NPY_U2, grid_shape, ref->out_width, reference},
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0] && rc == 0; i++)
        rc = gw_bench_dump_npy(dir, arrays[i].prefix, arrays[i].key, arrays[i].dtype, 1, arrays[i].shape,
                               arrays[i].data, arrays[i].files, err, sizeof err);
    free(cells);
    free(ref_cells);
    free(ops);
    gw_bench_dump_finish(run, row, rc, inputs, reference, err);
}

/* ---- the GPU part ---- */

/* The loops of gw_bench_gpu_loops, then the two copy baselines. */
typedef enum {
    D4_END_TO_END = GW_BENCH_END_TO_END,
    D4_KERNEL = GW_BENCH_KERNEL,
    D4_KERNEL_NO_WITNESS = GW_BENCH_KERNEL_NO_WITNESS,
    D4_MEMCPY,
    D4_CUB
} d4_mode;

/* Device buffers (gw_d4_gpu, shared with `check`), pinned host copies for the end-to-end loop, and the
 * state of the loop in progress. */
typedef struct d4_ctx {
    gw_d4_gpu g;
    const grid_d4_batch *b;
    uint64_t cells; /* of b: the witness's items per launch, and the payload of the copy baseline */
    grid_d4_params p;
    grid_d4_result *ref; /* what every grid_d4 loop's outputs must equal (repoisoned outside the grids) */
    d4_mode mode;
    uint8_t poison; /* of the last prepared repetition */
    int reps;
    gw_bench_cub_batched cub;
    uint8_t *h_in, *h_ops;
    uint64_t *h_offset;
    uint16_t *h_height, *h_width;
    grid_d4_result h_out; /* pinned arrays: freed with cudaFreeHost, never grid_d4_result_free */
} d4_ctx;

static int d4_prepare(void *ctx, int rep, char *err, size_t err_size)
{
    d4_ctx *c = ctx;
    cudaStream_t s = (cudaStream_t)c->g.stream;
    /* Two poisons in turn: a cell left unwritten by any one repetition differs from one of them. */
    c->poison = (rep & 1) ? 0x5A : 0xFF;
    CUDA_TRY(cudaMemsetAsync(c->g.d_out, c->poison, (size_t)c->b->buf_bytes, s), "cudaMemsetAsync(out poison)");
    if (c->mode == D4_MEMCPY || c->mode == D4_CUB) return 0; /* copies write no shapes and take no witness */
    const size_t shape_bytes = c->b->n * sizeof(uint16_t);
    CUDA_TRY(cudaMemsetAsync(c->g.d_out_height, 0xFF, shape_bytes, s), "cudaMemsetAsync(out_height poison)");
    CUDA_TRY(cudaMemsetAsync(c->g.d_out_width, 0xFF, shape_bytes, s), "cudaMemsetAsync(out_width poison)");
    /* The witness adds up every timed repetition: it must show reps launches and reps times the cells. */
    if (rep == 0 && c->mode != D4_KERNEL_NO_WITNESS)
        CUDA_TRY(cudaMemsetAsync(c->g.d_witness, 0, sizeof *c->g.d_witness, s), "cudaMemsetAsync(witness)");
    return 0;
fail:
    return -1;
}

static int d4_launch(void *ctx, char *err, size_t err_size)
{
    d4_ctx *c = ctx;
    const grid_d4_batch *b = c->b;
    gw_d4_gpu *g = &c->g;
    cudaStream_t s = (cudaStream_t)g->stream;
    const size_t n = b->n;
    /* NVTX ranges per stage of the end-to-end loop, for --trace and Nsight; the kernel-only loops get none, so
     * nothing is added between their events and the launch. Closed on failure. */
    const int e2e = c->mode == D4_END_TO_END, range_depth = gw_range_depth();
    if (c->mode == D4_MEMCPY) {
        CUDA_TRY(cudaMemcpyAsync(g->d_out, g->d_in, (size_t)c->cells, cudaMemcpyDeviceToDevice, s),
                 "cudaMemcpyAsync(payload, device to device)");
        return 0;
    }
    if (c->mode == D4_CUB) return gw_bench_cub_batched_launch(&c->cub, g->stream, err, err_size);
    if (e2e) {
        gw_range_push("grid_d4/upload");
        CUDA_TRY(cudaMemcpyAsync(g->d_in, c->h_in, (size_t)b->buf_bytes, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(in, host to device)");
        CUDA_TRY(cudaMemcpyAsync(g->d_offset, c->h_offset, n * sizeof *c->h_offset, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(offset, host to device)");
        CUDA_TRY(cudaMemcpyAsync(g->d_height, c->h_height, n * sizeof *c->h_height, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(height, host to device)");
        CUDA_TRY(cudaMemcpyAsync(g->d_width, c->h_width, n * sizeof *c->h_width, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(width, host to device)");
        if (b->ops)
            CUDA_TRY(cudaMemcpyAsync(g->d_ops, c->h_ops, n, cudaMemcpyHostToDevice, s),
                     "cudaMemcpyAsync(ops, host to device)");
        gw_range_pop();
        gw_range_push("grid_d4/launch");
    }
    CUDA_TRY(grid_d4_launch(&c->p, g->d_in, g->d_out, g->d_offset, g->d_height, g->d_width, g->d_out_height,
                            g->d_out_width, b->ops ? g->d_ops : NULL, g->d_status,
                            c->mode == D4_KERNEL_NO_WITNESS ? NULL : g->d_witness, s),
             "grid_d4_launch");
    if (e2e) {
        gw_range_pop();
        gw_range_push("grid_d4/download");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.out, g->d_out, (size_t)b->buf_bytes, cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync(out, device to host)");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.out_height, g->d_out_height, n * sizeof(uint16_t), cudaMemcpyDeviceToHost,
                                 s), "cudaMemcpyAsync(out_height, device to host)");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.out_width, g->d_out_width, n * sizeof(uint16_t), cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync(out_width, device to host)");
        gw_range_pop();
    }
    return 0;
fail:
    gw_range_pop_to(range_depth);
    return -1;
}

/* Device buffers and pinned host buffers with the inputs copied in; the end-to-end loop, which runs first,
 * uploads them. 0, or -1 with err; d4_ctx_free releases what was made either way. */
static int d4_ctx_init(d4_ctx *c, gw_bench_run *run, const grid_d4_batch *b, char *err, size_t err_size)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->cells = grid_d4_batch_cells(b);
    c->p = grid_d4_batch_params(b);
    const size_t n = b->n, bytes = (size_t)b->buf_bytes;
    /* h_out has the shape of a grid_d4_result of b (shift 0, slack after out), in pinned memory */
    c->h_out.n = n;
    c->h_out.buf_bytes = b->buf_bytes;
    c->h_out.alloc_bytes = b->buf_bytes + GRID_D4_BATCH_SLACK;
    if (gw_d4_gpu_init(&c->g, run->gpu->ordinal, b, err, err_size)) return -1;
    CUDA_TRY(cudaMallocHost((void **)&c->h_in, bytes + 1), "cudaMallocHost(in)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_offset, (n + 1) * sizeof *c->h_offset), "cudaMallocHost(offset)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_height, (n + 1) * sizeof *c->h_height), "cudaMallocHost(height)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_width, (n + 1) * sizeof *c->h_width), "cudaMallocHost(width)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_ops, n + 1), "cudaMallocHost(ops)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.out_alloc, (size_t)c->h_out.alloc_bytes), "cudaMallocHost(out)");
    c->h_out.out = c->h_out.out_alloc;
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.out_height, (n + 1) * sizeof(uint16_t)), "cudaMallocHost(out_height)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.out_width, (n + 1) * sizeof(uint16_t)), "cudaMallocHost(out_width)");
    memcpy(c->h_in, b->in, bytes);
    memcpy(c->h_offset, b->offset, n * sizeof *c->h_offset);
    memcpy(c->h_height, b->height, n * sizeof *c->h_height);
    memcpy(c->h_width, b->width, n * sizeof *c->h_width);
    if (b->ops) memcpy(c->h_ops, b->ops, n);
    return 0;
fail:
    return -1; /* d4_ctx_free releases what was made */
}

static int d4_ctx_free(d4_ctx *c, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    void *pinned[] = {c->h_in, c->h_ops, c->h_offset, c->h_height, c->h_width,
                      c->h_out.out_alloc, c->h_out.out_height, c->h_out.out_width};
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++)
        if (pinned[i]) gw_cli_cuda_keep_first(cudaFreeHost(pinned[i]), "cudaFreeHost", &first, &what);
    int rc = gw_bench_cub_batched_free(&c->cub, err, err_size);
    if (gw_d4_gpu_free(&c->g, rc ? NULL : err, err_size)) rc = -1;
    memset(c, 0, sizeof *c);
    if (first != cudaSuccess && rc == 0) {
        gw_cli_cuda_fail(err, err_size, what, first);
        rc = -1;
    }
    return rc;
}

/* Copies the device outputs into the pinned host buffers, first poisoned with the complement of the device
 * poison so that a failed download cannot look right. */
static int d4_download(d4_ctx *c, char *err, size_t err_size)
{
    const size_t n = c->b->n;
    grid_d4_result_poison(&c->h_out, (uint8_t)~c->poison);
    CUDA_TRY(cudaMemcpy(c->h_out.out, c->g.d_out, (size_t)c->b->buf_bytes, cudaMemcpyDeviceToHost),
             "cudaMemcpy(out, device to host)");
    CUDA_TRY(cudaMemcpy(c->h_out.out_height, c->g.d_out_height, n * sizeof(uint16_t), cudaMemcpyDeviceToHost),
             "cudaMemcpy(out_height, device to host)");
    CUDA_TRY(cudaMemcpy(c->h_out.out_width, c->g.d_out_width, n * sizeof(uint16_t), cudaMemcpyDeviceToHost),
             "cudaMemcpy(out_width, device to host)");
    return 0;
fail:
    return -1;
}

/* After a grid_d4 loop: the last repetition's status, its outputs against the reference (gaps must hold
 * that repetition's poison), and the witness summed over the timed repetitions. */
static void d4_verify(void *ctx, gw_bench_row *row, const char *loop_name)
{
    d4_ctx *c = ctx;
    char err[512], msg[1024];
    const size_t err_size = sizeof err;
    grid_d4_status_record status;
    gw_witness w;
    memset(&status, 0, sizeof status);
    CUDA_TRY(cudaMemcpy(&status, c->g.d_status, sizeof status, cudaMemcpyDeviceToHost), "cudaMemcpy(status)");
    if (grid_d4_status_record_code(&status) != GRID_D4_OK) {
        gw_bench_row_fail(row, "%s: the device rejected grid %zu: %s", loop_name, grid_d4_status_record_index(&status),
                          grid_d4_status_str(grid_d4_status_record_code(&status)));
        return;
    }
    if (c->mode != D4_END_TO_END && d4_download(c, err, sizeof err)) goto fail;
    grid_d4_result_poison_slack(&c->h_out, c->poison);
    if (grid_d4_result_repoison_outside(c->ref, c->b, c->poison)) {
        gw_bench_row_fail(row, "%s: out of memory comparing the outputs", loop_name);
        return;
    }
    const int diff = grid_d4_result_compare(c->b, &c->h_out, c->ref, msg, sizeof msg) != 0;
    row->validated = diff == 0 && row->validated != 0; /* 1: every comparison so far found equal bytes */
    if (diff) {
        gw_bench_row_fail(row, "%s: the output after the timed loop differs from grid_d4_ref: %s", loop_name, msg);
        return;
    }
    if (c->mode == D4_KERNEL_NO_WITNESS) return;
    CUDA_TRY(cudaMemcpy(&w, c->g.d_witness, sizeof w, cudaMemcpyDeviceToHost), "cudaMemcpy(witness)");
    gw_bench_witness_verify(row, loop_name, &w, c->reps, c->cells, &c->g.facts);
    return;
fail:
    gw_bench_row_fail(row, "%s: %s", loop_name, err);
}

static gw_bench_loop d4_start(d4_ctx *c, d4_mode mode, int reps)
{
    c->mode = mode;
    c->reps = reps;
    const gw_bench_loop loop = {.ctx = c, .stream = c->g.stream, .reps = reps, .prepare = d4_prepare,
                                .launch = d4_launch};
    if (mode == D4_END_TO_END) grid_d4_result_poison(&c->h_out, 0xA5); /* proves a download happened */
    return loop;
}

/* gw_bench_gpu_loops' start: its modes are the first values of d4_mode. */
static gw_bench_loop d4_start_kernel(void *ctx, gw_bench_mode mode, int reps)
{
    return d4_start(ctx, (d4_mode)mode, reps);
}

static void d4_gpu(gw_bench_run *run, d4_ctx *c, grid_d4_result *ref, gw_bench_row *row)
{
    const gw_bench_case_gpu k = {.what = "grid_d4", .detail = "", .ctx = c, .start = d4_start_kernel,
                                 .verify = d4_verify};
    c->ref = ref;
    gw_bench_gpu_loops(run, &k, row);
}

/* The copy baselines leave the grids' bytes as they were, and the gaps as the poison. */
static int identity_differs(const grid_d4_batch *b, uint64_t cells, const uint8_t *out, uint8_t poison,
                            int whole_payload, char *msg, size_t msg_size)
{
    if (whole_payload) { /* cudaMemcpyAsync of the first P bytes, gaps included */
        if (memcmp(out, b->in, (size_t)cells) == 0) return 0;
        snprintf(msg, msg_size, "the copied payload differs from the input");
        return 1;
    }
    size_t end = 0; /* offsets ascend in these batches: the gap before grid k runs from end to offset[k] */
    for (size_t k = 0; k <= b->n; k++) {
        const size_t at = k < b->n ? (size_t)b->offset[k] : (size_t)b->buf_bytes;
        for (size_t i = end; i < at; i++) {
            if (out[i] != poison) {
                snprintf(msg, msg_size, "byte %zu outside every grid was written", i);
                return 1;
            }
        }
        if (k == b->n) break;
        const size_t size = (size_t)b->height[k] * b->width[k];
        if (memcmp(out + at, b->in + at, size) != 0) {
            snprintf(msg, msg_size, "grid %zu differs from its input", k);
            return 1;
        }
        end = at + size;
    }
    return 0;
}

static void d4_baseline(gw_bench_run *run, d4_ctx *c, d4_mode mode, gw_bench_row *row)
{
    char err[512], msg[256];
    gw_bench_progress(run, "grid_d4 %s: GPU %s, repetitions: %d", row->case_id, row->implementation, run->reps);
    if (mode == D4_CUB && gw_bench_cub_batched_init(&c->cub, c->g.d_in, c->g.d_out, c->b->offset, c->b->height,
                                                    c->b->width, c->b->n, c->g.stream, err, sizeof err)) {
        gw_bench_row_fail(row, "%s", err);
        return;
    }
    const gw_bench_loop loop = d4_start(c, mode, run->reps);
    if (gw_bench_gpu_time(run->gpu, &loop, &row->kernel_ms, err, sizeof err) || d4_download(c, err, sizeof err)) {
        gw_bench_row_fail(row, "%s", err);
        return;
    }
    const int differs =
        identity_differs(c->b, c->cells, c->h_out.out, c->poison, mode == D4_MEMCPY, msg, sizeof msg);
    row->validated = !differs;
    if (differs) gw_bench_row_fail(row, "%s after the timed loop", msg);
    row->gpu_ran = !row->error[0];
}

/* ---- one size ---- */

static void describe(gw_bench_row *row, const d4_size *size, const char *what, const grid_d4_batch *b)
{
    snprintf(row->case_id, sizeof row->case_id, "%s-n%zu-%s", size->shapes, size->n_grids, what);
    row->params = cJSON_CreateObject();
    cJSON_AddStringToObject(row->params, "shapes",
                            strcmp(size->shapes, "arc") ? "every grid 30x30" : "ARC-AGI-1 training distribution");
    cJSON_AddNumberToObject(row->params, "n_grids", (double)b->n);
    cJSON_AddNumberToObject(row->params, "cells", (double)grid_d4_batch_cells(b));
    cJSON_AddNumberToObject(row->params, "buf_bytes", (double)b->buf_bytes);
    cJSON_AddStringToObject(row->params, "offsets", "16-byte aligned");
    cJSON_AddStringToObject(row->params, "cell_values", "0..9");
    row->work = (double)b->n;
    row->work_unit = "grids";
}

static int d4_size_cases(gw_bench_run *run, const void *tier_case)
{
    const d4_size *size = tier_case;
    int rc = 0;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0] && rc == 0; v++) {
        const d4_variant *var = &variants[v];
        grid_d4_batch b;
        grid_d4_result ref = {0}, mt = {0};
        gw_bench_row row;
        gw_bench_row_init(&row, "grid_d4", "grid_d4_launch", 1);
        const int made = strcmp(size->shapes, "arc")
                             ? batch_30x30(&b, size->n_grids, run->seed, var->per_grid_ops, var->batch_op)
                             : grid_d4_batch_builtin(&b, size->n_grids, run->seed, var->per_grid_ops, var->batch_op, 1);
        if (made || grid_d4_result_init(&ref, &b) || grid_d4_result_init(&mt, &b)) {
            fprintf(stderr, "gpuwitness bench: out of memory building %zu grids\n", size->n_grids);
            if (!made) grid_d4_batch_free(&b);
            grid_d4_result_free(&ref);
            grid_d4_result_free(&mt);
            return -1;
        }
        const uint64_t cells = grid_d4_batch_cells(&b);
        describe(&row, size, var->id, &b);
        snprintf(row.label, sizeof row.label, "%zu %s grids, %s", size->n_grids,
                 strcmp(size->shapes, "arc") ? "30x30" : "ARC-shaped", var->label);
        cJSON_AddStringToObject(row.params, "op", var->per_grid_ops ? "random per grid" : op_names[var->batch_op]);
        /* B = 2P + 16 bytes of metadata per grid (offset, shape, result shape), + 1 per grid for its op. */
        row.bytes_moved = 2 * cells + 16 * (uint64_t)b.n + (var->per_grid_ops ? b.n : 0);
        d4_cpu(run, &b, &ref, &mt, &row);
        grid_d4_result_free(&mt);
        if (!row.error[0]) d4_dump(run, &b, &ref, &row);

        d4_ctx c;
        memset(&c, 0, sizeof c);
        char err[512];
        const int gpu = run->gpu && !row.error[0];
        int ctx_made = 0;
        if (gpu) {
            gw_bench_progress(run, "grid_d4 %s: device and pinned buffers", row.case_id);
            ctx_made = 1;
            if (d4_ctx_init(&c, run, &b, err, sizeof err)) gw_bench_row_fail(&row, "%s", err);
            else d4_gpu(run, &c, &ref, &row);
        }
        if (gw_bench_record(run, &row)) rc = -1;
        if (v == 0) { /* the copy baselines, on the rot90 batch */
            const struct {
                d4_mode mode;
                const char *impl, *id;
            } baselines[] = {
                {D4_MEMCPY, "cudaMemcpyAsync D2D of the payload", "memcpy-payload"},
                {D4_CUB, "cub::DeviceMemcpy::Batched", "cub-batched"},
            };
            for (size_t i = 0; i < 2 && rc == 0; i++) {
                gw_bench_row base;
                gw_bench_row_init(&base, "grid_d4", baselines[i].impl, 0);
                describe(&base, size, baselines[i].id, &b);
                snprintf(base.label, sizeof base.label, "%zu %s grids, %s", size->n_grids,
                         strcmp(size->shapes, "arc") ? "30x30" : "ARC-shaped", baselines[i].impl);
                /* memcpy moves the P payload bytes; cub also reads two pointers and a size per grid */
                base.bytes_moved = 2 * cells + (baselines[i].mode == D4_CUB ? 20 * (uint64_t)b.n : 0);
                if (gpu && row.gpu_ran) d4_baseline(run, &c, baselines[i].mode, &base);
                else if (run->gpu) gw_bench_row_fail(&base, "not run: the grid_d4 case on this batch failed");
                if (gw_bench_record(run, &base)) rc = -1;
            }
        }
        if (ctx_made && d4_ctx_free(&c, err, sizeof err)) {
            fprintf(stderr, "gpuwitness bench: grid_d4 %s: %s\n", row.case_id, err);
            run->failures++;
        }
        grid_d4_result_free(&ref);
        grid_d4_batch_free(&b);
    }
    return rc;
}

int gw_grid_d4_bench(gw_bench_run *run)
{
    return gw_bench_run_cases(run, sizes_by_tier, sizeof(d4_size), d4_size_cases);
}
