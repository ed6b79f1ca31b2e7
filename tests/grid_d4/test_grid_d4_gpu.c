/* SPDX-License-Identifier: MIT
 * GPU tests of grid_d4_launch: every group of docs/grid_d4.md, "Test groups", through the same test logic as
 * the CPU reference tests (tests/grid_d4/grid_d4_cases.c), driven by a GPU runner, plus the launcher's own rows:
 * arguments rejected on the host, n_grids = 0, GRID_D4_PREVALIDATED, a batch of a million grids, a NULL
 * witness, and byte-for-byte agreement with grid_d4_ref.
 *
 * Every launch: upload, poison every output (cells 0xFF or 0x5A alternately over the whole out allocation
 * with slack; shapes 0xFFFF; the status record a value no launcher writes), reset the witness, launch on
 * our own stream, synchronise, download; then check the cudaError, the status record, the outputs
 * against the oracle with poison counting, and last the witness. Each guard prints its own words before
 * the test stops, so the canaries (tests/grid_d4/grid_d4_canaries.cu) are named by the guard that must
 * catch them.
 *
 * The canary builds link this file unchanged with grid_d4_launch wrapped by a planted fault (--wrap, see
 * tests/grid_d4/CMakeLists.txt); nothing here knows about them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "grid_d4.h"
#include "grid_d4_fixture.h"
#include "grid_d4_cases.h"
#include "grid_d4_ref.h"
#include "gw_gpu_test.h"

/* A status value no launcher writes (code 0x5A is not a status): if it survives a call, the launcher never
 * reset the record, i.e. nothing ran on the stream. */
#define STATUS_POISON 0x5A5A5A5A5A5A5A5Aull

typedef struct gpu_ctx {
    cudaStream_t stream;
    uint8_t *d_in_alloc, *d_out_alloc;
    uint64_t in_cap, out_cap;
    uint64_t *d_offset;
    uint16_t *d_height, *d_width, *d_out_height, *d_out_width;
    uint8_t *d_ops;
    size_t n_cap;
    grid_d4_status_record *d_status;
    gw_witness *d_witness;
    int no_witness; /* pass NULL for d_witness (recording off) */
} gpu_ctx;

static gpu_ctx gpu; /* one per test process (Criterion runs every test in its own process) */

static void gpu_free_buffers(gpu_ctx *g)
{
    /* Errors are ignored here: this runs from .fini, also after a failed test. */
    cudaFree(g->d_in_alloc);
    cudaFree(g->d_out_alloc);
    cudaFree(g->d_offset);
    cudaFree(g->d_height);
    cudaFree(g->d_width);
    cudaFree(g->d_out_height);
    cudaFree(g->d_out_width);
    cudaFree(g->d_ops);
    g->d_in_alloc = g->d_out_alloc = NULL;
    g->d_offset = NULL;
    g->d_height = g->d_width = g->d_out_height = g->d_out_width = NULL;
    g->d_ops = NULL;
    g->in_cap = g->out_cap = 0;
    g->n_cap = 0;
}

static void gpu_fini(void)
{
    if (!gpu.stream) return; /* skipped or never started: no CUDA call */
    gpu_free_buffers(&gpu);
    cudaFree(gpu.d_status);
    cudaFree(gpu.d_witness);
    cudaStreamDestroy(gpu.stream);
    cudaDeviceReset(); /* compute-sanitizer's leak check reports what is still allocated at context teardown */
    memset(&gpu, 0, sizeof gpu);
}

static void gpu_start(gpu_ctx *g)
{
    if (g->stream) return;
    /* A blocking stream: it also orders after work on the legacy default stream (gw_witness_new's memset). */
    GW_CUDA(cudaStreamCreate(&g->stream));
    GW_CUDA(cudaMalloc((void **)&g->d_status, sizeof *g->d_status));
    g->d_witness = gw_witness_new();
}

/* The runner allocates (launchers never do): grow-only buffers, reallocated when a batch needs more. */
static void gpu_reserve(gpu_ctx *g, size_t n, uint64_t in_bytes, uint64_t out_bytes)
{
    gpu_start(g);
    if (n > g->n_cap) {
        cudaFree(g->d_offset), cudaFree(g->d_height), cudaFree(g->d_width);
        cudaFree(g->d_out_height), cudaFree(g->d_out_width), cudaFree(g->d_ops);
        GW_CUDA(cudaMalloc((void **)&g->d_offset, n * sizeof *g->d_offset));
        GW_CUDA(cudaMalloc((void **)&g->d_height, n * sizeof *g->d_height));
        GW_CUDA(cudaMalloc((void **)&g->d_width, n * sizeof *g->d_width));
        GW_CUDA(cudaMalloc((void **)&g->d_out_height, n * sizeof *g->d_out_height));
        GW_CUDA(cudaMalloc((void **)&g->d_out_width, n * sizeof *g->d_out_width));
        GW_CUDA(cudaMalloc((void **)&g->d_ops, n));
        g->n_cap = n;
    }
    /* The input allocation is exactly what the batch needs, so a read past the last grid's bytes leaves the
     * allocation and compute-sanitizer's memcheck reports it (the output side has poisoned slack, which the
     * comparison checks for stray writes). */
    if (in_bytes != g->in_cap) {
        cudaFree(g->d_in_alloc);
        GW_CUDA(cudaMalloc((void **)&g->d_in_alloc, (size_t)in_bytes));
        g->in_cap = in_bytes;
    }
    if (out_bytes > g->out_cap) {
        cudaFree(g->d_out_alloc);
        GW_CUDA(cudaMalloc((void **)&g->d_out_alloc, (size_t)out_bytes));
        g->out_cap = out_bytes;
    }
}

/* Everything the call may write gets the poison; the witness is zeroed. Stream-ordered. */
static void gpu_poison(gpu_ctx *g, uint8_t cell_poison, uint64_t out_bytes, size_t n)
{
    static const grid_d4_status_record status_poison = {STATUS_POISON};
    GW_CUDA(cudaMemsetAsync(g->d_out_alloc, cell_poison, (size_t)out_bytes, g->stream));
    if (n) {
        GW_CUDA(cudaMemsetAsync(g->d_out_height, 0xFF, n * sizeof *g->d_out_height, g->stream));
        GW_CUDA(cudaMemsetAsync(g->d_out_width, 0xFF, n * sizeof *g->d_out_width, g->stream));
    }
    GW_CUDA(cudaMemcpyAsync(g->d_status, &status_poison, sizeof status_poison, cudaMemcpyHostToDevice, g->stream));
    gw_witness_reset(g->d_witness, g->stream);
}

static grid_d4_status_record gpu_read_status(gpu_ctx *g)
{
    grid_d4_status_record rec;
    GW_CUDA(cudaMemcpy(&rec, g->d_status, sizeof rec, cudaMemcpyDeviceToHost));
    return rec;
}

/* Uploads b and poisons everything the call may write (res->poison for the cells). Stream-ordered. */
static void gpu_upload(gpu_ctx *g, const grid_d4_batch *b, const grid_d4_result *res)
{
    const uint64_t in_bytes = b->in_shift + b->buf_bytes ? b->in_shift + b->buf_bytes : 1;
    gpu_reserve(g, b->n, in_bytes, res->alloc_bytes);
    GW_CUDA(cudaMemcpyAsync(g->d_in_alloc, b->in_alloc, (size_t)in_bytes, cudaMemcpyHostToDevice, g->stream));
    if (b->n) {
        GW_CUDA(cudaMemcpyAsync(g->d_offset, b->offset, b->n * sizeof *b->offset, cudaMemcpyHostToDevice, g->stream));
        GW_CUDA(cudaMemcpyAsync(g->d_height, b->height, b->n * sizeof *b->height, cudaMemcpyHostToDevice, g->stream));
        GW_CUDA(cudaMemcpyAsync(g->d_width, b->width, b->n * sizeof *b->width, cudaMemcpyHostToDevice, g->stream));
        if (b->ops) GW_CUDA(cudaMemcpyAsync(g->d_ops, b->ops, b->n, cudaMemcpyHostToDevice, g->stream));
    }
    gpu_poison(g, res->poison, res->alloc_bytes, b->n);
}

static int gpu_run(void *vctx, const grid_d4_batch *b, grid_d4_result *res, size_t *bad_index)
{
    gpu_ctx *g = vctx;
    gpu_upload(g, b, res);
    uint8_t *d_in = g->d_in_alloc + b->in_shift, *d_out = g->d_out_alloc + b->out_shift;
    const grid_d4_params p = {.n_grids = b->n, .buf_bytes = b->buf_bytes, .batch_op = b->batch_op, .flags = b->flags};
    const cudaError_t err =
        grid_d4_launch(&p, d_in, d_out, g->d_offset, g->d_height, g->d_width, g->d_out_height, g->d_out_width,
                       b->ops ? g->d_ops : NULL, g->d_status, g->no_witness ? NULL : g->d_witness, g->stream);
    cr_assert(err == cudaSuccess, "grid_d4_launch returned %s (%s) for a batch the host accepts [%s]",
              cudaGetErrorName(err), cudaGetErrorString(err), b->desc);
    GW_CUDA(cudaStreamSynchronize(g->stream));

    GW_CUDA(cudaMemcpy(res->out_alloc, g->d_out_alloc, (size_t)res->alloc_bytes, cudaMemcpyDeviceToHost));
    if (b->n) {
        GW_CUDA(cudaMemcpy(res->out_height, g->d_out_height, b->n * sizeof *res->out_height, cudaMemcpyDeviceToHost));
        GW_CUDA(cudaMemcpy(res->out_width, g->d_out_width, b->n * sizeof *res->out_width, cudaMemcpyDeviceToHost));
    }
    const grid_d4_status_record rec = gpu_read_status(g);
    if (b->n == 0) {
        cr_expect(rec.packed == STATUS_POISON, "n_grids = 0 must enqueue nothing, but the status record changed to "
                  "%#llx", rec.packed);
        return rec.packed == STATUS_POISON ? GRID_D4_OK : -1;
    }
    if (rec.packed == STATUS_POISON) {
        cr_expect(rec.packed != STATUS_POISON, "the status record still holds the poison written before the call: "
                  "grid_d4_launch never reset it, so nothing it enqueued ran [%s]", b->desc);
        return -1;
    }
    const grid_d4_status code = grid_d4_status_record_code(&rec);
    *bad_index = grid_d4_status_record_index(&rec);
    if (code != GRID_D4_OK) {
        const int overlap_bit = (rec.packed & GRID_D4_STATUS_OVERLAP_BIT) != 0;
        cr_expect(overlap_bit == (code == GRID_D4_ERR_OVERLAP), "status record %#llx: the overlap bit must be set "
                  "exactly for GRID_D4_ERR_OVERLAP", rec.packed);
    }
    return code;
}

static int gpu_check_witness(void *vctx, uint64_t launches, uint64_t items, char *msg, size_t msg_size)
{
    const gpu_ctx *g = vctx;
    /* With recording off the record must stay as zeroed, exactly as for a call that launches nothing. */
    return g->no_witness ? gw_check_witness(g->d_witness, 0, 0, msg, msg_size)
                         : gw_check_witness(g->d_witness, launches, items, msg, msg_size);
}

static const d4_runner runner_gpu = {"grid_d4_launch", gpu_run, gpu_check_witness, &gpu};

TestSuite(grid_d4_gpu, .init = gw_gpu_test_init, .fini = gpu_fini);
/* The tests over the ARC data set (CTest's test_grid_d4_gpu.data: docs/testing.md, "Data sets"). */
TestSuite(grid_d4_gpu_data, .init = gw_gpu_test_init, .fini = gpu_fini);

#define GPU(test_name, call)                                                                                           \
    Test(grid_d4_gpu, test_name) { call(&runner_gpu); }
#define GPU_DATA(test_name, call)                                                                                      \
    Test(grid_d4_gpu_data, test_name) { call(&runner_gpu); }

static void million(const d4_runner *r)
{
    gw_skip_under_sanitizer("a 1e6-grid batch");
    d4_case_large_batch(r, GW_GPU_EMULATED ? 100000 : 1000000); /* emulated: the same grid-stride paths */
}

GPU(coordinate_probes_name_the_source_cell_for_all_900_small_shapes, d4_case_probes_small)
GPU(coordinate_probes_hold_for_dimensions_31_32_33_64_and_255, d4_case_probes_large)
GPU(cayley_table_follows_the_composition_rule_and_is_a_latin_square, d4_case_cayley)
GPU(group_laws_hold_for_rotations_and_mirrors, d4_case_group_laws)
GPU(grids_with_distinct_cells_have_eight_distinct_images, d4_case_distinct_images)
GPU(results_have_the_swapped_shape_at_their_input_offset_and_gaps_keep_the_poison, d4_case_shape_laws)
GPU(every_op_keeps_each_grids_value_histogram, d4_case_histograms)
GPU(edge_shapes_from_1x1_to_255x255_are_exact, d4_case_edge_shapes)
GPU(a_dimension_of_256_is_too_large, d4_case_dimension_256_is_too_large)
GPU(small_shapes_interleaved_with_30x30_grids_are_exact_for_every_op, d4_case_mixed_interleaved)
GPU_DATA(every_arc_agi_1_training_grid_is_exact_for_every_op, d4_case_all_arc_grids)
GPU(batches_of_1_31_32_and_33_grids_are_exact, d4_case_small_batch_sizes)
GPU(an_empty_batch_succeeds_writes_nothing_and_launches_nothing, d4_case_empty_batch)
GPU(a_batch_of_a_million_arc_shaped_grids_is_exact, million)
GPU(per_grid_ops_match_batch_ops_and_ignore_batch_op, d4_case_per_grid_ops)
GPU(permuting_the_grids_permutes_the_results, d4_case_permutation)
GPU(layouts_alignment_gaps_order_and_shifted_bases_give_the_same_results, d4_case_layouts)
GPU(bad_metadata_sets_the_status_record_to_the_right_code_and_lowest_index, d4_case_bad_metadata)
GPU(two_runs_give_identical_bytes, d4_case_determinism)
GPU_DATA(all_5600_golden_vectors_from_arc_dsl_are_reproduced, d4_case_golden)

/* ------------------------------------------------------------------ launcher-only checks */

/* The launch order (docs/architecture.md, "The launcher convention") on a real runtime: an error left pending
 * by someone else's call is returned as it is, still pending, and nothing is enqueued: the status record,
 * every output and the witness keep their poison. Then the same call, with nothing pending, works. */
Test(grid_d4_gpu, an_error_pending_on_entry_is_returned_untouched_and_nothing_is_enqueued)
{
    grid_d4_batch b;
    D4_FIX(grid_d4_batch_arc_sample(&b, 64, GRID_D4_PACKED, 0x9E7u));
    grid_d4_result res;
    D4_FIX(grid_d4_result_init(&res, &b));
    res.poison = 0xFF;
    gpu_upload(&gpu, &b, &res);
    GW_CUDA(cudaStreamSynchronize(gpu.stream));

    const cudaError_t pending = gw_plant_pending_error();
    const grid_d4_params p = {.n_grids = b.n, .buf_bytes = b.buf_bytes, .batch_op = GRID_D4_ROT90, .flags = 0};
    const cudaError_t err = grid_d4_launch(&p, gpu.d_in_alloc + b.in_shift, gpu.d_out_alloc + b.out_shift,
                                           gpu.d_offset, gpu.d_height, gpu.d_width, gpu.d_out_height,
                                           gpu.d_out_width, NULL, gpu.d_status, gpu.d_witness, gpu.stream);
    cr_expect_eq(err, pending, "grid_d4_launch returned %s, want the pending %s", cudaGetErrorName(err),
                 cudaGetErrorName(pending));
    const cudaError_t still = cudaGetLastError(); /* reads and clears it */
    cr_expect_eq(still, pending, "after the call the pending error is %s, want %s untouched", cudaGetErrorName(still),
                 cudaGetErrorName(pending));
    GW_CUDA(cudaStreamSynchronize(gpu.stream));
    cr_expect(gpu_read_status(&gpu).packed == STATUS_POISON, "the status record changed: the launcher enqueued work "
              "with an error pending");
    GW_CUDA(cudaMemcpy(res.out_alloc, gpu.d_out_alloc, (size_t)res.alloc_bytes, cudaMemcpyDeviceToHost));
    size_t written = 0;
    for (uint64_t i = 0; i < res.alloc_bytes; i++) written += res.out_alloc[i] != 0xFF;
    cr_expect(written == 0, "%zu output bytes lost their poison: the launcher enqueued work with an error pending",
              written);
    gw_assert_witness(gpu.d_witness, 0, 0);
    grid_d4_result_free(&res);

    grid_d4_result ok; /* nothing pending now: the same batch goes through */
    d4_run_ok(&runner_gpu, &b, &ok);
    grid_d4_result_free(&ok);
    grid_d4_batch_free(&b);
}

/* The GPU result and grid_d4_ref's, for the same poison, are the same bytes (out allocation and shapes). */
static void expect_same_as_ref(grid_d4_batch *g)
{
    grid_d4_result got, want;
    d4_run_ok(&runner_gpu, g, &got);
    D4_FIX(grid_d4_result_init(&want, g));
    grid_d4_result_poison(&want, got.poison);
    const grid_d4_params p = {.n_grids = g->n, .buf_bytes = g->buf_bytes, .batch_op = g->batch_op, .flags = g->flags};
    const int s = grid_d4_ref(&p, g->in, want.out, g->offset, g->height, g->width, want.out_height, want.out_width,
                              g->ops);
    cr_assert(s == GRID_D4_OK, "grid_d4_ref rejected the batch: %s", grid_d4_status_str((grid_d4_status)s));
    cr_assert(memcmp(got.out_alloc, want.out_alloc, (size_t)got.alloc_bytes) == 0 &&
                  memcmp(got.out_height, want.out_height, g->n * sizeof *got.out_height) == 0 &&
                  memcmp(got.out_width, want.out_width, g->n * sizeof *got.out_width) == 0,
              "grid_d4_launch and grid_d4_ref differ [%s]", g->desc);
    grid_d4_result_free(&got);
    grid_d4_result_free(&want);
}

Test(grid_d4_gpu_data, matches_grid_d4_ref_byte_for_byte_on_arc_grids)
{
    grid_d4_batch g;
    d4_batch_arc(&g, GRID_D4_GAPS, 0x5EFu);
    for (int pass = 0; pass < 9; pass++) {
        if (pass < 8)
            grid_d4_batch_set_op(&g, pass);
        else
            D4_FIX(grid_d4_batch_set_ops_random(&g, 0x5F0u));
        expect_same_as_ref(&g);
    }
    grid_d4_batch_free(&g);
}

Test(grid_d4_gpu, matches_grid_d4_ref_byte_for_byte_on_arc_grids_and_random_cells)
{
    /* the ARC grids themselves: grid_d4_gpu_data/matches_grid_d4_ref_byte_for_byte_on_arc_grids; here their
     * shapes, with random cells, and then small shapes among 30x30 grids */
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 3436, GRID_D4_GAPS, 0x5EFu));
    for (int pass = 0; pass < 9; pass++) {
        if (pass < 8)
            grid_d4_batch_set_op(&g, pass);
        else
            D4_FIX(grid_d4_batch_set_ops_random(&g, 0x5F0u));
        expect_same_as_ref(&g);
    }
    grid_d4_batch_free(&g);
    uint16_t h[1800], w[1800];
    const size_t n = d4_shapes_interleaved(h, w, 0x5F1u);
    D4_FIX(grid_d4_batch_make(&g, n, h, w, GRID_D4_UNSORTED, 0x5F2u, "interleaved small shapes"));
    grid_d4_batch_fill_random(&g, 255, 0x5F3u);
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0x5F4u));
    D4_FIX(grid_d4_batch_shift(&g, 1, 1));
    expect_same_as_ref(&g);
    grid_d4_batch_free(&g);
}

Test(grid_d4_gpu, prevalidated_flag_skips_the_check_and_gives_the_same_results)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 3436, GRID_D4_PACKED_ODD, 0x9E0u)); /* ARC shapes, random cells 0..9 */
    g.flags = GRID_D4_PREVALIDATED;
    for (int pass = 0; pass < 9; pass++) {
        if (pass < 8)
            grid_d4_batch_set_op(&g, pass);
        else
            D4_FIX(grid_d4_batch_set_ops_random(&g, 0x9E1u));
        /* PREVALIDATED is only for metadata that passed grid_d4_validate */
        grid_d4_result tmp;
        D4_FIX(grid_d4_result_init(&tmp, &g));
        const grid_d4_params p = {.n_grids = g.n, .buf_bytes = g.buf_bytes, .batch_op = g.batch_op, .flags = g.flags};
        cr_assert(grid_d4_validate(&p, g.in, tmp.out, g.offset, g.height, g.width, tmp.out_height, tmp.out_width, g.ops,
                                   NULL) == GRID_D4_OK);
        grid_d4_result_free(&tmp);
        grid_d4_result res;
        d4_run_ok(&runner_gpu, &g, &res);
        grid_d4_result_free(&res);
    }
    grid_d4_batch_free(&g);
    D4_FIX(grid_d4_batch_arc_sample(&g, 200000, GRID_D4_ALIGNED16, 0x9E2u));
    g.flags = GRID_D4_PREVALIDATED;
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0x9E3u));
    grid_d4_result res;
    d4_run_ok(&runner_gpu, &g, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&g);
}

Test(grid_d4_gpu, a_null_witness_turns_recording_off_and_the_results_stay_exact)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 5000, GRID_D4_GAPS, 0x4E1u));
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0x4E2u));
    grid_d4_result res;
    gpu.no_witness = 1; /* the runner's witness check then requires the record to stay zero */
    d4_run_ok(&runner_gpu, &g, &res);
    grid_d4_result_free(&res);
    gpu.no_witness = 0; /* and with recording on, the same call is witnessed */
    d4_run_ok(&runner_gpu, &g, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&g);
}

/* GRID_D4_PREVALIDATED skips the device check, but wrong metadata must still never make the kernel touch
 * memory outside [0, buf_bytes) (docs/grid_d4.md, "Bad input"): the transform re-checks each grid and skips
 * a bad one.
 * Valid grids come out exact, bad grids write nothing (cells and shapes keep the poison), the status record
 * stays clean (no validation pass ran), and the witness counts the valid grids' cells only. */
Test(grid_d4_gpu, prevalidated_wrong_metadata_is_skipped_without_touching_memory_out_of_bounds)
{
    enum { N = 12 };
    const uint16_t h[N] = {3, 256, 5, 0, 7, 2, 30, 4, 1, 9, 255, 6};
    const uint16_t w[N] = {4, 2, 5, 3, 1, 9, 30, 4, 1, 300, 1, 6};
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_make(&g, N, h, w, GRID_D4_GAPS, 0xB0Du, "prevalidated with wrong metadata"));
    grid_d4_batch_fill_random(&g, 255, 0xB0Eu);
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0xB0Fu));
    g.ops[7] = 9;                   /* op out of range */
    g.offset[5] = UINT64_MAX - 3;   /* offset + size wraps around */
    g.offset[11] = g.buf_bytes - 5; /* 6x6 grid running past the end of the buffer */
    g.flags = GRID_D4_PREVALIDATED;
    const int bad[N] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}; /* 256, 0, wrap, op 9, 300, past the end */
    uint64_t valid_cells = 0;
    for (size_t k = 0; k < N; k++)
        if (!bad[k]) valid_cells += grid_d4_batch_cells_of(&g, k);

    grid_d4_result got;
    D4_FIX(grid_d4_result_init(&got, &g));
    grid_d4_result_poison(&got, d4_next_poison());
    size_t index = 0;
    const int status = runner_gpu.run(runner_gpu.ctx, &g, &got, &index);
    cr_assert_eq(status, GRID_D4_OK, "status %d at grid %zu: PREVALIDATED must skip the device check", status, index);

    for (size_t k = 0; k < N; k++) {
        if (bad[k]) {
            cr_assert(got.out_height[k] == GRID_D4_SHAPE_POISON && got.out_width[k] == GRID_D4_SHAPE_POISON,
                      "grid %zu has wrong metadata but its result shape was written (%u x %u)", k,
                      got.out_height[k], got.out_width[k]);
            continue;
        }
        const unsigned H = g.height[k], W = g.width[k], op = (unsigned)grid_d4_batch_op_of(&g, k);
        const unsigned oh = op & 4u ? W : H, ow = op & 4u ? H : W;
        cr_assert(got.out_height[k] == oh && got.out_width[k] == ow, "grid %zu: shape %u x %u, want %u x %u", k,
                  got.out_height[k], got.out_width[k], oh, ow);
        const uint8_t *src = grid_d4_batch_grid(&g, k), *dst = got.out + g.offset[k];
        for (unsigned i = 0; i < oh; i++)
            for (unsigned j = 0; j < ow; j++) {
                unsigned r = op & 4u ? j : i, c = op & 4u ? i : j; /* docs/grid_d4.md, "Semantics" */
                if (op & 2u) r = H - 1 - r;
                if (op & 1u) c = W - 1 - c;
                cr_assert_eq(dst[i * ow + j], src[r * W + c], "grid %zu (op %u) cell (%u,%u)", k, op, i, j);
            }
    }
    /* Every byte outside the valid grids still holds the poison: the bad grids wrote nothing. */
    size_t stray = 0;
    for (uint64_t a = 0; a < got.alloc_bytes; a++) {
        const uint64_t pos = a - got.shift; /* wraps for the bytes before out: never inside a grid */
        int inside = 0;
        for (size_t k = 0; k < N && !inside; k++)
            inside = !bad[k] && pos >= g.offset[k] && pos - g.offset[k] < grid_d4_batch_cells_of(&g, k);
        stray += !inside && got.out_alloc[a] != got.poison;
    }
    cr_assert_eq(stray, 0, "%zu bytes outside the valid grids were written", stray);
    char msg[1024];
    cr_assert_eq(runner_gpu.check_witness(runner_gpu.ctx, 1, valid_cells, msg, sizeof msg), 0,
                 "witness (expected items = the %llu cells of the valid grids):\n%s", (unsigned long long)valid_cells,
                 msg);
    grid_d4_result_free(&got);
    grid_d4_batch_free(&g);
}

/* Arguments the launcher can judge on the host. */
typedef struct launch_args {
    grid_d4_params p;
    const grid_d4_params *pp;
    const uint8_t *in;
    uint8_t *out;
    const uint64_t *offset;
    const uint16_t *height, *width;
    uint16_t *out_height, *out_width;
    const uint8_t *ops;
    grid_d4_status_record *status;
} launch_args;

/* The call must return cudaErrorInvalidValue and enqueue nothing: every output, the input cells, the status
 * record (not even reset) and the witness are as they were. `explain` is the validator's code for the same
 * pointers (it only compares addresses before it would read metadata), or -1 where it has no rule (flags,
 * the status pointer). */
static void expect_rejected(const launch_args *a, const grid_d4_batch *b, const char *row, int explain)
{
    gpu_ctx *g = &gpu;
    gpu_poison(g, D4_POISON_A, g->out_cap, b->n);
    GW_CUDA(cudaStreamSynchronize(g->stream));
    const cudaError_t err = grid_d4_launch(a->pp, a->in, a->out, a->offset, a->height, a->width, a->out_height,
                                           a->out_width, a->ops, a->status, g->d_witness, g->stream);
    cr_assert(err == cudaErrorInvalidValue, "%s: grid_d4_launch returned %s, want cudaErrorInvalidValue", row,
              cudaGetErrorName(err));
    const cudaError_t last = cudaGetLastError();
    cr_assert(last == cudaSuccess, "%s: a rejected call left a launch error behind: %s", row, cudaGetErrorName(last));
    GW_CUDA(cudaStreamSynchronize(g->stream));

    uint8_t *out = malloc((size_t)g->out_cap), *in = malloc((size_t)b->buf_bytes);
    uint16_t *shapes = malloc(2 * b->n * sizeof *shapes);
    cr_assert(out && in && shapes);
    GW_CUDA(cudaMemcpy(out, g->d_out_alloc, (size_t)g->out_cap, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(in, g->d_in_alloc + b->in_shift, (size_t)b->buf_bytes, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(shapes, g->d_out_height, b->n * sizeof *shapes, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(shapes + b->n, g->d_out_width, b->n * sizeof *shapes, cudaMemcpyDeviceToHost));
    uint64_t written = 0;
    for (uint64_t i = 0; i < g->out_cap; i++) written += out[i] != D4_POISON_A;
    size_t shapes_written = 0;
    for (size_t k = 0; k < 2 * b->n; k++) shapes_written += shapes[k] != GRID_D4_SHAPE_POISON;
    cr_expect(written == 0 && shapes_written == 0,
              "%s: rejected, yet %" PRIu64 " out bytes lost the poison 0xFF and %zu shapes were written", row, written,
              shapes_written);
    cr_expect(memcmp(in, b->in, (size_t)b->buf_bytes) == 0, "%s: rejected, yet the input cells changed", row);
    const grid_d4_status_record rec = gpu_read_status(g);
    cr_expect(rec.packed == STATUS_POISON, "%s: rejected, yet the status record changed to %#llx: something was "
              "enqueued", row, rec.packed);
    char msg[512];
    cr_expect(gpu_check_witness(g, 0, 0, msg, sizeof msg) == 0, "%s: %s", row, msg);
    free(out);
    free(in);
    free(shapes);
    if (explain >= 0) {
        size_t index = 1;
        const grid_d4_status v = grid_d4_validate(a->pp, a->in, a->out, a->offset, a->height, a->width, a->out_height,
                                                  a->out_width, a->ops, &index);
        cr_expect((int)v == explain && index == 0, "%s: grid_d4_validate explains it as %d (%s), want %d (%s)", row, v,
                  grid_d4_status_str(v), explain, grid_d4_status_str((grid_d4_status)explain));
    }
}

Test(grid_d4_gpu, host_visible_bad_arguments_return_invalid_value_and_enqueue_nothing)
{
    grid_d4_batch b;
    D4_FIX(grid_d4_batch_arc_sample(&b, 64, GRID_D4_PACKED, 0xBAu));
    D4_FIX(grid_d4_batch_set_ops_random(&b, 0xBBu));
    grid_d4_result res;
    d4_run_ok(&runner_gpu, &b, &res); /* uploads the batch; the buffers hold a valid batch from here on */
    grid_d4_result_free(&res);
    gpu_ctx *g = &gpu;
    const size_t n = b.n;
    const launch_args valid = {
        .p = {.n_grids = n, .buf_bytes = b.buf_bytes, .batch_op = GRID_D4_ROT90, .flags = 0},
        .in = g->d_in_alloc,
        .out = g->d_out_alloc,
        .offset = g->d_offset,
        .height = g->d_height,
        .width = g->d_width,
        .out_height = g->d_out_height,
        .out_width = g->d_out_width,
        .ops = g->d_ops,
        .status = g->d_status,
    };
    enum { ROWS = 24 };
    for (int row = 0; row < ROWS; row++) {
        launch_args a = valid;
        a.pp = &a.p;
        int explain = -1;
        const char *name = "?";
        switch (row) {
        case 0: a.pp = NULL, explain = GRID_D4_ERR_NULL, name = "params NULL"; break;
        case 1: a.in = NULL, explain = GRID_D4_ERR_NULL, name = "d_in NULL"; break;
        case 2: a.out = NULL, explain = GRID_D4_ERR_NULL, name = "d_out NULL"; break;
        case 3: a.offset = NULL, explain = GRID_D4_ERR_NULL, name = "d_offset NULL"; break;
        case 4: a.height = NULL, explain = GRID_D4_ERR_NULL, name = "d_height NULL"; break;
        case 5: a.width = NULL, explain = GRID_D4_ERR_NULL, name = "d_width NULL"; break;
        case 6: a.out_height = NULL, explain = GRID_D4_ERR_NULL, name = "d_out_height NULL"; break;
        case 7: a.out_width = NULL, explain = GRID_D4_ERR_NULL, name = "d_out_width NULL"; break;
        case 8: a.status = NULL, name = "d_status NULL"; break;
        case 9: a.ops = NULL, a.p.batch_op = -1, explain = GRID_D4_ERR_OP, name = "batch_op -1, ops NULL"; break;
        case 10: a.ops = NULL, a.p.batch_op = 8, explain = GRID_D4_ERR_OP, name = "batch_op 8, ops NULL"; break;
        case 11: a.p.flags = 2, name = "unknown flag 2"; break;
        case 12: a.p.flags = GRID_D4_PREVALIDATED | 0x80000000u, name = "PREVALIDATED plus an unknown flag"; break;
        case 13: a.out = (uint8_t *)a.in, explain = GRID_D4_ERR_ALIAS, name = "d_out == d_in"; break;
        case 14:
            a.out = (uint8_t *)a.in + b.buf_bytes - 1, explain = GRID_D4_ERR_ALIAS;
            name = "d_out starts on the last byte of d_in";
            break;
        case 15: a.out_height = (uint16_t *)a.height, explain = GRID_D4_ERR_ALIAS, name = "d_out_height == d_height"; break;
        case 16: a.out_width = a.out_height + n - 1, explain = GRID_D4_ERR_ALIAS, name = "d_out_width overlaps d_out_height"; break;
        case 17:
            a.out_width = (uint16_t *)(a.out + 2), explain = GRID_D4_ERR_ALIAS;
            name = "d_out_width inside d_out";
            break;
        case 18:
            a.out = (uint8_t *)a.offset + 8 * n - 1, explain = GRID_D4_ERR_ALIAS;
            name = "d_out starts on the last byte of d_offset";
            break;
        case 19:
            a.out_height = (uint16_t *)(a.ops + n - 1), explain = GRID_D4_ERR_ALIAS;
            name = "d_out_height starts on the last per-grid op";
            break;
        case 20:
            a.out_width = (uint16_t *)a.width + 1, explain = GRID_D4_ERR_ALIAS;
            name = "d_out_width overlaps d_width";
            break;
        case 21: a.status = (grid_d4_status_record *)(a.out + 8), name = "d_status inside d_out"; break;
        case 22: a.status = (grid_d4_status_record *)a.offset, name = "d_status over d_offset"; break;
        case 23:
            a.in = a.out + b.buf_bytes - 1, explain = GRID_D4_ERR_ALIAS;
            name = "d_in starts on the last byte of d_out";
            break;
        }
        expect_rejected(&a, &b, name, explain);
    }
    /* After all that, the launcher still works on the same buffers. */
    d4_run_ok(&runner_gpu, &b, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&b);
}

Test(grid_d4_gpu, zero_grids_with_null_pointers_return_success_and_enqueue_nothing)
{
    gpu_start(&gpu);
    const grid_d4_params p = {.n_grids = 0, .buf_bytes = 0, .batch_op = GRID_D4_ROT90, .flags = 0};
    gw_witness_reset(gpu.d_witness, gpu.stream);
    const cudaError_t err =
        grid_d4_launch(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, gpu.d_witness, gpu.stream);
    cr_assert(err == cudaSuccess, "n_grids = 0 must succeed whatever the pointers, got %s", cudaGetErrorName(err));
    GW_CUDA(cudaStreamSynchronize(gpu.stream));
    char msg[512];
    cr_assert(gpu_check_witness(&gpu, 0, 0, msg, sizeof msg) == 0, "%s", msg);
}
