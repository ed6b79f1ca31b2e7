/* SPDX-License-Identifier: MIT
 * Bad-input table of focus_stack_launch: every row of focus_stack_bad_cases.c. The launcher runs
 * focus_stack_check before any CUDA call, so this test needs no GPU and runs on every CI machine (label
 * host): the pointers are host memory the launcher must never touch. A row passes when the launcher returns
 * cudaErrorInvalidValue, focus_stack_check names the row's rule, no CUDA call failed inside the launcher
 * (without a driver any call would fail and return its own error; on a GPU it would leave its error in
 * cudaGetLastError), and nothing in the arena or the witness changed.
 */
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "bad_input_util.h"
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

        const cudaError_t last_before = cudaGetLastError();
        const cudaError_t err =
            focus_stack_launch(&a.p, a.in, a.idx, a.ff, a.best, a.focus, &witness, (cudaStream_t)0);
        const cudaError_t last_after = cudaGetLastError();
        const int rc = focus_stack_check(&a.p, a.in, a.idx, a.ff);
        cr_expect_eq(err, cudaErrorInvalidValue, "row \"%s\": focus_stack_launch returned %s, want "
                     "cudaErrorInvalidValue", c->name, cudaGetErrorName(err));
        cr_expect_eq(rc, c->code, "row \"%s\": focus_stack_check returned %d (%s), want %d (%s)", c->name, rc,
                     focus_stack_status_str(rc), c->code, focus_stack_status_str(c->code));
        cr_expect_eq(last_after, last_before, "row \"%s\": a CUDA call inside the launcher failed with %s: it went "
                     "past its argument checks", c->name, cudaGetErrorName(last_after));
        bi_expect_words(c->name, focus_stack_status_str(rc), c->words);
        bi_bytes_expect_unchanged(&before, c->name, "the arena (every array the launcher was given)");
        bi_bytes_expect_unchanged(&witness_before, c->name, "the witness record");
    }
    cr_log_info("focus_stack_launch: %zu bad inputs rejected before any CUDA call", fs_bad_case_count);
}
