/* SPDX-License-Identifier: MIT */
#include "my_scale.h"

#include <limits.h>

#define MY_SCALE_THREADS 256

static __global__ void my_scale_kernel(size_t n, float factor, const float *in, float *out, gw_witness *w)
{
    const unsigned long long t_start = gw_witness_clock(w);
    const size_t first = (size_t)blockIdx.x * blockDim.x;
    const size_t i = first + threadIdx.x;
    if (i < n) out[i] = factor * in[i];
    /* No early return above: every thread must reach the recording call, which holds a barrier. The last
     * block may be partial, so a block counts the outputs it really wrote. */
    const size_t block_items = n - first < blockDim.x ? n - first : blockDim.x;
    gw_witness_block_done(w, block_items, t_start);
}

extern "C" cudaError_t my_scale_launch(const my_scale_params *p, const float *d_in, float *d_out,
                                       gw_witness *d_witness, cudaStream_t stream)
{
    if (!p) return cudaErrorInvalidValue;
    if (p->n == 0) return cudaSuccess;
    if (!d_in || !d_out) return cudaErrorInvalidValue;
    const size_t blocks = (p->n + MY_SCALE_THREADS - 1) / MY_SCALE_THREADS;
    if (blocks > INT_MAX) return cudaErrorInvalidValue; /* gridDim.x limit */
    my_scale_kernel<<<(unsigned)blocks, MY_SCALE_THREADS, 0, stream>>>(p->n, p->factor, d_in, d_out, d_witness);
    return cudaGetLastError();
}
