/* SPDX-License-Identifier: MIT
 * grid_objects_ref: CPU reference for kernels/grid_objects (see grid_objects.h for the semantics and layout),
 * plus the host-side validation of a batch description that both the reference and GPU callers use.
 *
 * Same parameters, names and order as grid_objects_launch, without the d_ prefixes, status, witness and
 * stream. Returns a grid_objects_status (GRID_OBJECTS_OK = 0); on any error nothing has been written.
 * The records of grid k past n_objects[k] are left as they were. grid_objects_ref_mt gives the same bytes,
 * with OpenMP threads over grids (serial when built without OpenMP).
 * Written to be obviously right and independent of the kernel: a breadth-first flood fill from each
 * unvisited cell in row-major order, so an object's label is its first cell by construction.
 */
#ifndef GRID_OBJECTS_REF_H
#define GRID_OBJECTS_REF_H

#include <stddef.h>
#include <stdint.h>

#include "grid_objects.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks host copies of the batch description, in the order of the table in docs/grid_objects.md, "Bad
 * input": NULL pointers, batch_variant (when variants is NULL), bg_tie, flags, aliasing (pointer ranges
 * only), padding (out_entries, the alignment of labels and objects), then per grid k (lowest k first, rules
 * in order): variants[k], empty, too large, bounds; then overlap between any two grids (full check,
 * grid_d4_validate's: sorts, may allocate). *bad_index (may be NULL) gets the index, 0 when the error is not
 * about one grid. The outputs are only compared as addresses. */
grid_objects_status grid_objects_validate(const grid_objects_params *p, const uint8_t *in, const uint64_t *offset,
                                          const uint16_t *height, const uint16_t *width, const uint8_t *variants,
                                          const uint16_t *labels, const grid_objects_object *objects,
                                          const uint32_t *n_objects, const int16_t *bg, size_t *bad_index);

int grid_objects_ref(const grid_objects_params *p, const uint8_t *in, const uint64_t *offset,
                     const uint16_t *height, const uint16_t *width, const uint8_t *variants, uint16_t *labels,
                     grid_objects_object *objects, uint32_t *n_objects, int16_t *bg);

int grid_objects_ref_mt(const grid_objects_params *p, const uint8_t *in, const uint64_t *offset,
                        const uint16_t *height, const uint16_t *width, const uint8_t *variants, uint16_t *labels,
                        grid_objects_object *objects, uint32_t *n_objects, int16_t *bg);

/* The bg colour of one grid's n_cells cells (row-major) under bg_tie: the tie rule of grid_objects.h alone,
 * so that tests can check it against arc-dsl's mostcolor. -1 when bg_tie is unknown or n_cells is 0. */
int grid_objects_ref_bg(const uint8_t *cells, size_t n_cells, int bg_tie);

#ifdef __cplusplus
}
#endif

#endif /* GRID_OBJECTS_REF_H */
