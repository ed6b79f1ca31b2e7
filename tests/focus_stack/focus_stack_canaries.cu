/* SPDX-License-Identifier: MIT
 * Planted faults for focus_stack (test builds only; never part of kernels/). A canary executable is linked
 * with --wrap=focus_stack_launch (gw_wrap_launcher, tests/gw_tests.cmake), so every call its test makes lands
 * in __wrap_focus_stack_launch here, and __real_focus_stack_launch is the focus_stack library's. One fault
 * per build, chosen by a compile definition; each must be caught by the guard named in
 * tests/focus_stack/CMakeLists.txt:
 *
 *   FOCUS_STACK_CANARY_CPU_FALLBACK  copies the input back, runs focus_stack_ref on the host, uploads the
 *                                    results: right answer, no GPU code  -> witness "no GPU code ran"
 *   FOCUS_STACK_CANARY_NO_LAUNCH     returns cudaSuccess, does nothing -> poison and witness
 *   FOCUS_STACK_CANARY_PARTIAL_GRID  launches the real kernel for the first half of the stacks (or rows), as
 *                                    a grid sized off by half would -> witness "partial execution"
 *   FOCUS_STACK_CANARY_STALE_OUTPUT  first call real, later calls return cudaSuccess without launching; the
 *                                    tests re-poison before every call -> "poison"
 *   FOCUS_STACK_CANARY_OFF_BY_ONE    a correct launch, then ff[0] off by one -> exact comparison "differ"
 *   FOCUS_STACK_CANARY_OOB_WRITE     a correct launch, then one ff element written 100 past the end (beyond
 *                                    the tests' poisoned slack) -> compute-sanitizer "Invalid __global__ write"
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "focus_stack.h"
#include "focus_stack_ref.h"

extern "C" cudaError_t __real_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream);
extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream);

#if defined(FOCUS_STACK_CANARY_CPU_FALLBACK)

/* The "GPU function that computes on the CPU" of docs/witness.md: correct bytes and no kernel, so the
 * witness stays empty. */
extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream)
{
    if (focus_stack_check(p, d_in, d_idx, d_ff) != FOCUS_STACK_OK) /* rejections: the real answer */
        return __real_focus_stack_launch(p, d_in, d_idx, d_ff, d_best, d_focus, d_witness, stream);
    const size_t pixels = (size_t)p->n * p->y * p->x, voxels = pixels * p->z;
    cudaError_t err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) return err;
    uint16_t *in = (uint16_t *)malloc(voxels * 2), *ff = (uint16_t *)malloc(pixels * 2);
    uint8_t *idx = (uint8_t *)malloc(pixels);
    float *best = d_best ? (float *)malloc(pixels * 4) : NULL, *focus = d_focus ? (float *)malloc(voxels * 4) : NULL;
    err = cudaErrorMemoryAllocation;
    if (in && ff && idx && (best || !d_best) && (focus || !d_focus) &&
        cudaMemcpy(in, d_in, voxels * 2, cudaMemcpyDeviceToHost) == cudaSuccess &&
        focus_stack_ref(p, in, idx, ff, best, focus, 0) == FOCUS_STACK_OK &&
        cudaMemcpy(d_idx, idx, pixels, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaMemcpy(d_ff, ff, pixels * 2, cudaMemcpyHostToDevice) == cudaSuccess &&
        (!d_best || cudaMemcpy(d_best, best, pixels * 4, cudaMemcpyHostToDevice) == cudaSuccess) &&
        (!d_focus || cudaMemcpy(d_focus, focus, voxels * 4, cudaMemcpyHostToDevice) == cudaSuccess))
        err = cudaSuccess;
    free(in), free(ff), free(idx), free(best), free(focus);
    return err;
}

#elif defined(FOCUS_STACK_CANARY_NO_LAUNCH)

extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *, const uint16_t *, uint8_t *, uint16_t *,
                                                 float *, float *, gw_witness *, cudaStream_t)
{
    return cudaSuccess;
}

#elif defined(FOCUS_STACK_CANARY_PARTIAL_GRID)

extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream)
{
    /* Half the stacks when there are several (the rest of each output is never written), else half the rows
     * of the one stack (which also reads the wrong rows for every slice but the first). */
    if (focus_stack_check(p, d_in, d_idx, d_ff) != FOCUS_STACK_OK)
        return __real_focus_stack_launch(p, d_in, d_idx, d_ff, d_best, d_focus, d_witness, stream);
    focus_stack_params half = *p;
    if (half.n >= 2)
        half.n /= 2;
    else if (half.y >= 2)
        half.y /= 2;
    return __real_focus_stack_launch(&half, d_in, d_idx, d_ff, d_best, d_focus, d_witness, stream);
}

#elif defined(FOCUS_STACK_CANARY_STALE_OUTPUT)

extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream)
{
    static int calls; /* per test process: Criterion runs each test in its own */
    if (calls++ == 0) return __real_focus_stack_launch(p, d_in, d_idx, d_ff, d_best, d_focus, d_witness, stream);
    return cudaSuccess;
}

#elif defined(FOCUS_STACK_CANARY_OFF_BY_ONE)

/* One thread after the real kernel: a wrong value that every other guard accepts. */
__global__ void off_by_one_kernel(uint16_t *ff) { ff[0] = (uint16_t)(ff[0] + 1); }

extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream)
{
    const cudaError_t err = __real_focus_stack_launch(p, d_in, d_idx, d_ff, d_best, d_focus, d_witness, stream);
    if (err != cudaSuccess) return err;
    off_by_one_kernel<<<1, 1, 0, stream>>>(d_ff);
    return cudaGetLastError();
}

#elif defined(FOCUS_STACK_CANARY_OOB_WRITE)

__global__ void oob_write_kernel(uint16_t *ff, size_t pixels) { ff[pixels + 100] = 0x4242; }

extern "C" cudaError_t __wrap_focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                                 uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                                 cudaStream_t stream)
{
    const cudaError_t err = __real_focus_stack_launch(p, d_in, d_idx, d_ff, d_best, d_focus, d_witness, stream);
    if (err != cudaSuccess) return err;
    oob_write_kernel<<<1, 1, 0, stream>>>(d_ff, (size_t)p->n * p->y * p->x);
    return cudaGetLastError();
}

#else
#error "define one of FOCUS_STACK_CANARY_CPU_FALLBACK, _NO_LAUNCH, _PARTIAL_GRID, _STALE_OUTPUT, _OFF_BY_ONE, _OOB_WRITE"
#endif
