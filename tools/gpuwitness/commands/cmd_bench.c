/* SPDX-License-Identifier: MIT
 * gpuwitness bench: every kernel's benchmark cases, timed as docs/benchmarks.md says, written as JSON
 * (docs/benchmarks.md explains every key) and as a Markdown table, with the regression guard. Each
 * kernel's cases are its bench hook (tools/gpuwitness/kernels/<kernel>/<kernel>_bench.c).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gw_bench.h"
#include "gw_cli_files.h"
#include "gw_commands.h"
#include "gw_kernel.h"
#include "gw_outfile.h"

static void print_help(void)
{
    fputs("usage: gpuwitness bench [KERNEL...] [--size smoke|small|realistic|full] [--json FILE]\n"
    "                        [--min-speedup X] [--min-roofline P] [--dump-inputs DIR] [--device D]\n"
    "                        [--reps N] [--cpu-reps N] [--seed N] [--trace FILE [--wait N] [--warmup N] [--active N]]\n"
    "                        [--html FILE [--baseline OLD.json]] [--no-monitor]\n"
    "\n"
    "Times each kernel (default: all of them) against its CPU reference, single-threaded and\n"
    "multithreaded, and against the device-to-device copy roofline measured in the same run. GPU times are\n"
    "CUDA events around the launches only, after 3 warm-up calls, as min / median / max of N repetitions, with\n"
    "L2 flushed (a memset of twice its size) and outputs poisoned before every repetition, outside the timed\n"
    "region; after each loop the outputs are compared with the reference bit for bit and the witness must\n"
    "show every repetition ran on the GPU. Each case reports kernel-only and end-to-end times (pinned host\n"
    "buffers: upload, launch, download), the time without the witness (its overhead), bytes moved, GB/s, %\n"
    "of the copy roofline and the speedups. A result above the roofline is reported as a measurement error.\n"
    "\n", stdout);
    for (size_t k = 0; k < gw_kernel_count; k++)
        gw_kernel_print_paragraph(stdout, gw_kernels[k].info->name, gw_kernels[k].info->bench_help);
    fputs("\n"
    "options:\n"
    "  --size S          smoke (tiny, for CTest), small, realistic (default) or full (the largest batches)\n"
    "  --json FILE       the results as one JSON object: environment, method, roofline, measurements, guard\n"
    "  --html FILE       the results as one self-contained HTML page with charts, made by bench/report.py\n"
    "                    (needs python3, matplotlib and jinja2: checked before any work)\n"
    "  --baseline OLD    with --html: compare with an earlier run's --json file; a figure slower beyond the\n"
    "                    measured spread is marked as a regression (docs/benchmarks.md)\n"
    "  --min-speedup X   guard: fail (exit 1) when a kernel is less than X times faster than the\n"
    "                    multithreaded CPU reference (kernel-only time)\n"
    "  --min-roofline P  guard: fail (exit 1) when a kernel reaches less than P percent of the copy roofline\n"
    "  --dump-inputs DIR write every case's inputs and the reference's outputs as .npy, with DIR/manifest.json,\n"
    "                    for the peers in bench/peers/ (DIR is created if missing)\n"
    "  --device D        cuda, cuda:N, cpu or auto (default: $GW_DEVICE, else auto)\n"
    "  --reps N          GPU repetitions per loop (default 20, the method's minimum; fewer is a smoke run)\n"
    "  --cpu-reps N      CPU reference repetitions (default 3)\n"
    "  --seed N          seed of the generated inputs (default 1)\n"
    "  --trace FILE      a Chrome trace (CUPTI kernels and copies, NVTX ranges of upload, launch, download) of\n"
    "                    one extra, untimed end-to-end loop of the first GPU case, after its timed loops and\n"
    "                    checked like them; pick the case with KERNEL and --size\n"
    "  --wait N, --warmup N, --active N\n"
    "                    that loop's iterations, as `gpuwitness trace` (defaults 0, 1, 3); need --trace\n"
    "  --no-monitor      do not sample the GPU with NVML. By default a thread reads NVML every 20 ms (SM and\n"
    "                    memory utilisation, memory used, SM clock, power, temperature, throttling) and each\n"
    "                    row reports the samples of its case, with our device memory high-water, in the text\n"
    "                    and the JSON (\"monitor\": docs/monitor.md); --monitor: on (the default)\n"
    "  -h, --help        this text\n"
    "\n"
    "Without a usable GPU only the CPU reference is timed, and the GPU part is reported skipped on stderr, on\n"
    "stdout and in the JSON (gpu_status \"skipped\").\n"
    "\n"
    "exit status:\n"
    "   0  every case ran and checked out (without a GPU: the CPU part did, and no guard or cuda device was\n"
    "      asked for)\n"
    "  77  GPU part skipped: no usable GPU, and a guard (--min-speedup, --min-roofline) or --device cuda[:N]\n"
    "      was asked for, and GW_REQUIRE_GPU is not 1; or --trace FILE not written (no GPU case ran, or\n"
    "      CUPTI unavailable, e.g. under a profiler or compute-sanitizer)\n"
    "   1  a guard failed (naming the kernel, the case and the shortfall), a mismatch, a witness violation, a\n"
    "      result above the roofline, a CUDA error, a file that could not be written, or no usable GPU with\n"
    "      GW_REQUIRE_GPU=1\n"
    "   2  bad usage\n", stdout);
}

static const char *const tier_names[] = {"smoke", "small", "realistic", "full"};

/* A decimal integer in [lo, hi]. */
static int parse_int(const char *option, const char *text, long lo, long hi, long *out)
{
    unsigned long long v = 0;
    if (gw_cli_parse_u64(text, (unsigned long long)hi, &v) || (long)v < lo) {
        fprintf(stderr, "gpuwitness bench: %s '%s': must be an integer from %ld to %ld\n", option, text, lo, hi);
        return -1;
    }
    *out = (long)v;
    return 0;
}

/* A finite number > lo_exclusive and <= hi. */
static int parse_number(const char *option, const char *text, double lo_exclusive, double hi, const char *rule,
                        double *out)
{
    char *end = NULL;
    errno = 0;
    const double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v <= lo_exclusive || v > hi) {
        fprintf(stderr, "gpuwitness bench: %s '%s': %s\n", option, text, rule);
        return -1;
    }
    *out = v;
    return 0;
}

typedef struct bench_options {
    const char *device, *json, *dump_dir, *html, *baseline;
    uint64_t selected; /* bit k: gw_kernels[k] (the table has fewer than 64 kernels) */
    int any_selected;
    gw_bench_tier tier;
    long reps, cpu_reps;
    unsigned long long seed;
    double min_speedup, min_roofline; /* < 0: not requested */
    const char *trace;
    gw_trace_schedule schedule;
    const char *schedule_option; /* the first of --wait, --warmup, --active given, or NULL */
    int monitor;                 /* 1 unless --no-monitor */
} bench_options;

/* The options that take a value; set_option gives each its meaning. */
static const char *const value_options[] = {"--size", "--json", "--html", "--baseline", "--min-speedup",
                                            "--min-roofline", "--dump-inputs", "--device", "--reps", "--cpu-reps",
                                            "--seed", "--trace", "--wait", "--warmup", "--active"};

/* 0, or GW_EXIT_USAGE with the option and its rule printed. */
static int set_option(bench_options *o, const char *name, const char *v)
{
    if (!strcmp(name, "--size")) {
        for (int t = 0; t < 4; t++) {
            if (!strcmp(v, tier_names[t])) {
                o->tier = (gw_bench_tier)t;
                return 0;
            }
        }
        fprintf(stderr, "gpuwitness bench: --size '%s': must be smoke, small, realistic or full\n", v);
        return GW_EXIT_USAGE;
    }
    if (!strcmp(name, "--json")) {
        o->json = v;
        return 0;
    }
    if (!strcmp(name, "--html")) {
        o->html = v;
        return 0;
    }
    if (!strcmp(name, "--baseline")) {
        o->baseline = v;
        return 0;
    }
    if (!strcmp(name, "--dump-inputs")) {
        o->dump_dir = v;
        return 0;
    }
    if (!strcmp(name, "--min-speedup"))
        return parse_number(name, v, 0, 1e9, "must be a number greater than 0 (a factor, e.g. 10)", &o->min_speedup)
                   ? GW_EXIT_USAGE : 0;
    if (!strcmp(name, "--min-roofline"))
        return parse_number(name, v, 0, 100, "must be a percentage greater than 0 and at most 100", &o->min_roofline)
                   ? GW_EXIT_USAGE : 0;
    if (!strcmp(name, "--device")) {
        int ordinal;
        if (!gw_device_spec_parse(v, &ordinal)) {
            fprintf(stderr, "gpuwitness bench: --device '%s': must be one of cuda, cuda:N, cpu, auto\n", v);
            return GW_EXIT_USAGE;
        }
        o->device = v;
        return 0;
    }
    if (!strcmp(name, "--trace")) {
        o->trace = v;
        return 0;
    }
    long *count = !strcmp(name, "--wait") ? &o->schedule.wait : !strcmp(name, "--warmup") ? &o->schedule.warmup
                  : !strcmp(name, "--active") ? &o->schedule.active : NULL;
    if (count) { /* the rules and messages of `gpuwitness trace` */
        char msg[256];
        if (gw_trace_schedule_parse_count(name, v, count, msg, sizeof msg)) {
            fprintf(stderr, "gpuwitness bench: %s\n", msg);
            return GW_EXIT_USAGE;
        }
        if (!o->schedule_option) o->schedule_option = name;
        return 0;
    }
    if (!strcmp(name, "--reps")) return parse_int(name, v, 1, 100000, &o->reps) ? GW_EXIT_USAGE : 0;
    if (!strcmp(name, "--cpu-reps")) return parse_int(name, v, 1, 1000, &o->cpu_reps) ? GW_EXIT_USAGE : 0;
    /* --seed */
    unsigned long long seed = 0;
    if (gw_cli_parse_u64(v, ULLONG_MAX, &seed) == 0) o->seed = seed;
    else {
        fprintf(stderr, "gpuwitness bench: --seed '%s': must be a non-negative decimal integer below 2^64\n", v);
        return GW_EXIT_USAGE;
    }
    return 0;
}

/* A kernel name on the command line; 0 or GW_EXIT_USAGE (printed). */
static int select_kernel(bench_options *o, const char *name)
{
    const gw_kernel *k = gw_kernel_find(name);
    if (k) {
        o->selected |= 1ull << (k - gw_kernels);
        o->any_selected = 1;
        return 0;
    }
    fprintf(stderr, "gpuwitness bench: unknown kernel '%s': kernels are %s\n", name, gw_kernel_names());
    return GW_EXIT_USAGE;
}

/* GW_EXIT_OK, GW_EXIT_USAGE (message printed), or -1 for --help (printed). */
static int parse(int argc, char **argv, bench_options *o)
{
    memset(o, 0, sizeof *o);
    o->tier = GW_BENCH_REALISTIC;
    o->reps = GW_BENCH_METHOD_REPS;
    o->cpu_reps = 3;
    o->seed = 1;
    o->min_speedup = o->min_roofline = -1;
    o->schedule = GW_TRACE_SCHEDULE_DEFAULT;
    o->monitor = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            print_help();
            return -1;
        }
        if (gw_cli_monitor_option(argv[i], &o->monitor)) continue;
        int matched = 0;
        for (size_t j = 0; j < sizeof value_options / sizeof value_options[0] && !matched; j++) {
            const char *v = NULL;
            const int m = gw_cli_option(argc, argv, &i, "bench", value_options[j], &v);
            if (m < 0) return GW_EXIT_USAGE;
            if (m > 0 && set_option(o, value_options[j], v)) return GW_EXIT_USAGE;
            matched = m > 0;
        }
        if (matched) continue;
        if (argv[i][0] == '-') {
            fprintf(stderr, "gpuwitness bench: unknown option '%s': options are --size, --json, --min-speedup, "
                    "--min-roofline, --html, --baseline, --dump-inputs, --device, --reps, --cpu-reps, --seed, --trace, "
                    "--wait, --warmup, --active, --monitor, --no-monitor, --help\n", argv[i]);
            return GW_EXIT_USAGE;
        }
        if (select_kernel(o, argv[i])) return GW_EXIT_USAGE;
    }
    if (!o->any_selected)
        o->selected = ~0ull;
    const int guard = o->min_speedup >= 0 || o->min_roofline >= 0;
    if (guard && !strcmp(gw_cli_effective_device(o->device), "cpu")) {
        fprintf(stderr, "gpuwitness bench: --min-speedup and --min-roofline measure the GPU: they cannot be used "
                "with device cpu\n");
        return GW_EXIT_USAGE;
    }
    if (guard && gw_cli_emulated()) {
        fprintf(stderr, "gpuwitness bench: --min-speedup and --min-roofline measure a GPU: gpuwitness-emu times the "
                "CPU running the device code, which they cannot judge\n");
        return GW_EXIT_USAGE;
    }
    if (o->baseline && !o->html) {
        fprintf(stderr, "gpuwitness bench: --baseline: compares in the HTML report: it needs --html FILE\n");
        return GW_EXIT_USAGE;
    }
    char msg[256];
    if (o->schedule_option && !o->trace) {
        fprintf(stderr, "gpuwitness bench: %s: --wait, --warmup and --active choose the iterations of --trace: they "
                "need --trace FILE\n", o->schedule_option);
        return GW_EXIT_USAGE;
    }
    if (o->trace && gw_trace_schedule_check(&o->schedule, msg, sizeof msg)) {
        fprintf(stderr, "gpuwitness bench: %s\n", msg);
        return GW_EXIT_USAGE;
    }
    if (o->trace && !strcmp(gw_cli_effective_device(o->device), "cpu")) {
        fprintf(stderr, "gpuwitness bench: --trace with %s cpu: a trace records GPU activity; use cuda, cuda:N or "
                "auto\n", o->device ? "--device" : "GW_DEVICE");
        return GW_EXIT_USAGE;
    }
    return GW_EXIT_OK;
}

/* The output rule (gw_cli_files.h) over every file bench writes (--json, --html, --trace, --dump-inputs'
 * manifest) and the one it reads (--baseline), before any work. 0, or GW_EXIT_USAGE (printed). */
static int check_outputs(const bench_options *o, const char *manifest_path)
{
    gw_cli_file outs[4];
    size_t n = 0;
    if (o->json) outs[n++] = (gw_cli_file){"--json", o->json, NULL};
    if (o->html) outs[n++] = (gw_cli_file){"--html", o->html, NULL};
    if (o->trace) outs[n++] = (gw_cli_file){"--trace", o->trace, NULL};
    struct stat st; /* a --dump-inputs folder that does not exist yet is made later (prepare_dump_dir) */
    if (o->dump_dir && stat(o->dump_dir, &st) == 0 && S_ISDIR(st.st_mode))
        outs[n++] = (gw_cli_file){"--dump-inputs", manifest_path, NULL};
    const gw_cli_file baseline = {"--baseline", o->baseline, NULL};
    return gw_cli_check_outputs("gpuwitness bench", outs, n, &baseline, o->baseline ? 1 : 0) ? GW_EXIT_USAGE : 0;
}

/* --dump-inputs DIR exists as a directory afterwards (created when missing), or a usage error. */
static int prepare_dump_dir(const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gpuwitness bench: --dump-inputs '%s': cannot create the directory: %s\n", dir,
                strerror(errno));
        return GW_EXIT_USAGE;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gpuwitness bench: --dump-inputs '%s': exists and is not a directory\n", dir);
        return GW_EXIT_USAGE;
    }
    return GW_EXIT_OK;
}

/* The output files are opened before any work, so a path that cannot be written is a usage error, not a
 * loss at the end of a long run; they are renamed over their targets only once complete (gw_outfile.h). */
static int open_output(gw_outfile *f, const char *path, const char *option)
{
    char err[512];
    if (gw_outfile_open(f, path, err, sizeof err) == 0) return 0;
    fprintf(stderr, "gpuwitness bench: %s: %s\n", option, err);
    return -1;
}

/* Writes json into the staged file f and finishes it (the set is committed together); 0, or -1 (printed). */
static int stage_json(gw_outfile *f, const cJSON *json, const char *what)
{
    char err[512] = "out of memory formatting it";
    char *text = json ? cJSON_Print(json) : NULL;
    const int rc = !text || gw_outfile_write(f, text, strlen(text), err, sizeof err) ||
                   gw_outfile_write(f, "\n", 1, err, sizeof err) || gw_outfile_finish(f, err, sizeof err);
    if (rc) fprintf(stderr, "gpuwitness bench: writing the %s: %s\n", what, err);
    cJSON_free(text);
    return rc ? -1 : 0;
}

/* Runs bench/report.py on the document into the staged file f and finishes it; 0, or -1 (printed). The
 * baseline is read here, while every output of the run is still staged: no output of this run can be it. */
static int stage_html(gw_outfile *f, const gw_bench_html *h, const cJSON *doc, const char *baseline)
{
    char err[8192] = "out of memory formatting the JSON";
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    fflush(stdout); /* the script's own messages go to stderr, after ours */
    const int rc = !text || gw_bench_html_render(h, text, baseline, f->fd, err, sizeof err) ||
                   gw_outfile_finish(f, err, sizeof err);
    if (rc) fprintf(stderr, "gpuwitness bench: --html: %s\n", err);
    cJSON_free(text);
    return rc ? -1 : 0;
}

/* method.trace: null without --trace; else where, whether it was written, and why not. */
static cJSON *trace_json(const gw_bench_trace *tr)
{
    if (!tr->path) return cJSON_CreateNull();
    static const char *const status[] = {"skipped", "written", "skipped", "failed"}; /* pending: never reached */
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "path", tr->path);
    cJSON_AddStringToObject(t, "status", status[tr->status]);
    if (tr->traced[0]) cJSON_AddStringToObject(t, "case", tr->traced);
    else cJSON_AddNullToObject(t, "case");
    if (tr->reason[0]) cJSON_AddStringToObject(t, "reason", tr->reason);
    else cJSON_AddNullToObject(t, "reason");
    cJSON_AddNumberToObject(t, "wait", tr->schedule.wait);
    cJSON_AddNumberToObject(t, "warmup", tr->schedule.warmup);
    cJSON_AddNumberToObject(t, "active", tr->schedule.active);
    return t;
}

static cJSON *method_json(const gw_bench_run *run, const bench_options *o)
{
    cJSON *m = cJSON_CreateObject();
    cJSON *names = cJSON_CreateArray();
    for (size_t k = 0; k < gw_kernel_count; k++)
        if (o->selected >> k & 1u) cJSON_AddItemToArray(names, cJSON_CreateString(gw_kernels[k].info->name));
    cJSON_AddItemToObject(m, "kernels", names);
    cJSON_AddStringToObject(m, "size", run->tier_name);
    cJSON_AddNumberToObject(m, "seed", (double)run->seed);
    cJSON_AddNumberToObject(m, "reps", run->reps);
    cJSON_AddBoolToObject(m, "reps_below_method_minimum", run->reps < GW_BENCH_METHOD_REPS);
    cJSON_AddNumberToObject(m, "warmup", GW_BENCH_WARMUP);
    cJSON_AddNumberToObject(m, "cpu_reps", run->cpu_reps);
    cJSON_AddStringToObject(m, "statistic", "median of the repetitions, with min and max");
    cJSON_AddStringToObject(m, "gpu_timer", "cudaEventElapsedTime around the timed calls on one stream");
    cJSON_AddStringToObject(m, "cpu_timer", "CLOCK_MONOTONIC around each reference call");
    if (run->gpu) {
        cJSON_AddStringToObject(m, "l2_flush", "cudaMemsetAsync of twice the L2 size before every timed "
                                "repetition, outside the events");
        cJSON_AddNumberToObject(m, "l2_flush_bytes", (double)run->gpu->flush_bytes);
    } else {
        cJSON_AddStringToObject(m, "l2_flush", "none: the GPU part was skipped");
        cJSON_AddNullToObject(m, "l2_flush_bytes");
    }
    cJSON_AddItemToObject(m, "trace", trace_json(&run->trace));
    cJSON *mon = cJSON_CreateObject();
    const gw_cli_monitor_state st = run->monitor ? run->monitor->state : GW_CLI_MONITOR_OFF;
    cJSON_AddStringToObject(mon, "status", st == GW_CLI_MONITOR_ON ? "ok" : st == GW_CLI_MONITOR_OFF ? "off"
                                                                                                  : "unavailable");
    if (st == GW_CLI_MONITOR_UNAVAILABLE) cJSON_AddStringToObject(mon, "reason", run->monitor->reason);
    else cJSON_AddNullToObject(mon, "reason");
    cJSON_AddStringToObject(mon, "source", "NVML (dlopen libnvidia-ml.so.1), every 20 ms; device memory: our "
                            "cudaMalloc/cudaFree calls");
    cJSON_AddItemToObject(m, "monitor", mon);
    cJSON_AddStringToObject(m, "poison", "outputs filled with one of two poison patterns in turn before every "
                            "repetition, outside the events; compared with the CPU reference after every loop");
    return m;
}

static cJSON *roofline_json(const gw_bench_run *run)
{
    if (!run->gpu) return cJSON_CreateNull();
    cJSON *r = cJSON_CreateObject();
    cJSON *ms = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "implementation", "cudaMemcpyAsync device to device");
    cJSON_AddNumberToObject(r, "buffer_bytes", (double)run->roofline.buffer_bytes);
    cJSON_AddNumberToObject(r, "bytes_moved", 2.0 * (double)run->roofline.buffer_bytes);
    cJSON_AddNumberToObject(ms, "min", run->roofline.ms.min);
    cJSON_AddNumberToObject(ms, "median", run->roofline.ms.median);
    cJSON_AddNumberToObject(ms, "max", run->roofline.ms.max);
    cJSON_AddNumberToObject(ms, "reps", run->roofline.ms.count);
    cJSON_AddItemToObject(r, "time_ms", ms);
    cJSON_AddNumberToObject(r, "gbps", run->roofline.gbps);
    return r;
}

/* Resolves the device; fills run->gpu_skip_reason when the GPU part is skipped. Returns 0, GW_EXIT_SKIP
 * (an explicit cuda device is missing), or GW_EXIT_USAGE / GW_EXIT_FAIL (printed). */
static int select_device(const bench_options *o, gw_device_choice *dev, gw_bench_run *run)
{
    const int sel = gw_cli_select_device("bench", o->device, dev);
    if (sel == GW_EXIT_USAGE || sel == GW_EXIT_FAIL) return sel;
    if (sel == GW_EXIT_SKIP || dev->fell_back)
        snprintf(run->gpu_skip_reason, sizeof run->gpu_skip_reason, "no usable GPU: %s", dev->reason);
    else if (dev->kind != GW_DEVICE_CUDA)
        snprintf(run->gpu_skip_reason, sizeof run->gpu_skip_reason, "--device cpu");
    if (run->gpu_skip_reason[0])
        fprintf(stderr, "gpuwitness bench: GPU part skipped (%s): timing the CPU reference only\n",
                run->gpu_skip_reason);
    return sel;
}

/* The GPU context and the roofline; 0, or -1 (printed). run->gpu is set once the context is open. */
static int open_gpu(gw_bench_run *run, gw_bench_gpu *gpu, int ordinal)
{
    char err[512];
    if (gw_bench_gpu_open(gpu, ordinal, err, sizeof err)) {
        fprintf(stderr, "gpuwitness bench: cuda:%d: %s\n", ordinal, err);
        return -1;
    }
    run->gpu = gpu;
    printf("bench: %s part runs on cuda:%d (%s, compute capability %d.%d, %d SMs)\n",
           gpu->facts.emulated ? "emulated device" : "GPU", gpu->ordinal, gpu->facts.name, gpu->facts.cc_major, gpu->facts.cc_minor, gpu->facts.sm_count);
    gw_bench_progress(run, "copy roofline: device-to-device cudaMemcpyAsync, repetitions: %d", run->reps);
    if (gw_bench_gpu_roofline(gpu, run->reps, &run->roofline, err, sizeof err)) {
        fprintf(stderr, "gpuwitness bench: measuring the copy roofline: %s\n", err);
        return -1;
    }
    printf("bench: copy roofline %.1f GB/s (cudaMemcpyAsync device to device, %zu MiB, read + write)%s\n",
           run->roofline.gbps, run->roofline.buffer_bytes >> 20, gw_cli_emulated_note());
    return 0;
}

/* The table and the guard after the cases; 0, or 1 when the guard failed or memory ran out. */
static int report(gw_bench_run *run, const bench_options *o, cJSON **guard)
{
    int guard_failed = 0;
    gw_bench_print_table(run);
    *guard = gw_bench_guard(run, o->min_speedup, o->min_roofline, &guard_failed);
    if (!*guard) {
        fprintf(stderr, "gpuwitness bench: out of memory\n");
        return 1;
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(*guard, "failures"))
        fprintf(stderr, "gpuwitness bench: guard FAILED: %s\n", f->valuestring);
    return guard_failed;
}

static cJSON *document(gw_bench_run *run, const bench_options *o, cJSON *guard, int failed)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    cJSON_AddStringToObject(doc, "schema", "gpuwitness-bench/1");
    if (run->gpu && run->gpu->facts.emulated) /* report.py says so above every chart (docs/emu.md, "The CLI") */
        cJSON_AddStringToObject(doc, "emulated", "gpuwitness-emu ran the device code on gpuwitness' emulated "
                                "device, on the CPU: every device time, rate and speedup is of the CPU, none a GPU "
                                "figure");
    cJSON_AddItemToObject(doc, "environment", gw_bench_environment(run));
    cJSON_AddItemToObject(doc, "method", method_json(run, o));
    cJSON_AddItemToObject(doc, "roofline", roofline_json(run));
    cJSON_AddItemReferenceToObject(doc, "measurements", run->measurements);
    if (guard) cJSON_AddItemReferenceToObject(doc, "guard", guard);
    else cJSON_AddNullToObject(doc, "guard"); /* the run stopped before the guard */
    cJSON_AddStringToObject(doc, "result", failed ? "failed" : run->gpu ? "ok" : "gpu_skipped");
    return doc;
}

static cJSON *manifest(gw_bench_run *run)
{
    cJSON *m = cJSON_CreateObject();
    if (!m) return NULL;
    cJSON_AddStringToObject(m, "schema", "gpuwitness-bench-inputs/1");
    cJSON_AddStringToObject(m, "size", run->tier_name);
    cJSON_AddNumberToObject(m, "seed", (double)run->seed);
    cJSON_AddItemReferenceToObject(m, "cases", run->dumped);
    return m;
}

/* Stages the JSON, the page and the manifest that were asked for and commits them as one set: all of them
 * or none (gw_outfile_commit_all). 0, or -1 (printed, nothing written). */
static int write_outputs(const bench_options *o, gw_bench_run *run, cJSON *guard, int failed, const gw_bench_html *h,
                         gw_outfile *json_file, gw_outfile *html_file, gw_outfile *manifest_file)
{
    int rc = 0;
    if (o->json || o->html) {
        cJSON *doc = document(run, o, guard, failed);
        if (o->json && stage_json(json_file, doc, "--json file")) rc = -1;
        if (!rc && o->html && stage_html(html_file, h, doc, o->baseline)) rc = -1;
        cJSON_Delete(doc);
    }
    if (!rc && o->dump_dir) {
        cJSON *m = manifest(run);
        if (stage_json(manifest_file, m, "--dump-inputs manifest")) rc = -1;
        cJSON_Delete(m);
    }
    gw_outfile set[3]; /* the set takes the staged files over */
    size_t n = 0;
    gw_outfile *const staged[3] = {o->json ? json_file : NULL, o->html ? html_file : NULL,
                                   o->dump_dir ? manifest_file : NULL};
    for (int i = 0; i < 3; i++) {
        if (!staged[i]) continue;
        set[n++] = *staged[i];
        *staged[i] = (gw_outfile)GW_OUTFILE_INIT;
    }
    char err[1024];
    if (!rc && n && gw_outfile_commit_all(set, n, err, sizeof err)) {
        fprintf(stderr, "gpuwitness bench: %s\n", err);
        rc = -1;
    }
    if (rc) {
        for (size_t i = 0; i < n; i++) gw_outfile_discard(&set[i]);
        fprintf(stderr, "gpuwitness bench: no output written (the outputs are written all together or not at "
                "all)\n");
    } else {
        if (o->json) printf("bench: wrote %s (JSON)\n", o->json);
        if (o->html) printf("bench: wrote %s (HTML report)\n", o->html);
    }
    return rc;
}

int gw_cmd_bench(int argc, char **argv)
{
    bench_options o;
    const int parsed = parse(argc, argv, &o);
    if (parsed < 0) return GW_EXIT_OK; /* --help */
    if (parsed != GW_EXIT_OK) return parsed;
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", o.dump_dir ? o.dump_dir : ".");
    if (check_outputs(&o, path)) return GW_EXIT_USAGE;

    gw_bench_run run;
    memset(&run, 0, sizeof run);
    run.tier = o.tier;
    run.tier_name = tier_names[o.tier];
    run.reps = (int)o.reps;
    run.cpu_reps = (int)o.cpu_reps;
    run.seed = o.seed;
    run.dump_dir = o.dump_dir;
    run.t0_ms = gw_cli_now_ms();
    run.trace.path = o.trace;
    run.trace.schedule = o.schedule;
    gw_device_choice dev;
    const int sel = select_device(&o, &dev, &run);
    if (sel == GW_EXIT_USAGE || sel == GW_EXIT_FAIL) return sel;
    /* A page that cannot be made must fail before a long run, before anything is created. */
    gw_bench_html html = {{0}, {0}};
    char html_err[2048];
    if (o.html && gw_bench_html_prepare(&html, html_err, sizeof html_err)) {
        fprintf(stderr, "gpuwitness bench: %s; nothing written\n", html_err);
        return GW_EXIT_FAIL;
    }
    /* the report's own checks of the baseline, now rather than after the run */
    if (o.baseline && gw_bench_html_check(&html, o.baseline, html_err, sizeof html_err)) {
        fprintf(stderr, "gpuwitness bench: --baseline %s: %s; nothing run, nothing written\n", o.baseline, html_err);
        return GW_EXIT_FAIL;
    }
    gw_outfile json_file = GW_OUTFILE_INIT, manifest_file = GW_OUTFILE_INIT, html_file = GW_OUTFILE_INIT;
    if ((o.json && open_output(&json_file, o.json, "--json")) ||
        (o.html && open_output(&html_file, o.html, "--html")) ||
        (o.dump_dir && (prepare_dump_dir(o.dump_dir) || open_output(&manifest_file, path, "--dump-inputs")))) {
        gw_outfile_discard(&json_file);
        gw_outfile_discard(&html_file);
        gw_outfile_discard(&manifest_file);
        return GW_EXIT_USAGE;
    }

    if (run.reps < GW_BENCH_METHOD_REPS)
        fprintf(stderr, "gpuwitness bench: --reps %d is below the method's %d repetitions: a smoke run, not a "
                "measurement\n", run.reps, GW_BENCH_METHOD_REPS);

    gw_bench_gpu gpu;
    int failed = 0;
    run.measurements = cJSON_CreateArray();
    run.dumped = cJSON_CreateArray();
    if (!run.measurements || !run.dumped) {
        fprintf(stderr, "gpuwitness bench: out of memory\n");
        failed = 1;
    } else if (sel == 0 && dev.kind == GW_DEVICE_CUDA) {
        failed = open_gpu(&run, &gpu, dev.ordinal) != 0;
    } else {
        printf("bench: GPU part skipped (%s); CPU reference only\n", run.gpu_skip_reason);
    }
    gw_cli_monitor mon;
    gw_cli_monitor_begin(&mon, "bench", o.monitor && !failed, run.gpu ? run.gpu->ordinal : -1);
    run.monitor = &mon;
    run.monitor_mark_us = gw_monitor_now_us();
    for (size_t k = 0; k < gw_kernel_count && !failed; k++)
        if ((o.selected >> k & 1u) && gw_kernels[k].bench(&run)) failed = 1;
    gw_cli_monitor_end(&mon); /* run.monitor keeps the state and reason for the method block */
    cJSON *guard = NULL;
    if (!failed) failed = report(&run, &o, &guard);
    if (run.failures) failed = 1;
    gw_bench_trace *tr = &run.trace;
    if (tr->path && tr->status == GW_BENCH_TRACE_PENDING) {
        tr->status = GW_BENCH_TRACE_SKIPPED;
        snprintf(tr->reason, sizeof tr->reason, "%s", run.gpu ? "no GPU case ran to the end" : run.gpu_skip_reason);
    }
    if (tr->status == GW_BENCH_TRACE_SKIPPED)
        fprintf(stderr, "gpuwitness bench: --trace skipped: %s; %s not written\n", tr->reason, tr->path);
    if (tr->status == GW_BENCH_TRACE_FAILED) {
        fprintf(stderr, "gpuwitness bench: --trace FAILED: %s; %s not written\n", tr->reason, tr->path);
        failed = 1;
    }

    if (write_outputs(&o, &run, guard, failed, &html, &json_file, &html_file, &manifest_file)) failed = 1;
    cJSON_Delete(guard);
    cJSON_Delete(run.measurements);
    cJSON_Delete(run.dumped);
    char err[512];
    if (run.gpu && gw_bench_gpu_close(run.gpu, err, sizeof err)) {
        fprintf(stderr, "gpuwitness bench: %s\n", err);
        failed = 1;
    }
    if (failed) {
        printf("bench: FAILED%s\n", run.failures ? ": see the FAILED lines above" : "");
        return GW_EXIT_FAIL;
    }
    const int guard_requested = o.min_speedup >= 0 || o.min_roofline >= 0;
    if (!run.gpu && (guard_requested || sel == GW_EXIT_SKIP)) {
        printf("bench: GPU part skipped (exit 77): %s; the CPU reference was timed\n", run.gpu_skip_reason);
        return GW_EXIT_SKIP;
    }
    if (tr->status == GW_BENCH_TRACE_SKIPPED) { /* a requested output is missing: skipped, never passed */
        printf("bench: trace skipped (exit 77): %s; the benchmark itself ran\n", tr->reason);
        return GW_EXIT_SKIP;
    }
    printf("bench: ok%s\n", !run.gpu ? " on the CPU only (the GPU part was skipped)"
                           : run.gpu->facts.emulated ? " on the EMULATED device: every loop ran, its outputs equal to the "
                                                       "reference, its witness good; no time above is a GPU figure (GPU "
                                                       "path not executed)" : "");
    return GW_EXIT_OK;
}
