/* SPDX-License-Identifier: MIT
 * The FP64 rate reference of gpuwitness bench (docs/benchmarks.md, "What every run reports": for FP64-heavy
 * kernels also an FP64 rate reference): the FP64 FMA throughput of the card as found, measured in the same
 * run and timed by the same loop as every case. Each thread runs GW_FP64_CHAINS independent FMA chains, so the FP64 pipes never
 * wait on a previous result, over enough blocks to fill every SM several times.
 */
#include <cuda_runtime_api.h>

#include "gw_bench.h"
#include "gw_cli_cuda.h"

enum { GW_FP64_CHAINS = 8, GW_FP64_ITERS = 4096, GW_FP64_THREADS = 256, GW_FP64_BLOCKS_PER_SM = 8 };

/* a = a*b + c on every chain. b is just below 1 and c small, so values stay finite and normal for any
 * iteration count; the sum is stored so that the compiler cannot drop the chains. */
__global__ void gw_fp64_fma_kernel(double b, double c, double *out)
{
    double a[GW_FP64_CHAINS];
    for (int k = 0; k < GW_FP64_CHAINS; k++) a[k] = (double)(threadIdx.x + k);
    for (int i = 0; i < GW_FP64_ITERS; i++) {
#pragma unroll
        for (int k = 0; k < GW_FP64_CHAINS; k++) a[k] = fma(a[k], b, c);
    }
    double sum = 0;
    for (int k = 0; k < GW_FP64_CHAINS; k++) sum += a[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

typedef struct fp64_ctx {
    double *d_out;
    int blocks;
    cudaStream_t stream;
} fp64_ctx;

static int fp64_launch(void *ctx, char *err, size_t err_size)
{
    const fp64_ctx *c = (const fp64_ctx *)ctx;
    gw_fp64_fma_kernel<<<c->blocks, GW_FP64_THREADS, 0, c->stream>>>(0.999999, 1e-3, c->d_out);
    CUDA_TRY(cudaGetLastError(), "gw_fp64_fma_kernel launch");
    return 0;
fail:
    return -1;
}

extern "C" int gw_bench_gpu_fp64_rate(gw_bench_gpu *g, int reps, gw_bench_fp64_rate *r, char *err, size_t err_size)
{
    fp64_ctx c = {NULL, g->facts.sm_count * GW_FP64_BLOCKS_PER_SM, NULL};
    int rc = -1;
    *r = gw_bench_fp64_rate{};
    gw_bench_loop loop = {};
    CUDA_TRY(cudaSetDevice(g->ordinal), "cudaSetDevice");
    CUDA_TRY(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CUDA_TRY(cudaMalloc((void **)&c.d_out, (size_t)c.blocks * GW_FP64_THREADS * sizeof(double)),
             "cudaMalloc(FP64 rate output)");
    loop.ctx = &c;
    loop.stream = c.stream;
    loop.reps = reps;
    loop.launch = fp64_launch;
    if (gw_bench_gpu_time(g, &loop, &r->ms, err, err_size)) goto fail;
    r->flops = 2.0 * GW_FP64_CHAINS * GW_FP64_ITERS * (double)c.blocks * GW_FP64_THREADS;
    r->gflops = r->ms.median > 0 ? r->flops / (r->ms.median * 1e-3) / 1e9 : 0;
    rc = 0;
fail:;
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    if (c.stream) gw_cli_cuda_keep_first(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize", &first, &what);
    if (c.d_out) gw_cli_cuda_keep_first(cudaFree(c.d_out), "cudaFree(FP64 rate output)", &first, &what);
    if (c.stream) gw_cli_cuda_keep_first(cudaStreamDestroy(c.stream), "cudaStreamDestroy", &first, &what);
    if (rc == 0 && first != cudaSuccess) {
        gw_cli_cuda_fail(err, err_size, what, first);
        rc = -1;
    }
    return rc;
}
