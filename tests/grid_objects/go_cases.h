/* SPDX-License-Identifier: MIT
 * The grid_objects test groups, written once against a go_runner. The CPU test runs them on grid_objects_ref
 * and grid_objects_ref_mt, the GPU test on grid_objects_launch. Every call inside goes through
 * go_run_ok()/go_run_error() (poison, status, outputs against the oracle, witness); each group adds the law it
 * is about, derived in the test code from the rules of grid_objects.h, never from the code under test. Each
 * function ends the test on the first failure. Groups marked "data" read $GW_DATA_DIR and must run in a suite
 * whose name ends in _data.
 */
#ifndef GO_CASES_H
#define GO_CASES_H

#include <stddef.h>

#include "go_fixture.h"

/* GW_GO_QUICK=1 (the Valgrind run): the groups use smaller batches and leave out their 255 x 255 grids; the
 * code paths stay the same. */
int go_quick(void);

/* data: $GW_DATA_DIR/arc/objects_golden.jsonl against every ARC-AGI-1 training grid, all 8 variants (and
 * random per-grid variants): n_objects, bg, the label map's SHA-256 and, where a record has them, the full
 * label maps; bg on the 164 tie grids (arc-dsl rule: all equal; smallest rule: 46 differ). */
void go_case_golden(const go_runner *r);
/* data: every grid of the 400 training tasks, each variant and random per-grid variants, laws included. */
void go_case_all_arc_grids(const go_runner *r);
/* The laws (canonical labels, neighbour rule, connectivity, object table = label map, bg a most frequent
 * colour) on random and ARC-shaped batches, all 8 variants and per-grid variants, both bg_tie rules. */
void go_case_laws(const go_runner *r);
/* objects commutes with the 8 D4 ops (grid_d4_ref): same counts, same partition into objects, same sizes and
 * colours, for every variant (bg_tie smallest: the arc-dsl tie depends on the cell order). */
void go_case_d4_commutes(const go_runner *r);
/* 1x1, 1xN and Nx1 (N = 2, 30, 255), 255x255 (random, and one colour: one object of 65025 cells),
 * one-colour grids of many shapes: exact counts. */
void go_case_edge_shapes(const go_runner *r);
/* Checkerboards: closed-form counts under 4- and 8-connectivity for every variant. */
void go_case_checkerboards(const go_runner *r);
/* One-cell-wide spiral paths in 30x30 and 255x255: one object (many union passes). */
void go_case_spirals(const go_runner *r);
/* The bg tie rule: 0d3d703e's 2,3,8 tie (arc-dsl 8), slot collisions, colours above 31, 5+ colours
 * (smallest), the smallest option; through the runner and grid_objects_ref_bg. */
void go_case_bg_ties(const go_runner *r);
/* Per-grid variants equal the batch variant grid by grid; batch_variant is ignored (even out of range) when
 * variants is set; mixed shapes. */
void go_case_per_grid_variants(const go_runner *r);
/* n = 1, 31, 32, 33. */
void go_case_small_batch_sizes(const go_runner *r);
/* n ARC-distributed grids (grid_d4_batch_arc_sample), per-grid variants and one batch variant. */
void go_case_large_batch(const go_runner *r, size_t n);
/* n = 0: success, nothing written, nothing launched. */
void go_case_empty_batch(const go_runner *r);
/* Packed, odd, 16-aligned, gaps, unsorted: the same results grid by grid. */
void go_case_layouts(const go_runner *r);
/* Three runs of one batch give identical results. */
void go_case_determinism(const go_runner *r);
/* Per-grid metadata errors: variants[k] > 7, empty, too large (256), bounds, overlap of consecutive ascending
 * entries; lowest index wins, per-grid before overlap, nothing written. */
void go_case_bad_metadata(const go_runner *r);

#endif /* GO_CASES_H */
