/* SPDX-License-Identifier: MIT
 * What `gpuwitness trace` (cmd_trace.c) runs: one kernel's host path (upload, launch, download) on a small
 * built-in problem, one call per iteration, each checked against the CPU reference (computed once) and its
 * witness, and the ledger budget one call must keep. Each kernel's trace hook (gw_kernel.h) fills one from
 * a zeroed gw_trace_work; the command frees it with gw_trace_work_free. Not a library API.
 */
#ifndef GW_TRACE_WORK_H
#define GW_TRACE_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "gw_ledger_check.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* Budget lines, in the order the call makes them: a kernel launched `launches` times, a copy of `bytes`. */
void gw_trace_work_add_kernel(gw_trace_work *w, const char *name, uint64_t launches);
void gw_trace_work_add_copy(gw_trace_work *w, gw_copy_kind kind, uint64_t bytes, const char *what);

/* Frees everything (safe after a failed init). */
void gw_trace_work_free(gw_trace_work *w);

#ifdef __cplusplus
}
#endif

#endif /* GW_TRACE_WORK_H */
