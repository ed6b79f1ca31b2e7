/* SPDX-License-Identifier: MIT
 * Small kernels that exercise one rule of the emulated device each (tests/emu/test_emu.c), built only for the
 * emulated device (gw_add_emu_library): barriers and their votes, warp shuffles and votes, the errors a GPU
 * would turn into a hang or a wrong answer, CUB's block primitives, atomics, dynamic shared memory.
 * Each launcher enqueues one launch and returns cudaGetLastError(), as the project's launchers do.
 */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "emu_probe_kernels.h"

/* out[i] = the value thread (i + 1) % n of the block wrote before the barrier */
__global__ void neighbour_kernel(int *out)
{
    __shared__ int s[1024];
    const int n = (int)blockDim.x, t = (int)threadIdx.x;
    s[t] = t * 3 + (int)blockIdx.x;
    __syncthreads();
    out[blockIdx.x * n + t] = s[(t + 1) % n];
}

__global__ void votes_kernel(int *out)
{
    const int t = (int)threadIdx.x;
    out[0] = __syncthreads_count(t % 3 == 0);
    out[1] = __syncthreads_or(t == 77);
    out[2] = __syncthreads_and(t >= 0);
}

/* per warp: the butterfly sum of the lanes, shfl_up/down neighbours, the ballot of odd lanes */
__global__ void warp_kernel(int *out)
{
    const int t = (int)threadIdx.x, lane = t % 32;
    int v = t;
    for (int d = 16; d; d /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
    out[4 * t + 0] = v;
    out[4 * t + 1] = __shfl_up_sync(0xFFFFFFFFu, t, 1);
    out[4 * t + 2] = __shfl_down_sync(0xFFFFFFFFu, t, 1);
    out[4 * t + 3] = (int)__ballot_sync(0xFFFFFFFFu, lane & 1);
}

/* a __syncthreads that only the first half of the block reaches: a hang on a GPU */
__global__ void divergent_barrier_kernel(int *out)
{
    if (threadIdx.x < blockDim.x / 2) __syncthreads();
    out[threadIdx.x] = 1;
    __syncthreads();
}

/* lane 0 calls with a mask that names lanes 1..31 only */
__global__ void foreign_mask_kernel(int *out)
{
    out[threadIdx.x] = __shfl_sync(0xFFFFFFFEu, (int)threadIdx.x, 0);
}

/* lanes 16..31 return while lanes 0..15 wait for them in a full-warp shuffle */
__global__ void missing_lane_kernel(int *out)
{
    if (threadIdx.x >= 16) return;
    out[threadIdx.x] = __shfl_xor_sync(0xFFFFFFFFu, (int)threadIdx.x, 1);
}

typedef cub::BlockReduce<double, 128> reduce_t;
typedef cub::BlockScan<int, 128> scan_t;

/* out_sum[block] = the block's sum; scan_out[t] = the inclusive max-scan of 4 items per thread; excl[t] the
 * exclusive sum of one item per thread, aggregate[t] the block's total as every thread sees it */
__global__ void cub_kernel(const double *values, const int *items, double *sum, int *scan_out, int *excl,
                           int *aggregate)
{
    __shared__ typename reduce_t::TempStorage reduce_storage;
    __shared__ typename scan_t::TempStorage scan_storage;
    const int t = (int)threadIdx.x;
    const double total = reduce_t(reduce_storage).Sum(values[t]);
    if (t == 0) sum[0] = total;
    int in[4], out[4];
    for (int i = 0; i < 4; i++) in[i] = items[4 * t + i];
    scan_t(scan_storage).InclusiveScan(in, out, [](int a, int b) { return a > b ? a : b; });
    for (int i = 0; i < 4; i++) scan_out[4 * t + i] = out[i];
    __syncthreads(); /* the scan storage is reused */
    int before = 0, all = 0;
    scan_t(scan_storage).ExclusiveSum(items[4 * t], before, all);
    excl[t] = before;
    aggregate[t] = all;
}

/* every thread takes a ticket: order[ticket] = its global index (the interleaving the scheduler drew) */
__global__ void ticket_kernel(unsigned *counter, unsigned *order, unsigned short *cas16)
{
    const unsigned me = blockIdx.x * blockDim.x + threadIdx.x;
    order[atomicAdd(counter, 1u)] = me;
    unsigned short seen = cas16[0];
    for (;;) { /* a 16-bit compare-and-swap increment, as grid_objects' union-find builds on */
        const unsigned short was = atomicCAS(&cas16[0], seen, (unsigned short)(seen + 1));
        if (was == seen) break;
        seen = was;
    }
}

__global__ void dynamic_shared_kernel(double *out, int n)
{
    extern __shared__ double s_dyn[];
    const int t = (int)threadIdx.x;
    for (int i = t; i < n; i += (int)blockDim.x) s_dyn[i] = 0.5 * i;
    __syncthreads();
    for (int i = t; i < n; i += (int)blockDim.x) out[i] = s_dyn[n - 1 - i];
}

extern "C" {

cudaError_t emu_neighbour(int *d_out, int blocks, int threads, cudaStream_t s)
{
    neighbour_kernel<<<blocks, threads, 0, s>>>(d_out);
    return cudaGetLastError();
}
cudaError_t emu_votes(int *d_out, int threads)
{
    votes_kernel<<<1, threads>>>(d_out);
    return cudaGetLastError();
}
cudaError_t emu_warp(int *d_out, int threads)
{
    warp_kernel<<<1, threads>>>(d_out);
    return cudaGetLastError();
}
cudaError_t emu_divergent_barrier(int *d_out)
{
    divergent_barrier_kernel<<<1, 64>>>(d_out);
    return cudaGetLastError();
}
cudaError_t emu_foreign_mask(int *d_out)
{
    foreign_mask_kernel<<<1, 32>>>(d_out);
    return cudaGetLastError();
}
cudaError_t emu_missing_lane(int *d_out)
{
    missing_lane_kernel<<<1, 32>>>(d_out);
    return cudaGetLastError();
}
cudaError_t emu_cub(const double *d_values, const int *d_items, double *d_sum, int *d_scan, int *d_excl,
                    int *d_aggregate, int threads)
{
    cub_kernel<<<1, threads>>>(d_values, d_items, d_sum, d_scan, d_excl, d_aggregate);
    return cudaGetLastError();
}
cudaError_t emu_tickets(unsigned *d_counter, unsigned *d_order, unsigned short *d_cas16, int blocks, int threads)
{
    ticket_kernel<<<blocks, threads>>>(d_counter, d_order, d_cas16);
    return cudaGetLastError();
}
cudaError_t emu_dynamic_shared(double *d_out, int n, size_t shared_bytes)
{
    dynamic_shared_kernel<<<1, 128, shared_bytes>>>(d_out, n);
    return cudaGetLastError();
}
cudaError_t emu_allow_dynamic_shared(int bytes)
{
    return cudaFuncSetAttribute(dynamic_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

} /* extern "C" */
