/* SPDX-License-Identifier: MIT
 * The "environment" block of gpuwitness bench (docs/benchmarks.md, "What every run reports"): absolute
 * times mean something only on a named GPU, CPU and build. The build facts come from CMake at configure
 * time (tools/CMakeLists.txt), the git commit too: reconfigure after committing to refresh it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "gw_build_info.h"
#include "gw_bench.h"


int gw_bench_cpu_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1; /* built without OpenMP: the "multithreaded" references run on one thread, and say so */
#endif
}

/* "model name : AMD EPYC ..." from /proc/cpuinfo; empty when there is none (not Linux x86). */
static void cpu_model(char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        snprintf(buf, size, "%s", colon);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static void add_version(cJSON *o, const char *key, int version)
{
    char text[32];
    if (version <= 0) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    snprintf(text, sizeof text, "%d.%d", version / 1000, (version % 1000) / 10);
    cJSON_AddStringToObject(o, key, text);
}

static cJSON *gpu_json(const gw_bench_gpu *g)
{
    if (!g) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", g->facts.cc_major, g->facts.cc_minor);
    cJSON_AddNumberToObject(o, "ordinal", g->ordinal);
    cJSON_AddStringToObject(o, "name", g->facts.name);
    cJSON_AddStringToObject(o, "compute_capability", cc);
    cJSON_AddNumberToObject(o, "sm_count", g->facts.sm_count);
    cJSON_AddNumberToObject(o, "memory_bytes", (double)g->facts.total_mem);
    cJSON_AddNumberToObject(o, "l2_bytes", (double)g->l2_bytes);
    return o;
}

cJSON *gw_bench_environment(const gw_bench_run *run)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddItemToObject(o, "gpu", gpu_json(run->gpu));
    if (run->gpu) cJSON_AddNullToObject(o, "gpu_skipped_reason");
    else cJSON_AddStringToObject(o, "gpu_skipped_reason", run->gpu_skip_reason);
    /* Both calls work without a driver: the runtime version is compiled in, the driver's is 0. */
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    add_version(o, "cuda_runtime_version", runtime);
    add_version(o, "cuda_driver_version", driver);
    char model[256], host[256];
    cpu_model(model, sizeof model);
    if (model[0]) cJSON_AddStringToObject(o, "cpu_model", model);
    else cJSON_AddNullToObject(o, "cpu_model");
    cJSON_AddNumberToObject(o, "cpu_threads", (double)sysconf(_SC_NPROCESSORS_ONLN));
    cJSON_AddNumberToObject(o, "cpu_reference_threads", gw_bench_cpu_threads());
    cJSON_AddStringToObject(o, "gpuwitness_version", GW_VERSION);
    cJSON_AddStringToObject(o, "git_commit", GW_GIT_COMMIT);
    cJSON_AddStringToObject(o, "build_type", GW_BUILD_TYPE);
    cJSON_AddStringToObject(o, "c_compiler", GW_C_COMPILER);
    cJSON_AddStringToObject(o, "c_flags", GW_C_FLAGS);
    cJSON_AddStringToObject(o, "cuda_compiler", GW_CUDA_COMPILER);
    cJSON_AddStringToObject(o, "cuda_flags", GW_CUDA_FLAGS);
    cJSON_AddStringToObject(o, "cuda_architectures", GW_CUDA_ARCHITECTURES);
    if (gethostname(host, sizeof host) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    cJSON_AddStringToObject(o, "hostname", host);
    char stamp[32];
    const time_t now = time(NULL);
    struct tm utc;
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &utc));
    cJSON_AddStringToObject(o, "timestamp_utc", stamp);
    return o;
}
