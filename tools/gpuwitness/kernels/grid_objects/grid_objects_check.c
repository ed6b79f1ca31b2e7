/* SPDX-License-Identifier: MIT
 * grid_objects in `check` and `doctor`: the built-in ARC-shaped batches (every variant 0..7), the CPU
 * reference against its threaded twin, and witnessed GPU calls over two different poisons compared exactly
 * with the reference.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "grid_d4_batch.h"
#include "grid_objects_batch.h"
#include "grid_objects_host.h"
#include "grid_objects_ref.h"
#include "gw_kernel.h"

typedef struct check_case {
    const char *label;
    int per_grid_variants;
    int batch_variant;
    int aligned16;
    int bg_tie;
} check_case;

/* Both paths of the launcher (a per-grid variants array; one batch variant) and both tie rules, on the same
 * shapes and cells. The first case mixes all 8 variants grid by grid. */
static const check_case cases[] = {
    {"per-grid random variants 0..7, packed offsets, bg tie arc-dsl", 1, 0, 0, GRID_OBJECTS_TIE_ARC_DSL},
    {"batch variant 7 (univalued, diagonal, without bg), 16-byte aligned offsets, bg tie smallest", 0, 7, 1,
     GRID_OBJECTS_TIE_SMALLEST},
};

static const char *tie_name(int bg_tie)
{
    return bg_tie == GRID_OBJECTS_TIE_SMALLEST ? "smallest" : "arc-dsl";
}

/* The CPU part: grid_objects_ref and grid_objects_ref_mt on poisoned outputs, which must agree. 0 or 1. */
static int run_cpu(const grid_d4_batch *b, int bg_tie, grid_objects_result *ref, grid_objects_result *mt,
                   double *ref_ms)
{
    const grid_objects_params p = grid_objects_batch_params(b, bg_tie);
    size_t bad = 0;
    const grid_objects_status v = grid_objects_validate(&p, b->in, b->offset, b->height, b->width, b->ops,
                                                        ref->labels, ref->objects, ref->n_objects, ref->bg, &bad);
    if (v != GRID_OBJECTS_OK) {
        printf("  result:   FAILED: the built-in batch is invalid at grid %zu: %s\n", bad, grid_objects_status_str(v));
        return 1;
    }
    grid_objects_result_poison(ref, 0xFE);
    grid_objects_result_poison(mt, 0xFE);
    double t0 = gw_cli_now_ms();
    int rc = grid_objects_batch_ref(b, bg_tie, 0, ref);
    *ref_ms = gw_cli_now_ms() - t0;
    if (rc != GRID_OBJECTS_OK) {
        printf("  result:   FAILED: grid_objects_ref returned %d: %s\n", rc,
               grid_objects_status_str((grid_objects_status)rc));
        return 1;
    }
    t0 = gw_cli_now_ms();
    rc = grid_objects_batch_ref(b, bg_tie, 1, mt);
    const double mt_ms = gw_cli_now_ms() - t0;
    if (rc != GRID_OBJECTS_OK) {
        printf("  result:   FAILED: grid_objects_ref_mt returned %d: %s\n", rc,
               grid_objects_status_str((grid_objects_status)rc));
        return 1;
    }
    char msg[1024];
    const size_t left = grid_objects_result_poisoned(ref, b);
    const size_t diff = grid_objects_result_compare(mt, ref, b, msg, sizeof msg);
    uint64_t objects = 0;
    for (size_t k = 0; k < b->n; k++) objects += ref->n_objects[k];
    printf("  cpu:      grid_objects_ref %.2f ms (1 thread), grid_objects_ref_mt %.2f ms (OpenMP): %s; %" PRIu64
           " objects\n", *ref_ms, mt_ms, diff ? "DIFFERENT" : "identical results", objects);
    if (left) {
        printf("  result:   FAILED: grid_objects_ref left %zu output entries holding the poison\n", left);
        return 1;
    }
    if (diff) {
        printf("  result:   FAILED: grid_objects_ref_mt differs from grid_objects_ref: %s\n", msg);
        return 1;
    }
    return 0;
}

/* The GPU part: two witnessed calls (poison 0xFE, then 0x5A), each compared with the reference. 0 or 1. */
static int run_gpu(const grid_d4_batch *b, int bg_tie, const grid_objects_result *ref, double ref_ms, int ordinal)
{
    char err[512], msg[1024];
    gw_go_gpu g;
    grid_objects_result got;
    gw_go_gpu_result res[2];
    int failed = 0, call_failed = 0;
    if (gw_go_gpu_init(&g, ordinal, b, err, sizeof err)) {
        printf("  result:   FAILED: %s\n", err);
        return 1;
    }
    if (grid_objects_result_init(&got, b->n, b->buf_bytes)) {
        printf("  result:   FAILED: out of memory\n");
        gw_go_gpu_free(&g, NULL, 0);
        return 1;
    }
    const uint8_t poison[2] = {0xFE, 0x5A};
    int shown = -1; /* the call whose witness is printed: the first that failed, else the warm one */
    for (int rep = 0; rep < 2 && !failed; rep++) {
        if (gw_go_gpu_call(&g, b, bg_tie, poison[rep], &got, &res[rep], err, sizeof err)) {
            printf("  result:   FAILED: call %d: %s\n", rep + 1, err);
            failed = call_failed = 1;
            break;
        }
        shown = rep;
        if (res[rep].status != GRID_OBJECTS_OK) {
            printf("  result:   FAILED: call %d: the device rejected grid %zu: %s\n", rep + 1,
                   res[rep].status_index, grid_objects_status_str(res[rep].status));
            failed = 1;
        }
        const size_t left = grid_objects_result_poisoned(&got, b);
        if (left) {
            printf("  result:   FAILED: call %d: %zu output entries still hold the poison 0x%02X\n", rep + 1, left,
                   (unsigned)poison[rep]);
            failed = 1;
        }
        if (grid_objects_result_compare(&got, ref, b, msg, sizeof msg)) {
            printf("  result:   FAILED: call %d (outputs poisoned with 0x%02X) differs from grid_objects_ref: %s\n",
                   rep + 1, (unsigned)poison[rep], msg);
            failed = 1;
        }
        if (res[rep].witness_violations) {
            printf("  result:   FAILED: call %d: the witness does not prove GPU execution (%d violation(s))\n",
                   rep + 1, res[rep].witness_violations);
            failed = 1;
        }
    }
    if (!failed) {
        const gw_go_gpu_result *r = &res[1]; /* the warm call */
        printf("  %s %.2f ms incl. transfers, kernel %.3f ms (second of 2 calls); grid_objects_ref / %s = "
               "%.1fx%s\n", gw_cli_gpu_label(), r->ms_end_to_end, r->ms_kernel, gw_cli_emulated() ? "emulated" : "gpu",
               r->ms_end_to_end > 0 ? ref_ms / r->ms_end_to_end : 0.0, gw_cli_emulated_note());
    }
    if (shown >= 0) {
        printf("  %s\n", res[shown].witness_receipt);
        gw_cli_print_lines(stdout, res[shown].witness_check, "            "); /* warnings come prefixed by gw_witness_check */
    }
    if (!failed)
        printf("  result:   ok: both calls equal grid_objects_ref (labels outside the grids kept the poison), "
               "witness checks out%s\n", gw_cli_emulated_note());
    grid_objects_result_free(&got);
    /* after a failed call, its error is the one worth reporting: a sticky one fails the frees too */
    if (gw_go_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
        if (!call_failed) printf("  result:   FAILED: %s\n", err);
        failed = 1;
    }
    return failed;
}

static int run_case(const check_case *c, size_t n_grids, const gw_check_request *req)
{
    grid_d4_batch b;
    grid_objects_result ref, mt;
    printf("grid_objects [%s]\n", c->label);
    if (grid_d4_batch_builtin(&b, n_grids, req->seed, c->per_grid_variants, c->batch_variant, c->aligned16)) {
        printf("  result:   FAILED: out of memory building %zu grids\n", n_grids);
        return 1;
    }
    const uint64_t cells = grid_d4_batch_cells(&b);
    printf("  problem:  %zu grids, %" PRIu64 " cells (%.1f MB, buffer %.1f MB), ARC-AGI-1 training shapes, "
           "cells 0..9, bg tie %s, seed %" PRIu64 "\n",
           b.n, cells, (double)cells / 1e6, (double)b.buf_bytes / 1e6, tie_name(c->bg_tie), req->seed);
    if (req->gpu)
        printf("  device:   cuda:%d%s\n", req->dev->ordinal, gw_cli_emulated_note());
    else
        printf("  device:   cpu (%s)\n", req->dev->fell_back || req->dev->reason[0] ? "GPU part skipped" : "--device cpu");
    int failed = 0;
    double ref_ms = 0;
    if (grid_objects_result_init(&ref, b.n, b.buf_bytes)) {
        printf("  result:   FAILED: out of memory\n");
        grid_d4_batch_free(&b);
        return 1;
    }
    if (grid_objects_result_init(&mt, b.n, b.buf_bytes)) {
        printf("  result:   FAILED: out of memory\n");
        failed = 1;
    } else {
        failed = run_cpu(&b, c->bg_tie, &ref, &mt, &ref_ms);
        grid_objects_result_free(&mt);
    }
    if (!failed && req->gpu) failed = run_gpu(&b, c->bg_tie, &ref, ref_ms, req->dev->ordinal);
    else if (!failed) printf("  gpu:      not run\n  result:   ok on the CPU only (the GPU was not exercised)\n");
    grid_objects_result_free(&ref);
    grid_d4_batch_free(&b);
    return failed;
}

int gw_grid_objects_check(const gw_check_request *req, int *runs)
{
    const size_t n_grids = req->small ? 2000 : 100000;
    int failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) failures += run_case(&cases[c], n_grids, req);
    *runs = (int)(sizeof cases / sizeof cases[0]);
    return failures;
}

/* doctor: 1000 grids with per-grid random variants once on this device; 0 ok, 1 failed (reasons printed). */
int gw_grid_objects_doctor(int ordinal)
{
    grid_d4_batch b;
    grid_objects_result ref, got;
    gw_go_gpu g;
    gw_go_gpu_result res;
    char err[512], msg[1024];
    int failed = 0, call_failed = 0;
    if (grid_d4_batch_builtin(&b, 1000, 1, 1, 0, 0)) {
        printf("  grid_objects:         FAILED: out of memory\n");
        return 1;
    }
    if (grid_objects_result_init(&ref, b.n, b.buf_bytes)) {
        printf("  grid_objects:         FAILED: out of memory\n");
        grid_d4_batch_free(&b);
        return 1;
    }
    if (grid_objects_result_init(&got, b.n, b.buf_bytes)) {
        printf("  grid_objects:         FAILED: out of memory\n");
        grid_objects_result_free(&ref);
        grid_d4_batch_free(&b);
        return 1;
    }
    const uint64_t cells = grid_d4_batch_cells(&b);
    grid_objects_result_poison(&ref, 0xFE);
    const int rc = grid_objects_batch_ref(&b, GRID_OBJECTS_TIE_ARC_DSL, 0, &ref);
    if (rc != GRID_OBJECTS_OK) {
        printf("  grid_objects:         FAILED: grid_objects_ref: %s\n", grid_objects_status_str((grid_objects_status)rc));
        failed = 1;
    } else if (gw_go_gpu_init(&g, ordinal, &b, err, sizeof err)) {
        printf("  grid_objects:         FAILED: %s\n", err);
        failed = 1;
    } else {
        if (gw_go_gpu_call(&g, &b, GRID_OBJECTS_TIE_ARC_DSL, 0xFE, &got, &res, err, sizeof err)) {
            printf("  grid_objects:         FAILED: %s\n", err);
            failed = call_failed = 1;
        } else {
            const size_t diff = grid_objects_result_compare(&got, &ref, &b, msg, sizeof msg);
            if (res.status != GRID_OBJECTS_OK)
                printf("  grid_objects:         FAILED: the device rejected grid %zu: %s\n", res.status_index,
                       grid_objects_status_str(res.status));
            else if (diff)
                printf("  grid_objects:         FAILED: differs from grid_objects_ref: %s\n", msg);
            else
                printf("  grid_objects:         %zu grids, %" PRIu64 " cells, per-grid variants 0..7: equal to "
                       "grid_objects_ref (%.2f ms incl. transfers)%s\n", b.n, cells, res.ms_end_to_end, gw_cli_emulated_note());
            gw_cli_print_call_witness("    ", res.witness_receipt, res.witness_check, res.witness_violations, cells);
            failed = res.status != GRID_OBJECTS_OK || diff != 0 || res.witness_violations != 0;
        }
        /* after a failed call, its error is the one worth reporting: a sticky one fails the frees too */
        if (gw_go_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
            if (!call_failed) printf("  grid_objects:         FAILED: %s\n", err);
            failed = 1;
        }
    }
    grid_objects_result_free(&got);
    grid_objects_result_free(&ref);
    grid_d4_batch_free(&b);
    return failed;
}
