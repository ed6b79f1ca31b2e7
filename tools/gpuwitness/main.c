/* SPDX-License-Identifier: MIT
 * gpuwitness: the command-line tool. This file only dispatches to the commands (commands/); they learn about
 * kernels from the kernel table (kernels/gw_kernel.h). Exit codes (gw_cli.h): 0 ok, 1 failure, 2 bad usage,
 * 77 GPU part skipped.
 */
#define _POSIX_C_SOURCE 200809L /* SIGPIPE, SIGXFSZ */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "gw_build_info.h"
#include "gw_commands.h"
#include "gw_kernel.h"
#include "gw_outfile.h"


static const char top_help[] =
    "usage: gpuwitness [--help] [--version] COMMAND [ARGS...]\n"
    "\n"
    "GPU kernels with proof that the GPU ran them: every GPU call is compared bit for bit with the CPU\n"
    "reference and checked against the witness record the kernel writes from device code.\n"
    "\n"
    "commands:\n"
    "  doctor   CUDA runtime/driver, visible devices, native code, and each kernel run once with its witness\n"
    "  check    every kernel on a realistic built-in problem, GPU against the CPU reference, with timings\n"
    "  run      apply a kernel to files: run KERNEL [OPTIONS...] INPUTS... (run --help: each kernel's synopsis)\n"
    "  bench    time every kernel against its CPU reference and the copy roofline: JSON, table, --min-speedup\n"
    "  trace    a Chrome trace of a kernel's host path (Perfetto, chrome://tracing), checked by the ledger:\n"
    "           trace KERNEL [--out trace.json] [--wait N] [--warmup N] [--active N]\n"
    "  synth    write a test input with a known answer, in the format run reads: synth KERNEL [OPTIONS...]\n"
    "\n"
    "Run 'gpuwitness COMMAND --help' for the command's options. KERNEL is a kernel's name (hyphens may stand for\n"
    "underscores); the kernels are listed last.\n"
    "\n"
    "device policy (check and run take --device; doctor looks at every visible device):\n"
    "  --device cuda|cuda:N|cpu|auto   default: $GW_DEVICE, else auto. auto takes the first usable GPU; without\n"
    "                                  one it runs the CPU reference and says so on stderr with the reason.\n"
    "  GW_REQUIRE_GPU=1                no usable GPU is an error (exit 1): no fallback, no skip.\n"
    "\n"
    "exit status: 0 ok; 1 failure (mismatch, witness violation, CUDA error, bad input file, or no GPU under\n"
    "GW_REQUIRE_GPU=1); 2 bad usage; 77 the GPU part was skipped (no usable GPU and none required).\n";

static void print_help(FILE *out)
{
    fputs(top_help, out);
    fprintf(out, "\nkernels: %s\n", gw_kernel_names());
}

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {{"doctor", gw_cmd_doctor}, {"check", gw_cmd_check}, {"run", gw_cmd_run}, {"trace", gw_cmd_trace},
                {"bench", gw_cmd_bench}, {"synth", gw_cmd_synth}};

static int (*find_command(const char *name))(int, char **)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name)) return commands[i].run;
    return NULL;
}

int main(int argc, char **argv)
{
    /* Keep our own lines in order with the commands' stderr when both go to one pipe or file. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* A reader that goes away (gpuwitness run ... | head) must not kill a command halfway through its outputs:
     * writes to the closed pipe fail instead, and the outputs are still committed whole. Likewise a file-size
     * limit (ulimit -f) fails the write (EFBIG), and the command removes what it staged, instead of killing
     * it. SIGINT, SIGTERM, SIGHUP and SIGQUIT remove the staged outputs before the process dies
     * (lib/io/include/gw_outfile.h). */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    gw_outfile_cleanup_on_signals();
    gw_cli_cap_openmp_threads();
    if (argc < 2) {
        print_help(stderr);
        fputs("\ngpuwitness: missing COMMAND: one of doctor, check, run, trace, bench, synth\n", stderr);
        return GW_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            /* "gpuwitness help run" is "gpuwitness run --help" */
            char help_flag[] = "--help";
            char *sub[] = {argv[2], help_flag, NULL};
            int (*run)(int, char **) = find_command(argv[2]);
            if (run) return run(2, sub);
            fprintf(stderr, "gpuwitness help: unknown command '%s': commands are doctor, check, run, trace, bench, "
                    "synth\n", argv[2]);
            return GW_EXIT_USAGE;
        }
        print_help(stdout);
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
    int (*run)(int, char **) = find_command(cmd);
    if (run) return run(argc - 1, argv + 1);
    if (cmd[0] == '-')
        fprintf(stderr, "gpuwitness: unknown option '%s': before the command only --help and --version are "
                "accepted (see gpuwitness --help)\n", cmd);
    else
        fprintf(stderr, "gpuwitness: unknown command '%s': commands are doctor, check, run, trace, bench, synth (see "
                "gpuwitness --help)\n", cmd);
    return GW_EXIT_USAGE;
}
