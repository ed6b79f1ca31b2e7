/* SPDX-License-Identifier: MIT
 * The ARC-task-file side of `run` (gw_arc_run.h): output locations, inputs into one batch.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_arc_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gw_cli.h"

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Output checks, before any input is read: the place must be writable in principle and must not be an
 * input or another output. GW_EXIT_OK or GW_EXIT_USAGE (message printed). */
static int plan_outputs(gw_arc_run_file *files, size_t n, const char *out_dir, const char *out_file)
{
    struct stat st;
    if (out_dir) {
        if (stat(out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "gpuwitness run: --out-dir '%s': not an existing directory (create it first)\n", out_dir);
            return GW_EXIT_USAGE;
        }
    } else {
        /* The directory of -o must exist, or the write would fail only after all the work. */
        char *dir = strdup(out_file);
        if (!dir) {
            fprintf(stderr, "gpuwitness run: out of memory\n");
            return GW_EXIT_USAGE;
        }
        char *slash = strrchr(dir, '/');
        if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
        const int ok = stat(slash ? dir : ".", &st) == 0 && S_ISDIR(st.st_mode);
        if (!ok) fprintf(stderr, "gpuwitness run: -o '%s': directory '%s' does not exist\n", out_file, dir);
        free(dir);
        if (!ok) return GW_EXIT_USAGE;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = base_name(files[i].path);
        if (out_dir) {
            size_t size = strlen(out_dir) + strlen(name) + 2;
            files[i].out_path = malloc(size);
            if (!files[i].out_path) {
                fprintf(stderr, "gpuwitness run: out of memory\n");
                return GW_EXIT_USAGE;
            }
            const size_t dir_len = strlen(out_dir); /* "out/" and "out" give the same "out/name" */
            const char *sep = dir_len && out_dir[dir_len - 1] == '/' ? "" : "/";
            snprintf(files[i].out_path, size, "%s%s%s", out_dir, sep, name);
        } else {
            files[i].out_path = strdup(out_file);
            if (!files[i].out_path) {
                fprintf(stderr, "gpuwitness run: out of memory\n");
                return GW_EXIT_USAGE;
            }
        }
        if (!*name) {
            fprintf(stderr, "gpuwitness run: '%s': not a file name\n", files[i].path);
            return GW_EXIT_USAGE;
        }
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(files[j].out_path, files[i].out_path)) {
                fprintf(stderr, "gpuwitness run: '%s' and '%s' would both be written to '%s': input file names "
                        "must differ with --out-dir\n", files[j].path, files[i].path, files[i].out_path);
                return GW_EXIT_USAGE;
            }
        }
        struct stat out_st;
        if (stat(files[i].out_path, &out_st) != 0) continue; /* a new file: it cannot be an input */
        if (!S_ISREG(out_st.st_mode)) {
            fprintf(stderr, "gpuwitness run: output '%s' exists and is not a regular file\n", files[i].out_path);
            return GW_EXIT_USAGE;
        }
        /* Same file by identity, not by name: "a/x.json" and "./a/../a/x.json" are one file. */
        for (size_t j = 0; j < n; j++) {
            struct stat in_st;
            if (stat(files[j].path, &in_st) == 0 && in_st.st_dev == out_st.st_dev && in_st.st_ino == out_st.st_ino) {
                fprintf(stderr, "gpuwitness run: output '%s' is the input file '%s': refusing to overwrite an input\n",
                        files[i].out_path, files[j].path);
                return GW_EXIT_USAGE;
            }
        }
    }
    return GW_EXIT_OK;
}

int gw_arc_run_plan(const char *kernel, const char *const *inputs, size_t n_inputs, const char *out_dir,
                    const char *out_file, gw_arc_run_file **files)
{
    *files = NULL;
    if (n_inputs == 0) {
        fprintf(stderr, "gpuwitness run %s: no TASK.json given\n", kernel);
        return GW_EXIT_USAGE;
    }
    if (!!out_dir == !!out_file) {
        fprintf(stderr, "gpuwitness run %s: give exactly one of --out-dir DIR and -o FILE\n", kernel);
        return GW_EXIT_USAGE;
    }
    if (out_file && n_inputs != 1) {
        fprintf(stderr, "gpuwitness run %s: -o '%s' takes one input, got %zu: use --out-dir for several\n", kernel,
                out_file, n_inputs);
        return GW_EXIT_USAGE;
    }
    *files = calloc(n_inputs, sizeof **files);
    if (!*files) {
        fprintf(stderr, "gpuwitness run: out of memory\n");
        return GW_EXIT_FAIL;
    }
    for (size_t i = 0; i < n_inputs; i++) (*files)[i].path = inputs[i];
    return plan_outputs(*files, n_inputs, out_dir, out_file);
}

/* All grids of all files in one packed batch, in file order. 0, or -1 out of memory. */
static int build_batch(gw_arc_run_file *files, size_t n, int op, grid_d4_batch *b)
{
    size_t grids = 0;
    for (size_t i = 0; i < n; i++) {
        files[i].first_grid = grids;
        files[i].n_grids = gw_arc_grid_count(&files[i].task);
        grids += files[i].n_grids;
    }
    uint16_t *h = malloc((grids + 1) * sizeof *h), *w = malloc((grids + 1) * sizeof *w);
    int rc = h && w ? 0 : -1;
    for (size_t i = 0, k = 0; !rc && i < n; i++) {
        for (size_t j = 0; j < files[i].n_grids; j++, k++) {
            const gw_arc_grid *g = gw_arc_grid_at(&files[i].task, j);
            h[k] = g->height;
            w[k] = g->width;
        }
    }
    if (!rc) rc = grid_d4_batch_make(b, grids, h, w, GRID_D4_PACKED, 0, "the grids of the input files");
    free(h);
    free(w);
    if (rc) return -1;
    grid_d4_batch_set_op(b, op);
    for (size_t i = 0, k = 0; i < n; i++) {
        for (size_t j = 0; j < files[i].n_grids; j++, k++)
            memcpy(grid_d4_batch_grid(b, k), gw_arc_grid_at(&files[i].task, j)->cells, (size_t)grid_d4_batch_cells_of(b, k));
    }
    return 0;
}

int gw_arc_run_read_batch(gw_arc_run_file *files, size_t n, int op, grid_d4_batch *b)
{
    char err[1024];
    int bad_inputs = 0;
    for (size_t i = 0; i < n; i++) {
        if (gw_arc_read(files[i].path, &files[i].task, err, sizeof err)) {
            fprintf(stderr, "gpuwitness run: %s\n", err);
            bad_inputs++;
        }
    }
    if (bad_inputs) {
        fprintf(stderr, "gpuwitness run: %d of %zu input file(s) unusable; nothing written\n", bad_inputs, n);
        return GW_EXIT_FAIL;
    }
    if (build_batch(files, n, op, b)) {
        fprintf(stderr, "gpuwitness run: out of memory; nothing written\n");
        return GW_EXIT_FAIL;
    }
    return GW_EXIT_OK;
}

void gw_arc_run_files_free(gw_arc_run_file *files, size_t n)
{
    for (size_t i = 0; files && i < n; i++) {
        gw_arc_free(&files[i].task);
        free(files[i].out_path);
    }
    free(files);
}
