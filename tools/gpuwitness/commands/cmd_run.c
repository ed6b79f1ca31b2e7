/* SPDX-License-Identifier: MIT
 * gpuwitness run KERNEL ...: finds the kernel's name among the arguments and hands the rest to the kernel's
 * run hook (gw_kernel.h). Options may come before the name ("run --device cpu focus_stack ...").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_cli_monitor.h"
#include "gw_commands.h"
#include "gw_kernel.h"

static void print_help(void)
{
    fputs("usage: gpuwitness run KERNEL [OPTIONS...] INPUTS...\n"
          "\n"
          "Applies one kernel to files: on the GPU, with the result compared with the CPU reference and the\n"
          "witness checked before anything is written; on the CPU (--device cpu, or auto without a GPU, said on\n"
          "stderr) the reference computes it. KERNEL is a kernel's name; hyphens may stand for underscores.\n"
          "\n", stdout);
    for (size_t k = 0; k < gw_kernel_count; k++) printf("%s\n\n", gw_kernels[k].info->run_usage);
    fputs("--monitor (any kernel): sample GPU utilisation, memory, clocks, power and throttling with NVML every\n"
          "20 ms while the kernel runs and print them after it, with our own device memory high-water\n"
          "(docs/monitor.md); --no-monitor: off (the default).\n\n"
          "Run 'gpuwitness run KERNEL --help' for the kernel's options and exit status.\n", stdout);
}

/* 1 when a is an option of some kernel's run that takes its value in the next argument. */
static int takes_value(const char *a)
{
    if (!strcmp(a, "--device")) return 1;
    for (size_t k = 0; k < gw_kernel_count; k++)
        for (const char *const *o = gw_kernels[k].info->run_value_options; o && *o; o++)
            if (!strcmp(a, *o)) return 1;
    return 0;
}

/* The index of the kernel's name: the first argument that is neither an option nor an option's value.
 * 0 when there is none. */
static int find_kernel(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) return i + 1 < argc ? i + 1 : 0;
        if (a[0] != '-' || !a[1]) return i;
        if (takes_value(a)) i++; /* "--name VALUE": skip the value ("--name=VALUE" is one argument) */
    }
    return 0;
}

int gw_cmd_run(int argc, char **argv)
{
    const int at = find_kernel(argc, argv);
    if (!at) {
        for (int i = 1; i < argc; i++) {
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                print_help();
                return GW_EXIT_OK;
            }
        }
        fprintf(stderr, "gpuwitness run: missing KERNEL: one of %s (see gpuwitness run --help)\n", gw_kernel_names());
        return GW_EXIT_USAGE;
    }
    const gw_kernel *k = gw_kernel_find(argv[at]);
    if (!k) {
        fprintf(stderr, "gpuwitness run: unknown kernel '%s': kernels are %s\n", argv[at], gw_kernel_names());
        return GW_EXIT_USAGE;
    }
    /* The kernel's argv: its name first, then every other argument in order. */
    char **sub = calloc((size_t)argc + 1, sizeof *sub);
    if (!sub) {
        fprintf(stderr, "gpuwitness run: out of memory\n");
        return GW_EXIT_FAIL;
    }
    /* --monitor belongs to the command, not to the kernel: taken out of the kernel's argv, wherever it is. */
    int n = 0, monitor = 0, ordinal = -1;
    sub[n++] = argv[at];
    int options = 1; /* until "--": after it every argument is an input */
    for (int i = 1; i < argc; i++) {
        if (i == at) continue;
        if (!strcmp(argv[i], "--")) options = 0;
        if (options && gw_cli_monitor_option(argv[i], &monitor)) continue;
        if (!strcmp(argv[i], "--device") && i + 1 < argc && !strncmp(argv[i + 1], "cuda:", 5))
            ordinal = atoi(argv[i + 1] + 5);
        sub[n++] = argv[i];
    }
    int help = 0;
    for (int i = 1; i < n; i++) help |= !strcmp(sub[i], "--help") || !strcmp(sub[i], "-h");
    gw_cli_monitor mon;
    gw_cli_monitor_begin(&mon, "run", monitor && !help, ordinal);
    const uint64_t t0 = gw_monitor_now_us();
    const int rc = k->run(n, sub);
    const uint64_t t1 = gw_monitor_now_us();
    if (monitor && !help) {
        if (mon.state == GW_CLI_MONITOR_ON) gw_monitor_wait_past(mon.m, t1, 1500);
        gw_monitor_summary s;
        gw_cli_monitor_summary(&mon, t0, t1, &s);
        uint64_t peak = 0, allocs = 0;
        gw_devmem_window(t0, t1, &peak, &allocs);
        char line[1024];
        gw_cli_monitor_text(&mon, &s, peak, allocs, line, sizeof line);
        printf("gpuwitness run %s: monitor: %s\n", k->info->name, line);
    }
    gw_cli_monitor_end(&mon);
    free(sub);
    return rc;
}
