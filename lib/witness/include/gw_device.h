/* SPDX-License-Identifier: MIT
 * Device policy shared by the tests and the gpuwitness CLI: never a silent default to the CPU.
 *
 *   spec      "cuda" (first usable GPU), "cuda:N", "cpu", or "auto" (a GPU if one is usable, else the CPU
 *             reference, said on stderr with the reason). NULL or "" means $GW_DEVICE, then "auto".
 *             Grammar (gw_device_spec_parse; the same for $GW_DEVICE), exact and case-sensitive:
 *               spec := "cuda" | "cpu" | "auto" | "cuda:" N
 *               N    := "0" | a digit 1-9 followed by at most 3 ASCII digits, at most 1024
 *             so every device has one spelling: no sign ("cuda:+0", "cuda:-0"), space ("cuda: 1"), leading
 *             zero ("cuda:00", "cuda:01") or suffix. The syntax is checked before any CUDA call, so a
 *             malformed spec gets the same error with or without a GPU.
 *   GW_REQUIRE_GPU=1   every "no usable GPU" outcome is an error: auto fails instead of falling back.
 *   CTEST_RESOURCE_GROUP_0_GPUS="id:N,slots:1"   (set by ctest --resource-spec-file) picks device N.
 * Only cudaErrorInsufficientDriver (35) and cudaErrorNoDevice (100) mean "no GPU here"; any other error
 * from the probe is reported as a failure.
 */
#ifndef GW_DEVICE_H
#define GW_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GW_DEVICE_MAX_ORDINAL 1024 /* the largest N of "cuda:N" */

typedef enum gw_device_kind { GW_DEVICE_CPU = 0, GW_DEVICE_CUDA = 1 } gw_device_kind;

typedef enum gw_probe_result {
    GW_PROBE_OK = 0,     /* at least one device is usable */
    GW_PROBE_NO_GPU = 1, /* no driver or no visible device: a skip unless GW_REQUIRE_GPU=1 */
    GW_PROBE_ERROR = 2   /* any other CUDA error: always a failure */
} gw_probe_result;

typedef struct gw_device_choice {
    gw_device_kind kind;
    int ordinal;          /* CUDA device ordinal when kind is GW_DEVICE_CUDA, else -1 */
    int fell_back;        /* 1 when "auto" resolved to the CPU */
    char reason[256];     /* why there is no GPU (fell_back), or empty */
} gw_device_choice;

/* 1 when GW_REQUIRE_GPU is exactly "1". */
int gw_require_gpu(void);

/* Device id from CTEST_RESOURCE_GROUP_0_GPUS, or -1 when unset or malformed. */
int gw_ctest_gpu_id(void);

/* Counts devices; *count is 0 unless GW_PROBE_OK. reason gets the CUDA error name and text otherwise. */
gw_probe_result gw_device_probe(int *count, char *reason, size_t reason_size);

/* 1 when spec follows the grammar above (NULL does not), with *ordinal = N for "cuda:N" and -1 for the
 * other three; else 0 and *ordinal = -1. No CUDA call, no environment. */
int gw_device_spec_parse(const char *spec, int *ordinal);

/* Resolves spec as described above. Returns 0 on success, -1 with err filled (naming the argument and the
 * rule) otherwise. Does not call cudaSetDevice. */
int gw_device_resolve(const char *spec, gw_device_choice *choice, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_DEVICE_H */
