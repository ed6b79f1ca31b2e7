/* SPDX-License-Identifier: MIT
 * grid_d4 in `gpuwitness trace`: check --size small's first problem through the host path (grid_d4_host.h),
 * with the ledger budget of one call written out from what the call does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "grid_d4_batch.h"
#include "grid_d4_host.h"
#include "grid_d4_ref.h"
#include "gw_kernel.h"
#include "gw_trace_range.h"

typedef struct d4_state {
    grid_d4_batch b;
    grid_d4_result ref, got;
    gw_d4_gpu g;
} d4_state;

enum { D4_GRIDS = 2000, D4_SEED = 1 };

static int d4_iterate(gw_trace_work *w, char *err, size_t err_size)
{
    d4_state *s = w->state;
    gw_d4_gpu_result res;
    char msg[1024];
    if (gw_d4_gpu_call(&s->g, &s->b, 0xFF, &s->got, &res, err, err_size)) return -1;
    if (res.status != GRID_D4_OK) {
        snprintf(err, err_size, "the device rejected grid %zu: %s", res.status_index, grid_d4_status_str(res.status));
        return -1;
    }
    gw_range_push("grid_d4/compare");
    const size_t diff = grid_d4_result_compare(&s->b, &s->got, &s->ref, msg, sizeof msg);
    gw_range_pop();
    if (diff) {
        snprintf(err, err_size, "differs from grid_d4_ref: %s", msg);
        return -1;
    }
    if (res.witness_violations) {
        snprintf(err, err_size, "the witness does not prove GPU execution: %s", res.witness_check);
        return -1;
    }
    return 0;
}

static void d4_release(gw_trace_work *w)
{
    d4_state *s = w->state;
    gw_d4_gpu_free(&s->g, NULL, 0);
    grid_d4_result_free(&s->got);
    grid_d4_result_free(&s->ref);
    grid_d4_batch_free(&s->b);
    free(s);
}

int gw_grid_d4_trace(gw_trace_work *w, int ordinal, char *err, size_t err_size)
{
    d4_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    w->state = s;
    w->iterate = d4_iterate;
    w->release = d4_release;
    if (grid_d4_batch_builtin(&s->b, D4_GRIDS, D4_SEED, 1, 0, 0)) goto oom;
    const grid_d4_batch *b = &s->b;
    if (grid_d4_result_init(&s->ref, b) || grid_d4_result_init(&s->got, b)) goto oom;
    snprintf(w->description, sizeof w->description, "grid_d4: %zu grids (%" PRIu64 " cells), per-grid random ops, "
             "packed offsets, seed %d", b->n, grid_d4_batch_cells(b), D4_SEED);

    const grid_d4_params p = grid_d4_batch_params(b);
    grid_d4_result_poison(&s->ref, 0xFF);
    gw_range_push("grid_d4/reference");
    const int rc = grid_d4_ref(&p, b->in, s->ref.out, b->offset, b->height, b->width, s->ref.out_height,
                               s->ref.out_width, b->ops);
    gw_range_pop();
    if (rc != GRID_D4_OK) {
        snprintf(err, err_size, "grid_d4_ref: %s", grid_d4_status_str((grid_d4_status)rc));
        return -1;
    }
    if (gw_d4_gpu_init(&s->g, ordinal, b, err, err_size)) return -1;

    /* gw_d4_gpu_call: validation and transform kernels once each; uploads of the cells, the three metadata
     * arrays and the ops; downloads of the status record, the witness, the cells and both shape arrays. */
    const uint64_t n = b->n;
    gw_trace_work_add_kernel(w, "grid_d4_validate_kernel", 1);
    gw_trace_work_add_kernel(w, "grid_d4_transform_kernel", 1);
    gw_trace_work_add_copy(w, GW_COPY_HTOD, b->buf_bytes, "in");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof *b->offset, "offset");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof *b->height, "height");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof *b->width, "width");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n, "ops");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, sizeof(grid_d4_status_record), "status");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, sizeof(gw_witness), "witness");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, b->buf_bytes, "out");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, n * sizeof *s->got.out_height, "out_height");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, n * sizeof *s->got.out_width, "out_width");
    return 0;
oom:
    snprintf(err, err_size, "out of memory building the grid_d4 problem");
    return -1;
}

