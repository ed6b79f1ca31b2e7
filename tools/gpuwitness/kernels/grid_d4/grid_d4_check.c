/* SPDX-License-Identifier: MIT
 * grid_d4 in `check` and `doctor`: the built-in ARC-shaped batches, the CPU reference against its threaded
 * twin, and witnessed GPU calls compared bit for bit with the reference.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "grid_d4_batch.h"
#include "grid_d4_host.h"
#include "grid_d4_ref.h"
#include "gw_kernel.h"

typedef struct check_case {
    const char *label;
    int per_grid_ops;
    int batch_op;
    int aligned16;
} check_case;

/* Both code paths of grid_d4 (per-grid ops on packed grids; one op on 16-byte aligned grids, which may take
 * the vector path) with the same shapes and cells. */
static const check_case cases[] = {
    {"per-grid random ops, packed offsets", 1, 0, 0},
    {"batch op rot90, 16-byte aligned offsets", 0, GRID_D4_ROT90, 1},
};

/* The CPU part: grid_d4_ref and grid_d4_ref_mt on poisoned outputs, which must agree. 0 or 1. */
static int run_cpu(const grid_d4_batch *b, grid_d4_result *ref, grid_d4_result *mt, double *ref_ms)
{
    const grid_d4_params p = grid_d4_batch_params(b);
    size_t bad = 0;
    grid_d4_status v = grid_d4_validate(&p, b->in, ref->out, b->offset, b->height, b->width, ref->out_height,
                                        ref->out_width, b->ops, &bad);
    if (v != GRID_D4_OK) {
        printf("  result:   FAILED: the built-in batch is invalid at grid %zu: %s\n", bad, grid_d4_status_str(v));
        return 1;
    }
    grid_d4_result_poison(ref, 0xFF);
    grid_d4_result_poison(mt, 0xFF);
    double t0 = gw_cli_now_ms();
    int rc = grid_d4_ref(&p, b->in, ref->out, b->offset, b->height, b->width, ref->out_height, ref->out_width, b->ops);
    *ref_ms = gw_cli_now_ms() - t0;
    if (rc != GRID_D4_OK) {
        printf("  result:   FAILED: grid_d4_ref returned %d: %s\n", rc, grid_d4_status_str((grid_d4_status)rc));
        return 1;
    }
    t0 = gw_cli_now_ms();
    rc = grid_d4_ref_mt(&p, b->in, mt->out, b->offset, b->height, b->width, mt->out_height, mt->out_width, b->ops);
    const double mt_ms = gw_cli_now_ms() - t0;
    if (rc != GRID_D4_OK) {
        printf("  result:   FAILED: grid_d4_ref_mt returned %d: %s\n", rc, grid_d4_status_str((grid_d4_status)rc));
        return 1;
    }
    char msg[1024];
    const size_t diff = grid_d4_result_compare(b, mt, ref, msg, sizeof msg);
    printf("  cpu:      grid_d4_ref %.2f ms (1 thread), grid_d4_ref_mt %.2f ms (OpenMP): %s\n", *ref_ms, mt_ms,
           diff ? "DIFFERENT" : "identical bytes");
    if (diff) {
        printf("  result:   FAILED: grid_d4_ref_mt differs from grid_d4_ref:\n%s", msg);
        return 1;
    }
    return 0;
}

/* The GPU part: two witnessed calls (poison 0xFF, then 0x5A), each compared with the reference. 0 or 1. */
static int run_gpu(const grid_d4_batch *b, grid_d4_result *ref, double ref_ms, int ordinal)
{
    char err[512], msg[1024];
    gw_d4_gpu g;
    grid_d4_result got;
    gw_d4_gpu_result res[2];
    int failed = 0, call_failed = 0;
    if (gw_d4_gpu_init(&g, ordinal, b, err, sizeof err)) {
        printf("  result:   FAILED: %s\n", err);
        return 1;
    }
    if (grid_d4_result_init(&got, b)) {
        printf("  result:   FAILED: out of memory\n");
        gw_d4_gpu_free(&g, NULL, 0);
        return 1;
    }
    const uint8_t poison[2] = {0xFF, 0x5A};
    int shown = -1; /* the call whose witness is printed: the first that failed, else the warm one */
    for (int rep = 0; rep < 2 && !failed; rep++) {
        if (gw_d4_gpu_call(&g, b, poison[rep], &got, &res[rep], err, sizeof err)) {
            printf("  result:   FAILED: call %d: %s\n", rep + 1, err);
            failed = call_failed = 1;
            break;
        }
        shown = rep;
        if (res[rep].status != GRID_D4_OK) {
            printf("  result:   FAILED: call %d: the device rejected grid %zu: %s\n", rep + 1, res[rep].status_index,
                   grid_d4_status_str(res[rep].status));
            failed = 1;
        }
        if (grid_d4_result_repoison_outside(ref, b, poison[rep])) {
            printf("  result:   FAILED: out of memory\n");
            failed = 1;
        } else if (grid_d4_result_compare(b, &got, ref, msg, sizeof msg)) {
            printf("  result:   FAILED: call %d (outputs poisoned with 0x%02X) differs from grid_d4_ref:\n%s", rep + 1,
                   (unsigned)poison[rep], msg);
            failed = 1;
        }
        if (res[rep].witness_violations) {
            printf("  result:   FAILED: call %d: the witness does not prove GPU execution (%d violation(s))\n",
                   rep + 1, res[rep].witness_violations);
            failed = 1;
        }
    }
    if (!failed) {
        const gw_d4_gpu_result *r = &res[1]; /* the warm call */
        printf("  %s %.2f ms incl. transfers, kernel %.3f ms (second of 2 calls); grid_d4_ref / %s = %.1fx%s\n",
               gw_cli_gpu_label(), r->ms_end_to_end, r->ms_kernel, gw_cli_emulated() ? "emulated" : "gpu",
               r->ms_end_to_end > 0 ? ref_ms / r->ms_end_to_end : 0.0, gw_cli_emulated_note());
    }
    if (shown >= 0) {
        printf("  %s\n", res[shown].witness_receipt);
        /* warnings come prefixed by gw_witness_check */
        gw_cli_print_lines(stdout, res[shown].witness_check, "            ");
    }
    if (!failed)
        printf("  result:   ok: both calls bit-exact with grid_d4_ref (gaps kept the poison), witness checks out%s\n",
               gw_cli_emulated_note());
    grid_d4_result_free(&got);
    /* after a failed call, its error is the one worth reporting: a sticky one fails the frees too */
    if (gw_d4_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
        if (!call_failed) printf("  result:   FAILED: %s\n", err);
        failed = 1;
    }
    return failed;
}

static int run_case(const check_case *c, size_t n_grids, const gw_check_request *req)
{
    grid_d4_batch b;
    grid_d4_result ref, mt;
    printf("grid_d4 [%s]\n", c->label);
    if (grid_d4_batch_builtin(&b, n_grids, req->seed, c->per_grid_ops, c->batch_op, c->aligned16)) {
        printf("  result:   FAILED: out of memory building %zu grids\n", n_grids);
        return 1;
    }
    const uint64_t cells = grid_d4_batch_cells(&b);
    printf("  problem:  %zu grids, %" PRIu64 " cells (%.1f MB, buffer %.1f MB), ARC-AGI-1 training shapes, "
           "cells 0..9, seed %" PRIu64 "\n",
           b.n, cells, (double)cells / 1e6, (double)b.buf_bytes / 1e6, req->seed);
    if (req->gpu)
        printf("  device:   cuda:%d%s\n", req->dev->ordinal, gw_cli_emulated_note());
    else
        printf("  device:   cpu (%s)\n", req->dev->fell_back || req->dev->reason[0] ? "GPU part skipped" : "--device cpu");
    int failed = 0;
    double ref_ms = 0;
    if (grid_d4_result_init(&ref, &b)) {
        printf("  result:   FAILED: out of memory\n");
        grid_d4_batch_free(&b);
        return 1;
    }
    if (grid_d4_result_init(&mt, &b)) {
        printf("  result:   FAILED: out of memory\n");
        failed = 1;
    } else {
        failed = run_cpu(&b, &ref, &mt, &ref_ms);
        grid_d4_result_free(&mt);
    }
    if (!failed && req->gpu) failed = run_gpu(&b, &ref, ref_ms, req->dev->ordinal);
    else if (!failed) printf("  gpu:      not run\n  result:   ok on the CPU only (the GPU was not exercised)\n");
    grid_d4_result_free(&ref);
    grid_d4_batch_free(&b);
    return failed;
}

int gw_grid_d4_check(const gw_check_request *req, int *runs)
{
    const size_t n_grids = req->small ? 2000 : 100000;
    int failures = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) failures += run_case(&cases[c], n_grids, req);
    *runs = (int)(sizeof cases / sizeof cases[0]);
    return failures;
}

/* doctor: 1000 grids with per-grid ops once on this device; 0 ok, 1 failed (reasons printed). */
int gw_grid_d4_doctor(int ordinal)
{
    grid_d4_batch b;
    grid_d4_result ref, got;
    gw_d4_gpu g;
    gw_d4_gpu_result res;
    char err[512], msg[1024];
    int failed = 0, call_failed = 0;
    if (grid_d4_batch_builtin(&b, 1000, 1, 1, 0, 0)) {
        printf("  grid_d4:              FAILED: out of memory\n");
        return 1;
    }
    if (grid_d4_result_init(&ref, &b)) {
        printf("  grid_d4:              FAILED: out of memory\n");
        grid_d4_batch_free(&b);
        return 1;
    }
    if (grid_d4_result_init(&got, &b)) {
        printf("  grid_d4:              FAILED: out of memory\n");
        grid_d4_result_free(&ref);
        grid_d4_batch_free(&b);
        return 1;
    }
    const uint64_t cells = grid_d4_batch_cells(&b);
    const grid_d4_params p = grid_d4_batch_params(&b);
    grid_d4_result_poison(&ref, 0xFF);
    const int rc = grid_d4_ref(&p, b.in, ref.out, b.offset, b.height, b.width, ref.out_height, ref.out_width, b.ops);
    if (rc != GRID_D4_OK) {
        printf("  grid_d4:              FAILED: grid_d4_ref: %s\n", grid_d4_status_str((grid_d4_status)rc));
        failed = 1;
    } else if (gw_d4_gpu_init(&g, ordinal, &b, err, sizeof err)) {
        printf("  grid_d4:              FAILED: %s\n", err);
        failed = 1;
    } else {
        if (gw_d4_gpu_call(&g, &b, 0xFF, &got, &res, err, sizeof err)) {
            printf("  grid_d4:              FAILED: %s\n", err);
            failed = call_failed = 1;
        } else {
            const size_t diff = grid_d4_result_compare(&b, &got, &ref, msg, sizeof msg);
            if (res.status != GRID_D4_OK)
                printf("  grid_d4:              FAILED: the device rejected grid %zu: %s\n", res.status_index,
                       grid_d4_status_str(res.status));
            else if (diff)
                printf("  grid_d4:              FAILED: differs from grid_d4_ref:\n%s", msg);
            else
                printf("  grid_d4:              %zu grids, %" PRIu64 " cells, per-grid ops: bit-exact with grid_d4_ref "
                       "(%.2f ms incl. transfers)%s\n", b.n, cells, res.ms_end_to_end, gw_cli_emulated_note());
            gw_cli_print_call_witness("    ", res.witness_receipt, res.witness_check, res.witness_violations, cells);
            failed = res.status != GRID_D4_OK || diff != 0 || res.witness_violations != 0;
        }
        /* after a failed call, its error is the one worth reporting: a sticky one fails the frees too */
        if (gw_d4_gpu_free(&g, call_failed ? NULL : err, sizeof err)) {
            if (!call_failed) printf("  grid_d4:              FAILED: %s\n", err);
            failed = 1;
        }
    }
    grid_d4_result_free(&got);
    grid_d4_result_free(&ref);
    grid_d4_batch_free(&b);
    return failed;
}
