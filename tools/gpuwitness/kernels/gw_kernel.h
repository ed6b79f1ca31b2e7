/* SPDX-License-Identifier: MIT
 * The kernel table: how the commands (doctor, check, run, bench, trace, synth) learn about kernels.
 *
 * Each kernel k listed in gw_kernel_table.h has a folder tools/gpuwitness/kernels/k/ that defines
 *   const gw_kernel_info gw_k_info;   its names and the text `run --help` shows
 * and the five hooks declared below by GW_KERNEL_HOOKS(k). The table (gw_kernel_table.c) refers to all of
 * them by name, so a kernel missing a hook does not link, and a hook with the wrong signature does not
 * compile: the hooks' prototypes come from this header, which every kernel's glue includes.
 */
#ifndef GW_KERNEL_H
#define GW_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gw_bench.h"
#include "gw_cli.h"
#include "gw_trace_work.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_kernel_info {
    const char *name;                      /* the kernel's directory name: "grid_d4" (hyphens accepted: grid-d4) */
    const char *const *aliases;            /* further names the command line accepts (NULL-terminated), or NULL */
    const char *run_usage;                 /* its synopsis in `gpuwitness run --help` (one or more lines) */
    const char *check_help;                /* what `check` runs, for `check --help` (lines without indent) */
    const char *bench_help;                /* its benchmark cases, for `bench --help` (lines without indent) */
    const char *trace_help;                /* the problem `trace` runs, for `trace --help` (one line) */
    const char *const *run_value_options;  /* its run options that take a value (NULL-terminated), so that
                                              `run` can find the kernel's name after them */
    int (*synth)(int argc, char **argv);   /* `gpuwitness synth k ...` (argv[0] is the kernel's name): an exit
                                              code; NULL when the kernel has no test-input writer */
    const char *synth_usage;               /* its synopsis in `gpuwitness synth --help` */
} gw_kernel_info;

/* What `check` asks of every kernel: its problems at one size, on the chosen device. */
typedef struct gw_check_request {
    int small;                   /* --size small */
    uint64_t seed;               /* --seed */
    const gw_device_choice *dev; /* the resolved --device */
    int gpu;                     /* 1: run the GPU part on dev->ordinal; 0: the CPU part only */
} gw_check_request;

/* The hooks of kernel k. Each prints its own lines and returns:
 *   run     `gpuwitness run k ...` (argv[0] is the kernel's name): an exit code (gw_cli.h)
 *   check   its part of `check`: how many of its runs failed; *runs gets how many it made
 *   doctor  its witnessed run on device ordinal: 0 ok, 1 failed
 *   bench   its cases for run->tier: 0, or -1 when the run cannot go on (rows hold their own errors)
 *   trace   sets w up for one iteration of its host path on device ordinal: 0, or -1 with err */
#define GW_KERNEL_HOOKS(k)                                                                                           \
    extern const gw_kernel_info gw_##k##_info;                                                                       \
    int gw_##k##_run(int argc, char **argv);                                                                         \
    int gw_##k##_check(const gw_check_request *req, int *runs);                                                      \
    int gw_##k##_doctor(int ordinal);                                                                                \
    int gw_##k##_bench(gw_bench_run *run);                                                                           \
    int gw_##k##_trace(gw_trace_work *w, int ordinal, char *err, size_t err_size);

#define GW_KERNEL(k) GW_KERNEL_HOOKS(k)
#include "gw_kernel_table.h"
#undef GW_KERNEL

typedef struct gw_kernel {
    const gw_kernel_info *info;
    int (*run)(int argc, char **argv);
    int (*check)(const gw_check_request *req, int *runs);
    int (*doctor)(int ordinal);
    int (*bench)(gw_bench_run *run);
    int (*trace)(gw_trace_work *w, int ordinal, char *err, size_t err_size);
} gw_kernel;

extern const gw_kernel gw_kernels[];
extern const size_t gw_kernel_count;

/* The kernel a command-line word names: its name, the name with '-' for '_', or an alias. NULL if none. */
const gw_kernel *gw_kernel_find(const char *word);
/* "grid_d4, focus_stack, ex2d_patch": the names, for messages. */
const char *gw_kernel_names(void);
/* A kernel's paragraph in a command's --help: "  name         first line", the next lines indented under it. */
void gw_kernel_print_paragraph(FILE *out, const char *name, const char *text);

#ifdef __cplusplus
}
#endif

#endif /* GW_KERNEL_H */
