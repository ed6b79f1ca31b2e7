/* SPDX-License-Identifier: MIT */
#include "gw_gpu_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_device.h"
#include "gw_witness_check.h"

static unsigned device_arch, device_sms;

#ifdef GW_EMU
/* The emu tier's binaries (docs/emu.md) run the device code on gpuwitness' emulated device. They never stand
 * for a GPU: under GW_REQUIRE_GPU=1 (a run that must prove a GPU) they fail at once, and they check that the
 * runtime they talk to is the emulator's, not a cudart that a build linked by mistake. */
static void require_the_emulator(void)
{
    if (gw_require_gpu())
        cr_assert_fail("GW_REQUIRE_GPU=1, but this test binary runs on gpuwitness' emulated device (the device code "
                       "emulated on the CPU, not a GPU): its GPU twin is the binary without _emu");
    struct cudaDeviceProp prop;
    GW_CUDA(cudaGetDeviceProperties(&prop, 0));
    cr_assert(strstr(prop.name, "emulated"), "this emu-tier binary talks to '%s', not gpuwitness' emulated "
              "device: it links a real CUDA runtime", prop.name);
}
#endif

void gw_gpu_test_init(void)
{
#ifdef GW_EMU
    require_the_emulator();
#endif
    int count = 0;
    char reason[200];
    gw_probe_result probe = gw_device_probe(&count, reason, sizeof reason);
    if (probe == GW_PROBE_NO_GPU && !gw_require_gpu()) cr_skip_test("no usable GPU: %s", reason);
    if (probe == GW_PROBE_NO_GPU)
        cr_assert_fail("no usable GPU: %s; GW_REQUIRE_GPU=1 makes a missing GPU a failure", reason);
    if (probe != GW_PROBE_OK) cr_assert_fail("CUDA device probe failed: %s", reason);

    int id = gw_ctest_gpu_id();
    if (id < 0) id = 0;
    cr_assert(id < count, "CTEST_RESOURCE_GROUP_0_GPUS names device %d but only %d are visible", id, count);
    GW_CUDA(cudaSetDevice(id));
    int major = 0, minor = 0, sms = 0;
    GW_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, id));
    GW_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, id));
    GW_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, id));
    device_arch = (unsigned)(major * 100 + minor * 10);
    device_sms = (unsigned)sms;
}

void gw_skip_under_sanitizer(const char *what)
{
    const char *v = getenv("GW_UNDER_SANITIZER");
    if (v && strcmp(v, "1") == 0)
        cr_skip_test("%s is left to the plain GPU pass (GW_UNDER_SANITIZER=1: compute-sanitizer runs too slowly)", what);
}

unsigned gw_gpu_arch(void) { return device_arch; }
unsigned gw_gpu_sms(void) { return device_sms; }

cudaError_t gw_plant_pending_error(void)
{
    /* compute-sanitizer counts the failing call as a finding; the plain GPU pass runs these tests */
    gw_skip_under_sanitizer("a cudaMalloc that fails on purpose");
    void *p = NULL;
    const cudaError_t err = cudaMalloc(&p, (size_t)1 << 62); /* 4 EiB: no device has it */
    cr_assert(err == cudaErrorMemoryAllocation, "a 4 EiB cudaMalloc returned %s, want cudaErrorMemoryAllocation",
              cudaGetErrorName(err));
    const cudaError_t kept = cudaPeekAtLastError();
    cr_assert(kept == err, "the runtime keeps %s as its last error, want %s: no error to plant",
              cudaGetErrorName(kept), cudaGetErrorName(err));
    return err;
}

gw_witness *gw_witness_new(void)
{
    gw_witness *d_witness = NULL;
    GW_CUDA(cudaMalloc((void **)&d_witness, sizeof *d_witness));
    GW_CUDA(cudaMemset(d_witness, 0, sizeof *d_witness));
    return d_witness;
}

void gw_witness_reset(gw_witness *d_witness, cudaStream_t stream)
{
    GW_CUDA(cudaMemsetAsync(d_witness, 0, sizeof *d_witness, stream));
}

int gw_check_witness(const gw_witness *d_witness, uint64_t launches, uint64_t items, char *msg, size_t msg_size)
{
    gw_witness rec;
    GW_CUDA(cudaMemcpy(&rec, d_witness, sizeof rec, cudaMemcpyDeviceToHost));
    gw_witness_expect expect = {
        .launches = launches, .items = items, .device_arch = device_arch, .device_sms = device_sms};
#ifdef GW_EMU
    expect.emulated = 1; /* an emulated record, and nothing else, is what these binaries must see */
#endif
    return gw_witness_check(&rec, &expect, msg, msg_size);
}

void gw_assert_witness(const gw_witness *d_witness, uint64_t launches, uint64_t items)
{
    char msg[1024];
    int violations = gw_check_witness(d_witness, launches, items, msg, sizeof msg);
    cr_assert(violations == 0, "witness check failed:\n%s", msg);
}
