/* SPDX-License-Identifier: MIT
 * Bad-input tables of the ARC task reader and writer (lib/io/include/gw_arc.h): NULL arguments, lengths that lie,
 * JSON that is not JSON (NaN, Infinity, single quotes, deep nesting), files that are not task files,
 * and tasks the writer must refuse. Each row checks the return, the words of the message (the file, the
 * place, the rule), that the task comes back zeroed, and that no file in the work directory was created or
 * changed. The malformed-content table (types, shapes, values) is test_gw_arc.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "bad_input_util.h"
#include "gw_arc.h"
#include "gw_test_util.h"

#define VALID "{\"train\": [{\"input\": [[1, 2, 3], [4, 5, 6]], \"output\": [[4, 1], [5, 2], [6, 3]]}], " \
              "\"test\": [{\"input\": [[7]]}]}"
#define WITH_CELL(v) "{\"train\": [{\"input\": [[" v "]], \"output\": [[1]]}], \"test\": [{\"input\": [[1]]}]}"

static int is_zeroed(const gw_arc_task *t)
{
    static const gw_arc_task zero;
    return memcmp(t, &zero, sizeof zero) == 0;
}

/* ---------------------------------------------------------------- gw_arc_parse */

enum { ARG_NONE = 0, ARG_NULL_JSON = 1, ARG_NULL_TASK = 2, ARG_NULL_NAME = 4 };

typedef struct parse_case {
    const char *name;
    const char *json;
    long len; /* -1: strlen(json) */
    unsigned args;
    const char *words;
} parse_case;

static const parse_case parse_cases[] = {
    {"json NULL", NULL, 10, ARG_NULL_JSON, "t.json: gw_arc_parse: json and task must not be NULL"},
    {"task NULL", VALID, -1, ARG_NULL_TASK, "t.json: gw_arc_parse: json and task must not be NULL"},
    {"name NULL names the input <input>", "{", -1, ARG_NULL_NAME, "<input>: invalid JSON"},
    {"json_len 0 with text behind it", VALID, 0, ARG_NONE, "t.json: empty input"},
    {"json_len cuts a valid task", VALID, 40, ARG_NONE, "t.json: invalid JSON: unexpected end of input|truncated"},
    {"NaN cell", WITH_CELL("NaN"), -1, ARG_NONE, "t.json: invalid JSON at line 1"},
    {"Infinity cell", WITH_CELL("Infinity"), -1, ARG_NONE, "t.json: invalid JSON at line 1"},
    {"-Infinity cell", WITH_CELL("-Infinity"), -1, ARG_NONE, "t.json: invalid JSON at line 1"},
    {"1e400 cell (Inf)", WITH_CELL("1e400"), -1, ARG_NONE, "number too large (not finite)|integer 0..9"},
    {"NUL byte after the object", VALID "\0 ", (long)sizeof(VALID) + 1, ARG_NONE,
     "t.json: invalid JSON: extra characters after the task object"},
    {"single-quoted keys", "{'train': [], 'test': []}", -1, ARG_NONE, "t.json: invalid JSON at line 1"},
    {"trailing comma in a row", WITH_CELL("1, 2,"), -1, ARG_NONE, "t.json: invalid JSON at line 1"},
    {"duplicate output key", "{\"train\": [{\"input\": [[1]], \"output\": [[1]], \"output\": [[2]]}], "
                             "\"test\": [{\"input\": [[1]]}]}", -1, ARG_NONE,
     "train[0]: duplicate key \"output\"|one input and one output"},
    {"duplicate test key", "{\"train\": [{\"input\": [[1]], \"output\": [[1]]}], \"test\": [{\"input\": [[1]]}], "
                           "\"test\": [{\"input\": [[1]]}]}", -1, ARG_NONE, "top level: duplicate key \"test\""},
    {"test pair not an object", "{\"train\": [{\"input\": [[1]], \"output\": [[1]]}], \"test\": [[[1]]]}", -1,
     ARG_NONE, "test[0]: a pair must be an object|got a list"},
};

static void expect_parse_rejects(const parse_case *c)
{
    gw_arc_task t;
    memset(&t, 0xA5, sizeof t);
    char err[512] = "";
    const char *json = c->args & ARG_NULL_JSON ? NULL : c->json;
    gw_arc_task *task = c->args & ARG_NULL_TASK ? NULL : &t;
    const size_t len = c->len < 0 ? strlen(c->json) : (size_t)c->len;
    const int rc = gw_arc_parse(json, len, c->args & ARG_NULL_NAME ? NULL : "t.json", task, err, sizeof err);
    cr_expect_eq(rc, -1, "row \"%s\" was accepted", c->name);
    if (rc == 0) gw_arc_free(&t);
    bi_expect_words(c->name, err, c->words);
    cr_log_info("%s: %s", c->name, err);
    if (task) cr_expect(is_zeroed(&t), "row \"%s\": the task is not zeroed", c->name);
    /* err NULL or of size 0: the same verdict, and nothing written */
    char tiny[4] = "ZZZ";
    cr_expect_eq(gw_arc_parse(json, len, "t.json", task, NULL, 0), -1, "row \"%s\", err NULL", c->name);
    cr_expect_eq(gw_arc_parse(json, len, "t.json", task, tiny, 0), -1, "row \"%s\", err_size 0", c->name);
    cr_expect(!memcmp(tiny, "ZZZ", 4), "row \"%s\": err written with err_size 0", c->name);
}

Test(gw_arc_parse, rejects_with_the_place_and_the_rule_and_zeroes_the_task)
{
    const size_t n = sizeof parse_cases / sizeof parse_cases[0];
    for (size_t i = 0; i < n; i++) expect_parse_rejects(&parse_cases[i]);
    /* 2000 nested lists: past cJSON's nesting limit, refused without recursing that deep */
    char deep[4001];
    memset(deep, '[', 2000);
    memset(deep + 2000, ']', 2000);
    deep[4000] = '\0';
    const parse_case nested = {"2000 nested lists", deep, -1, ARG_NONE, "t.json: invalid JSON"};
    expect_parse_rejects(&nested);
    cr_log_info("gw_arc_parse: %zu bad inputs rejected", n + 1);
}

/* ---------------------------------------------------------------- gw_arc_read */

typedef struct read_case {
    const char *name;
    const char *file;    /* in the work directory; NULL: path NULL */
    const char *content; /* written first, unless NULL */
    size_t len;
    int task_null;
    long sparse_size; /* > 0: the file is extended (sparse) to this size */
    const char *words;
} read_case;

static const read_case read_cases[] = {
    {"path NULL", NULL, NULL, 0, 0, 0, "gw_arc_read: path and task must not be NULL"},
    {"task NULL", "ok.json", VALID, sizeof VALID - 1, 1, 0, "gw_arc_read: path and task must not be NULL"},
    {"/dev/null (a character device)", "/dev/null", NULL, 0, 0, 0, "/dev/null: not a regular file"},
    {"empty file", "empty.json", "", 0, 0, 0, "empty.json: empty input"},
    {"whitespace only", "blank.json", " \n\t\r\n", 5, 0, 0, "blank.json: empty input"},
    {"a valid task cut in half", "cut.json", VALID, sizeof VALID / 2, 0, 0,
     "cut.json: invalid JSON: unexpected end of input"},
    {"256 MiB + 1 byte (sparse)", "huge.json", "{", 1, 0, 256l * 1024 * 1024 + 1, "huge.json: 268435457 bytes, more "
                                                                                     "than the 268435456-byte limit"},
};

Test(gw_arc_read, rejects_files_that_are_not_tasks_and_changes_no_file)
{
    char *dir = bi_make_dir("bad_input_arc_read");
    for (size_t i = 0; i < sizeof read_cases / sizeof read_cases[0]; i++) {
        const read_case *c = &read_cases[i];
        char path[512];
        if (c->file) snprintf(path, sizeof path, "%s%s%s", c->file[0] == '/' ? "" : dir, c->file[0] == '/' ? "" : "/",
                              c->file);
        if (c->content) bi_write_file(path, c->content, c->len);
        if (c->sparse_size > 0) cr_assert_eq(truncate(path, c->sparse_size), 0, "truncate %s", path);
        bi_dir snap;
        bi_dir_take(&snap, dir);
        gw_arc_task t;
        memset(&t, 0xA5, sizeof t);
        char err[512] = "";
        const int rc = gw_arc_read(c->file ? path : NULL, c->task_null ? NULL : &t, err, sizeof err);
        cr_expect_eq(rc, -1, "row \"%s\" was accepted", c->name);
        if (rc == 0) gw_arc_free(&t);
        bi_expect_words(c->name, err, c->words);
        cr_log_info("%s: %s", c->name, err);
        if (!c->task_null) cr_expect(is_zeroed(&t), "row \"%s\": the task is not zeroed", c->name);
        bi_dir_expect_unchanged(&snap, dir, c->name);
    }
    cr_log_info("gw_arc_read: %zu bad inputs rejected", sizeof read_cases / sizeof read_cases[0]);
    gw_remove_dir(dir);
    free(dir);
}

/* ---------------------------------------------------------------- gw_arc_write */

/* A valid task to break: train[0] 2x3 -> 3x2, test[0] 1x1 without output. */
typedef struct task_store {
    gw_arc_task task;
    gw_arc_pair train[1], test[1];
    uint8_t in0[6], out0[6], test0[1];
} task_store;

static void task_init(task_store *s)
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < 6; k++) s->in0[k] = s->out0[k] = (uint8_t)k;
    s->test0[0] = 7;
    s->train[0] = (gw_arc_pair){{2, 3, s->in0}, {3, 2, s->out0}, 1};
    s->test[0] = (gw_arc_pair){{1, 1, s->test0}, {0, 0, NULL}, 0};
    s->task = (gw_arc_task){1, 1, s->train, s->test};
}

#define BREAKER(fn, ...)                                                                                               \
    static void fn(task_store *s) { __VA_ARGS__; }

BREAKER(keep_valid, (void)s)
BREAKER(n_train_0, s->task.n_train = 0)
BREAKER(train_null, s->task.train = NULL)
BREAKER(n_test_0, s->task.n_test = 0)
BREAKER(train_without_output, s->train[0].has_output = 0)
BREAKER(height_0, s->train[0].input.height = 0)
BREAKER(width_256, s->train[0].output.width = 256)
BREAKER(cells_null, s->test[0].input.cells = NULL)
BREAKER(cell_10, s->out0[4] = 10)
BREAKER(cell_255, s->in0[0] = 255)

enum { PATH_TARGET, PATH_NULL, PATH_EMPTY, PATH_MISSING_DIR, PATH_IS_DIR, TASK_NULL };

typedef struct write_case {
    const char *name;
    void (*breaks)(task_store *s);
    int path_mode;
    const char *words;
} write_case;

static const write_case write_cases[] = {
    {"path NULL", keep_valid, PATH_NULL, "gw_arc_write: path and task must be given"},
    {"path empty", keep_valid, PATH_EMPTY, "gw_arc_write: path and task must be given"},
    {"task NULL", keep_valid, TASK_NULL, "gw_arc_write: path and task must be given"},
    {"n_train 0", n_train_0, PATH_TARGET, "out.json: train: empty list|at least 1 train pair|nothing written"},
    {"train NULL with n_train 1", train_null, PATH_TARGET, "out.json: train: empty list|nothing written"},
    {"n_test 0", n_test_0, PATH_TARGET, "out.json: test: empty list|at least 1 test pair|nothing written"},
    {"train pair without output", train_without_output, PATH_TARGET,
     "out.json: train[0]: missing output (required in train pairs)|nothing written"},
    {"grid height 0", height_0, PATH_TARGET, "train[0].input: shape 0x3 outside 1..GW_ARC_MAX_DIM (255)"},
    {"grid width 256", width_256, PATH_TARGET, "train[0].output: shape 3x256 outside 1..GW_ARC_MAX_DIM (255)"},
    {"cells NULL", cells_null, PATH_TARGET, "test[0].input: cells is NULL|nothing written"},
    {"cell value 10", cell_10, PATH_TARGET, "train[0].output row 2 column 0: value 10 is outside 0..9"},
    {"cell value 255", cell_255, PATH_TARGET, "train[0].input row 0 column 0: value 255 is outside 0..9"},
    {"directory missing", keep_valid, PATH_MISSING_DIR,
     "no/such/dir/out.json: cannot create a temporary file beside it|nothing written"},
    {"path is a directory", keep_valid, PATH_IS_DIR, "sub: cannot replace the file|nothing written"},
};

Test(gw_arc_write, refuses_bad_tasks_and_places_and_keeps_the_existing_file)
{
    char *dir = bi_make_dir("bad_input_arc_write");
    char target[512], sub[512];
    snprintf(target, sizeof target, "%s/out.json", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    bi_write_file(target, "old", 3); /* an existing file the refused writes must keep */
    cr_assert_eq(mkdir(sub, 0777), 0);
    char keep[sizeof sub + 8];
    snprintf(keep, sizeof keep, "%s/keep", sub); /* rename() cannot replace a non-empty directory */
    bi_write_file(keep, "x", 1);
    for (size_t i = 0; i < sizeof write_cases / sizeof write_cases[0]; i++) {
        const write_case *c = &write_cases[i];
        task_store s;
        task_init(&s);
        c->breaks(&s);
        char path[512];
        const char *p = target;
        switch (c->path_mode) {
        case PATH_NULL: p = NULL; break;
        case PATH_EMPTY: p = ""; break;
        case PATH_MISSING_DIR: snprintf(path, sizeof path, "%s/no/such/dir/out.json", dir), p = path; break;
        case PATH_IS_DIR: p = sub; break;
        default: break;
        }
        bi_dir snap, sub_snap;
        bi_dir_take(&snap, dir);
        bi_dir_take(&sub_snap, sub);
        bi_bytes cells;
        bi_bytes_take(&cells, &s, sizeof s);
        char err[512] = "";
        const int rc = gw_arc_write(p, c->path_mode == TASK_NULL ? NULL : &s.task, err, sizeof err);
        cr_expect_eq(rc, -1, "row \"%s\" was written", c->name);
        bi_expect_words(c->name, err, c->words);
        cr_log_info("%s: %s", c->name, err);
        bi_dir_expect_unchanged(&snap, dir, c->name);
        bi_dir_expect_unchanged(&sub_snap, sub, c->name);
        bi_bytes_expect_unchanged(&cells, c->name, "the task (the writer takes it const)");
    }
    cr_log_info("gw_arc_write: %zu bad inputs refused", sizeof write_cases / sizeof write_cases[0]);
    gw_remove_dir(sub);
    gw_remove_dir(dir);
    free(dir);
}

/* ---------------------------------------------------------------- the accessors */

Test(gw_arc_grid_at, null_tasks_and_indices_past_the_end_give_nothing)
{
    cr_expect_eq(gw_arc_grid_count(NULL), 0u);
    cr_expect_null(gw_arc_grid_at(NULL, 0));
    task_store s;
    task_init(&s);
    cr_assert_eq(gw_arc_grid_count(&s.task), 3u);
    cr_expect_not_null(gw_arc_grid_at(&s.task, 2));
    cr_expect_null(gw_arc_grid_at(&s.task, 3), "index 3 of 3 grids");
    cr_expect_null(gw_arc_grid_at(&s.task, SIZE_MAX), "index SIZE_MAX");
}
