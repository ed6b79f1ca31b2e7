/* SPDX-License-Identifier: MIT
 * The usage example of kernels/grid_d4/grid_d4.h, compiled and run: the lines between example-begin and
 * example-end are the header's, verbatim (test_grid_d4_ref.c checks that they still match), with the setup
 * the header's comment describes around them. The example passes NULL for the witness, so the call is
 * then repeated with a witness record to prove it ran on the GPU.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "grid_d4.h"
#include "gw_gpu_test.h"

TestSuite(grid_d4_example, .init = gw_gpu_test_init);

static void *device_copy(const void *host, size_t bytes)
{
    void *d = NULL;
    GW_CUDA(cudaMalloc(&d, bytes));
    if (host) GW_CUDA(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

Test(grid_d4_example, the_header_example_turns_a_2x3_grid_clockwise)
{
    const uint8_t in[6] = {1, 2, 3, 4, 5, 6};
    const uint16_t height[1] = {2}, width[1] = {3};
    const uint64_t offset[1] = {0};
    const uint8_t *d_in = device_copy(in, sizeof in);
    uint8_t *d_out = device_copy(NULL, 6);
    const uint64_t *d_offset = device_copy(offset, sizeof offset);
    const uint16_t *d_height = device_copy(height, sizeof height), *d_width = device_copy(width, sizeof width);
    uint16_t *d_out_height = device_copy(NULL, 2), *d_out_width = device_copy(NULL, 2);
    grid_d4_status_record *d_status = device_copy(NULL, sizeof *d_status);
    cudaStream_t stream;
    GW_CUDA(cudaStreamCreate(&stream));
    /* Poison: 0xFF cells, 0xFFFF shapes, and a status that no launcher writes. */
    GW_CUDA(cudaMemset(d_out, 0xFF, 6));
    GW_CUDA(cudaMemset(d_out_height, 0xFF, 2));
    GW_CUDA(cudaMemset(d_out_width, 0xFF, 2));
    GW_CUDA(cudaMemset(d_status, 0x5A, sizeof *d_status));

    // example-begin
    // host: in = {1,2,3, 4,5,6}, height = 2, width = 3, offset = 0; copied to d_in, d_height, ...
    grid_d4_params p = {.n_grids = 1, .buf_bytes = 6, .batch_op = GRID_D4_ROT90, .flags = 0};
    cudaError_t err = grid_d4_launch(&p, d_in, d_out, d_offset, d_height, d_width,
                                     d_out_height, d_out_width, NULL, d_status, NULL, stream);
    // after cudaStreamSynchronize(stream): out = {4,1, 5,2, 6,3}, out_height = 3, out_width = 2,
    // grid_d4_status_record_code(&status) == GRID_D4_OK
    // example-end

    cr_assert(err == cudaSuccess, "grid_d4_launch returned %s", cudaGetErrorName(err));
    GW_CUDA(cudaStreamSynchronize(stream));
    static const uint8_t want[6] = {4, 1, 5, 2, 6, 3};
    uint8_t out[6];
    uint16_t out_height, out_width;
    grid_d4_status_record status;
    GW_CUDA(cudaMemcpy(out, d_out, 6, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&out_height, d_out_height, 2, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&out_width, d_out_width, 2, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&status, d_status, sizeof status, cudaMemcpyDeviceToHost));
    cr_assert(grid_d4_status_record_code(&status) == GRID_D4_OK, "status record %#llx, want no error",
              status.packed);
    cr_assert(out_height == 3 && out_width == 2, "result shape %ux%u, want 3x2", out_height, out_width);
    cr_assert(memcmp(out, want, 6) == 0, "out = {%u,%u, %u,%u, %u,%u}, want {4,1, 5,2, 6,3}", out[0], out[1], out[2],
              out[3], out[4], out[5]);

    /* The same call with a witness, outputs poisoned again (0x5A this time). */
    gw_witness *d_witness = gw_witness_new();
    GW_CUDA(cudaMemset(d_out, 0x5A, 6));
    GW_CUDA(cudaMemset(d_out_height, 0xFF, 2));
    GW_CUDA(cudaMemset(d_out_width, 0xFF, 2));
    err = grid_d4_launch(&p, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, NULL, d_status,
                         d_witness, stream);
    cr_assert(err == cudaSuccess, "grid_d4_launch returned %s", cudaGetErrorName(err));
    GW_CUDA(cudaStreamSynchronize(stream));
    GW_CUDA(cudaMemcpy(out, d_out, 6, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&out_height, d_out_height, 2, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&out_width, d_out_width, 2, cudaMemcpyDeviceToHost));
    cr_assert(memcmp(out, want, 6) == 0 && out_height == 3 && out_width == 2, "the witnessed repeat differs");
    gw_assert_witness(d_witness, 1, 6);

    cudaFree(d_witness);
    cudaFree((void *)d_in);
    cudaFree(d_out);
    cudaFree((void *)d_offset);
    cudaFree((void *)d_height);
    cudaFree((void *)d_width);
    cudaFree(d_out_height);
    cudaFree(d_out_width);
    cudaFree(d_status);
    GW_CUDA(cudaStreamDestroy(stream));
    GW_CUDA(cudaDeviceReset()); /* compute-sanitizer's leak check reports only at context teardown */
}
