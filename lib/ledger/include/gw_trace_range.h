/* SPDX-License-Identifier: MIT
 * Named host-side ranges around the CLI's stages (upload, launch, download, reference, ...): each is an
 * NVTX3 range, so Nsight Systems shows the same names, and while a ledger recording runs (gw_ledger.h)
 * it is also timed on CUPTI's clock and lands in the trace beside the kernels and copies. NVTX calls do
 * nothing unless a tool is attached; ranges are labels, never proof (docs/testing.md, "CUPTI and NVTX").
 *
 *   const int depth = gw_range_depth();
 *   gw_range_push("grid_d4/upload");
 *   ... CUDA_TRY(...)   (on failure: fail: gw_range_pop_to(depth);)
 *   gw_range_pop();
 *
 * Names must stay valid until their range is popped (string literals in practice). Ranges nest per
 * thread; only the calling thread's stack is tracked.
 */
#ifndef GW_TRACE_RANGE_H
#define GW_TRACE_RANGE_H

#ifdef __cplusplus
extern "C" {
#endif

void gw_range_push(const char *name);
void gw_range_pop(void);

/* The calling thread's open ranges; pops down to depth (for error paths that leave ranges open). */
int gw_range_depth(void);
void gw_range_pop_to(int depth);

/* Called at every push (begin = 1) and pop (begin = 0) with the range's name and its depth (0 for the
 * outermost), on the pushing thread. One hook at a time; NULL removes it. Set by the ledger recorder. */
typedef void (*gw_range_hook)(const char *name, int depth, int begin);
void gw_range_set_hook(gw_range_hook hook);

#ifdef __cplusplus
}
#endif

#endif /* GW_TRACE_RANGE_H */
