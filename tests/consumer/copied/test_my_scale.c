/* SPDX-License-Identifier: MIT
 * The Criterion test of docs/guard-your-kernel.md: my_scale against the CPU loop, with poisoned outputs
 * and the witness check that proves the GPU produced them. Linked with gw_test_main.c (exit 77 when every
 * test skipped) and registered with gw_add_gpu_test(); with gw_add_emu_test() too, on the emulated device.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "gw_witness_check.h"
#include "my_scale.h"

#define CUDA_OK(call)                                                                                          \
    do {                                                                                                       \
        cudaError_t err_ = (call);                                                                             \
        cr_assert(err_ == cudaSuccess, "%s failed: %s (%s)", #call, cudaGetErrorName(err_),                   \
                  cudaGetErrorString(err_));                                                                   \
    } while (0)

static unsigned device_arch; /* set by the suite's .init, in the test's own process */

/* Skips without a GPU, fails instead when GW_REQUIRE_GPU=1; only "no driver" and "no device" are a
 * missing GPU, any other probe error is a failure. */
static void gpu_or_skip(void)
{
    int count = 0; /* cudaGetDeviceCount leaves it unwritten when there is no driver */
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count == 0) err = cudaErrorNoDevice;
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice) {
        const char *require = getenv("GW_REQUIRE_GPU");
        if (!require || strcmp(require, "1") != 0) cr_skip_test("no usable GPU: %s", cudaGetErrorName(err));
        cr_assert_fail("no usable GPU: %s; GW_REQUIRE_GPU=1 makes a missing GPU a failure", cudaGetErrorName(err));
    }
    CUDA_OK(err);
    int major = 0, minor = 0;
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    device_arch = (unsigned)(major * 100 + minor * 10);
}

TestSuite(my_scale, .init = gpu_or_skip);

Test(my_scale, matches_the_cpu_loop_and_the_witness_proves_the_gpu_ran)
{
    const size_t n = 100003; /* a prime: the last block is partial */
    const float factor = 3.0f;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    cr_assert(in && out, "out of host memory");
    for (size_t i = 0; i < n; i++) in[i] = (float)(i % 1000) - 500.0f;

    float *d_in = NULL, *d_out = NULL;
    gw_witness *d_witness = NULL;
    CUDA_OK(cudaMalloc((void **)&d_in, n * sizeof *d_in));
    CUDA_OK(cudaMalloc((void **)&d_out, n * sizeof *d_out));
    CUDA_OK(cudaMalloc((void **)&d_witness, sizeof *d_witness));
    CUDA_OK(cudaMemcpy(d_in, in, n * sizeof *in, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(d_out, 0xFF, n * sizeof *d_out)); /* poison: every float is a NaN until written */
    CUDA_OK(cudaMemset(d_witness, 0, sizeof *d_witness));

    const my_scale_params p = {.n = n, .factor = factor};
    CUDA_OK(my_scale_launch(&p, d_in, d_out, d_witness, 0));
    CUDA_OK(cudaDeviceSynchronize());

    /* The witness first: it says how the GPU failed when the output is wrong too. */
    gw_witness rec;
    CUDA_OK(cudaMemcpy(&rec, d_witness, sizeof rec, cudaMemcpyDeviceToHost));
    gw_witness_expect expect = {.launches = 1, .items = n, .device_arch = device_arch, .device_sms = 0};
#ifdef GW_EMU /* gw_add_emu_test's build: the emulated device's records, and only those, are what it must see */
    expect.emulated = 1;
#endif
    char findings[1024];
    cr_assert(gw_witness_check(&rec, &expect, findings, sizeof findings) == 0, "witness:\n%s", findings);

    CUDA_OK(cudaMemcpy(out, d_out, n * sizeof *out, cudaMemcpyDeviceToHost));
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(out[i] == factor * in[i]) && bad++ == 0) first_bad = i; /* NaN (poison) never compares equal */
    cr_assert(bad == 0, "%zu of %zu outputs differ from the CPU loop; first at %zu: %g, want %g", bad, n, first_bad,
              (double)out[first_bad], (double)(factor * in[first_bad]));

    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_witness);
    free(in);
    free(out);
}
