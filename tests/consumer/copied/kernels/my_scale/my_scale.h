/* SPDX-License-Identifier: MIT
 * my_scale: out[i] = factor * in[i] for i in 0..n-1 (float32), the downstream kernel that
 * docs/guard-your-kernel.md guards with a gpuwitness witness.
 *
 * Layout: in and out hold n floats each and must not overlap. Stream: my_scale_launch only enqueues one
 * kernel on `stream`; it never allocates or synchronises. Tolerance: exact (one float multiply, as in the
 * CPU loop). Errors: p NULL, or in/out NULL while n > 0, returns cudaErrorInvalidValue and enqueues
 * nothing; otherwise the result of cudaGetLastError() after the launch.
 * Witness: d_witness (NULL: off) records one launch whose items are the n outputs.
 *
 * Build: nvcc -O3 -lineinfo -arch=sm_90 -I.. -c my_scale.cu    (the directory above holds gw_witness.h)
 */
#ifndef MY_SCALE_H
#define MY_SCALE_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct my_scale_params {
    size_t n;     /* 0 enqueues nothing and returns success */
    float factor;
} my_scale_params;

cudaError_t my_scale_launch(const my_scale_params *p, const float *d_in, float *d_out, gw_witness *d_witness,
                            cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MY_SCALE_H */
