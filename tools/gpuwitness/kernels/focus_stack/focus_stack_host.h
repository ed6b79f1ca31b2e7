/* SPDX-License-Identifier: MIT
 * focus_stack's host side in the CLI (not a library API): host output buffers with poison and compare, and the
 * witnessed GPU call that run, check, doctor, trace, the ledger tests and the load tests share. Every function
 * returns a status up to main.
 */
#ifndef FOCUS_STACK_HOST_H
#define FOCUS_STACK_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "focus_stack.h"
#include "gw_cli.h"
#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- host buffers (focus_stack_host.c) ---- */

/* One call's outputs; best and focus are NULL when not wanted. */
typedef struct gw_focus_out {
    uint8_t *idx;
    uint16_t *ff;
    float *best, *focus;
} gw_focus_out;

/* Allocates idx and ff, and best / focus when asked. 0 or -1 (out of memory; nothing kept). */
int gw_focus_out_alloc(gw_focus_out *o, focus_stack_params p, int with_best, int with_focus);
void gw_focus_out_free(gw_focus_out *o);
/* Every present output byte set to byte: 0xFF gives idx 255 (never valid, Z <= 255), ff 0xFFFF and NaN
 * floats; 0xA5 gives idx 165, ff 0xA5A5 and a negative float, which no score can be. */
void gw_focus_out_poison(gw_focus_out *o, focus_stack_params p, uint8_t byte);
/* got against the reference want, byte for byte (floats as bits), every output present in got. 0 when
 * identical; 1 with the first mismatch of each output ((n,z,y,x), both values) and the counts in msg. */
int gw_focus_out_compare(const gw_focus_out *got, const gw_focus_out *want, focus_stack_params p, char *msg,
                         size_t msg_size);
/* Checks that need no reference: idx < Z, ff == in[n][idx][y][x], best == focus[idx] when both are there.
 * 0, or 1 with the first violation and the count in msg. */
int gw_focus_out_consistent(const gw_focus_out *o, const uint16_t *in, focus_stack_params p, char *msg,
                            size_t msg_size);
/* "ksize 3, log, zero border, no window" */
void gw_focus_params_text(focus_stack_params p, char *buf, size_t size);

/* ---- focus_stack on the GPU (focus_stack_gpu.c) ---- */

typedef struct gw_focus_gpu_result {
    gw_witness witness;
    double ms_end_to_end; /* upload + poison + launch + download, host clock */
    double ms_kernel;     /* CUDA events around the launch */
    int witness_violations;
    char witness_receipt[256];
    char witness_check[1024]; /* findings of gw_witness_check, empty when clean */
} gw_focus_gpu_result;

/* Device buffers for one problem size: allocated once, then called any number of times. */
typedef struct gw_focus_gpu {
    int ordinal;
    gw_gpu_facts facts;
    focus_stack_params p;
    void *stream, *ev_start, *ev_stop; /* CUDA handles, opaque so this header stays plain C */
    uint16_t *d_in, *d_ff;
    uint8_t *d_idx;
    float *d_best, *d_focus;
    gw_witness *d_witness;
} gw_focus_gpu;

/* cudaSetDevice(ordinal), a stream, events and the buffers (best / focus only when asked); on error
 * everything is freed. 0, or -1 with err naming the CUDA call. */
int gw_focus_gpu_init(gw_focus_gpu *g, int ordinal, focus_stack_params p, int with_best, int with_focus, char *err,
                      size_t err_size);
/* One witnessed call: upload in, poison the device outputs with poison_byte, zero the witness, launch once
 * (best / focus when out has them), synchronise, download into out (its host bytes poisoned with
 * ~poison_byte first, so a missed download cannot look right), check the witness against launches = 1,
 * items = n*y*x and the device's architecture. 0 when every CUDA call succeeded (the witness verdict
 * in res), -1 with err. */
int gw_focus_gpu_call(gw_focus_gpu *g, const uint16_t *in, uint8_t poison_byte, gw_focus_out *out,
                      gw_focus_gpu_result *res, char *err, size_t err_size);
/* Frees everything (safe after a failed init); 0, or -1 with err (may be NULL) naming the first error. */
int gw_focus_gpu_free(gw_focus_gpu *g, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* FOCUS_STACK_HOST_H */
