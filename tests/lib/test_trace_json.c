/* SPDX-License-Identifier: MIT
 * The Chrome trace writer on hand-made events, parsed back with cJSON: valid JSON, complete ("X") spans with
 * ts and dur in microseconds, lanes named by metadata events, args with bytes; and the --wait/--warmup/
 * --active schedule. Pure C: runs without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "gw_trace_json.h"
#include "gw_trace_schedule.h"

static gw_activity event(gw_activity_kind kind, const char *name, uint64_t start_ns, uint64_t end_ns)
{
    gw_activity a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    snprintf(a.name, sizeof a.name, "%s", name);
    a.start_ns = start_ns;
    a.end_ns = end_ns;
    a.iteration = -1;
    return a;
}

/* One call of a host path: a range around an upload, a kernel, a download. */
static void one_call(gw_activity ev[5])
{
    ev[0] = event(GW_ACTIVITY_RANGE, "grid_d4/upload", 1000000000, 1000012345);
    ev[0].iteration = 4;
    ev[1] = event(GW_ACTIVITY_COPY, "", 1000001500, 1000011500);
    ev[1].copy_kind = GW_COPY_HTOD, ev[1].bytes = 245702, ev[1].stream_id = 7, ev[1].iteration = 4;
    ev[2] = event(GW_ACTIVITY_KERNEL, "_Z24grid_d4_transform_kernelmmiPKhPh", 1000020000, 1000026789);
    ev[2].stream_id = 7, ev[2].iteration = 4;
    ev[2].grid[0] = 528, ev[2].grid[1] = 1, ev[2].grid[2] = 1;
    ev[2].block[0] = 256, ev[2].block[1] = 1, ev[2].block[2] = 1;
    ev[3] = event(GW_ACTIVITY_COPY, "", 1000030000, 1000031000);
    ev[3].copy_kind = GW_COPY_DTOH, ev[3].bytes = 96, ev[3].stream_id = 7, ev[3].device_id = 1;
    ev[4] = event(GW_ACTIVITY_RANGE, "grid_d4/launch", 1000019000, 1000019999);
    ev[4].depth = 1, ev[4].iteration = 4;
}

static cJSON *build_and_parse(const gw_activity *ev, size_t n, const gw_trace_info *info, size_t *written)
{
    char *json = NULL;
    size_t len = 0;
    cr_assert_eq(gw_trace_json_build(ev, n, info, &json, &len, written), 0);
    cr_assert_not_null(json);
    cr_assert_eq(strlen(json), len);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root, "not valid JSON near: %.80s", cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?");
    free(json);
    return root;
}

/* The n-th event with ph "X" (0-based), in file order. */
static const cJSON *span(const cJSON *root, int n)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        if (cJSON_IsString(ph) && !strcmp(ph->valuestring, "X") && n-- == 0) return e;
    }
    cr_assert_fail("fewer spans than expected");
    return NULL;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "%s is not a number", key);
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsString(v), "%s is not a string", key);
    return v->valuestring;
}

static const cJSON *args(const cJSON *o)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "args");
    cr_assert(cJSON_IsObject(a), "no args object");
    return a;
}

Test(trace_json, writes_complete_spans_with_microsecond_times_and_copy_bytes)
{
    gw_activity ev[5];
    one_call(ev);
    const gw_trace_info info = {"gpuwitness 0.1.0", "grid_d4: 2000 grids", "wait=0 warmup=1 active=3", 4242};
    size_t written = 0;
    cJSON *root = build_and_parse(ev, 5, &info, &written);
    cr_assert_eq(written, 5);
    cr_assert_str_eq(str(root, "displayTimeUnit"), "ns");

    const cJSON *upload = span(root, 0);
    cr_assert_str_eq(str(upload, "name"), "grid_d4/upload");
    cr_assert_str_eq(str(upload, "cat"), "nvtx");
    cr_assert_eq(num(upload, "ts"), 0.0, "ts counts from the earliest event");
    cr_assert_eq(num(upload, "dur"), 12.345, "12345 ns is 12.345 us");
    cr_assert_eq(num(args(upload), "iteration"), 4);
    cr_assert_eq(num(args(upload), "depth"), 0);

    const cJSON *h2d = span(root, 1);
    cr_assert_str_eq(str(h2d, "name"), "memcpy HtoD");
    cr_assert_str_eq(str(h2d, "cat"), "memcpy");
    cr_assert_eq(num(h2d, "ts"), 1.5);
    cr_assert_eq(num(h2d, "dur"), 10.0);
    cr_assert_eq(num(args(h2d), "bytes"), 245702);
    cr_assert_str_eq(str(args(h2d), "kind"), "HtoD");
    cr_assert_eq(num(h2d, "pid"), 2, "device 0 is process 2");
    cr_assert_eq(num(h2d, "tid"), 7, "one thread per stream");

    const cJSON *kernel = span(root, 2);
    cr_assert_str_eq(str(kernel, "name"), "grid_d4_transform_kernel", "the source name, not the mangled one");
    cr_assert_str_eq(str(kernel, "cat"), "kernel");
    cr_assert_eq(num(kernel, "ts"), 20.0);
    cr_assert_eq(num(kernel, "dur"), 6.789);
    cr_assert_str_eq(str(args(kernel), "mangled"), "_Z24grid_d4_transform_kernelmmiPKhPh");
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(args(kernel), "grid");
    cr_assert(cJSON_IsArray(grid) && cJSON_GetArraySize(grid) == 3);
    cr_assert_eq(cJSON_GetArrayItem(grid, 0)->valuedouble, 528);
    cr_assert_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(args(kernel), "block"), 0)->valuedouble, 256);

    const cJSON *d2h = span(root, 3);
    cr_assert_str_eq(str(d2h, "name"), "memcpy DtoH");
    cr_assert_eq(num(args(d2h), "bytes"), 96);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(args(d2h), "iteration"), "iteration -1 is left out");
    cr_assert_eq(num(d2h, "pid"), 3, "device 1 is process 3");

    const cJSON *other = cJSON_GetObjectItemCaseSensitive(root, "otherData");
    cr_assert_str_eq(str(other, "tool"), "gpuwitness 0.1.0");
    cr_assert_str_eq(str(other, "traced"), "grid_d4: 2000 grids");
    cr_assert_str_eq(str(other, "schedule"), "wait=0 warmup=1 active=3");
    cr_assert_eq(num(other, "events"), 5);
    cJSON_Delete(root);
}

Test(trace_json, names_every_lane_once_with_metadata_events)
{
    gw_activity ev[5];
    one_call(ev);
    const gw_trace_info info = {NULL, NULL, NULL, 4242};
    cJSON *root = build_and_parse(ev, 5, &info, NULL);
    int processes = 0, threads = 0, host = 0, gpu0 = 0, gpu1 = 0, stream7 = 0, nvtx = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        if (strcmp(str(e, "ph"), "M") != 0) continue;
        const char *what = str(e, "name"), *name = str(args(e), "name");
        if (!strcmp(what, "process_name")) {
            processes++;
            host += !strcmp(name, "host (pid 4242)") && num(e, "pid") == 1;
            gpu0 += !strcmp(name, "GPU 0") && num(e, "pid") == 2;
            gpu1 += !strcmp(name, "GPU 1") && num(e, "pid") == 3;
        } else {
            cr_assert_str_eq(what, "thread_name");
            threads++;
            stream7 += !strcmp(name, "stream 7");
            nvtx += !strcmp(name, "NVTX ranges") && num(e, "pid") == 1 && num(e, "tid") == 1;
        }
    }
    cr_assert_eq(processes, 3);
    cr_assert_eq(threads, 3, "host/1, GPU 0 stream 7, GPU 1 stream 7");
    cr_assert(host == 1 && gpu0 == 1 && gpu1 == 1 && nvtx == 1 && stream7 == 2);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "otherData"), "tool"),
                   "NULL info fields are left out");
    cJSON_Delete(root);
}

Test(trace_json, escapes_names_so_they_parse_back_unchanged)
{
    const char *nasty = "a \"quoted\" \\path\\ with\ttab,\nnewline and \x01 control";
    gw_activity ev = event(GW_ACTIVITY_RANGE, nasty, 5, 10);
    cJSON *root = build_and_parse(&ev, 1, NULL, NULL);
    cr_assert_str_eq(str(span(root, 0), "name"), nasty);
    cJSON_Delete(root);
}

Test(trace_json, leaves_out_untimed_records_and_writes_an_empty_trace_validly)
{
    gw_activity ev[3];
    ev[0] = event(GW_ACTIVITY_KERNEL, "untimed", 0, 0); /* CUPTI could not time it */
    ev[1] = event(GW_ACTIVITY_KERNEL, "k", 3000, 4000);
    ev[2] = event(GW_ACTIVITY_KERNEL, "untimed", 0, 0);
    size_t written = 99;
    cJSON *root = build_and_parse(ev, 3, NULL, &written);
    cr_assert_eq(written, 1);
    cr_assert_str_eq(str(span(root, 0), "name"), "k");
    cr_assert_eq(num(span(root, 0), "ts"), 0.0);
    cJSON_Delete(root);

    root = build_and_parse(ev, 0, NULL, &written);
    cr_assert_eq(written, 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "traceEvents")), 0);
    cJSON_Delete(root);
}

Test(trace_json, a_span_ending_before_it_starts_gets_zero_duration)
{
    gw_activity ev = event(GW_ACTIVITY_RANGE, "cut", 2000, 1000);
    cJSON *root = build_and_parse(&ev, 1, NULL, NULL);
    cr_assert_eq(num(span(root, 0), "dur"), 0.0);
    cJSON_Delete(root);
}

Test(trace_json, a_long_trace_builds_and_parses)
{
    enum { N = 50000 };
    gw_activity *ev = malloc(N * sizeof *ev);
    cr_assert_not_null(ev);
    for (size_t i = 0; i < N; i++) {
        ev[i] = event(i % 2 ? GW_ACTIVITY_KERNEL : GW_ACTIVITY_COPY, "_Z1kv", 1000 * i + 1, 1000 * i + 500);
        ev[i].copy_kind = GW_COPY_HTOD, ev[i].bytes = i, ev[i].stream_id = (uint32_t)(i % 4);
    }
    size_t written = 0;
    cJSON *root = build_and_parse(ev, N, NULL, &written);
    cr_assert_eq(written, N);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "traceEvents")), N + 5,
                 "N spans, GPU 0 and its 4 streams");
    cJSON_Delete(root);
    free(ev);
}

/* ---------------------------------------------------------------- schedule */

Test(trace_schedule, phases_follow_wait_warmup_active_then_done)
{
    const gw_trace_schedule s = {.wait = 2, .warmup = 1, .active = 3};
    const gw_trace_phase want[] = {GW_TRACE_WAIT, GW_TRACE_WAIT, GW_TRACE_WARMUP, GW_TRACE_ACTIVE,
                                   GW_TRACE_ACTIVE, GW_TRACE_ACTIVE, GW_TRACE_DONE, GW_TRACE_DONE};
    cr_assert_eq(gw_trace_schedule_iterations(&s), 6);
    for (long i = 0; i < 8; i++) {
        cr_assert_eq(gw_trace_schedule_phase(&s, i), want[i], "iteration %ld", i);
        cr_assert_eq(gw_trace_schedule_records(&s, i), want[i] == GW_TRACE_WARMUP || want[i] == GW_TRACE_ACTIVE,
                     "iteration %ld", i);
    }
    cr_assert_eq(gw_trace_schedule_phase(&s, -1), GW_TRACE_DONE);
    char msg[256];
    cr_assert_eq(gw_trace_schedule_check(&s, msg, sizeof msg), 0);
}

Test(trace_schedule, without_wait_or_warmup_every_iteration_is_active)
{
    const gw_trace_schedule s = {.wait = 0, .warmup = 0, .active = 1};
    cr_assert_eq(gw_trace_schedule_phase(&s, 0), GW_TRACE_ACTIVE);
    cr_assert_eq(gw_trace_schedule_phase(&s, 1), GW_TRACE_DONE);
    cr_assert_eq(gw_trace_schedule_records(&s, 0), 1);
}

Test(trace_schedule, rejects_bad_schedules_naming_the_option_and_the_rule)
{
    char msg[256];
    const gw_trace_schedule no_active = {.wait = 0, .warmup = 1, .active = 0};
    cr_assert_eq(gw_trace_schedule_check(&no_active, msg, sizeof msg), -1);
    cr_assert_str_eq(msg, "--active 0: must be at least 1 (the iterations written to the trace)");
    const gw_trace_schedule negative_wait = {.wait = -1, .warmup = 0, .active = 1};
    cr_assert_eq(gw_trace_schedule_check(&negative_wait, msg, sizeof msg), -1);
    cr_assert_str_eq(msg, "--wait -1: must be 0 or more");
    const gw_trace_schedule negative_warmup = {.wait = 0, .warmup = -2, .active = 1};
    cr_assert_eq(gw_trace_schedule_check(&negative_warmup, msg, sizeof msg), -1);
    cr_assert_str_eq(msg, "--warmup -2: must be 0 or more");
    const gw_trace_schedule too_long = {.wait = 5000, .warmup = 5000, .active = 1};
    cr_assert_eq(gw_trace_schedule_check(&too_long, msg, sizeof msg), -1);
    cr_assert_str_eq(msg, "--wait 5000 --warmup 5000 --active 1: at most 10000 iterations in all");
    const gw_trace_schedule at_limit = {.wait = 4999, .warmup = 5000, .active = 1};
    cr_assert_eq(gw_trace_schedule_check(&at_limit, msg, sizeof msg), 0);
}

Test(trace_schedule, counts_parse_as_whole_decimal_numbers_only)
{
    char msg[256];
    long v = -1;
    cr_assert_eq(gw_trace_schedule_parse_count("--wait", "0", &v, msg, sizeof msg), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(gw_trace_schedule_parse_count("--active", "10000", &v, msg, sizeof msg), 0);
    cr_assert_eq(v, 10000);
    const char *bad[] = {"", "-1", "+3", "1x", " 1", "10001", "99999999999999999999999", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 7;
        cr_assert_eq(gw_trace_schedule_parse_count("--warmup", bad[i], &v, msg, sizeof msg), -1, "'%s'", bad[i]);
        cr_assert_eq(v, 7, "'%s' changed the value", bad[i]);
        char want[128];
        snprintf(want, sizeof want, "--warmup '%s': must be a whole number from 0 to 10000", bad[i]);
        cr_assert_str_eq(msg, want);
    }
}

Test(trace_json, draws_our_device_memory_as_a_counter_track_on_the_gpu_lane)
{
    gw_activity ev[5];
    one_call(ev);
    uint64_t origin = UINT64_MAX;
    for (int i = 0; i < 5; i++)
        if (ev[i].start_ns < origin) origin = ev[i].start_ns;
    const gw_trace_counter counters[3] = {
        {origin - 500, 1000, 0}, {origin + 2500, 5000, 0}, {origin + 9000, 1000, 0}};
    char *json = NULL;
    size_t len = 0, written = 0;
    cr_assert_eq(gw_trace_json_build_counters(ev, 5, counters, 3, NULL, &json, &len, &written), 0);
    cr_assert_eq(written, 5, "the count is of spans only");
    cJSON *root = cJSON_Parse(json);
    free(json);
    cr_assert(root, "the trace with counters does not parse");
    int n = 0;
    double ts[3] = {0}, bytes[3] = {0};
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents"))
    {
        if (strcmp(str(e, "ph"), "C") != 0) continue;
        cr_assert_str_eq(str(e, "name"), "device memory (ours)");
        cr_assert_eq(num(e, "pid"), 2, "GPU 0's lane");
        if (n < 3) {
            ts[n] = num(e, "ts");
            bytes[n] = num(args(e), "bytes");
        }
        n++;
    }
    cr_assert_eq(n, 3);
    cr_expect_eq(ts[0], 0.0, "a point before the first span is drawn at 0");
    cr_expect_eq(ts[1], 2.5);
    cr_expect_eq(bytes[1], 5000.0);
    cr_expect_eq(bytes[2], 1000.0);
    cJSON_Delete(root);
    /* Counters alone still make a valid file. */
    cr_assert_eq(gw_trace_json_build_counters(NULL, 0, counters, 3, NULL, &json, &len, &written), 0);
    root = cJSON_Parse(json);
    free(json);
    cr_assert(root);
    cJSON_Delete(root);
}
