/* SPDX-License-Identifier: MIT
 * The order of grid_d4_launch's checks (docs/architecture.md, "The launcher convention"), on any machine:
 * the executable links the recording stand-in for the CUDA runtime (tests/support/gw_fake_cuda.h), so every
 * runtime call the launcher makes is logged and none reaches a GPU; the pointers are host memory the
 * launcher must never touch (label host).
 *
 * Bad arguments: every row of grid_d4_bad_cases.c that the launcher rejects on the host (the metadata rows
 * are found on the device: test_grid_d4_gpu.c). A row passes when the launcher returns
 * cudaErrorInvalidValue having made no runtime call at all, nothing in the arena or the witness changed,
 * and, for the arguments the reference also has, grid_d4_validate explains the rejection with the row's
 * status. A pending error: with valid arguments, the launcher's one call is cudaPeekAtLastError and it
 * returns that error untouched.
 */
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "bad_input_util.h"
#include "gw_fake_cuda.h"
#include "grid_d4_bad_cases.h"
#include "grid_d4_ref.h"

Test(grid_d4_launch, rejects_host_visible_bad_arguments_before_any_cuda_call)
{
    size_t rows = 0;
    for (size_t i = 0; i < d4_bad_case_count; i++) {
        const d4_bad_case *c = &d4_bad_cases[i];
        if (c->launch != D4_LAUNCH_REJECTS) continue; /* metadata: the device pre-pass finds it */
        d4_arena arena;
        d4_args a;
        d4_arena_init(&arena, &a);
        c->breaks(&a);
        gw_witness witness;
        memset(&witness, 0, sizeof witness);
        bi_bytes before, witness_before;
        bi_bytes_take(&before, &arena, sizeof arena);
        bi_bytes_take(&witness_before, &witness, sizeof witness);

        gw_fake_cuda_reset(cudaSuccess);
        const cudaError_t rc = grid_d4_launch(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height,
                                              a.out_width, a.ops, a.status, &witness, (cudaStream_t)0);
        cr_expect_eq(rc, cudaErrorInvalidValue, "row \"%s\": grid_d4_launch returned %s (%s), want "
                     "cudaErrorInvalidValue", c->name, cudaGetErrorName(rc), cudaGetErrorString(rc));
        cr_expect_eq(gw_fake_cuda_calls(), 0, "row \"%s\": the launcher called the runtime (%s) before rejecting "
                     "its arguments", c->name, gw_fake_cuda_log());
        bi_bytes_expect_unchanged(&before, c->name, "the arena (every array the launcher was given)");
        bi_bytes_expect_unchanged(&witness_before, c->name, "the witness record");

        if (c->ref_sees) {
            const grid_d4_status s = grid_d4_validate(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height,
                                                      a.out_width, a.ops, NULL);
            cr_expect_eq((int)s, c->status, "row \"%s\": grid_d4_validate gives %d (%s) for the arguments the "
                         "launcher rejected, want %d", c->name, (int)s, grid_d4_status_str(s), c->status);
        }
        if (c->status != D4_NO_STATUS)
            bi_expect_words(c->name, grid_d4_status_str((grid_d4_status)c->status), c->words);
        rows++;
    }
    cr_log_info("grid_d4_launch: %zu bad inputs rejected before any CUDA call", rows);
}

/* An error pending on entry (as if an earlier kernel had faulted) is returned untouched before anything is
 * enqueued; with none pending, the same call goes on past cudaPeekAtLastError (the control that shows the
 * log sees the launcher's calls at all). */
Test(grid_d4_launch, returns_an_error_pending_on_entry_untouched_before_enqueuing_anything)
{
    d4_arena arena;
    d4_args a;
    d4_arena_init(&arena, &a);
    gw_witness witness;
    memset(&witness, 0, sizeof witness);
    bi_bytes before, witness_before;
    bi_bytes_take(&before, &arena, sizeof arena);
    bi_bytes_take(&witness_before, &witness, sizeof witness);

    gw_fake_cuda_reset(cudaErrorIllegalAddress);
    cudaError_t rc = grid_d4_launch(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height, a.out_width, a.ops,
                                    a.status, &witness, (cudaStream_t)0);
    cr_expect_eq(rc, cudaErrorIllegalAddress, "grid_d4_launch returned %s, want the pending cudaErrorIllegalAddress",
                 cudaGetErrorName(rc));
    cr_expect(gw_fake_cuda_calls() == 1 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
              "with an error pending the launcher called %s; want cudaPeekAtLastError alone", gw_fake_cuda_log());
    bi_bytes_expect_unchanged(&before, "valid arguments, an error pending", "the arena");
    bi_bytes_expect_unchanged(&witness_before, "valid arguments, an error pending", "the witness record");

    gw_fake_cuda_reset(cudaSuccess);
    rc = grid_d4_launch(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height, a.out_width, a.ops, a.status,
                        &witness, (cudaStream_t)0);
    cr_expect(gw_fake_cuda_calls() >= 2 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
              "with no error pending the launcher called %s; want cudaPeekAtLastError, then its work",
              gw_fake_cuda_log());
    cr_expect_eq(rc, GW_FAKE_CUDA_STOP, "grid_d4_launch returned %s, want the failing call's %s",
                 cudaGetErrorName(rc), cudaGetErrorName(GW_FAKE_CUDA_STOP));
}
