/* SPDX-License-Identifier: MIT
 * The GPU side of gpuwitness bench: the device context, the one timing loop (CUDA events, warm-up, L2
 * flush outside the timed region), the three timed loops of every kernel case, and the device-to-device
 * copy roofline measured in the same run, and the untimed traced loop of --trace.
 * Every CUDA call is checked and named in the error; every buffer and event is freed on every path.
 */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gw_build_info.h"
#include "gw_bench.h"
#include "gw_cli_cuda.h"
#include "gw_trace.h"
#include "gw_witness_check.h"


int gw_bench_gpu_open(gw_bench_gpu *g, int ordinal, char *err, size_t err_size)
{
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    int l2 = 0;
    CUDA_TRY(cudaSetDevice(ordinal), "cudaSetDevice");
    if (gw_gpu_facts_get(ordinal, &g->facts, err, err_size)) goto fail;
    CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal), "cudaDeviceGetAttribute(L2 size)");
    CUDA_TRY(cudaDriverGetVersion(&g->driver_version), "cudaDriverGetVersion");
    CUDA_TRY(cudaRuntimeGetVersion(&g->runtime_version), "cudaRuntimeGetVersion");
    g->l2_bytes = (size_t)l2;
    /* Writing twice the L2 size evicts whatever a repetition left there (docs/benchmarks.md, "The method"). */
    g->flush_bytes = 2 * g->l2_bytes;
    if (g->flush_bytes) CUDA_TRY(cudaMalloc(&g->flush, g->flush_bytes), "cudaMalloc(L2 flush buffer)");
    return 0;
fail:
    gw_bench_gpu_close(g, NULL, 0);
    return -1;
}

int gw_bench_gpu_close(gw_bench_gpu *g, char *err, size_t err_size)
{
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    if (g->flush) gw_cli_cuda_keep_first(cudaFree(g->flush), "cudaFree(L2 flush buffer)", &first, &what);
    g->flush = NULL;
    if (first == cudaSuccess) return 0;
    if (err && err_size) gw_cli_cuda_fail(err, err_size, what, first);
    return -1;
}

int gw_bench_gpu_time(gw_bench_gpu *g, const gw_bench_loop *loop, gw_bench_stats *ms, char *err, size_t err_size)
{
    memset(ms, 0, sizeof *ms);
    cudaStream_t stream = (cudaStream_t)loop->stream;
    const int reps = loop->reps;
    cudaEvent_t *events = calloc(2 * (size_t)reps, sizeof *events);
    double *times = calloc((size_t)reps, sizeof *times);
    int rc = -1;
    if (!events || !times) {
        snprintf(err, err_size, "out of memory for %d repetitions' events", reps);
        goto fail;
    }
    CUDA_TRY(cudaSetDevice(g->ordinal), "cudaSetDevice");
    for (int i = 0; i < 2 * reps; i++) CUDA_TRY(cudaEventCreate(&events[i]), "cudaEventCreate");
    for (int w = 0; w < GW_BENCH_WARMUP; w++) {
        if (loop->prepare && loop->prepare(loop->ctx, w - GW_BENCH_WARMUP, err, err_size)) goto fail;
        if (loop->launch(loop->ctx, err, err_size)) goto fail;
    }
    /* A warm-up fault must be reported as such, not as a timing. */
    CUDA_TRY(cudaStreamSynchronize(stream), "the warm-up calls (cudaStreamSynchronize)");
    for (int r = 0; r < reps; r++) {
        if (loop->prepare && loop->prepare(loop->ctx, r, err, err_size)) goto fail;
        if (g->flush_bytes)
            CUDA_TRY(cudaMemsetAsync(g->flush, 0, g->flush_bytes, stream), "cudaMemsetAsync(L2 flush)");
        CUDA_TRY(cudaEventRecord(events[2 * r], stream), "cudaEventRecord(start)");
        if (loop->launch(loop->ctx, err, err_size)) goto fail;
        CUDA_TRY(cudaEventRecord(events[2 * r + 1], stream), "cudaEventRecord(stop)");
    }
    CUDA_TRY(cudaStreamSynchronize(stream), "the timed calls (cudaStreamSynchronize)");
    for (int r = 0; r < reps; r++) {
        float t = 0;
        CUDA_TRY(cudaEventElapsedTime(&t, events[2 * r], events[2 * r + 1]), "cudaEventElapsedTime");
        times[r] = t;
    }
    gw_bench_stats_from(times, reps, ms);
    rc = 0;
fail:
    if (rc) cudaStreamSynchronize(stream); /* nothing may still run on buffers the caller frees next */
    for (int i = 0; events && i < 2 * reps; i++)
        if (events[i]) cudaEventDestroy(events[i]);
    free(events);
    free(times);
    return rc;
}

typedef struct copy_ctx {
    void *dst;
    const void *src;
    size_t bytes;
    cudaStream_t stream;
} copy_ctx;

static int copy_launch(void *ctx, char *err, size_t err_size)
{
    const copy_ctx *c = ctx;
    CUDA_TRY(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, c->stream),
             "cudaMemcpyAsync(device to device)");
    return 0;
fail:
    return -1;
}

/* Large enough that L2 plays no part (16x the L2 size, at least 512 MiB), small enough to leave room for
 * the cases: at most a quarter of the free memory per buffer. */
static size_t roofline_bytes(size_t l2_bytes, size_t free_bytes)
{
    size_t bytes = 16 * l2_bytes;
    if (bytes < ((size_t)512 << 20)) bytes = (size_t)512 << 20;
    if (bytes > free_bytes / 4) bytes = free_bytes / 4;
    return bytes & ~(size_t)4095;
}

/* The iterations of the schedule, each: prepare, launch, a synchronisation of the loop's stream (a fault
 * is reported in its iteration), gw_trace_step. 0, or -1 with err. */
static int traced_iterations(gw_trace *t, const gw_bench_loop *loop, char *err, size_t err_size)
{
    for (long i = 0; i < gw_trace_schedule_iterations(&t->schedule); i++) {
        if (loop->prepare && loop->prepare(loop->ctx, (int)i, err, err_size)) goto fail;
        if (loop->launch(loop->ctx, err, err_size)) goto fail;
        CUDA_TRY(cudaStreamSynchronize((cudaStream_t)loop->stream), "cudaStreamSynchronize");
        if (gw_trace_step(t, err, err_size) != GW_LEDGER_OK) goto fail;
    }
    return 0;
fail:
    cudaStreamSynchronize((cudaStream_t)loop->stream); /* nothing may still run on buffers the caller frees */
    return -1;
}

/* --trace: one end-to-end loop of wait + warmup + active iterations under CUPTI, after the timed loops so
 * that no timing is taken while CUPTI records; its outputs and witness are verified like a timed loop's.
 * Sets run->trace's status; an error in the loop or its check fails row, a write error only the trace. */
static void trace_case(gw_bench_run *run, const gw_bench_case_gpu *k, gw_bench_row *row)
{
    gw_bench_trace *tr = &run->trace;
    const gw_trace_schedule *s = &tr->schedule;
    const long n = gw_trace_schedule_iterations(s);
    char err[512];
    snprintf(tr->traced, sizeof tr->traced, "%s %s", k->what, row->case_id);
    if (gw_cli_emulated()) { /* not CUPTI, even where a driver would let it start: it would record nothing */
        tr->status = GW_BENCH_TRACE_SKIPPED;
        snprintf(tr->reason, sizeof tr->reason, "gpuwitness-emu: CUPTI records a GPU's kernels and copies, and the "
                 "emulated device has none");
        return;
    }
    gw_bench_progress(run, "%s %s: GPU traced end-to-end loop%s, iterations: %ld (wait %ld, warmup %ld, active %ld)",
                      k->what, row->case_id, k->detail, n, s->wait, s->warmup, s->active);
    gw_trace t;
    const gw_ledger_status started = gw_trace_start(&t, s, err, sizeof err);
    if (started != GW_LEDGER_OK) {
        tr->status = started == GW_LEDGER_UNAVAILABLE ? GW_BENCH_TRACE_SKIPPED : GW_BENCH_TRACE_FAILED;
        snprintf(tr->reason, sizeof tr->reason, "%s%s", started == GW_LEDGER_UNAVAILABLE ? "CUPTI unavailable: " : "",
                 err);
        return;
    }
    const gw_bench_loop loop = k->start(k->ctx, GW_BENCH_END_TO_END, (int)n);
    if (traced_iterations(&t, &loop, err, sizeof err)) {
        gw_trace_free(&t);
        gw_bench_row_fail(row, "traced loop: %s", err);
        tr->status = GW_BENCH_TRACE_FAILED;
        snprintf(tr->reason, sizeof tr->reason, "the traced loop failed: %s", err);
        return;
    }
    k->verify(k->ctx, row, "traced loop");
    if (row->error[0]) { /* a trace of wrong outputs would be written as if it were one of the case */
        gw_trace_free(&t);
        tr->status = GW_BENCH_TRACE_FAILED;
        snprintf(tr->reason, sizeof tr->reason, "the traced loop did not check out: %s", row->error);
        return;
    }
    char traced[320], schedule[96], tool[64];
    snprintf(traced, sizeof traced, "bench %s %s: %s (end-to-end loop, untimed)", k->what, row->case_id, row->label);
    snprintf(schedule, sizeof schedule, "wait=%ld warmup=%ld active=%ld", s->wait, s->warmup, s->active);
    snprintf(tool, sizeof tool, "gpuwitness %s", GW_VERSION);
    const gw_trace_info info = {.tool = tool, .traced = traced, .schedule = schedule, .host_pid = (long)getpid()};
    size_t written = 0;
    const gw_ledger_status wrote = gw_trace_write(&t, tr->path, &info, &written, err, sizeof err);
    gw_trace_free(&t);
    if (wrote != GW_LEDGER_OK) {
        tr->status = GW_BENCH_TRACE_FAILED;
        snprintf(tr->reason, sizeof tr->reason, "writing %s: %s", tr->path, err);
        return;
    }
    tr->status = GW_BENCH_TRACE_WRITTEN;
    printf("bench: wrote %s: %zu events (%s, iterations %ld..%ld)\n", tr->path, written, tr->traced,
           s->wait + s->warmup, n - 1);
}

void gw_bench_gpu_loops(gw_bench_run *run, const gw_bench_case_gpu *k, gw_bench_row *row)
{
    char err[512];
    const struct {
        gw_bench_mode mode;
        const char *name;
        gw_bench_stats *ms;
    } loops[] = {
        {GW_BENCH_END_TO_END, "end-to-end loop", &row->end_to_end_ms},
        {GW_BENCH_KERNEL, "kernel loop", &row->kernel_ms},
        {GW_BENCH_KERNEL_NO_WITNESS, "kernel loop without witness", &row->kernel_no_witness_ms},
    };
    for (size_t i = 0; i < sizeof loops / sizeof loops[0] && !row->error[0]; i++) {
        gw_bench_progress(run, "%s %s: GPU %s%s, repetitions: %d", k->what, row->case_id, loops[i].name, k->detail,
                          run->reps);
        const gw_bench_loop loop = k->start(k->ctx, loops[i].mode, run->reps);
        if (gw_bench_gpu_time(run->gpu, &loop, loops[i].ms, err, sizeof err)) {
            gw_bench_row_fail(row, "%s: %s", loops[i].name, err);
            break;
        }
        k->verify(k->ctx, row, loops[i].name);
    }
    if (!row->error[0] && run->trace.path && run->trace.status == GW_BENCH_TRACE_PENDING)
        trace_case(run, k, row);
    row->gpu_ran = !row->error[0];
}

void gw_bench_witness_verify(gw_bench_row *row, const char *loop_name, const gw_witness *w, int reps, uint64_t items,
                             const gw_gpu_facts *facts)
{
    char msg[2048];
    const gw_witness_expect expect = {
        .launches = (uint64_t)reps,
        .items = (uint64_t)reps * items,
        .device_arch = (unsigned)(facts->cc_major * 100 + facts->cc_minor * 10),
        .device_sms = (unsigned)facts->sm_count,
        .emulated = facts->emulated,
    };
    if (gw_witness_check(w, &expect, msg, sizeof msg)) {
        msg[strcspn(msg, "\n")] = '\0';
        gw_bench_row_fail(row, "%s: the witness does not prove %d GPU runs: %s", loop_name, reps, msg);
    }
    gw_witness_format(w, row->witness, sizeof row->witness);
}

int gw_bench_gpu_roofline(gw_bench_gpu *g, int reps, gw_bench_roofline *r, char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    copy_ctx c = {0};
    size_t free_bytes = 0, total_bytes = 0;
    int rc = -1;
    CUDA_TRY(cudaSetDevice(g->ordinal), "cudaSetDevice");
    CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    c.bytes = roofline_bytes(g->l2_bytes, free_bytes);
    CUDA_TRY(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CUDA_TRY(cudaMalloc(&c.dst, c.bytes), "cudaMalloc(roofline destination)");
    CUDA_TRY(cudaMalloc((void **)&c.src, c.bytes), "cudaMalloc(roofline source)");
    CUDA_TRY(cudaMemsetAsync((void *)c.src, 0x5A, c.bytes, c.stream), "cudaMemsetAsync(roofline source)");
    const gw_bench_loop loop = {.ctx = &c, .stream = c.stream, .reps = reps, .prepare = NULL, .launch = copy_launch};
    if (gw_bench_gpu_time(g, &loop, &r->ms, err, err_size)) goto fail;
    r->buffer_bytes = c.bytes;
    r->gbps = r->ms.median > 0 ? 2.0 * (double)c.bytes / (r->ms.median * 1e-3) / 1e9 : 0;
    rc = 0;
fail:;
    cudaError_t first = cudaSuccess;
    const char *what = NULL;
    if (c.stream) gw_cli_cuda_keep_first(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize", &first, &what);
    if (c.dst) gw_cli_cuda_keep_first(cudaFree(c.dst), "cudaFree(roofline destination)", &first, &what);
    if (c.src) gw_cli_cuda_keep_first(cudaFree((void *)c.src), "cudaFree(roofline source)", &first, &what);
    if (c.stream) gw_cli_cuda_keep_first(cudaStreamDestroy(c.stream), "cudaStreamDestroy", &first, &what);
    if (rc == 0 && first != cudaSuccess) { /* an earlier error's message is the one to keep */
        gw_cli_cuda_fail(err, err_size, what, first);
        rc = -1;
    }
    return rc;
}
