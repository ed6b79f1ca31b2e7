/* SPDX-License-Identifier: MIT
 * grid_d4 batches on the host: the one builder that the tests, the CLI (check, doctor, run, trace) and the
 * benchmarks share. Plain C, no CUDA, no test framework.
 *
 * A grid_d4_batch describes one call: n grids (shapes, offsets into one input buffer, cells, ops). A
 * grid_d4_result holds what a call wrote: the output buffer with GRID_D4_BATCH_SLACK poisoned bytes after it
 * (a write there is out of bounds) and both shape arrays. Base addresses can be shifted off 16-byte alignment
 * (in_shift, out_shift) to exercise unaligned paths; the CLI leaves them at 0.
 *
 * Random numbers are splitmix64, the same on every platform, so a seed names one problem everywhere.
 * Functions that allocate return 0, or -1 when out of memory (the batch or result is then freed).
 */
#ifndef GRID_D4_BATCH_H
#define GRID_D4_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRID_D4_SHAPE_POISON 0xFFFFu /* out of range for a shape: a result shape never written keeps it */
#define GRID_D4_BATCH_SLACK 32u      /* poisoned bytes after in + buf_bytes and out + buf_bytes */

/* ---- random numbers ---- */
typedef struct grid_d4_rng {
    uint64_t state;
} grid_d4_rng;
uint64_t grid_d4_rng_next(grid_d4_rng *rng);
/* Uniform in [0, bound), bound >= 1 (multiply-shift: no modulo bias worth caring about below 2^32). */
uint32_t grid_d4_rng_below(grid_d4_rng *rng, uint32_t bound);
void grid_d4_shuffle(size_t *items, size_t n, grid_d4_rng *rng);

/* ---- batches ---- */
typedef enum grid_d4_layout {
    GRID_D4_PACKED,     /* back to back from offset 0 */
    GRID_D4_PACKED_ODD, /* back to back from offset 1: offsets mostly unaligned */
    GRID_D4_ALIGNED16,  /* every grid starts at a multiple of 16 */
    GRID_D4_GAPS,       /* random gaps of 0..40 bytes before every grid and after the last */
    GRID_D4_UNSORTED    /* grids placed in a shuffled order, with random gaps: offsets not ascending */
} grid_d4_layout;

typedef struct grid_d4_batch {
    size_t n;
    uint64_t buf_bytes;
    uint8_t *in;                  /* in_alloc + in_shift; buf_bytes bytes (+ GRID_D4_BATCH_SLACK readable junk) */
    uint64_t *offset;
    uint16_t *height, *width;
    uint8_t *ops;                 /* NULL: batch_op for every grid */
    int batch_op;
    uint32_t flags;
    unsigned in_shift, out_shift; /* 0..15: how far the in and out base addresses are off 16-byte alignment */
    uint8_t *in_alloc;
    char desc[240];               /* how it was built (shapes, layout, seeds): for messages */
} grid_d4_batch;

/* Metadata for n grids of the given shapes (any values, 0 and > 255 included: bad input is built this way)
 * laid out as asked; cells are set to a junk pattern, ops NULL, batch_op 0, flags 0. `what` names the shapes. */
int grid_d4_batch_make(grid_d4_batch *b, size_t n, const uint16_t *height, const uint16_t *width,
                       grid_d4_layout layout, uint64_t seed, const char *what);
void grid_d4_batch_free(grid_d4_batch *b);
/* n grids with shapes drawn from the ARC-AGI-1 training distribution (grid_d4_arc_shapes.h: each real grid's
 * shape weighted by its count, mean ~129 cells), cells 0..9 from seed + 1, laid out as asked. */
int grid_d4_batch_arc_sample(grid_d4_batch *b, size_t n, grid_d4_layout layout, uint64_t seed);
/* The built-in problem of the CLI's check, doctor, trace and bench (grid_d4's and grid_objects', whose
 * variants ride in ops): grid_d4_batch_arc_sample packed, or 16-byte aligned with aligned16, then one batch
 * op, or random per-grid ops 0..7 from seed + 2 with per_grid_ops. 0, or -1 when out of memory (b freed). */
int grid_d4_batch_builtin(grid_d4_batch *b, size_t n, uint64_t seed, int per_grid_ops, int batch_op, int aligned16);
/* dst grid i is src grid order[i] (order NULL: identity, n ignored), cells copied, ops permuted the same way,
 * new layout and shifts. */
int grid_d4_batch_relayout(grid_d4_batch *dst, const grid_d4_batch *src, const size_t *order, size_t n,
                           grid_d4_layout layout, uint64_t seed, unsigned in_shift, unsigned out_shift);
/* New base shifts (0..15 each; -1 for larger values, b unchanged), cells kept. */
int grid_d4_batch_shift(grid_d4_batch *b, unsigned in_shift, unsigned out_shift);

static inline uint8_t *grid_d4_batch_grid(const grid_d4_batch *b, size_t k) { return b->in + b->offset[k]; }
static inline uint64_t grid_d4_batch_cells_of(const grid_d4_batch *b, size_t k)
{
    return (uint64_t)b->height[k] * b->width[k];
}
static inline int grid_d4_batch_op_of(const grid_d4_batch *b, size_t k) { return b->ops ? b->ops[k] : b->batch_op; }
/* Sum of height * width: the item count of a call's witness. */
uint64_t grid_d4_batch_cells(const grid_d4_batch *b);
const char *grid_d4_layout_name(grid_d4_layout layout);
/* The params of a call on b. */
grid_d4_params grid_d4_batch_params(const grid_d4_batch *b);

/* Cell values uniform in 0..max_value; pairwise distinct within each grid (-1 when a grid has more than 256
 * cells). */
void grid_d4_batch_fill_random(grid_d4_batch *b, unsigned max_value, uint64_t seed);
int grid_d4_batch_fill_distinct(grid_d4_batch *b, uint64_t seed);

void grid_d4_batch_set_op(grid_d4_batch *b, int op); /* one op for the batch: frees ops */
int grid_d4_batch_set_ops_all(grid_d4_batch *b, uint8_t op);
int grid_d4_batch_set_ops_random(grid_d4_batch *b, uint64_t seed);

/* ---- results ---- */
typedef struct grid_d4_result {
    size_t n;
    uint64_t buf_bytes, alloc_bytes; /* alloc_bytes = shift + buf_bytes + GRID_D4_BATCH_SLACK */
    unsigned shift;                  /* out = out_alloc + shift */
    uint8_t *out, *out_alloc;
    uint16_t *out_height, *out_width;
    uint8_t poison;                  /* what every out byte held before the call */
} grid_d4_result;

/* A result sized for b (at b's out_shift); contents undefined until poisoned. */
int grid_d4_result_init(grid_d4_result *res, const grid_d4_batch *b);
void grid_d4_result_free(grid_d4_result *res);
/* Every out byte (slack included) = poison, shapes = GRID_D4_SHAPE_POISON. */
void grid_d4_result_poison(grid_d4_result *res, uint8_t poison);
/* After a download of buf_bytes into res->out: the host-only bytes around it (shift and slack) get poison,
 * the device's poison, which every byte outside the grids must hold; res->poison = poison. */
void grid_d4_result_poison_slack(grid_d4_result *res, uint8_t poison);
/* Sets every byte of res outside b's grids (gaps, tail, slack) to poison, and res->poison: a result computed
 * once can then be compared with calls made over different poisons. Grid bytes and shapes are kept. -1 when
 * out of memory (res unchanged). */
int grid_d4_result_repoison_outside(grid_d4_result *res, const grid_d4_batch *b, uint8_t poison);
/* A batch whose inputs are res, a result of src (same offsets and shifts, shapes from the result): chains. */
int grid_d4_batch_from_result(grid_d4_batch *dst, const grid_d4_batch *src, const grid_d4_result *res);

/* Compares got with want, two results of b: shapes, then the cells of each grid, then every byte outside the
 * grids (gaps, tail and slack must still hold got's poison). Returns the number of problems (0: identical)
 * with the first few (grid, cell, both values) and the counts in msg, one per line; "N of M output bytes
 * still hold the poison" when got left grid bytes unwritten. (size_t)-1 when out of memory. */
size_t grid_d4_result_compare(const grid_d4_batch *b, const grid_d4_result *got, const grid_d4_result *want,
                              char *msg, size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif /* GRID_D4_BATCH_H */
