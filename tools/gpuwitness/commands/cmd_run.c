/* SPDX-License-Identifier: MIT
 * gpuwitness run KERNEL ...: finds the kernel's name among the arguments and hands the rest to the kernel's
 * run hook (gw_kernel.h). Options may come before the name ("run --device cpu focus_stack ...").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    fputs("Run 'gpuwitness run KERNEL --help' for the kernel's options and exit status.\n", stdout);
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
    int n = 0;
    sub[n++] = argv[at];
    for (int i = 1; i < argc; i++)
        if (i != at) sub[n++] = argv[i];
    const int rc = k->run(n, sub);
    free(sub);
    return rc;
}
