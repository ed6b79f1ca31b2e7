/* SPDX-License-Identifier: MIT
 * The focus_stack bad-input rows (see focus_stack_bad_cases.h), in focus_stack_check's order: NULL, sizes,
 * ksize, window, enums, overflow; a row breaking two rules expects the earlier one. Sizes whose product
 * overflows are safe to pass with small buffers: nothing is read or written once the check fails.
 * Aliasing is not a row: the contract leaves overlapping outputs unchecked (docs/focus_stack.md, "Errors";
 * focus_stack.h).
 */
#include "focus_stack_bad_cases.h"

#include <limits.h>
#include <string.h>

void fs_arena_init(fs_arena *arena, fs_args *args)
{
    memset(arena, 0xA5, sizeof *arena);
    for (int i = 0; i < 12; i++) arena->in[i] = (uint16_t)(i * 997u);
    *args = (fs_args){
        .p = {.n = 1, .z = 2, .y = 2, .x = 3, .ksize = 3},
        .in = arena->in, .ff = arena->ff, .idx = arena->idx, .best = arena->best, .focus = arena->focus,
    };
}

#define BREAKER(fn, ...)                                                                                               \
    static void fn(fs_args *a) { __VA_ARGS__; }

BREAKER(in_null, a->in = NULL)
BREAKER(idx_null, a->idx = NULL)
BREAKER(ff_null, a->ff = NULL)
BREAKER(all_null, a->in = NULL; a->idx = NULL; a->ff = NULL; a->best = NULL; a->focus = NULL)
BREAKER(ff_null_and_n_0, a->ff = NULL; a->p.n = 0)
BREAKER(n_0, a->p.n = 0)
BREAKER(n_minus_1, a->p.n = -1)
BREAKER(z_0, a->p.z = 0)
BREAKER(z_256, a->p.z = 256)
BREAKER(z_int_max, a->p.z = INT_MAX)
BREAKER(y_0, a->p.y = 0)
BREAKER(y_int_min, a->p.y = INT_MIN)
BREAKER(x_0, a->p.x = 0)
BREAKER(x_minus_7, a->p.x = -7)
BREAKER(ksize_0, a->p.ksize = 0)
BREAKER(ksize_1, a->p.ksize = 1)
BREAKER(ksize_4, a->p.ksize = 4)
BREAKER(ksize_9, a->p.ksize = 9)
BREAKER(ksize_minus_3, a->p.ksize = -3)
BREAKER(ksize_4_window_2, a->p.ksize = 4; a->p.window = 2)
BREAKER(window_minus_1, a->p.window = -1)
BREAKER(window_2, a->p.window = 2)
BREAKER(window_7566, a->p.window = 7566)
BREAKER(window_7569, a->p.window = 7569)
BREAKER(window_int_max, a->p.window = INT_MAX)
BREAKER(measure_2, a->p.measure = 2)
BREAKER(measure_minus_1, a->p.measure = -1)
BREAKER(border_3, a->p.border = 3)
BREAKER(border_int_min, a->p.border = INT_MIN)
BREAKER(overflow_2_63, a->p.n = 1 << 30; a->p.z = 128; a->p.y = 1 << 24; a->p.x = 1)
BREAKER(overflow_all_max, a->p.n = INT_MAX; a->p.z = 255; a->p.y = INT_MAX; a->p.x = INT_MAX)
BREAKER(overflow_plane, a->p.y = INT_MAX; a->p.x = INT_MAX)
BREAKER(overflow_and_measure_2, a->p.n = INT_MAX; a->p.y = INT_MAX; a->p.measure = 2)

#define NULL_WORDS "a required pointer is NULL|in, idx and ff"
#define DIM_WORDS "bad size|n, z, y and x|at least 1"
#define KSIZE_WORDS "bad ksize|3, 5 or 7"
#define WINDOW_WORDS "bad window|0, 1 or an odd number from 3 to 7567"
#define ENUM_WORDS "bad enum|measure|border"
#define OVERFLOW_WORDS "too large|n*z*y*x*4|overflows"

const fs_bad_case fs_bad_cases[] = {
    {"in NULL", in_null, FOCUS_STACK_ERR_NULL, NULL_WORDS},
    {"idx NULL", idx_null, FOCUS_STACK_ERR_NULL, NULL_WORDS},
    {"ff NULL", ff_null, FOCUS_STACK_ERR_NULL, NULL_WORDS},
    {"every pointer NULL", all_null, FOCUS_STACK_ERR_NULL, NULL_WORDS},
    {"ff NULL and n = 0 (NULL first)", ff_null_and_n_0, FOCUS_STACK_ERR_NULL, NULL_WORDS},
    {"n = 0", n_0, FOCUS_STACK_ERR_DIM, DIM_WORDS},
    {"n = -1", n_minus_1, FOCUS_STACK_ERR_DIM, DIM_WORDS},
    {"z = 0", z_0, FOCUS_STACK_ERR_DIM, DIM_WORDS},
    {"z = 256 (idx is uint8)", z_256, FOCUS_STACK_ERR_DIM, "bad size|z at most 255|idx is uint8"},
    {"z = INT_MAX", z_int_max, FOCUS_STACK_ERR_DIM, "bad size|z at most 255"},
    {"y = 0", y_0, FOCUS_STACK_ERR_DIM, DIM_WORDS},
    {"y = INT_MIN", y_int_min, FOCUS_STACK_ERR_DIM, DIM_WORDS},
    {"x = 0", x_0, FOCUS_STACK_ERR_DIM, DIM_WORDS},
    {"x = -7", x_minus_7, FOCUS_STACK_ERR_DIM, DIM_WORDS},
    {"ksize 0", ksize_0, FOCUS_STACK_ERR_KSIZE, KSIZE_WORDS},
    {"ksize 1", ksize_1, FOCUS_STACK_ERR_KSIZE, KSIZE_WORDS},
    {"ksize 4", ksize_4, FOCUS_STACK_ERR_KSIZE, KSIZE_WORDS},
    {"ksize 9", ksize_9, FOCUS_STACK_ERR_KSIZE, KSIZE_WORDS},
    {"ksize -3", ksize_minus_3, FOCUS_STACK_ERR_KSIZE, KSIZE_WORDS},
    {"ksize 4 and window 2 (ksize first)", ksize_4_window_2, FOCUS_STACK_ERR_KSIZE, KSIZE_WORDS},
    {"window -1", window_minus_1, FOCUS_STACK_ERR_WINDOW, WINDOW_WORDS},
    {"window 2 (even)", window_2, FOCUS_STACK_ERR_WINDOW, WINDOW_WORDS},
    {"window 7566 (even)", window_7566, FOCUS_STACK_ERR_WINDOW, WINDOW_WORDS},
    {"window 7569 (above 7567)", window_7569, FOCUS_STACK_ERR_WINDOW, WINDOW_WORDS},
    {"window INT_MAX", window_int_max, FOCUS_STACK_ERR_WINDOW, WINDOW_WORDS},
    {"measure 2", measure_2, FOCUS_STACK_ERR_ENUM, ENUM_WORDS "|LOG_ABS (0) or LAP_ABS (1)"},
    {"measure -1", measure_minus_1, FOCUS_STACK_ERR_ENUM, ENUM_WORDS "|LOG_ABS (0) or LAP_ABS (1)"},
    {"border 3", border_3, FOCUS_STACK_ERR_ENUM, ENUM_WORDS "|REFLECT101 (2)"},
    {"border INT_MIN", border_int_min, FOCUS_STACK_ERR_ENUM, ENUM_WORDS "|REFLECT101 (2)"},
    {"n*z*y*x*4 = 2^63 exactly", overflow_2_63, FOCUS_STACK_ERR_OVERFLOW, OVERFLOW_WORDS},
    {"n = y = x = INT_MAX, z = 255", overflow_all_max, FOCUS_STACK_ERR_OVERFLOW, OVERFLOW_WORDS},
    {"y = x = INT_MAX (one plane overflows)", overflow_plane, FOCUS_STACK_ERR_OVERFLOW, OVERFLOW_WORDS},
    {"overflowing sizes and measure 2 (enum first)", overflow_and_measure_2, FOCUS_STACK_ERR_ENUM, ENUM_WORDS},
};

const size_t fs_bad_case_count = sizeof fs_bad_cases / sizeof fs_bad_cases[0];
