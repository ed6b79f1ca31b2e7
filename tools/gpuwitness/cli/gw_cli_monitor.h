/* SPDX-License-Identifier: MIT
 * The commands' side of the utilisation monitor (docs/monitor.md): --monitor / --no-monitor, starting the
 * NVML sampler on the device the command uses (or saying "NVML unavailable: <reason>"), and the dmon-like
 * text of one window: a kernel call of check or run, a bench case.
 */
#ifndef GW_CLI_MONITOR_H
#define GW_CLI_MONITOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gw_devmem.h"
#include "gw_monitor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gw_cli_monitor_state {
    GW_CLI_MONITOR_OFF = 0,     /* not asked for (check, run) or --no-monitor (bench) */
    GW_CLI_MONITOR_ON = 1,      /* the sampler runs */
    GW_CLI_MONITOR_UNAVAILABLE = 2 /* asked for, but NVML could not be used: reason */
} gw_cli_monitor_state;

typedef struct gw_cli_monitor {
    gw_cli_monitor_state state;
    gw_monitor *m;
    char reason[512];
} gw_cli_monitor;

/* 1 when arg is --monitor (*on = 1) or --no-monitor (*on = 0), else 0. */
int gw_cli_monitor_option(const char *arg, int *on);

/* Starts the sampler when on: on CUDA device cuda_ordinal (matched to NVML by PCI bus id), or NVML's
 * device 0 when cuda_ordinal < 0 (a CPU run: the GPU should then stay idle). When NVML cannot be used,
 * prints "gpuwitness <cmd>: --monitor: NVML unavailable: <reason>" on stderr and goes on without it. */
void gw_cli_monitor_begin(gw_cli_monitor *cm, const char *cmd, int on, int cuda_ordinal);
void gw_cli_monitor_end(gw_cli_monitor *cm);

/* The summary of [t0_us, t1_us] (an empty one when the sampler is off). */
void gw_cli_monitor_summary(const gw_cli_monitor *cm, uint64_t t0_us, uint64_t t1_us, gw_monitor_summary *s);

/* One dmon-like line for a window, without a newline:
 *   "12 samples / 240.0 ms: sm 63% mean 98% peak, mem 41% peak, used 2.10 GB peak, sm clock 1755-1980 MHz,
 *    power 350 W peak, 62 C, throttle none, driver samples 2 (2 busy), device memory (ours) 0.30 GB
 *    high-water in 4 allocations"
 * or "off" / "NVML unavailable: <reason>" followed by the device memory part. */
void gw_cli_monitor_text(const gw_cli_monitor *cm, const gw_monitor_summary *s, uint64_t devmem_peak,
                         uint64_t devmem_allocs, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GW_CLI_MONITOR_H */
