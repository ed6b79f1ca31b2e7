/* SPDX-License-Identifier: MIT
 * CPU tests of the grid_d4 reference (reference/grid_d4/grid_d4_ref.c): every group of docs/grid_d4.md,
 * "Test groups", run on grid_d4_ref and on grid_d4_ref_mt through the same d4_runner the GPU test uses, plus
 * the validator's own table (NULL, op, aliasing on pointer ranges, the full overlap check).
 *
 * GW_D4_QUICK=1 (set by the memcheck registration) shrinks the large batch from 100000 to 10000 grids and
 * the overlap-check scale test from 1e6 to 1e5: Valgrind runs ~50x slower and the large sizes add no code
 * path the smaller ones miss.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "grid_d4_fixture.h"
#include "grid_d4_cases.h"
#include "grid_d4_ref.h"
#include "gw_test_util.h"

typedef int (*ref_fn)(const grid_d4_params *, const uint8_t *, uint8_t *, const uint64_t *, const uint16_t *,
                      const uint16_t *, uint16_t *, uint16_t *, const uint8_t *);

typedef struct ref_ctx {
    ref_fn fn;
    const char *name;
} ref_ctx;

/* Runs the reference on host buffers. The index of an error comes from grid_d4_validate, which must
 * agree with the reference's own verdict. */
static int ref_run(void *vctx, const grid_d4_batch *b, grid_d4_result *res, size_t *bad_index)
{
    const ref_ctx *ctx = vctx;
    const grid_d4_params p = {.n_grids = b->n, .buf_bytes = b->buf_bytes, .batch_op = b->batch_op, .flags = b->flags};
    const int status = ctx->fn(&p, b->in, res->out, b->offset, b->height, b->width, res->out_height, res->out_width,
                               b->ops);
    size_t index = 0;
    const grid_d4_status v = grid_d4_validate(&p, b->in, res->out, b->offset, b->height, b->width, res->out_height,
                                              res->out_width, b->ops, &index);
    cr_expect((int)v == status, "%s returned %d but grid_d4_validate says %d for the same batch [%s]", ctx->name,
              status, (int)v, b->desc);
    *bad_index = index;
    return (int)v == status ? status : -1;
}

static ref_ctx ref_single = {grid_d4_ref, "grid_d4_ref"}, ref_threads = {grid_d4_ref_mt, "grid_d4_ref_mt"};
static const d4_runner runner_ref = {"grid_d4_ref", ref_run, NULL, &ref_single};
static const d4_runner runner_mt = {"grid_d4_ref_mt", ref_run, NULL, &ref_threads};

static int quick(void)
{
    const char *v = getenv("GW_D4_QUICK");
    return v && strcmp(v, "1") == 0;
}

/* Each group once per reference, in suites grid_d4_ref and grid_d4_ref_mt; the groups over the ARC data
 * set in grid_d4_ref_data and grid_d4_ref_mt_data (CTest's test_grid_d4_ref.data: docs/testing.md, "Data
 * sets"). */
#define BOTH(test_name, call)                                                                                          \
    Test(grid_d4_ref, test_name) { call(&runner_ref); }                                                                \
    Test(grid_d4_ref_mt, test_name) { call(&runner_mt); }
#define BOTH_DATA(test_name, call)                                                                                     \
    Test(grid_d4_ref_data, test_name) { call(&runner_ref); }                                                           \
    Test(grid_d4_ref_mt_data, test_name) { call(&runner_mt); }

static void large_batch(const d4_runner *r)
{
    const size_t n = quick() ? 10000 : 100000;
    fprintf(stderr, "grid_d4 test: large batch of %zu grids%s\n", n, quick() ? " (GW_D4_QUICK=1)" : "");
    d4_case_large_batch(r, n);
}

BOTH(coordinate_probes_name_the_source_cell_for_all_900_small_shapes, d4_case_probes_small)
BOTH(coordinate_probes_hold_for_dimensions_31_32_33_64_and_255, d4_case_probes_large)
BOTH(cayley_table_follows_the_composition_rule_and_is_a_latin_square, d4_case_cayley)
BOTH(group_laws_hold_for_rotations_and_mirrors, d4_case_group_laws)
BOTH(grids_with_distinct_cells_have_eight_distinct_images, d4_case_distinct_images)
BOTH(results_have_the_swapped_shape_at_their_input_offset_and_gaps_keep_the_poison, d4_case_shape_laws)
BOTH(every_op_keeps_each_grids_value_histogram, d4_case_histograms)
BOTH(edge_shapes_from_1x1_to_255x255_are_exact, d4_case_edge_shapes)
BOTH(a_dimension_of_256_is_too_large, d4_case_dimension_256_is_too_large)
BOTH(small_shapes_interleaved_with_30x30_grids_are_exact_for_every_op, d4_case_mixed_interleaved)
BOTH_DATA(every_arc_agi_1_training_grid_is_exact_for_every_op, d4_case_all_arc_grids)
BOTH(batches_of_1_31_32_and_33_grids_are_exact, d4_case_small_batch_sizes)
BOTH(an_empty_batch_succeeds_and_writes_nothing, d4_case_empty_batch)
BOTH(a_batch_of_100000_arc_shaped_grids_is_exact, large_batch)
BOTH(per_grid_ops_match_batch_ops_and_ignore_batch_op, d4_case_per_grid_ops)
BOTH(permuting_the_grids_permutes_the_results, d4_case_permutation)
BOTH(layouts_alignment_gaps_order_and_shifted_bases_give_the_same_results, d4_case_layouts)
BOTH(bad_metadata_is_rejected_with_the_right_code_and_lowest_index, d4_case_bad_metadata)
BOTH(two_runs_give_identical_bytes, d4_case_determinism)
BOTH_DATA(all_5600_golden_vectors_from_arc_dsl_are_reproduced, d4_case_golden)

/* ------------------------------------------------------------------ reference-only checks */

Test(grid_d4_ref, single_and_multi_threaded_references_give_the_same_bytes)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 20000, GRID_D4_UNSORTED, 0x377u));
    grid_d4_batch_fill_random(&g, 255, 0x378u);
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0x379u));
    grid_d4_result a, b;
    d4_run_ok(&runner_ref, &g, &a);
    d4_run_ok(&runner_mt, &g, &b);
    cr_assert(a.poison != b.poison, "consecutive calls must use different poisons");
    size_t diff = 0;
    for (size_t k = 0; k < g.n; k++) diff += !d4_result_grid_equal(&g, &a, k, &g, &b, k);
    cr_assert(diff == 0, "%zu of %zu grids differ between grid_d4_ref and grid_d4_ref_mt [%s]", diff, g.n, g.desc);
    grid_d4_result_free(&a);
    grid_d4_result_free(&b);
    grid_d4_batch_free(&g);
}

Test(grid_d4_ref, the_composition_rule_makes_rot90_and_rot270_inverses_and_the_rest_involutions)
{
    for (int op = 0; op < 8; op++) {
        const int inverse = op == GRID_D4_ROT90 ? GRID_D4_ROT270 : op == GRID_D4_ROT270 ? GRID_D4_ROT90 : op;
        cr_assert(d4_compose(op, inverse) == GRID_D4_IDENTITY && d4_compose(inverse, op) == GRID_D4_IDENTITY,
                  "%s then %s should be the identity", grid_d4_op_name(op), grid_d4_op_name(inverse));
    }
}

/* ------------------------------------------------------------------ the validator's table */

/* Host arrays for 4 grids of 2x3 inside one arena, so rows can make pointers overlap on purpose; every
 * row checks that no byte of the arena changed (nothing written, inputs included). */
enum { ARENA = 4096, N4 = 4 };
typedef struct arena_batch {
    uint8_t *arena;
    uint8_t snapshot[ARENA];
    grid_d4_params p;
    const uint8_t *in;
    uint8_t *out;
    const uint64_t *offset;
    const uint16_t *height, *width;
    uint16_t *out_height, *out_width;
    const uint8_t *ops;
} arena_batch;

static void arena_make(arena_batch *a)
{
    memset(a, 0, sizeof *a);
    a->arena = aligned_alloc(64, ARENA);
    cr_assert(a->arena != NULL);
    memset(a->arena, 0x5A, ARENA);
    uint8_t *in = a->arena + 0;
    uint64_t *offset = (uint64_t *)(a->arena + 128);
    uint16_t *height = (uint16_t *)(a->arena + 192), *width = (uint16_t *)(a->arena + 208);
    uint8_t *ops = a->arena + 320;
    for (int i = 0; i < 24; i++) in[i] = (uint8_t)i;
    for (int k = 0; k < N4; k++) offset[k] = 6u * k, height[k] = 2, width[k] = 3, ops[k] = (uint8_t)k;
    a->p = (grid_d4_params){.n_grids = N4, .buf_bytes = 24, .batch_op = GRID_D4_ROT90, .flags = 0};
    a->in = in;
    a->out = a->arena + 64;
    a->offset = offset;
    a->height = height;
    a->width = width;
    a->out_height = (uint16_t *)(a->arena + 256);
    a->out_width = (uint16_t *)(a->arena + 272);
    a->ops = NULL;
    memcpy(a->snapshot, a->arena, ARENA);
}

static void arena_free(arena_batch *a) { free(a->arena); }

/* Validator, reference and multi-threaded reference all give `want` (and index); on an error nothing in
 * the arena changed. */
static void expect_verdict(arena_batch *a, const grid_d4_params *p, grid_d4_status want, size_t want_index,
                           const char *row)
{
    memcpy(a->snapshot, a->arena, ARENA); /* earlier accepted rows may have written results */
    size_t index = 12345;
    const grid_d4_status v = grid_d4_validate(p, a->in, a->out, a->offset, a->height, a->width, a->out_height,
                                              a->out_width, a->ops, &index);
    cr_assert(v == want && index == want_index, "%s: grid_d4_validate gave %d (%s) at %zu, want %d (%s) at %zu", row,
              v, grid_d4_status_str(v), index, want, grid_d4_status_str(want), want_index);
    cr_assert(grid_d4_validate(p, a->in, a->out, a->offset, a->height, a->width, a->out_height, a->out_width, a->ops,
                               NULL) == v,
              "%s: grid_d4_validate must accept bad_index == NULL", row);
    const ref_fn fns[2] = {grid_d4_ref, grid_d4_ref_mt};
    for (int f = 0; f < 2; f++) {
        const int s = fns[f](p, a->in, a->out, a->offset, a->height, a->width, a->out_height, a->out_width, a->ops);
        cr_assert(s == (int)want, "%s: %s returned %d (%s), want %d (%s)", row, f ? "grid_d4_ref_mt" : "grid_d4_ref", s,
                  grid_d4_status_str((grid_d4_status)s), want, grid_d4_status_str(want));
        if (want != GRID_D4_OK)
            cr_assert(memcmp(a->arena, a->snapshot, ARENA) == 0, "%s: %s wrote memory though it rejected the call",
                      row, f ? "grid_d4_ref_mt" : "grid_d4_ref");
    }
}

Test(grid_d4_ref, the_arena_batch_used_by_the_validator_table_is_valid)
{
    arena_batch a;
    arena_make(&a);
    expect_verdict(&a, &a.p, GRID_D4_OK, 0, "valid arena batch");
    /* and the reference wrote the 2x3 -> 3x2 results: grid 0 turned clockwise is {3,0, 4,1, 5,2} */
    static const uint8_t want0[6] = {3, 0, 4, 1, 5, 2};
    cr_assert(memcmp(a.out, want0, 6) == 0 && a.out_height[0] == 3 && a.out_width[0] == 2,
              "rot90 of {0,1,2, 3,4,5} must be {3,0, 4,1, 5,2} as 3x2");
    arena_free(&a);
}

Test(grid_d4_ref, a_null_params_or_required_pointer_is_err_null)
{
    arena_batch a;
    arena_make(&a);
    cr_assert(grid_d4_validate(NULL, a.in, a.out, a.offset, a.height, a.width, a.out_height, a.out_width, NULL, NULL) ==
              GRID_D4_ERR_NULL);
    cr_assert(grid_d4_ref(NULL, a.in, a.out, a.offset, a.height, a.width, a.out_height, a.out_width, NULL) ==
              GRID_D4_ERR_NULL);
    cr_assert(grid_d4_ref_mt(NULL, a.in, a.out, a.offset, a.height, a.width, a.out_height, a.out_width, NULL) ==
              GRID_D4_ERR_NULL);
    for (int which = 0; which < 7; which++) {
        arena_batch b = a;
        switch (which) {
        case 0: b.in = NULL; break;
        case 1: b.out = NULL; break;
        case 2: b.offset = NULL; break;
        case 3: b.height = NULL; break;
        case 4: b.width = NULL; break;
        case 5: b.out_height = NULL; break;
        case 6: b.out_width = NULL; break;
        }
        char row[64];
        snprintf(row, sizeof row, "required pointer #%d NULL", which);
        expect_verdict(&b, &b.p, GRID_D4_ERR_NULL, 0, row);
    }
    /* NULL comes first: with a bad batch_op too, the answer is still ERR_NULL */
    arena_batch b = a;
    b.in = NULL;
    b.p.batch_op = 8;
    expect_verdict(&b, &b.p, GRID_D4_ERR_NULL, 0, "NULL in and batch_op 8");
    arena_free(&a);
}

Test(grid_d4_ref, zero_grids_succeed_with_null_pointers_and_write_nothing)
{
    grid_d4_params p = {.n_grids = 0, .buf_bytes = 0, .batch_op = GRID_D4_ROT90, .flags = 0};
    size_t index = 7;
    cr_assert(grid_d4_validate(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &index) == GRID_D4_OK && index == 0);
    cr_assert(grid_d4_ref(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == GRID_D4_OK);
    cr_assert(grid_d4_ref_mt(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == GRID_D4_OK);
    arena_batch a;
    arena_make(&a);
    a.p.n_grids = 0;
    expect_verdict(&a, &a.p, GRID_D4_OK, 0, "n_grids 0 over valid buffers");
    cr_assert(memcmp(a.arena, a.snapshot, ARENA) == 0, "n_grids 0 wrote memory");
    arena_free(&a);
}

Test(grid_d4_ref, batch_op_outside_0_to_7_is_err_op_only_when_ops_is_null)
{
    arena_batch a;
    arena_make(&a);
    static const int bad_ops[] = {-1, 8, 99, -2147483647 - 1, 2147483647};
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        grid_d4_params p = a.p;
        p.batch_op = bad_ops[i];
        char row[64];
        snprintf(row, sizeof row, "batch_op %d with ops NULL", bad_ops[i]);
        expect_verdict(&a, &p, GRID_D4_ERR_OP, 0, row);
        arena_batch b = a;
        b.ops = a.arena + 320; /* per-grid ops {0,1,2,3}: batch_op is ignored */
        snprintf(row, sizeof row, "batch_op %d with ops set", bad_ops[i]);
        expect_verdict(&b, &p, GRID_D4_OK, 0, row);
    }
    arena_free(&a);
}

Test(grid_d4_ref, flags_do_not_change_the_references_verdict_or_bytes)
{
    /* The launcher rejects unknown flags; the reference ignores flags (PREVALIDATED only skips the device
     * check), so the same batch gives the same answer with any flags. */
    static const uint32_t flags[] = {0, GRID_D4_PREVALIDATED, 0x80000000u};
    for (size_t i = 0; i < 3; i++) {
        arena_batch a;
        arena_make(&a);
        a.p.flags = flags[i];
        expect_verdict(&a, &a.p, GRID_D4_OK, 0, "flags");
        static const uint8_t want0[6] = {3, 0, 4, 1, 5, 2};
        cr_assert(memcmp(a.out, want0, 6) == 0, "flags %#x changed the result", flags[i]);
        arena_free(&a);
    }
}

Test(grid_d4_ref, overlapping_arrays_are_err_alias_on_pointer_ranges)
{
    arena_batch a;
    arena_make(&a);
    uint8_t *base = a.arena;
    static const char *const names[] = {
        "out == in",
        "out overlaps the last byte of in",
        "in overlaps the last byte of out",
        "out_height == height",
        "out_height overlaps height by one element",
        "out_width overlaps out_height",
        "out_width overlaps the last cells of out",
        "out overlaps the last byte of offset",
        "ops overlaps out_width",
        "out_height overlaps width",
        "buf_bytes so large that in's range would wrap past out",
        "buf_bytes so large that out's range would wrap past in",
        "n_grids so large that the array sizes overflow",
    };
    for (int row = 0; row < 13; row++) {
        arena_batch b = a;
        grid_d4_params p = a.p;
        switch (row) {
        case 0: b.out = (uint8_t *)b.in; break;
        case 1: b.out = (uint8_t *)b.in + 23; break;
        case 2: b.out = base + 1000; b.in = base + 1000 + 23; break;
        case 3: b.out_height = (uint16_t *)b.height; break;
        case 4: b.out_height = (uint16_t *)b.height + 3; break;
        case 5: b.out_width = b.out_height + 3; break;
        case 6: b.out_width = (uint16_t *)(b.out + 22); break;
        case 7: b.out = base + 128 + 31; break;
        case 8: b.ops = (const uint8_t *)b.out_width + 7; break;
        case 9: b.out_height = (uint16_t *)b.width + 1; break;
        case 10: p.buf_bytes = UINT64_MAX; break; /* in (arena+0) is below out (arena+64) */
        case 11: b.out = base; b.in = base + 1000; p.buf_bytes = UINT64_MAX; break;
        case 12: p.n_grids = SIZE_MAX / 4; break;
        }
        expect_verdict(&b, &p, GRID_D4_ERR_ALIAS, 0, names[row]);
    }
    arena_free(&a);
}

Test(grid_d4_ref, adjacent_arrays_and_inputs_sharing_memory_are_not_aliasing)
{
    arena_batch a;
    static const char *const names[] = {"out right after in", "out_height right after width",
                                        "out_width right after out_height", "height and width the same array",
                                        "ops right after out_width"};
    for (int row = 0; row < 5; row++) {
        arena_make(&a);
        arena_batch b = a;
        switch (row) {
        case 0: b.out = (uint8_t *)b.in + 24; break;
        case 1: b.out_height = (uint16_t *)b.width + N4; b.out_width = (uint16_t *)(a.arena + 512); break;
        case 2: b.out_width = b.out_height + N4; break;
        case 3: b.width = b.height; break; /* 2x2 grids: 4 of 6 bytes each, still disjoint */
        case 4: b.ops = (const uint8_t *)(b.out_width + N4); memset(a.arena + 280, 1, N4); break;
        }
        expect_verdict(&b, &b.p, GRID_D4_OK, 0, names[row]);
        arena_free(&a);
    }
}

/* The full overlap check (reference only; the device checks consecutive ascending entries). */
static void expect_overlap(const uint16_t *h, const uint16_t *w, const uint64_t *offset, size_t n, uint64_t buf_bytes,
                           grid_d4_status want, size_t want_index, const char *row)
{
    uint8_t *in = calloc(buf_bytes, 1), *out = malloc(buf_bytes);
    uint16_t *oh = malloc(n * sizeof *oh), *ow = malloc(n * sizeof *ow);
    cr_assert(in && out && oh && ow);
    memset(out, 0xFF, buf_bytes);
    for (size_t k = 0; k < n; k++) oh[k] = ow[k] = 0xFFFF;
    const grid_d4_params p = {.n_grids = n, .buf_bytes = buf_bytes, .batch_op = GRID_D4_ROT90, .flags = 0};
    size_t index = 999;
    const grid_d4_status v = grid_d4_validate(&p, in, out, offset, h, w, oh, ow, NULL, &index);
    cr_assert(v == want && index == want_index, "%s: grid_d4_validate gave %d (%s) at %zu, want %d (%s) at %zu", row, v,
              grid_d4_status_str(v), index, want, grid_d4_status_str(want), want_index);
    const ref_fn fns[2] = {grid_d4_ref, grid_d4_ref_mt};
    for (int f = 0; f < 2; f++) {
        cr_assert(fns[f](&p, in, out, offset, h, w, oh, ow, NULL) == (int)want, "%s: reference verdict differs", row);
        if (want == GRID_D4_OK) continue;
        for (uint64_t i = 0; i < buf_bytes; i++) cr_assert(out[i] == 0xFF, "%s: byte %" PRIu64 " written", row, i);
        for (size_t k = 0; k < n; k++) cr_assert(oh[k] == 0xFFFF && ow[k] == 0xFFFF, "%s: shape %zu written", row, k);
    }
    free(in);
    free(out);
    free(oh);
    free(ow);
}

Test(grid_d4_ref, the_full_overlap_check_finds_any_intersecting_pair)
{
    /* sizes: 4 (2x2), 9 (3x3), 6 (2x3), 10 (2x5) */
    const uint16_t h[4] = {2, 3, 2, 2}, w[4] = {2, 3, 3, 5};
    {
        const uint64_t off[4] = {0, 4, 13, 19}; /* packed: fine */
        expect_overlap(h, w, off, 4, 29, GRID_D4_OK, 0, "packed");
    }
    {
        const uint64_t off[4] = {19, 13, 4, 0}; /* packed in reverse order: still fine */
        const uint16_t rh[4] = {2, 2, 3, 2}, rw[4] = {5, 3, 3, 2};
        expect_overlap(rh, rw, off, 4, 29, GRID_D4_OK, 0, "packed, descending offsets");
    }
    {
        const uint64_t off[4] = {0, 4, 12, 19}; /* grids 1 and 2 share byte 12: consecutive ascending */
        expect_overlap(h, w, off, 4, 29, GRID_D4_ERR_OVERLAP, 1, "consecutive ascending");
    }
    {
        const uint64_t off[4] = {20, 4, 13, 0}; /* 3 (0..10) overlaps 1 (4..13): descending, not consecutive */
        expect_overlap(h, w, off, 4, 30, GRID_D4_ERR_OVERLAP, 1, "descending, not consecutive");
    }
    {
        const uint64_t off[4] = {0, 20, 40, 22}; /* grid 3 lies over grid 1: not consecutive in index order */
        expect_overlap(h, w, off, 4, 50, GRID_D4_ERR_OVERLAP, 1, "non-consecutive ascending");
    }
    {
        const uint64_t off[4] = {10, 0, 20, 1}; /* grid 3 (1..11) starts inside grid 1 (0..9), ends inside 0 */
        expect_overlap(h, w, off, 4, 40, GRID_D4_ERR_OVERLAP, 1, "first overlap in offset order");
    }
    {
        const uint64_t off[4] = {5, 5, 30, 40}; /* equal offsets */
        expect_overlap(h, w, off, 4, 50, GRID_D4_ERR_OVERLAP, 0, "equal offsets");
    }
    {
        /* A 1x1 grid inside a big one far away in index order; offsets otherwise ascending. */
        uint16_t bh[6] = {30, 1, 1, 1, 1, 1}, bw[6] = {30, 1, 1, 1, 1, 1};
        const uint64_t off[6] = {0, 900, 901, 902, 903, 904};
        expect_overlap(bh, bw, off, 6, 1000, GRID_D4_OK, 0, "1x1 grids packed after a 30x30");
        const uint64_t off2[6] = {0, 900, 901, 902, 903, 450};
        expect_overlap(bh, bw, off2, 6, 1000, GRID_D4_ERR_OVERLAP, 0, "1x1 grid inside the 30x30");
    }
}

Test(grid_d4_ref, the_overlap_check_scales_to_a_million_grids)
{
    /* 1e6 1x1 grids at offsets in reverse order (sorting needed), then one duplicate offset; 1e5 under
     * GW_D4_QUICK (Valgrind). */
    const size_t N = quick() ? 100000 : 1000000;
    uint16_t *h = malloc(N * sizeof *h), *w = malloc(N * sizeof *w);
    uint64_t *off = malloc(N * sizeof *off);
    cr_assert(h && w && off);
    for (size_t k = 0; k < N; k++) h[k] = w[k] = 1, off[k] = N - 1 - k;
    expect_overlap(h, w, off, N, N, GRID_D4_OK, 0, "1x1 grids, descending offsets");
    off[N - 22223] = off[N / 8];
    expect_overlap(h, w, off, N, N, GRID_D4_ERR_OVERLAP, N / 8, "1x1 grids, one duplicate offset");
    free(h);
    free(w);
    free(off);
}

/* ------------------------------------------------------------------ the header's example */

Test(grid_d4_ref, the_header_example_is_compiled_verbatim_by_the_example_test)
{
    gw_assert_example_verbatim(GW_GRID_D4_HEADER, GW_GRID_D4_EXAMPLE);
}
