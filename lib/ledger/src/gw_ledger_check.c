/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "gw_ledger_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gw_activity_log_push(gw_activity_log *log, const gw_activity *a)
{
    if (log->count == log->capacity) {
        const size_t capacity = log->capacity ? log->capacity * 2 : 64;
        gw_activity *items = realloc(log->items, capacity * sizeof *items);
        if (!items) {
            log->dropped++;
            return -1;
        }
        log->items = items;
        log->capacity = capacity;
    }
    log->items[log->count++] = *a;
    return 0;
}

void gw_activity_log_free(gw_activity_log *log)
{
    free(log->items);
    memset(log, 0, sizeof *log);
}

const char *gw_copy_kind_text(gw_copy_kind kind)
{
    switch (kind) {
    case GW_COPY_HTOD: return "host-to-device";
    case GW_COPY_DTOH: return "device-to-host";
    case GW_COPY_DTOD: return "device-to-device";
    case GW_COPY_HTOH: return "host-to-host";
    default: return "other";
    }
}

const char *gw_copy_kind_short(gw_copy_kind kind)
{
    switch (kind) {
    case GW_COPY_HTOD: return "HtoD";
    case GW_COPY_DTOH: return "DtoH";
    case GW_COPY_DTOD: return "DtoD";
    case GW_COPY_HTOH: return "HtoH";
    default: return "other";
    }
}

static void copy_text(char *out, size_t out_size, const char *from, size_t len)
{
    if (!out_size) return;
    if (len >= out_size) len = out_size - 1;
    memcpy(out, from, len);
    out[len] = '\0';
}

/* Reads an Itanium <source-name> (decimal length, then that many characters) at *p. 1 with the name's
 * start and length, advancing *p; 0 when there is none or it runs past the end of the string. */
static int source_name(const char **p, const char **name, size_t *len)
{
    const char *s = *p;
    if (*s < '1' || *s > '9') return 0;
    size_t n = 0;
    while (*s >= '0' && *s <= '9') {
        n = n * 10 + (size_t)(*s++ - '0');
        if (n > 4096) return 0;
    }
    if (strnlen(s, n) < n) return 0;
    *name = s;
    *len = n;
    *p = s + n;
    return 1;
}

const char *gw_kernel_base_name(const char *recorded, char *out, size_t out_size)
{
    if (!out_size) return out;
    out[0] = '\0';
    if (!recorded) return out;
    if (recorded[0] == '_' && recorded[1] == 'Z') {
        const char *p = recorded + 2, *name = NULL;
        size_t len = 0;
        if (*p == 'L') p++; /* internal linkage */
        if (*p == 'N') {    /* nested: namespaces (nvcc's _INTERNAL_<hash> for static kernels), take the last */
            p++;
            while (*p == 'K' || *p == 'V' || *p == 'r') p++;
            const char *part;
            size_t part_len;
            while (source_name(&p, &part, &part_len)) name = part, len = part_len;
        } else {
            source_name(&p, &name, &len);
        }
        if (name) {
            copy_text(out, out_size, name, len);
            return out;
        }
    }
    /* Not mangled: a C name, or a demangled "ns::name(args)". */
    size_t end = strcspn(recorded, "(<");
    size_t start = 0;
    for (size_t i = 0; i + 1 < end; i++)
        if (recorded[i] == ':' && recorded[i + 1] == ':') start = i + 2;
    copy_text(out, out_size, recorded + start, end - start);
    return out;
}

/* Appends a formatted line, keeping msg NUL-terminated and never writing past msg_size. */
static void append_line(char *msg, size_t msg_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
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

static const char *plural(unsigned long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* Unexpected copies are listed one by one up to this many; the rest are counted. */
enum { LISTED_COPIES_MAX = 8, LISTED_KERNELS_MAX = 8 };

static int budget_valid(const gw_ledger_budget *b, char *msg, size_t msg_size)
{
    if (!b || (b->n_kernels && !b->kernels) || (b->n_copies && !b->copies)) {
        append_line(msg, msg_size, "gw_ledger_check: budget: a non-zero count needs its array (kernels, copies)");
        return 0;
    }
    for (size_t i = 0; i < b->n_kernels; i++) {
        if (!b->kernels[i].name || !b->kernels[i].name[0]) {
            append_line(msg, msg_size, "gw_ledger_check: budget: kernels[%zu].name must be a non-empty name", i);
            return 0;
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(b->kernels[i].name, b->kernels[j].name) == 0) {
                append_line(msg, msg_size, "gw_ledger_check: budget: kernel %s is listed twice (give one entry "
                            "its total launch count)", b->kernels[i].name);
                return 0;
            }
    }
    for (size_t i = 0; i < b->n_copies; i++)
        if (b->copies[i].kind < GW_COPY_HTOD || b->copies[i].kind > GW_COPY_OTHER) {
            append_line(msg, msg_size, "gw_ledger_check: budget: copies[%zu].kind %d is not a gw_copy_kind", i,
                        (int)b->copies[i].kind);
            return 0;
        }
    return 1;
}

/* Kernel launches grouped by source name, in order of first appearance: a few distinct names, so a
 * linear search per record. */
typedef struct kernel_tally {
    char name[GW_ACTIVITY_NAME_SIZE];
    uint64_t launches;
} kernel_tally;

/* *out (malloc'd, *n_out entries) or -1 when out of memory. */
static int tally_kernels(const gw_activity_log *log, kernel_tally **out, size_t *n_out)
{
    kernel_tally *t = NULL;
    size_t n = 0, cap = 0;
    char base[GW_ACTIVITY_NAME_SIZE];
    for (size_t i = 0; i < log->count; i++) {
        if (log->items[i].kind != GW_ACTIVITY_KERNEL) continue;
        gw_kernel_base_name(log->items[i].name, base, sizeof base);
        size_t k = 0;
        while (k < n && strcmp(t[k].name, base) != 0) k++;
        if (k == n) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                kernel_tally *grown = realloc(t, cap * sizeof *grown);
                if (!grown) {
                    free(t);
                    return -1;
                }
                t = grown;
            }
            memcpy(t[n].name, base, sizeof base);
            t[n++].launches = 0;
        }
        t[k].launches++;
    }
    *out = t;
    *n_out = n;
    return 0;
}

static int check_kernels(const gw_activity_log *log, const gw_ledger_budget *b, char *msg, size_t msg_size)
{
    kernel_tally *tally = NULL;
    size_t n_tally = 0;
    if (tally_kernels(log, &tally, &n_tally)) {
        append_line(msg, msg_size, "gw_ledger_check: out of memory");
        return 1;
    }
    uint64_t expected = 0;
    for (size_t k = 0; k < b->n_kernels; k++) expected += b->kernels[k].launches;
    if (n_tally == 0 && expected > 0) {
        char list[512] = "";
        for (size_t k = 0; k < b->n_kernels; k++) {
            const size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s x%llu", k ? ", " : "", b->kernels[k].name,
                     (unsigned long long)b->kernels[k].launches);
        }
        append_line(msg, msg_size, "no kernel ran on the GPU: 0 launches recorded (expected %s)", list);
        return 1;
    }
    int violations = 0;
    for (size_t k = 0; k < b->n_kernels; k++) {
        uint64_t launches = 0;
        for (size_t j = 0; j < n_tally; j++)
            if (strcmp(tally[j].name, b->kernels[k].name) == 0) launches = tally[j].launches;
        if (launches == b->kernels[k].launches) continue;
        violations++;
        append_line(msg, msg_size, "kernel %s: %llu %s recorded, expected %llu", b->kernels[k].name,
                    (unsigned long long)launches, plural(launches, "launch", "launches"),
                    (unsigned long long)b->kernels[k].launches);
    }
    size_t listed = 0;
    for (size_t j = 0; j < n_tally; j++) {
        int in_budget = 0;
        for (size_t k = 0; k < b->n_kernels && !in_budget; k++)
            in_budget = strcmp(tally[j].name, b->kernels[k].name) == 0;
        if (in_budget) continue;
        violations++;
        if (listed++ < LISTED_KERNELS_MAX)
            append_line(msg, msg_size, "unexpected kernel %s: %llu %s, not in the budget", tally[j].name,
                        (unsigned long long)tally[j].launches, plural(tally[j].launches, "launch", "launches"));
    }
    if (listed > LISTED_KERNELS_MAX)
        append_line(msg, msg_size, "... and %zu more unexpected kernels", listed - LISTED_KERNELS_MAX);
    free(tally);
    return violations;
}

typedef struct copy_totals {
    uint64_t copies, bytes;
} copy_totals;

static int check_copies(const gw_activity_log *log, const gw_ledger_budget *b, char *msg, size_t msg_size)
{
    /* One-to-one matching by (direction, bytes): entries with equal keys are interchangeable, so taking
     * the first unmatched record for each budget entry is an optimal matching. */
    unsigned char *matched = calloc(log->count + 1, 1), *found = calloc(b->n_copies + 1, 1);
    if (!matched || !found) {
        free(matched), free(found);
        append_line(msg, msg_size, "gw_ledger_check: out of memory");
        return 1;
    }
    for (size_t e = 0; e < b->n_copies; e++)
        for (size_t i = 0; i < log->count && !found[e]; i++) {
            const gw_activity *a = &log->items[i];
            if (a->kind == GW_ACTIVITY_COPY && !matched[i] && a->copy_kind == b->copies[e].kind &&
                a->bytes == b->copies[e].bytes)
                matched[i] = found[e] = 1;
        }

    int violations = 0;
    uint64_t extra_bytes[GW_COPY_OTHER + 1] = {0};
    for (int kind = GW_COPY_HTOD; kind <= GW_COPY_OTHER; kind++) {
        copy_totals got = {0, 0}, want = {0, 0};
        size_t unmatched = 0, missing = 0;
        for (size_t i = 0; i < log->count; i++)
            if (log->items[i].kind == GW_ACTIVITY_COPY && (int)log->items[i].copy_kind == kind) {
                got.copies++, got.bytes += log->items[i].bytes;
                if (!matched[i]) unmatched++, extra_bytes[kind] += log->items[i].bytes;
            }
        for (size_t e = 0; e < b->n_copies; e++)
            if ((int)b->copies[e].kind == kind) {
                want.copies++, want.bytes += b->copies[e].bytes;
                missing += !found[e];
            }
        if (!unmatched && !missing) continue;
        const char *text = gw_copy_kind_text((gw_copy_kind)kind);
        const char *verdict = got.bytes > want.bytes   ? "over the byte budget"
                              : got.bytes < want.bytes ? "under the byte budget"
                                                       : "the right total, but not the budgeted copies";
        violations++;
        append_line(msg, msg_size, "%s: %llu bytes in %llu %s, budget %llu bytes in %llu %s: %s", text,
                    (unsigned long long)got.bytes, (unsigned long long)got.copies, plural(got.copies, "copy", "copies"),
                    (unsigned long long)want.bytes, (unsigned long long)want.copies,
                    plural(want.copies, "copy", "copies"), verdict);
        size_t listed = 0;
        for (size_t i = 0; i < log->count; i++) {
            const gw_activity *a = &log->items[i];
            if (a->kind != GW_ACTIVITY_COPY || (int)a->copy_kind != kind || matched[i]) continue;
            violations++;
            if (listed++ < LISTED_COPIES_MAX)
                append_line(msg, msg_size, "unexpected %s copy of %llu bytes (stream %u)", text,
                            (unsigned long long)a->bytes, (unsigned)a->stream_id);
        }
        if (listed > LISTED_COPIES_MAX)
            append_line(msg, msg_size, "... and %zu more unexpected %s copies", listed - LISTED_COPIES_MAX, text);
        for (size_t e = 0; e < b->n_copies; e++)
            if ((int)b->copies[e].kind == kind && !found[e]) {
                violations++;
                append_line(msg, msg_size, "missing %s copy of %s (%llu bytes)", text,
                            b->copies[e].what ? b->copies[e].what : "a budgeted buffer",
                            (unsigned long long)b->copies[e].bytes);
            }
    }
    if (extra_bytes[GW_COPY_DTOH] && extra_bytes[GW_COPY_HTOD]) {
        violations++;
        append_line(msg, msg_size, "round trip through the host: %llu bytes went back to the host and %llu bytes "
                    "up again beyond the budget, the signature of work done on the CPU between copies",
                    (unsigned long long)extra_bytes[GW_COPY_DTOH], (unsigned long long)extra_bytes[GW_COPY_HTOD]);
    }
    free(matched), free(found);
    return violations;
}

int gw_ledger_check(const gw_activity_log *log, const gw_ledger_budget *budget, char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    if (!log) {
        append_line(msg, msg_size, "gw_ledger_check: log must not be NULL");
        return -1;
    }
    if (!budget_valid(budget, msg, msg_size)) return -1;
    int violations = 0;
    if (log->dropped) {
        violations++;
        append_line(msg, msg_size, "%llu activity %s dropped (buffer full or out of memory): the ledger is "
                    "incomplete and cannot vouch for this call", (unsigned long long)log->dropped,
                    plural(log->dropped, "record was", "records were"));
    }
    violations += check_kernels(log, budget, msg, msg_size);
    violations += check_copies(log, budget, msg, msg_size);
    return violations;
}

void gw_ledger_format(const gw_activity_log *log, char *buf, size_t buf_size)
{
    if (!buf_size) return;
    kernel_tally *tally = NULL;
    size_t n_tally = 0;
    if (tally_kernels(log, &tally, &n_tally)) {
        snprintf(buf, buf_size, "ledger: (out of memory)");
        return;
    }
    char kernels[512] = "";
    uint64_t n_kernels = 0;
    for (size_t j = 0; j < n_tally; j++) {
        n_kernels += tally[j].launches;
        const size_t used = strlen(kernels);
        if (j < LISTED_KERNELS_MAX)
            snprintf(kernels + used, sizeof kernels - used, "%s%s x%llu", j ? ", " : "", tally[j].name,
                     (unsigned long long)tally[j].launches);
    }
    free(tally);
    copy_totals totals[GW_COPY_OTHER + 1] = {{0, 0}};
    for (size_t i = 0; i < log->count; i++) {
        const gw_activity *a = &log->items[i];
        if (a->kind == GW_ACTIVITY_COPY && a->copy_kind >= GW_COPY_HTOD && a->copy_kind <= GW_COPY_OTHER) {
            totals[a->copy_kind].copies++;
            totals[a->copy_kind].bytes += a->bytes;
        }
    }
    const uint64_t others = totals[GW_COPY_DTOD].copies + totals[GW_COPY_HTOH].copies + totals[GW_COPY_OTHER].copies;
    snprintf(buf, buf_size, "ledger: %llu %s%s%s%s, %llu host-to-device %s (%llu bytes), %llu device-to-host %s "
             "(%llu bytes), %llu other %s%s", (unsigned long long)n_kernels, plural(n_kernels, "kernel", "kernels"),
             n_tally ? " (" : "", kernels, n_tally > LISTED_KERNELS_MAX ? ", ...)" : n_tally ? ")" : "",
             (unsigned long long)totals[GW_COPY_HTOD].copies, plural(totals[GW_COPY_HTOD].copies, "copy", "copies"),
             (unsigned long long)totals[GW_COPY_HTOD].bytes, (unsigned long long)totals[GW_COPY_DTOH].copies,
             plural(totals[GW_COPY_DTOH].copies, "copy", "copies"), (unsigned long long)totals[GW_COPY_DTOH].bytes,
             (unsigned long long)others, plural(others, "copy", "copies"),
             log->dropped ? ", records dropped: incomplete" : "");
}
