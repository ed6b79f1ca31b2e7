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
#include "gw_cli_files.h"

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Output paths, then the output rule (gw_cli_files.h) over all of them and the inputs, before any input is
 * read. GW_EXIT_OK or GW_EXIT_USAGE (message printed). */
static int plan_outputs(const char *kernel, gw_arc_run_file *files, size_t n, const char *out_dir,
                        const char *out_file)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "gpuwitness run %s", kernel);
    struct stat st;
    if (out_dir && (stat(out_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "%s: --out-dir '%s': not an existing directory (create it first)\n", cmd, out_dir);
        return GW_EXIT_USAGE;
    }
    gw_cli_file *outs = calloc(n, sizeof *outs), *ins = calloc(n, sizeof *ins);
    int rc = outs && ins ? GW_EXIT_OK : GW_EXIT_USAGE;
    if (rc) fprintf(stderr, "%s: out of memory\n", cmd);
    for (size_t i = 0; rc == GW_EXIT_OK && i < n; i++) {
        const char *name = base_name(files[i].path);
        if (!*name) {
            fprintf(stderr, "%s: '%s': not a file name\n", cmd, files[i].path);
            rc = GW_EXIT_USAGE;
            break;
        }
        if (out_dir) {
            const size_t dir_len = strlen(out_dir), size = dir_len + strlen(name) + 2;
            const char *sep = dir_len && out_dir[dir_len - 1] == '/' ? "" : "/"; /* "out/" and "out": "out/name" */
            if ((files[i].out_path = malloc(size))) snprintf(files[i].out_path, size, "%s%s%s", out_dir, sep, name);
        } else {
            files[i].out_path = strdup(out_file);
        }
        if (!files[i].out_path) {
            fprintf(stderr, "%s: out of memory\n", cmd);
            rc = GW_EXIT_USAGE;
            break;
        }
        outs[i] = (gw_cli_file){out_file ? "-o" : NULL, files[i].out_path, out_file ? NULL : files[i].path};
        ins[i] = (gw_cli_file){NULL, files[i].path, NULL};
    }
    if (rc == GW_EXIT_OK && gw_cli_check_outputs(cmd, outs, n, ins, n)) rc = GW_EXIT_USAGE;
    free(outs);
    free(ins);
    return rc;
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
    return plan_outputs(kernel, *files, n_inputs, out_dir, out_file);
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
