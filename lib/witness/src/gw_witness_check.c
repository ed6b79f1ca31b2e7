/* SPDX-License-Identifier: MIT */
#include "gw_witness_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Appends a formatted line, keeping msg NUL-terminated and never writing past msg_size.
 * msg is always terminated: gw_witness_check empties it first and vsnprintf terminates. */
static void append_line(char *msg, size_t msg_size, const char *fmt, ...)
{
    if (!msg || msg_size == 0) return;
    size_t used = strlen(msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + used, msg_size - used, fmt, ap);
    va_end(ap);
    used = strlen(msg);
    if (used + 1 < msg_size) {
        msg[used] = '\n';
        msg[used + 1] = '\0';
    }
}

int gw_witness_emulated(const gw_witness *rec)
{
    /* architecture 0 was recorded (arch_min_inv holds ~0): host code on the emulated device wrote it */
    return rec && rec->launches && rec->arch_max == 0 && rec->arch_min_inv == ~0u;
}

unsigned gw_witness_sm_count(const gw_witness *rec)
{
    if (!rec) return 0;
    unsigned n = 0;
    for (int i = 0; i < GW_WITNESS_SM_WORDS; i++)
        for (unsigned bits = rec->sm_mask[i]; bits; bits &= bits - 1) n++;
    return n;
}

/* Blocks that ran but landed on one SM can only mean a tiny grid or a serialised launch. */
enum { ONE_SM_WARNING_MIN_BLOCKS = 64 };

int gw_witness_check(const gw_witness *rec, const gw_witness_expect *expect, char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    int violations = 0;
#define VIOLATION(...) (violations++, append_line(msg, msg_size, __VA_ARGS__))

    if (!rec || !expect) { /* no record proves nothing: a violation, never a pass */
        VIOLATION("gw_witness_check: %s is NULL: nothing to check", !rec ? "the record rec" : "the expectation expect");
        return violations;
    }
    if (expect->launches == 0) { /* a call that must launch nothing: the zeroed record stays zero */
        if (rec->launches || rec->grid_blocks || rec->blocks || rec->items || rec->arch_max)
            VIOLATION("expected no launch, but the record shows %llu launches, %llu blocks, %llu items",
                      rec->launches, rec->blocks, rec->items);
        return violations;
    }
    if (rec->launches == 0 && rec->blocks == 0) {
        VIOLATION("no GPU code ran: 0 launches recorded (expected %llu)", (unsigned long long)expect->launches);
        return violations; /* the other fields are all zero and would only repeat this */
    }
    if (rec->launches == 0) /* launches and grid_blocks are recorded by block 0 when it finishes */
        VIOLATION("block 0 did not finish: %llu other blocks did, but no launch was recorded", rec->blocks);
    else if (rec->launches != expect->launches)
        VIOLATION("%llu launches recorded, expected %llu", rec->launches, (unsigned long long)expect->launches);
    if (rec->items < expect->items)
        VIOLATION("partial execution: %llu of %llu items produced by the device code", rec->items,
                  (unsigned long long)expect->items);
    else if (rec->items > expect->items)
        VIOLATION("%llu items produced by the device code, more than the %llu expected: work done twice or miscounted",
                  rec->items, (unsigned long long)expect->items);
    if (rec->blocks < rec->grid_blocks)
        VIOLATION("%llu of %llu blocks did not finish", rec->grid_blocks - rec->blocks, rec->grid_blocks);
    else if (rec->blocks > rec->grid_blocks)
        VIOLATION("%llu blocks finished but the launches asked for %llu: a stale or shared record",
                  rec->blocks, rec->grid_blocks);

    const unsigned arch_min = gw_witness_arch_min(rec), arch_max = rec->arch_max;
    if (arch_min != arch_max)
        VIOLATION("blocks ran code for different architectures (%u..%u)", arch_min, arch_max);
    const int emulated = gw_witness_emulated(rec);
    if (emulated && !expect->emulated)
        VIOLATION("the record comes from gpuwitness' emulated device: the code ran emulated on the CPU, not a GPU");
    else if (!emulated && expect->emulated)
        VIOLATION("an emulated run was expected, but the record says sm_%u: it does not come from the emulated "
                  "device", arch_max / 10);
    if (!expect->emulated && !emulated && expect->device_arch && arch_max != expect->device_arch) {
        if (arch_max < expect->device_arch && arch_max / 100 != expect->device_arch / 100)
            VIOLATION("ran code compiled for sm_%u on an sm_%u device: this build has no native code for this "
                      "GPU; add %u to CMAKE_CUDA_ARCHITECTURES",
                      arch_max / 10, expect->device_arch / 10, expect->device_arch / 10);
        else if (arch_max < expect->device_arch) /* same major: older SASS runs as is, or PTX was JIT-compiled */
            VIOLATION("ran code compiled for sm_%u on an sm_%u device: compatible but not native (older SASS or "
                      "JIT-compiled PTX); add %u to CMAKE_CUDA_ARCHITECTURES",
                      arch_max / 10, expect->device_arch / 10, expect->device_arch / 10);
        else
            VIOLATION("ran code compiled for sm_%u on an sm_%u device: the record does not come from this device",
                      arch_max / 10, expect->device_arch / 10);
    }
    if (rec->t_last < gw_witness_t_first(rec))
        VIOLATION("device times out of order: first block start %llu ns after last block end %llu ns",
                  gw_witness_t_first(rec), rec->t_last);

    /* only device code writes these: a record copied in from the host lacks them */
    const unsigned sms = gw_witness_sm_count(rec);
    if (rec->blocks && sms == 0)
        VIOLATION("no multiprocessor recorded (the SM mask is empty): the record was not written by the blocks");
    if (rec->blocks && gw_witness_t_first(rec) == 0)
        VIOLATION("no start time recorded (the first block's start is 0): the record was not written by the blocks, "
                  "or a kernel passed no gw_witness_clock() value");
    if (sms == 1 && rec->blocks >= ONE_SM_WARNING_MIN_BLOCKS && expect->device_sms > 1)
        append_line(msg, msg_size, "warning: all %llu blocks ran on 1 of %u multiprocessors", rec->blocks,
                    expect->device_sms);
#undef VIOLATION
    return violations;
}

void gw_witness_format(const gw_witness *rec, char *buf, size_t buf_size)
{
    if (!buf || buf_size == 0) return;
    if (!rec) {
        snprintf(buf, buf_size, "witness: none (no record)");
        return;
    }
    const unsigned long long t0 = gw_witness_t_first(rec);
    const double us = rec->t_last > t0 ? (double)(rec->t_last - t0) / 1000.0 : 0.0;
    const unsigned arch_min = gw_witness_arch_min(rec);
    char arch[32];
    if (gw_witness_emulated(rec))
        snprintf(arch, sizeof arch, "emulated");
    else if (arch_min == rec->arch_max)
        snprintf(arch, sizeof arch, "sm_%u", rec->arch_max / 10);
    else
        snprintf(arch, sizeof arch, "sm_%u..sm_%u", arch_min / 10, rec->arch_max / 10);
    snprintf(buf, buf_size, "witness: launches=%llu blocks=%llu/%llu items=%llu arch=%s sms=%u device_time=%.1f us",
             rec->launches, rec->blocks, rec->grid_blocks, rec->items, rec->launches ? arch : "none",
             gw_witness_sm_count(rec), us);
}
