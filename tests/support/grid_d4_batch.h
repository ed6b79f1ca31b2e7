/* SPDX-License-Identifier: MIT
 * Test fixtures for grid_d4, shared by the CPU reference tests and the GPU tests.
 *
 * A d4_batch is a host-side batch description (metadata, input cells, ops); a d4_result holds what one
 * call wrote (cells, with poisoned slack around them, and both shape arrays). A d4_runner executes a
 * batch: the CPU test wraps grid_d4_ref / grid_d4_ref_mt, the GPU test wraps grid_d4_launch (upload,
 * poison, launch, download). The test cases in grid_d4_cases.h only talk to a runner, so the logic of
 * every GPU test also runs, and is debugged, against the reference on machines without a GPU.
 *
 * Every call made through d4_run_ok()/d4_run_error() poisons all outputs first (cells 0xFF or 0x5A,
 * alternating per call; shapes 0xFFFF) and then checks, in this order: the status, the outputs against
 * an independent oracle (the per-op formulas of the spec table, not the reference's general rule; memcmp
 * over the whole out allocation, gaps and slack included, and both shape arrays), then the runner's
 * witness. Each failed check prints its own words before the test stops, so a planted fault is named by
 * the guard meant to catch it even when an earlier guard also fires.
 */
#ifndef GRID_D4_BATCH_H
#define GRID_D4_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4.h"

#define D4_POISON_A 0xFFu       /* cell poison on even calls */
#define D4_POISON_B 0x5Au       /* cell poison on odd calls: a cell left unwritten fails on one of them */
#define D4_SHAPE_POISON 0xFFFFu /* out of range for a shape */
#define D4_SLACK 32u            /* poisoned bytes after out + buf_bytes; a write there is out of bounds */

typedef enum d4_layout {
    D4_PACKED,     /* back to back from offset 0 */
    D4_PACKED_ODD, /* back to back from offset 1: offsets mostly unaligned */
    D4_ALIGNED16,  /* every grid starts at a multiple of 16 */
    D4_GAPS,       /* random gaps of 0..40 bytes before every grid */
    D4_UNSORTED,   /* grids placed in a shuffled order, with random gaps: offsets not ascending */
} d4_layout;

typedef struct d4_batch {
    size_t n;
    uint64_t buf_bytes;
    uint8_t *in;                  /* in_alloc + in_shift; buf_bytes bytes (+ D4_SLACK readable junk) */
    uint64_t *offset;
    uint16_t *height, *width;
    uint8_t *ops;                 /* NULL: batch_op for every grid */
    int batch_op;
    uint32_t flags;
    unsigned in_shift, out_shift; /* 0..15: how far the in and out base addresses are off 16-byte alignment */
    uint8_t *in_alloc;
    char desc[240];               /* how it was built (shapes, layout, seeds): part of every failure message */
} d4_batch;

typedef struct d4_result {
    size_t n;
    uint64_t buf_bytes, alloc_bytes; /* alloc_bytes = shift + buf_bytes + D4_SLACK */
    unsigned shift;                  /* out = out_alloc + shift */
    uint8_t *out, *out_alloc;
    uint16_t *out_height, *out_width;
    uint8_t poison;                  /* what every cell byte held before the call */
} d4_result;

typedef struct d4_runner {
    const char *name;
    /* Executes b once. On entry every byte of res->out_alloc holds res->poison and both shape arrays hold
     * D4_SHAPE_POISON. A device runner puts the same poison into its own buffers (the whole out
     * allocation, at the same shift) and copies all of them back into res. Returns the call's
     * grid_d4_status and, when not OK, the offending grid index in *bad_index. A failure of the runner's
     * own machinery (a CUDA call) ends the test; anything else it finds wrong (a status record that was
     * never reset, say) it reports with cr_expect in its own words and then returns -1. */
    int (*run)(void *ctx, const d4_batch *b, d4_result *res, size_t *bad_index);
    /* Evidence that the last run executed where it should (NULL for the CPU): 0 or the number of violations,
     * explained in msg. launches 0 means "nothing may have been recorded". */
    int (*check_witness)(void *ctx, uint64_t launches, uint64_t items, char *msg, size_t msg_size);
    void *ctx;
} d4_runner;

/* ---- random numbers: splitmix64, seeds printed by the builders ---- */
typedef struct d4_rng {
    uint64_t state;
} d4_rng;
uint64_t d4_rng_next(d4_rng *rng);
uint32_t d4_rng_below(d4_rng *rng, uint32_t bound); /* uniform in [0, bound), bound >= 1 */
void d4_shuffle(size_t *items, size_t n, d4_rng *rng);

/* ---- batches ---- */
/* Metadata for n grids of the given shapes (any values, 0 and > 255 included: used for bad input) laid out
 * as asked; cells are set to a junk pattern, ops NULL, batch_op 0, flags 0. `what` names the shape set. */
void d4_batch_make(d4_batch *b, size_t n, const uint16_t *height, const uint16_t *width, d4_layout layout,
                   uint64_t seed, const char *what);
void d4_batch_free(d4_batch *b);
/* dst grid i is src grid order[i] (order NULL: identity), cells copied, ops permuted the same way, new
 * layout and shifts. */
void d4_batch_relayout(d4_batch *dst, const d4_batch *src, const size_t *order, size_t n, d4_layout layout,
                       uint64_t seed, unsigned in_shift, unsigned out_shift);
/* A batch whose inputs are a result of src (same offsets and shifts, shapes from the result), for chains. */
void d4_batch_from_result(d4_batch *dst, const d4_batch *src, const d4_result *res);
void d4_batch_shift(d4_batch *b, unsigned in_shift, unsigned out_shift);

static inline uint8_t *d4_grid(const d4_batch *b, size_t k) { return b->in + b->offset[k]; }
static inline uint64_t d4_cells(const d4_batch *b, size_t k) { return (uint64_t)b->height[k] * b->width[k]; }
uint64_t d4_total_cells(const d4_batch *b);
const char *d4_layout_name(d4_layout layout);

/* Cell values: uniform in 0..max_value; pairwise distinct within each grid (needs H*W <= 256). */
void d4_fill_random(d4_batch *b, unsigned max_value, uint64_t seed);
void d4_fill_distinct(d4_batch *b, uint64_t seed);

void d4_set_batch_op(d4_batch *b, int op); /* frees ops */
void d4_set_ops_all(d4_batch *b, uint8_t op);
void d4_set_ops_random(d4_batch *b, uint64_t seed);
static inline int d4_op_of(const d4_batch *b, size_t k) { return b->ops ? b->ops[k] : b->batch_op; }

/* ---- shape sets ---- */
/* All (h, w) in 1..30 x 1..30, row-major (900). */
void d4_shapes_small(uint16_t *height, uint16_t *width);
/* The 900 small shapes shuffled, with a 30x30 after every non-square one. Returns the count (<= 1800). */
size_t d4_shapes_interleaved(uint16_t *height, uint16_t *width, uint64_t seed);

/* ---- ARC data (tests/data, through gw_arc) ---- */
/* Every grid (train and test, inputs and outputs) of the 400 ARC-AGI-1 training tasks, in sorted file
 * order: 3436 grids. Fails the test when the data is missing or the counts differ. */
void d4_batch_arc(d4_batch *b, d4_layout layout, uint64_t seed);
/* n grids whose shapes are drawn uniformly from those 3436 grids (mean ~129 cells), cells 0..9. */
void d4_batch_arc_sample(d4_batch *b, size_t n, d4_layout layout, uint64_t seed);

/* ---- golden vectors (tests/data/d4_golden.jsonl, made by arc-dsl) ---- */
typedef struct d4_golden {
    d4_batch batch;          /* every record's input, packed in file order; ops = the record's op */
    uint8_t *want;           /* expected cells at the same offsets (buf_bytes) */
    uint16_t *want_height, *want_width;
    char **src;              /* each record's "src", for messages */
} d4_golden;
void d4_golden_load(d4_golden *g);
void d4_golden_free(d4_golden *g);
/* Name (as in the spec table and arc-dsl) to code, -1 when unknown. */
int d4_op_from_name(const char *name);

/* ---- results and checks ---- */
void d4_result_init(d4_result *res, const d4_batch *b);
void d4_result_free(d4_result *res);
/* Every out byte (slack included) = poison, shapes = D4_SHAPE_POISON. */
void d4_result_poison(d4_result *res, uint8_t poison);
/* The next call's cell poison: D4_POISON_A and D4_POISON_B alternately, per process. */
uint8_t d4_next_poison(void);

/* The oracle: the per-op formulas of the spec table, written apart from the reference. Writes only the
 * grids' bytes and shapes of res (poison it first). b must be valid. */
void d4_oracle(const d4_batch *b, d4_result *res);

/* Compares two results of the same batch: shapes, then the cells of each grid, then every byte outside
 * the grids (gaps and slack). Returns the number of problems and puts the first few, with grid index,
 * cell index and both values, into msg, plus "N of M output bytes still hold the poison ..." when the
 * got side left grid bytes unwritten. */
size_t d4_compare(const d4_batch *b, const d4_result *got, const d4_result *want, char *msg, size_t msg_size);

/* Same grids in two results of possibly different layouts: result grid ka of (ba, ra) equals result grid
 * kb of (bb, rb), shapes and bytes. */
int d4_result_grid_equal(const d4_batch *ba, const d4_result *ra, size_t ka, const d4_batch *bb,
                         const d4_result *rb, size_t kb);

/* Runs b through r and asserts the full check (status OK, outputs = oracle, witness: one launch, sum H*W
 * items); res (initialised here, free it with d4_result_free) keeps the checked result. */
void d4_run_ok(const d4_runner *r, const d4_batch *b, d4_result *res);
/* Runs b, which must be rejected with `code` at grid `index`: status and index, every output byte and
 * shape still the poison, and the witness (one launch, 0 items) when the runner has one. */
void d4_run_error(const d4_runner *r, const d4_batch *b, int code, size_t index);

#endif /* GRID_D4_BATCH_H */
