/* SPDX-License-Identifier: MIT
 * Bad-input table of the ex2d_patch launchers: every host-rule row of ex2d_bad_cases.c through the
 * ex2d_*_launch of each stage its `fns` names. Every launcher runs ex2d_check_args and its own checks
 * (nbatch, max_batch, spots, info, outputs) before any CUDA call (kernels/ex2d_patch/ex2d_patch.cu,
 * "Launchers"), so this test needs no GPU (label host): the pointers are host memory the launcher must never
 * touch. A row passes when the launcher returns cudaErrorInvalidValue, ex2d_check_args (the call the header
 * tells users to make for the reason) names the rule for the rows it covers, no CUDA call failed inside
 * (without a driver any call would fail; on a GPU it would leave its error in cudaGetLastError), and
 * nothing in the arena or the witness records changed. Device-validation rows and check-word rows are the
 * GPU tests' business: the launchers check those on the device.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "bad_input_util.h"
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

static void expect_launch_rejects(unsigned fn, const char *fn_name)
{
    ex2d_arena ar;
    ex2d_arena_open(&ar);
    const ex2d_params *p = &ar.f.params;
    const size_t bins = (size_t)p->nspec_out * p->nwave_out, pixels = (size_t)p->npix_x * p->npix_y;
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
        bi_bytes b[9];
        bi_bytes_take(&b[0], witness, sizeof witness);
        bi_bytes_take(&b[1], ar.ws, ar.ws_bytes);
        bi_bytes_take(&b[2], ar.spots_out, ar.spots_doubles * sizeof(double));
        bi_bytes_take(&b[3], ar.out.flux, bins * sizeof(double));
        bi_bytes_take(&b[4], ar.out.rdiags, bins * (size_t)(2 * p->ndiag + 1) * sizeof(double));
        bi_bytes_take(&b[5], ar.out.info, (size_t)ar.f.npatch * sizeof(ex2d_patch_info));
        bi_bytes_take(&b[6], ar.patches, (size_t)ar.f.npatch * sizeof *ar.patches);
        bi_bytes_take(&b[7], ar.image, pixels * sizeof(double));
        bi_bytes_take(&b[8], ar.ivar, pixels * sizeof(double));

        const cudaError_t last_before = cudaGetLastError();
        const cudaError_t rc = launch(fn, &a, witness);
        const cudaError_t last_after = cudaGetLastError();
        cr_expect_eq(rc, cudaErrorInvalidValue, "%s: returned %s, want cudaErrorInvalidValue", row,
                     cudaGetErrorName(rc));
        cr_expect_eq(last_after, last_before, "%s: a CUDA call inside the launcher failed with %s: it went past its "
                     "argument checks", row, cudaGetErrorName(last_after));
        if (c->fns & EX2D_FN_CHECK) { /* the reason, as the header says to get it */
            const int why = ex2d_check_args(a.p, a.in, a.patch_first, a.npatch, a.max_batch, a.ws, a.ws_bytes);
            cr_expect_eq(why, c->code, "%s: ex2d_check_args gives %d, want %d", row, why, c->code);
            bi_expect_words(row, ex2d_error_str(why), c->words);
        }
        static const char *what[] = {"the witness records", "the workspace", "the K1 spots output", "flux",
                                     "rdiags", "info", "the patch table", "the image", "ivar"};
        for (int k = 0; k < 9; k++) bi_bytes_expect_unchanged(&b[k], row, what[k]);
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
