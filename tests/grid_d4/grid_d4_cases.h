/* SPDX-License-Identifier: MIT
 * The grid_d4 test groups of docs/grid_d4.md, "Test groups", written once against a d4_runner. The CPU test
 * runs them on grid_d4_ref and grid_d4_ref_mt, the GPU test on grid_d4_launch. Every call inside goes through
 * d4_run_ok()/d4_run_error() (poison, status, outputs against the oracle, witness); the groups add the
 * property each one is about, derived in the test code from the rules of docs/grid_d4.md, never from the
 * code under test. Each function ends the test on the first failure.
 */
#ifndef GRID_D4_CASES_H
#define GRID_D4_CASES_H

#include <stddef.h>

#include "grid_d4_fixture.h"

/* Coordinate probes: R[i][j] = i and C[i][j] = j; the output names its source cell, which must be the one
 * the rule of docs/grid_d4.md, "Semantics" gives. Every (H, W) in 1..30 x 1..30, with each batch op and
 * random per-grid ops. */
void d4_case_probes_small(const d4_runner *r);
/* The same with H, W in {1, 2, 30, 31, 32, 33, 64, 255}. */
void d4_case_probes_large(const d4_runner *r);
/* All 64 pairs: op_b(op_a(g)) equals exactly one op_c(g), c is the composition rule's, and every row and
 * column of the table is a permutation of 0..7. */
void d4_case_cayley(const d4_runner *r);
/* The group laws of docs/grid_d4.md, "Test groups", as chains of calls compared with single calls or the
 * input. */
void d4_case_group_laws(const d4_runner *r);
/* Every shape with H, W >= 2 and H*W <= 256, pairwise-distinct cells: 8 pairwise-distinct images. */
void d4_case_distinct_images(const d4_runner *r);
/* Result shapes, results at their input offsets, gap bytes untouched. */
void d4_case_shape_laws(const d4_runner *r);
/* Each grid's 256-bin histogram is unchanged by every op. */
void d4_case_histograms(const d4_runner *r);
/* 1x1, 1xN and Nx1 (N = 2, 30, 255), 30x30..33x33, 255x255: together and alone in a tight buffer. */
void d4_case_edge_shapes(const d4_runner *r);
/* A dimension of 256 (or more) gives GRID_D4_ERR_TOO_LARGE at its index. */
void d4_case_dimension_256_is_too_large(const d4_runner *r);
/* The 900 small shapes interleaved with 30x30 grids; every batch op and random per-grid ops. */
void d4_case_mixed_interleaved(const d4_runner *r);
/* Every grid of the 400 ARC-AGI-1 training tasks; every batch op and random per-grid ops. */
void d4_case_all_arc_grids(const d4_runner *r);
/* n = 1, 31, 32, 33. */
void d4_case_small_batch_sizes(const d4_runner *r);
/* n = 0: success, nothing written, nothing launched. */
void d4_case_empty_batch(const d4_runner *r);
/* n ARC-distributed grids, random per-grid ops (16-aligned) and rot90 (packed). */
void d4_case_large_batch(const d4_runner *r, size_t n);
/* ops all k = batch op k; batch_op ignored (even out of range) when ops is set; random ops. */
void d4_case_per_grid_ops(const d4_runner *r);
/* Permuting grids (metadata and repacked cells) permutes the results. */
void d4_case_permutation(const d4_runner *r);
/* Packed, odd, 16-aligned, gaps, unsorted, base pointers shifted by 1 (and 15/7) byte: same results. */
void d4_case_layouts(const d4_runner *r);
/* The per-grid rows of docs/grid_d4.md, "Bad input" (ops[k] > 7, empty, too large, bounds with and without
 * overflow, overlap of consecutive ascending entries), lowest index, order within a grid, per-grid before
 * overlap. */
void d4_case_bad_metadata(const d4_runner *r);
/* Two runs of the same batch give identical bytes. */
void d4_case_determinism(const d4_runner *r);
/* $GW_DATA_DIR/arc/d4_golden.jsonl: all 5600 records as one per-grid-op batch, and 700 per batch op. */
void d4_case_golden(const d4_runner *r);

/* The composition rule of docs/grid_d4.md, "Composition" (op a, then op b), exported for the CPU test's own
 * checks. */
int d4_compose(int a, int b);

#endif /* GRID_D4_CASES_H */
