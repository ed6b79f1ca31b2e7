/* SPDX-License-Identifier: MIT
 * gpuwitness trace: a Chrome trace of one kernel's CLI host path (upload, launch, download), iterations
 * chosen by --wait/--warmup/--active, with each recorded iteration checked against its ledger budget.
 * The recording is CUPTI's (gw_trace.h); without a GPU, or when CUPTI is held by another tool, nothing
 * is traced, nothing is written, and the exit status is 77: skipped, never passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_build_info.h"
#include "gw_commands.h"
#include "gw_kernel.h"
#include "gw_outfile.h"
#include "gw_trace.h"


static void print_help(void)
{
    fputs("usage: gpuwitness trace KERNEL [--out FILE] [--wait N] [--warmup N] [--active N] [--device cuda|cuda:N|auto]\n"
    "\n"
    "Runs KERNEL's host path (upload, launch, download: what `run` and `check` use) on check --size small's\n"
    "problem, once per iteration, each call compared with the CPU reference and its witness checked. CUPTI\n"
    "records the device's kernels and copies; the active iterations are written as a Chrome trace event\n"
    "file (kernels, copies with their bytes, and the NVTX ranges of the host stages as spans) that opens in\n"
    "https://ui.perfetto.dev and chrome://tracing. Every recorded iteration is also checked against the\n"
    "call's ledger budget: the expected kernels once each, exactly the expected copies, nothing else.\n"
    "\n", stdout);
    fputs("KERNEL is one of:\n", stdout);
    for (size_t k = 0; k < gw_kernel_count; k++)
        gw_kernel_print_paragraph(stdout, gw_kernels[k].info->name, gw_kernels[k].info->trace_help);
    fputs("\n"
    "options:\n"
    "  --out FILE   the trace (default trace.json); written to a temporary file and renamed when complete\n"
    "  --wait N     iterations run first without recording (default 0)\n"
    "  --warmup N   iterations recorded then discarded: CUPTI's start-up cost lands there (default 1)\n"
    "  --active N   iterations written to the trace, at least 1 (default 3); at most 10000 in all\n"
    "  --device D   cuda, cuda:N or auto (default: $GW_DEVICE, else auto); cpu has nothing to trace\n"
    "  -h, --help   this text\n"
    "\n"
    "The host stages are NVTX3 ranges (grid_d4/upload, grid_d4/launch, ..., <kernel>/reference), so Nsight\n"
    "Systems shows the same names; the trace times them on the host with CUPTI's clock while recording.\n"
    "\n"
    "exit status:\n"
    "   0  traced: every call matched the reference, its witness and its ledger budget; FILE written\n"
    "  77  skipped, nothing written: no usable GPU (and GW_REQUIRE_GPU is not 1), or CUPTI unavailable (held\n"
    "      by compute-sanitizer, Nsight Systems or Nsight Compute, or no driver); the reason is on stderr\n"
    "   1  a call failed, differed from the reference or its witness; a ledger violation (FILE is still\n"
    "      written: it shows the violation); a write error; or no GPU under GW_REQUIRE_GPU=1\n"
    "   2  bad usage\n", stdout);
}

typedef struct trace_options {
    const char *kernel, *out, *device;
    const gw_kernel *k;
    gw_trace_schedule schedule;
} trace_options;

/* 0 to go on (*done set when --help was printed), or GW_EXIT_USAGE with the error printed. */
static int parse(int argc, char **argv, trace_options *o, int *done)
{
    *done = 0;
    o->kernel = NULL, o->out = "trace.json", o->device = NULL;
    o->schedule = GW_TRACE_SCHEDULE_DEFAULT;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        char msg[256];
        int m;
        long *count = NULL;
        const char *count_option = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            print_help();
            *done = 1;
            return GW_EXIT_OK;
        }
        if ((m = gw_cli_option(argc, argv, &i, "trace", "--out", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            o->out = v;
        } else if ((m = gw_cli_option(argc, argv, &i, "trace", "--device", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            o->device = v;
        } else if ((m = gw_cli_option(argc, argv, &i, "trace", "--wait", &v)) != 0) {
            count = &o->schedule.wait, count_option = "--wait";
        } else if ((m = gw_cli_option(argc, argv, &i, "trace", "--warmup", &v)) != 0) {
            count = &o->schedule.warmup, count_option = "--warmup";
        } else if ((m = gw_cli_option(argc, argv, &i, "trace", "--active", &v)) != 0) {
            count = &o->schedule.active, count_option = "--active";
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "gpuwitness trace: unknown option '%s': options are --out, --wait, --warmup, --active, "
                    "--device, --help\n", argv[i]);
            return GW_EXIT_USAGE;
        } else if (o->kernel) {
            fprintf(stderr, "gpuwitness trace: unexpected argument '%s': trace takes one KERNEL ('%s' given)\n",
                    argv[i], o->kernel);
            return GW_EXIT_USAGE;
        } else {
            o->kernel = argv[i];
        }
        if (count) {
            if (m < 0) return GW_EXIT_USAGE;
            if (gw_trace_schedule_parse_count(count_option, v, count, msg, sizeof msg)) {
                fprintf(stderr, "gpuwitness trace: %s\n", msg);
                return GW_EXIT_USAGE;
            }
        }
    }
    char msg[256];
    if (!o->kernel) {
        fprintf(stderr, "gpuwitness trace: missing KERNEL: one of %s (see gpuwitness trace --help)\n",
                gw_kernel_names());
        return GW_EXIT_USAGE;
    }
    if (!(o->k = gw_kernel_find(o->kernel))) {
        fprintf(stderr, "gpuwitness trace: unknown KERNEL '%s': one of %s\n", o->kernel, gw_kernel_names());
        return GW_EXIT_USAGE;
    }
    if (gw_trace_schedule_check(&o->schedule, msg, sizeof msg)) {
        fprintf(stderr, "gpuwitness trace: %s\n", msg);
        return GW_EXIT_USAGE;
    }
    const char *effective = gw_cli_effective_device(o->device);
    if (!strcmp(effective, "cpu")) {
        fprintf(stderr, "gpuwitness trace: %s cpu: a trace records GPU activity; use cuda, cuda:N or auto\n",
                o->device ? "--device" : "GW_DEVICE");
        return GW_EXIT_USAGE;
    }
    return 0;
}

/* The recorded iterations against the budget, one line each; the number of iterations that broke it. */
static int check_ledgers(const gw_trace *t, const gw_trace_work *w)
{
    const long first = t->schedule.wait, last = gw_trace_schedule_iterations(&t->schedule) - 1;
    int broken = 0;
    for (long it = first; it <= last; it++) {
        gw_activity_log one = {0};
        char msg[4096], receipt[512];
        const int oom = gw_trace_select(t, it, it, &one);
        const int violations = oom ? 1 : gw_ledger_check(&one, &w->budget, msg, sizeof msg);
        gw_ledger_format(&one, receipt, sizeof receipt);
        gw_activity_log_free(&one);
        const char *phase = gw_trace_schedule_phase(&t->schedule, it) == GW_TRACE_WARMUP ? "warmup" : "active";
        if (oom) snprintf(msg, sizeof msg, "out of memory selecting the records\n");
        printf("  iteration %ld (%s): %s: %s\n", it, phase, violations ? "VIOLATION" : "ok", receipt);
        if (!violations) continue;
        broken++;
        for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) printf("    ledger: %s\n", line);
    }
    return broken;
}

/* Fails early (exit 1) when FILE cannot be created: a temporary file is made beside it and removed. */
static int out_writable(const char *path)
{
    gw_outfile f = GW_OUTFILE_INIT;
    char err[512];
    const int rc = gw_outfile_open(&f, path, err, sizeof err);
    gw_outfile_discard(&f);
    if (rc) fprintf(stderr, "gpuwitness trace: --out: %s\n", err);
    return rc == 0;
}

/* gpuwitness-emu: the traced work runs as on a GPU (its set-up, then every iteration of the schedule: the host
 * path's call, the comparison with the reference and the witness), on the emulated device. CUPTI records a GPU's
 * kernels and copies, and that device has none, so nothing is traced or written: exit 77, or 1 when the work
 * failed. The ledger budget, which only CUPTI's records can check, is not. */
static int trace_emulated(const trace_options *o, int ordinal)
{
    char err[1024];
    gw_trace_work w;
    memset(&w, 0, sizeof w);
    const long iterations = gw_trace_schedule_iterations(&o->schedule);
    int failed = o->k->trace(&w, ordinal, err, sizeof err) != 0;
    if (failed)
        fprintf(stderr, "gpuwitness trace: %s on cuda:%d: %s\n", o->k->info->name, ordinal, err);
    else
        printf("gpuwitness trace: %s on cuda:%d%s\n", w.description, ordinal, gw_cli_emulated_note());
    for (long it = 0; it < iterations && !failed; it++)
        if (w.iterate(&w, err, sizeof err)) {
            fprintf(stderr, "gpuwitness trace: iteration %ld: %s\n", it, err);
            failed = 1;
        }
    gw_trace_work_free(&w);
    if (failed) {
        printf("trace: FAILED (see stderr); %s not written\n", o->out);
        return GW_EXIT_FAIL;
    }
    printf("  %ld iterations ran, each equal to the reference, its witness checked%s\n", iterations,
           gw_cli_emulated_note());
    fprintf(stderr, "gpuwitness trace: skipped: gpuwitness-emu: CUPTI records a GPU's kernels and copies, and the "
            "emulated device has none; nothing traced, %s not written\n", o->out);
    return GW_EXIT_SKIP;
}

int gw_cmd_trace(int argc, char **argv)
{
    trace_options o;
    int done;
    const int usage = parse(argc, argv, &o, &done);
    if (usage || done) return usage;
    if (!out_writable(o.out)) return GW_EXIT_FAIL;

    gw_device_choice dev;
    const int sel = gw_cli_select_device("trace", o.device, &dev);
    if (sel == GW_EXIT_USAGE || sel == GW_EXIT_FAIL) return sel;
    if (sel == GW_EXIT_SKIP || dev.kind != GW_DEVICE_CUDA) {
        fprintf(stderr, "gpuwitness trace: skipped: no usable GPU: %s; nothing traced, %s not written\n", dev.reason,
                o.out);
        return GW_EXIT_SKIP;
    }

    /* not CUPTI, even where a driver would let it start (a GPU runner's emu tier): it would record nothing */
    if (gw_cli_emulated()) return trace_emulated(&o, dev.ordinal);
    char err[1024];
    gw_trace_work w;
    memset(&w, 0, sizeof w);
    if (o.k->trace(&w, dev.ordinal, err, sizeof err)) {
        gw_trace_work_free(&w);
        fprintf(stderr, "gpuwitness trace: %s on cuda:%d: %s\n", o.k->info->name, dev.ordinal, err);
        return GW_EXIT_FAIL;
    }
    const gw_trace_schedule *s = &o.schedule;
    printf("gpuwitness trace: %s on cuda:%d\n", w.description, dev.ordinal);
    printf("  schedule: wait %ld, warmup %ld, active %ld (iterations %ld..%ld written)\n", s->wait, s->warmup,
           s->active, s->wait + s->warmup, gw_trace_schedule_iterations(s) - 1);

    gw_trace t;
    const gw_ledger_status started = gw_trace_start(&t, s, err, sizeof err);
    if (started != GW_LEDGER_OK) {
        gw_trace_work_free(&w);
        if (started == GW_LEDGER_UNAVAILABLE) {
            fprintf(stderr, "gpuwitness trace: skipped: CUPTI unavailable: %s; nothing traced, %s not written\n", err,
                    o.out);
            return GW_EXIT_SKIP;
        }
        fprintf(stderr, "gpuwitness trace: %s\n", err);
        return GW_EXIT_FAIL;
    }
    int failed = 0;
    for (long it = 0; it < gw_trace_schedule_iterations(s) && !failed; it++) {
        if (w.iterate(&w, err, sizeof err)) {
            fprintf(stderr, "gpuwitness trace: iteration %ld: %s\n", it, err);
            failed = 1;
        } else if (gw_trace_step(&t, err, sizeof err) != GW_LEDGER_OK) {
            fprintf(stderr, "gpuwitness trace: iteration %ld: %s\n", it, err);
            failed = 1;
        }
    }
    if (failed) {
        gw_trace_free(&t);
        gw_trace_work_free(&w);
        printf("trace: FAILED (see stderr); %s not written\n", o.out);
        return GW_EXIT_FAIL;
    }

    const int broken = check_ledgers(&t, &w);
    char schedule[96], tool[64];
    snprintf(schedule, sizeof schedule, "wait=%ld warmup=%ld active=%ld", s->wait, s->warmup, s->active);
    snprintf(tool, sizeof tool, "gpuwitness %s", GW_VERSION);
    const gw_trace_info info = {
        .tool = tool, .traced = w.description, .schedule = schedule, .host_pid = (long)getpid()};
    size_t written = 0;
    const gw_ledger_status wrote = gw_trace_write(&t, o.out, &info, &written, err, sizeof err);
    gw_trace_free(&t);
    gw_trace_work_free(&w);
    if (wrote != GW_LEDGER_OK) {
        fprintf(stderr, "gpuwitness trace: %s\n", err);
        return GW_EXIT_FAIL;
    }
    printf("  wrote %s: %zu events (kernels, copies, NVTX ranges); open it in https://ui.perfetto.dev or "
           "chrome://tracing\n", o.out, written);
    if (broken) {
        printf("trace: FAILED: %d recorded iteration(s) broke the ledger budget (the trace shows them)\n", broken);
        return GW_EXIT_FAIL;
    }
    printf("trace: ok: every call matched the reference, its witness and its ledger budget\n");
    return GW_EXIT_OK;
}
