/* SPDX-License-Identifier: MIT
 * A Chrome trace of a loop, iterations chosen by a schedule (gw_trace_schedule.h): CUPTI records
 * kernels and copies, our NVTX ranges come along (gw_trace_range.h), and the active iterations are
 * written as a trace event file for Perfetto or chrome://tracing (gw_trace_json.h). Used by
 * `gpuwitness trace` and meant for `bench --trace`:
 *
 *   gw_trace t;
 *   gw_trace_schedule s = {.wait = 0, .warmup = 1, .active = 3};
 *   if (gw_trace_start(&t, &s, why, sizeof why) != GW_LEDGER_OK) ... unavailable or bad schedule: why
 *   for (long i = 0; i < gw_trace_schedule_iterations(&s); i++) {
 *       ... one iteration: launches, copies ...
 *       if (gw_trace_step(&t, why, sizeof why) != GW_LEDGER_OK) ... fail
 *   }
 *   gw_trace_write(&t, "trace.json", &info, &written, why, sizeof why);
 *   gw_trace_free(&t);
 *
 * While CUPTI records (warmup and active iterations) every step synchronises the current device, so
 * each iteration's device work falls inside its own time window: timings taken in a traced loop are
 * not the benchmark's numbers. Records are assigned to iterations by their start time.
 */
#ifndef GW_TRACE_H
#define GW_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "gw_ledger.h"
#include "gw_ledger_check.h"
#include "gw_trace_json.h"
#include "gw_trace_schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_trace {
    gw_trace_schedule schedule;
    long iteration;      /* the iteration running now */
    int recording;       /* CUPTI is on */
    uint64_t *window;    /* for recorded iteration i: start at [2*(i-wait)], end at [2*(i-wait)+1] (ns) */
    gw_activity_log log; /* every record of the recorded iterations */
} gw_trace;

/* Checks the schedule (FAILED, why names the option and the rule), checks that CUPTI can record
 * (UNAVAILABLE with CUPTI's reason), and starts iteration 0, recording if the schedule says so. */
gw_ledger_status gw_trace_start(gw_trace *t, const gw_trace_schedule *s, char *why, size_t why_size);

/* Ends the current iteration and starts the next, turning CUPTI on and off per the schedule. Calling it
 * after the last iteration is FAILED. OK, or FAILED with why. */
gw_ledger_status gw_trace_step(gw_trace *t, char *why, size_t why_size);

/* Appends to out the records of iterations first..last (each tagged with its iteration); 0, or -1 when
 * out of memory. Iterations that were not recorded contribute nothing. */
int gw_trace_select(const gw_trace *t, long first, long last, gw_activity_log *out);

/* After the last step: the active iterations as a Chrome trace file at path (written to a temporary file
 * and renamed, so path is either the complete trace or untouched); *written gets the number of events
 * (may be NULL). OK, or FAILED with why (write error, out of memory, or iterations still to run). */
gw_ledger_status gw_trace_write(const gw_trace *t, const char *path, const gw_trace_info *info, size_t *written,
                                char *why, size_t why_size);

/* Stops a recording still running and frees everything; t may then be started again. */
void gw_trace_free(gw_trace *t);

#ifdef __cplusplus
}
#endif

#endif /* GW_TRACE_H */
