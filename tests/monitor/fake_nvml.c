/* SPDX-License-Identifier: MIT
 * A fake NVML for the monitor's tests (tests/monitor), loaded by path through GW_NVML_LIBRARY or
 * gw_monitor_config.library, so that the sampler runs on machines without a GPU or driver. It answers the
 * calls gw_monitor makes with NVIDIA's own types (nvml.h). Behaviour, from the environment at nvmlInit_v2:
 *   GW_FAKE_NVML_MODE   ok (default) | init_fail (NVML_ERROR_DRIVER_NOT_LOADED) | no_device (by-index fails)
 *                       | lost_after=N (NVML_ERROR_GPU_IS_LOST from the N-th utilisation read on)
 *                       | no_driver_samples (nvmlDeviceGetSamples NOT_SUPPORTED)
 *   GW_FAKE_NVML_THROTTLE  clock-event reasons to report (decimal), default 0
 * and, at run time, gw_fake_nvml_busy(from, to): the GPU is "busy" (100 % SM) in [from, to] on
 * CLOCK_MONOTONIC (microseconds). Utilisation readings cover the last 20 ms, like the driver's.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvml.h>

#define PERIOD_US 20000u

static uint64_t busy_from[64], busy_to[64];
static int n_busy, mode_lost_after = -1, mode_no_samples, mode_no_device;
static long util_calls;
static unsigned long long throttle;

static uint64_t clock_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Exported for the tests (found with dlsym). */
void gw_fake_nvml_busy(uint64_t from_us, uint64_t to_us);
long gw_fake_nvml_util_calls(void);

void gw_fake_nvml_busy(uint64_t from_us, uint64_t to_us)
{
    if (n_busy < 64) {
        busy_from[n_busy] = from_us;
        busy_to[n_busy] = to_us;
        n_busy++;
    }
}

long gw_fake_nvml_util_calls(void) { return __atomic_load_n(&util_calls, __ATOMIC_RELAXED); }

/* 100 when [t - PERIOD, t] (monotonic) meets a busy interval, else 0. */
static unsigned busy_pct(uint64_t t)
{
    for (int i = 0; i < n_busy; i++)
        if (busy_from[i] <= t && busy_to[i] + PERIOD_US >= t) return 100;
    return 0;
}

nvmlReturn_t nvmlInit_v2(void)
{
    const char *m = getenv("GW_FAKE_NVML_MODE");
    const char *t = getenv("GW_FAKE_NVML_THROTTLE");
    throttle = t ? strtoull(t, NULL, 10) : 0;
    if (m && !strcmp(m, "init_fail")) return NVML_ERROR_DRIVER_NOT_LOADED;
    if (m && !strncmp(m, "lost_after=", 11)) mode_lost_after = atoi(m + 11);
    mode_no_samples = m && !strcmp(m, "no_driver_samples");
    mode_no_device = m && !strcmp(m, "no_device");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    default: return "Unknown Error";
    }
}

static int the_device;

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (mode_no_device || index != 0) return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)(void *)&the_device;
    return NVML_SUCCESS;
}

static int lost(void)
{
    return mode_lost_after >= 0 && __atomic_load_n(&util_calls, __ATOMIC_RELAXED) >= mode_lost_after;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    (void)device;
    __atomic_add_fetch(&util_calls, 1, __ATOMIC_RELAXED);
    if (lost()) return NVML_ERROR_GPU_IS_LOST;
    u->gpu = busy_pct(clock_us(CLOCK_MONOTONIC));
    u->memory = u->gpu / 2;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *m)
{
    (void)device;
    if (lost()) return NVML_ERROR_GPU_IS_LOST;
    m->total = 80ull << 30;
    m->used = (1ull << 30) + (busy_pct(clock_us(CLOCK_MONOTONIC)) ? 256ull << 20 : 0);
    m->free = m->total - m->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    (void)device, (void)type;
    *clock = busy_pct(clock_us(CLOCK_MONOTONIC)) ? 1980 : 345;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *mw)
{
    (void)device;
    *mw = busy_pct(clock_us(CLOCK_MONOTONIC)) ? 350000 : 70000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t s, unsigned int *c)
{
    (void)device, (void)s;
    *c = 41;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *r)
{
    (void)device;
    *r = throttle | (busy_pct(clock_us(CLOCK_MONOTONIC)) ? 0 : 1ull);
    return NVML_SUCCESS;
}

/* The driver's utilisation samples: one every PERIOD_US of the wall clock, each over the period before it. */
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long last_seen,
                                  nvmlValueType_t *value_type, unsigned int *count, nvmlSample_t *samples)
{
    (void)device;
    if (mode_no_samples || type != NVML_GPU_UTILIZATION_SAMPLES) return NVML_ERROR_NOT_SUPPORTED;
    if (lost()) return NVML_ERROR_GPU_IS_LOST;
    const uint64_t real = clock_us(CLOCK_REALTIME), mono = clock_us(CLOCK_MONOTONIC);
    uint64_t first = (last_seen / PERIOD_US + 1) * PERIOD_US;
    if (first + 100ull * PERIOD_US < real) first = (real / PERIOD_US - 99) * PERIOD_US; /* the driver keeps ~100 */
    unsigned n = first <= real ? (unsigned)((real - first) / PERIOD_US + 1) : 0;
    if (!n) return NVML_ERROR_NOT_FOUND;
    *value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (!samples) {
        *count = n;
        return NVML_SUCCESS;
    }
    if (n > *count) n = *count;
    for (unsigned i = 0; i < n; i++) {
        const uint64_t t = first + (uint64_t)i * PERIOD_US;
        samples[i].timeStamp = t;
        samples[i].sampleValue.uiVal = busy_pct(t - (real - mono));
    }
    *count = n;
    return NVML_SUCCESS;
}
