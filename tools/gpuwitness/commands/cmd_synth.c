/* SPDX-License-Identifier: MIT
 * gpuwitness synth: writes a kernel's test input with a known answer in it, for end-to-end tests of `run` on
 * real file formats (today ex2d_patch: a DESI preprocessed image through a real PSF, docs/ex2d_patch.md).
 * Kernels offer it through their table entry's synth hook (gw_kernel.h).
 */
#include <stdio.h>
#include <string.h>

#include "gw_commands.h"
#include "gw_kernel.h"

static void print_help(FILE *out)
{
    fputs("usage: gpuwitness synth KERNEL [OPTIONS...] (gpuwitness synth KERNEL --help for its options)\n"
          "\n"
          "Writes a test input with the truth kept beside it, in the file format `run KERNEL` reads:\n",
          out);
    for (size_t k = 0; k < gw_kernel_count; k++)
        if (gw_kernels[k].info->synth) gw_kernel_print_paragraph(out, gw_kernels[k].info->name, gw_kernels[k].info->synth_usage);
    fputs("\nexit status: 0 written; 1 bad input file or write error; 2 bad usage. Nothing is written on any error.\n",
          out);
}

int gw_cmd_synth(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        print_help(argc < 2 ? stderr : stdout);
        return argc < 2 ? GW_EXIT_USAGE : GW_EXIT_OK;
    }
    const gw_kernel *k = gw_kernel_find(argv[1]);
    if (!k) {
        fprintf(stderr, "gpuwitness synth: unknown kernel '%s': kernels are %s\n", argv[1], gw_kernel_names());
        return GW_EXIT_USAGE;
    }
    if (!k->info->synth) {
        fprintf(stderr, "gpuwitness synth: %s has no synthetic input writer; only ex2d_patch has one (its tiers and "
                "check make their own inputs)\n", k->info->name);
        return GW_EXIT_USAGE;
    }
    return k->info->synth(argc - 1, argv + 1);
}
