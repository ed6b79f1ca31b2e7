/* SPDX-License-Identifier: MIT
 * usage: gw_resource_probe OUT_FILE HOLD_MS
 * Registered by tests/consumer/gw_resource_groups.cmake as a GPU test of a tiny project (gw_add_gpu_test,
 * RESOURCE_GROUPS gpus:1) and run by ctest with --resource-spec-file. Writes to OUT_FILE what CTest
 * allocated, the device gw_device picks from it, and when it held its slot (start and end, ms since the
 * epoch; it holds HOLD_MS so that concurrent tests overlap). Exit 0 once the file is written, 1 otherwise.
 * Needs no GPU: it reports gw_device's verdict without failing on it.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gw_device.h"

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v ? v : fallback;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gw_resource_probe OUT_FILE HOLD_MS\n");
        return 1;
    }
    char *end = NULL;
    errno = 0;
    long hold_ms = strtol(argv[2], &end, 10);
    if (errno || end == argv[2] || *end || hold_ms < 0 || hold_ms > 60000) {
        fprintf(stderr, "gw_resource_probe: HOLD_MS '%s' must be a whole number of milliseconds, 0..60000\n", argv[2]);
        return 1;
    }
    long long start = now_ms();
    struct timespec hold = {.tv_sec = hold_ms / 1000, .tv_nsec = (hold_ms % 1000) * 1000000L};
    while (nanosleep(&hold, &hold) != 0 && errno == EINTR) {
    }
    long long stop = now_ms();

    gw_device_choice choice;
    char err[512] = "";
    int resolved = gw_device_resolve("cuda", &choice, err, sizeof err);
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    fprintf(out, "CTEST_RESOURCE_GROUP_COUNT=%s\n", env_or("CTEST_RESOURCE_GROUP_COUNT", "(unset)"));
    fprintf(out, "CTEST_RESOURCE_GROUP_0=%s\n", env_or("CTEST_RESOURCE_GROUP_0", "(unset)"));
    fprintf(out, "CTEST_RESOURCE_GROUP_0_GPUS=%s\n", env_or("CTEST_RESOURCE_GROUP_0_GPUS", "(unset)"));
    fprintf(out, "gw_ctest_gpu_id=%d\n", gw_ctest_gpu_id());
    if (resolved == 0)
        fprintf(out, "gw_device_resolve(cuda)=ordinal %d\n", choice.ordinal);
    else
        fprintf(out, "gw_device_resolve(cuda)=error: %s\n", err);
    fprintf(out, "held_ms=%lld..%lld\n", start, stop);
    if (fclose(out) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
