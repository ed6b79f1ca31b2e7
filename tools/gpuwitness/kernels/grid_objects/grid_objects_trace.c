/* SPDX-License-Identifier: MIT
 * grid_objects in `gpuwitness trace`: check --size small's first problem through the host path
 * (grid_objects_host.h), with the ledger budget of one call written out from what the call does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "grid_d4_batch.h"
#include "grid_objects_batch.h"
#include "grid_objects_host.h"
#include "grid_objects_ref.h"
#include "gw_kernel.h"
#include "gw_trace_range.h"

typedef struct go_state {
    grid_d4_batch b;
    grid_objects_result ref, got;
    gw_go_gpu g;
} go_state;

enum { GO_GRIDS = 2000, GO_SEED = 1 };

static int go_iterate(gw_trace_work *w, char *err, size_t err_size)
{
    go_state *s = w->state;
    gw_go_gpu_result res;
    char msg[1024];
    if (gw_go_gpu_call(&s->g, &s->b, GRID_OBJECTS_TIE_ARC_DSL, 0xFE, &s->got, &res, err, err_size)) return -1;
    if (res.status != GRID_OBJECTS_OK) {
        snprintf(err, err_size, "the device rejected grid %zu: %s", res.status_index,
                 grid_objects_status_str(res.status));
        return -1;
    }
    gw_range_push("grid_objects/compare");
    const size_t diff = grid_objects_result_compare(&s->got, &s->ref, &s->b, msg, sizeof msg);
    gw_range_pop();
    if (diff) {
        snprintf(err, err_size, "differs from grid_objects_ref: %s", msg);
        return -1;
    }
    if (res.witness_violations) {
        snprintf(err, err_size, "the witness does not prove GPU execution: %s", res.witness_check);
        return -1;
    }
    return 0;
}

static void go_release(gw_trace_work *w)
{
    go_state *s = w->state;
    gw_go_gpu_free(&s->g, NULL, 0);
    grid_objects_result_free(&s->got);
    grid_objects_result_free(&s->ref);
    grid_d4_batch_free(&s->b);
    free(s);
}

int gw_grid_objects_trace(gw_trace_work *w, int ordinal, char *err, size_t err_size)
{
    go_state *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    w->state = s;
    w->iterate = go_iterate;
    w->release = go_release;
    if (grid_d4_batch_builtin(&s->b, GO_GRIDS, GO_SEED, 1, 0, 0)) goto oom;
    const grid_d4_batch *b = &s->b;
    if (grid_objects_result_init(&s->ref, b->n, b->buf_bytes) || grid_objects_result_init(&s->got, b->n, b->buf_bytes))
        goto oom;
    snprintf(w->description, sizeof w->description, "grid_objects: %zu grids (%" PRIu64 " cells), per-grid random "
             "variants 0..7, bg tie arc-dsl, packed offsets, seed %d", b->n, grid_d4_batch_cells(b), GO_SEED);

    grid_objects_result_poison(&s->ref, 0xFE);
    gw_range_push("grid_objects/reference");
    const int rc = grid_objects_batch_ref(b, GRID_OBJECTS_TIE_ARC_DSL, 0, &s->ref);
    gw_range_pop();
    if (rc != GRID_OBJECTS_OK) {
        snprintf(err, err_size, "grid_objects_ref: %s", grid_objects_status_str((grid_objects_status)rc));
        return -1;
    }
    if (gw_go_gpu_init(&s->g, ordinal, b, err, err_size)) return -1;

    /* gw_go_gpu_call: the validation and labelling kernels once each (the status reset is a memset); uploads of
     * the cells, the three metadata arrays, the variants and the four poisoned outputs; downloads of the status
     * record, the witness and the four outputs. */
    const uint64_t n = b->n, buf = b->buf_bytes, out = s->g.out_entries; /* labels and objects: padded */
    gw_trace_work_add_kernel(w, "grid_objects_validate_kernel", 1);
    gw_trace_work_add_kernel(w, "grid_objects_label_kernel", 1);
    gw_trace_work_add_copy(w, GW_COPY_HTOD, buf, "in");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof *b->offset, "offset");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof *b->height, "height");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof *b->width, "width");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n, "variants");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, out * sizeof(uint16_t), "labels poison");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, out * sizeof(grid_objects_object), "objects poison");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof(uint32_t), "n_objects poison");
    gw_trace_work_add_copy(w, GW_COPY_HTOD, n * sizeof(int16_t), "bg poison");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, sizeof(grid_objects_status_record), "status");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, sizeof(gw_witness), "witness");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, out * sizeof(uint16_t), "labels");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, out * sizeof(grid_objects_object), "objects");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, n * sizeof(uint32_t), "n_objects");
    gw_trace_work_add_copy(w, GW_COPY_DTOH, n * sizeof(int16_t), "bg");
    return 0;
oom:
    snprintf(err, err_size, "out of memory building the grid_objects problem");
    return -1;
}
