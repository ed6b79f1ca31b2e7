/* SPDX-License-Identifier: MIT
 * The usage example of kernels/focus_stack/focus_stack.h, compiled and run: the lines between example-begin
 * and example-end are the header's, verbatim (test_focus_stack_ref.c checks that they still match), with
 * the setup the header's comment describes around them. The example passes NULL for the witness, so the
 * call is then repeated with a witness record to prove it ran on the GPU.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "focus_stack.h"
#include "gw_gpu_test.h"

TestSuite(focus_stack_example, .init = gw_gpu_test_init);

static void *device_copy(const void *host, size_t bytes)
{
    void *d = NULL;
    GW_CUDA(cudaMalloc(&d, bytes));
    if (host) GW_CUDA(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

/* idx 0xFF (never valid) and ff 0xA5A5 before each call. */
static void poison(uint8_t *d_idx, uint16_t *d_ff)
{
    GW_CUDA(cudaMemset(d_idx, 0xFF, 3));
    GW_CUDA(cudaMemset(d_ff, 0xA5, 3 * sizeof *d_ff));
}

static void expect_result(const uint8_t *d_idx, const uint16_t *d_ff, const char *when)
{
    uint8_t idx[3];
    uint16_t ff[3];
    GW_CUDA(cudaMemcpy(idx, d_idx, sizeof idx, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(ff, d_ff, sizeof ff, cudaMemcpyDeviceToHost));
    cr_assert(idx[0] == 1 && idx[1] == 1 && idx[2] == 1 && ff[0] == 0 && ff[1] == 400 && ff[2] == 0,
              "%s: idx = {%u,%u,%u}, ff = {%u,%u,%u}; the header says idx = {1,1,1}, ff = {0,400,0}", when, idx[0],
              idx[1], idx[2], ff[0], ff[1], ff[2]);
}

Test(focus_stack_example, the_header_example_picks_the_sharper_slice_of_a_1x3_stack)
{
    const uint16_t in[6] = {100, 100, 100, 0, 400, 0};
    const uint16_t *d_in = device_copy(in, sizeof in);
    uint8_t *d_idx = device_copy(NULL, 3);
    uint16_t *d_ff = device_copy(NULL, 3 * sizeof *d_ff);
    cudaStream_t stream;
    GW_CUDA(cudaStreamCreate(&stream));
    poison(d_idx, d_ff);

    // example-begin
    // 2 slices of a 1x3 image: slice 1 has the sharper centre, and with the ZERO border its edge
    // pixels score higher too
    // in = {100,100,100,  0,400,0}  (uint16, copied to d_in)
    focus_stack_params p = {.n = 1, .z = 2, .y = 1, .x = 3, .ksize = 3};  // LOG_ABS, ZERO border, no window
    cudaError_t err = focus_stack_launch(&p, d_in, d_idx, d_ff, NULL, NULL, NULL, stream);
    // err == cudaSuccess; after cudaStreamSynchronize: idx = {1,1,1}, ff = {0,400,0}
    // example-end

    cr_assert(err == cudaSuccess, "focus_stack_launch returned %s", cudaGetErrorName(err));
    GW_CUDA(cudaStreamSynchronize(stream));
    expect_result(d_idx, d_ff, "the example as written");

    /* The same call with a witness, outputs poisoned again: 3 pixels from one launch. */
    gw_witness *d_witness = gw_witness_new();
    poison(d_idx, d_ff);
    err = focus_stack_launch(&p, d_in, d_idx, d_ff, NULL, NULL, d_witness, stream);
    cr_assert(err == cudaSuccess, "focus_stack_launch returned %s", cudaGetErrorName(err));
    GW_CUDA(cudaStreamSynchronize(stream));
    expect_result(d_idx, d_ff, "the witnessed repeat");
    gw_assert_witness(d_witness, 1, 3);

    cudaFree(d_witness);
    cudaFree((void *)d_in);
    cudaFree(d_idx);
    cudaFree(d_ff);
    GW_CUDA(cudaStreamDestroy(stream));
    GW_CUDA(cudaDeviceReset()); /* compute-sanitizer's leak check reports only at context teardown */
}
