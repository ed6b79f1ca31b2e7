/* SPDX-License-Identifier: MIT
 * The order of focus_stack_launch's checks (docs/architecture.md, "The launcher convention"), on any
 * machine: the executable links the recording stand-in for the CUDA runtime (tests/support/gw_fake_cuda.h),
 * so every runtime call the launcher makes is logged and none reaches a GPU; the pointers are host memory
 * the launcher must never touch (label host).
 *
 * Bad arguments: every row of focus_stack_bad_cases.c. A row passes when the launcher returns
 * cudaErrorInvalidValue having made no runtime call at all, focus_stack_check names the row's rule, and
 * nothing in the arena or the witness changed. A pending error: with valid arguments, the launcher's one
 * call is cudaPeekAtLastError and it returns that error untouched.
 */
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "bad_input_util.h"
#include "gw_fake_cuda.h"
#include "focus_stack_bad_cases.h"

Test(focus_stack_launch, rejects_bad_arguments_before_any_cuda_call)
{
    for (size_t i = 0; i < fs_bad_case_count; i++) {
        const fs_bad_case *c = &fs_bad_cases[i];
        fs_arena arena;
        fs_args a;
        fs_arena_init(&arena, &a);
        c->breaks(&a);
        gw_witness witness;
        memset(&witness, 0, sizeof witness);
        bi_bytes before, witness_before;
        bi_bytes_take(&before, &arena, sizeof arena);
        bi_bytes_take(&witness_before, &witness, sizeof witness);

        gw_fake_cuda_reset(cudaSuccess);
        const cudaError_t err =
            focus_stack_launch(&a.p, a.in, a.idx, a.ff, a.best, a.focus, &witness, (cudaStream_t)0);
        const size_t calls = gw_fake_cuda_calls();
        const int rc = focus_stack_check(&a.p, a.in, a.idx, a.ff);
        cr_expect_eq(err, cudaErrorInvalidValue, "row \"%s\": focus_stack_launch returned %s, want "
                     "cudaErrorInvalidValue", c->name, cudaGetErrorName(err));
        cr_expect_eq(rc, c->code, "row \"%s\": focus_stack_check returned %d (%s), want %d (%s)", c->name, rc,
                     focus_stack_status_str(rc), c->code, focus_stack_status_str(c->code));
        cr_expect_eq(calls, 0, "row \"%s\": the launcher called the runtime (%s) before rejecting its arguments",
                     c->name, gw_fake_cuda_log());
        bi_expect_words(c->name, focus_stack_status_str(rc), c->words);
        bi_bytes_expect_unchanged(&before, c->name, "the arena (every array the launcher was given)");
        bi_bytes_expect_unchanged(&witness_before, c->name, "the witness record");
    }
    cr_log_info("focus_stack_launch: %zu bad inputs rejected before any CUDA call", fs_bad_case_count);
}

/* An error pending on entry (as if an earlier kernel had faulted) is returned untouched before anything is
 * enqueued; with none pending, the same call goes on past cudaPeekAtLastError (the control that shows the
 * log sees the launcher's calls at all). */
Test(focus_stack_launch, returns_an_error_pending_on_entry_untouched_before_enqueuing_anything)
{
    fs_arena arena;
    fs_args a;
    fs_arena_init(&arena, &a);
    cr_assert_eq(focus_stack_check(&a.p, a.in, a.idx, a.ff), FOCUS_STACK_OK, "the arena's arguments are valid");
    gw_witness witness;
    memset(&witness, 0, sizeof witness);
    bi_bytes before, witness_before;
    bi_bytes_take(&before, &arena, sizeof arena);
    bi_bytes_take(&witness_before, &witness, sizeof witness);

    gw_fake_cuda_reset(cudaErrorIllegalAddress);
    cudaError_t rc = focus_stack_launch(&a.p, a.in, a.idx, a.ff, a.best, a.focus, &witness, (cudaStream_t)0);
    cr_expect_eq(rc, cudaErrorIllegalAddress,
                 "focus_stack_launch returned %s, want the pending cudaErrorIllegalAddress", cudaGetErrorName(rc));
    cr_expect(gw_fake_cuda_calls() == 1 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
              "with an error pending the launcher called %s; want cudaPeekAtLastError alone", gw_fake_cuda_log());
    bi_bytes_expect_unchanged(&before, "valid arguments, an error pending", "the arena");
    bi_bytes_expect_unchanged(&witness_before, "valid arguments, an error pending", "the witness record");

    gw_fake_cuda_reset(cudaSuccess);
    rc = focus_stack_launch(&a.p, a.in, a.idx, a.ff, a.best, a.focus, &witness, (cudaStream_t)0);
    cr_expect(gw_fake_cuda_calls() >= 2 && strcmp(gw_fake_cuda_call(0), "cudaPeekAtLastError") == 0,
              "with no error pending the launcher called %s; want cudaPeekAtLastError, then its work",
              gw_fake_cuda_log());
    cr_expect_eq(rc, GW_FAKE_CUDA_STOP, "focus_stack_launch returned %s, want the failing call's %s",
                 cudaGetErrorName(rc), cudaGetErrorName(GW_FAKE_CUDA_STOP));
}
