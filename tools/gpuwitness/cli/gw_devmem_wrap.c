/* SPDX-License-Identifier: MIT
 * The gpuwitness binary's cudaMalloc and cudaFree, sent here by the linker (--wrap=cudaMalloc,
 * --wrap=cudaFree, set by the gw_devmem_wrap target), so that gw_devmem counts every device allocation of
 * every kernel's host path without a line in any kernel's glue (docs/monitor.md, "Device memory").
 */
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "gw_devmem.h"

cudaError_t __real_cudaMalloc(void **ptr, size_t bytes);
cudaError_t __real_cudaFree(void *ptr);
cudaError_t __wrap_cudaMalloc(void **ptr, size_t bytes);
cudaError_t __wrap_cudaFree(void *ptr);

cudaError_t __wrap_cudaMalloc(void **ptr, size_t bytes)
{
    const cudaError_t e = __real_cudaMalloc(ptr, bytes);
    if (e == cudaSuccess && ptr) gw_devmem_alloc(*ptr, bytes);
    return e;
}

cudaError_t __wrap_cudaFree(void *ptr)
{
    const cudaError_t e = __real_cudaFree(ptr);
    if (e == cudaSuccess) gw_devmem_free(ptr);
    return e;
}
