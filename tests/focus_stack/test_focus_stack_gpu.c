/* SPDX-License-Identifier: MIT
 * GPU tests of focus_stack_launch: every group of docs/focus_stack.md, "Test groups", through the same test
 * logic as the CPU reference tests (tests/focus_stack/focus_stack_cases.c), driven by a GPU runner, plus the
 * launcher's own rows: the realistic B1 and B2 shapes, a NULL witness, the legacy default stream.
 *
 * Every launch: upload the input (with 0xFFFF junk in the slack around it, so a read outside the image
 * shows), poison every output (idx 0xFF, ff 0xA5A5, floats NaN, slack included), reset the witness,
 * launch on our own stream, synchronise, download everything; then check the return code, the documented
 * invariants, the outputs against the oracle and byte for byte against focus_stack_ref (floats as bits),
 * the untouched slack, and last the witness (one launch, n*y*x items). A rejected call must leave every
 * device byte poisoned and the zeroed witness at zero. Each guard prints its own words before the test
 * stops, so the canaries (tests/focus_stack/focus_stack_canaries.cu) are named by the guard that must catch
 * them.
 *
 * The canary builds link this file unchanged with focus_stack_launch wrapped by a planted fault (--wrap, see
 * tests/focus_stack/CMakeLists.txt); nothing here knows about them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "focus_stack.h"
#include "focus_stack_cases.h"
#include "focus_stack_fixture.h"
#include "focus_stack_ref.h"
#include "gw_gpu_test.h"

typedef struct gpu_ctx {
    cudaStream_t stream;
    uint16_t *d_in_alloc;
    uint8_t *d_idx_alloc;
    uint16_t *d_ff_alloc;
    float *d_best_alloc, *d_focus_alloc;
    size_t pixel_cap, voxel_cap; /* elements, without the slack */
    gw_witness *d_witness;
    int no_witness;     /* pass NULL for d_witness (recording off) */
    int default_stream; /* launch on the legacy default stream (0) */
} gpu_ctx;

static gpu_ctx gpu; /* one per test process (Criterion runs every test in its own process) */

static void gpu_free_buffers(gpu_ctx *g)
{
    /* Errors are ignored here: this runs from .fini, also after a failed test. */
    cudaFree(g->d_in_alloc);
    cudaFree(g->d_idx_alloc);
    cudaFree(g->d_ff_alloc);
    cudaFree(g->d_best_alloc);
    cudaFree(g->d_focus_alloc);
    g->d_in_alloc = NULL, g->d_idx_alloc = NULL, g->d_ff_alloc = NULL, g->d_best_alloc = NULL, g->d_focus_alloc = NULL;
    g->pixel_cap = g->voxel_cap = 0;
}

static void gpu_fini(void)
{
    if (!gpu.stream) return; /* skipped or never started: no CUDA call */
    gpu_free_buffers(&gpu);
    cudaFree(gpu.d_witness);
    cudaStreamDestroy(gpu.stream);
    cudaDeviceReset(); /* compute-sanitizer's leak check reports what is still allocated at context teardown */
    memset(&gpu, 0, sizeof gpu);
}

static void gpu_start(gpu_ctx *g)
{
    if (g->stream) return;
    /* A blocking stream: it also orders after work on the legacy default stream (gw_witness_new's memset). */
    GW_CUDA(cudaStreamCreate(&g->stream));
    g->d_witness = gw_witness_new();
}

/* The runner allocates (launchers never do): buffers of exactly the case's size plus slack, reallocated
 * whenever the size changes, so that the slack really is the end of each allocation: a stray access past it
 * leaves the allocation (compute-sanitizer) instead of landing in a larger earlier case's stale memory. */
static void gpu_reserve(gpu_ctx *g, size_t pixels, size_t voxels)
{
    gpu_start(g);
    if (pixels != g->pixel_cap || voxels != g->voxel_cap) {
        gpu_free_buffers(g);
        GW_CUDA(cudaMalloc((void **)&g->d_in_alloc, (voxels + 2 * FS_SLACK) * sizeof *g->d_in_alloc));
        GW_CUDA(cudaMalloc((void **)&g->d_idx_alloc, (pixels + 2 * FS_SLACK) * sizeof *g->d_idx_alloc));
        GW_CUDA(cudaMalloc((void **)&g->d_ff_alloc, (pixels + 2 * FS_SLACK) * sizeof *g->d_ff_alloc));
        GW_CUDA(cudaMalloc((void **)&g->d_best_alloc, (pixels + 2 * FS_SLACK) * sizeof *g->d_best_alloc));
        GW_CUDA(cudaMalloc((void **)&g->d_focus_alloc, (voxels + 2 * FS_SLACK) * sizeof *g->d_focus_alloc));
        g->pixel_cap = pixels;
        g->voxel_cap = voxels;
    }
}

/* Everything the call may write gets the poison; the witness is zeroed. Stream-ordered. */
static void gpu_poison(gpu_ctx *g, size_t pixels, size_t voxels)
{
    const size_t px = pixels + 2 * FS_SLACK, vx = voxels + 2 * FS_SLACK;
    GW_CUDA(cudaMemsetAsync(g->d_idx_alloc, FS_POISON_IDX, px, g->stream));
    GW_CUDA(cudaMemsetAsync(g->d_ff_alloc, FS_POISON_FF & 0xFFu, px * sizeof *g->d_ff_alloc, g->stream));
    GW_CUDA(cudaMemsetAsync(g->d_best_alloc, FS_POISON_FLOAT & 0xFFu, px * sizeof *g->d_best_alloc, g->stream));
    GW_CUDA(cudaMemsetAsync(g->d_focus_alloc, FS_POISON_FLOAT & 0xFFu, vx * sizeof *g->d_focus_alloc, g->stream));
    gw_witness_reset(g->d_witness, g->stream);
}

/* Uploads c's input (with junk slack) and poisons everything the call may write. Stream-ordered. */
static void gpu_upload(gpu_ctx *g, const fs_case *c)
{
    gpu_reserve(g, c->pixels, c->voxels);
    /* Input with junk slack: a kernel that reads outside the image instead of applying the border rule sees
     * 65535s. */
    GW_CUDA(cudaMemsetAsync(g->d_in_alloc, 0xFF, (c->voxels + 2 * FS_SLACK) * sizeof *g->d_in_alloc, g->stream));
    GW_CUDA(cudaMemcpyAsync(g->d_in_alloc + FS_SLACK, c->in, c->voxels * sizeof *c->in, cudaMemcpyHostToDevice,
                            g->stream));
    gpu_poison(g, c->pixels, c->voxels);
}

static int gpu_run(void *vctx, const fs_case *c, focus_stack_params p, unsigned flags, fs_result *res)
{
    gpu_ctx *g = vctx;
    gpu_upload(g, c);
    cudaStream_t stream = g->stream;
    if (g->default_stream) {
        GW_CUDA(cudaStreamSynchronize(g->stream));
        stream = 0;
    }

    uint16_t *in = (flags & FS_NULL_IN) ? NULL : g->d_in_alloc + FS_SLACK;
    uint8_t *idx = (flags & FS_NULL_IDX) ? NULL : g->d_idx_alloc + FS_SLACK;
    uint16_t *ff = (flags & FS_NULL_FF) ? NULL : g->d_ff_alloc + FS_SLACK;
    float *best = (flags & FS_PASS_BEST) ? g->d_best_alloc + FS_SLACK : NULL;
    float *focus = (flags & FS_PASS_FOCUS) ? g->d_focus_alloc + FS_SLACK : NULL;
    const cudaError_t err =
        focus_stack_launch(&p, in, idx, ff, best, focus, g->no_witness ? NULL : g->d_witness, stream);
    /* The launcher answers cudaErrorInvalidValue for every broken rule; focus_stack_check names the rule,
     * which the shared cases compare with the reference's code. */
    const int rc = focus_stack_check(&p, in, idx, ff);
    cr_expect(err == (rc == FOCUS_STACK_OK ? cudaSuccess : cudaErrorInvalidValue),
              "focus_stack_launch returned %s, focus_stack_check %d (%s): want cudaSuccess exactly when the check "
              "passes, cudaErrorInvalidValue otherwise", cudaGetErrorName(err), rc, focus_stack_status_str(rc));
    GW_CUDA(cudaStreamSynchronize(stream));
    const cudaError_t last = cudaGetLastError();
    cr_expect(last == cudaSuccess, "focus_stack_launch returned %s and left a CUDA error behind: %s",
              cudaGetErrorName(err), cudaGetErrorName(last));

    const size_t px = c->pixels + 2 * FS_SLACK, vx = c->voxels + 2 * FS_SLACK;
    GW_CUDA(cudaMemcpy(res->idx_alloc, g->d_idx_alloc, px, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(res->ff_alloc, g->d_ff_alloc, px * sizeof *res->ff, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(res->best_alloc, g->d_best_alloc, px * sizeof *res->best, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(res->focus_alloc, g->d_focus_alloc, vx * sizeof *res->focus, cudaMemcpyDeviceToHost));

    /* The launcher must not write its input either. */
    uint16_t *back = malloc(c->voxels * sizeof *back);
    cr_assert(back != NULL);
    GW_CUDA(cudaMemcpy(back, g->d_in_alloc + FS_SLACK, c->voxels * sizeof *back, cudaMemcpyDeviceToHost));
    cr_expect(memcmp(back, c->in, c->voxels * sizeof *back) == 0, "focus_stack_launch changed its input");
    free(back);
    return rc;
}

static int gpu_check_witness(void *vctx, uint64_t launches, uint64_t items, char *msg, size_t msg_size)
{
    const gpu_ctx *g = vctx;
    /* With recording off the record must stay as zeroed, exactly as for a call that launches nothing. */
    return g->no_witness ? gw_check_witness(g->d_witness, 0, 0, msg, msg_size)
                         : gw_check_witness(g->d_witness, launches, items, msg, msg_size);
}

static const fs_runner runner_gpu = {"focus_stack_launch", gpu_run, gpu_check_witness, &gpu, 1};

TestSuite(focus_stack_gpu, .init = gw_gpu_test_init, .fini = gpu_fini);

#define GPU(test_name, call)                                                                                           \
    Test(focus_stack_gpu, test_name) { call(&runner_gpu); }

GPU(edge_ladder_random_values_match_the_reference, fs_case_ladder_random)
GPU(edge_ladder_equal_slices_give_idx_0, fs_case_ladder_equal_slices)
GPU(edge_ladder_constant_slices_follow_the_border_rules, fs_case_ladder_constant_slices)
GPU(edge_ladder_identical_saturated_patches_pick_the_first, fs_case_ladder_saturated)
GPU(edge_ladder_spikes_give_32v_on_1x1_zero_and_24v_inside, fs_case_ladder_spike)
GPU(interior_spike_patterns_follow_the_spec_tables, fs_case_spike_patterns_follow_the_spec_tables)
GPU(one_pixel_images_score_the_centre_taps_under_zero_and_0_otherwise, fs_case_one_pixel_images)
GPU(overflow_probes_reach_63748253760_and_2215083000, fs_case_overflow_probes)
GPU(odd_t1_sizes_and_tile_edges_match_the_reference, fs_case_odd_sizes)
GPU(all_parameter_combinations_match_the_reference, fs_case_all_combinations)
GPU(window_1_gives_the_same_bytes_as_window_0, fs_case_window_one_equals_zero)
GPU(null_best_or_focus_leave_idx_and_ff_unchanged, fs_case_optional_outputs_do_not_change_idx_and_ff)
GPU(log_k3_equals_lap_k5_away_from_the_edge, fs_case_log3_equals_lap5_in_the_interior)
GPU(windows_up_to_7567_fold_on_tiny_images, fs_case_large_windows_on_tiny_images)
GPU(windows_11_to_81_wider_than_a_tile_match_the_oracle, fs_case_windows_wider_than_a_tile)
GPU(blurred_checkerboard_slices_pick_the_sharp_one, fs_case_semantic_checkerboard)
GPU(bad_input_returns_the_first_failing_code_writes_nothing_and_launches_nothing, fs_case_bad_input)
GPU(the_edges_of_the_allowed_ranges_are_accepted, fs_case_limits_are_accepted)
GPU(two_runs_give_identical_bytes, fs_case_determinism)

/* ------------------------------------------------------------------ launcher-only checks */

/* On the emulated device (GW_GPU_EMULATED) the realistic shapes shrink to a few hundred pixels a side: the
 * same kernels, tiles cut at both edges, and several tiles per block (the emulated device has 4 SMs). */
#define REALISTIC(full, emulated) (GW_GPU_EMULATED ? (emulated) : (full))

/* B1 of docs/focus_stack.md, "Model": one realistic 17-slice 2189x2189 stack, every output, against the
 * reference (the oracle is skipped at this size; the reference uses every core). */
Test(focus_stack_gpu, realistic_b1_stack_1x17x2189x2189_matches_the_reference)
{
    gw_skip_under_sanitizer("a realistic-size case");
    fs_case c;
    fs_case_init(&c, 1, 17, REALISTIC(2189, 613), REALISTIC(2189, 411));
    fs_fill_random(&c, 65535, 0xB1u);
    fs_result res;
    fs_run_ok(&runner_gpu, &c, FS_PASS_ALL, NULL, &res);
    fs_result_free(&res);
    fs_case_free(&c);
}

/* B2: 4 stacks of 17x2189x1152 at the defaults with idx and ff only: the production fast kernel (focus NULL)
 * at a realistic size, where warps process more than one strip each. */
Test(focus_stack_gpu, realistic_b2_batch_4x17x2189x1152_at_the_defaults_matches_the_reference)
{
    gw_skip_under_sanitizer("a realistic-size case");
    fs_case c;
    fs_case_init(&c, REALISTIC(4, 2), 17, REALISTIC(2189, 389), REALISTIC(1152, 331));
    fs_fill_random(&c, 65535, 0xB2u);
    fs_result res;
    fs_run_ok(&runner_gpu, &c, 0, NULL, &res);
    fs_result_free(&res);
    fs_case_free(&c);
}

/* The same batch through the general kernel: LOG_ABS k=3, REFLECT101, window 3. */
Test(focus_stack_gpu, realistic_b2_batch_with_reflect101_and_window_3_matches_the_reference)
{
    gw_skip_under_sanitizer("a realistic-size case");
    fs_case c;
    fs_case_init(&c, REALISTIC(4, 2), 17, REALISTIC(2189, 389), REALISTIC(1152, 331));
    fs_fill_random(&c, 65535, 0xB3u);
    c.p.border = FOCUS_STACK_BORDER_REFLECT101;
    c.p.window = 3;
    fs_result res;
    fs_run_ok(&runner_gpu, &c, 0, NULL, &res);
    fs_result_free(&res);
    fs_case_free(&c);
}

Test(focus_stack_gpu, a_null_witness_turns_recording_off_and_the_results_stay_exact)
{
    fs_case c;
    fs_case_init(&c, 2, 5, 37, 53);
    fs_fill_random(&c, 65535, 0x4E1u);
    c.p.ksize = 5;
    fs_result res;
    gpu.no_witness = 1; /* the runner's witness check then requires the record to stay zero */
    fs_run_ok(&runner_gpu, &c, FS_PASS_ALL, NULL, &res);
    fs_result_free(&res);
    gpu.no_witness = 0; /* and with recording on, the same call is witnessed */
    fs_run_ok(&runner_gpu, &c, FS_PASS_ALL, NULL, &res);
    fs_result_free(&res);
    fs_case_free(&c);
}

/* The launch order (docs/architecture.md, "The launcher convention") on a real runtime: an error left pending
 * by someone else's call is returned as it is, still pending, and nothing is enqueued: every output keeps its
 * poison and the witness stays zero. Then the same call, with nothing pending, works. */
Test(focus_stack_gpu, an_error_pending_on_entry_is_returned_untouched_and_nothing_is_enqueued)
{
    fs_case c;
    fs_case_init(&c, 2, 5, 37, 53);
    fs_fill_random(&c, 65535, 0x9E5u);
    gpu_upload(&gpu, &c);
    GW_CUDA(cudaStreamSynchronize(gpu.stream));

    const cudaError_t pending = gw_plant_pending_error();
    const cudaError_t err =
        focus_stack_launch(&c.p, gpu.d_in_alloc + FS_SLACK, gpu.d_idx_alloc + FS_SLACK, gpu.d_ff_alloc + FS_SLACK,
                           gpu.d_best_alloc + FS_SLACK, gpu.d_focus_alloc + FS_SLACK, gpu.d_witness, gpu.stream);
    cr_expect_eq(err, pending, "focus_stack_launch returned %s, want the pending %s", cudaGetErrorName(err),
                 cudaGetErrorName(pending));
    const cudaError_t still = cudaGetLastError(); /* reads and clears it */
    cr_expect_eq(still, pending, "after the call the pending error is %s, want %s untouched", cudaGetErrorName(still),
                 cudaGetErrorName(pending));
    GW_CUDA(cudaStreamSynchronize(gpu.stream));
    const size_t px = c.pixels + 2 * FS_SLACK;
    uint8_t *idx = malloc(px);
    uint16_t *ff = malloc(px * sizeof *ff);
    cr_assert(idx && ff);
    GW_CUDA(cudaMemcpy(idx, gpu.d_idx_alloc, px, cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(ff, gpu.d_ff_alloc, px * sizeof *ff, cudaMemcpyDeviceToHost));
    size_t written = 0;
    for (size_t i = 0; i < px; i++) written += idx[i] != FS_POISON_IDX || ff[i] != FS_POISON_FF;
    cr_expect(written == 0, "%zu pixels of idx or ff lost their poison: the launcher enqueued work with an error "
              "pending", written);
    free(idx);
    free(ff);
    gw_assert_witness(gpu.d_witness, 0, 0);

    fs_result res; /* nothing pending now: the same call goes through */
    fs_run_ok(&runner_gpu, &c, FS_PASS_ALL, NULL, &res);
    fs_result_free(&res);
    fs_case_free(&c);
}

Test(focus_stack_gpu, the_legacy_default_stream_works)
{
    fs_case c;
    fs_case_init(&c, 2, 3, 41, 29);
    fs_fill_random(&c, 65535, 0xD5u);
    c.p.ksize = 7;
    c.p.window = 5;
    fs_result res;
    gpu.default_stream = 1;
    fs_run_ok(&runner_gpu, &c, FS_PASS_ALL, NULL, &res);
    fs_result_free(&res);
    gpu.default_stream = 0;
    fs_case_free(&c);
}

Test(focus_stack_gpu, many_calls_in_a_row_each_write_every_output)
{
    /* Alternating cases on the same buffers: stale output from the previous call is re-poisoned first, so a
     * call that skips work shows. */
    fs_case a, b;
    fs_case_init(&a, 1, 4, 31, 45);
    fs_fill_random(&a, 65535, 0xCA1u);
    fs_case_init(&b, 1, 4, 31, 45);
    fs_fill_random(&b, 3, 0xCA2u);
    for (int i = 0; i < 6; i++) {
        fs_result res;
        fs_run_ok(&runner_gpu, i % 2 ? &b : &a, FS_PASS_ALL, NULL, &res);
        fs_result_free(&res);
    }
    fs_case_free(&a);
    fs_case_free(&b);
}
