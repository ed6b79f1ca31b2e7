/* SPDX-License-Identifier: MIT
 * Support for GPU tests (Criterion): device selection per the exit-code contract, CUDA error checks,
 * witness records and poison. Only GPU test executables link this.
 *
 *   TestSuite(my_kernel, .init = gw_gpu_test_init);
 *   Test(my_kernel, matches_reference) {
 *       gw_witness *d_w = gw_witness_new();            // zeroed device record
 *       ... poison outputs, launch with d_w, synchronise ...
 *       gw_assert_witness(d_w, 1, expected_items);     // fails the test with the check's words
 *   }
 */
#ifndef GW_GPU_TEST_H
#define GW_GPU_TEST_H

#include <stddef.h>
#include <stdint.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "gw_witness.h"

/* Picks the device (CTEST_RESOURCE_GROUP_0_GPUS, else 0) or ends the test: skipped when no GPU is usable,
 * failed when GW_REQUIRE_GPU=1 or the probe fails otherwise. Use as the suite's .init. */
void gw_gpu_test_init(void);

/* 1 in the emu tier's binaries (built with GW_EMU: the device code runs on gpuwitness' emulated device, on
 * the CPU, docs/emu.md), else 0. Emulation is about 10^4 times slower than a GPU: the largest cases shrink
 * there, while every code path still runs. */
#ifdef GW_EMU
#define GW_GPU_EMULATED 1
#else
#define GW_GPU_EMULATED 0
#endif

/* The selected device's compute capability as __CUDA_ARCH__ (e.g. 900) and its SM count. */
unsigned gw_gpu_arch(void);
unsigned gw_gpu_sms(void);

#define GW_CUDA(call)                                                                                          \
    do {                                                                                                       \
        cudaError_t gw_err_ = (call);                                                                          \
        cr_assert(gw_err_ == cudaSuccess, "%s failed: %s (%s)", #call, cudaGetErrorName(gw_err_),             \
                  cudaGetErrorString(gw_err_));                                                                \
    } while (0)

/* Skips the calling test when GW_UNDER_SANITIZER=1 (set by ci/gpu.sh for its compute-sanitizer passes):
 * for realistic-size cases that the plain GPU pass runs, and that would take hours under racecheck. */
void gw_skip_under_sanitizer(const char *what);

/* Leaves a CUDA error pending, as someone else's failed call would: a cudaMalloc larger than any device fails
 * with cudaErrorMemoryAllocation, which the runtime keeps as its last error without spoiling the context.
 * Returns that error (for a launcher to hand back untouched); fails the test when the runtime did not keep it.
 * Skips the test under compute-sanitizer (GW_UNDER_SANITIZER=1), which reports the failing call. */
cudaError_t gw_plant_pending_error(void);

/* cudaMalloc'd record, zeroed; freed with cudaFree. */
gw_witness *gw_witness_new(void);

/* Zeroes the record again before the next call (stream-ordered). */
void gw_witness_reset(gw_witness *d_witness, cudaStream_t stream);

/* Copies the record back (synchronously) and fails the test with every violation in words. */
void gw_assert_witness(const gw_witness *d_witness, uint64_t launches, uint64_t items);

/* Same, but returns the number of violations and puts the words in msg instead of failing. */
int gw_check_witness(const gw_witness *d_witness, uint64_t launches, uint64_t items, char *msg, size_t msg_size);

#endif /* GW_GPU_TEST_H */
