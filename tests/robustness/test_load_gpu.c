/* SPDX-License-Identifier: MIT
 * Load: the largest realistic problem of each kernel through its CLI host path (tools/gw_*_gpu.c), on a GPU.
 * Each host path checks the request against the device's free memory before allocating; here the request
 * must fit (an 80 GB H100 holds each with room to spare), so a memory error is a failure, not a skip.
 *   grid_d4       4e6 grids drawn from the ARC-AGI-1 shape distribution (grid_d4_batch_random), per-grid ops,
 *                 every byte against grid_d4_ref_mt, witness checked;
 *   focus_stack   16 stacks of 2189 x 2189 x 17 (2.6 GB of input), witness checked, stacks 0, 7 and 15
 *                 against focus_stack_ref (every core), byte for byte;
 *   ex2d_patch    the full synthetic r frame (tier XL_FRAME, 4,700 patches), every stage's witness checked,
 *                 no output left poisoned, and the first and last 47 patches (a subbundle each) against
 *                 ex2d_ref_patches at the tolerances of docs/ex2d_patch.md, "Numerics and tolerances".
 * Sizes and times go to the log (cr_log_info). Skipped under GW_UNDER_SANITIZER=1 (hours under racecheck),
 * skipped (77) without a GPU and a failure with GW_REQUIRE_GPU=1 (tests/support/gw_gpu_test.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"
#include "focus_stack_ref.h"
#include "grid_d4_ref.h"
#include "grid_d4_host.h"
#include "ex2d_patch_host.h"
#include "focus_stack_host.h"
#include "focus_stack_synth.h"
#include "gw_gpu_test.h"


static int device(void)
{
    int d = 0;
    GW_CUDA(cudaGetDevice(&d));
    return d;
}

static void log_memory(const char *when)
{
    size_t f = 0, t = 0;
    GW_CUDA(cudaMemGetInfo(&f, &t));
    cr_log_info("%s: %.2f GB of %.2f GB device memory free", when, (double)f / 1e9, (double)t / 1e9);
}

TestSuite(load, .init = gw_gpu_test_init, .timeout = 1800);

Test(load, grid_d4_four_million_arc_grids_match_the_reference)
{
    gw_skip_under_sanitizer("grid_d4 over 4e6 grids");
    char err[1024], msg[1024];
    grid_d4_batch b;
    grid_d4_result ref, got;
    double t = gw_cli_now_ms();
    cr_assert_eq(grid_d4_batch_builtin(&b, 4000000, 2024, 1, 0, 0), 0, "out of host memory");
    cr_assert(grid_d4_result_init(&ref, &b) == 0 && grid_d4_result_init(&got, &b) == 0, "out of host memory");
    const grid_d4_params p = grid_d4_batch_params(&b);
    grid_d4_result_poison(&ref, 0xFF);
    cr_assert_eq(grid_d4_ref_mt(&p, b.in, ref.out, b.offset, b.height, b.width, ref.out_height, ref.out_width,
                                b.ops), GRID_D4_OK);
    cr_log_info("grid_d4: %zu grids, %llu cells, %llu bytes per buffer; batch and reference in %.0f ms", b.n,
                (unsigned long long)grid_d4_batch_cells(&b), (unsigned long long)b.buf_bytes, gw_cli_now_ms() - t);
    log_memory("grid_d4 before init");
    gw_d4_gpu g;
    gw_d4_gpu_result res;
    cr_assert_eq(gw_d4_gpu_init(&g, device(), &b, err, sizeof err), 0, "%s", err);
    const int rc = gw_d4_gpu_call(&g, &b, 0xFF, &got, &res, err, sizeof err);
    char free_err[512] = "";
    const int free_rc = gw_d4_gpu_free(&g, free_err, sizeof free_err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(free_rc, 0, "%s", free_err);
    cr_log_info("grid_d4: kernel %.2f ms, end to end %.1f ms; %s", res.ms_kernel, res.ms_end_to_end,
                res.witness_receipt);
    cr_expect_eq(res.status, GRID_D4_OK, "device status %s at grid %zu", grid_d4_status_str(res.status),
                 res.status_index);
    cr_expect_eq(res.witness_violations, 0, "witness check failed:\n%s", res.witness_check);
    cr_expect_eq(grid_d4_result_compare(&b, &got, &ref, msg, sizeof msg), 0, "result bytes differ:\n%s", msg);
    grid_d4_result_free(&got);
    grid_d4_result_free(&ref);
    grid_d4_batch_free(&b);
}

/* One stack s of a batch's outputs, as a batch of one. */
static gw_focus_out stack_view(const gw_focus_out *o, size_t px, int s)
{
    const size_t at = (size_t)s * px;
    return (gw_focus_out){.idx = o->idx + at, .ff = o->ff + at, .best = o->best ? o->best + at : NULL, .focus = NULL};
}

Test(load, focus_stack_sixteen_stacks_of_2189_squared_by_17_match_the_reference_on_three_stacks)
{
    gw_skip_under_sanitizer("focus_stack over 16 stacks of 2189 x 2189 x 17");
    char err[1024], msg[1024];
    const focus_stack_params p = {.n = 16, .z = 17, .y = 2189, .x = 2189, .ksize = 3};
    const size_t stack_px = (size_t)p.y * p.x, stack_voxels = stack_px * (size_t)p.z;
    const size_t voxels = stack_voxels * (size_t)p.n;
    uint16_t *in = malloc(voxels * sizeof *in);
    cr_assert(in, "out of host memory (%zu bytes of input)", voxels * sizeof *in);
    double t = gw_cli_now_ms();
    focus_stack_random_u16(in, voxels, 77, 4095);
    gw_focus_out got;
    cr_assert_eq(gw_focus_out_alloc(&got, p, 1, 0), 0, "out of host memory");
    cr_log_info("focus_stack: %d stacks of %d x %d x %d, %zu bytes of input; made in %.0f ms", p.n, p.z, p.y, p.x,
                voxels * sizeof *in, gw_cli_now_ms() - t);
    log_memory("focus_stack before init");
    gw_focus_gpu g;
    gw_focus_gpu_result res;
    cr_assert_eq(gw_focus_gpu_init(&g, device(), p, 1, 0, err, sizeof err), 0, "%s", err);
    const int rc = gw_focus_gpu_call(&g, in, 0xFF, &got, &res, err, sizeof err);
    char free_err[512] = "";
    const int free_rc = gw_focus_gpu_free(&g, free_err, sizeof free_err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(free_rc, 0, "%s", free_err);
    cr_log_info("focus_stack: kernel %.2f ms, end to end %.1f ms; %s", res.ms_kernel, res.ms_end_to_end,
                res.witness_receipt);
    cr_expect_eq(res.witness_violations, 0, "witness check failed:\n%s", res.witness_check);

    const focus_stack_params one = {.n = 1, .z = p.z, .y = p.y, .x = p.x, .ksize = p.ksize};
    gw_focus_out ref;
    cr_assert_eq(gw_focus_out_alloc(&ref, one, 1, 0), 0, "out of host memory");
    const int sample[] = {0, 7, 15};
    for (size_t i = 0; i < sizeof sample / sizeof sample[0]; i++) {
        const int s = sample[i];
        t = gw_cli_now_ms();
        cr_assert_eq(focus_stack_ref(&one, in + (size_t)s * stack_voxels, ref.idx, ref.ff, ref.best, NULL, 0),
                     FOCUS_STACK_OK);
        const gw_focus_out view = stack_view(&got, stack_px, s);
        cr_expect_eq(gw_focus_out_compare(&view, &ref, one, msg, sizeof msg), 0, "stack %d differs: %s", s, msg);
        cr_log_info("focus_stack: stack %d checked against the reference (%.0f ms)", s, gw_cli_now_ms() - t);
    }
    gw_focus_out_free(&ref);
    gw_focus_out_free(&got);
    free(in);
}

/* Elements of a that hold the 0xFF poison (NaN with every bit set). */
static size_t poisoned(const double *a, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &a[i], sizeof bits);
        count += bits == UINT64_MAX;
    }
    return count;
}

Test(load, ex2d_patch_full_synthetic_frame_runs_with_every_witness_and_matches_the_reference_on_two_subbundles)
{
    gw_skip_under_sanitizer("ex2d_patch over the full synthetic frame");
    char err[1024], msg[2048];
    ex2d_frame_config cfg;
    ex2d_frame f;
    double t = gw_cli_now_ms();
    cr_assert_eq(ex2d_frame_config_tier(&cfg, EX2D_TIER_XL_FRAME), 0);
    cr_assert_eq(ex2d_frame_make(&cfg, &f), 0, "ex2d_frame_make (XL_FRAME)");
    ex2d_outputs got, ref;
    cr_assert(ex2d_ref_outputs_alloc(&f.params, f.npatch, &got) == 0 &&
              ex2d_ref_outputs_alloc(&f.params, f.npatch, &ref) == 0, "out of host memory");
    const size_t nframe = gw_ex2d_frame_elems(&f), nrdiag = gw_ex2d_rdiag_elems(&f);
    cr_log_info("ex2d_patch: %d patches, image %d x %d, outputs %zu x 4 + %zu doubles; frame made in %.0f ms",
                f.npatch, f.params.npix_x, f.params.npix_y, nframe, nrdiag, gw_cli_now_ms() - t);
    log_memory("ex2d_patch before the run");
    gw_ex2d_gpu_result res;
    cr_assert_eq(gw_ex2d_gpu_run(device(), &f, 0, &got, &res, NULL, err, sizeof err), 0, "%s", err);
    cr_log_info("ex2d_patch: %d batches of up to %d patches, kernels %.1f ms, end to end %.1f ms", res.batches,
                res.max_batch, res.ms_kernel, res.ms_end_to_end);
    cr_assert_eq(res.check.code, EX2D_OK, "device validation rejected patch %d: %s", res.check.patch,
                 ex2d_error_str(res.check.code));
    cr_expect_eq(res.witness_violations, 0, "witness check failed:\n%s", res.witness_check);
    cr_expect_eq(poisoned(got.flux, nframe) + poisoned(got.ivar, nframe) + poisoned(got.chi2pix, nframe) +
                     poisoned(got.pixmask_fraction, nframe) + poisoned(got.rdiags, nrdiag), 0,
                 "outputs left poisoned: no patch wrote them");

    /* The reference over two subbundles: ref starts as a copy of got and ex2d_ref_patches overwrites the
     * elements those patches own, so the full-frame comparison below checks exactly those. */
    memcpy(ref.flux, got.flux, nframe * sizeof(double));
    memcpy(ref.ivar, got.ivar, nframe * sizeof(double));
    memcpy(ref.chi2pix, got.chi2pix, nframe * sizeof(double));
    memcpy(ref.pixmask_fraction, got.pixmask_fraction, nframe * sizeof(double));
    memcpy(ref.rdiags, got.rdiags, nrdiag * sizeof(double));
    memcpy(ref.info, got.info, (size_t)f.npatch * sizeof *got.info);
    enum { SUBBUNDLE = 47 };
    void *ws = NULL;
    size_t ws_bytes = 0;
    cr_assert_eq(ex2d_ref_workspace_alloc(&f.params, SUBBUNDLE, &ws, &ws_bytes), 0, "reference workspace");
    const int firsts[] = {0, f.npatch - SUBBUNDLE};
    t = gw_cli_now_ms();
    for (int i = 0; i < 2; i++)
        cr_assert_eq(ex2d_ref_patches(&f.params, &f.inputs, f.spots, firsts[i], SUBBUNDLE, SUBBUNDLE, ws, ws_bytes,
                                      &ref, 0), 0, "ex2d_ref_patches from patch %d", firsts[i]);
    free(ws);
    cr_log_info("ex2d_patch: reference over patches 0..%d and %d..%d in %.0f ms", SUBBUNDLE - 1, firsts[1],
                f.npatch - 1, gw_cli_now_ms() - t);
    cr_expect_eq(gw_ex2d_compare(&f, &got, &ref, 0, msg, sizeof msg), 0, "differs from the reference: %s", msg);
    ex2d_ref_outputs_free(&ref);
    ex2d_ref_outputs_free(&got);
    ex2d_frame_free(&f);
}
