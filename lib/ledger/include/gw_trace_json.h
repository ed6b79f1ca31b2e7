/* SPDX-License-Identifier: MIT
 * Chrome trace event files (pure C) from ledger records: kernels, copies and our NVTX ranges as complete
 * ("ph":"X") events with name, ts and dur in microseconds (ns precision, as decimals), and args (bytes and
 * direction for copies; grid, block, stream and the mangled name for kernels; the schedule's iteration).
 * The JSON object format, which Perfetto (ui.perfetto.dev) and chrome://tracing both open:
 *
 *   {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[
 *     {"name":"process_name","ph":"M","pid":2,"args":{"name":"GPU 0"}}, ...
 *     {"name":"grid_d4_transform_kernel","cat":"kernel","ph":"X","ts":12.345,"dur":6.789,"pid":2,"tid":13,
 *      "args":{"iteration":1,"device":0,"stream":13,"grid":[528,1,1],"block":[256,1,1],"mangled":"_Z24..."}}]}
 *
 * Lanes: the host's ranges are process 1 (named with the real process id), thread 1; device d is process
 * 2 + d, one thread per CUDA stream. ts counts from the earliest event written.
 */
#ifndef GW_TRACE_JSON_H
#define GW_TRACE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "gw_ledger_check.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_trace_info {
    const char *tool;     /* "gpuwitness 0.1.0"; NULL leaves it out */
    const char *traced;   /* what ran, e.g. "grid-d4: 2000 grids, per-grid ops"; NULL leaves it out */
    const char *schedule; /* e.g. "wait=0 warmup=1 active=3"; NULL leaves it out */
    long host_pid;        /* the traced process, for the host lane's name */
} gw_trace_info;

/* The whole file as a malloc'd NUL-terminated string (*json, length *json_len), holding every event in
 * events that has timestamps (records CUPTI could not time have start_ns == end_ns == 0 and are left out;
 * *written says how many were written, may be NULL). 0, or -1 when out of memory (*json NULL). */
int gw_trace_json_build(const gw_activity *events, size_t n_events, const gw_trace_info *info, char **json,
                        size_t *json_len, size_t *written);

/* A counter track ("ph":"C" events, drawn as a graph next to the kernels): the device memory our host path
 * held (gw_devmem.h), one point per change, on the lane of GPU device_id. ts_ns on the events' clock. */
typedef struct gw_trace_counter {
    uint64_t ts_ns;
    uint64_t bytes;
    uint32_t device_id;
} gw_trace_counter;

/* gw_trace_json_build plus the counter points, as
 *   {"name":"device memory (ours)","cat":"memory","ph":"C","ts":1.000,"pid":2,"args":{"bytes":1048576}}
 * (points before the first event are drawn at ts 0). *written counts the "X" events only. */
int gw_trace_json_build_counters(const gw_activity *events, size_t n_events, const gw_trace_counter *counters,
                                 size_t n_counters, const gw_trace_info *info, char **json, size_t *json_len,
                                 size_t *written);

#ifdef __cplusplus
}
#endif

#endif /* GW_TRACE_JSON_H */
