/* SPDX-License-Identifier: MIT
 * grid_objects results on the host: the one set of helpers that the tests, the CLI (check, doctor, run,
 * trace) and the benchmarks share. The inputs are grid_d4 batches (grid_d4_batch.h: shapes, layouts, cells;
 * its per-grid ops array serves as the variants array, batch_op as batch_variant). Plain C, no CUDA.
 * Functions that allocate return 0, or -1 when out of memory (the result is then freed).
 */
#ifndef GRID_OBJECTS_BATCH_H
#define GRID_OBJECTS_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4_batch.h"
#include "grid_objects.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything one call writes: labels and objects (out_entries = grid_objects_out_entries(buf_bytes) entries
 * each, the padded size of grid_objects.h), n_objects and bg (n each). */
typedef struct grid_objects_result {
    size_t n;
    uint64_t buf_bytes;
    uint64_t out_entries;
    uint16_t *labels;
    grid_objects_object *objects;
    uint32_t *n_objects;
    int16_t *bg;
    uint8_t poison; /* what the result was last poisoned with (grid_objects_result_poison), 0 when never */
} grid_objects_result;

/* The params of a call on b: batch_variant = b->batch_op, the variants array is b->ops (may be NULL),
 * out_entries = grid_objects_out_entries(b->buf_bytes), the size of a grid_objects_result's arrays. */
grid_objects_params grid_objects_batch_params(const grid_d4_batch *b, int bg_tie);

/* A result sized for n grids over buf_bytes cells; contents undefined until poisoned. */
int grid_objects_result_init(grid_objects_result *res, size_t n, uint64_t buf_bytes);
void grid_objects_result_free(grid_objects_result *res);

/* Poison p (1..254) gives every entry, the pad included, a value no call can write: labels 0xFE00 | p (above
 * the largest label 65024, and not GRID_OBJECTS_NO_OBJECT), n_objects 0xFFFFFF00 | p, bg 0x7F00 | p, and
 * every byte of every object record p. Two different p give two different poisons (the stale-output guard needs that). */
void grid_objects_result_poison(grid_objects_result *res, uint8_t p);

/* How many entries of got still hold its poison where a call must have written: the labels of every
 * grid's cells, every n_objects and bg, and each of a grid's first n_objects[k] records whose 14 bytes all
 * still hold p (a single field cannot tell: 0xA5A5 is a real cell index of a 255 x 255 grid, while a colour
 * of p * 0x0101 never is); a poisoned n_objects counts once and its records are not looked at. 0 when
 * everything was written. */
size_t grid_objects_result_poisoned(const grid_objects_result *got, const grid_d4_batch *b);

/* Compares got with want, two results of b: per grid (lowest k first) bg, n_objects, the labels of its
 * cells, its first n_objects[k] records; then every label and every record outside all grids, the pad
 * included, must still hold got's poison.
 * Returns the number of problems (0: identical) and describes the first in msg ("grid 3 (variant 5, 4x7):
 * label of cell 12 (row 1, column 5) is 7, want 12"). */
size_t grid_objects_result_compare(const grid_objects_result *got, const grid_objects_result *want,
                                   const grid_d4_batch *b, char *msg, size_t msg_size);

/* Calls grid_objects_ref (mt != 0: grid_objects_ref_mt) on b into res. Returns its status. */
int grid_objects_batch_ref(const grid_d4_batch *b, int bg_tie, int mt, grid_objects_result *res);

#ifdef __cplusplus
}
#endif

#endif /* GRID_OBJECTS_BATCH_H */
