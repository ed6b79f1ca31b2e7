/* SPDX-License-Identifier: MIT
 * grid_objects_ref: CPU reference and host-side validation for kernels/grid_objects (contract in
 * grid_objects.h). A breadth-first flood fill from each unlabelled object cell in row-major order: the seed
 * is the first cell of its object, so its index is the canonical label by construction. No allocation: the
 * queue of one flood fill lives on the stack (at most 65025 cells of 2 bytes), and "unlabelled" is read
 * from the label map itself.
 * Flags are checked (an unknown bit is GRID_OBJECTS_ERR_FLAGS) but change nothing here:
 * GRID_OBJECTS_PREVALIDATED only skips the device's metadata check.
 */
#include "grid_objects_ref.h"

#include "grid_d4_ref.h"

enum { MAX_CELLS = GRID_OBJECTS_MAX_DIM * GRID_OBJECTS_MAX_DIM };

/* ---------------------------------------------------------------- validation */

/* A byte range [start, start + len) of the address space; len saturates at UINT64_MAX instead of wrapping,
 * so an array too long to exist reads as "covers everything after start". */
typedef struct byte_range {
    uint64_t start, len;
} byte_range;

static byte_range range_of(const void *ptr, uint64_t count, uint64_t elem_size)
{
    byte_range r = {(uint64_t)(uintptr_t)ptr, 0};
    r.len = count > UINT64_MAX / elem_size ? UINT64_MAX : count * elem_size;
    return r;
}

/* The later start must lie inside the earlier range (no end is computed, so nothing overflows). Empty
 * ranges (a NULL variants array, buf_bytes 0) intersect nothing. */
static int ranges_intersect(byte_range a, byte_range b)
{
    if (a.len == 0 || b.len == 0) return 0;
    return a.start <= b.start ? b.start - a.start < a.len : a.start - b.start < b.len;
}

/* grid_d4's codes 1..7 have the same numbers and meanings here (variant in place of op). */
static grid_objects_status from_d4(grid_d4_status s)
{
    switch (s) {
    case GRID_D4_OK: return GRID_OBJECTS_OK;
    case GRID_D4_ERR_NULL: return GRID_OBJECTS_ERR_NULL;
    case GRID_D4_ERR_OP: return GRID_OBJECTS_ERR_VARIANT;
    case GRID_D4_ERR_ALIAS: return GRID_OBJECTS_ERR_ALIAS;
    case GRID_D4_ERR_EMPTY: return GRID_OBJECTS_ERR_EMPTY;
    case GRID_D4_ERR_TOO_LARGE: return GRID_OBJECTS_ERR_TOO_LARGE;
    case GRID_D4_ERR_BOUNDS: return GRID_OBJECTS_ERR_BOUNDS;
    case GRID_D4_ERR_OVERLAP: return GRID_OBJECTS_ERR_OVERLAP;
    }
    return GRID_OBJECTS_ERR_NULL; /* unreachable: grid_d4_validate returns one of the above */
}

grid_objects_status grid_objects_validate(const grid_objects_params *p, const uint8_t *in, const uint64_t *offset,
                                          const uint16_t *height, const uint16_t *width, const uint8_t *variants,
                                          const uint16_t *labels, const grid_objects_object *objects,
                                          const uint32_t *n_objects, const int16_t *bg, size_t *bad_index)
{
    size_t unused_index;
    if (!bad_index) bad_index = &unused_index;
    *bad_index = 0;
    if (!p) return GRID_OBJECTS_ERR_NULL;
    const size_t n = p->n_grids;
    if (n == 0) return GRID_OBJECTS_OK; /* nothing is read or written: pointers may be NULL */

    if (!in || !offset || !height || !width || !labels || !objects || !n_objects || !bg) return GRID_OBJECTS_ERR_NULL;
    if (!variants && (p->batch_variant < 0 || p->batch_variant > 7)) return GRID_OBJECTS_ERR_VARIANT;
    if (p->bg_tie != GRID_OBJECTS_TIE_ARC_DSL && p->bg_tie != GRID_OBJECTS_TIE_SMALLEST) return GRID_OBJECTS_ERR_BG_TIE;
    if (p->flags & ~GRID_OBJECTS_PREVALIDATED) return GRID_OBJECTS_ERR_FLAGS;

    /* Aliasing, on addresses only. Inputs may share memory (they are only read); every output array must be
     * disjoint from every input and from the other outputs. labels and objects count with their padding. */
    const uint64_t out = grid_objects_out_entries(p->buf_bytes);
    const byte_range inputs[] = {
        range_of(in, p->buf_bytes, 1),         range_of(offset, n, sizeof *offset),
        range_of(height, n, sizeof *height),   range_of(width, n, sizeof *width),
        range_of(variants, variants ? n : 0, 1),
    };
    const byte_range outputs[] = {
        range_of(labels, out, sizeof *labels),
        range_of(objects, out, sizeof *objects),
        range_of(n_objects, n, sizeof *n_objects),
        range_of(bg, n, sizeof *bg),
    };
    const size_t n_in = sizeof inputs / sizeof inputs[0], n_out = sizeof outputs / sizeof outputs[0];
    for (size_t o = 0; o < n_out; o++) {
        for (size_t i = 0; i < n_in; i++)
            if (ranges_intersect(outputs[o], inputs[i])) return GRID_OBJECTS_ERR_ALIAS;
        for (size_t o2 = o + 1; o2 < n_out; o2++)
            if (ranges_intersect(outputs[o], outputs[o2])) return GRID_OBJECTS_ERR_ALIAS;
    }
    /* The launcher's padding rule, kept here too so that one validator speaks for both. */
    if (p->out_entries < out || ((uintptr_t)labels | (uintptr_t)objects) % 4u) return GRID_OBJECTS_ERR_PADDING;

    /* The per-grid rules and the full overlap check are grid_d4's (variants as ops). Its own NULL, op and
     * alias checks see a subset of the above (labels' first buf_bytes bytes as out, bg and the first half of
     * n_objects as the shape arrays), so they cannot fire here; they are kept as a second opinion. */
    const grid_d4_params d4 = {.n_grids = n, .buf_bytes = p->buf_bytes, .batch_op = p->batch_variant, .flags = 0};
    return from_d4(grid_d4_validate(&d4, in, (const uint8_t *)labels, offset, height, width, (const uint16_t *)bg,
                                    (const uint16_t *)n_objects, variants, bad_index));
}

/* ---------------------------------------------------------------- bg */

int grid_objects_ref_bg(const uint8_t *cells, size_t n_cells, int bg_tie)
{
    if (n_cells == 0 || (bg_tie != GRID_OBJECTS_TIE_ARC_DSL && bg_tie != GRID_OBJECTS_TIE_SMALLEST)) return -1;
    size_t count[256] = {0};
    for (size_t i = 0; i < n_cells; i++) count[cells[i]]++;
    size_t top = 0;
    int distinct = 0, smallest_tied = -1, tied = 0;
    for (int c = 0; c < 256; c++) {
        distinct += count[c] > 0;
        if (count[c] > top) top = count[c];
    }
    for (int c = 0; c < 256; c++) {
        if (count[c] != top) continue;
        if (smallest_tied < 0) smallest_tied = c;
        tied++;
    }
    if (tied == 1 || bg_tie == GRID_OBJECTS_TIE_SMALLEST || distinct >= 5) return smallest_tied;

    /* arc-dsl with 4 or fewer colours: CPython's 8-slot set table, filled in order of first appearance; the
     * first tied colour in slot order wins. */
    int slot[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    int seen[256] = {0};
    for (size_t i = 0; i < n_cells; i++) {
        const int c = cells[i];
        if (seen[c]) continue;
        seen[c] = 1;
        int s = c & 7;
        if (slot[s] >= 0) {
            s = (5 * s + 1 + (c >> 5)) & 7;
            while (slot[s] >= 0) s = (5 * s + 1) & 7; /* a full-period sequence mod 8: ends within 8 steps */
        }
        slot[s] = c;
    }
    for (int s = 0; s < 8; s++)
        if (slot[s] >= 0 && count[slot[s]] == top) return slot[s];
    return smallest_tied; /* unreachable: every tied colour has a slot */
}

/* ---------------------------------------------------------------- labelling */

/* One grid: bg, labels and records, straight from the definition. */
static uint32_t label_grid(int variant, int bg_tie, const uint8_t *in, unsigned h, unsigned w, uint16_t *labels,
                           grid_objects_object *objects, int16_t *bg_out)
{
    const int univalued = (variant >> 2) & 1, diagonal = (variant >> 1) & 1, without_bg = variant & 1;
    const unsigned cells = h * w;
    const int bg = without_bg ? grid_objects_ref_bg(in, cells, bg_tie) : -1;
    *bg_out = (int16_t)bg;
    for (unsigned i = 0; i < cells; i++) labels[i] = GRID_OBJECTS_NO_OBJECT;

    static const int dr[8] = {-1, 1, 0, 0, -1, -1, 1, 1}, dc[8] = {0, 0, -1, 1, -1, 1, -1, 1};
    const int n_dirs = diagonal ? 8 : 4;
    uint16_t queue[MAX_CELLS];
    uint32_t n_objects = 0;
    for (unsigned seed = 0; seed < cells; seed++) {
        if ((int)in[seed] == bg || labels[seed] != GRID_OBJECTS_NO_OBJECT) continue;
        /* A new object: seed is its first cell in row-major order, since every earlier object cell is
         * already labelled. */
        grid_objects_object o = {.first_cell = (uint16_t)seed, .colour = in[seed], .n_cells = 0,
                                 .top = (uint16_t)(seed / w), .left = (uint16_t)(seed % w),
                                 .bottom = (uint16_t)(seed / w), .right = (uint16_t)(seed % w)};
        size_t head = 0, tail = 0;
        labels[seed] = (uint16_t)seed;
        queue[tail++] = (uint16_t)seed;
        while (head < tail) {
            const unsigned cell = queue[head++];
            const int r = (int)(cell / w), c = (int)(cell % w);
            o.n_cells++;
            if (in[cell] != in[seed]) o.colour = GRID_OBJECTS_SEVERAL_COLOURS;
            if (r < o.top) o.top = (uint16_t)r;
            if (r > o.bottom) o.bottom = (uint16_t)r;
            if (c < o.left) o.left = (uint16_t)c;
            if (c > o.right) o.right = (uint16_t)c;
            for (int d = 0; d < n_dirs; d++) {
                const int nr = r + dr[d], nc = c + dc[d];
                if (nr < 0 || nc < 0 || nr >= (int)h || nc >= (int)w) continue;
                const unsigned next = (unsigned)nr * w + (unsigned)nc;
                if (labels[next] != GRID_OBJECTS_NO_OBJECT || (int)in[next] == bg) continue;
                if (univalued && in[next] != in[seed]) continue;
                labels[next] = (uint16_t)seed;
                queue[tail++] = (uint16_t)next; /* each cell enters once: tail <= cells */
            }
        }
        objects[n_objects++] = o;
    }
    return n_objects;
}

static void label_one(const grid_objects_params *p, size_t k, const uint8_t *in, const uint64_t *offset,
                      const uint16_t *height, const uint16_t *width, const uint8_t *variants, uint16_t *labels,
                      grid_objects_object *objects, uint32_t *n_objects, int16_t *bg)
{
    const int variant = variants ? variants[k] : p->batch_variant;
    n_objects[k] = label_grid(variant, p->bg_tie, in + offset[k], height[k], width[k], labels + offset[k],
                              objects + offset[k], &bg[k]);
}

int grid_objects_ref(const grid_objects_params *p, const uint8_t *in, const uint64_t *offset,
                     const uint16_t *height, const uint16_t *width, const uint8_t *variants, uint16_t *labels,
                     grid_objects_object *objects, uint32_t *n_objects, int16_t *bg)
{
    const grid_objects_status s =
        grid_objects_validate(p, in, offset, height, width, variants, labels, objects, n_objects, bg, NULL);
    if (s != GRID_OBJECTS_OK) return s;
    for (size_t k = 0; k < p->n_grids; k++)
        label_one(p, k, in, offset, height, width, variants, labels, objects, n_objects, bg);
    return GRID_OBJECTS_OK;
}

int grid_objects_ref_mt(const grid_objects_params *p, const uint8_t *in, const uint64_t *offset,
                        const uint16_t *height, const uint16_t *width, const uint8_t *variants, uint16_t *labels,
                        grid_objects_object *objects, uint32_t *n_objects, int16_t *bg)
{
    const grid_objects_status s =
        grid_objects_validate(p, in, offset, height, width, variants, labels, objects, n_objects, bg, NULL);
    if (s != GRID_OBJECTS_OK) return s;
    const size_t n = p->n_grids;
    /* Grids are disjoint (validated), so threads never write the same entry; sizes vary from 1 to 65025
     * cells, so chunks are handed out dynamically. Each thread's queue is on its own stack (130 KB). */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 64)
#endif
    for (size_t k = 0; k < n; k++) label_one(p, k, in, offset, height, width, variants, labels, objects, n_objects, bg);
    return GRID_OBJECTS_OK;
}
