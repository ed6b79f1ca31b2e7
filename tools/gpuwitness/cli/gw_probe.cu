/* SPDX-License-Identifier: MIT
 * The doctor's native-code probe. This file is compiled with the project's CMAKE_CUDA_ARCHITECTURES, like
 * the kernels, so what the driver picks for it is what it picks for them: SASS for the device when the
 * build has it, otherwise PTX JIT-compiled at load time. cudaFuncGetAttributes reports the versions, and
 * running the kernel once reports the __CUDA_ARCH__ of the code that really ran, which is what proves it.
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gw_cli.h"

static __global__ void gw_probe_kernel(unsigned *ran_arch)
{
#ifdef __CUDA_ARCH__
    *ran_arch = __CUDA_ARCH__;
#endif
}

static void probe_fail(char *err, size_t err_size, const char *what, cudaError_t e)
{
    snprintf(err, err_size, "%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

extern "C" int gw_probe_native(int ordinal, gw_probe_info *info, char *err, size_t err_size)
{
    memset(info, 0, sizeof *info);
    unsigned *d_arch = NULL;
    int rc = -1;
    cudaError_t e;
    struct cudaFuncAttributes attr;
    if ((e = cudaSetDevice(ordinal)) != cudaSuccess) {
        probe_fail(err, err_size, "cudaSetDevice", e);
        return -1;
    }
    if ((e = cudaFuncGetAttributes(&attr, gw_probe_kernel)) != cudaSuccess) {
        info->no_image = e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction;
        probe_fail(err, err_size, "cudaFuncGetAttributes(probe kernel)", e);
        return -1;
    }
    info->binary_version = attr.binaryVersion;
    info->ptx_version = attr.ptxVersion;
    if ((e = cudaMalloc((void **)&d_arch, sizeof *d_arch)) != cudaSuccess) {
        probe_fail(err, err_size, "cudaMalloc(probe)", e);
        return -1;
    }
    if ((e = cudaMemset(d_arch, 0, sizeof *d_arch)) != cudaSuccess) {
        probe_fail(err, err_size, "cudaMemset(probe)", e);
        goto done;
    }
    gw_probe_kernel<<<1, 1>>>(d_arch);
    if ((e = cudaGetLastError()) != cudaSuccess) {
        info->no_image = e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction;
        probe_fail(err, err_size, "probe kernel launch", e);
        goto done;
    }
    if ((e = cudaMemcpy(&info->ran_arch, d_arch, sizeof info->ran_arch, cudaMemcpyDeviceToHost)) != cudaSuccess) {
        probe_fail(err, err_size, "probe kernel (cudaMemcpy of its result)", e);
        goto done;
    }
    rc = 0;
done:
    if ((e = cudaFree(d_arch)) != cudaSuccess && rc == 0) {
        probe_fail(err, err_size, "cudaFree(probe)", e);
        rc = -1;
    }
    return rc;
}

extern "C" int gw_cli_emulated(void)
{
#ifdef GW_EMU_DEVICE /* gw_emu_device.h: this file was compiled for the emulated device */
    return 1;
#else
    return 0;
#endif
}
