/* SPDX-License-Identifier: MIT
 * grid_d4 in the CLI: its table record and `gpuwitness run grid_d4`, which applies one D4 op to every grid
 * (train and test, inputs and outputs) of ARC task files. Everything is checked before anything is written:
 * the command line, the output locations, every input file, and (on the GPU) the result against grid_d4_ref
 * and the witness. All grids of all files go to the GPU in one batched launch. The output locations and the
 * reading of the files into one batch are gw_arc_run.h's, shared with grid_objects; the witness report is
 * gw_cli_run_witness.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid_d4_batch.h"
#include "grid_d4_host.h"
#include "grid_d4_ref.h"
#include "gw_arc.h"
#include "gw_arc_run.h"
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

static int op_from_name(const char *name)
{
    for (int op = 0; op < 8; op++)
        if (!strcmp(name, grid_d4_op_name(op))) return op;
    return -1;
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
    const int call_failed = gw_d4_gpu_call(&g, b, 0xFF, got, &res, err, sizeof err) != 0;
    if (call_failed) {
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
        if (gw_cli_run_witness("gpuwitness run", res.witness_check, res.witness_violations)) rc = GW_EXIT_FAIL;
        if (rc == GW_EXIT_OK)
            printf("  result: bit-exact with grid_d4_ref, witness checks out (%.2f ms incl. transfers)%s\n",
                   res.ms_end_to_end, gw_cli_emulated_note());
    }
    /* after a failed call, the first error is the one worth reporting: a sticky one fails the frees too */
    if (gw_d4_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
        if (!call_failed) fprintf(stderr, "gpuwitness run: cuda:%d: %s\n", ordinal, err);
        rc = GW_EXIT_FAIL;
    }
    return rc;
}

/* Reads every input, computes, checks, and only then writes. Owns nothing of its caller's. */
static int run_grid_d4(gw_arc_run_file *files, size_t n, int op, const gw_device_choice *dev)
{
    char err[1024];
    grid_d4_batch b;
    grid_d4_result ref = {0}, got = {0};
    int rc = gw_arc_run_read_batch(files, n, op, &b);
    if (rc != GW_EXIT_OK) return rc;
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
    gw_arc_run_file *files = NULL;
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
    rc = gw_arc_run_plan("grid_d4", inputs, n_inputs, out_dir, out_file, &files);
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
    gw_arc_run_files_free(files, n_inputs);
    free(inputs);
    return rc;
}
