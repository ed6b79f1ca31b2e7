/* SPDX-License-Identifier: MIT
 * Host-side grid_d4 batches for the CLI: allocation, the built-in random problem, poison and compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_arc_shapes.h"
#include "gw_cli.h"

int gw_d4_batch_alloc(gw_d4_batch *b, size_t n_grids, uint64_t buf_bytes, int per_grid_ops)
{
    memset(b, 0, sizeof *b);
    b->n_grids = n_grids;
    b->buf_bytes = buf_bytes;
    /* +1 so that empty batches still get distinct, non-NULL pointers */
    b->in = calloc((size_t)buf_bytes + 1, 1);
    b->offset = calloc(n_grids + 1, sizeof *b->offset);
    b->height = calloc(n_grids + 1, sizeof *b->height);
    b->width = calloc(n_grids + 1, sizeof *b->width);
    if (per_grid_ops) b->ops = calloc(n_grids + 1, 1);
    if (!b->in || !b->offset || !b->height || !b->width || (per_grid_ops && !b->ops)) {
        gw_d4_batch_free(b);
        return -1;
    }
    return 0;
}

void gw_d4_batch_free(gw_d4_batch *b)
{
    free(b->in);
    free(b->offset);
    free(b->height);
    free(b->width);
    free(b->ops);
    memset(b, 0, sizeof *b);
}

int gw_d4_out_alloc(gw_d4_out *o, const gw_d4_batch *b)
{
    o->cells = malloc((size_t)b->buf_bytes + 1);
    o->height = malloc((b->n_grids + 1) * sizeof *o->height);
    o->width = malloc((b->n_grids + 1) * sizeof *o->width);
    if (!o->cells || !o->height || !o->width) {
        gw_d4_out_free(o);
        return -1;
    }
    return 0;
}

void gw_d4_out_free(gw_d4_out *o)
{
    free(o->cells);
    free(o->height);
    free(o->width);
    memset(o, 0, sizeof *o);
}

void gw_d4_out_poison(gw_d4_out *o, const gw_d4_batch *b, uint8_t byte)
{
    memset(o->cells, byte, (size_t)b->buf_bytes);
    memset(o->height, 0xFF, b->n_grids * sizeof *o->height);
    memset(o->width, 0xFF, b->n_grids * sizeof *o->width);
}

/* splitmix64: tiny, seedable, and the same on every platform, so a seed names one problem everywhere. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias worth caring about for n far below 2^32. */
static uint32_t random_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(((next_random(state) >> 32) * (uint64_t)n) >> 32);
}

int gw_d4_batch_random(gw_d4_batch *b, size_t n_grids, uint64_t seed, int per_grid_ops, int batch_op, int aligned16)
{
    enum { N_SHAPES = sizeof gw_arc_shapes / sizeof gw_arc_shapes[0] };
    /* Cumulative counts: drawing a grid index in [0, GW_ARC_SHAPES_GRIDS) gives each real grid's shape
     * the weight it has in the ARC data. */
    uint32_t cumulative[N_SHAPES];
    uint32_t total = 0;
    for (size_t s = 0; s < N_SHAPES; s++) cumulative[s] = total += gw_arc_shapes[s].count;

    uint64_t state = seed;
    uint16_t *h = malloc((n_grids + 1) * sizeof *h), *w = malloc((n_grids + 1) * sizeof *w);
    if (!h || !w) {
        free(h);
        free(w);
        return -1;
    }
    uint64_t bytes = 0, cells = 0;
    for (size_t k = 0; k < n_grids; k++) {
        uint32_t pick = random_below(&state, total);
        size_t lo = 0, hi = N_SHAPES - 1;
        while (lo < hi) { /* first s with cumulative[s] > pick */
            size_t mid = (lo + hi) / 2;
            if (cumulative[mid] > pick) hi = mid;
            else lo = mid + 1;
        }
        h[k] = gw_arc_shapes[lo].height;
        w[k] = gw_arc_shapes[lo].width;
        uint64_t size = (uint64_t)h[k] * w[k];
        cells += size;
        bytes = (aligned16 ? (bytes + 15u) & ~(uint64_t)15u : bytes) + size;
    }
    if (gw_d4_batch_alloc(b, n_grids, bytes, per_grid_ops)) {
        free(h);
        free(w);
        return -1;
    }
    b->cells = cells;
    b->batch_op = batch_op;
    uint64_t at = 0;
    for (size_t k = 0; k < n_grids; k++) {
        if (aligned16) at = (at + 15u) & ~(uint64_t)15u;
        b->offset[k] = at;
        b->height[k] = h[k];
        b->width[k] = w[k];
        for (uint64_t i = 0; i < (uint64_t)h[k] * w[k]; i++) b->in[at + i] = (uint8_t)random_below(&state, 10);
        if (b->ops) b->ops[k] = (uint8_t)random_below(&state, 8);
        at += (uint64_t)h[k] * w[k];
    }
    free(h);
    free(w);
    return 0;
}

int gw_d4_out_compare(const gw_d4_out *got, const gw_d4_out *want, const gw_d4_batch *b, uint8_t gap_byte,
                      char *msg, size_t msg_size)
{
    for (size_t k = 0; k < b->n_grids; k++) {
        if (got->height[k] != want->height[k] || got->width[k] != want->width[k]) {
            snprintf(msg, msg_size, "grid %zu: result shape %ux%u, reference %ux%u", k, (unsigned)got->height[k],
                     (unsigned)got->width[k], (unsigned)want->height[k], (unsigned)want->width[k]);
            return 1;
        }
    }
    /* Grids first: memcmp per grid is fast, and the first differing grid is what a user needs to see. */
    size_t grid_diffs = 0, first_grid = 0, first_cell = 0;
    for (size_t k = 0; k < b->n_grids; k++) {
        const size_t at = (size_t)b->offset[k], size = (size_t)b->height[k] * b->width[k];
        if (memcmp(got->cells + at, want->cells + at, size) == 0) continue;
        for (size_t i = 0; i < size; i++) {
            if (got->cells[at + i] != want->cells[at + i] && grid_diffs++ == 0) {
                first_grid = k;
                first_cell = i;
            }
        }
    }
    if (grid_diffs) {
        const size_t at = (size_t)b->offset[first_grid] + first_cell;
        snprintf(msg, msg_size, "%zu cells differ; first in grid %zu (%ux%u) at cell %zu: got %u, reference %u",
                 grid_diffs, first_grid, (unsigned)b->height[first_grid], (unsigned)b->width[first_grid], first_cell,
                 (unsigned)got->cells[at], (unsigned)want->cells[at]);
        return 1;
    }
    /* Bytes outside all grids must not be written: they must still hold the poison. */
    uint8_t *in_grid = calloc((size_t)b->buf_bytes + 1, 1);
    if (!in_grid) {
        snprintf(msg, msg_size, "out of memory comparing %llu bytes", (unsigned long long)b->buf_bytes);
        return -1;
    }
    for (size_t k = 0; k < b->n_grids; k++)
        memset(in_grid + b->offset[k], 1, (size_t)b->height[k] * b->width[k]);
    size_t gap_diffs = 0, first = 0;
    for (size_t i = 0; i < (size_t)b->buf_bytes; i++)
        if (!in_grid[i] && got->cells[i] != gap_byte && gap_diffs++ == 0) first = i;
    free(in_grid);
    if (gap_diffs) {
        snprintf(msg, msg_size, "%zu bytes written outside all grids; first at byte %zu: got 0x%02X, expected the "
                 "poison 0x%02X", gap_diffs, first, (unsigned)got->cells[first], (unsigned)gap_byte);
        return 1;
    }
    return 0;
}
