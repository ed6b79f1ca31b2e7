/* SPDX-License-Identifier: MIT */
#include "gw_trace_schedule.h"

#include <stdio.h>

int gw_trace_schedule_check(const gw_trace_schedule *s, char *msg, size_t msg_size)
{
    if (s->wait < 0) {
        snprintf(msg, msg_size, "--wait %ld: must be 0 or more", s->wait);
        return -1;
    }
    if (s->warmup < 0) {
        snprintf(msg, msg_size, "--warmup %ld: must be 0 or more", s->warmup);
        return -1;
    }
    if (s->active < 1) {
        snprintf(msg, msg_size, "--active %ld: must be at least 1 (the iterations written to the trace)", s->active);
        return -1;
    }
    if (s->wait > GW_TRACE_MAX_ITERATIONS || s->warmup > GW_TRACE_MAX_ITERATIONS ||
        s->active > GW_TRACE_MAX_ITERATIONS || gw_trace_schedule_iterations(s) > GW_TRACE_MAX_ITERATIONS) {
        snprintf(msg, msg_size, "--wait %ld --warmup %ld --active %ld: at most %ld iterations in all", s->wait,
                 s->warmup, s->active, GW_TRACE_MAX_ITERATIONS);
        return -1;
    }
    return 0;
}

long gw_trace_schedule_iterations(const gw_trace_schedule *s)
{
    return s->wait + s->warmup + s->active;
}

gw_trace_phase gw_trace_schedule_phase(const gw_trace_schedule *s, long i)
{
    if (i < 0) return GW_TRACE_DONE;
    if (i < s->wait) return GW_TRACE_WAIT;
    if (i < s->wait + s->warmup) return GW_TRACE_WARMUP;
    if (i < gw_trace_schedule_iterations(s)) return GW_TRACE_ACTIVE;
    return GW_TRACE_DONE;
}

int gw_trace_schedule_records(const gw_trace_schedule *s, long i)
{
    const gw_trace_phase phase = gw_trace_schedule_phase(s, i);
    return phase == GW_TRACE_WARMUP || phase == GW_TRACE_ACTIVE;
}

int gw_trace_schedule_parse_count(const char *option, const char *text, long *value, char *msg, size_t msg_size)
{
    long v = 0;
    const char *c = text;
    for (; *c >= '0' && *c <= '9' && v <= GW_TRACE_MAX_ITERATIONS; c++) v = v * 10 + (*c - '0');
    if (c == text || *c || v > GW_TRACE_MAX_ITERATIONS) {
        snprintf(msg, msg_size, "%s '%s': must be a whole number from 0 to %ld", option, text,
                 GW_TRACE_MAX_ITERATIONS);
        return -1;
    }
    *value = v;
    return 0;
}
