/* SPDX-License-Identifier: MIT
 * gpuwitness: the command-line tool. Commands live in cmd_*.c; this file dispatches and holds the
 * small helpers they share. Exit codes (gw_cli.h): 0 ok, 1 failure, 2 bad usage, 77 GPU part skipped.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_bench.h"
#include "gw_cli.h"
#include "gw_trace_work.h"

#ifndef GW_VERSION
#define GW_VERSION "unknown"
#endif

static const char top_help[] =
    "usage: gpuwitness [--help] [--version] COMMAND [ARGS...]\n"
    "\n"
    "GPU kernels with proof that the GPU ran them: every GPU call is compared bit for bit with the CPU\n"
    "reference and checked against the witness record the kernel writes from device code.\n"
    "\n"
    "commands:\n"
    "  doctor   CUDA runtime/driver, visible devices, native code, and each kernel run once with its witness\n"
    "  check    every kernel on a realistic built-in problem, GPU against the CPU reference, with timings\n"
    "  run      apply a kernel to files: run grid-d4 --op NAME (--out-dir DIR | -o FILE) TASK.json...\n"
    "                                    run focus-stack [--out-ff F] [--out-idx F] ... STACK.npy|STACK.tif\n"
    "                                    run ex2d [--tier S|M|L|XL|frame] ... --out-dir DIR (synthetic frame)\n"
    "  bench    time every kernel against its CPU reference and the copy roofline: JSON, table, --min-speedup\n"
    "  trace    a Chrome trace of a kernel's host path (Perfetto, chrome://tracing), checked by the ledger:\n"
    "           trace grid-d4|focus-stack [--out trace.json] [--wait N] [--warmup N] [--active N]\n"
    "\n"
    "Run 'gpuwitness COMMAND --help' for the command's options.\n"
    "\n"
    "device policy (check and run take --device; doctor looks at every visible device):\n"
    "  --device cuda|cuda:N|cpu|auto   default: $GW_DEVICE, else auto. auto takes the first usable GPU; without\n"
    "                                  one it runs the CPU reference and says so on stderr with the reason.\n"
    "  GW_REQUIRE_GPU=1                no usable GPU is an error (exit 1): no fallback, no skip.\n"
    "\n"
    "exit status: 0 ok; 1 failure (mismatch, witness violation, CUDA error, bad input file, or no GPU under\n"
    "GW_REQUIRE_GPU=1); 2 bad usage; 77 the GPU part was skipped (no usable GPU and none required).\n";

int gw_cli_option(int argc, char **argv, int *i, const char *cmd, const char *name, const char **value)
{
    const char *arg = argv[*i];
    const size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
    } else if (arg[len] != '\0') {
        return 0;
    } else if (*i + 1 >= argc) {
        fprintf(stderr, "gpuwitness %s: option '%s' needs a value (see gpuwitness %s --help)\n", cmd, name, cmd);
        return -1;
    } else {
        *value = argv[++*i];
    }
    /* No option takes an empty value: '--device=' must not quietly mean the default, nor '-o ""' fail
     * only after all the work. */
    if (!**value) {
        fprintf(stderr, "gpuwitness %s: option '%s' needs a non-empty value (see gpuwitness %s --help)\n", cmd, name,
                cmd);
        return -1;
    }
    return 1;
}

int gw_cli_device_spec_valid(const char *spec)
{
    if (!strcmp(spec, "cuda") || !strcmp(spec, "cpu") || !strcmp(spec, "auto")) return 1;
    if (strncmp(spec, "cuda:", 5) != 0 || !spec[5]) return 0;
    long ordinal = 0;
    for (const char *c = spec + 5; *c; c++) {
        if (*c < '0' || *c > '9') return 0;
        ordinal = ordinal * 10 + (*c - '0');
        if (ordinal > 1024) return 0; /* gw_device_resolve's range */
    }
    return 1;
}

const char *gw_cli_effective_device(const char *spec)
{
    if (spec && *spec) return spec;
    const char *env = getenv("GW_DEVICE");
    return env && *env ? env : "auto";
}

int gw_cli_select_device(const char *cmd, const char *spec, gw_device_choice *choice)
{
    char err[512];
    if (gw_device_resolve(spec, choice, err, sizeof err) == 0) return 0;
    const char *effective = gw_cli_effective_device(spec);
    if (!gw_cli_device_spec_valid(effective)) {
        fprintf(stderr, "gpuwitness %s: %s\n", cmd, err);
        return GW_EXIT_USAGE;
    }
    /* An explicit cuda / cuda:N on a machine without a GPU: the GPU part is skipped (77), like a GPU test,
     * unless GW_REQUIRE_GPU=1 makes it a failure. Any other probe error is always a failure. */
    if (strcmp(effective, "cpu") != 0 && !gw_require_gpu()) {
        int count = 0;
        char why[256];
        if (gw_device_probe(&count, why, sizeof why) == GW_PROBE_NO_GPU) {
            memset(choice, 0, sizeof *choice);
            choice->kind = GW_DEVICE_CPU;
            choice->ordinal = -1;
            snprintf(choice->reason, sizeof choice->reason, "%s", why);
            return GW_EXIT_SKIP;
        }
    }
    fprintf(stderr, "gpuwitness %s: %s\n", cmd, err);
    return GW_EXIT_FAIL;
}

int gw_cli_parse_u64(const char *text, unsigned long long max, unsigned long long *value)
{
    if (!text || *text < '0' || *text > '9') return -1;
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v > max) return -1;
    *value = v;
    return 0;
}

double gw_cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    /* Keep our own lines in order with the commands' stderr when both go to one pipe or file. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fputs(top_help, stderr);
        fputs("\ngpuwitness: missing COMMAND: one of doctor, check, run, trace, bench\n", stderr);
        return GW_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            /* "gpuwitness help run" is "gpuwitness run --help" */
            char help_flag[] = "--help";
            char *sub[] = {argv[2], help_flag, NULL};
            if (!strcmp(argv[2], "doctor")) return gw_cmd_doctor(2, sub);
            if (!strcmp(argv[2], "check")) return gw_cmd_check(2, sub);
            if (!strcmp(argv[2], "run")) return gw_cmd_run(2, sub);
            if (!strcmp(argv[2], "trace")) return gw_cmd_trace(2, sub);
            if (!strcmp(argv[2], "bench")) return gw_cmd_bench(2, sub);
            fprintf(stderr, "gpuwitness help: unknown command '%s': commands are doctor, check, run, trace, bench\n",
                    argv[2]);
            return GW_EXIT_USAGE;
        }
        fputs(top_help, stdout);
        return GW_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        if (argc > 2) {
            fprintf(stderr, "gpuwitness --version: unexpected argument '%s': --version takes none\n", argv[2]);
            return GW_EXIT_USAGE;
        }
        printf("gpuwitness %s\n", GW_VERSION);
        return GW_EXIT_OK;
    }
    /* Commands get argv from their own name on, so their option loops look like main's. */
    if (!strcmp(cmd, "doctor")) return gw_cmd_doctor(argc - 1, argv + 1);
    if (!strcmp(cmd, "check")) return gw_cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return gw_cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "trace")) return gw_cmd_trace(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return gw_cmd_bench(argc - 1, argv + 1);
    if (cmd[0] == '-')
        fprintf(stderr, "gpuwitness: unknown option '%s': before the command only --help and --version are "
                "accepted (see gpuwitness --help)\n", cmd);
    else
        fprintf(stderr, "gpuwitness: unknown command '%s': commands are doctor, check, run, trace, bench (see "
                "gpuwitness --help)\n", cmd);
    return GW_EXIT_USAGE;
}
