/* SPDX-License-Identifier: MIT
 * The NVML sampler (gw_monitor.h, docs/monitor.md). NVML is reached only through dlopen/dlsym, with the
 * types and names of NVIDIA's own nvml.h, so the binary starts where there is no driver.
 */
#define _GNU_SOURCE
#include "gw_monitor.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t clock_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t gw_monitor_now_us(void) { return clock_us(CLOCK_MONOTONIC); }

const char *gw_monitor_throttle_names(uint64_t reasons, char *buf, size_t size)
{
    static const struct { uint64_t bit; const char *name; } names[] = {
        {0x1, "gpu_idle"},      {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
        {0x8, "hw_slowdown"},   {0x10, "sync_boost"},         {0x20, "sw_thermal"},
        {0x40, "hw_thermal"},   {0x80, "hw_power_brake"},     {0x100, "display_clocks"}};
    if (!size) return buf;
    buf[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(reasons & names[i].bit)) continue;
        const int n = snprintf(buf + len, size - len, "%s%s", len ? "," : "", names[i].name);
        if (n < 0 || (size_t)n >= size - len) break;
        len += (size_t)n;
    }
    if (!len) snprintf(buf, size, "none");
    return buf;
}

const char *gw_monitor_activity_name(gw_monitor_activity a)
{
    switch (a) {
    case GW_MONITOR_ACTIVITY_SEEN: return "seen";
    case GW_MONITOR_ACTIVITY_NONE: return "none";
    default: return "not judged";
    }
}

#if !GW_HAVE_NVML

int gw_monitor_compiled(void) { return 0; }

int gw_monitor_start(gw_monitor **m, const gw_monitor_config *c, char *why, size_t why_size)
{
    (void)c;
    *m = NULL;
    snprintf(why, why_size, "this build has no monitor: NVIDIA's nvml.h was not found at build time (ci/setup "
             "fetches it; docs/monitor.md)");
    return -1;
}
void gw_monitor_stop(gw_monitor *m) { (void)m; }
unsigned gw_monitor_period_ms(const gw_monitor *m) { (void)m; return 0; }
int gw_monitor_lost(const gw_monitor *m, char *why, size_t why_size)
{
    (void)m;
    if (why_size) why[0] = '\0';
    return 0;
}
int gw_monitor_wait_past(gw_monitor *m, uint64_t t_us, unsigned timeout_ms)
{
    (void)m, (void)t_us, (void)timeout_ms;
    return -1;
}
void gw_monitor_summarize(gw_monitor *m, uint64_t t0_us, uint64_t t1_us, gw_monitor_summary *s)
{
    (void)m;
    memset(s, 0, sizeof *s);
    s->window_ms = t1_us > t0_us ? (double)(t1_us - t0_us) / 1e3 : 0.0;
    s->sm_util_mean_pct = -1;
    s->sm_util_peak_pct = s->mem_util_peak_pct = s->sm_clock_min_mhz = s->sm_clock_max_mhz = -1;
    s->temperature_peak_c = -1;
    s->mem_used_start_bytes = s->mem_used_peak_bytes = -1;
    s->power_peak_w = -1;
    s->activity = GW_MONITOR_ACTIVITY_NOT_JUDGED;
}

#else /* GW_HAVE_NVML */

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <nvml.h>

#include "gw_infile.h"

typedef struct sample {
    uint64_t t_us;
    int sm, mem;            /* utilisation %, -1 unsupported */
    int64_t used;           /* bytes, -1 unsupported */
    int clock_mhz, temp_c;  /* -1 unsupported */
    double power_w;         /* -1 unsupported */
    uint64_t reasons;
} sample;

typedef struct driver_sample {
    uint64_t t_us; /* on our monotonic clock */
    unsigned pct;
} driver_sample;

struct gw_monitor {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*samples)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long, nvmlValueType_t *, unsigned int *,
                            nvmlSample_t *);
    nvmlDevice_t dev;
    unsigned period_ms;
    int64_t realtime_minus_mono_us; /* the driver stamps its samples on the wall clock */

    pthread_t thread;
    int thread_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;  /* stop requested */
    pthread_cond_t fresh; /* a new sample arrived */
    int stop;
    int lost;
    char lost_why[160];

    sample *ring;
    size_t cap, count, head; /* head: where the next sample goes */
    driver_sample *dring;
    size_t dcap, dcount, dhead;
    unsigned long long driver_last_seen; /* the driver's own timestamp of the newest sample seen */
    int driver_unsupported;
    nvmlSample_t *dbuf;
    unsigned dbuf_size;
};

int gw_monitor_compiled(void) { return 1; }

unsigned gw_monitor_period_ms(const gw_monitor *m) { return m ? m->period_ms : 0; }

static const char *nvml_text(const gw_monitor *m, nvmlReturn_t r, char *buf, size_t size)
{
    const char *s = m->error_string ? m->error_string(r) : NULL;
    snprintf(buf, size, "%s (%d)", s ? s : "unknown error", (int)r);
    return buf;
}

/* Errors after which the device cannot be read again. */
static int fatal(nvmlReturn_t r)
{
    return r == NVML_ERROR_GPU_IS_LOST || r == NVML_ERROR_UNINITIALIZED || r == NVML_ERROR_DRIVER_NOT_LOADED ||
           r == NVML_ERROR_RESET_REQUIRED;
}

/* One reading of everything; returns NVML_SUCCESS, or the first fatal error. */
static nvmlReturn_t read_sample(gw_monitor *m, sample *s)
{
    memset(s, 0, sizeof *s);
    s->sm = s->mem = s->clock_mhz = s->temp_c = -1;
    s->used = -1;
    s->power_w = -1;
    nvmlUtilization_t u;
    nvmlReturn_t r = m->utilization(m->dev, &u);
    s->t_us = gw_monitor_now_us();
    if (r == NVML_SUCCESS) {
        s->sm = (int)u.gpu;
        s->mem = (int)u.memory;
    } else if (fatal(r)) {
        return r;
    }
    nvmlMemory_t mem;
    if ((r = m->memory(m->dev, &mem)) == NVML_SUCCESS) s->used = (int64_t)mem.used;
    else if (fatal(r)) return r;
    unsigned v;
    if ((r = m->clock(m->dev, NVML_CLOCK_SM, &v)) == NVML_SUCCESS) s->clock_mhz = (int)v;
    else if (fatal(r)) return r;
    if ((r = m->power(m->dev, &v)) == NVML_SUCCESS) s->power_w = v / 1000.0;
    else if (fatal(r)) return r;
    if ((r = m->temperature(m->dev, NVML_TEMPERATURE_GPU, &v)) == NVML_SUCCESS) s->temp_c = (int)v;
    else if (fatal(r)) return r;
    unsigned long long reasons = 0;
    if (m->reasons && (r = m->reasons(m->dev, &reasons)) == NVML_SUCCESS) s->reasons = reasons;
    else if (m->reasons && fatal(r)) return r;
    return NVML_SUCCESS;
}

/* The driver's utilisation samples newer than the last seen, into the driver ring (called with the lock
 * not held; takes it to append). */
static nvmlReturn_t read_driver_samples(gw_monitor *m)
{
    if (m->driver_unsupported || !m->samples) return NVML_SUCCESS;
    nvmlValueType_t type;
    unsigned count = 0;
    nvmlReturn_t r = m->samples(m->dev, NVML_GPU_UTILIZATION_SAMPLES, m->driver_last_seen, &type, &count, NULL);
    if (r == NVML_ERROR_NOT_FOUND) return NVML_SUCCESS; /* nothing new */
    if (r != NVML_SUCCESS) {
        if (fatal(r)) return r;
        m->driver_unsupported = 1;
        return NVML_SUCCESS;
    }
    if (!count) return NVML_SUCCESS;
    if (count > m->dbuf_size) {
        nvmlSample_t *b = realloc(m->dbuf, count * sizeof *b);
        if (!b) return NVML_SUCCESS;
        m->dbuf = b;
        m->dbuf_size = count;
    }
    r = m->samples(m->dev, NVML_GPU_UTILIZATION_SAMPLES, m->driver_last_seen, &type, &count, m->dbuf);
    if (r == NVML_ERROR_NOT_FOUND) return NVML_SUCCESS;
    if (r != NVML_SUCCESS) return fatal(r) ? r : NVML_SUCCESS;
    pthread_mutex_lock(&m->lock);
    for (unsigned i = 0; i < count && i < m->dbuf_size; i++) {
        const nvmlSample_t *d = &m->dbuf[i];
        if (d->timeStamp <= m->driver_last_seen) continue;
        m->driver_last_seen = d->timeStamp;
        const int64_t mono = (int64_t)d->timeStamp - m->realtime_minus_mono_us;
        driver_sample *o = &m->dring[m->dhead];
        o->t_us = mono > 0 ? (uint64_t)mono : 0;
        o->pct = type == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG ? (unsigned)d->sampleValue.ullVal
                                                              : d->sampleValue.uiVal;
        m->dhead = (m->dhead + 1) % m->dcap;
        if (m->dcount < m->dcap) m->dcount++;
    }
    pthread_mutex_unlock(&m->lock);
    return NVML_SUCCESS;
}

static void mark_lost(gw_monitor *m, nvmlReturn_t r)
{
    char buf[128];
    pthread_mutex_lock(&m->lock);
    m->lost = 1;
    snprintf(m->lost_why, sizeof m->lost_why, "%s", nvml_text(m, r, buf, sizeof buf));
    pthread_cond_broadcast(&m->fresh);
    pthread_mutex_unlock(&m->lock);
}

static void push(gw_monitor *m, const sample *s)
{
    pthread_mutex_lock(&m->lock);
    m->ring[m->head] = *s;
    m->head = (m->head + 1) % m->cap;
    if (m->count < m->cap) m->count++;
    pthread_cond_broadcast(&m->fresh);
    pthread_mutex_unlock(&m->lock);
}

static void *sampler(void *arg)
{
    gw_monitor *m = arg;
    for (;;) {
        sample s;
        nvmlReturn_t r = read_sample(m, &s);
        if (r == NVML_SUCCESS) r = read_driver_samples(m);
        if (r != NVML_SUCCESS) {
            mark_lost(m, r);
            return NULL; /* the device is gone: nothing more to read */
        }
        push(m, &s);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)m->period_ms * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec += until.tv_nsec / 1000000000L;
            until.tv_nsec %= 1000000000L;
        }
        pthread_mutex_lock(&m->lock);
        while (!m->stop && pthread_cond_timedwait(&m->wake, &m->lock, &until) != ETIMEDOUT) {
        }
        const int stop = m->stop;
        pthread_mutex_unlock(&m->lock);
        if (stop) return NULL;
    }
}

static int fail(char *why, size_t why_size, const char *fmt, const char *a, const char *b)
{
    snprintf(why, why_size, fmt, a, b);
    return -1;
}

/* dlsym into a function pointer without a cast between object and function pointers. */
#define SYM(field, name) sym(m->lib, name, &m->field, sizeof m->field)
static int sym(void *lib, const char *name, void *field, size_t size)
{
    void *p = dlsym(lib, name);
    if (size == sizeof p) memcpy(field, &p, sizeof p);
    return p != NULL;
}

static void release(gw_monitor *m, int initialised)
{
    if (initialised && m->shutdown) m->shutdown();
    if (m->lib) dlclose(m->lib);
    free(m->ring);
    free(m->dring);
    free(m->dbuf);
    free(m);
}

int gw_monitor_start(gw_monitor **out, const gw_monitor_config *c, char *why, size_t why_size)
{
    *out = NULL;
    const gw_monitor_config defaults = GW_MONITOR_CONFIG_INIT;
    if (!c) c = &defaults;
    const char *path = c->library;
    if (!path) path = getenv("GW_NVML_LIBRARY");
    if (!path || !path[0]) path = "libnvidia-ml.so.1";
    gw_monitor *m = calloc(1, sizeof *m);
    if (!m) return fail(why, why_size, "out of memory%s%s", "", "");
    m->period_ms = c->period_ms < 10 ? 10 : c->period_ms > 50 ? 50 : c->period_ms;
    m->cap = c->capacity ? c->capacity : 65536;
    m->dcap = 4096;
    m->ring = calloc(m->cap, sizeof *m->ring);
    m->dring = calloc(m->dcap, sizeof *m->dring);
    if (!m->ring || !m->dring) {
        release(m, 0);
        return fail(why, why_size, "out of memory%s%s", "", "");
    }
    if (strchr(path, '/')) {
        /* A file named by the user goes through the regular-file rule of every input (gw_infile.h): dlopen of a
         * FIFO would block forever. The library loaded is the file checked, through its open descriptor. */
        char err[512], fd_path[64];
        const int fd = gw_infile_open(path, NULL, err, sizeof err);
        if (fd < 0) {
            release(m, 0);
            return fail(why, why_size, "cannot load %s%s", err, "");
        }
        snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", fd);
        m->lib = dlopen(fd_path, RTLD_NOW | RTLD_LOCAL);
        close(fd);
    } else {
        m->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* the loader's search for the driver's library */
    }
    if (!m->lib) {
        const char *e = dlerror();
        release(m, 0);
        return fail(why, why_size, "cannot load %s: %s", path, e ? e : "dlopen failed");
    }
    SYM(init, "nvmlInit_v2");
    SYM(shutdown, "nvmlShutdown");
    SYM(error_string, "nvmlErrorString");
    SYM(by_index, "nvmlDeviceGetHandleByIndex_v2");
    SYM(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    SYM(utilization, "nvmlDeviceGetUtilizationRates");
    SYM(memory, "nvmlDeviceGetMemoryInfo");
    SYM(clock, "nvmlDeviceGetClockInfo");
    SYM(power, "nvmlDeviceGetPowerUsage");
    SYM(temperature, "nvmlDeviceGetTemperature");
    if (!SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons")) SYM(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    SYM(samples, "nvmlDeviceGetSamples");
    const char *missing = !m->init ? "nvmlInit_v2" : !m->shutdown ? "nvmlShutdown" : !m->by_index ?
        "nvmlDeviceGetHandleByIndex_v2" : !m->utilization ? "nvmlDeviceGetUtilizationRates" : !m->memory ?
        "nvmlDeviceGetMemoryInfo" : !m->clock ? "nvmlDeviceGetClockInfo" : !m->power ? "nvmlDeviceGetPowerUsage" :
        !m->temperature ? "nvmlDeviceGetTemperature" : NULL;
    if (missing) {
        release(m, 0);
        return fail(why, why_size, "%s has no %s", path, missing);
    }
    char buf[128];
    nvmlReturn_t r = m->init();
    if (r != NVML_SUCCESS) {
        fail(why, why_size, "nvmlInit_v2: %s%s", nvml_text(m, r, buf, sizeof buf), "");
        release(m, 0);
        return -1;
    }
    if (c->pci_bus_id[0] && m->by_pci) r = m->by_pci(c->pci_bus_id, &m->dev);
    else r = m->by_index(c->device_index, &m->dev);
    sample first;
    if (r == NVML_SUCCESS) r = read_sample(m, &first);
    if (r != NVML_SUCCESS) {
        char what[64];
        if (c->pci_bus_id[0] && m->by_pci) snprintf(what, sizeof what, "device %s", c->pci_bus_id);
        else snprintf(what, sizeof what, "device %u", c->device_index);
        fail(why, why_size, "%s: %s", what, nvml_text(m, r, buf, sizeof buf));
        release(m, 1);
        return -1;
    }
    m->realtime_minus_mono_us = (int64_t)clock_us(CLOCK_REALTIME) - (int64_t)gw_monitor_now_us();
    /* Only samples from now on: the driver keeps a second or more of history. */
    m->driver_last_seen = (unsigned long long)clock_us(CLOCK_REALTIME);
    pthread_mutex_init(&m->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->wake, &ca);
    pthread_cond_init(&m->fresh, &ca);
    pthread_condattr_destroy(&ca);
    push(m, &first);
    /* Signals stay with the command's own threads: the sampler blocks every one while it is created. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    const int e = pthread_create(&m->thread, NULL, sampler, m);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        fail(why, why_size, "cannot start the sampler thread: %s%s", strerror(e), "");
        pthread_cond_destroy(&m->wake);
        pthread_cond_destroy(&m->fresh);
        pthread_mutex_destroy(&m->lock);
        release(m, 1);
        return -1;
    }
    m->thread_started = 1;
    *out = m;
    return 0;
}

void gw_monitor_stop(gw_monitor *m)
{
    if (!m) return;
    if (m->thread_started) {
        pthread_mutex_lock(&m->lock);
        m->stop = 1;
        pthread_cond_broadcast(&m->wake);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
    }
    pthread_cond_destroy(&m->wake);
    pthread_cond_destroy(&m->fresh);
    pthread_mutex_destroy(&m->lock);
    release(m, 1);
}

int gw_monitor_lost(const gw_monitor *m, char *why, size_t why_size)
{
    if (why_size) why[0] = '\0';
    if (!m) return 0;
    gw_monitor *w = (gw_monitor *)m;
    pthread_mutex_lock(&w->lock);
    const int lost = w->lost;
    if (lost && why_size) snprintf(why, why_size, "%s", w->lost_why);
    pthread_mutex_unlock(&w->lock);
    return lost;
}

/* Called with the lock held: the newest stamp that can judge a window (driver sample, else our own). */
static uint64_t newest_locked(const gw_monitor *m)
{
    if (!m->driver_unsupported && m->samples) {
        if (!m->dcount) return 0;
        return m->dring[(m->dhead + m->dcap - 1) % m->dcap].t_us;
    }
    return m->count ? m->ring[(m->head + m->cap - 1) % m->cap].t_us : 0;
}

int gw_monitor_wait_past(gw_monitor *m, uint64_t t_us, unsigned timeout_ms)
{
    if (!m) return -1;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    pthread_mutex_lock(&m->lock);
    while (!m->lost && !m->stop && newest_locked(m) <= t_us)
        if (pthread_cond_timedwait(&m->fresh, &m->lock, &until) == ETIMEDOUT) break;
    if (m->lost || newest_locked(m) <= t_us) rc = -1;
    pthread_mutex_unlock(&m->lock);
    return rc;
}

void gw_monitor_summarize(gw_monitor *m, uint64_t t0, uint64_t t1, gw_monitor_summary *s)
{
    memset(s, 0, sizeof *s);
    s->window_ms = t1 > t0 ? (double)(t1 - t0) / 1e3 : 0.0;
    s->sm_util_mean_pct = -1;
    s->sm_util_peak_pct = s->mem_util_peak_pct = s->sm_clock_min_mhz = s->sm_clock_max_mhz = -1;
    s->temperature_peak_c = -1;
    s->mem_used_start_bytes = s->mem_used_peak_bytes = -1;
    s->power_peak_w = -1;
    s->activity = GW_MONITOR_ACTIVITY_NOT_JUDGED;
    if (!m) return;
    pthread_mutex_lock(&m->lock);
    double sm_sum = 0;
    int sm_n = 0, busy = 0;
    const size_t first = (m->head + m->cap - m->count) % m->cap;
    for (size_t i = 0; i < m->count; i++) {
        const sample *x = &m->ring[(first + i) % m->cap];
        if (x->t_us <= t0) {
            if (x->used >= 0) s->mem_used_start_bytes = x->used;
            continue;
        }
        if (x->t_us > t1) break;
        s->samples++;
        if (s->mem_used_start_bytes < 0 && x->used >= 0) s->mem_used_start_bytes = x->used;
        if (x->sm >= 0) {
            sm_sum += x->sm;
            sm_n++;
            if (x->sm > s->sm_util_peak_pct) s->sm_util_peak_pct = x->sm;
            if (x->sm > 0) busy = 1;
        }
        if (x->mem > s->mem_util_peak_pct) s->mem_util_peak_pct = x->mem;
        if (x->used > s->mem_used_peak_bytes) s->mem_used_peak_bytes = x->used;
        if (x->clock_mhz >= 0) {
            if (s->sm_clock_min_mhz < 0 || x->clock_mhz < s->sm_clock_min_mhz) s->sm_clock_min_mhz = x->clock_mhz;
            if (x->clock_mhz > s->sm_clock_max_mhz) s->sm_clock_max_mhz = x->clock_mhz;
        }
        if (x->power_w > s->power_peak_w) s->power_peak_w = x->power_w;
        if (x->temp_c > s->temperature_peak_c) s->temperature_peak_c = x->temp_c;
        s->throttle_reasons |= x->reasons & ~1ull;
    }
    if (sm_n) s->sm_util_mean_pct = sm_sum / sm_n;
    /* The driver's samples: the one stamped T covers (previous stamp, T]. Those covering the window, and
     * whether they cover it without a gap. */
    uint64_t covered_to = 0, prev = 0;
    int covered = 0;
    const size_t dfirst = (m->dhead + m->dcap - m->dcount) % m->dcap;
    for (size_t i = 0; i < m->dcount; i++) {
        const driver_sample *d = &m->dring[(dfirst + i) % m->dcap];
        /* The oldest kept sample's period is taken to be as long as the gap to the next one. */
        uint64_t from = prev;
        if (!i) {
            const uint64_t next = m->dcount > 1 ? m->dring[(dfirst + 1) % m->dcap].t_us : d->t_us;
            from = d->t_us > next - d->t_us ? d->t_us - (next - d->t_us) : 0;
        }
        prev = d->t_us;
        if (d->t_us < t0 || from > t1) continue;
        if (!s->driver_samples) {
            covered = from <= t0;
            covered_to = d->t_us;
        } else if (from <= covered_to) {
            covered_to = d->t_us;
        }
        s->driver_samples++;
        if (d->pct > 0) s->driver_busy_samples++;
    }
    s->lost = m->lost;
    const int have_driver = !m->driver_unsupported && m->samples;
    pthread_mutex_unlock(&m->lock);
    if (busy || s->driver_busy_samples) s->activity = GW_MONITOR_ACTIVITY_SEEN;
    else if (have_driver && s->driver_samples && covered && covered_to >= t1)
        s->activity = GW_MONITOR_ACTIVITY_NONE;
    else if (!have_driver && sm_n >= 10)
        s->activity = GW_MONITOR_ACTIVITY_NONE;
}

#endif /* GW_HAVE_NVML */
