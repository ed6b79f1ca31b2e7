/* SPDX-License-Identifier: MIT
 * gpuwitness bench --dump-inputs DIR: each case's inputs and our CPU reference's outputs as .npy files in
 * DIR/<kernel>.<case>/, listed in DIR/manifest.json, for the peers in bench/peers/ (bench/README.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gw_bench.h"

int gw_bench_dump_dir(const gw_bench_run *run, const char *kernel, const char *case_id, char *path, size_t size,
                      char *err, size_t err_size)
{
    if (!run->dump_dir) return 1;
    const int n = snprintf(path, size, "%s/%s.%s", run->dump_dir, kernel, case_id);
    if (n < 0 || (size_t)n >= size) {
        snprintf(err, err_size, "--dump-inputs '%s': the path of case %s.%s is too long", run->dump_dir, kernel,
                 case_id);
        return -1;
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        snprintf(err, err_size, "--dump-inputs: cannot create '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int gw_bench_dump_npy(const char *dir, const char *prefix, const char *key, gw_npy_dtype dtype, int ndim,
                      const int64_t *shape, const void *data, cJSON *files, char *err, size_t err_size)
{
    char file[128], path[4096];
    snprintf(file, sizeof file, "%s%s.npy", prefix, key);
    const int n = snprintf(path, sizeof path, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof path) {
        snprintf(err, err_size, "--dump-inputs: the path '%s/%s' is too long", dir, file);
        return -1;
    }
    if (gw_npy_write(path, dtype, ndim, shape, data, err, err_size)) return -1;
    if (!cJSON_AddStringToObject(files, key, file)) {
        snprintf(err, err_size, "out of memory listing %s", path);
        return -1;
    }
    return 0;
}

/* Adds the case to the manifest, taking inputs and reference. 0 or -1 (out of memory). */
static int dump_add(gw_bench_run *run, const gw_bench_row *row, cJSON *inputs, cJSON *reference)
{
    cJSON *e = cJSON_CreateObject();
    char dir[256];
    snprintf(dir, sizeof dir, "%s.%s", row->kernel, row->case_id);
    if (!e || !cJSON_AddStringToObject(e, "kernel", row->kernel) || !cJSON_AddStringToObject(e, "case", row->case_id) ||
        !cJSON_AddStringToObject(e, "label", row->label) || !cJSON_AddStringToObject(e, "dir", dir) ||
        !cJSON_AddItemToObject(e, "params", cJSON_Duplicate(row->params, 1))) {
        cJSON_Delete(e);
        cJSON_Delete(inputs);
        cJSON_Delete(reference);
        return -1;
    }
    cJSON_AddItemToObject(e, "inputs", inputs);
    cJSON_AddItemToObject(e, "reference", reference);
    cJSON_AddItemToArray(run->dumped, e);
    return 0;
}

void gw_bench_dump_finish(gw_bench_run *run, gw_bench_row *row, int rc, cJSON *inputs, cJSON *reference,
                          const char *err)
{
    if (rc == 0) {
        if (dump_add(run, row, inputs, reference)) gw_bench_row_fail(row, "out of memory listing the dump");
        return;
    }
    cJSON_Delete(inputs);
    cJSON_Delete(reference);
    gw_bench_row_fail(row, "%s", err);
}
