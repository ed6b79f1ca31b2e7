/* SPDX-License-Identifier: MIT
 * Bad-input table of grid_d4's CPU side: every row of grid_d4_bad_cases.c that the reference can see, run
 * through grid_d4_validate, grid_d4_ref and grid_d4_ref_mt. A row passes when the function returns the row's
 * status (and validate its grid index), grid_d4_status_str() of that status names the argument and the
 * rule, and no byte of the arena (every input and output) changed. One test per function loops over the
 * rows, so a failure names the row and the Valgrind gate starts one process per function, not per row.
 */
#include <stdint.h>
#include <stdio.h>

#include <criterion/criterion.h>

#include "bad_input_util.h"
#include "grid_d4_bad_cases.h"
#include "grid_d4_ref.h"

typedef int (*ref_fn)(const grid_d4_params *, const uint8_t *, uint8_t *, const uint64_t *, const uint16_t *,
                      const uint16_t *, uint16_t *, uint16_t *, const uint8_t *);

/* Every row the reference sees through one reference: the status, its words, and an untouched arena. */
static void expect_ref_rejects(ref_fn fn, const char *fn_name)
{
    size_t rows = 0;
    for (size_t i = 0; i < d4_bad_case_count; i++) {
        const d4_bad_case *c = &d4_bad_cases[i];
        if (!c->ref_sees) continue; /* d_status and flags: launcher-only arguments */
        d4_arena arena;
        d4_args a;
        d4_arena_init(&arena, &a);
        c->breaks(&a);
        char row[160];
        snprintf(row, sizeof row, "%s, row \"%s\"", fn_name, c->name);
        bi_bytes before;
        bi_bytes_take(&before, &arena, sizeof arena);
        const int rc = fn(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height, a.out_width, a.ops);
        cr_expect_eq(rc, c->status, "%s: returned %d (%s), want %d (%s)", row, rc,
                     grid_d4_status_str((grid_d4_status)rc), c->status, grid_d4_status_str((grid_d4_status)c->status));
        bi_expect_words(row, grid_d4_status_str((grid_d4_status)rc), c->words);
        bi_bytes_expect_unchanged(&before, row, "the arena (every input and output array)");
        rows++;
    }
    cr_log_info("%s: %zu bad inputs rejected", fn_name, rows);
}

Test(grid_d4_validate, returns_the_rule_and_the_grid_and_reads_only)
{
    size_t rows = 0;
    for (size_t i = 0; i < d4_bad_case_count; i++) {
        const d4_bad_case *c = &d4_bad_cases[i];
        if (!c->ref_sees) continue;
        d4_arena arena;
        d4_args a;
        d4_arena_init(&arena, &a);
        c->breaks(&a);
        bi_bytes before;
        bi_bytes_take(&before, &arena, sizeof arena);
        size_t index = 12345;
        const grid_d4_status s = grid_d4_validate(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height,
                                                  a.out_width, a.ops, &index);
        cr_expect_eq((int)s, c->status, "row \"%s\": grid_d4_validate returned %d (%s), want %d", c->name, (int)s,
                     grid_d4_status_str(s), c->status);
        cr_expect_eq(index, c->index, "row \"%s\": bad_index %zu, want %zu", c->name, index, c->index);
        bi_expect_words(c->name, grid_d4_status_str(s), c->words);
        bi_bytes_expect_unchanged(&before, c->name, "the arena (every input and output array)");
        /* the index is optional: NULL gives the same verdict */
        const grid_d4_status again = grid_d4_validate(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height,
                                                      a.out_width, a.ops, NULL);
        cr_expect_eq(again, s, "row \"%s\": bad_index NULL changed the verdict to %d", c->name, (int)again);
        rows++;
    }
    cr_log_info("grid_d4_validate: %zu bad inputs rejected", rows);
}

Test(grid_d4_ref, rejects_with_the_rule_and_writes_nothing)
{
    expect_ref_rejects(grid_d4_ref, "grid_d4_ref");
}

Test(grid_d4_ref_mt, rejects_with_the_rule_and_writes_nothing)
{
    expect_ref_rejects(grid_d4_ref_mt, "grid_d4_ref_mt");
}

/* The name functions are total: out-of-range codes get a fixed word, never a wild read. */
Test(grid_d4_names, out_of_range_codes_get_a_fixed_word)
{
    static const int ops[] = {-1, 8, 255, -2147483647 - 1};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        cr_expect_str_eq(grid_d4_op_name(ops[i]), "invalid", "grid_d4_op_name(%d)", ops[i]);
    static const int codes[] = {-1, 8, 99};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        cr_expect_str_eq(grid_d4_status_str((grid_d4_status)codes[i]), "unknown grid_d4 status",
                         "grid_d4_status_str(%d)", codes[i]);
}
