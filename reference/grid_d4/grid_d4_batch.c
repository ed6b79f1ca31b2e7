/* SPDX-License-Identifier: MIT
 * grid_d4 batches on the host: see grid_d4_batch.h for the contract.
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "grid_d4_batch.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid_d4_arc_shapes.h"

enum { MSG_LINES = 6 };

static void append_desc(grid_d4_batch *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append_desc(grid_d4_batch *b, const char *fmt, ...)
{
    const size_t used = strnlen(b->desc, sizeof b->desc - 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->desc + used, sizeof b->desc - used, fmt, ap);
    va_end(ap);
}

/* Appends a formatted line (with its newline) to msg, never past msg_size; msg stays terminated. */
static void append_line(char *msg, size_t msg_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append_line(char *msg, size_t msg_size, const char *fmt, ...)
{
    if (!msg || !msg_size) return;
    size_t used = strnlen(msg, msg_size - 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + used, msg_size - used, fmt, ap);
    va_end(ap);
    used = strnlen(msg, msg_size - 1);
    if (used + 1 < msg_size) msg[used] = '\n', msg[used + 1] = '\0';
}

/* ---------------------------------------------------------------- random numbers */

uint64_t grid_d4_rng_next(grid_d4_rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t grid_d4_rng_below(grid_d4_rng *rng, uint32_t bound)
{
    return (uint32_t)(((grid_d4_rng_next(rng) >> 32) * (uint64_t)bound) >> 32);
}

void grid_d4_shuffle(size_t *items, size_t n, grid_d4_rng *rng)
{
    for (size_t i = n; i > 1; i--) {
        const size_t j = grid_d4_rng_below(rng, (uint32_t)i);
        const size_t t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
}

/* ---------------------------------------------------------------- batches */

const char *grid_d4_layout_name(grid_d4_layout layout)
{
    switch (layout) {
    case GRID_D4_PACKED: return "packed";
    case GRID_D4_PACKED_ODD: return "packed from offset 1";
    case GRID_D4_ALIGNED16: return "16-aligned";
    case GRID_D4_GAPS: return "random gaps";
    case GRID_D4_UNSORTED: return "unsorted with gaps";
    }
    return "?";
}

uint64_t grid_d4_batch_cells(const grid_d4_batch *b)
{
    uint64_t total = 0;
    for (size_t k = 0; k < b->n; k++) total += grid_d4_batch_cells_of(b, k);
    return total;
}

grid_d4_params grid_d4_batch_params(const grid_d4_batch *b)
{
    const grid_d4_params p = {.n_grids = b->n, .buf_bytes = b->buf_bytes, .batch_op = b->batch_op, .flags = b->flags};
    return p;
}

/* Input bytes the call must never depend on: gaps and slack hold this junk. */
static void fill_junk(uint8_t *p, uint64_t bytes)
{
    for (uint64_t i = 0; i < bytes; i++) p[i] = (uint8_t)(i * 37u + 11u);
}

static int alloc_in(grid_d4_batch *b)
{
    free(b->in_alloc);
    const uint64_t bytes = b->in_shift + b->buf_bytes + GRID_D4_BATCH_SLACK;
    b->in_alloc = bytes <= SIZE_MAX ? malloc((size_t)bytes) : NULL;
    b->in = b->in_alloc ? b->in_alloc + b->in_shift : NULL;
    if (!b->in_alloc) return -1;
    fill_junk(b->in_alloc, bytes);
    return 0;
}

int grid_d4_batch_make(grid_d4_batch *b, size_t n, const uint16_t *height, const uint16_t *width,
                       grid_d4_layout layout, uint64_t seed, const char *what)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    /* +1: an empty batch still gets distinct, non-NULL arrays */
    b->offset = calloc(n + 1, sizeof *b->offset);
    b->height = calloc(n + 1, sizeof *b->height);
    b->width = calloc(n + 1, sizeof *b->width);
    size_t *order = malloc((n + 1) * sizeof *order);
    if (!b->offset || !b->height || !b->width || !order) {
        free(order);
        grid_d4_batch_free(b);
        return -1;
    }
    if (n) {
        memcpy(b->height, height, n * sizeof *height);
        memcpy(b->width, width, n * sizeof *width);
    }
    grid_d4_rng rng = {seed};
    for (size_t i = 0; i < n; i++) order[i] = i;
    if (layout == GRID_D4_UNSORTED) grid_d4_shuffle(order, n, &rng);
    uint64_t end = layout == GRID_D4_PACKED_ODD ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        const size_t k = order[i];
        if (layout == GRID_D4_ALIGNED16) end = (end + 15) & ~(uint64_t)15;
        if (layout == GRID_D4_GAPS || layout == GRID_D4_UNSORTED) end += grid_d4_rng_below(&rng, 41);
        b->offset[k] = end;
        end += (uint64_t)b->height[k] * b->width[k];
    }
    /* A tail after the last grid, so "bytes outside every grid" includes the buffer's own end. */
    if (layout == GRID_D4_GAPS || layout == GRID_D4_UNSORTED) end += grid_d4_rng_below(&rng, 41);
    free(order);
    b->buf_bytes = end;
    if (alloc_in(b)) {
        grid_d4_batch_free(b);
        return -1;
    }
    snprintf(b->desc, sizeof b->desc, "%s: %zu grids, %s", what, n, grid_d4_layout_name(layout));
    if (layout == GRID_D4_GAPS || layout == GRID_D4_UNSORTED) append_desc(b, " (layout seed %#" PRIx64 ")", seed);
    return 0;
}

void grid_d4_batch_free(grid_d4_batch *b)
{
    free(b->offset);
    free(b->height);
    free(b->width);
    free(b->ops);
    free(b->in_alloc);
    memset(b, 0, sizeof *b);
}

int grid_d4_batch_arc_sample(grid_d4_batch *b, size_t n, grid_d4_layout layout, uint64_t seed)
{
    enum { N_SHAPES = sizeof grid_d4_arc_shapes / sizeof grid_d4_arc_shapes[0] };
    /* Cumulative counts: a grid index drawn from [0, GRID_D4_ARC_SHAPES_GRIDS) gives each real grid's shape the
     * weight it has in the ARC data. */
    uint32_t cumulative[N_SHAPES];
    uint32_t total = 0;
    for (size_t s = 0; s < N_SHAPES; s++) cumulative[s] = total += grid_d4_arc_shapes[s].count;
    uint16_t *h = malloc((n + 1) * sizeof *h), *w = malloc((n + 1) * sizeof *w);
    if (!h || !w) {
        free(h);
        free(w);
        memset(b, 0, sizeof *b);
        return -1;
    }
    grid_d4_rng rng = {seed};
    for (size_t k = 0; k < n; k++) {
        const uint32_t pick = grid_d4_rng_below(&rng, total);
        size_t lo = 0, hi = N_SHAPES - 1;
        while (lo < hi) { /* the first shape whose cumulative count exceeds pick */
            const size_t mid = (lo + hi) / 2;
            if (cumulative[mid] > pick) hi = mid;
            else lo = mid + 1;
        }
        h[k] = grid_d4_arc_shapes[lo].height;
        w[k] = grid_d4_arc_shapes[lo].width;
    }
    char what[96];
    snprintf(what, sizeof what, "ARC-distributed shapes (seed %#" PRIx64 ")", seed);
    const int rc = grid_d4_batch_make(b, n, h, w, layout, seed ^ 0x1A70u, what);
    free(h);
    free(w);
    if (rc) return rc;
    grid_d4_batch_fill_random(b, 9, seed + 1);
    return 0;
}

int grid_d4_batch_builtin(grid_d4_batch *b, size_t n, uint64_t seed, int per_grid_ops, int batch_op, int aligned16)
{
    if (grid_d4_batch_arc_sample(b, n, aligned16 ? GRID_D4_ALIGNED16 : GRID_D4_PACKED, seed)) return -1;
    if (!per_grid_ops) {
        grid_d4_batch_set_op(b, batch_op);
        return 0;
    }
    if (grid_d4_batch_set_ops_random(b, seed + 2) == 0) return 0;
    grid_d4_batch_free(b);
    return -1;
}

int grid_d4_batch_shift(grid_d4_batch *b, unsigned in_shift, unsigned out_shift)
{
    if (in_shift > 15 || out_shift > 15) return -1;
    uint8_t *old = b->in_alloc, *old_in = b->in;
    const unsigned old_shift = b->in_shift;
    b->in_alloc = NULL;
    b->in_shift = in_shift;
    if (alloc_in(b)) {
        b->in_alloc = old, b->in = old_in, b->in_shift = old_shift;
        return -1;
    }
    memcpy(b->in, old_in, (size_t)b->buf_bytes);
    free(old);
    b->out_shift = out_shift;
    append_desc(b, ", in base +%u, out base +%u bytes", in_shift, out_shift);
    return 0;
}

int grid_d4_batch_relayout(grid_d4_batch *dst, const grid_d4_batch *src, const size_t *order, size_t n,
                           grid_d4_layout layout, uint64_t seed, unsigned in_shift, unsigned out_shift)
{
    if (!order) n = src->n;
    uint16_t *h = calloc(n + 1, sizeof *h), *w = calloc(n + 1, sizeof *w);
    int rc = h && w ? 0 : -1;
    for (size_t i = 0; !rc && i < n; i++) {
        const size_t k = order ? order[i] : i;
        h[i] = src->height[k];
        w[i] = src->width[k];
    }
    if (!rc) rc = grid_d4_batch_make(dst, n, h, w, layout, seed, "relaid");
    else memset(dst, 0, sizeof *dst);
    free(h);
    free(w);
    if (!rc && (in_shift || out_shift)) rc = grid_d4_batch_shift(dst, in_shift, out_shift);
    if (!rc && src->ops && !(dst->ops = calloc(n + 1, 1))) rc = -1;
    if (rc) {
        grid_d4_batch_free(dst);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const size_t k = order ? order[i] : i;
        memcpy(grid_d4_batch_grid(dst, i), grid_d4_batch_grid(src, k), (size_t)grid_d4_batch_cells_of(src, k));
        if (src->ops) dst->ops[i] = src->ops[k];
    }
    dst->batch_op = src->batch_op;
    dst->flags = src->flags;
    /* The new layout's words (from grid_d4_batch_make) first, then what it was made from. */
    append_desc(dst, "%s of [%.120s]", order ? " (permuted)" : "", src->desc);
    return 0;
}

int grid_d4_batch_from_result(grid_d4_batch *dst, const grid_d4_batch *src, const grid_d4_result *res)
{
    memset(dst, 0, sizeof *dst);
    dst->n = src->n;
    dst->buf_bytes = src->buf_bytes;
    dst->in_shift = src->in_shift;
    dst->out_shift = src->out_shift;
    dst->flags = src->flags;
    dst->offset = calloc(src->n + 1, sizeof *dst->offset);
    dst->height = calloc(src->n + 1, sizeof *dst->height);
    dst->width = calloc(src->n + 1, sizeof *dst->width);
    if (!dst->offset || !dst->height || !dst->width || alloc_in(dst)) {
        grid_d4_batch_free(dst);
        return -1;
    }
    if (src->n) {
        memcpy(dst->offset, src->offset, src->n * sizeof *dst->offset);
        memcpy(dst->height, res->out_height, src->n * sizeof *dst->height);
        memcpy(dst->width, res->out_width, src->n * sizeof *dst->width);
    }
    memcpy(dst->in, res->out, (size_t)src->buf_bytes);
    snprintf(dst->desc, sizeof dst->desc, "a result of [%.200s]", src->desc);
    return 0;
}

/* ---------------------------------------------------------------- cells and ops */

void grid_d4_batch_fill_random(grid_d4_batch *b, unsigned max_value, uint64_t seed)
{
    grid_d4_rng rng = {seed};
    for (size_t k = 0; k < b->n; k++) {
        uint8_t *g = grid_d4_batch_grid(b, k);
        for (uint64_t c = 0; c < grid_d4_batch_cells_of(b, k); c++)
            g[c] = (uint8_t)grid_d4_rng_below(&rng, max_value + 1);
    }
    append_desc(b, ", cells 0..%u from seed %#" PRIx64, max_value, seed);
}

int grid_d4_batch_fill_distinct(grid_d4_batch *b, uint64_t seed)
{
    grid_d4_rng rng = {seed};
    size_t values[256];
    for (size_t k = 0; k < b->n; k++)
        if (grid_d4_batch_cells_of(b, k) > 256) return -1;
    for (size_t k = 0; k < b->n; k++) {
        for (size_t v = 0; v < 256; v++) values[v] = v;
        grid_d4_shuffle(values, 256, &rng);
        uint8_t *g = grid_d4_batch_grid(b, k);
        for (uint64_t c = 0; c < grid_d4_batch_cells_of(b, k); c++) g[c] = (uint8_t)values[c];
    }
    append_desc(b, ", distinct cells from seed %#" PRIx64, seed);
    return 0;
}

void grid_d4_batch_set_op(grid_d4_batch *b, int op)
{
    free(b->ops);
    b->ops = NULL;
    b->batch_op = op;
}

int grid_d4_batch_set_ops_all(grid_d4_batch *b, uint8_t op)
{
    if (!b->ops && !(b->ops = calloc(b->n + 1, 1))) return -1;
    memset(b->ops, op, b->n);
    return 0;
}

int grid_d4_batch_set_ops_random(grid_d4_batch *b, uint64_t seed)
{
    if (!b->ops && !(b->ops = calloc(b->n + 1, 1))) return -1;
    grid_d4_rng rng = {seed};
    for (size_t k = 0; k < b->n; k++) b->ops[k] = (uint8_t)grid_d4_rng_below(&rng, 8);
    append_desc(b, ", random per-grid ops from seed %#" PRIx64, seed);
    return 0;
}

/* ---------------------------------------------------------------- results */

int grid_d4_result_init(grid_d4_result *res, const grid_d4_batch *b)
{
    memset(res, 0, sizeof *res);
    res->n = b->n;
    res->buf_bytes = b->buf_bytes;
    res->shift = b->out_shift;
    res->alloc_bytes = b->out_shift + b->buf_bytes + GRID_D4_BATCH_SLACK;
    res->out_alloc = res->alloc_bytes <= SIZE_MAX ? malloc((size_t)res->alloc_bytes) : NULL;
    res->out_height = calloc(b->n + 1, sizeof *res->out_height);
    res->out_width = calloc(b->n + 1, sizeof *res->out_width);
    if (!res->out_alloc || !res->out_height || !res->out_width) {
        grid_d4_result_free(res);
        return -1;
    }
    res->out = res->out_alloc + res->shift;
    return 0;
}

void grid_d4_result_free(grid_d4_result *res)
{
    free(res->out_alloc);
    free(res->out_height);
    free(res->out_width);
    memset(res, 0, sizeof *res);
}

void grid_d4_result_poison(grid_d4_result *res, uint8_t poison)
{
    res->poison = poison;
    memset(res->out_alloc, poison, (size_t)res->alloc_bytes);
    for (size_t k = 0; k < res->n; k++) res->out_height[k] = res->out_width[k] = GRID_D4_SHAPE_POISON;
}

void grid_d4_result_poison_slack(grid_d4_result *res, uint8_t poison)
{
    memset(res->out_alloc, poison, res->shift);
    memset(res->out + res->buf_bytes, poison, (size_t)(res->alloc_bytes - res->shift - res->buf_bytes));
    res->poison = poison;
}

/* One bit per out_alloc byte: 1 where a grid of b lies. NULL when out of memory. */
static uint8_t *grid_coverage(const grid_d4_batch *b, const grid_d4_result *res)
{
    uint8_t *covered = calloc((size_t)(res->alloc_bytes + 7) / 8, 1);
    if (!covered) return NULL;
    for (size_t k = 0; k < b->n; k++)
        for (uint64_t i = res->shift + b->offset[k], e = i + grid_d4_batch_cells_of(b, k); i < e; i++)
            covered[i / 8] |= (uint8_t)(1u << (i % 8));
    return covered;
}

int grid_d4_result_repoison_outside(grid_d4_result *res, const grid_d4_batch *b, uint8_t poison)
{
    uint8_t *covered = grid_coverage(b, res);
    if (!covered) return -1;
    for (uint64_t i = 0; i < res->alloc_bytes; i++)
        if (!((covered[i / 8] >> (i % 8)) & 1u)) res->out_alloc[i] = poison;
    free(covered);
    res->poison = poison;
    return 0;
}

/* ---------------------------------------------------------------- comparison */

size_t grid_d4_result_compare(const grid_d4_batch *b, const grid_d4_result *got, const grid_d4_result *want,
                              char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    size_t problems = 0;

    size_t bad_shapes = 0, poison_shapes = 0;
    for (size_t k = 0; k < b->n; k++) {
        if (got->out_height[k] == want->out_height[k] && got->out_width[k] == want->out_width[k]) continue;
        if (got->out_height[k] == GRID_D4_SHAPE_POISON && got->out_width[k] == GRID_D4_SHAPE_POISON) poison_shapes++;
        if (bad_shapes++ < MSG_LINES / 2)
            append_line(msg, msg_size, "grid %zu (%ux%u, op %s): result shape %ux%u, want %ux%u", k, b->height[k],
                        b->width[k], grid_d4_op_name(grid_d4_batch_op_of(b, k)), got->out_height[k],
                        got->out_width[k], want->out_height[k], want->out_width[k]);
    }
    if (bad_shapes) append_line(msg, msg_size, "%zu of %zu result shapes are wrong", bad_shapes, b->n);
    if (poison_shapes)
        append_line(msg, msg_size, "%zu of %zu result shapes still hold the poison 0xFFFF: never written",
                    poison_shapes, b->n);
    problems += bad_shapes;

    if (memcmp(got->out_alloc, want->out_alloc, (size_t)want->alloc_bytes) == 0) return problems;

    /* Grid bytes: which grid, which cell, both values; and how many were simply never written. */
    uint64_t bad_cells = 0, poison_cells = 0, total = 0;
    for (size_t k = 0; k < b->n; k++) {
        const uint8_t *g = got->out + b->offset[k], *w = want->out + b->offset[k];
        const uint64_t size = grid_d4_batch_cells_of(b, k);
        total += size;
        if (memcmp(g, w, (size_t)size) == 0) continue;
        const unsigned ow = want->out_width[k] ? want->out_width[k] : 1;
        for (uint64_t c = 0; c < size; c++) {
            if (g[c] == w[c]) continue;
            if (g[c] == got->poison) poison_cells++;
            if (bad_cells++ < MSG_LINES)
                append_line(msg, msg_size,
                            "grid %zu (%ux%u at offset %" PRIu64 ", op %s) cell %" PRIu64 " (row %" PRIu64
                            ", col %" PRIu64 " of the result): got %u, want %u",
                            k, b->height[k], b->width[k], b->offset[k], grid_d4_op_name(grid_d4_batch_op_of(b, k)), c,
                            c / ow, c % ow, g[c], w[c]);
        }
    }
    if (bad_cells) append_line(msg, msg_size, "%" PRIu64 " of %" PRIu64 " result bytes differ", bad_cells, total);
    if (poison_cells)
        append_line(msg, msg_size, "%" PRIu64 " of %" PRIu64 " output bytes still hold the poison 0x%02X: the call "
                    "did not write them", poison_cells, total, got->poison);
    problems += bad_cells;

    /* Bytes outside every grid: gaps, the tail of the buffer and the slack around it. */
    uint8_t *covered = grid_coverage(b, got);
    if (!covered) {
        append_line(msg, msg_size, "out of memory comparing %" PRIu64 " bytes", want->alloc_bytes);
        return (size_t)-1;
    }
    uint64_t outside = 0;
    for (uint64_t i = 0; i < want->alloc_bytes; i++) {
        if ((covered[i / 8] >> (i % 8)) & 1u || got->out_alloc[i] == want->out_alloc[i]) continue;
        if (outside++ < MSG_LINES / 2)
            append_line(msg, msg_size, "byte %" PRId64 " relative to out (buf_bytes %" PRIu64 "), outside every "
                        "grid: got %u, want the poison %u", (int64_t)i - (int64_t)got->shift, b->buf_bytes,
                        got->out_alloc[i], want->out_alloc[i]);
    }
    free(covered);
    if (outside)
        append_line(msg, msg_size, "%" PRIu64 " bytes outside every grid were written: gaps and the slack around out "
                    "must keep the poison", outside);
    return problems + outside;
}
