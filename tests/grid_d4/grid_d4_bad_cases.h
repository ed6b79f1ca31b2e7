/* SPDX-License-Identifier: MIT
 * The grid_d4 bad-input table, shared by the reference test (grid_d4_validate, grid_d4_ref, grid_d4_ref_mt)
 * and the launcher test (grid_d4_launch's host-side checks). Each row starts from one valid batch of three
 * grids in one arena (so aliasing rows can point arrays into each other) and breaks one thing.
 */
#ifndef GRID_D4_BAD_CASES_H
#define GRID_D4_BAD_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4.h"

/* Every array of a call, in one object: a valid batch of 3 grids (2x3 at 0, 1x1 at 7, 4x2 at 8) in 16 bytes. */
typedef struct d4_arena {
    uint64_t offset[3];
    uint8_t in[16];
    uint8_t out[16];
    uint16_t height[3], width[3], out_height[3], out_width[3];
    uint8_t ops[3];
    grid_d4_status_record status;
} d4_arena;

/* The arguments of one call, pointing into an arena (or elsewhere, when a row breaks them). */
typedef struct d4_args {
    grid_d4_params params;
    const grid_d4_params *p; /* &params unless a row makes it NULL */
    uint8_t *in, *out, *ops;
    uint64_t *offset;
    uint16_t *height, *width, *out_height, *out_width;
    grid_d4_status_record *status;
    d4_arena *arena; /* where the valid arrays are, for rows that point an argument at one */
} d4_args;

/* status of a rule that no grid_d4_status names (the launcher's flags check). */
#define D4_NO_STATUS (-1)

typedef enum d4_launch_verdict {
    D4_LAUNCH_REJECTS = 0, /* cudaErrorInvalidValue before any CUDA call, nothing enqueued */
    D4_LAUNCH_DEVICE = 1   /* metadata: found by the device pre-pass (status record), tested on a GPU */
} d4_launch_verdict;

typedef struct d4_bad_case {
    const char *name;            /* the argument and how it is broken */
    void (*breaks)(d4_args *a);  /* applied to a valid call */
    int status;                  /* the grid_d4_status whose message names the rule, or D4_NO_STATUS */
    int ref_sees;                /* 1: grid_d4_validate, grid_d4_ref and grid_d4_ref_mt return status;
                                    0: an argument only the launcher has (d_status, flags) */
    size_t index;                /* grid_d4_validate's *bad_index */
    d4_launch_verdict launch;    /* what grid_d4_launch does with it */
    const char *words;           /* '|'-separated words grid_d4_status_str(status) must hold */
} d4_bad_case;

extern const d4_bad_case d4_bad_cases[];
extern const size_t d4_bad_case_count;

/* Fills the arena with the valid batch (outputs with the sentinel 0xA5) and points args at it. */
void d4_arena_init(d4_arena *arena, d4_args *args);

#endif /* GRID_D4_BAD_CASES_H */
