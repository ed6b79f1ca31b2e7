/* SPDX-License-Identifier: MIT
 * focus_stack on the GPU for the CLI: one allocation per problem size, then witnessed calls with poisoned
 * outputs. Every CUDA call is checked and named in the error; every buffer is freed on every path.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "focus_stack_host.h"
#include "gw_cli_cuda.h"
#include "gw_trace_range.h"
#include "gw_witness_check.h"

static size_t pixels(focus_stack_params p)
{
    return (size_t)p.n * (size_t)p.y * (size_t)p.x;
}

int gw_focus_gpu_init(gw_focus_gpu *g, int ordinal, focus_stack_params p, int with_best, int with_focus, char *err,
                      size_t err_size)
{
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    g->p = p;
    const size_t px = pixels(p), voxels = px * (size_t)p.z;
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
    /* in and focus per voxel; idx, ff and best per pixel */
    const double need =
        (double)p.n * p.y * p.x * (p.z * (2.0 + (with_focus ? 4.0 : 0.0)) + 3.0 + (with_best ? 4.0 : 0.0)) +
        (double)sizeof *g->d_witness;
    if (gw_cli_cuda_check_fits("focus_stack (the problem)", need, err, err_size)) goto fail;
    CUDA_TRY(cudaMalloc((void **)&g->d_in, voxels * sizeof *g->d_in), "cudaMalloc(in)");
    CUDA_TRY(cudaMalloc((void **)&g->d_idx, px), "cudaMalloc(idx)");
    CUDA_TRY(cudaMalloc((void **)&g->d_ff, px * sizeof *g->d_ff), "cudaMalloc(ff)");
    if (with_best) CUDA_TRY(cudaMalloc((void **)&g->d_best, px * sizeof *g->d_best), "cudaMalloc(best)");
    if (with_focus) CUDA_TRY(cudaMalloc((void **)&g->d_focus, voxels * sizeof *g->d_focus), "cudaMalloc(focus)");
    CUDA_TRY(cudaMalloc((void **)&g->d_witness, sizeof *g->d_witness), "cudaMalloc(witness)");
    return 0;
fail:
    gw_focus_gpu_free(g, NULL, 0); /* the first error is the one worth reporting */
    return -1;
}

int gw_focus_gpu_free(gw_focus_gpu *g, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    void *bufs[] = {g->d_in, g->d_idx, g->d_ff, g->d_best, g->d_focus, g->d_witness};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (!bufs[i]) continue;
        gw_cli_cuda_keep_first(cudaFree(bufs[i]), "cudaFree", &first, &what);
    }
    void *events[] = {g->ev_start, g->ev_stop};
    for (size_t i = 0; i < 2; i++) {
        if (!events[i]) continue;
        gw_cli_cuda_keep_first(cudaEventDestroy((cudaEvent_t)events[i]), "cudaEventDestroy", &first, &what);
    }
    if (g->stream) {
        gw_cli_cuda_keep_first(cudaStreamDestroy((cudaStream_t)g->stream), "cudaStreamDestroy", &first, &what);
    }
    const int ordinal = g->ordinal;
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    if (first == cudaSuccess) return 0;
    if (err && err_size) gw_cli_cuda_fail(err, err_size, what, first);
    return -1;
}

int gw_focus_gpu_call(gw_focus_gpu *g, const uint16_t *in, uint8_t poison_byte, gw_focus_out *out,
                      gw_focus_gpu_result *res, char *err, size_t err_size)
{
    memset(res, 0, sizeof *res);
    const focus_stack_params p = g->p;
    const size_t px = pixels(p), voxels = px * (size_t)p.z;
    if ((out->best && !g->d_best) || (out->focus && !g->d_focus)) {
        snprintf(err, err_size, "gw_focus_gpu_call: best or focus asked for, but not allocated by gw_focus_gpu_init");
        return -1;
    }
    float *d_best = out->best ? g->d_best : NULL, *d_focus = out->focus ? g->d_focus : NULL;
    cudaStream_t stream = (cudaStream_t)g->stream;
    const int range_depth = gw_range_depth(); /* NVTX ranges per stage (gw_trace_range.h); closed on failure */

    /* Host outputs get a different poison than the device outputs: bytes that never came back differ from
     * both the reference and the device poison. */
    gw_focus_out_poison(out, p, (uint8_t)~poison_byte);
    CUDA_TRY(cudaSetDevice(g->ordinal), "cudaSetDevice");
    const double t0 = gw_cli_now_ms();
    gw_range_push("focus_stack/upload");
    CUDA_TRY(cudaMemcpyAsync(g->d_in, in, voxels * sizeof *in, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(in, host to device)");
    gw_range_pop();
    gw_range_push("focus_stack/poison");
    /* Poison before every call: stale or unwritten output can then never pass the comparison. */
    CUDA_TRY(cudaMemsetAsync(g->d_idx, poison_byte, px, stream), "cudaMemsetAsync(idx poison)");
    CUDA_TRY(cudaMemsetAsync(g->d_ff, poison_byte, px * sizeof *g->d_ff, stream), "cudaMemsetAsync(ff poison)");
    if (d_best)
        CUDA_TRY(cudaMemsetAsync(d_best, poison_byte, px * sizeof *d_best, stream), "cudaMemsetAsync(best poison)");
    if (d_focus)
        CUDA_TRY(cudaMemsetAsync(d_focus, poison_byte, voxels * sizeof *d_focus, stream),
                 "cudaMemsetAsync(focus poison)");
    CUDA_TRY(cudaMemsetAsync(g->d_witness, 0, sizeof *g->d_witness, stream), "cudaMemsetAsync(witness)");
    gw_range_pop();

    gw_range_push("focus_stack/launch");
    CUDA_TRY(cudaEventRecord((cudaEvent_t)g->ev_start, stream), "cudaEventRecord");
    const cudaError_t launched =
        focus_stack_launch(&p, g->d_in, g->d_idx, g->d_ff, d_best, d_focus, g->d_witness, stream);
    if (launched != cudaSuccess) {
        const int rule = focus_stack_check(&p, g->d_in, g->d_idx, g->d_ff);
        if (rule != FOCUS_STACK_OK) snprintf(err, err_size, "focus_stack_launch: %s", focus_stack_status_str(rule));
        else gw_cli_cuda_fail(err, err_size, "focus_stack_launch", launched);
        cudaStreamSynchronize(stream); /* let the queued copies finish before the buffers can be freed */
        gw_range_pop_to(range_depth);
        return -1;
    }
    CUDA_TRY(cudaEventRecord((cudaEvent_t)g->ev_stop, stream), "cudaEventRecord");
    gw_range_pop();
    /* The downloads go to pageable memory, so the first waits for the kernel: the range includes it. */
    gw_range_push("focus_stack/download");
    CUDA_TRY(cudaMemcpyAsync(&res->witness, g->d_witness, sizeof res->witness, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(witness, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->idx, g->d_idx, px, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(idx, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->ff, g->d_ff, px * sizeof *out->ff, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(ff, device to host)");
    if (d_best)
        CUDA_TRY(cudaMemcpyAsync(out->best, d_best, px * sizeof *out->best, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync(best, device to host)");
    if (d_focus)
        CUDA_TRY(cudaMemcpyAsync(out->focus, d_focus, voxels * sizeof *out->focus, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync(focus, device to host)");
    /* Kernel faults surface here, at the first synchronisation. */
    CUDA_TRY(cudaStreamSynchronize(stream), "focus_stack on the stream (cudaStreamSynchronize)");
    gw_range_pop();
    res->ms_end_to_end = gw_cli_now_ms() - t0;
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, (cudaEvent_t)g->ev_start, (cudaEvent_t)g->ev_stop), "cudaEventElapsedTime");
    res->ms_kernel = ms;

    const gw_witness_expect expect = {
        .launches = 1,
        .items = px,
        .device_arch = (unsigned)(g->facts.cc_major * 100 + g->facts.cc_minor * 10),
        .device_sms = (unsigned)g->facts.sm_count,
        .emulated = g->facts.emulated,
    };
    res->witness_violations = gw_witness_check(&res->witness, &expect, res->witness_check, sizeof res->witness_check);
    gw_witness_format(&res->witness, res->witness_receipt, sizeof res->witness_receipt);
    return 0;
fail:
    cudaStreamSynchronize(stream); /* nothing may still be writing into host buffers the caller frees */
    gw_range_pop_to(range_depth);
    return -1;
}
