/* SPDX-License-Identifier: MIT
 * The usage example of kernels/grid_objects/grid_objects.h, compiled and run: the lines between example-begin
 * and example-end are the header's, verbatim (test_grid_objects_ref.c checks that they still match), with the
 * setup the header's comment describes around them. The example passes NULL for the witness, so the call is
 * then repeated with a witness record to prove it ran on the GPU.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "grid_objects.h"
#include "gw_gpu_test.h"

TestSuite(grid_objects_example, .init = gw_gpu_test_init);

static void *device_copy(const void *host, size_t bytes)
{
    void *d = NULL;
    GW_CUDA(cudaMalloc(&d, bytes));
    if (host) GW_CUDA(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

static void poison(uint16_t *d_labels, grid_objects_object *d_objects, uint32_t *d_n_objects, int16_t *d_bg,
                   grid_objects_status_record *d_status, int value)
{
    GW_CUDA(cudaMemset(d_labels, value, 10 * sizeof *d_labels)); /* the pad too: the atomics read its word */
    GW_CUDA(cudaMemset(d_objects, value, 10 * sizeof *d_objects));
    GW_CUDA(cudaMemset(d_n_objects, value, sizeof *d_n_objects));
    GW_CUDA(cudaMemset(d_bg, value, sizeof *d_bg));
    GW_CUDA(cudaMemset(d_status, 0x5A, sizeof *d_status)); /* a status that no launcher writes */
}

static void expect_the_documented_result(const uint16_t *d_labels, const grid_objects_object *d_objects,
                                         const uint32_t *d_n_objects, const int16_t *d_bg,
                                         const grid_objects_status_record *d_status)
{
    uint16_t labels[9];
    grid_objects_object object;
    uint32_t n_objects;
    int16_t bg;
    grid_objects_status_record status;
    GW_CUDA(cudaMemcpy(labels, d_labels, sizeof labels, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&object, d_objects, sizeof object, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&n_objects, d_n_objects, sizeof n_objects, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&bg, d_bg, sizeof bg, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(&status, d_status, sizeof status, cudaMemcpyDeviceToHost));
    cr_assert(grid_objects_status_record_code(&status) == GRID_OBJECTS_OK, "status record %#llx, want no error",
              status.packed);
    const uint16_t x = GRID_OBJECTS_NO_OBJECT;
    const uint16_t want[9] = {x, 1, x, 1, 1, x, x, x, 1};
    cr_assert(bg == 0 && n_objects == 1, "bg %d, n_objects %u; want 0 and 1", bg, n_objects);
    cr_assert(memcmp(labels, want, sizeof want) == 0, "labels {%d,%d,%d, %d,%d,%d, %d,%d,%d}, want "
              "{-1,1,-1, 1,1,-1, -1,-1,1}", (int16_t)labels[0], (int16_t)labels[1], (int16_t)labels[2],
              (int16_t)labels[3], (int16_t)labels[4], (int16_t)labels[5], (int16_t)labels[6], (int16_t)labels[7],
              (int16_t)labels[8]);
    cr_assert(object.first_cell == 1 && object.colour == GRID_OBJECTS_SEVERAL_COLOURS && object.n_cells == 4 &&
                  object.top == 0 && object.left == 0 && object.bottom == 2 && object.right == 2,
              "objects[0] = {%u, %d, %u, %u, %u, %u, %u}, want {1, -1, 4, 0, 0, 2, 2}", object.first_cell,
              object.colour, object.n_cells, object.top, object.left, object.bottom, object.right);
}

Test(grid_objects_example, the_header_example_finds_one_object_of_two_colours)
{
    const uint8_t in[9] = {0, 1, 0, 1, 1, 0, 0, 0, 2};
    const uint16_t height[1] = {3}, width[1] = {3};
    const uint64_t offset[1] = {0};
    const uint8_t *d_in = device_copy(in, sizeof in);
    const uint64_t *d_offset = device_copy(offset, sizeof offset);
    const uint16_t *d_height = device_copy(height, sizeof height), *d_width = device_copy(width, sizeof width);
    uint16_t *d_labels = device_copy(NULL, grid_objects_out_entries(9) * sizeof *d_labels);
    grid_objects_object *d_objects = device_copy(NULL, grid_objects_out_entries(9) * sizeof *d_objects);
    uint32_t *d_n_objects = device_copy(NULL, sizeof *d_n_objects);
    int16_t *d_bg = device_copy(NULL, sizeof *d_bg);
    grid_objects_status_record *d_status = device_copy(NULL, sizeof *d_status);
    cudaStream_t stream;
    GW_CUDA(cudaStreamCreate(&stream));
    poison(d_labels, d_objects, d_n_objects, d_bg, d_status, 0xFE); /* labels 0xFEFE: never a label */

    // example-begin
    // host: in = {0,1,0, 1,1,0, 0,0,2}, height = 3, width = 3, offset = 0; copied to d_in, d_height, ...
    // d_labels and d_objects hold grid_objects_out_entries(9) = 10 entries each
    grid_objects_params p = {.n_grids = 1, .buf_bytes = 9, .out_entries = grid_objects_out_entries(9),
                             .batch_variant = 3, .bg_tie = GRID_OBJECTS_TIE_ARC_DSL, .flags = 0};
    cudaError_t err = grid_objects_launch(&p, d_in, d_offset, d_height, d_width, NULL, d_labels,
                                          d_objects, d_n_objects, d_bg, d_status, NULL, stream);
    // after cudaStreamSynchronize(stream): bg = 0, n_objects = 1 (1s and the 2 touch diagonally),
    // labels = {-1,1,-1, 1,1,-1, -1,-1,1} (0xFFFF shown as -1), objects[0] = {.first_cell = 1,
    // .colour = -1, .n_cells = 4, .top = 0, .left = 0, .bottom = 2, .right = 2}
    // example-end

    cr_assert(err == cudaSuccess, "grid_objects_launch returned %s", cudaGetErrorName(err));
    GW_CUDA(cudaStreamSynchronize(stream));
    expect_the_documented_result(d_labels, d_objects, d_n_objects, d_bg, d_status);

    /* The same call with a witness, outputs poisoned again (0xFD this time). */
    gw_witness *d_witness = gw_witness_new();
    poison(d_labels, d_objects, d_n_objects, d_bg, d_status, 0xFD);
    err = grid_objects_launch(&p, d_in, d_offset, d_height, d_width, NULL, d_labels, d_objects, d_n_objects, d_bg,
                              d_status, d_witness, stream);
    cr_assert(err == cudaSuccess, "grid_objects_launch returned %s", cudaGetErrorName(err));
    GW_CUDA(cudaStreamSynchronize(stream));
    expect_the_documented_result(d_labels, d_objects, d_n_objects, d_bg, d_status);
    gw_assert_witness(d_witness, 1, 9);

    cudaFree(d_witness);
    cudaFree((void *)d_in);
    cudaFree((void *)d_offset);
    cudaFree((void *)d_height);
    cudaFree((void *)d_width);
    cudaFree(d_labels);
    cudaFree(d_objects);
    cudaFree(d_n_objects);
    cudaFree(d_bg);
    cudaFree(d_status);
    GW_CUDA(cudaStreamDestroy(stream));
    GW_CUDA(cudaDeviceReset()); /* compute-sanitizer's leak check reports only at context teardown */
}
