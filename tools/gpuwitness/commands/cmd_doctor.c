/* SPDX-License-Identifier: MIT
 * gpuwitness doctor: the diagnostics block of docs/witness.md, for "the GPU is not being used".
 * CUDA runtime and driver versions, CUDA_VISIBLE_DEVICES, the device count or the probe error, per device
 * its facts and whether this binary carries native code for it, then each kernel run once on a small
 * problem with its witness. Exit 0 GPU usable and every witness good, 77 no usable GPU and none required,
 * 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gw_build_info.h"
#include "gw_commands.h"
#include "gw_kernel.h"


static const char doctor_help[] =
    "usage: gpuwitness doctor\n"
    "\n"
    "Prints what a user needs when \"the GPU is not being used\": the CUDA runtime and driver versions,\n"
    "CUDA_VISIBLE_DEVICES, GW_DEVICE and GW_REQUIRE_GPU, the device count (or the probe's CUDA error), and per\n"
    "device its name, compute capability, memory, multiprocessor count and whether this binary has native code\n"
    "for it (a probe kernel built like the kernels reports the architecture of the code that ran; older code\n"
    "means the driver JIT-compiled PTX). Then runs each kernel once on a small problem on each device (only\n"
    "the device named by CTEST_RESOURCE_GROUP_0_GPUS when ctest sets it), compares with the CPU reference and\n"
    "prints the witness receipt and its check. Also says whether CUPTI can record the driver-level ledger\n"
    "(unavailable under compute-sanitizer, Nsight Systems or Nsight Compute) and whether NVTX has a tool\n"
    "attached; neither changes the exit status.\n"
    "\n"
    "exit status:\n"
    "   0  a GPU is usable and every kernel's result and witness check out\n"
    "  77  no usable GPU (no driver, or no visible device) and GW_REQUIRE_GPU is not 1\n"
    "   1  anything else: a kernel or witness failure, no native code, a CUDA error, no GPU under\n"
    "      GW_REQUIRE_GPU=1, or a GW_DEVICE that the other commands refuse\n"
    "   2  bad usage\n";

/* 13000 -> "13.0" */
static void version_text(int v, char *buf, size_t size)
{
    snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

static const char *env_or_unset(const char *name)
{
    const char *v = getenv(name);
    return v ? (*v ? v : "(set, empty: no device is visible)") : "(unset)";
}

/* Facts, native-code probe and kernels for one device; 0 ok, 1 failed. */
static int doctor_device(int ordinal, int run_kernels)
{
    gw_gpu_facts f;
    char err[512];
    if (gw_gpu_facts_get(ordinal, &f, err, sizeof err)) {
        printf("device %d: FAILED: %s\n", ordinal, err);
        return 1;
    }
    const int arch = f.cc_major * 100 + f.cc_minor * 10;
    printf("device %d: %s\n", ordinal, f.name);
    printf("  compute capability:   %d.%d (sm_%d)\n", f.cc_major, f.cc_minor, arch / 10);
    printf("  memory:               %.1f GiB\n", (double)f.total_mem / (1024.0 * 1024.0 * 1024.0));
    printf("  multiprocessors:      %d\n", f.sm_count);
    int failed = 0;
    gw_probe_info probe;
    if (f.emulated) {
        printf("  device code:          EMULATED: built for gpuwitness' emulated device and run on the CPU "
               "(docs/emu.md): evidence about its logic, never about a GPU\n");
        if (gw_probe_native(ordinal, &probe, err, sizeof err)) {
            printf("  probe kernel:         FAILED: %s\n", err);
            failed = 1;
        } else {
            printf("  native code:          none: host code compiled for the emulated device (binaryVersion %d); "
                   "no GPU code was built into gpuwitness-emu\n", probe.binary_version);
        }
    } else if (gw_probe_native(ordinal, &probe, err, sizeof err)) {
        if (probe.no_image)
            printf("  native code:          NO: %s: this build has no code this GPU can run; add %d to "
                   "CMAKE_CUDA_ARCHITECTURES\n", err, arch / 10);
        else
            printf("  native code:          FAILED: %s\n", err);
        failed = 1;
    } else if ((int)probe.ran_arch == arch) {
        printf("  native code:          yes: the probe kernel ran sm_%u code (binaryVersion %d, ptxVersion %d)\n",
               probe.ran_arch / 10, probe.binary_version, probe.ptx_version);
    } else {
        printf("  native code:          NO: the probe kernel ran code compiled for sm_%u on this sm_%d device "
               "(binaryVersion %d, ptxVersion %d): the driver JIT-compiled PTX; add %d to "
               "CMAKE_CUDA_ARCHITECTURES\n", probe.ran_arch / 10, arch / 10, probe.binary_version, probe.ptx_version,
               arch / 10);
        failed = 1;
    }
    if (run_kernels) {
        for (size_t k = 0; k < gw_kernel_count; k++) failed |= gw_kernels[k].doctor(ordinal);
    }
    else printf("  kernels:              not run here (ctest gave this test another device)\n");
    return failed;
}

int gw_cmd_doctor(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(doctor_help, stdout);
            return GW_EXIT_OK;
        }
        fprintf(stderr, "gpuwitness doctor: unknown %s '%s': doctor takes no arguments except --help\n",
                argv[i][0] == '-' ? "option" : "argument", argv[i]);
        return GW_EXIT_USAGE;
    }
    char text[64];
    int runtime = 0, driver = 0;
    printf("gpuwitness %s doctor\n", GW_VERSION);
    printf("  built for:            CUDA architectures %s\n", GW_CUDA_ARCHITECTURES);
    cudaError_t e = cudaRuntimeGetVersion(&runtime);
    if (e != cudaSuccess) {
        printf("  CUDA runtime:         unknown: cudaRuntimeGetVersion failed: %s (%s)\n", cudaGetErrorString(e),
               cudaGetErrorName(e));
    } else {
        version_text(runtime, text, sizeof text);
        printf("  CUDA runtime:         %s (%d)\n", text, runtime);
    }
    e = cudaDriverGetVersion(&driver);
    if (e != cudaSuccess) {
        printf("  CUDA driver:          unknown: cudaDriverGetVersion failed: %s (%s)\n", cudaGetErrorString(e),
               cudaGetErrorName(e));
    } else if (gw_cli_emulated()) {
        printf("  CUDA driver:          not used: the emulated device stands in for it (gpuwitness-emu)\n");
    } else if (driver == 0) {
        printf("  CUDA driver:          none (cudaDriverGetVersion gives 0: no NVIDIA driver is installed or "
               "loaded)\n");
    } else {
        version_text(driver, text, sizeof text);
        printf("  CUDA driver:          %s (%d; supports CUDA up to this version)%s\n", text, driver,
               driver < runtime ? ": OLDER than the runtime, update the driver" : "");
    }
    printf("  CUDA_VISIBLE_DEVICES: %s\n", env_or_unset("CUDA_VISIBLE_DEVICES"));
    /* A GW_DEVICE that check, run and bench refuse (exit 2) is a broken set-up: said here, and a failure. */
    const char *device_env = getenv("GW_DEVICE");
    int ordinal;
    const int device_env_bad = device_env && *device_env && !gw_device_spec_parse(device_env, &ordinal);
    printf("  GW_DEVICE:            %s%s\n", env_or_unset("GW_DEVICE"),
           device_env_bad ? ": INVALID: must be one of cuda, cuda:N, cpu, auto; every command that takes "
                            "--device refuses it (exit 2)" : "");
    const char *require = getenv("GW_REQUIRE_GPU");
    printf("  GW_REQUIRE_GPU:       %s%s\n", env_or_unset("GW_REQUIRE_GPU"),
           require && *require && strcmp(require, "1") && strcmp(require, "0")
               ? ": not 1, so a missing GPU is not required (only GW_REQUIRE_GPU=1 requires one)" : "");
    if (device_env_bad) fprintf(stderr, "gpuwitness doctor: GW_DEVICE '%s': must be one of cuda, cuda:N, cpu, auto\n",
                                device_env);

    if (gw_cli_require_gpu_refuses_emulation("doctor")) {
        printf("doctor: FAILED: GW_REQUIRE_GPU=1 and this is gpuwitness-emu, whose device is emulated on the CPU\n");
        return GW_EXIT_FAIL;
    }
    int count = 0;
    char why[256];
    const gw_probe_result probe = gw_device_probe(&count, why, sizeof why);
    gw_doctor_ledger(probe == GW_PROBE_OK);
    if (probe != GW_PROBE_OK) {
        printf("  devices:              none: %s\n", why);
        if (device_env_bad) {
            printf("doctor: FAILED: GW_DEVICE '%s' is invalid (no usable GPU either: %s)\n", device_env, why);
            return GW_EXIT_FAIL;
        }
        if (probe == GW_PROBE_NO_GPU && !gw_require_gpu()) {
            printf("doctor: no usable GPU (%s); kernels not run. Exit 77: skipped, not passed "
                   "(GW_REQUIRE_GPU=1 makes this a failure)\n", why);
            return GW_EXIT_SKIP;
        }
        fprintf(stderr, "gpuwitness doctor: no usable GPU: %s%s\n", why,
                probe == GW_PROBE_NO_GPU ? " (GW_REQUIRE_GPU=1 forbids skipping)" : " (not a missing GPU: a failure)");
        printf("doctor: FAILED: no usable GPU: %s\n", why);
        return GW_EXIT_FAIL;
    }
    printf("  devices:              %d\n", count);
    /* Under ctest --resource-spec-file this test owns one device: run kernels only there. */
    const int only = gw_ctest_gpu_id();
    int failed = device_env_bad;
    for (int d = 0; d < count; d++) failed |= doctor_device(d, only < 0 || only == d);
    if (only >= count) {
        printf("doctor: FAILED: CTEST_RESOURCE_GROUP_0_GPUS names device %d, but %d are visible\n", only, count);
        failed = 1;
    }
    if (!failed && gw_cli_emulated())
        printf("doctor: ok on the EMULATED device (the CPU, not a GPU): every kernel's device code ran, matched its "
               "reference and its witness checks out; GPU path not executed\n");
    else
        printf("doctor: %s\n", failed ? "FAILED (see above)" : "ok: GPU usable, native code, every kernel's witness "
                                                              "checks out");
    return failed ? GW_EXIT_FAIL : GW_EXIT_OK;
}
