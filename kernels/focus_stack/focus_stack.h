/* SPDX-License-Identifier: MIT
 * focus_stack: LoG focus measure and per-pixel best-slice selection for batches of microscope Z-stacks.
 *
 * What. Per stack n and pixel (y,x), integer-only so that CPU and GPU agree bit for bit:
 *   B = G (*) I (LOG_ABS only; OpenCV's ksize 3/5/7 Gaussian taps), L = K (*) B (OpenCV's Laplacian tables),
 *   F = |L|, V = F or its w x w box sum; idx = the first z with the largest V, ff = in[n][idx][y][x],
 *   best = V[idx] / S, focus = V / S per slice (S = 4^(ksize-1) for LOG_ABS, 1 for LAP_ABS). Every image is
 *   extended by the border rule: ZERO (0 outside; B is 0 outside too), REPLICATE, REFLECT101 (OpenCV's).
 *   A zeroed params struct with sizes and ksize 3 reproduces morphseq's LoG_focus_stacker. Taps, widths and
 *   the worked formulas: docs/focus_stack.md.
 * Layout. in uint16 [n][z][y][x]; idx uint8 [n][y][x]; ff uint16 [n][y][x]; best float32 [n][y][x] and focus
 *   float32 [n][z][y][x] (either may be NULL: not computed). Dense, row-major, x fastest. Outputs must not
 *   overlap each other or the input (not checked).
 * Errors. focus_stack_check() holds every argument rule, in enum order. The launcher runs it first and
 *   returns cudaErrorInvalidValue, writing and enqueuing nothing, when a rule fails (call focus_stack_check
 *   for which one); the reference returns its code. Then the launcher returns a CUDA error already pending
 *   on entry untouched (cudaPeekAtLastError), before enqueuing anything; else the result of its launch.
 * Stream. focus_stack_launch only enqueues work on `stream`, which must belong to the current device; no
 *   allocation, synchronisation or global state. Deterministic.
 * Tolerance: exact. idx, ff and the float outputs (as bits) equal focus_stack_ref byte for byte.
 * Witness. d_witness (NULL: off) records one launch whose items are the n*y*x pixels finalised.
 *
 * Example (tests/focus_stack/test_focus_stack_example.c compiles and runs it):
 * example-begin
 *     // 2 slices of a 1x3 image: slice 1 has the sharper centre, and with the ZERO border its edge
 *     // pixels score higher too
 *     // in = {100,100,100,  0,400,0}  (uint16, copied to d_in)
 *     focus_stack_params p = {.n = 1, .z = 2, .y = 1, .x = 3, .ksize = 3};  // LOG_ABS, ZERO border, no window
 *     cudaError_t err = focus_stack_launch(&p, d_in, d_idx, d_ff, NULL, NULL, NULL, stream);
 *     // err == cudaSuccess; after cudaStreamSynchronize: idx = {1,1,1}, ff = {0,400,0}
 * example-end
 *
 * Build: nvcc -O3 -lineinfo -arch=sm_90 -I.. -c focus_stack.cu    (the directory above holds gw_witness.h)
 */
#ifndef FOCUS_STACK_H
#define FOCUS_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "gw_witness.h" /* the witness record, and the CUDA runtime headers where they exist */

#ifdef __cplusplus
extern "C" {
#endif

#define FOCUS_STACK_MAX_Z 255       /* slices per stack: idx is uint8 */
#define FOCUS_STACK_MAX_WINDOW 7567 /* the largest window: keeps w*w*F inside int64 for LOG_ABS ksize 7 */

/* The focus measure: |Laplacian of Gaussian| (morphseq's) or |Laplacian| of the raw image. */
typedef enum focus_stack_measure { FOCUS_STACK_LOG_ABS = 0, FOCUS_STACK_LAP_ABS = 1 } focus_stack_measure;

/* How every image is extended beyond its edges. */
typedef enum focus_stack_border {
    FOCUS_STACK_BORDER_ZERO = 0,      /* 0 outside (morphseq's zero padding) */
    FOCUS_STACK_BORDER_REPLICATE = 1, /* the nearest edge pixel */
    FOCUS_STACK_BORDER_REFLECT101 = 2 /* OpenCV's BORDER_REFLECT_101, any offset; a size of 1 maps to 0 */
} focus_stack_border;

/* The argument rules, in the order focus_stack_check tests them; 0 when the call may proceed. */
typedef enum focus_stack_status {
    FOCUS_STACK_OK = 0,
    FOCUS_STACK_ERR_NULL = 1,    /* in, idx or ff is NULL */
    FOCUS_STACK_ERR_DIM = 2,     /* n, z, y or x below 1, or z above FOCUS_STACK_MAX_Z */
    FOCUS_STACK_ERR_KSIZE = 3,   /* ksize not 3, 5 or 7 */
    FOCUS_STACK_ERR_WINDOW = 4,  /* window not 0, 1 or odd up to FOCUS_STACK_MAX_WINDOW */
    FOCUS_STACK_ERR_ENUM = 5,    /* measure or border out of range */
    FOCUS_STACK_ERR_OVERFLOW = 6 /* n*z*y*x*4 bytes overflow size_t or int64 */
} focus_stack_status;

/* One call's problem: sizes and the measure's parameters (a zeroed struct plus sizes and ksize 3 is morphseq's). */
typedef struct focus_stack_params {
    int n, z, y, x; /* stacks, slices (1..255), rows, columns */
    int ksize;      /* 3, 5 or 7 */
    int measure;    /* focus_stack_measure; 0 = LOG_ABS */
    int border;     /* focus_stack_border; 0 = ZERO */
    int window;     /* 0 or 1: none; odd 3..7567: box sum of the score */
} focus_stack_params;

/* A status code in words, naming the rule it stands for. */
static inline const char *focus_stack_status_str(int status)
{
    switch (status) {
    case FOCUS_STACK_OK: return "ok";
    case FOCUS_STACK_ERR_NULL: return "a required pointer is NULL: in, idx and ff must be given (best and focus may be NULL)";
    case FOCUS_STACK_ERR_DIM: return "bad size: n, z, y and x must be at least 1, and z at most 255 (idx is uint8)";
    case FOCUS_STACK_ERR_KSIZE: return "bad ksize: must be 3, 5 or 7";
    case FOCUS_STACK_ERR_WINDOW: return "bad window: must be 0, 1 or an odd number from 3 to 7567";
    case FOCUS_STACK_ERR_ENUM: return "bad enum: measure must be LOG_ABS (0) or LAP_ABS (1), border ZERO (0), REPLICATE (1) or REFLECT101 (2)";
    case FOCUS_STACK_ERR_OVERFLOW: return "too large: n*z*y*x*4 bytes (the focus volume) overflows size_t or int64";
    }
    return "unknown focus_stack status";
}

/* The argument rules, in table order; 0 when the call may proceed. Used by the launcher and the reference. */
static inline int focus_stack_check(const focus_stack_params *p, const void *in, const void *idx, const void *ff)
{
    if (!p || !in || !idx || !ff) return FOCUS_STACK_ERR_NULL;
    if (p->n < 1 || p->z < 1 || p->y < 1 || p->x < 1 || p->z > FOCUS_STACK_MAX_Z) return FOCUS_STACK_ERR_DIM;
    if (p->ksize != 3 && p->ksize != 5 && p->ksize != 7) return FOCUS_STACK_ERR_KSIZE;
    if (p->window < 0 || p->window > FOCUS_STACK_MAX_WINDOW || (p->window > 1 && p->window % 2 == 0))
        return FOCUS_STACK_ERR_WINDOW;
    if ((p->measure != FOCUS_STACK_LOG_ABS && p->measure != FOCUS_STACK_LAP_ABS) ||
        (p->border != FOCUS_STACK_BORDER_ZERO && p->border != FOCUS_STACK_BORDER_REPLICATE &&
         p->border != FOCUS_STACK_BORDER_REFLECT101))
        return FOCUS_STACK_ERR_ENUM;
    /* n*z*y*x*4 in uint64 step by step; each factor is >= 1 and < 2^31, so a product that stays below the
     * limit after each step cannot have wrapped. */
    const uint64_t limit = (uint64_t)(SIZE_MAX < (uint64_t)INT64_MAX ? SIZE_MAX : (uint64_t)INT64_MAX);
    uint64_t bytes = 4;
    const int dims[4] = {p->n, p->z, p->y, p->x};
    for (int i = 0; i < 4; i++) {
        if (bytes > limit / (uint64_t)dims[i]) return FOCUS_STACK_ERR_OVERFLOW;
        bytes *= (uint64_t)dims[i];
    }
    return FOCUS_STACK_OK;
}

#ifdef GW_HAVE_CUDA_RUNTIME
/* Enqueues the focus stack of p on stream: device pointers in, idx, ff (required), best, focus, d_witness
 * (NULL: not computed, not recorded). cudaErrorInvalidValue when focus_stack_check fails, a pending error as it
 * was, else the launch's result. */
cudaError_t focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx, uint16_t *d_ff,
                               float *d_best, float *d_focus, gw_witness *d_witness, cudaStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* FOCUS_STACK_H */
