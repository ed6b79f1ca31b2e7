/* SPDX-License-Identifier: MIT
 * gpuwitness bench cases for grid_objects (docs/grid_objects.md). For each size of the tier, one batch of grids
 * with shapes drawn from the ARC-AGI-1 training tasks, cells 0..9, 16-byte aligned offsets, run with each of
 * the 8 variants (o_g 0..7) as the batch variant and bg tie arc-dsl. Per case: grid_objects_ref on one thread
 * and grid_objects_ref_mt on all, which must agree; on the GPU an end-to-end loop (upload, launch, download of
 * every output), a kernel loop with the witness and one without; outputs are poisoned before every repetition
 * and compared with the reference after every loop.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "grid_d4_batch.h"
#include "grid_objects_batch.h"
#include "grid_objects_host.h"
#include "grid_objects_ref.h"
#include "gw_bench.h"
#include "gw_cli_cuda.h"
#include "gw_kernel.h"
#include "gw_trace_range.h"

/* grid_d4's ARC-shaped sizes: smoke stays at 1e3 grids (CTest, and the Valgrind gate of bench's CPU path),
 * the larger tiers climb to the 4e6 grids of a full solver sweep. */
static const size_t smoke_sizes[] = {1000};
static const size_t small_sizes[] = {10000, 100000};
static const size_t realistic_sizes[] = {10000, 100000, 1000000};
static const size_t full_sizes[] = {10000, 100000, 1000000, 4000000};
static const gw_bench_cases sizes_by_tier[] = {
    [GW_BENCH_SMOKE] = GW_BENCH_CASES(smoke_sizes), [GW_BENCH_SMALL] = GW_BENCH_CASES(small_sizes),
    [GW_BENCH_REALISTIC] = GW_BENCH_CASES(realistic_sizes), [GW_BENCH_FULL] = GW_BENCH_CASES(full_sizes)};

enum { GO_BG_TIE = GRID_OBJECTS_TIE_ARC_DSL, GO_LABEL_POISON = 0xFE };

/* ---- the CPU reference ---- */

typedef struct go_cpu_args {
    const grid_d4_batch *b;
    grid_objects_result *out;
    int mt;
} go_cpu_args;

static int go_cpu_call(void *ctx)
{
    const go_cpu_args *c = ctx;
    return grid_objects_batch_ref(c->b, GO_BG_TIE, c->mt, c->out);
}

/* Both references, timed; mt must give the same results. The reference result stays in ref. */
static void go_cpu(gw_bench_run *run, const grid_d4_batch *b, grid_objects_result *ref, grid_objects_result *mt,
                   gw_bench_row *row)
{
    char msg[512];
    grid_objects_result_poison(ref, GO_LABEL_POISON);
    grid_objects_result_poison(mt, GO_LABEL_POISON);
    go_cpu_args c1 = {b, ref, 0}, cm = {b, mt, 1};
    gw_bench_progress(run, "grid_objects %s: grid_objects_ref, 1 thread, repetitions: %d", row->case_id, run->cpu_reps);
    int rc = gw_bench_cpu_time(run->cpu_reps, go_cpu_call, &c1, &row->cpu_1t_ms);
    if (rc) {
        gw_bench_row_fail(row, "grid_objects_ref returned %d: %s", rc, grid_objects_status_str((grid_objects_status)rc));
        return;
    }
    row->cpu_mt_threads = gw_bench_cpu_threads();
    gw_bench_progress(run, "grid_objects %s: grid_objects_ref_mt, %d threads, repetitions: %d", row->case_id,
                      row->cpu_mt_threads, run->cpu_reps);
    rc = gw_bench_cpu_time(run->cpu_reps, go_cpu_call, &cm, &row->cpu_mt_ms);
    if (rc) {
        gw_bench_row_fail(row, "grid_objects_ref_mt returned %d: %s", rc,
                          grid_objects_status_str((grid_objects_status)rc));
        return;
    }
    const size_t left = grid_objects_result_poisoned(ref, b);
    if (left) gw_bench_row_fail(row, "grid_objects_ref left %zu output entries holding the poison", left);
    else if (grid_objects_result_compare(mt, ref, b, msg, sizeof msg))
        gw_bench_row_fail(row, "grid_objects_ref_mt differs from grid_objects_ref: %s", msg);
}

/* ---- --dump-inputs: packed grids (no gaps), shapes, variants, and the reference's packed outputs ---- */

static void go_dump(gw_bench_run *run, const grid_d4_batch *b, const grid_objects_result *ref, uint64_t n_records,
                    gw_bench_row *row)
{
    char dir[4096], err[768];
    int rc = gw_bench_dump_dir(run, row->kernel, row->case_id, dir, sizeof dir, err, sizeof err);
    if (rc == 1) return;
    const size_t n = b->n;
    const uint64_t n_cells = grid_d4_batch_cells(b);
    uint8_t *cells = malloc((size_t)n_cells + 1), *variants = malloc(n + 1);
    uint16_t *labels = malloc(((size_t)n_cells + 1) * sizeof *labels);
    int32_t *counts = malloc((n + 1) * sizeof *counts), *bg = malloc((n + 1) * sizeof *bg);
    int32_t *records = malloc(((size_t)n_records + 1) * 7 * sizeof *records);
    cJSON *inputs = cJSON_CreateObject(), *reference = cJSON_CreateObject();
    if (rc == 0 && (!cells || !variants || !labels || !counts || !bg || !records || !inputs || !reference)) {
        snprintf(err, sizeof err, "out of memory dumping %s", row->case_id);
        rc = -1;
    }
    if (rc == 0) {
        size_t at = 0, rec = 0;
        for (size_t k = 0; k < n; k++) {
            const size_t size = (size_t)grid_d4_batch_cells_of(b, k);
            memcpy(cells + at, b->in + b->offset[k], size);
            memcpy(labels + at, ref->labels + b->offset[k], size * sizeof *labels);
            at += size;
            variants[k] = (uint8_t)grid_d4_batch_op_of(b, k);
            counts[k] = (int32_t)ref->n_objects[k];
            bg[k] = ref->bg[k];
            for (uint32_t j = 0; j < ref->n_objects[k]; j++, rec++) {
                const grid_objects_object *o = &ref->objects[b->offset[k] + j];
                const int32_t fields[7] = {o->first_cell, o->colour, o->n_cells, o->top, o->left, o->bottom, o->right};
                memcpy(records + rec * 7, fields, sizeof fields);
            }
        }
    }
    const int64_t cells_shape[1] = {(int64_t)n_cells}, grid_shape[1] = {(int64_t)n},
                  records_shape[2] = {(int64_t)n_records, 7};
    const struct {
        const char *prefix, *key;
        gw_npy_dtype dtype;
        int ndim;
        const int64_t *shape;
        const void *data;
        cJSON *files;
    } arrays[] = {
        {"", "cells", GW_NPY_U1, 1, cells_shape, cells, inputs},
        {"", "height", GW_NPY_U2, 1, grid_shape, b->height, inputs},
        {"", "width", GW_NPY_U2, 1, grid_shape, b->width, inputs},
        {"", "variants", GW_NPY_U1, 1, grid_shape, variants, inputs},
        {"ref_", "labels", GW_NPY_U2, 1, cells_shape, labels, reference},
        {"ref_", "n_objects", GW_NPY_I4, 1, grid_shape, counts, reference},
        {"ref_", "bg", GW_NPY_I4, 1, grid_shape, bg, reference},
        {"ref_", "objects", GW_NPY_I4, 2, records_shape, records, reference},
    };
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0] && rc == 0; i++)
        rc = gw_bench_dump_npy(dir, arrays[i].prefix, arrays[i].key, arrays[i].dtype, arrays[i].ndim, arrays[i].shape,
                               arrays[i].data, arrays[i].files, err, sizeof err);
    free(cells);
    free(variants);
    free(labels);
    free(counts);
    free(bg);
    free(records);
    gw_bench_dump_finish(run, row, rc, inputs, reference, err);
}

/* ---- the GPU part ---- */

/* Device buffers (gw_go_gpu, shared with `check`), pinned host copies for the end-to-end loop, and the state
 * of the loop in progress. */
typedef struct go_ctx {
    gw_go_gpu g;
    const grid_d4_batch *b;
    uint64_t cells; /* of b: the witness's items per launch */
    grid_objects_params p;
    const grid_objects_result *ref; /* what every loop's outputs must equal */
    gw_bench_mode mode;
    uint8_t poison; /* of the last prepared repetition (n_objects, bg) */
    int reps;
    uint8_t *h_in;
    uint64_t *h_offset;
    uint16_t *h_height, *h_width;
    grid_objects_result h_out; /* pinned arrays: freed with cudaFreeHost, never grid_objects_result_free */
} go_ctx;

/* Poison by memset, outside the timed region: labels and objects get bytes 0xFE (0xFEFE is above the largest
 * label 65024 and is not GRID_OBJECTS_NO_OBJECT: the only byte fill no label or first_cell can take, and the
 * poison of grid_objects_result_poison(0xFE), which the comparison expects outside the grids); n_objects and
 * bg get 0xFE and 0x5A in turn (n_objects 0x5A5A5A5A is above any count, bg 0x5A5A is neither -1 nor a
 * colour). */
static int go_prepare(void *ctx, int rep, char *err, size_t err_size)
{
    go_ctx *c = ctx;
    cudaStream_t s = (cudaStream_t)c->g.stream;
    const size_t out = (size_t)c->g.out_entries, n = c->b->n; /* the pad too */
    c->poison = (rep & 1) ? 0x5A : GO_LABEL_POISON;
    CUDA_TRY(cudaMemsetAsync(c->g.d_labels, GO_LABEL_POISON, out * sizeof(uint16_t), s), "cudaMemsetAsync(labels poison)");
    CUDA_TRY(cudaMemsetAsync(c->g.d_objects, GO_LABEL_POISON, out * sizeof(grid_objects_object), s),
             "cudaMemsetAsync(objects poison)");
    CUDA_TRY(cudaMemsetAsync(c->g.d_n_objects, c->poison, n * sizeof(uint32_t), s), "cudaMemsetAsync(n_objects poison)");
    CUDA_TRY(cudaMemsetAsync(c->g.d_bg, c->poison, n * sizeof(int16_t), s), "cudaMemsetAsync(bg poison)");
    /* The witness adds up every timed repetition: it must show reps launches and reps times the cells. */
    if (rep == 0 && c->mode != GW_BENCH_KERNEL_NO_WITNESS)
        CUDA_TRY(cudaMemsetAsync(c->g.d_witness, 0, sizeof *c->g.d_witness, s), "cudaMemsetAsync(witness)");
    return 0;
fail:
    return -1;
}

static int go_launch(void *ctx, char *err, size_t err_size)
{
    go_ctx *c = ctx;
    const grid_d4_batch *b = c->b;
    gw_go_gpu *g = &c->g;
    cudaStream_t s = (cudaStream_t)g->stream;
    const size_t n = b->n, buf = (size_t)b->buf_bytes, out = (size_t)g->out_entries;
    /* NVTX ranges per stage of the end-to-end loop, for --trace and Nsight; the kernel-only loops get none, so
     * nothing is added between their events and the launch. Closed on failure. */
    const int e2e = c->mode == GW_BENCH_END_TO_END, range_depth = gw_range_depth();
    if (e2e) {
        gw_range_push("grid_objects/upload");
        CUDA_TRY(cudaMemcpyAsync(g->d_in, c->h_in, buf, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync(in, host to device)");
        CUDA_TRY(cudaMemcpyAsync(g->d_offset, c->h_offset, n * sizeof *c->h_offset, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(offset, host to device)");
        CUDA_TRY(cudaMemcpyAsync(g->d_height, c->h_height, n * sizeof *c->h_height, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(height, host to device)");
        CUDA_TRY(cudaMemcpyAsync(g->d_width, c->h_width, n * sizeof *c->h_width, cudaMemcpyHostToDevice, s),
                 "cudaMemcpyAsync(width, host to device)");
        gw_range_pop();
        gw_range_push("grid_objects/launch");
    }
    CUDA_TRY(grid_objects_launch(&c->p, g->d_in, g->d_offset, g->d_height, g->d_width, NULL, g->d_labels, g->d_objects,
                                 g->d_n_objects, g->d_bg, g->d_status,
                                 c->mode == GW_BENCH_KERNEL_NO_WITNESS ? NULL : g->d_witness, s),
             "grid_objects_launch");
    if (e2e) {
        gw_range_pop();
        /* Every output comes back, the whole object table included: which records are used is known only
         * from n_objects, on the device. */
        gw_range_push("grid_objects/download");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.labels, g->d_labels, out * sizeof(uint16_t), cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync(labels, device to host)");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.objects, g->d_objects, out * sizeof(grid_objects_object),
                                 cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync(objects, device to host)");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.n_objects, g->d_n_objects, n * sizeof(uint32_t), cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync(n_objects, device to host)");
        CUDA_TRY(cudaMemcpyAsync(c->h_out.bg, g->d_bg, n * sizeof(int16_t), cudaMemcpyDeviceToHost, s),
                 "cudaMemcpyAsync(bg, device to host)");
        gw_range_pop();
    }
    return 0;
fail:
    gw_range_pop_to(range_depth);
    return -1;
}

/* Device buffers and pinned host buffers with the inputs copied in; the end-to-end loop, which runs first,
 * uploads them. 0, or -1 with err; go_ctx_free releases what was made either way. */
static int go_ctx_init(go_ctx *c, gw_bench_run *run, const grid_d4_batch *b, char *err, size_t err_size)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->cells = grid_d4_batch_cells(b);
    const size_t n = b->n, buf = (size_t)b->buf_bytes;
    if (gw_go_gpu_init(&c->g, run->gpu->ordinal, b, err, err_size)) return -1;
    const size_t out = (size_t)c->g.out_entries;
    c->h_out.n = n;
    c->h_out.buf_bytes = b->buf_bytes;
    c->h_out.out_entries = c->g.out_entries;
    CUDA_TRY(cudaMallocHost((void **)&c->h_in, buf + 1), "cudaMallocHost(in)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_offset, (n + 1) * sizeof *c->h_offset), "cudaMallocHost(offset)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_height, (n + 1) * sizeof *c->h_height), "cudaMallocHost(height)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_width, (n + 1) * sizeof *c->h_width), "cudaMallocHost(width)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.labels, (out + 1) * sizeof(uint16_t)), "cudaMallocHost(labels)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.objects, (out + 1) * sizeof(grid_objects_object)),
             "cudaMallocHost(objects)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.n_objects, (n + 1) * sizeof(uint32_t)), "cudaMallocHost(n_objects)");
    CUDA_TRY(cudaMallocHost((void **)&c->h_out.bg, (n + 1) * sizeof(int16_t)), "cudaMallocHost(bg)");
    memcpy(c->h_in, b->in, buf);
    memcpy(c->h_offset, b->offset, n * sizeof *c->h_offset);
    memcpy(c->h_height, b->height, n * sizeof *c->h_height);
    memcpy(c->h_width, b->width, n * sizeof *c->h_width);
    return 0;
fail:
    return -1; /* go_ctx_free releases what was made */
}

static int go_ctx_free(go_ctx *c, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    void *pinned[] = {c->h_in,         c->h_offset,       c->h_height,          c->h_width,
                      c->h_out.labels, c->h_out.objects, c->h_out.n_objects, c->h_out.bg};
    for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++)
        if (pinned[i]) gw_cli_cuda_keep_first(cudaFreeHost(pinned[i]), "cudaFreeHost", &first, &what);
    int rc = gw_go_gpu_free(&c->g, err, err_size);
    memset(c, 0, sizeof *c);
    if (first != cudaSuccess && rc == 0) {
        gw_cli_cuda_fail(err, err_size, what, first);
        rc = -1;
    }
    return rc;
}

/* Copies the device outputs into the pinned host buffers, first poisoned (0xA5) so that a failed download
 * cannot look right. */
static int go_download(go_ctx *c, char *err, size_t err_size)
{
    const size_t n = c->b->n, out = (size_t)c->g.out_entries;
    grid_objects_result_poison(&c->h_out, 0xA5);
    CUDA_TRY(cudaMemcpy(c->h_out.labels, c->g.d_labels, out * sizeof(uint16_t), cudaMemcpyDeviceToHost),
             "cudaMemcpy(labels, device to host)");
    CUDA_TRY(cudaMemcpy(c->h_out.objects, c->g.d_objects, out * sizeof(grid_objects_object), cudaMemcpyDeviceToHost),
             "cudaMemcpy(objects, device to host)");
    CUDA_TRY(cudaMemcpy(c->h_out.n_objects, c->g.d_n_objects, n * sizeof(uint32_t), cudaMemcpyDeviceToHost),
             "cudaMemcpy(n_objects, device to host)");
    CUDA_TRY(cudaMemcpy(c->h_out.bg, c->g.d_bg, n * sizeof(int16_t), cudaMemcpyDeviceToHost),
             "cudaMemcpy(bg, device to host)");
    return 0;
fail:
    return -1;
}

/* After a loop: the last repetition's status, its outputs against the reference (labels outside the grids
 * must hold the label poison), and the witness summed over the timed repetitions. */
static void go_verify(void *ctx, gw_bench_row *row, const char *loop_name)
{
    go_ctx *c = ctx;
    char err[512], msg[1024];
    const size_t err_size = sizeof err;
    grid_objects_status_record status;
    gw_witness w;
    memset(&status, 0, sizeof status);
    CUDA_TRY(cudaMemcpy(&status, c->g.d_status, sizeof status, cudaMemcpyDeviceToHost), "cudaMemcpy(status)");
    if (grid_objects_status_record_code(&status) != GRID_OBJECTS_OK) {
        gw_bench_row_fail(row, "%s: the device rejected grid %zu: %s", loop_name,
                          grid_objects_status_record_index(&status),
                          grid_objects_status_str(grid_objects_status_record_code(&status)));
        return;
    }
    if (c->mode != GW_BENCH_END_TO_END && go_download(c, err, sizeof err)) goto fail;
    c->h_out.poison = GO_LABEL_POISON; /* the compare reads the label poison from here */
    const int diff = grid_objects_result_compare(&c->h_out, c->ref, c->b, msg, sizeof msg) != 0;
    row->validated = diff == 0 && row->validated != 0; /* 1: every comparison so far found equal results */
    if (diff) {
        gw_bench_row_fail(row, "%s: the output after the timed loop differs from grid_objects_ref: %s", loop_name, msg);
        return;
    }
    if (c->mode == GW_BENCH_KERNEL_NO_WITNESS) return;
    CUDA_TRY(cudaMemcpy(&w, c->g.d_witness, sizeof w, cudaMemcpyDeviceToHost), "cudaMemcpy(witness)");
    gw_bench_witness_verify(row, loop_name, &w, c->reps, c->cells, &c->g.facts);
    return;
fail:
    gw_bench_row_fail(row, "%s: %s", loop_name, err);
}

static gw_bench_loop go_start(void *ctx, gw_bench_mode mode, int reps)
{
    go_ctx *c = ctx;
    c->mode = mode;
    c->reps = reps;
    const gw_bench_loop loop = {.ctx = c, .stream = c->g.stream, .reps = reps, .prepare = go_prepare,
                                .launch = go_launch};
    if (mode == GW_BENCH_END_TO_END) grid_objects_result_poison(&c->h_out, 0xA5); /* proves a download happened */
    return loop;
}

/* ---- one size: the batch is made once, then each variant is one case ---- */

static int go_size_cases(gw_bench_run *run, const void *tier_case)
{
    const size_t n_grids = *(const size_t *)tier_case;
    grid_d4_batch b;
    grid_objects_result ref = {0}, mt = {0};
    if (grid_d4_batch_builtin(&b, n_grids, run->seed, 0, 0, 1)) {
        fprintf(stderr, "gpuwitness bench: out of memory building %zu grids\n", n_grids);
        return -1;
    }
    if (grid_objects_result_init(&ref, b.n, b.buf_bytes) || grid_objects_result_init(&mt, b.n, b.buf_bytes)) {
        fprintf(stderr, "gpuwitness bench: out of memory for the outputs of %zu grids\n", n_grids);
        grid_objects_result_free(&ref);
        grid_d4_batch_free(&b);
        return -1;
    }
    const uint64_t cells = grid_d4_batch_cells(&b);
    go_ctx c;
    memset(&c, 0, sizeof c);
    char err[512], ctx_err[512] = "";
    int rc = 0, ctx_made = 0, ctx_ok = 0;
    for (int variant = 0; variant < 8 && rc == 0; variant++) {
        grid_d4_batch_set_op(&b, variant);
        gw_bench_row row;
        gw_bench_row_init(&row, "grid_objects", "grid_objects_launch", 1);
        snprintf(row.case_id, sizeof row.case_id, "arc-n%zu-v%d", n_grids, variant);
        snprintf(row.label, sizeof row.label, "%zu ARC-shaped grids, variant %d (%s)", n_grids, variant,
                 gw_go_variant_words(variant));
        row.params = cJSON_CreateObject();
        cJSON_AddStringToObject(row.params, "shapes", "ARC-AGI-1 training distribution");
        cJSON_AddNumberToObject(row.params, "n_grids", (double)b.n);
        cJSON_AddNumberToObject(row.params, "cells", (double)cells);
        cJSON_AddNumberToObject(row.params, "buf_bytes", (double)b.buf_bytes);
        cJSON_AddStringToObject(row.params, "offsets", "16-byte aligned");
        cJSON_AddStringToObject(row.params, "cell_values", "0..9");
        cJSON_AddNumberToObject(row.params, "variant", variant);
        cJSON_AddStringToObject(row.params, "bg_tie", "arc-dsl");
        row.work = (double)b.n;
        row.work_unit = "grids";

        go_cpu(run, &b, &ref, &mt, &row);
        uint64_t records = 0;
        for (size_t k = 0; k < b.n; k++) records += ref.n_objects[k];
        cJSON_AddNumberToObject(row.params, "objects", (double)records);
        /* In: the cells and 12 bytes of metadata per grid (offset, height, width). Out: a 2-byte label per
         * cell, n_objects and bg per grid, and the records actually used (14 bytes each). */
        row.bytes_moved = cells + 12 * (uint64_t)b.n + 2 * cells + 6 * (uint64_t)b.n +
                          (uint64_t)sizeof(grid_objects_object) * records;
        if (!row.error[0]) go_dump(run, &b, &ref, records, &row);

        if (run->gpu && !row.error[0]) {
            if (!ctx_made) { /* one set of buffers for the 8 variants: the batch is the same */
                ctx_made = 1;
                gw_bench_progress(run, "grid_objects arc-n%zu: device and pinned buffers", n_grids);
                ctx_ok = go_ctx_init(&c, run, &b, ctx_err, sizeof ctx_err) == 0;
            }
            if (!ctx_ok) {
                gw_bench_row_fail(&row, "%s", ctx_err);
            } else {
                c.p = grid_objects_batch_params(&b, GO_BG_TIE);
                c.p.out_entries = c.g.out_entries; /* what was allocated: the launcher checks the padding */
                c.ref = &ref;
                const gw_bench_case_gpu k = {.what = "grid_objects", .detail = "", .ctx = &c, .start = go_start,
                                             .verify = go_verify};
                gw_bench_gpu_loops(run, &k, &row);
            }
        }
        if (gw_bench_record(run, &row)) rc = -1;
    }
    if (ctx_made && go_ctx_free(&c, err, sizeof err)) {
        fprintf(stderr, "gpuwitness bench: grid_objects arc-n%zu: %s\n", n_grids, err);
        run->failures++;
    }
    grid_objects_result_free(&mt);
    grid_objects_result_free(&ref);
    grid_d4_batch_free(&b);
    return rc;
}

int gw_grid_objects_bench(gw_bench_run *run)
{
    return gw_bench_run_cases(run, sizes_by_tier, sizeof(size_t), go_size_cases);
}
