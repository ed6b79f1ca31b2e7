/* SPDX-License-Identifier: MIT
 * grid_d4 in the CLI: its table record and `gpuwitness run grid_d4`, which applies one D4 op to every grid
 * (train and test, inputs and outputs) of ARC task files. Everything is checked before anything is written:
 * the command line, the output locations, every input file, and (on the GPU) the result against grid_d4_ref
 * and the witness. All grids of all files go to the GPU in one batched launch.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grid_d4_batch.h"
#include "grid_d4_host.h"
#include "grid_d4_ref.h"
#include "gw_arc.h"
#include "gw_outfile.h"
#include "gw_kernel.h"

static const char *const run_value_options[] = {"--op", "--out-dir", "--output", "-o", NULL};

const gw_kernel_info gw_grid_d4_info = {
    .name = "grid_d4",
    .run_usage = "gpuwitness run grid_d4 --op NAME [--device D] (--out-dir DIR | -o FILE) TASK.json...\n"
                 "  one D4 op (rotate, flip) on every grid of ARC task files",
    .run_value_options = run_value_options,
    .check_help = "realistic: 100000 grids (small: 2000) with shapes drawn from the ARC-AGI-1 training shape\n"
                  "distribution, cells 0..9; once with random per-grid ops and packed offsets, once with\n"
                  "batch op rot90 and 16-byte aligned offsets (the gaps between grids must keep the poison);\n"
                  "bit for bit against grid_d4_ref.",
    .bench_help = "ARC-AGI-1-shaped batches (smoke 1e3; small 1e4, 1e5; realistic 1e4..1e6; full 1e4..4e6\n"
                  "grids) and all-30x30 batches, each with batch op rot90, random per-grid ops and identity;\n"
                  "beside them cudaMemcpyAsync of the payload and cub::DeviceMemcpy::Batched of the same\n"
                  "ragged buffers (the identity-op roofline)",
    .trace_help = "2000 ARC-shaped grids with per-grid random ops (check --size small's first problem)",
};

static const char run_help[] =
    "usage: gpuwitness run grid_d4 --op NAME [--device cuda|cuda:N|cpu|auto] (--out-dir DIR | -o FILE)\n"
    "                              TASK.json...\n"
    "\n"
    "Reads ARC task files ({\"train\": [...], \"test\": [...]}, grids of integers 0..9), applies the op to every\n"
    "grid (train and test, input and output) and writes each transformed task as ARC JSON: to DIR/<same file\n"
    "name>, or to FILE when there is one input. On the GPU, all grids of all files run in one batched launch\n"
    "whose result is compared with the CPU reference and whose witness is checked; on the CPU, grid_d4_ref\n"
    "computes it. Every input is read and validated, and the result checked, before any file is written; an\n"
    "input file is never overwritten. The kernel may be spelled grid_d4 or grid-d4.\n"
    "\n"
    "options:\n"
    "  --op NAME        identity, rot90 (clockwise), rot180, rot270 (anticlockwise), hmirror (upside down),\n"
    "                   vmirror (left-right), dmirror (transpose), cmirror (anti-transpose): arc-dsl's names\n"
    "  --device D       cuda, cuda:N, cpu or auto (default: $GW_DEVICE, else auto; auto without a GPU runs\n"
    "                   grid_d4_ref and says so on stderr)\n"
    "  --out-dir DIR    write DIR/<input file name> for each input (DIR must exist)\n"
    "  -o, --output F   write to F (only with one input)\n"
    "  -h, --help       this text\n"
    "\n"
    "exit status: 0 written; 1 bad input file, mismatch, witness violation, CUDA error, write error, or no\n"
    "GPU under GW_REQUIRE_GPU=1; 2 bad usage (unknown op or option, bad output location, output = input);\n"
    "77 --device cuda or cuda:N without a usable GPU (GW_REQUIRE_GPU unset): nothing written.\n";

typedef struct run_file {
    const char *path;
    char *out_path;
    gw_arc_task task;
    size_t first_grid, n_grids;
} run_file;

static int op_from_name(const char *name)
{
    for (int op = 0; op < 8; op++)
        if (!strcmp(name, grid_d4_op_name(op))) return op;
    return -1;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Output checks, before any input is read: the place must be writable in principle and must not be an
 * input or another output. GW_EXIT_OK or GW_EXIT_USAGE (message printed). */
static int plan_outputs(run_file *files, size_t n, const char *out_dir, const char *out_file)
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

/* All grids of all files in one packed batch, in file order. 0, or -1 out of memory. */
static int build_batch(run_file *files, size_t n, int op, grid_d4_batch *b)
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

/* The GPU result into got, compared with ref and witnessed. GW_EXIT_OK or GW_EXIT_FAIL (printed). */
static int transform_on_gpu(const grid_d4_batch *b, const grid_d4_result *ref, grid_d4_result *got, int ordinal)
{
    char err[512], msg[1024];
    gw_d4_gpu g;
    gw_d4_gpu_result res;
    int rc = GW_EXIT_OK;
    if (gw_d4_gpu_init(&g, ordinal, b, err, sizeof err)) {
        fprintf(stderr, "gpuwitness run: cuda:%d: %s; nothing written\n", ordinal, err);
        return GW_EXIT_FAIL;
    }
    if (gw_d4_gpu_call(&g, b, 0xFF, got, &res, err, sizeof err)) {
        fprintf(stderr, "gpuwitness run: cuda:%d: %s; nothing written\n", ordinal, err);
        rc = GW_EXIT_FAIL;
    } else {
        printf("  %s\n", res.witness_receipt);
        if (res.status != GRID_D4_OK) {
            fprintf(stderr, "gpuwitness run: the device rejected grid %zu: %s; nothing written\n", res.status_index,
                    grid_d4_status_str(res.status));
            rc = GW_EXIT_FAIL;
        } else if (grid_d4_result_compare(b, got, ref, msg, sizeof msg)) {
            fprintf(stderr, "gpuwitness run: the GPU result differs from grid_d4_ref; nothing written:\n%s", msg);
            rc = GW_EXIT_FAIL;
        }
        if (res.witness_violations) {
            for (char *line = strtok(res.witness_check, "\n"); line; line = strtok(NULL, "\n"))
                fprintf(stderr, "gpuwitness run: witness violation: %s\n", line);
            fprintf(stderr, "gpuwitness run: the witness does not prove the GPU computed this; nothing written\n");
            rc = GW_EXIT_FAIL;
        } else if (res.witness_check[0]) {
            for (char *line = strtok(res.witness_check, "\n"); line; line = strtok(NULL, "\n"))
                printf("  witness %s\n", line);
        }
        if (rc == GW_EXIT_OK)
            printf("  result: bit-exact with grid_d4_ref, witness checks out (%.2f ms incl. transfers)\n",
                   res.ms_end_to_end);
    }
    if (gw_d4_gpu_free(&g, err, sizeof err)) {
        fprintf(stderr, "gpuwitness run: cuda:%d: %s\n", ordinal, err);
        rc = GW_EXIT_FAIL;
    }
    return rc;
}

/* Reads every input, computes, checks, and only then writes. Owns nothing of its caller's. */
static int run_grid_d4(run_file *files, size_t n, int op, const gw_device_choice *dev)
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
    grid_d4_batch b;
    grid_d4_result ref = {0}, got = {0};
    int rc = GW_EXIT_OK;
    if (build_batch(files, n, op, &b)) {
        fprintf(stderr, "gpuwitness run: out of memory; nothing written\n");
        return GW_EXIT_FAIL;
    }
    if (grid_d4_result_init(&ref, &b) || grid_d4_result_init(&got, &b)) {
        fprintf(stderr, "gpuwitness run: out of memory; nothing written\n");
        rc = GW_EXIT_FAIL;
        goto done;
    }
    const uint64_t cells = grid_d4_batch_cells(&b);
    const int gpu = dev->kind == GW_DEVICE_CUDA;
    if (gpu)
        printf("gpuwitness run grid_d4: %s on cuda:%d: %zu file(s), %zu grids, %llu cells, one launch\n",
               grid_d4_op_name(op), dev->ordinal, n, b.n, (unsigned long long)cells);
    else
        printf("gpuwitness run grid_d4: %s on the CPU (grid_d4_ref%s): %zu file(s), %zu grids, %llu cells\n",
               grid_d4_op_name(op), dev->fell_back ? ", no usable GPU" : ", --device cpu", n, b.n,
               (unsigned long long)cells);
    const grid_d4_params p = grid_d4_batch_params(&b);
    grid_d4_result_poison(&ref, 0xFF);
    int status = grid_d4_ref(&p, b.in, ref.out, b.offset, b.height, b.width, ref.out_height, ref.out_width, NULL);
    if (status != GRID_D4_OK) {
        fprintf(stderr, "gpuwitness run: grid_d4_ref: %s; nothing written\n",
                grid_d4_status_str((grid_d4_status)status));
        rc = GW_EXIT_FAIL;
        goto done;
    }
    const grid_d4_result *result = &ref;
    if (gpu) {
        rc = transform_on_gpu(&b, &ref, &got, dev->ordinal);
        if (rc != GW_EXIT_OK) goto done;
        result = &got;
    }
    /* Results back into the tasks: same cell count, shapes swapped for the transposing ops. */
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < files[i].n_grids; j++) {
            const size_t k = files[i].first_grid + j;
            gw_arc_grid *g = gw_arc_grid_at(&files[i].task, j);
            g->height = result->out_height[k];
            g->width = result->out_width[k];
            memcpy(g->cells, result->out + b.offset[k], (size_t)g->height * g->width);
        }
    }
    /* All or nothing: stage every output (written and flushed beside its target), then put them in place as
     * one set; on any failure no output exists and every existing target is as it was. */
    gw_outfile *staged = malloc(n * sizeof *staged);
    if (!staged) {
        fprintf(stderr, "gpuwitness run: out of memory; nothing written\n");
        rc = GW_EXIT_FAIL;
        goto done;
    }
    for (size_t i = 0; i < n; i++) staged[i] = (gw_outfile)GW_OUTFILE_INIT;
    for (size_t i = 0; i < n && rc == GW_EXIT_OK; i++) {
        if (gw_arc_stage(&staged[i], files[i].out_path, &files[i].task, err, sizeof err)) {
            fprintf(stderr, "gpuwitness run: %s\n", err); /* every gw_arc_stage message ends "; nothing written" */
            rc = GW_EXIT_FAIL;
        }
    }
    if (rc == GW_EXIT_OK && gw_outfile_commit_all(staged, n, err, sizeof err)) { /* discards the set either way */
        fprintf(stderr, "gpuwitness run: %s\n", err);
        rc = GW_EXIT_FAIL;
    }
    for (size_t i = 0; i < n; i++) gw_outfile_discard(&staged[i]); /* what a failed stage left (no-op otherwise) */
    free(staged);
    for (size_t i = 0; rc == GW_EXIT_OK && i < n; i++) printf("  wrote %s\n", files[i].out_path);
done:
    grid_d4_result_free(&got);
    grid_d4_result_free(&ref);
    grid_d4_batch_free(&b);
    return rc;
}


int gw_grid_d4_run(int argc, char **argv)
{
    const char *op_name = NULL, *device = NULL, *out_dir = NULL, *out_file = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t n_inputs = 0;
    int rc = GW_EXIT_USAGE, options_done = 0;
    run_file *files = NULL;
    if (!inputs) {
        fprintf(stderr, "gpuwitness run: out of memory\n");
        return GW_EXIT_FAIL;
    }
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m = 0;
        const char *a = argv[i];
        if (!options_done && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            fputs(run_help, stdout);
            rc = GW_EXIT_OK;
            goto out;
        }
        if (!options_done && !strcmp(a, "--")) {
            options_done = 1;
            continue;
        }
        if (!options_done && a[0] == '-' && a[1]) {
            if ((m = gw_cli_option(argc, argv, &i, "run", "--op", &v)) != 0) {
                op_name = v;
            } else if ((m = gw_cli_option(argc, argv, &i, "run", "--device", &v)) != 0) {
                device = v;
            } else if ((m = gw_cli_option(argc, argv, &i, "run", "--out-dir", &v)) != 0) {
                out_dir = v;
            } else if ((m = gw_cli_option(argc, argv, &i, "run", "--output", &v)) != 0 ||
                       (m = gw_cli_option(argc, argv, &i, "run", "-o", &v)) != 0) {
                out_file = v;
            } else {
                fprintf(stderr, "gpuwitness run: unknown option '%s': options are --op, --device, --out-dir, -o, "
                        "--help\n", a);
                goto out;
            }
            if (m < 0) goto out;
            continue;
        }
        inputs[n_inputs++] = a;
    }
    if (!op_name) {
        fprintf(stderr, "gpuwitness run grid_d4: missing --op: one of identity, rot90, rot180, rot270, hmirror, "
                "vmirror, dmirror, cmirror\n");
        goto out;
    }
    const int op = op_from_name(op_name);
    if (op < 0) {
        fprintf(stderr, "gpuwitness run grid_d4: --op '%s': unknown op; must be one of identity, rot90, rot180, "
                "rot270, hmirror, vmirror, dmirror, cmirror\n", op_name);
        goto out;
    }
    if (n_inputs == 0) {
        fprintf(stderr, "gpuwitness run grid_d4: no TASK.json given\n");
        goto out;
    }
    if (!!out_dir == !!out_file) {
        fprintf(stderr, "gpuwitness run grid_d4: give exactly one of --out-dir DIR and -o FILE\n");
        goto out;
    }
    if (out_file && n_inputs != 1) {
        fprintf(stderr, "gpuwitness run grid_d4: -o '%s' takes one input, got %zu: use --out-dir for several\n",
                out_file, n_inputs);
        goto out;
    }
    files = calloc(n_inputs, sizeof *files);
    if (!files) {
        fprintf(stderr, "gpuwitness run: out of memory\n");
        rc = GW_EXIT_FAIL;
        goto out;
    }
    for (size_t i = 0; i < n_inputs; i++) files[i].path = inputs[i];
    rc = plan_outputs(files, n_inputs, out_dir, out_file);
    if (rc != GW_EXIT_OK) goto out;

    gw_device_choice dev;
    rc = gw_cli_select_device("run", device, &dev);
    if (rc == GW_EXIT_SKIP) {
        fprintf(stderr, "gpuwitness run: no usable GPU for --device %s: %s; nothing written (exit 77; "
                "--device auto would run grid_d4_ref on the CPU)\n", gw_cli_effective_device(device), dev.reason);
        goto out;
    }
    if (rc != GW_EXIT_OK) goto out;
    if (dev.fell_back)
        fprintf(stderr, "gpuwitness run: no usable GPU: %s; running grid_d4_ref on the CPU instead (auto)\n",
                dev.reason);
    rc = run_grid_d4(files, n_inputs, op, &dev);
out:
    for (size_t i = 0; files && i < n_inputs; i++) {
        gw_arc_free(&files[i].task);
        free(files[i].out_path);
    }
    free(files);
    free(inputs);
    return rc;
}
