/* SPDX-License-Identifier: MIT
 * grid_objects test groups against a go_runner (see go_cases.h). Expected values come from the rules of
 * grid_objects.h written here (the laws, closed-form counts), from arc-dsl's golden vectors, or from the
 * oracle in go_fixture.c; never from the implementation under test.
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "go_cases.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "go_sha256.h"
#include "grid_d4_fixture.h" /* d4_batch_arc: every ARC-AGI-1 training grid through gw_arc */
#include "grid_d4_ref.h"
#include "grid_objects_ref.h"
#include "gw_test_util.h"

enum { SHOW = 5, ARC_GRIDS = 3436, ARC_TIES = 164, ARC_TIES_NOT_SMALLEST = 46 };

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    cr_assert(p != NULL, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

int go_quick(void)
{
    const char *v = getenv("GW_GO_QUICK");
    return v && strcmp(v, "1") == 0;
}

/* n, or n / div under GW_GO_QUICK (at least 1). */
static size_t sized(size_t n, size_t div) { return go_quick() ? (n / div ? n / div : 1) : n; }

static int variant_of(const grid_d4_batch *b, size_t k) { return grid_d4_batch_op_of(b, k); }

/* Grid ka of (ba, ra) and grid kb of (bb, rb) have the same bg, count, labels and records. */
static int grid_equal(const grid_d4_batch *ba, const grid_objects_result *ra, size_t ka, const grid_d4_batch *bb,
                      const grid_objects_result *rb, size_t kb)
{
    const uint64_t cells = grid_d4_batch_cells_of(ba, ka);
    if (cells != grid_d4_batch_cells_of(bb, kb) || ra->bg[ka] != rb->bg[kb] || ra->n_objects[ka] != rb->n_objects[kb])
        return 0;
    if (memcmp(ra->labels + ba->offset[ka], rb->labels + bb->offset[kb], (size_t)cells * sizeof *ra->labels) != 0)
        return 0;
    for (uint32_t j = 0; j < ra->n_objects[ka] && j < cells; j++) {
        const grid_objects_object *x = &ra->objects[ba->offset[ka] + j], *y = &rb->objects[bb->offset[kb] + j];
        if (x->first_cell != y->first_cell || x->colour != y->colour || x->n_cells != y->n_cells || x->top != y->top ||
            x->left != y->left || x->bottom != y->bottom || x->right != y->right)
            return 0;
    }
    return 1;
}

/* A batch of n grids of the given shapes; cells to be filled by the caller. */
static void make(grid_d4_batch *b, size_t n, const uint16_t *h, const uint16_t *w, grid_d4_layout layout,
                 const char *what)
{
    GO_FIX(grid_d4_batch_make(b, n, h, w, layout, 0x6F0u + n, what));
}

/* ---------------------------------------------------------------- the laws */

/* Two cells that are neighbours under the variant, both in objects: connected by the rule. */
static int linked(int variant, const uint8_t *in, uint32_t a, uint32_t b)
{
    return !(variant & GRID_OBJECTS_UNIVALUED) || in[a] == in[b];
}

/* Checks every law of grid_objects.h on grid k of res; returns the number of violations (the first few
 * logged). */
static size_t laws_of_grid(const char *name, const grid_d4_batch *b, const grid_objects_result *res, size_t k,
                           uint32_t *queue, uint32_t *class_size, uint8_t *seen)
{
    size_t bad = 0;
#define LAW(cond, ...)                                                                                                 \
    do {                                                                                                               \
        if (!(cond) && bad++ < SHOW) cr_log_error(__VA_ARGS__);                                                        \
    } while (0)
    const uint8_t *in = grid_d4_batch_grid(b, k);
    const uint16_t *lab = res->labels + b->offset[k];
    const grid_objects_object *obj = res->objects + b->offset[k];
    const uint32_t H = b->height[k], W = b->width[k], cells = H * W;
    const int t = variant_of(b, k), diagonal = t & GRID_OBJECTS_DIAGONAL;
    /* bg: -1 without without_bg; else a colour of the grid with the top count. */
    int bg = res->bg[k];
    if (t & GRID_OBJECTS_WITHOUT_BG) {
        uint32_t count[256] = {0}, top = 0;
        for (uint32_t i = 0; i < cells; i++) count[in[i]]++;
        for (int c = 0; c < 256; c++) top = count[c] > top ? count[c] : top;
        LAW(bg >= 0 && bg <= 255 && count[bg] == top, "%s: grid %zu (variant %d): bg %d is not a most frequent colour",
            name, k, t, bg);
        if (bg < 0 || bg > 255) return bad;
    } else {
        LAW(bg == -1, "%s: grid %zu (variant %d): bg %d without without_bg, want -1", name, k, t, bg);
        bg = -1;
    }
    /* Canonical labels: bg cells none; an object cell's label L <= its index, and L labels itself. */
    for (uint32_t i = 0; i < cells; i++) {
        const int is_bg = in[i] == bg;
        if (is_bg) {
            LAW(lab[i] == GRID_OBJECTS_NO_OBJECT, "%s: grid %zu (variant %d): bg cell %u has label %u", name, k, t, i,
                lab[i]);
            continue;
        }
        LAW(lab[i] <= i && lab[lab[i] <= i ? lab[i] : i] == lab[i],
            "%s: grid %zu (variant %d): cell %u has label %u, which is not a root at or before it", name, k, t, i,
            lab[i]);
    }
    if (bad) return bad;
    /* Neighbours: two object cells that are neighbours share a label exactly when the variant links them. */
    for (uint32_t r = 0; r < H; r++)
        for (uint32_t c = 0; c < W; c++) {
            const uint32_t i = r * W + c;
            if (in[i] == bg) continue;
            const int32_t nb[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
            for (int d = 0; d < (diagonal ? 4 : 2); d++) {
                const int32_t rr = (int32_t)r + nb[d][0], cc = (int32_t)c + nb[d][1];
                if (rr >= (int32_t)H || cc < 0 || cc >= (int32_t)W) continue;
                const uint32_t j = (uint32_t)rr * W + (uint32_t)cc;
                if (in[j] == bg) continue;
                LAW((lab[i] == lab[j]) == linked(t, in, i, j),
                    "%s: grid %zu (variant %d, %ux%u): neighbours %u and %u (colours %u, %u) have labels %u and %u",
                    name, k, t, H, W, i, j, in[i], in[j], lab[i], lab[j]);
            }
        }
    if (bad) return bad;
    /* Connectivity: from each root, a search over linked neighbours with the same label reaches every cell
     * with that label. Records: the roots in row-major order, each with its size, bbox and colour. */
    memset(seen, 0, cells);
    for (uint32_t i = 0; i < cells; i++) class_size[i] = 0;
    for (uint32_t i = 0; i < cells; i++)
        if (in[i] != bg) class_size[lab[i]]++;
    uint32_t roots = 0;
    for (uint32_t root = 0; root < cells; root++) {
        if (in[root] == bg || lab[root] != root) continue;
        uint32_t head = 0, tail = 0, members = 0;
        uint32_t top = H, left = W, bottom = 0, right = 0;
        int colour = in[root];
        queue[tail++] = root;
        seen[root] = 1;
        while (head < tail) {
            const uint32_t i = queue[head++], r = i / W, c = i % W;
            members++;
            top = r < top ? r : top, bottom = r > bottom ? r : bottom;
            left = c < left ? c : left, right = c > right ? c : right;
            if (in[i] != in[root]) colour = GRID_OBJECTS_SEVERAL_COLOURS;
            for (int dr = -1; dr <= 1; dr++)
                for (int dc = -1; dc <= 1; dc++) {
                    if ((dr == 0 && dc == 0) || (!diagonal && dr != 0 && dc != 0)) continue;
                    const int32_t rr = (int32_t)r + dr, cc = (int32_t)c + dc;
                    if (rr < 0 || cc < 0 || rr >= (int32_t)H || cc >= (int32_t)W) continue;
                    const uint32_t j = (uint32_t)rr * W + (uint32_t)cc;
                    if (seen[j] || in[j] == bg || lab[j] != root || !linked(t, in, i, j)) continue;
                    seen[j] = 1;
                    queue[tail++] = j;
                }
        }
        const uint32_t with_label = class_size[root];
        LAW(members == with_label, "%s: grid %zu (variant %d): label %u has %u cells but only %u are connected to it",
            name, k, t, root, with_label, members);
        if (roots < res->n_objects[k]) {
            const grid_objects_object *o = &obj[roots];
            LAW(o->first_cell == root && o->n_cells == with_label && o->colour == colour && o->top == top &&
                    o->left == left && o->bottom == bottom && o->right == right,
                "%s: grid %zu (variant %d): record %u is {first_cell %u, colour %d, n_cells %u, rows %u..%u, columns "
                "%u..%u}; the label map says {%u, %d, %u, %u..%u, %u..%u}",
                name, k, t, roots, o->first_cell, o->colour, o->n_cells, o->top, o->bottom, o->left, o->right, root,
                colour, with_label, top, bottom, left, right);
        }
        roots++;
    }
    LAW(roots == res->n_objects[k], "%s: grid %zu (variant %d): %u roots in the label map, n_objects %" PRIu32, name, k,
        t, roots, res->n_objects[k]);
#undef LAW
    return bad;
}

static void expect_laws(const go_runner *r, const grid_d4_batch *b, const grid_objects_result *res)
{
    uint32_t *queue = xcalloc(GRID_OBJECTS_MAX_DIM * GRID_OBJECTS_MAX_DIM, sizeof *queue);
    uint32_t *class_size = xcalloc(GRID_OBJECTS_MAX_DIM * GRID_OBJECTS_MAX_DIM, sizeof *class_size);
    uint8_t *seen = xcalloc(GRID_OBJECTS_MAX_DIM * GRID_OBJECTS_MAX_DIM, 1);
    size_t bad = 0;
    for (size_t k = 0; k < b->n; k++) bad += laws_of_grid(r->name, b, res, k, queue, class_size, seen);
    free(queue);
    free(class_size);
    free(seen);
    cr_assert(bad == 0, "%s: %zu violations of the laws of grid_objects.h (first ones logged above) [%s]", r->name,
              bad, b->desc);
}

/* Every batch variant, then random per-grid variants: a checked call and the laws each. */
static void run_all_variants(const go_runner *r, grid_d4_batch *b, int bg_tie, uint64_t seed, int laws)
{
    for (int pass = 0; pass < 9; pass++) {
        if (pass < 8) grid_d4_batch_set_op(b, pass);
        else GO_FIX(grid_d4_batch_set_ops_random(b, seed));
        grid_objects_result res;
        go_run_ok(r, b, bg_tie, &res);
        if (laws) expect_laws(r, b, &res);
        grid_objects_result_free(&res);
    }
}

void go_case_laws(const go_runner *r)
{
    grid_d4_batch b;
    /* ARC shapes, 3 colours: large objects and many ties. */
    GO_FIX(grid_d4_batch_arc_sample(&b, sized(1500, 10), GRID_D4_GAPS, 0x1A3u));
    grid_d4_batch_fill_random(&b, 2, 0x1A4u);
    run_all_variants(r, &b, GRID_OBJECTS_TIE_ARC_DSL, 0x1A5u, 1);
    grid_d4_batch_free(&b);
    /* random shapes 1..40, colours 0..9 */
    enum { N_MAX = 600 };
    const size_t N = sized(N_MAX, 8);
    uint16_t h[N_MAX], w[N_MAX];
    grid_d4_rng rng = {0x1A6u};
    for (size_t k = 0; k < N; k++)
        h[k] = (uint16_t)(1 + grid_d4_rng_below(&rng, 40)), w[k] = (uint16_t)(1 + grid_d4_rng_below(&rng, 40));
    make(&b, N, h, w, GRID_D4_UNSORTED, "random shapes 1..40 x 1..40 (seed 0x1A6), colours 0..9");
    grid_d4_batch_fill_random(&b, 9, 0x1A7u);
    run_all_variants(r, &b, GRID_OBJECTS_TIE_SMALLEST, 0x1A8u, 1);
    /* the same shapes, colours 0..255 */
    grid_d4_batch_fill_random(&b, 255, 0x1A9u);
    run_all_variants(r, &b, GRID_OBJECTS_TIE_ARC_DSL, 0x1AAu, 1);
    grid_d4_batch_free(&b);
}

/* ---------------------------------------------------------------- D4 commutation */

/* docs/grid_d4.md, "Semantics": out[i][j] = in[fr ? H-1-r : r][fc ? W-1-c : c] with (r,c) = swap ? (j,i) : (i,j). */
static uint32_t source_cell(int op, uint32_t H, uint32_t W, uint32_t i, uint32_t j)
{
    const int swap = (op >> 2) & 1, fr = (op >> 1) & 1, fc = op & 1;
    const uint32_t r = swap ? j : i, c = swap ? i : j;
    return (fr ? H - 1 - r : r) * W + (fc ? W - 1 - c : c);
}

void go_case_d4_commutes(const go_runner *r)
{
    grid_d4_batch g;
    GO_FIX(grid_d4_batch_arc_sample(&g, sized(400, 10), GRID_D4_PACKED, 0xD4C0u));
    grid_d4_batch_fill_random(&g, 3, 0xD4C1u);
    const size_t n = g.n;
    uint32_t *to_t = xcalloc(65536, sizeof *to_t), *to_g = xcalloc(65536, sizeof *to_g);
    for (int op = 0; op < 8; op++) {
        /* The transformed grids, by grid_d4_ref, at the same offsets (same cell counts). */
        uint16_t *oh = xcalloc(n, sizeof *oh), *ow = xcalloc(n, sizeof *ow);
        uint8_t *out = xcalloc((size_t)g.buf_bytes, 1);
        const grid_d4_params p = {.n_grids = n, .buf_bytes = g.buf_bytes, .batch_op = op, .flags = 0};
        cr_assert(grid_d4_ref(&p, g.in, out, g.offset, g.height, g.width, oh, ow, NULL) == GRID_D4_OK);
        grid_d4_batch tg;
        make(&tg, n, oh, ow, GRID_D4_PACKED, "the same grids under a D4 op");
        for (size_t k = 0; k < n; k++)
            memcpy(grid_d4_batch_grid(&tg, k), out + g.offset[k], (size_t)grid_d4_batch_cells_of(&g, k));
        for (int t = 0; t < 8; t++) {
            grid_d4_batch_set_op(&g, t);
            grid_d4_batch_set_op(&tg, t);
            grid_objects_result rg, rt;
            go_run_ok(r, &g, GRID_OBJECTS_TIE_SMALLEST, &rg);
            go_run_ok(r, &tg, GRID_OBJECTS_TIE_SMALLEST, &rt);
            size_t bad = 0;
            for (size_t k = 0; k < n && bad < SHOW; k++) {
                if (rg.n_objects[k] != rt.n_objects[k] || rg.bg[k] != rt.bg[k]) {
                    bad++;
                    cr_log_error("%s: grid %zu, variant %d, op %s: %u objects (bg %d) before, %u (bg %d) after", r->name,
                                 k, t, grid_d4_op_name(op), rg.n_objects[k], rg.bg[k], rt.n_objects[k], rt.bg[k]);
                    continue;
                }
                /* The same partition: the map label(g cell) -> label(its image) is a bijection, bg to bg. */
                const uint16_t *lg = rg.labels + g.offset[k], *lt = rt.labels + tg.offset[k];
                for (uint32_t i = 0; i < tg.height[k]; i++)
                    for (uint32_t j = 0; j < tg.width[k]; j++) {
                        to_g[lt[i * tg.width[k] + j]] = UINT32_MAX;
                        to_t[lg[source_cell(op, g.height[k], g.width[k], i, j)]] = UINT32_MAX;
                    }
                for (uint32_t i = 0; i < tg.height[k]; i++)
                    for (uint32_t j = 0; j < tg.width[k]; j++) {
                        const uint32_t ti = i * tg.width[k] + j, gi = source_cell(op, g.height[k], g.width[k], i, j);
                        const uint16_t a = lg[gi], b = lt[ti];
                        const int ok = (a == GRID_OBJECTS_NO_OBJECT) == (b == GRID_OBJECTS_NO_OBJECT) &&
                                       (to_t[a] == UINT32_MAX || to_t[a] == b) && (to_g[b] == UINT32_MAX || to_g[b] == a);
                        to_t[a] = b, to_g[b] = a;
                        if (!ok && bad++ < SHOW)
                            cr_log_error("%s: grid %zu, variant %d, op %s: the objects differ at cell %u of the image",
                                         r->name, k, t, grid_d4_op_name(op), ti);
                    }
                /* Corresponding objects have the same size and colour. */
                for (uint32_t j = 0; j < rg.n_objects[k]; j++) {
                    const grid_objects_object *o = &rg.objects[g.offset[k] + j];
                    const uint32_t image = to_t[o->first_cell];
                    const grid_objects_object *m = NULL;
                    for (uint32_t q = 0; q < rt.n_objects[k]; q++)
                        if (rt.objects[tg.offset[k] + q].first_cell == image) m = &rt.objects[tg.offset[k] + q];
                    if ((!m || m->n_cells != o->n_cells || m->colour != o->colour) && bad++ < SHOW)
                        cr_log_error("%s: grid %zu, variant %d, op %s: object %u has no image of its size and colour",
                                     r->name, k, t, grid_d4_op_name(op), j);
                }
            }
            cr_assert(bad == 0, "%s: objects do not commute with %s (variant %d) [%s]", r->name, grid_d4_op_name(op), t,
                      g.desc);
            grid_objects_result_free(&rg);
            grid_objects_result_free(&rt);
        }
        grid_d4_batch_free(&tg);
        free(oh);
        free(ow);
        free(out);
    }
    free(to_t);
    free(to_g);
    grid_d4_batch_free(&g);
}

/* ---------------------------------------------------------------- edge shapes */

/* One grid alone in a buffer of exactly its size, all 8 variants; returns nothing, checks n_objects. */
static void expect_counts(const go_runner *r, grid_d4_batch *b, const uint32_t want[8], const char *what)
{
    for (int t = 0; t < 8; t++) {
        grid_d4_batch_set_op(b, t);
        grid_objects_result res;
        go_run_ok(r, b, GRID_OBJECTS_TIE_ARC_DSL, &res);
        expect_laws(r, b, &res);
        for (size_t k = 0; k < b->n; k++)
            cr_assert(res.n_objects[k] == want[t], "%s: %s (grid %zu, %ux%u), variant %d: %" PRIu32 " objects, want %" PRIu32,
                      r->name, what, k, b->height[k], b->width[k], t, res.n_objects[k], want[t]);
        grid_objects_result_free(&res);
    }
}

void go_case_edge_shapes(const go_runner *r)
{
    static const uint16_t h[] = {1, 1, 2, 1, 30, 1, 255, 3, 30, 255};
    static const uint16_t w[] = {1, 2, 1, 30, 1, 255, 1, 7, 30, 255};
    /* GW_GO_QUICK: without the 255 x 255 grid (the last one) */
    const size_t N = sizeof h / sizeof h[0] - (go_quick() ? 1 : 0);
    grid_d4_batch all;
    make(&all, N, h, w, GRID_D4_GAPS, "edge shapes 1x1..255x255");
    grid_d4_batch_fill_random(&all, 9, 0xED6Fu);
    run_all_variants(r, &all, GRID_OBJECTS_TIE_ARC_DSL, 0xED70u, 1);
    grid_d4_batch_fill_random(&all, 1, 0xED71u);
    run_all_variants(r, &all, GRID_OBJECTS_TIE_ARC_DSL, 0xED72u, 1);
    /* each alone, in a buffer of exactly its size, random colours */
    for (size_t k = 0; k < N; k++) {
        grid_d4_batch one;
        GO_FIX(grid_d4_batch_relayout(&one, &all, &k, 1, GRID_D4_PACKED, 0, 0, 0));
        run_all_variants(r, &one, GRID_OBJECTS_TIE_ARC_DSL, 0xED73u + k, 0);
        grid_d4_batch_free(&one);
    }
    /* One colour: one object of every cell without without_bg, none with it (the colour is bg). */
    static const uint32_t one_colour[8] = {1, 0, 1, 0, 1, 0, 1, 0};
    for (size_t k = 0; k < N; k++) {
        grid_d4_batch one;
        GO_FIX(grid_d4_batch_relayout(&one, &all, &k, 1, GRID_D4_PACKED, 0, 0, 0));
        memset(one.in, (int)(k * 25), (size_t)one.buf_bytes);
        expect_counts(r, &one, one_colour, "a one-colour grid");
        grid_d4_batch_set_op(&one, 0);
        grid_objects_result res;
        go_run_ok(r, &one, GRID_OBJECTS_TIE_ARC_DSL, &res);
        const grid_objects_object *o = &res.objects[0];
        cr_assert(o->first_cell == 0 && o->n_cells == h[k] * w[k] && o->colour == (int)(k * 25) && o->top == 0 &&
                      o->left == 0 && o->bottom == h[k] - 1 && o->right == w[k] - 1,
                  "%s: a one-colour %ux%u grid must be one object of %u cells covering the grid", r->name, h[k], w[k],
                  h[k] * w[k]);
        for (uint64_t i = 0; i < one.buf_bytes; i++)
            cr_assert(res.labels[i] == 0, "%s: one-colour %ux%u grid: cell %" PRIu64 " has label %u, want 0", r->name,
                      h[k], w[k], i, res.labels[i]);
        grid_objects_result_free(&res);
        grid_d4_batch_free(&one);
    }
    grid_d4_batch_free(&all);
}

void go_case_checkerboards(const go_runner *r)
{
    /* Colours 1 and 4 alternate, colour 1 on cells with i+j even. With H, W >= 2: the 4-neighbours of a cell
     * have the other colour and its diagonal neighbours the same one, and each colour class is connected
     * diagonally. Odd H*W: colour 1 has one cell more and is bg, the (H*W-1)/2 cells of colour 4 remain. */
    static const uint16_t shapes[][2] = {{3, 3}, {5, 7}, {31, 33}, {2, 2}, {4, 6}, {30, 30}, {255, 255}};
    const size_t n_shapes = sizeof shapes / sizeof shapes[0] - (go_quick() ? 1 : 0); /* quick: no 255 x 255 */
    for (size_t s = 0; s < n_shapes; s++) {
        const uint16_t H = shapes[s][0], W = shapes[s][1];
        const uint32_t cells = (uint32_t)H * W, odd = cells % 2;
        grid_d4_batch b;
        make(&b, 1, &H, &W, GRID_D4_PACKED, "a checkerboard of colours 1 and 4");
        for (uint32_t i = 0; i < H; i++)
            for (uint32_t j = 0; j < W; j++) b.in[i * W + j] = (i + j) % 2 ? 4 : 1;
        if (odd) {
            /* t: multi-4, multi-4-nobg, multi-8, multi-8-nobg, uni-4, uni-4-nobg, uni-8, uni-8-nobg */
            const uint32_t want[8] = {1, cells / 2, 1, 1, cells, cells / 2, 2, 1};
            expect_counts(r, &b, want, "an odd checkerboard");
        } else {
            /* A tie between 1 and 4: arc-dsl's order is slot order, 1 (slot 1) before 4 (slot 4), so bg = 1 either
             * way, and colour 4's cells/2 cells remain. */
            const uint32_t want[8] = {1, cells / 2, 1, 1, cells, cells / 2, 2, 1};
            expect_counts(r, &b, want, "an even checkerboard");
        }
        grid_d4_batch_free(&b);
    }
}

/* ---------------------------------------------------------------- spirals */

/* A one-cell-wide spiral of colour 1 on colour 0 from the top-left corner, clockwise, one empty cell between
 * turns: a walker goes ahead while the cell after next is free (or outside), else turns right. Returns the
 * path length and its first cell (0). */
static uint32_t draw_spiral(uint8_t *g, uint32_t H, uint32_t W)
{
    memset(g, 0, (size_t)H * W);
    static const int dr[4] = {0, 1, 0, -1}, dc[4] = {1, 0, -1, 0};
    int r = 0, c = 0, d = 0;
    uint32_t len = 1;
    g[0] = 1;
    for (;;) {
        int moved = 0;
        for (int turn = 0; turn < 2 && !moved; turn++) {
            const int dd = (d + turn) % 4;
            const int nr = r + dr[dd], nc = c + dc[dd], fr = nr + dr[dd], fc = nc + dc[dd];
            if (nr < 0 || nc < 0 || nr >= (int)H || nc >= (int)W || g[nr * (int)W + nc]) continue;
            if (fr >= 0 && fc >= 0 && fr < (int)H && fc < (int)W && g[fr * (int)W + fc]) continue;
            /* and no side contact with an earlier part of the path (keeps the one-cell gap) */
            const int sr = nr + dr[(dd + 1) % 4], sc = nc + dc[(dd + 1) % 4];
            if (sr >= 0 && sc >= 0 && sr < (int)H && sc < (int)W && g[sr * (int)W + sc] && !(sr == r && sc == c)) continue;
            r = nr, c = nc, d = dd, moved = 1;
            g[r * (int)W + c] = 1;
            len++;
        }
        if (!moved) return len;
    }
}

void go_case_spirals(const go_runner *r)
{
    static const uint16_t dims[] = {30, 31, 64, 255};
    const size_t n_dims = sizeof dims / sizeof dims[0] - (go_quick() ? 1 : 0); /* quick: no 255 x 255 */
    for (size_t s = 0; s < n_dims; s++) {
        const uint16_t H = dims[s], W = dims[s];
        grid_d4_batch b;
        make(&b, 1, &H, &W, GRID_D4_PACKED, "a one-cell-wide spiral path");
        const uint32_t len = draw_spiral(b.in, H, W);
        cr_assert(len > (uint32_t)H * W / 3, "test fixture: the %ux%u spiral has only %u cells", H, W, len);
        uint32_t ones = 0;
        for (uint32_t i = 0; i < (uint32_t)H * W; i++) ones += b.in[i];
        for (int t = 0; t < 8; t++) {
            grid_d4_batch_set_op(&b, t);
            grid_objects_result res;
            go_run_ok(r, &b, GRID_OBJECTS_TIE_ARC_DSL, &res);
            expect_laws(r, &b, &res);
            const int path_is_bg = (t & GRID_OBJECTS_WITHOUT_BG) && res.bg[0] == 1;
            if ((t & GRID_OBJECTS_UNIVALUED) && !path_is_bg) {
                /* every path cell in the object of cell 0, which has exactly the path's cells */
                uint32_t in_obj = 0;
                for (uint32_t i = 0; i < (uint32_t)H * W; i++)
                    if (b.in[i] == 1) in_obj += res.labels[i] == 0;
                cr_assert(in_obj == len && res.objects[0].first_cell == 0 && res.objects[0].n_cells == len &&
                              res.objects[0].colour == 1,
                          "%s: %ux%u spiral, variant %d: the path of %u cells must be one object, got %u of them in "
                          "the object of cell 0 (n_cells %u)", r->name, H, W, t, len, in_obj, res.objects[0].n_cells);
            }
            if ((t & GRID_OBJECTS_WITHOUT_BG) && res.bg[0] == 0)
                cr_assert(res.n_objects[0] == 1 && res.objects[0].n_cells == len,
                          "%s: %ux%u spiral, variant %d, bg 0: the path must be the only object", r->name, H, W, t);
            grid_objects_result_free(&res);
        }
        grid_d4_batch_free(&b);
    }
}

/* ---------------------------------------------------------------- bg ties */

void go_case_bg_ties(const go_runner *r)
{
    static const struct {
        uint16_t h, w;
        uint8_t cells[12];
        int arc_dsl, smallest;
        const char *why;
    } rows[] = {
        {3, 3, {2, 3, 8, 2, 3, 8, 2, 3, 8}, 8, 2, "0d3d703e train 1: 2, 3, 8 tie; slots 8->0, 2->2, 3->3"},
        {1, 2, {9, 1}, 9, 1, "9 takes slot 1, 1 collides and probes to slot 6"},
        {1, 2, {1, 9}, 1, 1, "1 takes slot 1, 9 probes to slot 6"},
        {2, 2, {40, 8, 8, 40}, 40, 8, "40 takes slot 0; 8 collides, probes (5*0+1+0)&7 = 1"},
        {2, 2, {8, 40, 40, 8}, 8, 8, "8 takes slot 0; 40 probes (5*0+1+(40>>5))&7 = 2"},
        {1, 5, {7, 3, 9, 5, 4}, 3, 3, "5 distinct colours: ascending"},
        {2, 5, {9, 9, 7, 7, 6, 6, 5, 5, 1, 2}, 5, 5, "5+ colours, 9, 7, 6, 5 tie: ascending"},
        {2, 2, {6, 2, 6, 2}, 2, 2, "slots 6 and 2: 2 first"},
        {1, 3, {0, 0, 5}, 0, 0, "no tie"},
        {2, 3, {4, 12, 4, 12, 3, 3}, 3, 3, "4 -> 4, 12 -> 4 taken -> (21)&7 = 5, 3 -> 3: slot order 3, 4, 12"},
    };
    enum { N = sizeof rows / sizeof rows[0] };
    uint16_t h[N], w[N];
    for (size_t i = 0; i < N; i++) h[i] = rows[i].h, w[i] = rows[i].w;
    grid_d4_batch b;
    make(&b, N, h, w, GRID_D4_PACKED_ODD, "bg tie rows");
    for (size_t i = 0; i < N; i++) memcpy(grid_d4_batch_grid(&b, i), rows[i].cells, (size_t)h[i] * w[i]);
    for (int tie = 0; tie < 2; tie++) {
        for (int t = 1; t < 8; t += 2) {
            grid_d4_batch_set_op(&b, t);
            grid_objects_result res;
            go_run_ok(r, &b, tie, &res);
            for (size_t i = 0; i < N; i++) {
                const int want = tie == GRID_OBJECTS_TIE_ARC_DSL ? rows[i].arc_dsl : rows[i].smallest;
                cr_assert(res.bg[i] == want, "%s: bg_tie %d, variant %d, row %zu (%s): bg %d, want %d", r->name, tie, t,
                          i, rows[i].why, res.bg[i], want);
                cr_assert(grid_objects_ref_bg(rows[i].cells, (size_t)h[i] * w[i], tie) == want,
                          "grid_objects_ref_bg, bg_tie %d, row %zu (%s): want %d", tie, i, rows[i].why, want);
            }
            grid_objects_result_free(&res);
        }
    }
    cr_assert(grid_objects_ref_bg(rows[0].cells, 9, 2) == -1 && grid_objects_ref_bg(rows[0].cells, 0, 0) == -1,
              "grid_objects_ref_bg: an unknown bg_tie or no cells give -1");
    grid_d4_batch_free(&b);
}

/* ---------------------------------------------------------------- variants, sizes, layouts */

void go_case_per_grid_variants(const go_runner *r)
{
    grid_d4_batch g;
    GO_FIX(grid_d4_batch_arc_sample(&g, sized(700, 10), GRID_D4_GAPS, 0x0950u));
    grid_d4_batch_fill_random(&g, 4, 0x0951u);
    grid_objects_result by_batch[8];
    for (int t = 0; t < 8; t++) {
        grid_d4_batch_set_op(&g, t);
        go_run_ok(r, &g, GRID_OBJECTS_TIE_ARC_DSL, &by_batch[t]);
        /* variants all t: batch_variant ignored, even out of range */
        static const int ignored[] = {-1, 8, 99};
        for (size_t i = 0; i < 3; i++) {
            GO_FIX(grid_d4_batch_set_ops_all(&g, (uint8_t)t));
            g.batch_op = ignored[i];
            grid_objects_result res;
            go_run_ok(r, &g, GRID_OBJECTS_TIE_ARC_DSL, &res);
            size_t diff = 0;
            for (size_t k = 0; k < g.n; k++) diff += !grid_equal(&g, &res, k, &g, &by_batch[t], k);
            cr_assert(diff == 0, "%s: variants all %d (batch_variant %d) differ from batch variant %d in %zu grids",
                      r->name, t, g.batch_op, t, diff);
            grid_objects_result_free(&res);
        }
        grid_d4_batch_set_op(&g, 0);
    }
    GO_FIX(grid_d4_batch_set_ops_random(&g, 0x0952u));
    g.batch_op = 1234;
    grid_objects_result mixed;
    go_run_ok(r, &g, GRID_OBJECTS_TIE_ARC_DSL, &mixed);
    size_t diff = 0;
    for (size_t k = 0; k < g.n; k++) diff += !grid_equal(&g, &mixed, k, &g, &by_batch[g.ops[k]], k);
    cr_assert(diff == 0, "%s: %zu grids under per-grid variants differ from the same variant as the batch's", r->name,
              diff);
    grid_objects_result_free(&mixed);
    for (int t = 0; t < 8; t++) grid_objects_result_free(&by_batch[t]);
    grid_d4_batch_free(&g);
}

void go_case_small_batch_sizes(const go_runner *r)
{
    static const size_t sizes[] = {1, 31, 32, 33};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        grid_d4_batch g;
        GO_FIX(grid_d4_batch_arc_sample(&g, sizes[i], GRID_D4_PACKED_ODD, 0x5123u + sizes[i]));
        run_all_variants(r, &g, GRID_OBJECTS_TIE_ARC_DSL, 0x5200u + sizes[i], 1);
        grid_d4_batch_free(&g);
    }
}

void go_case_large_batch(const go_runner *r, size_t n)
{
    grid_d4_batch g;
    GO_FIX(grid_d4_batch_arc_sample(&g, n, GRID_D4_ALIGNED16, 0xB16u));
    GO_FIX(grid_d4_batch_set_ops_random(&g, 0xB17u));
    grid_objects_result res;
    go_run_ok(r, &g, GRID_OBJECTS_TIE_ARC_DSL, &res);
    grid_objects_result_free(&res);
    grid_d4_batch_free(&g);
    GO_FIX(grid_d4_batch_arc_sample(&g, n, GRID_D4_PACKED, 0xB18u));
    grid_d4_batch_set_op(&g, 7);
    go_run_ok(r, &g, GRID_OBJECTS_TIE_SMALLEST, &res);
    grid_objects_result_free(&res);
    grid_d4_batch_free(&g);
}

void go_case_empty_batch(const go_runner *r)
{
    /* Metadata and a 64-cell buffer for one 8x8 grid, but n_grids = 0: nothing may change. */
    const uint16_t h = 8, w = 8;
    grid_d4_batch g;
    make(&g, 1, &h, &w, GRID_D4_PACKED, "n_grids = 0 over a 64-cell buffer");
    grid_d4_batch_fill_random(&g, 9, 0xE0u);
    g.n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0) grid_d4_batch_set_op(&g, 3);
        else GO_FIX(grid_d4_batch_set_ops_all(&g, 5));
        grid_objects_result res;
        go_run_ok(r, &g, GRID_OBJECTS_TIE_ARC_DSL, &res); /* every label still the poison, nothing launched */
        const uint8_t *bytes = (const uint8_t *)res.objects;
        for (size_t i = 0; i < 64 * sizeof *res.objects; i++)
            cr_assert(bytes[i] == res.poison, "%s: n_grids 0 wrote object byte %zu", r->name, i);
        grid_objects_result_free(&res);
    }
    g.n = 1;
    grid_d4_batch_free(&g);
}

void go_case_layouts(const go_runner *r)
{
    grid_d4_batch base;
    GO_FIX(grid_d4_batch_arc_sample(&base, sized(600, 10), GRID_D4_PACKED, 0x1A90u));
    grid_d4_batch_fill_random(&base, 3, 0x1A91u);
    static const grid_d4_layout layouts[] = {GRID_D4_PACKED_ODD, GRID_D4_ALIGNED16, GRID_D4_GAPS, GRID_D4_UNSORTED};
    for (int pass = 0; pass < 3; pass++) {
        if (pass < 2) grid_d4_batch_set_op(&base, pass ? 7 : 2);
        else GO_FIX(grid_d4_batch_set_ops_random(&base, 0x1A92u));
        grid_objects_result rb;
        go_run_ok(r, &base, GRID_OBJECTS_TIE_ARC_DSL, &rb);
        for (size_t v = 0; v < sizeof layouts / sizeof layouts[0]; v++) {
            grid_d4_batch lay;
            GO_FIX(grid_d4_batch_relayout(&lay, &base, NULL, 0, layouts[v], 0x1A93u + v, 0, 0));
            grid_objects_result rl;
            go_run_ok(r, &lay, GRID_OBJECTS_TIE_ARC_DSL, &rl);
            size_t diff = 0;
            for (size_t k = 0; k < base.n; k++) diff += !grid_equal(&lay, &rl, k, &base, &rb, k);
            cr_assert(diff == 0, "%s: %zu grids differ between the packed layout and [%s]", r->name, diff, lay.desc);
            grid_objects_result_free(&rl);
            grid_d4_batch_free(&lay);
        }
        grid_objects_result_free(&rb);
    }
    grid_d4_batch_free(&base);
}

void go_case_determinism(const go_runner *r)
{
    grid_d4_batch g;
    GO_FIX(grid_d4_batch_arc_sample(&g, sized(3000, 10), GRID_D4_UNSORTED, 0xDE7u));
    grid_d4_batch_fill_random(&g, 2, 0xDE8u);
    GO_FIX(grid_d4_batch_set_ops_random(&g, 0xDE9u));
    grid_objects_result run[3];
    for (int i = 0; i < 3; i++) go_run_ok(r, &g, GRID_OBJECTS_TIE_ARC_DSL, &run[i]);
    char msg[512];
    for (int i = 1; i < 3; i++)
        cr_assert(grid_objects_result_compare(&run[i], &run[0], &g, msg, sizeof msg) == 0,
                  "%s: run %d of the same batch differs from run 0: %s [%s]", r->name, i, msg, g.desc);
    for (int i = 0; i < 3; i++) grid_objects_result_free(&run[i]);
    grid_d4_batch_free(&g);
}

/* ---------------------------------------------------------------- bad metadata */

/* Ten grids, packed: sizes 12, 25, 7, 4, 18, 16, 18, 7, 9, 10 at offsets 0, 12, 37, 44, 48, 66, 82, 100,
 * 107, 116; buf_bytes 126. */
static void bad_base(grid_d4_batch *b)
{
    static const uint16_t h[10] = {3, 5, 1, 2, 6, 4, 2, 7, 3, 5};
    static const uint16_t w[10] = {4, 5, 7, 2, 3, 4, 9, 1, 3, 2};
    GO_FIX(grid_d4_batch_make(b, 10, h, w, GRID_D4_PACKED, 0, "bad metadata base: 10 grids, packed"));
    grid_d4_batch_fill_random(b, 9, 0xBAD0u);
    grid_d4_batch_set_op(b, 5);
}

#define BAD_ROW(code, index, ...)                                                                                      \
    do {                                                                                                               \
        grid_d4_batch b;                                                                                               \
        bad_base(&b);                                                                                                  \
        __VA_ARGS__;                                                                                                   \
        snprintf(b.desc, sizeof b.desc, "bad metadata row: %s", #__VA_ARGS__);                                         \
        go_run_error(r, &b, code, index);                                                                              \
        grid_d4_batch_free(&b);                                                                                        \
    } while (0)

void go_case_bad_metadata(const go_runner *r)
{
    {
        grid_d4_batch b;
        bad_base(&b);
        grid_objects_result res;
        go_run_ok(r, &b, GRID_OBJECTS_TIE_ARC_DSL, &res); /* the base batch itself is valid */
        grid_objects_result_free(&res);
        grid_d4_batch_free(&b);
    }
    /* variants[k] > 7 */
    BAD_ROW(GRID_OBJECTS_ERR_VARIANT, 4, GO_FIX(grid_d4_batch_set_ops_all(&b, 1)); b.ops[4] = 8);
    BAD_ROW(GRID_OBJECTS_ERR_VARIANT, 0, GO_FIX(grid_d4_batch_set_ops_all(&b, 7)); b.ops[0] = 255);
    BAD_ROW(GRID_OBJECTS_ERR_VARIANT, 9, GO_FIX(grid_d4_batch_set_ops_random(&b, 1)); b.ops[9] = 0x80);
    /* empty */
    BAD_ROW(GRID_OBJECTS_ERR_EMPTY, 3, b.height[3] = 0);
    BAD_ROW(GRID_OBJECTS_ERR_EMPTY, 6, b.width[6] = 0);
    BAD_ROW(GRID_OBJECTS_ERR_EMPTY, 9, b.width[9] = 0; b.height[9] = 0);
    /* too large */
    BAD_ROW(GRID_OBJECTS_ERR_TOO_LARGE, 2, b.height[2] = 256);
    BAD_ROW(GRID_OBJECTS_ERR_TOO_LARGE, 5, b.width[5] = 0xFFFF);
    /* bounds, including sums that would wrap around 2^64 */
    BAD_ROW(GRID_OBJECTS_ERR_BOUNDS, 9, b.buf_bytes -= 1);
    BAD_ROW(GRID_OBJECTS_ERR_BOUNDS, 7, b.offset[7] = b.buf_bytes);
    BAD_ROW(GRID_OBJECTS_ERR_BOUNDS, 7, b.offset[7] = UINT64_MAX - 3);
    BAD_ROW(GRID_OBJECTS_ERR_BOUNDS, 0, b.offset[0] = UINT64_MAX);
    /* overlap of consecutive ascending entries, reported at the first of the pair */
    BAD_ROW(GRID_OBJECTS_ERR_OVERLAP, 4, b.offset[5] = b.offset[4] + 1);
    BAD_ROW(GRID_OBJECTS_ERR_OVERLAP, 4, b.offset[5] = b.offset[4]);
    BAD_ROW(GRID_OBJECTS_ERR_OVERLAP, 8, b.offset[9] = b.offset[8] + 8);
    BAD_ROW(GRID_OBJECTS_ERR_OVERLAP, 0, b.offset[1] = b.offset[0] + 11);
    /* the lowest index wins, whatever the rules */
    BAD_ROW(GRID_OBJECTS_ERR_EMPTY, 2, b.width[6] = 0; b.height[2] = 0);
    BAD_ROW(GRID_OBJECTS_ERR_VARIANT, 1, GO_FIX(grid_d4_batch_set_ops_all(&b, 2)); b.ops[1] = 9; b.height[7] = 0);
    BAD_ROW(GRID_OBJECTS_ERR_BOUNDS, 1, b.offset[1] = UINT64_MAX - 1; b.width[8] = 300);
    BAD_ROW(GRID_OBJECTS_ERR_TOO_LARGE, 3, b.height[3] = 1000; GO_FIX(grid_d4_batch_set_ops_all(&b, 0)); b.ops[5] = 8);
    /* within one grid: variant, empty, too large, bounds */
    BAD_ROW(GRID_OBJECTS_ERR_VARIANT, 3, GO_FIX(grid_d4_batch_set_ops_all(&b, 6)); b.ops[3] = 8; b.height[3] = 0);
    BAD_ROW(GRID_OBJECTS_ERR_EMPTY, 3, b.height[3] = 0; b.width[3] = 300);
    BAD_ROW(GRID_OBJECTS_ERR_TOO_LARGE, 3, b.height[3] = 256; b.offset[3] = UINT64_MAX);
    /* per-grid errors before overlap, even at a higher index */
    BAD_ROW(GRID_OBJECTS_ERR_EMPTY, 8, b.offset[2] = b.offset[1]; b.height[8] = 0);
    BAD_ROW(GRID_OBJECTS_ERR_BOUNDS, 9, b.offset[5] = b.offset[4] + 2; b.buf_bytes -= 1);
}

/* ---------------------------------------------------------------- ARC data and golden vectors */

void go_case_all_arc_grids(const go_runner *r)
{
    grid_d4_batch g;
    d4_batch_arc(&g, GRID_D4_ALIGNED16, 0);
    run_all_variants(r, &g, GRID_OBJECTS_TIE_ARC_DSL, 0xA2Cu, 1);
    grid_d4_batch_free(&g);
    d4_batch_arc(&g, GRID_D4_UNSORTED, 0xA2Du);
    GO_FIX(grid_d4_batch_set_ops_random(&g, 0xA2Eu));
    grid_objects_result res;
    go_run_ok(r, &g, GRID_OBJECTS_TIE_SMALLEST, &res);
    grid_objects_result_free(&res);
    grid_d4_batch_free(&g);
}

typedef struct golden_grid {
    char *src;
    int h, w, bg, tie;
    uint32_t n[8];
    char sha[8][17];
    int16_t *labels[8]; /* NULL unless the record carries them */
    char *in;
} golden_grid;

static int json_int(const cJSON *obj, const char *key, int lo, int hi)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi ? (int)v->valuedouble : lo - 1;
}

static golden_grid *golden_load(size_t *count)
{
    char path[4096];
    gw_data_path("arc/objects_golden.jsonl", "arc-dsl's golden vectors of objects()", path, sizeof path);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot open %s", path);
    golden_grid *gold = xcalloc(ARC_GRIDS, sizeof *gold);
    size_t n = 0, line_no = 0, line_cap = 0;
    char *line = NULL;
    while (getline(&line, &line_cap, f) >= 0) {
        line_no++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        cr_assert(n < ARC_GRIDS, "%s has more than %d records", path, ARC_GRIDS);
        cJSON *obj = cJSON_Parse(line);
        cr_assert(obj != NULL, "%s line %zu is not JSON", path, line_no);
        golden_grid *g = &gold[n];
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(obj, "src");
        const cJSON *tie = cJSON_GetObjectItemCaseSensitive(obj, "bg_tie");
        const cJSON *counts = cJSON_GetObjectItemCaseSensitive(obj, "n");
        const cJSON *shas = cJSON_GetObjectItemCaseSensitive(obj, "sha");
        g->h = json_int(obj, "h", 1, 30), g->w = json_int(obj, "w", 1, 30), g->bg = json_int(obj, "bg", 0, 9);
        cr_assert(cJSON_IsString(src) && cJSON_IsBool(tie) && g->h > 0 && g->w > 0 && g->bg >= 0 &&
                      cJSON_GetArraySize(counts) == 8 && cJSON_GetArraySize(shas) == 8,
                  "%s line %zu: needs src, h, w, bg, bg_tie, n[8], sha[8]", path, line_no);
        g->src = strdup(src->valuestring);
        cr_assert(g->src != NULL);
        g->tie = cJSON_IsTrue(tie);
        const int cells = g->h * g->w;
        for (int t = 0; t < 8; t++) {
            const cJSON *c = cJSON_GetArrayItem(counts, t), *s = cJSON_GetArrayItem(shas, t);
            cr_assert(cJSON_IsNumber(c) && c->valuedouble >= 0 && c->valuedouble <= cells && cJSON_IsString(s) &&
                          strlen(s->valuestring) == 16,
                      "%s line %zu: bad n[%d] or sha[%d]", path, line_no, t, t);
            g->n[t] = (uint32_t)c->valuedouble;
            memcpy(g->sha[t], s->valuestring, 17);
        }
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(obj, "in");
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(obj, "labels");
        if (in) {
            cr_assert(cJSON_IsString(in) && strlen(in->valuestring) == (size_t)cells && cJSON_GetArraySize(labels) == 8,
                      "%s line %zu: 'in' must hold h*w digits and 'labels' 8 maps", path, line_no);
            g->in = strdup(in->valuestring);
            cr_assert(g->in != NULL);
            for (int t = 0; t < 8; t++) {
                const cJSON *map = cJSON_GetArrayItem(labels, t);
                cr_assert(cJSON_GetArraySize(map) == cells, "%s line %zu: labels[%d] must hold h*w entries", path,
                          line_no, t);
                g->labels[t] = xcalloc((size_t)cells, sizeof *g->labels[t]);
                for (int i = 0; i < cells; i++) {
                    const cJSON *v = cJSON_GetArrayItem(map, i);
                    cr_assert(cJSON_IsNumber(v) && v->valuedouble >= -1 && v->valuedouble < cells,
                              "%s line %zu: labels[%d][%d] out of range", path, line_no, t, i);
                    g->labels[t][i] = (int16_t)v->valuedouble;
                }
            }
        }
        cJSON_Delete(obj);
        n++;
    }
    free(line);
    fclose(f);
    cr_assert(n == ARC_GRIDS, "%s holds %zu records, expected %d (every ARC-AGI-1 training grid)", path, n, ARC_GRIDS);
    *count = n;
    return gold;
}

static void golden_free(golden_grid *gold, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        free(gold[k].src);
        free(gold[k].in);
        for (int t = 0; t < 8; t++) free(gold[k].labels[t]);
    }
    free(gold);
}

/* The first 16 hex digits of SHA-256 over grid k's labels as little-endian int16 (0xFFFF is -1). */
static void label_sha(const grid_d4_batch *b, const grid_objects_result *res, size_t k, char hex[17])
{
    const size_t cells = (size_t)grid_d4_batch_cells_of(b, k);
    uint8_t *bytes = xcalloc(2 * cells, 1);
    for (size_t i = 0; i < cells; i++) {
        const uint16_t v = res->labels[b->offset[k] + i];
        bytes[2 * i] = (uint8_t)(v & 0xFF), bytes[2 * i + 1] = (uint8_t)(v >> 8);
    }
    go_sha256_hex(bytes, 2 * cells, hex, 16);
    free(bytes);
}

/* Grid k of (b, res) against golden record g under variant t; 0 when equal. */
static int golden_grid_differs(const go_runner *r, const golden_grid *g, const grid_d4_batch *b,
                               const grid_objects_result *res, size_t k, int t, size_t *labels_compared)
{
    char hex[17];
    label_sha(b, res, k, hex);
    const int want_bg = (t & GRID_OBJECTS_WITHOUT_BG) ? g->bg : -1;
    int differs = res->n_objects[k] != g->n[t] || res->bg[k] != want_bg || strcmp(hex, g->sha[t]) != 0;
    if (g->labels[t]) {
        ++*labels_compared;
        for (uint64_t i = 0; i < grid_d4_batch_cells_of(b, k); i++)
            differs |= (int16_t)res->labels[b->offset[k] + i] != g->labels[t][i];
    }
    if (differs)
        cr_log_error("%s: golden grid %zu (%s, %dx%d), variant %d: n_objects %u bg %d sha %s, arc-dsl gives %u, %d, %s",
                     r->name, k, g->src, g->h, g->w, t, res->n_objects[k], res->bg[k], hex, g->n[t], want_bg, g->sha[t]);
    return differs;
}

void go_case_golden(const go_runner *r)
{
    size_t n = 0;
    golden_grid *gold = golden_load(&n);
    grid_d4_batch b;
    d4_batch_arc(&b, GRID_D4_PACKED, 0);
    cr_assert(b.n == n, "the ARC data has %zu grids, the golden file %zu", b.n, n);
    /* The golden records are the ARC grids in the same order: shapes everywhere, cells where given. */
    size_t with_cells = 0;
    for (size_t k = 0; k < n; k++) {
        cr_assert(b.height[k] == gold[k].h && b.width[k] == gold[k].w, "golden record %zu (%s) is %dx%d, ARC grid %zu is %ux%u",
                  k, gold[k].src, gold[k].h, gold[k].w, k, b.height[k], b.width[k]);
        if (!gold[k].in) continue;
        with_cells++;
        for (int i = 0; i < gold[k].h * gold[k].w; i++)
            cr_assert(grid_d4_batch_grid(&b, k)[i] == gold[k].in[i] - '0', "golden record %zu (%s): cell %d differs from the ARC file",
                      k, gold[k].src, i);
    }
    cr_assert(with_cells == (ARC_GRIDS + 15) / 16, "%zu golden records carry cells and labels, want every 16th", with_cells);

    /* The tie rule alone, through grid_objects_ref_bg: arc-dsl's bg on every grid. */
    size_t ties = 0, ties_not_smallest = 0;
    for (size_t k = 0; k < n; k++) {
        const uint8_t *cells = grid_d4_batch_grid(&b, k);
        const size_t nc = (size_t)grid_d4_batch_cells_of(&b, k);
        const int arc = grid_objects_ref_bg(cells, nc, GRID_OBJECTS_TIE_ARC_DSL);
        const int smallest = grid_objects_ref_bg(cells, nc, GRID_OBJECTS_TIE_SMALLEST);
        cr_assert(arc == gold[k].bg, "grid_objects_ref_bg on %s: %d, arc-dsl's mostcolor %d", gold[k].src, arc, gold[k].bg);
        ties += gold[k].tie;
        ties_not_smallest += gold[k].tie && smallest != gold[k].bg;
        cr_assert(gold[k].tie || smallest == gold[k].bg, "%s: no tie, yet the smallest rule gives %d, arc-dsl %d",
                  gold[k].src, smallest, gold[k].bg);
    }
    cr_assert(ties == ARC_TIES, "%zu golden grids have a bg tie, the data's README says %d", ties, ARC_TIES);
    cr_assert(ties_not_smallest == ARC_TIES_NOT_SMALLEST,
              "on %zu tie grids arc-dsl's bg is not the smallest tied colour; the README says %d", ties_not_smallest,
              ARC_TIES_NOT_SMALLEST);

    /* Every variant over every grid through the runner. */
    size_t bad = 0, labels_compared = 0;
    for (int t = 0; t < 8; t++) {
        grid_d4_batch_set_op(&b, t);
        grid_objects_result res;
        go_run_ok(r, &b, GRID_OBJECTS_TIE_ARC_DSL, &res);
        for (size_t k = 0; k < n; k++) bad += golden_grid_differs(r, &gold[k], &b, &res, k, t, &labels_compared);
        if (t == 1) { /* bg under the smallest rule differs on exactly the 46 grids */
            grid_objects_result sm;
            go_run_ok(r, &b, GRID_OBJECTS_TIE_SMALLEST, &sm);
            size_t differ = 0;
            for (size_t k = 0; k < n; k++) differ += sm.bg[k] != res.bg[k];
            cr_assert(differ == ARC_TIES_NOT_SMALLEST, "%s: bg_tie smallest changes bg on %zu grids, want %d", r->name,
                      differ, ARC_TIES_NOT_SMALLEST);
            grid_objects_result_free(&sm);
        }
        grid_objects_result_free(&res);
    }
    cr_assert(bad == 0, "%s: %zu of %zu (grid, variant) pairs differ from arc-dsl's golden vectors (first logged above)",
              r->name, bad, 8 * n);
    cr_assert(labels_compared == 8 * with_cells, "compared %zu full label maps, want %zu", labels_compared, 8 * with_cells);
    /* Per-grid variants, in another layout. */
    grid_d4_batch_free(&b);
    d4_batch_arc(&b, GRID_D4_GAPS, 0x60Du);
    GO_FIX(grid_d4_batch_set_ops_random(&b, 0x60Eu));
    grid_objects_result res;
    go_run_ok(r, &b, GRID_OBJECTS_TIE_ARC_DSL, &res);
    labels_compared = 0;
    for (size_t k = 0; k < n; k++) bad += golden_grid_differs(r, &gold[k], &b, &res, k, b.ops[k], &labels_compared);
    cr_assert(bad == 0, "%s: %zu grids under per-grid variants differ from arc-dsl's golden vectors", r->name, bad);
    cr_log_info("%s: %zu grids x 8 variants match arc-dsl (n, bg, sha; %zu full label maps); %zu bg ties, %zu of them "
                "not the smallest colour", r->name, n, 8 * with_cells, ties, ties_not_smallest);
    grid_objects_result_free(&res);
    grid_d4_batch_free(&b);
    golden_free(gold, n);
}
