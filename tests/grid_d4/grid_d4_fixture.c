/* SPDX-License-Identifier: MIT
 * Test fixtures for grid_d4: batches, layouts, ARC and golden data, the oracle and the checks.
 * See grid_d4_fixture.h for the contract. Allocation failures end the test (cr_assert): fixtures are not
 * the thing under test.
 */
#define _POSIX_C_SOURCE 200809L /* getline, strdup */
#include "grid_d4_fixture.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "gw_arc.h"
#include "grid_d4_arc_shapes.h"
#include "gw_test_util.h"

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
    grid_d4_rng rng = {seed};
    grid_d4_shuffle(order, 900, &rng);
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
    char dir_path[4096];
    gw_data_path("arc/arc-agi-1-training", "the 400 ARC-AGI-1 training task files", dir_path, sizeof dir_path);
    memset(ag, 0, sizeof *ag);
    DIR *dir = opendir(dir_path);
    cr_assert(dir != NULL, "cannot open the ARC data directory %s", dir_path);
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
        char path[4400], err[512];
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
    cr_assert(ag->n == ARC_GRIDS, "the ARC-AGI-1 training tasks hold %d grids (docs/grid_d4.md, \"ARC shapes\"), gw_arc gave %zu",
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

void d4_batch_arc(grid_d4_batch *b, grid_d4_layout layout, uint64_t seed)
{
    arc_grids ag;
    arc_collect(&ag);
    /* The shape table used for sampling must describe this data. */
    for (size_t s = 0; s < sizeof grid_d4_arc_shapes / sizeof grid_d4_arc_shapes[0]; s++) {
        size_t count = 0;
        for (size_t k = 0; k < ag.n; k++)
            count += ag.height[k] == grid_d4_arc_shapes[s].height && ag.width[k] == grid_d4_arc_shapes[s].width;
        cr_assert(count == grid_d4_arc_shapes[s].count, "reference/grid_d4/grid_d4_arc_shapes.h says %u grids of %ux%u, the data has %zu",
                  grid_d4_arc_shapes[s].count, grid_d4_arc_shapes[s].height, grid_d4_arc_shapes[s].width, count);
    }
    D4_FIX(grid_d4_batch_make(b, ag.n, ag.height, ag.width, layout, seed, "every ARC-AGI-1 training grid"));
    for (size_t k = 0; k < ag.n; k++) memcpy(grid_d4_batch_grid(b, k), ag.cells[k], (size_t)grid_d4_batch_cells_of(b, k));
    arc_free(&ag);
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
    char path[4096];
    gw_data_path("arc/d4_golden.jsonl", "arc-dsl's golden vectors of the D4 operations", path, sizeof path);
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot open %s", path);
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
    D4_FIX(grid_d4_batch_make(&g->batch, n, h, w, GRID_D4_PACKED, 0, "golden vectors (arc-dsl)"));
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
        memcpy(grid_d4_batch_grid(&g->batch, k), r->in, (size_t)r->h * r->w);
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
    grid_d4_batch_free(&g->batch);
    memset(g, 0, sizeof *g);
}

/* ---------------------------------------------------------------- results */

uint8_t d4_next_poison(void)
{
    static unsigned calls;
    return (calls++ & 1u) ? D4_POISON_B : D4_POISON_A;
}

/* ---------------------------------------------------------------- the oracle */

void d4_oracle(const grid_d4_batch *b, grid_d4_result *res)
{
    for (size_t k = 0; k < b->n; k++) {
        const uint8_t *in = grid_d4_batch_grid(b, k);
        uint8_t *out = res->out + b->offset[k];
        const size_t H = b->height[k], W = b->width[k];
        const int op = grid_d4_batch_op_of(b, k);
        const int swapped = op >= 4; /* dmirror, rot270, rot90, cmirror give W x H */
        const size_t oh = swapped ? W : H, ow = swapped ? H : W;
        /* out[i][j] exactly as the formula of docs/grid_d4.md, "Semantics", gives it, op by op. */
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

int d4_result_grid_equal(const grid_d4_batch *ba, const grid_d4_result *ra, size_t ka, const grid_d4_batch *bb, const grid_d4_result *rb,
                         size_t kb)
{
    if (ra->out_height[ka] != rb->out_height[kb] || ra->out_width[ka] != rb->out_width[kb]) return 0;
    if (grid_d4_batch_cells_of(ba, ka) != grid_d4_batch_cells_of(bb, kb)) return 0;
    return memcmp(ra->out + ba->offset[ka], rb->out + bb->offset[kb], (size_t)grid_d4_batch_cells_of(ba, ka)) == 0;
}

/* ---------------------------------------------------------------- running */

void d4_run_ok(const d4_runner *r, const grid_d4_batch *b, grid_d4_result *res)
{
    char msg[4096];
    D4_FIX(grid_d4_result_init(res, b));
    grid_d4_result_poison(res, d4_next_poison());
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

    grid_d4_result want;
    D4_FIX(grid_d4_result_init(&want, b));
    grid_d4_result_poison(&want, res->poison);
    d4_oracle(b, &want);
    const size_t problems = grid_d4_result_compare(b, res, &want, msg, sizeof msg);
    grid_d4_result_free(&want);
    if (problems) {
        failed++;
        cr_expect(problems == 0, "%s, %s op: outputs differ from the oracle [%s]:\n%s", r->name,
                  b->ops ? "per-grid" : grid_d4_op_name(b->batch_op), b->desc, msg);
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

void d4_run_error(const d4_runner *r, const grid_d4_batch *b, int code, size_t index)
{
    char msg[2048];
    grid_d4_result res;
    D4_FIX(grid_d4_result_init(&res, b));
    grid_d4_result_poison(&res, d4_next_poison());
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
    for (size_t k = 0; k < b->n; k++) shapes += res.out_height[k] != GRID_D4_SHAPE_POISON || res.out_width[k] != GRID_D4_SHAPE_POISON;
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
    grid_d4_result_free(&res);
    if (failed) cr_assert_fail("%s: %d check(s) failed on this call; stopping the test", r->name, failed);
}
