/* SPDX-License-Identifier: MIT
 * The grid_d4 bad-input rows (see grid_d4_bad_cases.h), in the order of the check table in
 * docs/grid_d4.md, "Bad input": NULL pointers, batch_op, flags, aliasing, then the per-grid rules and overlap.
 */
#include "grid_d4_bad_cases.h"

#include <limits.h>
#include <string.h>

void d4_arena_init(d4_arena *arena, d4_args *args)
{
    memset(arena, 0xA5, sizeof *arena); /* the sentinel: outputs must still hold it after a rejected call */
    static const uint64_t offset[3] = {0, 7, 8};
    static const uint16_t height[3] = {2, 1, 4}, width[3] = {3, 1, 2};
    static const uint8_t ops[3] = {GRID_D4_ROT90, GRID_D4_HMIRROR, GRID_D4_CMIRROR};
    memcpy(arena->offset, offset, sizeof offset);
    memcpy(arena->height, height, sizeof height);
    memcpy(arena->width, width, sizeof width);
    memcpy(arena->ops, ops, sizeof ops);
    for (int i = 0; i < 16; i++) arena->in[i] = (uint8_t)(i % 10);
    *args = (d4_args){
        .params = {.n_grids = 3, .buf_bytes = 16, .batch_op = GRID_D4_ROT90, .flags = 0},
        .in = arena->in, .out = arena->out, .ops = NULL, .offset = arena->offset, .height = arena->height,
        .width = arena->width, .out_height = arena->out_height, .out_width = arena->out_width,
        .status = &arena->status, .arena = arena,
    };
    args->p = &args->params;
}

#define BREAKER(fn, ...)                                                                                               \
    static void fn(d4_args *a) { __VA_ARGS__; }

BREAKER(p_null, a->p = NULL)
BREAKER(in_null, a->in = NULL)
BREAKER(out_null, a->out = NULL)
BREAKER(offset_null, a->offset = NULL)
BREAKER(height_null, a->height = NULL)
BREAKER(width_null, a->width = NULL)
BREAKER(out_height_null, a->out_height = NULL)
BREAKER(out_width_null, a->out_width = NULL)
BREAKER(status_null, a->status = NULL)
BREAKER(batch_op_minus_1, a->params.batch_op = -1)
BREAKER(batch_op_8, a->params.batch_op = 8)
BREAKER(batch_op_int_min, a->params.batch_op = INT_MIN)
BREAKER(batch_op_int_max, a->params.batch_op = INT_MAX)
BREAKER(flags_2, a->params.flags = 2u)
BREAKER(flags_top_bit, a->params.flags = GRID_D4_PREVALIDATED | 0x80000000u)
BREAKER(out_is_in, a->out = a->in)
BREAKER(out_starts_at_last_in_byte, a->out = a->in + 15)
BREAKER(in_starts_at_last_out_byte, a->in = a->out + 15)
BREAKER(out_height_is_height, a->out_height = a->height)
BREAKER(out_width_overlaps_out_height, a->out_width = a->out_height + 2)
BREAKER(out_width_is_width, a->out_width = a->width)
BREAKER(out_overlaps_offset, a->out = (uint8_t *)a->offset + 23)
BREAKER(ops_inside_out, a->ops = a->out + 5)
BREAKER(status_is_out, a->status = (grid_d4_status_record *)(void *)a->out)
BREAKER(status_is_offset, a->status = (grid_d4_status_record *)(void *)a->offset)
BREAKER(n_grids_size_max, a->params.n_grids = SIZE_MAX)
BREAKER(buf_bytes_uint64_max, a->params.buf_bytes = UINT64_MAX)
BREAKER(ops_1_is_8, a->ops = a->arena->ops; a->ops[1] = 8)
BREAKER(height_1_is_0, a->height[1] = 0)
BREAKER(width_2_is_0, a->width[2] = 0)
BREAKER(height_0_is_256, a->height[0] = 256)
BREAKER(width_2_is_65535, a->width[2] = 65535)
BREAKER(offset_2_wraps, a->offset[2] = UINT64_MAX)
BREAKER(offset_1_is_buf_bytes, a->offset[1] = 16)
BREAKER(buf_bytes_one_short, a->params.buf_bytes = 15)
BREAKER(offset_1_inside_grid_0, a->offset[1] = 5)
BREAKER(offset_2_is_0, a->offset[2] = 0)

#define NULL_WORDS "a required pointer is NULL"
#define ALIAS_WORDS "buffers overlap|in and out must be disjoint|no output array may overlap another array"

const d4_bad_case d4_bad_cases[] = {
    {"p NULL", p_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "|p,"},
    {"in NULL", in_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| in,"},
    {"out NULL", out_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| out,"},
    {"offset NULL", offset_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| offset,"},
    {"height NULL", height_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| height,"},
    {"width NULL", width_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| width,"},
    {"out_height NULL", out_height_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| out_height,"},
    {"out_width NULL", out_width_null, GRID_D4_ERR_NULL, 1, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| out_width"},
    {"d_status NULL (launcher only)", status_null, GRID_D4_ERR_NULL, 0, 0, D4_LAUNCH_REJECTS, NULL_WORDS "| status"},
    {"batch_op -1 with ops NULL", batch_op_minus_1, GRID_D4_ERR_OP, 1, 0, D4_LAUNCH_REJECTS, "batch_op|0..7"},
    {"batch_op 8 with ops NULL", batch_op_8, GRID_D4_ERR_OP, 1, 0, D4_LAUNCH_REJECTS, "batch_op|0..7"},
    {"batch_op INT_MIN with ops NULL", batch_op_int_min, GRID_D4_ERR_OP, 1, 0, D4_LAUNCH_REJECTS, "batch_op|0..7"},
    {"batch_op INT_MAX with ops NULL", batch_op_int_max, GRID_D4_ERR_OP, 1, 0, D4_LAUNCH_REJECTS, "batch_op|0..7"},
    {"flags 2 (unknown bit; launcher only)", flags_2, D4_NO_STATUS, 0, 0, D4_LAUNCH_REJECTS, NULL},
    {"flags PREVALIDATED | bit 31 (launcher only)", flags_top_bit, D4_NO_STATUS, 0, 0, D4_LAUNCH_REJECTS, NULL},
    {"out == in", out_is_in, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS, ALIAS_WORDS},
    {"out starts at the last byte of in", out_starts_at_last_in_byte, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS,
     ALIAS_WORDS},
    {"in starts at the last byte of out", in_starts_at_last_out_byte, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS,
     ALIAS_WORDS},
    {"out_height == height", out_height_is_height, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS, ALIAS_WORDS},
    {"out_width overlaps out_height", out_width_overlaps_out_height, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS,
     ALIAS_WORDS},
    {"out_width == width", out_width_is_width, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS, ALIAS_WORDS},
    {"out overlaps the last byte of offset", out_overlaps_offset, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS,
     ALIAS_WORDS},
    {"ops inside out", ops_inside_out, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS, ALIAS_WORDS},
    {"d_status == d_out (launcher only)", status_is_out, GRID_D4_ERR_ALIAS, 0, 0, D4_LAUNCH_REJECTS, ALIAS_WORDS},
    {"d_status inside d_offset (launcher only)", status_is_offset, GRID_D4_ERR_ALIAS, 0, 0, D4_LAUNCH_REJECTS,
     ALIAS_WORDS},
    /* Counts beyond any real array: the array ranges then cover all memory after them, so they overlap. */
    {"n_grids SIZE_MAX (8*n_grids overflows)", n_grids_size_max, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS,
     ALIAS_WORDS},
    {"buf_bytes 2^64-1 (larger than any buffer)", buf_bytes_uint64_max, GRID_D4_ERR_ALIAS, 1, 0, D4_LAUNCH_REJECTS,
     ALIAS_WORDS},
    /* Metadata: the reference finds it on the host, the launcher on the device (GPU test, status record). */
    {"ops[1] = 8", ops_1_is_8, GRID_D4_ERR_OP, 1, 1, D4_LAUNCH_DEVICE, "ops[k]|0..7"},
    {"height[1] = 0", height_1_is_0, GRID_D4_ERR_EMPTY, 1, 1, D4_LAUNCH_DEVICE, "height[k] and width[k]|at least 1"},
    {"width[2] = 0", width_2_is_0, GRID_D4_ERR_EMPTY, 1, 2, D4_LAUNCH_DEVICE, "height[k] and width[k]|at least 1"},
    {"height[0] = 256", height_0_is_256, GRID_D4_ERR_TOO_LARGE, 1, 0, D4_LAUNCH_DEVICE, "height[k] and width[k]|255"},
    {"width[2] = 65535", width_2_is_65535, GRID_D4_ERR_TOO_LARGE, 1, 2, D4_LAUNCH_DEVICE,
     "height[k] and width[k]|255"},
    {"offset[2] = 2^64-1 (offset + size wraps)", offset_2_wraps, GRID_D4_ERR_BOUNDS, 1, 2, D4_LAUNCH_DEVICE,
     "offset[k] + height[k]*width[k]|buf_bytes"},
    {"offset[1] = buf_bytes", offset_1_is_buf_bytes, GRID_D4_ERR_BOUNDS, 1, 1, D4_LAUNCH_DEVICE,
     "offset[k] + height[k]*width[k]|buf_bytes"},
    {"buf_bytes one short of the last grid", buf_bytes_one_short, GRID_D4_ERR_BOUNDS, 1, 2, D4_LAUNCH_DEVICE,
     "offset[k] + height[k]*width[k]|buf_bytes"},
    {"offset[1] inside grid 0", offset_1_inside_grid_0, GRID_D4_ERR_OVERLAP, 1, 0, D4_LAUNCH_DEVICE,
     "grids overlap|byte ranges"},
    {"offset[2] = 0 (grid 2 over grids 0 and 1)", offset_2_is_0, GRID_D4_ERR_OVERLAP, 1, 0, D4_LAUNCH_DEVICE,
     "grids overlap|byte ranges"},
};

const size_t d4_bad_case_count = sizeof d4_bad_cases / sizeof d4_bad_cases[0];
