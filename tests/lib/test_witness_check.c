/* SPDX-License-Identifier: MIT
 * The host-side witness check on hand-made records: every violation of docs/witness.md, "The host-side check",
 * is detected and explained in words, and a record of a good run passes. Pure C: runs on machines without a
 * GPU. */
#include <string.h>

#include <criterion/criterion.h>

#include "gw_witness_check.h"

/* A record as a correct H100 run of 264 blocks producing 1e6 items would leave it. */
static gw_witness good_record(void)
{
    gw_witness w;
    memset(&w, 0, sizeof w);
    w.launches = 1;
    w.grid_blocks = w.blocks = 264;
    w.items = 1000000;
    w.arch_min_inv = ~900u;
    w.arch_max = 900;
    w.t_first_inv = ~1000000ull;
    w.t_last = 1091000ull;
    for (int i = 0; i < 4; i++) w.sm_mask[i] = 0xFFFFFFFFu; /* 128 SMs */
    w.sm_mask[4] = 0xFu;                                     /* 132 */
    return w;
}

static const gw_witness_expect h100_expect = {.launches = 1, .items = 1000000, .device_arch = 900, .device_sms = 132};

static int check(const gw_witness *w, const gw_witness_expect *e, char *msg)
{
    return gw_witness_check(w, e, msg, 1024);
}

Test(witness_check, passes_a_record_of_a_complete_native_run)
{
    gw_witness w = good_record();
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 0, "unexpected findings: %s", msg);
    cr_assert_str_empty(msg);
    cr_assert_eq(gw_witness_sm_count(&w), 132);
}

Test(witness_check, reports_no_gpu_code_when_nothing_was_recorded)
{
    gw_witness w;
    memset(&w, 0, sizeof w);
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "no GPU code ran: 0 launches recorded (expected 1)"), "%s", msg);
}

Test(witness_check, reports_partial_execution_with_both_counts)
{
    gw_witness w = good_record();
    w.items = 499712;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "partial execution: 499712 of 1000000 items produced by the device code"), "%s", msg);
}

Test(witness_check, reports_more_items_than_expected)
{
    gw_witness w = good_record();
    w.items = 2000000;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "more than the 1000000 expected"), "%s", msg);
}

Test(witness_check, reports_blocks_that_did_not_finish)
{
    gw_witness w = good_record();
    w.grid_blocks = 4096;
    w.blocks = 4093;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "3 of 4096 blocks did not finish"), "%s", msg);
}

Test(witness_check, reports_a_wrong_launch_count)
{
    gw_witness w = good_record();
    w.launches = 2;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "2 launches recorded, expected 1"), "%s", msg);
}

Test(witness_check, reports_ptx_jit_and_names_the_architecture_to_add)
{
    gw_witness w = good_record();
    w.arch_min_inv = ~750u;
    w.arch_max = 750;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "ran code compiled for sm_75 on an sm_90 device: this build has no native code for this "
                          "GPU; add 90 to CMAKE_CUDA_ARCHITECTURES"),
              "%s", msg);
}

Test(witness_check, reports_a_record_from_a_newer_architecture_than_the_device)
{
    gw_witness w = good_record();
    w.arch_min_inv = ~1000u;
    w.arch_max = 1000;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "does not come from this device"), "%s", msg);
}

Test(witness_check, reports_mixed_architectures)
{
    gw_witness w = good_record();
    w.arch_min_inv = ~750u; /* arch_max stays 900 */
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "blocks ran code for different architectures (750..900)"), "%s", msg);
}

Test(witness_check, skips_the_arch_comparison_when_the_device_is_unknown)
{
    gw_witness w = good_record();
    w.arch_min_inv = ~750u;
    w.arch_max = 750;
    gw_witness_expect e = h100_expect;
    e.device_arch = 0;
    char msg[1024];
    cr_assert_eq(check(&w, &e, msg), 0, "%s", msg);
}

Test(witness_check, warns_but_passes_when_a_large_grid_ran_on_one_multiprocessor)
{
    gw_witness w = good_record();
    memset(w.sm_mask, 0, sizeof w.sm_mask);
    w.sm_mask[2] = 1u << 5; /* SM 69 only */
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 0, "%s", msg);
    cr_assert(strstr(msg, "warning: all 264 blocks ran on 1 of 132 multiprocessors"), "%s", msg);
}

Test(witness_check, reports_device_times_out_of_order)
{
    gw_witness w = good_record();
    w.t_last = 999ull;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "device times out of order"), "%s", msg);
}

Test(witness_check, lists_every_violation_on_its_own_line)
{
    gw_witness w = good_record();
    w.items = 10;
    w.blocks = 200;
    w.arch_min_inv = ~750u;
    w.arch_max = 750;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 3, "%s", msg);
    int lines = 0;
    for (const char *c = msg; *c; c++) lines += *c == '\n';
    cr_assert_eq(lines, 3, "%s", msg);
}

Test(witness_check, never_writes_past_a_small_message_buffer)
{
    gw_witness w = good_record();
    w.items = 10;
    w.blocks = 200;
    char msg[24];
    memset(msg, 'x', sizeof msg);
    char guard = msg[sizeof msg - 1];
    cr_assert_eq(gw_witness_check(&w, &h100_expect, msg, sizeof msg - 1), 2);
    cr_assert_eq(msg[sizeof msg - 1], guard);
    cr_assert_lt(strlen(msg), sizeof msg - 1);
    cr_assert_eq(gw_witness_check(&w, &h100_expect, NULL, 0), 2);
}

Test(witness_check, formats_a_receipt_with_every_field)
{
    gw_witness w = good_record();
    char line[256];
    gw_witness_format(&w, line, sizeof line);
    cr_assert_str_eq(line, "witness: launches=1 blocks=264/264 items=1000000 arch=sm_90 sms=132 device_time=91.0 us");
}

Test(witness_check, zeroed_record_reads_as_nothing_recorded)
{
    gw_witness w;
    memset(&w, 0, sizeof w);
    cr_assert_eq(gw_witness_arch_min(&w), 0u);
    cr_assert_eq(gw_witness_t_first(&w), 0ull);
    char line[256];
    gw_witness_format(&w, line, sizeof line);
    cr_assert(strstr(line, "launches=0") && strstr(line, "arch=none"), "%s", line);
}

Test(witness_check, reports_block_0_unfinished_rather_than_no_gpu_code)
{
    gw_witness w = good_record();
    w.launches = 0;
    w.grid_blocks = 0;
    w.blocks = 263;
    char msg[1024];
    cr_assert_geq(check(&w, &h100_expect, msg), 1);
    cr_assert(strstr(msg, "block 0 did not finish: 263 other blocks did"), "%s", msg);
    cr_assert_null(strstr(msg, "no GPU code ran"), "%s", msg);
}

Test(witness_check, a_call_expected_to_launch_nothing_needs_an_all_zero_record)
{
    gw_witness w;
    memset(&w, 0, sizeof w);
    const gw_witness_expect none = {.launches = 0, .items = 0, .device_arch = 900, .device_sms = 132};
    char msg[1024];
    cr_assert_eq(check(&w, &none, msg), 0, "%s", msg);
    w = good_record();
    cr_assert_eq(check(&w, &none, msg), 1);
    cr_assert(strstr(msg, "expected no launch, but the record shows 1 launches"), "%s", msg);
}

Test(witness_check, names_older_sass_of_the_same_major_as_not_native)
{
    gw_witness w = good_record();
    w.arch_min_inv = ~860u;
    w.arch_max = 860;
    gw_witness_expect e = h100_expect;
    e.device_arch = 870;
    char msg[1024];
    cr_assert_eq(check(&w, &e, msg), 1);
    cr_assert(strstr(msg, "ran code compiled for sm_86 on an sm_87 device: compatible but not native"), "%s", msg);
}

/* A record filled in on the host, as a "GPU" function that computes on the CPU could fake it: counts right,
 * but no multiprocessor and no start time, which only blocks running device code record. */
Test(witness_check, refuses_a_record_made_on_the_host_without_sm_mask_or_start_time)
{
    gw_witness w = good_record();
    memset(w.sm_mask, 0, sizeof w.sm_mask);
    w.t_first_inv = 0;
    char msg[1024];
    cr_assert_eq(check(&w, &h100_expect, msg), 2, "%s", msg);
    cr_assert(strstr(msg, "no multiprocessor recorded (the SM mask is empty)"), "%s", msg);
    cr_assert(strstr(msg, "no start time recorded"), "%s", msg);
}

/* What a block of kernel code leaves on gpuwitness' emulated device: architecture 0. */
static gw_witness emulated_record(void)
{
    gw_witness w = good_record();
    w.arch_min_inv = ~0u;
    w.arch_max = 0;
    return w;
}

Test(witness_check, refuses_an_emulated_record_unless_emulation_is_expected)
{
    gw_witness w = emulated_record();
    char msg[1024];
    cr_assert(gw_witness_emulated(&w));
    cr_assert_eq(check(&w, &h100_expect, msg), 1, "%s", msg);
    cr_assert(strstr(msg, "emulated on the CPU, not a GPU"), "%s", msg);
    const gw_witness_expect emu = {.launches = 1, .items = 1000000, .device_arch = 900, .device_sms = 4,
                                   .emulated = 1};
    cr_assert_eq(check(&w, &emu, msg), 0, "%s", msg);
    char line[256];
    gw_witness_format(&w, line, sizeof line);
    cr_assert(strstr(line, "arch=emulated"), "%s", line);
}

Test(witness_check, refuses_a_gpu_record_where_emulation_was_expected)
{
    gw_witness w = good_record();
    const gw_witness_expect emu = {.launches = 1, .items = 1000000, .device_arch = 900, .device_sms = 4,
                                   .emulated = 1};
    char msg[1024];
    cr_assert(!gw_witness_emulated(&w));
    cr_assert_eq(check(&w, &emu, msg), 1, "%s", msg);
    cr_assert(strstr(msg, "an emulated run was expected, but the record says sm_90"), "%s", msg);
}
