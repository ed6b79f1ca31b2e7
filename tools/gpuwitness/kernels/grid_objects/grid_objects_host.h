/* SPDX-License-Identifier: MIT
 * grid_objects' GPU host path, shared by run, check, doctor and trace: one allocation per batch, then any
 * number of witnessed calls, each uploading the batch and the poisoned outputs, launching once and
 * downloading every output. Every CUDA call is checked and named in the error.
 */
#ifndef GRID_OBJECTS_HOST_H
#define GRID_OBJECTS_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4_batch.h"
#include "grid_objects.h"
#include "grid_objects_batch.h"
#include "gw_cli.h"
#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_go_gpu_result {
    gw_witness witness;
    grid_objects_status status; /* from the device status record */
    size_t status_index;
    double ms_end_to_end;       /* upload + poison + launch + download, host clock */
    double ms_kernel;           /* CUDA events around the launch (status reset, validation, labelling) */
    int witness_violations;
    char witness_receipt[256];
    char witness_check[1024];   /* findings of gw_witness_check, empty when clean */
} gw_go_gpu_result;

/* Device side of one batch: allocated once, then called any number of times. */
typedef struct gw_go_gpu {
    int ordinal;
    gw_gpu_facts facts;
    void *stream; /* cudaStream_t, kept opaque so this header stays plain C */
    void *ev_start, *ev_stop;
    uint8_t *d_in, *d_variants;
    uint64_t *d_offset;
    uint16_t *d_height, *d_width;
    uint64_t out_entries; /* what d_labels and d_objects hold: grid_objects_out_entries(buf_bytes), the padding */
    uint16_t *d_labels;
    grid_objects_object *d_objects;
    uint32_t *d_n_objects;
    int16_t *d_bg;
    grid_objects_status_record *d_status;
    gw_witness *d_witness;
} gw_go_gpu;

/* cudaSetDevice(ordinal), then allocations sized for b (labels and objects padded as grid_objects.h says).
 * On error everything is freed. */
int gw_go_gpu_init(gw_go_gpu *g, int ordinal, const grid_d4_batch *b, char *err, size_t err_size);
/* One call of b under bg_tie: poisons out (grid_objects_result_init'ed for b) on the host with
 * grid_objects_result_poison(poison) (1..254) and uploads it with the inputs, pad included, so the device
 * outputs start as that poison; zeroes the witness, launches once with out_entries = g->out_entries,
 * downloads every output into out (out->poison stays poison: labels outside the grids must keep it),
 * synchronises, reads the status record and checks the witness against launches = 1 (0 for an empty batch),
 * items = cells of b (0 after a rejection) and the device's architecture. Returns 0 when every CUDA call
 * succeeded (status and witness verdict in res), -1 with err naming the CUDA error. */
int gw_go_gpu_call(gw_go_gpu *g, const grid_d4_batch *b, int bg_tie, uint8_t poison, grid_objects_result *out,
                   gw_go_gpu_result *res, char *err, size_t err_size);
/* Frees everything (safe after a failed init); 0, or -1 with err (may be NULL) naming the first CUDA error. */
int gw_go_gpu_free(gw_go_gpu *g, char *err, size_t err_size);

/* "without bg, diagonal": the flags of variant v (0..7) in words, for messages. */
const char *gw_go_variant_words(int variant);

#ifdef __cplusplus
}
#endif

#endif /* GRID_OBJECTS_HOST_H */
