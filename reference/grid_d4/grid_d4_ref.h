/* SPDX-License-Identifier: MIT
 * grid_d4_ref: CPU reference for kernels/grid_d4 (see grid_d4.h for the semantics and layout), plus the
 * host-side validation of a batch description that both the reference and GPU callers use.
 *
 * Same parameters, names and order as grid_d4_launch, without the d_ prefixes, status, witness and
 * stream. Returns a grid_d4_status (GRID_D4_OK = 0); on any error nothing has been written.
 * grid_d4_ref_mt gives the same bytes, with OpenMP threads over grids (serial when built without OpenMP).
 * Plain loops over the definition out[i][j] = in[fr ? H-1-r : r][fc ? W-1-c : c]: exact by construction.
 */
#ifndef GRID_D4_REF_H
#define GRID_D4_REF_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks host copies of the batch description in the order of the table in docs/grid_d4.md, "Bad input": NULL pointers, batch_op,
 * aliasing (pointer ranges only), then per grid k (lowest k first, rules in order): ops[k], empty,
 * too large, bounds; then overlap between any two grids (full check: sorts, may allocate; index = the
 * lower index of the first overlapping pair in offset order). *bad_index (may be NULL) gets the index,
 * 0 when the error is not about one grid. out/out_height/out_width are only compared as addresses. */
grid_d4_status grid_d4_validate(const grid_d4_params *p, const uint8_t *in, const uint8_t *out,
                                const uint64_t *offset, const uint16_t *height, const uint16_t *width,
                                const uint16_t *out_height, const uint16_t *out_width, const uint8_t *ops,
                                size_t *bad_index);

int grid_d4_ref(const grid_d4_params *p, const uint8_t *in, uint8_t *out, const uint64_t *offset,
                const uint16_t *height, const uint16_t *width, uint16_t *out_height, uint16_t *out_width,
                const uint8_t *ops);

int grid_d4_ref_mt(const grid_d4_params *p, const uint8_t *in, uint8_t *out, const uint64_t *offset,
                   const uint16_t *height, const uint16_t *width, uint16_t *out_height, uint16_t *out_width,
                   const uint8_t *ops);

#ifdef __cplusplus
}
#endif

#endif /* GRID_D4_REF_H */
