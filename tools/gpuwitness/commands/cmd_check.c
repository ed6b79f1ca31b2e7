/* SPDX-License-Identifier: MIT
 * gpuwitness check: every kernel of the table on its built-in problem, on the selected device, compared with
 * the CPU reference, with the witness checked. Without a GPU the CPU part still runs (reference against its
 * multithreaded twin, with timings) and the GPU part is reported skipped, never passed.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_cli_monitor.h"
#include "gw_commands.h"
#include "gw_kernel.h"

static void print_help(void)
{
    fputs("usage: gpuwitness check [--device cuda|cuda:N|cpu|auto] [--size small|realistic] [--seed N] [--monitor]\n"
          "\n"
          "Runs every kernel on a built-in problem and compares the GPU result with the CPU reference,\n"
          "outputs poisoned before every GPU call (0xFF, then 0x5A on a second call), and checks the witness record\n"
          "(launches=1, items = cells written, code compiled for this GPU's architecture). Prints per kernel the\n"
          "problem size, the device, the times (CPU reference single- and multi-threaded, GPU including transfers)\n"
          "and the result.\n"
          "\n", stdout);
    for (size_t k = 0; k < gw_kernel_count; k++)
        gw_kernel_print_paragraph(stdout, gw_kernels[k].info->name, gw_kernels[k].info->check_help);
    fputs("\n"
          "options:\n"
          "  --device D   cuda, cuda:N, cpu or auto (default: $GW_DEVICE, else auto)\n"
          "  --size S     small or realistic (default realistic)\n"
          "  --seed N     seed of the built-in problem (default 1); the same seed gives the same problem everywhere\n"
          "  --monitor    sample GPU utilisation, memory, clocks, power and throttling with NVML every 20 ms and\n"
          "               report them per kernel, with our own device memory high-water (docs/monitor.md); a\n"
          "               kernel whose witness says it ran while the GPU showed no activity is reported, not\n"
          "               failed. --no-monitor: off (the default)\n"
          "  -h, --help   this text\n"
          "\n"
          "exit status:\n"
          "   0  every kernel ran on the GPU, matched the reference and has a good witness;\n"
          "      with --device cpu: the CPU part ran and agreed (the GPU was not exercised, and this says so)\n"
          "  77  GPU part skipped: no usable GPU (auto, or cuda / cuda:N) and GW_REQUIRE_GPU is not 1;\n"
          "      the reason is on stderr and the CPU part still ran\n"
          "   1  mismatch, witness violation, CUDA error, or no usable GPU with GW_REQUIRE_GPU=1\n"
          "   2  bad usage\n", stdout);
}

/* --monitor: one dmon-like line per kernel (its check hook's calls), after every kernel ran and the driver's
 * utilisation samples reached past the last one, so each window can be judged. A kernel that the witness
 * says ran on the GPU while NVML saw no activity is reported; short calls fall between samples, so that
 * is judged only where the driver's samples cover the whole window (docs/monitor.md, "No activity"). */
static void report_monitor(const gw_cli_monitor *mon, const uint64_t *window, const int *kernel_failures, int gpu)
{
    const size_t n = gw_kernel_count < 16 ? gw_kernel_count : 16;
    if (mon->state == GW_CLI_MONITOR_ON && n) gw_monitor_wait_past(mon->m, window[2 * n - 1], 1500);
    if (mon->state == GW_CLI_MONITOR_ON)
        printf("monitor (NVML every %u ms; device memory: our cudaMalloc calls):\n", gw_monitor_period_ms(mon->m));
    else
        printf("monitor (NVML unavailable: %s; device memory: our cudaMalloc calls):\n", mon->reason);
    for (size_t k = 0; k < n; k++) {
        gw_monitor_summary s;
        gw_cli_monitor_summary(mon, window[2 * k], window[2 * k + 1], &s);
        uint64_t peak = 0, allocs = 0;
        gw_devmem_window(window[2 * k], window[2 * k + 1], &peak, &allocs);
        char line[1024];
        gw_cli_monitor_text(mon, &s, peak, allocs, line, sizeof line);
        printf("  %-12s %s\n", gw_kernels[k].info->name, line);
        if (gpu && !kernel_failures[k] && s.activity == GW_MONITOR_ACTIVITY_NONE)
            printf("  %-12s note: the witness says the GPU ran it, but NVML showed no SM activity during its calls "
                   "(%d driver samples covering %.1f ms, all 0%%): not a failure, worth a look\n",
                   gw_kernels[k].info->name, s.driver_samples, s.window_ms);
    }
    char why[256];
    if (gw_monitor_lost(mon->m, why, sizeof why))
        printf("  NVML lost the device during the run: %s; samples stop there\n", why);
}

int gw_cmd_check(int argc, char **argv)
{
    const char *device = NULL, *size = "realistic", *seed_text = NULL;
    int monitor = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            print_help();
            return GW_EXIT_OK;
        }
        if (gw_cli_monitor_option(argv[i], &monitor)) continue;
        if ((m = gw_cli_option(argc, argv, &i, "check", "--device", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            device = v;
        } else if ((m = gw_cli_option(argc, argv, &i, "check", "--size", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            size = v;
        } else if ((m = gw_cli_option(argc, argv, &i, "check", "--seed", &v)) != 0) {
            if (m < 0) return GW_EXIT_USAGE;
            seed_text = v;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "gpuwitness check: unknown option '%s': options are --device, --size, --seed, --monitor, --no-monitor, --help\n",
                    argv[i]);
            return GW_EXIT_USAGE;
        } else {
            fprintf(stderr, "gpuwitness check: unexpected argument '%s': check takes options only (see gpuwitness "
                    "check --help)\n", argv[i]);
            return GW_EXIT_USAGE;
        }
    }
    if (strcmp(size, "realistic") != 0 && strcmp(size, "small") != 0) {
        fprintf(stderr, "gpuwitness check: --size '%s': must be small or realistic\n", size);
        return GW_EXIT_USAGE;
    }
    uint64_t seed = 1;
    if (seed_text) {
        unsigned long long s = 0;
        if (gw_cli_parse_u64(seed_text, ULLONG_MAX, &s)) {
            fprintf(stderr, "gpuwitness check: --seed '%s': must be a non-negative decimal integer below 2^64\n",
                    seed_text);
            return GW_EXIT_USAGE;
        }
        seed = s;
    }

    gw_device_choice dev;
    const int sel = gw_cli_select_device("check", device, &dev);
    if (sel == GW_EXIT_USAGE || sel == GW_EXIT_FAIL) return sel;
    const int gpu = sel == 0 && dev.kind == GW_DEVICE_CUDA;
    /* The fallback is said plainly, with the reason, before any work: never a silent CPU run. */
    if (sel == GW_EXIT_SKIP)
        fprintf(stderr, "gpuwitness check: GPU part skipped: no usable GPU for --device %s: %s\n",
                gw_cli_effective_device(device), dev.reason);
    else if (dev.fell_back)
        fprintf(stderr, "gpuwitness check: GPU part skipped: no usable GPU: %s\n", dev.reason);
    else if (!gpu)
        fprintf(stderr, "gpuwitness check: --device cpu: the GPU is not exercised; only the CPU reference runs\n");

    printf("gpuwitness check: size %s, seed %" PRIu64 "\n", size, seed);
    if (gpu) {
        gw_gpu_facts f;
        char err[512];
        if (gw_gpu_facts_get(dev.ordinal, &f, err, sizeof err)) {
            fprintf(stderr, "gpuwitness check: cuda:%d: %s\n", dev.ordinal, err);
            return GW_EXIT_FAIL;
        }
        printf("device: cuda:%d, %s, compute capability %d.%d, %d multiprocessors\n", dev.ordinal, f.name, f.cc_major,
               f.cc_minor, f.sm_count);
    } else {
        if (dev.reason[0])
            printf("device: cpu (no usable GPU: %s)\n", dev.reason);
        else
            printf("device: cpu (--device cpu)\n");
    }

    const gw_check_request req = {.small = !strcmp(size, "small"), .seed = seed, .dev = &dev, .gpu = gpu};
    gw_cli_monitor mon;
    gw_cli_monitor_begin(&mon, "check", monitor, gpu ? dev.ordinal : -1);
    int failures = 0, runs = 0;
    uint64_t window[2 * 16];
    int kernel_failures[16];
    for (size_t k = 0; k < gw_kernel_count; k++) {
        int kernel_runs = 0;
        const uint64_t t0 = gw_monitor_now_us();
        const int f = gw_kernels[k].check(&req, &kernel_runs);
        if (k < 16) {
            window[2 * k] = t0;
            window[2 * k + 1] = gw_monitor_now_us();
            kernel_failures[k] = f;
        }
        failures += f;
        runs += kernel_runs;
    }
    if (monitor) report_monitor(&mon, window, kernel_failures, gpu);
    gw_cli_monitor_end(&mon);
    if (failures) {
        printf("check: FAILED (%d of %d runs)\n", failures, runs);
        return GW_EXIT_FAIL;
    }
    if (gpu && gw_cli_emulated()) {
        printf("check: ok on the EMULATED device: every kernel's device code ran on gpuwitness' emulated device (the "
               "CPU, not a GPU), matched the CPU reference bit for bit (ex2d_patch: within its FP64 tolerances), "
               "witness checks out; GPU path not executed\n");
        return GW_EXIT_OK;
    }
    if (gpu) {
        printf("check: ok: every kernel ran on the GPU, matched the CPU reference bit for bit (ex2d_patch: within "
               "its FP64 tolerances), witness checks out\n");
        return GW_EXIT_OK;
    }
    if (dev.reason[0]) {
        printf("check: GPU part skipped (exit 77): no usable GPU; the CPU reference ran and agreed\n");
        return GW_EXIT_SKIP;
    }
    printf("check: ok on the CPU (--device cpu): the GPU was not exercised\n");
    return GW_EXIT_OK;
}
