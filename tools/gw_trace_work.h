/* SPDX-License-Identifier: MIT
 * `gpuwitness trace` (cmd_trace.c) and what it runs: one kernel's CLI host path (upload, launch, download)
 * on a small built-in problem, one call per iteration, each checked against the CPU reference (computed
 * once) and its witness, and the ledger budget one call must keep. Not a library API.
 */
#ifndef GW_TRACE_WORK_H
#define GW_TRACE_WORK_H

#include <stddef.h>

#include "gw_ledger_check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gpuwitness trace ... (argv[0] is "trace"); exit codes as gw_cli.h. */
int gw_cmd_trace(int argc, char **argv);

/* doctor's CUPTI and NVTX lines (gw_ledger_doctor.c): CUPTI's version and, when a GPU is usable, whether
 * an activity recording can start here (else why not); whether NVTX has a tool attached. */
void gw_doctor_ledger(int gpu_usable);

/* ex2d_patch's call is the largest: 7 kernels, 10 uploads and 8 downloads. */
enum { GW_TRACE_WORK_KERNELS_MAX = 8, GW_TRACE_WORK_COPIES_MAX = 24 };

typedef struct gw_trace_work gw_trace_work;
struct gw_trace_work {
    char description[256];    /* "grid_d4: 2000 grids (245702 cells), per-grid random ops, seed 1" */
    gw_ledger_budget budget;  /* what one iteration may do on the device (points into the arrays below) */
    gw_kernel_expect kernels[GW_TRACE_WORK_KERNELS_MAX];
    gw_copy_expect copies[GW_TRACE_WORK_COPIES_MAX];
    /* One host-path call, compared with the reference and witnessed: 0, or -1 with err. */
    int (*iterate)(gw_trace_work *w, char *err, size_t err_size);
    void (*release)(gw_trace_work *w);
    void *state;
};

/* The kernels `trace` knows, by CLI name ("grid-d4", "focus-stack", "ex2d"), comma-separated for messages. */
extern const char gw_trace_work_names[];

/* 1 when kernel is one of gw_trace_work_names. */
int gw_trace_work_known(const char *kernel);

/* Sets up kernel's problem on device ordinal: inputs, the CPU reference (in an NVTX range), device
 * buffers. 0, or -1 with err (unknown kernel, CUDA error, out of memory). */
int gw_trace_work_init(gw_trace_work *w, const char *kernel, int ordinal, char *err, size_t err_size);

/* Frees everything (safe after a failed init). */
void gw_trace_work_free(gw_trace_work *w);

#ifdef __cplusplus
}
#endif

#endif /* GW_TRACE_WORK_H */
