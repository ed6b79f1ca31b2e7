/* SPDX-License-Identifier: MIT
 * The CUDA runtime calls of this project, on the emulated device (gw_emu.h, docs/emu.md "The runtime").
 *
 * Device and pinned memory are host memory, registered so that every copy, memset and free is checked
 * against what was allocated (a copy that runs past an allocation, or names the wrong direction, is
 * cudaErrorInvalidValue, as a real driver refuses it). Work on streams is queued in one FIFO and run when
 * something synchronises (a stream, an event, the device, a synchronous copy or memset, a free): one valid
 * order of CUDA's, in which host code that reads a result before synchronising reads what was there before.
 * Errors follow CUDA's rules: each call's error becomes the thread's last error (cudaGetLastError clears it,
 * cudaPeekAtLastError does not), and a failed launch is sticky: every later call returns it until
 * cudaDeviceReset.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "gw_emu.h"
#include "gw_emu_internal.h"

/* ---- state ---- */

typedef struct allocation {
    uintptr_t base;
    size_t size;
    int pinned; /* cudaMallocHost, else device memory */
} allocation;

typedef struct stream_handle {
    unsigned magic;
} stream_handle;

typedef struct event_handle {
    unsigned magic;
    int recorded, done;
    unsigned long long t_ns;
} event_handle;

enum { STREAM_MAGIC = 0x5723A11u, EVENT_MAGIC = 0xE7E27u };
enum { OP_LAUNCH, OP_COPY, OP_SET, OP_EVENT };
/* The planted faults of GW_EMU_FAULT (docs/emu.md, "Planted faults"). */
enum { FAULT_NONE, FAULT_MALLOC, FAULT_LAUNCH, FAULT_PARTIAL, FAULT_COPY };

typedef struct op {
    int type;
    int planted; /* FAULT_LAUNCH, FAULT_PARTIAL or FAULT_COPY: this op is the planted fault */
    gw_emu_launch_desc launch;
    void *dst;
    const void *src;
    size_t bytes;
    int value;
    event_handle *event;
    struct op *next;
} op;

typedef struct func_attr {
    const void *func;
    int max_dynamic_shared;
} func_attr;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static allocation *allocs;
static size_t n_allocs, cap_allocs, device_bytes;
static op *queue_head, *queue_tail;
static func_attr *attrs;
static size_t n_attrs;
static cudaError_t sticky = cudaSuccess;
static char device_error[2048];
static _Thread_local cudaError_t last_error = cudaSuccess;

/* GW_EMU_FAULT=KIND:N, read once: the Nth cudaMalloc or cudaMallocHost (malloc), launch (launch, partial) or copy
 * from device to host memory (copy) of the process, counted from 1, is the planted fault. */
static struct {
    int read, kind;
    unsigned long long n, count;
} fault;

/* The lock is held. A value that is not KIND:N makes every call fail (a sticky cudaErrorInvalidValue), the
 * reason on stderr: a test whose fault was misspelt must not pass as if it had none. */
static void read_fault(void)
{
    static const char *const kinds[] = {[FAULT_MALLOC] = "malloc", [FAULT_LAUNCH] = "launch",
                                        [FAULT_PARTIAL] = "partial", [FAULT_COPY] = "copy"};
    if (fault.read) return;
    fault.read = 1;
    const char *v = getenv("GW_EMU_FAULT");
    if (!v || !*v) return;
    for (int k = FAULT_MALLOC; k <= FAULT_COPY; k++) {
        const size_t len = strlen(kinds[k]);
        if (strncmp(v, kinds[k], len) != 0 || v[len] != ':' || v[len + 1] < '1' || v[len + 1] > '9') continue;
        char *end = NULL;
        errno = 0;
        const unsigned long long n = strtoull(v + len + 1, &end, 10);
        if (errno || *end) break;
        fault.kind = k, fault.n = n;
        return;
    }
    fprintf(stderr, "gw_emu: GW_EMU_FAULT '%s': must be malloc:N, launch:N, partial:N or copy:N, N a whole number "
            "from 1; every CUDA call fails\n", v);
    sticky = cudaErrorInvalidValue;
}

/* Counts a call of one of kinds; 1 when it is the planted fault (the lock is held, read_fault() done). */
static int planted(int kind_a, int kind_b)
{
    return (fault.kind == kind_a || fault.kind == kind_b) && ++fault.count == fault.n;
}

/* Every call ends through here: its error becomes the thread's last error. */
static cudaError_t result(cudaError_t e)
{
    if (e != cudaSuccess) last_error = e;
    return e;
}

/* ---- allocations ---- */

/* The allocation holding [p, p + bytes), or NULL. Sorted by base: binary search. */
static const allocation *find(const void *p, size_t bytes)
{
    const uintptr_t a = (uintptr_t)p;
    size_t lo = 0, hi = n_allocs;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (allocs[mid].base <= a) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    const allocation *m = &allocs[lo - 1];
    return a - m->base < m->size && bytes <= m->size - (a - m->base) ? m : NULL;
}

static int add_allocation(void *p, size_t size, int pinned)
{
    if (n_allocs == cap_allocs) {
        const size_t cap = cap_allocs ? 2 * cap_allocs : 64;
        allocation *grown = realloc(allocs, cap * sizeof *grown);
        if (!grown) return -1;
        allocs = grown, cap_allocs = cap;
    }
    size_t at = n_allocs;
    while (at && allocs[at - 1].base > (uintptr_t)p) at--;
    memmove(&allocs[at + 1], &allocs[at], (n_allocs - at) * sizeof *allocs);
    allocs[at] = (allocation){(uintptr_t)p, size, pinned};
    n_allocs++;
    return 0;
}

/* Removes the allocation that starts at p (of the kind asked for); 0, or -1 when there is none. */
static int remove_allocation(void *p, int pinned)
{
    for (size_t i = 0; i < n_allocs; i++) {
        if (allocs[i].base != (uintptr_t)p || allocs[i].pinned != pinned) continue;
        if (!pinned) device_bytes -= allocs[i].size;
        memmove(&allocs[i], &allocs[i + 1], (n_allocs - i - 1) * sizeof *allocs);
        n_allocs--;
        return 0;
    }
    return -1;
}

/* At exit, device and pinned memory still allocated (cudaDeviceReset frees the device's): the leak that a host
 * leak checker cannot see, since the table above still points to it. Said on stderr, where the CLI's emulated
 * tests fail on it (tests/gw_tests.cmake, gw_cli_test). Not after a sticky fault: as on a GPU, every free then
 * fails, and the memory goes with the context. */
__attribute__((destructor)) static void report_unfreed(void)
{
    if (pthread_mutex_trylock(&lock)) return; /* a thread still inside a call: exit is no place to wait for it */
    size_t n[2] = {0, 0}, bytes[2] = {0, 0};
    for (size_t i = 0; i < n_allocs; i++) n[allocs[i].pinned]++, bytes[allocs[i].pinned] += allocs[i].size;
    if (sticky == cudaSuccess && (n[0] || n[1]))
        fprintf(stderr, "gw_emu: at exit, memory never freed: %zu device allocations (%zu bytes), %zu pinned host "
                "allocations (%zu bytes)\n", n[0], bytes[0], n[1], bytes[1]);
    pthread_mutex_unlock(&lock);
}

static int is_device(const void *p, size_t bytes)
{
    const allocation *a = find(p, bytes ? bytes : 1);
    return a && !a->pinned;
}

/* ---- the queue ---- */

static void free_op(op *o)
{
    if (o->type == OP_LAUNCH && o->launch.free_closure) o->launch.free_closure(o->launch.closure);
    free(o);
}

static cudaError_t enqueue(op *o)
{
    if (sticky != cudaSuccess) {
        free_op(o);
        return sticky;
    }
    o->next = NULL;
    if (queue_tail) queue_tail->next = o;
    else queue_head = o;
    queue_tail = o;
    return cudaSuccess;
}

/* Runs everything queued, in order; the lock is held. After a failed launch the rest is discarded, as a GPU
 * context that faulted runs nothing more. */
static cudaError_t drain(void)
{
    while (queue_head) {
        op *o = queue_head;
        queue_head = o->next;
        if (!queue_head) queue_tail = NULL;
        if (sticky == cudaSuccess) {
            switch (o->type) {
            case OP_LAUNCH: {
                const unsigned long long blocks = (unsigned long long)o->launch.grid[0] * o->launch.grid[1] *
                                                  o->launch.grid[2];
                if (o->planted == FAULT_PARTIAL)
                    fprintf(stderr, "gw_emu: planted fault GW_EMU_FAULT=partial:%llu: kernel %s runs %llu of its %llu "
                            "blocks\n", fault.n, o->launch.kernel, blocks / 2, blocks);
                if (o->planted == FAULT_LAUNCH) /* as a device fault would: sticky, nothing more runs */
                    snprintf(device_error, sizeof device_error, "kernel %s: planted fault GW_EMU_FAULT=launch:%llu: "
                             "the launch fails as a device fault would", o->launch.kernel, fault.n);
                if (o->planted == FAULT_LAUNCH ||
                    gw_emu_run(&o->launch, o->planted == FAULT_PARTIAL ? blocks / 2 : blocks, device_error,
                               sizeof device_error)) {
                    fprintf(stderr, "gw_emu: %s\n", device_error);
                    sticky = cudaErrorLaunchFailure;
                }
                break;
            }
            case OP_COPY:
                memmove(o->dst, o->src, o->bytes);
                if (o->planted == FAULT_COPY) { /* a transfer that went wrong: no tolerance can pass it */
                    for (size_t i = 0; i < o->bytes && i < 8; i++) ((unsigned char *)o->dst)[i] ^= 0xFF;
                    fprintf(stderr, "gw_emu: planted fault GW_EMU_FAULT=copy:%llu: the first bytes (up to 8) of a "
                            "%zu-byte copy to the host arrive inverted\n", fault.n, o->bytes);
                }
                break;
            case OP_SET: memset(o->dst, o->value, o->bytes); break;
            case OP_EVENT: o->event->t_ns = gw_emu_globaltimer(), o->event->done = 1; break;
            }
        }
        free_op(o);
    }
    return sticky;
}

static cudaError_t check_stream(cudaStream_t s)
{
    return !s || ((stream_handle *)s)->magic == STREAM_MAGIC ? cudaSuccess : cudaErrorInvalidResourceHandle;
}

/* ---- launches ---- */

static int dynamic_shared_limit(const void *func)
{
    for (size_t i = 0; i < n_attrs; i++)
        if (attrs[i].func == func) return attrs[i].max_dynamic_shared;
    return GW_EMU_SHARED_PER_BLOCK;
}

cudaError_t gw_emu_launch(const gw_emu_launch_desc *d)
{
    pthread_mutex_lock(&lock);
    const unsigned long long threads = (unsigned long long)d->block[0] * d->block[1] * d->block[2];
    read_fault();
    cudaError_t e = sticky;
    if (e == cudaSuccess) e = check_stream(d->stream);
    if (e == cudaSuccess && (!d->grid[0] || !d->grid[1] || !d->grid[2] || d->grid[1] > 65535 || d->grid[2] > 65535 ||
                             d->grid[0] > 0x7FFFFFFFu || !threads || threads > GW_EMU_MAX_THREADS_PER_BLOCK ||
                             d->block[2] > 64))
        e = cudaErrorInvalidConfiguration;
    if (e == cudaSuccess && d->dynamic_shared > (size_t)dynamic_shared_limit(d->func)) e = cudaErrorInvalidValue;
    op *o = e == cudaSuccess ? calloc(1, sizeof *o) : NULL;
    if (e == cudaSuccess && !o) e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
        o->type = OP_LAUNCH, o->launch = *d;
        if (planted(FAULT_LAUNCH, FAULT_PARTIAL)) o->planted = fault.kind;
        e = enqueue(o);
    } else if (d->free_closure) {
        d->free_closure(d->closure);
    }
    pthread_mutex_unlock(&lock);
    return result(e);
}

/* ---- memory ---- */

cudaError_t cudaMalloc(void **p, size_t size)
{
    if (!p) return result(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    read_fault();
    cudaError_t e = sticky;
    void *mem = NULL;
    if (e == cudaSuccess && planted(FAULT_MALLOC, FAULT_MALLOC)) {
        fprintf(stderr, "gw_emu: planted fault GW_EMU_FAULT=malloc:%llu: cudaMalloc(%zu bytes) fails as out of "
                "memory\n", fault.n, size);
        e = cudaErrorMemoryAllocation;
    }
    if (e == cudaSuccess && size > GW_EMU_MEMORY_BYTES - device_bytes) e = cudaErrorMemoryAllocation;
    /* exactly size bytes, so that AddressSanitizer's redzone starts where the allocation ends */
    if (e == cudaSuccess && size && (posix_memalign(&mem, 256, size) || add_allocation(mem, size, 0))) {
        free(mem);
        e = cudaErrorMemoryAllocation;
    }
    if (e == cudaSuccess) {
        device_bytes += size;
        if (size) memset(mem, 0xFF, size); /* device memory is not zeroed: a read before a write reads NaN */
        *p = mem;
    }
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaFree(void *p)
{
    pthread_mutex_lock(&lock);
    cudaError_t e = drain(); /* as on a GPU, a free waits for the work that may use it */
    if (e == cudaSuccess && p) {
        if (remove_allocation(p, 0)) e = cudaErrorInvalidValue;
        else free(p);
    }
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaMallocHost(void **p, size_t size)
{
    if (!p) return result(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    read_fault();
    void *mem = NULL;
    cudaError_t e = sticky;
    if (e == cudaSuccess && planted(FAULT_MALLOC, FAULT_MALLOC)) {
        fprintf(stderr, "gw_emu: planted fault GW_EMU_FAULT=malloc:%llu: cudaMallocHost(%zu bytes) fails as out of "
                "memory\n", fault.n, size);
        e = cudaErrorMemoryAllocation;
    }
    if (e == cudaSuccess && (posix_memalign(&mem, 256, size ? size : 1) || add_allocation(mem, size ? size : 1, 1))) {
        free(mem);
        e = cudaErrorMemoryAllocation;
    }
    if (e == cudaSuccess) *p = mem;
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaFreeHost(void *p)
{
    pthread_mutex_lock(&lock);
    cudaError_t e = drain();
    if (e == cudaSuccess && p) {
        if (remove_allocation(p, 1)) e = cudaErrorInvalidValue;
        else free(p);
    }
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    pthread_mutex_lock(&lock);
    const cudaError_t e = sticky;
    if (e == cudaSuccess) {
        if (free_bytes) *free_bytes = GW_EMU_MEMORY_BYTES - device_bytes;
        if (total_bytes) *total_bytes = GW_EMU_MEMORY_BYTES;
    }
    pthread_mutex_unlock(&lock);
    return result(e);
}

/* The rule of a copy's direction, and that a range starting in an allocation ends in it. */
static cudaError_t check_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    if (!bytes) return cudaSuccess;
    if (!dst || !src) return cudaErrorInvalidValue;
    const allocation *d = find(dst, 1), *s = find(src, 1);
    if ((d && !find(dst, bytes)) || (s && !find(src, bytes))) return cudaErrorInvalidValue;
    const int dst_dev = d && !d->pinned, src_dev = s && !s->pinned;
    switch (kind) {
    case cudaMemcpyHostToHost: return !dst_dev && !src_dev ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyHostToDevice: return dst_dev && !src_dev ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToHost: return !dst_dev && src_dev ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToDevice: return dst_dev && src_dev ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDefault: return cudaSuccess;
    }
    return cudaErrorInvalidMemcpyDirection;
}

/* A copy or a memset (proto), checked, queued on s, and run at once when sync (the synchronous calls). */
static cudaError_t transfer(op proto, enum cudaMemcpyKind kind, cudaStream_t s, int sync)
{
    pthread_mutex_lock(&lock);
    read_fault();
    cudaError_t e = sticky;
    if (e == cudaSuccess) e = check_stream(s);
    if (e == cudaSuccess)
        e = proto.type == OP_COPY ? check_copy(proto.dst, proto.src, proto.bytes, kind)
            : proto.bytes && !is_device(proto.dst, proto.bytes) ? cudaErrorInvalidValue : cudaSuccess;
    op *o = e == cudaSuccess && proto.bytes ? malloc(sizeof *o) : NULL;
    if (e == cudaSuccess && proto.bytes && !o) e = cudaErrorMemoryAllocation;
    if (o) {
        *o = proto;
        if (proto.type == OP_COPY && is_device(proto.src, proto.bytes) && !is_device(proto.dst, proto.bytes) &&
            planted(FAULT_COPY, FAULT_COPY))
            o->planted = FAULT_COPY;
        e = enqueue(o);
    }
    if (e == cudaSuccess && sync) e = drain();
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind)
{
    return transfer((op){.type = OP_COPY, .dst = dst, .src = src, .bytes = bytes}, kind, NULL, 1);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, cudaStream_t s)
{
    return transfer((op){.type = OP_COPY, .dst = dst, .src = src, .bytes = bytes}, kind, s, 0);
}

cudaError_t cudaMemset(void *dst, int value, size_t bytes)
{
    return transfer((op){.type = OP_SET, .dst = dst, .value = value, .bytes = bytes}, cudaMemcpyDefault, NULL, 1);
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes, cudaStream_t s)
{
    return transfer((op){.type = OP_SET, .dst = dst, .value = value, .bytes = bytes}, cudaMemcpyDefault, s, 0);
}

const char *gw_emu_last_device_error(void)
{
    pthread_mutex_lock(&lock);
    const char *m = sticky == cudaSuccess ? "" : device_error;
    pthread_mutex_unlock(&lock);
    return m;
}

/* ---- streams and events ---- */

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    if (!s || (flags & ~(unsigned)cudaStreamNonBlocking)) return result(cudaErrorInvalidValue);
    stream_handle *h = malloc(sizeof *h);
    if (!h) return result(cudaErrorMemoryAllocation);
    h->magic = STREAM_MAGIC;
    *s = (cudaStream_t)h;
    return result(sticky);
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    pthread_mutex_lock(&lock);
    cudaError_t e = !s ? cudaErrorInvalidResourceHandle : check_stream(s);
    if (e == cudaSuccess) {
        drain(); /* its work completes, as CUDA lets it */
        ((stream_handle *)s)->magic = 0;
        free(s);
    }
    pthread_mutex_unlock(&lock);
    return result(e);
}

static cudaError_t synchronise(void)
{
    pthread_mutex_lock(&lock);
    const cudaError_t e = drain();
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    const cudaError_t e = check_stream(s);
    return e != cudaSuccess ? result(e) : synchronise();
}

cudaError_t cudaDeviceSynchronize(void) { return synchronise(); }

cudaError_t cudaEventCreate(cudaEvent_t *ev)
{
    if (!ev) return result(cudaErrorInvalidValue);
    event_handle *h = calloc(1, sizeof *h);
    if (!h) return result(cudaErrorMemoryAllocation);
    h->magic = EVENT_MAGIC;
    *ev = (cudaEvent_t)h;
    return result(sticky);
}

static event_handle *event_of(cudaEvent_t ev)
{
    event_handle *h = (event_handle *)ev;
    return h && h->magic == EVENT_MAGIC ? h : NULL;
}

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    pthread_mutex_lock(&lock);
    event_handle *h = event_of(ev);
    if (h) {
        drain(); /* a queued record must not write a freed event */
        h->magic = 0;
        free(h);
    }
    pthread_mutex_unlock(&lock);
    return result(h ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    pthread_mutex_lock(&lock);
    event_handle *h = event_of(ev);
    cudaError_t e = !h ? cudaErrorInvalidResourceHandle : check_stream(s);
    op *o = e == cudaSuccess ? calloc(1, sizeof *o) : NULL;
    if (e == cudaSuccess && !o) e = cudaErrorMemoryAllocation;
    if (o) {
        h->recorded = 1, h->done = 0;
        o->type = OP_EVENT, o->event = h;
        e = enqueue(o);
    }
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    if (!event_of(ev)) return result(cudaErrorInvalidResourceHandle);
    return synchronise();
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    pthread_mutex_lock(&lock);
    const event_handle *a = event_of(start), *b = event_of(end);
    cudaError_t e = !ms ? cudaErrorInvalidValue : !a || !b ? cudaErrorInvalidResourceHandle
                    : !a->recorded || !b->recorded ? cudaErrorInvalidResourceHandle
                    : !a->done || !b->done ? cudaErrorNotReady : sticky;
    if (e == cudaSuccess) *ms = (float)((double)(b->t_ns - a->t_ns) / 1e6);
    pthread_mutex_unlock(&lock);
    return result(e);
}

/* ---- errors ---- */

cudaError_t cudaGetLastError(void)
{
    const cudaError_t e = last_error != cudaSuccess ? last_error : sticky;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error != cudaSuccess ? last_error : sticky; }

static const struct {
    cudaError_t code;
    const char *name, *text;
} errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure",
     "unspecified launch failure (on the emulated device: the device-code error printed by gw_emu)"},
};

const char *cudaGetErrorName(cudaError_t e)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e) return errors[i].name;
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == e) return errors[i].text;
    return "unrecognized error code (the emulated runtime names only the errors it returns)";
}

/* ---- the device ---- */

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return result(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return result(device == 0 ? sticky : cudaErrorInvalidDevice); }

cudaError_t cudaGetDevice(int *device)
{
    if (!device) return result(cudaErrorInvalidValue);
    *device = 0;
    return result(sticky);
}

cudaError_t cudaDeviceReset(void)
{
    pthread_mutex_lock(&lock);
    sticky = cudaSuccess; /* queued work of a failed context is gone, and so is the failure */
    drain();
    for (size_t i = 0; i < n_allocs; i++)
        if (!allocs[i].pinned) free((void *)allocs[i].base);
    size_t kept = 0;
    for (size_t i = 0; i < n_allocs; i++)
        if (allocs[i].pinned) allocs[kept++] = allocs[i];
    n_allocs = kept, device_bytes = 0, n_attrs = 0;
    gw_emu_reset_launches();
    pthread_mutex_unlock(&lock);
    last_error = cudaSuccess;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value) return result(cudaErrorInvalidValue);
    if (device != 0) return result(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrMultiProcessorCount: *value = GW_EMU_SM_COUNT; break;
    case cudaDevAttrMaxThreadsPerBlock: *value = GW_EMU_MAX_THREADS_PER_BLOCK; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = 2048; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = GW_EMU_SHARED_PER_BLOCK; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = GW_EMU_SHARED_PER_BLOCK_OPTIN; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = GW_EMU_SHARED_PER_SM; break;
    case cudaDevAttrWarpSize: *value = GW_EMU_WARP; break;
    case cudaDevAttrL2CacheSize: *value = 4 << 20; break;
    case cudaDevAttrMaxGridDimX: *value = 0x7FFFFFFF; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: *value = 65535; break;
    case cudaDevAttrMaxBlockDimX: case cudaDevAttrMaxBlockDimY: *value = 1024; break;
    case cudaDevAttrMaxBlockDimZ: *value = 64; break;
    default: return result(cudaErrorInvalidValue);
    }
    return result(sticky);
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop) return result(cudaErrorInvalidValue);
    if (device != 0) return result(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "gpuwitness emulated device (on the CPU, not a GPU)");
    prop->major = 9, prop->minor = 0;
    prop->multiProcessorCount = GW_EMU_SM_COUNT;
    prop->totalGlobalMem = GW_EMU_MEMORY_BYTES;
    prop->sharedMemPerBlock = GW_EMU_SHARED_PER_BLOCK;
    prop->sharedMemPerBlockOptin = GW_EMU_SHARED_PER_BLOCK_OPTIN;
    prop->sharedMemPerMultiprocessor = GW_EMU_SHARED_PER_SM;
    prop->maxThreadsPerBlock = GW_EMU_MAX_THREADS_PER_BLOCK;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->warpSize = GW_EMU_WARP;
    prop->l2CacheSize = 4 << 20;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024, prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7FFFFFFF, prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->regsPerBlock = prop->regsPerMultiprocessor = 65536;
    prop->unifiedAddressing = 1;
    return result(sticky);
}

cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int len, int device)
{
    (void)bus_id, (void)len, (void)device;
    return result(cudaErrorNotSupported); /* no PCI device: NVML has nothing to find */
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
    if (!version) return result(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version)
{
    if (!version) return result(cudaErrorInvalidValue);
    *version = CUDART_VERSION; /* the emulator is its own driver */
    return cudaSuccess;
}

/* ---- functions ---- */

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    if (!func) return result(cudaErrorInvalidDeviceFunction);
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return result(sticky); /* carveouts: nothing to do */
    if (value < 0 || value > GW_EMU_SHARED_PER_BLOCK_OPTIN) return result(cudaErrorInvalidValue);
    pthread_mutex_lock(&lock);
    cudaError_t e = sticky;
    size_t i = 0;
    while (i < n_attrs && attrs[i].func != func) i++;
    if (i == n_attrs) {
        func_attr *grown = realloc(attrs, (n_attrs + 1) * sizeof *attrs);
        if (grown) attrs = grown, attrs[n_attrs++] = (func_attr){func, GW_EMU_SHARED_PER_BLOCK};
        else e = cudaErrorMemoryAllocation;
    }
    if (e == cudaSuccess) attrs[i].max_dynamic_shared = value;
    pthread_mutex_unlock(&lock);
    return result(e);
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    if (!attr) return result(cudaErrorInvalidValue);
    if (!func) return result(cudaErrorInvalidDeviceFunction);
    memset(attr, 0, sizeof *attr);
    attr->maxThreadsPerBlock = GW_EMU_MAX_THREADS_PER_BLOCK;
    pthread_mutex_lock(&lock);
    attr->maxDynamicSharedSizeBytes = dynamic_shared_limit(func);
    pthread_mutex_unlock(&lock);
    /* binaryVersion and ptxVersion stay 0: there is no GPU code, only the host's */
    return result(sticky);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func, int block_size,
                                                          size_t dynamic_shared)
{
    if (!blocks || block_size <= 0 || block_size > GW_EMU_MAX_THREADS_PER_BLOCK) return result(cudaErrorInvalidValue);
    if (!func) return result(cudaErrorInvalidDeviceFunction);
    /* sm_90's rules without registers (unknown here): 32 blocks, 64 warps, shared memory with 1 KiB per block */
    const int warps = (block_size + GW_EMU_WARP - 1) / GW_EMU_WARP;
    int n = 32;
    if (64 / warps < n) n = 64 / warps;
    const size_t per_block = dynamic_shared + 1024;
    if ((int)(GW_EMU_SHARED_PER_SM / per_block) < n) n = (int)(GW_EMU_SHARED_PER_SM / per_block);
    *blocks = n;
    return result(sticky);
}
