/* SPDX-License-Identifier: MIT
 * focus_stack: LoG focus measure and per-pixel best-slice selection for batches of microscope Z-stacks.
 *
 * What it computes, per stack n and pixel (y,x) (integer-only, so CPU and GPU agree bit for bit):
 *   1. Blur (LOG_ABS only): B = G (*) I, G = g g^T with OpenCV's taps (k=3: 1 2 1; k=5: 1 4 6 4 1;
 *      k=7: 2 7 14 18 14 7 2), I extended by the border rule.
 *   2. Laplacian: L = K (*) B, K = s(x)d2 + d2(x)s (OpenCV's ksize 3/5/7 tables), B extended by the border
 *      rule applied to B (for ZERO: B is 0 outside the image, never a blur into the padding). LAP_ABS: K (*) I.
 *   3. F = |L|.   4. Window w >= 3: V = box sum of F over w x w (F extended by the border rule); w in {0,1}: V = F.
 *   5. idx = the smallest z with the largest V (scan z upward, replace on strict >); ff = in[n][idx][y][x].
 *   6. focus = (float)V * (1/S) per slice, best = (float)V[idx] * (1/S); S = 4^(k-1) for LOG_ABS, 1 for LAP_ABS.
 * Borders: ZERO (0 outside), REPLICATE (clamp), REFLECT101 (OpenCV BORDER_REFLECT_101, any offset; n = 1 maps to 0).
 * Defaults (a zeroed struct with sizes and ksize = 3) reproduce morphseq's LoG_focus_stacker exactly.
 *
 * Layout. in uint16 [n][z][y][x]; idx uint8 [n][y][x]; ff uint16 [n][y][x]; best float32 [n][y][x] (NULL skips);
 *   focus float32 [n][z][y][x] (NULL skips). Dense, row-major, x fastest. Outputs must not overlap each other
 *   or the input (not checked).
 * Integer widths (at least): B int32; F int32 except LOG_ABS k=7 (int64); window sums int64 (w <= 7567 fits).
 * Speed: the morphseq defaults (ksize 3, LOG_ABS, ZERO, window 0/1) take a fused register-pipeline kernel that
 *   reads each input voxel from DRAM once; every other combination takes an exact general kernel that is
 *   slower, and whose cost for large windows grows with min(w,y)*min(w,x) per output pixel and slice.
 * Stream: focus_stack_launch only enqueues work on `stream`; no allocation, synchronisation or global state;
 *   the launch geometry does not limit y or x. Deterministic.
 * Tolerance: exact. idx, ff and the float outputs (as bits) equal focus_stack_ref byte for byte.
 * Errors: focus_stack_check() runs first in both the launcher and the reference and returns the first failing
 *   code in enum order; a rejected call writes and launches nothing. FOCUS_STACK_ERR_CUDA: the launch failed,
 *   or the device / occupancy queries before it did (then nothing was launched).
 * Witness: d_witness (NULL: off) records one launch whose items are the n*y*x pixels finalised.
 *
 * Example (tests/focus_stack/test_focus_stack_example.c compiles and runs it):
 * example-begin
 *     // 2 slices of a 1x3 image: slice 1 has the sharper centre, and with the ZERO border its edge
 *     // pixels score higher too
 *     // in = {100,100,100,  0,400,0}  (uint16, copied to d_in)
 *     focus_stack_params p = {.n = 1, .z = 2, .y = 1, .x = 3, .ksize = 3};  // LOG_ABS, ZERO border, no window
 *     int rc = focus_stack_launch(p, d_in, d_idx, d_ff, NULL, NULL, NULL, stream);
 *     // rc == FOCUS_STACK_OK; after cudaStreamSynchronize: idx = {1,1,1}, ff = {0,400,0}
 * example-end
 *
 * Build: nvcc -O3 -lineinfo -arch=sm_90 -I.. -c focus_stack.cu    (the directory above holds gw_witness.h)
 */
#ifndef FOCUS_STACK_H
#define FOCUS_STACK_H

#include <stddef.h>
#include <stdint.h>

/* The types and the check are plain C; the launcher needs the CUDA runtime headers. The CPU reference
 * includes this header without them. */
#if defined(__CUDACC__)
#define FOCUS_STACK_HAVE_CUDA_RUNTIME 1
#elif defined(__has_include) /* nested: a compiler without __has_include must not parse the call */
#if __has_include(<cuda_runtime_api.h>)
#define FOCUS_STACK_HAVE_CUDA_RUNTIME 1
#endif
#endif
#ifdef FOCUS_STACK_HAVE_CUDA_RUNTIME
#include <cuda_runtime_api.h>
#endif

#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FOCUS_STACK_MAX_Z 255       /* idx is uint8 */
#define FOCUS_STACK_MAX_WINDOW 7567 /* keeps w*w*F inside int64 for LOG_ABS k=7 */

typedef enum focus_stack_measure { FOCUS_STACK_LOG_ABS = 0, FOCUS_STACK_LAP_ABS = 1 } focus_stack_measure;

typedef enum focus_stack_border {
    FOCUS_STACK_BORDER_ZERO = 0,
    FOCUS_STACK_BORDER_REPLICATE = 1,
    FOCUS_STACK_BORDER_REFLECT101 = 2
} focus_stack_border;

typedef enum focus_stack_status {
    FOCUS_STACK_OK = 0,
    FOCUS_STACK_ERR_NULL = 1,
    FOCUS_STACK_ERR_DIM = 2,
    FOCUS_STACK_ERR_KSIZE = 3,
    FOCUS_STACK_ERR_WINDOW = 4,
    FOCUS_STACK_ERR_ENUM = 5,
    FOCUS_STACK_ERR_OVERFLOW = 6,
    FOCUS_STACK_ERR_CUDA = 7
} focus_stack_status;

typedef struct focus_stack_params {
    int n, z, y, x; /* stacks, slices (1..255), rows, columns */
    int ksize;      /* 3, 5 or 7 */
    int measure;    /* focus_stack_measure; 0 = LOG_ABS */
    int border;     /* focus_stack_border; 0 = ZERO */
    int window;     /* 0 or 1: none; odd 3..7567: box sum of the score */
} focus_stack_params;

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
    case FOCUS_STACK_ERR_CUDA: return "the CUDA launch failed (cudaGetLastError names the cause)";
    }
    return "unknown focus_stack status";
}

/* The argument rules, in table order; 0 when the call may proceed. Used by the launcher and the reference. */
static inline int focus_stack_check(focus_stack_params p, const void *in, const void *idx, const void *ff)
{
    if (!in || !idx || !ff) return FOCUS_STACK_ERR_NULL;
    if (p.n < 1 || p.z < 1 || p.y < 1 || p.x < 1 || p.z > FOCUS_STACK_MAX_Z) return FOCUS_STACK_ERR_DIM;
    if (p.ksize != 3 && p.ksize != 5 && p.ksize != 7) return FOCUS_STACK_ERR_KSIZE;
    if (p.window < 0 || p.window > FOCUS_STACK_MAX_WINDOW || (p.window > 1 && p.window % 2 == 0))
        return FOCUS_STACK_ERR_WINDOW;
    if ((p.measure != FOCUS_STACK_LOG_ABS && p.measure != FOCUS_STACK_LAP_ABS) ||
        (p.border != FOCUS_STACK_BORDER_ZERO && p.border != FOCUS_STACK_BORDER_REPLICATE &&
         p.border != FOCUS_STACK_BORDER_REFLECT101))
        return FOCUS_STACK_ERR_ENUM;
    /* n*z*y*x*4 in uint64 step by step; each factor is >= 1 and < 2^31, so a product that stays below the
     * limit after each step cannot have wrapped. */
    const uint64_t limit = (uint64_t)(SIZE_MAX < (uint64_t)INT64_MAX ? SIZE_MAX : (uint64_t)INT64_MAX);
    uint64_t bytes = 4;
    const int dims[4] = {p.n, p.z, p.y, p.x};
    for (int i = 0; i < 4; i++) {
        if (bytes > limit / (uint64_t)dims[i]) return FOCUS_STACK_ERR_OVERFLOW;
        bytes *= (uint64_t)dims[i];
    }
    return FOCUS_STACK_OK;
}

#ifdef FOCUS_STACK_HAVE_CUDA_RUNTIME
int focus_stack_launch(focus_stack_params p, const uint16_t *d_in, uint8_t *d_idx, uint16_t *d_ff, float *d_best,
                       float *d_focus, gw_witness *d_witness, cudaStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* FOCUS_STACK_H */
