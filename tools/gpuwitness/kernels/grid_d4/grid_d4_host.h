/* SPDX-License-Identifier: MIT
 * grid_d4's GPU host path, shared by run, check, doctor, trace, the ledger tests and the load tests: one
 * allocation per batch, then any number of witnessed calls, each uploading the batch, poisoning the device
 * outputs, launching once and downloading. Every CUDA call is checked and named in the error.
 */
#ifndef GRID_D4_HOST_H
#define GRID_D4_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4.h"
#include "grid_d4_batch.h"
#include "gw_cli.h"
#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_d4_gpu_result {
    gw_witness witness;
    grid_d4_status status;   /* from the device status record */
    size_t status_index;
    double ms_end_to_end;    /* upload + poison + launch + download, host clock */
    double ms_kernel;        /* CUDA events around the launch (status reset, validation, transform) */
    int witness_violations;
    char witness_receipt[256];
    char witness_check[1024]; /* findings of gw_witness_check, empty when clean */
} gw_d4_gpu_result;

/* Device side of one batch: allocated once, then called any number of times. */
typedef struct gw_d4_gpu {
    int ordinal;
    gw_gpu_facts facts;
    void *stream; /* cudaStream_t, kept opaque so this header stays plain C */
    void *ev_start, *ev_stop;
    uint8_t *d_in, *d_out, *d_ops;
    uint64_t *d_offset;
    uint16_t *d_height, *d_width, *d_out_height, *d_out_width;
    grid_d4_status_record *d_status;
    gw_witness *d_witness;
} gw_d4_gpu;

/* cudaSetDevice(ordinal), then allocations sized for b. On error everything is freed. */
int gw_d4_gpu_init(gw_d4_gpu *g, int ordinal, const grid_d4_batch *b, char *err, size_t err_size);
/* One call: upload inputs, poison the device outputs with poison_byte (shapes 0xFFFF), zero the witness,
 * launch once, synchronise, read the status record and the witness, download into out (whose host bytes
 * are poisoned with ~poison_byte first, so a failed download cannot look right; out->poison is poison_byte
 * afterwards, the value bytes outside every grid must keep), and check the witness against launches=1,
 * items = cells of b and the device's architecture. Returns 0 when every CUDA call succeeded (the status
 * and the witness verdict are in res), -1 with err naming the CUDA error. */
int gw_d4_gpu_call(gw_d4_gpu *g, const grid_d4_batch *b, uint8_t poison_byte, grid_d4_result *out,
                   gw_d4_gpu_result *res, char *err, size_t err_size);
/* Frees everything (safe after a failed init); 0, or -1 with err (may be NULL) naming the first CUDA error. */
int gw_d4_gpu_free(gw_d4_gpu *g, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GRID_D4_HOST_H */
