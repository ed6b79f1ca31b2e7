/* SPDX-License-Identifier: MIT
 * CUPTI's Activity API behind gw_ledger.h. CUPTI hands records over in buffers we allocate, through
 * callbacks without a user pointer and possibly on its own thread, so the records gathered during a
 * recording live here, behind a mutex: one recording per process, which is also CUPTI's limit.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_ledger.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "gw_trace_range.h"

/* 4 MiB holds about 16000 kernel records; CUPTI asks for more buffers as they fill. */
enum { BUFFER_BYTES = 4 << 20, BUFFER_ALIGN = 8, OPEN_RANGES_MAX = 64 };

static const CUpti_ActivityKind recorded_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY};
static const char *const recorded_kind_names[] = {"CONCURRENT_KERNEL", "MEMCPY"};
enum { N_KINDS = sizeof recorded_kinds / sizeof recorded_kinds[0] };

static pthread_mutex_t ledger_lock = PTHREAD_MUTEX_INITIALIZER;
static gw_activity_log ledger_records;       /* under ledger_lock */
static long open_ranges[OPEN_RANGES_MAX];    /* index in ledger_records of the open range per depth, or -1 */
static int ledger_recording, callbacks_registered; /* touched only by begin/end, on the caller's thread */

static void set_why(char *why, size_t why_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t why_size, const char *fmt, ...)
{
    if (!why || !why_size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

/* "cuptiActivityEnable(MEMCPY): CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39): <message>" */
static void cupti_why(char *why, size_t why_size, const char *call, CUptiResult r)
{
    const char *name = NULL, *message = NULL;
    if (cuptiGetResultString(r, &name) != CUPTI_SUCCESS) name = "unknown CUPTI result";
    if (cuptiGetErrorMessage(r, &message) != CUPTI_SUCCESS || (message && !strcmp(message, name))) message = NULL;
    set_why(why, why_size, "%s: %s (%d)%s%s%s", call, name, (int)r, message ? ": " : "", message ? message : "",
            r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                ? "; another CUPTI client (compute-sanitizer, Nsight Systems, Nsight Compute) holds it"
                : "");
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(BUFFER_ALIGN, BUFFER_BYTES); /* NULL: CUPTI drops records and counts them */
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static gw_copy_kind copy_kind(uint8_t cupti_kind)
{
    switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return GW_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return GW_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return GW_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return GW_COPY_HTOH;
    default: return GW_COPY_OTHER;
    }
}

/* One CUPTI record as ours; 0 for kinds the ledger does not keep. */
static int convert(const CUpti_Activity *record, gw_activity *a)
{
    memset(a, 0, sizeof *a);
    a->iteration = -1;
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)record;
        a->kind = GW_ACTIVITY_KERNEL;
        snprintf(a->name, sizeof a->name, "%s", k->name ? k->name : "(unnamed kernel)");
        a->start_ns = k->start, a->end_ns = k->end;
        a->device_id = k->deviceId, a->stream_id = k->streamId;
        a->grid[0] = k->gridX, a->grid[1] = k->gridY, a->grid[2] = k->gridZ;
        a->block[0] = k->blockX, a->block[1] = k->blockY, a->block[2] = k->blockZ;
        return 1;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)record;
        a->kind = GW_ACTIVITY_COPY;
        a->copy_kind = copy_kind(m->copyKind);
        a->bytes = m->bytes;
        a->start_ns = m->start, a->end_ns = m->end;
        a->device_id = m->deviceId, a->stream_id = m->streamId;
        return 1;
    }
    return 0;
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t *buffer, size_t size,
                                      size_t valid_size)
{
    (void)size;
    if (!buffer) return;
    CUpti_Activity *record = NULL;
    gw_activity a;
    pthread_mutex_lock(&ledger_lock);
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS)
        if (convert(record, &a)) gw_activity_log_push(&ledger_records, &a);
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
        ledger_records.dropped += dropped;
    pthread_mutex_unlock(&ledger_lock);
    free(buffer);
}

uint64_t gw_ledger_now(void)
{
    uint64_t now = 0;
    return cuptiGetTimestamp(&now) == CUPTI_SUCCESS ? now : 0;
}

uint32_t gw_ledger_cupti_version(void)
{
    uint32_t version = 0;
    return cuptiGetVersion(&version) == CUPTI_SUCCESS ? version : 0;
}

/* NVTX ranges while recording: a record opened at push and closed at the matching pop. */
static void range_hook(const char *name, int depth, int begin)
{
    const uint64_t now = gw_ledger_now();
    if (depth < 0 || depth >= OPEN_RANGES_MAX) return;
    pthread_mutex_lock(&ledger_lock);
    if (begin) {
        gw_activity a;
        memset(&a, 0, sizeof a);
        a.kind = GW_ACTIVITY_RANGE;
        snprintf(a.name, sizeof a.name, "%s", name ? name : "(unnamed range)");
        a.start_ns = now;
        a.depth = depth;
        a.iteration = -1;
        open_ranges[depth] = gw_activity_log_push(&ledger_records, &a) == 0 ? (long)ledger_records.count - 1 : -1;
    } else if (open_ranges[depth] >= 0) { /* ranges opened before the recording began have no record */
        ledger_records.items[open_ranges[depth]].end_ns = now;
        open_ranges[depth] = -1;
    }
    pthread_mutex_unlock(&ledger_lock);
}

static void disable_kinds(size_t n)
{
    for (size_t i = 0; i < n; i++) cuptiActivityDisable(recorded_kinds[i]);
}

gw_ledger_status gw_ledger_begin(char *why, size_t why_size)
{
    if (ledger_recording) {
        set_why(why, why_size, "gw_ledger_begin: a recording is already running (one at a time per process)");
        return GW_LEDGER_FAILED;
    }
    if (!callbacks_registered) {
        const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
        if (r != CUPTI_SUCCESS) {
            cupti_why(why, why_size, "cuptiActivityRegisterCallbacks", r);
            return GW_LEDGER_UNAVAILABLE;
        }
        callbacks_registered = 1;
    }
    pthread_mutex_lock(&ledger_lock);
    gw_activity_log_free(&ledger_records);
    for (int d = 0; d < OPEN_RANGES_MAX; d++) open_ranges[d] = -1;
    pthread_mutex_unlock(&ledger_lock);
    for (size_t i = 0; i < N_KINDS; i++) {
        const CUptiResult r = cuptiActivityEnable(recorded_kinds[i]);
        if (r != CUPTI_SUCCESS) {
            char call[64];
            snprintf(call, sizeof call, "cuptiActivityEnable(%s)", recorded_kind_names[i]);
            cupti_why(why, why_size, call, r);
            disable_kinds(i);
            return GW_LEDGER_UNAVAILABLE;
        }
    }
    ledger_recording = 1;
    gw_range_set_hook(range_hook);
    return GW_LEDGER_OK;
}

gw_ledger_status gw_ledger_end(gw_activity_log *log, char *why, size_t why_size)
{
    if (!ledger_recording) {
        set_why(why, why_size, "gw_ledger_end: no recording is running (gw_ledger_begin first)");
        return GW_LEDGER_FAILED;
    }
    gw_range_set_hook(NULL);
    const cudaError_t sync = cudaDeviceSynchronize();
    const CUptiResult flush = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    disable_kinds(N_KINDS);
    ledger_recording = 0;

    const uint64_t now = gw_ledger_now();
    pthread_mutex_lock(&ledger_lock);
    for (int d = 0; d < OPEN_RANGES_MAX; d++)
        if (open_ranges[d] >= 0) ledger_records.items[open_ranges[d]].end_ns = now;
    for (size_t i = 0; i < ledger_records.count; i++) gw_activity_log_push(log, &ledger_records.items[i]);
    log->dropped += ledger_records.dropped;
    gw_activity_log_free(&ledger_records);
    pthread_mutex_unlock(&ledger_lock);

    if (sync != cudaSuccess) {
        set_why(why, why_size, "cudaDeviceSynchronize before the CUPTI flush failed: %s (%s)",
                cudaGetErrorString(sync), cudaGetErrorName(sync));
        return GW_LEDGER_FAILED;
    }
    if (flush != CUPTI_SUCCESS) {
        cupti_why(why, why_size, "cuptiActivityFlushAll", flush);
        return GW_LEDGER_FAILED;
    }
    return GW_LEDGER_OK;
}

gw_ledger_status gw_ledger_probe(char *why, size_t why_size)
{
    const gw_ledger_status begin = gw_ledger_begin(why, why_size);
    if (begin != GW_LEDGER_OK) return begin;
    gw_activity_log log = {0};
    const gw_ledger_status end = gw_ledger_end(&log, why, why_size);
    gw_activity_log_free(&log);
    return end;
}
