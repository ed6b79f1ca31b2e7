/* SPDX-License-Identifier: MIT */
#include "gw_device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

int gw_require_gpu(void)
{
    const char *v = getenv("GW_REQUIRE_GPU");
    return v && strcmp(v, "1") == 0;
}

int gw_ctest_gpu_id(void)
{
    const char *v = getenv("CTEST_RESOURCE_GROUP_0_GPUS");
    if (!v || strncmp(v, "id:", 3) != 0) return -1;
    char *end = NULL;
    errno = 0;
    long id = strtol(v + 3, &end, 10);
    if (errno || end == v + 3 || (*end != ',' && *end != '\0') || id < 0 || id > GW_DEVICE_MAX_ORDINAL) return -1;
    return (int)id;
}

int gw_device_spec_parse(const char *spec, int *ordinal)
{
    *ordinal = -1;
    if (!spec) return 0;
    if (!strcmp(spec, "cuda") || !strcmp(spec, "cpu") || !strcmp(spec, "auto")) return 1;
    if (strncmp(spec, "cuda:", 5) != 0) return 0;
    /* One spelling per device: "0", or 1-4 ASCII digits without a leading zero; no sign, space or suffix
     * (strtol would take " 1", "+0" and "-0"). Checked by hand, so the locale cannot widen it. */
    const char *d = spec + 5;
    size_t len = 0;
    int value = 0;
    while (d[len] >= '0' && d[len] <= '9' && len < 5) value = value * 10 + (d[len++] - '0');
    if (len == 0 || len > 4 || d[len] != '\0' || (d[0] == '0' && len > 1) || value > GW_DEVICE_MAX_ORDINAL)
        return 0;
    *ordinal = value;
    return 1;
}

gw_probe_result gw_device_probe(int *count, char *reason, size_t reason_size)
{
    int n = 0; /* cudaGetDeviceCount leaves it unwritten on cudaErrorInsufficientDriver */
    cudaError_t err = cudaGetDeviceCount(&n);
    *count = 0;
    if (err == cudaSuccess && n > 0) {
        *count = n;
        if (reason && reason_size) reason[0] = '\0';
        return GW_PROBE_OK;
    }
    if (err == cudaSuccess) err = cudaErrorNoDevice;
    if (reason && reason_size)
        snprintf(reason, reason_size, "%s (%s)", cudaGetErrorString(err), cudaGetErrorName(err));
    return err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice ? GW_PROBE_NO_GPU : GW_PROBE_ERROR;
}

int gw_device_resolve(const char *spec, gw_device_choice *choice, char *err, size_t err_size)
{
    const char *source = "--device";
    if (!spec || !*spec) {
        spec = getenv("GW_DEVICE");
        source = "GW_DEVICE";
        if (!spec || !*spec) spec = "auto", source = "default";
    }
    memset(choice, 0, sizeof *choice);
    choice->ordinal = -1;
    /* The syntax first, before any CUDA call: the answer to a malformed spec is the same with or without a
     * GPU. */
    int want = -1; /* -1: first usable */
    if (!gw_device_spec_parse(spec, &want)) {
        if (strncmp(spec, "cuda:", 5) == 0)
            snprintf(err, err_size,
                     "%s '%s': the device ordinal after 'cuda:' must be a number 0..%d, written as plain decimal "
                     "digits (no sign, space or leading zero)",
                     source, spec, GW_DEVICE_MAX_ORDINAL);
        else
            snprintf(err, err_size, "%s '%s': must be one of cuda, cuda:N, cpu, auto", source, spec);
        return -1;
    }
    if (strcmp(spec, "cpu") == 0) {
        if (gw_require_gpu()) {
            snprintf(err, err_size, "%s=cpu conflicts with GW_REQUIRE_GPU=1: a GPU is required", source);
            return -1;
        }
        choice->kind = GW_DEVICE_CPU;
        return 0;
    }
    if (want < 0) want = gw_ctest_gpu_id() >= 0 ? gw_ctest_gpu_id() : 0;

    int count = 0;
    char why[200];
    gw_probe_result probe = gw_device_probe(&count, why, sizeof why);
    if (probe == GW_PROBE_OK && want >= count) {
        snprintf(err, err_size, "%s '%s': device %d does not exist (%d visible)", source, spec, want, count);
        return -1;
    }
    if (probe == GW_PROBE_OK) {
        choice->kind = GW_DEVICE_CUDA;
        choice->ordinal = want;
        return 0;
    }
    if (strcmp(spec, "auto") == 0 && probe == GW_PROBE_NO_GPU && !gw_require_gpu()) {
        choice->kind = GW_DEVICE_CPU;
        choice->fell_back = 1;
        snprintf(choice->reason, sizeof choice->reason, "%s", why);
        return 0;
    }
    snprintf(err, err_size, "%s '%s': no usable GPU: %s%s", source, spec, why,
             gw_require_gpu() && probe == GW_PROBE_NO_GPU ? " (GW_REQUIRE_GPU=1 forbids falling back to the CPU)" : "");
    return -1;
}
