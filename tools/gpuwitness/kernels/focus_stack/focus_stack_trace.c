/* SPDX-License-Identifier: MIT
 * focus_stack in `gpuwitness trace`: check --size small's known-focus stack through the host path
 * (focus_stack_host.h), with the ledger budget of one call written out from what the call does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "focus_stack_host.h"
#include "focus_stack_ref.h"
#include "focus_stack_synth.h"
#include "gw_kernel.h"
#include "gw_trace_range.h"

typedef struct focus_state {
    focus_stack_params p;
    uint16_t *in;
    focus_stack_synth synth;
    gw_focus_out ref, got;
    gw_focus_gpu g;
} focus_state;

static int focus_iterate(gw_trace_work *w, char *err, size_t err_size)
{
    focus_state *s = w->state;
    gw_focus_gpu_result res;
    char msg[1024];
    if (gw_focus_gpu_call(&s->g, s->in, 0xFF, &s->got, &res, err, err_size)) return -1;
    gw_range_push("focus_stack/compare");
    const int diff = gw_focus_out_compare(&s->got, &s->ref, s->p, msg, sizeof msg);
    gw_range_pop();
    if (diff) {
        snprintf(err, err_size, "differs from focus_stack_ref: %s", msg);
        return -1;
    }
    if (res.witness_violations) {
        snprintf(err, err_size, "the witness does not prove GPU execution: %s", res.witness_check);
        return -1;
    }
    return 0;
}

static void focus_release(gw_trace_work *w)
{
    focus_state *s = w->state;
    gw_focus_gpu_free(&s->g, NULL, 0);
    gw_focus_out_free(&s->got);
    gw_focus_out_free(&s->ref);
    focus_stack_synth_free(&s->synth);
    free(s->in);
    free(s);
}

int gw_focus_stack_trace(gw_trace_work *w, int ordinal, char *err, size_t err_size)
{
    focus_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    w->state = s;
    w->iterate = focus_iterate;
    w->release = focus_release;
    /* check --size small's known-focus stack at morphseq's defaults (the fused kernel), with best */
    s->p = (focus_stack_params){.n = 2, .z = 5, .y = 136, .x = 130, .ksize = 3};
    const focus_stack_params p = s->p;
    const size_t px = (size_t)p.n * p.y * p.x, voxels = px * (size_t)p.z;
    s->in = malloc(voxels * sizeof *s->in);
    if (!s->in || focus_stack_synth_make(&s->synth, p.n, p.z, p.y, p.x, 1, s->in)) goto oom;
    if (gw_focus_out_alloc(&s->ref, p, 1, 0) || gw_focus_out_alloc(&s->got, p, 1, 0)) goto oom;
    snprintf(w->description, sizeof w->description, "focus_stack: N=%d Z=%d %dx%d known-focus stack, ksize 3 LoG, "
             "zero border, no window, outputs idx, ff, best", p.n, p.z, p.y, p.x);

    gw_focus_out_poison(&s->ref, p, 0xFF);
    gw_range_push("focus_stack/reference");
    const int rc = focus_stack_ref(&p, s->in, s->ref.idx, s->ref.ff, s->ref.best, NULL, 0);
    gw_range_pop();
    if (rc != FOCUS_STACK_OK) {
        snprintf(err, err_size, "focus_stack_ref: %s", focus_stack_status_str(rc));
        return -1;
    }
    if (gw_focus_gpu_init(&s->g, ordinal, p, 1, 0, err, err_size)) return -1;

    /* gw_focus_gpu_call: the fused kernel once (morphseq's defaults, no focus volume); upload of the
     * stack; downloads of the witness, idx, ff and best. */
    gw_trace_work_add_kernel(w, "focus_stack_fast_kernel", 1);
    gw_trace_work_add_copy(w, GW_COPY_HTOD, voxels * sizeof *s->in, "in");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, sizeof(gw_witness), "witness");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, px, "idx");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, px * sizeof *s->got.ff, "ff");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, px * sizeof *s->got.best, "best");
    return 0;
oom:
    snprintf(err, err_size, "out of memory building the focus_stack problem");
    return -1;
}

