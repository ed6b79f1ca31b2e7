/* SPDX-License-Identifier: MIT
 * GPU tests of grid_objects_launch: every group of docs/grid_objects.md, "Tests", through the same test logic
 * as the CPU reference tests (tests/grid_objects/go_cases.c), driven by a GPU runner, plus the launcher's own
 * rows: arguments rejected on the host, n_grids = 0, GRID_OBJECTS_PREVALIDATED, a NULL witness, a pending
 * error, and byte-for-byte agreement with grid_objects_ref.
 *
 * Every launch: upload, poison every output (the host result's poison, uploaded as it is; the status record a
 * value no launcher writes), reset the witness, launch on our own stream, synchronise, download; then the
 * fixture checks the status, the poison, the outputs against the oracle and last the witness, each guard in
 * its own words, so the canaries (tests/grid_objects/grid_objects_canaries.cu) are named by the guard that
 * must catch them. The canary builds link this file unchanged with grid_objects_launch wrapped by a planted
 * fault; nothing here knows about them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "go_cases.h"
#include "go_fixture.h"
#include "grid_objects.h"
#include "grid_objects_batch.h"
#include "grid_objects_ref.h"
#include "gw_gpu_test.h"

/* A status value no launcher writes (code 0x5A is not a status): if it survives a call, the launcher never
 * reset the record, i.e. nothing ran on the stream. */
#define STATUS_POISON 0x5A5A5A5A5A5A5A5Aull

typedef struct gpu_ctx {
    cudaStream_t stream;
    uint8_t *d_in_alloc;
    uint64_t in_cap, out_cap; /* out_cap: the entries d_labels and d_objects hold */
    uint64_t *d_offset;
    uint16_t *d_height, *d_width;
    uint8_t *d_variants;
    size_t n_cap;
    uint16_t *d_labels;
    grid_objects_object *d_objects;
    uint32_t *d_n_objects;
    int16_t *d_bg;
    grid_objects_status_record *d_status;
    gw_witness *d_witness;
    int no_witness; /* pass NULL for d_witness (recording off) */
    uint32_t flags; /* added to the batch's flags */
} gpu_ctx;

static gpu_ctx gpu; /* one per test process (Criterion runs every test in its own process) */

static void gpu_free_buffers(gpu_ctx *g)
{
    /* Errors are ignored here: this runs from .fini, also after a failed test. */
    cudaFree(g->d_in_alloc), cudaFree(g->d_offset), cudaFree(g->d_height), cudaFree(g->d_width);
    cudaFree(g->d_variants), cudaFree(g->d_labels), cudaFree(g->d_objects), cudaFree(g->d_n_objects);
    cudaFree(g->d_bg);
    g->d_in_alloc = g->d_variants = NULL;
    g->d_offset = NULL;
    g->d_height = g->d_width = g->d_labels = NULL;
    g->d_objects = NULL;
    g->d_n_objects = NULL;
    g->d_bg = NULL;
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
    GW_CUDA(cudaStreamCreate(&g->stream));
    GW_CUDA(cudaMalloc((void **)&g->d_status, sizeof *g->d_status));
    g->d_witness = gw_witness_new();
}

/* The runner allocates (launchers never do). The input and every output are exactly what the batch needs
 * (labels and objects: out_entries, the padded size of grid_objects.h), so an access past the last grid, or
 * past the pad, leaves the allocation and compute-sanitizer's memcheck reports it. */
static void gpu_reserve(gpu_ctx *g, size_t n, uint64_t in_bytes, uint64_t out_entries)
{
    gpu_start(g);
    if (n != g->n_cap) {
        cudaFree(g->d_offset), cudaFree(g->d_height), cudaFree(g->d_width), cudaFree(g->d_variants);
        cudaFree(g->d_n_objects), cudaFree(g->d_bg);
        const size_t m = n ? n : 1;
        GW_CUDA(cudaMalloc((void **)&g->d_offset, m * sizeof *g->d_offset));
        GW_CUDA(cudaMalloc((void **)&g->d_height, m * sizeof *g->d_height));
        GW_CUDA(cudaMalloc((void **)&g->d_width, m * sizeof *g->d_width));
        GW_CUDA(cudaMalloc((void **)&g->d_variants, m));
        GW_CUDA(cudaMalloc((void **)&g->d_n_objects, m * sizeof *g->d_n_objects));
        GW_CUDA(cudaMalloc((void **)&g->d_bg, m * sizeof *g->d_bg));
        g->n_cap = n;
    }
    if (in_bytes != g->in_cap) {
        cudaFree(g->d_in_alloc);
        GW_CUDA(cudaMalloc((void **)&g->d_in_alloc, (size_t)in_bytes));
        g->in_cap = in_bytes;
    }
    if (out_entries != g->out_cap) {
        cudaFree(g->d_labels), cudaFree(g->d_objects);
        const size_t m = out_entries ? (size_t)out_entries : 1;
        GW_CUDA(cudaMalloc((void **)&g->d_labels, m * sizeof *g->d_labels));
        GW_CUDA(cudaMalloc((void **)&g->d_objects, m * sizeof *g->d_objects));
        g->out_cap = out_entries;
    }
}

/* Uploads b and res (poisoned by the fixture, pad included: the device's outputs get the same poison, and
 * initcheck sees no unwritten byte in a word the atomics read), poisons the status, zeroes the witness.
 * Stream-ordered. */
static void gpu_upload(gpu_ctx *g, const grid_d4_batch *b, const grid_objects_result *res)
{
    const uint64_t in_bytes = b->in_shift + b->buf_bytes ? b->in_shift + b->buf_bytes : 1;
    static const grid_objects_status_record status_poison = {STATUS_POISON};
    gpu_reserve(g, b->n, in_bytes, res->out_entries);
    GW_CUDA(cudaMemcpyAsync(g->d_in_alloc, b->in_alloc, (size_t)in_bytes, cudaMemcpyHostToDevice, g->stream));
    if (b->n) {
        GW_CUDA(cudaMemcpyAsync(g->d_offset, b->offset, b->n * sizeof *b->offset, cudaMemcpyHostToDevice, g->stream));
        GW_CUDA(cudaMemcpyAsync(g->d_height, b->height, b->n * sizeof *b->height, cudaMemcpyHostToDevice, g->stream));
        GW_CUDA(cudaMemcpyAsync(g->d_width, b->width, b->n * sizeof *b->width, cudaMemcpyHostToDevice, g->stream));
        if (b->ops) GW_CUDA(cudaMemcpyAsync(g->d_variants, b->ops, b->n, cudaMemcpyHostToDevice, g->stream));
        GW_CUDA(cudaMemcpyAsync(g->d_n_objects, res->n_objects, b->n * sizeof *res->n_objects, cudaMemcpyHostToDevice,
                                g->stream));
        GW_CUDA(cudaMemcpyAsync(g->d_bg, res->bg, b->n * sizeof *res->bg, cudaMemcpyHostToDevice, g->stream));
    }
    if (res->out_entries) {
        GW_CUDA(cudaMemcpyAsync(g->d_labels, res->labels, (size_t)res->out_entries * sizeof *res->labels,
                                cudaMemcpyHostToDevice, g->stream));
        GW_CUDA(cudaMemcpyAsync(g->d_objects, res->objects, (size_t)res->out_entries * sizeof *res->objects,
                                cudaMemcpyHostToDevice, g->stream));
    }
    GW_CUDA(cudaMemcpyAsync(g->d_status, &status_poison, sizeof status_poison, cudaMemcpyHostToDevice, g->stream));
    gw_witness_reset(g->d_witness, g->stream);
}

static cudaError_t gpu_launch(gpu_ctx *g, const grid_d4_batch *b, int bg_tie)
{
    grid_objects_params p = grid_objects_batch_params(b, bg_tie);
    p.out_entries = g->out_cap; /* what was allocated: the launcher checks it against the rule */
    p.flags |= g->flags;
    return grid_objects_launch(&p, g->d_in_alloc + b->in_shift, g->d_offset, g->d_height, g->d_width,
                               b->ops ? g->d_variants : NULL, g->d_labels, g->d_objects, g->d_n_objects, g->d_bg,
                               g->d_status, g->no_witness ? NULL : g->d_witness, g->stream);
}

static int gpu_run(void *vctx, const grid_d4_batch *b, int bg_tie, grid_objects_result *res, size_t *bad_index)
{
    gpu_ctx *g = vctx;
    gpu_upload(g, b, res);
    const cudaError_t err = gpu_launch(g, b, bg_tie);
    cr_assert(err == cudaSuccess, "grid_objects_launch returned %s (%s) for a batch the host accepts [%s]",
              cudaGetErrorName(err), cudaGetErrorString(err), b->desc);
    GW_CUDA(cudaStreamSynchronize(g->stream));

    if (b->n) {
        GW_CUDA(cudaMemcpy(res->n_objects, g->d_n_objects, b->n * sizeof *res->n_objects, cudaMemcpyDeviceToHost));
        GW_CUDA(cudaMemcpy(res->bg, g->d_bg, b->n * sizeof *res->bg, cudaMemcpyDeviceToHost));
    }
    if (res->out_entries) {
        GW_CUDA(cudaMemcpy(res->labels, g->d_labels, (size_t)res->out_entries * sizeof *res->labels,
                           cudaMemcpyDeviceToHost));
        GW_CUDA(cudaMemcpy(res->objects, g->d_objects, (size_t)res->out_entries * sizeof *res->objects,
                           cudaMemcpyDeviceToHost));
    }
    grid_objects_status_record rec;
    GW_CUDA(cudaMemcpy(&rec, g->d_status, sizeof rec, cudaMemcpyDeviceToHost));
    if (b->n == 0) {
        cr_expect(rec.packed == STATUS_POISON, "n_grids = 0 must enqueue nothing, but the status record changed to "
                  "%#llx", rec.packed);
        return rec.packed == STATUS_POISON ? GRID_OBJECTS_OK : -1;
    }
    if (rec.packed == STATUS_POISON) {
        cr_expect(rec.packed != STATUS_POISON, "the status record still holds the poison written before the call: "
                  "grid_objects_launch never reset it, so nothing it enqueued ran [%s]", b->desc);
        return -1;
    }
    const grid_objects_status code = grid_objects_status_record_code(&rec);
    *bad_index = grid_objects_status_record_index(&rec);
    if (code != GRID_OBJECTS_OK) {
        const int overlap_bit = (rec.packed & GRID_OBJECTS_STATUS_OVERLAP_BIT) != 0;
        cr_expect(overlap_bit == (code == GRID_OBJECTS_ERR_OVERLAP), "status record %#llx: the overlap bit must be "
                  "set exactly for GRID_OBJECTS_ERR_OVERLAP", rec.packed);
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

static const go_runner runner_gpu = {"grid_objects_launch", gpu_run, gpu_check_witness, &gpu};

TestSuite(grid_objects_gpu, .init = gw_gpu_test_init, .fini = gpu_fini);
TestSuite(grid_objects_gpu_data, .init = gw_gpu_test_init, .fini = gpu_fini);

#define GPU(test_name, call)                                                                                           \
    Test(grid_objects_gpu, test_name) { call(&runner_gpu); }
#define GPU_DATA(test_name, call)                                                                                      \
    Test(grid_objects_gpu_data, test_name) { call(&runner_gpu); }

/* The groups of go_cases.h, as the CPU test runs them on the references (test_grid_objects_ref.c). */
GPU_DATA(all_3436_arc_grids_match_arc_dsls_golden_vectors_for_all_8_variants, go_case_golden)
GPU_DATA(every_arc_agi_1_training_grid_obeys_the_laws_for_every_variant, go_case_all_arc_grids)
GPU(labels_are_canonical_connected_and_agree_with_the_object_table, go_case_laws)
GPU(objects_commute_with_the_8_d4_ops, go_case_d4_commutes)
GPU(edge_shapes_from_1x1_to_255x255_and_one_colour_grids_are_exact, go_case_edge_shapes)
GPU(checkerboards_have_the_closed_form_counts, go_case_checkerboards)
GPU(one_cell_wide_spirals_are_one_object, go_case_spirals)
GPU(bg_ties_follow_arc_dsl_or_the_smallest_colour, go_case_bg_ties)
GPU(per_grid_variants_match_batch_variants_and_ignore_batch_variant, go_case_per_grid_variants)
GPU(batches_of_1_31_32_and_33_grids_are_exact, go_case_small_batch_sizes)
GPU(an_empty_batch_succeeds_writes_nothing_and_launches_nothing, go_case_empty_batch)
GPU(layouts_packed_odd_aligned_gaps_and_unsorted_give_the_same_results, go_case_layouts)
GPU(three_runs_give_identical_results, go_case_determinism)
GPU(bad_metadata_is_rejected_with_the_right_code_and_lowest_index, go_case_bad_metadata)

/* emulated: 10000 grids, the same grid-stride paths */
static void large_batch(const go_runner *r) { go_case_large_batch(r, GW_GPU_EMULATED ? 10000 : 100000); }
GPU(a_batch_of_100000_arc_shaped_grids_is_exact, large_batch)

/* ---- the launcher's own rows ---- */

/* An ARC-shaped batch of n grids with random per-grid variants, cells 0..max_colour. */
static void arc_batch(grid_d4_batch *b, size_t n, unsigned max_colour, uint64_t seed)
{
    GO_FIX(grid_d4_batch_arc_sample(b, n, GRID_D4_GAPS, seed));
    grid_d4_batch_fill_random(b, max_colour, seed + 1);
    GO_FIX(grid_d4_batch_set_ops_random(b, seed + 2));
}

/* The launcher against grid_objects_ref itself (not only the oracle): byte for byte, both tie rules. */
Test(grid_objects_gpu, matches_grid_objects_ref_byte_for_byte_on_arc_shaped_batches)
{
    for (int tie = 0; tie < 2; tie++) {
        grid_d4_batch b;
        arc_batch(&b, 4000, tie ? 3 : 9, 77u + (uint64_t)tie);
        grid_objects_result got, want;
        go_run_ok(&runner_gpu, &b, tie, &got);
        GO_FIX(grid_objects_result_init(&want, b.n, b.buf_bytes));
        grid_objects_result_poison(&want, got.poison);
        cr_assert(grid_objects_batch_ref(&b, tie, 0, &want) == GRID_OBJECTS_OK);
        char msg[512];
        cr_expect(grid_objects_result_compare(&got, &want, &b, msg, sizeof msg) == 0,
                  "grid_objects_launch and grid_objects_ref differ (bg_tie %d): %s", tie, msg);
        grid_objects_result_free(&got), grid_objects_result_free(&want), grid_d4_batch_free(&b);
    }
}

Test(grid_objects_gpu, prevalidated_flag_skips_the_check_and_gives_the_same_results)
{
    grid_d4_batch b;
    arc_batch(&b, 1000, 9, 5);
    grid_objects_result plain, pre;
    go_run_ok(&runner_gpu, &b, GRID_OBJECTS_TIE_ARC_DSL, &plain);
    gpu.flags = GRID_OBJECTS_PREVALIDATED;
    go_run_ok(&runner_gpu, &b, GRID_OBJECTS_TIE_ARC_DSL, &pre);
    gpu.flags = 0;
    char msg[512];
    cr_expect(grid_objects_result_compare(&pre, &plain, &b, msg, sizeof msg) == 0, "%s", msg);
    grid_objects_result_free(&plain), grid_objects_result_free(&pre), grid_d4_batch_free(&b);
}

Test(grid_objects_gpu, a_null_witness_turns_recording_off_and_the_results_stay_exact)
{
    grid_d4_batch b;
    arc_batch(&b, 300, 9, 6);
    grid_objects_result res;
    gpu.no_witness = 1;
    go_run_ok(&runner_gpu, &b, GRID_OBJECTS_TIE_ARC_DSL, &res);
    gpu.no_witness = 0;
    grid_objects_result_free(&res), grid_d4_batch_free(&b);
}

/* Wrong metadata flagged as validated: the labelling re-checks every grid and skips the bad one, touching
 * nothing outside the buffers (compute-sanitizer's run of this test would see it). The good grids are exact. */
Test(grid_objects_gpu, prevalidated_wrong_metadata_is_skipped_without_touching_memory_out_of_bounds)
{
    grid_d4_batch b;
    arc_batch(&b, 64, 9, 8);
    const size_t bad = 17;
    const uint16_t saved = b.height[bad];
    b.height[bad] = 256; /* too large: never labelled */
    grid_objects_result got, want;
    GO_FIX(grid_objects_result_init(&got, b.n, b.buf_bytes));
    grid_objects_result_poison(&got, GO_POISON_A);
    gpu.flags = GRID_OBJECTS_PREVALIDATED;
    size_t index = 0;
    cr_assert(gpu_run(&gpu, &b, GRID_OBJECTS_TIE_ARC_DSL, &got, &index) == GRID_OBJECTS_OK);
    gpu.flags = 0;
    b.height[bad] = saved;
    GO_FIX(grid_objects_result_init(&want, b.n, b.buf_bytes));
    grid_objects_result_poison(&want, GO_POISON_A);
    cr_assert(grid_objects_batch_ref(&b, GRID_OBJECTS_TIE_ARC_DSL, 0, &want) == GRID_OBJECTS_OK);
    for (size_t k = 0; k < b.n; k++) {
        if (k == bad) {
            cr_expect(got.n_objects[k] == (0xFFFFFF00u | GO_POISON_A), "grid %zu (skipped) has n_objects written", k);
            continue;
        }
        cr_expect(got.n_objects[k] == want.n_objects[k] && got.bg[k] == want.bg[k], "grid %zu differs", k);
        const uint64_t cells = grid_d4_batch_cells_of(&b, k);
        cr_expect(memcmp(got.labels + b.offset[k], want.labels + b.offset[k], cells * 2) == 0,
                  "grid %zu: labels differ", k);
    }
    grid_objects_result_free(&got), grid_objects_result_free(&want), grid_d4_batch_free(&b);
}

/* Two grids of more than GRID_OBJECTS_STAGE_CELLS cells that overlap, in descending offset order: the device
 * check (consecutive ascending entries only) cannot see it, and with GRID_OBJECTS_PREVALIDATED nothing looks.
 * Both grids label in place in one shared region, each reading the other's links: the results are garbage by
 * contract, but every walk must end (no hang: ctest's timeout) and nothing outside the two grids may be
 * touched (the gap after them keeps its poison; compute-sanitizer's memcheck run sees any access past the
 * buffers). */
Test(grid_objects_gpu, overlapping_large_grids_end_and_stay_inside_their_cells)
{
    const uint16_t height[3] = {40, 40, 30}, width[3] = {40, 40, 30};
    grid_d4_batch b;
    GO_FIX(grid_d4_batch_make(&b, 3, height, width, GRID_D4_PACKED, 11, "two overlapping 40x40 grids, a 30x30"));
    b.offset[0] = 1, b.offset[1] = 0, b.offset[2] = 3000; /* A over B shifted by one cell; C after a gap */
    for (uint32_t flags = 0; flags <= GRID_OBJECTS_PREVALIDATED; flags += GRID_OBJECTS_PREVALIDATED) {
        for (int variant = 0; variant < 8; variant++) {
            grid_d4_batch_fill_random(&b, variant & 1 ? 2 : 1, 100u + (uint64_t)variant);
            grid_d4_batch_set_op(&b, variant);
            grid_objects_result res;
            GO_FIX(grid_objects_result_init(&res, b.n, b.buf_bytes));
            grid_objects_result_poison(&res, GO_POISON_A);
            gpu.flags = flags;
            size_t index = 0;
            const int status = gpu_run(&gpu, &b, GRID_OBJECTS_TIE_ARC_DSL, &res, &index);
            gpu.flags = 0;
            cr_expect(status == GRID_OBJECTS_OK, "variant %d, flags %u: status %d, want OK (the overlap is not "
                      "visible to the device check)", variant, flags, status);
            size_t touched = 0;
            for (uint64_t i = 1601; i < res.out_entries; i++) {
                if (i >= 3000 && i < 3900) continue; /* grid C */
                const uint8_t *rec = (const uint8_t *)&res.objects[i];
                int written = res.labels[i] != (0xFE00u | GO_POISON_A);
                for (size_t j = 0; j < sizeof res.objects[i]; j++) written |= rec[j] != GO_POISON_A;
                touched += written;
            }
            cr_expect(touched == 0, "variant %d, flags %u: %zu label or record entries outside the grids were "
                      "written", variant, flags, touched);
            grid_objects_result_free(&res);
        }
    }
    grid_d4_batch_free(&b);
}

/* The padding rule on the device (grid_objects.h, "Padding"). One 41 x 41 grid (1681 cells, above
 * GRID_OBJECTS_STAGE_CELLS, so labelled in place in the outputs) fills an odd buf_bytes: labels are 3362 bytes
 * (2 mod 4), and the last label ends 2 bytes before a word boundary. Colour 1 but the last two cells of
 * colour 2, so that in every variant the last cell joins the one before it and the union's atomic minimum
 * CASes the last label's word. The runner allocates exactly the padded size and checks that the pad keeps
 * its poison; compute-sanitizer's memcheck run of this test (ci/gpu.sh) reports any access past it.
 * canary_grid_objects_unpadded_outputs runs it with outputs of buf_bytes entries, the size before the rule,
 * and memcheck must report the 4-byte read past them. */
Test(grid_objects_gpu, an_odd_buf_bytes_keeps_every_16_bit_atomic_inside_the_padded_outputs)
{
    const uint16_t side[1] = {41};
    grid_d4_batch b;
    GO_FIX(grid_d4_batch_make(&b, 1, side, side, GRID_D4_PACKED, 12, "one 41x41 grid filling an odd buf_bytes"));
    cr_assert(b.buf_bytes == 1681 && b.offset[0] == 0, "the batch must be one grid from 0 to an odd end");
    memset(b.in, 1, 1681);
    b.in[1679] = b.in[1680] = 2;
    for (int variant = 0; variant < 8; variant++) {
        grid_d4_batch_set_op(&b, variant);
        grid_objects_result res;
        go_run_ok(&runner_gpu, &b, GRID_OBJECTS_TIE_ARC_DSL, &res);
        grid_objects_result_free(&res);
    }
    grid_d4_batch_free(&b);
}

/* The launch order (docs/architecture.md, "The launcher convention") on a real runtime: an error left pending
 * by someone else's call is returned as it is, still pending, and nothing is enqueued: the status record, the
 * outputs and the witness keep their poison. Then the same call, with nothing pending, works. */
Test(grid_objects_gpu, an_error_pending_on_entry_is_returned_untouched_and_nothing_is_enqueued)
{
    grid_d4_batch b;
    arc_batch(&b, 64, 9, 9);
    grid_objects_result res;
    GO_FIX(grid_objects_result_init(&res, b.n, b.buf_bytes));
    grid_objects_result_poison(&res, GO_POISON_B);
    gpu_upload(&gpu, &b, &res);
    GW_CUDA(cudaStreamSynchronize(gpu.stream));

    const cudaError_t pending = gw_plant_pending_error();
    const cudaError_t err = gpu_launch(&gpu, &b, GRID_OBJECTS_TIE_ARC_DSL);
    cr_expect_eq(err, pending, "grid_objects_launch returned %s, want the pending %s", cudaGetErrorName(err),
                 cudaGetErrorName(pending));
    const cudaError_t still = cudaGetLastError(); /* reads and clears it */
    cr_expect_eq(still, pending, "after the call the pending error is %s, want %s untouched", cudaGetErrorName(still),
                 cudaGetErrorName(pending));
    GW_CUDA(cudaStreamSynchronize(gpu.stream));
    grid_objects_status_record rec;
    GW_CUDA(cudaMemcpy(&rec, gpu.d_status, sizeof rec, cudaMemcpyDeviceToHost));
    cr_expect(rec.packed == STATUS_POISON, "the status record changed: the launcher enqueued work with an error "
              "pending");
    GW_CUDA(cudaMemcpy(res.labels, gpu.d_labels, (size_t)b.buf_bytes * sizeof *res.labels, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(res.n_objects, gpu.d_n_objects, b.n * sizeof *res.n_objects, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(res.bg, gpu.d_bg, b.n * sizeof *res.bg, cudaMemcpyDeviceToHost));
    const size_t poisoned = grid_objects_result_poisoned(&res, &b);
    const uint64_t expected = grid_d4_batch_cells(&b) + 2u * b.n; /* every label, n_objects and bg */
    cr_expect(poisoned == expected, "%zu of %llu outputs still hold the poison: the launcher enqueued work with an "
              "error pending", poisoned, (unsigned long long)expected);
    gw_assert_witness(gpu.d_witness, 0, 0);
    grid_objects_result_free(&res);

    grid_objects_result ok; /* nothing pending now: the same batch goes through */
    go_run_ok(&runner_gpu, &b, GRID_OBJECTS_TIE_ARC_DSL, &ok);
    grid_objects_result_free(&ok);
    grid_d4_batch_free(&b);
}

/* Each argument rule the host can see returns cudaErrorInvalidValue and enqueues nothing. */
Test(grid_objects_gpu, host_visible_bad_arguments_return_invalid_value_and_enqueue_nothing)
{
    grid_d4_batch b;
    arc_batch(&b, 8, 9, 10);
    grid_objects_result res;
    GO_FIX(grid_objects_result_init(&res, b.n, b.buf_bytes));
    grid_objects_result_poison(&res, GO_POISON_A);
    gpu_upload(&gpu, &b, &res);
    GW_CUDA(cudaStreamSynchronize(gpu.stream));
    const grid_objects_params good = grid_objects_batch_params(&b, GRID_OBJECTS_TIE_ARC_DSL);
    grid_objects_params variant_8 = good, variant_negative = good, bg_tie_2 = good, flags_2 = good, unpadded = good;
    variant_8.batch_variant = 8, variant_negative.batch_variant = -1, bg_tie_2.bg_tie = 2, flags_2.flags = 2u;
    unpadded.out_entries = good.out_entries - 1; /* one entry short of grid_objects_out_entries(buf_bytes) */
    uint8_t *in = gpu.d_in_alloc + b.in_shift;
    struct row {
        const char *what;
        grid_objects_params p;
        int null_arg; /* which pointer argument is NULL (0: none) */
        int alias;    /* 1: labels = objects' start; 2: n_objects inside the offsets; 3: bg = in; 4: labels + 1 */
    } rows[] = {
        {"batch_variant 8 without variants", variant_8, 0, 0},
        {"batch_variant -1 without variants", variant_negative, 0, 0},
        {"bg_tie 2", bg_tie_2, 0, 0},
        {"flags 2", flags_2, 0, 0},
        {"out_entries below the padded size", unpadded, 0, 0},
        {"labels at 2 mod 4", good, 0, 4},
        {"in NULL", good, 1, 0},
        {"offset NULL", good, 2, 0},
        {"labels NULL", good, 3, 0},
        {"objects NULL", good, 4, 0},
        {"n_objects NULL", good, 5, 0},
        {"bg NULL", good, 6, 0},
        {"status NULL", good, 7, 0},
        {"labels overlap objects", good, 0, 1},
        {"n_objects overlap offsets", good, 0, 2},
        {"bg overlaps in", good, 0, 3},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const struct row *w = &rows[r];
        grid_objects_params p = w->p;
        uint16_t *labels = gpu.d_labels;
        uint32_t *n_objects = gpu.d_n_objects;
        int16_t *bg = gpu.d_bg;
        if (w->alias == 1) labels = (uint16_t *)gpu.d_objects;
        if (w->alias == 2) n_objects = (uint32_t *)gpu.d_offset;
        if (w->alias == 3) bg = (int16_t *)in;
        if (w->alias == 4) labels = gpu.d_labels + 1;
        gw_witness_reset(gpu.d_witness, gpu.stream);
        const cudaError_t err = grid_objects_launch(
            &p, w->null_arg == 1 ? NULL : in, w->null_arg == 2 ? NULL : gpu.d_offset, gpu.d_height, gpu.d_width,
            NULL, w->null_arg == 3 ? NULL : labels, w->null_arg == 4 ? NULL : gpu.d_objects,
            w->null_arg == 5 ? NULL : n_objects, w->null_arg == 6 ? NULL : bg, w->null_arg == 7 ? NULL : gpu.d_status,
            gpu.d_witness, gpu.stream);
        cr_expect(err == cudaErrorInvalidValue, "%s: grid_objects_launch returned %s, want cudaErrorInvalidValue",
                  w->what, cudaGetErrorName(err));
        GW_CUDA(cudaStreamSynchronize(gpu.stream));
        char msg[512];
        cr_expect(gw_check_witness(gpu.d_witness, 0, 0, msg, sizeof msg) == 0, "%s: %s", w->what, msg);
        grid_objects_status_record rec;
        GW_CUDA(cudaMemcpy(&rec, gpu.d_status, sizeof rec, cudaMemcpyDeviceToHost));
        cr_expect(rec.packed == STATUS_POISON, "%s: the status record changed: something was enqueued", w->what);
    }
    cr_expect(grid_objects_launch(NULL, in, gpu.d_offset, gpu.d_height, gpu.d_width, NULL, gpu.d_labels,
                                  gpu.d_objects, gpu.d_n_objects, gpu.d_bg, gpu.d_status, NULL,
                                  gpu.stream) == cudaErrorInvalidValue,
              "p NULL must return cudaErrorInvalidValue");
    grid_objects_result_free(&res), grid_d4_batch_free(&b);
}

Test(grid_objects_gpu, zero_grids_with_null_pointers_return_success_and_enqueue_nothing)
{
    gpu_start(&gpu);
    const grid_objects_params p = {.n_grids = 0, .buf_bytes = 7, .out_entries = 0, .batch_variant = 99, .bg_tie = 7,
                                   .flags = 0};
    cr_expect(grid_objects_launch(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  gpu.stream) == cudaSuccess);
}
