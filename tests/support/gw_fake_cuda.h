/* SPDX-License-Identifier: MIT
 * A recording stand-in for the CUDA runtime calls a launcher makes, so that the order of a launcher's
 * checks is tested on any machine, with or without a GPU. Linking the library gw_fake_cuda links the
 * executable with --wrap for each call below, so every call of them, from the launcher or the test, reaches
 * this file instead of the runtime; none reaches the real one, so no kernel runs and no memory is touched.
 *
 *   cudaPeekAtLastError   logged; returns the planted pending error (gw_fake_cuda_reset), leaves it
 *   cudaGetLastError      logged; returns the planted pending error and clears it
 *   a kernel launch       logged as "<<<kernel launch>>>"; the launch is skipped
 *   every other call      logged; fails with GW_FAKE_CUDA_STOP, which ends any launcher's work
 *   (cudaGetDevice, cudaDeviceGetAttribute, cudaMemsetAsync, cudaFuncGetAttributes, cudaFuncSetAttribute,
 *    cudaOccupancyMaxActiveBlocksPerMultiprocessor: the calls the kernels' launchers make)
 * After gw_fake_cuda_let_work(), those calls succeed instead, as on a device whose every attribute is
 * GW_FAKE_CUDA_ATTRIBUTE and whose kernels each use GW_FAKE_CUDA_STATIC_SHARED bytes of static shared memory
 * (launches are still skipped), so a launcher runs to its end and what it sets can be read back.
 *
 * Usage:
 *   gw_fake_cuda_reset(cudaErrorIllegalAddress);          // as if an earlier kernel had faulted
 *   cudaError_t rc = k_launch(&p, ..., stream);
 *   // want rc == cudaErrorIllegalAddress, gw_fake_cuda_calls() == 1, gw_fake_cuda_call(0) "cudaPeekAtLastError"
 */
#ifndef GW_FAKE_CUDA_H
#define GW_FAKE_CUDA_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#define GW_FAKE_CUDA_STOP cudaErrorDevicesUnavailable /* what every call but the two error queries returns */
#define GW_FAKE_CUDA_ATTRIBUTE 232448                  /* every device attribute (an H100's shared-memory opt-in) */
#define GW_FAKE_CUDA_STATIC_SHARED 4096                /* every kernel's static shared memory, bytes */

/* Clears the log and plants `pending` as the error pending in the runtime (cudaSuccess: none); the calls
 * after the two error queries fail with GW_FAKE_CUDA_STOP again. */
void gw_fake_cuda_reset(cudaError_t pending);
/* From now until the next reset, every call succeeds (see above). */
void gw_fake_cuda_let_work(void);
/* The last value given to cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, value) since
 * the reset, or -1. */
int gw_fake_cuda_max_dynamic_shared(void);
/* How many runtime calls were made since the last reset. */
size_t gw_fake_cuda_calls(void);
/* The name of call i (0 the first), or "(none)" past the end. */
const char *gw_fake_cuda_call(size_t i);
/* The calls since the reset as one line, "cudaPeekAtLastError, cudaGetDevice", for messages. */
const char *gw_fake_cuda_log(void);

#endif /* GW_FAKE_CUDA_H */
