/* SPDX-License-Identifier: MIT
 * focus_stack_ref: CPU reference for kernels/focus_stack (semantics, layout and errors in focus_stack.h).
 * Same parameters as focus_stack_launch without the d_ prefixes, witness and stream, plus n_threads:
 * 1 runs single-threaded, 0 or less uses every core, N uses N threads (OpenMP over tiles of every stack,
 * each through all its slices, so the time follows the bytes whatever the shape); no output bit depends on
 * it. Without memory for its scratch it computes the same values pixel by pixel, with no allocation.
 * Plain loops over the definition with integer accumulators (int64 throughout); returns a focus_stack_status.
 */
#ifndef FOCUS_STACK_REF_H
#define FOCUS_STACK_REF_H

#include <stdint.h>

#include "focus_stack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The focus stack of p on host buffers (best and focus may be NULL); a focus_stack_status, 0 when done. */
int focus_stack_ref(const focus_stack_params *p, const uint16_t *in, uint8_t *idx, uint16_t *ff, float *best,
                    float *focus, int n_threads);

#ifdef __cplusplus
}
#endif

#endif /* FOCUS_STACK_REF_H */
