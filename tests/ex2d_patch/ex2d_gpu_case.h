/* SPDX-License-Identifier: MIT
 * One ex2d_patch GPU test case: a synthetic frame (reference/ex2d_patch/ex2d_synth.h) on the host with the CPU
 * reference's workspace and frame outputs, the same inputs on the device with the GPU's workspace, frame
 * outputs and one witness record per stage, and host copies of what the GPU wrote. GPU test executables only
 * (Criterion, cudart): a failing CUDA call ends the test.
 *
 * The device receives the reference spots (d_spots), so K3..K7 read the very bytes the CPU reads and K3 can be
 * compared bit for bit; K1's own output goes to d_spots_k1. Poison is all-ones bytes (a NaN for doubles, -1
 * for the int32 fields of info), written stream-ordered before a call; the check word at the start of the
 * workspace is never poisoned (-1 would read as a validation failure).
 */
#ifndef EX2D_GPU_CASE_H
#define EX2D_GPU_CASE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ex2d_patch.h"
#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"

typedef struct ex2d_gpu_case {
    ex2d_frame f; /* host inputs, f_true and the reference spots */
    int max_batch;
    size_t ws_bytes, bins, entries, spot_pixels;
    int ndiags;
    /* CPU reference */
    void *ref_ws;
    ex2d_workspace ref_w;
    ex2d_outputs ref_out;
    /* GPU */
    cudaStream_t stream;
    ex2d_inputs d_in; /* device pointers; the arrays below are its storage */
    double *d_image, *d_ivar, *d_sigx, *d_sigy, *d_dx, *d_dy, *d_c;
    int32_t *d_xc, *d_yc;
    ex2d_patch_desc *d_patches;
    double *d_tail; /* NULL unless the frame comes from a real PSF */
    double *d_spots, *d_spots_k1;
    void *d_ws;
    ex2d_workspace d_w; /* carved over d_ws */
    ex2d_outputs d_out;
    gw_witness *d_witness; /* EX2D_WITNESS_SLOTS records, one per stage */
    /* the GPU's results, copied back by ex2d_gc_download */
    void *got_ws;
    ex2d_workspace got_w;
    ex2d_outputs got_out;
    double *got_spots; /* entries * spot_pixels */
} ex2d_gpu_case;

/* The tier's configuration (ex2d_frame_config_tier); spots on every core. */
ex2d_frame_config ex2d_gc_tier_config(int tier);

/* Builds the frame, allocates both sides and uploads the inputs. */
void ex2d_gc_open(ex2d_gpu_case *t, const ex2d_frame_config *cfg, int max_batch);
void ex2d_gc_close(ex2d_gpu_case *t);

/* Suite .fini: closes any case a failed test left open, then resets the device (compute-sanitizer's leak
 * check reports at context teardown). No CUDA call when no case was ever opened. */
void ex2d_gc_fini(void);

/* Uploads image, ivar and the patch table again after the test changed them on the host. */
void ex2d_gc_upload_inputs(ex2d_gpu_case *t);

/* All-ones bytes over [d_ptr, d_ptr + bytes), stream-ordered. */
void ex2d_gc_poison(ex2d_gpu_case *t, void *d_ptr, size_t bytes);

/* Everything a call may write: the workspace after the check word, the frame outputs, info, K1's spots;
 * and zeroed witness records. */
void ex2d_gc_poison_all(ex2d_gpu_case *t);

/* Zeroes the EX2D_WITNESS_SLOTS records. */
void ex2d_gc_reset_witness(ex2d_gpu_case *t);

/* Synchronises, then copies the workspace, frame outputs, info and K1's spots into got_*. */
void ex2d_gc_download(ex2d_gpu_case *t);

/* The record of one stage against the expected launches and items: 0, or the violations in msg. launches 0:
 * the record must still be zero. */
int ex2d_gc_witness(const ex2d_gpu_case *t, int slot, uint64_t launches, uint64_t items, char *msg,
                    size_t msg_size);

/* Witness expectations from the reference: overlapping pairs a <= b of patches [first, first+count), and the
 * core blocks of those that K4 factorised (reference status in ref_out.info other than NOT_POSDEF), which
 * are the blocks K5 and K6 work on. */
uint64_t ex2d_gc_pairs(const ex2d_gpu_case *t, int first, int count);
uint64_t ex2d_gc_factorised_blocks(const ex2d_gpu_case *t, int first, int count);

/* The pointers of slot b (patch patch_first + b of a batch) in a carved workspace, host or device. */
typedef struct ex2d_gc_slot {
    double *icov, *y, *fluxweight, *xflux, *cblk, *qblk, *model;
    size_t ld;
} ex2d_gc_slot;
ex2d_gc_slot ex2d_gc_slot_of(const ex2d_gpu_case *t, const ex2d_workspace *w, int b);

#endif /* EX2D_GPU_CASE_H */
