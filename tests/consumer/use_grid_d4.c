/* SPDX-License-Identifier: MIT
 * A downstream program that uses grid_d4 exactly as a user would: CI builds it from copied files with
 * CMake, with the one nvcc line of grid_d4.h, and against an installed gpuwitness (find_package), all
 * with the same `#include "grid_d4.h"` (docs/install.md).
 *   1. Host-side argument checks, which need no GPU: an empty batch succeeds, NULL buffers and an op out of
 *      0..7 return cudaErrorInvalidValue, all before any device call.
 *   2. No usable GPU (no driver, or no visible device): says so and exits 77 (skipped), or 1 when
 *      GW_REQUIRE_GPU=1, so a GPU runner whose driver broke is not green.
 *   3. Otherwise the header's example (a 2x3 grid turned clockwise) with a witness record: the result must
 *      be {4,1, 5,2, 6,3} in a 3x2 shape, and the witness must show one launch, every block finished,
 *      6 cells written, and machine code for this GPU's architecture.
 * Exit status: 0 every check passed, 1 a check failed, 77 the GPU part was skipped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "grid_d4.h"

static int check_host_side_arguments(void)
{
    grid_d4_params empty = {.n_grids = 0, .buf_bytes = 0, .batch_op = GRID_D4_IDENTITY, .flags = 0};
    cudaError_t err = grid_d4_launch(&empty, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
    if (err != cudaSuccess) {
        fprintf(stderr, "an empty batch returned %s, want cudaSuccess\n", cudaGetErrorName(err));
        return 1;
    }
    grid_d4_params one = {.n_grids = 1, .buf_bytes = 6, .batch_op = GRID_D4_ROT90, .flags = 0};
    err = grid_d4_launch(&one, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
    if (err != cudaErrorInvalidValue) {
        fprintf(stderr, "NULL buffers returned %s, want cudaErrorInvalidValue\n", cudaGetErrorName(err));
        return 1;
    }
    /* Distinct non-NULL addresses get past the NULL check; batch_op 9 must still be refused on the host.
     * The launcher compares them as address ranges only and never dereferences them. */
    static uint8_t fake[9][64];
    grid_d4_params bad_op = {.n_grids = 1, .buf_bytes = 6, .batch_op = 9, .flags = 0};
    err = grid_d4_launch(&bad_op, fake[0], fake[1], (const uint64_t *)fake[2], (const uint16_t *)fake[3],
                         (const uint16_t *)fake[4], (uint16_t *)fake[5], (uint16_t *)fake[6], NULL,
                         (grid_d4_status_record *)fake[7], NULL, 0);
    if (err != cudaErrorInvalidValue) {
        fprintf(stderr, "batch_op 9 returned %s, want cudaErrorInvalidValue\n", cudaGetErrorName(err));
        return 1;
    }
    printf("host-side argument checks: ok\n");
    return 0;
}

/* 0: a GPU is usable; 77: none and none is required; 1: none but GW_REQUIRE_GPU=1, or the probe failed. */
static int probe_gpu(int *arch)
{
    int count = 0; /* cudaGetDeviceCount leaves it unwritten when there is no driver */
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaSuccess && count == 0) err = cudaErrorNoDevice;
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice) {
        const char *require = getenv("GW_REQUIRE_GPU");
        if (require && strcmp(require, "1") == 0) {
            fprintf(stderr, "no usable GPU: %s (%s); GW_REQUIRE_GPU=1 makes a missing GPU a failure\n",
                    cudaGetErrorString(err), cudaGetErrorName(err));
            return 1;
        }
        printf("GPU part skipped: no usable GPU: %s (%s)\n", cudaGetErrorString(err), cudaGetErrorName(err));
        return 77;
    }
    int major = 0, minor = 0;
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    if (err != cudaSuccess) {
        fprintf(stderr, "CUDA device probe failed: %s (%s)\n", cudaGetErrorString(err), cudaGetErrorName(err));
        return 1;
    }
    *arch = major * 100 + minor * 10;
    return 0;
}

/* The device buffers of the example, allocated as one block so that a single cudaFree releases them. */
typedef struct example_buffers {
    uint8_t in[6], out[6];
    uint64_t offset[1];
    uint16_t height[1], width[1], out_height[1], out_width[1];
    grid_d4_status_record status;
    gw_witness witness;
} example_buffers;

static int report(const char *what, cudaError_t err)
{
    fprintf(stderr, "%s failed: %s (%s)\n", what, cudaGetErrorString(err), cudaGetErrorName(err));
    return 1;
}

static int run_example_on_gpu(int arch)
{
    example_buffers host;
    memset(&host, 0, sizeof host); /* a zeroed witness record: nothing recorded yet */
    const uint8_t in[6] = {1, 2, 3, 4, 5, 6};
    memcpy(host.in, in, sizeof in);
    host.height[0] = 2;
    host.width[0] = 3;
    /* Poison: outputs the kernel must overwrite (0xFF cells and shapes, a status no launch writes). */
    memset(host.out, 0xFF, sizeof host.out);
    memset(host.out_height, 0xFF, sizeof host.out_height);
    memset(host.out_width, 0xFF, sizeof host.out_width);
    memset(&host.status, 0x5A, sizeof host.status);

    example_buffers *d = NULL;
    cudaError_t err = cudaMalloc((void **)&d, sizeof *d);
    if (err != cudaSuccess) return report("cudaMalloc", err);
    cudaStream_t stream = NULL;
    err = cudaMemcpy(d, &host, sizeof host, cudaMemcpyHostToDevice);
    if (err == cudaSuccess) err = cudaStreamCreate(&stream);
    if (err != cudaSuccess) {
        cudaFree(d);
        return report("cudaMemcpy/cudaStreamCreate", err);
    }
    grid_d4_params p = {.n_grids = 1, .buf_bytes = 6, .batch_op = GRID_D4_ROT90, .flags = 0};
    err = grid_d4_launch(&p, d->in, d->out, d->offset, d->height, d->width, d->out_height, d->out_width, NULL,
                         &d->status, &d->witness, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err == cudaSuccess) err = cudaMemcpy(&host, d, sizeof host, cudaMemcpyDeviceToHost);
    cudaStreamDestroy(stream);
    cudaFree(d);
    if (err != cudaSuccess) return report("grid_d4_launch", err);

    int bad = 0;
    static const uint8_t want[6] = {4, 1, 5, 2, 6, 3};
    if (grid_d4_status_record_code(&host.status) != GRID_D4_OK) {
        fprintf(stderr, "status record: %s\n", grid_d4_status_str(grid_d4_status_record_code(&host.status)));
        bad = 1;
    }
    if (memcmp(host.out, want, sizeof want) != 0 || host.out_height[0] != 3 || host.out_width[0] != 2) {
        fprintf(stderr, "result {%u,%u, %u,%u, %u,%u} in %ux%u, want {4,1, 5,2, 6,3} in 3x2\n", host.out[0],
                host.out[1], host.out[2], host.out[3], host.out[4], host.out[5], host.out_height[0],
                host.out_width[0]);
        bad = 1;
    }
    const gw_witness *w = &host.witness;
    if (w->launches != 1 || w->blocks == 0 || w->blocks != w->grid_blocks || w->items != 6) {
        fprintf(stderr, "witness: %llu launches, %llu of %llu blocks finished, %llu items; want 1 launch, "
                        "every block, 6 items\n", w->launches, w->blocks, w->grid_blocks, w->items);
        bad = 1;
    }
    if (gw_witness_arch_min(w) != (unsigned)arch || w->arch_max != (unsigned)arch) {
        fprintf(stderr, "witness: ran code for sm_%u..sm_%u on an sm_%d device: no native code for this GPU\n",
                gw_witness_arch_min(w) / 10, w->arch_max / 10, arch / 10);
        bad = 1;
    }
    if (!bad)
        printf("GPU: 2x3 grid turned clockwise, witness: %llu launch, %llu/%llu blocks, %llu items, sm_%u\n",
               w->launches, w->blocks, w->grid_blocks, w->items, w->arch_max / 10);
    return bad;
}

int main(void)
{
    if (check_host_side_arguments() != 0) return 1;
    int arch = 0;
    int probe = probe_gpu(&arch);
    if (probe != 0) return probe;
    return run_example_on_gpu(arch);
}
