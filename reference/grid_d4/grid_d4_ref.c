/* SPDX-License-Identifier: MIT
 * grid_d4_ref: CPU reference and host-side validation for kernels/grid_d4 (contract in grid_d4.h,
 * rules in docs/grid_d4.md, "Semantics" and "Bad input"). Plain loops that follow the definition; speed
 * is secondary.
 * Flags are ignored here: GRID_D4_PREVALIDATED only changes what the device checks, and unknown flag
 * bits are the launcher's business (it returns cudaErrorInvalidValue for them).
 */
#include "grid_d4_ref.h"

#include <stdlib.h>

/* A byte range [start, start + len) of the address space. len saturates at UINT64_MAX instead of
 * wrapping, so an array too long to exist still reads as "covers everything after start". */
typedef struct byte_range {
    uint64_t start, len;
} byte_range;

static byte_range range_of(const void *ptr, uint64_t count, uint64_t elem_size)
{
    byte_range r = {(uint64_t)(uintptr_t)ptr, 0};
    r.len = count > UINT64_MAX / elem_size ? UINT64_MAX : count * elem_size;
    return r;
}

/* Intersection without computing either end: the later start must lie inside the earlier range.
 * Empty ranges (a NULL ops array, buf_bytes 0) intersect nothing. */
static int ranges_intersect(byte_range a, byte_range b)
{
    if (a.len == 0 || b.len == 0) return 0;
    return a.start <= b.start ? b.start - a.start < a.len : a.start - b.start < b.len;
}

/* One grid's byte range, for the overlap check. */
typedef struct grid_extent {
    uint64_t offset, size;
    size_t index;
} grid_extent;

/* Sort key (offset, index): deterministic even though qsort is not stable. */
static int extent_cmp(const void *pa, const void *pb)
{
    const grid_extent *a = pa, *b = pb;
    if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Full overlap check over grids that already passed the per-grid rules (so sizes are >= 1 and every
 * range ends inside the buffer: offset + size cannot overflow). After sorting by offset, the first
 * overlap in sorted order is always between neighbours: if entries 0..i-1 are pairwise disjoint they
 * are ordered, the furthest end among them is entry i-1's, and entry i overlaps some earlier entry
 * exactly when it starts before that end. */
static grid_d4_status check_overlap(size_t n, const uint64_t *offset, const uint16_t *height,
                                    const uint16_t *width, size_t *bad_index)
{
    grid_extent *e = n <= SIZE_MAX / sizeof *e ? malloc(n * sizeof *e) : NULL;
    if (!e) {
        /* No memory for the sort: a quadratic scan that reports the same pair. By the argument above,
         * that pair is the overlapping pair whose later member (in (offset, index) order) comes first. */
        int found = 0;
        grid_extent best_later = {0, 0, 0}, best_earlier = {0, 0, 0};
        for (size_t a = 0; a < n; a++) {
            for (size_t b = a + 1; b < n; b++) {
                grid_extent ea = {offset[a], (uint64_t)height[a] * width[a], a};
                grid_extent eb = {offset[b], (uint64_t)height[b] * width[b], b};
                byte_range ra = {ea.offset, ea.size}, rb = {eb.offset, eb.size};
                if (!ranges_intersect(ra, rb)) continue;
                const int a_first = extent_cmp(&ea, &eb) < 0;
                grid_extent later = a_first ? eb : ea, earlier = a_first ? ea : eb;
                if (!found || extent_cmp(&later, &best_later) < 0) {
                    best_later = later;
                    best_earlier = earlier;
                    found = 1;
                }
            }
        }
        if (!found) return GRID_D4_OK;
        *bad_index = best_earlier.index < best_later.index ? best_earlier.index : best_later.index;
        return GRID_D4_ERR_OVERLAP;
    }
    for (size_t k = 0; k < n; k++) {
        e[k].offset = offset[k];
        e[k].size = (uint64_t)height[k] * width[k];
        e[k].index = k;
    }
    qsort(e, n, sizeof *e, extent_cmp);
    grid_d4_status s = GRID_D4_OK;
    for (size_t i = 1; i < n; i++) {
        if (e[i].offset < e[i - 1].offset + e[i - 1].size) {
            *bad_index = e[i - 1].index < e[i].index ? e[i - 1].index : e[i].index;
            s = GRID_D4_ERR_OVERLAP;
            break;
        }
    }
    free(e);
    return s;
}

grid_d4_status grid_d4_validate(const grid_d4_params *p, const uint8_t *in, const uint8_t *out,
                                const uint64_t *offset, const uint16_t *height, const uint16_t *width,
                                const uint16_t *out_height, const uint16_t *out_width, const uint8_t *ops,
                                size_t *bad_index)
{
    size_t unused_index;
    if (!bad_index) bad_index = &unused_index;
    *bad_index = 0;
    if (!p) return GRID_D4_ERR_NULL;
    const size_t n = p->n_grids;
    if (n == 0) return GRID_D4_OK; /* nothing to do, nothing is read: pointers may be NULL */

    if (!in || !out || !offset || !height || !width || !out_height || !out_width) return GRID_D4_ERR_NULL;
    if (!ops && (p->batch_op < 0 || p->batch_op > 7)) return GRID_D4_ERR_OP;

    /* Aliasing, on addresses only. Inputs may share memory with each other (they are only read);
     * every output array must be disjoint from every input array and from the other outputs. */
    const byte_range inputs[] = {
        range_of(in, p->buf_bytes, 1),  range_of(offset, n, sizeof *offset), range_of(height, n, sizeof *height),
        range_of(width, n, sizeof *width), range_of(ops, ops ? n : 0, 1),
    };
    const byte_range outputs[] = {
        range_of(out, p->buf_bytes, 1),
        range_of(out_height, n, sizeof *out_height),
        range_of(out_width, n, sizeof *out_width),
    };
    const size_t n_in = sizeof inputs / sizeof inputs[0], n_out = sizeof outputs / sizeof outputs[0];
    for (size_t o = 0; o < n_out; o++) {
        for (size_t i = 0; i < n_in; i++)
            if (ranges_intersect(outputs[o], inputs[i])) return GRID_D4_ERR_ALIAS;
        for (size_t o2 = o + 1; o2 < n_out; o2++)
            if (ranges_intersect(outputs[o], outputs[o2])) return GRID_D4_ERR_ALIAS;
    }

    /* Per-grid rules, lowest k first; within a grid in table order (docs/grid_d4.md, "Bad input"). */
    for (size_t k = 0; k < n; k++) {
        grid_d4_status s = GRID_D4_OK;
        const uint64_t size = (uint64_t)height[k] * width[k];
        if (ops && ops[k] > 7)
            s = GRID_D4_ERR_OP;
        else if (height[k] == 0 || width[k] == 0)
            s = GRID_D4_ERR_EMPTY;
        else if (height[k] > GRID_D4_MAX_DIM || width[k] > GRID_D4_MAX_DIM)
            s = GRID_D4_ERR_TOO_LARGE;
        else if (offset[k] > p->buf_bytes || size > p->buf_bytes - offset[k]) /* offset + size, no overflow */
            s = GRID_D4_ERR_BOUNDS;
        if (s != GRID_D4_OK) {
            *bad_index = k;
            return s;
        }
    }
    return check_overlap(n, offset, height, width, bad_index);
}

/* One grid, straight from the definition: (r,c) = swap ? (j,i) : (i,j), then
 * out[i][j] = in[fr ? H-1-r : r][fc ? W-1-c : c]. */
static void transform_grid(int op, const uint8_t *in, uint8_t *out, unsigned h, unsigned w, uint16_t *out_h,
                           uint16_t *out_w)
{
    const int swap = (op >> 2) & 1, fr = (op >> 1) & 1, fc = op & 1;
    const unsigned oh = swap ? w : h, ow = swap ? h : w;
    for (unsigned i = 0; i < oh; i++) {
        for (unsigned j = 0; j < ow; j++) {
            const unsigned r = swap ? j : i, c = swap ? i : j;
            const unsigned sr = fr ? h - 1 - r : r, sc = fc ? w - 1 - c : c;
            out[(size_t)i * ow + j] = in[(size_t)sr * w + sc];
        }
    }
    *out_h = (uint16_t)oh;
    *out_w = (uint16_t)ow;
}

int grid_d4_ref(const grid_d4_params *p, const uint8_t *in, uint8_t *out, const uint64_t *offset,
                const uint16_t *height, const uint16_t *width, uint16_t *out_height, uint16_t *out_width,
                const uint8_t *ops)
{
    grid_d4_status s = grid_d4_validate(p, in, out, offset, height, width, out_height, out_width, ops, NULL);
    if (s != GRID_D4_OK) return s;
    for (size_t k = 0; k < p->n_grids; k++)
        transform_grid(ops ? ops[k] : p->batch_op, in + offset[k], out + offset[k], height[k], width[k],
                       &out_height[k], &out_width[k]);
    return GRID_D4_OK;
}

int grid_d4_ref_mt(const grid_d4_params *p, const uint8_t *in, uint8_t *out, const uint64_t *offset,
                   const uint16_t *height, const uint16_t *width, uint16_t *out_height, uint16_t *out_width,
                   const uint8_t *ops)
{
    grid_d4_status s = grid_d4_validate(p, in, out, offset, height, width, out_height, out_width, ops, NULL);
    if (s != GRID_D4_OK) return s;
    const size_t n = p->n_grids;
    const int batch_op = p->batch_op;
    /* Grids are disjoint (validated), so threads never write the same byte. Grid sizes vary from 1 to
     * 65025 cells, so chunks are handed out dynamically. */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 256)
#endif
    for (size_t k = 0; k < n; k++)
        transform_grid(ops ? ops[k] : batch_op, in + offset[k], out + offset[k], height[k], width[k],
                       &out_height[k], &out_width[k]);
    return GRID_D4_OK;
}
