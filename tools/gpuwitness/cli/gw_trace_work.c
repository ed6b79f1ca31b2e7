/* SPDX-License-Identifier: MIT
 * The budget helpers of `gpuwitness trace`'s work (gw_trace_work.h); each kernel's trace hook fills one.
 */
#include "gw_trace_work.h"

#include <string.h>

void gw_trace_work_add_kernel(gw_trace_work *w, const char *name, uint64_t launches)
{
    w->kernels[w->budget.n_kernels++] = (gw_kernel_expect){name, launches};
    w->budget.kernels = w->kernels;
}

void gw_trace_work_add_copy(gw_trace_work *w, gw_copy_kind kind, uint64_t bytes, const char *what)
{
    w->copies[w->budget.n_copies++] = (gw_copy_expect){kind, bytes, what};
    w->budget.copies = w->copies;
}

void gw_trace_work_free(gw_trace_work *w)
{
    if (w->release && w->state) w->release(w);
    memset(w, 0, sizeof *w);
}
