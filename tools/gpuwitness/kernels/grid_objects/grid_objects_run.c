/* SPDX-License-Identifier: MIT
 * grid_objects in the CLI: its table record and `gpuwitness run grid_objects`, which labels the objects of
 * every grid (train and test, inputs and outputs) of ARC task files with one variant (arc-dsl's o_g numbering)
 * and writes, per task file, one JSON file of label maps and object tables (docs/grid_objects.md, "Output
 * format of gpuwitness run"). Everything is checked before anything is written: the command line, the output
 * locations, every input file, and (on the GPU) the result against grid_objects_ref and the witness. All grids
 * of all files go to the GPU in one batched launch. The output locations and the reading of the files into one
 * batch are gw_arc_run.h's, shared with grid_d4; the witness report is gw_cli_run_witness.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid_d4_batch.h"
#include "grid_objects_batch.h"
#include "grid_objects_host.h"
#include "grid_objects_ref.h"
#include "gw_arc.h"
#include "gw_arc_run.h"
#include "gw_kernel.h"
#include "gw_outfile.h"

static const char *const run_value_options[] = {"--variant", "--bg-tie", "--out-dir", "--output", "-o", NULL};

const gw_kernel_info gw_grid_objects_info = {
    .name = "grid_objects",
    .run_usage = "gpuwitness run grid_objects --variant T [--bg-tie arc-dsl|smallest] [--device D]\n"
                 "                             (--out-dir DIR | -o FILE) TASK.json...\n"
                 "  arc-dsl's objects (o_g variant T, 0..7) of every grid of ARC task files: label maps and\n"
                 "  object tables as JSON",
    .run_value_options = run_value_options,
    .check_help = "realistic: 100000 grids (small: 2000) with shapes drawn from the ARC-AGI-1 training shape\n"
                  "distribution, cells 0..9; once with random per-grid variants 0..7, packed offsets and bg tie\n"
                  "arc-dsl, once with batch variant 7, 16-byte aligned offsets and bg tie smallest (labels\n"
                  "outside the grids must keep the poison); exact against grid_objects_ref.",
    .bench_help = "ARC-AGI-1-shaped batches, 16-byte aligned (smoke 1e3; small 1e4, 1e5; realistic 1e4..1e6;\n"
                  "full 1e4..4e6 grids), each with all 8 variants (o_g 0..7) as the batch variant, bg tie\n"
                  "arc-dsl",
    .trace_help = "2000 ARC-shaped grids with per-grid random variants (check --size small's first problem)",
};

static const char run_help[] =
    "usage: gpuwitness run grid_objects --variant T [--bg-tie arc-dsl|smallest] [--device cuda|cuda:N|cpu|auto]\n"
    "                                   (--out-dir DIR | -o FILE) TASK.json...\n"
    "\n"
    "Reads ARC task files ({\"train\": [...], \"test\": [...]}, grids of integers 0..9) and finds the objects\n"
    "(connected components) of every grid (train and test, input and output) as arc-dsl's objects() does,\n"
    "with the flags of variant T. For each input it writes one JSON file that mirrors the task: every grid\n"
    "becomes {\"h\", \"w\", \"variant\", \"bg\", \"n_objects\", \"labels\" (rows; -1 for a cell in no object, else\n"
    "the row-major index of its object's first cell), \"objects\" ([{\"first_cell\", \"colour\" (-1: several),\n"
    "\"n_cells\", \"bbox\": [top, left, bottom, right]}])} (docs/grid_objects.md, \"Output format of gpuwitness\n"
    "run\"). Written to DIR/<same file name>, or to FILE when there is one input. On the GPU, all grids of all\n"
    "files run in one batched launch whose result is compared with the CPU reference and whose witness is\n"
    "checked; on the CPU, grid_objects_ref computes it. Every input is read and validated, and the result\n"
    "checked, before any file is written; an input file is never overwritten. The kernel may be spelled\n"
    "grid_objects or grid-objects.\n"
    "\n"
    "options:\n"
    "  --variant T      0..7, the ARC solvers' o_g(grid, T) numbering: T = 4*univalued + 2*diagonal +\n"
    "                   without_bg (univalued: one colour per object; diagonal: 8 neighbours instead of 4;\n"
    "                   without_bg: cells of the most frequent colour belong to no object)\n"
    "  --bg-tie RULE    which colour is bg when several share the top count: arc-dsl (default: what arc-dsl's\n"
    "                   mostcolor picks) or smallest\n"
    "  --device D       cuda, cuda:N, cpu or auto (default: $GW_DEVICE, else auto; auto without a GPU runs\n"
    "                   grid_objects_ref and says so on stderr)\n"
    "  --out-dir DIR    write DIR/<input file name> for each input (DIR must exist)\n"
    "  -o, --output F   write to F (only with one input)\n"
    "  -h, --help       this text\n"
    "\n"
    "exit status: 0 written; 1 bad input file, mismatch, witness violation, CUDA error, write error, or no\n"
    "GPU under GW_REQUIRE_GPU=1; 2 bad usage (bad variant, bg tie or option, bad output location, output =\n"
    "input); 77 --device cuda or cuda:N without a usable GPU (GW_REQUIRE_GPU unset): nothing written.\n";

static const char variant_rule[] =
    "must be an integer 0..7 (arc-dsl's o_g numbering: 4*univalued + 2*diagonal + without_bg)";

/* ---- the JSON text of one output file ---- */

typedef struct text {
    char *data;
    size_t len, cap;
    int oom;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt, ...)
{
    if (t->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int need = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (need < 0) {
            t->oom = 1;
            return;
        }
        if (t->data && t->len + (size_t)need < t->cap) {
            t->len += (size_t)need;
            return;
        }
        size_t cap = t->cap ? t->cap : 4096;
        while (cap <= t->len + (size_t)need) cap *= 2;
        char *grown = realloc(t->data, cap);
        if (!grown) {
            t->oom = 1;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
}

/* Grid k of the batch: {"h": .., "w": .., "variant": .., "bg": .., "n_objects": .., "labels": [[..]], "objects":
 * [{..}]}; labels GRID_OBJECTS_NO_OBJECT as -1, so the map is arc-dsl's int16 canonical map. */
static void put_grid(text *t, const grid_d4_batch *b, const grid_objects_result *r, size_t k)
{
    const unsigned h = b->height[k], w = b->width[k];
    const uint16_t *labels = r->labels + b->offset[k];
    put(t, "{\"h\": %u, \"w\": %u, \"variant\": %d, \"bg\": %d, \"n_objects\": %u, \"labels\": [", h, w,
        grid_d4_batch_op_of(b, k), r->bg[k], (unsigned)r->n_objects[k]);
    for (unsigned i = 0; i < h; i++) {
        put(t, "%s[", i ? ", " : "");
        for (unsigned j = 0; j < w; j++) {
            const uint16_t l = labels[(size_t)i * w + j];
            put(t, "%s%d", j ? ", " : "", l == GRID_OBJECTS_NO_OBJECT ? -1 : (int)l);
        }
        put(t, "]");
    }
    put(t, "], \"objects\": [");
    for (uint32_t j = 0; j < r->n_objects[k]; j++) {
        const grid_objects_object *o = &r->objects[b->offset[k] + j];
        put(t, "%s{\"first_cell\": %u, \"colour\": %d, \"n_cells\": %u, \"bbox\": [%u, %u, %u, %u]}", j ? ", " : "",
            o->first_cell, o->colour, o->n_cells, o->top, o->left, o->bottom, o->right);
    }
    put(t, "]}");
}

/* One pair list ("train" or "test") of a file; *k walks the batch in gw_arc_grid_at's order. */
static void put_pairs(text *t, const char *key, const gw_arc_pair *pairs, size_t n_pairs, const grid_d4_batch *b,
                      const grid_objects_result *r, size_t *k)
{
    put(t, "\"%s\": [", key);
    for (size_t i = 0; i < n_pairs; i++) {
        put(t, "%s{\"input\": ", i ? ", " : "");
        put_grid(t, b, r, (*k)++);
        if (pairs[i].has_output) {
            put(t, ", \"output\": ");
            put_grid(t, b, r, (*k)++);
        }
        put(t, "}");
    }
    put(t, "]");
}

/* The whole file, on one line in Python json.dumps' spacing, ending with a newline. */
static void put_file(text *t, const gw_arc_run_file *f, int variant, int bg_tie, const grid_d4_batch *b,
                     const grid_objects_result *r)
{
    size_t k = f->first_grid;
    put(t, "{\"kernel\": \"grid_objects\", \"variant\": %d, \"bg_tie\": \"%s\", ", variant,
        bg_tie == GRID_OBJECTS_TIE_SMALLEST ? "smallest" : "arc-dsl");
    put_pairs(t, "train", f->task.train, f->task.n_train, b, r, &k);
    put(t, ", ");
    put_pairs(t, "test", f->task.test, f->task.n_test, b, r, &k);
    put(t, "}\n");
}

/* The GPU result into got, compared with ref and witnessed. GW_EXIT_OK or GW_EXIT_FAIL (printed). */
static int label_on_gpu(const grid_d4_batch *b, int bg_tie, const grid_objects_result *ref, grid_objects_result *got,
                        int ordinal)
{
    char err[512], msg[1024];
    gw_go_gpu g;
    gw_go_gpu_result res;
    int rc = GW_EXIT_OK;
    if (gw_go_gpu_init(&g, ordinal, b, err, sizeof err)) {
        fprintf(stderr, "gpuwitness run: cuda:%d: %s; nothing written\n", ordinal, err);
        return GW_EXIT_FAIL;
    }
    const int call_failed = gw_go_gpu_call(&g, b, bg_tie, 0xFE, got, &res, err, sizeof err) != 0;
    if (call_failed) {
        fprintf(stderr, "gpuwitness run: cuda:%d: %s; nothing written\n", ordinal, err);
        rc = GW_EXIT_FAIL;
    } else {
        printf("  %s\n", res.witness_receipt);
        if (res.status != GRID_OBJECTS_OK) {
            fprintf(stderr, "gpuwitness run: the device rejected grid %zu: %s; nothing written\n", res.status_index,
                    grid_objects_status_str(res.status));
            rc = GW_EXIT_FAIL;
        } else if (grid_objects_result_compare(got, ref, b, msg, sizeof msg)) {
            fprintf(stderr, "gpuwitness run: the GPU result differs from grid_objects_ref; nothing written:\n%s\n",
                    msg);
            rc = GW_EXIT_FAIL;
        }
        if (gw_cli_run_witness("gpuwitness run", res.witness_check, res.witness_violations)) rc = GW_EXIT_FAIL;
        if (rc == GW_EXIT_OK)
            printf("  result: equal to grid_objects_ref, witness checks out (%.2f ms incl. transfers)%s\n",
                   res.ms_end_to_end, gw_cli_emulated_note());
    }
    /* after a failed call, the first error is the one worth reporting: a sticky one fails the frees too */
    if (gw_go_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
        if (!call_failed) fprintf(stderr, "gpuwitness run: cuda:%d: %s\n", ordinal, err);
        rc = GW_EXIT_FAIL;
    }
    return rc;
}

/* Stages every output file (written and flushed beside its target), then puts them in place as one set; on
 * any failure no output exists and every existing target is as it was. GW_EXIT_OK or GW_EXIT_FAIL. */
static int write_outputs(gw_arc_run_file *files, size_t n, int variant, int bg_tie, const grid_d4_batch *b,
                         const grid_objects_result *r)
{
    char err[1024];
    int rc = GW_EXIT_OK;
    gw_outfile *staged = malloc(n * sizeof *staged);
    if (!staged) {
        fprintf(stderr, "gpuwitness run: out of memory; nothing written\n");
        return GW_EXIT_FAIL;
    }
    for (size_t i = 0; i < n; i++) staged[i] = (gw_outfile)GW_OUTFILE_INIT;
    for (size_t i = 0; i < n && rc == GW_EXIT_OK; i++) {
        text t = {0};
        put_file(&t, &files[i], variant, bg_tie, b, r);
        if (t.oom) {
            fprintf(stderr, "gpuwitness run: out of memory writing '%s'; nothing written\n", files[i].out_path);
            rc = GW_EXIT_FAIL;
        } else if (gw_outfile_open(&staged[i], files[i].out_path, err, sizeof err) ||
                   gw_outfile_write(&staged[i], t.data, t.len, err, sizeof err) ||
                   gw_outfile_finish(&staged[i], err, sizeof err)) {
            fprintf(stderr, "gpuwitness run: %s; nothing written\n", err);
            rc = GW_EXIT_FAIL;
        }
        free(t.data);
    }
    if (rc == GW_EXIT_OK && gw_outfile_commit_all(staged, n, err, sizeof err)) { /* discards the set either way */
        fprintf(stderr, "gpuwitness run: %s; nothing written\n", err);
        rc = GW_EXIT_FAIL;
    }
    for (size_t i = 0; i < n; i++) gw_outfile_discard(&staged[i]); /* what a failed stage left (no-op otherwise) */
    free(staged);
    return rc;
}

/* Reads every input, computes, checks, and only then writes. Owns nothing of its caller's. */
static int run_grid_objects(gw_arc_run_file *files, size_t n, int variant, int bg_tie, const gw_device_choice *dev)
{
    grid_d4_batch b;
    grid_objects_result ref = {0}, got = {0};
    int rc = gw_arc_run_read_batch(files, n, variant, &b);
    if (rc != GW_EXIT_OK) return rc;
    if (grid_objects_result_init(&ref, b.n, b.buf_bytes) || grid_objects_result_init(&got, b.n, b.buf_bytes)) {
        fprintf(stderr, "gpuwitness run: out of memory; nothing written\n");
        rc = GW_EXIT_FAIL;
        goto done;
    }
    const uint64_t cells = grid_d4_batch_cells(&b);
    const int gpu = dev->kind == GW_DEVICE_CUDA;
    if (gpu)
        printf("gpuwitness run grid_objects: variant %d (%s) on cuda:%d: %zu file(s), %zu grids, %llu cells, one "
               "launch\n", variant, gw_go_variant_words(variant), dev->ordinal, n, b.n, (unsigned long long)cells);
    else
        printf("gpuwitness run grid_objects: variant %d (%s) on the CPU (grid_objects_ref%s): %zu file(s), %zu grids, "
               "%llu cells\n", variant, gw_go_variant_words(variant), dev->fell_back ? ", no usable GPU" : ", --device cpu",
               n, b.n, (unsigned long long)cells);
    grid_objects_result_poison(&ref, 0xFE);
    const int status = grid_objects_batch_ref(&b, bg_tie, 0, &ref);
    if (status != GRID_OBJECTS_OK) {
        fprintf(stderr, "gpuwitness run: grid_objects_ref: %s; nothing written\n",
                grid_objects_status_str((grid_objects_status)status));
        rc = GW_EXIT_FAIL;
        goto done;
    }
    const grid_objects_result *result = &ref;
    if (gpu) {
        rc = label_on_gpu(&b, bg_tie, &ref, &got, dev->ordinal);
        if (rc != GW_EXIT_OK) goto done;
        result = &got;
    }
    rc = write_outputs(files, n, variant, bg_tie, &b, result);
    for (size_t i = 0; rc == GW_EXIT_OK && i < n; i++) printf("  wrote %s\n", files[i].out_path);
done:
    grid_objects_result_free(&got);
    grid_objects_result_free(&ref);
    grid_d4_batch_free(&b);
    return rc;
}

int gw_grid_objects_run(int argc, char **argv)
{
    const char *variant_text = NULL, *tie_text = NULL, *device = NULL, *out_dir = NULL, *out_file = NULL;
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
            if ((m = gw_cli_option(argc, argv, &i, "run", "--variant", &v)) != 0) {
                variant_text = v;
            } else if ((m = gw_cli_option(argc, argv, &i, "run", "--bg-tie", &v)) != 0) {
                tie_text = v;
            } else if ((m = gw_cli_option(argc, argv, &i, "run", "--device", &v)) != 0) {
                device = v;
            } else if ((m = gw_cli_option(argc, argv, &i, "run", "--out-dir", &v)) != 0) {
                out_dir = v;
            } else if ((m = gw_cli_option(argc, argv, &i, "run", "--output", &v)) != 0 ||
                       (m = gw_cli_option(argc, argv, &i, "run", "-o", &v)) != 0) {
                out_file = v;
            } else {
                fprintf(stderr, "gpuwitness run: unknown option '%s': options are --variant, --bg-tie, --device, "
                        "--out-dir, -o, --help\n", a);
                goto out;
            }
            if (m < 0) goto out;
            continue;
        }
        inputs[n_inputs++] = a;
    }
    if (!variant_text) {
        fprintf(stderr, "gpuwitness run grid_objects: missing --variant: it %s\n", variant_rule);
        goto out;
    }
    unsigned long long variant = 0;
    if (gw_cli_parse_u64(variant_text, 7, &variant)) {
        fprintf(stderr, "gpuwitness run grid_objects: --variant '%s': %s\n", variant_text, variant_rule);
        goto out;
    }
    int bg_tie = GRID_OBJECTS_TIE_ARC_DSL;
    if (tie_text && !strcmp(tie_text, "smallest")) {
        bg_tie = GRID_OBJECTS_TIE_SMALLEST;
    } else if (tie_text && strcmp(tie_text, "arc-dsl")) {
        fprintf(stderr, "gpuwitness run grid_objects: --bg-tie '%s': must be arc-dsl or smallest\n", tie_text);
        goto out;
    }
    rc = gw_arc_run_plan("grid_objects", inputs, n_inputs, out_dir, out_file, &files);
    if (rc != GW_EXIT_OK) goto out;

    gw_device_choice dev;
    rc = gw_cli_select_device("run", device, &dev);
    if (rc == GW_EXIT_SKIP) {
        fprintf(stderr, "gpuwitness run: no usable GPU for --device %s: %s; nothing written (exit 77; "
                "--device auto would run grid_objects_ref on the CPU)\n", gw_cli_effective_device(device), dev.reason);
        goto out;
    }
    if (rc != GW_EXIT_OK) goto out;
    if (dev.fell_back)
        fprintf(stderr, "gpuwitness run: no usable GPU: %s; running grid_objects_ref on the CPU instead (auto)\n",
                dev.reason);
    rc = run_grid_objects(files, n_inputs, (int)variant, bg_tie, &dev);
out:
    gw_arc_run_files_free(files, n_inputs);
    free(inputs);
    return rc;
}
