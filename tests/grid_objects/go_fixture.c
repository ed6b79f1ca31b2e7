/* SPDX-License-Identifier: MIT
 * Test fixtures for grid_objects: the poison alternation, the oracle and the checked calls (contract in
 * go_fixture.h). Allocation failures end the test: fixtures are not the thing under test.
 */
#include "go_fixture.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    cr_assert(p != NULL, "test fixture: out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

uint8_t go_next_poison(void)
{
    static unsigned calls;
    return (calls++ & 1u) ? GO_POISON_B : GO_POISON_A;
}

/* ---------------------------------------------------------------- the oracle */

/* arc-dsl's mostcolor, max(set(values), key=values.count), spelled the way CPython runs it: the set is an
 * open-addressing table (hash(c) = c, perturbation shifted right by 5 before each probe), max keeps the
 * first maximum in slot order. With 5 or more colours the header defines the order as ascending (CPython's
 * table has grown to 32 slots by then, which is ascending for the colours 0..31 of ARC). SMALLEST: the
 * first maximum in ascending order. */
static int oracle_bg(const uint8_t *cells, size_t n, int bg_tie)
{
    uint32_t count[256] = {0};
    int order[256], n_colours = 0;
    for (size_t i = 0; i < n; i++)
        if (count[cells[i]]++ == 0) order[n_colours++] = cells[i];
    int iter[256], n_iter = 0;
    if (bg_tie == GRID_OBJECTS_TIE_SMALLEST || n_colours >= 5) {
        for (int c = 0; c < 256; c++)
            if (count[c]) iter[n_iter++] = c;
    } else {
        int table[8];
        for (int s = 0; s < 8; s++) table[s] = -1;
        for (int i = 0; i < n_colours; i++) {
            const unsigned hash = (unsigned)order[i];
            unsigned perturb = hash, slot = hash & 7u;
            while (table[slot] >= 0) {
                perturb >>= 5;
                slot = (slot * 5u + 1u + perturb) & 7u;
            }
            table[slot] = order[i];
        }
        for (int s = 0; s < 8; s++)
            if (table[s] >= 0) iter[n_iter++] = table[s];
    }
    int best = iter[0];
    for (int i = 1; i < n_iter; i++)
        if (count[iter[i]] > count[best]) best = iter[i];
    return best;
}

/* Union-find with the smaller index as the root: after all unions, a cell's root is the smallest index of
 * its component, which is the canonical label. */
static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void unite(uint32_t *parent, uint32_t a, uint32_t b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a < b) parent[b] = a;
    else if (b < a) parent[a] = b;
}

void go_oracle(const grid_d4_batch *b, int bg_tie, grid_objects_result *res)
{
    uint32_t *parent = xcalloc(GRID_OBJECTS_MAX_DIM * GRID_OBJECTS_MAX_DIM, sizeof *parent);
    uint32_t *record_of = xcalloc(GRID_OBJECTS_MAX_DIM * GRID_OBJECTS_MAX_DIM, sizeof *record_of);
    for (size_t k = 0; k < b->n; k++) {
        const uint8_t *in = grid_d4_batch_grid(b, k);
        const uint32_t H = b->height[k], W = b->width[k], cells = H * W;
        const int t = grid_d4_batch_op_of(b, k);
        const int univalued = t & GRID_OBJECTS_UNIVALUED, diagonal = t & GRID_OBJECTS_DIAGONAL;
        const int bg = (t & GRID_OBJECTS_WITHOUT_BG) ? oracle_bg(in, cells, bg_tie) : -1;
        res->bg[k] = (int16_t)bg;
        for (uint32_t i = 0; i < cells; i++) parent[i] = i;
        /* Each unordered neighbour pair once: right, down, and with diagonal down-right and down-left. */
        for (uint32_t r = 0; r < H; r++) {
            for (uint32_t c = 0; c < W; c++) {
                const uint32_t i = r * W + c;
                if (in[i] == bg) continue;
                const int32_t nb[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
                for (int d = 0; d < (diagonal ? 4 : 2); d++) {
                    const int32_t rr = (int32_t)r + nb[d][0], cc = (int32_t)c + nb[d][1];
                    if (rr >= (int32_t)H || cc < 0 || cc >= (int32_t)W) continue;
                    const uint32_t j = (uint32_t)rr * W + (uint32_t)cc;
                    if (in[j] == bg || (univalued && in[j] != in[i])) continue;
                    unite(parent, i, j);
                }
            }
        }
        uint16_t *labels = res->labels + b->offset[k];
        grid_objects_object *objects = res->objects + b->offset[k];
        uint32_t n_obj = 0;
        for (uint32_t i = 0; i < cells; i++) {
            if (in[i] == bg) {
                labels[i] = GRID_OBJECTS_NO_OBJECT;
                continue;
            }
            const uint32_t root = find(parent, i);
            labels[i] = (uint16_t)root;
            const uint16_t r = (uint16_t)(i / W), c = (uint16_t)(i % W);
            if (root == i) { /* first cell of a new object: records come in order of first cell */
                record_of[i] = n_obj;
                objects[n_obj++] = (grid_objects_object){.first_cell = (uint16_t)i, .colour = in[i], .n_cells = 0,
                                                         .top = r, .left = c, .bottom = r, .right = c};
            }
            grid_objects_object *o = &objects[record_of[root]];
            o->n_cells++;
            if (o->colour != in[i]) o->colour = GRID_OBJECTS_SEVERAL_COLOURS;
            if (r > o->bottom) o->bottom = r; /* rows only grow in row-major order; top is the first cell's */
            if (c < o->left) o->left = c;
            if (c > o->right) o->right = c;
        }
        res->n_objects[k] = n_obj;
    }
    free(parent);
    free(record_of);
}

/* ---------------------------------------------------------------- checked calls */

static const char *variant_text(const grid_d4_batch *b, char *buf, size_t size)
{
    if (b->ops) snprintf(buf, size, "per-grid variants");
    else snprintf(buf, size, "variant %d", b->batch_op);
    return buf;
}

void go_run_ok(const go_runner *r, const grid_d4_batch *b, int bg_tie, grid_objects_result *res)
{
    char msg[2048], vt[32];
    GO_FIX(grid_objects_result_init(res, b->n, b->buf_bytes));
    grid_objects_result_poison(res, go_next_poison());
    size_t bad_index = 0;
    const int status = r->run(r->ctx, b, bg_tie, res, &bad_index);
    int failed = 0;
    if (status != GRID_OBJECTS_OK) {
        failed++;
        if (status < 0) /* the runner has already said what it found */
            cr_expect(status == GRID_OBJECTS_OK, "%s: no valid status for a valid batch (see above) [%s]", r->name,
                      b->desc);
        else
            cr_expect(status == GRID_OBJECTS_OK, "%s rejected a valid batch: status %d (%s) at grid %zu [%s]",
                      r->name, status, grid_objects_status_str((grid_objects_status)status), bad_index, b->desc);
    }

    const size_t left = grid_objects_result_poisoned(res, b);
    if (left) {
        failed++;
        cr_expect(left == 0, "%s, %s: %zu output entries: each still holds the poison 0x%02X [%s]", r->name,
                  variant_text(b, vt, sizeof vt), left, res->poison, b->desc);
    }

    grid_objects_result want;
    GO_FIX(grid_objects_result_init(&want, b->n, b->buf_bytes));
    grid_objects_result_poison(&want, res->poison);
    go_oracle(b, bg_tie, &want);
    const size_t problems = grid_objects_result_compare(res, &want, b, msg, sizeof msg);
    grid_objects_result_free(&want);
    if (problems) {
        failed++;
        cr_expect(problems == 0, "%s, %s, bg_tie %d: result differs from the oracle in %zu entries [%s]; first: %s",
                  r->name, variant_text(b, vt, sizeof vt), bg_tie, problems, b->desc, msg);
    }

    if (r->check_witness) {
        const int violations = r->check_witness(r->ctx, b->n ? 1 : 0, grid_d4_batch_cells(b), msg, sizeof msg);
        if (violations) {
            failed++;
            cr_expect(violations == 0, "%s: witness check failed [%s]:\n%s", r->name, b->desc, msg);
        }
    }
    if (failed) cr_assert_fail("%s: %d check(s) failed on this call; stopping the test", r->name, failed);
}

void go_run_error(const go_runner *r, const grid_d4_batch *b, int code, size_t index)
{
    char msg[2048];
    grid_objects_result res;
    GO_FIX(grid_objects_result_init(&res, b->n, b->buf_bytes));
    grid_objects_result_poison(&res, go_next_poison());
    grid_objects_result fresh; /* what every entry must still hold */
    GO_FIX(grid_objects_result_init(&fresh, b->n, b->buf_bytes));
    grid_objects_result_poison(&fresh, res.poison);
    size_t bad_index = 0;
    const int status = r->run(r->ctx, b, GRID_OBJECTS_TIE_ARC_DSL, &res, &bad_index);
    int failed = 0;
    if (status != code || bad_index != index) {
        failed++;
        cr_expect(status == code && bad_index == index,
                  "%s: got status %d (%s) at grid %zu, want %d (%s) at grid %zu [%s]", r->name, status,
                  grid_objects_status_str((grid_objects_status)status), bad_index, code,
                  grid_objects_status_str((grid_objects_status)code), index, b->desc);
    }
    const size_t label_bytes = (size_t)res.out_entries * sizeof *res.labels; /* the pad too */
    const size_t object_bytes = (size_t)res.out_entries * sizeof *res.objects;
    const int written = memcmp(res.labels, fresh.labels, label_bytes) != 0 ||
                        memcmp(res.objects, fresh.objects, object_bytes) != 0 ||
                        memcmp(res.n_objects, fresh.n_objects, b->n * sizeof *res.n_objects) != 0 ||
                        memcmp(res.bg, fresh.bg, b->n * sizeof *res.bg) != 0;
    if (written) {
        failed++;
        cr_expect(!written, "%s wrote output though the batch was rejected: some entries no longer hold the poison "
                  "0x%02X [%s]", r->name, res.poison, b->desc);
    }
    if (r->check_witness) {
        const int violations = r->check_witness(r->ctx, 1, 0, msg, sizeof msg);
        if (violations) {
            failed++;
            cr_expect(violations == 0, "%s: witness check failed for a rejected batch [%s]:\n%s", r->name, b->desc,
                      msg);
        }
    }
    grid_objects_result_free(&fresh);
    grid_objects_result_free(&res);
    if (failed) cr_assert_fail("%s: %d check(s) failed on this call; stopping the test", r->name, failed);
}
