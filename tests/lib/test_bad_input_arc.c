/* SPDX-License-Identifier: MIT
 * Bad-input tables of the ARC task reader and writer (lib/io/include/gw_arc.h): NULL arguments, lengths that lie,
 * JSON that is not strict JSON (control bytes between tokens, leading zeros, NaN, Infinity, single quotes,
 * bad escapes and UTF-8, nesting past the reader's limit), cells that are numbers but not written as integers,
 * files that are not task files (a FIFO, a device, a directory), and tasks the writer must refuse (through
 * gw_arc_write and gw_arc_stage). Each row checks the return, the words of the message (the file, the place,
 * the rule), that the task comes back zeroed, and that no file in the work directory was created or changed.
 * The malformed-content table (types, shapes, values) is test_gw_arc.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
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
/* VALID with one more top-level member (at byte 111, column 112) */
#define VALID_WITH(member) "{\"train\": [{\"input\": [[1, 2, 3], [4, 5, 6]], \"output\": [[4, 1], [5, 2], [6, 3]]}], " \
                           "\"test\": [{\"input\": [[7]]}], " member "}"

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
    {"trailing comma in a row", WITH_CELL("1, 2,"), -1, ARG_NONE,
     "t.json: invalid JSON at line 1|']' where a value must follow ','|no trailing commas"},
    {"'}' just after '['", "{\"train\": [}", -1, ARG_NONE, "'}' where a value or ']' must follow '['"},
    {"no value after ':'", "{\"train\":}", -1, ARG_NONE, "'}' where a value must follow ':'"},
    {"a control byte after a backslash", VALID_WITH("\"note\": \"a\\\x01\""), -1, ARG_NONE,
     "invalid escape: a backslash followed by byte 0x01"},
    {"duplicate output key", "{\"train\": [{\"input\": [[1]], \"output\": [[1]], \"output\": [[2]]}], "
                             "\"test\": [{\"input\": [[1]]}]}", -1, ARG_NONE,
     "train[0]: duplicate key \"output\"|one input and one output"},
    {"duplicate test key", "{\"train\": [{\"input\": [[1]], \"output\": [[1]]}], \"test\": [{\"input\": [[1]]}], "
                           "\"test\": [{\"input\": [[1]]}]}", -1, ARG_NONE, "top level: duplicate key \"test\""},
    {"test pair not an object", "{\"train\": [{\"input\": [[1]], \"output\": [[1]]}], \"test\": [[[1]]]}", -1,
     ARG_NONE, "test[0]: a pair must be an object|got a list"},
    {"duplicate train key, escaped", "{\"train\": [{\"input\": [[1]], \"output\": [[1]]}], \"tr\\u0061in\": [], "
                                     "\"test\": [{\"input\": [[1]]}]}", -1, ARG_NONE,
     "top level: duplicate key \"train\""},
    /* Strict JSON (RFC 8259): cJSON took every byte 0x01..0x20 for whitespace and 01 for 1. */
    {"control byte 0x01 between tokens", "{\"train\":\x01 []}", -1, ARG_NONE,
     "t.json: invalid JSON at line 1, column 10 (byte 9)|control character 0x01|only space, tab, line feed and "
     "carriage return between tokens"},
    {"control byte 0x1f between tokens", "{\"train\": [{\"input\": [[1]],\x1f \"output\": [[1]]}]}", -1, ARG_NONE,
     "t.json: invalid JSON at line 1, column 28 (byte 27)|control character 0x1f|between tokens"},
    {"form feed between tokens", "{\f\"train\": []}", -1, ARG_NONE,
     "invalid JSON at line 1, column 2|control character 0x0c"},
    {"NUL byte between tokens", "{\"train\": [{\"input\": [[1]], \"output\": [[1]]}]\0, \"test\": []}", 59, ARG_NONE,
     "t.json: invalid JSON at line 1, column 46 (byte 45)|a NUL byte (0x00)|between tokens"},
    {"NUL byte before the object", "\0{}", 3, ARG_NONE, "invalid JSON at line 1, column 1|NUL byte"},
    {"UTF-8 byte order mark", "\xEF\xBB\xBF" VALID, -1, ARG_NONE,
     "t.json: invalid JSON at line 1, column 1|byte order mark"},
    {"cell written 01", WITH_CELL("01"), -1, ARG_NONE,
     "t.json: invalid JSON at line 1, column 24 (byte 23)|number with a leading zero (01)|RFC 8259"},
    {"cell written -01", WITH_CELL("-01"), -1, ARG_NONE, "leading zero (-01)"},
    {"cell written 00", WITH_CELL("00"), -1, ARG_NONE, "leading zero (00)"},
    {"cell written +1", WITH_CELL("+1"), -1, ARG_NONE, "invalid JSON at line 1, column 24|expected a value|got '+'"},
    {"cell written .5", WITH_CELL(".5"), -1, ARG_NONE, "invalid JSON at line 1, column 24|got '.'"},
    {"cell written 1.", WITH_CELL("1."), -1, ARG_NONE, "invalid JSON at line 1, column 26|a digit must follow '.'"},
    {"cell written 1e", WITH_CELL("1e"), -1, ARG_NONE,
     "invalid JSON at line 1, column 26|exponent of a number needs a digit"},
    {"cell written 0x1", WITH_CELL("0x1"), -1, ARG_NONE, "invalid JSON at line 1, column 25|got 'x'"},
    {"cell written 1.0", WITH_CELL("1.0"), -1, ARG_NONE,
     "t.json: train[0].input row 0 column 0: 1.0 is not written as an integer (it has a fraction or an exponent); a "
     "cell must be an integer 0..9"},
    {"cell written 1e0", WITH_CELL("1e0"), -1, ARG_NONE,
     "train[0].input row 0 column 0: 1e0 is not written as an integer|a cell must be an integer 0..9"},
    {"cell written 9.00", WITH_CELL("2, 9.00"), -1, ARG_NONE, "row 0 column 1: 9.00 is not written as an integer"},
    {"cell written 0E+0", WITH_CELL("0E+0"), -1, ARG_NONE, "0E+0 is not written as an integer|integer 0..9"},
    {"cell written 1.5", WITH_CELL("1.5"), -1, ARG_NONE,
     "row 0 column 0: 1.5 is not an integer; a cell must be an integer 0..9"},
    {"control byte 0x1f inside a string", VALID_WITH("\"note\": \"a\x1f\""), -1, ARG_NONE,
     "invalid JSON at line 1, column 122 (byte 121)|control character 0x1f inside a string|escaped (\\u001f)"},
    {"tab inside a string", VALID_WITH("\"note\": \"a\tb\""), -1, ARG_NONE, "control character 0x09 inside a string"},
    {"NUL byte inside a string", VALID_WITH("\"note\": \"a\0b\""), (long)sizeof(VALID_WITH("\"note\": \"a\0b\"")) - 1,
     ARG_NONE, "NUL byte 0x00 inside a string|escaped (\\u0000)"},
    {"invalid UTF-8 in a string", VALID_WITH("\"note\": \"\xff\""), -1, ARG_NONE,
     "invalid UTF-8 in a string (byte 0xff)"},
    {"overlong UTF-8 in a string", VALID_WITH("\"note\": \"\xC0\xAF\""), -1, ARG_NONE,
     "invalid UTF-8 in a string (byte 0xc0)"},
    {"UTF-8 surrogate in a string", VALID_WITH("\"note\": \"\xED\xA0\x80\""), -1, ARG_NONE,
     "invalid UTF-8 in a string (byte 0xed)"},
    {"UTF-8 cut by the end", "\"\xE2\x82", -1, ARG_NONE, "unexpected end of input|a UTF-8 sequence"},
    {"non-ASCII byte outside a string", "{\"train\": \xC3\xA9}", -1, ARG_NONE,
     "invalid JSON at line 1, column 11|byte 0xc3"},
    {"invalid escape", VALID_WITH("\"note\": \"\\x41\""), -1, ARG_NONE, "invalid escape|\\uXXXX"},
    {"short \\u escape", VALID_WITH("\"note\": \"\\u12\""), -1, ARG_NONE, "\\u must be followed by 4 hex digits"},
    {"escaped lone high surrogate", VALID_WITH("\"note\": \"\\ud800x\""), -1, ARG_NONE, "lone high surrogate \\uD800"},
    {"escaped lone low surrogate", VALID_WITH("\"note\": \"\\udc00\""), -1, ARG_NONE, "lone low surrogate \\uDC00"},
    {"trailing comma in an object", VALID_WITH("\"note\": 1,"), -1, ARG_NONE,
     "'}' where a member must follow ','|trailing"},
    {"comment", "{/* c */\"train\": []}", -1, ARG_NONE,
     "invalid JSON at line 1, column 2|expected a member name|got '/'"},
    {"True, capitalised", VALID_WITH("\"note\": True"), -1, ARG_NONE, "expected a value|got 'T'"},
    {"literal nul", VALID_WITH("\"note\": nul"), -1, ARG_NONE, "invalid literal: expected null"},
    {"missing colon", "{\"train\" []}", -1, ARG_NONE,
     "invalid JSON at line 1, column 10|expected ':' after a member name"},
    {"string cut by the end", "{\"train", -1, ARG_NONE, "unexpected end of input at line 1, column 8|inside a string"},
    {"line and column on line 3",
     "{\"train\": [{\"input\": [[1]],\n  \"output\": [[1]]}],\n  \"test\": [{\"input\": [[1 2]]}]}",
     -1, ARG_NONE, "invalid JSON at line 3, column 26 (byte 74)|expected ',' or ']' after a list element, got '2'"},
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
    /* 2000 nested lists: past the reader's nesting limit (GW_ARC_MAX_NESTING, 1000), refused without
     * recursing that deep; the message names the limit, not "invalid JSON" (the text is valid JSON). */
    char deep[4001];
    memset(deep, '[', 2000);
    memset(deep + 2000, ']', 2000);
    deep[4000] = '\0';
    const parse_case nested = {"2000 nested lists", deep, -1, ARG_NONE,
                               "t.json: nesting deeper than 1000 levels at line 1, column 1001 (byte 1000)"};
    expect_parse_rejects(&nested);
    cr_log_info("gw_arc_parse: %zu bad inputs rejected", n + 1);
}

/* A valid task whose extra member is nested 100,000 deep (on line 2): the reader's nesting limit, with the
 * line and column of the first list too deep. */
Test(gw_arc_parse, names_its_nesting_limit_with_the_line_and_column)
{
    const char head[] =
        "{\"train\": [{\"input\": [[1]], \"output\": [[1]]}], \"test\": [{\"input\": [[1]]}],\n \"deep\": ";
    const size_t depth = 100000, hl = sizeof head - 1, len = hl + 2 * depth + 1;
    char *json = malloc(len + 1);
    cr_assert(json);
    memcpy(json, head, hl);
    memset(json + hl, '[', depth);
    memset(json + hl + depth, ']', depth);
    json[len - 1] = '}';
    json[len] = '\0';
    /* the task object is level 1: the 1000th '[' of "deep" opens level 1001 */
    const size_t byte = hl + 999, col = byte - (size_t)(strchr(head, '\n') - head);
    char words[160];
    snprintf(words, sizeof words, "t.json: nesting deeper than 1000 levels at line 2, column %zu (byte %zu)", col,
             byte);
    const parse_case c = {"valid task, an extra member nested 100,000 deep", json, -1, ARG_NONE, words};
    expect_parse_rejects(&c);
    free(json);
}

/* ---------------------------------------------------------------- gw_arc_read */

enum { MAKE_NONE, MAKE_FIFO, MAKE_DIR, MAKE_LINK_TO_FIFO };

typedef struct read_case {
    const char *name;
    const char *file;    /* in the work directory; NULL: path NULL */
    const char *content; /* written first, unless NULL */
    size_t len;
    int task_null;
    long sparse_size; /* > 0: the file is extended (sparse) to this size */
    int make;         /* MAKE_FIFO etc.: made first, in the work directory */
    const char *words;
} read_case;

static const read_case read_cases[] = {
    {"path NULL", NULL, NULL, 0, 0, 0, MAKE_NONE, "gw_arc_read: path and task must not be NULL"},
    {"path empty", "", NULL, 0, 0, 0, MAKE_NONE, "gw_arc_read: the path is empty"},
    {"task NULL", "ok.json", VALID, sizeof VALID - 1, 1, 0, MAKE_NONE, "gw_arc_read: path and task must not be NULL"},
    {"missing file", "missing.json", NULL, 0, 0, 0, MAKE_NONE, "missing.json: cannot open: No such file or directory"},
    /* A FIFO with no writer used to block fopen forever: refused at once (gw_infile_open), as devices are. */
    {"a FIFO", "fifo.json", NULL, 0, 0, 0, MAKE_FIFO, "fifo.json: not a regular file (a FIFO)"},
    {"a symbolic link to a FIFO", "link.json", NULL, 0, 0, 0, MAKE_LINK_TO_FIFO,
     "link.json: not a regular file (a FIFO)"},
    {"/dev/null (a character device)", "/dev/null", NULL, 0, 0, 0, MAKE_NONE,
     "/dev/null: not a regular file (a character device)"},
    {"a directory", "dir.json", NULL, 0, 0, 0, MAKE_DIR, "dir.json: not a regular file (a directory)"},
    {"empty file", "empty.json", "", 0, 0, 0, MAKE_NONE, "empty.json: empty input"},
    {"whitespace only", "blank.json", " \n\t\r\n", 5, 0, 0, MAKE_NONE, "blank.json: empty input"},
    {"a valid task cut in half", "cut.json", VALID, sizeof VALID / 2, 0, 0, MAKE_NONE,
     "cut.json: invalid JSON: unexpected end of input"},
    {"a control byte between tokens", "ctl.json", "{\"train\":\x01[]}", 12, 0, 0, MAKE_NONE,
     "ctl.json: invalid JSON at line 1, column 10 (byte 9)|control character 0x01"},
    {"256 MiB + 1 byte (sparse)", "huge.json", "{", 1, 0, 256l * 1024 * 1024 + 1, MAKE_NONE,
     "huge.json: 268435457 bytes, more than the 268435456-byte limit"},
};

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "gw_arc_read blocked for 10 s (a FIFO or a device opened for reading?)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

Test(gw_arc_read, rejects_files_that_are_not_tasks_and_changes_no_file)
{
    char *dir = bi_make_dir("bad_input_arc_read");
    signal(SIGALRM, on_alarm);
    for (size_t i = 0; i < sizeof read_cases / sizeof read_cases[0]; i++) {
        const read_case *c = &read_cases[i];
        char path[512];
        if (c->file) snprintf(path, sizeof path, "%s%s%s", c->file[0] == '/' || !*c->file ? "" : dir,
                              c->file[0] == '/' || !*c->file ? "" : "/", c->file);
        if (c->content) bi_write_file(path, c->content, c->len);
        if (c->sparse_size > 0) cr_assert_eq(truncate(path, c->sparse_size), 0, "truncate %s", path);
        if (c->make == MAKE_FIFO) cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo %s", path);
        if (c->make == MAKE_DIR) cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s", path);
        if (c->make == MAKE_LINK_TO_FIFO) cr_assert_eq(symlink("fifo.json", path), 0, "symlink %s", path);
        bi_dir snap;
        bi_dir_take(&snap, dir);
        gw_arc_task t;
        memset(&t, 0xA5, sizeof t);
        char err[512] = "";
        alarm(10); /* the old reader blocked here forever on a FIFO */
        const int rc = gw_arc_read(c->file ? path : NULL, c->task_null ? NULL : &t, err, sizeof err);
        alarm(0);
        cr_expect_eq(rc, -1, "row \"%s\" was accepted", c->name);
        if (rc == 0) gw_arc_free(&t);
        bi_expect_words(c->name, err, c->words);
        cr_log_info("%s: %s", c->name, err);
        if (!c->task_null) cr_expect(is_zeroed(&t), "row \"%s\": the task is not zeroed", c->name);
        bi_dir_expect_unchanged(&snap, dir, c->name);
    }
    cr_log_info("gw_arc_read: %zu bad inputs rejected", sizeof read_cases / sizeof read_cases[0]);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/dir.json", dir);
    cr_expect_eq(rmdir(sub), 0);
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
    s->task = (gw_arc_task){.n_train = 1, .n_test = 1, .train = s->train, .test = s->test};
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
    {"path NULL", keep_valid, PATH_NULL, "path and task must be given"},
    {"path empty", keep_valid, PATH_EMPTY, "path and task must be given"},
    {"task NULL", keep_valid, TASK_NULL, "path and task must be given"},
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
        if (c->path_mode == PATH_NULL || c->path_mode == PATH_EMPTY || c->path_mode == TASK_NULL)
            cr_expect(strncmp(err, "gw_arc_write: ", 14) == 0, "%s: the message must name gw_arc_write: %s", c->name,
                      err);
        if (c->path_mode == PATH_NULL || c->path_mode == PATH_EMPTY || c->path_mode == TASK_NULL)
            cr_expect(strncmp(err, "gw_arc_write: ", 14) == 0, "%s: the message must name gw_arc_write: %s", c->name,
                      err);
        cr_log_info("%s: %s", c->name, err);
        /* gw_arc_stage refuses the same with the same words, before the rename: nothing staged, f discardable.
         * (The one row it passes is the directory: rename is the commit's; staging succeeds there.) */
        if (c->path_mode != PATH_IS_DIR) {
            gw_outfile f;
            char err2[512] = "";
            cr_expect_eq(gw_arc_stage(&f, p, c->path_mode == TASK_NULL ? NULL : &s.task, err2, sizeof err2), -1,
                         "row \"%s\" was staged", c->name);
            bi_expect_words(c->name, err2, c->words);
            gw_outfile_discard(&f);
        }
        bi_dir_expect_unchanged(&snap, dir, c->name);
        bi_dir_expect_unchanged(&sub_snap, sub, c->name);
        bi_bytes_expect_unchanged(&cells, c->name, "the task (the writer takes it const)");
    }
    cr_log_info("gw_arc_write: %zu bad inputs refused", sizeof write_cases / sizeof write_cases[0]);
    gw_remove_dir(sub);
    gw_remove_dir(dir);
    free(dir);
}

Test(gw_arc_stage, refuses_a_null_staged_file_and_leaves_nothing)
{
    char *dir = bi_make_dir("bad_input_arc_stage");
    char target[512];
    snprintf(target, sizeof target, "%s/out.json", dir);
    task_store s;
    task_init(&s);
    bi_dir snap;
    bi_dir_take(&snap, dir);
    char err[512] = "";
    cr_expect_eq(gw_arc_stage(NULL, target, &s.task, err, sizeof err), -1);
    bi_expect_words("f NULL", err, "out.json: gw_arc_stage: the staged file f is NULL; nothing written");
    gw_outfile f;
    memset(&f, 0xA5, sizeof f);
    cr_expect_eq(gw_arc_stage(&f, NULL, &s.task, err, sizeof err), -1);
    bi_expect_words("path NULL", err, "gw_arc_stage: path and task must be given; nothing written");
    cr_expect(f.path == NULL && f.tmp == NULL && f.fd == -1, "f must be GW_OUTFILE_INIT after a refusal");
    gw_outfile_discard(&f);
    bi_dir_expect_unchanged(&snap, dir, "gw_arc_stage");
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
