/* SPDX-License-Identifier: MIT
 * gw_arc_parse on arbitrary bytes (gw_arc_read is gw_infile_open, a read and this). The input buffer is passed
 * as is, not NUL-terminated, so a read past json_len is an ASan report. Beyond "no crash, no leak":
 *   - an accepted task obeys every ARC rule the header promises, and gw_arc_grid_at (an index built while
 *     parsing) gives the grids in the order of a walk over the pairs;
 *   - an accepted text is JSON to cJSON too (the reader is stricter than cJSON, never laxer), and cJSON's tree
 *     holds the same cells in the same places;
 *   - written back (gw_arc_write, in a tmpfs folder when /dev/shm exists) it reads back to the same grids, and
 *     written again gives the same bytes: the kept members come through intact;
 *   - a rejected one is zeroed with a message naming the input, and a tiny error buffer stays terminated.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzz_check.h"
#include "gw_arc.h"

static void check_grid(const gw_arc_grid *g, const char *where)
{
    FUZZ_REQUIRE(g->height >= 1 && g->height <= GW_ARC_MAX_DIM && g->width >= 1 && g->width <= GW_ARC_MAX_DIM,
                 "%s: shape %ux%u", where, (unsigned)g->height, (unsigned)g->width);
    FUZZ_REQUIRE(g->cells != NULL, "%s: no cells", where);
    for (size_t k = 0; k < (size_t)g->height * g->width; k++)
        FUZZ_REQUIRE(g->cells[k] <= 9, "%s: cell %zu is %u", where, k, (unsigned)g->cells[k]);
}

static void check_task(gw_arc_task *t)
{
    FUZZ_REQUIRE(t->n_train >= 1 && t->n_test >= 1 && t->train && t->test, "lists %zu/%zu", t->n_train, t->n_test);
    FUZZ_REQUIRE(t->kept != NULL, "a parsed task has no index");
    size_t grids = 0;
    for (size_t i = 0; i < t->n_train; i++) {
        FUZZ_REQUIRE(t->train[i].has_output, "train[%zu] accepted without an output", i);
        check_grid(&t->train[i].input, "train input");
        check_grid(&t->train[i].output, "train output");
        FUZZ_REQUIRE(gw_arc_grid_at(t, grids) == &t->train[i].input, "grid %zu is not train[%zu].input", grids, i);
        FUZZ_REQUIRE(gw_arc_grid_at(t, grids + 1) == &t->train[i].output, "grid %zu: not train[%zu].output", grids + 1,
                     i);
        grids += 2;
    }
    for (size_t i = 0; i < t->n_test; i++) {
        check_grid(&t->test[i].input, "test input");
        FUZZ_REQUIRE(gw_arc_grid_at(t, grids) == &t->test[i].input, "grid %zu is not test[%zu].input", grids, i);
        grids++;
        if (t->test[i].has_output) {
            check_grid(&t->test[i].output, "test output");
            FUZZ_REQUIRE(gw_arc_grid_at(t, grids) == &t->test[i].output, "grid %zu: not test[%zu].output", grids, i);
            grids++;
        }
    }
    FUZZ_REQUIRE(gw_arc_grid_count(t) == grids, "grid count %zu, expected %zu", gw_arc_grid_count(t), grids);
    FUZZ_REQUIRE(gw_arc_grid_at(t, grids) == NULL, "a grid past the end");
}

/* cJSON's reading of the same grid. */
static void same_as_cjson(const cJSON *item, const gw_arc_grid *g, const char *where, size_t i)
{
    FUZZ_REQUIRE(cJSON_IsArray(item) && cJSON_GetArraySize(item) == g->height, "%s[%zu]: rows differ from cJSON's",
                 where, i);
    size_t k = 0;
    for (const cJSON *row = item->child; row; row = row->next) {
        FUZZ_REQUIRE(cJSON_IsArray(row) && cJSON_GetArraySize(row) == g->width, "%s[%zu]: a row differs", where, i);
        for (const cJSON *cell = row->child; cell; cell = cell->next, k++)
            FUZZ_REQUIRE(cJSON_IsNumber(cell) && cell->valuedouble == g->cells[k], "%s[%zu]: cell %zu differs", where,
                         i, k);
    }
}

static int contains(const uint8_t *data, size_t size, const char *s)
{
    const size_t n = strlen(s);
    for (size_t i = 0; i + n <= size; i++)
        if (!memcmp(data + i, s, n)) return 1;
    return 0;
}

static void check_against_cjson(const uint8_t *data, size_t size, const gw_arc_task *t)
{
    char *text = malloc(size + 1);
    FUZZ_REQUIRE(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    FUZZ_REQUIRE(root != NULL, "gw_arc accepted what cJSON calls invalid JSON (at byte %td)", end ? end - text : -1);
    /* cJSON keeps a key with an escaped NUL only up to the NUL, so it may name a member "train" that is not */
    if (!contains(data, size, "\\u0000")) {
        const cJSON *lists[2] = {cJSON_GetObjectItemCaseSensitive(root, "train"),
                                 cJSON_GetObjectItemCaseSensitive(root, "test")};
        const gw_arc_pair *pairs[2] = {t->train, t->test};
        const size_t counts[2] = {t->n_train, t->n_test};
        for (int l = 0; l < 2; l++) {
            const char *list = l ? "test" : "train";
            FUZZ_REQUIRE(cJSON_GetArraySize(lists[l]) == (int)counts[l], "%s: cJSON counts other pairs", list);
            size_t i = 0;
            for (const cJSON *p = lists[l]->child; p; p = p->next, i++) {
                same_as_cjson(cJSON_GetObjectItemCaseSensitive(p, "input"), &pairs[l][i].input, list, i);
                const cJSON *out = cJSON_GetObjectItemCaseSensitive(p, "output");
                FUZZ_REQUIRE(!out == !pairs[l][i].has_output, "%s[%zu]: output present for one reader only", list, i);
                if (out) same_as_cjson(out, &pairs[l][i].output, list, i);
            }
        }
    }
    cJSON_Delete(root);
    free(text);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    FUZZ_REQUIRE(f != NULL, "cannot open %s", path);
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            buf = realloc(buf, cap);
            FUZZ_REQUIRE(buf != NULL, "out of memory");
        }
        const size_t got = fread(buf + n, 1, cap - n, f);
        if (!got) break;
        n += got;
    }
    fclose(f);
    *len = n;
    return buf;
}

static char work_dir_path[64];

static void remove_work_dir(void)
{
    rmdir(work_dir_path); /* its files are removed after each input */
}

/* A folder on tmpfs for the write round trip (fsync is free there), made once and removed at exit; NULL
 * without /dev/shm. */
static const char *work_dir(void)
{
    static int tried;
    if (!tried) {
        tried = 1;
        struct stat st;
        snprintf(work_dir_path, sizeof work_dir_path, "/dev/shm/fuzz_arc.XXXXXX");
        if (stat("/dev/shm", &st) != 0 || !mkdtemp(work_dir_path))
            work_dir_path[0] = '\0';
        else
            atexit(remove_work_dir);
    }
    return work_dir_path[0] ? work_dir_path : NULL;
}

static void check_write_round_trip(gw_arc_task *t)
{
    const char *dir = work_dir();
    if (!dir) return;
    char a[128], b[128], err[512] = "";
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    FUZZ_REQUIRE(gw_arc_write(a, t, err, sizeof err) == 0, "an accepted task cannot be written: %s", err);
    gw_arc_task u;
    FUZZ_REQUIRE(gw_arc_read(a, &u, err, sizeof err) == 0, "the written task does not read back: %s", err);
    const size_t n = gw_arc_grid_count(t);
    FUZZ_REQUIRE(gw_arc_grid_count(&u) == n, "grid count changed by the round trip");
    for (size_t i = 0; i < n; i++) {
        const gw_arc_grid *g = gw_arc_grid_at(t, i), *h = gw_arc_grid_at(&u, i);
        FUZZ_REQUIRE(g->height == h->height && g->width == h->width &&
                     !memcmp(g->cells, h->cells, (size_t)g->height * g->width), "grid %zu changed", i);
    }
    FUZZ_REQUIRE(gw_arc_write(b, &u, err, sizeof err) == 0, "the task read back cannot be written: %s", err);
    size_t la, lb;
    char *ta = slurp(a, &la), *tb = slurp(b, &lb);
    FUZZ_REQUIRE(la == lb && !memcmp(ta, tb, la), "written twice, the bytes differ");
    free(ta);
    free(tb);
    unlink(a);
    unlink(b);
    gw_arc_free(&u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gw_arc_task task;
    char err[512] = "";
    const int rc = gw_arc_parse((const char *)data, size, "fuzz.json", &task, err, sizeof err);
    if (rc == 0) {
        check_task(&task);
        check_against_cjson(data, size, &task);
        check_write_round_trip(&task);
        gw_arc_free(&task);
        return 0;
    }
    FUZZ_REQUIRE(rc == -1, "rc %d", rc);
    FUZZ_REQUIRE(task.n_train == 0 && task.n_test == 0 && !task.train && !task.test && !task.kept,
                 "task not zeroed on error");
    FUZZ_REQUIRE(strncmp(err, "fuzz.json: ", 11) == 0, "the message does not name the input: '%s'", err);
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    FUZZ_REQUIRE(gw_arc_parse((const char *)data, size, "fuzz.json", &task, tiny, sizeof tiny) == -1,
                 "second parse of the same bytes accepted them");
    FUZZ_REQUIRE(memchr(tiny, '\0', sizeof tiny) != NULL, "a short error buffer is not terminated");
    return 0;
}
