/* SPDX-License-Identifier: MIT
 * The utilisation monitor (docs/monitor.md): a sampler thread that reads NVML every period_ms while a
 * command runs (SM and memory utilisation, memory used, SM clock, power, temperature, clock-event
 * ("throttle") reasons, and the driver's own timestamped utilisation samples), and the summary of the
 * samples inside a time window, e.g. one kernel call or one bench case:
 *
 *   gw_monitor *m = NULL;
 *   gw_monitor_config c = GW_MONITOR_CONFIG_INIT;
 *   if (gw_monitor_start(&m, &c, why, sizeof why)) ... "NVML unavailable: <why>"; m stays NULL
 *   const uint64_t t0 = gw_monitor_now_us();
 *   ... the kernel call ...
 *   gw_monitor_summary s;
 *   gw_monitor_summarize(m, t0, gw_monitor_now_us(), &s);
 *   gw_monitor_stop(m);
 *
 * NVML is loaded at run time (dlopen of libnvidia-ml.so.1, which comes with the driver; GW_NVML_LIBRARY
 * names another file, e.g. the tests' fake NVML, opened through gw_infile's regular-file rule), so nothing
 * here needs the driver to link or start.
 * Built without NVIDIA's nvml.h (GW_HAVE_NVML 0) every start fails with a reason that says so.
 * Prints nothing; the thread blocks every signal and never keeps the process alive (exit() ends it).
 */
#ifndef GW_MONITOR_H
#define GW_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_monitor gw_monitor;

typedef struct gw_monitor_config {
    unsigned period_ms;     /* 10..50 (clamped); 20 by default */
    unsigned device_index;  /* NVML's index, used when pci_bus_id is empty */
    char pci_bus_id[32];    /* cudaDeviceGetPCIBusId's text: picks the same device CUDA uses */
    const char *library;    /* NULL: $GW_NVML_LIBRARY, else libnvidia-ml.so.1 */
    size_t capacity;        /* samples kept (a ring: the oldest go first); 0: 65536 (21 min at 20 ms) */
} gw_monitor_config;
#define GW_MONITOR_CONFIG_INIT {20u, 0u, {0}, NULL, 0}

/* 1 when this build has the monitor (NVIDIA's nvml.h was found at build time). */
int gw_monitor_compiled(void);

/* Loads NVML, opens the device, takes one sample (so a device that cannot be read fails here, not
 * later) and starts the thread. 0 with *m set, or -1 with why ("cannot load libnvidia-ml.so.1: ...",
 * "nvmlInit_v2: Driver Not Loaded", ...) and *m NULL. */
int gw_monitor_start(gw_monitor **m, const gw_monitor_config *c, char *why, size_t why_size);

/* Stops and joins the thread, shuts NVML down and unloads it. m may be NULL. */
void gw_monitor_stop(gw_monitor *m);

/* CLOCK_MONOTONIC in microseconds: the clock of every sample and window. */
uint64_t gw_monitor_now_us(void);

/* The period the thread runs at (after clamping). */
unsigned gw_monitor_period_ms(const gw_monitor *m);

/* Waits (at most timeout_ms) until the thread holds a driver utilisation sample stamped after t_us (or,
 * where the device has none, one of our own samples), so that a window that just ended can be judged.
 * Returns 0 when it does, -1 on timeout or when m is NULL or lost. */
int gw_monitor_wait_past(gw_monitor *m, uint64_t t_us, unsigned timeout_ms);

/* 1 once NVML said the device is gone (NVML_ERROR_GPU_IS_LOST and the like): the thread has stopped
 * sampling, and why holds NVML's message. 0 otherwise. */
int gw_monitor_lost(const gw_monitor *m, char *why, size_t why_size);

/* NVML's clock-event bits that mean the clocks were held down: software power cap, hardware slowdown,
 * sync boost, software and hardware thermal slowdown, power brake. The GPU-idle, application-clock and
 * display-clock bits are not throttling. */
#define GW_MONITOR_THROTTLE_MASK 0xFCull

typedef enum gw_monitor_activity {
    GW_MONITOR_ACTIVITY_SEEN = 0,      /* some sample covering the window shows SM activity */
    GW_MONITOR_ACTIVITY_NONE = 1,      /* samples cover the window and every one says 0 %: report it */
    GW_MONITOR_ACTIVITY_NOT_JUDGED = 2 /* too few samples cover the window (short call, or NVML lost) */
} gw_monitor_activity;

/* The samples inside [t0_us, t1_us]. Fields whose NVML call is unsupported on the device stay -1. */
typedef struct gw_monitor_summary {
    int samples;                  /* our samples inside the window */
    double window_ms;
    double sm_util_mean_pct;      /* -1: no sample */
    int sm_util_peak_pct, mem_util_peak_pct;
    int64_t mem_used_start_bytes; /* the last sample at or before t0 (else the first inside) */
    int64_t mem_used_peak_bytes;
    int sm_clock_min_mhz, sm_clock_max_mhz;
    double power_peak_w;
    int temperature_peak_c;
    uint64_t throttle_reasons;    /* the OR of every sample's reasons (NVML's bits), idle bit left out */
    int driver_samples;           /* the driver's utilisation samples whose period overlaps the window */
    int driver_busy_samples;      /* ... of which > 0 % */
    gw_monitor_activity activity;
    int lost;                     /* the device was lost before t1 */
} gw_monitor_summary;

/* Fills s for [t0_us, t1_us]; m NULL gives an empty summary (samples 0, NOT_JUDGED). */
void gw_monitor_summarize(gw_monitor *m, uint64_t t0_us, uint64_t t1_us, gw_monitor_summary *s);

/* The names of the bits set in reasons, comma-separated ("sw_power_cap,hw_thermal"), or "none". */
const char *gw_monitor_throttle_names(uint64_t reasons, char *buf, size_t size);

/* How a window's activity was judged, in a few words for the text output. */
const char *gw_monitor_activity_name(gw_monitor_activity a);

#ifdef __cplusplus
}
#endif

#endif /* GW_MONITOR_H */
