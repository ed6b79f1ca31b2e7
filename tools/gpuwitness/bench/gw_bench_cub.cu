/* SPDX-License-Identifier: MIT
 * grid_d4's identity-op roofline for gpuwitness bench: cub::DeviceMemcpy::Batched with one buffer per grid
 * of the same ragged batch (NVIDIA/cccl cub/device/device_memcpy.cuh). The pointer and size arrays and the
 * temporary storage are built by _init, so the timed call is the batched copy alone. CUDA C++ only
 * because CUB is a template library; the interface is the plain C of gw_bench.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_memcpy.cuh>

#include "gw_bench.h"
#include "gw_cli_cuda.h"

extern "C" int gw_bench_cub_batched_init(gw_bench_cub_batched *c, const uint8_t *d_src, uint8_t *d_dst,
                                         const uint64_t *offset, const uint16_t *height, const uint16_t *width,
                                         size_t n, void *stream, char *err, size_t err_size)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    const void **src_ptrs = (const void **)malloc((n ? n : 1) * sizeof *src_ptrs);
    void **dst_ptrs = (void **)malloc((n ? n : 1) * sizeof *dst_ptrs);
    uint32_t *sizes = (uint32_t *)malloc((n ? n : 1) * sizeof *sizes);
    cudaStream_t s = (cudaStream_t)stream;
    if (!src_ptrs || !dst_ptrs || !sizes) {
        snprintf(err, err_size, "out of memory for %zu buffer pointers", n);
        goto fail;
    }
    for (size_t k = 0; k < n; k++) {
        src_ptrs[k] = d_src + offset[k];
        dst_ptrs[k] = d_dst + offset[k];
        sizes[k] = (uint32_t)height[k] * width[k];
    }
    CUDA_TRY(cudaMalloc(&c->d_src_ptrs, (n ? n : 1) * sizeof *src_ptrs), "cudaMalloc(cub source pointers)");
    CUDA_TRY(cudaMalloc(&c->d_dst_ptrs, (n ? n : 1) * sizeof *dst_ptrs), "cudaMalloc(cub destination pointers)");
    CUDA_TRY(cudaMalloc(&c->d_sizes, (n ? n : 1) * sizeof *sizes), "cudaMalloc(cub sizes)");
    CUDA_TRY(cudaMemcpy(c->d_src_ptrs, src_ptrs, n * sizeof *src_ptrs, cudaMemcpyHostToDevice),
             "cudaMemcpy(cub source pointers)");
    CUDA_TRY(cudaMemcpy(c->d_dst_ptrs, dst_ptrs, n * sizeof *dst_ptrs, cudaMemcpyHostToDevice),
             "cudaMemcpy(cub destination pointers)");
    CUDA_TRY(cudaMemcpy(c->d_sizes, sizes, n * sizeof *sizes, cudaMemcpyHostToDevice), "cudaMemcpy(cub sizes)");
    /* The two-call protocol: a NULL temp pointer asks for the size only. */
    CUDA_TRY(cub::DeviceMemcpy::Batched(nullptr, c->temp_bytes, (const void **)c->d_src_ptrs,
                                        (void **)c->d_dst_ptrs, (const uint32_t *)c->d_sizes,
                                        (int64_t)n, s),
             "cub::DeviceMemcpy::Batched (temporary storage size)");
    CUDA_TRY(cudaMalloc(&c->d_temp, c->temp_bytes ? c->temp_bytes : 1), "cudaMalloc(cub temporary storage)");
    free(src_ptrs);
    free(dst_ptrs);
    free(sizes);
    return 0;
fail:
    free(src_ptrs);
    free(dst_ptrs);
    free(sizes);
    gw_bench_cub_batched_free(c, NULL, 0);
    return -1;
}

extern "C" int gw_bench_cub_batched_launch(gw_bench_cub_batched *c, void *stream, char *err, size_t err_size)
{
    CUDA_TRY(cub::DeviceMemcpy::Batched(c->d_temp, c->temp_bytes, (const void **)c->d_src_ptrs,
                                        (void **)c->d_dst_ptrs, (const uint32_t *)c->d_sizes, (int64_t)c->n,
                                        (cudaStream_t)stream),
             "cub::DeviceMemcpy::Batched");
    return 0;
fail:
    return -1;
}

extern "C" int gw_bench_cub_batched_free(gw_bench_cub_batched *c, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    void *bufs[] = {c->d_src_ptrs, c->d_dst_ptrs, c->d_sizes, c->d_temp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) gw_cli_cuda_keep_first(cudaFree(bufs[i]), "cudaFree(cub buffers)", &first, &what);
    memset(c, 0, sizeof *c);
    if (first == cudaSuccess) return 0;
    if (err && err_size) gw_cli_cuda_fail(err, err_size, what, first);
    return -1;
}
