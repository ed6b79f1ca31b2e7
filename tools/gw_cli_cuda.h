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
