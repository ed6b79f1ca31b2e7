/* SPDX-License-Identifier: MIT
 * Launchers of tests/emu/emu_canary_kernels.cu: planted faults for the emu tier's ThreadSanitizer and
 * AddressSanitizer runs. Each writes 64 ints to d_out: what a correct kernel would give is out[i] = (i + 1) % 64
 * (emu_missing_sync) and out[i] = i - 1 (emu_shared_off_by_one; out[0] is unset).
 */
#ifndef EMU_CANARY_KERNELS_H
#define EMU_CANARY_KERNELS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t emu_missing_sync(int *d_out);
cudaError_t emu_shared_off_by_one(int *d_out);

#ifdef __cplusplus
}
#endif

#endif /* EMU_CANARY_KERNELS_H */
