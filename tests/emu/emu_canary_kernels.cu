/* SPDX-License-Identifier: MIT
 * Planted faults for the emu tier's sanitizer runs (emu_missing_sync: emu_tsan_run.c; emu_shared_off_by_one:
 * emu_canaries.c): each is the bug a compute-sanitizer tool exists for, and the sanitizer named in
 * tests/emu/CMakeLists.txt must stop it.
 *
 *   emu_missing_sync       each thread writes its shared slot and reads its neighbour's with no __syncthreads
 *                          between: racecheck's hazard, ThreadSanitizer's "data race" here
 *   emu_shared_off_by_one  each thread writes slot threadIdx.x + 1 of a shared array of blockDim.x: the last
 *                          write is one past the end; memcheck's "Invalid __shared__ write", here the bounds
 *                          check of UndefinedBehaviorSanitizer, or AddressSanitizer's "global-buffer-overflow"
 *                          (a __shared__ array is a static of the host program)
 */
#include "emu_canary_kernels.h"

enum { CANARY_THREADS = 64 };

__global__ void missing_sync_kernel(int *out)
{
    __shared__ int s[CANARY_THREADS];
    const int t = (int)threadIdx.x;
    s[t] = t;
    out[t] = s[(t + 1) % CANARY_THREADS]; /* the planted fault: no __syncthreads() before this read */
}

__global__ void shared_off_by_one_kernel(int *out)
{
    __shared__ int s[CANARY_THREADS];
    const int t = (int)threadIdx.x;
    s[t + 1] = t; /* the planted fault: s[CANARY_THREADS] for the last thread */
    __syncthreads();
    out[t] = s[t];
}

extern "C" cudaError_t emu_missing_sync(int *d_out)
{
    missing_sync_kernel<<<1, CANARY_THREADS>>>(d_out);
    return cudaGetLastError();
}

extern "C" cudaError_t emu_shared_off_by_one(int *d_out)
{
    shared_off_by_one_kernel<<<1, CANARY_THREADS>>>(d_out);
    return cudaGetLastError();
}
