/* SPDX-License-Identifier: MIT
 * Bad-input table of focus_stack's CPU side: every row of focus_stack_bad_cases.c through focus_stack_check,
 * focus_stack_ref on one thread and focus_stack_ref on every core. A row passes when the function returns
 * the row's code, focus_stack_status_str() of it names the argument and the rule, and no byte of the input
 * or of the outputs (pre-filled with a sentinel) changed. One test per function loops over the rows.
 */
#include <stdio.h>

#include <criterion/criterion.h>

#include "bad_input_util.h"
#include "focus_stack_bad_cases.h"
#include "focus_stack_ref.h"

/* n_threads < 0: focus_stack_check itself; otherwise focus_stack_ref with that many threads. */
static void expect_rejects(const char *fn_name, int n_threads)
{
    for (size_t i = 0; i < fs_bad_case_count; i++) {
        const fs_bad_case *c = &fs_bad_cases[i];
        fs_arena arena;
        fs_args a;
        fs_arena_init(&arena, &a);
        c->breaks(&a);
        char row[160];
        snprintf(row, sizeof row, "%s, row \"%s\"", fn_name, c->name);
        bi_bytes before;
        bi_bytes_take(&before, &arena, sizeof arena);
        const int rc = n_threads < 0 ? focus_stack_check(&a.p, a.in, a.idx, a.ff)
                                     : focus_stack_ref(&a.p, a.in, a.idx, a.ff, a.best, a.focus, n_threads);
        cr_expect_eq(rc, c->code, "%s: returned %d (%s), want %d (%s)", row, rc, focus_stack_status_str(rc), c->code,
                     focus_stack_status_str(c->code));
        bi_expect_words(row, focus_stack_status_str(rc), c->words);
        bi_bytes_expect_unchanged(&before, row, "the input and every output (idx, ff, best, focus)");
    }
    cr_log_info("%s: %zu bad inputs rejected", fn_name, fs_bad_case_count);
}

Test(focus_stack_check, returns_the_first_broken_rule)
{
    expect_rejects("focus_stack_check", -1);
}

Test(focus_stack_ref, rejects_on_one_thread_and_writes_nothing)
{
    expect_rejects("focus_stack_ref (n_threads 1)", 1);
}

Test(focus_stack_ref, rejects_on_every_core_and_writes_nothing)
{
    expect_rejects("focus_stack_ref (n_threads 0: every core)", 0);
}

Test(focus_stack_names, out_of_range_codes_get_a_fixed_word)
{
    static const int codes[] = {-1, 8, 1000};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        cr_expect_str_eq(focus_stack_status_str(codes[i]), "unknown focus_stack status", "focus_stack_status_str(%d)",
                         codes[i]);
}
