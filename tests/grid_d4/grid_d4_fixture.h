/* SPDX-License-Identifier: MIT
 * Test fixtures for grid_d4, shared by the CPU reference tests and the GPU tests, on top of the project's one
 * batch builder (reference/grid_d4/grid_d4_batch.h: batches, layouts, results, poison, compare).
 *
 * A d4_runner executes a batch: the CPU test wraps grid_d4_ref / grid_d4_ref_mt, the GPU test wraps
 * grid_d4_launch (upload, poison, launch, download). The test cases in grid_d4_cases.h only talk to a runner,
 * so the logic of every GPU test also runs, and is debugged, against the reference on machines without a GPU.
 *
 * Every call made through d4_run_ok()/d4_run_error() poisons all outputs first (cells 0xFF or 0x5A,
 * alternating per call; shapes 0xFFFF) and then checks, in this order: the status, the outputs against
 * an independent oracle (the per-op formulas of the op table in docs/grid_d4.md, not the reference's general
 * rule; every byte of the out allocation, gaps and slack included, and both shape arrays), then the runner's
 * witness. Each failed check prints its own words before the test stops, so a planted fault is named by the
 * guard meant to catch it even when an earlier guard also fires.
 */
#ifndef GRID_D4_FIXTURE_H
#define GRID_D4_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "grid_d4.h"
#include "grid_d4_batch.h"

#define D4_POISON_A 0xFFu /* cell poison on even calls */
#define D4_POISON_B 0x5Au /* cell poison on odd calls: a cell left unwritten fails on one of them */

/* A builder call that allocates: out of memory ends the test (fixtures are not the thing under test). */
#define D4_FIX(call) cr_assert((call) == 0, "test fixture: out of memory in %s", #call)

typedef struct d4_runner {
    const char *name;
    /* Executes b once. On entry every byte of res->out_alloc holds res->poison and both shape arrays hold
     * GRID_D4_SHAPE_POISON. A device runner puts the same poison into its own buffers (the whole out
     * allocation, at the same shift) and copies all of them back into res. Returns the call's
     * grid_d4_status and, when not OK, the offending grid index in *bad_index. A failure of the runner's
     * own machinery (a CUDA call) ends the test; anything else it finds wrong (a status record that was
     * never reset, say) it reports with cr_expect in its own words and then returns -1. */
    int (*run)(void *ctx, const grid_d4_batch *b, grid_d4_result *res, size_t *bad_index);
    /* Evidence that the last run executed where it should (NULL for the CPU): 0 or the number of violations,
     * explained in msg. launches 0 means "nothing may have been recorded". */
    int (*check_witness)(void *ctx, uint64_t launches, uint64_t items, char *msg, size_t msg_size);
    void *ctx;
} d4_runner;

/* ---- shape sets ---- */
/* All (h, w) in 1..30 x 1..30, row-major (900). */
void d4_shapes_small(uint16_t *height, uint16_t *width);
/* The 900 small shapes shuffled, with a 30x30 after every non-square one. Returns the count (<= 1800). */
size_t d4_shapes_interleaved(uint16_t *height, uint16_t *width, uint64_t seed);

/* ---- ARC data ($GW_DATA_DIR/arc/arc-agi-1-training, through gw_arc; only in *_data suites) ---- */
/* Every grid (train and test, inputs and outputs) of the 400 ARC-AGI-1 training tasks, in sorted file
 * order: 3436 grids. Skips without GW_DATA_DIR (gw_data_path); fails when the counts differ, and when the
 * shape table of grid_d4_batch_arc_sample no longer describes the data. */
void d4_batch_arc(grid_d4_batch *b, grid_d4_layout layout, uint64_t seed);

/* ---- golden vectors ($GW_DATA_DIR/arc/d4_golden.jsonl, made by arc-dsl; only in *_data suites) ---- */
typedef struct d4_golden {
    grid_d4_batch batch;     /* every record's input, packed in file order; ops = the record's op */
    uint8_t *want;           /* expected cells at the same offsets (buf_bytes) */
    uint16_t *want_height, *want_width;
    char **src;              /* each record's "src", for messages */
} d4_golden;
void d4_golden_load(d4_golden *g);
void d4_golden_free(d4_golden *g);
/* Name (as in the op table and arc-dsl) to code, -1 when unknown. */
int d4_op_from_name(const char *name);

/* ---- results and checks ---- */
/* The next call's cell poison: D4_POISON_A and D4_POISON_B alternately, per process. */
uint8_t d4_next_poison(void);

/* The oracle: the per-op formulas of the op table, written apart from the reference. Writes only the
 * grids' bytes and shapes of res (poison it first). b must be valid. */
void d4_oracle(const grid_d4_batch *b, grid_d4_result *res);

/* Same grids in two results of possibly different layouts: result grid ka of (ba, ra) equals result grid
 * kb of (bb, rb), shapes and bytes. */
int d4_result_grid_equal(const grid_d4_batch *ba, const grid_d4_result *ra, size_t ka, const grid_d4_batch *bb,
                         const grid_d4_result *rb, size_t kb);

/* Runs b through r and asserts the full check (status OK, outputs = oracle, witness: one launch, sum H*W
 * items); res (initialised here, free it with grid_d4_result_free) keeps the checked result. */
void d4_run_ok(const d4_runner *r, const grid_d4_batch *b, grid_d4_result *res);
/* Runs b, which must be rejected with `code` at grid `index`: status and index, every output byte and
 * shape still the poison, and the witness (one launch, 0 items) when the runner has one. */
void d4_run_error(const d4_runner *r, const grid_d4_batch *b, int code, size_t index);

#endif /* GRID_D4_FIXTURE_H */
