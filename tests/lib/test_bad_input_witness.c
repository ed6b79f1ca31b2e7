/* SPDX-License-Identifier: MIT
 * Bad-input tables of the host-side witness check (lib/witness/include/gw_witness_check.h): NULL records and
 * expectations, and message buffers that are NULL, empty or too small. A NULL record must count as a
 * violation (never a pass), and no buffer may be written past its size. The records that fail the check
 * (no launch, partial execution, wrong architecture, ...) have their own tests in test_witness_check.c.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "bad_input_util.h"
#include "gw_witness_check.h"

/* A record that passes against expect_ok: one launch of 4 blocks on 4 SMs, 100 items, sm_90. */
static gw_witness good_record(void)
{
    gw_witness w;
    memset(&w, 0, sizeof w);
    w.launches = 1;
    w.grid_blocks = w.blocks = 4;
    w.items = 100;
    w.t_first_inv = ~1000ull;
    w.t_last = 2000;
    w.arch_min_inv = ~900u;
    w.arch_max = 900;
    w.sm_mask[0] = 0xFu;
    return w;
}

static const gw_witness_expect expect_ok = {.launches = 1, .items = 100, .device_arch = 900, .device_sms = 132};

enum { MSG_FULL, MSG_NULL_WITH_SIZE, MSG_SIZE_0, MSG_SIZE_1, MSG_SIZE_12 };

typedef struct check_case {
    const char *name;
    int rec_null, expect_null, zeroed_record; /* zeroed: nothing ran, one violation */
    int msg_mode;
    int violations;
    const char *words; /* in msg (MSG_FULL rows only) */
} check_case;

static const check_case check_cases[] = {
    {"rec NULL", 1, 0, 0, MSG_FULL, 1, "gw_witness_check|the record rec is NULL|nothing to check"},
    {"expect NULL", 0, 1, 0, MSG_FULL, 1, "gw_witness_check|the expectation expect is NULL"},
    {"rec and expect NULL", 1, 1, 0, MSG_FULL, 1, "the record rec is NULL"},
    {"rec NULL, msg NULL with msg_size 64", 1, 0, 0, MSG_NULL_WITH_SIZE, 1, NULL},
    {"zeroed record, msg NULL with msg_size 64", 0, 0, 1, MSG_NULL_WITH_SIZE, 1, NULL},
    {"zeroed record, msg_size 0", 0, 0, 1, MSG_SIZE_0, 1, NULL},
    {"zeroed record, msg_size 1", 0, 0, 1, MSG_SIZE_1, 1, NULL},
    {"zeroed record, msg_size 12", 0, 0, 1, MSG_SIZE_12, 1, NULL},
    {"rec NULL, msg_size 12", 1, 0, 0, MSG_SIZE_12, 1, NULL},
};

Test(gw_witness_check, null_arguments_are_violations_and_small_buffers_are_never_overrun)
{
    for (size_t i = 0; i < sizeof check_cases / sizeof check_cases[0]; i++) {
        const check_case *c = &check_cases[i];
        gw_witness rec = good_record();
        if (c->zeroed_record) memset(&rec, 0, sizeof rec);
        const gw_witness rec_copy = rec;
        const gw_witness_expect expect = expect_ok;
        char msg[256];
        memset(msg, 'Z', sizeof msg); /* the sentinel past the given size */
        size_t size = sizeof msg;
        char *m = msg;
        switch (c->msg_mode) {
        case MSG_NULL_WITH_SIZE: m = NULL, size = 64; break;
        case MSG_SIZE_0: size = 0; break;
        case MSG_SIZE_1: size = 1; break;
        case MSG_SIZE_12: size = 12; break;
        default: break;
        }
        const int v = gw_witness_check(c->rec_null ? NULL : &rec, c->expect_null ? NULL : &expect, m, size);
        cr_expect_eq(v, c->violations, "row \"%s\": %d violations, want %d", c->name, v, c->violations);
        cr_expect(memcmp(&rec, &rec_copy, sizeof rec) == 0, "row \"%s\": the record changed", c->name);
        if (c->msg_mode == MSG_FULL) bi_expect_words(c->name, msg, c->words);
        const size_t used = c->msg_mode == MSG_NULL_WITH_SIZE ? 0 : size;
        if (used) cr_expect(memchr(msg, '\0', used) != NULL, "row \"%s\": msg not terminated within %zu", c->name, used);
        for (size_t k = used; k < sizeof msg; k++)
            cr_assert(msg[k] == 'Z', "row \"%s\": byte %zu of msg written past msg_size %zu", c->name, k, used);
    }
    cr_log_info("gw_witness_check: %zu bad inputs", sizeof check_cases / sizeof check_cases[0]);
    /* the same record and expectation pass: the rows above fail for their argument alone */
    const gw_witness rec = good_record();
    char msg[256];
    cr_expect_eq(gw_witness_check(&rec, &expect_ok, msg, sizeof msg), 0, "the good record fails: %s", msg);
}

typedef struct format_case {
    const char *name;
    int rec_null;
    int buf_null;
    size_t size;
    const char *words; /* in buf, when it has room */
} format_case;

static const format_case format_cases[] = {
    {"rec NULL", 1, 0, 256, "witness: none|no record"},
    {"buf NULL with buf_size 64", 0, 1, 64, NULL},
    {"buf_size 0", 0, 0, 0, NULL},
    {"buf_size 1", 0, 0, 1, NULL},
    {"buf_size 9 (truncated)", 0, 0, 9, NULL},
    {"rec NULL, buf_size 5", 1, 0, 5, NULL},
};

Test(gw_witness_format, null_record_says_none_and_small_buffers_are_never_overrun)
{
    for (size_t i = 0; i < sizeof format_cases / sizeof format_cases[0]; i++) {
        const format_case *c = &format_cases[i];
        const gw_witness rec = good_record();
        char buf[256];
        memset(buf, 'Z', sizeof buf);
        gw_witness_format(c->rec_null ? NULL : &rec, c->buf_null ? NULL : buf, c->size);
        const size_t used = c->buf_null ? 0 : c->size;
        if (used) cr_expect(memchr(buf, '\0', used) != NULL, "row \"%s\": buf not terminated within %zu", c->name, used);
        for (size_t k = used; k < sizeof buf; k++)
            cr_assert(buf[k] == 'Z', "row \"%s\": byte %zu written past buf_size %zu", c->name, k, used);
        if (c->words) bi_expect_words(c->name, buf, c->words);
    }
    cr_log_info("gw_witness_format: %zu bad inputs", sizeof format_cases / sizeof format_cases[0]);
}

Test(gw_witness_sm_count, a_null_record_has_no_multiprocessors)
{
    cr_expect_eq(gw_witness_sm_count(NULL), 0u);
}
