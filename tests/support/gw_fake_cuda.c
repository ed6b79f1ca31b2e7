/* SPDX-License-Identifier: MIT
 * The recording stand-in for the CUDA runtime (gw_fake_cuda.h). Each __wrap_<call> below replaces <call> in
 * an executable linked with --wrap=<call> (the library's link options); none calls the real runtime. */
#include "gw_fake_cuda.h"

#include <string.h>

#include <vector_types.h> /* dim3 */

#define GW_FAKE_CUDA_MAX_CALLS 64 /* a launcher makes a handful; more means it runs away */

static cudaError_t pending_error;
static const char *calls[GW_FAKE_CUDA_MAX_CALLS];
static size_t n_calls, n_dropped;
static char log_line[1024];
static int let_work, max_dynamic_shared = -1;

void gw_fake_cuda_reset(cudaError_t pending)
{
    pending_error = pending;
    n_calls = n_dropped = 0;
    let_work = 0;
    max_dynamic_shared = -1;
}

void gw_fake_cuda_let_work(void) { let_work = 1; }

int gw_fake_cuda_max_dynamic_shared(void) { return max_dynamic_shared; }

size_t gw_fake_cuda_calls(void) { return n_calls + n_dropped; }

const char *gw_fake_cuda_call(size_t i) { return i < n_calls ? calls[i] : "(none)"; }

const char *gw_fake_cuda_log(void)
{
    size_t used = 0;
    log_line[0] = '\0';
    for (size_t i = 0; i < n_calls && used + 1 < sizeof log_line; i++) {
        const size_t room = sizeof log_line - used;
        const size_t len = strlen(calls[i]) + (i ? 2 : 0);
        if (len + 1 > room) break;
        memcpy(log_line + used, i ? ", " : "", i ? 2 : 0);
        memcpy(log_line + used + (i ? 2 : 0), calls[i], strlen(calls[i]) + 1);
        used += len;
    }
    if (n_calls == 0) memcpy(log_line, "no call", sizeof "no call");
    return log_line;
}

static void record(const char *name)
{
    if (n_calls < GW_FAKE_CUDA_MAX_CALLS)
        calls[n_calls++] = name;
    else
        n_dropped++;
}

cudaError_t __wrap_cudaPeekAtLastError(void);
cudaError_t __wrap_cudaGetLastError(void);
cudaError_t __wrap_cudaGetDevice(int *device);
cudaError_t __wrap_cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device);
cudaError_t __wrap_cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream);
cudaError_t __wrap_cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func);
cudaError_t __wrap_cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value);
cudaError_t __wrap_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func, int block_size,
                                                                  size_t shared_bytes);
unsigned __wrap___cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared_bytes, struct CUstream_st *stream);

cudaError_t __wrap_cudaPeekAtLastError(void)
{
    record("cudaPeekAtLastError");
    return pending_error;
}

cudaError_t __wrap_cudaGetLastError(void)
{
    record("cudaGetLastError");
    const cudaError_t e = pending_error;
    pending_error = cudaSuccess;
    return e;
}

/* The calls a launcher makes once it decided to work: each is logged and fails, which stops it, or, after
 * gw_fake_cuda_let_work, succeeds with the fake device's values. */
cudaError_t __wrap_cudaGetDevice(int *device)
{
    record("cudaGetDevice");
    if (!let_work) return GW_FAKE_CUDA_STOP;
    *device = 0;
    return cudaSuccess;
}

cudaError_t __wrap_cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    (void)attr, (void)device;
    record("cudaDeviceGetAttribute");
    if (!let_work) return GW_FAKE_CUDA_STOP;
    *value = GW_FAKE_CUDA_ATTRIBUTE;
    return cudaSuccess;
}

cudaError_t __wrap_cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    (void)ptr, (void)value, (void)count, (void)stream; /* never written: the pointers are the test's host memory */
    record("cudaMemsetAsync");
    return let_work ? cudaSuccess : GW_FAKE_CUDA_STOP;
}

cudaError_t __wrap_cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    (void)func;
    record("cudaFuncGetAttributes");
    if (!let_work) return GW_FAKE_CUDA_STOP;
    memset(attr, 0, sizeof *attr);
    attr->sharedSizeBytes = GW_FAKE_CUDA_STATIC_SHARED;
    attr->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

cudaError_t __wrap_cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    (void)func;
    record("cudaFuncSetAttribute");
    if (!let_work) return GW_FAKE_CUDA_STOP;
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) max_dynamic_shared = value;
    return cudaSuccess;
}

cudaError_t __wrap_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func, int block_size,
                                                                  size_t shared_bytes)
{
    (void)func, (void)block_size, (void)shared_bytes;
    record("cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (!let_work) return GW_FAKE_CUDA_STOP;
    *blocks = 1;
    return cudaSuccess;
}

/* kernel<<<grid, block, shared, stream>>>(args) is compiled to
 *     __cudaPushCallConfiguration(grid, block, shared, stream) ? (void)0 : kernel(args)
 * so a non-zero return skips the launch: nothing runs, and the launch is logged. */
unsigned __wrap___cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared_bytes, struct CUstream_st *stream)
{
    (void)grid, (void)block, (void)shared_bytes, (void)stream;
    record("<<<kernel launch>>>");
    return 1;
}
