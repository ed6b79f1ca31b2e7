/* SPDX-License-Identifier: MIT
 * CPU tests of the focus_stack reference (reference/focus_stack/focus_stack_ref.c): every group of
 * docs/focus_stack.md, "Test groups", that does not need a GPU (items 1-7 and 9), run on focus_stack_ref
 * through the same fs_runner the GPU test uses, plus what only the reference has: n_threads, the
 * scratch-free fallback, and the oracle's own anchors in docs/focus_stack.md (tables, border examples, the
 * header example).
 *
 * Every group runs single-threaded; the threads test compares n_threads 1, 0 (all cores), 2, 3, -1 and 16, and
 * two more hold both schedules of docs/focus_stack.md, "Threads" (tiles, shared planes) and many tilings to
 * the oracle. The time the schedules take, per shape, is test_focus_stack_ref_shapes.c's.
 *
 * GW_FS_QUICK=1 (set by the memcheck registration) shrinks the T1 shapes, the large-window and semantic
 * sweeps, drops 16 threads, and skips the fallback test (Valgrind ignores RLIMIT_AS): Valgrind runs ~50x
 * slower and the large sizes add no code path the smaller ones miss.
 */
#define _GNU_SOURCE /* mallopt, malloc_trim */
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "focus_stack_cases.h"
#include "focus_stack_fixture.h"
#include "focus_stack_ref.h"
#include "gw_test_util.h"

typedef struct ref_ctx {
    int n_threads;
} ref_ctx;

static int ref_run(void *vctx, const fs_case *c, focus_stack_params p, unsigned flags, fs_result *res)
{
    const ref_ctx *ctx = vctx;
    return focus_stack_ref(&p, (flags & FS_NULL_IN) ? NULL : c->in, (flags & FS_NULL_IDX) ? NULL : res->idx,
                           (flags & FS_NULL_FF) ? NULL : res->ff, (flags & FS_PASS_BEST) ? res->best : NULL,
                           (flags & FS_PASS_FOCUS) ? res->focus : NULL, ctx->n_threads);
}

static ref_ctx single = {1};
static const fs_runner runner_ref = {"focus_stack_ref", ref_run, NULL, &single, 0};

#define REF(test_name, call)                                                                                           \
    Test(focus_stack_ref, test_name) { call(&runner_ref); }

REF(edge_ladder_random_values_match_the_oracle, fs_case_ladder_random)
REF(edge_ladder_equal_slices_give_idx_0, fs_case_ladder_equal_slices)
REF(edge_ladder_constant_slices_follow_the_border_rules, fs_case_ladder_constant_slices)
REF(edge_ladder_identical_saturated_patches_pick_the_first, fs_case_ladder_saturated)
REF(edge_ladder_spikes_give_32v_on_1x1_zero_and_24v_inside, fs_case_ladder_spike)
REF(interior_spike_patterns_follow_the_spec_tables, fs_case_spike_patterns_follow_the_spec_tables)
REF(one_pixel_images_score_the_centre_taps_under_zero_and_0_otherwise, fs_case_one_pixel_images)
REF(overflow_probes_reach_63748253760_and_2215083000, fs_case_overflow_probes)
REF(odd_t1_sizes_and_tile_edges_match_the_oracle, fs_case_odd_sizes)
REF(all_parameter_combinations_match_the_oracle, fs_case_all_combinations)
REF(window_1_gives_the_same_bytes_as_window_0, fs_case_window_one_equals_zero)
REF(null_best_or_focus_leave_idx_and_ff_unchanged, fs_case_optional_outputs_do_not_change_idx_and_ff)
REF(log_k3_equals_lap_k5_away_from_the_edge, fs_case_log3_equals_lap5_in_the_interior)
REF(windows_up_to_7567_fold_on_tiny_images, fs_case_large_windows_on_tiny_images)
REF(windows_11_to_81_wider_than_a_tile_match_the_oracle, fs_case_windows_wider_than_a_tile)
REF(blurred_checkerboard_slices_pick_the_sharp_one, fs_case_semantic_checkerboard)
REF(bad_input_returns_the_first_failing_code_and_writes_nothing, fs_case_bad_input)
REF(the_edges_of_the_allowed_ranges_are_accepted, fs_case_limits_are_accepted)
REF(two_runs_give_identical_bytes, fs_case_determinism)

/* ------------------------------------------------------------------ threads ("Test groups", item 9) */

Test(focus_stack_ref, n_threads_1_0_2_3_minus_1_and_16_give_identical_bytes)
{
    fs_case c;
    fs_case_init(&c, 2, 6, 67, 45);
    fs_fill_random(&c, 65535, 0x7EADu);
    static const int thread_counts[] = {1, 0, 2, 3, -1, 16};
    const int T = fs_quick() ? 5 : (int)(sizeof thread_counts / sizeof thread_counts[0]);
    const focus_stack_params params[3] = {
        {.n = 2, .z = 6, .y = 67, .x = 45, .ksize = 5, .measure = FOCUS_STACK_LOG_ABS,
         .border = FOCUS_STACK_BORDER_REFLECT101, .window = 5},
        {.n = 2, .z = 6, .y = 67, .x = 45, .ksize = 7, .measure = FOCUS_STACK_LAP_ABS,
         .border = FOCUS_STACK_BORDER_ZERO, .window = 0},
        {.n = 2, .z = 6, .y = 67, .x = 45, .ksize = 3, .measure = FOCUS_STACK_LOG_ABS,
         .border = FOCUS_STACK_BORDER_REPLICATE, .window = 9},
    };
    for (int i = 0; i < 3; i++) {
        c.p = params[i];
        fs_result first;
        for (int t = 0; t < T; t++) {
            ref_ctx ctx = {thread_counts[t]};
            char name[64];
            snprintf(name, sizeof name, "focus_stack_ref (n_threads %d)", thread_counts[t]);
            const fs_runner r = {name, ref_run, NULL, &ctx, 0};
            fs_result res;
            fs_run_ok(&r, &c, FS_PASS_ALL, NULL, &res); /* each also equals the oracle */
            if (t == 0) {
                first = res;
                continue;
            }
            char what[320];
            cr_assert(fs_result_equal(&first, &res, FS_PASS_ALL), "n_threads %d differs from n_threads 1 [%s]",
                      thread_counts[t], fs_describe(&c, c.p, what, sizeof what));
            fs_result_free(&res);
        }
        fs_result_free(&first);
    }
    fs_case_free(&c);
}

/* ------------------------------------------------ the two schedules of docs/focus_stack.md, "Threads" */

/* focus_stack_ref on n_threads threads gives the oracle's scores, ff and idx for case c. */
static void ref_matches_oracle(const fs_case *c, const int64_t *scores, int n_threads)
{
    ref_ctx ctx = {n_threads};
    char name[64];
    snprintf(name, sizeof name, "focus_stack_ref (n_threads %d)", n_threads);
    const fs_runner r = {name, ref_run, NULL, &ctx, 0};
    fs_result res;
    fs_run_ok(&r, c, FS_PASS_ALL, scores, &res);
    fs_result_free(&res);
}

/* Each shape is chosen for one branch of the reference's schedule (docs/focus_stack.md, "The CPU reference",
 * "Threads"); the expected bytes come from the oracle, and every thread count must give them:
 *   3000 stacks of 1x1 and 500 of 2x3: one unit of work per stack (its only tile), thousands of units;
 *   1 stack of 41 slices of 160x160 and 2 of 255 of 59x70: 2 to 12 tiles per plane, whose halos overlap
 *     their neighbours' and fold at the image edges;
 *   3x3 slices of 260x260: tiles in both axes; one row of 40,000 pixels: tiles along x only;
 *   2x3 slices of 67x45 with 16 threads: as many tiles as the halo allows;
 *   3 stacks of 255 slices of 40x40 with 4 threads: the halo (r + rw >= 3) leaves one tile per plane, and 3
 *     units run on 3 of the 4 threads. */
Test(focus_stack_ref, both_schedules_and_every_tiling_match_the_oracle)
{
    static const struct {
        int n, z, y, x;
        int threads[3];
        int quick; /* the parameter set run under GW_FS_QUICK=1 (Valgrind), with the first two thread counts */
    } shapes[] = {
        {3000, 7, 1, 1, {1, 2, 3}, 1},   {500, 9, 2, 3, {1, 2, 0}, 2},    {1, 41, 160, 160, {1, 2, 3}, 0},
        {2, 255, 59, 70, {1, 3, 0}, 0}, {3, 3, 260, 260, {1, 2, 3}, 1}, {1, 2, 1, 40000, {1, 2, 3}, 2},
        {2, 3, 67, 45, {16, 1, 2}, 1},  {3, 255, 40, 40, {4, 1, 3}, 2},
    };
    static const focus_stack_params params[3] = {
        {.ksize = 3, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_ZERO, .window = 0},
        {.ksize = 5, .measure = FOCUS_STACK_LAP_ABS, .border = FOCUS_STACK_BORDER_REFLECT101, .window = 5},
        {.ksize = 7, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_REPLICATE, .window = 3},
    };
    const int S = (int)(sizeof shapes / sizeof shapes[0]);
    for (int s = 0; s < S; s++) {
        fs_case c;
        fs_case_init(&c, shapes[s].n, shapes[s].z, shapes[s].y, shapes[s].x);
        /* values 0..3: ties everywhere, so the carried best and the first-maximum rule are both tested */
        fs_fill_random(&c, s % 2 ? 3 : 65535, 0x5C4Eu + (uint64_t)s);
        for (int i = 0; i < 3; i++) {
            if (fs_quick() && i != shapes[s].quick) continue;
            focus_stack_params p = params[i];
            p.n = c.p.n, p.z = c.p.z, p.y = c.p.y, p.x = c.p.x;
            c.p = p;
            int64_t *scores = fs_oracle_scores(&c);
            for (int t = 0; t < 3; t++)
                if (!(fs_quick() && t == 2)) ref_matches_oracle(&c, scores, shapes[s].threads[t]);
            free(scores);
        }
        fs_case_free(&c);
    }
}

/* The other schedule: planes of 2^18 pixels or more that give fewer tiles than threads are shared between
 * the threads, slice by slice, in segments of 16,384 pixels that end mid-row. A window of 131 on 520x520
 * images leaves one tile per plane (tile sides are at least 8 halos), so 2 stacks with 3 threads take that
 * schedule, and with 1 or 2 threads the tiles. */
Test(focus_stack_ref, planes_too_wide_a_window_to_tile_are_shared_between_threads_and_match_the_oracle)
{
    static const focus_stack_params params[3] = {
        {.ksize = 3, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_ZERO, .window = 131},
        {.ksize = 5, .measure = FOCUS_STACK_LAP_ABS, .border = FOCUS_STACK_BORDER_REFLECT101, .window = 131},
        {.ksize = 7, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_REPLICATE, .window = 131},
    };
    static const int threads[3] = {3, 1, 2};
    /* under Valgrind: one stack of one slice (still one tile, fewer units than threads), one parameter set */
    fs_case c;
    fs_case_init(&c, fs_quick() ? 1 : 2, fs_quick() ? 1 : 3, 520, 520);
    fs_fill_random(&c, 65535, 0x5A4Eu);
    for (int i = 0; i < (fs_quick() ? 1 : 3); i++) {
        focus_stack_params p = params[i];
        p.n = c.p.n, p.z = c.p.z, p.y = c.p.y, p.x = c.p.x;
        c.p = p;
        int64_t *scores = fs_oracle_scores(&c);
        for (int t = 0; t < (fs_quick() ? 2 : 3); t++) ref_matches_oracle(&c, scores, threads[t]);
        free(scores);
    }
    fs_case_free(&c);
}

/* ------------------------------------------------------------------ memory: the scratch-free fallback */

/* Address-space size of this process, from /proc/self/statm (pages). */
static size_t address_space_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert(f != NULL, "cannot read /proc/self/statm");
    unsigned long pages = 0;
    cr_assert(fscanf(f, "%lu", &pages) == 1, "cannot parse /proc/self/statm");
    fclose(f);
    return (size_t)pages * 4096u;
}

Test(focus_stack_ref, without_memory_for_scratch_the_pixel_by_pixel_fallback_gives_the_same_bytes)
{
    if (fs_quick()) {
        cr_log_info("GW_FS_QUICK=1: fallback test not run (Valgrind does not apply RLIMIT_AS to the program)");
        return;
    }
    /* Large allocations straight from mmap, so the address-space limit below decides every one of them
     * (glibc's dynamic threshold would otherwise serve them from a heap that may have room). */
    mallopt(M_MMAP_THRESHOLD, 16 * 1024);
    enum { Y = 48, X = 80 };
    const size_t plane_bytes = (size_t)Y * X * sizeof(int64_t); /* 30 kB: above the threshold */
    fs_case c;
    fs_case_init(&c, 2, 3, Y, X);
    fs_fill_random(&c, 65535, 0xFA11u);
    static const focus_stack_params params[5] = {
        {.ksize = 3, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_ZERO, .window = 0},
        {.ksize = 5, .measure = FOCUS_STACK_LAP_ABS, .border = FOCUS_STACK_BORDER_REFLECT101, .window = 3},
        {.ksize = 7, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_REPLICATE, .window = 0},
        {.ksize = 3, .measure = FOCUS_STACK_LAP_ABS, .border = FOCUS_STACK_BORDER_ZERO, .window = 5},
        {.ksize = 5, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_REFLECT101, .window = 3},
    };
    fs_result want[5], got[5][2];
    for (int i = 0; i < 5; i++) {
        focus_stack_params p = params[i];
        p.n = 2, p.z = 3, p.y = Y, p.x = X;
        c.p = p;
        fs_result_init(&want[i], &c);
        fs_result_poison(&want[i]);
        /* two threads: the OpenMP pool exists before the limit, so the fallback can use it */
        cr_assert(focus_stack_ref(&p, c.in, want[i].idx, want[i].ff, want[i].best, want[i].focus, 2) == 0);
        for (int t = 0; t < 2; t++) {
            fs_result_init(&got[i][t], &c);
            fs_result_poison(&got[i][t]);
        }
    }
    malloc_trim(0);
    struct rlimit old, tight;
    cr_assert(getrlimit(RLIMIT_AS, &old) == 0);
    tight = old;
    tight.rlim_cur = (rlim_t)(address_space_bytes() + 8 * 1024);
    cr_assert(setrlimit(RLIMIT_AS, &tight) == 0, "setrlimit(RLIMIT_AS) failed");
    void *probe = malloc(plane_bytes); /* what the reference asks for first */
    const int limited = probe == NULL;
    free(probe);
    int status[5][2];
    for (int i = 0; limited && i < 5; i++) {
        focus_stack_params p = params[i];
        p.n = 2, p.z = 3, p.y = Y, p.x = X;
        for (int t = 0; t < 2; t++)
            status[i][t] = focus_stack_ref(&p, c.in, got[i][t].idx, got[i][t].ff, got[i][t].best, got[i][t].focus,
                                           t ? 2 : 1);
    }
    cr_assert(setrlimit(RLIMIT_AS, &old) == 0);
    cr_assert(limited, "the address-space limit did not stop a %zu-byte allocation: the fallback would not run",
              plane_bytes);
    for (int i = 0; i < 5; i++) {
        focus_stack_params p = params[i];
        p.n = 2, p.z = 3, p.y = Y, p.x = X;
        c.p = p;
        char what[320];
        fs_describe(&c, p, what, sizeof what);
        for (int t = 0; t < 2; t++) {
            cr_assert(status[i][t] == FOCUS_STACK_OK, "fallback (n_threads %d) returned %d [%s]", t ? 2 : 1,
                      status[i][t], what);
            cr_assert(fs_result_equal(&want[i], &got[i][t], FS_PASS_ALL),
                      "without scratch memory (n_threads %d) the outputs differ from the plane path [%s]", t ? 2 : 1,
                      what);
            fs_result_free(&got[i][t]);
        }
        fs_result_free(&want[i]);
    }
    fs_case_free(&c);
}

/* ------------------------------------------------------------------ the contract in the header */

Test(focus_stack_ref, every_status_code_has_its_own_message)
{
    const char *unknown = focus_stack_status_str(-1);
    cr_assert(strstr(unknown, "unknown") != NULL);
    cr_assert(strcmp(focus_stack_status_str(8), unknown) == 0 && strcmp(focus_stack_status_str(INT_MAX), unknown) == 0);
    for (int s = FOCUS_STACK_OK; s <= FOCUS_STACK_ERR_OVERFLOW; s++) {
        cr_assert(strcmp(focus_stack_status_str(s), unknown) != 0, "status %d has no message", s);
        for (int t = FOCUS_STACK_OK; t < s; t++)
            cr_assert(strcmp(focus_stack_status_str(s), focus_stack_status_str(t)) != 0, "statuses %d and %d share "
                      "a message", s, t);
    }
}

Test(focus_stack_ref, the_overflow_rule_is_exact_at_the_int64_limit)
{
    /* focus is n*z*y*x*4 bytes; on 64-bit hosts the limit is INT64_MAX, so 127 * 2^56 bytes pass and 2^63
     * fail. Only the check runs: nothing of this size is ever touched. */
    const char dummy = 0;
    focus_stack_params p = {.n = 1 << 30, .z = 127, .y = 1 << 24, .x = 1, .ksize = 3};
    if (sizeof(size_t) >= 8) {
        cr_assert(focus_stack_check(&p, &dummy, &dummy, &dummy) == FOCUS_STACK_OK, "127 * 2^56 bytes fit in int64");
        p.z = 128;
        cr_assert(focus_stack_check(&p, &dummy, &dummy, &dummy) == FOCUS_STACK_ERR_OVERFLOW, "2^63 bytes do not");
        p = (focus_stack_params){.n = 1, .z = 1, .y = 1 << 30, .x = (1 << 30) - 1, .ksize = 3};
        cr_assert(focus_stack_check(&p, &dummy, &dummy, &dummy) == FOCUS_STACK_OK);
    }
    p = (focus_stack_params){.n = 1, .z = 255, .y = 1, .x = 1, .ksize = 7, .window = 7567};
    cr_assert(focus_stack_check(&p, &dummy, &dummy, &dummy) == FOCUS_STACK_OK);
}

/* ------------------------------------------------------- the oracle's anchors in docs/focus_stack.md */

Test(focus_stack_ref, oracle_border_walk_matches_the_spec_examples_and_opencvs_formula)
{
    /* docs/focus_stack.md, "Borders": for n = 4, -1 -> 1, -3 -> 3, 4 -> 2, 7 -> 1 */
    cr_assert(fs_oracle_border(-1, 4, FOCUS_STACK_BORDER_REFLECT101) == 1);
    cr_assert(fs_oracle_border(-3, 4, FOCUS_STACK_BORDER_REFLECT101) == 3);
    cr_assert(fs_oracle_border(4, 4, FOCUS_STACK_BORDER_REFLECT101) == 2);
    cr_assert(fs_oracle_border(7, 4, FOCUS_STACK_BORDER_REFLECT101) == 1);
    cr_assert(fs_oracle_border(-5, 1, FOCUS_STACK_BORDER_REFLECT101) == 0);
    cr_assert(fs_oracle_border(-1, 4, FOCUS_STACK_BORDER_ZERO) == -1 && fs_oracle_border(4, 4, FOCUS_STACK_BORDER_ZERO) == -1);
    cr_assert(fs_oracle_border(-9, 4, FOCUS_STACK_BORDER_REPLICATE) == 0 && fs_oracle_border(9, 4, FOCUS_STACK_BORDER_REPLICATE) == 3);
    /* and the documented modulo formula, which is OpenCV's borderInterpolate, for many sizes and offsets */
    for (int n = 1; n <= 9; n++)
        for (int p = -60; p <= 70; p++) {
            int want = 0;
            if (n > 1) {
                const int m = 2 * (n - 1);
                const int q = ((p % m) + m) % m;
                want = q < n ? q : m - q;
            }
            cr_assert(fs_oracle_border(p, n, FOCUS_STACK_BORDER_REFLECT101) == want, "n=%d p=%d: walk gives %d, formula %d",
                      n, p, fs_oracle_border(p, n, FOCUS_STACK_BORDER_REFLECT101), want);
        }
}

Test(focus_stack_ref, oracle_tables_agree_with_the_spec_rows_and_constants)
{
    static const int want_p[3] = {8, 56, 600}, want_s[3] = {16, 256, 4096};
    for (int i = 0; i < 3; i++) {
        const int k = 3 + 2 * i;
        int g[7], s[7], d2[7], lap[7][7];
        fs_spec_rows(k, g, s, d2);
        fs_spec_laplacian(k, lap);
        int64_t sum = 0, positive = 0, g_sum = 0;
        for (int a = 0; a < k; a++) {
            g_sum += g[a];
            for (int b = 0; b < k; b++) {
                /* the printed 2-D table is s (x) d2 + d2 (x) s, symmetric */
                cr_assert(lap[a][b] == s[a] * d2[b] + d2[a] * s[b] && lap[a][b] == lap[b][a] &&
                              lap[a][b] == lap[k - 1 - a][b],
                          "K%d[%d][%d] = %d", k, a, b, lap[a][b]);
                sum += lap[a][b];
                positive += lap[a][b] > 0 ? lap[a][b] : 0;
            }
        }
        cr_assert(sum == 0 && positive == want_p[i], "K%d: sum %" PRId64 ", P %" PRId64, k, sum, positive);
        cr_assert(g_sum * g_sum == want_s[i], "k=%d: S = %" PRId64, k, g_sum * g_sum);
        /* F bounds (docs/focus_stack.md, "Integer widths"): P * 65535 * S (LOG_ABS) and P * 65535 (LAP_ABS) */
        static const int64_t log_bound[3] = {8388480, INT64_C(939509760), INT64_C(161058816000)};
        static const int64_t lap_bound[3] = {524280, 3669960, 39321000};
        cr_assert(positive * 65535 * want_s[i] == log_bound[i] && positive * 65535 == lap_bound[i]);
    }
    /* G3 * K3 = K5 (docs/focus_stack.md, "Stages") */
    int64_t pat[13][13];
    fs_spec_log_pattern(3, pat);
    int k5[7][7];
    fs_spec_laplacian(5, k5);
    for (int a = 0; a < 13; a++)
        for (int b = 0; b < 13; b++) {
            const int inside = a >= 4 && a <= 8 && b >= 4 && b <= 8;
            cr_assert(pat[a][b] == (inside ? k5[a - 4][b - 4] : 0), "G3*K3 differs from K5 at (%d, %d)", a - 6, b - 6);
        }
}

/* ------------------------------------------------------------------ the header's example */

Test(focus_stack_ref, the_header_example_is_compiled_verbatim_by_the_example_test)
{
    gw_assert_example_verbatim(GW_FOCUS_STACK_HEADER, GW_FOCUS_STACK_EXAMPLE);
}

Test(focus_stack_ref, the_header_examples_stated_result_holds_on_the_reference)
{
    /* in = {100,100,100, 0,400,0}, 1 stack of 2 slices of 1x3, defaults: idx = {1,1,1}, ff = {0,400,0} */
    const uint16_t in[6] = {100, 100, 100, 0, 400, 0};
    uint8_t idx[3] = {0xFF, 0xFF, 0xFF};
    uint16_t ff[3] = {0xA5A5, 0xA5A5, 0xA5A5};
    focus_stack_params p = {.n = 1, .z = 2, .y = 1, .x = 3, .ksize = 3};
    cr_assert(focus_stack_ref(&p, in, idx, ff, NULL, NULL, 1) == FOCUS_STACK_OK);
    cr_assert(idx[0] == 1 && idx[1] == 1 && idx[2] == 1 && ff[0] == 0 && ff[1] == 400 && ff[2] == 0,
              "idx = {%u,%u,%u}, ff = {%u,%u,%u}", idx[0], idx[1], idx[2], ff[0], ff[1], ff[2]);
}
