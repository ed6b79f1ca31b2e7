/* SPDX-License-Identifier: MIT
 * gpuwitness bench rows: the figures derived from each measurement (GB/s, % of the copy roofline, witness
 * overhead, speedups), the JSON row with its stable keys (docs/benchmarks.md), the line printed per row,
 * the Markdown table at the end, the regression guard, and the loop over a kernel's cases for the tier.
 * The JSON rows are the one record of a run: the table and the guard read them back, so what is printed is
 * what is written.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gw_bench.h"

void gw_bench_row_init(gw_bench_row *row, const char *kernel, const char *implementation, int is_kernel)
{
    memset(row, 0, sizeof *row);
    row->kernel = kernel;
    row->implementation = implementation;
    row->is_kernel = is_kernel;
    row->validated = -1;
}

void gw_bench_row_fail(gw_bench_row *row, const char *fmt, ...)
{
    if (row->error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->error, sizeof row->error, fmt, ap);
    va_end(ap);
}

int gw_bench_run_cases(gw_bench_run *run, const gw_bench_cases by_tier[4], size_t case_size,
                       int (*one_case)(gw_bench_run *run, const void *c))
{
    const gw_bench_cases *t = &by_tier[run->tier];
    for (size_t i = 0; i < t->count; i++)
        if (one_case(run, (const char *)t->cases + i * case_size)) return -1;
    return 0;
}

void gw_bench_progress(const gw_bench_run *run, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "bench [%.1f s] %s\n", (gw_cli_now_ms() - run->t0_ms) / 1e3, text);
}

static cJSON *stats_json(const gw_bench_stats *s)
{
    if (s->count <= 0) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "min", s->min);
    cJSON_AddNumberToObject(o, "median", s->median);
    cJSON_AddNumberToObject(o, "max", s->max);
    cJSON_AddNumberToObject(o, "reps", s->count);
    return o;
}

static void add_number_or_null(cJSON *o, const char *key, int present, double value)
{
    if (present && isfinite(value)) cJSON_AddNumberToObject(o, key, value);
    else cJSON_AddNullToObject(o, key);
}

static void add_string_or_null(cJSON *o, const char *key, const char *value)
{
    if (value && value[0]) cJSON_AddStringToObject(o, key, value);
    else cJSON_AddNullToObject(o, key);
}

/* The figures derived from one row; has_* say which exist. */
typedef struct derived {
    int has_gbps, has_overhead, has_cpu_1t, has_cpu_mt, has_e2e, has_gflops, has_fp64_percent;
    double gbps, roofline_percent, overhead_percent, vs_cpu_1t, vs_cpu_mt, e2e_vs_cpu_mt;
    double gflops, fp64_percent;
    double gpu_work_per_s, cpu_1t_work_per_s, cpu_mt_work_per_s;
} derived;

static derived derive(const gw_bench_run *run, const gw_bench_row *row)
{
    derived d;
    memset(&d, 0, sizeof d);
    const double kernel_s = row->kernel_ms.median * 1e-3;
    d.has_gbps = row->gpu_ran && row->kernel_ms.count > 0 && kernel_s > 0;
    if (d.has_gbps) {
        d.gbps = (double)row->bytes_moved / kernel_s / 1e9;
        d.roofline_percent = run->roofline.gbps > 0 ? 100.0 * d.gbps / run->roofline.gbps : NAN;
        d.gpu_work_per_s = row->work / kernel_s;
    }
    d.has_overhead = d.has_gbps && row->kernel_no_witness_ms.count > 0 && row->kernel_no_witness_ms.median > 0;
    if (d.has_overhead)
        d.overhead_percent =
            100.0 * (row->kernel_ms.median - row->kernel_no_witness_ms.median) / row->kernel_no_witness_ms.median;
    d.has_cpu_1t = row->cpu_1t_ms.count > 0 && row->cpu_1t_ms.median > 0;
    d.has_cpu_mt = row->cpu_mt_ms.count > 0 && row->cpu_mt_ms.median > 0;
    /* A single-threaded reference timed on a subset (cpu_1t_work) is scaled to the whole work. */
    const double cpu_1t_work = row->cpu_1t_work > 0 ? row->cpu_1t_work : row->work;
    if (d.has_cpu_1t) d.cpu_1t_work_per_s = cpu_1t_work / (row->cpu_1t_ms.median * 1e-3);
    if (d.has_cpu_mt) d.cpu_mt_work_per_s = row->work / (row->cpu_mt_ms.median * 1e-3);
    if (d.has_gbps && d.has_cpu_1t) d.vs_cpu_1t = row->work / d.cpu_1t_work_per_s / kernel_s;
    d.has_gflops = d.has_gbps && row->flops > 0;
    if (d.has_gflops) d.gflops = row->flops / kernel_s / 1e9;
    d.has_fp64_percent = d.has_gflops && run->fp64.gflops > 0;
    if (d.has_fp64_percent) d.fp64_percent = 100.0 * d.gflops / run->fp64.gflops;
    if (d.has_gbps && d.has_cpu_mt) d.vs_cpu_mt = row->cpu_mt_ms.median / row->kernel_ms.median;
    d.has_e2e = row->gpu_ran && row->end_to_end_ms.count > 0 && row->end_to_end_ms.median > 0;
    if (d.has_e2e && d.has_cpu_mt) d.e2e_vs_cpu_mt = row->cpu_mt_ms.median / row->end_to_end_ms.median;
    return d;
}

static const char *gpu_status(const gw_bench_run *run, const gw_bench_row *row)
{
    if (!run->gpu) return "skipped";
    return row->gpu_ran && !row->error[0] ? "ran" : "failed";
}

static cJSON *row_json(const gw_bench_run *run, gw_bench_row *row, const derived *d)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "kernel", row->kernel);
    cJSON_AddStringToObject(o, "case", row->case_id);
    cJSON_AddStringToObject(o, "label", row->label);
    cJSON_AddStringToObject(o, "implementation", row->implementation);
    cJSON_AddStringToObject(o, "role", row->is_kernel ? "kernel" : "baseline");
    cJSON_AddItemToObject(o, "params", row->params ? row->params : cJSON_CreateObject());
    row->params = NULL; /* now owned by o */
    cJSON_AddNumberToObject(o, "work", row->work);
    cJSON_AddStringToObject(o, "work_unit", row->work_unit);
    cJSON_AddNumberToObject(o, "bytes_moved", (double)row->bytes_moved);
    add_number_or_null(o, "flops", row->flops > 0, row->flops); /* null: memory-bound work, no FLOP figure */
    cJSON_AddStringToObject(o, "gpu_status", gpu_status(run, row));
    cJSON_AddItemToObject(o, "gpu_kernel_ms", stats_json(&row->kernel_ms));
    cJSON_AddItemToObject(o, "gpu_kernel_no_witness_ms", stats_json(&row->kernel_no_witness_ms));
    cJSON_AddItemToObject(o, "gpu_end_to_end_ms", stats_json(&row->end_to_end_ms));
    add_number_or_null(o, "gpu_gbps", d->has_gbps, d->gbps);
    add_number_or_null(o, "roofline_percent", d->has_gbps, d->roofline_percent);
    add_number_or_null(o, "witness_overhead_percent", d->has_overhead, d->overhead_percent);
    add_number_or_null(o, "gpu_work_per_s", d->has_gbps, d->gpu_work_per_s);
    add_number_or_null(o, "gpu_gflops", d->has_gflops, d->gflops);
    add_number_or_null(o, "fp64_rate_gflops", row->flops > 0 && run->fp64.gflops > 0, run->fp64.gflops);
    add_number_or_null(o, "fp64_rate_percent", d->has_fp64_percent, d->fp64_percent);
    cJSON_AddItemToObject(o, "cpu_1t_ms", stats_json(&row->cpu_1t_ms));
    cJSON_AddItemToObject(o, "cpu_mt_ms", stats_json(&row->cpu_mt_ms));
    add_number_or_null(o, "cpu_mt_threads", row->cpu_mt_threads > 0, row->cpu_mt_threads);
    add_number_or_null(o, "cpu_1t_work", row->cpu_1t_work > 0, row->cpu_1t_work);
    add_number_or_null(o, "cpu_1t_work_per_s", d->has_cpu_1t, d->cpu_1t_work_per_s);
    add_number_or_null(o, "cpu_mt_work_per_s", d->has_cpu_mt, d->cpu_mt_work_per_s);
    add_number_or_null(o, "speedup_kernel_vs_cpu_1t", d->has_gbps && d->has_cpu_1t, d->vs_cpu_1t);
    add_number_or_null(o, "speedup_kernel_vs_cpu_mt", d->has_gbps && d->has_cpu_mt, d->vs_cpu_mt);
    add_number_or_null(o, "speedup_end_to_end_vs_cpu_mt", d->has_e2e && d->has_cpu_mt, d->e2e_vs_cpu_mt);
    if (row->validated < 0) cJSON_AddNullToObject(o, "validated");
    else cJSON_AddBoolToObject(o, "validated", row->validated);
    add_string_or_null(o, "witness", row->witness);
    add_string_or_null(o, "error", row->error);
    return o;
}

static void print_row(const gw_bench_run *run, const gw_bench_row *row, const derived *d)
{
    printf("%s %s [%s]\n", row->kernel, row->case_id, row->implementation);
    if (row->cpu_1t_ms.count)
        printf("  cpu:     1 thread %.3f ms, %d threads %.3f ms (medians of %d)\n", row->cpu_1t_ms.median,
               row->cpu_mt_threads, row->cpu_mt_ms.median, row->cpu_1t_ms.count);
    if (!run->gpu) {
        printf("  gpu:     skipped\n");
    } else if (d->has_gbps) {
        printf("  %-8s kernel %.4f ms (min %.4f, max %.4f, %d reps), %.1f GB/s = %.1f%% of the copy roofline",
               gw_cli_emulated() ? "emulated:" : "gpu:", row->kernel_ms.median, row->kernel_ms.min, row->kernel_ms.max, row->kernel_ms.count, d->gbps,
               d->roofline_percent);
        if (d->has_e2e) printf("; end to end %.3f ms", row->end_to_end_ms.median);
        printf("\n");
        if (d->has_fp64_percent)
            printf("           %.1f GFLOP/s (model) = %.1f%% of the %.1f GFLOP/s FP64 rate reference\n", d->gflops,
                   d->fp64_percent, run->fp64.gflops);
        if (d->has_overhead)
            printf("           without witness %.4f ms: witness overhead %+.2f%%\n", row->kernel_no_witness_ms.median,
                   d->overhead_percent);
        if (d->has_cpu_mt) printf("           %.1fx the multithreaded CPU reference\n", d->vs_cpu_mt);
    }
    if (row->witness[0]) printf("  %s\n", row->witness);
    if (row->validated >= 0)
        printf("  outputs: %s\n", row->validated ? "equal to the reference after every timed loop" : "DIFFERENT");
    if (row->error[0]) printf("  FAILED:  %s\n", row->error);
}

static void add_int_or_null(cJSON *o, const char *key, int64_t value)
{
    if (value >= 0) cJSON_AddNumberToObject(o, key, (double)value);
    else cJSON_AddNullToObject(o, key);
}

cJSON *gw_bench_monitor_json(const gw_cli_monitor *m, uint64_t t0_us, uint64_t t1_us, char *text, size_t text_size)
{
    static const gw_cli_monitor off = {GW_CLI_MONITOR_OFF, NULL, {0}};
    if (!m) m = &off;
    gw_monitor_summary s;
    gw_cli_monitor_summary(m, t0_us, t1_us, &s);
    uint64_t peak = 0, allocs = 0;
    gw_devmem_window(t0_us, t1_us, &peak, &allocs);
    if (text) gw_cli_monitor_text(m, &s, peak, allocs, text, text_size);
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    const int on = m->state == GW_CLI_MONITOR_ON;
    cJSON_AddStringToObject(o, "status", on ? (s.lost ? "lost" : "ok")
                                            : m->state == GW_CLI_MONITOR_OFF ? "off" : "unavailable");
    add_string_or_null(o, "reason", m->state == GW_CLI_MONITOR_UNAVAILABLE ? m->reason : NULL);
    add_int_or_null(o, "period_ms", on ? (int64_t)gw_monitor_period_ms(m->m) : -1);
    cJSON_AddNumberToObject(o, "window_ms", s.window_ms);
    add_int_or_null(o, "samples", on ? s.samples : -1);
    add_number_or_null(o, "sm_util_mean_pct", s.sm_util_mean_pct >= 0, s.sm_util_mean_pct);
    add_int_or_null(o, "sm_util_peak_pct", s.sm_util_peak_pct);
    add_int_or_null(o, "mem_util_peak_pct", s.mem_util_peak_pct);
    add_int_or_null(o, "mem_used_start_bytes", s.mem_used_start_bytes);
    add_int_or_null(o, "mem_used_peak_bytes", s.mem_used_peak_bytes);
    add_int_or_null(o, "sm_clock_min_mhz", s.sm_clock_min_mhz);
    add_int_or_null(o, "sm_clock_max_mhz", s.sm_clock_max_mhz);
    add_number_or_null(o, "power_peak_w", s.power_peak_w >= 0, s.power_peak_w);
    add_int_or_null(o, "temperature_peak_c", s.temperature_peak_c);
    if (on && s.samples) {
        cJSON *names = cJSON_CreateArray();
        static const char *const bits[] = {"gpu_idle", "applications_clocks", "sw_power_cap", "hw_slowdown",
                                           "sync_boost", "sw_thermal", "hw_thermal", "hw_power_brake",
                                           "display_clocks"};
        for (int b = 0; b < 9; b++)
            if (s.throttle_reasons >> b & 1u) cJSON_AddItemToArray(names, cJSON_CreateString(bits[b]));
        cJSON_AddItemToObject(o, "throttle_reasons", names);
        cJSON_AddBoolToObject(o, "throttled", (s.throttle_reasons & GW_MONITOR_THROTTLE_MASK) != 0);
    } else {
        cJSON_AddNullToObject(o, "throttle_reasons");
        cJSON_AddNullToObject(o, "throttled");
    }
    add_int_or_null(o, "driver_samples", on ? s.driver_samples : -1);
    add_int_or_null(o, "driver_busy_samples", on ? s.driver_busy_samples : -1);
    if (on)
        cJSON_AddStringToObject(o, "activity", s.activity == GW_MONITOR_ACTIVITY_SEEN ? "seen"
                                               : s.activity == GW_MONITOR_ACTIVITY_NONE ? "none" : "not_judged");
    else
        cJSON_AddNullToObject(o, "activity");
    cJSON_AddNumberToObject(o, "devmem_high_water_bytes", (double)peak);
    cJSON_AddNumberToObject(o, "devmem_allocations", (double)allocs);
    return o;
}

int gw_bench_record(gw_bench_run *run, gw_bench_row *row)
{
    derived d = derive(run, row);
    /* A figure above the physical limit is a broken measurement (a cache that survived the flush, a
     * stale output), never a record (docs/benchmarks.md, "The method"). */
    if (d.has_gbps && d.roofline_percent > 100.0 && !run->gpu->facts.emulated)
        gw_bench_row_fail(row, "measurement error: %.1f GB/s is %.1f%% of the %.1f GB/s copy roofline measured in "
                          "this run; a result above the roofline is not a record", d.gbps, d.roofline_percent,
                          run->roofline.gbps);
    print_row(run, row, &d);
    if (row->error[0]) run->failures++;
    cJSON *o = row_json(run, row, &d);
    if (o && run->monitor) {
        const uint64_t now = gw_monitor_now_us();
        char line[1024];
        cJSON *mon = gw_bench_monitor_json(run->monitor, run->monitor_mark_us, now, line, sizeof line);
        run->monitor_mark_us = now;
        if (!mon || !cJSON_AddItemToObject(o, "monitor", mon)) {
            cJSON_Delete(mon);
            cJSON_Delete(o);
            o = NULL;
        } else {
            printf("  monitor: %s\n", line);
        }
    }
    if (!o || !cJSON_AddItemToArray(run->measurements, o)) {
        cJSON_Delete(o);
        cJSON_Delete(row->params);
        row->params = NULL;
        return -1;
    }
    return 0;
}

/* ---- reading rows back: the table and the guard ---- */

static double number(const cJSON *o, const char *key, int *present)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *present = cJSON_IsNumber(v);
    return *present ? v->valuedouble : 0;
}

static double median(const cJSON *o, const char *key, int *present)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsObject(s) ? number(s, "median", present) : (*present = 0, 0.0);
}

static const char *text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void cell(double value, int present, const char *format)
{
    if (present) printf(format, value);
    else printf(" - |");
}

void gw_bench_print_table(const gw_bench_run *run)
{
    if (run->gpu && run->gpu->facts.emulated)
        printf("\nEMULATED: the device code ran on gpuwitness' emulated device, on the CPU; every device time, rate "
               "and speedup below is of the CPU, none is a GPU figure (GPU path not executed).\n");
    printf("\n| kernel | case | implementation | %s kernel ms (median) | GB/s | %% of copy roofline | end to end ms | "
           "CPU 1 thread ms | CPU multithreaded ms | speedup vs CPU mt | witness overhead %% | valid |\n",
           run->gpu && run->gpu->facts.emulated ? "emulated" : "GPU");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    const cJSON *row;
    cJSON_ArrayForEach(row, run->measurements)
    {
        int p;
        printf("| %s | %s | %s |", text(row, "kernel"), text(row, "case"), text(row, "implementation"));
        double v = median(row, "gpu_kernel_ms", &p);
        cell(v, p, " %.4f |");
        v = number(row, "gpu_gbps", &p);
        cell(v, p, " %.1f |");
        v = number(row, "roofline_percent", &p);
        cell(v, p, " %.1f |");
        v = median(row, "gpu_end_to_end_ms", &p);
        cell(v, p, " %.3f |");
        v = median(row, "cpu_1t_ms", &p);
        cell(v, p, " %.3f |");
        v = median(row, "cpu_mt_ms", &p);
        cell(v, p, " %.3f |");
        v = number(row, "speedup_kernel_vs_cpu_mt", &p);
        cell(v, p, " %.1fx |");
        v = number(row, "witness_overhead_percent", &p);
        cell(v, p, " %+.2f |");
        const cJSON *valid = cJSON_GetObjectItemCaseSensitive(row, "validated");
        const char *err = text(row, "error");
        printf(" %s |\n", err[0] ? "**error**" : cJSON_IsTrue(valid) ? "yes" : cJSON_IsFalse(valid) ? "**no**"
                                                                                                    : "GPU skipped");
    }
    if (run->gpu)
        printf("\nCopy roofline: %.1f GB/s (device-to-device cudaMemcpyAsync of %zu MiB, read + write) on %s.%s\n",
               run->roofline.gbps, run->roofline.buffer_bytes >> 20, run->gpu->facts.name, gw_cli_emulated_note());
    else
        printf("\nGPU part skipped: %s. Only the CPU reference was timed.\n", run->gpu_skip_reason);
}

cJSON *gw_bench_guard(const gw_bench_run *run, double min_speedup, double min_roofline, int *failed)
{
    *failed = 0;
    cJSON *g = cJSON_CreateObject();
    cJSON *failures = cJSON_CreateArray();
    if (!g || !failures) {
        cJSON_Delete(g);
        cJSON_Delete(failures);
        return NULL;
    }
    add_number_or_null(g, "min_speedup", min_speedup >= 0, min_speedup);
    add_number_or_null(g, "min_roofline_percent", min_roofline >= 0, min_roofline);
    const int requested = min_speedup >= 0 || min_roofline >= 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, run->measurements)
    {
        if (!requested || strcmp(text(row, "role"), "kernel") != 0 || strcmp(text(row, "gpu_status"), "ran") != 0)
            continue;
        char msg[512];
        int p;
        const double speedup = number(row, "speedup_kernel_vs_cpu_mt", &p);
        if (min_speedup >= 0 && p && speedup < min_speedup) {
            snprintf(msg, sizeof msg, "%s %s: %.2fx the multithreaded CPU reference, below --min-speedup %g (short "
                     "by %.1f%%)", text(row, "kernel"), text(row, "case"), speedup, min_speedup,
                     100.0 * (min_speedup - speedup) / min_speedup);
            cJSON_AddItemToArray(failures, cJSON_CreateString(msg));
        }
        /* A compute-bound row (it has an FP64 rate percentage) is held to its FP64 rate, not to the copy
         * roofline, which its few bytes moved never approach. */
        int fp64 = 0;
        double roofline = number(row, "fp64_rate_percent", &fp64);
        if (!fp64) roofline = number(row, "roofline_percent", &p);
        if (min_roofline >= 0 && (fp64 || p) && roofline < min_roofline) {
            snprintf(msg, sizeof msg, "%s %s: %.1f%% of the %s, below --min-roofline %g (short by %.1f points)",
                     text(row, "kernel"), text(row, "case"), roofline, fp64 ? "FP64 rate reference" : "copy roofline",
                     min_roofline, min_roofline - roofline);
            cJSON_AddItemToArray(failures, cJSON_CreateString(msg));
        }
    }
    const char *status = !requested ? "not_requested" : !run->gpu ? "skipped" : "passed";
    if (cJSON_GetArraySize(failures) > 0) {
        status = "failed";
        *failed = 1;
    }
    cJSON_AddStringToObject(g, "status", status);
    cJSON_AddItemToObject(g, "failures", failures);
    return g;
}
