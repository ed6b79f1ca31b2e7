/* SPDX-License-Identifier: MIT
 * CPU tests of the grid_objects reference (reference/grid_objects/grid_objects_ref.c): every test group of
 * go_cases.h on grid_objects_ref and grid_objects_ref_mt, through the same go_runner the GPU test uses, plus
 * the validator's own table (NULL, batch_variant, bg_tie, flags, aliasing on pointer ranges, the full overlap
 * check), the header's example numbers, SHA-256 against FIPS 180-2, and the example's verbatim copy.
 *
 * GW_GO_QUICK=1 (set by the memcheck registration) shrinks the batches (the large one from 100000 to 1000
 * grids) and leaves out the 255 x 255 grids (go_quick, go_cases.h): Valgrind runs ~50x slower and they add
 * no code path the rest misses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "go_cases.h"
#include "go_fixture.h"
#include "go_sha256.h"
#include "grid_objects_batch.h"
#include "grid_objects_ref.h"
#include "gw_test_util.h"

typedef int (*ref_fn)(const grid_objects_params *, const uint8_t *, const uint64_t *, const uint16_t *,
                      const uint16_t *, const uint8_t *, uint16_t *, grid_objects_object *, uint32_t *, int16_t *);

typedef struct ref_ctx {
    ref_fn fn;
    const char *name;
} ref_ctx;

/* Runs the reference on host buffers. The index of an error comes from grid_objects_validate, which must
 * agree with the reference's own verdict. */
static int ref_run(void *vctx, const grid_d4_batch *b, int bg_tie, grid_objects_result *res, size_t *bad_index)
{
    const ref_ctx *ctx = vctx;
    const grid_objects_params p = grid_objects_batch_params(b, bg_tie);
    const int status = ctx->fn(&p, b->in, b->offset, b->height, b->width, b->ops, res->labels, res->objects,
                               res->n_objects, res->bg);
    size_t index = 0;
    const grid_objects_status v = grid_objects_validate(&p, b->in, b->offset, b->height, b->width, b->ops, res->labels,
                                                        res->objects, res->n_objects, res->bg, &index);
    cr_expect((int)v == status, "%s returned %d but grid_objects_validate says %d for the same batch [%s]", ctx->name,
              status, (int)v, b->desc);
    *bad_index = index;
    return (int)v == status ? status : -1;
}

static ref_ctx ref_single = {grid_objects_ref, "grid_objects_ref"}, ref_threads = {grid_objects_ref_mt, "grid_objects_ref_mt"};
static const go_runner runner_ref = {"grid_objects_ref", ref_run, NULL, &ref_single};
static const go_runner runner_mt = {"grid_objects_ref_mt", ref_run, NULL, &ref_threads};

static int quick(void) { return go_quick(); }

/* Each group once per reference, in suites grid_objects_ref and grid_objects_ref_mt; the groups over the ARC
 * data in grid_objects_ref_data and grid_objects_ref_mt_data (CTest's test_grid_objects_ref.data). */
#define BOTH(test_name, call)                                                                                          \
    Test(grid_objects_ref, test_name) { call(&runner_ref); }                                                           \
    Test(grid_objects_ref_mt, test_name) { call(&runner_mt); }
#define BOTH_DATA(test_name, call)                                                                                     \
    Test(grid_objects_ref_data, test_name) { call(&runner_ref); }                                                      \
    Test(grid_objects_ref_mt_data, test_name) { call(&runner_mt); }

static void large_batch(const go_runner *r)
{
    const size_t n = quick() ? 1000 : 100000;
    fprintf(stderr, "grid_objects test: large batch of %zu grids%s\n", n, quick() ? " (GW_GO_QUICK=1)" : "");
    go_case_large_batch(r, n);
}

BOTH_DATA(all_3436_arc_grids_match_arc_dsls_golden_vectors_for_all_8_variants, go_case_golden)
BOTH_DATA(every_arc_agi_1_training_grid_obeys_the_laws_for_every_variant, go_case_all_arc_grids)
BOTH(labels_are_canonical_connected_and_agree_with_the_object_table, go_case_laws)
BOTH(objects_commute_with_the_8_d4_ops, go_case_d4_commutes)
BOTH(edge_shapes_from_1x1_to_255x255_and_one_colour_grids_are_exact, go_case_edge_shapes)
BOTH(checkerboards_have_the_closed_form_counts, go_case_checkerboards)
BOTH(one_cell_wide_spirals_are_one_object, go_case_spirals)
BOTH(bg_ties_follow_arc_dsl_or_the_smallest_colour, go_case_bg_ties)
BOTH(per_grid_variants_match_batch_variants_and_ignore_batch_variant, go_case_per_grid_variants)
BOTH(batches_of_1_31_32_and_33_grids_are_exact, go_case_small_batch_sizes)
BOTH(a_batch_of_100000_arc_shaped_grids_is_exact, large_batch)
BOTH(an_empty_batch_succeeds_and_writes_nothing, go_case_empty_batch)
BOTH(layouts_packed_odd_aligned_gaps_and_unsorted_give_the_same_results, go_case_layouts)
BOTH(three_runs_give_identical_results, go_case_determinism)
BOTH(bad_metadata_is_rejected_with_the_right_code_and_lowest_index, go_case_bad_metadata)

/* ------------------------------------------------------------------ reference-only checks */

Test(grid_objects_ref, single_and_multi_threaded_references_give_the_same_results)
{
    grid_d4_batch g;
    GO_FIX(grid_d4_batch_arc_sample(&g, quick() ? 2000 : 20000, GRID_D4_UNSORTED, 0x377u));
    grid_d4_batch_fill_random(&g, 3, 0x378u);
    GO_FIX(grid_d4_batch_set_ops_random(&g, 0x379u));
    grid_objects_result a, b;
    go_run_ok(&runner_ref, &g, GRID_OBJECTS_TIE_ARC_DSL, &a);
    go_run_ok(&runner_mt, &g, GRID_OBJECTS_TIE_ARC_DSL, &b);
    cr_assert(a.poison != b.poison, "consecutive calls must use different poisons");
    char msg[512];
    cr_assert(grid_objects_result_compare(&b, &a, &g, msg, sizeof msg) == 0,
              "grid_objects_ref and grid_objects_ref_mt differ: %s [%s]", msg, g.desc);
    grid_objects_result_free(&a);
    grid_objects_result_free(&b);
    grid_d4_batch_free(&g);
}

Test(grid_objects_ref, the_header_example_gives_the_numbers_it_states)
{
    /* grid_objects.h, "Example": variant 3 on {0,1,0, 1,1,0, 0,0,2}. */
    const uint8_t in[9] = {0, 1, 0, 1, 1, 0, 0, 0, 2};
    const uint64_t offset = 0;
    const uint16_t height = 3, width = 3;
    uint16_t labels[10]; /* grid_objects_out_entries(9) */
    grid_objects_object objects[10];
    uint32_t n_objects = 0;
    int16_t bg = 99;
    const grid_objects_params p = {.n_grids = 1, .buf_bytes = 9, .out_entries = 10, .batch_variant = 3,
                                   .bg_tie = GRID_OBJECTS_TIE_ARC_DSL, .flags = 0};
    const ref_fn fns[2] = {grid_objects_ref, grid_objects_ref_mt};
    for (int f = 0; f < 2; f++) {
        cr_assert(fns[f](&p, in, &offset, &height, &width, NULL, labels, objects, &n_objects, &bg) == GRID_OBJECTS_OK);
        const uint16_t want[9] = {0xFFFF, 1, 0xFFFF, 1, 1, 0xFFFF, 0xFFFF, 0xFFFF, 1};
        cr_assert(bg == 0 && n_objects == 1, "bg %d and n_objects %u, the header says 0 and 1", bg, n_objects);
        cr_assert(memcmp(labels, want, sizeof want) == 0, "labels differ from the header's {-1,1,-1, 1,1,-1, -1,-1,1}");
        const grid_objects_object o = objects[0];
        cr_assert(o.first_cell == 1 && o.colour == -1 && o.n_cells == 4 && o.top == 0 && o.left == 0 && o.bottom == 2 &&
                      o.right == 2,
                  "objects[0] = {%u, %d, %u, %u, %u, %u, %u}, the header says {1, -1, 4, 0, 0, 2, 2}", o.first_cell,
                  o.colour, o.n_cells, o.top, o.left, o.bottom, o.right);
        /* int16 view: the bytes of -1 */
        int16_t as_int16;
        memcpy(&as_int16, &labels[0], sizeof as_int16);
        cr_assert(as_int16 == -1, "GRID_OBJECTS_NO_OBJECT must read as int16 -1");
    }
}

Test(grid_objects_ref, sha256_matches_the_fips_180_2_vectors)
{
    char hex[65];
    go_sha256_hex("abc", 3, hex, 64);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    go_sha256_hex("", 0, hex, 64);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: two padding blocks */
    go_sha256_hex(two, strlen(two), hex, 64);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    go_sha256_hex("abc", 3, hex, 16);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea");
}

Test(grid_objects_ref, status_words_name_every_code)
{
    for (int s = 0; s <= GRID_OBJECTS_ERR_PADDING; s++)
        cr_assert(strcmp(grid_objects_status_str((grid_objects_status)s), "unknown grid_objects status") != 0,
                  "status %d has no words", s);
    cr_assert_str_eq(grid_objects_status_str((grid_objects_status)11), "unknown grid_objects status");
    cr_assert(sizeof(grid_objects_object) == 14, "grid_objects_object must be 14 bytes");
}

/* ------------------------------------------------------------------ the validator's table */

/* Host arrays for 4 grids of 2x3 inside one arena, so rows can make pointers overlap on purpose; every row
 * that is rejected checks that no byte of the arena changed. Arrays start at BASE so that a row can also
 * move an array to end inside the next one. */
enum { ARENA = 16384, BASE = 4096, N4 = 4 };
enum { A_IN, A_OFFSET, A_HEIGHT, A_WIDTH, A_VARIANTS, A_LABELS, A_OBJECTS, A_N_OBJECTS, A_BG, A_COUNT };
static const char *const array_names[A_COUNT] = {"in",     "offset",  "height",    "width", "variants",
                                                 "labels", "objects", "n_objects", "bg"};
static const size_t array_at[A_COUNT] = {0, 128, 192, 208, 240, 256, 512, 1024, 1088};
static const size_t array_align[A_COUNT] = {1, 8, 2, 2, 1, 2, 2, 4, 2};

typedef struct arena_batch {
    uint8_t *arena;
    uint8_t snapshot[ARENA];
    grid_objects_params p;
    uint8_t *ptr[A_COUNT];
} arena_batch;

static uint64_t array_bytes(const arena_batch *a, int which)
{
    const uint64_t n = a->p.n_grids, buf = a->p.buf_bytes;
    switch (which) {
    case A_IN: return buf;
    case A_OFFSET: return 8 * n;
    case A_HEIGHT: case A_WIDTH: case A_BG: return 2 * n;
    case A_VARIANTS: return n;
    case A_LABELS: return 2 * grid_objects_out_entries(buf);
    case A_OBJECTS: return sizeof(grid_objects_object) * grid_objects_out_entries(buf);
    case A_N_OBJECTS: return 4 * n;
    }
    return 0;
}

static void arena_make(arena_batch *a)
{
    memset(a, 0, sizeof *a);
    a->arena = aligned_alloc(64, ARENA);
    cr_assert(a->arena != NULL);
    memset(a->arena, 0x5A, ARENA);
    for (int i = 0; i < A_COUNT; i++) a->ptr[i] = a->arena + BASE + array_at[i];
    uint64_t *offset = (uint64_t *)a->ptr[A_OFFSET];
    uint16_t *height = (uint16_t *)a->ptr[A_HEIGHT], *width = (uint16_t *)a->ptr[A_WIDTH];
    for (int i = 0; i < 24; i++) a->ptr[A_IN][i] = (uint8_t)(i % 3);
    for (int k = 0; k < N4; k++) offset[k] = 6u * k, height[k] = 2, width[k] = 3, a->ptr[A_VARIANTS][k] = (uint8_t)(2 * k + 1);
    a->p = (grid_objects_params){.n_grids = N4, .buf_bytes = 24, .out_entries = 24, .batch_variant = 3, .bg_tie = 0,
                                 .flags = 0};
    a->ptr[A_VARIANTS] = NULL; /* batch_variant unless a row sets it */
}

static void use_variants(arena_batch *a) { a->ptr[A_VARIANTS] = a->arena + BASE + array_at[A_VARIANTS]; }

static grid_objects_status validate(const arena_batch *a, const grid_objects_params *p, size_t *index)
{
    return grid_objects_validate(p, a->ptr[A_IN], (const uint64_t *)a->ptr[A_OFFSET], (const uint16_t *)a->ptr[A_HEIGHT],
                                 (const uint16_t *)a->ptr[A_WIDTH], a->ptr[A_VARIANTS], (const uint16_t *)a->ptr[A_LABELS],
                                 (const grid_objects_object *)a->ptr[A_OBJECTS], (const uint32_t *)a->ptr[A_N_OBJECTS],
                                 (const int16_t *)a->ptr[A_BG], index);
}

/* Validator, reference and multi-threaded reference all give `want` (and index); on an error nothing in the
 * arena changed. */
static void expect_verdict(arena_batch *a, const grid_objects_params *p, grid_objects_status want, size_t want_index,
                           const char *row)
{
    memcpy(a->snapshot, a->arena, ARENA);
    size_t index = 12345;
    const grid_objects_status v = validate(a, p, &index);
    cr_assert(v == want && index == want_index, "%s: grid_objects_validate gave %d (%s) at %zu, want %d (%s) at %zu",
              row, v, grid_objects_status_str(v), index, want, grid_objects_status_str(want), want_index);
    cr_assert(validate(a, p, NULL) == v, "%s: grid_objects_validate must accept bad_index == NULL", row);
    const ref_fn fns[2] = {grid_objects_ref, grid_objects_ref_mt};
    for (int f = 0; f < 2; f++) {
        const int s = fns[f](p, a->ptr[A_IN], (const uint64_t *)a->ptr[A_OFFSET], (const uint16_t *)a->ptr[A_HEIGHT],
                             (const uint16_t *)a->ptr[A_WIDTH], a->ptr[A_VARIANTS], (uint16_t *)a->ptr[A_LABELS],
                             (grid_objects_object *)a->ptr[A_OBJECTS], (uint32_t *)a->ptr[A_N_OBJECTS],
                             (int16_t *)a->ptr[A_BG]);
        cr_assert(s == (int)want, "%s: %s returned %d (%s), want %d (%s)", row, f ? "grid_objects_ref_mt" : "grid_objects_ref",
                  s, grid_objects_status_str((grid_objects_status)s), want, grid_objects_status_str(want));
        if (want != GRID_OBJECTS_OK)
            cr_assert(memcmp(a->arena, a->snapshot, ARENA) == 0, "%s: %s wrote memory though it rejected the call", row,
                      f ? "grid_objects_ref_mt" : "grid_objects_ref");
    }
}

Test(grid_objects_ref, the_arena_batch_of_the_validator_table_is_valid)
{
    arena_batch a;
    arena_make(&a);
    expect_verdict(&a, &a.p, GRID_OBJECTS_OK, 0, "valid arena batch");
    /* {0,1,2, 0,1,2} under variant 3: every colour twice, 3 distinct, all tie: slots 0, 1, 2 -> bg 0; the 1s
     * and 2s touch: one object from cell 1 */
    const uint16_t *labels = (const uint16_t *)a.ptr[A_LABELS];
    const uint32_t *n_objects = (const uint32_t *)a.ptr[A_N_OBJECTS];
    cr_assert(n_objects[0] == 1 && labels[0] == GRID_OBJECTS_NO_OBJECT && labels[1] == 1 && labels[5] == 1,
              "variant 3 of {0,1,2, 0,1,2} is one object from cell 1");
    use_variants(&a);
    expect_verdict(&a, &a.p, GRID_OBJECTS_OK, 0, "valid arena batch, per-grid variants");
    free(a.arena);
}

Test(grid_objects_ref, a_null_params_or_required_pointer_is_err_null)
{
    arena_batch a;
    arena_make(&a);
    cr_assert(grid_objects_validate(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              GRID_OBJECTS_ERR_NULL);
    cr_assert(grid_objects_ref(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == GRID_OBJECTS_ERR_NULL);
    cr_assert(grid_objects_ref_mt(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == GRID_OBJECTS_ERR_NULL);
    for (int which = 0; which < A_COUNT; which++) {
        if (which == A_VARIANTS) continue; /* the one optional array */
        arena_batch b = a;
        b.ptr[which] = NULL;
        char row[64];
        snprintf(row, sizeof row, "%s NULL", array_names[which]);
        expect_verdict(&b, &b.p, GRID_OBJECTS_ERR_NULL, 0, row);
    }
    /* NULL comes first: with every later rule broken too, the answer is still ERR_NULL */
    arena_batch b = a;
    b.ptr[A_BG] = NULL;
    grid_objects_params p = a.p;
    p.batch_variant = 8, p.bg_tie = 7, p.flags = 2;
    b.ptr[A_LABELS] = b.ptr[A_IN];
    expect_verdict(&b, &p, GRID_OBJECTS_ERR_NULL, 0, "bg NULL, batch_variant 8, bg_tie 7, flags 2, labels == in");
    free(a.arena);
}

Test(grid_objects_ref, zero_grids_succeed_with_null_pointers_and_write_nothing)
{
    grid_objects_params p = {.n_grids = 0, .buf_bytes = 0, .batch_variant = 3, .bg_tie = 0, .flags = 0};
    size_t index = 7;
    cr_assert(grid_objects_validate(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &index) == GRID_OBJECTS_OK &&
              index == 0);
    cr_assert(grid_objects_ref(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == GRID_OBJECTS_OK);
    cr_assert(grid_objects_ref_mt(&p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == GRID_OBJECTS_OK);
    arena_batch a;
    arena_make(&a);
    a.p.n_grids = 0;
    expect_verdict(&a, &a.p, GRID_OBJECTS_OK, 0, "n_grids 0 over valid buffers");
    cr_assert(memcmp(a.arena, a.snapshot, ARENA) == 0, "n_grids 0 wrote memory");
    free(a.arena);
}

Test(grid_objects_ref, batch_variant_bg_tie_and_flags_are_checked_in_order)
{
    arena_batch a;
    arena_make(&a);
    static const int bad_variants[] = {-1, 8, 99, -2147483647 - 1, 2147483647};
    for (size_t i = 0; i < sizeof bad_variants / sizeof bad_variants[0]; i++) {
        grid_objects_params p = a.p;
        p.batch_variant = bad_variants[i];
        char row[96];
        snprintf(row, sizeof row, "batch_variant %d with variants NULL", bad_variants[i]);
        expect_verdict(&a, &p, GRID_OBJECTS_ERR_VARIANT, 0, row);
        arena_batch b = a;
        use_variants(&b);
        snprintf(row, sizeof row, "batch_variant %d with variants set (ignored)", bad_variants[i]);
        expect_verdict(&b, &p, GRID_OBJECTS_OK, 0, row);
    }
    static const int bad_ties[] = {-1, 2, 99};
    for (size_t i = 0; i < 3; i++) {
        grid_objects_params p = a.p;
        p.bg_tie = bad_ties[i];
        expect_verdict(&a, &p, GRID_OBJECTS_ERR_BG_TIE, 0, "unknown bg_tie");
        p.batch_variant = 8;
        expect_verdict(&a, &p, GRID_OBJECTS_ERR_VARIANT, 0, "batch_variant before bg_tie");
    }
    static const uint32_t bad_flags[] = {2, 0x80000000u, 3};
    for (size_t i = 0; i < 3; i++) {
        grid_objects_params p = a.p;
        p.flags = bad_flags[i];
        expect_verdict(&a, &p, GRID_OBJECTS_ERR_FLAGS, 0, "unknown flags");
        p.bg_tie = 5;
        expect_verdict(&a, &p, GRID_OBJECTS_ERR_BG_TIE, 0, "bg_tie before flags");
        p.bg_tie = 0;
        arena_batch b = a;
        b.ptr[A_LABELS] = b.ptr[A_IN];
        expect_verdict(&b, &p, GRID_OBJECTS_ERR_FLAGS, 0, "flags before aliasing");
    }
    grid_objects_params p = a.p;
    p.flags = GRID_OBJECTS_PREVALIDATED;
    p.bg_tie = GRID_OBJECTS_TIE_SMALLEST;
    expect_verdict(&a, &p, GRID_OBJECTS_OK, 0, "PREVALIDATED and the smallest rule");
    /* aliasing before the per-grid rules */
    arena_batch b = a;
    ((uint16_t *)b.ptr[A_HEIGHT])[2] = 0;
    b.ptr[A_BG] = b.ptr[A_WIDTH];
    expect_verdict(&b, &b.p, GRID_OBJECTS_ERR_ALIAS, 0, "aliasing before an empty grid");
    free(a.arena);
}

Test(grid_objects_ref, every_output_overlapping_any_other_array_is_err_alias)
{
    static const int outputs[] = {A_LABELS, A_OBJECTS, A_N_OBJECTS, A_BG};
    size_t rows = 0;
    for (size_t o = 0; o < 4; o++) {
        for (int other = 0; other < A_COUNT; other++) {
            const int out = outputs[o];
            if (other == out) continue;
            for (int side = 0; side < 3; side++) {
                arena_batch a;
                arena_make(&a);
                use_variants(&a);
                const uint8_t *other_start = a.ptr[other];
                const uint64_t other_len = array_bytes(&a, other), out_len = array_bytes(&a, out);
                const size_t al = array_align[out];
                /* side 0: the output starts in the other's last bytes; 1: it ends in the other's first bytes;
                 * 2: it starts at the same address */
                uint8_t *at = side == 0   ? (uint8_t *)other_start + other_len - al
                              : side == 1 ? (uint8_t *)other_start - out_len + al
                                          : (uint8_t *)other_start;
                a.ptr[out] = at;
                char row[128];
                snprintf(row, sizeof row, "%s %s %s", array_names[out],
                         side == 0 ? "starts in the last element of" : side == 1 ? "ends in the first bytes of" : "equals",
                         array_names[other]);
                expect_verdict(&a, &a.p, GRID_OBJECTS_ERR_ALIAS, 0, row);
                free(a.arena);
                rows++;
            }
        }
    }
    cr_log_info("%zu aliasing rows rejected", rows);
}

Test(grid_objects_ref, adjacent_arrays_and_huge_sizes)
{
    /* Adjacent is not overlapping; inputs may share memory. */
    static const char *const ok_rows[] = {"labels right after in", "bg right after n_objects",
                                          "n_objects right after bg", "height and width the same array"};
    for (int row = 0; row < 4; row++) {
        arena_batch a;
        arena_make(&a);
        switch (row) {
        case 0: a.ptr[A_LABELS] = a.ptr[A_IN] + 24; break;
        case 1: a.ptr[A_BG] = a.ptr[A_N_OBJECTS] + 16; break;
        case 2: a.ptr[A_N_OBJECTS] = a.ptr[A_BG] + 8; break;
        case 3: a.ptr[A_WIDTH] = a.ptr[A_HEIGHT]; break; /* 2x2 grids: 4 of 6 cells each */
        }
        expect_verdict(&a, &a.p, GRID_OBJECTS_OK, 0, ok_rows[row]);
        free(a.arena);
    }
    /* Sizes whose byte counts overflow: the ranges saturate and cover everything after their start. */
    static const char *const alias_rows[] = {"buf_bytes 2^63: labels' 2*buf_bytes wraps",
                                             "buf_bytes 2^64/14 + 1: objects' 14*buf_bytes wraps",
                                             "n_grids 2^62: n_objects' 4n wraps", "n_grids SIZE_MAX/2: bg's 2n wraps"};
    for (int row = 0; row < 4; row++) {
        arena_batch a;
        arena_make(&a);
        grid_objects_params p = a.p;
        switch (row) {
        case 0: p.buf_bytes = (uint64_t)1 << 63; break; /* labels (below objects) covers objects */
        case 1: p.buf_bytes = UINT64_MAX / 14 + 1; break;
        case 2: p.n_grids = (size_t)1 << 62; a.ptr[A_N_OBJECTS] = a.ptr[A_IN] - 64; break;
        case 3: p.n_grids = SIZE_MAX / 2 + 1; a.ptr[A_BG] = a.ptr[A_IN] - 64; break;
        }
        expect_verdict(&a, &p, GRID_OBJECTS_ERR_ALIAS, 0, alias_rows[row]);
        free(a.arena);
    }
}

/* The padding rule (grid_objects.h, "Padding"): the 16-bit atomics work on whole 4-byte words, so labels and
 * objects hold buf_bytes rounded up to even entries and start 4-byte aligned. Checked after aliasing. */
Test(grid_objects_ref, unpadded_or_misaligned_outputs_are_err_padding)
{
    cr_assert(grid_objects_out_entries(0) == 0 && grid_objects_out_entries(1) == 2 && grid_objects_out_entries(9) == 10 &&
                  grid_objects_out_entries(24) == 24 && grid_objects_out_entries(UINT64_MAX - 1) == UINT64_MAX - 1 &&
                  grid_objects_out_entries(UINT64_MAX) == UINT64_MAX,
              "grid_objects_out_entries must round up to even and saturate");
    static const char *const rows[] = {"buf_bytes 25, out_entries 25 (unpadded: labels of 50 bytes, 2 mod 4)",
                                       "out_entries 0 (never set)", "labels at 2 mod 4", "objects at 2 mod 4",
                                       "labels at 2 mod 4 and overlapping in (aliasing first)"};
    for (int row = 0; row < 5; row++) {
        arena_batch a;
        arena_make(&a);
        grid_objects_params p = a.p;
        p.buf_bytes = 25; /* a byte of gap after the last grid: an odd size */
        p.out_entries = grid_objects_out_entries(p.buf_bytes);
        expect_verdict(&a, &p, GRID_OBJECTS_OK, 0, "buf_bytes 25, out_entries 26 (padded)");
        grid_objects_status want = GRID_OBJECTS_ERR_PADDING;
        switch (row) {
        case 0: p.out_entries = p.buf_bytes; break;
        case 1: p.out_entries = 0; break;
        case 2: a.ptr[A_LABELS] += 2; break;
        case 3: a.ptr[A_OBJECTS] += 2; break;
        case 4: a.ptr[A_LABELS] = a.ptr[A_IN] + 2, want = GRID_OBJECTS_ERR_ALIAS; break;
        }
        expect_verdict(&a, &p, want, 0, rows[row]);
        free(a.arena);
    }
}

/* Every host result, the tests' and the CLI's (grid_objects_result_init), is sized by the rule and poisoned
 * to its end, pad included (under the Valgrind gate an array one entry short is an invalid write here). */
Test(grid_objects_ref, results_are_allocated_and_poisoned_with_the_padded_size)
{
    static const uint64_t sizes[] = {0, 1, 9, 24, 65025};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        grid_objects_result res;
        cr_assert(grid_objects_result_init(&res, 1, sizes[i]) == 0);
        cr_assert(res.out_entries == grid_objects_out_entries(sizes[i]), "buf_bytes %" PRIu64 ": out_entries %" PRIu64
                  ", want %" PRIu64, sizes[i], res.out_entries, grid_objects_out_entries(sizes[i]));
        grid_objects_result_poison(&res, 0x5C);
        if (res.out_entries) {
            const uint8_t *last = (const uint8_t *)&res.objects[res.out_entries - 1];
            cr_assert(res.labels[res.out_entries - 1] == 0xFE5C && last[sizeof res.objects[0] - 1] == 0x5C,
                      "buf_bytes %" PRIu64 ": the pad entry is not poisoned", sizes[i]);
        }
        grid_objects_result_free(&res);
    }
}

/* The full overlap check (reference only; the device checks consecutive ascending entries). */
static void expect_overlap(const uint16_t *h, const uint16_t *w, const uint64_t *offset, size_t n, uint64_t buf_bytes,
                           grid_objects_status want, size_t want_index, const char *row)
{
    uint8_t *in = calloc(buf_bytes, 1);
    grid_objects_result res;
    cr_assert(in && grid_objects_result_init(&res, n, buf_bytes) == 0);
    grid_objects_result_poison(&res, 0x77);
    const grid_objects_params p = {.n_grids = n, .buf_bytes = buf_bytes, .out_entries = res.out_entries,
                                   .batch_variant = 5, .bg_tie = 0, .flags = 0};
    size_t index = 999;
    const grid_objects_status v = grid_objects_validate(&p, in, offset, h, w, NULL, res.labels, res.objects,
                                                        res.n_objects, res.bg, &index);
    cr_assert(v == want && index == want_index, "%s: grid_objects_validate gave %d (%s) at %zu, want %d (%s) at %zu",
              row, v, grid_objects_status_str(v), index, want, grid_objects_status_str(want), want_index);
    const ref_fn fns[2] = {grid_objects_ref, grid_objects_ref_mt};
    for (int f = 0; f < 2; f++) {
        cr_assert(fns[f](&p, in, offset, h, w, NULL, res.labels, res.objects, res.n_objects, res.bg) == (int)want,
                  "%s: reference verdict differs", row);
        if (want == GRID_OBJECTS_OK) continue;
        for (uint64_t i = 0; i < buf_bytes; i++) cr_assert(res.labels[i] == 0xFE77, "%s: label %" PRIu64 " written", row, i);
        for (size_t k = 0; k < n; k++) cr_assert(res.n_objects[k] == 0xFFFFFF77u, "%s: n_objects %zu written", row, k);
    }
    grid_objects_result_free(&res);
    free(in);
}

Test(grid_objects_ref, the_full_overlap_check_finds_any_intersecting_pair)
{
    /* sizes: 4 (2x2), 9 (3x3), 6 (2x3), 10 (2x5) */
    const uint16_t h[4] = {2, 3, 2, 2}, w[4] = {2, 3, 3, 5};
    const uint64_t packed[4] = {0, 4, 13, 19}, consecutive[4] = {0, 4, 12, 19}, descending[4] = {20, 4, 13, 0},
                   far[4] = {0, 20, 40, 22}, equal[4] = {5, 5, 30, 40};
    expect_overlap(h, w, packed, 4, 29, GRID_OBJECTS_OK, 0, "packed");
    expect_overlap(h, w, consecutive, 4, 29, GRID_OBJECTS_ERR_OVERLAP, 1, "consecutive ascending");
    expect_overlap(h, w, descending, 4, 30, GRID_OBJECTS_ERR_OVERLAP, 1, "descending, not consecutive");
    expect_overlap(h, w, far, 4, 50, GRID_OBJECTS_ERR_OVERLAP, 1, "non-consecutive ascending");
    expect_overlap(h, w, equal, 4, 50, GRID_OBJECTS_ERR_OVERLAP, 0, "equal offsets");
}

/* ------------------------------------------------------------------ the header's example */

Test(grid_objects_ref, the_header_example_is_compiled_verbatim_by_the_example_test)
{
    gw_assert_example_verbatim(GW_GRID_OBJECTS_HEADER, GW_GRID_OBJECTS_EXAMPLE);
}
