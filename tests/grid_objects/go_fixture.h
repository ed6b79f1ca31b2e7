/* SPDX-License-Identifier: MIT
 * Test fixtures for grid_objects, shared by the CPU reference tests and the GPU tests, on top of the batch
 * builder of grid_d4 (grid_d4_batch.h: shapes, layouts, cells; its ops array is the variants array) and the
 * result helpers of grid_objects_batch.h (poison, compare).
 *
 * A go_runner executes a batch: the CPU test wraps grid_objects_ref / grid_objects_ref_mt, the GPU test wraps
 * grid_objects_launch (upload, poison, launch, download). The test groups in go_cases.h only talk to a
 * runner, so the logic of every GPU test also runs, and is debugged, against the reference on machines
 * without a GPU.
 *
 * Every call made through go_run_ok()/go_run_error() poisons all outputs first (GO_POISON_A and GO_POISON_B
 * alternating per call) and then checks, in this order and without stopping at the first failure: the
 * status, that no output still holds the poison (the words "still holds the poison"), the outputs against
 * the oracle (go_oracle: a union-find written apart from the reference's flood fill; the words "result
 * differs"), then the runner's witness. Each failed check prints its own words before the test stops, so a
 * planted fault is named by the guard meant to catch it even when an earlier guard also fires.
 */
#ifndef GO_FIXTURE_H
#define GO_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "grid_d4_batch.h"
#include "grid_objects.h"
#include "grid_objects_batch.h"

#define GO_POISON_A 0xA5u /* poison on even calls */
#define GO_POISON_B 0x3Cu /* poison on odd calls */

/* A builder call that allocates: out of memory ends the test (fixtures are not the thing under test). */
#define GO_FIX(call) cr_assert((call) == 0, "test fixture: out of memory in %s", #call)

typedef struct go_runner {
    const char *name;
    /* Executes b once under bg_tie. On entry every entry of res holds the poison res->poison
     * (grid_objects_result_poison). A device runner puts the same poison into its own buffers and copies all
     * of them back into res. Returns the call's grid_objects_status and, when not OK, the offending grid
     * index in *bad_index. A failure of the runner's own machinery (a CUDA call) ends the test; anything else
     * it finds wrong it reports with cr_expect in its own words and then returns -1. */
    int (*run)(void *ctx, const grid_d4_batch *b, int bg_tie, grid_objects_result *res, size_t *bad_index);
    /* Evidence that the last run executed where it should (NULL for the CPU): 0 or the number of violations,
     * explained in msg. launches 0 means "nothing may have been recorded". */
    int (*check_witness)(void *ctx, uint64_t launches, uint64_t items, char *msg, size_t msg_size);
    void *ctx;
} go_runner;

/* The next call's poison: GO_POISON_A and GO_POISON_B alternately, per process. */
uint8_t go_next_poison(void);

/* The oracle: union-find over the definition in docs/grid_objects.md, written apart from the reference.
 * Writes labels, n_objects, bg and the first n_objects[k] records of every grid of res. b must be valid. */
void go_oracle(const grid_d4_batch *b, int bg_tie, grid_objects_result *res);

/* Runs b through r and checks everything (status OK, nothing left poisoned, outputs = oracle, witness: one
 * launch, sum H*W items); res (initialised here, free it with grid_objects_result_free) keeps the checked
 * result. Ends the test when any check failed. */
void go_run_ok(const go_runner *r, const grid_d4_batch *b, int bg_tie, grid_objects_result *res);

/* Runs b, which must be rejected with `code` at grid `index`: status and index, every output still the
 * poison, and the witness (one launch, 0 items) when the runner has one. */
void go_run_error(const go_runner *r, const grid_d4_batch *b, int code, size_t index);

#endif /* GO_FIXTURE_H */
