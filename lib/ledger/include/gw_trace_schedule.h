/* SPDX-License-Identifier: MIT
 * Which iterations of a loop a trace records (pure C): the first `wait` iterations run untraced, the next
 * `warmup` run with CUPTI on but their records are discarded (CUPTI's own start-up cost lands there), and
 * the `active` iterations after that are written to the trace. PyTorch's profiler schedule, without repeat.
 *
 *   iteration:  0 .. wait-1 | wait .. wait+warmup-1 | wait+warmup .. wait+warmup+active-1
 *   phase:      WAIT        | WARMUP                | ACTIVE                               then DONE
 */
#ifndef GW_TRACE_SCHEDULE_H
#define GW_TRACE_SCHEDULE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_trace_schedule {
    long wait, warmup, active;
} gw_trace_schedule;

/* The default of `trace` and `bench --trace`: CUPTI's start-up cost lands in the one warmup iteration. */
#define GW_TRACE_SCHEDULE_DEFAULT ((gw_trace_schedule){.wait = 0, .warmup = 1, .active = 3})

/* A bound that keeps a trace file and its recording buffers reasonable. */
#define GW_TRACE_MAX_ITERATIONS 10000L

typedef enum gw_trace_phase { GW_TRACE_WAIT, GW_TRACE_WARMUP, GW_TRACE_ACTIVE, GW_TRACE_DONE } gw_trace_phase;

/* 0 when wait >= 0, warmup >= 0, active >= 1 and the total is at most GW_TRACE_MAX_ITERATIONS; otherwise
 * -1 with msg naming the option (--wait, --warmup, --active) and the rule. */
int gw_trace_schedule_check(const gw_trace_schedule *s, char *msg, size_t msg_size);

/* wait + warmup + active. */
long gw_trace_schedule_iterations(const gw_trace_schedule *s);

/* The phase of iteration i (0-based); DONE from wait + warmup + active on, and for i < 0. */
gw_trace_phase gw_trace_schedule_phase(const gw_trace_schedule *s, long i);

/* 1 when CUPTI must be on during iteration i (WARMUP or ACTIVE). */
int gw_trace_schedule_records(const gw_trace_schedule *s, long i);

/* Parses a whole decimal count for option into *value: digits only, at most GW_TRACE_MAX_ITERATIONS.
 * 0, or -1 with msg "--active 'x': must be a whole number from 0 to 10000". */
int gw_trace_schedule_parse_count(const char *option, const char *text, long *value, char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_TRACE_SCHEDULE_H */
