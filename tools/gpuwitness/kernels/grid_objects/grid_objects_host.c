/* SPDX-License-Identifier: MIT
 * grid_objects' GPU host path (grid_objects_host.h). Every buffer is freed on every path.
 */
#include "grid_objects_host.h"

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

const char *gw_go_variant_words(int variant)
{
    static const char *const words[8] = {
        "4-connected, several colours, with bg",    "4-connected, several colours, without bg",
        "diagonal, several colours, with bg",       "diagonal, several colours, without bg",
        "univalued, 4-connected, with bg",          "univalued, 4-connected, without bg",
        "univalued, diagonal, with bg",             "univalued, diagonal, without bg",
    };
    return variant >= 0 && variant < 8 ? words[variant] : "an unknown variant";
}

int gw_go_gpu_init(gw_go_gpu *g, int ordinal, const grid_d4_batch *b, char *err, size_t err_size)
{
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    const size_t n = b->n, buf = (size_t)b->buf_bytes;
    g->out_entries = grid_objects_out_entries(b->buf_bytes);
    const size_t out = (size_t)g->out_entries;
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
    /* in (1 byte per cell), labels (2) and the object table (one record per cell, both padded); per grid
     * offset, shape, variant, n_objects and bg */
    const double need = (double)b->buf_bytes + (double)out * (sizeof(uint16_t) + sizeof(grid_objects_object)) +
                        (double)n * (8 + 2 * 2 + (b->ops ? 1 : 0) + 4 + 2) +
                        (double)(sizeof *g->d_status + sizeof *g->d_witness);
    if (gw_cli_cuda_check_fits("grid_objects (the batch and its outputs)", need, err, err_size)) goto fail;
    CUDA_TRY(device_alloc((void **)&g->d_in, buf), "cudaMalloc(in)");
    CUDA_TRY(device_alloc((void **)&g->d_offset, n * sizeof *g->d_offset), "cudaMalloc(offset)");
    CUDA_TRY(device_alloc((void **)&g->d_height, n * sizeof *g->d_height), "cudaMalloc(height)");
    CUDA_TRY(device_alloc((void **)&g->d_width, n * sizeof *g->d_width), "cudaMalloc(width)");
    if (b->ops) CUDA_TRY(device_alloc((void **)&g->d_variants, n), "cudaMalloc(variants)");
    CUDA_TRY(device_alloc((void **)&g->d_labels, out * sizeof *g->d_labels), "cudaMalloc(labels)");
    CUDA_TRY(device_alloc((void **)&g->d_objects, out * sizeof *g->d_objects), "cudaMalloc(objects)");
    CUDA_TRY(device_alloc((void **)&g->d_n_objects, n * sizeof *g->d_n_objects), "cudaMalloc(n_objects)");
    CUDA_TRY(device_alloc((void **)&g->d_bg, n * sizeof *g->d_bg), "cudaMalloc(bg)");
    CUDA_TRY(device_alloc((void **)&g->d_status, sizeof *g->d_status), "cudaMalloc(status)");
    CUDA_TRY(device_alloc((void **)&g->d_witness, sizeof *g->d_witness), "cudaMalloc(witness)");
    return 0;
fail:
    gw_go_gpu_free(g, NULL, 0); /* the first error is the one worth reporting */
    return -1;
}

int gw_go_gpu_free(gw_go_gpu *g, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    void *bufs[] = {g->d_in,      g->d_variants,  g->d_offset, g->d_height, g->d_width,  g->d_labels,
                    g->d_objects, g->d_n_objects, g->d_bg,     g->d_status, g->d_witness};
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

int gw_go_gpu_call(gw_go_gpu *g, const grid_d4_batch *b, int bg_tie, uint8_t poison, grid_objects_result *out,
                   gw_go_gpu_result *res, char *err, size_t err_size)
{
    memset(res, 0, sizeof *res);
    const size_t n = b->n, buf = (size_t)b->buf_bytes, out_entries = (size_t)g->out_entries;
    cudaStream_t stream = (cudaStream_t)g->stream;
    grid_objects_status_record status;
    memset(&status, 0, sizeof status); /* 0 is "grid 0 has code 0": never a valid record, so a missed copy shows */
    const int range_depth = gw_range_depth(); /* NVTX ranges per stage (gw_trace_range.h); closed on failure */

    /* The poison no call can write (grid_objects_result_poison), made on the host and uploaded: every output
     * entry starts as it, so an entry the kernel leaves unwritten, or stale from an earlier call, cannot
     * match the reference. The download then goes into the same host arrays, after the upload on the
     * stream: an output that never came back still holds the poison. */
    grid_objects_result_poison(out, poison);
    CUDA_TRY(cudaSetDevice(g->ordinal), "cudaSetDevice");
    const double t0 = gw_cli_now_ms();
    gw_range_push("grid_objects/upload");
    CUDA_TRY(cudaMemcpyAsync(g->d_in, b->in, buf, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync(in, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_offset, b->offset, n * sizeof *b->offset, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(offset, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_height, b->height, n * sizeof *b->height, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(height, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_width, b->width, n * sizeof *b->width, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(width, host to device)");
    if (b->ops)
        CUDA_TRY(cudaMemcpyAsync(g->d_variants, b->ops, n, cudaMemcpyHostToDevice, stream),
                 "cudaMemcpyAsync(variants, host to device)");
    gw_range_pop();
    gw_range_push("grid_objects/poison");
    CUDA_TRY(cudaMemcpyAsync(g->d_labels, out->labels, out_entries * sizeof *out->labels, cudaMemcpyHostToDevice,
                             stream), "cudaMemcpyAsync(labels poison, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_objects, out->objects, out_entries * sizeof *out->objects, cudaMemcpyHostToDevice,
                             stream), "cudaMemcpyAsync(objects poison, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_n_objects, out->n_objects, n * sizeof *out->n_objects, cudaMemcpyHostToDevice,
                             stream), "cudaMemcpyAsync(n_objects poison, host to device)");
    CUDA_TRY(cudaMemcpyAsync(g->d_bg, out->bg, n * sizeof *out->bg, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync(bg poison, host to device)");
    CUDA_TRY(cudaMemsetAsync(g->d_witness, 0, sizeof *g->d_witness, stream), "cudaMemsetAsync(witness)");
    gw_range_pop();

    grid_objects_params p = grid_objects_batch_params(b, bg_tie);
    p.out_entries = g->out_entries; /* what was allocated: the launcher checks it against the padding rule */
    gw_range_push("grid_objects/launch");
    CUDA_TRY(cudaEventRecord((cudaEvent_t)g->ev_start, stream), "cudaEventRecord");
    CUDA_TRY(grid_objects_launch(&p, g->d_in, g->d_offset, g->d_height, g->d_width, b->ops ? g->d_variants : NULL,
                                 g->d_labels, g->d_objects, g->d_n_objects, g->d_bg, g->d_status, g->d_witness,
                                 stream),
             "grid_objects_launch");
    CUDA_TRY(cudaEventRecord((cudaEvent_t)g->ev_stop, stream), "cudaEventRecord");
    gw_range_pop();
    /* The downloads go to pageable memory, so the first waits for the kernel: the range includes it. */
    gw_range_push("grid_objects/download");
    CUDA_TRY(cudaMemcpyAsync(&status, g->d_status, sizeof status, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(status, device to host)");
    CUDA_TRY(cudaMemcpyAsync(&res->witness, g->d_witness, sizeof res->witness, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(witness, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->labels, g->d_labels, out_entries * sizeof *out->labels, cudaMemcpyDeviceToHost,
                             stream), "cudaMemcpyAsync(labels, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->objects, g->d_objects, out_entries * sizeof *out->objects, cudaMemcpyDeviceToHost,
                             stream), "cudaMemcpyAsync(objects, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->n_objects, g->d_n_objects, n * sizeof *out->n_objects, cudaMemcpyDeviceToHost,
                             stream), "cudaMemcpyAsync(n_objects, device to host)");
    CUDA_TRY(cudaMemcpyAsync(out->bg, g->d_bg, n * sizeof *out->bg, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync(bg, device to host)");
    /* Kernel faults surface here, at the first synchronisation. */
    CUDA_TRY(cudaStreamSynchronize(stream), "grid_objects on the stream (cudaStreamSynchronize)");
    gw_range_pop();
    res->ms_end_to_end = gw_cli_now_ms() - t0;
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, (cudaEvent_t)g->ev_start, (cudaEvent_t)g->ev_stop), "cudaEventElapsedTime");
    res->ms_kernel = ms;

    res->status = grid_objects_status_record_code(&status);
    res->status_index = grid_objects_status_record_index(&status);
    const gw_witness_expect expect = {
        .launches = n ? 1 : 0, /* an empty batch enqueues nothing */
        .items = res->status == GRID_OBJECTS_OK ? grid_d4_batch_cells(b) : 0,
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
