/* SPDX-License-Identifier: MIT
 * The CLI core (gw_cli.h): options, the --device policy, the clock and device facts.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "gw_cli_cuda.h"

int gw_cli_option(int argc, char **argv, int *i, const char *cmd, const char *name, const char **value)
{
    const char *arg = argv[*i];
    const size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
    } else if (arg[len] != '\0') {
        return 0;
    } else if (*i + 1 >= argc) {
        fprintf(stderr, "gpuwitness %s: option '%s' needs a value (see gpuwitness %s --help)\n", cmd, name, cmd);
        return -1;
    } else {
        *value = argv[++*i];
    }
    /* No option takes an empty value: '--device=' must not quietly mean the default, nor '-o ""' fail
     * only after all the work. */
    if (!**value) {
        fprintf(stderr, "gpuwitness %s: option '%s' needs a non-empty value (see gpuwitness %s --help)\n", cmd, name,
                cmd);
        return -1;
    }
    return 1;
}

const char *gw_cli_effective_device(const char *spec)
{
    if (spec && *spec) return spec;
    const char *env = getenv("GW_DEVICE");
    return env && *env ? env : "auto";
}

int gw_cli_require_gpu_refuses_emulation(const char *cmd)
{
    if (!gw_cli_emulated() || !gw_require_gpu()) return 0;
    fprintf(stderr, "gpuwitness %s: GW_REQUIRE_GPU=1, but this is gpuwitness-emu: its device code runs on gpuwitness' "
            "emulated device, on the CPU, and never proves a GPU (run gpuwitness)\n", cmd);
    return 1;
}

int gw_cli_select_device(const char *cmd, const char *spec, gw_device_choice *choice)
{
    char err[512];
    if (gw_cli_require_gpu_refuses_emulation(cmd)) return GW_EXIT_FAIL;
    if (gw_device_resolve(spec, choice, err, sizeof err) == 0) return 0;
    const char *effective = gw_cli_effective_device(spec);
    int ordinal;
    if (!gw_device_spec_parse(effective, &ordinal)) { /* the one grammar of --device and GW_DEVICE */
        fprintf(stderr, "gpuwitness %s: %s\n", cmd, err);
        return GW_EXIT_USAGE;
    }
    /* An explicit cuda / cuda:N on a machine without a GPU: the GPU part is skipped (77), like a GPU test,
     * unless GW_REQUIRE_GPU=1 makes it a failure. Any other probe error is always a failure. */
    if (strcmp(effective, "cpu") != 0 && !gw_require_gpu()) {
        int count = 0;
        char why[256];
        if (gw_device_probe(&count, why, sizeof why) == GW_PROBE_NO_GPU) {
            memset(choice, 0, sizeof *choice);
            choice->kind = GW_DEVICE_CPU;
            choice->ordinal = -1;
            snprintf(choice->reason, sizeof choice->reason, "%s", why);
            return GW_EXIT_SKIP;
        }
    }
    fprintf(stderr, "gpuwitness %s: %s\n", cmd, err);
    return GW_EXIT_FAIL;
}

int gw_cli_parse_u64(const char *text, unsigned long long max, unsigned long long *value)
{
    if (!text || *text < '0' || *text > '9') return -1;
    char *end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v > max) return -1;
    *value = v;
    return 0;
}

int gw_cli_parse_range(const char *text, int *first, int *count)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    if (!colon || colon == text) return -1;
    char head[24];
    const size_t len = (size_t)(colon - text);
    if (len >= sizeof head) return -1;
    memcpy(head, text, len);
    head[len] = '\0';
    unsigned long long a = 0, b = 0;
    if (gw_cli_parse_u64(head, INT_MAX, &a) || gw_cli_parse_u64(colon + 1, INT_MAX - a, &b) || b < 1) return -1;
    *first = (int)a, *count = (int)b;
    return 0;
}

void gw_cli_print_lines(FILE *out, char *text, const char *prefix)
{
    char *save = NULL; /* strtok_r: host paths run from several threads at once */
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        fprintf(out, "%s%s\n", prefix, line);
}

int gw_cli_run_witness(const char *cmd, char *findings, int violations)
{
    if (violations) {
        char prefix[128];
        snprintf(prefix, sizeof prefix, "%s: witness violation: ", cmd);
        gw_cli_print_lines(stderr, findings, prefix);
        fprintf(stderr, "%s: the witness does not prove the GPU computed this; nothing written\n", cmd);
        return GW_EXIT_FAIL;
    }
    gw_cli_print_lines(stdout, findings, "  witness ");
    return GW_EXIT_OK;
}

void gw_cli_print_call_witness(const char *indent, const char *receipt, char *findings, int violations,
                               unsigned long long items)
{
    char prefix[64];
    printf("%s%s\n", indent, receipt);
    snprintf(prefix, sizeof prefix, "%switness check: %s", indent, violations ? "violation: " : "");
    if (findings[0]) gw_cli_print_lines(stdout, findings, prefix);
    else printf("%switness check: ok (1 launch, %llu items, %s)\n", indent, items,
                gw_cli_emulated() ? "the emulated device's record, as expected of gpuwitness-emu"
                                  : "code for this device's architecture");
}

void gw_cli_cap_openmp_threads(void)
{
#ifdef _OPENMP
    /* OMP_NUM_THREADS is a list ("8,4": one team size per nesting level); the first is the one we run */
    const char *env = getenv("OMP_NUM_THREADS");
    if (!env) return;
    while (*env == ' ' || *env == '\t') env++;
    char *end = NULL;
    errno = 0;
    const unsigned long long asked = strtoull(env, &end, 10);
    if (end == env || *env == '-' || (errno == 0 && asked <= GW_CLI_MAX_THREADS)) return; /* libgomp's to judge */
    omp_set_num_threads(GW_CLI_MAX_THREADS);
    fprintf(stderr, "gpuwitness: OMP_NUM_THREADS=%s asks for more than %d threads, the most this tool runs (as "
            "--threads): using %d\n", getenv("OMP_NUM_THREADS"), GW_CLI_MAX_THREADS, GW_CLI_MAX_THREADS);
#endif
}

double gw_cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *gw_cli_gpu_label(void)
{
    return gw_cli_emulated() ? "emulated:" : "gpu:     ";
}

const char *gw_cli_emulated_note(void)
{
    return gw_cli_emulated() ? " [emulated on the CPU, not a GPU]" : "";
}

int gw_gpu_facts_get(int ordinal, gw_gpu_facts *f, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    f->ordinal = ordinal;
    struct cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
    snprintf(f->name, sizeof f->name, "%s", prop.name);
    f->cc_major = prop.major;
    f->cc_minor = prop.minor;
    f->sm_count = prop.multiProcessorCount;
    f->total_mem = prop.totalGlobalMem;
    f->emulated = gw_cli_emulated();
    return 0;
fail:
    return -1;
}
