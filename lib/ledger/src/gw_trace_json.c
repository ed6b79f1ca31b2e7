/* SPDX-License-Identifier: MIT */
#include "gw_trace_json.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lanes (see the header): the host is process 1, device d is process GPU_PID_BASE + d. */
enum { HOST_PID = 1, HOST_TID = 1, GPU_PID_BASE = 2 };

/* A growing string; after the first failed append every later one is a no-op and failed stays set. */
typedef struct text {
    char *data;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->data && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap <= t->len + (size_t)n) cap *= 2;
        char *data = realloc(t->data, cap);
        if (!data) {
            t->failed = 1;
            return;
        }
        t->data = data;
        t->cap = cap;
    }
}

/* s as a JSON string: quotes, backslashes and control characters escaped; other bytes (UTF-8) as they are. */
static void put_string(text *t, const char *s)
{
    put(t, "\"");
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\')
            put(t, "\\%c", *c);
        else if (*c < 0x20)
            put(t, "\\u%04x", *c);
        else
            put(t, "%c", *c);
    }
    put(t, "\"");
}

/* ns as microseconds with three decimals, exactly (no floating point). */
static void put_us(text *t, uint64_t ns)
{
    put(t, "%llu.%03llu", (unsigned long long)(ns / 1000u), (unsigned long long)(ns % 1000u));
}

static int timed(const gw_activity *a)
{
    return a->start_ns != 0 || a->end_ns != 0;
}

static long lane_pid(const gw_activity *a)
{
    return a->kind == GW_ACTIVITY_RANGE ? HOST_PID : GPU_PID_BASE + (long)a->device_id;
}

static long lane_tid(const gw_activity *a)
{
    return a->kind == GW_ACTIVITY_RANGE ? HOST_TID : (long)a->stream_id;
}

typedef struct lane {
    long pid, tid;
} lane;

/* Metadata events naming each process and thread lane the events use, each once. Lanes are few (one
 * per device and stream), so a linear search over the ones seen is enough. 0, or -1 out of memory. */
static int put_lane_names(text *t, const gw_activity *events, size_t n, const gw_trace_info *info)
{
    lane *seen = NULL;
    size_t n_seen = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        const gw_activity *a = &events[i];
        if (!timed(a)) continue;
        const lane l = {lane_pid(a), lane_tid(a)};
        int pid_seen = 0, tid_seen = 0;
        for (size_t j = 0; j < n_seen && !tid_seen; j++) {
            pid_seen |= seen[j].pid == l.pid;
            tid_seen = seen[j].pid == l.pid && seen[j].tid == l.tid;
        }
        if (tid_seen) continue;
        if (n_seen == cap) {
            cap = cap ? cap * 2 : 8;
            lane *grown = realloc(seen, cap * sizeof *grown);
            if (!grown) {
                free(seen);
                return -1;
            }
            seen = grown;
        }
        seen[n_seen++] = l;
        if (!pid_seen) {
            put(t, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"args\":{\"name\":", n_seen > 1 ? "," : "",
                l.pid);
            if (a->kind == GW_ACTIVITY_RANGE) {
                char name[64];
                snprintf(name, sizeof name, "host (pid %ld)", info ? info->host_pid : 0L);
                put_string(t, name);
            } else {
                put(t, "\"GPU %u\"", (unsigned)a->device_id);
            }
            put(t, "}}");
        }
        put(t, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,\"args\":{\"name\":",
            n_seen > 1 || !pid_seen ? "," : "", l.pid, l.tid);
        if (a->kind == GW_ACTIVITY_RANGE)
            put(t, "\"NVTX ranges\"}}");
        else
            put(t, "\"stream %u\"}}", (unsigned)a->stream_id);
    }
    free(seen);
    return 0;
}

static void put_event(text *t, const gw_activity *a, uint64_t origin)
{
    char base[GW_ACTIVITY_NAME_SIZE];
    put(t, ",\n{\"name\":");
    switch (a->kind) {
    case GW_ACTIVITY_KERNEL: put_string(t, gw_kernel_base_name(a->name, base, sizeof base)); break;
    case GW_ACTIVITY_COPY: put(t, "\"memcpy %s\"", gw_copy_kind_short(a->copy_kind)); break;
    default: put_string(t, a->name); break;
    }
    const char *cat = a->kind == GW_ACTIVITY_KERNEL ? "kernel" : a->kind == GW_ACTIVITY_COPY ? "memcpy" : "nvtx";
    put(t, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", cat);
    put_us(t, a->start_ns >= origin ? a->start_ns - origin : 0);
    put(t, ",\"dur\":");
    put_us(t, a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0);
    put(t, ",\"pid\":%ld,\"tid\":%ld,\"args\":{", lane_pid(a), lane_tid(a));
    if (a->iteration >= 0) put(t, "\"iteration\":%ld,", a->iteration);
    switch (a->kind) {
    case GW_ACTIVITY_KERNEL:
        put(t, "\"device\":%u,\"stream\":%u,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"mangled\":",
            (unsigned)a->device_id, (unsigned)a->stream_id, (int)a->grid[0], (int)a->grid[1], (int)a->grid[2],
            (int)a->block[0], (int)a->block[1], (int)a->block[2]);
        put_string(t, a->name);
        break;
    case GW_ACTIVITY_COPY:
        put(t, "\"bytes\":%llu,\"kind\":\"%s\",\"device\":%u,\"stream\":%u", (unsigned long long)a->bytes,
            gw_copy_kind_short(a->copy_kind), (unsigned)a->device_id, (unsigned)a->stream_id);
        break;
    default: put(t, "\"depth\":%d", a->depth); break;
    }
    put(t, "}}");
}

int gw_trace_json_build(const gw_activity *events, size_t n_events, const gw_trace_info *info, char **json,
                        size_t *json_len, size_t *written)
{
    return gw_trace_json_build_counters(events, n_events, NULL, 0, info, json, json_len, written);
}

int gw_trace_json_build_counters(const gw_activity *events, size_t n_events, const gw_trace_counter *counters,
                                 size_t n_counters, const gw_trace_info *info, char **json, size_t *json_len,
                                 size_t *written)
{
    *json = NULL;
    if (json_len) *json_len = 0;
    if (written) *written = 0;
    uint64_t origin = UINT64_MAX;
    size_t count = 0;
    for (size_t i = 0; i < n_events; i++)
        if (timed(&events[i])) {
            count++;
            if (events[i].start_ns < origin) origin = events[i].start_ns;
        }
    if (!count)
        for (size_t i = 0; i < n_counters; i++)
            if (counters[i].ts_ns < origin) origin = counters[i].ts_ns;

    text t = {NULL, 0, 0, 0};
    put(&t, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"events\":%zu", count);
    const char *keys[] = {"tool", "traced", "schedule"};
    const char *values[] = {info ? info->tool : NULL, info ? info->traced : NULL, info ? info->schedule : NULL};
    for (size_t k = 0; k < 3; k++) {
        if (!values[k]) continue;
        put(&t, ",\"%s\":", keys[k]);
        put_string(&t, values[k]);
    }
    put(&t, "},\n\"traceEvents\":[");
    if (put_lane_names(&t, events, n_events, info)) t.failed = 1;
    /* Every timed event's lane was named above, so each event follows an element: put_event leads with a comma. */
    for (size_t i = 0; i < n_events; i++)
        if (timed(&events[i])) put_event(&t, &events[i], origin);
    for (size_t i = 0; i < n_counters; i++) {
        /* The first element needs no comma when there were no lanes and no events. */
        put(&t, "%s\n{\"name\":\"device memory (ours)\",\"cat\":\"memory\",\"ph\":\"C\",\"ts\":",
            count || i ? "," : "");
        put_us(&t, counters[i].ts_ns >= origin ? counters[i].ts_ns - origin : 0);
        put(&t, ",\"pid\":%ld,\"args\":{\"bytes\":%llu}}", GPU_PID_BASE + (long)counters[i].device_id,
            (unsigned long long)counters[i].bytes);
    }
    put(&t, "\n]}\n");
    if (t.failed) {
        free(t.data);
        return -1;
    }
    *json = t.data;
    if (json_len) *json_len = t.len;
    if (written) *written = count;
    return 0;
}
