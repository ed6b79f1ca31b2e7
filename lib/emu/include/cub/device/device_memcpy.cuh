/* SPDX-License-Identifier: MIT
 * cub::DeviceMemcpy::Batched on the emulated device (docs/emu.md, "CUB"): CUB's interface and documented
 * semantics, not its algorithm. The two-call protocol holds (a NULL d_temp_storage asks for the size only, and
 * the size is never 0), and the copy is a kernel launched on the caller's stream, deferred like CUB's until
 * something synchronises: a grid of 32-thread blocks, each block copying whole buffers, its threads striding
 * over the bytes. Used by gpuwitness-emu's bench (grid_d4's CUB roofline); tested there against the reference.
 */
#ifndef GW_EMU_CUB_DEVICE_MEMCPY_CUH
#define GW_EMU_CUB_DEVICE_MEMCPY_CUH

#include <cstdint>

#include "gw_emu.h"

namespace cub {

template <typename InputBufferIt, typename OutputBufferIt, typename BufferSizeIt>
static void gw_emu_batched_memcpy_kernel(InputBufferIt in, OutputBufferIt out, BufferSizeIt sizes, int64_t n)
{
    for (int64_t b = blockIdx.x; b < n; b += gridDim.x) {
        const unsigned char *src = (const unsigned char *)in[b];
        unsigned char *dst = (unsigned char *)out[b];
        for (uint64_t i = threadIdx.x; i < (uint64_t)sizes[b]; i += blockDim.x) dst[i] = src[i];
    }
}

struct DeviceMemcpy {
    template <typename InputBufferIt, typename OutputBufferIt, typename BufferSizeIt>
    static cudaError_t Batched(void *d_temp_storage, size_t &temp_storage_bytes, InputBufferIt input_buffer_it,
                               OutputBufferIt output_buffer_it, BufferSizeIt buffer_sizes, int64_t num_buffers,
                               cudaStream_t stream = 0)
    {
        if (!d_temp_storage) {
            temp_storage_bytes = 1;
            return cudaSuccess;
        }
        if (num_buffers <= 0) return cudaSuccess;
        const unsigned blocks = num_buffers < 4096 ? (unsigned)num_buffers : 4096;
        gw_emu_launch_of(gw_emu_batched_memcpy_kernel<InputBufferIt, OutputBufferIt, BufferSizeIt>,
                         "cub::DeviceMemcpy::Batched", dim3(blocks), dim3(GW_EMU_WARP), 0,
                         stream)(input_buffer_it, output_buffer_it, buffer_sizes, num_buffers);
        return cudaPeekAtLastError();
    }
};

} // namespace cub

#endif /* GW_EMU_CUB_DEVICE_MEMCPY_CUH */
