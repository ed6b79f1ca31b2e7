/* SPDX-License-Identifier: MIT
 * The emu tier's sanitizer canaries (emu_canary_kernels.cu): each test runs one planted fault and checks the
 * result a correct kernel would give. Run under the sanitizer meant for it, the test must fail through that
 * sanitizer's report (ctest/gw_run_canary.sh matches its words), not through the check below it.
 */
#include <criterion/criterion.h>

#include "emu_canary_kernels.h"

enum { N = 64 };

static void run(cudaError_t (*launch)(int *), int out[N])
{
    int *d_out = NULL;
    cr_assert(cudaMalloc((void **)&d_out, N * sizeof *d_out) == cudaSuccess);
    cr_assert(launch(d_out) == cudaSuccess);
    cr_assert(cudaMemcpy(out, d_out, N * sizeof *d_out, cudaMemcpyDeviceToHost) == cudaSuccess);
    cr_assert(cudaFree(d_out) == cudaSuccess);
}

Test(emu_canary, missing_syncthreads_reads_what_the_neighbour_wrote)
{
    int out[N];
    run(emu_missing_sync, out);
    for (int i = 0; i < N; i++) cr_expect_eq(out[i], (i + 1) % N, "out[%d]", i);
}

Test(emu_canary, shared_off_by_one_write_stays_in_its_array)
{
    int out[N];
    run(emu_shared_off_by_one, out);
    for (int i = 1; i < N; i++) cr_expect_eq(out[i], i - 1, "out[%d]", i);
}
