/* SPDX-License-Identifier: MIT
 * grid_d4's GPU host path (grid_d4_host.h). Every buffer is freed on every path.
 */
#include "grid_d4_host.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gw_cli_cuda.h"
#include "gw_trace_range.h"
#include "gw_witness_check.h"

/* cudaMalloc of at least 1 byte, so an empty array still gets a distinct valid pointer. */
static cudaError_t device_alloc(void **p, size_t bytes)
{
    return cudaMalloc(p, bytes ? bytes : 1);
}

int gw_d4_gpu_init(gw_d4_gpu *g, int ordinal, const grid_d4_batch *b, char *err, size_t err_size)
{
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    const size_t n = b->n;
    CUDA_TRY(cudaSetDevice(ordinal), "cudaSetDevice");
    if (gw_gpu_facts_get(ordinal, &g->facts, err, err_size)) goto fail;
    cudaStream_t stream = NULL;
    CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    g->stream = stream;
    cudaEvent_t ev = NULL;
    CUDA_TRY(cudaEventCreate(&ev), "cudaEventCreate");
    g->ev_start = ev;
    CUDA_TRY(cudaEventCreate(&ev), "cudaEventCreate");
    g->ev_stop = ev;
    const double need = 2.0 * (double)b->buf_bytes + (double)n * (8 + 4 * 2 + (b->ops ? 1 : 0)) +
                        (double)(sizeof *g->d_status + sizeof *g->d_witness);
    if (gw_cli_cuda_check_fits("grid_d4 (the batch)", need, err, err_size)) goto fail;
    CUDA_TRY(device_alloc((void **)&g->d_in, (size_t)b->buf_bytes), "cudaMalloc(in)");
    CUDA_TRY(device_alloc((void **)&g->d_out, (size_t)b->buf_bytes), "cudaMalloc(out)");
    CUDA_TRY(device_alloc((void **)&g->d_offset, n * sizeof *g->d_offset), "cudaMalloc(offset)");
    CUDA_TRY(device_alloc((void **)&g->d_height, n * sizeof *g->d_height), "cudaMalloc(height)");
    CUDA_TRY(device_alloc((void **)&g->d_width, n * sizeof *g->d_width), "cudaMalloc(width)");
    CUDA_TRY(device_alloc((void **)&g->d_out_height, n * sizeof *g->d_out_height), "cudaMalloc(out_height)");
    CUDA_TRY(device_alloc((void **)&g->d_out_width, n * sizeof *g->d_out_width), "cudaMalloc(out_width)");
    if (b->ops) CUDA_TRY(device_alloc((void **)&g->d_ops, n), "cudaMalloc(ops)");
    CUDA_TRY(device_alloc((void **)&g->d_status, sizeof *g->d_status), "cudaMalloc(status)");
    CUDA_TRY(device_alloc((void **)&g->d_witness, sizeof *g->d_witness), "cudaMalloc(witness)");
    return 0;
fail:
    gw_d4_gpu_free(g, NULL, 0); /* the first error is the one worth reporting */
    return -1;
}

int gw_d4_gpu_free(gw_d4_gpu *g, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    void *bufs[] = {g->d_in,          g->d_out,         g->d_ops,    g->d_offset,  g->d_height,
                    g->d_width,       g->d_out_height,  g->d_out_width, g->d_status, g->d_witness};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (!bufs[i]) continue;
        gw_cli_cuda_keep_first(cudaFree(bufs[i]), "cudaFree", &first, &what);
    }
    if (g->ev_start) gw_cli_cuda_keep_first(cudaEventDestroy((cudaEvent_t)g->ev_start), "cudaEventDestroy", &first, &what);
    if (g->ev_stop) gw_cli_cuda_keep_first(cudaEventDestroy((cudaEvent_t)g->ev_stop), "cudaEventDestroy", &first, &what);
    if (g->stream) gw_cli_cuda_keep_first(cudaStreamDestroy((cudaStream_t)g->stream), "cudaStreamDestroy", &first, &what);
    const int ordinal = g->ordinal;
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    if (first == cudaSuccess) return 0;
    if (err && err_size) gw_cli_cuda_fail(err, err_size, what, first);
    return -1;
}

int gw_d4_gpu_call(gw_d4_gpu *g, const grid_d4_batch *b, uint8_t poison_byte, grid_d4_result *out, gw_d4_gpu_result *res,
                   char *err, size_t err_size)
{
    memset(res, 0, sizeof *res);
    const size_t n = b->n;
    cudaStream_t stream = (cudaStream_t)g->stream;
    grid_d4_status_record status;
    memset(&status, 0, sizeof status); /* 0 is "grid 0 has code 0": never a valid record, so a missed copy shows */
    const int range_depth = gw_range_depth(); /* NVTX ranges per stage (gw_trace_range.h); closed on failure */

    /* Host outputs get a different poison than the device outputs: bytes that never came back differ from
     * both the reference and the device poison. */
    grid_d4_result_poison(out, (uint8_t)~poison_byte);
    CUDA_TRY(cudaSetDevice(g->ordinal), "cudaSetDevice");
    const double t0 = gw_cli_now_ms();
    gw_range_push("grid_d4/upload");
    CUDA_TRY(cudaMemcpyAsync(g->d_in, b->in, (size_t)b->buf_bytes, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(in, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_offset, b->offset, n * sizeof *b->offset, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(offset, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_height, b->height, n * sizeof *b->height, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(height, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_width, b->width, n * sizeof *b->width, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(width, host to device)");
    if (b->ops)
        CUDA_TRY(cudaMemcpyAsync(g->d_ops, b->ops, n, cudaMemcpyHostToDevice, stream),
                 "cudaMemcpyAsync(ops, host to device)");
    gw_range_pop();
    gw_range_push("grid_d4/poison");
    /* Poison before every call: stale or unwritten output can then never pass the comparison. */
    CUDA_TRY(cudaMemsetAsync(g->d_out, poison_byte, (size_t)b->buf_bytes, stream), "cudaMemsetAsync(out poison)");
    CUDA_TRY(cudaMemsetAsync(g->d_out_height, 0xFF, n * sizeof *g->d_out_height, stream),
             "cudaMemsetAsync(out_height poison)");
    CUDA_TRY(cudaMemsetAsync(g->d_out_width, 0xFF, n * sizeof *g->d_out_width, stream),
             "cudaMemsetAsync(out_width poison)");
    CUDA_TRY(cudaMemsetAsync(g->d_witness, 0, sizeof *g->d_witness, stream), "cudaMemsetAsync(witness)");
    gw_range_pop();

    const grid_d4_params p = grid_d4_batch_params(b);
    gw_range_push("grid_d4/launch");
    CUDA_TRY(cudaEventRecord((cudaEvent_t)g->ev_start, stream), "cudaEventRecord");
    CUDA_TRY(grid_d4_launch(&p, g->d_in, g->d_out, g->d_offset, g->d_height, g->d_width, g->d_out_height,
                            g->d_out_width, b->ops ? g->d_ops : NULL, g->d_status, g->d_witness, stream),
             "grid_d4_launch");
    CUDA_TRY(cudaEventRecord((cudaEvent_t)g->ev_stop, stream), "cudaEventRecord");
    gw_range_pop();
    /* The downloads go to pageable memory, so the first waits for the kernel: the range includes it. */
    gw_range_push("grid_d4/download");
    CUDA_TRY(cudaMemcpyAsync(&status, g->d_status, sizeof status, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(status, device to host)");
    CUDA_TRY(cudaMemcpyAsync(&res->witness, g->d_witness, sizeof res->witness, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(witness, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->out, g->d_out, (size_t)b->buf_bytes, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(out, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->out_height, g->d_out_height, n * sizeof *out->out_height, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(out_height, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->out_width, g->d_out_width, n * sizeof *out->out_width, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(out_width, device to host)");
    /* Kernel faults surface here, at the first synchronisation. */
    CUDA_TRY(cudaStreamSynchronize(stream), "grid_d4 on the stream (cudaStreamSynchronize)");
    gw_range_pop();
    res->ms_end_to_end = gw_cli_now_ms() - t0;
    /* The slack around out is host memory the device never sees: the comparison judges what came back. */
    grid_d4_result_poison_slack(out, poison_byte);
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, (cudaEvent_t)g->ev_start, (cudaEvent_t)g->ev_stop), "cudaEventElapsedTime");
    res->ms_kernel = ms;

    res->status = grid_d4_status_record_code(&status);
    res->status_index = grid_d4_status_record_index(&status);
    const gw_witness_expect expect = {
        .launches = 1,
        .items = res->status == GRID_D4_OK ? grid_d4_batch_cells(b) : 0,
        .device_arch = (unsigned)(g->facts.cc_major * 100 + g->facts.cc_minor * 10),
        .device_sms = (unsigned)g->facts.sm_count,
        .emulated = g->facts.emulated,
    };
    res->witness_violations = gw_witness_check(&res->witness, &expect, res->witness_check, sizeof res->witness_check);
    gw_witness_format(&res->witness, res->witness_receipt, sizeof res->witness_receipt);
    return 0;
fail:
    gw_range_pop_to(range_depth);
    return -1;
}
