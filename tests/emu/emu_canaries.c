/* SPDX-License-Identifier: MIT
 * The emu tier's AddressSanitizer canary (emu_canary_kernels.cu; the ThreadSanitizer one runs in
 * emu_tsan_run.c, as Criterion cannot start under ThreadSanitizer): the planted fault, and the check of the
 * result a correct kernel would give. In the asan build the test must fail through the sanitizers' report
 * (ctest/gw_run_canary.sh matches its words), not through the check below it.
 */
#include <criterion/criterion.h>

#include "emu_canary_kernels.h"

enum { N = 64 };

Test(emu_canary, shared_off_by_one_write_stays_in_its_array)
{
    int *d_out = NULL, out[N];
    cr_assert(cudaMalloc((void **)&d_out, sizeof out) == cudaSuccess);
    cr_assert(emu_shared_off_by_one(d_out) == cudaSuccess);
    cr_assert(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);
    cr_assert(cudaFree(d_out) == cudaSuccess);
    for (int i = 1; i < N; i++) cr_expect_eq(out[i], i - 1, "out[%d]", i);
}
