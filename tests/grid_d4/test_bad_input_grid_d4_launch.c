/* SPDX-License-Identifier: MIT
 * Bad-input table of grid_d4_launch's host-side checks: every row of grid_d4_bad_cases.c that the launcher
 * rejects before launching (the metadata rows are found on the device: test_grid_d4_gpu.c). These checks
 * come before any CUDA call, so this test needs no GPU and runs on every CI machine (label host): the
 * pointers are host memory the launcher must never touch.
 *
 * A row passes when the launcher returns cudaErrorInvalidValue, no CUDA call failed inside it (on a machine
 * without a driver any call would have returned cudaErrorInsufficientDriver instead; on a GPU it would
 * leave its error in cudaGetLastError), nothing in the arena or the witness changed, and, for the
 * arguments the reference also has, grid_d4_validate explains the rejection with the row's status.
 */
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "bad_input_util.h"
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

        const cudaError_t last_before = cudaGetLastError();
        const cudaError_t rc = grid_d4_launch(a.p, a.in, a.out, a.offset, a.height, a.width, a.out_height,
                                              a.out_width, a.ops, a.status, &witness, (cudaStream_t)0);
        const cudaError_t last_after = cudaGetLastError();
        cr_expect_eq(rc, cudaErrorInvalidValue, "row \"%s\": grid_d4_launch returned %s (%s), want "
                     "cudaErrorInvalidValue", c->name, cudaGetErrorName(rc), cudaGetErrorString(rc));
        cr_expect_eq(last_after, last_before, "row \"%s\": a CUDA call inside the launcher failed with %s: it went "
                     "past its argument checks", c->name, cudaGetErrorName(last_after));
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
