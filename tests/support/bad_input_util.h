/* SPDX-License-Identifier: MIT
 * Helpers for the bad-input tables (tests/bad_input/test_bad_input_*.c): the checks every row makes.
 *   (b) the message names the argument and the rule: every '|'-separated word of `words` is in it;
 *   (c) outputs and inputs are untouched: a byte snapshot taken before the call equals the memory after;
 *   (d) no file is created or modified: a directory snapshot (names, sizes, contents, mtimes) is unchanged.
 * (a), the exact return code, is a plain cr_expect in each table's test.
 */
#ifndef BAD_INPUT_UTIL_H
#define BAD_INPUT_UTIL_H

#include <stddef.h>

/* Fails the current test (cr_expect) unless msg holds every word of words ("a|b c|d": "a", "b c", "d").
 * row names the table row in the failure message. */
void bi_expect_words(const char *row, const char *msg, const char *words);

/* A copy of size bytes at mem, to compare with the same memory after a call. */
typedef struct bi_bytes {
    const void *mem;
    size_t size;
    unsigned char *copy;
} bi_bytes;

void bi_bytes_take(bi_bytes *s, const void *mem, size_t size);
/* Fails the current test unless the memory still equals the copy; frees the copy. */
void bi_bytes_expect_unchanged(bi_bytes *s, const char *row, const char *what);

/* Every entry directly in dir: name, size, mtime and (files up to 1 MiB) a hash of the content; one level. */
typedef struct bi_dir {
    char *text;
    size_t len;
} bi_dir;

void bi_dir_take(bi_dir *d, const char *dir);
/* Fails the current test unless dir is as it was: no file created, removed or modified. Frees d. */
void bi_dir_expect_unchanged(bi_dir *d, const char *dir, const char *row);

/* A fresh directory in the current directory (the build tree under ctest), named after prefix. The caller
 * frees the returned path after gw_remove_dir. */
char *bi_make_dir(const char *prefix);

/* Writes len bytes to path (created or truncated); fails the test on error. */
void bi_write_file(const char *path, const void *data, size_t len);

#endif /* BAD_INPUT_UTIL_H */
