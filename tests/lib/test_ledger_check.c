/* SPDX-License-Identifier: MIT
 * The ledger's budget check on hand-made activity records: a log that is exactly the budget passes, and
 * every way a call can break it (no kernel, a round trip through the host, a missing or extra copy,
 * launch counts, stray kernels, dropped records) is found and said in words. Pure C: runs without a GPU.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gw_ledger_check.h"

/* Names as CUPTI reports nvcc's kernels (Itanium-mangled; see tests/ledger/CMakeLists.txt for where they come from). */
#define VALIDATE_MANGLED "_Z23grid_d4_validate_kernelmmiPKmPKtS2_PKhP21grid_d4_status_record"
#define TRANSFORM_MANGLED "_Z24grid_d4_transform_kernelmmiPKhPhPKmPKtS5_PtS6_S0_PK21grid_d4_status_recordP10gw_witness"

enum { IN_BYTES = 245702, N_GRIDS = 2000 };

static const gw_kernel_expect d4_kernels[] = {{"grid_d4_validate_kernel", 1}, {"grid_d4_transform_kernel", 1}};
static const gw_copy_expect d4_copies[] = {
    {GW_COPY_HTOD, IN_BYTES, "in"},        {GW_COPY_HTOD, 8 * N_GRIDS, "offset"},
    {GW_COPY_HTOD, 2 * N_GRIDS, "height"}, {GW_COPY_HTOD, 2 * N_GRIDS, "width"},
    {GW_COPY_HTOD, N_GRIDS, "ops"},        {GW_COPY_DTOH, 8, "status"},
    {GW_COPY_DTOH, 96, "witness"},         {GW_COPY_DTOH, IN_BYTES, "out"},
    {GW_COPY_DTOH, 2 * N_GRIDS, "out_height"}, {GW_COPY_DTOH, 2 * N_GRIDS, "out_width"}};
static const gw_ledger_budget d4_budget = {d4_kernels, 2, d4_copies, sizeof d4_copies / sizeof d4_copies[0]};

static uint64_t clock_ns = 1000000;

static void add_kernel(gw_activity_log *log, const char *name)
{
    gw_activity a;
    memset(&a, 0, sizeof a);
    a.kind = GW_ACTIVITY_KERNEL;
    snprintf(a.name, sizeof a.name, "%s", name);
    a.start_ns = clock_ns, a.end_ns = clock_ns += 5000;
    a.stream_id = 13;
    a.grid[0] = 528, a.grid[1] = a.grid[2] = 1;
    a.block[0] = 256, a.block[1] = a.block[2] = 1;
    a.iteration = -1;
    cr_assert_eq(gw_activity_log_push(log, &a), 0);
}

static void add_copy(gw_activity_log *log, gw_copy_kind kind, uint64_t bytes)
{
    gw_activity a;
    memset(&a, 0, sizeof a);
    a.kind = GW_ACTIVITY_COPY;
    a.copy_kind = kind;
    a.bytes = bytes;
    a.start_ns = clock_ns, a.end_ns = clock_ns += 1000;
    a.stream_id = 13;
    a.iteration = -1;
    cr_assert_eq(gw_activity_log_push(log, &a), 0);
}

static void add_range(gw_activity_log *log, const char *name)
{
    gw_activity a;
    memset(&a, 0, sizeof a);
    a.kind = GW_ACTIVITY_RANGE;
    snprintf(a.name, sizeof a.name, "%s", name);
    a.start_ns = clock_ns, a.end_ns = clock_ns += 100;
    a.iteration = -1;
    cr_assert_eq(gw_activity_log_push(log, &a), 0);
}

/* What gw_d4_gpu_call leaves in the ledger when it behaves: the budget, in the order the call makes it. */
static void add_good_call(gw_activity_log *log)
{
    add_range(log, "grid_d4/upload");
    for (size_t i = 0; i < 5; i++) add_copy(log, d4_copies[i].kind, d4_copies[i].bytes);
    add_kernel(log, VALIDATE_MANGLED);
    add_kernel(log, TRANSFORM_MANGLED);
    for (size_t i = 5; i < 10; i++) add_copy(log, d4_copies[i].kind, d4_copies[i].bytes);
}

static int check(const gw_activity_log *log, char *msg)
{
    return gw_ledger_check(log, &d4_budget, msg, 4096);
}

Test(ledger_check, passes_a_call_that_is_exactly_its_budget)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    char msg[4096];
    cr_assert_eq(check(&log, msg), 0, "unexpected findings: %s", msg);
    cr_assert_str_empty(msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, matches_copies_in_any_order_and_ignores_ranges)
{
    gw_activity_log log = {0};
    add_kernel(&log, TRANSFORM_MANGLED);
    for (size_t i = 10; i-- > 0;) {
        add_copy(&log, d4_copies[i].kind, d4_copies[i].bytes);
        add_range(&log, "grid_d4/download");
    }
    add_kernel(&log, "grid_d4_validate_kernel"); /* a plain (extern "C" or demangled) name matches too */
    char msg[4096];
    cr_assert_eq(check(&log, msg), 0, "unexpected findings: %s", msg);
    gw_activity_log_free(&log);
}

/* cpu_fallback: everything copied back, the CPU reference run, the results uploaded, and no kernel. */
Test(ledger_check, reports_no_kernel_and_a_round_trip_for_a_cpu_fallback)
{
    gw_activity_log log = {0};
    for (size_t i = 0; i < 5; i++) add_copy(&log, d4_copies[i].kind, d4_copies[i].bytes);
    add_copy(&log, GW_COPY_DTOH, IN_BYTES); /* inputs back to the host */
    add_copy(&log, GW_COPY_DTOH, 8 * N_GRIDS);
    add_copy(&log, GW_COPY_HTOD, IN_BYTES); /* the CPU's result up again */
    add_copy(&log, GW_COPY_HTOD, 8);
    for (size_t i = 5; i < 10; i++) add_copy(&log, d4_copies[i].kind, d4_copies[i].bytes);
    char msg[4096];
    cr_assert_gt(check(&log, msg), 0);
    cr_assert(strstr(msg, "no kernel ran on the GPU: 0 launches recorded (expected grid_d4_validate_kernel x1, "
                          "grid_d4_transform_kernel x1)"), "%s", msg);
    cr_assert(strstr(msg, "host-to-device: 517412 bytes in 7 copies, budget 271702 bytes in 5 copies: over the "
                          "byte budget"), "%s", msg);
    cr_assert(strstr(msg, "unexpected device-to-host copy of 245702 bytes"), "%s", msg);
    cr_assert(strstr(msg, "round trip through the host: 261702 bytes went back to the host and 245710 bytes up "
                          "again beyond the budget"), "%s", msg);
    gw_activity_log_free(&log);
}

/* roundtrip: a correct launch with an extra copy of the input down and up again around it. */
Test(ledger_check, reports_the_byte_budget_and_a_round_trip_for_extra_copies_around_a_correct_launch)
{
    gw_activity_log log = {0};
    add_copy(&log, GW_COPY_DTOH, IN_BYTES);
    add_copy(&log, GW_COPY_HTOD, IN_BYTES);
    add_good_call(&log);
    char msg[4096];
    const int violations = check(&log, msg);
    cr_assert_eq(violations, 5, "%d violations: %s", violations, msg); /* 2 totals, 2 copies, the round trip */
    cr_assert(strstr(msg, "host-to-device: 517404 bytes in 6 copies, budget 271702 bytes in 5 copies: over the "
                          "byte budget"), "%s", msg);
    cr_assert(strstr(msg, "unexpected host-to-device copy of 245702 bytes (stream 13)"), "%s", msg);
    cr_assert(strstr(msg, "round trip through the host"), "%s", msg);
    cr_assert_null(strstr(msg, "kernel"), "the kernels were right: %s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, reports_a_missing_download_by_name)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    log.count--; /* the last copy, out_width, never happened */
    char msg[4096];
    cr_assert_eq(check(&log, msg), 2, "%s", msg);
    cr_assert(strstr(msg, "device-to-host: 249806 bytes in 4 copies, budget 253806 bytes in 5 copies: under the "
                          "byte budget"), "%s", msg);
    cr_assert(strstr(msg, "missing device-to-host copy of out_width (4000 bytes)"), "%s", msg);
    cr_assert_null(strstr(msg, "round trip"), "%s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, an_extra_download_alone_is_over_budget_but_no_round_trip)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    add_copy(&log, GW_COPY_DTOH, IN_BYTES); /* a second download of the result */
    char msg[4096];
    cr_assert_eq(check(&log, msg), 2, "%s", msg);
    cr_assert(strstr(msg, "device-to-host: 499508 bytes in 6 copies, budget 253806 bytes in 5 copies: over the "
                          "byte budget"), "%s", msg);
    cr_assert_null(strstr(msg, "round trip"), "nothing went up again: %s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, reports_the_right_total_in_the_wrong_copies)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    log.items[1].bytes -= 100; /* the input upload split in two */
    add_copy(&log, GW_COPY_HTOD, 100);
    char msg[4096];
    cr_assert_gt(check(&log, msg), 0);
    cr_assert(strstr(msg, "host-to-device: 271702 bytes in 6 copies, budget 271702 bytes in 5 copies: the right "
                          "total, but not the budgeted copies"), "%s", msg);
    cr_assert(strstr(msg, "missing host-to-device copy of in (245702 bytes)"), "%s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, reports_wrong_launch_counts_and_kernels_outside_the_budget)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    add_kernel(&log, TRANSFORM_MANGLED);
    add_kernel(&log, "_Z17off_by_one_kernelmPKmPKtS2_Ph");
    char msg[4096];
    cr_assert_eq(check(&log, msg), 2, "%s", msg);
    cr_assert(strstr(msg, "kernel grid_d4_transform_kernel: 2 launches recorded, expected 1"), "%s", msg);
    cr_assert(strstr(msg, "unexpected kernel off_by_one_kernel: 1 launch, not in the budget"), "%s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, reports_a_device_to_device_copy_outside_the_budget)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    add_copy(&log, GW_COPY_DTOD, 4096);
    char msg[4096];
    cr_assert_eq(check(&log, msg), 2, "%s", msg);
    cr_assert(strstr(msg, "device-to-device: 4096 bytes in 1 copy, budget 0 bytes in 0 copies: over the byte "
                          "budget"), "%s", msg);
    cr_assert(strstr(msg, "unexpected device-to-device copy of 4096 bytes"), "%s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, lists_the_first_unexpected_copies_and_counts_the_rest)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    for (int i = 0; i < 20; i++) add_copy(&log, GW_COPY_HTOD, 1);
    char msg[8192];
    cr_assert_eq(gw_ledger_check(&log, &d4_budget, msg, sizeof msg), 21, "%s", msg);
    cr_assert(strstr(msg, "... and 12 more unexpected host-to-device copies"), "%s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, never_vouches_for_a_log_with_dropped_records)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    log.dropped = 3;
    char msg[4096];
    cr_assert_eq(check(&log, msg), 1, "%s", msg);
    cr_assert(strstr(msg, "3 activity records were dropped (buffer full or out of memory): the ledger is incomplete"),
              "%s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, an_empty_budget_accepts_only_an_empty_log)
{
    gw_activity_log log = {0};
    const gw_ledger_budget none = {NULL, 0, NULL, 0};
    char msg[1024];
    cr_assert_eq(gw_ledger_check(&log, &none, msg, sizeof msg), 0, "%s", msg);
    add_range(&log, "grid_d4/reference");
    cr_assert_eq(gw_ledger_check(&log, &none, msg, sizeof msg), 0, "ranges are not budgeted: %s", msg);
    add_kernel(&log, TRANSFORM_MANGLED);
    cr_assert_eq(gw_ledger_check(&log, &none, msg, sizeof msg), 1, "%s", msg);
    cr_assert(strstr(msg, "unexpected kernel grid_d4_transform_kernel"), "%s", msg);
    gw_activity_log_free(&log);
}

Test(ledger_check, rejects_a_malformed_budget_with_the_rule)
{
    gw_activity_log log = {0};
    char msg[1024];
    const gw_ledger_budget no_array = {NULL, 1, NULL, 0};
    cr_assert_eq(gw_ledger_check(&log, &no_array, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "a non-zero count needs its array"), "%s", msg);
    const gw_kernel_expect twice[] = {{"k", 1}, {"k", 2}};
    const gw_ledger_budget dup = {twice, 2, NULL, 0};
    cr_assert_eq(gw_ledger_check(&log, &dup, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "kernel k is listed twice"), "%s", msg);
    const gw_kernel_expect unnamed[] = {{"", 1}};
    const gw_ledger_budget empty_name = {unnamed, 1, NULL, 0};
    cr_assert_eq(gw_ledger_check(&log, &empty_name, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "kernels[0].name must be a non-empty name"), "%s", msg);
    const gw_copy_expect bad_kind[] = {{(gw_copy_kind)42, 1, "x"}};
    const gw_ledger_budget bad = {NULL, 0, bad_kind, 1};
    cr_assert_eq(gw_ledger_check(&log, &bad, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "copies[0].kind 42 is not a gw_copy_kind"), "%s", msg);
    cr_assert_eq(gw_ledger_check(NULL, &d4_budget, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "log must not be NULL"), "%s", msg);
}

Test(ledger_check, writes_within_a_small_message_buffer_and_accepts_none)
{
    gw_activity_log log = {0};
    add_copy(&log, GW_COPY_DTOH, 1);
    char msg[24];
    memset(msg, 'x', sizeof msg);
    cr_assert_gt(gw_ledger_check(&log, &d4_budget, msg, 16), 0);
    cr_assert_lt(strlen(msg), 16);
    cr_assert_eq(msg[16], 'x', "wrote past msg_size");
    cr_assert_gt(gw_ledger_check(&log, &d4_budget, NULL, 0), 0);
    gw_activity_log_free(&log);
}

Test(ledger_check, kernel_base_names_come_out_of_every_form_cupti_gives)
{
    char out[GW_ACTIVITY_NAME_SIZE];
    cr_assert_str_eq(gw_kernel_base_name(TRANSFORM_MANGLED, out, sizeof out), "grid_d4_transform_kernel");
    cr_assert_str_eq(gw_kernel_base_name("_Z23focus_stack_fast_kernelPKtPhPtPfiiiyyyP10gw_witness", out, sizeof out),
                     "focus_stack_fast_kernel");
    cr_assert_str_eq(gw_kernel_base_name("_ZL9my_kernelPi", out, sizeof out), "my_kernel"); /* internal linkage */
    /* nvcc's static kernels live in an _INTERNAL_<hash> namespace: the innermost name is the kernel's */
    cr_assert_str_eq(gw_kernel_base_name("_ZN41_INTERNAL_5a1b2c3d_10_grid_d4_cu_1234abcd9my_kernelEPi", out,
                                         sizeof out), "my_kernel");
    cr_assert_str_eq(gw_kernel_base_name("_ZN2ns6kernelEv", out, sizeof out), "kernel");
    cr_assert_str_eq(gw_kernel_base_name("grid_d4_transform_kernel(unsigned long, int)", out, sizeof out),
                     "grid_d4_transform_kernel");
    cr_assert_str_eq(gw_kernel_base_name("void ns::k<int>(int*)", out, sizeof out), "k");
    cr_assert_str_eq(gw_kernel_base_name("plain_c_kernel", out, sizeof out), "plain_c_kernel");
    cr_assert_str_eq(gw_kernel_base_name("_Z99short", out, sizeof out), "_Z99short"); /* length past the end */
    cr_assert_str_eq(gw_kernel_base_name(NULL, out, sizeof out), "");
    char small[6];
    cr_assert_str_eq(gw_kernel_base_name(TRANSFORM_MANGLED, small, sizeof small), "grid_");
}

Test(ledger_check, the_receipt_counts_kernels_by_name_and_copies_by_direction)
{
    gw_activity_log log = {0};
    add_good_call(&log);
    add_kernel(&log, TRANSFORM_MANGLED);
    add_copy(&log, GW_COPY_DTOD, 64);
    char line[512];
    gw_ledger_format(&log, line, sizeof line);
    cr_assert_str_eq(line, "ledger: 3 kernels (grid_d4_validate_kernel x1, grid_d4_transform_kernel x2), "
                           "5 host-to-device copies (271702 bytes), 5 device-to-host copies (253806 bytes), "
                           "1 other copy", "%s", line);
    log.dropped = 1;
    gw_ledger_format(&log, line, sizeof line);
    cr_assert(strstr(line, ", records dropped: incomplete"), "%s", line);
    gw_activity_log_free(&log);
}

Test(ledger_check, a_log_grows_to_many_records_and_frees_to_empty)
{
    gw_activity_log log = {0};
    for (int i = 0; i < 100000; i++) add_copy(&log, GW_COPY_HTOD, (uint64_t)i);
    cr_assert_eq(log.count, 100000);
    cr_assert_eq(log.items[99999].bytes, 99999);
    gw_activity_log_free(&log);
    cr_assert_eq(log.count, 0);
    cr_assert_null(log.items);
}
