/* SPDX-License-Identifier: MIT
 * The NVTX range helpers without a GPU: NVTX3 calls are no-ops until a tool attaches, and the hook that the
 * ledger installs while recording sees every push and pop with the range's name and depth; error paths
 * close what they opened with gw_range_pop_to.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "gw_trace_range.h"

enum { EVENTS_MAX = 256 };
static struct {
    const char *name;
    int depth, begin;
} events[EVENTS_MAX];
static int n_events;

static void record(const char *name, int depth, int begin)
{
    if (n_events < EVENTS_MAX) {
        events[n_events].name = name;
        events[n_events].depth = depth;
        events[n_events].begin = begin;
    }
    n_events++;
}

static void hooked(void)
{
    n_events = 0;
    gw_range_set_hook(record);
}

TestSuite(trace_range, .init = hooked);

Test(trace_range, the_hook_sees_nested_ranges_with_names_and_depths)
{
    gw_range_push("grid_d4/upload");
    gw_range_push("inner");
    cr_assert_eq(gw_range_depth(), 2);
    gw_range_pop();
    gw_range_pop();
    cr_assert_eq(gw_range_depth(), 0);
    cr_assert_eq(n_events, 4);
    const char *names[] = {"grid_d4/upload", "inner", "inner", "grid_d4/upload"};
    const int depths[] = {0, 1, 1, 0}, begins[] = {1, 1, 0, 0};
    for (int i = 0; i < 4; i++) {
        cr_assert_str_eq(events[i].name, names[i], "event %d", i);
        cr_assert_eq(events[i].depth, depths[i], "event %d", i);
        cr_assert_eq(events[i].begin, begins[i], "event %d", i);
    }
}

Test(trace_range, pop_to_closes_what_an_error_path_left_open)
{
    gw_range_push("outer");
    const int depth = gw_range_depth();
    gw_range_push("a");
    gw_range_push("b");
    gw_range_pop_to(depth);
    cr_assert_eq(gw_range_depth(), 1);
    cr_assert_str_eq(events[3].name, "b");
    cr_assert_str_eq(events[4].name, "a");
    gw_range_pop_to(0);
    cr_assert_eq(gw_range_depth(), 0);
    cr_assert_eq(n_events, 6);
}

Test(trace_range, an_unbalanced_pop_does_nothing)
{
    gw_range_pop();
    cr_assert_eq(gw_range_depth(), 0);
    cr_assert_eq(n_events, 0);
}

Test(trace_range, ranges_deeper_than_the_name_stack_still_balance)
{
    for (int i = 0; i < 100; i++) gw_range_push("deep");
    cr_assert_eq(gw_range_depth(), 100);
    gw_range_pop();
    cr_assert_null(events[100].name, "a range past the named depth pops without a name");
    cr_assert_eq(events[100].depth, 99);
    gw_range_pop_to(0);
    cr_assert_str_eq(events[199].name, "deep");
    cr_assert_eq(events[199].depth, 0);
}

Test(trace_range, without_a_hook_ranges_only_reach_nvtx)
{
    gw_range_set_hook(NULL);
    gw_range_push("unseen");
    gw_range_pop();
    cr_assert_eq(n_events, 0);
}
