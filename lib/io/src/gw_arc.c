/* SPDX-License-Identifier: MIT
 * ARC task JSON read and write (see gw_arc.h for the rules and why the reader is its own).
 *
 * Reading is two passes over the bytes, both linear and neither recursive:
 *   1. gw_arc_syntax_check (gw_arc_syntax.c): strict RFC 8259 JSON with a nesting limit. The first fault is
 *      reported with its line, column and byte offset, and the rule it breaks; nothing is allocated but a
 *      fixed stack of brackets.
 *   2. the structure pass (parse_task and below), over text now known to be valid: the top-level members,
 *      the pairs and the grids, checked against the ARC rules in a fixed order (train before test, shapes
 *      of a grid before its cells), so a file with several faults always gets the same message. Grids are
 *      read straight from the text; every other member is kept as its original text (struct gw_arc_kept).
 * Indices in messages are 0-based, like the JSON arrays.
 *
 * Writing does not go through a JSON library either: the text is generated directly (Python json.dump
 * style, one line) and streamed into a gw_outfile (a temporary file beside the target, renamed over it only
 * when complete), so a failure never leaves a partial file.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_arc.h"

#include "gw_arc_syntax.h"
#include "gw_io_err.h"
#include "gw_infile.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Real ARC files are a few kB; anything near this is not an ARC task and would only waste memory. */
#define GW_ARC_MAX_FILE_BYTES (256u * 1024u * 1024u)

static const char *display_name(const char *name)
{
    return name && *name ? name : "<input>";
}

/* ------------------------------------------------------------------------------------------------------
 * What a parsed task keeps besides its grids: the members it does not interpret, as text, in their places,
 * and the index of its grids. */

enum { M_EXTRA, M_TRAIN, M_TEST, M_INPUT, M_OUTPUT };

typedef struct kept_member {
    int kind;
    size_t key_at, key_len, val_at, val_len; /* M_EXTRA: the key (quotes included) and value in kept->text */
} kept_member;

/* The members of one pair that has members besides "input" and "output", in the file's order. */
typedef struct kept_layout {
    size_t pair, first, count; /* kept->members[first .. first + count) */
} kept_layout;

struct gw_arc_kept {
    char *text; /* the kept keys and values, one after the other */
    size_t text_len, text_cap;
    kept_member *members; /* the top level's first (top_count of them), then the pair layouts' */
    size_t n_members, members_cap, top_count;
    kept_layout *layouts[2]; /* train, test; ascending pair numbers */
    size_t n_layouts[2], layouts_cap[2];
    /* The grid index: valid while the task's lists are the ones it was built for. */
    const gw_arc_pair *lists[2];
    size_t counts[2];
    size_t n_grids, n_train_grids;
    size_t *grid_ref; /* per grid in file order: pair * 2 + (1 for the output) */
};

static void kept_free(struct gw_arc_kept *k)
{
    if (!k) return;
    free(k->text);
    free(k->members);
    free(k->layouts[0]);
    free(k->layouts[1]);
    free(k->grid_ref);
    free(k);
}

/* p (capacity *cap elements of size elem) with room for need elements, doubling as it grows: the same or a
 * new pointer, or NULL when out of memory (p then unchanged and still owned by the caller). need >= 1. */
static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t cap2 = *cap ? *cap : 8;
    while (cap2 < need) {
        if (cap2 > SIZE_MAX / 2) return NULL;
        cap2 *= 2;
    }
    if (cap2 > SIZE_MAX / elem) return NULL;
    void *q = realloc(p, cap2 * elem);
    if (q) *cap = cap2;
    return q;
}

static void free_grid(gw_arc_grid *g)
{
    free(g->cells);
    g->cells = NULL;
}

static void free_pairs(gw_arc_pair *pairs, size_t n)
{
    if (!pairs) return;
    for (size_t i = 0; i < n; i++) {
        free_grid(&pairs[i].input);
        free_grid(&pairs[i].output);
    }
    free(pairs);
}

void gw_arc_free(gw_arc_task *task)
{
    if (!task) return;
    free_pairs(task->train, task->n_train);
    free_pairs(task->test, task->n_test);
    kept_free(task->kept);
    memset(task, 0, sizeof *task);
}

/* ------------------------------------------------------------------------------------------------------
 * Pass 2: the structure, over valid JSON (so no bounds or syntax checks are needed here). */

typedef struct member_span {
    int kind;
    size_t key_at, key_end, val_at, val_end;
} member_span;

typedef struct parser {
    const char *s;
    size_t n;
    const char *name;
    char *err;
    size_t err_size;
    struct gw_arc_kept *kept;
    uint8_t *scratch;      /* the cells of one grid, before its shape is known to be valid */
    member_span *pair_tmp; /* the members of the pair being read */
    size_t pair_tmp_cap;
} parser;

static size_t skip_ws(const parser *ps, size_t p)
{
    while (p < ps->n && gw_arc_is_ws((unsigned char)ps->s[p])) p++;
    return p;
}

/* After the string that starts at p (its opening quote). */
static size_t skip_string(const parser *ps, size_t p)
{
    for (p++; ps->s[p] != '"'; p++)
        if (ps->s[p] == '\\') p++;
    return p + 1;
}

/* After the value that starts at p. */
static size_t skip_value(const parser *ps, size_t p)
{
    size_t depth = 0;
    do {
        const char c = ps->s[p];
        if (c == '"') {
            p = skip_string(ps, p);
        } else if (c == '[' || c == '{') {
            depth++;
            p++;
        } else if (c == ']' || c == '}') {
            depth--;
            p++;
        } else if (c == ',' || c == ':' || gw_arc_is_ws((unsigned char)c)) {
            p++;
        } else { /* a number or a literal */
            while (p < ps->n && !gw_arc_is_ws((unsigned char)ps->s[p]) && ps->s[p] != ',' && ps->s[p] != ']' &&
                   ps->s[p] != '}')
                p++;
        }
    } while (depth);
    return p;
}

/* The next element of a list or member of an object: p is after an element (or after the opening bracket,
 * with first set); gives the start of the next one, or 0 at the closing bracket (*p then after it). */
static int next_item(const parser *ps, size_t *p, int first)
{
    size_t q = skip_ws(ps, *p);
    if (!first) {
        if (ps->s[q] != ',') {
            *p = q + 1;
            return 0;
        }
        q = skip_ws(ps, q + 1);
    } else if (ps->s[q] == ']' || ps->s[q] == '}') {
        *p = q + 1;
        return 0;
    }
    *p = q;
    return 1;
}

/* Elements of the list at p (its '['). */
static size_t count_elements(const parser *ps, size_t p)
{
    size_t count = 0;
    p++;
    for (int first = 1; next_item(ps, &p, first); first = 0) {
        p = skip_value(ps, p);
        count++;
    }
    return count;
}

/* For "must be X, got Y" messages, from the first byte of a valid value. */
static const char *type_at(const parser *ps, size_t p)
{
    switch (ps->s[p]) {
    case '[': return "a list";
    case '{': return "an object";
    case '"': return "a string";
    case 't':
    case 'f': return "a boolean";
    case 'n': return "null";
    default: return "a number";
    }
}

/* Whether the member name (a valid string token at [at, end)) is want once unescaped; want is ASCII. */
static int key_is(const parser *ps, size_t at, size_t end, const char *want)
{
    const char *s = ps->s;
    size_t p = at + 1;
    const size_t stop = end - 1;
    for (; *want; want++) {
        if (p >= stop) return 0;
        unsigned ch;
        if (s[p] == '\\') {
            const char e = s[p + 1];
            if (e == 'u') {
                ch = 0;
                for (int k = 0; k < 4; k++) ch = ch * 16 + (unsigned)gw_arc_hex_value((unsigned char)s[p + 2 + k]);
                p += 6;
            } else {
                ch = e == 'b'   ? 8u
                     : e == 'f' ? 12u
                     : e == 'n' ? 10u
                     : e == 'r' ? 13u
                     : e == 't' ? 9u
                                : (unsigned char)e;
                p += 2;
            }
        } else {
            ch = (unsigned char)s[p++];
        }
        if (ch != (unsigned char)*want) return 0;
    }
    return p == stop;
}

/* Where a grid is: "train[2].output", written out only for a message. */
typedef struct grid_place {
    const char *list, *which;
    size_t pair;
} grid_place;

static const char *place_text(const grid_place *g, char *buf, size_t size)
{
    snprintf(buf, size, "%s[%zu].%s", g->list, g->pair, g->which);
    return buf;
}

/* A number written as text, for messages only (independent of the caller's locale). */
static double text_to_double(const char *t, size_t len)
{
    char buf[72];
    memcpy(buf, t, len);
    buf[len] = '\0';
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c ? uselocale(c) : (locale_t)0;
    const double v = strtod(buf, NULL);
    if (c) {
        uselocale(old);
        freelocale(c);
    }
    return v;
}

/* "NAME: PLACE" and the rest of the message. Always -1. */
static int grid_error(const parser *ps, const grid_place *where, const char *fmt, ...)
{
    char place[64], what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    set_err(ps->err, ps->err_size, "%s: %s%s", ps->name, place_text(where, place, sizeof place), what);
    return -1;
}

/* The cell at p: 0..9, or -1 with the error set. */
static int parse_cell(const parser *ps, size_t p, const grid_place *where, size_t r, size_t c)
{
    const char first = ps->s[p];
    if (first == '[' || first == '{' || first == '"' || first == 't' || first == 'f' || first == 'n')
        return grid_error(ps, where, " row %zu column %zu: a cell must be an integer 0..9, got %s", r, c,
                          type_at(ps, p));
    size_t end = p;
    int fraction_or_exponent = 0;
    while (end < ps->n && !gw_arc_is_ws((unsigned char)ps->s[end]) && ps->s[end] != ',' && ps->s[end] != ']') {
        if (ps->s[end] == '.' || ps->s[end] == 'e' || ps->s[end] == 'E') fraction_or_exponent = 1;
        end++;
    }
    const size_t len = end - p;
    if (!fraction_or_exponent) {
        if (len == 1) return first - '0';
        if (len == 2 && first == '-' && ps->s[p + 1] == '0') return 0; /* -0 is the integer 0 */
        if (len > 64) /* strict JSON: no leading zeros, so 2 or more digits are at least 10 */
            return grid_error(ps, where, " row %zu column %zu: value %.24s... (%zu characters) is outside 0..9", r, c,
                              ps->s + p, len);
        return grid_error(ps, where, " row %zu column %zu: value %.17g is outside 0..9", r, c,
                          text_to_double(ps->s + p, len));
    }
    const double v = len <= 64 ? text_to_double(ps->s + p, len) : 0.5;
    if (len <= 64 && !isfinite(v))
        return grid_error(ps, where, " row %zu column %zu: number too large (not finite); a cell must be an integer "
                          "0..9", r, c);
    if (len <= 64 && v != floor(v))
        return grid_error(ps, where, " row %zu column %zu: %.17g is not an integer; a cell must be an integer 0..9",
                          r, c, v);
    return grid_error(ps, where, " row %zu column %zu: %.*s%s is not written as an integer (it has a fraction or an "
                      "exponent); a cell must be an integer 0..9", r, c, (int)(len > 24 ? 24 : len), ps->s + p,
                      len > 24 ? "..." : "");
}

/* One grid: a non-empty list of equally long, non-empty rows of integers 0..9. The shapes of all rows are
 * counted before any cell is read, row by row, and the cells are only allocated once all are valid. */
static int parse_grid(const parser *ps, size_t p, const grid_place *where, gw_arc_grid *grid)
{
    memset(grid, 0, sizeof *grid);
    if (ps->s[p] != '[') return grid_error(ps, where, ": a grid must be a list of rows, got %s", type_at(ps, p));
    const size_t rows = count_elements(ps, p);
    if (rows == 0) return grid_error(ps, where, ": empty grid: a grid needs at least 1 row");
    if (rows > GW_ARC_MAX_DIM)
        return grid_error(ps, where, ": %zu rows, more than GW_ARC_MAX_DIM (%d)", rows, GW_ARC_MAX_DIM);
    size_t width = 0, r = 0;
    p++;
    for (int first_row = 1; next_item(ps, &p, first_row); first_row = 0, r++) {
        if (ps->s[p] != '[')
            return grid_error(ps, where, " row %zu: a row must be a list of integers 0..9, got %s", r, type_at(ps, p));
        const size_t cols = count_elements(ps, p);
        if (cols == 0) return grid_error(ps, where, " row %zu: empty row: a grid needs at least 1 column", r);
        if (cols > GW_ARC_MAX_DIM)
            return grid_error(ps, where, " row %zu: %zu columns, more than GW_ARC_MAX_DIM (%d)", r, cols,
                              GW_ARC_MAX_DIM);
        if (r == 0)
            width = cols;
        else if (cols != width)
            return grid_error(ps, where, " row %zu: ragged grid: %zu columns, but row 0 has %zu", r, cols, width);
        size_t c = 0;
        p++;
        for (int first_cell = 1; next_item(ps, &p, first_cell); first_cell = 0, c++) {
            const int v = parse_cell(ps, p, where, r, c);
            if (v < 0) return -1;
            ps->scratch[r * width + c] = (uint8_t)v;
            p = skip_value(ps, p);
        }
    }
    grid->cells = malloc(rows * width);
    if (!grid->cells) return grid_error(ps, where, ": out of memory for a %zux%zu grid", rows, width);
    memcpy(grid->cells, ps->scratch, rows * width);
    grid->height = (uint16_t)rows;
    grid->width = (uint16_t)width;
    return 0;
}

static int out_of_memory(const parser *ps, const char *what)
{
    set_err(ps->err, ps->err_size, "%s: out of memory (%s)", ps->name, what);
    return -1;
}

/* Keeps the member at [key_at, val_end) as text: appends a kept_member of kind to kept->members. */
static int keep_member(const parser *ps, int kind, size_t key_at, size_t key_end, size_t val_at, size_t val_end)
{
    struct gw_arc_kept *k = ps->kept;
    kept_member *members = grow(k->members, &k->members_cap, k->n_members + 1, sizeof *k->members);
    if (!members) return out_of_memory(ps, "the members kept");
    k->members = members;
    kept_member *m = &k->members[k->n_members++];
    memset(m, 0, sizeof *m);
    m->kind = kind;
    if (kind != M_EXTRA) return 0;
    const size_t key_len = key_end - key_at, val_len = val_end - val_at;
    char *text = grow(k->text, &k->text_cap, k->text_len + key_len + val_len, 1);
    if (!text) return out_of_memory(ps, "the members kept");
    k->text = text;
    m->key_at = k->text_len;
    m->key_len = key_len;
    memcpy(k->text + k->text_len, ps->s + key_at, key_len);
    k->text_len += key_len;
    m->val_at = k->text_len;
    m->val_len = val_len;
    memcpy(k->text + k->text_len, ps->s + val_at, val_len);
    k->text_len += val_len;
    return 0;
}

/* One pair (list l, number i): its members are read first (so a duplicate key wins over a bad grid, as it
 * would in a tree parser), then its grids. On error the pair holds nothing. */
static int parse_pair(parser *ps, size_t p, int l, size_t i, gw_arc_pair *pair, size_t *end)
{
    const char *list = l ? "test" : "train";
    memset(pair, 0, sizeof *pair);
    if (ps->s[p] != '{') {
        set_err(ps->err, ps->err_size, "%s: %s[%zu]: a pair must be an object with \"input\" and \"output\" grids, "
                "got %s", ps->name, list, i, type_at(ps, p));
        return -1;
    }
    size_t n = 0;
    size_t in_at = 0, out_at = 0;
    int has_in = 0, has_out = 0, dup_in = 0, dup_out = 0, extras = 0;
    p++;
    for (int first = 1; next_item(ps, &p, first); first = 0) {
        member_span s = {M_EXTRA, p, 0, 0, 0};
        s.key_end = skip_string(ps, p);
        s.val_at = skip_ws(ps, skip_ws(ps, s.key_end) + 1);
        s.val_end = skip_value(ps, s.val_at);
        p = s.val_end;
        if (key_is(ps, s.key_at, s.key_end, "input")) {
            s.kind = M_INPUT;
            dup_in |= has_in;
            has_in = 1;
            in_at = s.val_at;
        } else if (key_is(ps, s.key_at, s.key_end, "output")) {
            s.kind = M_OUTPUT;
            dup_out |= has_out;
            has_out = 1;
            out_at = s.val_at;
        } else {
            extras = 1;
        }
        member_span *tmp = grow(ps->pair_tmp, &ps->pair_tmp_cap, n + 1, sizeof *ps->pair_tmp);
        if (!tmp) return out_of_memory(ps, "the members of a pair");
        ps->pair_tmp = tmp;
        ps->pair_tmp[n++] = s;
    }
    *end = p;
    if (dup_in || dup_out) {
        set_err(ps->err, ps->err_size, "%s: %s[%zu]: duplicate key \"%s\": each pair has one input and one output",
                ps->name, list, i, dup_in ? "input" : "output");
        return -1;
    }
    if (!has_in) {
        set_err(ps->err, ps->err_size, "%s: %s[%zu]: missing \"input\" grid", ps->name, list, i);
        return -1;
    }
    /* Evaluation-style test pairs have no answer; training pairs always do. */
    if (!has_out && l == 0) {
        set_err(ps->err, ps->err_size, "%s: %s[%zu]: missing \"output\" grid (required in train pairs)", ps->name,
                list, i);
        return -1;
    }
    const grid_place in_place = {list, "input", i}, out_place = {list, "output", i};
    if (parse_grid(ps, in_at, &in_place, &pair->input)) return -1;
    if (has_out) {
        if (parse_grid(ps, out_at, &out_place, &pair->output)) {
            free_grid(&pair->input);
            return -1;
        }
        pair->has_output = 1;
    }
    if (!extras && (!has_out || in_at < out_at)) return 0; /* written as {"input": ..., "output": ...} */
    /* The pair's members in the file's order, kept so the writer can give them back so. */
    struct gw_arc_kept *k = ps->kept;
    const size_t first_member = k->n_members;
    for (size_t j = 0; j < n; j++) {
        const member_span *m = &ps->pair_tmp[j];
        if (keep_member(ps, m->kind, m->key_at, m->key_end, m->val_at, m->val_end)) goto fail;
    }
    kept_layout *layouts = grow(k->layouts[l], &k->layouts_cap[l], k->n_layouts[l] + 1, sizeof *k->layouts[l]);
    if (!layouts) {
        out_of_memory(ps, "the members kept");
        goto fail;
    }
    k->layouts[l] = layouts;
    k->layouts[l][k->n_layouts[l]++] = (kept_layout){i, first_member, n};
    return 0;
fail:
    free_grid(&pair->input);
    free_grid(&pair->output);
    pair->has_output = 0;
    return -1;
}

/* "train" (l 0) or "test" (l 1): a non-empty list of pairs. On error everything allocated here is freed. */
static int parse_list(parser *ps, int l, int have, int dup, size_t at, gw_arc_pair **pairs, size_t *n)
{
    const char *list = l ? "test" : "train";
    *pairs = NULL;
    *n = 0;
    if (dup) {
        set_err(ps->err, ps->err_size, "%s: top level: duplicate key \"%s\"", ps->name, list);
        return -1;
    }
    if (!have) {
        set_err(ps->err, ps->err_size, "%s: top level: missing \"%s\": a task needs \"train\" and \"test\" lists of "
                "pairs", ps->name, list);
        return -1;
    }
    if (ps->s[at] != '[') {
        set_err(ps->err, ps->err_size, "%s: %s: must be a list of pairs, got %s", ps->name, list, type_at(ps, at));
        return -1;
    }
    gw_arc_pair *p = NULL;
    size_t count = 0, cap = 0;
    size_t q = at + 1;
    for (int first = 1; next_item(ps, &q, first); first = 0) {
        gw_arc_pair *grown = grow(p, &cap, count + 1, sizeof *p);
        if (!grown) {
            free_pairs(p, count);
            return out_of_memory(ps, list);
        }
        p = grown;
        if (parse_pair(ps, q, l, count, &p[count], &q)) {
            free_pairs(p, count); /* pairs 0..count-1 are complete; pair count freed its own grids */
            return -1;
        }
        count++;
    }
    if (count == 0) {
        set_err(ps->err, ps->err_size, "%s: %s: empty list: a task needs at least 1 %s pair", ps->name, list, list);
        return -1;
    }
    *pairs = p;
    *n = count;
    return 0;
}

/* The grid index of a task just read, in file order. */
static int build_index(const parser *ps, gw_arc_task *t)
{
    struct gw_arc_kept *k = t->kept;
    size_t grids = 0;
    for (size_t i = 0; i < t->n_train; i++) grids += 1 + (t->train[i].has_output != 0);
    k->n_train_grids = grids;
    for (size_t i = 0; i < t->n_test; i++) grids += 1 + (t->test[i].has_output != 0);
    if (grids > SIZE_MAX / sizeof *k->grid_ref || !(k->grid_ref = malloc(grids * sizeof *k->grid_ref)))
        return out_of_memory(ps, "the grid index");
    size_t g = 0;
    const gw_arc_pair *lists[2] = {t->train, t->test};
    const size_t counts[2] = {t->n_train, t->n_test};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < counts[l]; i++) {
            k->grid_ref[g++] = i * 2;
            if (lists[l][i].has_output) k->grid_ref[g++] = i * 2 + 1;
        }
        k->lists[l] = lists[l];
        k->counts[l] = counts[l];
    }
    k->n_grids = grids;
    return 0;
}

/* The task object at p (valid JSON). */
static int parse_task(parser *ps, size_t p, gw_arc_task *t)
{
    if (ps->s[p] != '{') {
        set_err(ps->err, ps->err_size, "%s: top level: must be an object with \"train\" and \"test\" lists, got %s",
                ps->name, type_at(ps, p));
        return -1;
    }
    size_t at[2] = {0, 0};
    int have[2] = {0, 0}, dup[2] = {0, 0};
    p++;
    for (int first = 1; next_item(ps, &p, first); first = 0) {
        const size_t key_at = p, key_end = skip_string(ps, p);
        const size_t val_at = skip_ws(ps, skip_ws(ps, key_end) + 1);
        p = skip_value(ps, val_at);
        int kind = M_EXTRA;
        for (int l = 0; l < 2; l++) {
            if (key_is(ps, key_at, key_end, l ? "test" : "train")) {
                kind = l ? M_TEST : M_TRAIN;
                dup[l] |= have[l];
                have[l] = 1;
                at[l] = val_at;
            }
        }
        if (keep_member(ps, kind, key_at, key_end, val_at, p)) return -1;
    }
    ps->kept->top_count = ps->kept->n_members;
    if (parse_list(ps, 0, have[0], dup[0], at[0], &t->train, &t->n_train)) return -1;
    if (parse_list(ps, 1, have[1], dup[1], at[1], &t->test, &t->n_test)) return -1;
    return build_index(ps, t);
}

int gw_arc_parse(const char *json, size_t json_len, const char *name, gw_arc_task *task, char *err, size_t err_size)
{
    name = display_name(name);
    if (task) memset(task, 0, sizeof *task);
    if (!json || !task) {
        set_err(err, err_size, "%s: gw_arc_parse: json and task must not be NULL", name);
        return -1;
    }
    size_t start = 0;
    while (start < json_len && gw_arc_is_ws((unsigned char)json[start])) start++;
    if (start == json_len) {
        set_err(err, err_size, "%s: empty input: expected a JSON object with \"train\" and \"test\"", name);
        return -1;
    }
    if (start == 0 && json_len >= 3 && !memcmp(json, "\xEF\xBB\xBF", 3)) {
        set_err(err, err_size, "%s: invalid JSON at line 1, column 1 (byte 0): a UTF-8 byte order mark (EF BB BF): "
                "strict JSON (RFC 8259) text starts with its value", name);
        return -1;
    }
    if (gw_arc_syntax_check(json, json_len, start, name, err, err_size)) return -1;

    parser ps = {json, json_len, name, err, err_size, NULL, NULL, NULL, 0};
    gw_arc_task t = {0};
    t.kept = ps.kept = calloc(1, sizeof *ps.kept); /* t owns it: gw_arc_free(&t) frees it on error */
    ps.scratch = malloc((size_t)GW_ARC_MAX_DIM * GW_ARC_MAX_DIM);
    const int rc = ps.kept && ps.scratch ? parse_task(&ps, start, &t) : out_of_memory(&ps, "the task");
    free(ps.scratch);
    free(ps.pair_tmp);
    if (rc) {
        gw_arc_free(&t);
        return -1;
    }
    *task = t;
    return 0;
}

int gw_arc_read(const char *path, gw_arc_task *task, char *err, size_t err_size)
{
    if (task) memset(task, 0, sizeof *task);
    if (!path || !task) {
        set_err(err, err_size, "gw_arc_read: path and task must not be NULL");
        return -1;
    }
    if (!*path) {
        set_err(err, err_size, "gw_arc_read: the path is empty");
        return -1;
    }
    struct stat st;
    const int fd = gw_infile_open(path, &st, err, err_size); /* "PATH: not a regular file (a FIFO)", ... */
    if (fd < 0) return -1;
    if ((unsigned long long)st.st_size > GW_ARC_MAX_FILE_BYTES) {
        set_err(err, err_size, "%s: %lld bytes, more than the %u-byte limit for an ARC task file", path,
                (long long)st.st_size, GW_ARC_MAX_FILE_BYTES);
        close(fd);
        return -1;
    }
    const size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        set_err(err, err_size, "%s: out of memory reading %zu bytes", path, size);
        close(fd);
        return -1;
    }
    size_t got = 0;
    int saved = 0;
    for (;;) {
        /* one byte more than the size: a file that grew since fstat is as unreliable as one that shrank */
        const ssize_t r = read(fd, buf + got, size + 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) saved = errno;
        if (r <= 0) break;
        got += (size_t)r;
        if (got > size) break;
    }
    close(fd);
    if (saved || got != size) {
        set_err(err, err_size, "%s: read error: %s", path, saved ? strerror(saved) : "file changed size");
        free(buf);
        return -1;
    }
    buf[size] = '\0';
    const int rc = gw_arc_parse(buf, size, path, task, err, err_size);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------------------------------------------
 * The grids in file order. */

static int index_valid(const gw_arc_task *t)
{
    const struct gw_arc_kept *k = t->kept;
    return k && k->grid_ref && k->lists[0] == t->train && k->lists[1] == t->test && k->counts[0] == t->n_train &&
           k->counts[1] == t->n_test;
}

size_t gw_arc_grid_count(const gw_arc_task *task)
{
    if (!task) return 0;
    if (index_valid(task)) return task->kept->n_grids;
    size_t n = 0;
    for (size_t i = 0; i < task->n_train; i++) n += 1 + (task->train[i].has_output != 0);
    for (size_t i = 0; i < task->n_test; i++) n += 1 + (task->test[i].has_output != 0);
    return n;
}

gw_arc_grid *gw_arc_grid_at(gw_arc_task *task, size_t i)
{
    if (!task) return NULL;
    if (index_valid(task)) {
        const struct gw_arc_kept *k = task->kept;
        if (i >= k->n_grids) return NULL;
        const size_t ref = k->grid_ref[i];
        gw_arc_pair *pair = &(i < k->n_train_grids ? task->train : task->test)[ref / 2];
        if (ref % 2 == 0) return &pair->input;
        if (pair->has_output) return &pair->output;
        /* has_output was cleared since the task was read (see gw_arc.h): walk the pairs instead */
    }
    gw_arc_pair *lists[2] = {task->train, task->test};
    size_t counts[2] = {task->n_train, task->n_test};
    for (int l = 0; l < 2; l++) {
        for (size_t k = 0; k < counts[l]; k++) {
            if (i == 0) return &lists[l][k].input;
            i--;
            if (lists[l][k].has_output) {
                if (i == 0) return &lists[l][k].output;
                i--;
            }
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------------------------
 * Writing. */

/* The writer refuses what the reader would refuse, so every written file reads back. */
static int check_grid(const gw_arc_grid *g, const char *path, const char *list, size_t i, const char *which, char *err,
                      size_t err_size)
{
    if (g->height < 1 || g->width < 1 || g->height > GW_ARC_MAX_DIM || g->width > GW_ARC_MAX_DIM) {
        set_err(err, err_size, "%s: %s[%zu].%s: shape %ux%u outside 1..GW_ARC_MAX_DIM (%d); nothing written", path,
                list, i, which, (unsigned)g->height, (unsigned)g->width, GW_ARC_MAX_DIM);
        return -1;
    }
    if (!g->cells) {
        set_err(err, err_size, "%s: %s[%zu].%s: cells is NULL; nothing written", path, list, i, which);
        return -1;
    }
    for (size_t k = 0; k < (size_t)g->height * g->width; k++) {
        if (g->cells[k] > 9) {
            set_err(err, err_size, "%s: %s[%zu].%s row %zu column %zu: value %u is outside 0..9; nothing written",
                    path, list, i, which, k / g->width, k % g->width, (unsigned)g->cells[k]);
            return -1;
        }
    }
    return 0;
}

static int check_list(const gw_arc_pair *pairs, size_t n, const char *path, const char *list, char *err,
                      size_t err_size)
{
    if (n == 0 || !pairs) {
        set_err(err, err_size, "%s: %s: empty list: a task needs at least 1 %s pair; nothing written", path, list,
                list);
        return -1;
    }
    if (strcmp(list, "train") == 0) {
        for (size_t i = 0; i < n; i++) {
            if (!pairs[i].has_output) {
                set_err(err, err_size, "%s: train[%zu]: missing output (required in train pairs); nothing written",
                        path, i);
                return -1;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (check_grid(&pairs[i].input, path, list, i, "input", err, err_size)) return -1;
        if (pairs[i].has_output && check_grid(&pairs[i].output, path, list, i, "output", err, err_size)) return -1;
    }
    return 0;
}

/* Text streamed into the staged file through a buffer; the first failure latches. */
typedef struct writer {
    gw_outfile *f;
    char *err;
    size_t err_size;
    int failed;
    size_t len;
    char buf[1 << 16];
} writer;

static void flush(writer *w)
{
    if (!w->failed && w->len && gw_outfile_write(w->f, w->buf, w->len, w->err, w->err_size)) w->failed = 1;
    w->len = 0;
}

static void put(writer *w, const char *s, size_t n)
{
    if (w->failed) return;
    if (w->len + n > sizeof w->buf) {
        flush(w);
        if (n > sizeof w->buf) {
            if (!w->failed && gw_outfile_write(w->f, s, n, w->err, w->err_size)) w->failed = 1;
            return;
        }
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void put_str(writer *w, const char *s)
{
    put(w, s, strlen(s));
}

static void put_grid(writer *w, const gw_arc_grid *g)
{
    put_str(w, "[");
    for (unsigned r = 0; r < g->height; r++) {
        put_str(w, r ? ", [" : "[");
        for (unsigned c = 0; c < g->width; c++) {
            const char cell[3] = {',', ' ', (char)('0' + g->cells[(size_t)r * g->width + c])};
            put(w, c ? cell : cell + 2, c ? 3 : 1);
        }
        put_str(w, "]");
    }
    put_str(w, "]");
}

static void put_kept(writer *w, const struct gw_arc_kept *k, const kept_member *m)
{
    put(w, k->text + m->key_at, m->key_len);
    put_str(w, ": ");
    put(w, k->text + m->val_at, m->val_len);
}

static void put_list(writer *w, const struct gw_arc_kept *k, int l, const gw_arc_pair *pairs, size_t n)
{
    put_str(w, l ? "\"test\": [" : "\"train\": [");
    size_t next = 0; /* the next layout of this list (ascending pair numbers) */
    for (size_t i = 0; i < n; i++) {
        const gw_arc_pair *p = &pairs[i];
        const kept_layout *lay = NULL;
        if (k) {
            while (next < k->n_layouts[l] && k->layouts[l][next].pair < i) next++;
            if (next < k->n_layouts[l] && k->layouts[l][next].pair == i) lay = &k->layouts[l][next];
        }
        put_str(w, i ? ", {" : "{");
        if (!lay) {
            put_str(w, "\"input\": ");
            put_grid(w, &p->input);
            if (p->has_output) {
                put_str(w, ", \"output\": ");
                put_grid(w, &p->output);
            }
        } else {
            int output_kept = 0, sep = 0;
            for (size_t j = 0; j < lay->count; j++) output_kept |= k->members[lay->first + j].kind == M_OUTPUT;
            for (size_t j = 0; j < lay->count; j++) {
                const kept_member *m = &k->members[lay->first + j];
                if (m->kind == M_OUTPUT && !p->has_output) continue;
                put_str(w, sep ? ", " : "");
                sep = 1;
                if (m->kind == M_INPUT) {
                    put_str(w, "\"input\": ");
                    put_grid(w, &p->input);
                    if (!output_kept && p->has_output) { /* an output added since the task was read */
                        put_str(w, ", \"output\": ");
                        put_grid(w, &p->output);
                    }
                } else if (m->kind == M_OUTPUT) {
                    put_str(w, "\"output\": ");
                    put_grid(w, &p->output);
                } else {
                    put_kept(w, k, m);
                }
            }
        }
        put_str(w, "}");
    }
    put_str(w, "]");
}

int gw_arc_stage(gw_outfile *f, const char *path, const gw_arc_task *task, char *err, size_t err_size)
{
    if (f) *f = (gw_outfile)GW_OUTFILE_INIT;
    if (!f) {
        set_err(err, err_size, "%s: gw_arc_stage: the staged file f is NULL; nothing written", path ? path : "(null)");
        return -1;
    }
    if (!path || !*path || !task) {
        set_err(err, err_size, "gw_arc_stage: path and task must be given; nothing written");
        return -1;
    }
    if (check_list(task->train, task->n_train, path, "train", err, err_size) ||
        check_list(task->test, task->n_test, path, "test", err, err_size))
        return -1;
    writer *w = malloc(sizeof *w);
    if (!w) {
        set_err(err, err_size, "%s: out of memory; nothing written", path);
        return -1;
    }
    w->f = f;
    w->err = err;
    w->err_size = err_size;
    w->failed = 0;
    w->len = 0;
    if (gw_outfile_open(f, path, err, err_size)) {
        free(w);
        return -1;
    }
    const struct gw_arc_kept *k = task->kept;
    put_str(w, "{");
    int wrote[2] = {0, 0};
    for (size_t j = 0; k && j < k->top_count; j++) {
        const kept_member *m = &k->members[j];
        put_str(w, j ? ", " : "");
        if (m->kind == M_EXTRA) {
            put_kept(w, k, m);
        } else {
            const int l = m->kind == M_TEST;
            put_list(w, k, l, l ? task->test : task->train, l ? task->n_test : task->n_train);
            wrote[l] = 1;
        }
    }
    for (int l = 0; l < 2; l++) { /* a task built by hand: train, then test */
        if (wrote[l]) continue;
        put_str(w, l || wrote[0] || (k && k->top_count) ? ", " : "");
        put_list(w, k, l, l ? task->test : task->train, l ? task->n_test : task->n_train);
    }
    put_str(w, "}\n");
    flush(w);
    const int failed = w->failed;
    free(w);
    if (failed || gw_outfile_finish(f, err, err_size)) {
        gw_outfile_discard(f);
        return -1;
    }
    return 0;
}

int gw_arc_write(const char *path, const gw_arc_task *task, char *err, size_t err_size)
{
    gw_outfile f;
    if (!path || !*path || !task) {
        set_err(err, err_size, "gw_arc_write: path and task must be given; nothing written");
        return -1;
    }
    if (gw_arc_stage(&f, path, task, err, err_size)) return -1;
    if (gw_outfile_commit(&f, err, err_size)) {
        gw_outfile_discard(&f);
        return -1;
    }
    return 0;
}
