/* SPDX-License-Identifier: MIT
 * Planted faults for grid_d4 (test builds only; never part of kernels/). A canary executable is linked with
 * --wrap=grid_d4_launch (gw_wrap_launcher, tests/gw_tests.cmake), so every call its test makes lands in
 * __wrap_grid_d4_launch here, and __real_grid_d4_launch is the grid_d4 library's. One fault per build,
 * chosen by a compile definition; each must be caught by the guard named in tests/grid_d4/CMakeLists.txt:
 *
 *   GRID_D4_CANARY_CPU_FALLBACK  copies the inputs back, runs grid_d4_ref on the host, uploads the result:
 *                                right answer, no GPU code  -> witness "no GPU code ran"
 *   GRID_D4_CANARY_NO_LAUNCH     returns cudaSuccess, does nothing -> poison (status, cells) and witness
 *   GRID_D4_CANARY_PARTIAL_GRID  processes only the first half of the grids, as a launch sized off by half
 *                                would -> witness "partial execution" (and the poison left in the rest)
 *   GRID_D4_CANARY_STALE_OUTPUT  first call real, later calls return cudaSuccess without launching; the
 *                                tests re-poison before every call -> "poison"
 *   GRID_D4_CANARY_OFF_BY_ONE    a correct launch, then each grid's first cell is stored from its neighbour
 *                                (a store index off by one) -> the exact comparison, "result bytes differ"
 *   GRID_D4_CANARY_OOB_WRITE     a correct launch, then one byte written 100 bytes past the end of out: past
 *                                the tests' poisoned slack, so only compute-sanitizer memcheck can see it
 *                                (--padding 512) -> "Invalid __global__ write"
 * (ptx_only needs no code here: the real grid_d4.cu built for compute_75 PTX only.)
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "grid_d4.h"
#include "grid_d4_ref.h"

extern "C" cudaError_t __real_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream);
extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream);

#if defined(GRID_D4_CANARY_CPU_FALLBACK)

/* A "GPU" function that computes on the CPU (failure mode 2 of docs/witness.md; the cpu_fallback row of
 * docs/witness.md, "Canaries: every guard is seen to fail"): correct bytes, status as the device would set
 * it, and no kernel, so the witness stays empty. */
extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream)
{
    if (!p || p->n_grids == 0 || !d_in || !d_out || !d_offset || !d_height || !d_width || !d_out_height ||
        !d_out_width || !d_status) /* host-visible rejections and empty batches: the real answer */
        return __real_grid_d4_launch(p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops,
                              d_status, d_witness, stream);
    const size_t n = p->n_grids;
    const size_t bytes = (size_t)p->buf_bytes;
    cudaError_t err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) return err;
    uint8_t *in = (uint8_t *)malloc(bytes ? bytes : 1), *out = (uint8_t *)malloc(bytes ? bytes : 1);
    uint64_t *offset = (uint64_t *)malloc(n * sizeof *offset);
    uint16_t *h = (uint16_t *)malloc(n * 2), *w = (uint16_t *)malloc(n * 2);
    uint16_t *oh = (uint16_t *)malloc(n * 2), *ow = (uint16_t *)malloc(n * 2);
    uint8_t *ops = d_ops ? (uint8_t *)malloc(n) : NULL;
    err = cudaErrorMemoryAllocation;
    if (in && out && offset && h && w && oh && ow && (ops || !d_ops)) {
        err = cudaMemcpy(in, d_in, bytes, cudaMemcpyDeviceToHost);
        if (!err) err = cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost); /* keep the gaps as they are */
        if (!err) err = cudaMemcpy(offset, d_offset, n * sizeof *offset, cudaMemcpyDeviceToHost);
        if (!err) err = cudaMemcpy(h, d_height, n * 2, cudaMemcpyDeviceToHost);
        if (!err) err = cudaMemcpy(w, d_width, n * 2, cudaMemcpyDeviceToHost);
        if (!err && ops) err = cudaMemcpy(ops, d_ops, n, cudaMemcpyDeviceToHost);
    }
    if (!err) {
        grid_d4_status_record rec = {GRID_D4_STATUS_NONE};
        const int s = grid_d4_ref(p, in, out, offset, h, w, oh, ow, ops);
        if (s == GRID_D4_OK) {
            err = cudaMemcpy(d_out, out, bytes, cudaMemcpyHostToDevice);
            if (!err) err = cudaMemcpy(d_out_height, oh, n * 2, cudaMemcpyHostToDevice);
            if (!err) err = cudaMemcpy(d_out_width, ow, n * 2, cudaMemcpyHostToDevice);
        } else {
            size_t index = 0;
            grid_d4_validate(p, in, out, offset, h, w, oh, ow, ops, &index);
            rec.packed = ((unsigned long long)index << 8) | (unsigned)s |
                         (s == GRID_D4_ERR_OVERLAP ? GRID_D4_STATUS_OVERLAP_BIT : 0ull);
        }
        if (!err) err = cudaMemcpy(d_status, &rec, sizeof rec, cudaMemcpyHostToDevice);
    }
    free(in), free(out), free(offset), free(h), free(w), free(oh), free(ow), free(ops);
    return err;
}

#elif defined(GRID_D4_CANARY_NO_LAUNCH)

extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *, const uint8_t *, uint8_t *, const uint64_t *,
                                             const uint16_t *, const uint16_t *, uint16_t *, uint16_t *,
                                             const uint8_t *, grid_d4_status_record *, gw_witness *, cudaStream_t)
{
    return cudaSuccess;
}

#elif defined(GRID_D4_CANARY_PARTIAL_GRID)

extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream)
{
    if (!p) return __real_grid_d4_launch(p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops,
                                  d_status, d_witness, stream);
    grid_d4_params half = *p;
    half.n_grids = p->n_grids / 2;
    return __real_grid_d4_launch(&half, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops,
                          d_status, d_witness, stream);
}

#elif defined(GRID_D4_CANARY_STALE_OUTPUT)

extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream)
{
    static int calls; /* per test process: Criterion runs each test in its own */
    if (calls++ == 0)
        return __real_grid_d4_launch(p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops,
                              d_status, d_witness, stream);
    return cudaSuccess;
}

#elif defined(GRID_D4_CANARY_OFF_BY_ONE)

/* One thread walks the grids after the real transform: a wrong result that every other guard accepts. */
__global__ void off_by_one_kernel(size_t n, const uint64_t *offset, const uint16_t *height, const uint16_t *width,
                                  uint8_t *out)
{
    for (size_t k = 0; k < n; k++)
        if ((unsigned)height[k] * width[k] >= 2u) out[offset[k]] = out[offset[k] + 1];
}

extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream)
{
    cudaError_t err = __real_grid_d4_launch(p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops,
                                     d_status, d_witness, stream);
    if (err != cudaSuccess || !p || p->n_grids == 0) return err;
    off_by_one_kernel<<<1, 1, 0, stream>>>(p->n_grids, d_offset, d_height, d_width, d_out);
    return cudaGetLastError();
}

#elif defined(GRID_D4_CANARY_OOB_WRITE)

__global__ void oob_write_kernel(uint8_t *out, uint64_t buf_bytes) { out[buf_bytes + 100] = 0x42; }

extern "C" cudaError_t __wrap_grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                             const uint64_t *d_offset, const uint16_t *d_height,
                                             const uint16_t *d_width, uint16_t *d_out_height,
                                             uint16_t *d_out_width, const uint8_t *d_ops,
                                             grid_d4_status_record *d_status, gw_witness *d_witness,
                                             cudaStream_t stream)
{
    cudaError_t err = __real_grid_d4_launch(p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops,
                                     d_status, d_witness, stream);
    if (err != cudaSuccess || !p || p->n_grids == 0) return err;
    oob_write_kernel<<<1, 1, 0, stream>>>(d_out, p->buf_bytes);
    return cudaGetLastError();
}

#else
#error "define one of GRID_D4_CANARY_CPU_FALLBACK, _NO_LAUNCH, _PARTIAL_GRID, _STALE_OUTPUT, _OFF_BY_ONE, _OOB_WRITE"
#endif
