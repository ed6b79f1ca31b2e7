/* SPDX-License-Identifier: MIT */
#include "gw_cli_monitor.h"

#include <stdarg.h>
#include <string.h>

#include <cuda_runtime_api.h>

int gw_cli_monitor_option(const char *arg, int *on)
{
    if (!strcmp(arg, "--monitor")) {
        *on = 1;
        return 1;
    }
    if (!strcmp(arg, "--no-monitor")) {
        *on = 0;
        return 1;
    }
    return 0;
}

void gw_cli_monitor_begin(gw_cli_monitor *cm, const char *cmd, int on, int cuda_ordinal)
{
    memset(cm, 0, sizeof *cm);
    if (!on) return;
    gw_monitor_config c = GW_MONITOR_CONFIG_INIT;
    if (cuda_ordinal >= 0 &&
        cudaDeviceGetPCIBusId(c.pci_bus_id, (int)sizeof c.pci_bus_id, cuda_ordinal) != cudaSuccess) {
        c.pci_bus_id[0] = '\0';
        c.device_index = (unsigned)cuda_ordinal;
        (void)cudaGetLastError();
    }
    if (gw_monitor_start(&cm->m, &c, cm->reason, sizeof cm->reason)) {
        cm->state = GW_CLI_MONITOR_UNAVAILABLE;
        fprintf(stderr, "gpuwitness %s: --monitor: NVML unavailable: %s\n", cmd, cm->reason);
        return;
    }
    cm->state = GW_CLI_MONITOR_ON;
}

void gw_cli_monitor_end(gw_cli_monitor *cm)
{
    gw_monitor_stop(cm->m);
    cm->m = NULL;
}

void gw_cli_monitor_summary(const gw_cli_monitor *cm, uint64_t t0_us, uint64_t t1_us, gw_monitor_summary *s)
{
    gw_monitor_summarize(cm->state == GW_CLI_MONITOR_ON ? cm->m : NULL, t0_us, t1_us, s);
}

typedef struct out {
    char *buf;
    size_t size, len;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...)
{
    if (o->len >= o->size) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n;
}

void gw_cli_monitor_text(const gw_cli_monitor *cm, const gw_monitor_summary *s, uint64_t devmem_peak,
                         uint64_t devmem_allocs, char *buf, size_t size)
{
    out o = {buf, size, 0};
    if (size) buf[0] = '\0';
    if (cm->state == GW_CLI_MONITOR_OFF) {
        put(&o, "NVML off");
    } else if (cm->state == GW_CLI_MONITOR_UNAVAILABLE) {
        put(&o, "NVML unavailable"); /* the reason was said once, when the command started */
    } else {
        put(&o, "%d samples / %.1f ms", s->samples, s->window_ms);
        if (s->samples) {
            if (s->sm_util_peak_pct >= 0)
                put(&o, ": sm %.0f%% mean %d%% peak", s->sm_util_mean_pct, s->sm_util_peak_pct);
            if (s->mem_util_peak_pct >= 0) put(&o, ", mem %d%% peak", s->mem_util_peak_pct);
            if (s->mem_used_peak_bytes >= 0) put(&o, ", used %.2f GB peak", s->mem_used_peak_bytes / 1e9);
            if (s->sm_clock_min_mhz >= 0) put(&o, ", sm clock %d-%d MHz", s->sm_clock_min_mhz, s->sm_clock_max_mhz);
            if (s->power_peak_w >= 0) put(&o, ", power %.0f W peak", s->power_peak_w);
            if (s->temperature_peak_c >= 0) put(&o, ", %d C", s->temperature_peak_c);
            char names[160];
            put(&o, ", throttle %s",
                gw_monitor_throttle_names(s->throttle_reasons & GW_MONITOR_THROTTLE_MASK, names, sizeof names));
        }
        put(&o, ", driver samples %d (%d busy), activity %s", s->driver_samples, s->driver_busy_samples,
            gw_monitor_activity_name(s->activity));
        if (s->lost) put(&o, ", device lost");
    }
    put(&o, "; device memory (ours) %.3f GB high-water in %llu allocation%s", devmem_peak / 1e9,
        (unsigned long long)devmem_allocs, devmem_allocs == 1 ? "" : "s");
}
