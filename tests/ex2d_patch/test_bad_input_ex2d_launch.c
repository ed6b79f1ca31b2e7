/* SPDX-License-Identifier: MIT
 * The order of the ex2d_patch launchers' checks (docs/architecture.md, "The launcher convention"), on any
 * machine: the executable links the recording stand-in for the CUDA runtime (tests/support/gw_fake_cuda.h),
 * so every runtime call a launcher makes is logged and none reaches a GPU; the pointers are host memory the
 * launchers must never touch (label host).
 *
 * Bad arguments: every host-rule row of ex2d_bad_cases.c through the ex2d_*_launch of each stage its `fns`
 * names. A row passes when the launcher returns cudaErrorInvalidValue having made no runtime call at all,
 * ex2d_check_args (the call the header tells users to make for the reason) names the rule for the rows it
 * covers, and nothing in the arena or the witness records changed. Device-validation rows and check-word
 * rows are the GPU tests' business: the launchers check those on the device. A pending error: with valid
 * arguments, every launcher's one call is cudaPeekAtLastError and it returns that error untouched, so
 * ex2d_patches_launch cannot stop half-enqueued because of it.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "bad_input_util.h"
#include "gw_fake_cuda.h"
#include "ex2d_bad_cases.h"

static cudaError_t launch(unsigned fn, const ex2d_args *a, gw_witness *w)
{
    const cudaStream_t s = (cudaStream_t)0;
    switch (fn) {
    case EX2D_FN_VALIDATE:
        return ex2d_validate_launch(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, w, s);
    case EX2D_FN_SPOTS: return ex2d_spots_launch(a->p, a->in, a->entry_first, a->count, a->spots_out, w, s);
    case EX2D_FN_NORMAL:
        return ex2d_normal_launch(a->p, a->in, a->spots, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch,
                                  w, s);
    case EX2D_FN_CHOLESKY:
        return ex2d_cholesky_launch(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, a->info,
                                    w, s);
    case EX2D_FN_CBLOCKS:
        return ex2d_cblocks_launch(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, a->info,
                                   w, s);
    case EX2D_FN_JACOBI:
        return ex2d_jacobi_launch(a->p, a->in, a->patch_first, a->npatch, a->ws, a->ws_bytes, a->max_batch, a->info,
                                  w, s);
    case EX2D_FN_OUTPUTS:
        return ex2d_outputs_launch(a->p, a->in, a->spots, a->patch_first, a->npatch, a->ws, a->ws_bytes,
                                   a->max_batch, a->out, w, s);
    case EX2D_FN_PATCHES:
        return ex2d_patches_launch(a->p, a->in, a->spots, a->patch_first, a->npatch, a->max_batch, a->ws, a->ws_bytes,
                                   a->out, w, s);
    }
    cr_assert_fail("no launcher for %u", fn);
    return cudaErrorUnknown;
}

/* Everything a launcher was given, taken before the call and compared after it. */
enum { ARENA_PARTS = 9 };
static void arena_take(bi_bytes b[ARENA_PARTS], const ex2d_arena *ar, const gw_witness *witness)
{
    const ex2d_params *p = &ar->f.params;
    const size_t bins = (size_t)p->nspec_out * p->nwave_out, pixels = (size_t)p->npix_x * p->npix_y;
    bi_bytes_take(&b[0], witness, EX2D_WITNESS_SLOTS * sizeof *witness);
    bi_bytes_take(&b[1], ar->ws, ar->ws_bytes);
    bi_bytes_take(&b[2], ar->spots_out, ar->spots_doubles * sizeof(double));
    bi_bytes_take(&b[3], ar->out.flux, bins * sizeof(double));
    bi_bytes_take(&b[4], ar->out.rdiags, bins * (size_t)(2 * p->ndiag + 1) * sizeof(double));
    bi_bytes_take(&b[5], ar->out.info, (size_t)ar->f.npatch * sizeof(ex2d_patch_info));
    bi_bytes_take(&b[6], ar->patches, (size_t)ar->f.npatch * sizeof *ar->patches);
    bi_bytes_take(&b[7], ar->image, pixels * sizeof(double));
    bi_bytes_take(&b[8], ar->ivar, pixels * sizeof(double));
}

static void arena_expect_unchanged(bi_bytes b[ARENA_PARTS], const char *row)
{
    static const char *const what[ARENA_PARTS] = {"the witness records", "the workspace", "the K1 spots output",
                                                  "flux", "rdiags", "info", "the patch table", "the image", "ivar"};
    for (int k = 0; k < ARENA_PARTS; k++) bi_bytes_expect_unchanged(&b[k], row, what[k]);
}

static void expect_launch_rejects(unsigned fn, const char *fn_name)
{
    ex2d_arena ar;
    ex2d_arena_open(&ar);
    size_t rows = 0;
    for (size_t i = 0; i < ex2d_bad_case_count; i++) {
        const ex2d_bad_case *c = &ex2d_bad_cases[i];
        if (!(c->fns & fn) || c->patch != -1) continue;
        rows++;
        ex2d_args a;
        ex2d_arena_reset(&ar, &a);
        c->breaks(&a, &ar);
        char row[200];
        snprintf(row, sizeof row, "%s, row \"%s\"", fn_name, c->name);
        gw_witness witness[EX2D_WITNESS_SLOTS];
        memset(witness, 0, sizeof witness);
        bi_bytes b[ARENA_PARTS];
        arena_take(b, &ar, witness);

        gw_fake_cuda_reset(cudaSuccess);
        const cudaError_t rc = launch(fn, &a, witness);
        cr_expect_eq(rc, cudaErrorInvalidValue, "%s: returned %s, want cudaErrorInvalidValue", row,
                     cudaGetErrorName(rc));
        cr_expect_eq(gw_fake_cuda_calls(), 0, "%s: the launcher called the runtime (%s) before rejecting its "
                     "arguments", row, gw_fake_cuda_log());
        if (c->fns & EX2D_FN_CHECK) { /* the reason, as the header says to get it */
            const int why = ex2d_check_args(a.p, a.in, a.patch_first, a.npatch, a.max_batch, a.ws, a.ws_bytes);
            cr_expect_eq(why, c->code, "%s: ex2d_check_args gives %d, want %d", row, why, c->code);
            bi_expect_words(row, ex2d_error_str(why), c->words);
        }
        arena_expect_unchanged(b, row);
    }
    cr_expect_gt(rows, 0, "%s: no rows", fn_name);
    cr_log_info("%s: %zu bad inputs rejected before any CUDA call", fn_name, rows);
    ex2d_arena_close(&ar);
}

Test(ex2d_validate_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_VALIDATE, "ex2d_validate_launch");
}
Test(ex2d_spots_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_SPOTS, "ex2d_spots_launch");
}
Test(ex2d_normal_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_NORMAL, "ex2d_normal_launch");
}
Test(ex2d_cholesky_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_CHOLESKY, "ex2d_cholesky_launch");
}
Test(ex2d_cblocks_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_CBLOCKS, "ex2d_cblocks_launch");
}
Test(ex2d_jacobi_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_JACOBI, "ex2d_jacobi_launch");
}
Test(ex2d_outputs_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_OUTPUTS, "ex2d_outputs_launch");
}
Test(ex2d_patches_launch, rejects_bad_arguments_before_any_cuda_call)
{
    expect_launch_rejects(EX2D_FN_PATCHES, "ex2d_patches_launch");
}

/* An error pending on entry (as if an earlier kernel had faulted) is returned untouched by every launcher
 * before anything is enqueued; with none pending, the same call goes on past cudaPeekAtLastError (the
 * control that shows the log sees the launcher's calls at all). */
Test(ex2d_patch_launchers, return_an_error_pending_on_entry_untouched_before_enqueuing_anything)
{
    static const struct { unsigned fn; const char *name; } launchers[] = {
        {EX2D_FN_VALIDATE, "ex2d_validate_launch"}, {EX2D_FN_SPOTS, "ex2d_spots_launch"},
        {EX2D_FN_NORMAL, "ex2d_normal_launch"},     {EX2D_FN_CHOLESKY, "ex2d_cholesky_launch"},
        {EX2D_FN_CBLOCKS, "ex2d_cblocks_launch"},   {EX2D_FN_JACOBI, "ex2d_jacobi_launch"},
        {EX2D_FN_OUTPUTS, "ex2d_outputs_launch"},   {EX2D_FN_PATCHES, "ex2d_patches_launch"}};
    ex2d_arena ar;
    ex2d_arena_open(&ar);
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        ex2d_args a;
        ex2d_arena_reset(&ar, &a);
        a.npatch = a.max_batch; /* one batch: valid for the single-stage launchers too */
        cr_assert_eq(ex2d_check_args(a.p, a.in, a.patch_first, a.npatch, a.max_batch, a.ws, a.ws_bytes), EX2D_OK,
                     "the arena's arguments are valid");
        gw_witness witness[EX2D_WITNESS_SLOTS];
        memset(witness, 0, sizeof witness);
        bi_bytes b[ARENA_PARTS];
        arena_take(b, &ar, witness);

        gw_fake_cuda_reset(cudaErrorIllegalAddress);
        const cudaError_t rc = launch(launchers[i].fn, &a, witness);
        cr_expect_eq(rc, cudaErrorIllegalAddress, "%s returned %s, want the pending cudaErrorIllegalAddress",
                     launchers[i].name, cudaGetErrorName(rc));
        cr_expect(gw_fake_cuda_calls() == 1 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
                  "%s, an error pending: it called %s; want cudaPeekAtLastError alone", launchers[i].name,
                  gw_fake_cuda_log());
        arena_expect_unchanged(b, launchers[i].name);

        gw_fake_cuda_reset(cudaSuccess);
        (void)launch(launchers[i].fn, &a, witness);
        cr_expect(gw_fake_cuda_calls() >= 2 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
                  "%s, no error pending: it called %s; want cudaPeekAtLastError, then its work", launchers[i].name,
                  gw_fake_cuda_log());
    }
    ex2d_arena_close(&ar);
}

/* K6's shared-memory attribute is set to this device's opt-in maximum minus K6's static shared memory,
 * whatever the call's m: two host threads with different m set the same value, so neither can reset it under
 * the other's launch (a value that followed m could make the larger m's launch fail). */
Test(ex2d_jacobi_launch, sets_the_same_shared_memory_attribute_for_every_m)
{
    ex2d_arena ar;
    ex2d_arena_open(&ar);
    int value[2] = {0, 0}, m[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        ex2d_args a;
        ex2d_arena_reset(&ar, &a);
        a.npatch = a.max_batch;
        if (i == 1) a.params.m -= 2; /* a smaller m: the workspace stays large enough */
        m[i] = a.params.m;
        cr_assert_eq(ex2d_check_args(a.p, a.in, a.patch_first, a.npatch, a.max_batch, a.ws, a.ws_bytes), EX2D_OK,
                     "m = %d: the arguments are valid", m[i]);
        gw_witness witness[EX2D_WITNESS_SLOTS];
        memset(witness, 0, sizeof witness);
        for (unsigned fn = EX2D_FN_JACOBI; fn; fn = fn == EX2D_FN_JACOBI ? EX2D_FN_PATCHES : 0) {
            gw_fake_cuda_reset(cudaSuccess);
            gw_fake_cuda_let_work();
            const cudaError_t rc = launch(fn, &a, witness);
            cr_expect_eq(rc, cudaSuccess, "m = %d: %s (calls: %s)", m[i], cudaGetErrorName(rc), gw_fake_cuda_log());
            const int set = gw_fake_cuda_max_dynamic_shared();
            cr_expect_eq(set, GW_FAKE_CUDA_ATTRIBUTE - GW_FAKE_CUDA_STATIC_SHARED,
                         "m = %d, %s: K6's attribute set to %d, want the opt-in maximum %d minus the static %d",
                         m[i], fn == EX2D_FN_JACOBI ? "ex2d_jacobi_launch" : "ex2d_patches_launch", set,
                         GW_FAKE_CUDA_ATTRIBUTE, GW_FAKE_CUDA_STATIC_SHARED);
            value[i] = set;
        }
    }
    cr_expect_eq(value[0], value[1], "m = %d sets %d, m = %d sets %d: concurrent callers would race", m[0], value[0],
                 m[1], value[1]);
    ex2d_arena_close(&ar);
}
