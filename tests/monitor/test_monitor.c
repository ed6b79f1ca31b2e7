/* SPDX-License-Identifier: MIT
 * The NVML sampler and the device memory high-water on machines without a GPU: a fake NVML
 * (fake_nvml.c, loaded by path like libnvidia-ml.so.1) drives gw_monitor (docs/monitor.md).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gw_devmem.h"
#include "gw_monitor.h"
#include "gw_test_util.h"

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts)) {
    }
}

/* The fake's control functions, from the copy gw_monitor loaded (the same file is loaded once). */
static void (*fake_busy)(uint64_t, uint64_t);
static long (*fake_calls)(void);

static gw_monitor *start(const char *mode)
{
    if (mode) setenv("GW_FAKE_NVML_MODE", mode, 1);
    gw_monitor_config c = GW_MONITOR_CONFIG_INIT;
    c.library = GW_FAKE_NVML;
    char why[512] = "";
    gw_monitor *m = NULL;
    cr_assert_eq(gw_monitor_start(&m, &c, why, sizeof why), 0, "start: %s", why);
    void *h = dlopen(GW_FAKE_NVML, RTLD_NOW | RTLD_NOLOAD);
    cr_assert(h, "the fake NVML is not loaded");
    void *b = dlsym(h, "gw_fake_nvml_busy"), *n = dlsym(h, "gw_fake_nvml_util_calls");
    memcpy(&fake_busy, &b, sizeof b);
    memcpy(&fake_calls, &n, sizeof n);
    dlclose(h);
    cr_assert(fake_busy && fake_calls);
    return m;
}

Test(monitor, samples_inside_a_busy_call_show_activity_and_those_outside_do_not)
{
    gw_monitor *m = start(NULL);
    cr_assert_eq(gw_monitor_period_ms(m), 20u);
    const uint64_t idle0 = gw_monitor_now_us();
    sleep_ms(150);
    const uint64_t t0 = gw_monitor_now_us();
    fake_busy(t0, t0 + 150000);
    sleep_ms(150);
    const uint64_t t1 = gw_monitor_now_us();
    cr_assert_eq(gw_monitor_wait_past(m, t1 + 30000, 2000), 0);
    gw_monitor_summary in, before;
    gw_monitor_summarize(m, t0, t1, &in);
    gw_monitor_summarize(m, idle0, t0 - 25000, &before);
    gw_monitor_stop(m);
    cr_expect_geq(in.samples, 3, "samples in a 150 ms window at 20 ms: %d", in.samples);
    cr_expect_eq(in.sm_util_peak_pct, 100);
    cr_expect_gt(in.sm_util_mean_pct, 50.0);
    cr_expect_eq(in.mem_used_peak_bytes, (int64_t)((1ull << 30) + (256ull << 20)));
    cr_expect_eq(in.sm_clock_max_mhz, 1980);
    cr_expect_eq(in.power_peak_w, 350.0);
    cr_expect_eq(in.temperature_peak_c, 41);
    cr_expect_eq(in.throttle_reasons & GW_MONITOR_THROTTLE_MASK, 0u);
    cr_expect_eq(in.activity, GW_MONITOR_ACTIVITY_SEEN);
    cr_expect_gt(in.driver_busy_samples, 0);
    cr_expect_geq(before.samples, 3);
    cr_expect_eq(before.sm_util_peak_pct, 0);
    cr_expect_eq(before.activity, GW_MONITOR_ACTIVITY_NONE, "an idle window covered by driver samples: %s",
                 gw_monitor_activity_name(before.activity));
    cr_expect_eq(before.sm_clock_min_mhz, 345);
}

Test(monitor, a_call_shorter_than_the_sampling_is_not_judged)
{
    gw_monitor *m = start(NULL);
    sleep_ms(60);
    const uint64_t t0 = gw_monitor_now_us();
    const uint64_t t1 = t0 + 1000; /* a 1 ms "kernel" whose driver samples have not come yet */
    gw_monitor_summary s;
    gw_monitor_summarize(m, t0, t1, &s);
    gw_monitor_stop(m);
    cr_expect_eq(s.activity, GW_MONITOR_ACTIVITY_NOT_JUDGED);
}

Test(monitor, without_driver_samples_only_a_long_idle_window_is_judged)
{
    gw_monitor *m = start("no_driver_samples");
    const uint64_t t0 = gw_monitor_now_us();
    sleep_ms(60);
    const uint64_t t1 = gw_monitor_now_us();
    sleep_ms(300);
    const uint64_t t2 = gw_monitor_now_us();
    gw_monitor_summary short_window, long_window;
    gw_monitor_summarize(m, t0, t1, &short_window);
    gw_monitor_summarize(m, t0, t2, &long_window);
    gw_monitor_stop(m);
    cr_expect_eq(short_window.driver_samples, 0);
    cr_expect_eq(short_window.activity, GW_MONITOR_ACTIVITY_NOT_JUDGED);
    cr_expect_eq(long_window.activity, GW_MONITOR_ACTIVITY_NONE, "%d samples", long_window.samples);
}

Test(monitor, the_thread_samples_while_running_and_not_after_stop)
{
    gw_monitor *m = start(NULL);
    const long a = fake_calls();
    sleep_ms(120);
    const long b = fake_calls();
    cr_expect_geq(b - a, 3, "reads in 120 ms at 20 ms: %ld", b - a);
    /* gw_monitor_stop unloads NVML: hold the same copy loaded to read its counter afterwards. */
    void *h = dlopen(GW_FAKE_NVML, RTLD_NOW | RTLD_NOLOAD);
    cr_assert(h);
    long (*calls)(void) = fake_calls;
    gw_monitor_stop(m);
    const long c = calls();
    sleep_ms(80);
    cr_expect_eq(calls(), c, "the thread still reads NVML after gw_monitor_stop");
    dlclose(h);
}

Test(monitor, a_library_that_fails_to_load_is_reported_with_its_reason)
{
    gw_monitor_config c = GW_MONITOR_CONFIG_INIT;
    c.library = "/nonexistent/libnvidia-ml.so.1";
    char why[512] = "";
    gw_monitor *m = (gw_monitor *)1;
    cr_assert_eq(gw_monitor_start(&m, &c, why, sizeof why), -1);
    cr_expect_null(m);
    cr_expect(strstr(why, "cannot load /nonexistent/libnvidia-ml.so.1"), "%s", why);
    gw_monitor_stop(NULL);
}

Test(monitor, the_environment_names_the_library_and_a_failing_init_is_reported)
{
    setenv("GW_NVML_LIBRARY", GW_FAKE_NVML, 1);
    setenv("GW_FAKE_NVML_MODE", "init_fail", 1);
    gw_monitor_config c = GW_MONITOR_CONFIG_INIT;
    char why[512] = "";
    gw_monitor *m = NULL;
    cr_assert_eq(gw_monitor_start(&m, &c, why, sizeof why), -1);
    cr_expect(strstr(why, "nvmlInit_v2: Driver Not Loaded"), "%s", why);
    setenv("GW_FAKE_NVML_MODE", "no_device", 1);
    cr_assert_eq(gw_monitor_start(&m, &c, why, sizeof why), -1);
    cr_expect(strstr(why, "device 0: Invalid Argument"), "%s", why);
}

Test(monitor, a_device_lost_mid_run_stops_the_sampling_and_says_so)
{
    gw_monitor *m = start("lost_after=4");
    const uint64_t t0 = gw_monitor_now_us();
    char why[256] = "";
    for (int i = 0; i < 100 && !gw_monitor_lost(m, why, sizeof why); i++) sleep_ms(10);
    cr_assert(gw_monitor_lost(m, why, sizeof why), "the lost device was not noticed");
    cr_expect(strstr(why, "GPU is lost"), "%s", why);
    gw_monitor_summary s;
    gw_monitor_summarize(m, t0, gw_monitor_now_us(), &s);
    cr_expect(s.lost);
    cr_expect_leq(s.samples, 4);
    cr_expect_eq(gw_monitor_wait_past(m, gw_monitor_now_us(), 50), -1);
    gw_monitor_stop(m);
}

Test(monitor, throttle_reasons_are_named_and_reported)
{
    setenv("GW_FAKE_NVML_THROTTLE", "68", 1); /* 0x44: sw_power_cap, hw_thermal */
    gw_monitor *m = start(NULL);
    const uint64_t t0 = gw_monitor_now_us();
    sleep_ms(60);
    gw_monitor_summary s;
    gw_monitor_summarize(m, t0, gw_monitor_now_us(), &s);
    gw_monitor_stop(m);
    char names[128];
    cr_expect_str_eq(gw_monitor_throttle_names(s.throttle_reasons & GW_MONITOR_THROTTLE_MASK, names, sizeof names),
                     "sw_power_cap,hw_thermal");
    cr_expect_str_eq(gw_monitor_throttle_names(0, names, sizeof names), "none");
    cr_expect_eq(s.throttle_reasons & 1u, 0u, "the idle bit is not kept");
}

/* The sampler must not keep the process alive: exit() while it samples ends the process at once. */
Test(monitor, a_process_that_exits_while_sampling_ends)
{
    /* Under Valgrind the child's unjoined thread and Criterion's blocks would read as leaks: this test is
     * about ending, which the plain run checks. */
    if (RUNNING_ON_VALGRIND) return; /* cr_skip_test would leave Criterion's own blocks behind */
    const pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        gw_monitor_config c = GW_MONITOR_CONFIG_INIT;
        c.library = GW_FAKE_NVML;
        char why[256];
        gw_monitor *m = NULL;
        if (gw_monitor_start(&m, &c, why, sizeof why)) _exit(3);
        sleep_ms(30);
        exit(7); /* no gw_monitor_stop */
    }
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 300 && done == 0; i++) {
        done = waitpid(child, &status, WNOHANG);
        if (!done) sleep_ms(10);
    }
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        cr_assert_fail("the process was still alive 3 s after exit()");
    }
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %d", status);
}

Test(devmem, the_high_water_of_a_window_counts_what_was_held_inside_it)
{
    gw_devmem_reset();
    int a, b, c;
    gw_devmem_alloc(&a, 1000);
    sleep_ms(2);
    const uint64_t t0 = gw_monitor_now_us();
    sleep_ms(2);
    gw_devmem_alloc(&b, 5000);
    gw_devmem_alloc(&c, 200);
    gw_devmem_free(&b);
    gw_devmem_free(&b); /* twice: ignored */
    gw_devmem_free(NULL);
    sleep_ms(2);
    const uint64_t t1 = gw_monitor_now_us();
    sleep_ms(2);
    gw_devmem_free(&a);
    uint64_t peak = 0, allocs = 0;
    cr_expect_eq(gw_devmem_window(t0, t1, &peak, &allocs), 0);
    cr_expect_eq(peak, 6200u);
    cr_expect_eq(allocs, 2u);
    cr_expect_eq(gw_devmem_live(), 200u);
    cr_expect_eq(gw_devmem_allocations(), 3u);
    gw_devmem_window(t1, gw_monitor_now_us(), &peak, &allocs);
    cr_expect_eq(peak, 1200u, "held at the window's start");
    cr_expect_eq(allocs, 0u);
    gw_devmem_point *p = NULL;
    size_t n = 0;
    cr_assert_eq(gw_devmem_points(t0, t1, &p, &n), 0);
    cr_expect_eq(n, 4u);
    cr_expect_eq(p[0].bytes, 1000u);
    cr_expect_eq(p[0].t_us, t0);
    cr_expect_eq(p[1].bytes, 6000u);
    cr_expect_eq(p[3].bytes, 1200u);
    free(p);
    gw_devmem_reset();
}
