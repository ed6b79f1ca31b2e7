/* SPDX-License-Identifier: MIT */
#include "gw_trace_range.h"

#include <stdatomic.h>
#include <stddef.h>

#include <nvtx3/nvToolsExt.h>

/* Deeper ranges still reach NVTX and the hook, without a name on pop. */
enum { MAX_NAMED_DEPTH = 64 };

static _Thread_local int range_depth;
static _Thread_local const char *range_names[MAX_NAMED_DEPTH];
/* Atomic: the recorder sets it on one thread while another may be pushing. */
static _Atomic(gw_range_hook) range_hook;

void gw_range_set_hook(gw_range_hook hook)
{
    atomic_store(&range_hook, hook);
}

void gw_range_push(const char *name)
{
    nvtxRangePushA(name);
    if (range_depth < MAX_NAMED_DEPTH) range_names[range_depth] = name;
    const gw_range_hook hook = atomic_load(&range_hook);
    if (hook) hook(name, range_depth, 1);
    range_depth++;
}

void gw_range_pop(void)
{
    if (range_depth == 0) return; /* unbalanced: NVTX would report an error, and there is nothing to end */
    range_depth--;
    nvtxRangePop();
    const gw_range_hook hook = atomic_load(&range_hook);
    if (hook) hook(range_depth < MAX_NAMED_DEPTH ? range_names[range_depth] : NULL, range_depth, 0);
}

int gw_range_depth(void)
{
    return range_depth;
}

void gw_range_pop_to(int depth)
{
    while (range_depth > depth && range_depth > 0) gw_range_pop();
}
