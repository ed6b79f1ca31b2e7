/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include "gw_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gw_devmem.h"
#include "gw_outfile.h"

static gw_ledger_status failed(char *why, size_t why_size, const char *text)
{
    if (why && why_size) snprintf(why, why_size, "%s", text);
    return GW_LEDGER_FAILED;
}

/* Starts the window of the current iteration, turning CUPTI on first if it is off. */
static gw_ledger_status open_window(gw_trace *t, char *why, size_t why_size)
{
    if (!gw_trace_schedule_records(&t->schedule, t->iteration)) return GW_LEDGER_OK;
    if (!t->recording) {
        const gw_ledger_status st = gw_ledger_begin(why, why_size);
        if (st != GW_LEDGER_OK) return st;
        t->recording = 1;
    }
    t->window[2 * (t->iteration - t->schedule.wait)] = gw_ledger_now();
    return GW_LEDGER_OK;
}

gw_ledger_status gw_trace_start(gw_trace *t, const gw_trace_schedule *s, char *why, size_t why_size)
{
    memset(t, 0, sizeof *t);
    if (gw_trace_schedule_check(s, why, why_size)) return GW_LEDGER_FAILED;
    /* Learn now, not after the untraced iterations, whether CUPTI can record at all. */
    const gw_ledger_status probe = gw_ledger_probe(why, why_size);
    if (probe != GW_LEDGER_OK) return probe;
    t->schedule = *s;
    t->window = calloc(2 * (size_t)(s->warmup + s->active), sizeof *t->window);
    if (!t->window) return failed(why, why_size, "gw_trace_start: out of memory");
    const gw_ledger_status st = open_window(t, why, why_size);
    if (st != GW_LEDGER_OK) gw_trace_free(t);
    return st;
}

gw_ledger_status gw_trace_step(gw_trace *t, char *why, size_t why_size)
{
    if (gw_trace_schedule_phase(&t->schedule, t->iteration) == GW_TRACE_DONE)
        return failed(why, why_size, "gw_trace_step: every iteration of the schedule has already run");
    if (gw_trace_schedule_records(&t->schedule, t->iteration)) {
        /* The iteration's device work must be done before its window closes. */
        const cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            char text[256];
            snprintf(text, sizeof text, "gw_trace_step: cudaDeviceSynchronize failed: %s (%s)",
                     cudaGetErrorString(e), cudaGetErrorName(e));
            return failed(why, why_size, text);
        }
        t->window[2 * (t->iteration - t->schedule.wait) + 1] = gw_ledger_now();
    }
    t->iteration++;
    if (t->recording && !gw_trace_schedule_records(&t->schedule, t->iteration)) {
        t->recording = 0;
        return gw_ledger_end(&t->log, why, why_size);
    }
    return open_window(t, why, why_size);
}

/* The recorded iteration whose window holds ns, or -1. Windows follow one another in time, so a binary
 * search finds the last one starting at or before ns. */
static long iteration_at(const gw_trace *t, uint64_t ns)
{
    long lo = 0, hi = t->schedule.warmup + t->schedule.active - 1, found = -1;
    while (lo <= hi) {
        const long mid = lo + (hi - lo) / 2;
        if (t->window[2 * mid] <= ns)
            found = mid, lo = mid + 1;
        else
            hi = mid - 1;
    }
    if (found < 0 || ns > t->window[2 * found + 1]) return -1;
    return t->schedule.wait + found;
}

int gw_trace_select(const gw_trace *t, long first, long last, gw_activity_log *out)
{
    if (!t->window) return 0;
    for (size_t i = 0; i < t->log.count; i++) {
        gw_activity a = t->log.items[i];
        a.iteration = iteration_at(t, a.start_ns);
        if (a.iteration < 0 || a.iteration < first || a.iteration > last) continue;
        if (gw_activity_log_push(out, &a)) return -1;
    }
    return 0;
}

gw_ledger_status gw_trace_write(const gw_trace *t, const char *path, const gw_trace_info *info, size_t *written,
                                char *why, size_t why_size)
{
    if (written) *written = 0;
    if (gw_trace_schedule_phase(&t->schedule, t->iteration) != GW_TRACE_DONE)
        return failed(why, why_size, "gw_trace_write: the schedule still has iterations to run (gw_trace_step)");
    gw_activity_log active = {0};
    const long first = t->schedule.wait + t->schedule.warmup;
    if (gw_trace_select(t, first, first + t->schedule.active - 1, &active)) {
        gw_activity_log_free(&active);
        return failed(why, why_size, "gw_trace_write: out of memory");
    }
    /* The counter track of our device memory over the active iterations (gw_devmem.h keeps its log on
     * CLOCK_MONOTONIC; CUPTI's clock is mapped onto it by reading both now). */
    gw_trace_counter *counters = NULL;
    size_t n_counters = 0;
    if (t->schedule.active > 0) {
        struct timespec ts;
        const uint64_t cupti_now = gw_ledger_now();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        const int64_t offset = (int64_t)cupti_now - ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
        const uint64_t *w = &t->window[2 * (size_t)t->schedule.warmup];
        const int64_t from = (int64_t)w[0] - offset, to = (int64_t)w[2 * (size_t)t->schedule.active - 1] - offset;
        uint32_t device = 0;
        for (size_t i = 0; i < active.count; i++)
            if (active.items[i].kind != GW_ACTIVITY_RANGE) {
                device = active.items[i].device_id;
                break;
            }
        gw_devmem_point *points = NULL;
        size_t n_points = 0;
        if (from > 0 && to >= from &&
            gw_devmem_points((uint64_t)from / 1000u, (uint64_t)to / 1000u, &points, &n_points) == 0 && n_points &&
            (counters = calloc(n_points, sizeof *counters)) != NULL) {
            for (size_t i = 0; i < n_points; i++) {
                const int64_t ns = (int64_t)(points[i].t_us * 1000u) + offset;
                counters[i].ts_ns = ns > 0 ? (uint64_t)ns : 0;
                counters[i].bytes = points[i].bytes;
                counters[i].device_id = device;
            }
            counters[0].ts_ns = w[0]; /* the value held when the first active iteration began */
            n_counters = n_points;
        }
        free(points);
    }
    char *json = NULL;
    size_t len = 0;
    const int built =
        gw_trace_json_build_counters(active.items, active.count, counters, n_counters, info, &json, &len, written);
    free(counters);
    gw_activity_log_free(&active);
    if (built) return failed(why, why_size, "gw_trace_write: out of memory");
    gw_outfile f = GW_OUTFILE_INIT;
    const int bad = gw_outfile_open(&f, path, why, why_size) || gw_outfile_write(&f, json, len, why, why_size) ||
                    gw_outfile_finish(&f, why, why_size) || gw_outfile_commit(&f, why, why_size);
    gw_outfile_discard(&f);
    free(json);
    return bad ? GW_LEDGER_FAILED : GW_LEDGER_OK;
}

void gw_trace_free(gw_trace *t)
{
    if (t->recording) {
        gw_activity_log discarded = {0};
        gw_ledger_end(&discarded, NULL, 0);
        gw_activity_log_free(&discarded);
    }
    free(t->window);
    gw_activity_log_free(&t->log);
    memset(t, 0, sizeof *t);
}
