/* SPDX-License-Identifier: MIT
 * The focus_stack bad-input table, shared by the CPU test (focus_stack_check, focus_stack_ref) and the
 * launcher test (focus_stack_launch, whose first step is focus_stack_check). Each row starts from one valid
 * call on a 1x2x2x3 stack and breaks one thing; focus_stack_status_str(code) must name it.
 */
#ifndef FOCUS_STACK_BAD_CASES_H
#define FOCUS_STACK_BAD_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "focus_stack.h"

/* Every array of a valid call on n=1, z=2, y=2, x=3; outputs start as the sentinel 0xA5. */
typedef struct fs_arena {
    uint16_t in[12];
    uint16_t ff[6];
    float best[6];
    float focus[12];
    uint8_t idx[6];
} fs_arena;

typedef struct fs_args {
    focus_stack_params p;
    uint16_t *in, *ff;
    uint8_t *idx;
    float *best, *focus;
} fs_args;

typedef struct fs_bad_case {
    const char *name;           /* the argument and how it is broken */
    void (*breaks)(fs_args *a); /* applied to a valid call */
    int code;                   /* focus_stack_status returned by the check, the reference and the launcher */
    const char *words;          /* '|'-separated words focus_stack_status_str(code) must hold */
} fs_bad_case;

extern const fs_bad_case fs_bad_cases[];
extern const size_t fs_bad_case_count;

void fs_arena_init(fs_arena *arena, fs_args *args);

#endif /* FOCUS_STACK_BAD_CASES_H */
