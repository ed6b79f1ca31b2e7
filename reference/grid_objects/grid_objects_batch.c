/* SPDX-License-Identifier: MIT
 * grid_objects results on the host: allocation, poison, the poison count, the comparison and the reference
 * call on a grid_d4 batch (contract in grid_objects_batch.h).
 */
#include "grid_objects_batch.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid_objects_ref.h"

grid_objects_params grid_objects_batch_params(const grid_d4_batch *b, int bg_tie)
{
    const grid_objects_params p = {.n_grids = b->n, .buf_bytes = b->buf_bytes,
                                   .out_entries = grid_objects_out_entries(b->buf_bytes), .batch_variant = b->batch_op,
                                   .bg_tie = bg_tie, .flags = b->flags};
    return p;
}

int grid_objects_result_init(grid_objects_result *res, size_t n, uint64_t buf_bytes)
{
    memset(res, 0, sizeof *res);
    /* +1 each: an empty batch still gets distinct, non-NULL arrays */
    const uint64_t out = grid_objects_out_entries(buf_bytes);
    if (out >= SIZE_MAX / sizeof *res->objects || n >= SIZE_MAX / sizeof *res->n_objects) return -1;
    res->n = n;
    res->buf_bytes = buf_bytes;
    res->out_entries = out;
    res->labels = malloc(((size_t)out + 1) * sizeof *res->labels);
    res->objects = malloc(((size_t)out + 1) * sizeof *res->objects);
    res->n_objects = malloc((n + 1) * sizeof *res->n_objects);
    res->bg = malloc((n + 1) * sizeof *res->bg);
    if (!res->labels || !res->objects || !res->n_objects || !res->bg) {
        grid_objects_result_free(res);
        return -1;
    }
    return 0;
}

void grid_objects_result_free(grid_objects_result *res)
{
    free(res->labels);
    free(res->objects);
    free(res->n_objects);
    free(res->bg);
    memset(res, 0, sizeof *res);
}

static uint16_t label_poison(uint8_t p) { return (uint16_t)(0xFE00u | p); }
static uint32_t count_poison(uint8_t p) { return 0xFFFFFF00u | p; }
static int16_t bg_poison(uint8_t p) { return (int16_t)(0x7F00 | p); }

void grid_objects_result_poison(grid_objects_result *res, uint8_t p)
{
    for (uint64_t i = 0; i < res->out_entries; i++) res->labels[i] = label_poison(p);
    memset(res->objects, p, (size_t)res->out_entries * sizeof *res->objects);
    for (size_t k = 0; k < res->n; k++) res->n_objects[k] = count_poison(p), res->bg[k] = bg_poison(p);
    res->poison = p;
}

/* A record whose 14 bytes all still hold the poison: its colour field (p * 0x0101 as int16) is neither -1 nor
 * a colour 0..255 for any p in 1..254, so no call can write it. The first_cell alone (0xA5A5 = 42405, say)
 * can be a real first cell of a 255 x 255 grid. */
static int record_poisoned(const grid_objects_object *o, uint8_t p)
{
    const unsigned char *bytes = (const unsigned char *)o;
    for (size_t i = 0; i < sizeof *o; i++)
        if (bytes[i] != p) return 0;
    return 1;
}

size_t grid_objects_result_poisoned(const grid_objects_result *got, const grid_d4_batch *b)
{
    const uint8_t p = got->poison;
    size_t left = 0;
    for (size_t k = 0; k < b->n; k++) {
        const uint64_t cells = grid_d4_batch_cells_of(b, k);
        const uint16_t *labels = got->labels + b->offset[k];
        for (uint64_t i = 0; i < cells; i++) left += labels[i] == label_poison(p);
        left += got->bg[k] == bg_poison(p);
        if (got->n_objects[k] == count_poison(p)) {
            left++;
            continue;
        }
        const uint32_t n_obj = got->n_objects[k] < cells ? got->n_objects[k] : (uint32_t)cells;
        for (uint32_t j = 0; j < n_obj; j++) left += record_poisoned(&got->objects[b->offset[k] + j], p);
    }
    return left;
}

/* The first problem goes to msg; every problem is counted. */
typedef struct problems {
    size_t count;
    char *msg;
    size_t msg_size;
} problems;

__attribute__((format(printf, 2, 3))) static void problem(problems *pr, const char *fmt, ...)
{
    if (pr->count++ == 0 && pr->msg_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(pr->msg, pr->msg_size, fmt, ap);
        va_end(ap);
    }
}

static int records_equal(const grid_objects_object *a, const grid_objects_object *b)
{
    return a->first_cell == b->first_cell && a->colour == b->colour && a->n_cells == b->n_cells && a->top == b->top &&
           a->left == b->left && a->bottom == b->bottom && a->right == b->right;
}

size_t grid_objects_result_compare(const grid_objects_result *got, const grid_objects_result *want,
                                   const grid_d4_batch *b, char *msg, size_t msg_size)
{
    problems pr = {0, msg, msg_size};
    if (msg_size) msg[0] = '\0';
    for (size_t k = 0; k < b->n; k++) {
        const unsigned h = b->height[k], w = b->width[k];
        const int variant = grid_d4_batch_op_of(b, k);
        const uint64_t cells = grid_d4_batch_cells_of(b, k), off = b->offset[k];
        if (got->bg[k] != want->bg[k])
            problem(&pr, "grid %zu (variant %d, %ux%u): bg is %d, want %d", k, variant, h, w, got->bg[k], want->bg[k]);
        const int same_count = got->n_objects[k] == want->n_objects[k];
        if (!same_count)
            problem(&pr, "grid %zu (variant %d, %ux%u): n_objects is %" PRIu32 ", want %" PRIu32, k, variant, h, w,
                    got->n_objects[k], want->n_objects[k]);
        for (uint64_t i = 0; i < cells; i++) {
            const uint16_t g = got->labels[off + i], x = want->labels[off + i];
            if (g != x)
                problem(&pr, "grid %zu (variant %d, %ux%u): label of cell %" PRIu64 " (row %" PRIu64 ", column %" PRIu64
                        ") is %d, want %d", k, variant, h, w, i, i / w, i % w,
                        g == GRID_OBJECTS_NO_OBJECT ? -1 : (int)g, x == GRID_OBJECTS_NO_OBJECT ? -1 : (int)x);
        }
        if (!same_count) continue; /* records are only comparable when the counts agree */
        const uint32_t n_obj = want->n_objects[k] < cells ? want->n_objects[k] : (uint32_t)cells;
        for (uint32_t j = 0; j < n_obj; j++) {
            const grid_objects_object *g = &got->objects[off + j], *x = &want->objects[off + j];
            if (!records_equal(g, x))
                problem(&pr, "grid %zu (variant %d, %ux%u): object %" PRIu32 " is {first_cell %u, colour %d, n_cells %u,"
                        " rows %u..%u, columns %u..%u}, want {first_cell %u, colour %d, n_cells %u, rows %u..%u,"
                        " columns %u..%u}", k, variant, h, w, j, g->first_cell, g->colour, g->n_cells, g->top,
                        g->bottom, g->left, g->right, x->first_cell, x->colour, x->n_cells, x->top, x->bottom, x->left,
                        x->right);
        }
    }
    /* Labels and records outside all grids, the pad included, were never to be changed. */
    uint8_t *inside = calloc((size_t)got->out_entries + 1, 1);
    if (!inside) {
        problem(&pr, "out of memory checking the labels outside the grids");
        return (size_t)-1;
    }
    for (size_t k = 0; k < b->n; k++) memset(inside + b->offset[k], 1, (size_t)grid_d4_batch_cells_of(b, k));
    const uint16_t lp = label_poison(got->poison);
    for (uint64_t i = 0; i < got->out_entries; i++) {
        if (inside[i]) continue;
        if (got->labels[i] != lp)
            problem(&pr, "label %" PRIu64 " lies outside every grid but holds %u, not the poison %u", i, got->labels[i],
                    lp);
        const uint8_t *bytes = (const uint8_t *)&got->objects[i];
        for (size_t j = 0; j < sizeof got->objects[i]; j++) {
            if (bytes[j] != got->poison) {
                problem(&pr, "object record %" PRIu64 " lies outside every grid but was written (byte %zu is %u, not "
                        "the poison %u)", i, j, bytes[j], got->poison);
                break;
            }
        }
    }
    free(inside);
    return pr.count;
}

int grid_objects_batch_ref(const grid_d4_batch *b, int bg_tie, int mt, grid_objects_result *res)
{
    const grid_objects_params p = grid_objects_batch_params(b, bg_tie);
    return (mt ? grid_objects_ref_mt : grid_objects_ref)(&p, b->in, b->offset, b->height, b->width, b->ops,
                                                         res->labels, res->objects, res->n_objects, res->bg);
}
