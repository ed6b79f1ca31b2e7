/* SPDX-License-Identifier: MIT
 * grid_d4 test groups against a d4_runner (see grid_d4_cases.h). Expected values come from docs/grid_d4.md's
 * rules written here (source_of, d4_compose) or from the oracle in grid_d4_fixture.c, never from the
 * implementation under test.
 */
#include "grid_d4_cases.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

enum { SHOW = 5 }; /* mismatches listed per failure */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    cr_assert(p != NULL, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

/* The general rule (docs/grid_d4.md, "Semantics"): (r,c) = swap ? (j,i) : (i,j), then the source is [fr ? H-1-r : r][fc ? W-1-c : c],
 * with op = 4*swap + 2*fr + fc. */
static void source_of(int op, unsigned H, unsigned W, unsigned i, unsigned j, unsigned *src_r, unsigned *src_c)
{
    const int swap = (op >> 2) & 1, fr = (op >> 1) & 1, fc = op & 1;
    const unsigned r = swap ? j : i, c = swap ? i : j;
    *src_r = fr ? H - 1 - r : r;
    *src_c = fc ? W - 1 - c : c;
}

int d4_compose(int a, int b)
{
    const int as = (a >> 2) & 1, afr = (a >> 1) & 1, afc = a & 1;
    const int bs = (b >> 2) & 1, bfr = (b >> 1) & 1, bfc = b & 1;
    const int cs = as ^ bs;
    const int cfr = afr ^ (as ? bfc : bfr);
    const int cfc = afc ^ (as ? bfr : bfc);
    return 4 * cs + 2 * cfr + cfc;
}

/* The batch's results grid by grid equal those of another batch with the same offsets. */
static size_t count_grid_differences(const grid_d4_batch *ba, const grid_d4_result *ra, const grid_d4_batch *bb, const grid_d4_result *rb)
{
    size_t diff = 0;
    for (size_t k = 0; k < ba->n; k++) diff += !d4_result_grid_equal(ba, ra, k, bb, rb, k);
    return diff;
}

/* ---------------------------------------------------------------- coordinate probes */

/* n shapes become 2n grids: grid k holds R (cell = row), grid n+k holds C (cell = column). */
static void run_probes(const d4_runner *r, const uint16_t *h, const uint16_t *w, size_t n, const char *what)
{
    uint16_t *hh = xcalloc(2 * n, sizeof *hh), *ww = xcalloc(2 * n, sizeof *ww);
    for (size_t k = 0; k < n; k++) hh[k] = hh[n + k] = h[k], ww[k] = ww[n + k] = w[k];
    grid_d4_batch b;
    D4_FIX(grid_d4_batch_make(&b, 2 * n, hh, ww, GRID_D4_PACKED_ODD, 0, what));
    free(hh);
    free(ww);
    for (size_t k = 0; k < n; k++) {
        uint8_t *rows = grid_d4_batch_grid(&b, k), *cols = grid_d4_batch_grid(&b, n + k);
        for (unsigned i = 0; i < h[k]; i++)
            for (unsigned j = 0; j < w[k]; j++) rows[i * w[k] + j] = (uint8_t)i, cols[i * w[k] + j] = (uint8_t)j;
    }
    for (int pass = 0; pass < 9; pass++) {
        if (pass < 8) {
            grid_d4_batch_set_op(&b, pass);
        } else { /* random per-grid ops, the same for a shape's R and C probe */
            D4_FIX(grid_d4_batch_set_ops_random(&b, 0xC0FFEE00u + n));
            memcpy(b.ops + n, b.ops, n);
        }
        grid_d4_result res;
        d4_run_ok(r, &b, &res);
        size_t bad = 0;
        for (size_t k = 0; k < n; k++) {
            const int op = grid_d4_batch_op_of(&b, k);
            const unsigned H = h[k], W = w[k], oh = op >= 4 ? W : H, ow = op >= 4 ? H : W;
            if (res.out_height[k] != oh || res.out_width[k] != ow || res.out_height[n + k] != oh ||
                res.out_width[n + k] != ow) {
                if (bad++ < SHOW)
                    cr_log_error("%s: %ux%u op %s gave shape %ux%u, want %ux%u", r->name, H, W, grid_d4_op_name(op),
                                 res.out_height[k], res.out_width[k], oh, ow);
                continue;
            }
            const uint8_t *got_r = res.out + b.offset[k], *got_c = res.out + b.offset[n + k];
            for (unsigned i = 0; i < oh; i++) {
                for (unsigned j = 0; j < ow; j++) {
                    unsigned sr, sc;
                    source_of(op, H, W, i, j, &sr, &sc);
                    if ((got_r[i * ow + j] != sr || got_c[i * ow + j] != sc) && bad++ < SHOW)
                        cr_log_error("%s: %ux%u op %s: out[%u][%u] came from in[%u][%u], the rule says in[%u][%u]",
                                     r->name, H, W, grid_d4_op_name(op), i, j, got_r[i * ow + j], got_c[i * ow + j],
                                     sr, sc);
                }
            }
        }
        cr_assert(bad == 0, "%s: %zu coordinate probe mismatches (first ones logged above) [%s]", r->name, bad, b.desc);
        grid_d4_result_free(&res);
    }
    grid_d4_batch_free(&b);
}

void d4_case_probes_small(const d4_runner *r)
{
    uint16_t h[900], w[900];
    d4_shapes_small(h, w);
    run_probes(r, h, w, 900, "coordinate probes 1..30 x 1..30");
}

void d4_case_probes_large(const d4_runner *r)
{
    static const uint16_t dims[] = {1, 2, 30, 31, 32, 33, 64, 255};
    enum { D = sizeof dims / sizeof dims[0] };
    uint16_t h[D * D], w[D * D];
    for (size_t a = 0; a < D; a++)
        for (size_t c = 0; c < D; c++) h[a * D + c] = dims[a], w[a * D + c] = dims[c];
    run_probes(r, h, w, D * D, "coordinate probes {1,2,30,31,32,33,64,255}^2");
}

/* ---------------------------------------------------------------- Cayley table and group laws */

/* Non-square grids (h != w, at most 16 each way) with pairwise-distinct cells, so that a 2x3 or larger
 * grid has 8 different images and a whole-batch comparison identifies the op. */
static void make_non_square(grid_d4_batch *b, size_t n, uint64_t seed)
{
    uint16_t *h = xcalloc(n, sizeof *h), *w = xcalloc(n, sizeof *w);
    grid_d4_rng rng = {seed};
    for (size_t k = 0; k < n; k++) {
        do {
            h[k] = (uint16_t)(1 + grid_d4_rng_below(&rng, 16));
            w[k] = (uint16_t)(1 + grid_d4_rng_below(&rng, 16));
        } while (h[k] == w[k]);
    }
    h[0] = 2, w[0] = 3; /* at least one grid whose 8 images all differ */
    char what[64];
    snprintf(what, sizeof what, "non-square grids (shape seed %#" PRIx64 ")", seed);
    D4_FIX(grid_d4_batch_make(b, n, h, w, GRID_D4_GAPS, seed + 1, what));
    free(h);
    free(w);
    D4_FIX(grid_d4_batch_fill_distinct(b, seed + 2));
}

/* The composition rule checked against the coordinate maps themselves: applying source_of for b, then for
 * a, must give source_of for c on a non-square shape (pure arithmetic, no call). */
static void check_compose_rule_against_coordinates(void)
{
    const unsigned H = 3, W = 5;
    for (int a = 0; a < 8; a++) {
        for (int b = 0; b < 8; b++) {
            const int c = d4_compose(a, b);
            const unsigned ah = a >= 4 ? W : H, aw = a >= 4 ? H : W; /* shape after a */
            const unsigned ch = c >= 4 ? W : H, cw = c >= 4 ? H : W;
            const unsigned bh = b >= 4 ? aw : ah, bw = b >= 4 ? ah : aw; /* shape after b */
            cr_assert(bh == ch && bw == cw, "composition rule: %s then %s gives %ux%u, %s gives %ux%u",
                      grid_d4_op_name(a), grid_d4_op_name(b), bh, bw, grid_d4_op_name(c), ch, cw);
            for (unsigned i = 0; i < bh; i++) {
                for (unsigned j = 0; j < bw; j++) {
                    unsigned mi, mj, si, sj, ci, cj;
                    source_of(b, ah, aw, i, j, &mi, &mj); /* cell of a's result */
                    source_of(a, H, W, mi, mj, &si, &sj); /* cell of the original */
                    source_of(c, H, W, i, j, &ci, &cj);
                    cr_assert(si == ci && sj == cj,
                              "composition rule: %s then %s moves in[%u][%u] to out[%u][%u], %s takes in[%u][%u]",
                              grid_d4_op_name(a), grid_d4_op_name(b), si, sj, i, j, grid_d4_op_name(c), ci, cj);
                }
            }
        }
    }
}

void d4_case_cayley(const d4_runner *r)
{
    check_compose_rule_against_coordinates();
    grid_d4_batch g;
    make_non_square(&g, 24, 0xCA7EE7u);
    grid_d4_result img[8];
    for (int op = 0; op < 8; op++) {
        grid_d4_batch_set_op(&g, op);
        d4_run_ok(r, &g, &img[op]);
    }
    int table[8][8];
    for (int a = 0; a < 8; a++) {
        grid_d4_batch ga;
        D4_FIX(grid_d4_batch_from_result(&ga, &g, &img[a]));
        for (int b = 0; b < 8; b++) {
            grid_d4_batch_set_op(&ga, b);
            grid_d4_result ab;
            d4_run_ok(r, &ga, &ab);
            int found = -1, matches = 0;
            for (int c = 0; c < 8; c++)
                if (count_grid_differences(&ga, &ab, &g, &img[c]) == 0) found = c, matches++;
            cr_assert(matches == 1, "%s: %s then %s matches %d single ops, want exactly 1 [%s]", r->name,
                      grid_d4_op_name(a), grid_d4_op_name(b), matches, g.desc);
            cr_assert(found == d4_compose(a, b), "%s: %s then %s gave %s, the composition rule says %s", r->name,
                      grid_d4_op_name(a), grid_d4_op_name(b), grid_d4_op_name(found),
                      grid_d4_op_name(d4_compose(a, b)));
            table[a][b] = found;
            grid_d4_result_free(&ab);
        }
        grid_d4_batch_free(&ga);
    }
    for (int x = 0; x < 8; x++) {
        unsigned row = 0, col = 0;
        for (int y = 0; y < 8; y++) row |= 1u << table[x][y], col |= 1u << table[y][x];
        cr_assert(row == 0xFFu, "%s: Cayley row %s is not a permutation of the 8 ops", r->name, grid_d4_op_name(x));
        cr_assert(col == 0xFFu, "%s: Cayley column %s is not a permutation of the 8 ops", r->name, grid_d4_op_name(x));
    }
    for (int op = 0; op < 8; op++) grid_d4_result_free(&img[op]);
    grid_d4_batch_free(&g);
}

/* Applies ops[0], then ops[1], ... (each a checked call) and returns the final values as a batch. With no
 * op the batch is a copy of g. */
static void chain(const d4_runner *r, const grid_d4_batch *g, const int *ops, size_t n_ops, grid_d4_batch *final)
{
    /* Start from a copy of g with g's own offsets (chains are compared grid by grid, same layout). */
    grid_d4_result same;
    D4_FIX(grid_d4_result_init(&same, g));
    grid_d4_result_poison(&same, 0);
    memcpy(same.out, g->in, (size_t)g->buf_bytes);
    memcpy(same.out_height, g->height, g->n * sizeof *g->height);
    memcpy(same.out_width, g->width, g->n * sizeof *g->width);
    D4_FIX(grid_d4_batch_from_result(final, g, &same));
    grid_d4_result_free(&same);
    for (size_t s = 0; s < n_ops; s++) {
        grid_d4_batch_set_op(final, ops[s]);
        grid_d4_result res;
        d4_run_ok(r, final, &res);
        grid_d4_batch next;
        D4_FIX(grid_d4_batch_from_result(&next, final, &res));
        grid_d4_result_free(&res);
        grid_d4_batch_free(final);
        *final = next;
    }
}

static void describe_chain(char *buf, size_t size, const int *ops, size_t n)
{
    buf[0] = '\0';
    if (n == 0) snprintf(buf, size, "the input");
    for (size_t s = 0; s < n; s++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", s ? " then " : "", grid_d4_op_name(ops[s]));
    }
}

/* Both chains' final grids and shapes are equal. */
static void expect_law(const d4_runner *r, const grid_d4_batch *g, const int *lhs, size_t nl, const int *rhs, size_t nr)
{
    grid_d4_batch a, b;
    chain(r, g, lhs, nl, &a);
    chain(r, g, rhs, nr, &b);
    size_t diff = 0;
    for (size_t k = 0; k < g->n; k++) {
        diff += a.height[k] != b.height[k] || a.width[k] != b.width[k] ||
                memcmp(grid_d4_batch_grid(&a, k), grid_d4_batch_grid(&b, k), (size_t)grid_d4_batch_cells_of(&a, k)) != 0;
    }
    char dl[128], dr[128];
    describe_chain(dl, sizeof dl, lhs, nl);
    describe_chain(dr, sizeof dr, rhs, nr);
    cr_assert(diff == 0, "%s: group law broken: %s != %s on %zu of %zu grids [%s]", r->name, dl, dr, diff, g->n,
              g->desc);
    grid_d4_batch_free(&a);
    grid_d4_batch_free(&b);
}

void d4_case_group_laws(const d4_runner *r)
{
    grid_d4_batch g;
    make_non_square(&g, 40, 0x6A0u);
    enum { ID = 0, VM = 1, HM = 2, R180 = 3, DM = 4, R270 = 5, R90 = 6, CM = 7 };
    const int r90x4[] = {R90, R90, R90, R90}, r90x2[] = {R90, R90}, r90x3[] = {R90, R90, R90};
    const int r180[] = {R180}, r270[] = {R270}, r90[] = {R90}, cm[] = {CM};
    expect_law(r, &g, r90x4, 4, NULL, 0);
    expect_law(r, &g, r90x2, 2, r180, 1);
    expect_law(r, &g, r90x3, 3, r270, 1);
    const int r270_r90[] = {R270, R90}, r90_r270[] = {R90, R270};
    expect_law(r, &g, r270_r90, 2, NULL, 0); /* rot90 after rot270 */
    expect_law(r, &g, r90_r270, 2, NULL, 0);
    const int involutions[] = {HM, VM, DM, CM, R180, ID};
    for (size_t i = 0; i < sizeof involutions / sizeof involutions[0]; i++) {
        const int twice[] = {involutions[i], involutions[i]};
        expect_law(r, &g, twice, 2, NULL, 0);
    }
    const int hv[] = {HM, VM}, vh[] = {VM, HM};
    expect_law(r, &g, hv, 2, vh, 2);
    expect_law(r, &g, hv, 2, r180, 1);
    const int d_then_180[] = {DM, R180}, r180_then_d[] = {R180, DM};
    expect_law(r, &g, d_then_180, 2, cm, 1); /* cmirror = rot180(dmirror(g)) */
    expect_law(r, &g, r180_then_d, 2, cm, 1); /* = dmirror(rot180(g)) */
    const int d_then_v[] = {DM, VM}, h_then_d[] = {HM, DM};
    expect_law(r, &g, d_then_v, 2, r90, 1);   /* rot90 = vmirror(dmirror(g)) */
    expect_law(r, &g, h_then_d, 2, r90, 1);   /* = dmirror(hmirror(g)) */
    const int d_then_h[] = {DM, HM}, v_then_d[] = {VM, DM};
    expect_law(r, &g, d_then_h, 2, r270, 1);  /* rot270 = hmirror(dmirror(g)) */
    expect_law(r, &g, v_then_d, 2, r270, 1);  /* = dmirror(vmirror(g)) */
    grid_d4_batch_free(&g);
}

/* ---------------------------------------------------------------- images, shapes, invariants */

void d4_case_distinct_images(const d4_runner *r)
{
    size_t n = 0;
    uint16_t h[2048], w[2048];
    for (unsigned hh = 2; hh <= 128; hh++)
        for (unsigned ww = 2; hh * ww <= 256; ww++) h[n] = (uint16_t)hh, w[n++] = (uint16_t)ww;
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_make(&g, n, h, w, GRID_D4_PACKED_ODD, 0, "every shape with H, W >= 2 and H*W <= 256"));
    D4_FIX(grid_d4_batch_fill_distinct(&g, 0xD15717u));
    grid_d4_result img[8];
    for (int op = 0; op < 8; op++) {
        grid_d4_batch_set_op(&g, op);
        d4_run_ok(r, &g, &img[op]);
    }
    size_t same = 0;
    for (size_t k = 0; k < n; k++)
        for (int a = 0; a < 8; a++)
            for (int b = a + 1; b < 8; b++)
                if (d4_result_grid_equal(&g, &img[a], k, &g, &img[b], k) && same++ < SHOW)
                    cr_log_error("%s: %ux%u grid %zu: %s and %s give the same image", r->name, h[k], w[k], k,
                                 grid_d4_op_name(a), grid_d4_op_name(b));
    cr_assert(same == 0, "%s: %zu pairs of equal images among grids with distinct cells [%s]", r->name, same, g.desc);
    for (int op = 0; op < 8; op++) grid_d4_result_free(&img[op]);
    grid_d4_batch_free(&g);
}

void d4_case_shape_laws(const d4_runner *r)
{
    const grid_d4_layout layouts[] = {GRID_D4_GAPS, GRID_D4_UNSORTED};
    for (size_t l = 0; l < 2; l++) {
        enum { N = 300 };
        uint16_t h[N], w[N];
        grid_d4_rng rng = {0x5E4Bu + l};
        for (size_t k = 0; k < N; k++) h[k] = (uint16_t)(1 + grid_d4_rng_below(&rng, 40)), w[k] = (uint16_t)(1 + grid_d4_rng_below(&rng, 40));
        grid_d4_batch g;
        D4_FIX(grid_d4_batch_make(&g, N, h, w, layouts[l], 0x5E4Cu + l, "shapes 1..40 x 1..40 (seed 0x5E4B+layout)"));
        /* Grid k is all (1 + k % 80): a result that lands at another grid's offset shows its owner. Values stay
         * below both poisons (0x5A, 0xFF). */
        for (size_t k = 0; k < N; k++) memset(grid_d4_batch_grid(&g, k), 1 + (int)(k % 80), (size_t)grid_d4_batch_cells_of(&g, k));
        for (int pass = 0; pass < 9; pass++) {
            if (pass < 8)
                grid_d4_batch_set_op(&g, pass);
            else
                D4_FIX(grid_d4_batch_set_ops_random(&g, 0x5E4Du));
            grid_d4_result res;
            d4_run_ok(r, &g, &res);
            uint8_t *covered = xcalloc((size_t)g.buf_bytes + 1, 1);
            for (size_t k = 0; k < N; k++) {
                const int op = grid_d4_batch_op_of(&g, k);
                const int swap = (op >> 2) & 1;
                cr_assert(res.out_height[k] == (swap ? w[k] : h[k]) && res.out_width[k] == (swap ? h[k] : w[k]),
                          "%s: %ux%u under %s gave %ux%u; swap ops give W x H, the others H x W", r->name, h[k], w[k],
                          grid_d4_op_name(op), res.out_height[k], res.out_width[k]);
                cr_assert((uint32_t)res.out_height[k] * res.out_width[k] == (uint32_t)h[k] * w[k],
                          "%s: out_height*out_width != height*width at grid %zu", r->name, k);
                const uint8_t *o = res.out + g.offset[k];
                for (uint64_t c = 0; c < grid_d4_batch_cells_of(&g, k); c++) {
                    cr_assert(o[c] == 1 + k % 80, "%s: byte %" PRIu64 " of result %zu (at its input offset %" PRIu64
                              ") holds %u, not this grid's value %u: a result landed elsewhere [%s]", r->name, c, k,
                              g.offset[k], o[c], (unsigned)(1 + k % 80), g.desc);
                    covered[g.offset[k] + c] = 1;
                }
            }
            uint64_t touched = 0;
            for (uint64_t i = 0; i < g.buf_bytes; i++) touched += !covered[i] && res.out[i] != res.poison;
            cr_assert(touched == 0, "%s: %" PRIu64 " gap bytes lost the poison 0x%02X [%s]", r->name, touched,
                      res.poison, g.desc);
            free(covered);
            grid_d4_result_free(&res);
        }
        grid_d4_batch_free(&g);
    }
}

void d4_case_histograms(const d4_runner *r)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 2000, GRID_D4_GAPS, 0x4157u));
    grid_d4_batch_fill_random(&g, 255, 0x4158u);
    for (int pass = 0; pass < 9; pass++) {
        if (pass < 8)
            grid_d4_batch_set_op(&g, pass);
        else
            D4_FIX(grid_d4_batch_set_ops_random(&g, 0x4159u));
        grid_d4_result res;
        d4_run_ok(r, &g, &res);
        for (size_t k = 0; k < g.n; k++) {
            uint32_t before[256] = {0}, after[256] = {0};
            const uint8_t *in = grid_d4_batch_grid(&g, k), *out = res.out + g.offset[k];
            for (uint64_t c = 0; c < grid_d4_batch_cells_of(&g, k); c++) before[in[c]]++, after[out[c]]++;
            cr_assert(memcmp(before, after, sizeof before) == 0,
                      "%s: grid %zu (%ux%u) under %s changed its value histogram [%s]", r->name, k, g.height[k],
                      g.width[k], grid_d4_op_name(grid_d4_batch_op_of(&g, k)), g.desc);
        }
        grid_d4_result_free(&res);
    }
    grid_d4_batch_free(&g);
}

/* ---------------------------------------------------------------- edge shapes and sizes */

void d4_case_edge_shapes(const d4_runner *r)
{
    static const uint16_t h[] = {1, 1, 2, 1, 30, 1, 255, 30, 31, 32, 33, 255, 3};
    static const uint16_t w[] = {1, 2, 1, 30, 1, 255, 1, 30, 31, 32, 33, 255, 7};
    enum { N = sizeof h / sizeof h[0] };
    grid_d4_batch all;
    D4_FIX(grid_d4_batch_make(&all, N, h, w, GRID_D4_GAPS, 0xED6Eu, "edge shapes"));
    grid_d4_batch_fill_random(&all, 255, 0xED6Fu);
    for (int op = 0; op < 8; op++) {
        grid_d4_batch_set_op(&all, op);
        grid_d4_result res;
        d4_run_ok(r, &all, &res);
        grid_d4_result_free(&res);
        /* Each alone, in a buffer of exactly its size: any byte past the grid is out of bounds. */
        for (size_t k = 0; k < N; k++) {
            grid_d4_batch one;
            D4_FIX(grid_d4_batch_relayout(&one, &all, &k, 1, GRID_D4_PACKED, 0, 0, 0));
            d4_run_ok(r, &one, &res);
            grid_d4_result_free(&res);
            grid_d4_batch_free(&one);
        }
    }
    D4_FIX(grid_d4_batch_set_ops_random(&all, 0xED70u));
    grid_d4_result res;
    d4_run_ok(r, &all, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&all);
}

void d4_case_dimension_256_is_too_large(const d4_runner *r)
{
    static const struct {
        uint16_t h[3], w[3];
        size_t index;
    } rows[] = {
        {{3, 256, 2}, {3, 1, 2}, 1},     {{256, 1, 1}, {1, 1, 1}, 0},     {{1, 1, 1}, {1, 2, 256}, 2},
        {{2, 256, 2}, {2, 256, 2}, 1},   {{4, 4, 300}, {4, 4, 4}, 2},     {{5, 1, 5}, {5, 65535, 5}, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        grid_d4_batch b;
        D4_FIX(grid_d4_batch_make(&b, 3, rows[i].h, rows[i].w, GRID_D4_PACKED, 0, "a dimension of 256 or more"));
        grid_d4_batch_fill_random(&b, 9, 0x256u);
        grid_d4_batch_set_op(&b, GRID_D4_ROT90);
        d4_run_error(r, &b, GRID_D4_ERR_TOO_LARGE, rows[i].index);
        grid_d4_batch_free(&b);
    }
    /* 255 is the largest allowed: the same batch with 255 runs. */
    const uint16_t h[] = {3, 255, 2}, w[] = {3, 1, 2};
    grid_d4_batch b;
    D4_FIX(grid_d4_batch_make(&b, 3, h, w, GRID_D4_PACKED, 0, "255 is allowed"));
    grid_d4_batch_fill_random(&b, 255, 0x255u);
    grid_d4_batch_set_op(&b, GRID_D4_ROT90);
    grid_d4_result res;
    d4_run_ok(r, &b, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&b);
}

/* Every batch op and two random per-grid op sets over one batch. */
static void run_all_ops(const d4_runner *r, grid_d4_batch *g, uint64_t ops_seed)
{
    for (int pass = 0; pass < 10; pass++) {
        if (pass < 8)
            grid_d4_batch_set_op(g, pass);
        else
            D4_FIX(grid_d4_batch_set_ops_random(g, ops_seed + (uint64_t)pass));
        grid_d4_result res;
        d4_run_ok(r, g, &res);
        grid_d4_result_free(&res);
    }
}

void d4_case_mixed_interleaved(const d4_runner *r)
{
    uint16_t h[1800], w[1800];
    const size_t n = d4_shapes_interleaved(h, w, 0x1A7Eu);
    const grid_d4_layout layouts[] = {GRID_D4_ALIGNED16, GRID_D4_PACKED_ODD};
    for (size_t l = 0; l < 2; l++) {
        grid_d4_batch g;
        D4_FIX(grid_d4_batch_make(&g, n, h, w, layouts[l], 0, "900 small shapes shuffled (seed 0x1A7E), 30x30 after non-square"));
        grid_d4_batch_fill_random(&g, 9, 0x1A7Fu + l);
        run_all_ops(r, &g, 0x1A80u);
        grid_d4_batch_free(&g);
    }
}

void d4_case_all_arc_grids(const d4_runner *r)
{
    grid_d4_batch g;
    d4_batch_arc(&g, GRID_D4_ALIGNED16, 0);
    run_all_ops(r, &g, 0xA2Cu);
    grid_d4_batch_free(&g);
    d4_batch_arc(&g, GRID_D4_PACKED, 0);
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0xA2Du));
    grid_d4_result res;
    d4_run_ok(r, &g, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&g);
}

void d4_case_small_batch_sizes(const d4_runner *r)
{
    static const size_t sizes[] = {1, 31, 32, 33};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        grid_d4_batch g;
        D4_FIX(grid_d4_batch_arc_sample(&g, sizes[i], GRID_D4_PACKED_ODD, 0x5123u + sizes[i]));
        run_all_ops(r, &g, 0x5200u + sizes[i]);
        grid_d4_batch_free(&g);
    }
}

void d4_case_empty_batch(const d4_runner *r)
{
    /* Metadata and a 64-byte buffer for one 8x8 grid, but n_grids = 0: nothing may change. */
    const uint16_t h = 8, w = 8;
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_make(&g, 1, &h, &w, GRID_D4_PACKED, 0, "n_grids = 0 over a 64-byte buffer"));
    grid_d4_batch_fill_random(&g, 9, 0xE0u);
    g.n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            grid_d4_batch_set_op(&g, GRID_D4_ROT90);
        else
            D4_FIX(grid_d4_batch_set_ops_all(&g, 0));
        grid_d4_result res;
        d4_run_ok(r, &g, &res); /* status OK, every byte still the poison, nothing launched */
        grid_d4_result_free(&res);
    }
    grid_d4_batch_free(&g);
}

void d4_case_large_batch(const d4_runner *r, size_t n)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, n, GRID_D4_ALIGNED16, 0xB16u));
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0xB17u));
    grid_d4_result res;
    d4_run_ok(r, &g, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&g);
    D4_FIX(grid_d4_batch_arc_sample(&g, n, GRID_D4_PACKED, 0xB18u));
    grid_d4_batch_set_op(&g, GRID_D4_ROT90);
    d4_run_ok(r, &g, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&g);
}

/* ---------------------------------------------------------------- ops, permutation, layouts */

void d4_case_per_grid_ops(const d4_runner *r)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 500, GRID_D4_GAPS, 0x0950u));
    grid_d4_batch_fill_random(&g, 255, 0x0951u);
    for (int op = 0; op < 8; op++) {
        grid_d4_result by_batch, by_ops;
        grid_d4_batch_set_op(&g, op);
        d4_run_ok(r, &g, &by_batch);
        /* ops set: batch_op must be ignored, even when it is out of range */
        static const int ignored[] = {-1, 8, 99};
        for (size_t i = 0; i < 4; i++) {
            D4_FIX(grid_d4_batch_set_ops_all(&g, (uint8_t)op));
            g.batch_op = i < 3 ? ignored[i] : (op + 3) % 8;
            d4_run_ok(r, &g, &by_ops);
            cr_assert(count_grid_differences(&g, &by_ops, &g, &by_batch) == 0,
                      "%s: ops all %s (batch_op %d) differs from batch op %s [%s]", r->name, grid_d4_op_name(op),
                      g.batch_op, grid_d4_op_name(op), g.desc);
            grid_d4_result_free(&by_ops);
        }
        grid_d4_result_free(&by_batch);
    }
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0x0952u));
    g.batch_op = 1234; /* ignored */
    grid_d4_result res;
    d4_run_ok(r, &g, &res);
    grid_d4_result_free(&res);
    grid_d4_batch_free(&g);
}

void d4_case_permutation(const d4_runner *r)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 400, GRID_D4_ALIGNED16, 0x9E4u));
    grid_d4_batch_fill_random(&g, 255, 0x9E5u);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            D4_FIX(grid_d4_batch_set_ops_random(&g, 0x9E6u));
        else
            grid_d4_batch_set_op(&g, GRID_D4_CMIRROR);
        size_t *perm = xcalloc(g.n, sizeof *perm);
        for (size_t i = 0; i < g.n; i++) perm[i] = i;
        grid_d4_rng rng = {0x9E7u};
        grid_d4_shuffle(perm, g.n, &rng);
        grid_d4_batch p;
        D4_FIX(grid_d4_batch_relayout(&p, &g, perm, g.n, GRID_D4_PACKED, 0, 0, 0));
        grid_d4_result rg, rp;
        d4_run_ok(r, &g, &rg);
        d4_run_ok(r, &p, &rp);
        size_t moved = 0;
        for (size_t i = 0; i < g.n; i++) moved += !d4_result_grid_equal(&p, &rp, i, &g, &rg, perm[i]);
        cr_assert(moved == 0, "%s: %zu of %zu permuted grids (seed 0x9E7) gave other bytes than in the original order",
                  r->name, moved, g.n);
        grid_d4_result_free(&rg);
        grid_d4_result_free(&rp);
        grid_d4_batch_free(&p);
        free(perm);
    }
    grid_d4_batch_free(&g);
}

void d4_case_layouts(const d4_runner *r)
{
    grid_d4_batch base;
    D4_FIX(grid_d4_batch_arc_sample(&base, 600, GRID_D4_PACKED, 0x1A90u));
    grid_d4_batch_fill_random(&base, 255, 0x1A91u);
    static const struct {
        grid_d4_layout layout;
        unsigned in_shift, out_shift;
    } variants[] = {
        {GRID_D4_PACKED_ODD, 0, 0}, {GRID_D4_ALIGNED16, 0, 0}, {GRID_D4_GAPS, 0, 0}, {GRID_D4_UNSORTED, 0, 0},
        {GRID_D4_ALIGNED16, 1, 1},  {GRID_D4_ALIGNED16, 0, 1}, {GRID_D4_ALIGNED16, 1, 0}, {GRID_D4_PACKED, 15, 7},
    };
    for (int pass = 0; pass < 3; pass++) {
        if (pass < 2)
            grid_d4_batch_set_op(&base, pass ? GRID_D4_DMIRROR : GRID_D4_ROT90);
        else
            D4_FIX(grid_d4_batch_set_ops_random(&base, 0x1A92u));
        grid_d4_result rb;
        d4_run_ok(r, &base, &rb);
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            grid_d4_batch lay;
            D4_FIX(grid_d4_batch_relayout(&lay, &base, NULL, 0, variants[v].layout, 0x1A93u + v, variants[v].in_shift,
                              variants[v].out_shift));
            grid_d4_result rl;
            d4_run_ok(r, &lay, &rl);
            size_t diff = 0;
            for (size_t k = 0; k < base.n; k++) diff += !d4_result_grid_equal(&lay, &rl, k, &base, &rb, k);
            cr_assert(diff == 0, "%s: %zu grids differ between the packed layout and [%s]", r->name, diff, lay.desc);
            grid_d4_result_free(&rl);
            grid_d4_batch_free(&lay);
        }
        grid_d4_result_free(&rb);
    }
    grid_d4_batch_free(&base);
}

/* ---------------------------------------------------------------- bad metadata */

/* Ten grids, packed: sizes 12, 25, 7, 4, 18, 16, 18, 7, 9, 10 at offsets 0, 12, 37, 44, 48, 66, 82, 100,
 * 107, 116; buf_bytes 126. */
static void bad_base(grid_d4_batch *b)
{
    static const uint16_t h[10] = {3, 5, 1, 2, 6, 4, 2, 7, 3, 5};
    static const uint16_t w[10] = {4, 5, 7, 2, 3, 4, 9, 1, 3, 2};
    D4_FIX(grid_d4_batch_make(b, 10, h, w, GRID_D4_PACKED, 0, "bad metadata base: 10 grids, packed"));
    grid_d4_batch_fill_random(b, 9, 0xBAD0u);
    grid_d4_batch_set_op(b, GRID_D4_ROT90);
}

#define BAD_ROW(code, index, ...)                                                                                      \
    do {                                                                                                               \
        grid_d4_batch b;                                                                                               \
        bad_base(&b);                                                                                                  \
        __VA_ARGS__;                                                                                                   \
        snprintf(b.desc, sizeof b.desc, "bad metadata row: %s", #__VA_ARGS__);                                         \
        d4_run_error(r, &b, code, index);                                                                              \
        grid_d4_batch_free(&b);                                                                                        \
    } while (0)

void d4_case_bad_metadata(const d4_runner *r)
{
    /* The base batch itself is valid. */
    {
        grid_d4_batch b;
        bad_base(&b);
        grid_d4_result res;
        d4_run_ok(r, &b, &res);
        grid_d4_result_free(&res);
        grid_d4_batch_free(&b);
    }
    /* ops[k] > 7 */
    BAD_ROW(GRID_D4_ERR_OP, 4, D4_FIX(grid_d4_batch_set_ops_all(&b, 1)); b.ops[4] = 8);
    BAD_ROW(GRID_D4_ERR_OP, 0, D4_FIX(grid_d4_batch_set_ops_all(&b, 7)); b.ops[0] = 255);
    BAD_ROW(GRID_D4_ERR_OP, 9, D4_FIX(grid_d4_batch_set_ops_random(&b, 1)); b.ops[9] = 0x80);
    /* empty */
    BAD_ROW(GRID_D4_ERR_EMPTY, 3, b.height[3] = 0);
    BAD_ROW(GRID_D4_ERR_EMPTY, 6, b.width[6] = 0);
    BAD_ROW(GRID_D4_ERR_EMPTY, 9, b.width[9] = 0; b.height[9] = 0);
    /* too large */
    BAD_ROW(GRID_D4_ERR_TOO_LARGE, 2, b.height[2] = 256);
    BAD_ROW(GRID_D4_ERR_TOO_LARGE, 5, b.width[5] = 0xFFFF);
    /* bounds, including sums that would wrap around 2^64 */
    BAD_ROW(GRID_D4_ERR_BOUNDS, 9, b.buf_bytes -= 1);
    BAD_ROW(GRID_D4_ERR_BOUNDS, 7, b.offset[7] = b.buf_bytes);
    BAD_ROW(GRID_D4_ERR_BOUNDS, 7, b.offset[7] = UINT64_MAX - 3);
    BAD_ROW(GRID_D4_ERR_BOUNDS, 0, b.offset[0] = UINT64_MAX);
    BAD_ROW(GRID_D4_ERR_BOUNDS, 1, b.offset[1] = (uint64_t)1 << 63);
    /* overlap of consecutive ascending entries (what the device checks), reported at the first of the pair */
    BAD_ROW(GRID_D4_ERR_OVERLAP, 4, b.offset[5] = b.offset[4] + 1);
    BAD_ROW(GRID_D4_ERR_OVERLAP, 4, b.offset[5] = b.offset[4]);
    BAD_ROW(GRID_D4_ERR_OVERLAP, 8, b.offset[9] = b.offset[8] + 8);
    BAD_ROW(GRID_D4_ERR_OVERLAP, 0, b.offset[1] = b.offset[0] + 11);
    /* the lowest index wins, whatever the rules */
    BAD_ROW(GRID_D4_ERR_EMPTY, 2, b.width[6] = 0; b.height[2] = 0);
    BAD_ROW(GRID_D4_ERR_OP, 1, D4_FIX(grid_d4_batch_set_ops_all(&b, 2)); b.ops[1] = 9; b.height[7] = 0);
    BAD_ROW(GRID_D4_ERR_BOUNDS, 1, b.offset[1] = UINT64_MAX - 1; b.width[8] = 300);
    BAD_ROW(GRID_D4_ERR_TOO_LARGE, 3, b.height[3] = 1000; D4_FIX(grid_d4_batch_set_ops_all(&b, 0)); b.ops[5] = 8);
    /* within one grid, the order of docs/grid_d4.md, "Bad input": op, empty, too large, bounds */
    BAD_ROW(GRID_D4_ERR_OP, 3, D4_FIX(grid_d4_batch_set_ops_all(&b, 6)); b.ops[3] = 8; b.height[3] = 0);
    BAD_ROW(GRID_D4_ERR_EMPTY, 3, b.height[3] = 0; b.width[3] = 300);
    BAD_ROW(GRID_D4_ERR_TOO_LARGE, 3, b.height[3] = 300; b.offset[3] = UINT64_MAX);
    /* per-grid errors before overlap, even at a higher index */
    BAD_ROW(GRID_D4_ERR_EMPTY, 8, b.offset[2] = b.offset[1]; b.height[8] = 0);
    BAD_ROW(GRID_D4_ERR_BOUNDS, 9, b.offset[5] = b.offset[4] + 2; b.buf_bytes -= 1);
}

/* ---------------------------------------------------------------- determinism and golden vectors */

void d4_case_determinism(const d4_runner *r)
{
    grid_d4_batch g;
    D4_FIX(grid_d4_batch_arc_sample(&g, 3000, GRID_D4_UNSORTED, 0xDE7u));
    grid_d4_batch_fill_random(&g, 255, 0xDE8u);
    D4_FIX(grid_d4_batch_set_ops_random(&g, 0xDE9u));
    grid_d4_result run[3];
    for (int i = 0; i < 3; i++) d4_run_ok(r, &g, &run[i]);
    /* Runs 0 and 2 had the same poison: the whole allocation must match, gaps included. */
    cr_assert(run[0].poison == run[2].poison, "poison alternation broken");
    cr_assert(memcmp(run[0].out_alloc, run[2].out_alloc, (size_t)run[0].alloc_bytes) == 0 &&
                  memcmp(run[0].out_height, run[2].out_height, g.n * sizeof *run[0].out_height) == 0 &&
                  memcmp(run[0].out_width, run[2].out_width, g.n * sizeof *run[0].out_width) == 0,
              "%s: two runs of the same batch differ [%s]", r->name, g.desc);
    cr_assert(count_grid_differences(&g, &run[0], &g, &run[1]) == 0, "%s: two runs of the same batch differ [%s]",
              r->name, g.desc);
    for (int i = 0; i < 3; i++) grid_d4_result_free(&run[i]);
    grid_d4_batch_free(&g);
}

/* Result grid i of (b, res) against golden record rec[i]. */
static size_t golden_mismatches(const d4_runner *r, const d4_golden *gold, const grid_d4_batch *b, const grid_d4_result *res,
                                const size_t *rec)
{
    size_t bad = 0;
    for (size_t i = 0; i < b->n; i++) {
        const size_t k = rec ? rec[i] : i;
        const int ok = res->out_height[i] == gold->want_height[k] && res->out_width[i] == gold->want_width[k] &&
                       memcmp(res->out + b->offset[i], gold->want + gold->batch.offset[k], (size_t)grid_d4_batch_cells_of(b, i)) == 0;
        if (!ok && bad++ < SHOW)
            cr_log_error("%s: golden line %zu (%s, %ux%u, %s): result differs from arc-dsl's", r->name, k + 1,
                         gold->src[k], gold->batch.height[k], gold->batch.width[k],
                         grid_d4_op_name(gold->batch.ops[k]));
    }
    return bad;
}

void d4_case_golden(const d4_runner *r)
{
    d4_golden gold;
    d4_golden_load(&gold);
    grid_d4_result res;
    d4_run_ok(r, &gold.batch, &res); /* every record, per-grid ops */
    size_t bad = golden_mismatches(r, &gold, &gold.batch, &res, NULL);
    cr_assert(bad == 0, "%s: %zu of %zu golden records not reproduced (per-grid ops)", r->name, bad, gold.batch.n);
    grid_d4_result_free(&res);

    size_t *rec = xcalloc(gold.batch.n, sizeof *rec);
    for (int op = 0; op < 8; op++) {
        size_t n = 0;
        for (size_t k = 0; k < gold.batch.n; k++)
            if (gold.batch.ops[k] == op) rec[n++] = k;
        grid_d4_batch b;
        D4_FIX(grid_d4_batch_relayout(&b, &gold.batch, rec, n, GRID_D4_PACKED_ODD, 0, 0, 0));
        grid_d4_batch_set_op(&b, op);
        d4_run_ok(r, &b, &res);
        bad = golden_mismatches(r, &gold, &b, &res, rec);
        cr_assert(bad == 0, "%s: %zu of %zu golden records for batch op %s not reproduced", r->name, bad, n,
                  grid_d4_op_name(op));
        grid_d4_result_free(&res);
        grid_d4_batch_free(&b);
    }
    free(rec);
    d4_golden_free(&gold);
}
