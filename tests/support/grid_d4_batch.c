/* SPDX-License-Identifier: MIT
 * Test fixtures for grid_d4: batches, layouts, ARC and golden data, the oracle and the checks.
 * See grid_d4_batch.h for the contract. Allocation failures end the test (cr_assert): fixtures are not
 * the thing under test.
 */
#define _POSIX_C_SOURCE 200809L /* getline, strdup */
#include "grid_d4_batch.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "gw_arc.h"
#include "gw_arc_shapes.h"
#include "gw_test_util.h"

#ifndef GW_TEST_DATA_DIR
#error "GW_TEST_DATA_DIR must name tests/data (set by tests/grid_d4.cmake)"
#endif

enum { ARC_TASKS = 400, ARC_GRIDS = 3436, GOLDEN_RECORDS = 5600, MSG_LINES = 6 };

/* ---------------------------------------------------------------- helpers */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    cr_assert(p != NULL, "test fixture: out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

static void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    cr_assert(p != NULL, "test fixture: out of memory allocating %zu bytes", size);
    return p;
}

static void append_desc(d4_batch *b, const char *fmt, ...)
{
    size_t used = strnlen(b->desc, sizeof b->desc - 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->desc + used, sizeof b->desc - used, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- random numbers */

uint64_t d4_rng_next(d4_rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t d4_rng_below(d4_rng *rng, uint32_t bound)
{
    /* The modulo bias over 2^64 is far below anything a test could notice. */
    return (uint32_t)(d4_rng_next(rng) % bound);
}

void d4_shuffle(size_t *items, size_t n, d4_rng *rng)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(d4_rng_next(rng) % i);
        size_t t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
}

/* ---------------------------------------------------------------- batches */

const char *d4_layout_name(d4_layout layout)
{
    switch (layout) {
    case D4_PACKED: return "packed";
    case D4_PACKED_ODD: return "packed from offset 1";
    case D4_ALIGNED16: return "16-aligned";
    case D4_GAPS: return "random gaps";
    case D4_UNSORTED: return "unsorted with gaps";
    }
    return "?";
}

uint64_t d4_total_cells(const d4_batch *b)
{
    uint64_t total = 0;
    for (size_t k = 0; k < b->n; k++) total += d4_cells(b, k);
    return total;
}

/* Input cells the call must never depend on: gaps and slack hold this junk. */
static void fill_junk(uint8_t *p, uint64_t bytes)
{
    for (uint64_t i = 0; i < bytes; i++) p[i] = (uint8_t)(i * 37u + 11u);
}

static void alloc_in(d4_batch *b)
{
    free(b->in_alloc);
    b->in_alloc = xmalloc((size_t)(b->in_shift + b->buf_bytes + D4_SLACK));
    fill_junk(b->in_alloc, b->in_shift + b->buf_bytes + D4_SLACK);
    b->in = b->in_alloc + b->in_shift;
}

void d4_batch_make(d4_batch *b, size_t n, const uint16_t *height, const uint16_t *width, d4_layout layout,
                   uint64_t seed, const char *what)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->offset = xcalloc(n, sizeof *b->offset);
    b->height = xcalloc(n, sizeof *b->height);
    b->width = xcalloc(n, sizeof *b->width);
    if (n) {
        memcpy(b->height, height, n * sizeof *height);
        memcpy(b->width, width, n * sizeof *width);
    }
    d4_rng rng = {seed};
    size_t *order = xmalloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++) order[i] = i;
    if (layout == D4_UNSORTED) d4_shuffle(order, n, &rng);
    uint64_t end = layout == D4_PACKED_ODD ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        const size_t k = order[i];
        if (layout == D4_ALIGNED16) end = (end + 15) & ~(uint64_t)15;
        if (layout == D4_GAPS || layout == D4_UNSORTED) end += d4_rng_below(&rng, 41);
        b->offset[k] = end;
        end += (uint64_t)b->height[k] * b->width[k];
    }
    /* A tail after the last grid, so "bytes outside every grid" includes the buffer's own end. */
    if (layout == D4_GAPS || layout == D4_UNSORTED) end += d4_rng_below(&rng, 41);
    free(order);
    b->buf_bytes = end;
    alloc_in(b);
    snprintf(b->desc, sizeof b->desc, "%s: %zu grids, %s", what, n, d4_layout_name(layout));
    if (layout == D4_GAPS || layout == D4_UNSORTED) append_desc(b, " (layout seed %#" PRIx64 ")", seed);
}

void d4_batch_free(d4_batch *b)
{
    free(b->offset);
    free(b->height);
    free(b->width);
    free(b->ops);
    free(b->in_alloc);
    memset(b, 0, sizeof *b);
}

void d4_batch_shift(d4_batch *b, unsigned in_shift, unsigned out_shift)
{
    cr_assert(in_shift < 16 && out_shift < 16, "shifts are 0..15");
    uint8_t *old = b->in_alloc, *old_in = b->in;
    b->in_alloc = NULL;
    b->in_shift = in_shift;
    b->out_shift = out_shift;
    alloc_in(b);
    memcpy(b->in, old_in, (size_t)b->buf_bytes);
    free(old);
    append_desc(b, ", in base +%u, out base +%u bytes", in_shift, out_shift);
}

void d4_batch_relayout(d4_batch *dst, const d4_batch *src, const size_t *order, size_t n, d4_layout layout,
                       uint64_t seed, unsigned in_shift, unsigned out_shift)
{
    if (!order) n = src->n;
    uint16_t *h = xcalloc(n, sizeof *h), *w = xcalloc(n, sizeof *w);
    for (size_t i = 0; i < n; i++) {
        const size_t k = order ? order[i] : i;
        h[i] = src->height[k];
        w[i] = src->width[k];
    }
    d4_batch_make(dst, n, h, w, layout, seed, "relaid");
    free(h);
    free(w);
    if (in_shift || out_shift) d4_batch_shift(dst, in_shift, out_shift);
    for (size_t i = 0; i < n; i++) {
        const size_t k = order ? order[i] : i;
        memcpy(d4_grid(dst, i), d4_grid(src, k), (size_t)d4_cells(src, k));
    }
    dst->batch_op = src->batch_op;
    dst->flags = src->flags;
    if (src->ops) {
        dst->ops = xcalloc(n, 1);
        for (size_t i = 0; i < n; i++) dst->ops[i] = src->ops[order ? order[i] : i];
    }
    /* The new layout's words (from d4_batch_make) first, then what it was made from. */
    append_desc(dst, "%s of [%.120s]", order ? " (permuted)" : "", src->desc);
}

void d4_batch_from_result(d4_batch *dst, const d4_batch *src, const d4_result *res)
{
    memset(dst, 0, sizeof *dst);
    dst->n = src->n;
    dst->buf_bytes = src->buf_bytes;
    dst->in_shift = src->in_shift;
    dst->out_shift = src->out_shift;
    dst->flags = src->flags;
    dst->offset = xcalloc(src->n, sizeof *dst->offset);
    dst->height = xcalloc(src->n, sizeof *dst->height);
    dst->width = xcalloc(src->n, sizeof *dst->width);
    if (src->n) {
        memcpy(dst->offset, src->offset, src->n * sizeof *dst->offset);
        memcpy(dst->height, res->out_height, src->n * sizeof *dst->height);
        memcpy(dst->width, res->out_width, src->n * sizeof *dst->width);
    }
    alloc_in(dst);
    memcpy(dst->in, res->out, (size_t)src->buf_bytes);
    snprintf(dst->desc, sizeof dst->desc, "a result of [%.200s]", src->desc);
}

/* ---------------------------------------------------------------- cells and ops */

void d4_fill_random(d4_batch *b, unsigned max_value, uint64_t seed)
{
    d4_rng rng = {seed};
    for (size_t k = 0; k < b->n; k++) {
        uint8_t *g = d4_grid(b, k);
        for (uint64_t c = 0; c < d4_cells(b, k); c++) g[c] = (uint8_t)d4_rng_below(&rng, max_value + 1);
    }
    append_desc(b, ", cells 0..%u from seed %#" PRIx64, max_value, seed);
    fprintf(stderr, "grid_d4 test: %zu grids of cells 0..%u from seed %#" PRIx64 "\n", b->n, max_value, seed);
}

void d4_fill_distinct(d4_batch *b, uint64_t seed)
{
    d4_rng rng = {seed};
    size_t values[256];
    for (size_t k = 0; k < b->n; k++) {
        cr_assert(d4_cells(b, k) <= 256, "d4_fill_distinct: grid %zu has more than 256 cells", k);
        for (size_t v = 0; v < 256; v++) values[v] = v;
        d4_shuffle(values, 256, &rng);
        uint8_t *g = d4_grid(b, k);
        for (uint64_t c = 0; c < d4_cells(b, k); c++) g[c] = (uint8_t)values[c];
    }
    append_desc(b, ", distinct cells from seed %#" PRIx64, seed);
    fprintf(stderr, "grid_d4 test: %zu grids of distinct cells from seed %#" PRIx64 "\n", b->n, seed);
}

void d4_set_batch_op(d4_batch *b, int op)
{
    free(b->ops);
    b->ops = NULL;
    b->batch_op = op;
}

void d4_set_ops_all(d4_batch *b, uint8_t op)
{
    if (!b->ops) b->ops = xcalloc(b->n, 1);
    memset(b->ops, op, b->n);
}

void d4_set_ops_random(d4_batch *b, uint64_t seed)
{
    d4_rng rng = {seed};
    if (!b->ops) b->ops = xcalloc(b->n, 1);
    for (size_t k = 0; k < b->n; k++) b->ops[k] = (uint8_t)d4_rng_below(&rng, 8);
    fprintf(stderr, "grid_d4 test: random per-grid ops from seed %#" PRIx64 "\n", seed);
}

/* ---------------------------------------------------------------- shape sets */

void d4_shapes_small(uint16_t *height, uint16_t *width)
{
    size_t k = 0;
    for (uint16_t h = 1; h <= 30; h++)
        for (uint16_t w = 1; w <= 30; w++, k++) {
            height[k] = h;
            width[k] = w;
        }
}

size_t d4_shapes_interleaved(uint16_t *height, uint16_t *width, uint64_t seed)
{
    size_t order[900];
    uint16_t h[900], w[900];
    d4_shapes_small(h, w);
    for (size_t i = 0; i < 900; i++) order[i] = i;
    d4_rng rng = {seed};
    d4_shuffle(order, 900, &rng);
    size_t n = 0;
    for (size_t i = 0; i < 900; i++) {
        height[n] = h[order[i]];
        width[n++] = w[order[i]];
        /* A non-square grid next to a full tile: the padded-tile bug crops padding out of the tile. */
        if (h[order[i]] != w[order[i]]) {
            height[n] = 30;
            width[n++] = 30;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- ARC data */

typedef struct arc_grids {
    size_t n, cap, tasks;
    uint16_t *height, *width;
    uint8_t **cells;
} arc_grids;

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every grid of every task file, in sorted file order, through gw_arc. */
static void arc_collect(arc_grids *ag)
{
    const char *dir_path = GW_TEST_DATA_DIR "/arc-agi-1-training";
    memset(ag, 0, sizeof *ag);
    DIR *dir = opendir(dir_path);
    cr_assert(dir != NULL, "cannot open the ARC data directory %s (tests/data is part of the repository)", dir_path);
    size_t n_names = 0, cap_names = 512;
    char **names = xcalloc(cap_names, sizeof *names);
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        if (n_names == cap_names) {
            cap_names *= 2;
            names = realloc(names, cap_names * sizeof *names);
            cr_assert(names != NULL, "out of memory");
        }
        names[n_names] = strdup(e->d_name);
        cr_assert(names[n_names] != NULL, "out of memory");
        n_names++;
    }
    closedir(dir);
    qsort(names, n_names, sizeof *names, name_cmp);
    cr_assert(n_names == ARC_TASKS, "%s holds %zu task files, expected the %d ARC-AGI-1 training tasks", dir_path,
              n_names, ARC_TASKS);
    ag->cap = 4096;
    ag->height = xcalloc(ag->cap, sizeof *ag->height);
    ag->width = xcalloc(ag->cap, sizeof *ag->width);
    ag->cells = xcalloc(ag->cap, sizeof *ag->cells);
    for (size_t t = 0; t < n_names; t++) {
        char path[1024], err[512];
        snprintf(path, sizeof path, "%s/%s", dir_path, names[t]);
        gw_arc_task task;
        int rc = gw_arc_read(path, &task, err, sizeof err);
        cr_assert(rc == 0, "gw_arc_read(%s) failed: %s", path, err);
        const size_t count = gw_arc_grid_count(&task);
        for (size_t i = 0; i < count; i++) {
            const gw_arc_grid *g = gw_arc_grid_at(&task, i);
            cr_assert(ag->n < ag->cap, "more than %zu ARC grids", ag->cap);
            ag->height[ag->n] = g->height;
            ag->width[ag->n] = g->width;
            const size_t size = (size_t)g->height * g->width;
            ag->cells[ag->n] = xmalloc(size);
            memcpy(ag->cells[ag->n], g->cells, size);
            ag->n++;
        }
        gw_arc_free(&task);
        free(names[t]);
    }
    free(names);
    ag->tasks = n_names;
    cr_assert(ag->n == ARC_GRIDS, "the ARC-AGI-1 training tasks hold %d grids (spec table), gw_arc gave %zu",
              ARC_GRIDS, ag->n);
}

static void arc_free(arc_grids *ag)
{
    for (size_t i = 0; i < ag->n; i++) free(ag->cells[i]);
    free(ag->cells);
    free(ag->height);
    free(ag->width);
    memset(ag, 0, sizeof *ag);
}

void d4_batch_arc(d4_batch *b, d4_layout layout, uint64_t seed)
{
    arc_grids ag;
    arc_collect(&ag);
    /* The shape table used for sampling must describe this data. */
    for (size_t s = 0; s < sizeof gw_arc_shapes / sizeof gw_arc_shapes[0]; s++) {
        size_t count = 0;
        for (size_t k = 0; k < ag.n; k++)
            count += ag.height[k] == gw_arc_shapes[s].height && ag.width[k] == gw_arc_shapes[s].width;
        cr_assert(count == gw_arc_shapes[s].count, "tools/gw_arc_shapes.h says %u grids of %ux%u, the data has %zu",
                  gw_arc_shapes[s].count, gw_arc_shapes[s].height, gw_arc_shapes[s].width, count);
    }
    d4_batch_make(b, ag.n, ag.height, ag.width, layout, seed, "every ARC-AGI-1 training grid");
    for (size_t k = 0; k < ag.n; k++) memcpy(d4_grid(b, k), ag.cells[k], (size_t)d4_cells(b, k));
    arc_free(&ag);
}

void d4_batch_arc_sample(d4_batch *b, size_t n, d4_layout layout, uint64_t seed)
{
    /* Shapes from tools/gw_arc_shapes.h, the (height, width, count) table generated from the same 400 tasks
     * (d4_batch_arc checks that it still matches the data), expanded to one entry per grid so that a uniform
     * pick is a pick from the 3436 grids. No JSON parsing here: Valgrind runs make it the dominant cost. */
    static uint16_t grid_h[GW_ARC_SHAPES_GRIDS], grid_w[GW_ARC_SHAPES_GRIDS];
    static size_t n_grids;
    if (!n_grids) {
        for (size_t s = 0; s < sizeof gw_arc_shapes / sizeof gw_arc_shapes[0]; s++)
            for (unsigned c = 0; c < gw_arc_shapes[s].count && n_grids < GW_ARC_SHAPES_GRIDS; c++)
                grid_h[n_grids] = gw_arc_shapes[s].height, grid_w[n_grids++] = gw_arc_shapes[s].width;
        cr_assert(n_grids == GW_ARC_SHAPES_GRIDS, "gw_arc_shapes.h counts %zu grids, says %d", n_grids,
                  GW_ARC_SHAPES_GRIDS);
    }
    uint16_t *h = xcalloc(n, sizeof *h), *w = xcalloc(n, sizeof *w);
    d4_rng rng = {seed};
    for (size_t k = 0; k < n; k++) {
        const uint32_t pick = d4_rng_below(&rng, (uint32_t)n_grids);
        h[k] = grid_h[pick];
        w[k] = grid_w[pick];
    }
    char what[96];
    snprintf(what, sizeof what, "ARC-distributed shapes (seed %#" PRIx64 ")", seed);
    d4_batch_make(b, n, h, w, layout, seed ^ 0x1A70u, what);
    free(h);
    free(w);
    d4_fill_random(b, 9, seed + 1);
}

/* ---------------------------------------------------------------- golden vectors */

int d4_op_from_name(const char *name)
{
    /* Spelled out here rather than taken from grid_d4_op_name(): the test must not trust the header's table. */
    static const struct {
        const char *name;
        int code;
    } table[] = {{"identity", 0}, {"vmirror", 1}, {"hmirror", 2}, {"rot180", 3},
                 {"dmirror", 4},  {"rot270", 5},  {"rot90", 6},   {"cmirror", 7}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(name, table[i].name) == 0) return table[i].code;
    return -1;
}

/* Digits string -> cells; returns 0 when a character is not a digit. */
static int digits_to_cells(const char *s, uint8_t *cells, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        cells[i] = (uint8_t)(s[i] - '0');
    }
    return s[n] == '\0';
}

typedef struct golden_record {
    int op;
    uint16_t h, w, oh, ow;
    uint8_t *in, *out;
    char *src;
} golden_record;

static int json_dim(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= GRID_D4_MAX_DIM ? (int)v->valuedouble : -1;
}

static const char *json_str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

void d4_golden_load(d4_golden *g)
{
    const char *path = GW_TEST_DATA_DIR "/d4_golden.jsonl";
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot open %s (tests/data is part of the repository)", path);
    golden_record *rec = xcalloc(GOLDEN_RECORDS, sizeof *rec);
    size_t n = 0, line_no = 0, per_op[8] = {0};
    char *line = NULL;
    size_t line_cap = 0;
    while (getline(&line, &line_cap, f) >= 0) {
        line_no++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        cr_assert(n < GOLDEN_RECORDS, "%s has more than %d records", path, GOLDEN_RECORDS);
        cJSON *obj = cJSON_Parse(line);
        cr_assert(obj != NULL, "%s line %zu is not JSON", path, line_no);
        golden_record *r = &rec[n];
        const char *op = json_str(obj, "op"), *in = json_str(obj, "in"), *out = json_str(obj, "out");
        const char *src = json_str(obj, "src");
        const int h = json_dim(obj, "h"), w = json_dim(obj, "w"), oh = json_dim(obj, "oh"), ow = json_dim(obj, "ow");
        cr_assert(op && in && out && src && h > 0 && w > 0 && oh > 0 && ow > 0,
                  "%s line %zu: needs src, op, in, out (strings) and h, w, oh, ow (1..255)", path, line_no);
        r->op = d4_op_from_name(op);
        cr_assert(r->op >= 0, "%s line %zu: unknown op name '%s'", path, line_no, op);
        per_op[r->op]++;
        r->h = (uint16_t)h, r->w = (uint16_t)w, r->oh = (uint16_t)oh, r->ow = (uint16_t)ow;
        r->in = xmalloc((size_t)h * w);
        r->out = xmalloc((size_t)oh * ow);
        cr_assert(digits_to_cells(in, r->in, (size_t)h * w) && digits_to_cells(out, r->out, (size_t)oh * ow),
                  "%s line %zu: 'in' must hold h*w and 'out' oh*ow digits", path, line_no);
        r->src = strdup(src);
        cr_assert(r->src != NULL, "out of memory");
        cJSON_Delete(obj);
        n++;
    }
    free(line);
    fclose(f);
    cr_assert(n == GOLDEN_RECORDS, "%s holds %zu records, expected %d (700 grids x 8 ops)", path, n, GOLDEN_RECORDS);
    for (int op = 0; op < 8; op++)
        cr_assert(per_op[op] == GOLDEN_RECORDS / 8, "%s: op %d appears %zu times, expected %d", path, op, per_op[op],
                  GOLDEN_RECORDS / 8);

    uint16_t *h = xcalloc(n, sizeof *h), *w = xcalloc(n, sizeof *w);
    for (size_t k = 0; k < n; k++) h[k] = rec[k].h, w[k] = rec[k].w;
    d4_batch_make(&g->batch, n, h, w, D4_PACKED, 0, "golden vectors (arc-dsl)");
    free(h);
    free(w);
    g->batch.ops = xcalloc(n, 1);
    g->want = xcalloc((size_t)g->batch.buf_bytes, 1);
    g->want_height = xcalloc(n, sizeof *g->want_height);
    g->want_width = xcalloc(n, sizeof *g->want_width);
    g->src = xcalloc(n, sizeof *g->src);
    for (size_t k = 0; k < n; k++) {
        golden_record *r = &rec[k];
        cr_assert((uint64_t)r->oh * r->ow == (uint64_t)r->h * r->w, "%s line %zu: oh*ow != h*w", path, k + 1);
        memcpy(d4_grid(&g->batch, k), r->in, (size_t)r->h * r->w);
        memcpy(g->want + g->batch.offset[k], r->out, (size_t)r->oh * r->ow);
        g->batch.ops[k] = (uint8_t)r->op;
        g->want_height[k] = r->oh;
        g->want_width[k] = r->ow;
        g->src[k] = r->src;
        free(r->in);
        free(r->out);
    }
    free(rec);
}

void d4_golden_free(d4_golden *g)
{
    for (size_t k = 0; k < g->batch.n; k++) free(g->src[k]);
    free(g->src);
    free(g->want);
    free(g->want_height);
    free(g->want_width);
    d4_batch_free(&g->batch);
    memset(g, 0, sizeof *g);
}

/* ---------------------------------------------------------------- results */

void d4_result_init(d4_result *res, const d4_batch *b)
{
    memset(res, 0, sizeof *res);
    res->n = b->n;
    res->buf_bytes = b->buf_bytes;
    res->shift = b->out_shift;
    res->alloc_bytes = b->out_shift + b->buf_bytes + D4_SLACK;
    res->out_alloc = xmalloc((size_t)res->alloc_bytes);
    res->out = res->out_alloc + res->shift;
    res->out_height = xcalloc(b->n, sizeof *res->out_height);
    res->out_width = xcalloc(b->n, sizeof *res->out_width);
}

void d4_result_free(d4_result *res)
{
    free(res->out_alloc);
    free(res->out_height);
    free(res->out_width);
    memset(res, 0, sizeof *res);
}

void d4_result_poison(d4_result *res, uint8_t poison)
{
    res->poison = poison;
    memset(res->out_alloc, poison, (size_t)res->alloc_bytes);
    for (size_t k = 0; k < res->n; k++) res->out_height[k] = res->out_width[k] = D4_SHAPE_POISON;
}

uint8_t d4_next_poison(void)
{
    static unsigned calls;
    return (calls++ & 1u) ? D4_POISON_B : D4_POISON_A;
}

/* ---------------------------------------------------------------- the oracle */

void d4_oracle(const d4_batch *b, d4_result *res)
{
    for (size_t k = 0; k < b->n; k++) {
        const uint8_t *in = d4_grid(b, k);
        uint8_t *out = res->out + b->offset[k];
        const size_t H = b->height[k], W = b->width[k];
        const int op = d4_op_of(b, k);
        const int swapped = op >= 4; /* dmirror, rot270, rot90, cmirror give W x H */
        const size_t oh = swapped ? W : H, ow = swapped ? H : W;
        /* out[i][j] exactly as the spec table's "out[i][j] =" column lists it, op by op. */
        for (size_t i = 0; i < oh; i++) {
            for (size_t j = 0; j < ow; j++) {
                uint8_t v = 0;
                switch (op) {
                case 0: v = in[i * W + j]; break;                         /* identity: in[i][j] */
                case 1: v = in[i * W + (W - 1 - j)]; break;               /* vmirror:  in[i][W-1-j] */
                case 2: v = in[(H - 1 - i) * W + j]; break;               /* hmirror:  in[H-1-i][j] */
                case 3: v = in[(H - 1 - i) * W + (W - 1 - j)]; break;     /* rot180:   in[H-1-i][W-1-j] */
                case 4: v = in[j * W + i]; break;                         /* dmirror:  in[j][i] */
                case 5: v = in[j * W + (W - 1 - i)]; break;               /* rot270:   in[j][W-1-i] */
                case 6: v = in[(H - 1 - j) * W + i]; break;               /* rot90:    in[H-1-j][i] */
                case 7: v = in[(H - 1 - j) * W + (W - 1 - i)]; break;     /* cmirror:  in[H-1-j][W-1-i] */
                default: cr_assert_fail("d4_oracle: op %d at grid %zu is invalid", op, k);
                }
                out[i * ow + j] = v;
            }
        }
        res->out_height[k] = (uint16_t)oh;
        res->out_width[k] = (uint16_t)ow;
    }
}

/* ---------------------------------------------------------------- comparison */

size_t d4_compare(const d4_batch *b, const d4_result *got, const d4_result *want, char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    size_t problems = 0;

    size_t bad_shapes = 0, poison_shapes = 0;
    for (size_t k = 0; k < b->n; k++) {
        if (got->out_height[k] == want->out_height[k] && got->out_width[k] == want->out_width[k]) continue;
        if (got->out_height[k] == D4_SHAPE_POISON && got->out_width[k] == D4_SHAPE_POISON) poison_shapes++;
        if (bad_shapes++ < MSG_LINES / 2)
            gw_append_line(msg, msg_size, "grid %zu (%ux%u, op %s): result shape %ux%u, want %ux%u", k, b->height[k],
                   b->width[k], grid_d4_op_name(d4_op_of(b, k)), got->out_height[k], got->out_width[k],
                   want->out_height[k], want->out_width[k]);
    }
    if (bad_shapes) gw_append_line(msg, msg_size, "%zu of %zu result shapes are wrong", bad_shapes, b->n);
    if (poison_shapes)
        gw_append_line(msg, msg_size, "%zu of %zu result shapes still hold the poison 0xFFFF: never written", poison_shapes,
               b->n);
    problems += bad_shapes;

    if (memcmp(got->out_alloc, want->out_alloc, (size_t)want->alloc_bytes) == 0) return problems;

    /* Grid bytes: which grid, which cell, both values; and how many were simply never written. */
    uint64_t bad_cells = 0, poison_cells = 0, total = 0;
    for (size_t k = 0; k < b->n; k++) {
        const uint8_t *g = got->out + b->offset[k], *w = want->out + b->offset[k];
        const uint64_t size = d4_cells(b, k);
        total += size;
        if (memcmp(g, w, (size_t)size) == 0) continue;
        const unsigned ow = want->out_width[k];
        for (uint64_t c = 0; c < size; c++) {
            if (g[c] == w[c]) continue;
            if (g[c] == got->poison) poison_cells++;
            if (bad_cells++ < MSG_LINES)
                gw_append_line(msg, msg_size,
                       "grid %zu (%ux%u at offset %" PRIu64 ", op %s) cell %" PRIu64 " (row %" PRIu64 ", col %" PRIu64
                       " of the result): got %u, want %u",
                       k, b->height[k], b->width[k], b->offset[k], grid_d4_op_name(d4_op_of(b, k)), c, c / ow, c % ow,
                       g[c], w[c]);
        }
    }
    if (bad_cells) gw_append_line(msg, msg_size, "%" PRIu64 " of %" PRIu64 " result bytes differ", bad_cells, total);
    if (poison_cells)
        gw_append_line(msg, msg_size, "%" PRIu64 " of %" PRIu64 " output bytes still hold the poison 0x%02X: the call did not "
               "write them", poison_cells, total, got->poison);
    problems += bad_cells;

    /* Bytes outside every grid: gaps, the tail of the buffer and the slack around it. */
    uint8_t *covered = xcalloc((size_t)(want->alloc_bytes + 7) / 8, 1);
    for (size_t k = 0; k < b->n; k++)
        for (uint64_t i = got->shift + b->offset[k], e = i + d4_cells(b, k); i < e; i++)
            covered[i / 8] |= (uint8_t)(1u << (i % 8));
    uint64_t outside = 0;
    for (uint64_t i = 0; i < want->alloc_bytes; i++) {
        if ((covered[i / 8] >> (i % 8)) & 1u || got->out_alloc[i] == want->out_alloc[i]) continue;
        if (outside++ < MSG_LINES / 2)
            gw_append_line(msg, msg_size, "byte %" PRId64 " relative to out (buf_bytes %" PRIu64 "), outside every grid: got "
                   "%u, want the poison %u", (int64_t)i - (int64_t)got->shift, b->buf_bytes, got->out_alloc[i],
                   want->out_alloc[i]);
    }
    free(covered);
    if (outside)
        gw_append_line(msg, msg_size, "%" PRIu64 " bytes outside every grid were written: gaps and the slack around out must "
               "keep the poison", outside);
    return problems + outside;
}

int d4_result_grid_equal(const d4_batch *ba, const d4_result *ra, size_t ka, const d4_batch *bb, const d4_result *rb,
                         size_t kb)
{
    if (ra->out_height[ka] != rb->out_height[kb] || ra->out_width[ka] != rb->out_width[kb]) return 0;
    if (d4_cells(ba, ka) != d4_cells(bb, kb)) return 0;
    return memcmp(ra->out + ba->offset[ka], rb->out + bb->offset[kb], (size_t)d4_cells(ba, ka)) == 0;
}

/* ---------------------------------------------------------------- running */

void d4_run_ok(const d4_runner *r, const d4_batch *b, d4_result *res)
{
    char msg[4096];
    d4_result_init(res, b);
    d4_result_poison(res, d4_next_poison());
    size_t bad_index = 0;
    const int status = r->run(r->ctx, b, res, &bad_index);
    int failed = 0;
    if (status != GRID_D4_OK) {
        failed++;
        if (status < 0) /* the runner has already said what it found */
            cr_expect(status == GRID_D4_OK, "%s: no valid status for a valid batch (see above) [%s]", r->name, b->desc);
        else
            cr_expect(status == GRID_D4_OK, "%s rejected a valid batch: status %d (%s) at grid %zu [%s]", r->name,
                      status, grid_d4_status_str((grid_d4_status)status), bad_index, b->desc);
    }

    d4_result want;
    d4_result_init(&want, b);
    d4_result_poison(&want, res->poison);
    d4_oracle(b, &want);
    const size_t problems = d4_compare(b, res, &want, msg, sizeof msg);
    d4_result_free(&want);
    if (problems) {
        failed++;
        cr_expect(problems == 0, "%s, %s op: outputs differ from the oracle [%s]:\n%s", r->name,
                  b->ops ? "per-grid" : grid_d4_op_name(b->batch_op), b->desc, msg);
    }

    if (r->check_witness) {
        const int violations = r->check_witness(r->ctx, b->n ? 1 : 0, d4_total_cells(b), msg, sizeof msg);
        if (violations) {
            failed++;
            cr_expect(violations == 0, "%s: witness check failed [%s]:\n%s", r->name, b->desc, msg);
        }
    }
    if (failed) cr_assert_fail("%s: %d check(s) failed on this call; stopping the test", r->name, failed);
}

void d4_run_error(const d4_runner *r, const d4_batch *b, int code, size_t index)
{
    char msg[2048];
    d4_result res;
    d4_result_init(&res, b);
    d4_result_poison(&res, d4_next_poison());
    size_t bad_index = 0;
    const int status = r->run(r->ctx, b, &res, &bad_index);
    int failed = 0;
    if (status != code || bad_index != index) {
        failed++;
        cr_expect(status == code && bad_index == index,
                  "%s: got status %d (%s) at grid %zu, want %d (%s) at grid %zu [%s]", r->name, status,
                  grid_d4_status_str((grid_d4_status)status), bad_index, code, grid_d4_status_str((grid_d4_status)code),
                  index, b->desc);
    }
    uint64_t written = 0, first = 0;
    for (uint64_t i = 0; i < res.alloc_bytes; i++)
        if (res.out_alloc[i] != res.poison && !written++) first = i;
    size_t shapes = 0;
    for (size_t k = 0; k < b->n; k++) shapes += res.out_height[k] != D4_SHAPE_POISON || res.out_width[k] != D4_SHAPE_POISON;
    if (written || shapes) {
        failed++;
        cr_expect(written == 0 && shapes == 0,
                  "%s wrote output though the batch was rejected: %" PRIu64 " cell bytes no longer hold the poison "
                  "0x%02X (first at byte %" PRId64 " of out), %zu result shapes written [%s]",
                  r->name, written, res.poison, (int64_t)first - (int64_t)res.shift, shapes, b->desc);
    }
    if (r->check_witness) {
        const int violations = r->check_witness(r->ctx, 1, 0, msg, sizeof msg);
        if (violations) {
            failed++;
            cr_expect(violations == 0, "%s: witness check failed for a rejected batch [%s]:\n%s", r->name, b->desc,
                      msg);
        }
    }
    d4_result_free(&res);
    if (failed) cr_assert_fail("%s: %d check(s) failed on this call; stopping the test", r->name, failed);
}
