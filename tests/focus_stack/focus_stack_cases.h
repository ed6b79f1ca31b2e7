/* SPDX-License-Identifier: MIT
 * The focus_stack test groups of docs/focus_stack.md, "Test groups", written once against an fs_runner. The
 * CPU test runs them on focus_stack_ref, the GPU test on focus_stack_launch. Every call inside goes through
 * fs_run_ok()/fs_run_error() (poison, status, invariants, oracle, reference where asked, witness); the
 * groups add the property each one is about, with expected values from the numbers and rules of
 * docs/focus_stack.md, never from the code under test. Each function ends the test on the first failing
 * property.
 *
 * GW_FS_QUICK=1 (set for the Valgrind run) shrinks the large groups; fs_quick() reports it.
 */
#ifndef FOCUS_STACK_CASES_H
#define FOCUS_STACK_CASES_H

#include "focus_stack_fixture.h"

int fs_quick(void);

/* Edge ladder (docs/focus_stack.md, "Test groups", item 1): Z in {1,2,3} x Y*X in {1x1, 2x3, 5x7, 17x33} x
 * every ksize, measure, border x window in {0,1,3,5}, one content per function. */
void fs_case_ladder_random(const fs_runner *r);
/* All slices equal (a random image repeated): idx = 0 everywhere. */
void fs_case_ladder_equal_slices(const fs_runner *r);
/* One constant per slice: REPLICATE/REFLECT101 give V = 0 and idx = 0; ZERO gives idx = 0 farther than
 * r_G + r_K + r_w from the edge and the brightest slice (first of equals) wherever V != 0 nearer. */
void fs_case_ladder_constant_slices(const fs_runner *r);
/* 65535 next to 0, the same pattern in several slices: idx = the first of them where V != 0, else 0. */
void fs_case_ladder_saturated(const fs_runner *r);
/* A spike v in slice z0: idx = z0 where its pattern is non-zero, else 0; 1x1 LOG_ABS k=3: F = 32v for ZERO
 * (real 2v; a fused 5x5 kernel gives 24v), 0 for the other borders; interior centre F = 24v. */
void fs_case_ladder_spike(const fs_runner *r);

/* Taps (docs/focus_stack.md, "Taps"): an interior spike's whole score pattern, for every ksize, measure,
 * border and window, equals the box sum of |K| (LAP_ABS) or |K * G| (LOG_ABS) computed here from the printed
 * tables. */
void fs_case_spike_patterns_follow_the_spec_tables(const fs_runner *r);
/* A 1x1 image, every parameter combination and windows up to 7567: ZERO gives |K_c| G_c v, others 0. */
void fs_case_one_pixel_images(const fs_runner *r);

/* Overflow probes (docs/focus_stack.md, "Test groups", item 2): 63,748,253,760 (LOG_ABS k=7) and
 * 2,215,083,000 (LAP_ABS k=3, w=65). */
void fs_case_overflow_probes(const fs_runner *r);

/* Odd sizes, T1 (docs/focus_stack.md, "Test groups", item 3): N=1 Z=12 256x320, N=2 Z=17 517x389, and
 * shapes one pixel around the kernel's tile dimensions (and other common ones), for every ksize; the
 * defaults on every shape. */
void fs_case_odd_sizes(const fs_runner *r);
/* Windows 11..81 on 83x101: wider than one score chunk or tile of the general GPU path. */
void fs_case_windows_wider_than_a_tile(const fs_runner *r);

/* All combinations (docs/focus_stack.md, "Test groups", item 4): 3 ksize x 2 measures x 3 borders x window
 * {0,1,3,5,9} on N=2, Z=5, 23x31, with full-range and with tie-heavy (0..3) values. */
void fs_case_all_combinations(const fs_runner *r);

/* docs/focus_stack.md, "Test groups", item 5: w = 1 gives the same bytes as w = 0; idx and ff do not change
 * when best or focus are NULL. */
void fs_case_window_one_equals_zero(const fs_runner *r);
void fs_case_optional_outputs_do_not_change_idx_and_ff(const fs_runner *r);

/* The identity of docs/focus_stack.md, "Stages": 2 px or more from the edge (plus r_w), LOG_ABS k=3 scores
 * equal LAP_ABS k=5 scores. */
void fs_case_log3_equals_lap5_in_the_interior(const fs_runner *r);

/* Windows 7..7567 on images of 1..4 px per side: every offset folds by the border rule. */
void fs_case_large_windows_on_tiny_images(const fs_runner *r);

/* Semantic test (docs/focus_stack.md, "Test groups", item 6): 2x2-pixel checkerboard blocks, slices blurred
 * with sigma = |z - z_focus|: idx = z_focus in the textured interior and 0 where every slice looks the same,
 * for every parameter combination. */
void fs_case_semantic_checkerboard(const fs_runner *r);

/* docs/focus_stack.md, "Test groups", item 7: every rejection code of docs/focus_stack.md, "Errors", first
 * failing rule in table order, nothing written, nothing launched. */
void fs_case_bad_input(const fs_runner *r);
/* The edges of the allowed range are accepted: z = 255, window 1 and 7567, 1x1 images with k = 7. */
void fs_case_limits_are_accepted(const fs_runner *r);

/* The same call twice gives the same bytes. */
void fs_case_determinism(const fs_runner *r);

/* The full convolution K * G from the tables of docs/focus_stack.md, "Taps", centred at [6][6] for every
 * ksize (the LOG_ABS response to a unit spike); cells farther than 2*(k/2) from the centre are 0. */
void fs_spec_log_pattern(int ksize, int64_t out[13][13]);

#endif /* FOCUS_STACK_CASES_H */
