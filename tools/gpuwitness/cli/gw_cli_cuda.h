/* SPDX-License-Identifier: MIT
 * CUDA error handling shared by the CLI's GPU call files: every failure names the call and the CUDA error.
 * CUDA_TRY needs `err`, `err_size` and a `fail:` label in the calling function, where it frees what it made.
 */
#ifndef GW_CLI_CUDA_H
#define GW_CLI_CUDA_H

#include <stddef.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

static inline void gw_cli_cuda_fail(char *err, size_t err_size, const char *what, cudaError_t e)
{
    snprintf(err, err_size, "%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* Clean-up: keeps the first failure of a sequence of calls (and its call's name) and goes on freeing. */
static inline void gw_cli_cuda_keep_first(cudaError_t e, const char *call, cudaError_t *first, const char **what)
{
    if (e != cudaSuccess && *first == cudaSuccess) *first = e, *what = call;
}

/* Checks need_bytes (a double: size products can pass 2^64) against the current device's free memory before
 * any allocation, so a problem that cannot fit gets the sizes, not a bare cudaMalloc error. 0 when it fits;
 * -1 with err ("not enough device memory for WHAT: needs N bytes ...") or the cudaMemGetInfo error. */
static inline int gw_cli_cuda_check_fits(const char *what, double need_bytes, char *err, size_t err_size)
{
    size_t free_bytes = 0, total_bytes = 0;
    const cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
    if (e != cudaSuccess) {
        gw_cli_cuda_fail(err, err_size, "cudaMemGetInfo", e);
        return -1;
    }
    if (need_bytes <= (double)free_bytes) return 0;
    snprintf(err, err_size, "not enough device memory for %s: needs %.0f bytes (%.1f MB), %zu bytes (%.1f MB) are "
             "free of %zu", what, need_bytes, need_bytes / 1e6, free_bytes, (double)free_bytes / 1e6, total_bytes);
    return -1;
}

/* Sets err and jumps to fail when a CUDA call does not succeed. */
#define CUDA_TRY(call, what)                                                                                         \
    do {                                                                                                             \
        cudaError_t e_ = (call);                                                                                     \
        if (e_ != cudaSuccess) {                                                                                     \
            gw_cli_cuda_fail(err, err_size, what, e_);                                                               \
            goto fail;                                                                                               \
        }                                                                                                            \
    } while (0)

#endif /* GW_CLI_CUDA_H */
