/* SPDX-License-Identifier: MIT
 * ARC task JSON read and write (see gw_arc.h). Parsing goes through cJSON; every value is then checked
 * against the ARC rules before anything is kept, so a caller either gets a whole valid task or an error
 * naming the file, the place and the rule. Indices in messages are 0-based, like the JSON arrays.
 * Writing does not use cJSON: the text is generated directly (Python json.dump style, one line), written
 * to a temporary file beside the target and renamed over it, so a failure never leaves a partial file.
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_arc.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Real ARC files are a few kB; anything near this is not an ARC task and would only waste memory. */
#define GW_ARC_MAX_FILE_BYTES (256u * 1024u * 1024u)

static void set_err(char *err, size_t err_size, const char *fmt, ...)
{
    if (!err || err_size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

static const char *display_name(const char *name)
{
    return name && *name ? name : "<input>";
}

/* "an array", "a string", ...: for "must be X, got Y" messages. */
static const char *json_type_name(const cJSON *item)
{
    if (cJSON_IsArray(item)) return "a list";
    if (cJSON_IsObject(item)) return "an object";
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsBool(item)) return "a boolean";
    if (cJSON_IsNull(item)) return "null";
    return "an invalid value";
}

/* Line and column (1-based) of byte pos, for JSON syntax errors. */
static void text_position(const char *json, size_t pos, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (json[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
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
    memset(task, 0, sizeof *task);
}

/* The member called key, or NULL; -1 when the key appears twice (cJSON would silently take the first,
 * and a file with two "output" grids has no single meaning). */
static int get_member(const cJSON *obj, const char *key, const cJSON **out)
{
    *out = NULL;
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (c->string && strcmp(c->string, key) == 0) {
            if (*out) return -1;
            *out = c;
        }
    }
    return 0;
}

/* One grid: a non-empty list of equally long, non-empty rows of integers 0..9. */
static int parse_grid(const cJSON *item, const char *name, const char *place, gw_arc_grid *grid, char *err,
                      size_t err_size)
{
    memset(grid, 0, sizeof *grid);
    if (!cJSON_IsArray(item)) {
        set_err(err, err_size, "%s: %s: a grid must be a list of rows, got %s", name, place, json_type_name(item));
        return -1;
    }
    const int rows = cJSON_GetArraySize(item);
    if (rows == 0) {
        set_err(err, err_size, "%s: %s: empty grid: a grid needs at least 1 row", name, place);
        return -1;
    }
    if (rows > GW_ARC_MAX_DIM) {
        set_err(err, err_size, "%s: %s: %d rows, more than GW_ARC_MAX_DIM (%d)", name, place, rows, GW_ARC_MAX_DIM);
        return -1;
    }
    /* The width comes from row 0; check every row's shape before allocating so errors cost nothing. */
    int width = -1, r = 0;
    for (const cJSON *row = item->child; row; row = row->next, r++) {
        if (!cJSON_IsArray(row)) {
            set_err(err, err_size, "%s: %s row %d: a row must be a list of integers 0..9, got %s", name, place, r,
                    json_type_name(row));
            return -1;
        }
        const int cols = cJSON_GetArraySize(row);
        if (cols == 0) {
            set_err(err, err_size, "%s: %s row %d: empty row: a grid needs at least 1 column", name, place, r);
            return -1;
        }
        if (cols > GW_ARC_MAX_DIM) {
            set_err(err, err_size, "%s: %s row %d: %d columns, more than GW_ARC_MAX_DIM (%d)", name, place, r, cols,
                    GW_ARC_MAX_DIM);
            return -1;
        }
        if (width < 0) {
            width = cols;
        } else if (cols != width) {
            set_err(err, err_size, "%s: %s row %d: ragged grid: %d columns, but row 0 has %d", name, place, r, cols,
                    width);
            return -1;
        }
        int c = 0;
        for (const cJSON *cell = row->child; cell; cell = cell->next, c++) {
            if (!cJSON_IsNumber(cell)) {
                set_err(err, err_size, "%s: %s row %d column %d: a cell must be an integer 0..9, got %s", name, place,
                        r, c, json_type_name(cell));
                return -1;
            }
            const double v = cell->valuedouble;
            if (!isfinite(v)) {
                set_err(err, err_size, "%s: %s row %d column %d: number too large (not finite); a cell must be an "
                        "integer 0..9", name, place, r, c);
                return -1;
            }
            if (v != floor(v)) {
                set_err(err, err_size, "%s: %s row %d column %d: %.17g is not an integer; a cell must be an integer "
                        "0..9", name, place, r, c, v);
                return -1;
            }
            if (v < 0 || v > 9) {
                set_err(err, err_size, "%s: %s row %d column %d: value %.17g is outside 0..9", name, place, r, c, v);
                return -1;
            }
        }
    }
    grid->cells = malloc((size_t)rows * (size_t)width);
    if (!grid->cells) {
        set_err(err, err_size, "%s: %s: out of memory for a %dx%d grid", name, place, rows, width);
        return -1;
    }
    grid->height = (uint16_t)rows;
    grid->width = (uint16_t)width;
    size_t k = 0;
    for (const cJSON *row = item->child; row; row = row->next)
        for (const cJSON *cell = row->child; cell; cell = cell->next) grid->cells[k++] = (uint8_t)cell->valuedouble;
    return 0;
}

static int parse_pair(const cJSON *item, const char *name, const char *list, size_t i, gw_arc_pair *pair, char *err,
                      size_t err_size)
{
    char place[64];
    memset(pair, 0, sizeof *pair);
    if (!cJSON_IsObject(item)) {
        set_err(err, err_size, "%s: %s[%zu]: a pair must be an object with \"input\" and \"output\" grids, got %s",
                name, list, i, json_type_name(item));
        return -1;
    }
    const cJSON *in = NULL, *out = NULL;
    const char *dup = get_member(item, "input", &in) ? "input" : get_member(item, "output", &out) ? "output" : NULL;
    if (dup) {
        set_err(err, err_size, "%s: %s[%zu]: duplicate key \"%s\": each pair has one input and one output", name,
                list, i, dup);
        return -1;
    }
    if (!in) {
        set_err(err, err_size, "%s: %s[%zu]: missing \"input\" grid", name, list, i);
        return -1;
    }
    /* Evaluation-style test pairs have no answer; training pairs always do. */
    const int output_required = strcmp(list, "train") == 0;
    if (!out && output_required) {
        set_err(err, err_size, "%s: %s[%zu]: missing \"output\" grid (required in train pairs)", name, list, i);
        return -1;
    }
    snprintf(place, sizeof place, "%s[%zu].input", list, i);
    if (parse_grid(in, name, place, &pair->input, err, err_size)) return -1;
    if (out) {
        snprintf(place, sizeof place, "%s[%zu].output", list, i);
        if (parse_grid(out, name, place, &pair->output, err, err_size)) {
            free_grid(&pair->input);
            return -1;
        }
        pair->has_output = 1;
    }
    return 0;
}

/* "train" or "test": a non-empty list of pairs. On error everything allocated here is freed. */
static int parse_list(const cJSON *root, const char *name, const char *list, gw_arc_pair **pairs, size_t *n,
                      char *err, size_t err_size)
{
    *pairs = NULL;
    *n = 0;
    const cJSON *item = NULL;
    if (get_member(root, list, &item)) {
        set_err(err, err_size, "%s: top level: duplicate key \"%s\"", name, list);
        return -1;
    }
    if (!item) {
        set_err(err, err_size, "%s: top level: missing \"%s\": a task needs \"train\" and \"test\" lists of pairs",
                name, list);
        return -1;
    }
    if (!cJSON_IsArray(item)) {
        set_err(err, err_size, "%s: %s: must be a list of pairs, got %s", name, list, json_type_name(item));
        return -1;
    }
    const int count = cJSON_GetArraySize(item);
    if (count == 0) {
        set_err(err, err_size, "%s: %s: empty list: a task needs at least 1 %s pair", name, list, list);
        return -1;
    }
    gw_arc_pair *p = calloc((size_t)count, sizeof *p);
    if (!p) {
        set_err(err, err_size, "%s: %s: out of memory for %d pairs", name, list, count);
        return -1;
    }
    size_t i = 0;
    for (const cJSON *c = item->child; c; c = c->next, i++) {
        if (parse_pair(c, name, list, i, &p[i], err, err_size)) {
            free_pairs(p, i); /* pairs 0..i-1 are complete; pair i freed its own grids */
            return -1;
        }
    }
    *pairs = p;
    *n = (size_t)count;
    return 0;
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
    while (start < json_len && (json[start] == ' ' || json[start] == '\t' || json[start] == '\n' ||
                                json[start] == '\r'))
        start++;
    if (start == json_len) {
        set_err(err, err_size, "%s: empty input: expected a JSON object with \"train\" and \"test\"", name);
        return -1;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, json_len, &end, 0);
    if (!root) {
        /* cJSON clamps the error position to the last byte when it ran out of input. */
        size_t pos = end && end >= json ? (size_t)(end - json) : 0;
        size_t line, col;
        text_position(json, pos, &line, &col);
        if (pos + 1 >= json_len)
            set_err(err, err_size, "%s: invalid JSON: unexpected end of input at line %zu, column %zu (truncated "
                    "file?)", name, line, col);
        else
            set_err(err, err_size, "%s: invalid JSON at line %zu, column %zu (byte %zu)", name, line, col, pos);
        return -1;
    }
    size_t rest = end ? (size_t)(end - json) : json_len;
    while (rest < json_len && (json[rest] == ' ' || json[rest] == '\t' || json[rest] == '\n' || json[rest] == '\r'))
        rest++;
    if (rest < json_len) {
        size_t line, col;
        text_position(json, rest, &line, &col);
        set_err(err, err_size, "%s: invalid JSON: extra characters after the task object at line %zu, column %zu",
                name, line, col);
        cJSON_Delete(root);
        return -1;
    }
    if (!cJSON_IsObject(root)) {
        set_err(err, err_size, "%s: top level: must be an object with \"train\" and \"test\" lists, got %s", name,
                json_type_name(root));
        cJSON_Delete(root);
        return -1;
    }
    gw_arc_task t = {0};
    int rc = parse_list(root, name, "train", &t.train, &t.n_train, err, err_size);
    if (rc == 0) rc = parse_list(root, name, "test", &t.test, &t.n_test, err, err_size);
    cJSON_Delete(root);
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
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        set_err(err, err_size, "%s: not a regular file", path);
        fclose(f);
        return -1;
    }
    if ((unsigned long long)st.st_size > GW_ARC_MAX_FILE_BYTES) {
        set_err(err, err_size, "%s: %lld bytes, more than the %u-byte limit for an ARC task file", path,
                (long long)st.st_size, GW_ARC_MAX_FILE_BYTES);
        fclose(f);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        set_err(err, err_size, "%s: out of memory reading %zu bytes", path, size);
        fclose(f);
        return -1;
    }
    size_t got = fread(buf, 1, size, f);
    int read_failed = ferror(f);
    int saved = errno;
    fclose(f);
    if (read_failed || got != size) {
        set_err(err, err_size, "%s: read error: %s", path, read_failed ? strerror(saved) : "file changed size");
        free(buf);
        return -1;
    }
    buf[size] = '\0';
    int rc = gw_arc_parse(buf, size, path, task, err, err_size);
    free(buf);
    return rc;
}

size_t gw_arc_grid_count(const gw_arc_task *task)
{
    if (!task) return 0;
    size_t n = 0;
    for (size_t i = 0; i < task->n_train; i++) n += 1 + (task->train[i].has_output != 0);
    for (size_t i = 0; i < task->n_test; i++) n += 1 + (task->test[i].has_output != 0);
    return n;
}

gw_arc_grid *gw_arc_grid_at(gw_arc_task *task, size_t i)
{
    if (!task) return NULL;
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

/* Growing text buffer for the writer; oom latches so callers check once at the end. */
typedef struct text_buf {
    char *data;
    size_t len, cap;
    int oom;
} text_buf;

static void buf_put(text_buf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void buf_str(text_buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

static void write_grid(text_buf *b, const gw_arc_grid *g)
{
    buf_str(b, "[");
    for (unsigned r = 0; r < g->height; r++) {
        buf_str(b, r ? ", [" : "[");
        for (unsigned c = 0; c < g->width; c++) {
            char cell[4] = {',', ' ', (char)('0' + g->cells[(size_t)r * g->width + c]), '\0'};
            buf_str(b, c ? cell : cell + 2);
        }
        buf_str(b, "]");
    }
    buf_str(b, "]");
}

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

static int write_list(text_buf *b, const gw_arc_pair *pairs, size_t n, const char *path, const char *list, char *err,
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
    buf_str(b, "\"");
    buf_str(b, list);
    buf_str(b, "\": [");
    for (size_t i = 0; i < n; i++) {
        if (check_grid(&pairs[i].input, path, list, i, "input", err, err_size)) return -1;
        if (pairs[i].has_output && check_grid(&pairs[i].output, path, list, i, "output", err, err_size)) return -1;
        buf_str(b, i ? ", {\"input\": " : "{\"input\": ");
        write_grid(b, &pairs[i].input);
        if (pairs[i].has_output) {
            buf_str(b, ", \"output\": ");
            write_grid(b, &pairs[i].output);
        }
        buf_str(b, "}");
    }
    buf_str(b, "]");
    return 0;
}

/* write(2) until done; short writes happen on full disks and signals. */
static int write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

int gw_arc_write(const char *path, const gw_arc_task *task, char *err, size_t err_size)
{
    if (!path || !*path || !task) {
        set_err(err, err_size, "gw_arc_write: path and task must be given");
        return -1;
    }
    text_buf b = {0};
    buf_str(&b, "{");
    if (write_list(&b, task->train, task->n_train, path, "train", err, err_size)) goto fail_buf;
    buf_str(&b, ", ");
    if (write_list(&b, task->test, task->n_test, path, "test", err, err_size)) goto fail_buf;
    buf_str(&b, "}\n");
    if (b.oom) {
        set_err(err, err_size, "%s: out of memory formatting the task; nothing written", path);
        goto fail_buf;
    }

    /* The temporary name sits in the target's directory so rename() stays on one file system (atomic).
     * O_EXCL with mode 0666 keeps the user's umask, which mkstemp's 0600 would not. */
    size_t tmp_size = strlen(path) + 48;
    char *tmp = malloc(tmp_size);
    if (!tmp) {
        set_err(err, err_size, "%s: out of memory; nothing written", path);
        goto fail_buf;
    }
    int fd = -1;
    for (unsigned attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(tmp, tmp_size, "%s.tmp.%ld.%u", path, (long)getpid(), attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        set_err(err, err_size, "%s: cannot create a temporary file beside it: %s; nothing written", path,
                strerror(errno));
        free(tmp);
        goto fail_buf;
    }
    if (write_all(fd, b.data, b.len) != 0 || fsync(fd) != 0) {
        int saved = errno;
        close(fd);
        unlink(tmp);
        set_err(err, err_size, "%s: write failed: %s; nothing written", path, strerror(saved));
        free(tmp);
        goto fail_buf;
    }
    if (close(fd) != 0) {
        int saved = errno;
        unlink(tmp);
        set_err(err, err_size, "%s: write failed on close: %s; nothing written", path, strerror(saved));
        free(tmp);
        goto fail_buf;
    }
    if (rename(tmp, path) != 0) {
        int saved = errno;
        unlink(tmp);
        set_err(err, err_size, "%s: cannot replace the file: %s; nothing written", path, strerror(saved));
        free(tmp);
        goto fail_buf;
    }
    free(tmp);
    free(b.data);
    return 0;

fail_buf:
    free(b.data);
    return -1;
}
